// The records of one machine: PGlite (PostgreSQL compiled to WASM) in `<data-dir>/records`, the same
// SQL as PostgreSQL without a server to run. PGlite runs in a worker thread (embedded-worker.mjs),
// so that its work never holds the relay's event loop; this side keeps a transaction's statements
// together on its one connection.
//
// PGlite is one process's: two processes on one data directory would each keep their own copy in
// memory and write over each other, so the directory is held, for as long as it is open, by a Unix
// socket this process listens on beside it (`records.sock`, socket-lock.ts). A relay that finds it
// answered is refused (DataDirInUseError) and tries again later, as it does when PostgreSQL is down.
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Database, SqlRunner } from './database';
import { holdSocket, SocketHeldError } from './socket-lock';

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

type Request = { op: 'open'; dataDir?: string; dump?: ArrayBuffer } | { op: 'query'; sql: string; params: unknown[] } | { op: 'script'; sql: string } | { op: 'close' };
type Reply = { id: number; ok: true; result?: unknown } | { id: number; ok: false; error: { message: string; code?: string; name: string } };

export class EmbeddedDatabase implements Database {
  readonly kind = 'embedded';
  private readonly pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  private nextId = 1;
  /** The connection's turn: a transaction holds it from BEGIN to COMMIT, a query for itself. */
  private turn: Promise<unknown> = Promise.resolve();
  private exited: Error | undefined;

  private constructor(
    private readonly worker: Worker,
    readonly where: string,
    private readonly release: () => Promise<void>,
  ) {
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`the embedded records database stopped (worker exit ${code})`)));
  }

  /** Opens (creating it the first time) the database in `dataDir`, held by this process until close(). */
  static async open(dataDir: string): Promise<EmbeddedDatabase> {
    const dir = resolve(dataDir);
    await mkdir(dirname(dir), { recursive: true });
    let release: () => Promise<void>;
    try {
      release = await holdSocket(`${dir}.sock`);
    } catch (error) {
      if (error instanceof SocketHeldError) throw new DataDirInUseError(dir, error.pid);
      throw error;
    }
    return EmbeddedDatabase.start(dir, release, { op: 'open', dataDir: dir });
  }

  /** A database in memory, nothing on disk; from a dump of another (PGlite's dumpDataDir) when given. */
  static inMemory(dump?: ArrayBuffer): Promise<EmbeddedDatabase> {
    return EmbeddedDatabase.start('memory://', async () => undefined, { op: 'open', ...(dump !== undefined ? { dump } : {}) });
  }

  private static async start(where: string, release: () => Promise<void>, open: Request): Promise<EmbeddedDatabase> {
    const db = new EmbeddedDatabase(new Worker(new URL('./embedded-worker.mjs', import.meta.url)), where, release);
    try {
      await db.call(open);
      return db;
    } catch (error) {
      await db.worker.terminate();
      await release();
      throw error;
    }
  }

  query<Row extends object>(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.inTurn(() => this.run<Row>(sql, params));
  }

  script(sql: string): Promise<void> {
    return this.inTurn(async () => {
      await this.call({ op: 'script', sql });
    });
  }

  transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T> {
    return this.inTurn(async () => {
      await this.run('BEGIN');
      try {
        const value = await work({
          query: (sql, params = []) => this.run(sql, params),
          script: async (sql) => {
            await this.call({ op: 'script', sql });
          },
        });
        await this.run('COMMIT');
        return value;
      } catch (error) {
        await this.run('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async close(): Promise<void> {
    try {
      await this.inTurn(() => this.call({ op: 'close' }));
    } finally {
      await this.worker.terminate();
      await this.release();
    }
  }

  private async run<Row extends object>(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return (await this.call({ op: 'query', sql, params: [...params] })) as Row[];
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const next = this.turn.then(work, work);
    this.turn = next.catch(() => undefined);
    return next;
  }

  private call(request: Request): Promise<unknown> {
    if (this.exited !== undefined) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...request });
    });
  }

  private settle(reply: Reply): void {
    const waiting = this.pending.get(reply.id);
    if (waiting === undefined) return;
    this.pending.delete(reply.id);
    if (reply.ok) waiting.resolve(reply.result);
    else waiting.reject(Object.assign(new EmbeddedDatabaseError(reply.error.message, reply.error.code), { name: reply.error.name }));
  }

  private fail(error: Error): void {
    this.exited ??= error;
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
  }
}
