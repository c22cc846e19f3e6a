// A writer that remembers the facts of the calls it wrote lately (KnownFacts) reads back only what
// differs from them when it derives a call's row again: another instance's facts, a wrap-up saved
// meanwhile, a fact that lost to one stored before. The rows must come out exactly as a writer that
// reads every fact back makes them, whatever was written where and in what order.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdFact, wrapUpFact, type CallFact } from '../../../relay/records/call-facts';
import type { Database, SqlRunner } from '../../../relay/records/database';
import { callById } from '../../../relay/records/records-queries';
import { KnownFacts, writeBatch } from '../../../relay/records/records-store';
import { DATABASE_HARNESSES, migrated, type FreshDatabase } from './database-harness';
import { answeredCall, claim, decline, factsOfStep, incoming, status, T0, terminated } from './records-fixtures';

const MIN = 60_000;

/** A runner that counts the rows each statement brings back. */
function countingRunner(tx: SqlRunner, rows: number[]): SqlRunner {
  return {
    query: async <Row extends object>(sql: string, params: readonly unknown[] = []) => {
      const result = await tx.query<Row>(sql, params);
      if (/^\s*SELECT f\.call_id|^SELECT call_id, kind/.test(sql)) rows.push(result.length);
      return result;
    },
    script: (sql) => tx.script(sql),
  };
}

/** The facts of a few calls of every shape: answered, declined then answered, outgoing, held, wrapped up. */
function scenario(t: number): CallFact[] {
  const steps = [
    ...answeredCall('wacid.kf-1', t),
    incoming('wacid.kf-2', t + MIN, ['alice', 'bob']),
    decline('wacid.kf-2', 'bob', t + MIN + 3_000, 1),
    claim('wacid.kf-2', 'alice', t + MIN + 5_000),
    terminated('wacid.kf-2', t + 2 * MIN, { answeredAt: t + MIN + 5_000 }),
    claim('wacid.kf-3', 'bob', t + 3 * MIN),
    status('wacid.kf-3', 'RINGING', t + 3 * MIN + 2_000),
    status('wacid.kf-3', 'ACCEPTED', t + 3 * MIN + 9_000),
    terminated('wacid.kf-3', t + 4 * MIN, { answeredAt: t + 3 * MIN + 9_000 }),
  ];
  return [
    ...steps.flatMap(factsOfStep),
    holdFact('wacid.kf-1', 'alice', t + 10_000, true),
    holdFact('wacid.kf-1', 'alice', t + 20_000, false),
    wrapUpFact('wacid.kf-1', 'alice', t + 70_000, { disposition: 'Sale', notes: 'first' }),
    wrapUpFact('wacid.kf-1', 'alice', t + 80_000, { disposition: 'Sale', notes: 'edited' }),
  ];
}

const CALL_IDS = ['wacid.kf-1', 'wacid.kf-2', 'wacid.kf-3'];

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('known facts on %s', (_name, make) => {
  const harness = make();
  const opened: FreshDatabase[] = [];
  beforeAll(async () => {
    await harness.setup();
  }, 60_000);
  afterAll(async () => {
    for (const fresh of opened) await fresh.drop();
    await harness.teardown();
  }, 60_000);

  const database = async (): Promise<Database> => {
    const fresh = await harness.fresh();
    opened.push(fresh);
    return migrated(fresh);
  };
  /** Writes a batch as a writer does: remembered only once committed. */
  const write = async (db: Database, facts: readonly CallFact[], instanceId: string, known?: KnownFacts, rows: number[] = []) => {
    const standing = await db.transaction((tx) => writeBatch(countingRunner(tx, rows), { calls: facts, states: [] }, instanceId, known));
    known?.remember(standing);
  };
  const rowsOf = async (db: Database) => Promise.all(CALL_IDS.map((callId) => callById(db, callId)));

  it('reads back nothing of a call whose facts it wrote itself, and the others’ facts only', async () => {
    const db = await database();
    const known = new KnownFacts();
    const [ring, answer, end] = answeredCall('wacid.kf-read', T0).map(factsOfStep);
    const read: number[] = [];
    await write(db, ring!, 'a', known, read);
    await write(db, answer!, 'a', known, read);
    // Another instance adds a hold: the next batch here reads back that one fact only.
    await write(db, [holdFact('wacid.kf-read', 'alice', T0 + 5_000, true)], 'b');
    await write(db, end!, 'a', known, read);
    expect(read).toEqual([0, 0, 1]);
    expect(await callById(db, 'wacid.kf-read')).toMatchObject({ outcome: 'answered', holdMs: 60_000 - 3_000 });

    // A writer without them reads every fact of the call back.
    const plain: number[] = [];
    await write(db, [holdFact('wacid.kf-read', 'alice', T0 + 6_000, false)], 'c', undefined, plain);
    expect(plain).toEqual([ring!.length + answer!.length + end!.length + 2]);
  });

  it('makes the same rows as reading every fact back, however the facts are split between instances, ordered and repeated', async () => {
    const reference = await database();
    await write(reference, scenario(T0), 'reference');
    const expected = await rowsOf(reference);
    expect(expected.every((row) => row !== undefined)).toBe(true);

    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ fact: fc.nat(scenario(T0).length - 1), writer: fc.constantFrom('a', 'b', 'plain'), twice: fc.boolean() }), { minLength: 8, maxLength: 30 }),
        fc.nat(5),
        async (plan, batchSize) => {
          const db = await database();
          const known = { a: new KnownFacts(), b: new KnownFacts() };
          const facts = scenario(T0);
          // Every fact at least once, in the planned order first; some twice (a webhook retried, another instance's sighting).
          const order = [...plan.flatMap((p) => (p.twice ? [p, p] : [p])), ...facts.map((_, fact) => ({ fact, writer: 'a' as const }))];
          for (let i = 0; i < order.length; i += batchSize + 1) {
            const { writer } = order[i]!;
            const batch = order.slice(i, i + batchSize + 1).map((p) => facts[p.fact]!);
            await write(db, batch, writer, writer === 'plain' ? undefined : known[writer]);
          }
          expect(await rowsOf(db)).toEqual(expected);
        },
      ),
      { numRuns: 12 },
    );
  }, 120_000);

  it('takes what the database holds over what it remembers: an earlier sighting stored by another instance, a later wrap-up', async () => {
    const db = await database();
    const known = new KnownFacts();
    const t = T0 + 10 * MIN;
    const [ring, answer] = answeredCall('wacid.kf-won', t).map(factsOfStep);
    // This instance saw alice's claim 1 s late; another instance's earlier sighting stands.
    const late = factsOfStep(claim('wacid.kf-won', 'alice', t + 3_000));
    await write(db, [...ring!, ...late], 'a', known);
    await write(db, answer!, 'b');
    await write(db, [wrapUpFact('wacid.kf-won', 'alice', t + 90_000, { disposition: 'Sale', notes: 'from b' })], 'b');
    await write(db, factsOfStep(terminated('wacid.kf-won', t + 62_000, { answeredAt: t + 2_000 })), 'a', known);
    expect(await callById(db, 'wacid.kf-won')).toMatchObject({ answeredAt: t + 2_000, waitMs: 2_000, notes: 'from b', disposition: 'Sale' });
  });

  it('forgets calls after a while and beyond its bound, least lately written first', () => {
    const clock = { now: T0 };
    const known = new KnownFacts({ maxCalls: 2, maxAgeMs: 10 * MIN, now: () => clock.now });
    const facts = (callId: string) => factsOfStep(claim(callId, 'alice', T0));
    known.remember(new Map([['c1', facts('c1')]]));
    known.remember(new Map([['c2', facts('c2')]]));
    known.remember(new Map([['c1', facts('c1')]]));
    known.remember(new Map([['c3', facts('c3')]]));
    expect([known.of('c1'), known.of('c2'), known.of('c3')].map((f) => f !== undefined)).toEqual([true, false, true]);
    clock.now += 10 * MIN + 1;
    expect(known.of('c1')).toBeUndefined();
    expect(known.size).toBe(1);
  });
});
