// Opens each driver's database the same way, so that one suite runs against PostgreSQL and PGlite
// (describe.each over DATABASE_HARNESSES): a fresh, empty database per test, and as many
// connections to it as a test needs (several relay instances on one PostgreSQL).
import { PGlite } from '@electric-sql/pglite';
import type { Database, SqlRunner } from '../../../relay/records/database';
import { EmbeddedDatabase } from '../../../relay/records/embedded-database';
import { migrate } from '../../../relay/records/migrations';
import { PostgresDatabase } from '../../../relay/records/postgres-database';
import { createDatabase, startPostgres, type PostgresServer } from './postgres-server';

/** One empty database: connect() opens a connection to it (each is closed by its user), drop() removes it. */
export interface FreshDatabase {
  connect(): Promise<Database>;
  drop(): Promise<void>;
}

export interface DatabaseHarness {
  name: 'postgres' | 'pglite';
  setup(): Promise<void>;
  teardown(): Promise<void>;
  fresh(): Promise<FreshDatabase>;
}

function postgresHarness(): DatabaseHarness {
  let server: PostgresServer | undefined;
  const dropped: (() => Promise<void>)[] = [];
  return {
    name: 'postgres',
    setup: async () => {
      server = await startPostgres();
    },
    teardown: async () => {
      for (const drop of dropped.splice(0)) await drop().catch(() => undefined);
      await server?.stop();
      server = undefined;
    },
    fresh: async () => {
      if (server === undefined) throw new Error('postgres harness not set up');
      const created = await createDatabase(server);
      const opened: Database[] = [];
      const drop = async () => {
        await Promise.all(opened.splice(0).map((db) => db.close().catch(() => undefined)));
        await created.drop();
      };
      dropped.push(drop);
      return {
        connect: async () => {
          const db = PostgresDatabase.open(created.url);
          opened.push(db);
          return db;
        },
        drop,
      };
    },
  };
}

/**
 * PGlite runs initdb (seconds of WASM) on every new database; a dump of one made at setup loads in
 * a fraction of that. All connections of one fresh database are the same PGlite: closing one leaves
 * it open for the others, drop() closes it.
 */
function pgliteHarness(): DatabaseHarness {
  let template: File | Blob | undefined;
  const opened: PGlite[] = [];
  return {
    name: 'pglite',
    setup: async () => {
      const db = await PGlite.create();
      template = await db.dumpDataDir('none');
      await db.close();
    },
    teardown: async () => {
      await Promise.all(opened.splice(0).map((db) => (db.closed ? undefined : db.close())));
    },
    fresh: async () => {
      if (template === undefined) throw new Error('pglite harness not set up');
      const db = await PGlite.create({ loadDataDir: template });
      opened.push(db);
      const shared = EmbeddedDatabase.wrap(db, 'memory://');
      return {
        connect: async () => connectionTo(shared),
        drop: async () => {
          if (!db.closed) await db.close();
        },
      };
    },
  };
}

/** Another handle on the same database, whose close() leaves the database open. */
function connectionTo(db: Database): Database {
  return {
    kind: db.kind,
    where: db.where,
    query: (sql, params) => db.query(sql, params),
    script: (sql) => db.script(sql),
    transaction: <T>(work: (tx: SqlRunner) => Promise<T>) => db.transaction(work),
    close: async () => undefined,
  };
}

export const DATABASE_HARNESSES: readonly (() => DatabaseHarness)[] = [postgresHarness, pgliteHarness];

/** A fresh database with the records' schema. */
export async function migrated(fresh: FreshDatabase): Promise<Database> {
  const db = await fresh.connect();
  await migrate(db);
  return db;
}
