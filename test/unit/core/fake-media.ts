// The gateway's media endpoints for the core tests, modelled on the service's as the sandbox serves
// them (sandbox/REFERENCE.md "Media"): GET /restapi/v1/{product}/media/{mediaId} with the API-KEY
// header → { id, url, mime_type, sha256, file_size }, the url signed and valid 5 minutes; GET of the
// url → the bytes, or a 404 Graph error once it expired. A handler for startFakeGateway: the same
// library can be served by a second server standing in for another origin (a CDN), which takes no key.
import { createHash, createHmac } from 'node:crypto';
import { graphError, json, type GatewayAnswer, type RecordedRequest } from './fake-gateway';

export const VOICE_MIME = 'audio/ogg; codecs=opus';

export interface MediaLibrary {
  apiKey: string;
  product: string;
  /** Signs the urls; shared by every server of the library. */
  secret: string;
  files: Map<string, { bytes: Buffer; mimeType: string }>;
  /** The origin of the urls the lookup hands out (the gateway's own unless a test points them elsewhere). */
  fileOrigin: string;
  /** The next this many lookups hand out urls that expired a minute ago. */
  expiredUrls: number;
  /** The next this many lookups fail with a 500 Graph error. */
  failingLookups: number;
  /** What the lookup says of a file, as a test wants it said (a wrong size, a wrong digest). */
  described?: (mediaId: string, file: { bytes: Buffer; mimeType: string }) => Record<string, unknown>;
  /** The file route's answer instead of the file (chunked, hanging…), when a test takes it over. */
  onFile?: (mediaId: string) => GatewayAnswer | 'hang' | undefined;
}

export function mediaLibrary(apiKey: string, product = 'chatapp'): MediaLibrary {
  return { apiKey, product, secret: 'media-signing-secret', files: new Map(), fileOrigin: '', expiredUrls: 0, failingLookups: 0 };
}

/** Bytes that stand for a voicemail: an Ogg page's magic, then a pattern of `size` bytes in all. */
export function voiceBytes(size: number, seed = 1): Buffer {
  const bytes = Buffer.alloc(size);
  bytes.write('OggS', 0, 'latin1');
  for (let i = 4; i < size; i++) bytes[i] = (i * 31 + seed * 7) & 0xff;
  return bytes;
}

const sign = (secret: string, mediaId: string, expires: number): string => createHmac('sha256', secret).update(`${mediaId}.${expires}`).digest('hex');

/**
 * Answers the media routes, or undefined for any other request. `keyOnDownload`: the gateway's own
 * origin requires its key on the file too (the service does); another origin takes none.
 */
export function mediaRoutes(library: MediaLibrary, options: { keyOnDownload: boolean }): (req: RecordedRequest) => GatewayAnswer | 'hang' | undefined {
  const base = `/restapi/v1/${library.product}/media/`;
  return (req) => {
    const url = new URL(req.path, 'http://media.invalid');
    if (req.method !== 'GET' || !url.pathname.startsWith(base)) return undefined;
    const [id, rest] = url.pathname.slice(base.length).split('/') as [string, string | undefined];
    const mediaId = decodeURIComponent(id);
    const keyOk = req.headers['api-key'] === library.apiKey;
    if (rest === undefined) {
      if (!keyOk) return graphError(401, 190, req.headers['api-key'] === undefined ? 'API-KEY header: is required' : 'API-KEY header: invalid key');
      if (library.failingLookups > 0) {
        library.failingLookups--;
        return graphError(500, 1, 'An unknown error occurred');
      }
      const file = library.files.get(mediaId);
      if (file === undefined) return graphError(404, 100, `(#100) Unsupported get request. Object with ID '${mediaId}' does not exist`);
      let expires = Math.floor(Date.now() / 1000) + 300;
      if (library.expiredUrls > 0) {
        library.expiredUrls--;
        expires = Math.floor(Date.now() / 1000) - 60;
      }
      const link = `${library.fileOrigin}${base}${encodeURIComponent(mediaId)}/file?expires=${expires}&signature=${sign(library.secret, mediaId, expires)}`;
      const said = library.described?.(mediaId, file) ?? { sha256: createHash('sha256').update(file.bytes).digest('hex'), file_size: file.bytes.length };
      return json(200, { id: mediaId, url: link, mime_type: file.mimeType, ...said });
    }
    if (rest !== 'file') return undefined;
    if (options.keyOnDownload && !keyOk) return graphError(401, 190, 'API-KEY header: is required');
    const expires = Number(url.searchParams.get('expires'));
    const signature = url.searchParams.get('signature') ?? '';
    const file = library.files.get(mediaId);
    if (file === undefined || signature !== sign(library.secret, mediaId, expires) || expires * 1000 < Date.now()) {
      return graphError(404, 100, `(#100) The URL for media ${mediaId} has expired: ask for the media id again`);
    }
    const instead = library.onFile?.(mediaId);
    if (instead !== undefined) return instead;
    return { status: 200, body: file.bytes, contentType: file.mimeType };
  };
}
