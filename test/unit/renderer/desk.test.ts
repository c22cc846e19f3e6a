// The desk's rules and its domain without a page: the host's desk payloads at the edge, the
// "Presence" options, the wrap-up's checks, where a refusal goes, the 24-hour window, when the window
// asks for a wrap-up as a call ends, and DeskActions on the fake host (what it sends, what a save keeps).
import { beforeEach, describe, expect, it } from 'vitest';
import { DeskActions, type DeskActionsDeps } from '../../../renderer/app/desk-actions';
import { parseHistoryEntry, parsePresence, parsePush, parseSnapshot, parseTeamInfo } from '../../../renderer/bridge/payload-schemas';
import { countdownText } from '../../../renderer/components/AfterCallWork';
import { presenceOptions } from '../../../renderer/components/PresenceControl';
import { shortNotes, wrapUpSync } from '../../../renderer/components/WrapUpSummary';
import { appStore, resetStore } from '../../../renderer/store/store';
import { validateWrapUp, wasAnswered, wrapUpEditable, wrapUpErrorsFrom, wrapUpFormOf } from '../../../renderer/store/wrap-up-form';
import { followWrapUpPrompt, NO_WRAP_UP_PROMPT, wrapUpCardCall, type WrapUpPrompt } from '../../../renderer/store/wrap-up-prompt';
import type { AgentPresence, TeamInfo } from '../../../shared/api';
import type { CallState, EndReason } from '../../../shared/call-state';
import type { HistoryEntry } from '../../../shared/history';
import { err, ok, type Result } from '../../../shared/result';
import { DEFAULT_TEAM_SETTINGS, WRAP_UP_EDITABLE_MS, WRAP_UP_NOTES_MAX } from '../../../shared/team-settings';
import { fakeApi } from './fake-api';
import { T0, active, dialing, endedWith, ringing, snapshot } from './fixtures';

const state = () => appStore.getState();
const entry = (extra: Partial<HistoryEntry> = {}): HistoryEntry => ({
  localId: 'in:wacid.1',
  callId: 'wacid.1',
  direction: 'incoming',
  number: '447700900123',
  outcome: 'completed',
  startedAt: T0,
  endedAt: T0 + 60_000,
  durationSec: 55,
  ...extra,
});
const TEAM: TeamInfo = { role: 'supervisor', settings: { ...DEFAULT_TEAM_SETTINGS, breakReasons: ['Lunch', 'Coaching'], dispositionRequired: true } };

beforeEach(() => resetStore());

describe('the desk at the edge', () => {
  it('takes the team, a break with its reason and after-call work, and keeps a recent call\'s wrap-up', () => {
    expect(parseTeamInfo(TEAM)).toEqual({ ok: true, value: TEAM });
    expect(parsePush('teamChanged', { role: 'boss', settings: DEFAULT_TEAM_SETTINGS }).ok).toBe(false);
    // A field left out takes the team's default, as the relay reads its file.
    expect(parseTeamInfo({ role: 'agent', settings: { breakReasons: ['Lunch'] } })).toEqual({ ok: true, value: { role: 'agent', settings: { ...DEFAULT_TEAM_SETTINGS, breakReasons: ['Lunch'] } } });

    const onBreak: AgentPresence = { choice: 'break', status: 'break', breakReason: 'Lunch' };
    expect(parsePresence(onBreak)).toEqual({ ok: true, value: onBreak });
    const working: AgentPresence = { choice: 'dnd', status: 'after_call_work', afterCallWork: { localId: 'in:wacid.1', callId: 'wacid.1', startedAt: T0, endsAt: T0 + 30_000, waitingForWrapUp: true } };
    expect(parsePresence(working)).toEqual({ ok: true, value: working });
    expect(parsePresence({ ...working, afterCallWork: { localId: 'in:wacid.1', startedAt: T0 } }).ok).toBe(false);

    const wrapped = entry({ wrapUp: { disposition: 'Sale', notes: 'Two headsets', savedAt: T0, synced: false, syncError: 'The relay could not be reached' } });
    expect(parseHistoryEntry(wrapped)).toEqual({ ok: true, value: wrapped });
    const pushed = parsePush('historyChanged', [wrapped]);
    expect(pushed.ok && pushed.value[0]?.wrapUp).toEqual(wrapped.wrapUp);
    const snap = parseSnapshot(snapshot([], { history: [wrapped], team: TEAM, presence: working }));
    expect(snap.ok && [snap.value.team, snap.value.history[0]?.wrapUp]).toEqual([TEAM, wrapped.wrapUp]);
  });

  it('the store has the team\'s defaults until the snapshot or teamChanged tells it', () => {
    expect(state().team).toEqual({ role: 'agent', settings: DEFAULT_TEAM_SETTINGS });
    state().applySnapshot(snapshot([], { team: TEAM }));
    expect(state().team).toEqual(TEAM);
    state().applySnapshot(snapshot());
    expect(state().team).toEqual(TEAM);
  });
});

describe('the "Presence" options', () => {
  it('are Available, a break per reason, Do not disturb; a reason the team dropped stays while the agent is on it', () => {
    const values = (presence: Pick<AgentPresence, 'choice' | 'breakReason'> | null) => presenceOptions(['Lunch', 'Meeting'], presence).map((o) => [o.choice, o.reason ?? null]);
    expect(values(null)).toEqual([['available', null], ['break', 'Lunch'], ['break', 'Meeting'], ['dnd', null]]);
    expect(values({ choice: 'break', breakReason: 'Meeting' })).toEqual([['available', null], ['break', 'Lunch'], ['break', 'Meeting'], ['dnd', null]]);
    expect(values({ choice: 'break', breakReason: 'Gym' })).toEqual([['available', null], ['break', 'Lunch'], ['break', 'Meeting'], ['break', 'Gym'], ['dnd', null]]);
    expect(new Set(presenceOptions(['Lunch', 'Meeting'], { choice: 'break', breakReason: 'Gym' }).map((o) => o.value)).size).toBe(5);
  });
});

describe('the wrap-up\'s rules', () => {
  it('is for answered calls, for 24 hours after their end', () => {
    expect(wasAnswered(entry())).toBe(true);
    expect(wasAnswered(entry({ outcome: 'transferred' }))).toBe(true);
    expect(wasAnswered(entry({ outcome: 'failed', durationSec: 12 }))).toBe(true);
    for (const outcome of ['missed', 'declined', 'cancelled', 'no_answer', 'rejected', 'answered_elsewhere', 'consult_ended'] as const) expect(wasAnswered(entry({ outcome, durationSec: 0 })), outcome).toBe(false);
    expect(wasAnswered(entry({ outcome: 'failed', durationSec: 0 }))).toBe(false);
    const ended = entry().endedAt;
    expect(wrapUpEditable(entry(), ended + WRAP_UP_EDITABLE_MS - 1)).toBe(true);
    expect(wrapUpEditable(entry(), ended + WRAP_UP_EDITABLE_MS)).toBe(false);
    expect(wrapUpEditable(entry({ outcome: 'missed', durationSec: 0 }), ended)).toBe(false);
  });

  it('checks the draft against the team: a required disposition, the notes\' length', () => {
    expect(validateWrapUp('l', { disposition: '', notes: 'x' }, { dispositionRequired: false })).toEqual({ ok: true, params: { localId: 'l', disposition: null, notes: 'x' } });
    expect(validateWrapUp('l', { disposition: 'Sale', notes: '' }, { dispositionRequired: true })).toEqual({ ok: true, params: { localId: 'l', disposition: 'Sale', notes: '' } });
    expect(validateWrapUp('l', { disposition: '', notes: 'x'.repeat(WRAP_UP_NOTES_MAX + 1) }, { dispositionRequired: true })).toEqual({
      ok: false,
      errors: { disposition: 'Is required: the team asks for a disposition on every call', notes: `Must be at most ${WRAP_UP_NOTES_MAX} characters` },
    });
  });

  it('puts a refusal at the field it names (its issue, its text without the path, its message), else above the button', () => {
    const rule = { code: 'team.disposition', values: { values: { list: ['Resolved'], join: 'comma' } } } as const;
    expect(wrapUpErrorsFrom({ field: 'disposition', message: 'x', text: { code: 'common.fieldRule', values: { field: 'disposition', rule } } }, 'form')).toEqual({
      fields: { disposition: 'Must be one of the team\'s dispositions: Resolved' },
      form: null,
    });
    expect(wrapUpErrorsFrom({ field: 'notes', message: 'notes: must be a string' }, 'form')).toEqual({ fields: { notes: 'Must be a string' }, form: null });
    expect(wrapUpErrorsFrom({ message: 'x', issues: [{ field: 'notes', text: { code: 'common.atMostCharacters', values: { count: 2000 } } }] }, 'form')).toEqual({ fields: { notes: 'Must be at most 2000 characters' }, form: null });
    expect(wrapUpErrorsFrom({ field: 'localId', message: 'no such call' }, 'The wrap-up was not saved: no such call')).toEqual({ fields: {}, form: 'The wrap-up was not saved: no such call' });
  });

  it('a form shows the saved wrap-up until edited, then its draft', () => {
    const saved = { disposition: 'Sale', notes: 'Two headsets', savedAt: T0, synced: true };
    expect(wrapUpFormOf(undefined, saved).draft).toEqual({ disposition: 'Sale', notes: 'Two headsets' });
    const edited = { ...wrapUpFormOf(undefined, saved), draft: { disposition: 'Sale', notes: 'Three' }, dirty: true };
    expect(wrapUpFormOf(edited, saved).draft.notes).toBe('Three');
    expect(wrapUpFormOf({ ...edited, dirty: false }, { ...saved, notes: 'Four' }).draft.notes).toBe('Four');
  });

  it('words: the countdown, long notes, the sync state', () => {
    expect([countdownText(0), countdownText(9.9), countdownText(75), countdownText(3725)]).toEqual(['0:00', '0:09', '1:15', '62:05']);
    expect(shortNotes('Short one')).toBe('Short one');
    const long = 'word '.repeat(60).trim();
    const short = shortNotes(long);
    expect(short.length).toBeLessThanOrEqual(121);
    expect(short.endsWith('word…')).toBe(true);
    expect([wrapUpSync({ synced: true }), wrapUpSync({ synced: false }), wrapUpSync({ synced: false, refused: true })]).toEqual(['saved', 'pending', 'refused']);
  });
});

describe('the wrap-up asked for as a call ends', () => {
  const byId = (...calls: CallState[]): Record<string, CallState> => Object.fromEntries(calls.map((c) => [c.localId, c]));
  const talked = (how: EndReason, id = 'wacid.1', durationSec = 55) => ({ ...endedWith(how, id), durationSec });
  const available: AgentPresence = { choice: 'available', status: 'available' };
  const asking = (localId: string): WrapUpPrompt => ({ kind: 'asking', localId });
  const completed: EndReason = { kind: 'completed', by: 'agent' };

  it('asks after a call the agent talked on (completed, transferred, failed during the talk), as recent calls count "answered"', () => {
    for (const how of [completed, { kind: 'transferred', to: 'Ben Okafor' }, { kind: 'failed', code: 'media_failed', message: 'The network connection was lost' }] satisfies EndReason[]) {
      expect(followWrapUpPrompt(NO_WRAP_UP_PROMPT, byId(talked(how)), byId(active()), available), how.kind).toEqual(asking('in:wacid.1'));
    }
    const never: [EndReason, number][] = [[{ kind: 'missed' }, 0], [{ kind: 'declined' }, 0], [{ kind: 'answered_elsewhere' }, 0], [{ kind: 'consult_ended' }, 40], [{ kind: 'failed', code: 'media_failed', message: 'The call failed' }, 0]];
    for (const [how, duration] of never) expect(followWrapUpPrompt(NO_WRAP_UP_PROMPT, byId(talked(how, 'wacid.1', duration)), byId(ringing()), available), how.kind).toEqual(NO_WRAP_UP_PROMPT);
  });

  it('asks only about an end this window saw, the latest one, and with no other call live', () => {
    // Already over when it arrived (a snapshot after a reload): not asked about.
    expect(followWrapUpPrompt(NO_WRAP_UP_PROMPT, byId(talked(completed)), {}, available)).toEqual(NO_WRAP_UP_PROMPT);
    const later = { ...talked(completed, 'wacid.2'), endedAt: T0 + 20_000 };
    expect(followWrapUpPrompt(NO_WRAP_UP_PROMPT, byId(talked(completed), later), byId(active(), active('wacid.2')), available)).toEqual(asking('in:wacid.2'));
    // A call on hold is still live: the agent goes back to it, the card does not open.
    expect(followWrapUpPrompt(NO_WRAP_UP_PROMPT, byId(talked(completed), active('wacid.2')), byId(active(), active('wacid.2')), available)).toEqual(NO_WRAP_UP_PROMPT);
  });

  it('a call that rings, is placed or goes on closes it, "saved" too; nothing brings it back but another end', () => {
    const ended = byId(talked(completed));
    for (const live of [ringing('wacid.2'), dialing(), active('wacid.2')]) {
      expect(followWrapUpPrompt(asking('in:wacid.1'), { ...ended, [live.localId]: live }, ended, available)).toEqual(NO_WRAP_UP_PROMPT);
    }
    expect(followWrapUpPrompt({ kind: 'saved', localId: 'in:wacid.1', at: T0 }, { ...ended, ...byId(ringing('wacid.2')) }, ended, available)).toEqual(NO_WRAP_UP_PROMPT);
    const missed = { ...ended, ...byId(talked({ kind: 'missed' }, 'wacid.2', 0)) };
    expect(followWrapUpPrompt(NO_WRAP_UP_PROMPT, missed, { ...ended, ...byId(ringing('wacid.2')) }, available)).toEqual(NO_WRAP_UP_PROMPT);
  });

  it('after-call work for the call asks instead; the card waits for the presence that says the call is over', () => {
    const work: AgentPresence = { choice: 'available', status: 'after_call_work', afterCallWork: { localId: 'in:wacid.1', startedAt: T0, endsAt: T0 + 30_000, waitingForWrapUp: false } };
    expect(followWrapUpPrompt(asking('in:wacid.1'), byId(talked(completed)), byId(talked(completed)), work)).toEqual(NO_WRAP_UP_PROMPT);
    expect(wrapUpCardCall(asking('in:wacid.1'), { choice: 'available', status: 'on_call' })).toBeNull();
    expect(wrapUpCardCall(asking('in:wacid.1'), { choice: 'available', status: 'call_waiting' })).toBeNull();
    expect(wrapUpCardCall(asking('in:wacid.1'), work)).toBeNull();
    expect(wrapUpCardCall(asking('in:wacid.1'), available)).toBe('in:wacid.1');
    expect(wrapUpCardCall(asking('in:wacid.1'), { choice: 'break', status: 'break', breakReason: 'Lunch' })).toBe('in:wacid.1');
    expect(wrapUpCardCall(asking('in:wacid.1'), null)).toBe('in:wacid.1');
    expect(wrapUpCardCall({ kind: 'saved', localId: 'in:wacid.1', at: T0 }, available)).toBeNull();
  });

  it('DeskActions follows the store once started: the end opens it, "Later" and a save of that call close it, stopping stops it', async () => {
    const saved = fakeApi({ saveWrapUp: (p) => ok(entry({ localId: p.localId, wrapUp: { disposition: p.disposition, notes: p.notes, savedAt: T0, synced: true } })) });
    const desk = new DeskActions({ api: saved.api, store: appStore });
    const stop = desk.start();
    state().setPresence(available);
    state().applyCall(active());
    state().applyCall(talked(completed));
    expect(state().wrapUpPrompt).toEqual(asking('in:wacid.1'));
    desk.wrapUpLater();
    expect(state().wrapUpPrompt).toEqual(NO_WRAP_UP_PROMPT);

    state().applyCall(active('wacid.2'));
    state().applyCall(talked(completed, 'wacid.2'));
    expect(state().wrapUpPrompt).toEqual(asking('in:wacid.2'));
    // Another call's save leaves it asking; its own closes it, said as saved.
    state().setHistory([entry(), entry({ localId: 'in:wacid.2', callId: 'wacid.2' })]);
    await desk.saveWrapUp('in:wacid.1');
    expect(state().wrapUpPrompt).toEqual(asking('in:wacid.2'));
    await desk.saveWrapUp('in:wacid.2');
    expect(state().wrapUpPrompt).toMatchObject({ kind: 'saved', localId: 'in:wacid.2' });

    stop();
    state().applyCall(active('wacid.3'));
    state().applyCall(talked(completed, 'wacid.3'));
    expect(state().wrapUpPrompt).toMatchObject({ kind: 'saved', localId: 'in:wacid.2' });
  });
});

describe('DeskActions', () => {
  const setUp = (answers: Parameters<typeof fakeApi>[0]) => {
    const fake = fakeApi(answers);
    return { fake, desk: new DeskActions({ api: fake.api, store: appStore }) };
  };

  it('a break sends its reason, the other choices none; a refusal is kept in presenceError', async () => {
    const { fake, desk } = setUp({ setPresence: (p) => (p.reason === 'Gym' ? err('invalid_input', 'reason: must be one of the team\'s break reasons: Lunch') : ok({ choice: p.status, status: p.status === 'break' ? 'break' : p.status, ...(p.reason ? { breakReason: p.reason } : {}) })) });
    await desk.setPresence('break', 'Lunch');
    expect(state().presence).toEqual({ choice: 'break', status: 'break', breakReason: 'Lunch' });
    await desk.setPresence('available', 'Lunch');
    await desk.setPresence('break', 'Gym');
    expect(fake.calls.map((c) => c.params)).toEqual([{ status: 'break', reason: 'Lunch' }, { status: 'available' }, { status: 'break', reason: 'Gym' }]);
    expect(state().presenceError).toBe('reason: must be one of the team\'s break reasons: Lunch');
  });

  it('"Ready" adopts the answer; a refusal is kept until the after-call work ends', async () => {
    const working: AgentPresence = { choice: 'available', status: 'after_call_work', afterCallWork: { localId: 'in:wacid.1', startedAt: T0, endsAt: T0 + 30_000, waitingForWrapUp: true } };
    let answer: Result<AgentPresence> = err('invalid_state', 'Save the wrap-up first');
    const { desk } = setUp({ endAfterCallWork: () => answer });
    state().setPresence(working);
    await desk.endAfterCallWork();
    expect(state().afterCallWorkError).toBe('Save the wrap-up first');
    state().setPresence({ ...working, afterCallWork: { ...working.afterCallWork!, waitingForWrapUp: false } });
    expect(state().afterCallWorkError).toBe('Save the wrap-up first');
    answer = ok({ choice: 'available', status: 'available' });
    await desk.endAfterCallWork();
    expect([state().presence, state().afterCallWorkError]).toEqual([{ choice: 'available', status: 'available' }, null]);
  });

  it('a save adopts the saved entry; what is typed while it goes stays a draft; a refusal keeps everything', async () => {
    state().setHistory([entry()]);
    let release: (r: Result<HistoryEntry>) => void = () => undefined;
    let refuse = false;
    const sent: unknown[] = [];
    const api: DeskActionsDeps['api'] = {
      setPresence: async () => err('not_available', 'not part of this test'),
      endAfterCallWork: async () => err('not_available', 'not part of this test'),
      saveWrapUp: (params) => {
        sent.push(params);
        if (refuse) return Promise.resolve(err('gateway_unreachable', 'connect ECONNREFUSED 127.0.0.1:8788'));
        return new Promise((resolve) => (release = resolve));
      },
    };
    const desk = new DeskActions({ api, store: appStore });
    desk.editWrapUp('in:wacid.1', 'disposition', 'Sale');
    desk.editWrapUp('in:wacid.1', 'notes', 'Two headsets');
    const saving = desk.saveWrapUp('in:wacid.1');
    // A second press while it goes sends nothing more.
    await expect(desk.saveWrapUp('in:wacid.1')).resolves.toBeNull();
    desk.editWrapUp('in:wacid.1', 'notes', 'Two headsets, one dongle');
    release(ok(entry({ wrapUp: { disposition: 'Sale', notes: 'Two headsets', savedAt: T0, synced: false } })));
    await saving;
    expect(sent).toHaveLength(1);
    expect(state().history[0]?.wrapUp?.notes).toBe('Two headsets');
    expect(state().wrapUps['in:wacid.1']).toMatchObject({ dirty: true, busy: false, draft: { disposition: 'Sale', notes: 'Two headsets, one dongle' } });

    refuse = true;
    await desk.saveWrapUp('in:wacid.1');
    expect(state().wrapUps['in:wacid.1']).toMatchObject({ dirty: true, busy: false, draft: { notes: 'Two headsets, one dongle' } });
    expect(state().wrapUps['in:wacid.1']?.formError).toMatch(/^The wrap-up was not saved: /);
  });
});
