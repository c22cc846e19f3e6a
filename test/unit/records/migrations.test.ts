// The records' migrations against a real PostgreSQL and PGlite: each applied once, recorded, in a
// transaction (a failing one leaves nothing behind), and safe when relay instances start together.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../relay/records/database';
import { migrate, MIGRATIONS, type Migration } from '../../../relay/records/migrations';
import { DATABASE_HARNESSES, type FreshDatabase } from './database-harness';

const TABLES = ['agent_state_facts', 'agent_states', 'call_facts', 'calls', 'records_migrations'];

async function tablesOf(db: Database): Promise<string[]> {
  const rows = await db.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1");
  return rows.map((r) => r.name);
}

async function appliedVersions(db: Database): Promise<number[]> {
  return (await db.query<{ version: number }>('SELECT version FROM records_migrations ORDER BY version')).map((r) => r.version);
}

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('migrations on %s', (_name, make) => {
  const harness = make();
  let fresh: FreshDatabase;
  beforeAll(() => harness.setup(), 60_000);
  afterAll(() => harness.teardown(), 60_000);
  afterEach(async () => fresh?.drop());

  it('creates the schema once and records each version; running again applies nothing', async () => {
    fresh = await harness.fresh();
    const db = await fresh.connect();
    expect(await migrate(db)).toEqual({ applied: MIGRATIONS.map((m) => m.version), unknown: [] });
    expect(await tablesOf(db)).toEqual(TABLES);
    expect(await appliedVersions(db)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(await migrate(db)).toEqual({ applied: [], unknown: [] });
    expect(await appliedVersions(db)).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it('instances starting at once: every migration applied exactly once, none fails', async () => {
    fresh = await harness.fresh();
    const instances = await Promise.all([1, 2, 3, 4, 5].map(() => fresh.connect()));
    const reports = await Promise.all(instances.map((db) => migrate(db)));
    expect(reports.flatMap((r) => r.applied).sort()).toEqual(MIGRATIONS.map((m) => m.version));
    expect(await appliedVersions(instances[0]!)).toEqual(MIGRATIONS.map((m) => m.version));
    await Promise.all(instances.map((db) => db.close()));
  });

  it('a migration that fails leaves no trace and is tried again at the next start; later versions wait for it', async () => {
    fresh = await harness.fresh();
    const db = await fresh.connect();
    const known = MIGRATIONS.map((m) => m.version);
    const next = Math.max(...known) + 1;
    const broken: Migration = { version: next, name: 'broken', sql: 'CREATE TABLE half_done (id integer); SELECT no_such_column FROM half_done;' };
    const after: Migration = { version: next + 1, name: 'after', sql: 'CREATE TABLE after_broken (id integer);' };
    await expect(migrate(db, [...MIGRATIONS, broken, after])).rejects.toThrow(/no_such_column/);
    expect(await appliedVersions(db)).toEqual(known);
    expect(await tablesOf(db)).toEqual(TABLES);
    const fixed: Migration = { ...broken, sql: 'CREATE TABLE half_done (id integer);' };
    expect(await migrate(db, [...MIGRATIONS, fixed, after])).toEqual({ applied: [next, next + 1], unknown: [] });
    expect(await tablesOf(db)).toEqual(['after_broken', ...TABLES.slice(0, 4), 'half_done', 'records_migrations']);
  });

  it('says which versions in the database it does not know (a newer relay ran on it)', async () => {
    fresh = await harness.fresh();
    const db = await fresh.connect();
    await migrate(db, [...MIGRATIONS, { version: 70, name: 'newer', sql: 'CREATE TABLE newer (id integer);' }]);
    expect(await migrate(db)).toEqual({ applied: [], unknown: [70] });
  });
});
