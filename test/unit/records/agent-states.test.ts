// Agent states from presence reports: a change is a new interval, a refresh is none, a presence that
// lapses is `offline` (noticed within a sweep, once however many instances notice), and an agent a
// previous run left in a state is watched from the start.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Presence } from '../../../relay/backend/types';
import { CallRecords } from '../../../relay/records/call-records';
import type { Database } from '../../../relay/records/database';
import { intervalsOf, type AgentStateFact } from '../../../relay/records/agent-states';
import { stateIntervals } from '../../../relay/records/records-queries';
import { writeBatch } from '../../../relay/records/records-store';
import { DATABASE_HARNESSES, migrated, type FreshDatabase } from './database-harness';
import { collect, recordingLogger, T0 } from './records-fixtures';

const TTL_MS = 60_000;

const until = async (check: () => Promise<boolean>, what: string) => {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('agent states on %s', (_name, make) => {
  const harness = make();
  let fresh: FreshDatabase;
  let db: Database;
  const open: CallRecords[] = [];
  beforeAll(() => harness.setup(), 60_000);
  afterAll(() => harness.teardown(), 60_000);
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
    await fresh?.drop();
  });

  /** An instance with its own clock, reading the team's presence from `team`. */
  function instance(clock: { now: number }, team: Map<string, Presence>): CallRecords {
    const records = new CallRecords({ database: () => fresh.connect(), logger: recordingLogger(), now: () => clock.now, presenceSweepMs: 10, writer: { flushIntervalMs: 5 } });
    records.followPresence((agentId) => team.get(agentId), TTL_MS);
    open.push(records);
    return records;
  }
  /** The team's presence as the backend keeps it: reported, or lapsed. */
  const report = (records: CallRecords, team: Map<string, Presence>, agentId: string, status: Presence) => {
    const before = team.get(agentId);
    team.set(agentId, status);
    records.presenceReported(agentId, { presence: status }, before === undefined ? undefined : { presence: before });
  };
  const intervals = async (agentId?: string) =>
    (await collect(stateIntervals(db, { from: new Date(T0 - 1), to: new Date(T0 + 100 * 60_000), ...(agentId !== undefined ? { agentId } : {}) }))).map((i) => ({
      state: i.state,
      reason: i.reason,
      from: (i.startedAt - T0) / 1000,
      to: i.endedAt === undefined ? undefined : (i.endedAt - T0) / 1000,
    }));

  it('each change of presence is an interval that ends where the next begins; a refresh of the same is none', async () => {
    fresh = await harness.fresh();
    db = await migrated(fresh);
    const clock = { now: T0 };
    const team = new Map<string, Presence>();
    const records = instance(clock, team);
    report(records, team, 'alice', 'available');
    clock.now = T0 + 20_000;
    report(records, team, 'alice', 'available');
    clock.now = T0 + 30_000;
    report(records, team, 'alice', 'on_call');
    clock.now = T0 + 50_000;
    report(records, team, 'alice', 'on_call');
    clock.now = T0 + 90_000;
    report(records, team, 'alice', 'dnd');
    expect(await records.flush()).toBe(true);
    expect(await intervals('alice')).toEqual([
      { state: 'available', reason: undefined, from: 0, to: 30 },
      { state: 'on_call', reason: undefined, from: 30, to: 90 },
      { state: 'dnd', reason: undefined, from: 90, to: undefined },
    ]);
    const facts = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM agent_state_facts WHERE agent_id = 'alice'");
    expect(facts[0]!.n).toBe(3);
  });

  it('facts of one agent in the same millisecond are all kept and taken in the order they arrived; a state that lasted no time is no interval', async () => {
    fresh = await harness.fresh();
    db = await migrated(fresh);
    const write = (instanceId: string, ...states: AgentStateFact[]) => db.transaction((tx) => writeBatch(tx, { calls: [], states }, instanceId));
    const fact = (state: string, at: number, reason = ''): AgentStateFact => ({ agentId: 'gina', state, reason, at });
    // One batch: on_call and available again in the same millisecond, the second arriving last.
    await write('instance-a', fact('available', T0), fact('on_call', T0 + 10_000), fact('available', T0 + 10_000));
    expect(await intervals('gina')).toEqual([{ state: 'available', reason: undefined, from: 0, to: undefined }]);
    // Two instances, the same millisecond: the one written last is the state from then on.
    await write('instance-a', fact('dnd', T0 + 20_000));
    await write('instance-b', fact('on_call', T0 + 20_000));
    await write('instance-b', fact('offline', T0 + 50_000, 'presence_expired'));
    await write('instance-a', fact('offline', T0 + 50_000, 'presence_expired'));
    expect(await intervals('gina')).toEqual([
      { state: 'available', reason: undefined, from: 0, to: 20 },
      { state: 'on_call', reason: undefined, from: 20, to: 50 },
      { state: 'offline', reason: 'presence_expired', from: 50, to: undefined },
    ]);
    // A fact arriving late, inside what is there, splits it as it would have in order.
    await write('instance-b', fact('on_call', T0 + 5_000), fact('dnd', T0 + 5_000));
    expect(await intervals('gina')).toEqual([
      { state: 'available', reason: undefined, from: 0, to: 5 },
      { state: 'dnd', reason: undefined, from: 5, to: 10 },
      { state: 'available', reason: undefined, from: 10, to: 20 },
      { state: 'on_call', reason: undefined, from: 20, to: 50 },
      { state: 'offline', reason: 'presence_expired', from: 50, to: undefined },
    ]);
    // The expiry both instances noticed in the same millisecond is one fact.
    const facts = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM agent_state_facts WHERE agent_id = 'gina'");
    expect(facts[0]!.n).toBe(8);
  });

  it("an expiry soon after a report another instance took is left out, in whatever order they are written; a later one stands", async () => {
    fresh = await harness.fresh();
    db = await migrated(fresh);
    const written: AgentStateFact[] = [];
    const write = async (instanceId: string, state: string, seconds: number) => {
      const fact: AgentStateFact = { agentId: 'ivan', state, reason: state === 'offline' ? 'presence_expired' : '', at: T0 + seconds * 1000 };
      written.push({ ...fact, instanceId });
      await db.transaction((tx) => writeBatch(tx, { calls: [], states: [fact] }, instanceId));
    };
    const states = async () => (await intervals('ivan')).map((i) => [i.state, i.from, i.to]);
    await write('relay-a', 'available', 0);
    await write('relay-a', 'offline', 100);
    expect(await states()).toEqual([
      ['available', 0, 100],
      ['offline', 100, undefined],
    ]);
    // relay-b took a report 3 s before relay-a's expiry, written after it: the expiry goes. So does
    // one in the very millisecond of another instance's report.
    await write('relay-b', 'offline', 0);
    await write('relay-b', 'available', 97);
    expect(await states()).toEqual([['available', 0, undefined]]);
    // An expiry with no report of another instance in the 20 s before it stands.
    await write('relay-b', 'offline', 200);
    await write('relay-a', 'available', 300);
    // relay-b's reading 10 s after relay-a took a report does not.
    await write('relay-b', 'offline', 310);
    // A report of the same instance does not contradict its own expiry.
    await write('relay-a', 'offline', 400);
    expect(await states()).toEqual([
      ['available', 0, 200],
      ['offline', 200, 300],
      ['available', 300, 400],
      ['offline', 400, undefined],
    ]);
    // The report that contradicts an expiry may be older than the intervals derived again around it.
    await write('relay-b', 'available', 600);
    await write('relay-a', 'dnd', 605);
    await write('relay-a', 'on_call', 608);
    await write('relay-a', 'offline', 612);
    expect((await states()).slice(-3)).toEqual([
      ['available', 600, 605],
      ['dnd', 605, 608],
      ['on_call', 608, undefined],
    ]);
    // Derived bit by bit as they came, the intervals are what all the facts make at once.
    expect(await collect(stateIntervals(db, { from: new Date(T0 - 1), to: new Date(T0 + 3_600_000), agentId: 'ivan' }))).toEqual(intervalsOf(written));
  });

  it('two presence reports in the same millisecond through the records: the later one is the state', async () => {
    fresh = await harness.fresh();
    db = await migrated(fresh);
    const clock = { now: T0 };
    const team = new Map<string, Presence>();
    const records = instance(clock, team);
    report(records, team, 'hugo', 'available');
    clock.now = T0 + 30_000;
    report(records, team, 'hugo', 'on_call');
    report(records, team, 'hugo', 'dnd');
    expect(await records.flush()).toBe(true);
    expect(await intervals('hugo')).toEqual([
      { state: 'available', reason: undefined, from: 0, to: 30 },
      { state: 'dnd', reason: undefined, from: 30, to: undefined },
    ]);
    expect(records.stats()).toMatchObject({ dropped: 0 });
  });

  it('a presence that lapses is offline, noticed once however many instances notice it; a new report ends it', async () => {
    fresh = await harness.fresh();
    db = await migrated(fresh);
    const clocks = [{ now: T0 }, { now: T0 }];
    const team = new Map<string, Presence>();
    const [a, b] = clocks.map((clock) => instance(clock, team));
    report(a!, team, 'bob', 'available');
    // bob's next reports go to the other instance.
    clocks[1]!.now = T0 + 20_000;
    report(b!, team, 'bob', 'available');
    clocks[1]!.now = T0 + 40_000;
    report(b!, team, 'bob', 'available');
    // Still within a lifetime of the last report: nothing lapses on either instance.
    clocks[0]!.now = T0 + 70_000;
    clocks[1]!.now = T0 + 70_000;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await a!.flush()).toBe(true);
    expect((await intervals('bob')).map((i) => i.state)).toEqual(['available']);
    // The presence lapses; both instances notice, a moment apart.
    team.delete('bob');
    clocks[0]!.now = T0 + 101_000;
    clocks[1]!.now = T0 + 103_000;
    await until(async () => (await a!.flush()) && (await b!.flush()) && (await intervals('bob')).length === 2, 'bob offline');
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await a!.flush()).toBe(true);
    expect(await b!.flush()).toBe(true);
    expect(await intervals('bob')).toEqual([
      { state: 'available', reason: undefined, from: 0, to: 101 },
      { state: 'offline', reason: 'presence_expired', from: 101, to: undefined },
    ]);
    clocks[0]!.now = T0 + 600_000;
    report(a!, team, 'bob', 'available');
    expect(await a!.flush()).toBe(true);
    expect((await intervals('bob')).map((i) => [i.state, i.from, i.to])).toEqual([
      ['available', 0, 101],
      ['offline', 101, 600],
      ['available', 600, undefined],
    ]);
  });

  it('an agent a previous run left in a state goes offline if it does not report within a presence lifetime of the start', async () => {
    fresh = await harness.fresh();
    db = await migrated(fresh);
    const clock = { now: T0 };
    const team = new Map<string, Presence>();
    const before = instance(clock, team);
    report(before, team, 'carol', 'available');
    report(before, team, 'dave', 'available');
    expect(await before.flush()).toBe(true);
    await before.close();

    // A restart: the team's presence is gone (a memory backend), carol reports again, dave does not.
    team.clear();
    clock.now = T0 + 5_000;
    const after = instance(clock, team);
    await after.database();
    clock.now = T0 + 10_000;
    report(after, team, 'carol', 'available');
    clock.now = T0 + 5_000 + TTL_MS;
    await until(async () => (await after.flush()) && (await intervals('dave')).length === 2, 'dave offline');
    expect(await intervals('dave')).toEqual([
      { state: 'available', reason: undefined, from: 0, to: 65 },
      { state: 'offline', reason: 'presence_expired', from: 65, to: undefined },
    ]);
    expect((await intervals('carol')).map((i) => i.state)).toEqual(['available']);
  });
});
