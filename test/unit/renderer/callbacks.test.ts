// The Team view's callback requests and voicemails in the window's domains, on a fake host: "Call
// back" takes the request, reads the board again and dials, or says the refusal in the item; the
// time a request has left reads to the minute; the team's voicemails and the items' notes between
// reads.
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CALL_PERMISSION_MS, type CallbackRequest } from '../../../shared/callbacks';
import { text } from '../../../shared/i18n/text';
import { err, ok } from '../../../shared/result';
import type { Wallboard } from '../../../shared/wallboard';
import { WallboardActions } from '../../../renderer/app/wallboard-actions';
import { parseWallboard, type TeamBoard } from '../../../renderer/bridge/payload-schemas';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { nextVoicemails, notesAfter, resetWallboardStore, wallboardStore, type VoicemailsView } from '../../../renderer/store/wallboard';
import { callbackTimeLeftText } from '../../../renderer/wallboard-display';
import { fakeApi } from './fake-api';

const AT = Date.UTC(2025, 5, 10, 14, 30, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

afterEach(async () => {
  await setUiLanguage('en', undefined);
  resetWallboardStore();
});

/** A wallboard as the host hands it over. */
const wallboard = (extra: Partial<Wallboard> = {}): Wallboard => ({
  at: AT,
  timezone: 'Europe/London',
  dayStartedAt: AT - 15 * HOUR,
  records: 'ok',
  waiting: { calls: 0 },
  today: { answered: 0, missed: 0, abandoned: 0, serviceLevel: { thresholdSec: 20, answeredWithin: 0, offered: 0 } },
  agents: [{ agentId: 'a1', name: 'Amelia Hart', presence: 'available', self: true }],
  callbacks: [],
  ...extra,
});

/** The same, as the window reads it. */
const board = (extra: Partial<Wallboard> = {}): TeamBoard => {
  const parsed = parseWallboard(wallboard(extra));
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
};

const request = (id: string, extra: Partial<CallbackRequest> = {}): CallbackRequest => ({
  id,
  number: '447700900123',
  name: 'Ada Lovelace',
  requestedAt: AT - MINUTE,
  expiresAt: AT - MINUTE + CALL_PERMISSION_MS,
  permanent: false,
  ...extra,
});

describe('the time a callback request has left', () => {
  test('days and hours, then hours and minutes, then minutes; permanent; expired', () => {
    const expiresAt = AT + CALL_PERMISSION_MS;
    expect(callbackTimeLeftText({ expiresAt, permanent: false }, AT + 30_000)).toBe('6 days 23 h left');
    expect(callbackTimeLeftText({ expiresAt, permanent: false }, AT)).toBe('7 days 0 h left');
    expect(callbackTimeLeftText({ expiresAt, permanent: false }, expiresAt - DAY - 5 * HOUR)).toBe('1 day 5 h left');
    expect(callbackTimeLeftText({ expiresAt, permanent: false }, expiresAt - 5 * HOUR - 12 * MINUTE - 59_000)).toBe('5 h 12 min left');
    expect(callbackTimeLeftText({ expiresAt, permanent: false }, expiresAt - 5 * HOUR)).toBe('5 h 0 min left');
    expect(callbackTimeLeftText({ expiresAt, permanent: false }, expiresAt - 12 * MINUTE - 30_000)).toBe('12 min left');
    expect(callbackTimeLeftText({ expiresAt, permanent: false }, expiresAt - 20_000)).toBe('1 min left');
    expect(callbackTimeLeftText({ expiresAt, permanent: false }, expiresAt)).toBe('Expired');
    expect(callbackTimeLeftText({ permanent: true }, AT)).toBe('Permanent');
  });

  test('in Spanish, with its plural', async () => {
    await setUiLanguage('es', undefined);
    expect(callbackTimeLeftText({ expiresAt: AT + DAY + HOUR, permanent: false }, AT)).toBe('Queda 1 día 1 h');
    expect(callbackTimeLeftText({ expiresAt: AT + 3 * DAY, permanent: false }, AT)).toBe('Quedan 3 días 0 h');
    expect(callbackTimeLeftText({ permanent: true }, AT)).toBe('Permanente');
  });
});

describe('the team\'s voicemails and the requests\' notes between reads', () => {
  const voicemail = { callId: 'wacid.9', mediaId: 'media-9', at: AT - HOUR, number: '447700900123', name: 'Ada Lovelace' };

  test('listed from records read now; none from a relay without records; unavailable keeps the list read before', () => {
    const list = nextVoicemails({ kind: 'loading' }, board({ voicemails: [voicemail] }));
    expect(list).toEqual({ kind: 'list', voicemails: [voicemail] });
    expect(nextVoicemails(list, board({ voicemails: undefined }))).toEqual({ kind: 'list', voicemails: [] });
    expect(nextVoicemails(list, board({ records: 'none', waiting: undefined, today: undefined }))).toEqual({ kind: 'none' });
    const unavailable = board({ records: 'unavailable', waiting: undefined, today: undefined });
    const kept = nextVoicemails(list, unavailable);
    expect(kept).toEqual({ kind: 'unavailable', kept: [voicemail] });
    expect(nextVoicemails(kept, unavailable)).toEqual(kept);
    const never: VoicemailsView = { kind: 'loading' };
    expect(nextVoicemails(never, unavailable)).toEqual({ kind: 'unavailable', kept: null });
  });

  test('a take under way stays; a refusal stays while its request is listed', () => {
    const notes = { a: { kind: 'taking' as const }, b: { kind: 'refused' as const, text: 'Taken by Maya Chen' }, c: { kind: 'refused' as const, text: 'gone' } };
    expect(notesAfter(notes, [request('b')])).toEqual({ a: notes.a, b: notes.b });
    expect(notesAfter(notes, [])).toEqual({ a: notes.a });
  });
});

describe('"Call back"', () => {
  /** The Team view open on a board with `callbacks`, reading `getWallboard` as the test answers it. */
  async function openView(answers: Parameters<typeof fakeApi>[0]) {
    const fake = fakeApi({ getWallboard: () => ok(wallboard({ callbacks: [request('wacid.1')] })), ...answers });
    const dialled: string[] = [];
    const actions = new WallboardActions({ api: fake.api, store: wallboardStore, visibility: undefined, dial: async (number) => void dialled.push(number) });
    const stop = actions.watch();
    await new Promise((r) => setTimeout(r, 0));
    return { ...fake, actions, dialled, stop, reads: () => fake.calls.filter((c) => c.name === 'getWallboard').length };
  }

  let stops: Array<() => void> = [];
  beforeEach(() => {
    stops = [];
  });
  afterEach(() => {
    for (const stop of stops) stop();
  });

  test('takes the request, reads the board again at once, and dials the customer\'s number', async () => {
    const view = await openView({ takeCallback: ({ id }) => ok(request(id, { takenBy: { agentId: 'a1', name: 'Amelia Hart', at: AT } })) });
    stops.push(view.stop);
    expect(view.reads()).toBe(1);
    await view.actions.callBack(request('wacid.1'));
    expect(view.calls.map((c) => c.name)).toEqual(['getWallboard', 'takeCallback', 'getWallboard']);
    expect(view.calls[1]?.params).toEqual({ id: 'wacid.1' });
    expect(view.dialled).toEqual(['447700900123']);
    expect(wallboardStore.getState().callbackNotes).toEqual({});
  });

  test('a refusal is the item\'s note, in its own words; nothing is dialled; the board is read again', async () => {
    const view = await openView({ takeCallback: () => err('invalid_state', 'Taken by Maya Chen', { text: text('common.fieldRule', { field: 'Maya Chen', rule: 'taken' }) }) });
    stops.push(view.stop);
    await view.actions.callBack(request('wacid.1'));
    expect(view.dialled).toEqual([]);
    expect(wallboardStore.getState().callbackNotes['wacid.1']).toEqual({ kind: 'refused', text: 'Maya Chen: taken' });
    await new Promise((r) => setTimeout(r, 0));
    expect(view.reads()).toBe(2);
    // Still listed: the note stays through the read.
    expect(wallboardStore.getState().callbackNotes['wacid.1']?.kind).toBe('refused');
  });

  test('one take at a time: a second press while the first is under way sends nothing', async () => {
    let answer: (() => void) | undefined;
    const fake = fakeApi({ getWallboard: () => ok(wallboard()) });
    const api = { ...fake.api, takeCallback: () => new Promise<ReturnType<typeof ok<CallbackRequest>>>((done) => (answer = () => done(ok(request('wacid.1'))))) };
    const dialled: string[] = [];
    const actions = new WallboardActions({ api, store: wallboardStore, visibility: undefined, dial: async (n) => void dialled.push(n) });
    const first = actions.callBack(request('wacid.1'));
    await actions.callBack(request('wacid.1'));
    expect(wallboardStore.getState().callbackNotes['wacid.1']).toEqual({ kind: 'taking' });
    answer?.();
    await first;
    expect(dialled).toEqual(['447700900123']);
  });
});
