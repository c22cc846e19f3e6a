// Where facts wait on disk while the database cannot take them: `<data-dir>/records-journal.ndjson`
// (mode 0600), one fact a line. The writer appends what its queue holds while the database is
// unreachable, past the queue's bound, and at a shutdown that could not write it; it replays the
// file once the database answers — at this start or the next, a crash in between losing nothing
// the file took — then removes it. A fact written twice is one row (its key), so a replay cut short
// is simply replayed again.
//
// One relay at a time keeps a data directory's journal: it holds `records-journal.sock` (socket-lock.ts)
// from its start to its end. A relay that finds it held keeps its waiting facts in memory only.
// Every read and write of the file goes through one chain, so an append never lands in the middle
// of a replay's read or after its removal.
import { chmod, mkdir, open, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { AgentStateFact } from './agent-states';
import { CALL_FACT_KINDS, type CallFact } from './call-facts';
import type { QueuedFact } from './records-writer';
import { holdSocket, SocketHeldError } from './socket-lock';

export const JOURNAL_FILE = 'records-journal.ndjson';
const LOCK_FILE = 'records-journal.sock';

/** Another live relay keeps this data directory's journal. */
export class JournalInUseError extends Error {
  constructor(
    readonly path: string,
    readonly pid: number | undefined,
  ) {
    super(`the call records journal ${path} is kept by another relay${pid !== undefined ? ` (pid ${pid})` : ''}: one relay per data directory`);
    this.name = 'JournalInUseError';
  }
}

/** Facts read from the journal, and where the next read starts once they are written. */
export interface JournalRead {
  facts: QueuedFact[];
  /** Byte offset after the lines read. */
  next: number;
  /** Lines that are not a whole fact (a write cut short by a crash), skipped: their 1-based line numbers. */
  skipped: number[];
  /** Lines read, skipped ones included. */
  lines: number;
}

/** How much of the file one read takes at first; a longer line doubles it. */
const READ_CHUNK = 256 * 1024;

export class RecordsJournal {
  readonly path: string;
  private chain: Promise<unknown> = Promise.resolve();
  /** The file's length as this relay last wrote or saw it. */
  private size: number;
  /** Where the replay has come to: everything before it is written. */
  private cursor = 0;
  /** The line the cursor is at (1-based), for the log. */
  private line = 1;
  /** Facts in the file past the cursor. */
  private facts: number;
  /** Whether the file ends with a whole line: one cut short gets its newline before the next append. */
  private whole: boolean;
  private closed = false;

  private constructor(
    path: string,
    state: { size: number; facts: number; whole: boolean },
    private readonly release: () => Promise<void>,
  ) {
    this.path = path;
    this.size = state.size;
    this.facts = state.facts;
    this.whole = state.whole;
  }

  /** Takes `<dataDir>`'s journal (creating the directory), reading what a previous run left in it. */
  static async open(dataDir: string): Promise<RecordsJournal> {
    const dir = resolve(dataDir);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, JOURNAL_FILE);
    let release: () => Promise<void>;
    try {
      release = await holdSocket(join(dir, LOCK_FILE));
    } catch (error) {
      if (error instanceof SocketHeldError) throw new JournalInUseError(path, error.pid);
      throw error;
    }
    try {
      return new RecordsJournal(path, await survey(path), release);
    } catch (error) {
      await release();
      throw error;
    }
  }

  /** Facts in the file not yet replayed (lines, a cut one included). */
  get waiting(): number {
    return this.facts;
  }

  /** Whether there is anything to replay. */
  get pending(): boolean {
    return this.size > this.cursor;
  }

  /** Adds `facts` at the end of the file, on disk when it resolves. */
  append(facts: readonly QueuedFact[]): Promise<void> {
    return this.inChain(async () => {
      if (this.closed) throw new Error('the call records journal is closed');
      const text = (this.whole ? '' : '\n') + facts.map((fact) => JSON.stringify(fact)).join('\n') + '\n';
      const file = await open(this.path, 'a', 0o600);
      try {
        await file.appendFile(text, 'utf8');
        await file.datasync();
        this.whole = true;
      } catch (error) {
        // Part of it may be on disk: the next append starts on a line of its own.
        this.whole = false;
        throw error;
      } finally {
        this.size = (await file.stat().catch(() => undefined))?.size ?? this.size;
        await file.close();
      }
      this.facts += facts.length;
    });
  }

  /**
   * Up to `max` facts from where the replay has come to. A last line without its newline is one a
   * crash cut short: skipped, as is any line that is not a whole fact.
   */
  read(max: number): Promise<JournalRead> {
    return this.inChain(async () => {
      const read: JournalRead = { facts: [], next: this.cursor, skipped: [], lines: 0 };
      if (!this.pending) return read;
      const file = await open(this.path, 'r');
      try {
        let chunk = READ_CHUNK;
        while (read.facts.length < max && read.next < this.size) {
          const length = Math.min(chunk, this.size - read.next);
          const buffer = Buffer.alloc(length);
          const { bytesRead } = await file.read(buffer, 0, length, read.next);
          const bytes = buffer.subarray(0, bytesRead);
          let start = 0;
          for (let end = bytes.indexOf(0x0a); end >= 0 && read.facts.length < max; end = bytes.indexOf(0x0a, start)) {
            this.take(read, bytes.subarray(start, end));
            start = end + 1;
          }
          read.next += start;
          if (start > 0) continue;
          if (bytesRead === 0 || read.next + bytesRead >= this.size) {
            // No newline before the end: a line cut short.
            this.take(read, bytes);
            read.next += bytesRead;
            break;
          }
          chunk *= 2;
        }
      } finally {
        await file.close();
      }
      return read;
    });
  }

  /** The facts of `read` are written: the replay goes on after them. */
  advance(read: JournalRead): void {
    if (read.next <= this.cursor) return;
    this.cursor = read.next;
    this.line += read.lines;
    this.facts = Math.max(0, this.facts - read.lines);
  }

  /** Removes the file once everything in it is written (nothing came meanwhile); resolves whether it did. */
  finish(): Promise<boolean> {
    return this.inChain(async () => {
      if (this.pending) return false;
      await unlink(this.path).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
      this.size = 0;
      this.cursor = 0;
      this.line = 1;
      this.facts = 0;
      this.whole = true;
      return true;
    });
  }

  /** Lets the journal go, once what is under way is done; the file stays for the next start. */
  close(): Promise<void> {
    return this.inChain(async () => {
      if (this.closed) return;
      this.closed = true;
      await this.release();
    });
  }

  private take(read: JournalRead, line: Buffer): void {
    const number = this.line + read.lines;
    read.lines += 1;
    const fact = queuedFactOf(line.toString('utf8'));
    if (fact === undefined) read.skipped.push(number);
    else read.facts.push(fact);
  }

  private inChain<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }
}

/** What a previous run left: the file's length, its lines, whether its last one is whole. Counted a chunk at a time. */
async function survey(path: string): Promise<{ size: number; facts: number; whole: boolean }> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (info === undefined || info.size === 0) return { size: 0, facts: 0, whole: true };
  // Kept by an earlier relay, perhaps with a looser mode: the facts name customers.
  await chmod(path, 0o600);
  let file: FileHandle | undefined;
  try {
    file = await open(path, 'r');
    const buffer = Buffer.alloc(READ_CHUNK);
    let lines = 0;
    let last = 0x0a;
    for (let at = 0; at < info.size; ) {
      const { bytesRead } = await file.read(buffer, 0, Math.min(buffer.length, info.size - at), at);
      if (bytesRead === 0) break;
      for (let i = 0; i < bytesRead; i += 1) if (buffer[i] === 0x0a) lines += 1;
      last = buffer[bytesRead - 1]!;
      at += bytesRead;
    }
    const whole = last === 0x0a;
    return { size: info.size, facts: lines + (whole ? 0 : 1), whole };
  } finally {
    await file?.close();
  }
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const CALL_KINDS = new Set<string>(CALL_FACT_KINDS);

/** A line as the fact it holds, or undefined when it holds none (cut short, or not one of ours). */
function queuedFactOf(line: string): QueuedFact | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { kind, fact } = value as { kind?: unknown; fact?: unknown };
  if (typeof fact !== 'object' || fact === null) return undefined;
  const f = fact as Record<string, unknown>;
  if (kind === 'call') {
    const ok = isString(f.kind) && CALL_KINDS.has(f.kind) && isString(f.callId) && isString(f.agentId) && isString(f.ref) && isTime(f.at) && typeof f.data === 'object' && f.data !== null;
    return ok ? { kind: 'call', fact: fact as CallFact } : undefined;
  }
  if (kind === 'state') {
    const ok = isString(f.agentId) && isString(f.state) && isString(f.reason) && isTime(f.at);
    return ok ? { kind: 'state', fact: fact as AgentStateFact } : undefined;
  }
  return undefined;
}
