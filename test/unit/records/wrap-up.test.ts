// An agent's wrap-up in the call records (relay/REFERENCE.md "Wrap-up"): written straight to the
// database with the call's facts that still wait in the queue, allowed to the agents who talked
// with the customer for 24 hours after the call, one per agent replaced by its later edits however
// the writes are ordered, the call's row carrying the latest of all; unavailable while the database
// cannot answer.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallRecords } from '../../../relay/records/call-records';
import { wrapUpFact } from '../../../relay/records/call-facts';
import type { Database } from '../../../relay/records/database';
import type { WrapUp } from '../../../relay/records/relay-records';
import { callById } from '../../../relay/records/records-queries';
import { writeBatch } from '../../../relay/records/records-store';
import { WRAP_UP_EDITABLE_MS } from '../../../shared/team-settings';
import { DATABASE_HARNESSES, migrated, type FreshDatabase } from './database-harness';
import { answeredCall, claim, incoming, play, recordingLogger, T0, voicemail, type Step } from './records-fixtures';

/** The facts wait in memory until a flush: what a wrap-up right after the hang-up finds. */
const SLOW_WRITER = { flushIntervalMs: 60_000 };

const wrapUp = (callId: string, agentId: string, disposition: string | null, notes = ''): WrapUp => ({ callId, agentId, disposition, notes });

const transferUpdate = (callId: string, at: number, told: string, state: 'consulting' | 'transferred' | 'with_customer' | 'joined', colleague: string, kind: 'transfer' | 'consult'): Step => ({
  at,
  event: { type: 'call.transfer_update', callId, transferId: `tr-${callId}`, kind, agentId: told, state, colleague: { agentId: colleague, name: colleague }, timestamp: at },
  audience: { kind: 'agent', agentId: told },
});

async function eventually(ready: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('wrap-ups on %s', (_name, make) => {
  const harness = make();
  let fresh: FreshDatabase;
  let db: Database;
  const clock = { now: T0 };
  const opened: CallRecords[] = [];
  const recordsOn = (now: () => number = () => clock.now, instanceId = 'instance-a') => {
    const records = new CallRecords({ database: () => fresh.connect(), logger: recordingLogger(), now, instanceId, writer: SLOW_WRITER });
    opened.push(records);
    return records;
  };
  let records: CallRecords;
  const playAll = (steps: readonly Step[]) => {
    for (const step of steps) play(records, clock, step);
  };
  const wrapUpFacts = (callId: string) =>
    db.query<{ agent_id: string; at: Date; data: unknown; instance_id: string }>("SELECT agent_id, at, data, instance_id FROM call_facts WHERE call_id = $1 AND kind = 'wrap_up' ORDER BY agent_id", [callId]);

  beforeAll(async () => {
    await harness.setup();
    fresh = await harness.fresh();
    db = await migrated(fresh);
    records = recordsOn();
    await eventually(() => records.status().database === 'up', 'the records database coming up');
  }, 60_000);
  afterAll(async () => {
    for (const r of opened) await r.close(1_000);
    await db?.close();
    await fresh?.drop();
    await harness.teardown();
  }, 60_000);

  it('right after the hang-up, with the call still waiting in the queue: saved in the database, the call row written with it', async () => {
    playAll(answeredCall('w.just-ended', T0));
    clock.now = T0 + 63_000;
    expect(records.status().queued).toBeGreaterThan(0);
    expect(await callById(db, 'w.just-ended')).toBeUndefined();

    const outcome = await records.saveWrapUp(wrapUp('w.just-ended', 'alice', 'Resolved', 'Reset the router.'));
    expect(outcome).toEqual({ kind: 'saved', wrapUp: { callId: 'w.just-ended', agentId: 'alice', disposition: 'Resolved', notes: 'Reset the router.', savedAt: T0 + 63_000 } });
    // Stored before the answer: read from the database, the writer's queue not flushed.
    expect(await callById(db, 'w.just-ended')).toMatchObject({ outcome: 'answered', agentId: 'alice', endedAt: T0 + 62_000, disposition: 'Resolved', notes: 'Reset the router.' });
    expect(await wrapUpFacts('w.just-ended')).toEqual([
      { agent_id: 'alice', at: new Date(T0 + 63_000), data: { disposition: 'Resolved', notes: 'Reset the router.' }, instance_id: 'instance-a' },
    ]);
    // The writer writing the same facts again changes nothing.
    expect(await records.flush()).toBe(true);
    expect(await callById(db, 'w.just-ended')).toMatchObject({ outcome: 'answered', disposition: 'Resolved', notes: 'Reset the router.' });
  });

  it('a call with no record is not found; an agent who never answered it is refused, the call unchanged', async () => {
    clock.now = T0;
    playAll([incoming('w.declined', T0, ['alice', 'bob']), ...answeredCall('w.declined', T0).slice(1), voicemail('w.voicemail-only', T0 + 5_000)]);
    expect(await records.flush()).toBe(true);
    clock.now = T0 + 70_000;
    expect(await records.saveWrapUp(wrapUp('w.unknown', 'alice', null))).toEqual({ kind: 'not_found' });
    // An audio message that names no call makes no call.
    expect(await records.saveWrapUp(wrapUp('w.voicemail-only', 'alice', null))).toEqual({ kind: 'not_found' });
    expect(await records.saveWrapUp(wrapUp('w.declined', 'bob', 'Sale'))).toEqual({ kind: 'forbidden' });
    expect(await records.saveWrapUp(wrapUp('w.declined\u0000', 'alice', 'Sale'))).toEqual({ kind: 'not_found' });
    expect(await wrapUpFacts('w.declined')).toEqual([]);
    expect((await callById(db, 'w.declined'))?.disposition).toBeUndefined();
    // A refused wrap-up of a call whose facts still waited wrote those facts, and the row with them.
    playAll([incoming('w.refused-waiting', clock.now, ['alice', 'bob']), claim('w.refused-waiting', 'alice', clock.now + 1_000)]);
    expect(await records.saveWrapUp(wrapUp('w.refused-waiting', 'bob', null))).toEqual({ kind: 'forbidden' });
    expect(await callById(db, 'w.refused-waiting')).toMatchObject({ agentId: 'alice', rungAgents: ['alice', 'bob'] });
  });

  it('the agents who talked with the customer: the one who answered, and the colleagues a transfer handed it to, not one only consulted', async () => {
    clock.now = T0;
    // alice answers; a consult to carol that alice cancels after they talked.
    playAll([...answeredCall('w.consulted', T0).slice(0, 2), transferUpdate('w.consulted', T0 + 10_000, 'alice', 'consulting', 'carol', 'consult')]);
    // alice answers; a cold transfer dave takes.
    playAll([...answeredCall('w.cold', T0).slice(0, 2), transferUpdate('w.cold', T0 + 10_000, 'alice', 'transferred', 'dave', 'transfer')]);
    // alice answers; a consult with erin that becomes hers.
    playAll([
      ...answeredCall('w.completed', T0).slice(0, 2),
      transferUpdate('w.completed', T0 + 10_000, 'alice', 'consulting', 'erin', 'consult'),
      transferUpdate('w.completed', T0 + 20_000, 'alice', 'transferred', 'erin', 'consult'),
      transferUpdate('w.completed', T0 + 20_000, 'erin', 'with_customer', 'alice', 'consult'),
    ]);
    // alice answers; frank joins a three-way call.
    playAll([
      ...answeredCall('w.joined', T0).slice(0, 2),
      transferUpdate('w.joined', T0 + 20_000, 'alice', 'joined', 'frank', 'consult'),
      transferUpdate('w.joined', T0 + 20_000, 'frank', 'joined', 'alice', 'consult'),
    ]);
    clock.now = T0 + 30_000;
    expect(await records.saveWrapUp(wrapUp('w.consulted', 'carol', null))).toEqual({ kind: 'forbidden' });
    expect(await records.saveWrapUp(wrapUp('w.consulted', 'alice', null))).toMatchObject({ kind: 'saved' });
    expect(await records.saveWrapUp(wrapUp('w.cold', 'dave', 'Sale'))).toMatchObject({ kind: 'saved' });
    expect(await records.saveWrapUp(wrapUp('w.completed', 'erin', 'Sale'))).toMatchObject({ kind: 'saved' });
    expect(await records.saveWrapUp(wrapUp('w.joined', 'frank', 'Sale'))).toMatchObject({ kind: 'saved' });
    expect(await records.saveWrapUp(wrapUp('w.joined', 'carol', 'Sale'))).toEqual({ kind: 'forbidden' });
  });

  it('for 24 hours after the call ended, and while it goes on', async () => {
    clock.now = T0;
    playAll(answeredCall('w.day', T0));
    playAll(answeredCall('w.going-on', T0).slice(0, 2));
    const endedAt = T0 + 62_000;
    clock.now = endedAt + WRAP_UP_EDITABLE_MS;
    expect(await records.saveWrapUp(wrapUp('w.day', 'alice', 'Sale', 'the last minute'))).toMatchObject({ kind: 'saved', wrapUp: { savedAt: endedAt + WRAP_UP_EDITABLE_MS } });
    clock.now = endedAt + WRAP_UP_EDITABLE_MS + 1;
    expect(await records.saveWrapUp(wrapUp('w.day', 'alice', 'No sale', 'too late'))).toEqual({ kind: 'too_late' });
    expect(await callById(db, 'w.day')).toMatchObject({ disposition: 'Sale', notes: 'the last minute' });
    // Refused to a stranger first: whether it is too late is the call's agents' business.
    expect(await records.saveWrapUp(wrapUp('w.day', 'bob', null))).toEqual({ kind: 'forbidden' });
    expect(await records.saveWrapUp(wrapUp('w.going-on', 'alice', null, 'still talking'))).toMatchObject({ kind: 'saved' });
    expect(await callById(db, 'w.going-on')).toMatchObject({ notes: 'still talking' });
    expect((await callById(db, 'w.going-on'))?.outcome).toBeUndefined();
  });

  it('an edit replaces the agent’s earlier wrap-up, the latest by its time winning even when written first; the call carries the latest of any agent', async () => {
    clock.now = T0;
    playAll([...answeredCall('w.edits', T0), transferUpdate('w.edits', T0 + 10_000, 'alice', 'joined', 'bob', 'consult')]);
    expect(await records.flush()).toBe(true);
    // A second instance on the same database, its clock its own.
    const otherClock = { now: T0 };
    const other = recordsOn(() => otherClock.now, 'instance-b');
    await eventually(() => other.status().database === 'up', 'the second instance connecting');

    clock.now = T0 + 70_000;
    await records.saveWrapUp(wrapUp('w.edits', 'alice', 'Sale', 'first'));
    otherClock.now = T0 + 90_000;
    await other.saveWrapUp(wrapUp('w.edits', 'alice', 'No sale', 'third'));
    // Taken at T0 + 80 s but written after the one of T0 + 90 s: it does not replace it.
    clock.now = T0 + 80_000;
    expect(await records.saveWrapUp(wrapUp('w.edits', 'alice', 'Resolved', 'second'))).toMatchObject({ kind: 'saved', wrapUp: { savedAt: T0 + 80_000 } });
    expect(await wrapUpFacts('w.edits')).toEqual([{ agent_id: 'alice', at: new Date(T0 + 90_000), data: { disposition: 'No sale', notes: 'third' }, instance_id: 'instance-b' }]);
    expect(await callById(db, 'w.edits')).toMatchObject({ disposition: 'No sale', notes: 'third' });

    // bob's, older than alice's latest, is kept as his but is not the call's.
    clock.now = T0 + 85_000;
    await records.saveWrapUp(wrapUp('w.edits', 'bob', null, 'joined late'));
    expect((await wrapUpFacts('w.edits')).map((f) => [f.agent_id, f.data])).toEqual([
      ['alice', { disposition: 'No sale', notes: 'third' }],
      ['bob', { disposition: null, notes: 'joined late' }],
    ]);
    expect(await callById(db, 'w.edits')).toMatchObject({ disposition: 'No sale', notes: 'third' });
    clock.now = T0 + 95_000;
    await records.saveWrapUp(wrapUp('w.edits', 'bob', null, 'wrapped by bob'));
    const row = await callById(db, 'w.edits');
    expect(row?.disposition).toBeUndefined();
    expect(row?.notes).toBe('wrapped by bob');
    // The writer deriving the row again (a late fact of the call) keeps the wrap-up.
    playAll([voicemail('w.edits', T0 + 96_000, 'media-1')]);
    expect(await records.flush()).toBe(true);
    expect(await callById(db, 'w.edits')).toMatchObject({ voicemailMediaId: 'media-1', notes: 'wrapped by bob' });
  });

  it('the same wrap-up facts written in any order, in any batches, again and again, leave the latest of each agent and of the call', async () => {
    clock.now = T0;
    playAll(answeredCall('w.shuffled', T0));
    expect(await records.flush()).toBe(true);
    const facts = [
      wrapUpFact('w.shuffled', 'alice', T0 + 70_000, { disposition: 'Sale', notes: 'a1' }),
      wrapUpFact('w.shuffled', 'alice', T0 + 75_000, { disposition: 'No sale', notes: 'a2' }),
      wrapUpFact('w.shuffled', 'alice', T0 + 71_000, { disposition: null, notes: 'a3' }),
      wrapUpFact('w.shuffled', 'bob', T0 + 73_000, { disposition: 'Resolved', notes: 'b1' }),
      wrapUpFact('w.shuffled', 'bob', T0 + 72_000, { disposition: 'Sale', notes: 'b2' }),
    ];
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray(facts, { minLength: facts.length }), fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 5, maxLength: 5 }), async (order, cuts) => {
        await db.query("DELETE FROM call_facts WHERE call_id = 'w.shuffled' AND kind = 'wrap_up'");
        let rest = [...order, ...order.slice(0, 2)];
        for (const size of cuts) {
          if (rest.length === 0) break;
          await db.transaction((tx) => writeBatch(tx, { calls: rest.slice(0, size), states: [] }, 'instance-x'));
          rest = rest.slice(size);
        }
        if (rest.length > 0) await db.transaction((tx) => writeBatch(tx, { calls: rest, states: [] }, 'instance-x'));
        expect((await wrapUpFacts('w.shuffled')).map((f) => [f.agent_id, f.at.getTime(), f.data])).toEqual([
          ['alice', T0 + 75_000, { disposition: 'No sale', notes: 'a2' }],
          ['bob', T0 + 73_000, { disposition: 'Resolved', notes: 'b1' }],
        ]);
        expect(await callById(db, 'w.shuffled')).toMatchObject({ outcome: 'answered', disposition: 'No sale', notes: 'a2' });
      }),
      { numRuns: 8 },
    );
  }, 60_000);

  it('a wrap-up alone makes no call', async () => {
    await db.transaction((tx) => writeBatch(tx, { calls: [wrapUpFact('w.alone', 'alice', T0, { disposition: null, notes: 'x' })], states: [] }, 'instance-x'));
    expect(await callById(db, 'w.alone')).toBeUndefined();
  });

  it('texts PostgreSQL cannot keep are kept as it can, and the answer says what was kept', async () => {
    clock.now = T0;
    playAll(answeredCall('w.texts', T0));
    clock.now = T0 + 70_000;
    const outcome = await records.saveWrapUp(wrapUp('w.texts', 'alice', null, 'a\u0000b \ud83d c \udc00 d 😀'));
    expect(outcome).toMatchObject({ kind: 'saved', wrapUp: { notes: 'ab \ufffd c \ufffd d 😀' } });
    expect(await callById(db, 'w.texts')).toMatchObject({ notes: 'ab \ufffd c \ufffd d 😀' });
  });

  it('unavailable while the database has not answered yet, and once it is gone', async () => {
    const never = new CallRecords({ database: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:1')), logger: recordingLogger(), writer: { retryMinMs: 50, retryMaxMs: 50 } });
    opened.push(never);
    expect(await never.saveWrapUp(wrapUp('w.just-ended', 'alice', null))).toEqual({ kind: 'unavailable' });

    // A database of its own, dropped under records that used it.
    const own = await harness.fresh();
    const log = recordingLogger();
    const orphan = new CallRecords({ database: () => own.connect(), logger: log, now: () => clock.now, writer: { flushIntervalMs: 5, retryMinMs: 20, retryMaxMs: 50 } });
    opened.push(orphan);
    await eventually(() => orphan.status().database === 'up', 'the records database coming up');
    clock.now = T0;
    for (const step of answeredCall('w.gone', T0)) play(orphan, clock, step);
    expect(await orphan.flush()).toBe(true);
    await own.drop();
    clock.now = T0 + 70_000;
    // The writer still takes it for up: the wrap-up itself meets the failure.
    expect(await orphan.saveWrapUp(wrapUp('w.gone', 'alice', null))).toEqual({ kind: 'unavailable' });
    expect(log.said('the records database did not take a wrap-up: its agent tries again')).toBe(1);
    // Once the writer has found it down, at once.
    play(orphan, clock, voicemail('w.gone', T0 + 80_000));
    await eventually(() => orphan.status().database === 'down', 'the writer finding the database down');
    expect(await orphan.saveWrapUp(wrapUp('w.gone', 'alice', null))).toEqual({ kind: 'unavailable' });
    expect(log.said('the records database did not take a wrap-up: its agent tries again')).toBe(1);
  }, 30_000);
});
