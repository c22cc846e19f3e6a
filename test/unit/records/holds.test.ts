// A bridged call's holds: each hold and resume the relay's bridge took is a fact, and the call's row
// sums them (a hold still on at the end lasts until the end; a transfer a colleague answered takes
// the call off hold), whichever instance wrote which fact, in any order. Talk time is the rest of
// the service's duration, so that talk plus hold is the call's handle time.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdFact, type CallFact } from '../../../relay/records/call-facts';
import type { Database } from '../../../relay/records/database';
import { callById, summary } from '../../../relay/records/records-queries';
import { writeBatch } from '../../../relay/records/records-store';
import { DATABASE_HARNESSES, migrated, type FreshDatabase } from './database-harness';
import { factsOfStep, T0, type Step , answeredCall } from './records-fixtures';

const MIN = 60_000;

const consultAnswered = (callId: string, at: number): Step[] => [
  {
    at,
    event: { type: 'call.transfer_ring', callId, transferId: 'tr', kind: 'consult', by: { agentId: 'alice', name: 'Alice' }, legId: 'leg', sdp: 'v=0', timestamp: at },
    audience: { kind: 'agent', agentId: 'bob' },
  },
  {
    at: at + 6_000,
    event: { type: 'call.transfer_update', callId, transferId: 'tr', kind: 'consult', agentId: 'alice', state: 'consulting', colleague: { agentId: 'bob', name: 'Bob' }, timestamp: at + 6_000 },
    audience: { kind: 'agent', agentId: 'alice' },
  },
];

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('holds on %s', (_name, make) => {
  const harness = make();
  let fresh: FreshDatabase;
  let db: Database;
  beforeAll(async () => {
    await harness.setup();
    fresh = await harness.fresh();
    db = await migrated(fresh);
  }, 60_000);
  afterAll(async () => {
    await fresh?.drop();
    await harness.teardown();
  }, 60_000);

  const write = (facts: readonly CallFact[], instanceId = 'instance-a') => db.transaction((tx) => writeBatch(tx, { calls: facts, states: [] }, instanceId));

  it('sums the holds: each until its resume, one still on at the end until the end; talk time is the rest', async () => {
    const callId = 'wacid.hold-1';
    const t = T0;
    const [ring, answer, end] = answeredCall(callId, t).map(factsOfStep);
    await write([...ring!, ...answer!, holdFact(callId, 'alice', t + 10_000, true), holdFact(callId, 'alice', t + 25_000, false)]);
    // While the call goes on, a hold counts once it is over.
    expect(await callById(db, callId)).toMatchObject({ holdMs: 15_000 });
    await write([holdFact(callId, 'alice', t + 40_000, true), ...end!]);
    expect(await callById(db, callId)).toMatchObject({ outcome: 'answered', holdMs: 15_000 + 22_000, talkMs: 60_000 - 37_000 });
    // Talk and hold together are the call's handle time.
    expect(await summary(db, { from: new Date(t), to: new Date(t + 1), serviceLevelSec: 20 })).toMatchObject({ byOutcome: { answered: 1 }, averageHandleMs: 60_000 });
  });

  it('a consult a colleague answers takes the call off hold; holding it again counts again', async () => {
    const callId = 'wacid.hold-2';
    const t = T0 + 10 * MIN;
    const steps = [...answeredCall(callId, t), ...consultAnswered(callId, t + 12_000)];
    await write([...steps.flatMap(factsOfStep), holdFact(callId, 'alice', t + 10_000, true), holdFact(callId, 'alice', t + 50_000, true), holdFact(callId, 'alice', t + 55_000, false)]);
    // On hold from 10 s until bob answered the consult at 18 s, then from 50 s to 55 s.
    expect(await callById(db, callId)).toMatchObject({ holdMs: 8_000 + 5_000, talkMs: 60_000 - 13_000 });
  });

  it('a hold and its resume in the same millisecond hold for no time; a call never held has no hold time', async () => {
    const callId = 'wacid.hold-3';
    const t = T0 + 20 * MIN;
    await write([...answeredCall(callId, t).flatMap(factsOfStep), holdFact(callId, 'alice', t + 30_000, false), holdFact(callId, 'alice', t + 30_000, true)]);
    expect(await callById(db, callId)).toMatchObject({ holdMs: 0, talkMs: 60_000 });
    await write(answeredCall('wacid.hold-none', t + MIN).flatMap(factsOfStep));
    expect(await callById(db, 'wacid.hold-none')).not.toHaveProperty('holdMs');
  });

  it('the same hold time whichever instance wrote which fact, in any order, twice', async () => {
    const t = T0 + 30 * MIN;
    const factsFor = (callId: string): CallFact[] => [
      ...[...answeredCall(callId, t), ...consultAnswered(callId, t + 30_000)].flatMap(factsOfStep),
      holdFact(callId, 'alice', t + 5_000, true),
      holdFact(callId, 'alice', t + 9_000, false),
      holdFact(callId, 'alice', t + 20_000, true),
    ];
    await write(factsFor('wacid.hold-order'));
    const { callId: _id, ...expected } = (await callById(db, 'wacid.hold-order'))!;
    expect(expected).toMatchObject({ holdMs: 4_000 + 16_000, talkMs: 40_000 });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(factsFor('x'), { minLength: factsFor('x').length, maxLength: factsFor('x').length }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 10, maxLength: 10 }),
        async (order, cuts) => {
          const callId = `wacid.hold-order-${run++}`;
          const facts = order.map((f) => ({ ...f, callId }));
          for (let i = 0, c = 0; i < facts.length; c += 1) {
            const batch = facts.slice(i, i + cuts[c % cuts.length]!);
            i += batch.length;
            await write([...batch, ...batch], c % 2 === 0 ? 'instance-a' : 'instance-b');
          }
          const { callId: _other, ...record } = (await callById(db, callId))!;
          expect(record).toEqual(expected);
        },
      ),
      { numRuns: 12, seed: 11 },
    );
  });
});
