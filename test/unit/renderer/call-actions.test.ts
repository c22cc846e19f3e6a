// The calls domain is the one owner of call commands in the renderer: one command per click, the
// media engine only asked for media. The engine here is a recording double (no media is made in
// unit tests; the real engine runs end to end in Chromium); the API is the in-memory fake host.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CallActions, type MediaControls } from '../../../renderer/app/call-actions';
import { mutedShown } from '../../../renderer/app/mute-wishes';
import { appStore, resetStore } from '../../../renderer/store/store';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import type { MediaFact } from '../../../renderer/webrtc/call-media';
import type { CallQualityRecord, MediaCondition } from '../../../renderer/webrtc/media-health';
import { NETWORK_LOST_REASON } from '../../../renderer/webrtc/media-health';
import { mediaFailure, mediaProblem, type MediaOutcome, type MediaText } from '../../../renderer/webrtc/media-text';
import { callQualityStore, resetCallQualityStore } from '../../../renderer/store/call-quality';
import type { CallRejoin, CallState } from '../../../shared/call-state';
import { err, ok, type Result } from '../../../shared/result';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { fakeApi, type Answers } from './fake-api';
import { TEAM, accountSettings, active, bridgedActive, connecting, ended, ringing, transferOf, transferRinging } from './fixtures';

const prepared = (sdp: string): MediaOutcome<{ sdp: string }> => ({ ok: true, value: { sdp } });

function recordingEngine(options: { answer?: MediaOutcome<{ sdp: string }>; offer?: MediaOutcome<{ sdp: string }>; rejoinAnswer?: MediaOutcome<{ sdp: string }>; rejoinAnswers?: MediaOutcome<{ sdp: string }>[]; ringLegs?: Array<{ sdp: string; legId?: string; warm: boolean } | undefined>; ownLeg?: boolean } = {}) {
  const log: string[] = [];
  const facts = new Set<(fact: MediaFact) => void>();
  const notices = new Set<(notice: { localId: string; text: MediaText }) => void>();
  const conditions = new Set<(condition: MediaCondition) => void>();
  const qualities = new Set<(record: CallQualityRecord) => void>();
  const engine: MediaControls = {
    onCall: (call) => void log.push(`onCall ${call.localId} ${call.phase}`),
    reconcile: () => undefined,
    answerFor: async (call) => {
      log.push(`answerFor ${call.localId}`);
      return options.answer ?? prepared(ANSWER_SDP);
    },
    rejoinAnswerFor: async (call, again) => {
      log.push(`rejoinAnswerFor ${call.localId}${again === true ? ' again' : ''}`);
      return options.rejoinAnswers?.shift() ?? options.rejoinAnswer ?? prepared(ANSWER_SDP);
    },
    closeRejoinLeg: (localId, legId) => void log.push(`closeRejoinLeg ${localId} ${legId}`),
    // The ring's leg as the engine has it, in turn (the ring's own, then the window's own leg's).
    ringLegOf: async (localId) => {
      log.push(`ringLegOf ${localId}`);
      return options.ringLegs?.shift();
    },
    answerRingLegAgain: (call, own) => {
      log.push(`answerRingLegAgain ${call.localId}${own ? ` ${own.legId} ${own.offerSdp === OFFER_SDP ? 'offer' : own.offerSdp}` : ''}`);
      return options.ownLeg ?? true;
    },
    warmRingLeg: (localId, sdp) => void log.push(`warmRingLeg ${localId} ${sdp}`),
    prepareOutgoing: async (localId) => {
      log.push(`prepareOutgoing ${localId}`);
      return options.offer ?? prepared(DIAL_OFFER_SDP);
    },
    onFact: (listener) => {
      facts.add(listener);
      return () => facts.delete(listener);
    },
    onCondition: (listener) => {
      conditions.add(listener);
      return () => conditions.delete(listener);
    },
    onCallQuality: (listener) => {
      qualities.add(listener);
      return () => qualities.delete(listener);
    },
    onNotice: (listener) => {
      notices.add(listener);
      return () => notices.delete(listener);
    },
    noteTiming: () => undefined,
    close: (localId) => void log.push(`close ${localId}`),
    closeAll: () => void log.push('closeAll'),
    sendDtmf: () => true,
    has: () => false,
    levels: async () => ({ mic: 0, customer: 0 }),
    customerLegQuality: (localId, report) => void log.push(`customerLegQuality ${localId} ${report.packetsLost}/${report.packetsReceived}`),
  };
  return {
    engine,
    log,
    fact: (f: MediaFact) => facts.forEach((l) => l(f)),
    condition: (c: MediaCondition) => conditions.forEach((l) => l(c)),
    quality: (r: CallQualityRecord) => qualities.forEach((l) => l(r)),
    notice: (n: { localId: string; text: MediaText }) => notices.forEach((l) => l(n)),
  };
}

function setUp(answers: Answers, engineOptions: Parameters<typeof recordingEngine>[0] = {}) {
  const host = fakeApi(answers);
  const media = recordingEngine(engineOptions);
  const actions = new CallActions({ api: host.api, store: appStore, engine: media.engine });
  stops.push(actions.start());
  return { ...host, ...media, actions };
}

const stops: Array<() => void> = [];
const state = () => appStore.getState();
const withRinging = (call: CallState = ringing('wacid.1')) => state().applyCall(call);

/** Work queued for after the render, run by the test when it chooses. */
function manualAfterRender() {
  const queued: Array<() => void> = [];
  return { afterRender: (work: () => void) => void queued.push(work), runQueued: () => queued.splice(0).forEach((w) => w()) };
}

function setUpRinging(answers: Answers = {}, engineOptions: Parameters<typeof recordingEngine>[0] = {}) {
  const host = fakeApi(answers);
  const media = recordingEngine(engineOptions);
  const sound: string[] = [];
  const later = manualAfterRender();
  const actions = new CallActions({
    api: host.api,
    store: appStore,
    engine: media.engine,
    ringtone: { start: () => void sound.push('start'), stop: () => void sound.push('stop') },
    afterRender: later.afterRender,
  });
  const stop = actions.start();
  stops.push(stop);
  expect(sound.splice(0)).toEqual(['stop']); // nothing rings at the start
  const push = (call: CallState) => actions.callChanged(state().applyCall(call));
  return { ...media, ...later, sound, push, stop, actions, calls: host.calls };
}

describe('the ring and Answer', () => {
  beforeEach(() => resetStore());
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it('Answer silences the ring at the click; an answer that cannot be made rings again', async () => {
    const t = setUpRinging({}, { answer: mediaFailure('media_failed', mediaProblem('micDenied')) });
    t.push(ringing('wacid.5'));
    t.runQueued();
    t.sound.splice(0);
    await t.actions.answer('in:wacid.5');
    expect(t.sound).toEqual(['stop', 'start']);
  });

  it('a refused answerCall rings again while the call still rings', async () => {
    const t = setUpRinging({ answerCall: () => err('gateway_error', 'Try again') });
    t.push(ringing('wacid.6'));
    t.runQueued();
    t.sound.splice(0);
    await t.actions.answer('in:wacid.6');
    expect(t.sound).toEqual(['stop', 'start']);
  });

  it('a successful answer stays silent', async () => {
    const t = setUpRinging({ answerCall: () => ok(null) });
    t.push(ringing('wacid.7'));
    t.runQueued();
    t.sound.splice(0);
    await t.actions.answer('in:wacid.7');
    expect(t.sound).toEqual(['stop']);
  });
});

describe('a bridged ring: its leg connects ahead of the click', () => {
  beforeEach(() => resetStore());
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
  };
  const bridgedRing = (id = 'wacid.1') => ({ ...ringing(id), bridged: true as const });
  const OWN_OFFER = 'v=0\r\no=own-leg\r\n';
  const ringSteps = (log: string[]) => log.filter((l) => !l.startsWith('onCall'));
  const made = (sdp = ANSWER_SDP, more: { legId?: string; warm?: boolean } = {}) => ({ sdp, warm: false, ...more });

  it('the answer made while it rings goes to the bridge, and ICE may run once the bridge took it; a later push sends nothing again', async () => {
    const t = setUpRinging({ ringAnswer: () => ok({ connected: true }) }, { ringLegs: [made()] });
    t.push(bridgedRing());
    t.runQueued();
    await settle();
    t.push(bridgedRing());
    t.runQueued();
    await settle();
    expect(t.calls).toEqual([{ name: 'ringAnswer', params: { localId: 'in:wacid.1', sdp: ANSWER_SDP } }]);
    expect(ringSteps(t.log)).toEqual(['ringLegOf in:wacid.1', `warmRingLeg in:wacid.1 ${ANSWER_SDP}`]);
  });

  it('another window took the ring\'s leg: this window answers a leg of its own and connects that one', async () => {
    let asked = 0;
    const t = setUpRinging(
      { ringAnswer: () => (++asked === 1 ? ok({ connected: false, legId: 'leg-own', offer: OWN_OFFER }) : ok({ connected: true })) },
      { ringLegs: [made(), made('own answer', { legId: 'leg-own' })] },
    );
    t.push(bridgedRing());
    t.runQueued();
    await settle();
    expect(t.calls.map((c) => c.params)).toEqual([
      { localId: 'in:wacid.1', sdp: ANSWER_SDP },
      { localId: 'in:wacid.1', sdp: 'own answer', legId: 'leg-own' },
    ]);
    expect(ringSteps(t.log)).toEqual(['ringLegOf in:wacid.1', `answerRingLegAgain in:wacid.1 leg-own ${OWN_OFFER}`, 'ringLegOf in:wacid.1', 'warmRingLeg in:wacid.1 own answer']);
  });

  it('a leg of its own that Answer came before is not answered', async () => {
    const t = setUpRinging({ ringAnswer: () => ok({ connected: false, legId: 'leg-own', offer: OWN_OFFER }) }, { ringLegs: [made()], ownLeg: false });
    t.push(bridgedRing());
    t.runQueued();
    await settle();
    expect(t.calls).toHaveLength(1);
    expect(ringSteps(t.log)).toEqual(['ringLegOf in:wacid.1', `answerRingLegAgain in:wacid.1 leg-own ${OWN_OFFER}`]);
  });

  it('a refusal, or no answer made, leaves the leg to connect at Answer', async () => {
    const t = setUpRinging({ ringAnswer: () => err('invalid_state', 'no ringing leg') }, { ringLegs: [made(), undefined] });
    t.push(bridgedRing('wacid.2'));
    t.push(bridgedRing('wacid.3'));
    t.runQueued();
    await settle();
    expect(t.calls.map((c) => c.params)).toEqual([{ localId: 'in:wacid.2', sdp: ANSWER_SDP }]);
    expect(ringSteps(t.log)).toEqual(['ringLegOf in:wacid.2', 'ringLegOf in:wacid.3']);
  });

  it('Answer waits for the leg\'s connection under way, then hands over the answer the leg took', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The relay's word on the ring answer comes only when the test says (the fake API awaits what an answer returns).
    const slowRingAnswer = (() => gate.then(() => ok({ connected: true }))) as unknown as NonNullable<Answers['ringAnswer']>;
    const t = setUpRinging({ ringAnswer: slowRingAnswer, answerCall: () => ok(null) }, { ringLegs: [made(), made(ANSWER_SDP, { warm: true })] });
    t.push(bridgedRing());
    t.runQueued();
    await settle();
    const answering = t.actions.answer('in:wacid.1');
    await settle();
    expect(t.log).not.toContain('answerFor in:wacid.1');
    release();
    await answering;
    expect(ringSteps(t.log)).toEqual(['ringLegOf in:wacid.1', `warmRingLeg in:wacid.1 ${ANSWER_SDP}`, 'ringLegOf in:wacid.1', 'answerFor in:wacid.1']);
    expect(t.calls.map((c) => c.name)).toEqual(['ringAnswer', 'answerCall']);
  });

  it('Answer on a leg that failed while it rang answers it afresh and connects it before handing the answer over', async () => {
    let asked = 0;
    const t = setUpRinging(
      { ringAnswer: () => (++asked === 1 ? ok({ connected: false, legId: 'leg-own', offer: OWN_OFFER }) : ok({ connected: true })), answerCall: () => ok(null) },
      { ringLegs: [undefined, made('fresh answer'), made('own answer', { legId: 'leg-own' })] },
    );
    state().applyCall(bridgedRing());
    await t.actions.answer('in:wacid.1');
    expect(ringSteps(t.log)).toEqual([
      'ringLegOf in:wacid.1',
      'answerRingLegAgain in:wacid.1',
      'ringLegOf in:wacid.1',
      `answerRingLegAgain in:wacid.1 leg-own ${OWN_OFFER}`,
      'ringLegOf in:wacid.1',
      'warmRingLeg in:wacid.1 own answer',
      'answerFor in:wacid.1',
    ]);
  });

  it('a ring a snapshot brings (a window opened or reloaded while it rings) connects ahead too', async () => {
    const t = setUpRinging({ ringAnswer: () => ok({ connected: true }) }, { ringLegs: [made()] });
    state().applyCall(bridgedRing());
    t.actions.callsReloaded([bridgedRing(), ringing('wacid.5')]);
    await settle();
    expect(t.calls).toEqual([{ name: 'ringAnswer', params: { localId: 'in:wacid.1', sdp: ANSWER_SDP } }]);
    expect(ringSteps(t.log)).toEqual(['ringLegOf in:wacid.1', `warmRingLeg in:wacid.1 ${ANSWER_SDP}`]);
  });

  it('a direct ring and a colleague\'s transfer ring send nothing ahead', async () => {
    const t = setUpRinging({ ringAnswer: () => ok({ connected: true }) }, { ringLegs: [made(), made()] });
    t.push(ringing('wacid.4'));
    t.push(transferRinging('transfer'));
    t.runQueued();
    await settle();
    expect(t.calls).toEqual([]);
    expect(ringSteps(t.log)).toEqual([]);
  });
});

describe('a ring is shown before anything else starts', () => {
  beforeEach(() => resetStore());
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it('the media preparation and the ringtone start after the render, for the call as it is then', () => {
    const t = setUpRinging();
    t.push(ringing('wacid.1'));
    expect(t.log).toEqual([]);
    expect(t.sound).toEqual([]);
    t.runQueued();
    expect(t.log).toEqual(['onCall in:wacid.1 ringing']);
    expect(t.sound).toEqual(['start']);
  });

  it('a call that ended before the render is neither prepared nor rung; the ringtone stops at once', () => {
    const t = setUpRinging();
    t.push(ringing('wacid.2'));
    t.push(ended('wacid.2'));
    expect(t.sound).toEqual(['stop']);
    t.runQueued();
    expect(t.log).toEqual(['onCall in:wacid.2 ended']);
    expect(t.sound).toEqual(['stop']);
  });

  it('after the render the microphone and the answer come first, then the ringtone, in one task for all rings', () => {
    const media = recordingEngine();
    const later = manualAfterRender();
    const queuedTasks: number[] = [];
    const actions = new CallActions({
      api: fakeApi({}).api,
      store: appStore,
      engine: media.engine,
      ringtone: { start: () => void media.log.push('ringtone start'), stop: () => undefined },
      afterRender: (work) => {
        queuedTasks.push(1);
        later.afterRender(work);
      },
    });
    stops.push(actions.start());
    actions.callChanged(state().applyCall(ringing('wacid.8')));
    actions.callChanged(state().applyCall(ringing('wacid.9')));
    expect(queuedTasks).toHaveLength(1);
    later.runQueued();
    expect(media.log).toEqual(['onCall in:wacid.8 ringing', 'onCall in:wacid.9 ringing', 'ringtone start']);
    // A later ring queues a task of its own.
    actions.callChanged(state().applyCall(ringing('wacid.10')));
    expect(queuedTasks).toHaveLength(2);
  });

  it('calls that are not ringing reach the media engine at once', () => {
    const t = setUpRinging();
    t.push(ended('wacid.3'));
    expect(t.log).toEqual(['onCall in:wacid.3 ended']);
  });

  it('nothing queued runs once the calls domain is stopped', () => {
    const t = setUpRinging();
    t.push(ringing('wacid.4'));
    t.stop();
    t.runQueued();
    expect(t.log).toEqual(['closeAll']);
    expect(t.sound).toEqual(['stop']);
  });
});

describe('CallActions', () => {
  beforeEach(() => resetStore());
  afterEach(async () => {
    for (const stop of stops.splice(0)) stop();
    await setUiLanguage('en', undefined);
  });

  it('Answer is one command carrying the prepared answer; ICE starts only when the call is pushed in connecting', async () => {
    const t = setUp({ answerCall: () => ok(null) });
    withRinging();
    await t.actions.answer('in:wacid.1');
    expect(t.calls).toEqual([{ name: 'answerCall', params: { localId: 'in:wacid.1', sdp: ANSWER_SDP } }]);
    // The reply starts nothing: the media follows the call the main process pushes.
    expect(t.log).toEqual(['answerFor in:wacid.1']);
    t.actions.callChanged(state().applyCall(connecting('wacid.1')));
    expect(t.log).toEqual(['answerFor in:wacid.1', 'onCall in:wacid.1 connecting']);
  });

  it('a colleague who won the claim: the media is released without a word (the outcome says it)', async () => {
    const t = setUp({ answerCall: () => err('answered_elsewhere', 'Answered by another agent') });
    withRinging();
    await t.actions.answer('in:wacid.1');
    expect(t.log).toEqual(['answerFor in:wacid.1', 'close in:wacid.1']);
    expect(state().callNotice).toBeNull();
  });

  it('a refused answer is shown on the call, and ICE never starts', async () => {
    const t = setUp({ answerCall: () => err('gateway_error', 'Invalid parameter', { gatewayCode: 100 }) });
    withRinging();
    await t.actions.answer('in:wacid.1');
    expect(t.log).toEqual(['answerFor in:wacid.1', 'close in:wacid.1']);
    expect(state().callNotice).toMatchObject({ localId: 'in:wacid.1' });
  });

  it('sends no command when there is no answer to send (the microphone was refused): the call rings on', async () => {
    const t = setUp({ answerCall: () => ok(null) }, { answer: mediaFailure('media_failed', mediaProblem('micDenied')) });
    withRinging();
    await t.actions.answer('in:wacid.1');
    expect(t.calls).toEqual([]);
    expect(t.log).toEqual(['answerFor in:wacid.1']);
  });

  it('answers only a ringing call', async () => {
    const t = setUp({ answerCall: () => ok(null) });
    await t.actions.answer('in:nope');
    state().applyCall({ ...ringing('wacid.2'), phase: 'answering', answeredAt: 1 });
    await t.actions.answer('in:wacid.2');
    expect(t.calls).toEqual([]);
  });

  it('Call checks the number before any media, then places the call with one command carrying the offer', async () => {
    const t = setUp({ startCall: ({ localId }) => ok({ localId, to: '447400123456', callId: 'wacid.out-1' }) });
    state().setSettings(accountSettings);
    state().setDialInput('12ab');
    await t.actions.dial();
    expect(t.log).toEqual([]);
    expect(t.calls).toEqual([]);
    expect(state().dialError).not.toBeNull();

    state().setDialInput('+44 7400 123456');
    await t.actions.dial();
    expect(t.calls).toHaveLength(1);
    const sent = t.calls[0]!;
    expect(sent.name).toBe('startCall');
    const params = sent.params as { localId: string; to: string; sdp: string };
    expect(params).toEqual({ localId: expect.stringMatching(/^out:[0-9a-f-]{36}$/), to: '+44 7400 123456', sdp: DIAL_OFFER_SDP });
    expect(t.log).toEqual([`prepareOutgoing ${params.localId}`]);
    expect(state().dialError).toBeNull();
    expect(state().dialBusy).toBe(false);
  });

  it('releases the media of a call the gateway refused, and says why', async () => {
    const t = setUp({ startCall: () => err('no_call_permission', 'No approved call permission from the recipient', { gatewayCode: 138006 }) });
    state().setDialInput('+44 7400 123456');
    await t.actions.dial();
    const { localId } = t.calls[0]!.params as { localId: string };
    expect(t.log).toEqual([`prepareOutgoing ${localId}`, `close ${localId}`]);
    expect(state().dialError).not.toBeNull();
  });

  it('reports the media facts to the main process, the reason in English and as its code and values', async () => {
    const t = setUp({ reportMedia: () => ok(null) });
    // Whatever language the window speaks: the reason's words are for whichever window shows the call later.
    await setUiLanguage('es', undefined);
    const micLost = mediaProblem('micLost', { problem: mediaProblem('micUnavailable', { problem: 'x'.repeat(600) }) });
    t.fact({ localId: 'in:wacid.1', state: 'connected' });
    t.fact({ localId: 'in:wacid.1', state: 'failed', reason: mediaProblem('networkLost') });
    t.fact({ localId: 'in:wacid.2', state: 'failed', reason: micLost });
    t.fact({ localId: 'in:wacid.3', state: 'failed', reason: 'The host could not be reached' });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(t.calls.slice(0, 2)).toEqual([
      { name: 'reportMedia', params: { localId: 'in:wacid.1', state: 'connected' } },
      { name: 'reportMedia', params: { localId: 'in:wacid.1', state: 'failed', reason: NETWORK_LOST_REASON, reasonText: mediaProblem('networkLost') } },
    ]);
    // A reason said inside another is worded too; its English is kept to 500 characters, its text whole.
    const long = t.calls[2]!.params as { reason: string; reasonText: unknown };
    expect(long.reason).toHaveLength(500);
    expect(long.reason.startsWith('The microphone stopped and could not be opened again: The microphone is not available (xxx')).toBe(true);
    expect(long.reasonText).toEqual(micLost);
    // Words another part gave go as they came, with no code.
    expect(t.calls[3]).toEqual({ name: 'reportMedia', params: { localId: 'in:wacid.3', state: 'failed', reason: 'The host could not be reached' } });
  });

  it('shows the engine\'s notices on the call, in words', () => {
    const t = setUp({});
    t.notice({ localId: 'in:wacid.1', text: mediaProblem('micNotSwitched', { problem: mediaProblem('micBusy') }) });
    expect(state().callNotice).toEqual({
      localId: 'in:wacid.1',
      text: 'The microphone could not be switched: The microphone cannot be opened: another application may be using it.',
    });
    // Words another part already worded are shown as they came.
    t.notice({ localId: 'in:wacid.1', text: 'The network settings could not be read (The host could not be reached).' });
    expect(state().callNotice?.text).toBe('The network settings could not be read (The host could not be reached).');
  });

  it('an offer that cannot be made is said under the dialer, and nothing is placed', async () => {
    const t = setUp({}, { offer: mediaFailure('media_failed', mediaProblem('noRelay')) });
    state().setDialInput('+44 7400 123456');
    await t.actions.dial();
    expect(t.calls).toEqual([]);
    expect(state().dialError).toBe(
      '"Relay only" is on, but no TURN server gave this call a relay address. Check the TURN servers and their username and password in Settings → Network.',
    );
  });

  it('shows each call\'s "Reconnecting…", MOS and warnings, and hands its quality to the main process as its media closes', async () => {
    resetCallQualityStore();
    const t = setUp({ reportQuality: () => ok(null) });
    let live = true;
    t.engine.has = () => live;
    // The engine's figure is kept as the words round it (6.24 % reads "6.2 %"); its English text is for logs.
    const warning = { kind: 'high-packet-loss' as const, value: 6.2 };
    t.condition({ localId: 'in:wacid.1', reconnecting: false, mos: 3.2, warnings: [{ kind: 'high-packet-loss', value: 6.24, text: 'Poor connection: 6.2 % packet loss' }] });
    expect(callQualityStore.getState().byCall['in:wacid.1']).toEqual({ reconnecting: false, mos: 3.2, warnings: [warning] });
    // A figure that reads the same changes nothing on screen: the view stays the same object.
    const shown = callQualityStore.getState().byCall['in:wacid.1'];
    t.condition({ localId: 'in:wacid.1', reconnecting: false, mos: 3.2, warnings: [{ kind: 'high-packet-loss', value: 6.21, text: 'Poor connection: 6.2 % packet loss' }] });
    expect(callQualityStore.getState().byCall['in:wacid.1']).toBe(shown);
    // A change of the media alone (no statistics read yet) keeps the warnings it had.
    t.condition({ localId: 'in:wacid.1', reconnecting: true, since: 10 });
    expect(callQualityStore.getState().byCall['in:wacid.1']).toEqual({ reconnecting: true, warnings: [warning] });
    const record = {
      localId: 'in:wacid.1',
      summary: { samples: 3, avgMos: 3.2, worstMos: 3.1, worstLossPercent: 6, warningsSeen: ['high-packet-loss' as const] },
      samples: [],
    };
    t.quality(record);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(callQualityStore.getState().byCall['in:wacid.1']).toBeUndefined();
    expect(t.calls).toEqual([{ name: 'reportQuality', params: record }]);
    // The last word of media that has closed (it never connected long enough for a summary) shows nothing.
    t.condition({ localId: 'in:wacid.2', reconnecting: true, since: 1 });
    expect(callQualityStore.getState().byCall['in:wacid.2']).toBeDefined();
    live = false;
    t.condition({ localId: 'in:wacid.2', reconnecting: false });
    expect(callQualityStore.getState().byCall['in:wacid.2']).toBeUndefined();
  });

  it('a bridged call shows whose connection each warning is about, and hands the customer leg’s reports to the call’s media', () => {
    resetCallQualityStore();
    const t = setUp({});
    t.engine.has = () => true;
    t.condition({
      localId: 'in:wacid.1',
      reconnecting: false,
      mos: 3.1,
      warnings: [
        { kind: 'high-packet-loss', value: 2.04, text: 'Poor connection: 2 % packet loss' },
        { kind: 'high-packet-loss', value: 12.4, text: 'The customer’s connection is poor: 12 % packet loss', leg: 'customer' },
      ],
    });
    expect(callQualityStore.getState().byCall['in:wacid.1']?.warnings).toEqual([
      { kind: 'high-packet-loss', value: 2 },
      { kind: 'high-packet-loss', value: 12, leg: 'customer' },
    ]);
    // The same figures whose leg changed are a change on screen.
    const shown = callQualityStore.getState().byCall['in:wacid.1'];
    t.condition({ localId: 'in:wacid.1', reconnecting: false, mos: 3.1, warnings: [{ kind: 'high-packet-loss', value: 2.04, text: '…', leg: 'customer' }, { kind: 'high-packet-loss', value: 12.4, text: '…' }] });
    expect(callQualityStore.getState().byCall['in:wacid.1']).not.toBe(shown);

    t.actions.customerLegQuality({ localId: 'in:wacid.1', callId: 'wacid.1', report: { state: 'connected', packetsReceived: 440, packetsLost: 60 } });
    expect(t.log).toEqual(['customerLegQuality in:wacid.1 60/440']);
  });

  it('Hang up releases the media at once and sends one hangUp', async () => {
    const t = setUp({ hangUp: () => ok(null) });
    await t.actions.hangUp('in:wacid.1');
    expect(t.calls).toEqual([{ name: 'hangUp', params: { localId: 'in:wacid.1' } }]);
    expect(t.log).toEqual(['close in:wacid.1']);
  });
});

// London's 020 5 range is not allocated: the numbering-plan metadata knows its length, lists no number.
const UNLISTED_TYPED = '020 5946 0958';
const UNLISTED = '442059460958';
const UNLISTED_WARNING = 'Phone number: +44 20 5946 0958 is not listed as a valid number for its country. Check it, or call anyway.';

describe('CallActions: numbers the metadata does not list', () => {
  beforeEach(() => {
    resetStore();
    state().setSettings(accountSettings); // default country GB
  });
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  const placed = ({ localId }: { localId: string }) => ok({ localId, to: UNLISTED, callId: 'wacid.out-unlisted' });

  it('Call warns instead of calling: no microphone, no command, the number stays as typed', async () => {
    const t = setUp({ startCall: placed });
    t.actions.setDialInput(UNLISTED_TYPED);
    await t.actions.dial();
    expect(t.calls).toEqual([]);
    expect(t.log).toEqual([]);
    expect(state().dialWarning).toBe(UNLISTED_WARNING);
    expect(state().dialError).toBeNull();
    expect(state().dialInput).toBe(UNLISTED_TYPED);
    // Call again on the same number: still only the warning.
    await t.actions.dial();
    expect(t.calls).toEqual([]);
  });

  it('Call anyway places the call with anyway: true, as typed, and the warning goes', async () => {
    const t = setUp({ startCall: placed });
    t.actions.setDialInput(UNLISTED_TYPED);
    await t.actions.dial();
    await t.actions.dial({ anyway: true });
    expect(t.calls).toHaveLength(1);
    const params = t.calls[0]!.params as { localId: string };
    expect(t.calls[0]).toEqual({ name: 'startCall', params: { localId: expect.stringMatching(/^out:/), to: UNLISTED_TYPED, sdp: DIAL_OFFER_SDP, anyway: true } });
    expect(t.log).toEqual([`prepareOutgoing ${params.localId}`]);
    expect(state().dialWarning).toBeNull();
    expect(state().dialError).toBeNull();
  });

  it('editing the number clears the warning and keeps what is typed', async () => {
    const t = setUp({});
    t.actions.setDialInput(UNLISTED_TYPED);
    await t.actions.dial();
    expect(state().dialWarning).not.toBeNull();
    t.actions.setDialInput(`${UNLISTED_TYPED}1`);
    expect(state().dialWarning).toBeNull();
    expect(state().dialInput).toBe(`${UNLISTED_TYPED}1`);
  });

  it('a number of the wrong length is an error, not a warning, and replaces a warning shown', async () => {
    const t = setUp({});
    t.actions.setDialInput(UNLISTED_TYPED);
    await t.actions.dial();
    state().setDialInput('020 59');
    state().setDialWarning(UNLISTED_WARNING); // as if shown by a number typed in between
    await t.actions.dial();
    expect(state().dialWarning).toBeNull();
    expect(state().dialError).toBe('Phone number: too short');
    expect(t.calls).toEqual([]);
  });

  it('a number a customer called from (history) is called back at once, without "anyway"', async () => {
    const t = setUp({ startCall: placed });
    state().setHistory([{ localId: 'in:wacid.9', direction: 'incoming', number: UNLISTED, outcome: 'missed', startedAt: 1, endedAt: 2, durationSec: 0 }]);
    t.actions.setDialInput('+44 20 5946 0958');
    await t.actions.dial();
    expect(state().dialWarning).toBeNull();
    expect(t.calls).toEqual([{ name: 'startCall', params: { localId: expect.stringMatching(/^out:/), to: '+44 20 5946 0958', sdp: DIAL_OFFER_SDP } }]);
  });

  it('a number a customer is calling from right now is called back at once', async () => {
    const t = setUp({ startCall: placed });
    withRinging({ ...ringing('wacid.live'), peer: { number: UNLISTED } });
    t.actions.setDialInput(UNLISTED_TYPED);
    await t.actions.dial();
    expect(state().dialWarning).toBeNull();
    expect(t.calls.map((c) => c.name)).toEqual(['startCall']);
  });

  it('a number the agent only called out to still warns', async () => {
    const t = setUp({ startCall: placed });
    state().setHistory([{ localId: 'out:1', direction: 'outgoing', number: UNLISTED, outcome: 'no_answer', startedAt: 1, endedAt: 2, durationSec: 0 }]);
    t.actions.setDialInput(UNLISTED_TYPED);
    await t.actions.dial();
    expect(state().dialWarning).toBe(UNLISTED_WARNING);
    expect(t.calls).toEqual([]);
  });

  it('main refusing an unlisted number (it knew no such caller) shows the warning with its words, so Call anyway is offered', async () => {
    const t = setUp({ startCall: () => err('invalid_phone_number', UNLISTED_WARNING, { field: 'to' }) });
    state().setHistory([{ localId: 'in:wacid.9', direction: 'incoming', number: UNLISTED, outcome: 'missed', startedAt: 1, endedAt: 2, durationSec: 0 }]);
    t.actions.setDialInput(UNLISTED_TYPED);
    await t.actions.dial();
    const { localId } = t.calls[0]!.params as { localId: string };
    expect(t.log).toEqual([`prepareOutgoing ${localId}`, `close ${localId}`]);
    expect(state().dialWarning).toBe(UNLISTED_WARNING);
    expect(state().dialError).toBeNull();
  });

  it('the gateway refusing a number called anyway (138001) is said clearly, and the media released', async () => {
    const t = setUp({ startCall: () => err('gateway_error', 'This customer cannot be called', { gatewayCode: 138001, httpStatus: 400 }) });
    t.actions.setDialInput(UNLISTED_TYPED);
    await t.actions.dial({ anyway: true });
    const { localId } = t.calls[0]!.params as { localId: string };
    expect(t.log).toEqual([`prepareOutgoing ${localId}`, `close ${localId}`]);
    expect(state().dialError).toBe('This customer cannot be called.');
    expect(state().dialWarning).toBeNull();
    expect(state().dialInput).toBe(UNLISTED_TYPED);
  });
});

describe('CallActions: transfers, consults and three-way calls', () => {
  beforeEach(() => resetStore());
  afterEach(async () => {
    for (const stop of stops.splice(0)) stop();
    await setUiLanguage('en', undefined);
  });

  it('the team comes checked; one that breaks the contract is an error, not a list', async () => {
    const t = setUp({ getTeam: () => ok(TEAM) });
    await expect(t.actions.team()).resolves.toEqual({ ok: true, value: TEAM });
    const broken = setUp({ getTeam: () => ok([{ agentId: 'agent-x', name: 'X', presence: 'away' }] as unknown as typeof TEAM) });
    const answer = await broken.actions.team();
    expect(answer.ok).toBe(false);
    const refused = setUp({ getTeam: () => err('gateway_unreachable', 'connect ECONNREFUSED') });
    await expect(refused.actions.team()).resolves.toMatchObject({ ok: false, error: { code: 'gateway_unreachable' } });
  });

  it('a choice is one transferCall whose answer goes back to the dialog; an old problem of the call goes', async () => {
    const t = setUp({ transferCall: ({ to }) => (to === 'available' ? ok({ transferId: 'tr-1' }) : err('invalid_state', 'Ben Okafor is offline')) });
    state().applyCall(bridgedActive());
    state().setCallNotice({ localId: 'in:wacid.1', text: 'an older problem' });
    await expect(t.actions.transfer('in:wacid.1', 'available', 'consult')).resolves.toEqual({ ok: true, value: { transferId: 'tr-1' } });
    expect(state().callNotice).toBeNull();
    await expect(t.actions.transfer('in:wacid.1', 'agent-ben', 'transfer')).resolves.toMatchObject({ ok: false, error: { message: 'Ben Okafor is offline' } });
    // Said in the dialog, not twice on the panel.
    expect(state().callNotice).toBeNull();
    expect(t.calls).toEqual([
      { name: 'transferCall', params: { localId: 'in:wacid.1', to: 'available', kind: 'consult' } },
      { name: 'transferCall', params: { localId: 'in:wacid.1', to: 'agent-ben', kind: 'transfer' } },
    ]);
  });

  it('Cancel, Complete transfer and Add to call are one command each; a refusal is shown on the call', async () => {
    const t = setUp({ cancelTransfer: () => ok(null), completeTransfer: () => err('invalid_state', 'The consult is over'), addToCall: () => ok(null) });
    state().applyCall(bridgedActive(transferOf('from', 'consult', 'consulting')));
    await t.actions.addToCall('in:wacid.1');
    await t.actions.cancelTransfer('in:wacid.1');
    expect(state().callNotice).toBeNull();
    await t.actions.completeTransfer('in:wacid.1');
    expect(state().callNotice).toEqual({ localId: 'in:wacid.1', text: 'The consult is over' });
    expect(t.calls.map((c) => [c.name, c.params])).toEqual([
      ['addToCall', { localId: 'in:wacid.1' }],
      ['cancelTransfer', { localId: 'in:wacid.1' }],
      ['completeTransfer', { localId: 'in:wacid.1' }],
    ]);
    // The next step clears it.
    await t.actions.cancelTransfer('in:wacid.1');
    expect(state().callNotice).toBeNull();
  });
});

describe('CallActions: a bridged call rejoining', () => {
  beforeEach(() => resetStore());
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  const rejoining = (rejoin: CallRejoin, id = 'wacid.1'): CallState => ({ ...bridgedActive(undefined, id), rejoin }) as CallState;
  const offered = (legId: string, more: Partial<CallRejoin> = {}): CallState => rejoining({ since: 1_000, legId, offerSdp: OFFER_SDP, ...more });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

  it('the failed leg\'s notice goes as the call starts rejoining; each new leg the relay offers is answered with one rejoinCall', async () => {
    const t = setUp({ rejoinCall: () => ok(null) });
    t.actions.callChanged(state().applyCall(bridgedActive()));
    state().setCallNotice({ localId: 'in:wacid.1', text: 'The network connection was lost' });
    t.actions.callChanged(state().applyCall(rejoining({ since: 1_000 })));
    expect(state().callNotice).toBeNull();
    await settle();
    // No offer yet: nothing to answer.
    expect(t.calls).toEqual([]);

    t.actions.callChanged(state().applyCall(offered('leg-2')));
    await settle();
    expect(t.calls).toEqual([{ name: 'rejoinCall', params: { localId: 'in:wacid.1', legId: 'leg-2', sdp: ANSWER_SDP } }]);
    expect(t.log).toEqual(['onCall in:wacid.1 active', 'onCall in:wacid.1 active', 'onCall in:wacid.1 active', 'rejoinAnswerFor in:wacid.1']);

    // The same offer pushed again, then answered: no second command; a problem said meanwhile stays.
    state().setCallNotice({ localId: 'in:wacid.1', text: 'The microphone cannot be opened' });
    t.actions.callChanged(state().applyCall(offered('leg-2')));
    t.actions.callChanged(state().applyCall(offered('leg-2', { answered: true })));
    await settle();
    expect(t.calls).toHaveLength(1);
    expect(state().callNotice?.text).toBe('The microphone cannot be opened');

    // Its media failed again: a newer leg, answered once too.
    t.actions.callChanged(state().applyCall(offered('leg-3')));
    await settle();
    expect(t.calls.map((c) => c.params)).toEqual([
      { localId: 'in:wacid.1', legId: 'leg-2', sdp: ANSWER_SDP },
      { localId: 'in:wacid.1', legId: 'leg-3', sdp: ANSWER_SDP },
    ]);
  });

  it('a rejoinCall refused (another window answered first): that leg\'s media closes without a word', async () => {
    const t = setUp({ rejoinCall: () => err('invalid_state', 'This offer was answered elsewhere') });
    t.actions.callChanged(state().applyCall(offered('leg-2')));
    await settle();
    await settle();
    expect(t.log).toContain('closeRejoinLeg in:wacid.1 leg-2');
    expect(t.log).not.toContain('close in:wacid.1');
    expect(state().callNotice).toBeNull();
    // The refused leg is not answered again however often it is pushed.
    t.actions.callChanged(state().applyCall(offered('leg-2')));
    await settle();
    expect(t.calls).toHaveLength(1);
  });

  it('no answer to send (the microphone was refused): no command, and the engine\'s reason stands', async () => {
    const t = setUp({ rejoinCall: () => ok(null) }, { rejoinAnswer: mediaFailure('media_failed', mediaProblem('micDenied')) });
    t.actions.callChanged(state().applyCall(offered('leg-2')));
    await settle();
    expect(t.calls).toEqual([]);
    expect(t.log).not.toContain('closeRejoinLeg in:wacid.1 leg-2');
  });

  it('the microphone refused: "Try again" is offered with the reason, and tries the microphone and the same leg again until it answers', async () => {
    const micDenied = mediaFailure('media_failed', mediaProblem('micDenied'));
    const t = setUp({ rejoinCall: () => ok(null) }, { rejoinAnswers: [micDenied, micDenied] });
    t.actions.callChanged(state().applyCall(offered('leg-2')));
    await settle();
    expect(state().callNotice).toEqual({ localId: 'in:wacid.1', text: 'Microphone access was denied. Allow the microphone for this app, then try again.', retry: 'rejoin' });
    expect(t.calls).toEqual([]);

    t.actions.retryRejoin('in:wacid.1');
    await settle();
    expect(state().callNotice).toMatchObject({ retry: 'rejoin' });
    t.actions.retryRejoin('in:wacid.1');
    await settle();
    expect(t.log.filter((l) => l.startsWith('rejoinAnswerFor'))).toEqual(['rejoinAnswerFor in:wacid.1', 'rejoinAnswerFor in:wacid.1 again', 'rejoinAnswerFor in:wacid.1 again']);
    expect(t.calls).toEqual([{ name: 'rejoinCall', params: { localId: 'in:wacid.1', legId: 'leg-2', sdp: ANSWER_SDP } }]);
    expect(state().callNotice).toBeNull();
  });

  it('no "Try again" once the call waits for that leg no more: a retry after another window answered it does nothing', async () => {
    const t = setUp({ rejoinCall: () => ok(null) }, { rejoinAnswer: mediaFailure('media_failed', mediaProblem('micDenied')) });
    t.actions.callChanged(state().applyCall(offered('leg-2')));
    await settle();
    expect(state().callNotice?.retry).toBe('rejoin');
    t.actions.callChanged(state().applyCall(offered('leg-2', { answered: true })));
    t.actions.retryRejoin('in:wacid.1');
    await settle();
    expect(t.log.filter((l) => l.startsWith('rejoinAnswerFor'))).toEqual(['rejoinAnswerFor in:wacid.1']);
    expect(t.calls).toEqual([]);
  });

  it('a refused microphone said after the call moved on from that leg offers no "Try again"', async () => {
    const t = setUp({ rejoinCall: () => ok(null) });
    let refuse: (outcome: MediaOutcome<{ sdp: string }>) => void = () => undefined;
    t.engine.rejoinAnswerFor = () => new Promise((resolve) => (refuse = resolve));
    t.actions.callChanged(state().applyCall(offered('leg-2')));
    await settle();
    // Its media failed again meanwhile: the call asks for a newer leg.
    t.actions.callChanged(state().applyCall(rejoining({ since: 1_000 })));
    refuse(mediaFailure('media_failed', mediaProblem('micDenied')));
    await settle();
    expect(state().callNotice).toBeNull();
    expect(t.calls).toEqual([]);
  });

  it('the window reloaded: the snapshot\'s rejoining call is answered once, however it is pushed after', async () => {
    const t = setUp({ rejoinCall: () => ok(null) });
    state().applyCall(offered('leg-2'));
    t.actions.callsReloaded(Object.values(state().calls));
    t.actions.callChanged(state().applyCall(offered('leg-2')));
    await settle();
    expect(t.calls).toEqual([{ name: 'rejoinCall', params: { localId: 'in:wacid.1', legId: 'leg-2', sdp: ANSWER_SDP } }]);
  });

  it('a direct call, or one connected again, sends no rejoinCall', async () => {
    const t = setUp({ rejoinCall: () => ok(null) });
    t.actions.callChanged(state().applyCall(bridgedActive()));
    t.actions.callChanged(state().applyCall(connecting('wacid.2')));
    await settle();
    expect(t.calls).toEqual([]);
  });

  it('a muted call rejoining: the media engine is handed the call, muted, before it is asked for the answer; nothing else mutes it', async () => {
    const t = setUp({ rejoinCall: () => ok(null) });
    const log: string[] = [];
    const { onCall, rejoinAnswerFor } = t.engine;
    t.engine.onCall = (call) => {
      log.push(`onCall ${call.localId} ${call.muted === true ? 'muted' : 'unmuted'}`);
      onCall(call);
    };
    t.engine.rejoinAnswerFor = (call) => {
      log.push(`rejoinAnswerFor ${call.localId} ${call.muted === true ? 'muted' : 'unmuted'}`);
      return rejoinAnswerFor(call);
    };
    t.actions.callChanged(state().applyCall({ ...offered('leg-2'), muted: true }));
    await settle();
    expect(log).toEqual(['onCall in:wacid.1 muted', 'rejoinAnswerFor in:wacid.1 muted']);
    expect(t.calls).toEqual([{ name: 'rejoinCall', params: { localId: 'in:wacid.1', legId: 'leg-2', sdp: ANSWER_SDP } }]);
  });
});

describe('CallActions: mute is the call\'s, in the main process', () => {
  beforeEach(() => resetStore());
  afterEach(async () => {
    for (const stop of stops.splice(0)) stop();
    await setUiLanguage('en', undefined);
  });

  it('Mute asks main for the opposite of what the call says; once main has answered, the call is as main pushed it', async () => {
    const t = setUp({ setMuted: () => ok(null) });
    t.actions.callChanged(state().applyCall(active()));
    await t.actions.toggleMute('in:wacid.1');
    expect(t.calls).toEqual([{ name: 'setMuted', params: { localId: 'in:wacid.1', muted: true } }]);
    // The window keeps no mute of its own once main has answered: the call is as main last pushed it.
    expect(state().calls['in:wacid.1']).not.toHaveProperty('muted');
    expect(state().muteWishes).toEqual({});

    t.actions.callChanged(state().applyCall({ ...active(), muted: true }));
    await t.actions.toggleMute('in:wacid.1');
    expect(t.calls.at(-1)).toEqual({ name: 'setMuted', params: { localId: 'in:wacid.1', muted: false } });
    expect(state().callNotice).toBeNull();
  });

  it('a refusal is said on the call; an ended call, or none, asks nothing', async () => {
    const t = setUp({ setMuted: () => err('not_available', 'Calls are shutting down') });
    t.actions.callChanged(state().applyCall(active()));
    await t.actions.toggleMute('in:wacid.1');
    expect(state().callNotice).toEqual({ localId: 'in:wacid.1', text: 'Calls are shutting down' });
    t.actions.callChanged(state().applyCall(ended('wacid.1')));
    await t.actions.toggleMute('in:wacid.1');
    await t.actions.toggleMute('in:wacid.9');
    expect(t.calls.map((c) => c.name)).toEqual(['setMuted']);
  });

  it('the media engine is handed each pushed call with its mute: it is the engine\'s only word on it', () => {
    const t = setUp({});
    const seen: string[] = [];
    const { onCall } = t.engine;
    t.engine.onCall = (call) => {
      seen.push(`${call.localId} ${call.muted === true ? 'muted' : 'unmuted'}`);
      onCall(call);
    };
    t.actions.callChanged(state().applyCall(active()));
    t.actions.callChanged(state().applyCall({ ...active(), muted: true }));
    t.actions.callChanged(state().applyCall(active()));
    expect(seen).toEqual(['in:wacid.1 unmuted', 'in:wacid.1 muted', 'in:wacid.1 unmuted']);
  });

  /** What the media engine is told of each call's mute, in order: 'muted' or 'unmuted'. */
  function micHeard(engine: { onCall: (call: CallState) => void }): string[] {
    const seen: string[] = [];
    const { onCall } = engine;
    engine.onCall = (call) => {
      seen.push(call.muted === true ? 'muted' : 'unmuted');
      onCall(call);
    };
    return seen;
  }

  it('Mute quiets this window\'s microphone before main answers, and opens it again only if main refuses; Unmute waits for main', async () => {
    let answer: (result: Result<null>) => void = () => undefined;
    const t = setUp({ setMuted: () => new Promise<Result<null>>((resolve) => (answer = resolve)) });
    const seen = micHeard(t.engine);
    t.actions.callChanged(state().applyCall(active()));
    const asked = t.actions.toggleMute('in:wacid.1');
    expect(seen).toEqual(['unmuted', 'muted']);
    answer(err('not_available', 'Calls are shutting down'));
    await asked;
    expect(seen).toEqual(['unmuted', 'muted', 'unmuted']);

    t.actions.callChanged(state().applyCall({ ...active(), muted: true }));
    const unmute = t.actions.toggleMute('in:wacid.1');
    answer(ok(null));
    await unmute;
    expect(seen).toEqual(['unmuted', 'muted', 'unmuted', 'muted']);
  });

  /**
   * Main as it answers setMuted: held until the test lets it answer (`answerNext`), then the call
   * pushed with its new mute (when it changed) before the answer, as the coordinator does; or refused.
   */
  function setUpMain() {
    const waiting: Array<(result: 'ok' | Result<null>) => void> = [];
    const t = setUp({
      setMuted: ({ localId, muted }) =>
        new Promise<Result<null>>((resolve) =>
          waiting.push((answer) => {
            if (answer !== 'ok') return resolve(answer);
            const { muted: _was, ...call } = state().calls[localId]!;
            t.actions.callChanged(state().applyCall((muted ? { ...call, muted: true } : call) as CallState));
            resolve(ok(null));
          }),
        ),
    });
    const muteAsked = () => t.calls.filter((c) => c.name === 'setMuted').map((c) => (c.params as { muted: boolean }).muted);
    const answerNext = async (answer: 'ok' | Result<null> = 'ok') => {
      const next = waiting.shift();
      if (next === undefined) throw new Error('no setMuted waits for its answer');
      next(answer);
      await settled();
    };
    return { ...t, muteAsked, answerNext, waiting };
  }

  /** Lets the answered requests' continuations run (the fake host's promises, the next request). */
  const settled = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
  const shown = () => mutedShown(state(), state().calls['in:wacid.1']!);

  it('two presses before main answers: muted, then unmuted, in that order and one request at a time; each press shows at once', async () => {
    const t = setUpMain();
    t.actions.callChanged(state().applyCall(active()));
    const first = t.actions.toggleMute('in:wacid.1');
    expect(shown()).toBe(true);
    const second = t.actions.toggleMute('in:wacid.1');
    expect(shown()).toBe(false);
    await settled();
    // The unmute waits for main's answer to the mute: the two never cross.
    expect(t.muteAsked()).toEqual([true]);

    await t.answerNext();
    expect(state().calls['in:wacid.1']?.muted).toBe(true);
    expect(t.muteAsked()).toEqual([true, false]);
    // Main says muted now; the agent's last press said unmute, and that is what shows.
    expect(shown()).toBe(false);

    await t.answerNext();
    await Promise.all([first, second]);
    expect(state().calls['in:wacid.1']).not.toHaveProperty('muted');
    expect(state().muteWishes).toEqual({});
    expect(shown()).toBe(false);
    expect(state().callNotice).toBeNull();
  });

  it('presses while a request is under way change only the wish: once answered, the latest goes if main is not there yet', async () => {
    const t = setUpMain();
    t.actions.callChanged(state().applyCall(active()));
    const pressed = [t.actions.toggleMute('in:wacid.1'), t.actions.toggleMute('in:wacid.1'), t.actions.toggleMute('in:wacid.1')];
    expect(shown()).toBe(true);
    await t.answerNext();
    await Promise.all(pressed);
    // Mute, unmute, mute: main muted by the first request is where the last press wants it.
    expect(t.muteAsked()).toEqual([true]);
    expect(state().calls['in:wacid.1']?.muted).toBe(true);
    expect(shown()).toBe(true);

    // From muted: unmute, mute, unmute → one unmute.
    const again = [t.actions.toggleMute('in:wacid.1'), t.actions.toggleMute('in:wacid.1'), t.actions.toggleMute('in:wacid.1')];
    expect(shown()).toBe(false);
    await t.answerNext();
    await Promise.all(again);
    expect(t.muteAsked()).toEqual([true, false]);
    expect(state().calls['in:wacid.1']).not.toHaveProperty('muted');
    expect(shown()).toBe(false);
  });

  it('a refusal puts back what main says, with the refusal on the call, and drops the presses that waited behind it', async () => {
    const t = setUpMain();
    const seen = micHeard(t.engine);
    t.actions.callChanged(state().applyCall(active()));
    const asked = t.actions.toggleMute('in:wacid.1');
    expect(shown()).toBe(true);
    await t.answerNext(err('not_available', 'Calls are shutting down'));
    await asked;
    expect(shown()).toBe(false);
    expect(state().muteWishes).toEqual({});
    expect(state().callNotice).toEqual({ localId: 'in:wacid.1', text: 'Calls are shutting down' });
    expect(seen).toEqual(['unmuted', 'muted', 'unmuted']);

    // Mute, unmute, mute, the first refused: main's word (unmuted) shows, and nothing more is asked.
    const pressed = [t.actions.toggleMute('in:wacid.1'), t.actions.toggleMute('in:wacid.1'), t.actions.toggleMute('in:wacid.1')];
    expect(shown()).toBe(true);
    await t.answerNext(err('not_available', 'Calls are shutting down'));
    await Promise.all(pressed);
    expect(t.muteAsked()).toEqual([true, true]);
    expect(t.waiting).toEqual([]);
    expect(shown()).toBe(false);
  });

  it('a mute whose answer never came stands, its microphone quiet, until main next speaks of the call: then it goes again if main is not muted', async () => {
    const t = setUpMain();
    const seen = micHeard(t.engine);
    t.actions.callChanged(state().applyCall(active()));
    const asked = t.actions.toggleMute('in:wacid.1');
    await t.answerNext(err('timeout', 'The softphone service did not answer'));
    await asked;
    // Main may or may not have it: the agent asked for quiet, and quiet it stays.
    expect(shown()).toBe(true);
    expect(seen).toEqual(['unmuted', 'muted']);
    expect(state().callNotice).toEqual({ localId: 'in:wacid.1', text: 'The calling service did not answer in time. Try again.' });

    // The link back, main's snapshot says unmuted: the mute goes again, and main ends muted.
    t.actions.callsReloaded([state().calls['in:wacid.1']!]);
    expect(shown()).toBe(true);
    expect(seen.at(-1)).toBe('muted');
    await settled();
    expect(t.muteAsked()).toEqual([true, true]);
    await t.answerNext();
    expect(state().calls['in:wacid.1']?.muted).toBe(true);
    expect(state().muteWishes).toEqual({});
    expect(shown()).toBe(true);
    expect(seen.slice(1).every((m) => m === 'muted')).toBe(true);
  });

  it('a mute whose link went before the answer is done when main next pushes the call muted: nothing more is asked', async () => {
    const t = setUpMain();
    t.actions.callChanged(state().applyCall(active()));
    const asked = t.actions.toggleMute('in:wacid.1');
    await t.answerNext(err('gateway_unreachable', 'The connection to the softphone service was lost'));
    await asked;
    expect(shown()).toBe(true);
    t.actions.callChanged(state().applyCall({ ...active(), muted: true }));
    await settled();
    expect(t.muteAsked()).toEqual([true]);
    expect(state().muteWishes).toEqual({});
    expect(shown()).toBe(true);
  });

  it('a request that throws instead of answering leaves no wish behind: main\'s word shows and the microphone opens again', async () => {
    const t = setUp({ setMuted: () => Promise.reject(new Error('the bridge went away')) });
    const seen = micHeard(t.engine);
    t.actions.callChanged(state().applyCall(active()));
    await expect(t.actions.toggleMute('in:wacid.1')).rejects.toThrow('the bridge went away');
    expect(state().muteWishes).toEqual({});
    expect(shown()).toBe(false);
    expect(seen).toEqual(['unmuted', 'muted', 'unmuted']);
    // The next press asks again rather than waiting on a request that never ends.
    await expect(t.actions.toggleMute('in:wacid.1')).rejects.toThrow('the bridge went away');
    expect(t.calls.filter((c) => c.name === 'setMuted')).toHaveLength(2);
  });

  it('while the agent wishes the call muted, a push that says unmuted does not open this window\'s microphone', async () => {
    const t = setUpMain();
    const seen = micHeard(t.engine);
    t.actions.callChanged(state().applyCall({ ...active(), muted: true }));
    // Unmute, then mute again before main answered the unmute.
    const pressed = [t.actions.toggleMute('in:wacid.1'), t.actions.toggleMute('in:wacid.1')];
    expect(seen).toEqual(['muted', 'muted']);
    // Main pushes the call unmuted (the first request) before it answers: the microphone stays quiet.
    await t.answerNext();
    expect(state().calls['in:wacid.1']).not.toHaveProperty('muted');
    expect(seen).toEqual(['muted', 'muted', 'muted']);
    expect(t.muteAsked()).toEqual([false, true]);
    await t.answerNext();
    await Promise.all(pressed);
    expect(seen).toEqual(['muted', 'muted', 'muted', 'muted']);
    expect(shown()).toBe(true);
  });

  it('a microphone quieted for a wish opens again once main has answered, when the agent\'s last press and main say unmuted', async () => {
    const t = setUpMain();
    const seen = micHeard(t.engine);
    t.actions.callChanged(state().applyCall({ ...active(), muted: true }));
    // Unmute (sent), mute (quiets the microphone at once)…
    const pressed = [t.actions.toggleMute('in:wacid.1'), t.actions.toggleMute('in:wacid.1')];
    // …main pushes the call unmuted for the first request, the agent presses unmute again, then main answers.
    t.actions.callChanged(state().applyCall(active()));
    pressed.push(t.actions.toggleMute('in:wacid.1'));
    expect(seen).toEqual(['muted', 'muted', 'muted']);
    await t.answerNext(ok(null));
    await Promise.all(pressed);
    expect(t.muteAsked()).toEqual([false]);
    expect(seen).toEqual(['muted', 'muted', 'muted', 'unmuted']);
    expect(shown()).toBe(false);
  });
});
