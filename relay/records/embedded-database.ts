// The records of one machine: PGlite (PostgreSQL compiled to WASM) in `<data-dir>/records`, the same
// SQL as PostgreSQL without a server to run. PGlite runs in a worker thread (embedded-worker.mjs),
// so that its work never holds the relay's event loop; this side keeps a transaction's statements
// together on its one connection.
//
// PGlite is one process's: two processes on one data directory would each keep their own copy in
// memory and write over each other, so the directory is held, for as long as it is open, by a Unix
// socket this process listens on beside it (`records.sock`). The kernel closes it when the process
// dies, however it dies: a socket file nobody answers on is a holder gone, whose pid may meanwhile
// be another process's. A relay that finds the socket answered is refused (DataDirInUseError) and
// tries again later, as it does when PostgreSQL is down.
import { mkdir, unlink } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { dirname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Database, SqlRunner } from './database';

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
    const release = await holdDataDir(dir);
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

/**
 * Holds `<dir>.sock` for this process; resolves to its release. A socket that answers is a live
 * holder (this process included) and is refused; one that does not (a relay killed, a machine that
 * restarted) is taken over. Whoever connects is told the holder's pid, then let go.
 */
async function holdDataDir(dir: string): Promise<() => Promise<void>> {
  const path = `${dir}.sock`;
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.end(String(process.pid));
    });
    try {
      await listen(server, path);
      // The lock alone never keeps the process alive; close() lets it go, the process's end too.
      server.unref();
      return () => new Promise<void>((done) => server.close(() => done()));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      const holder = await askHolder(path);
      if (holder.alive) throw new DataDirInUseError(dir, holder.pid);
      await unlink(path).catch(() => undefined);
    }
  }
  throw new Error(`could not take ${path}: another relay took it at the same moment`);
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(path, () => {
      server.off('error', fail);
      done();
    });
  });
}

/** How long a holder has to say its pid once connected; a connection that is taken is a live holder all the same. */
const HOLDER_ANSWER_MS = 2_000;

/** Whether a process listens on `path` (it is then alive), and the pid it says it has. */
function askHolder(path: string): Promise<{ alive: boolean; pid?: number }> {
  return new Promise((done) => {
    const socket = connect(path);
    let connected = false;
    let refused = false;
    let said = '';
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const pid = Number.parseInt(said, 10);
      done(refused ? { alive: false } : { alive: true, ...(Number.isInteger(pid) && pid > 0 ? { pid } : {}) });
    };
    // A connection neither taken nor refused in time (a holder too busy to accept) is a live holder.
    const timer = setTimeout(finish, HOLDER_ANSWER_MS);
    socket.setEncoding('utf8');
    socket.on('connect', () => (connected = true));
    socket.on('data', (chunk: string) => (said += chunk));
    socket.on('end', finish);
    socket.on('close', finish);
    // Before a connection, ECONNREFUSED: a socket file nobody listens on; ENOENT: it went meanwhile.
    socket.on('error', () => {
      if (!connected) refused = true;
    });
  });
}
