// The records in PostgreSQL (`--database postgres://…`), shared by every relay instance of a team:
// a small pool, since the records are written in batches by one writer per instance and read by
// occasional queries.
import { Pool, type PoolClient } from 'pg';
import { describePostgresUrl, type Database, type SqlRunner } from './database';

const POOL_SIZE = 4;
/** A server that does not answer within this is as good as down: the writer retries later. */
const CONNECT_TIMEOUT_MS = 5_000;
/** No statement of the records runs longer than this; one that does is stuck (a lock, a server in trouble). */
const STATEMENT_TIMEOUT_MS = 60_000;

export class PostgresDatabase implements Database {
  readonly kind = 'postgres';
  readonly where: string;

  private constructor(
    private readonly pool: Pool,
    url: string,
  ) {
    this.where = describePostgresUrl(url);
  }

  /** Connects lazily: the first query reaches the server, and fails while it is down. */
  static open(url: string): PostgresDatabase {
    const pool = new Pool({
      connectionString: url,
      max: POOL_SIZE,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      application_name: 'softphone-relay-records',
    });
    // An idle connection that the server drops (a restart, a network cut) is reported here; without a
    // listener it would end the process. The pool discards it, and the next query opens another.
    pool.on('error', () => undefined);
    return new PostgresDatabase(pool, url);
  }

  async query<Row extends object>(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    const result = await this.pool.query<Row>(sql, [...params]);
    return result.rows;
  }

  async script(sql: string): Promise<void> {
    // Without parameters pg sends the simple query protocol, which takes several statements.
    await this.pool.query(sql);
  }

  async transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // The pool listens for errors of idle connections only: one lost between two statements of this
    // transaction is reported here, and the next statement fails with it.
    const lost = (error: Error) => {
      broken = error;
    };
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const value = await work(runnerOf(client));
      await client.query('COMMIT');
      return value;
    } catch (error) {
      // A connection that failed mid-transaction cannot roll back; it is discarded instead.
      await client.query('ROLLBACK').catch((rollback: unknown) => {
        broken = rollback instanceof Error ? rollback : new Error(String(rollback));
      });
      throw error;
    } finally {
      client.off('error', lost);
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

function runnerOf(client: PoolClient): SqlRunner {
  return {
    query: async <Row extends object>(sql: string, params: readonly unknown[] = []) => (await client.query<Row>(sql, [...params])).rows,
    script: async (sql: string) => {
      await client.query(sql);
    },
  };
}
