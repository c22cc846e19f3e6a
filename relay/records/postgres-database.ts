// The records in PostgreSQL (`--database postgres://…`), shared by every relay instance of a team:
// a small pool for the occasional queries, and the batches of the one writer per instance written
// in a worker thread with a pool of its own (facts-worker.ts), off the relay's event loop.
//
// A server that does not answer at all (a network cut mid-statement, a host frozen) is as good as
// down: a statement not answered in time fails, and its connection is let go rather than asked to
// roll back, which would wait on the same silence; the server rolls back what it loses.
import { Pool, type PoolClient } from 'pg';
import { describePostgresUrl, type Database, type SqlRunner } from './database';
import { FactsWorker } from './facts-worker';
import type { FactBatch } from './records-store';

/** Which pool a database is, as the server's pg_stat_activity names it too. */
export interface PoolRole {
  size: number;
  applicationName: string;
}
/** The relay's: queries, migrations, prunes, wrap-ups. */
const RELAY_POOL: PoolRole = { size: 4, applicationName: 'softphone-relay-records' };
/** The writer thread's: one batch at a time, and one connection more while a lost one is let go. */
export const WRITER_POOL: PoolRole = { size: 2, applicationName: 'softphone-relay-records-writer' };
/** A server that does not answer within this is as good as down: the writer retries later. */
const CONNECT_TIMEOUT_MS = 5_000;
/** No statement of the records runs longer than this; one that does is stuck (a lock, a server in trouble). */
const STATEMENT_TIMEOUT_MS = 60_000;
/** How long close() waits for the connections to finish what they do before it lets them go. */
const CLOSE_GRACE_MS = 2_000;

export interface PostgresDatabaseOptions {
  /** A statement the server has not answered within this fails here, its connection let go. Default: the server's own limit (60 s) and 5 s more. */
  answerTimeoutMs?: number;
  /** Default the relay's (RELAY_POOL); the writer thread opens its own (WRITER_POOL). */
  pool?: PoolRole;
}

/** The server did not answer a statement in time: its connection is let go. */
export class NoAnswerError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the records database did not answer within ${timeoutMs} ms`);
    this.name = 'NoAnswerError';
  }
}

export class PostgresDatabase implements Database {
  readonly kind = 'postgres';
  readonly where: string;
  private readonly facts: FactsWorker;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly pool: Pool,
    url: string,
    private readonly answerTimeoutMs: number,
  ) {
    this.where = describePostgresUrl(url);
    this.facts = new FactsWorker({ url, answerTimeoutMs });
  }

  /** Connects lazily: the first query reaches the server, and fails while it is down. */
  static open(url: string, options: PostgresDatabaseOptions = {}): PostgresDatabase {
    const role = options.pool ?? RELAY_POOL;
    const pool = new Pool({
      connectionString: url,
      max: role.size,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      // A peer gone without a word (a host powered off) is noticed by the kernel, not by the next statement's silence alone.
      keepAlive: true,
      application_name: role.applicationName,
    });
    // An idle connection that the server drops (a restart, a network cut) is reported here; without a
    // listener it would end the process. The pool discards it, and the next query opens another.
    pool.on('error', () => undefined);
    return new PostgresDatabase(pool, url, options.answerTimeoutMs ?? STATEMENT_TIMEOUT_MS + 5_000);
  }

  query<Row extends object>(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.onClient((runner) => runner.query<Row>(sql, params));
  }

  script(sql: string): Promise<void> {
    return this.onClient((runner) => runner.script(sql));
  }

  transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T> {
    return this.onClient(async (runner, connection) => {
      await runner.query('BEGIN');
      try {
        const value = await work(runner);
        await runner.query('COMMIT');
        return value;
      } catch (error) {
        // A connection that failed mid-transaction, or went silent, cannot roll back; it is discarded instead.
        if (connection.lost() === undefined) {
          await runner.query('ROLLBACK').catch((rollback: unknown) => connection.discard(rollback instanceof Error ? rollback : new Error(String(rollback))));
        }
        throw error;
      }
    });
  }

  /** In the writer thread (facts-worker.ts), started at the first batch written (the records write an empty one as they connect). */
  writeFacts(batch: FactBatch, instanceId: string): Promise<void> {
    return this.facts.write(batch, instanceId);
  }

  /** Within a few seconds: the connections finish what they do, or are left to the process's end; the writer thread ends with its own. Once, however often asked. */
  close(): Promise<void> {
    this.closing ??= Promise.all([this.endPool(), this.facts.close()]).then(() => undefined);
    return this.closing;
  }

  private async endPool(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const ended = this.pool.end();
    await Promise.race([ended, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)))]);
    clearTimeout(timer);
    ended.catch(() => undefined);
  }

  /**
   * Runs `work` on a connection of its own, released after; a connection that errs or does not
   * answer in time is discarded (`lost()` says why), never handed to the next user.
   */
  private async onClient<T>(work: (runner: SqlRunner, connection: { lost: () => Error | undefined; discard: (error: Error) => void }) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // The pool listens for errors of idle connections only: one lost while in use is reported here,
    // and the next statement fails with it.
    const discard = (error: Error) => {
      broken ??= error;
    };
    client.on('error', discard);
    const runner = runnerOf(client, this.answerTimeoutMs, discard);
    try {
      return await work(runner, { lost: () => broken, discard });
    } finally {
      client.off('error', discard);
      client.release(broken);
    }
  }
}

function runnerOf(client: PoolClient, answerTimeoutMs: number, silent: (error: Error) => void): SqlRunner {
  const answered = async <T>(asked: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new NoAnswerError(answerTimeoutMs);
        silent(error);
        reject(error);
      }, answerTimeoutMs);
    });
    try {
      return await Promise.race([asked, timeout]);
    } finally {
      clearTimeout(timer);
      // Answered after all, or failed with the connection once it is let go: nobody waits for it.
      asked.catch(() => undefined);
    }
  };
  return {
    query: async <Row extends object>(sql: string, params: readonly unknown[] = []) => (await answered(client.query<Row>(sql, [...params]))).rows,
    script: async (sql: string) => {
      await answered(client.query(sql));
    },
  };
}
