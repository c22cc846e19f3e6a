// The media the service keeps for the business, as it serves them (sandbox/REFERENCE.md "Media ids"):
// a media id (a voicemail's audio, the account's uploaded files) is looked up for a short-lived
// signed url, and the url is downloaded with the API key. Ids are kept 7 days (protocol.md), urls
// live 5 minutes; both are judged by an injected clock, so that tests need not wait.
import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { VOICEMAIL_KEPT_MS } from '../shared/voicemail';

/** A file the gateway serves by its media id. */
export interface ServedMedia {
  id: string;
  mimeType: string;
  bytes: Uint8Array;
  /** Hex SHA-256 of the bytes. */
  sha256: string;
}

export interface MediaStoreOptions {
  /** Unix ms; Date.now by default. */
  clock?: () => number;
  /** How long an id stays known after it was kept; default 7 days (protocol.md). */
  keptMs?: number;
  /** How long a url may be downloaded; default 5 minutes (protocol.md). */
  urlLifetimeMs?: number;
  /** Media the account already has (the media library), found when the store has no such id; never expire. */
  uploaded?: (id: string) => ServedMedia | undefined;
}

/** How a url's query stands: its signature made by this store and not yet expired, or why not. */
export type UrlVerdict = { kind: 'valid' } | { kind: 'expired'; at: number } | { kind: 'forged' };

export const MEDIA_URL_LIFETIME_MS = 5 * 60 * 1000;
/** The store forgets its oldest files past this many, so that a long run cannot fill the memory. */
const MAX_FILES = 2_000;

export class MediaStore {
  /** Signs the urls; new with every sandbox, so an old sandbox's urls are refused. */
  private readonly secret = randomBytes(32);
  /** In the order kept: the oldest first. */
  private readonly files = new Map<string, ServedMedia & { keptAt: number }>();
  private readonly clock: () => number;
  private readonly keptMs: number;
  private readonly urlLifetimeMs: number;

  constructor(private readonly options: MediaStoreOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.keptMs = options.keptMs ?? VOICEMAIL_KEPT_MS;
    this.urlLifetimeMs = options.urlLifetimeMs ?? MEDIA_URL_LIFETIME_MS;
  }

  /** Keeps a file under a new media id, numeric like the service's. */
  keep(bytes: Uint8Array, mimeType: string): ServedMedia {
    this.forgetOld();
    let id: string;
    do id = `${randomInt(1, 10)}${String(randomInt(0, 2 ** 47)).padStart(15, '0')}`;
    while (this.files.has(id) || this.options.uploaded?.(id));
    const media: ServedMedia = { id, mimeType, bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
    this.files.set(id, { ...media, keptAt: this.clock() });
    while (this.files.size > MAX_FILES) this.files.delete(this.files.keys().next().value!);
    return media;
  }

  /** The media with this id, unless it is unknown or older than it is kept. */
  find(id: string): ServedMedia | undefined {
    this.forgetOld();
    const kept = this.files.get(id);
    if (!kept) return this.options.uploaded?.(id);
    const { keptAt: _keptAt, ...media } = kept;
    return media;
  }

  /** The download url's query for an id: valid for urlLifetimeMs from now. */
  signedQuery(id: string): string {
    const expires = Math.floor((this.clock() + this.urlLifetimeMs) / 1000);
    return `expires=${expires}&signature=${this.signature(id, String(expires))}`;
  }

  /** Whether a url's `expires` and `signature` are this store's for this id, and still in time. */
  verify(id: string, query: URLSearchParams): UrlVerdict {
    const expires = query.get('expires') ?? '';
    const signature = query.get('signature') ?? '';
    if (!/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return { kind: 'forged' };
    if (!timingSafeEqual(Buffer.from(signature, 'hex'), Buffer.from(this.signature(id, expires), 'hex'))) return { kind: 'forged' };
    const at = Number(expires) * 1000;
    return this.clock() < at ? { kind: 'valid' } : { kind: 'expired', at };
  }

  private signature(id: string, expires: string): string {
    return createHmac('sha256', this.secret).update(`${id}\n${expires}`).digest('hex');
  }

  private forgetOld(): void {
    const now = this.clock();
    for (const [id, file] of this.files) if (now - file.keptAt >= this.keptMs) this.files.delete(id);
  }
}
