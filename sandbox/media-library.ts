// The sandbox account's uploaded media: what a message may name by `id` instead of `link`
// (gateway-spec.md 2.3: exactly one of id and link). Each id is a real small file under
// assets/sandbox-media/, made with Debian's tools and passing every media rule, so that what the
// library says about it (type, size, hash) is true; GET /control/media lists them,
// GET /control/media/{id} serves the bytes (a link the sandbox itself accepts), and the gateway
// serves them by media id as the service does (media-store.ts).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { mediaMimeTypes, type MediaType } from '../shared/messages';
import { errorText } from '../shared/result';
import type { SandboxMedia } from '../shared/sandbox';

interface LibraryEntry {
  id: string;
  type: MediaType;
  mimeType: string;
  fileName: string;
  description: string;
}

/** Ids in the service's style (numeric strings); one file per media type at least. */
export const SANDBOX_MEDIA: readonly LibraryEntry[] = [
  { id: '1900000000000001', type: 'image', mimeType: 'image/png', fileName: 'photo.png', description: '8-bit RGB PNG, 64×48' },
  { id: '1900000000000002', type: 'audio', mimeType: 'audio/mpeg', fileName: 'voice.mp3', description: 'MP3, mono, 1 s' },
  { id: '1900000000000003', type: 'video', mimeType: 'video/mp4', fileName: 'clip.mp4', description: 'MP4: H.264 Baseline, AAC mono, 96×64, 1 s, moov first' },
  { id: '1900000000000004', type: 'document', mimeType: 'application/pdf', fileName: 'invoice.pdf', description: 'PDF, one page' },
  { id: '1900000000000005', type: 'document', mimeType: 'text/plain', fileName: 'notes.txt', description: 'Plain text, UTF-8, two lines' },
];

/** The library's folder in an assets folder (the project's assets/, or the packaged app's). */
export const mediaDirIn = (assetsDir: string): string => join(assetsDir, 'sandbox-media');

/**
 * The project's assets/sandbox-media/, next to this module when run from source (npm run sandbox,
 * tests), else under the working directory. A bundle has no import.meta.url and its working
 * directory is anywhere: the packaged app passes its own folder (electron/embedded.ts).
 */
export function defaultMediaDir(): string {
  try {
    return fileURLToPath(new URL('../assets/sandbox-media/', import.meta.url));
  } catch {
    return mediaDirIn(resolve('assets'));
  }
}

export type MediaLookup =
  | { kind: 'found'; media: SandboxMedia }
  | { kind: 'unknown' }
  /** The id exists, but its file is not one the message type takes. */
  | { kind: 'wrong_type'; media: SandboxMedia };

export class MediaLibrary {
  private readonly files = new Map<string, { media: SandboxMedia; bytes: Buffer }>();

  private constructor() {}

  /**
   * Reads every file in `dir` once. A file that cannot be read leaves its id out and is named in
   * `problems` (the sandbox still starts; a message naming that id is refused as unknown).
   */
  static load(dir: string, entries: readonly LibraryEntry[] = SANDBOX_MEDIA): { library: MediaLibrary; problems: string[] } {
    const library = new MediaLibrary();
    const problems: string[] = [];
    for (const entry of entries) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(dir, entry.fileName));
      } catch (e) {
        problems.push(`${entry.fileName}: ${errorText(e)}`);
        continue;
      }
      const media: SandboxMedia = { ...entry, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
      library.files.set(entry.id, { media, bytes });
    }
    return { library, problems };
  }

  list(): SandboxMedia[] {
    return [...this.files.values()].map(({ media }) => ({ ...media }));
  }

  /** The media with this id, if the message type may carry it (its MIME type is one of the type's). */
  lookup(id: string, type: MediaType): MediaLookup {
    const found = this.files.get(id);
    if (!found) return { kind: 'unknown' };
    const media = { ...found.media };
    return mediaMimeTypes(type).includes(media.mimeType) ? { kind: 'found', media } : { kind: 'wrong_type', media };
  }

  bytes(id: string): { media: SandboxMedia; bytes: Buffer } | undefined {
    const found = this.files.get(id);
    return found ? { media: { ...found.media }, bytes: found.bytes } : undefined;
  }
}
