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
 * a fraction of that, into the same worker-thread database the relay runs (EmbeddedDatabase). All
 * connections of one fresh database share it: closing one leaves it open for the others, drop()
 * closes it.
 */
function pgliteHarness(): DatabaseHarness {
  let template: ArrayBuffer | undefined;
  const opened: EmbeddedDatabase[] = [];
  return {
    name: 'pglite',
    setup: async () => {
      const db = await PGlite.create();
      template = await (await db.dumpDataDir('none')).arrayBuffer();
      await db.close();
    },
    teardown: async () => {
      await Promise.all(opened.splice(0).map((db) => db.close().catch(() => undefined)));
    },
    fresh: async () => {
      if (template === undefined) throw new Error('pglite harness not set up');
      const db = await EmbeddedDatabase.inMemory(template);
      opened.push(db);
      let dropped = false;
      return {
        connect: async () => connectionTo(db),
        drop: async () => {
          if (dropped) return;
          dropped = true;
          await db.close();
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
