// Small JSON files in the data directory (settings, secrets, history, live calls). Writes are atomic
// (a temporary file renamed over the old one) so a crash mid-write never leaves half a file, and a
// file that does not parse is moved aside, never overwritten, so nothing received is lost.
import { randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../../shared/log';
import { errorText } from '../../shared/result';

export type JsonFileRead = { kind: 'missing' } | { kind: 'json'; value: unknown } | { kind: 'unparsable'; reason: string };

/** Reads a JSON file as `unknown`: callers parse it with a schema. */
export async function readJsonFile(path: string): Promise<JsonFileRead> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw e;
  }
  try {
    return { kind: 'json', value: JSON.parse(text) as unknown };
  } catch (e) {
    return { kind: 'unparsable', reason: errorText(e) };
  }
}

/** Writes `data` (text as UTF-8, or bytes) to `path` atomically; `mode` applies to the new file (e.g. 0o600 for secrets). */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(tmp, 'w', mode);
  try {
    await (typeof data === 'string' ? handle.writeFile(data, 'utf8') : handle.writeFile(data));
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    // The umask may have narrowed or an old file widened the mode; set it exactly.
    await chmod(tmp, mode);
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

export const writeJsonFileAtomic = (path: string, value: unknown, mode?: number): Promise<void> =>
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, mode);

/** Moves a file that could not be read aside as `<path>.corrupt-<ts>`; returns the new path. */
export async function setAsideCorruptFile(path: string, now: number = Date.now()): Promise<string> {
  const aside = `${path}.corrupt-${now}`;
  await rename(path, aside);
  return aside;
}

/**
 * Serialises writes of one file and coalesces bursts: while a write runs, later requests collapse
 * into one more write of the latest value.
 */
export class CoalescingWriter {
  private running: Promise<void> | undefined;
  private queued = false;

  constructor(
    private readonly write: () => Promise<void>,
    private readonly onError: (e: unknown) => void,
  ) {}

  request(): void {
    if (this.running) {
      this.queued = true;
      return;
    }
    this.running = this.loop();
  }

  /** Resolves when every requested write has finished. */
  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  private async loop(): Promise<void> {
    try {
      do {
        this.queued = false;
        try {
          await this.write();
        } catch (e) {
          this.onError(e);
        }
      } while (this.queued);
    } finally {
      this.running = undefined;
    }
  }
}

/** Contacts are keyed by the gateway's digits. */
export const CONTACT_KEY = /^[0-9]{5,20}$/;

export interface ContactFileOptions<T> {
  path: string;
  version: number;
  /** What the file holds, for log lines ("conversation windows", "message timeline"). */
  what: string;
  /** One contact's record, or undefined when it is unreadable; `bad` counts unreadable parts inside it. */
  parse: (raw: unknown, contact: string) => { record: T; bad: number } | undefined;
  now: number;
  log: Logger;
}

/**
 * Reads `{ version, contacts: { "<digits>": record } }`. A file of the wrong shape is set aside and
 * nothing is loaded; unreadable records are left out and the file is first copied aside, so that
 * rewriting it without them loses nothing received.
 */
export async function loadContactFile<T>(options: ContactFileOptions<T>): Promise<Map<string, T>> {
  const records = new Map<string, T>();
  const read = await readJsonFile(options.path);
  if (read.kind === 'missing') return records;
  const file =
    read.kind === 'json' ? z.object({ version: z.literal(options.version), contacts: z.record(z.string(), z.unknown()) }).safeParse(read.value) : undefined;
  if (!file?.success) {
    const aside = await setAsideCorruptFile(options.path, options.now);
    options.log.warn(`${options.what} unreadable; starting empty`, { keptAs: aside, reason: read.kind === 'unparsable' ? read.reason : 'unexpected shape' });
    return records;
  }
  let bad = 0;
  for (const [contact, raw] of Object.entries(file.data.contacts)) {
    const parsed = CONTACT_KEY.test(contact) ? options.parse(raw, contact) : undefined;
    if (!parsed) {
      bad++;
      continue;
    }
    bad += parsed.bad;
    records.set(contact, parsed.record);
  }
  if (bad > 0) {
    const aside = `${options.path}.corrupt-${options.now}`;
    await copyFile(options.path, aside);
    options.log.warn(`some ${options.what} entries were unreadable and were left out`, { unreadable: bad, keptAs: aside });
  }
  return records;
}
