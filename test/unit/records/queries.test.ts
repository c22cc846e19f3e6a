// The queries later features ask of the records: the calls between two instants a page at a time,
// a day's counts by outcome with the average handle time and the service level, agents' state
// intervals; each served by an index.
import { describe, expect, it } from 'vitest';
import type { CallRecord } from '../../../relay/records/call-record';
import { callsBetween, dayBounds, stateIntervals, summary } from '../../../relay/records/records-queries';
import { DATABASE_HARNESSES } from './database-harness';
import { playedRecords } from './relay-with-records';
import { claim, collect, decline, incoming, play, status, T0, terminated, type Step , recordingRunner, teamStates } from './records-fixtures';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;

/** The day's calls: T0 is 09:00 UTC; one call the day before, one the day after. */
function day(): Step[] {
  const answered = (id: string, t: number, waitMs: number, talkMs: number): Step[] => [
    incoming(id, t, ['alice', 'bob']),
    claim(id, 'alice', t + waitMs),
    terminated(id, t + waitMs + talkMs, { answeredAt: t + waitMs }),
  ];
  return [
    ...answered('wacid.q-01', T0, 5_000, 60_000),
    ...answered('wacid.q-02', T0 + 10 * MIN, 15_000, 120_000),
    ...answered('wacid.q-03', T0 + 20 * MIN, 45_000, 30_000),
    incoming('wacid.q-04', T0 + 30 * MIN, ['alice']),
    terminated('wacid.q-04', T0 + 30 * MIN + 8_000),
    incoming('wacid.q-05', T0 + 40 * MIN, ['alice']),
    terminated('wacid.q-05', T0 + 40 * MIN + 60_000),
    incoming('wacid.q-06', T0 + 50 * MIN, ['alice']),
    decline('wacid.q-06', 'alice', T0 + 50 * MIN + 2_000, 0),
    terminated('wacid.q-06', T0 + 50 * MIN + 2_500),
    claim('wacid.q-07', 'bob', T0 + 60 * MIN),
    status('wacid.q-07', 'RINGING', T0 + 60 * MIN + 1_000),
    terminated('wacid.q-07', T0 + 60 * MIN + 9_000),
    // Still ringing.
    incoming('wacid.q-08', T0 + 70 * MIN, ['alice']),
    // Outside the day.
    ...answered('wacid.q-yesterday', T0 - 10 * 60 * MIN, 1_000, 10_000),
    ...answered('wacid.q-tomorrow', T0 + 15 * 60 * MIN + 1, 1_000, 10_000),
  ];
}


describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('queries on %s', (_name, make) => {
  const played = playedRecords(make, (records, clock) => {
    for (const step of day()) play(records, clock, step);
    // Twelve calls that rang at the very same millisecond: the pages must still take each once.
    for (let i = 0; i < 12; i += 1) play(records, clock, incoming(`wacid.tie-${String(i).padStart(2, '0')}`, T0 + 3 * 60 * MIN, []));
    const state = teamStates(records, clock);
    state('alice', 'available', T0 - 60 * MIN);
    state('alice', 'on_call', T0 + 10 * MIN);
    state('alice', 'available', T0 + 20 * MIN);
    state('bob', 'dnd', T0 - 120 * MIN);
    state('bob', 'available', T0 + 5 * MIN);
    // Two days on: carol changes state every 3 minutes, 25 times; dave has been on dnd since the day before.
    state('dave', 'dnd', T0 + DAY);
    for (let k = 0; k < 25; k += 1) state('carol', k % 2 === 0 ? 'available' : 'on_call', T0 + 2 * DAY + k * 3 * MIN);
  });

  const callsIn = async (from: number, to: number, pageSize: number) => {
    const calls: CallRecord[] = [];
    for await (const call of callsBetween(played.db(), { from: new Date(from), to: new Date(to), pageSize })) calls.push(call);
    return calls;
  };

  it('streams the calls that started between two instants, oldest first, each once across pages', async () => {
    const { from, to } = dayBounds(new Date(T0), 'UTC');
    const ids = (await callsIn(from.getTime(), to.getTime(), 5)).map((c) => c.callId);
    const ties = Array.from({ length: 12 }, (_, i) => `wacid.tie-${String(i).padStart(2, '0')}`);
    expect(ids).toEqual(['wacid.q-01', 'wacid.q-02', 'wacid.q-03', 'wacid.q-04', 'wacid.q-05', 'wacid.q-06', 'wacid.q-07', 'wacid.q-08', ...ties]);
    expect((await callsIn(T0 + 3 * 60 * MIN, T0 + 3 * 60 * MIN + 1, 5)).map((c) => c.callId)).toEqual(ties);
    // The end is excluded, the start included.
    expect((await callsIn(T0 + 10 * MIN, T0 + 30 * MIN, 100)).map((c) => c.callId)).toEqual(['wacid.q-02', 'wacid.q-03']);
    expect(await callsIn(T0 + 80 * MIN, T0 + 90 * MIN, 100)).toEqual([]);
  });

  it("asks for one page at a time, never the whole window", async () => {
    const { from, to } = dayBounds(new Date(T0), 'UTC');
    const runner = recordingRunner(played.db());
    let seen = 0;
    for await (const _call of callsBetween(runner, { from, to, pageSize: 5 })) {
      seen += 1;
      if (seen === 3) break;
    }
    expect(runner.statements).toHaveLength(1);
    expect(runner.statements[0]!.sql).toMatch(/LIMIT \$3/);
    expect(runner.statements[0]!.params[2]).toBe(5);
  });

  it("sums up a day: counts by outcome, the average handle time, and the service level at a threshold", async () => {
    const { from, to } = dayBounds(new Date(T0 + 5 * MIN), 'UTC');
    expect(await summary(played.db(), { from, to, serviceLevelSec: 20 })).toEqual({
      total: 20,
      inProgress: 13,
      byOutcome: { answered: 3, abandoned: 1, missed: 2, no_answer: 0, cancelled: 1, failed: 0 },
      averageHandleMs: (60_000 + 120_000 + 30_000) / 3,
      // q-01 (5 s) and q-02 (15 s) within 20 s, of 3 answered + 1 abandoned + 2 missed incoming calls.
      serviceLevel: { thresholdSec: 20, answeredWithin: 2, offered: 6, ratio: 2 / 6 },
    });
    const empty = await summary(played.db(), { from: new Date(T0 - 100 * 24 * 60 * MIN), to: new Date(T0 - 99 * 24 * 60 * MIN), serviceLevelSec: 20 });
    expect(empty).toEqual({ total: 0, inProgress: 0, byOutcome: { answered: 0, abandoned: 0, missed: 0, no_answer: 0, cancelled: 0, failed: 0 }, serviceLevel: { thresholdSec: 20, answeredWithin: 0, offered: 0 } });
  });

  it('the state intervals that overlap two instants, for everyone or one agent', async () => {
    const all = await collect(stateIntervals(played.db(), { from: new Date(T0), to: new Date(T0 + 15 * MIN) }));
    expect(all.map((i) => [i.agentId, i.state, (i.startedAt - T0) / MIN, i.endedAt === undefined ? undefined : (i.endedAt - T0) / MIN])).toEqual([
      ['alice', 'available', -60, 10],
      ['alice', 'on_call', 10, 20],
      ['bob', 'dnd', -120, 5],
      ['bob', 'available', 5, undefined],
    ]);
    expect((await collect(stateIntervals(played.db(), { from: new Date(T0 + 30 * MIN), to: new Date(T0 + 31 * MIN), agentId: 'alice' }))).map((i) => i.state)).toEqual(['available']);
    expect(await collect(stateIntervals(played.db(), { from: new Date(T0 - 300 * MIN), to: new Date(T0 - 200 * MIN) }))).toEqual([]);
  });

  it('streams the state intervals a page at a time, agent by agent, each once, from the interval the window opens in', async () => {
    const window = { from: new Date(T0 + 2 * DAY + 10 * MIN), to: new Date(T0 + 2 * DAY + 40 * MIN) };
    const whole = await collect(stateIntervals(played.db(), window));
    // carol's from the one that started at 9 min (the window opens in it) to the one that started at 39 min.
    const carol = Array.from({ length: 11 }, (_, i) => ['carol', (i + 3) % 2 === 0 ? 'available' : 'on_call', (i + 3) * 3, (i + 4) * 3]);
    expect(whole.map((i) => [i.agentId, i.state, (i.startedAt - T0 - 2 * DAY) / MIN, i.endedAt === undefined ? undefined : (i.endedAt - T0 - 2 * DAY) / MIN])).toEqual([
      ['alice', 'available', 20 - 2 * DAY / MIN, undefined],
      ['bob', 'available', 5 - 2 * DAY / MIN, undefined],
      ...carol,
      ['dave', 'dnd', -DAY / MIN, undefined],
    ]);
    for (const pageSize of [1, 2, 3, 10]) expect(await collect(stateIntervals(played.db(), { ...window, pageSize }))).toEqual(whole);
    expect(await collect(stateIntervals(played.db(), { ...window, agentId: 'carol', pageSize: 2 }))).toEqual(whole.filter((i) => i.agentId === 'carol'));
    expect(await collect(stateIntervals(played.db(), { ...window, agentId: 'nobody' }))).toEqual([]);
  });

  it('asks for the state intervals one page at a time, never the whole window', async () => {
    const window = { from: new Date(T0 + 2 * DAY), to: new Date(T0 + 3 * DAY) };
    const runner = recordingRunner(played.db());
    for await (const _interval of stateIntervals(runner, { ...window, agentId: 'carol', pageSize: 5 })) break;
    expect(runner.statements).toHaveLength(1);
    expect(runner.statements[0]!.sql).toMatch(/LIMIT \$4/);
    expect(runner.statements[0]!.params[3]).toBe(5);
    // carol's 25 intervals: five pages of five, and the empty one that says there are no more.
    const pages = recordingRunner(played.db());
    expect(await collect(stateIntervals(pages, { ...window, agentId: 'carol', pageSize: 5 }))).toHaveLength(25);
    expect(pages.statements).toHaveLength(6);
  });

  it('each query is served by an index', async () => {
    const { from, to } = dayBounds(new Date(T0), 'UTC');
    const calls = recordingRunner(played.db());
    for await (const _call of callsBetween(calls, { from, to, pageSize: 3 })) {
      // Reads the first pages, and the keyset one after them.
    }
    const sums = recordingRunner(played.db());
    await summary(sums, { from, to, serviceLevelSec: 20 });
    // Pages of one: the first page and the ones after it, for every agent, and the agents in turn.
    const states = recordingRunner(played.db());
    await collect(stateIntervals(states, { from: new Date(T0 - 3 * DAY), to: new Date(T0 + 3 * DAY), pageSize: 1 }));
    await collect(stateIntervals(states, { from, to, agentId: 'alice', pageSize: 1 }));
    const plans = await played.db().transaction(async (tx) => {
      // Few rows: without this the planner rightly reads the table; the point is that an index fits.
      await tx.query('SET LOCAL enable_seqscan = off');
      const out: string[] = [];
      for (const { sql, params } of [calls.statements[0]!, calls.statements[1]!, sums.statements[0]!, ...states.statements]) {
        const rows = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params);
        out.push(rows.map((r) => r['QUERY PLAN']).join('\n'));
      }
      return out;
    });
    expect(plans[0]).toMatch(/calls_started/);
    expect(plans[1]).toMatch(/calls_started/);
    expect(plans[2]).toMatch(/calls_started/);
    const statePlans = plans.slice(3);
    expect(statePlans.length).toBeGreaterThan(40);
    for (const plan of statePlans) {
      expect(plan).toMatch(/agent_states_pkey/);
      expect(plan).not.toMatch(/Seq Scan/);
    }
  });

  it('finds the calendar day in a time zone, also on the days clocks change', () => {
    const paris = dayBounds(new Date('2026-11-02T23:30:00Z'), 'Europe/Paris');
    expect(paris).toEqual({ from: new Date('2026-11-02T23:00:00Z'), to: new Date('2026-11-03T23:00:00Z') });
    // 2026-03-29: Paris moves to summer time, a day of 23 hours.
    expect(dayBounds(new Date('2026-03-29T12:00:00Z'), 'Europe/Paris')).toEqual({ from: new Date('2026-03-28T23:00:00Z'), to: new Date('2026-03-29T22:00:00Z') });
    // 2026-11-01: New York goes back to standard time, a day of 25 hours.
    expect(dayBounds(new Date('2026-11-01T12:00:00Z'), 'America/New_York')).toEqual({ from: new Date('2026-11-01T04:00:00Z'), to: new Date('2026-11-02T05:00:00Z') });
    expect(dayBounds(new Date('2026-12-31T23:59:59Z'), 'UTC')).toEqual({ from: new Date('2026-12-31T00:00:00Z'), to: new Date('2027-01-01T00:00:00Z') });
    expect(dayBounds(new Date('2026-06-15T20:00:00Z'), 'Asia/Kolkata')).toEqual({ from: new Date('2026-06-15T18:30:00Z'), to: new Date('2026-06-16T18:30:00Z') });
  });
});
