// Media by link, checked before it is sent (gateway-spec.md 2.3): the file is fetched and judged on
// its bytes by shared/media-fetch.ts (the sandbox judges with the same code); this is the app's
// side of it, on undici, and the shape the messaging service and the window use.
//
// `notes` need nothing from the agent (a link without an extension, a link the gateway cannot reach
// from outside); `confirm` are the media rules the gateway lets through but that the customer may not
// enjoy (B-frames, moov after mdat): the agent sends anyway or fixes them.
//
// Content codings are decoded as any HTTP client decodes them (shared/media-fetch.ts, fetchByteFetch).
import { fetch } from 'undici';
import { checkMediaFile, fetchByteFetch, type ByteFetch, type MediaInspector } from '../../shared/media-fetch';
import type { MediaType } from '../../shared/messages';
import { ok, type Result } from '../../shared/result';

export interface MediaLinkInfo {
  /** The server's Content-Type without parameters, lower case. */
  contentType: string;
  /** The file's size in bytes, as read (the Content-Range total, or the body's length). */
  contentLength: number;
  /** The address the file was found at, after redirects. */
  finalUrl: string;
  /** What needs no confirmation but is worth knowing (no extension, a private-network link): MediaFileCheck's notes. */
  notes: string[];
  /** The media rules the file breaks without being refused (MediaFileCheck's warnings, in words): each is confirmed with "Send anyway". */
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
  /** Judges the bytes; inspectMedia (shared/media-inspect/) unless a test supplies its own. */
  inspect?: MediaInspector;
}

/**
 * undici's fetch as a ByteFetch: no redirects followed, the body streamed, decoded where the server
 * encoded it anyway. The sandbox, which may not import electron/, uses Node's own fetch the same way.
 */
export const undiciByteFetch: ByteFetch = fetchByteFetch(fetch);

export async function checkMediaLink(type: MediaType, url: string, options: MediaLinkCheckOptions = {}): Promise<Result<MediaLinkInfo>> {
  const { fetchImpl, ...rest } = options;
  const checked = await checkMediaFile(type, url, { ...rest, fetch: fetchImpl ?? undiciByteFetch });
  if (!checked.ok) return checked;
  const { contentType, size, finalUrl, notes, warnings, description } = checked.value;
  return ok({ contentType, contentLength: size, finalUrl, notes, confirm: warnings.map((w) => w.message), description });
}
