// The service's judgement of a replymessage's media (gateway-spec.md 2.3): a `link` is fetched and
// judged on its bytes with the app's own check (shared/media-fetch.ts, the same limits, deadline and
// rules), an `id` must be one the account's media library holds (media-library.ts). A refused file
// is HTTP 400 with error 131053 and the rule in error_data.details; a file with only warnings (B-frames,
// moov after mdat) is accepted, as the service accepts it.
import { checkMediaFile, type ByteFetch, type MediaInspector } from '../shared/media-fetch';
import { MEDIA_TYPES, type FreeFormMessage, type MediaType } from '../shared/messages';
import type { Logger } from '../shared/log';
import type { GraphFailure } from './graph-error';
import type { MediaLibrary } from './media-library';

/** One media member of a message: where it sits in the body, and how it names its file. */
export interface MediaReference {
  type: MediaType;
  /** The body path of the member that names the file: `image.link`, `interactive.header.video.id`. */
  field: string;
  source: { link: string } | { id: string };
}

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
export const mediaFailure = (details: string): GraphFailure => ({
  status: 400,
  code: 131053,
  message: '(#131053) Media upload error',
  details,
});

/** The media a message names: its own (image, audio, video, document) or its interactive header's. */
export function mediaReferences(message: FreeFormMessage): MediaReference[] {
  const reference = (type: MediaType, at: string, media: { link?: string | undefined; id?: string | undefined }): MediaReference[] => {
    if (media.link !== undefined) return [{ type, field: `${at}.link`, source: { link: media.link } }];
    if (media.id !== undefined) return [{ type, field: `${at}.id`, source: { id: media.id } }];
    return [];
  };
  switch (message.type) {
    case 'image':
      return reference('image', 'image', message.image);
    case 'audio':
      return reference('audio', 'audio', message.audio);
    case 'video':
      return reference('video', 'video', message.video);
    case 'document':
      return reference('document', 'document', message.document);
    case 'interactive': {
      const interactive = message.interactive;
      if (!('header' in interactive) || interactive.header === undefined) return [];
      const header = interactive.header as { type: string } & Record<string, unknown>;
      if (!(MEDIA_TYPES as readonly string[]).includes(header.type)) return [];
      const type = header.type as MediaType;
      return reference(type, `interactive.header.${type}`, header[type] as { link?: string; id?: string });
    }
    case 'text':
      return [];
  }
}

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
    for (const reference of mediaReferences(message)) {
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

  private async judgeLink(reference: MediaReference, link: string): Promise<GraphFailure | undefined> {
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
  private judgeId(reference: MediaReference, id: string): GraphFailure | undefined {
    const found = this.options.library.lookup(id, reference.type);
    switch (found.kind) {
      case 'found':
        return undefined;
      case 'unknown':
        return mediaFailure(`${reference.field}: unknown media id "${id}": the account has no uploaded media with this id`);
      case 'wrong_type':
        return mediaFailure(`${reference.field}: media "${id}" is ${found.media.mimeType} (${found.media.fileName}), which cannot be sent as ${reference.type === 'image' || reference.type === 'audio' ? 'an' : 'a'} ${reference.type}`);
    }
  }
}

/**
 * Node's fetch as a ByteFetch: `redirect: 'manual'` hands redirects to the check, which follows them
 * itself (Node's fetch returns the 3xx with its Location, unlike a browser's). The app fetches with
 * undici's request (electron/core/media-link-check.ts), which the sandbox may not import.
 */
export const nodeByteFetch: ByteFetch = async (url, init) => {
  const res = await fetch(url, { method: 'GET', redirect: 'manual', headers: init.headers, signal: init.signal });
  const body = res.body;
  return {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
    body,
    async cancel() {
      // A body whose reader is still held (a read cut short by the deadline) refuses to cancel;
      // the check's signal has aborted it already.
      await body?.cancel().catch(() => undefined);
    },
  };
};
