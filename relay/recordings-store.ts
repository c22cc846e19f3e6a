// The team's recordings on disk (relay/REFERENCE.md "Recordings"): for each call one Ogg Opus file
// and its meta (shared/bridge-recording.ts RecordingMeta), `<dir>/<name>.ogg` and `<dir>/<name>.json`,
// the name the SHA-256 of the call id in hex: any call id (the service's are long base64-ish strings;
// a forged one may hold `..`, `/` or NUL) makes a name that stays in the folder, fits every file
// system's length limit and differs from every other call's even where names ignore case.
//
// Every write is atomic: a temporary file in the same folder, flushed to the disk, then renamed over
// the old one, so that a reader (and a relay that dies mid-write) sees the old file or the new, never
// half of one. What concerns one call (its meta, its file) is changed one step at a time. The meta is
// the truth of who may hear the recording; a file without a stored meta is no recording yet.
//
// It is the RecordingSink of the node in the relay's own process, and what remote nodes' uploads
// are streamed into; a sweep at open and every hour deletes the recordings past their retention.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { recordingMetaSchema, type RecordingMeta, type RecordingSink } from '../shared/bridge-recording';
import type { Logger } from '../shared/log';
import { err, errorText, ok, type Result } from '../shared/result';
import { KeyedTaskQueue } from './keyed-task-queue';

/** The largest recording a node may hand over: some 18 hours of the node's stereo Opus. */
export const MAX_RECORDING_BYTES = 512 * 1024 * 1024;
export const DAY_MS = 24 * 60 * 60_000;
/** How often the retention is applied after the sweep at open. */
const SWEEP_EVERY_MS = 60 * 60_000;
/** A temporary file this old is what a relay that died mid-write left: nobody will rename it any more. */
const STALE_TEMPORARY_MS = DAY_MS;
const TEMPORARY_PREFIX = '.tmp-';
/** Every Ogg page starts with its capture pattern (RFC 3533 6). */
const OGG_CAPTURE = 'OggS';

/** The file name (without extension) of a call's recording and meta. */
export function recordingFileName(callId: string): string {
  return createHash('sha256').update(callId, 'utf8').digest('hex');
}

/** A stored recording opened for reading: the caller streams from `handle` and closes it. */
export interface RecordingAudio {
  handle: FileHandle;
  size: number;
  /** Unix ms of the file's last change. */
  modifiedAt: number;
  /** A strong validator of these bytes (size and time of the file), for If-Range. */
  etag: string;
}

/** What came of a node's upload. */
export type ReceivedRecording =
  | { kind: 'stored'; bytes: number }
  | { kind: 'too_large' }
  | { kind: 'not_ogg' }
  /** The node went away mid-body: nothing was kept. */
  | { kind: 'aborted' };

export interface RecordingsStoreOptions {
  dir: string;
  /** Recordings stored this many days ago or more are deleted (`--recordings-retention-days`); absent: kept for ever. */
  retentionDays?: number;
  logger: Logger;
  now?: () => number;
}

export class RecordingsStore implements RecordingSink {
  readonly dir: string;
  private readonly log: Logger;
  private readonly now: () => number;
  /** One step at a time per call: a meta's read and write, a file's rename, a deletion. */
  private readonly turns = new KeyedTaskQueue();
  /** Writes and sweeps under way, which close() waits for. */
  private readonly pending = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RecordingsStoreOptions) {
    this.dir = options.dir;
    this.log = options.logger;
    this.now = options.now ?? Date.now;
  }

  /** Makes the folder (only its owner may read it), sweeps once, and sweeps every hour from then on. */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await this.sweep();
    this.timer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.timer.unref();
  }

  /** Stops sweeping and waits for what is being written. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** The node in the relay's process hands over a finished recording (RecordingSink). */
  store(callId: string, file: Uint8Array, durationMs: number): Promise<Result<null>> {
    return this.track(
      (async (): Promise<Result<null>> => {
        try {
          const temporary = await this.writeTemporary((handle) => handle.writeFile(file));
          await this.inTurn(callId, () => this.keep(callId, temporary, file.length, durationMs));
          return ok(null);
        } catch (error) {
          this.log.error('a recording could not be stored', { callId, error });
          return err('internal', `the recording of call ${callId} could not be stored: ${errorText(error)}`);
        }
      })(),
    );
  }

  /**
   * A remote node's upload, streamed to a temporary file as it comes (never held whole), at most
   * `limitBytes`, then kept as the call's recording. Refused unless it starts as an Ogg stream.
   */
  receive(callId: string, body: AsyncIterable<Uint8Array>, durationMs: number, limitBytes = MAX_RECORDING_BYTES): Promise<ReceivedRecording> {
    return this.track(
      (async (): Promise<ReceivedRecording> => {
        let refused: ReceivedRecording | undefined;
        let bytes = 0;
        const temporary = await this.writeTemporary(async (handle) => {
          let head = '';
          for await (const chunk of body) {
            bytes += chunk.length;
            if (bytes > limitBytes) {
              refused = { kind: 'too_large' };
              return;
            }
            if (head.length < OGG_CAPTURE.length) {
              head += Buffer.from(chunk.subarray(0, OGG_CAPTURE.length - head.length)).toString('latin1');
              if (!OGG_CAPTURE.startsWith(head)) {
                refused = { kind: 'not_ogg' };
                return;
              }
            }
            await writeAll(handle, chunk, bytes - chunk.length);
          }
          if (head !== OGG_CAPTURE) refused = { kind: 'not_ogg' };
        }).catch((error: unknown) => {
          // The request ended before its body did (the node went away): nothing to keep.
          if (isAborted(error)) {
            refused = { kind: 'aborted' };
            return undefined;
          }
          throw error;
        });
        if (refused !== undefined || temporary === undefined) {
          if (temporary !== undefined) await unlink(temporary).catch(() => undefined);
          return refused ?? { kind: 'aborted' };
        }
        await this.inTurn(callId, () => this.keep(callId, temporary, bytes, durationMs));
        return { kind: 'stored', bytes };
      })(),
    );
  }

  /**
   * The agents who were in the call while it had a recording, as the relay learns them (its start,
   * each member who joins after): added to the meta's, whoever wrote it first.
   */
  noteAgents(callId: string, agents: readonly string[], startedAt: number): Promise<void> {
    return this.track(
      this.inTurn(callId, async () => {
        const known = await this.readMeta(callId);
        const merged = [...new Set([...(known?.agents ?? []), ...agents])];
        if (known !== undefined && merged.length === known.agents.length && known.startedAt <= startedAt) return;
        await this.writeMeta({ ...known, callId, agents: merged, startedAt: Math.min(known?.startedAt ?? startedAt, startedAt) });
      }).catch((error: unknown) => this.log.error('the agents of a recording could not be written', { callId, error })),
    );
  }

  /** The call's meta, if the team has (or is making) a recording of it. */
  meta(callId: string): Promise<RecordingMeta | undefined> {
    return this.readMeta(callId);
  }

  /** The call's stored recording opened for reading; undefined while it has none (not handed over yet, or deleted). */
  async openAudio(callId: string): Promise<RecordingAudio | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(this.pathOf(callId, 'ogg'), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const info = await handle.stat();
      return { handle, size: info.size, modifiedAt: Math.floor(info.mtimeMs), etag: `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"` };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /**
   * Deletes the recordings past the retention (by when they were stored; one never handed over, by
   * when it started; a file without meta, by its time on disk) and the temporary files a relay that
   * died left. Resolves with how many recordings went.
   */
  sweep(): Promise<number> {
    return this.track(
      this.sweepOnce().catch((error: unknown) => {
        this.log.error('the recordings could not be swept', { dir: this.dir, error });
        return 0;
      }),
    );
  }

  private async sweepOnce(): Promise<number> {
    const now = this.now();
    const { retentionDays } = this.options;
    const cutoff = retentionDays === undefined ? undefined : now - retentionDays * DAY_MS;
    const names = await readdir(this.dir);
    const metas = new Set(names.filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -'.json'.length)));
    let deleted = 0;
    for (const name of names) {
      const path = join(this.dir, name);
      if (name.startsWith(TEMPORARY_PREFIX)) {
        const info = await stat(path).catch(() => undefined);
        if (info !== undefined && now - info.mtimeMs > STALE_TEMPORARY_MS) await unlink(path).catch(() => undefined);
        continue;
      }
      if (cutoff === undefined) continue;
      if (name.endsWith('.json')) {
        const meta = await this.readMetaFile(path);
        if (meta === undefined) continue;
        const at = meta.storedAt ?? meta.startedAt;
        if (at > cutoff) continue;
        await this.inTurn(meta.callId, async () => {
          // Stored again meanwhile (a node's retried upload): kept.
          const current = await this.readMeta(meta.callId);
          if (current !== undefined && (current.storedAt ?? current.startedAt) > cutoff) return;
          await removeFile(this.pathOf(meta.callId, 'ogg'));
          await removeFile(this.pathOf(meta.callId, 'json'));
        });
        deleted += 1;
      } else if (name.endsWith('.ogg') && !metas.has(name.slice(0, -'.ogg'.length))) {
        const info = await stat(path).catch(() => undefined);
        if (info !== undefined && info.mtimeMs <= cutoff) {
          await removeFile(path);
          deleted += 1;
        }
      }
    }
    if (deleted > 0) this.log.info('recordings past their retention were deleted', { deleted, retentionDays });
    return deleted;
  }

  /** The file takes the place of the call's recording, and the meta says so. */
  private async keep(callId: string, temporary: string, bytes: number, durationMs: number): Promise<void> {
    await rename(temporary, this.pathOf(callId, 'ogg'));
    const known = await this.readMeta(callId);
    const storedAt = this.now();
    await this.writeMeta({ callId, agents: known?.agents ?? [], startedAt: known?.startedAt ?? storedAt - durationMs, storedAt, durationMs, bytes });
    this.log.info('a recording was stored', { callId, bytes, durationMs });
  }

  private async readMeta(callId: string): Promise<RecordingMeta | undefined> {
    const meta = await this.readMetaFile(this.pathOf(callId, 'json'));
    // Two ids of one hash are out of reach; a file that names another call is no meta of this one.
    return meta?.callId === callId ? meta : undefined;
  }

  private async readMetaFile(path: string): Promise<RecordingMeta | undefined> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const parsed = recordingMetaSchema.safeParse(json);
    if (!parsed.success) {
      this.log.warn('a recording meta file is not one: it is left alone', { path });
      return undefined;
    }
    return parsed.data;
  }

  private async writeMeta(meta: RecordingMeta): Promise<void> {
    const text = `${JSON.stringify(meta)}\n`;
    const temporary = await this.writeTemporary(async (handle) => {
      await handle.writeFile(text, 'utf8');
    });
    await rename(temporary, this.pathOf(meta.callId, 'json'));
  }

  /** A new temporary file in the folder, written by `write`, flushed to the disk; removed if anything fails. */
  private async writeTemporary(write: (handle: FileHandle) => Promise<void>): Promise<string> {
    const path = join(this.dir, `${TEMPORARY_PREFIX}${randomBytes(8).toString('hex')}`);
    const handle = await open(path, 'wx', 0o600);
    try {
      await write(handle);
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => undefined);
      await unlink(path).catch(() => undefined);
      throw error;
    }
    await handle.close();
    return path;
  }

  private pathOf(callId: string, extension: 'ogg' | 'json'): string {
    return join(this.dir, `${recordingFileName(callId)}.${extension}`);
  }

  private inTurn<T>(callId: string, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      void this.turns.run(callId, () => work().then(resolve, reject));
    });
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work)).catch(() => undefined);
    return work;
  }
}

/** All of `chunk` at `position` (a write may take less than it is given). */
async function writeAll(handle: FileHandle, chunk: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < chunk.length) {
    const { bytesWritten } = await handle.write(chunk, done, chunk.length - done, position + done);
    done += bytesWritten;
  }
}

async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function isAborted(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (error instanceof Error && error.message === 'aborted');
}
