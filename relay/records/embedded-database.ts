// The records of one machine: PGlite (PostgreSQL compiled to WASM) in `<data-dir>/records`, the same
// SQL as PostgreSQL without a server to run. PGlite runs in a worker thread (embedded-worker.mjs),
// so that its work never holds the relay's event loop; this side keeps a transaction's statements
// together on its one connection.
//
// PGlite is one process's: two processes on one data directory would each keep their own copy in
// memory and write over each other, so the directory is held, for as long as it is open, by a Unix
// socket this process listens on beside it (`records.sock`, socket-lock.ts). A relay that finds it
// answered is refused (DataDirInUseError) and tries again later, as it does when PostgreSQL is down.
//
// A worker that dies (its heap exhausted by a report, a WASM abort) takes PGlite with it: the
// database starts another on the same directory, which it still holds, as a PostgreSQL server
// restarts after a crash — after a pause that doubles while the new ones die too. Meanwhile every
// statement fails at once, as with a server that is down, and the writer's outage rules apply.
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../shared/log';
import type { Database, SqlRunner } from './database';
import { holdSocket, SocketHeldError } from './socket-lock';
import { ThreadCalls } from './thread-calls';

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    /** The holder's pid, as it answered on the socket; undefined when it did not say in time. */
    readonly pid: number | undefined,
  ) {
    super(`the records in ${dataDir} are held by another relay${pid !== undefined ? ` (pid ${pid})` : ''}: one relay per data directory`);
    this.name = 'DataDirInUseError';
  }
}

/** An error PGlite raised in the worker, with its SQLSTATE `code` when it has one. */
export class EmbeddedDatabaseError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'EmbeddedDatabaseError';
  }
}

/** The worker thread is gone (`cause`: its error, or its exit code): what it was doing is lost, what is asked of it fails until another runs. */
export class EmbeddedDatabaseStoppedError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'EmbeddedDatabaseStoppedError';
  }
}

export interface EmbeddedDatabaseOptions {
  /** Told once when the worker stops and once when another runs. */
  logger?: Logger;
  /** Caps the worker's JavaScript heap (MB): a query past it ends the worker, which is started again, never the relay. Default: Node's. */
  maxHeapMb?: number;
  /** The pause before starting a stopped worker again, doubled while the new ones stop too, up to `restartMaxMs`. Defaults 250 ms and 30 s. */
  restartMinMs?: number;
  restartMaxMs?: number;
}

type Request = { op: 'open'; dataDir?: string; dump?: ArrayBuffer } | { op: 'query'; sql: string; params: unknown[] } | { op: 'script'; sql: string } | { op: 'close' };

/** How long close() lets the statement under way and PGlite's own close take before the worker is ended. */
const CLOSE_GRACE_MS = 2_000;

/** One worker thread and PGlite in it, from its start to its end. */
type WorkerThread = ThreadCalls<Request>;

function workerThread(worker: Worker): WorkerThread {
  return new ThreadCalls<Request>(worker, {
    stopped: (end) => {
      switch (end.kind) {
        case 'exit':
          return new EmbeddedDatabaseStoppedError(`the embedded records database stopped (worker exit ${end.code})`);
        case 'unanswered':
          return new EmbeddedDatabaseStoppedError(`the embedded records database did not answer within ${end.ms} ms`);
        default:
          return new EmbeddedDatabaseStoppedError(`the embedded records database stopped: ${end.error.message}`, { cause: end.error });
      }
    },
    failed: (error) => Object.assign(new EmbeddedDatabaseError(error.message, error.code), { name: error.name }),
  });
}

async function run<Row extends object>(thread: WorkerThread, sql: string, params: readonly unknown[] = []): Promise<Row[]> {
  return (await thread.call({ op: 'query', sql, params: [...params] })) as Row[];
}

/** Where the database is in its life: a worker running; one starting; the pause before the next start; or no more. */
type Life =
  | { kind: 'running'; thread: WorkerThread }
  | { kind: 'starting'; since: number; error: Error; attempt: Promise<WorkerThread | undefined> }
  | { kind: 'waiting'; since: number; error: Error; timer: NodeJS.Timeout | undefined }
  | { kind: 'closed' };

export class EmbeddedDatabase implements Database {
  readonly kind = 'embedded';
  /** The connection's turn: a transaction holds it from BEGIN to COMMIT, a query for itself. */
  private turn: Promise<unknown> = Promise.resolve();
  private life: Life;
  private restartMs: number;
  private readonly restartMinMs: number;
  private readonly restartMaxMs: number;

  private constructor(
    thread: WorkerThread,
    readonly where: string,
    private readonly open: Request,
    /** A database in memory has nothing to start again from. */
    private readonly restartable: boolean,
    private readonly release: () => Promise<void>,
    private readonly options: EmbeddedDatabaseOptions,
  ) {
    this.life = { kind: 'running', thread };
    thread.onStop = () => this.stopped(thread);
    this.restartMinMs = options.restartMinMs ?? 250;
    this.restartMaxMs = options.restartMaxMs ?? 30_000;
    this.restartMs = this.restartMinMs;
  }

  /** Opens (creating it the first time) the database in `dataDir`, held by this process until close(). */
  static async open(dataDir: string, options: EmbeddedDatabaseOptions = {}): Promise<EmbeddedDatabase> {
    const dir = resolve(dataDir);
    await mkdir(dirname(dir), { recursive: true });
    let release: () => Promise<void>;
    try {
      release = await holdSocket(`${dir}.sock`);
    } catch (error) {
      if (error instanceof SocketHeldError) throw new DataDirInUseError(dir, error.pid);
      throw error;
    }
    return EmbeddedDatabase.start(dir, { op: 'open', dataDir: dir }, true, release, options);
  }

  /** A database in memory, nothing on disk; from a dump of another (PGlite's dumpDataDir) when given. A worker that dies is not started again. */
  static inMemory(dump?: ArrayBuffer): Promise<EmbeddedDatabase> {
    return EmbeddedDatabase.start('memory://', { op: 'open', ...(dump !== undefined ? { dump } : {}) }, false, async () => undefined, {});
  }

  private static async start(where: string, open: Request, restartable: boolean, release: () => Promise<void>, options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
    const thread = workerThread(EmbeddedDatabase.spawn(options));
    try {
      await thread.call(open);
    } catch (error) {
      await thread.terminate();
      await release();
      throw error;
    }
    return new EmbeddedDatabase(thread, where, open, restartable, release, options);
  }

  private static spawn(options: EmbeddedDatabaseOptions): Worker {
    const url = new URL('./embedded-worker.mjs', import.meta.url);
    return options.maxHeapMb === undefined ? new Worker(url) : new Worker(url, { resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb } });
  }

  query<Row extends object>(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.inTurn(async () => run<Row>(await this.thread(), sql, params));
  }

  script(sql: string): Promise<void> {
    return this.inTurn(async () => {
      await (await this.thread()).call({ op: 'script', sql });
    });
  }

  /** The transaction's statements go to the thread that began it: one that stops meanwhile fails them, never hands them to the next. */
  transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T> {
    return this.inTurn(async () => {
      const thread = await this.thread();
      await run(thread, 'BEGIN');
      try {
        const value = await work({
          query: (sql, params = []) => run(thread, sql, params),
          script: async (sql) => {
            await thread.call({ op: 'script', sql });
          },
        });
        await run(thread, 'COMMIT');
        return value;
      } catch (error) {
        if (thread.stopped === undefined) await run(thread, 'ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  /** Within a few seconds, whatever the worker is doing: PGlite closes if it can, the worker is ended, the directory let go. */
  async close(): Promise<void> {
    const life = this.life;
    if (life.kind === 'closed') return;
    this.life = { kind: 'closed' };
    if (life.kind === 'waiting') clearTimeout(life.timer);
    // A start under way ends its own worker once it sees the database closed.
    if (life.kind === 'starting') await within(life.attempt, CLOSE_GRACE_MS);
    const thread = life.kind === 'running' ? life.thread : undefined;
    try {
      if (thread !== undefined && thread.stopped === undefined) {
        const closing = this.inTurn(() => thread.call({ op: 'close' }));
        await within(closing, CLOSE_GRACE_MS);
      }
    } finally {
      await thread?.terminate();
      await this.release();
    }
  }

  /** The thread to run on now; fails at once while none runs (the pause before a start), waits for a start under way. */
  private async thread(): Promise<WorkerThread> {
    const life = this.life;
    if (life.kind === 'running') return life.thread;
    if (life.kind === 'closed') throw new Error('the embedded records database is closed');
    if (life.kind === 'waiting') throw life.error;
    const thread = await life.attempt;
    if (thread === undefined) throw life.error;
    return thread;
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const next = this.turn.then(work, work);
    this.turn = next.catch(() => undefined);
    return next;
  }

  /** The running worker stopped: said once, and another is started after a pause. */
  private stopped(thread: WorkerThread): void {
    const life = this.life;
    if (life.kind !== 'running' || life.thread !== thread) return;
    const error = thread.stopped ?? new EmbeddedDatabaseStoppedError('the embedded records database stopped');
    // One that ran a while stopped on its own: the next start comes soon. One that stops again
    // soon after its start keeps the pause growing.
    if (Date.now() - thread.startedAt >= this.restartMaxMs) this.restartMs = this.restartMinMs;
    if (!this.restartable) {
      this.options.logger?.error('the embedded records database stopped: a database in memory is not started again', { error });
      this.life = { kind: 'waiting', since: Date.now(), error, timer: undefined };
      return;
    }
    this.options.logger?.warn('the embedded records database stopped: it is started again', { where: this.where, error, retryMs: this.restartMs });
    this.waitThenStart(Date.now(), error);
  }

  private waitThenStart(since: number, error: Error): void {
    const timer = setTimeout(() => {
      if (this.life.kind !== 'waiting' || this.life.timer !== timer) return;
      const attempt = this.startAgain(since, error);
      this.life = { kind: 'starting', since, error, attempt };
    }, this.restartMs);
    timer.unref();
    this.life = { kind: 'waiting', since, error, timer };
  }

  private async startAgain(since: number, error: Error): Promise<WorkerThread | undefined> {
    const thread = workerThread(EmbeddedDatabase.spawn(this.options));
    try {
      await thread.call(this.open);
    } catch (failure) {
      await thread.terminate();
      if (this.life.kind !== 'starting') return undefined;
      this.restartMs = Math.min(this.restartMaxMs, this.restartMs * 2);
      this.options.logger?.debug('the embedded records database could not be started again', { error: failure, retryMs: this.restartMs });
      this.waitThenStart(since, error);
      return undefined;
    }
    if (this.life.kind !== 'starting') {
      // Closed meanwhile: close() ends what it finds; this one it did not find.
      await thread.terminate();
      return undefined;
    }
    this.life = { kind: 'running', thread };
    thread.onStop = () => this.stopped(thread);
    this.options.logger?.info('the embedded records database is started again', { where: this.where, downMs: Date.now() - since });
    return thread;
  }
}

async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
