// The service's judgement of a replymessage's media (gateway-spec.md 2.3): a `link` is fetched and
// judged on its bytes with the app's own check (shared/media-fetch.ts, the same limits, deadline and
// rules), an `id` must be one the account's media library holds (media-library.ts). A refused file
// is HTTP 400 with error 131053 and the rule in error_data.details; a file with only warnings (B-frames,
// moov after mdat) is accepted, as the service accepts it.
import { checkMediaFile, fetchByteFetch, type ByteFetch, type MediaInspector } from '../shared/media-fetch';
import { mediaArticle, mediaMembers, type FreeFormMessage, type MediaMember } from '../shared/messages';
import type { Logger } from '../shared/log';
import type { GraphFailure } from './graph-error';
import type { MediaLibrary } from './media-library';

export interface MediaJudgeOptions {
  library: MediaLibrary;
  logger: Logger;
  /** The time before any byte is due, and the longest a body may pause; default the app's (8 s). */
  timeoutMs?: number;
  /** More time for each MB a file must be read for; default the app's (1 s). */
  msPerMb?: number;
  /** The GET the files are fetched with; Node's fetch by default. */
  fetch?: ByteFetch;
  inspect?: MediaInspector;
}

/** The Cloud API's 131053, "Media upload error": the service could not use the message's media. */
const mediaFailure = (details: string): GraphFailure => ({
  status: 400,
  code: 131053,
  message: '(#131053) Media upload error',
  details,
});

export class MediaJudge {
  private readonly fetch: ByteFetch;
  /** The fetches under way (until their check ends, which aborts its signal), aborted on close. */
  private readonly underWay = new Set<AbortController>();
  private closed = false;

  constructor(private readonly options: MediaJudgeOptions) {
    const base = options.fetch ?? nodeByteFetch;
    this.fetch = (url, init) => {
      const own = new AbortController();
      if (this.closed || init.signal.aborted) own.abort();
      else {
        this.underWay.add(own);
        init.signal.addEventListener(
          'abort',
          () => {
            this.underWay.delete(own);
            own.abort();
          },
          { once: true },
        );
      }
      return base(url, { ...init, signal: own.signal });
    };
  }

  /** The first refused file of the message as the service answers it; undefined when all are accepted. */
  async judge(message: FreeFormMessage): Promise<GraphFailure | undefined> {
    for (const reference of mediaMembers(message)) {
      const failure = 'link' in reference.source ? await this.judgeLink(reference, reference.source.link) : this.judgeId(reference, reference.source.id);
      if (failure) return failure;
    }
    return undefined;
  }

  close(): void {
    this.closed = true;
    for (const own of this.underWay) own.abort();
    this.underWay.clear();
  }

  private async judgeLink(reference: MediaMember, link: string): Promise<GraphFailure | undefined> {
    const { timeoutMs, msPerMb, inspect } = this.options;
    const checked = await checkMediaFile(reference.type, link, {
      fetch: this.fetch,
      field: reference.field,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(msPerMb !== undefined ? { msPerMb } : {}),
      ...(inspect ? { inspect } : {}),
    });
    if (!checked.ok) {
      this.options.logger.info('media refused', { field: reference.field, reason: checked.error.message });
      return mediaFailure(checked.error.message);
    }
    if (checked.value.warnings.length > 0) {
      this.options.logger.info('media accepted with warnings', { field: reference.field, warnings: checked.value.warnings.map((w) => w.rule) });
    }
    return undefined;
  }

  // protocol.md does not say how the service answers an id it does not know; 131053 with the id
  // named in the details is the service's answer for media it cannot use, so an unknown id gets it too.
  private judgeId(reference: MediaMember, id: string): GraphFailure | undefined {
    const found = this.options.library.lookup(id, reference.type);
    switch (found.kind) {
      case 'found':
        return undefined;
      case 'unknown':
        return mediaFailure(`${reference.field}: unknown media id "${id}": the account has no uploaded media with this id`);
      case 'wrong_type':
        return mediaFailure(`${reference.field}: media "${id}" is ${found.media.mimeType} (${found.media.fileName}), which cannot be sent as ${mediaArticle(reference.type)} ${reference.type}`);
    }
  }
}

/** Node's own fetch as a ByteFetch (shared/media-fetch.ts); the app uses undici's. */
export const nodeByteFetch: ByteFetch = fetchByteFetch(fetch);
