// A call's media kept on this machine, one folder per kind (media-keeper.ts): voicemails in
// `<dataDir>/voicemails/`, the service's recordings in `recordings/`, its transcripts in
// `transcripts/`. Each call's file as `<name>.<ext>` and what it is as `<name>.json` ({ version,
// callId, mediaId, mimeType, file, size, sha256, savedAt }), `<name>` the SHA-256 of the call id in
// hex (a call id is the service's word and may hold any character a file name may not); a JSON
// document (a transcript) is `<name>.data.json`, beside its description. The file is written first
// and its description last, each atomically (json-file.ts): a file is kept once its description is
// there, and a crash between the two leaves only a file the next fetch writes over. Nothing here
// deletes a file.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../../shared/log';
import { errorText } from '../../shared/result';
import type { MediaFile } from './gateway-client';
import { readJsonFile, writeFileAtomic, writeJsonFileAtomic } from './json-file';

export const VOICEMAIL_DIR = 'voicemails';
export const RECORDING_DIR = 'recordings';
export const TRANSCRIPT_DIR = 'transcripts';
const FILE_VERSION = 1;

/** A call's media as kept: its bytes and what they are. */
export interface KeptMedia {
  callId: string;
  mediaId: string;
  mimeType: string;
  bytes: Buffer;
}

const descriptionSchema = z.object({
  version: z.literal(FILE_VERSION),
  callId: z.string().min(1),
  mediaId: z.string().min(1),
  mimeType: z.string().min(1),
  /** The file's name in the folder. */
  file: z.string().regex(/^[0-9a-f]{64}(?:\.data)?\.[a-z0-9]{1,8}$/),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  savedAt: z.number(),
});

/** The extension a player expects of the file's type; the type itself is kept in the description. */
const EXTENSIONS: Readonly<Record<string, string>> = {
  'audio/ogg': 'ogg',
  'audio/opus': 'opus',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'audio/aac': 'aac',
  'audio/amr': 'amr',
  'application/json': 'json',
};

/** The file name (without extension) a call's media is kept under. */
export const mediaFileName = (callId: string): string => createHash('sha256').update(callId, 'utf8').digest('hex');

const extensionOf = (mimeType: string): string => EXTENSIONS[mimeType.split(';')[0]!.trim().toLowerCase()] ?? 'audio';

/** The file's name: a JSON document must not take its description's. */
const fileNameOf = (name: string, mimeType: string): string => {
  const extension = extensionOf(mimeType);
  return extension === 'json' ? `${name}.data.json` : `${name}.${extension}`;
};

export class MediaFiles {
  constructor(
    /** `<dataDir>/voicemails`, `<dataDir>/recordings`… */
    readonly dir: string,
    private readonly log: Logger,
    /** How log lines name what is kept here. */
    private readonly what = 'voicemail',
  ) {}

  /** Keeps a call's media; throws when the disk refuses (the caller tries again later). */
  async keep(callId: string, media: MediaFile, savedAt: number): Promise<void> {
    const name = mediaFileName(callId);
    const file = fileNameOf(name, media.mimeType);
    await writeFileAtomic(join(this.dir, file), media.bytes);
    await writeJsonFileAtomic(join(this.dir, `${name}.json`), {
      version: FILE_VERSION,
      callId,
      mediaId: media.mediaId,
      mimeType: media.mimeType,
      file,
      size: media.bytes.length,
      sha256: media.sha256,
      savedAt,
    } satisfies z.infer<typeof descriptionSchema>);
  }

  /** A call's kept media, or undefined when none is kept whole here. */
  async read(callId: string): Promise<KeptMedia | undefined> {
    const name = mediaFileName(callId);
    try {
      const read = await readJsonFile(join(this.dir, `${name}.json`));
      if (read.kind === 'missing') return undefined;
      const description = read.kind === 'json' ? descriptionSchema.safeParse(read.value) : undefined;
      if (!description?.success || description.data.callId !== callId) {
        this.log.warn(`a kept ${this.what}’s description is unreadable; it is fetched again`, { callId });
        return undefined;
      }
      const { mediaId, mimeType, file, size, sha256 } = description.data;
      const bytes = await readFile(join(this.dir, file));
      if (bytes.length !== size || createHash('sha256').update(bytes).digest('hex') !== sha256) {
        this.log.warn(`a kept ${this.what} is not the file that was saved; it is fetched again`, { callId, bytes: bytes.length, size });
        return undefined;
      }
      return { callId, mediaId, mimeType, bytes };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn(`a kept ${this.what} could not be read`, { callId, error: errorText(e) });
      return undefined;
    }
  }
}
