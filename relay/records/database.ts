// The seam between the call records and the database that keeps them: PostgreSQL for a team
// (postgres-database.ts) or PGlite, PostgreSQL compiled to WASM, in the relay's data directory for
// one machine (embedded-database.ts). Both speak the same SQL, so the schema, the writes and the
// queries are written once. Rows come back as the driver parsed them: timestamptz as Date, integer
// as number, text[] as string[], jsonb as its value. Counts and averages are cast in the SQL
// (`::int`, `::float8`), since the two drivers read bigint and numeric differently.
import type { Logger } from '../../shared/log';
import type { FactBatch } from './records-store';

/** Runs one statement; `$1`, `$2`… are bound from `params`. */
export interface SqlRunner {
  query<Row extends object>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Runs a script of several statements, without parameters (a migration). */
  script(sql: string): Promise<void>;
}

export interface Database extends SqlRunner {
  readonly kind: 'postgres' | 'embedded';
  /** Where the records are, for logs: a URL without its password, or the data directory. */
  readonly where: string;
  /** Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T>;
  /**
   * Writes a batch of facts in one transaction, as `writeBatch` (records-store.ts) does in
   * `transaction`, where the database has a better place to do it (PostgreSQL: a worker thread, off
   * the relay's event loop). Fails as `transaction` would: a refused datum with its SQLSTATE `code`
   * or its RangeError/TypeError `name`, anything else as the database's state.
   */
  writeFacts?(batch: FactBatch, instanceId: string): Promise<void>;
  close(): Promise<void>;
}

/** Which database keeps the records: `--database URL`, else the embedded one in `--data-dir`. */
export type DatabaseConfig = { kind: 'postgres'; url: string } | { kind: 'embedded'; dataDir: string };

/**
 * Opens the database a configuration names; the drivers load their package only when asked.
 * `logger` hears what a driver does on its own (the embedded database starting its worker again).
 */
export async function openDatabase(config: DatabaseConfig, options: { logger?: Logger } = {}): Promise<Database> {
  if (config.kind === 'postgres') {
    const { PostgresDatabase } = await import('./postgres-database');
    return PostgresDatabase.open(config.url);
  }
  const { EmbeddedDatabase } = await import('./embedded-database');
  return EmbeddedDatabase.open(config.dataDir, options.logger !== undefined ? { logger: options.logger } : {});
}

/** A postgres:// URL as logs may show it: without its password. */
export function describePostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return 'postgres://…';
  }
}
