// Several relay instances share one database, each writing only the facts it handled itself, in
// whatever order and however often the service retries: the call's record and the agents' intervals
// must come out the same every time. Played through two CallRecords (two connection pools on
// PostgreSQL, writing at once), shuffled, duplicated, and cut into batches at random.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { intervalsOf, type AgentStateFact } from '../../../relay/records/agent-states';
import { CallRecords } from '../../../relay/records/call-records';
import type { Database } from '../../../relay/records/database';
import { writeBatch } from '../../../relay/records/records-store';
import { callById, stateIntervals } from '../../../relay/records/records-queries';
import type { CallRecord } from '../../../relay/records/call-record';
import { DATABASE_HARNESSES, migrated, type FreshDatabase } from './database-harness';
import { answered, claim, collect, decline, incoming, play, recordingLogger, renamed, status, T0, terminated, voicemail, type Step } from './records-fixtures';

const SCENARIOS: Record<string, Step[]> = {
  'an answered call with a transfer': [
    incoming('c', T0, ['alice', 'bob']),
    decline('c', 'bob', T0 + 1_500, 1),
    claim('c', 'alice', T0 + 3_000),
    {
      at: T0 + 20_000,
      event: { type: 'call.transfer_ring', callId: 'c', transferId: 'tr', kind: 'consult', by: { agentId: 'alice', name: 'Alice' }, legId: 'leg', sdp: 'v=0', timestamp: T0 + 20_000 },
      audience: { kind: 'agent', agentId: 'carol' },
    },
    {
      at: T0 + 22_000,
      event: { type: 'call.transfer_update', callId: 'c', transferId: 'tr', kind: 'consult', agentId: 'alice', state: 'consulting', colleague: { agentId: 'carol', name: 'Carol' }, timestamp: T0 + 22_000 },
      audience: { kind: 'agent', agentId: 'alice' },
    },
    {
      at: T0 + 40_000,
      event: { type: 'call.transfer_update', callId: 'c', transferId: 'tr', kind: 'consult', agentId: 'alice', state: 'joined', colleague: { agentId: 'carol', name: 'Carol' }, timestamp: T0 + 40_000 },
      audience: { kind: 'agent', agentId: 'alice' },
    },
    terminated('c', T0 + 90_000, { answeredAt: T0 + 3_000 }),
  ],
  'a call every agent declined, with its voicemail': [
    incoming('c', T0, ['alice', 'bob']),
    decline('c', 'alice', T0 + 1_000, 1),
    decline('c', 'bob', T0 + 2_000, 0),
    terminated('c', T0 + 2_400),
    voicemail('c', T0 + 40_000, 'media-voicemail-2'),
  ],
  'an outgoing call the customer answered': [
    claim('c', 'alice', T0),
    status('c', 'RINGING', T0 + 900),
    answered('c', T0 + 7_000),
    status('c', 'ACCEPTED', T0 + 7_300),
    terminated('c', T0 + 67_000, { answeredAt: T0 + 7_000 }),
  ],
};

/** A record as it reads whatever its id. */
const withoutId = (record: CallRecord | undefined) => {
  if (record === undefined) return undefined;
  const { callId: _callId, ...rest } = record;
  return rest;
};

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('facts from several instances on %s', (_name, make) => {
  const harness = make();
  const clocks = [{ now: T0 }, { now: T0 }];
  let fresh: FreshDatabase;
  let instances: CallRecords[];
  let db: Database;

  beforeAll(async () => {
    await harness.setup();
    fresh = await harness.fresh();
    db = await migrated(fresh);
    instances = clocks.map(
      (clock, i) => new CallRecords({ database: () => fresh.connect(), logger: recordingLogger(), now: () => clock.now, instanceId: `instance-${i}`, writer: { flushIntervalMs: 2, batchSize: 3 } }),
    );
    await Promise.all(instances.map((r) => r.database()));
  }, 60_000);
  afterAll(async () => {
    await Promise.all((instances ?? []).map((r) => r.close()));
    await fresh?.drop();
    await harness.teardown();
  }, 60_000);

  let variant = 0;
  it.each(Object.entries(SCENARIOS))('%s: the same record whichever instance wrote which fact, in any order, however often', async (_title, steps) => {
    const reference = `wacid.order-${variant++}`;
    for (const step of renamed(steps, reference)) play(instances[0]!, clocks[0]!, step);
    expect(await instances[0]!.flush()).toBe(true);
    const expected = withoutId(await callById(db, reference));
    expect(expected?.outcome ?? expected?.voicemailAt).toBeDefined();

    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(steps, { minLength: steps.length, maxLength: steps.length }),
        fc.array(fc.nat({ max: 1 }), { minLength: steps.length, maxLength: steps.length }),
        fc.array(fc.nat({ max: steps.length - 1 }), { maxLength: 4 }),
        fc.array(fc.boolean(), { minLength: steps.length, maxLength: steps.length }),
        async (order, writers, repeats, pauses) => {
          const callId = `wacid.order-${variant++}`;
          const played = renamed([...order, ...repeats.map((i) => order[i]!)], callId);
          // Each step played on one instance (and a repeat on the other), a flush now and then: batches cut anywhere.
          await Promise.all(
            played.map(async (step, i) => {
              const which = (writers[i % writers.length]! + (i >= order.length ? 1 : 0)) % 2;
              play(instances[which]!, clocks[which]!, step);
              if (pauses[i % pauses.length] === true) await instances[which]!.flush();
            }),
          );
          await Promise.all(instances.map((r) => r.flush()));
          expect(withoutId(await callById(db, callId))).toEqual(expected);
        },
      ),
      { numRuns: 12, seed: 20261102 },
    );
  });

  it('a fact two instances saw at different moments keeps the earliest, whichever wrote first', async () => {
    for (const [first, second, callId] of [
      [T0 + 40, T0, 'wacid.twice-a'],
      [T0, T0 + 40, 'wacid.twice-b'],
    ] as const) {
      play(instances[0]!, clocks[0]!, incoming(callId, first, ['alice']));
      expect(await instances[0]!.flush()).toBe(true);
      play(instances[1]!, clocks[1]!, incoming(callId, second, ['alice']));
      expect(await instances[1]!.flush()).toBe(true);
      expect(await callById(db, callId)).toMatchObject({ startedAt: T0, rangAt: T0 });
    }
  });

  it("an agent's state changes, written in any order and batches, make the same intervals", async () => {
    const facts: AgentStateFact[] = [
      { agentId: 'dana', state: 'available', reason: '', at: T0 },
      { agentId: 'dana', state: 'on_call', reason: '', at: T0 + 60_000 },
      // The same change noticed by the other instance a moment later: one interval.
      { agentId: 'dana', state: 'on_call', reason: '', at: T0 + 61_000 },
      { agentId: 'dana', state: 'available', reason: '', at: T0 + 300_000 },
      { agentId: 'dana', state: 'dnd', reason: '', at: T0 + 400_000 },
      { agentId: 'dana', state: 'offline', reason: 'presence_expired', at: T0 + 500_000 },
      { agentId: 'dana', state: 'offline', reason: 'presence_expired', at: T0 + 503_000 },
      { agentId: 'dana', state: 'available', reason: '', at: T0 + 900_000 },
    ];
    const expected = intervalsOf(facts);
    expect(expected.map((i) => i.state)).toEqual(['available', 'on_call', 'available', 'dnd', 'offline', 'available']);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray(facts, { minLength: facts.length, maxLength: facts.length }), fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 8, maxLength: 8 }), async (order, cuts) => {
        const agentId = `dana-${run++}`;
        const mine = order.map((f) => ({ ...f, agentId }));
        for (let i = 0, c = 0; i < mine.length; c += 1) {
          const batch = mine.slice(i, i + cuts[c % cuts.length]!);
          i += batch.length;
          await db.transaction((tx) => writeBatch(tx, { calls: [], states: [...batch, ...batch] }, 'test'));
        }
        const got = await collect(stateIntervals(db, { from: new Date(T0 - 1), to: new Date(T0 + 1_000_000), agentId }));
        expect(got).toEqual(expected.map((i) => ({ ...i, agentId })));
      }),
      { numRuns: 15, seed: 7 },
    );
  });

  it("several agents' state changes in the same batches make each agent's own intervals, as each alone would", async () => {
    const of = (agentId: string, shift: number): AgentStateFact[] => [
      { agentId, state: 'available', reason: '', at: T0 + shift },
      { agentId, state: 'break', reason: 'Lunch', at: T0 + shift + 60_000 },
      { agentId, state: 'available', reason: '', at: T0 + shift + 120_000 },
      { agentId, state: 'offline', reason: 'presence_expired', at: T0 + shift + 200_000 },
      { agentId, state: 'available', reason: '', at: T0 + shift + 400_000 },
    ];
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14], { minLength: 15, maxLength: 15 }), fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 8, maxLength: 8 }), async (order, cuts) => {
        const agents = [`ana-${run}`, `ben-${run}`, `cy-${run}`];
        run += 1;
        const facts = agents.flatMap((agentId, k) => of(agentId, k * 30_000));
        const mine = order.map((i) => facts[i]!);
        for (let i = 0, c = 0; i < mine.length; c += 1) {
          const batch = mine.slice(i, i + cuts[c % cuts.length]!);
          i += batch.length;
          await db.transaction((tx) => writeBatch(tx, { calls: [], states: batch }, 'test'));
        }
        for (const agentId of agents) {
          const got = await collect(stateIntervals(db, { from: new Date(T0 - 1), to: new Date(T0 + 1_000_000), agentId }));
          expect(got).toEqual(intervalsOf(facts.filter((f) => f.agentId === agentId)));
        }
      }),
      { numRuns: 10, seed: 11 },
    );
  });
});
