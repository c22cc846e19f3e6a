// The wallboard's figures from the records: the calls waiting now and the longest wait, the day's
// answered, missed and abandoned calls, average handle time (talk, hold and after-call work) and
// service level, on each database; read once per moment however many windows ask. The callback
// requests are the relay's own, read at every ask.
import { describe, expect, it } from 'vitest';
import { WallboardSource } from '../../../relay/wallboard';
import type { CallbackRequest } from '../../../shared/callbacks';
import { DEFAULT_TEAM_SETTINGS } from '../../../shared/team-settings';
import type { TeamMember } from '../../../shared/transfer';
import { DATABASE_HARNESSES } from './database-harness';
import { playedRecords } from './relay-with-records';
import { claim, decline, incoming, play, status, T0, terminated, type Step, teamStates } from './records-fixtures';

const MIN = 60_000;
const noCallbacks = (): Promise<CallbackRequest[]> => Promise.resolve([]);
/** The moment the wallboard is read: 11:00 UTC on T0's day. */
const NOW = T0 + 2 * 60 * MIN;

function day(): Step[] {
  const answered = (id: string, t: number, waitMs: number, talkMs: number): Step[] => [
    incoming(id, t, ['alice', 'bob']),
    claim(id, 'alice', t + waitMs),
    terminated(id, t + waitMs + talkMs, { answeredAt: t + waitMs }),
  ];
  return [
    ...answered('wacid.w-fast', T0, 4_000, 60_000),
    ...answered('wacid.w-slow', T0 + 5 * MIN, 40_000, 120_000),
    // Every agent it rang declined: missed.
    incoming('wacid.w-declined', T0 + 10 * MIN, ['alice']),
    decline('wacid.w-declined', 'alice', T0 + 10 * MIN + 3_000, 0),
    terminated('wacid.w-declined', T0 + 10 * MIN + 3_500),
    // The customer gave up while it rang: abandoned.
    incoming('wacid.w-gave-up', T0 + 15 * MIN, ['alice']),
    terminated('wacid.w-gave-up', T0 + 15 * MIN + 9_000),
    // An outgoing call the customer answered: handled, but not an incoming answer.
    claim('wacid.w-out', 'bob', T0 + 20 * MIN),
    status('wacid.w-out', 'ACCEPTED', T0 + 20 * MIN + 5_000),
    terminated('wacid.w-out', T0 + 20 * MIN + 65_000, { answeredAt: T0 + 20 * MIN + 5_000 }),
    // Yesterday's call counts for nothing today.
    ...answered('wacid.w-yesterday', T0 - 24 * 60 * MIN, 1_000, 10_000),
    // Ringing now, for 40 s; one that started ringing 10 minutes ago and never ended is lost, not waiting.
    incoming('wacid.w-lost', NOW - 10 * MIN, ['alice']),
    incoming('wacid.w-waiting', NOW - 40_000, ['alice']),
  ];
}

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('the wallboard on %s', (_name, make) => {
  const played = playedRecords(make, (records, clock) => {
    for (const step of day()) play(records, clock, step);
    const state = teamStates(records, clock);
    // 30 s of after-call work after the fast call, 50 s after the slow one; one still under way, 20 s so far.
    state('alice', 'available', T0 - 60 * MIN);
    state('alice', 'after_call_work', T0 + 64_000);
    state('alice', 'available', T0 + 94_000);
    state('alice', 'after_call_work', T0 + 5 * MIN + 160_000);
    state('alice', 'available', T0 + 5 * MIN + 210_000);
    state('bob', 'after_call_work', NOW - 20_000);
  });

  const agents: TeamMember[] = [{ agentId: 'alice', name: 'Alice', presence: 'available' }];

  it('counts the day’s calls, their handle time with the after-call work, the service level, and the calls waiting now', async () => {
    const source = new WallboardSource({ database: () => Promise.resolve(played.db()), settings: () => ({ ...DEFAULT_TEAM_SETTINGS, serviceLevelSeconds: 20 }), callbacks: noCallbacks, now: () => NOW });
    const board = await source.wallboard(agents);
    const handled = 60_000 + 120_000 + 60_000 + 30_000 + 50_000 + 20_000;
    expect(board).toEqual({
      at: NOW,
      timezone: 'UTC',
      dayStartedAt: Date.UTC(2026, 10, 2),
      agents,
      callbacks: [],
      records: 'ok',
      waiting: { calls: 1, longestSince: NOW - 40_000 },
      today: {
        answered: 2,
        missed: 1,
        abandoned: 1,
        // Over the three answered calls, the outgoing one too.
        averageHandleMs: Math.round(handled / 3),
        // The fast call within 20 s, of four incoming calls that ended.
        serviceLevel: { thresholdSec: 20, answeredWithin: 1, offered: 4, ratio: 0.25 },
      },
      voicemails: [],
    });
  });

  it('reads its day in the team’s time zone', async () => {
    // In Auckland (UTC+13 in November) T0 + 2 h is already the 3rd: none of these calls is today's.
    const source = new WallboardSource({ database: () => Promise.resolve(played.db()), settings: () => ({ ...DEFAULT_TEAM_SETTINGS, timezone: 'Pacific/Auckland' }), callbacks: noCallbacks, now: () => NOW });
    const board = await source.wallboard(agents);
    expect(board.dayStartedAt).toBe(Date.UTC(2026, 10, 2, 11));
    expect(board.today).toMatchObject({ answered: 0, missed: 0, abandoned: 0, serviceLevel: { offered: 0 } });
    expect(board.today?.averageHandleMs).toBeUndefined();
  });

  it('reads the records once per moment however many ask, and again after it', async () => {
    let opened = 0;
    let now = NOW;
    const source = new WallboardSource({
      database: () => {
        opened += 1;
        return Promise.resolve(played.db());
      },
      settings: () => DEFAULT_TEAM_SETTINGS,
      callbacks: noCallbacks,
      now: () => now,
      cacheMs: 2_000,
    });
    await Promise.all([source.wallboard(agents), source.wallboard(agents), source.wallboard(agents)]);
    expect(opened).toBe(1);
    now += 1_000;
    await source.wallboard(agents);
    expect(opened).toBe(1);
    now += 1_500;
    await source.wallboard(agents);
    expect(opened).toBe(2);
  });

  it('reads the callback requests at every ask, while the records’ reading serves its moment', async () => {
    let opened = 0;
    let asked = 0;
    const listed: CallbackRequest = { id: 'wacid.cb', number: '447700900123', requestedAt: NOW - MIN, expiresAt: NOW + 7 * 24 * 60 * MIN, permanent: false };
    let list: CallbackRequest[] = [];
    const source = new WallboardSource({
      database: () => {
        opened += 1;
        return Promise.resolve(played.db());
      },
      settings: () => DEFAULT_TEAM_SETTINGS,
      callbacks: () => {
        asked += 1;
        return Promise.resolve(list);
      },
      now: () => NOW,
      cacheMs: 60_000,
    });
    expect((await source.wallboard(agents)).callbacks).toEqual([]);
    list = [listed];
    expect((await source.wallboard(agents)).callbacks).toEqual([listed]);
    list = [{ ...listed, takenBy: { agentId: 'alice', name: 'Alice', at: NOW } }];
    expect((await source.wallboard(agents)).callbacks).toEqual(list);
    expect({ opened, asked }).toEqual({ opened: 1, asked: 3 });
    // A relay without records still lists them.
    const none = await new WallboardSource({ database: undefined, settings: () => DEFAULT_TEAM_SETTINGS, callbacks: () => Promise.resolve([listed]), now: () => NOW }).wallboard(agents);
    expect(none).toMatchObject({ records: 'none', callbacks: [listed] });
    expect(none).not.toHaveProperty('voicemails');
  });

  it('says when it has no records, or they cannot be read', async () => {
    const none = await new WallboardSource({ database: undefined, settings: () => DEFAULT_TEAM_SETTINGS, callbacks: noCallbacks, now: () => NOW }).wallboard(agents);
    expect(none).toEqual({ at: NOW, timezone: 'UTC', dayStartedAt: Date.UTC(2026, 10, 2), agents, callbacks: [], records: 'none' });
    const down = await new WallboardSource({ database: () => Promise.reject(new Error('connection refused')), settings: () => DEFAULT_TEAM_SETTINGS, callbacks: noCallbacks, now: () => NOW }).wallboard(agents);
    expect(down).toEqual({ at: NOW, timezone: 'UTC', dayStartedAt: Date.UTC(2026, 10, 2), agents, callbacks: [], records: 'unavailable' });
  });
});
