// The Team view's pure parts: the wallboard as the window reads it (payload-schemas.ts), the figures
// kept while the records cannot be read (store/wallboard.ts), and how states and clocks read.
import { afterEach, describe, expect, test } from 'vitest';
import { parseWallboard, type TeamBoard } from '../../../renderer/bridge/payload-schemas';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { nextFigures, type FiguresView } from '../../../renderer/store/wallboard';
import { agentStateText, elapsedText, ratioText, sortedAgents, todayText } from '../../../renderer/wallboard-display';

afterEach(async () => {
  await setUiLanguage('en', undefined);
});

const AT = Date.UTC(2025, 0, 15, 12, 0, 0);
const DAY = Date.UTC(2025, 0, 15, 0, 0, 0);
const base = {
  at: AT,
  timezone: 'Europe/London',
  dayStartedAt: DAY,
  records: 'ok',
  waiting: { calls: 1, longestSince: AT - 5000 },
  today: { answered: 1, missed: 0, abandoned: 0, serviceLevel: { thresholdSec: 20, answeredWithin: 1, offered: 1, ratio: 1 } },
  agents: [{ agentId: 'a1', name: 'Maya Chen', presence: 'available' }],
};
const parsed = (data: unknown): TeamBoard => {
  const board = parseWallboard(data);
  if (!board.ok) throw new Error(board.error.message);
  return board.value;
};

describe('the wallboard as the window reads it', () => {
  test('a member\'s reason and since are read when there; call waiting is on a call; a state it does not know is kept as unknown', () => {
    const board = parsed({
      ...base,
      agents: [
        { agentId: 'a1', name: 'Maya Chen', presence: 'break', reason: 'Lunch', since: AT - 1000 },
        { agentId: 'a2', name: 'Jonas Berg', presence: 'call_waiting' },
        { agentId: 'a3', name: 'Olu Adeyemi', presence: 'training', since: 'yesterday' },
      ],
    });
    expect(board.agents).toEqual([
      { agentId: 'a1', name: 'Maya Chen', presence: 'break', reason: 'Lunch', since: AT - 1000 },
      { agentId: 'a2', name: 'Jonas Berg', presence: 'on_call' },
      { agentId: 'a3', name: 'Olu Adeyemi', presence: 'unknown' },
    ]);
  });

  test('a board without its fields is refused', () => {
    expect(parseWallboard({ ...base, at: undefined }).ok).toBe(false);
    expect(parseWallboard({ ...base, records: 'maybe' }).ok).toBe(false);
    expect(parseWallboard({ ...base, agents: [{ agentId: 'a1', presence: 'available' }] }).ok).toBe(false);
  });
});

describe('the figures between reads', () => {
  const live = nextFigures({ kind: 'loading' }, parsed(base));

  test('ok shows them; none says there are none', () => {
    expect(live).toEqual({ kind: 'live', figures: { waiting: base.waiting, today: base.today, at: AT, dayStartedAt: DAY } });
    expect(nextFigures(live, parsed({ ...base, records: 'none', waiting: undefined, today: undefined }))).toEqual({ kind: 'none' });
  });

  test('unavailable keeps the last figures of the same day, through several reads; never another day\'s', () => {
    const unavailable = parsed({ ...base, at: AT + 3000, records: 'unavailable', waiting: undefined, today: undefined });
    const once = nextFigures(live, unavailable);
    expect(once).toEqual({ kind: 'unavailable', kept: { waiting: base.waiting, today: base.today, at: AT, dayStartedAt: DAY } });
    expect(nextFigures(once, unavailable)).toEqual(once);
    const nextDay = parsed({ ...base, at: AT + 86_400_000, dayStartedAt: DAY + 86_400_000, records: 'unavailable', waiting: undefined, today: undefined });
    expect(nextFigures(once, nextDay)).toEqual({ kind: 'unavailable', kept: null });
    const none: FiguresView = { kind: 'none' };
    expect(nextFigures(none, unavailable)).toEqual({ kind: 'unavailable', kept: null });
  });
});

describe('how it reads', () => {
  test('states in words, a break with its reason or without', () => {
    expect(agentStateText({ presence: 'break', reason: 'Lunch' })).toBe('Break — Lunch');
    expect(agentStateText({ presence: 'break' })).toBe('Break');
    expect(agentStateText({ presence: 'after_call_work' })).toBe('After-call work');
    expect(agentStateText({ presence: 'offline' })).toBe('Offline');
    expect(agentStateText({ presence: 'unknown' })).toBe('—');
  });

  test('spans in m:ss, from an hour h:mm:ss; percent whole; the day on the team\'s clock', () => {
    expect([0, 9_900, 75_000, 3_599_000, 3_725_000].map((ms) => elapsedText(ms, 'en'))).toEqual(['0:00', '0:09', '1:15', '59:59', '1:02:05']);
    expect(elapsedText(-5000, 'en')).toBe('0:00');
    expect([0.8484, 0.995, 1].map((r) => ratioText(r, 'en'))).toEqual(['85%', '100%', '100%']);
    expect(todayText('Europe/London', Date.UTC(2025, 5, 9, 23, 0, 0), 'en')).toBe('Today since 00:00 Europe/London');
    expect(todayText('America/New_York', undefined, 'en')).toBe('Today since 00:00 America/New_York');
    expect(todayText('Not/AZone', DAY, 'en')).toBe('Today since 00:00 Not/AZone');
  });

  test('sorted by name as the language sorts, the same name by agent id', () => {
    const agents = [
      { agentId: 'b', name: 'Zoë Tran', presence: 'available' as const },
      { agentId: 'z', name: 'amelia Hart', presence: 'available' as const },
      { agentId: 'c', name: 'Émile Roux', presence: 'available' as const },
      { agentId: 'a', name: 'amelia Hart', presence: 'dnd' as const },
    ];
    expect(sortedAgents(agents, 'en').map((a) => `${a.name}/${a.agentId}`)).toEqual(['amelia Hart/a', 'amelia Hart/z', 'Émile Roux/c', 'Zoë Tran/b']);
  });

  test('in Arabic, with Latin digits', async () => {
    await setUiLanguage('ar', undefined);
    expect(agentStateText({ presence: 'offline' })).toBe('غير متصل');
    expect(elapsedText(75_000)).toBe('1:15');
  });
});
