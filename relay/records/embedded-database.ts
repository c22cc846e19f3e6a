// The records of one machine: PGlite (PostgreSQL compiled to WASM) in `<data-dir>/records`, the same
// SQL as PostgreSQL without a server to run. PGlite is one process's: two processes on one data
// directory would each keep their own copy in memory and write over each other, so the directory is
// held with a lock file beside it (`records.lock`, the holder's pid) for as long as it is open. A
// relay that finds it held by a live process is refused (DataDirInUseError) and tries again later,
// as it does when PostgreSQL is down. The first start creates the database beside it
// (`records.init`) and moves it into place once complete, so that a relay stopped meanwhile leaves
// no half-made database behind.
import { access, mkdir, open as openFile, readFile, rename, rm, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import type { Database, SqlRunner } from './database';

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`the records in ${dataDir} are held by another relay (pid ${pid}): one relay per data directory`);
    this.name = 'DataDirInUseError';
  }
}

export class EmbeddedDatabase implements Database {
  readonly kind = 'embedded';

  private constructor(
    private readonly db: PGlite,
    readonly where: string,
    private readonly release: () => Promise<void>,
  ) {}

  /** Opens (creating it the first time) the database in `dataDir`, held by this process until close(). */
  static async open(dataDir: string): Promise<EmbeddedDatabase> {
    const dir = resolve(dataDir);
    await mkdir(dirname(dir), { recursive: true });
    const release = await holdDataDir(dir);
    try {
      if (!(await exists(join(dir, 'PG_VERSION')))) await createInPlaceOf(dir);
      const db = await PGlite.create(dir);
      return new EmbeddedDatabase(db, dir, release);
    } catch (error) {
      await release();
      throw error;
    }
  }

  /** A PGlite the caller opened (an in-memory one, say); close() closes it. */
  static wrap(db: PGlite, where: string): EmbeddedDatabase {
    return new EmbeddedDatabase(db, where, async () => undefined);
  }

  async query<Row extends object>(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return (await this.db.query<Row>(sql, [...params])).rows;
  }

  async script(sql: string): Promise<void> {
    await this.db.exec(sql);
  }

  transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => work(runnerOf(tx)));
  }

  async close(): Promise<void> {
    try {
      await this.db.close();
    } finally {
      await this.release();
    }
  }
}

function runnerOf(tx: Transaction): SqlRunner {
  return {
    query: async <Row extends object>(sql: string, params: readonly unknown[] = []) => (await tx.query<Row>(sql, [...params])).rows,
    script: async (sql: string) => {
      await tx.exec(sql);
    },
  };
}

/**
 * Takes `<dir>.lock` for this process; resolves to its release. A lock whose process is gone (a
 * crash, a kill) is taken over; one held by a live process, this one included, is refused.
 */
async function holdDataDir(dir: string): Promise<() => Promise<void>> {
  const lockPath = `${dir}.lock`;
  const mine = String(process.pid);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const handle = await openFile(lockPath, 'wx', 0o600);
      try {
        await handle.writeFile(mine);
      } finally {
        await handle.close();
      }
      return async () => {
        const holder = await readFile(lockPath, 'utf8').catch(() => undefined);
        if (holder === mine) await unlink(lockPath).catch(() => undefined);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(await readFile(lockPath, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) throw new DataDirInUseError(dir, holder);
      await unlink(lockPath).catch(() => undefined);
    }
  }
  throw new Error(`could not take ${lockPath}: another relay took it at the same moment`);
}

/** Runs initdb beside `dir` and moves the result into its place (held: nobody else is at it). */
async function createInPlaceOf(dir: string): Promise<void> {
  const staging = `${dir}.init`;
  await rm(staging, { recursive: true, force: true });
  const db = await PGlite.create(staging);
  await db.close();
  await rm(dir, { recursive: true, force: true });
  await rename(staging, dir);
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
