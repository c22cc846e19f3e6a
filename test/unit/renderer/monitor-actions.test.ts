// The supervisor's domain (app/monitor-actions.ts) on an in-memory host and a recording stand-in for
// its leg: the live calls read while the Team view is open, "Listen", "Whisper" and "Barge" joining a
// call (the relay's offer answered, the answer handed back, ICE let go only then) or switching the
// joined one without a new leg, "Leave", the relay's word that the call left the supervisor or that
// it records, and every way a join can fail half-way leaving nothing behind: no leg open, the relay
// told.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { MonitorChange } from '../../../shared/api';
import { err, ok } from '../../../shared/result';
import { LIVE_CALLS_REFRESH_MS, type LiveCall, type LiveCalls, type MonitorMode } from '../../../shared/supervision';
import { MonitorActions, type MonitorControls } from '../../../renderer/app/monitor-actions';
import type { PageVisibility } from '../../../renderer/app/poll-while-shown';
import { resetSupervisionStore, supervisionStore, type CallParties } from '../../../renderer/store/supervision';
import type { MonitorFact } from '../../../renderer/webrtc/monitor-media';
import type { MediaOutcome } from '../../../renderer/webrtc/media-text';
import { fakeApi, type Answers } from './fake-api';

const AT = Date.UTC(2025, 5, 10, 14, 30, 0);

const call = (callId: string, more: Partial<LiveCall> = {}): LiveCall => ({
  callId,
  direction: 'incoming',
  customer: { number: '447700900123', name: 'Amelia Hart' },
  agents: [{ id: 'a1', name: 'Maya Chen' }],
  state: 'talking',
  startedAt: AT - 60_000,
  answeredAt: AT - 50_000,
  bridged: true,
  monitors: [],
  ...more,
});
const listOf = (...calls: LiveCall[]): LiveCalls => ({ at: AT, calls });
const PARTIES: CallParties = { agents: ['Maya Chen'], customer: { number: '447700900123', name: 'Amelia Hart' } };

/** The supervisor's leg as the domain sees it, recording what it is asked; `answerWith` decides the next answer. */
function fakeLeg() {
  const log: string[] = [];
  const listeners = new Set<(fact: MonitorFact) => void>();
  let open: { callId: string; legId: string } | undefined;
  let next: () => Promise<MediaOutcome<{ sdp: string }>> = async () => answered;
  const media: MonitorControls = {
    answer: async (callId, legId, offer, mode) => {
      log.push(`answer ${callId} ${legId} ${offer} ${mode}`);
      open = { callId, legId };
      const answer = await next();
      return answer;
    },
    connect: (legId) => void log.push(`connect ${legId}`),
    setMode: (mode) => void log.push(`mode ${mode}`),
    close: () => {
      if (open) log.push(`close ${open.legId}`);
      open = undefined;
    },
    legOf: (callId) => (open?.callId === callId ? open.legId : undefined),
    onFact: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return {
    media,
    log,
    answerWith: (answer: () => Promise<MediaOutcome<{ sdp: string }>>) => (next = answer),
    fact: (fact: MonitorFact) => listeners.forEach((l) => l(fact)),
  };
}

/** The leg's answer to the node's offer. */
const answered: MediaOutcome<{ sdp: string }> = { ok: true, value: { sdp: 'v=0 answer' } };

/** A join answered by the relay as POST does: the leg and its offer. */
const joinReply = (callId: string, mode: MonitorMode, legId = 'leg-1') => ok({ callId, mode, legId, offer: `offer-${legId}` });

function setUp(answers: Answers, options: { visibility?: PageVisibility } = {}) {
  const host = fakeApi(answers);
  const leg = fakeLeg();
  let now = AT;
  const actions = new MonitorActions({ api: host.api, store: supervisionStore, media: leg.media, visibility: options.visibility, now: () => now });
  const stop = actions.start();
  return { host, leg, actions, stop, advance: (ms: number) => (now += ms), named: (name: string) => host.calls.filter((c) => c.name === name).map((c) => c.params) };
}

const state = () => supervisionStore.getState();
const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

beforeEach(() => resetSupervisionStore());
afterEach(() => vi.useRealTimers());

describe('the live calls, while the Team view is open', () => {
  test('are read at once, then every LIVE_CALLS_REFRESH_MS one read at a time; closing stops the reads and forgets the list', async () => {
    vi.useFakeTimers();
    const t = setUp({ getLiveCalls: () => ok(listOf(call('c1'))) });
    const stop = t.actions.watch();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.named('getLiveCalls')).toHaveLength(1);
    expect(state().live).toEqual({ kind: 'list', calls: [call('c1')], offsetMs: 0 });
    await vi.advanceTimersByTimeAsync(LIVE_CALLS_REFRESH_MS - 1);
    expect(t.named('getLiveCalls')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.named('getLiveCalls')).toHaveLength(2);
    stop();
    expect(state().live).toEqual({ kind: 'loading' });
    await vi.advanceTimersByTimeAsync(LIVE_CALLS_REFRESH_MS * 5);
    expect(t.named('getLiveCalls')).toHaveLength(2);
  });

  test('the relay\'s clock against the window\'s: the list keeps the offset its durations count with', async () => {
    const t = setUp({ getLiveCalls: () => ok({ at: AT + 4_000, calls: [] }) });
    const stop = t.actions.watch();
    await flush();
    expect(state().live).toEqual({ kind: 'list', calls: [], offsetMs: 4_000 });
    stop();
  });

  test('a failed read is said with its reason and the list read before stays; a malformed one is refused the same way', async () => {
    vi.useFakeTimers();
    let answer: ReturnType<NonNullable<Answers['getLiveCalls']>> = ok(listOf(call('c1')));
    const t = setUp({ getLiveCalls: () => answer });
    const stop = t.actions.watch();
    await vi.advanceTimersByTimeAsync(0);
    answer = err('unauthorized', 'Only supervisors see the team’s live calls');
    await vi.advanceTimersByTimeAsync(LIVE_CALLS_REFRESH_MS);
    expect(state().error).toMatch(/^The team's live calls could not be read: /);
    expect(state().live).toMatchObject({ kind: 'list', calls: [call('c1')] });
    answer = ok({ at: AT, calls: [{ callId: 'c2' }] } as unknown as LiveCalls);
    await vi.advanceTimersByTimeAsync(LIVE_CALLS_REFRESH_MS);
    expect(state().error).toMatch(/^The team's live calls could not be read: /);
    answer = ok(listOf(call('c1'), call('c3')));
    await vi.advanceTimersByTimeAsync(LIVE_CALLS_REFRESH_MS);
    expect(state().error).toBe(null);
    expect(state().live).toMatchObject({ kind: 'list', calls: [call('c1'), call('c3')] });
    stop();
  });

  test('read nothing while the window is hidden, and once at once when it shows again', async () => {
    vi.useFakeTimers();
    const listeners = new Set<() => void>();
    const page = {
      visibilityState: 'visible' as DocumentVisibilityState,
      addEventListener: (_: 'visibilitychange', l: () => void) => void listeners.add(l),
      removeEventListener: (_: 'visibilitychange', l: () => void) => void listeners.delete(l),
    };
    const t = setUp({ getLiveCalls: () => ok(listOf()) }, { visibility: page });
    const stop = t.actions.watch();
    await vi.advanceTimersByTimeAsync(0);
    page.visibilityState = 'hidden';
    listeners.forEach((l) => l());
    await vi.advanceTimersByTimeAsync(LIVE_CALLS_REFRESH_MS * 4);
    expect(t.named('getLiveCalls')).toHaveLength(1);
    page.visibilityState = 'visible';
    listeners.forEach((l) => l());
    await vi.advanceTimersByTimeAsync(0);
    expect(t.named('getLiveCalls')).toHaveLength(2);
    stop();
    expect(listeners.size).toBe(0);
  });

  test('the names of the joined call follow the list (a colleague the call was handed to)', async () => {
    const t = setUp({ startMonitor: ({ callId, mode }) => joinReply(callId, mode), answerMonitor: () => ok(null), getLiveCalls: () => ok(listOf(call('c1', { agents: [{ id: 'a2', name: 'Ben Okafor' }] }))) });
    await t.actions.monitor('c1', PARTIES, 'listen');
    const stop = t.actions.watch();
    await flush();
    expect(state().joined?.parties.agents).toEqual(['Ben Okafor']);
    stop();
    // The panel stays on every screen once the view closes.
    expect(state().joined?.callId).toBe('c1');
  });
});

describe('joining a call', () => {
  test('"Listen": the relay\'s offer is answered with the microphone closed, the answer handed back, and only then ICE; connected once the audio flows', async () => {
    const t = setUp({ startMonitor: ({ callId, mode }) => joinReply(callId, mode), answerMonitor: () => ok(null) });
    await t.actions.monitor('c1', PARTIES, 'listen');
    expect(t.named('startMonitor')).toEqual([{ callId: 'c1', mode: 'listen' }]);
    expect(t.named('answerMonitor')).toEqual([{ callId: 'c1', legId: 'leg-1', sdp: 'v=0 answer' }]);
    expect(t.leg.log).toEqual(['answer c1 leg-1 offer-leg-1 listen', 'connect leg-1']);
    expect(state().joined).toEqual({ callId: 'c1', mode: 'listen', parties: PARTIES, stage: 'connecting', switching: null, problem: null, recording: false });
    expect(state().notes).toEqual({});
    t.leg.fact({ callId: 'c1', legId: 'leg-1', state: 'connected' });
    expect(state().joined?.stage).toBe('connected');
  });

  test('the call\'s item says the join is under way; a second press meanwhile asks nothing more', async () => {
    let release: () => void = () => undefined;
    const t = setUp({ startMonitor: ({ callId, mode }) => joinReply(callId, mode), answerMonitor: () => ok(null) });
    t.leg.answerWith(() => new Promise((resolve) => (release = () => resolve(answered))));
    const first = t.actions.monitor('c1', PARTIES, 'whisper');
    await flush();
    expect(state().notes).toEqual({ c1: { kind: 'joining' } });
    expect(state().joined).toMatchObject({ callId: 'c1', mode: 'whisper', stage: 'joining' });
    await t.actions.monitor('c1', PARTIES, 'barge');
    expect(t.named('startMonitor')).toHaveLength(1);
    release();
    await first;
    expect(state().notes).toEqual({});
    expect(state().joined).toMatchObject({ mode: 'whisper', stage: 'connecting' });
  });

  test('a refusal is said in the call\'s item in the relay\'s words; nothing is joined and no leg opened', async () => {
    const t = setUp({ startMonitor: () => err('invalid_state', 'This call does not go through the team’s bridge') });
    await t.actions.monitor('c1', PARTIES, 'listen');
    expect(state().notes).toEqual({ c1: { kind: 'refused', text: 'This call does not go through the team’s bridge' } });
    expect(state().joined).toBe(null);
    expect(t.leg.log).toEqual([]);
    expect(t.named('answerMonitor')).toEqual([]);
  });

  test('an answer the window could not make: the relay is told the supervisor leaves, and the item says why', async () => {
    const t = setUp({ startMonitor: ({ callId, mode }) => joinReply(callId, mode), leaveMonitor: () => ok(null) });
    t.leg.answerWith(async () => ({ ok: false, error: { code: 'media_failed', problem: { code: 'callMedia.micDenied' } } }));
    await t.actions.monitor('c1', PARTIES, 'barge');
    expect(t.named('leaveMonitor')).toEqual([{ callId: 'c1' }]);
    expect(t.named('answerMonitor')).toEqual([]);
    expect(state().joined).toBe(null);
    expect(state().notes.c1).toEqual({ kind: 'refused', text: 'Microphone access was denied. Allow the microphone for this app, then try again.' });
  });

  test('an answer the relay refused: the leg closes, the relay is told, the item says why', async () => {
    const t = setUp({ startMonitor: ({ callId, mode }) => joinReply(callId, mode), answerMonitor: () => err('invalid_input', 'sdp: the node refused the answer'), leaveMonitor: () => ok(null) });
    await t.actions.monitor('c1', PARTIES, 'listen');
    expect(t.leg.log).toEqual(['answer c1 leg-1 offer-leg-1 listen', 'close leg-1']);
    expect(t.named('leaveMonitor')).toEqual([{ callId: 'c1' }]);
    expect(state().joined).toBe(null);
    expect(state().notes.c1?.kind).toBe('refused');
  });

  test('joined already by a window that went (a reload): the relay is told to let that leg go, and a new one is asked for', async () => {
    let joins = 0;
    const t = setUp({
      startMonitor: ({ callId, mode }) => (++joins === 1 ? ok({ callId, mode }) : joinReply(callId, mode, 'leg-2')),
      leaveMonitor: () => ok(null),
      answerMonitor: () => ok(null),
    });
    await t.actions.monitor('c1', PARTIES, 'listen');
    expect(t.host.calls.map((c) => c.name)).toEqual(['startMonitor', 'leaveMonitor', 'startMonitor', 'answerMonitor']);
    expect(t.leg.log).toEqual(['answer c1 leg-2 offer-leg-2 listen', 'connect leg-2']);
    expect(state().joined?.stage).toBe('connecting');
  });

  test('another call: the joined call\'s leg closes before the new one is asked for', async () => {
    const t = setUp({ startMonitor: ({ callId, mode }) => joinReply(callId, mode, `leg-${callId}`), answerMonitor: () => ok(null) });
    await t.actions.monitor('c1', PARTIES, 'listen');
    await t.actions.monitor('c2', { ...PARTIES, agents: ['Jonas Berg'] }, 'whisper');
    expect(t.leg.log).toEqual(['answer c1 leg-c1 offer-leg-c1 listen', 'connect leg-c1', 'close leg-c1', 'answer c2 leg-c2 offer-leg-c2 whisper', 'connect leg-c2']);
    expect(state().joined).toMatchObject({ callId: 'c2', mode: 'whisper', parties: { agents: ['Jonas Berg'] } });
  });

  test('"Leave" while the offer is being answered: the new leg closes, the relay is told, nothing stays joined', async () => {
    let release: () => void = () => undefined;
    const t = setUp({ startMonitor: ({ callId, mode }) => joinReply(callId, mode), answerMonitor: () => ok(null), leaveMonitor: () => ok(null) });
    t.leg.answerWith(() => new Promise((resolve) => (release = () => resolve(answered))));
    const joining = t.actions.monitor('c1', PARTIES, 'listen');
    await flush();
    await t.actions.leave();
    release();
    await joining;
    expect(t.named('answerMonitor')).toEqual([]);
    expect(t.named('leaveMonitor').length).toBeGreaterThanOrEqual(1);
    expect(t.leg.log).toEqual(['answer c1 leg-1 offer-leg-1 listen', 'close leg-1']);
    expect(state().joined).toBe(null);
    expect(state().notes).toEqual({});
  });
});

describe('the joined call', () => {
  /** Joined to c1 in "Listen" (the relay's first answer: a leg); later asks are switches, answered by `switchTo` (the mode, by default). */
  async function joined(switchTo: NonNullable<Answers['startMonitor']> = ({ callId, mode }) => ok({ callId, mode })) {
    let joins = 0;
    const t = setUp({ startMonitor: (params) => (++joins === 1 ? joinReply(params.callId, params.mode) : switchTo(params)), answerMonitor: () => ok(null), leaveMonitor: () => ok(null) });
    await t.actions.monitor('c1', PARTIES, 'listen');
    t.leg.log.splice(0);
    t.host.calls.splice(0);
    return t;
  }

  test('"Whisper" and "Barge" switch without a new leg: the microphone opens once the relay confirms', async () => {
    const t = await joined();
    await t.actions.monitor('c1', PARTIES, 'whisper');
    expect(t.named('startMonitor')).toEqual([{ callId: 'c1', mode: 'whisper' }]);
    expect(t.leg.log).toEqual(['mode whisper']);
    expect(state().joined).toMatchObject({ mode: 'whisper', switching: null });
    await t.actions.monitor('c1', PARTIES, 'barge');
    expect(t.leg.log).toEqual(['mode whisper', 'mode barge']);
    expect(state().joined?.mode).toBe('barge');
    // The mode it is in already: nothing asked.
    await t.actions.monitor('c1', PARTIES, 'barge');
    expect(t.named('startMonitor')).toHaveLength(2);
    expect(t.named('answerMonitor')).toEqual([]);
  });

  test('back to "Listen": the microphone closes at once, before the relay\'s word; a refused switch opens it again as the mode in force has it', async () => {
    let refuse = false;
    const t = await joined(({ callId, mode }) => (refuse ? err('not_found', 'Not joined to that call') : ok({ callId, mode })));
    await t.actions.monitor('c1', PARTIES, 'barge');
    t.leg.log.splice(0);
    refuse = true;
    await t.actions.monitor('c1', PARTIES, 'listen');
    expect(t.leg.log).toEqual(['mode listen', 'mode barge']);
    expect(state().joined).toMatchObject({ mode: 'barge', switching: null, problem: 'The mode could not be changed: Not joined to that call' });
  });

  test('"Leave": the leg and the microphone go at once, then the relay is told; the call goes on without the supervisor', async () => {
    const t = await joined();
    await t.actions.leave();
    expect(t.leg.log).toEqual(['close leg-1']);
    expect(t.named('leaveMonitor')).toEqual([{ callId: 'c1' }]);
    expect(state().joined).toBe(null);
    expect(state().notice).toBe(null);
  });

  test('the relay\'s word: the call ended under the supervisor, or took it out; a mode it says is followed; another call\'s word is not this one\'s', async () => {
    const t = await joined();
    const push = (change: MonitorChange) => t.host.push('monitorChanged', change);
    push({ callId: 'c9', mode: 'left', reason: 'call_ended' });
    expect(state().joined?.callId).toBe('c1');
    push({ callId: 'c1', mode: 'barge' });
    expect(t.leg.log).toEqual(['mode barge']);
    expect(state().joined?.mode).toBe('barge');
    t.host.push('monitorChanged', { callId: 'c1', mode: 'sing' });
    expect(state().joined?.mode).toBe('barge');
    push({ callId: 'c1', mode: 'left', reason: 'call_ended' });
    expect(t.leg.log).toEqual(['mode barge', 'close leg-1']);
    expect(state().joined).toBe(null);
    expect(state().notice).toBe('The call you joined has ended.');
    expect(t.named('leaveMonitor')).toEqual([]);

    const again = await joined();
    again.host.push('monitorChanged', { callId: 'c1', mode: 'left', reason: 'left' });
    expect(state().notice).toBe('You are no longer in the call you joined.');
  });

  test('the relay\'s word that it records, or no longer: kept on the joined call; the mode said with it, the one in force, touches no microphone', async () => {
    const t = await joined();
    const push = (change: MonitorChange) => t.host.push('monitorChanged', change);
    push({ callId: 'c9', mode: 'listen', recording: true });
    expect(state().joined?.recording).toBe(false);
    push({ callId: 'c1', mode: 'listen', recording: true });
    expect(state().joined).toMatchObject({ mode: 'listen', recording: true });
    expect(t.leg.log).toEqual([]);

    // Whisper, then back to Listen before the relay confirms: the microphone closed at once stays
    // closed when the recording's word comes with the mode still in force.
    await t.actions.monitor('c1', PARTIES, 'whisper');
    t.leg.log.splice(0);
    const listen = t.actions.monitor('c1', PARTIES, 'listen');
    push({ callId: 'c1', mode: 'whisper', recording: false });
    expect(t.leg.log).toEqual(['mode listen']);
    expect(state().joined).toMatchObject({ mode: 'whisper', switching: 'listen', recording: false });
    await listen;
    expect(state().joined).toMatchObject({ mode: 'listen', switching: null, recording: false });
    // A mode the relay says with it is followed, as any.
    push({ callId: 'c1', mode: 'barge', recording: true });
    expect(t.leg.log).toEqual(['mode listen', 'mode listen', 'mode barge']);
    expect(state().joined).toMatchObject({ mode: 'barge', recording: true });

    // Another join starts from what its relay will say.
    await t.actions.leave();
    t.stop();
    const next = setUp({ startMonitor: ({ callId, mode }) => joinReply(callId, mode, 'leg-2'), answerMonitor: () => ok(null) });
    await next.actions.monitor('c2', PARTIES, 'listen');
    expect(state().joined).toMatchObject({ callId: 'c2', recording: false });
  });

  test('its audio failed: the supervisor leaves it, told why', async () => {
    const t = await joined();
    t.leg.fact({ callId: 'c1', legId: 'leg-1', state: 'failed', reason: { code: 'callMedia.iceFailed' } });
    await flush();
    expect(t.leg.log).toEqual(['close leg-1']);
    expect(t.named('leaveMonitor')).toEqual([{ callId: 'c1' }]);
    expect(state().joined).toBe(null);
    expect(state().notice).toMatch(/^The joined call's audio failed, so you left the call: No network path/);
    // A later join clears the words.
    await t.actions.monitor('c2', PARTIES, 'listen');
    expect(state().notice).toBe(null);
  });

  test('the window going (the domain stopped) closes the leg', async () => {
    const t = await joined();
    t.stop();
    expect(t.leg.log).toEqual(['close leg-1']);
    expect(t.host.listeners('monitorChanged')).toBe(0);
  });
});

describe('a window without media', () => {
  test('joins nothing and says why', async () => {
    const host = fakeApi({ startMonitor: ({ callId, mode }) => joinReply(callId, mode) });
    const actions = new MonitorActions({ api: host.api, store: supervisionStore });
    await actions.monitor('c1', PARTIES, 'listen');
    expect(host.calls).toEqual([]);
    expect(state().notes.c1).toEqual({ kind: 'refused', text: 'This window cannot play or capture audio, so it cannot join a call.' });
  });
});
