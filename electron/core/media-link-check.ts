// Media by link, checked before it is sent (gateway-spec.md 2.3): the file is fetched and judged on
// its bytes by shared/media-fetch.ts (the sandbox judges with the same code); this is the app's
// side of it, on undici, and the shape the messaging service and the window use.
//
// `warnings` are notes that need nothing from the agent (a link without an extension, a link the
// gateway cannot reach from outside); `confirm` are the media rules the gateway lets through but
// that the customer may not enjoy (B-frames, moov after mdat): the agent sends anyway or fixes them.
import { request } from 'undici';
import { checkMediaFile, type ByteFetch, type MediaInspector } from '../../shared/media-fetch';
import type { MediaType } from '../../shared/messages';
import { ok, type Result } from '../../shared/result';

export interface MediaLinkInfo {
  /** The server's Content-Type without parameters, lower case. */
  contentType: string;
  /** The file's size in bytes, as read (the Content-Range total, or the body's length). */
  contentLength: number | undefined;
  /** The address the file was found at, after redirects. */
  finalUrl: string;
  /** What does not block sending and needs no confirmation. */
  warnings: string[];
  /** The media rules the file breaks without being refused: each is confirmed with "Send anyway". */
  confirm: string[];
  /** What the bytes are, in words ("8-bit RGB PNG"). */
  description: string;
}

export interface MediaLinkCheckOptions {
  /** The time before any byte is due, and the longest a body may pause. Default 8 s. */
  timeoutMs?: number;
  /** More time for each MB the check must read, up to the type's size limit. Default 1 s. */
  msPerMb?: number;
  /** The GET the file is fetched with; undici by default. */
  fetchImpl?: ByteFetch;
  /** Default 5. */
  maxRedirects?: number;
  /** The field named in errors; default "link". */
  field?: string;
  /** Judges the bytes; shared/media-inspect.ts's inspectMedia unless a test supplies its own. */
  inspect?: MediaInspector;
}

/**
 * undici's request as a ByteFetch: no redirects followed, no decompression, the body streamed. The
 * sandbox, which may not import electron/, fetches with Node's own fetch (sandbox/media-judge.ts).
 */
export const undiciByteFetch: ByteFetch = async (url, init) => {
  const res = await request(url, { method: 'GET', headers: init.headers, signal: init.signal });
  return {
    status: res.statusCode,
    statusText: res.statusText,
    headers: {
      get(name: string): string | null {
        const value = res.headers[name.toLowerCase()];
        if (value === undefined) return null;
        return Array.isArray(value) ? value.join(', ') : value;
      },
    },
    body: res.body,
    async cancel() {
      if (res.body.destroyed) return;
      // Destroyed unread, undici's body emits an AbortError; nobody is listening any more.
      res.body.on('error', () => undefined);
      res.body.destroy();
    },
  };
};

export async function checkMediaLink(type: MediaType, url: string, options: MediaLinkCheckOptions = {}): Promise<Result<MediaLinkInfo>> {
  const { fetchImpl, ...rest } = options;
  const checked = await checkMediaFile(type, url, { ...rest, fetch: fetchImpl ?? undiciByteFetch });
  if (!checked.ok) return checked;
  const { contentType, size, finalUrl, notes, warnings, description } = checked.value;
  return ok({ contentType, contentLength: size, finalUrl, warnings: notes, confirm: warnings.map((w) => w.message), description });
}
