// A bridged call outlives the window that carried its audio (shared/calls/rejoin.ts): the relay
// offers a new leg, and the window answers it as it answers a ringing call. The engine runs on the
// fakes: the offer's candidates go to ICE only once the relay applied the answer, a newer leg
// replaces the call's media, an outgoing call's old answer is never applied to its new leg, and a
// bridged call's media is given up after the bridged grace.
import { afterEach, describe, expect, it } from 'vitest';
import type { CallRejoin, CallState } from '../../../shared/call-state';
import type { MediaFact } from '../../../renderer/webrtc/call-media';
import { BRIDGED_DISCONNECT_GRACE_MS, DISCONNECT_GRACE_MS } from '../../../renderer/webrtc/media-health';
import { chromiumAnswer, customerOffer } from '../../fixtures/sdp';
import { LOCAL, activeCall, closeEngines, connectingCall, media, mediaEngine, ringingCall, settle, waitFor } from './fake-call-media';
import { T0, ended } from './fixtures';

afterEach(() => closeEngines());

/** The bridge's offer is ice-lite with its candidates inline, like the customer's own. */
const NODE_OFFER = customerOffer;

const bridged = (call: CallState): CallState => ({ ...call, bridged: true }) as CallState;
const rejoining = (rejoin: CallRejoin, call: CallState = activeCall()): CallState => ({ ...bridged(call), rejoin }) as CallState;
const offered = (legId: string, more: Partial<CallRejoin> = {}, call?: CallState): CallState => rejoining({ since: T0 + 60_000, legId, offerSdp: NODE_OFFER, ...more }, call);
/** Connected again: the main process cleared `rejoin`. */
const back = (): CallState => bridged(activeCall());

const outgoing = (): CallState =>
  ({
    localId: 'out:1',
    direction: 'outgoing',
    callId: 'wacid.9',
    peer: { number: '447700900123' },
    createdAt: T0,
    phase: 'active',
    answeredAt: T0 + 2_000,
    connectedAt: T0 + 2_500,
    answerSdp: chromiumAnswer,
  }) as CallState;

function factsOf(engine: ReturnType<typeof mediaEngine>['engine']): MediaFact[] {
  const facts: MediaFact[] = [];
  engine.onFact((fact) => facts.push(fact));
  return facts;
}

describe('a window answering the new leg of a rejoining call', () => {
  it('after a reload: the offer is prepared as a ringing call\u2019s, and its candidates reach ICE only once the relay applied the answer', async () => {
    const t = mediaEngine();
    const facts = factsOf(t.engine);
    t.engine.onCall(offered('leg-2'));
    await settle();
    const pc = t.peers[0]!;
    expect(pc.remoteDescription?.type).toBe('offer');
    expect(pc.remoteDescription?.sdp).not.toMatch(/^a=candidate:/m);

    const answer = await t.engine.rejoinAnswerFor(offered('leg-2'));
    expect(answer).toEqual({ ok: true, value: { sdp: chromiumAnswer } });
    expect(pc.senders[0]!.track).toBe(t.mics[0]);
    // Pushed again before the relay's word: still nothing to check against.
    t.engine.onCall(offered('leg-2'));
    await settle();
    expect(pc.candidates).toEqual([]);

    t.engine.onCall(offered('leg-2', { answered: true }));
    await settle();
    expect(pc.candidates.length).toBeGreaterThan(0);
    pc.connect();
    expect(facts).toEqual([{ localId: LOCAL, state: 'connected' }]);
    t.engine.onCall(back());
    await settle();
    // One leg, one exchange: nothing more negotiated, no second peer connection.
    expect(t.peers).toHaveLength(1);
    expect(pc.calls).toMatchObject({ setRemoteDescription: 1, createAnswer: 1, setLocalDescription: 1, createOffer: 0 });
    expect(media(t.engine)).toMatchObject({ phase: 'connected', playing: true });
  });

  it('a muted call (CallState `muted`): the new leg\'s microphone is disabled from the start, silence on the sender, until main pushes the call unmuted', async () => {
    const t = mediaEngine();
    const muted = (more: Partial<CallRejoin> = {}): CallState => ({ ...offered('leg-2', more), muted: true }) as CallState;
    // After a reload the snapshot brings the call: the engine reconciles to it.
    t.engine.reconcile([muted()]);
    const answer = await t.engine.rejoinAnswerFor(muted());
    expect(answer.ok).toBe(true);
    const pc = t.peers[0]!;
    const mic = t.mics[0]!;
    expect(pc.senders[0]!.track).toBe(mic);
    expect(mic.enabled).toBe(false);
    t.engine.onCall(muted({ answered: true }));
    await settle();
    pc.connect();
    t.engine.onCall({ ...back(), muted: true } as CallState);
    await settle();
    expect(media(t.engine)).toMatchObject({ phase: 'connected', muted: true, micEnabled: false, sending: 'microphone' });
    expect(mic.enabled).toBe(false);

    t.engine.onCall(back());
    await settle();
    expect(media(t.engine)).toMatchObject({ muted: false, micEnabled: true });
    expect(mic.enabled).toBe(true);
  });

  it('its answer is handed over once; a call with no media of that leg has none to give', async () => {
    const t = mediaEngine();
    const none = await t.engine.rejoinAnswerFor(offered('leg-2'));
    expect(none).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    t.engine.onCall(offered('leg-2'));
    expect((await t.engine.rejoinAnswerFor(offered('leg-2'))).ok).toBe(true);
    expect(await t.engine.rejoinAnswerFor(offered('leg-2'))).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    // The offer of another leg is not this media's to answer.
    expect(await t.engine.rejoinAnswerFor(offered('leg-3', {}, activeCall()))).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
  });

  it('a new leg whose microphone was refused: its media closes, and only "Try again" (`again`) prepares it anew and answers it', async () => {
    const t = mediaEngine();
    t.refuse.set('', 'NotAllowedError');
    t.engine.onCall(offered('leg-2'));
    await settle();
    const refused = await t.engine.rejoinAnswerFor(offered('leg-2'));
    expect(refused).toMatchObject({ ok: false, error: { code: 'media_failed' } });
    expect(t.notices).toEqual(['Microphone access was denied. Allow the microphone for this app, then try again.']);
    expect(t.engine.has(LOCAL)).toBe(false);
    expect(t.peers[0]!.connectionState).toBe('closed');
    // Pushed again, or asked without `again`: nothing is prepared, nothing answered.
    t.engine.onCall(offered('leg-2'));
    await settle();
    expect(t.peers).toHaveLength(1);
    expect(await t.engine.rejoinAnswerFor(offered('leg-2'))).toMatchObject({ ok: false, error: { code: 'invalid_state' } });

    // Tried again while still refused: said again, its media closed again.
    expect(await t.engine.rejoinAnswerFor(offered('leg-2'), true)).toMatchObject({ ok: false, error: { code: 'media_failed' } });
    expect(t.peers).toHaveLength(2);
    expect(t.engine.has(LOCAL)).toBe(false);

    t.refuse.delete('');
    expect(await t.engine.rejoinAnswerFor(offered('leg-2'), true)).toEqual({ ok: true, value: { sdp: chromiumAnswer } });
    expect(t.peers).toHaveLength(3);
    expect(t.peers[2]!.senders[0]!.track).toBe(t.mics[0]);
    // Answered: `again` makes nothing more; another leg's offer is not this media's.
    expect(await t.engine.rejoinAnswerFor(offered('leg-2'), true)).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    expect(await t.engine.rejoinAnswerFor(offered('leg-3'), true)).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    expect(t.peers).toHaveLength(3);
  });

  it('the failed leg stays until the relay offers a new one, which replaces it; a newer one replaces that in turn', async () => {
    const t = mediaEngine();
    const { pc: first, mic } = await t.connectCall();
    t.engine.onCall(rejoining({ since: T0 + 60_000 }));
    await settle();
    expect(first.connectionState).not.toBe('closed');
    expect(t.peers).toHaveLength(1);

    t.engine.onCall(offered('leg-2'));
    await settle();
    expect(first.connectionState).toBe('closed');
    expect(mic.readyState).toBe('ended');
    expect(t.peers).toHaveLength(2);

    t.engine.onCall(offered('leg-3'));
    await settle();
    expect(t.peers[1]!.connectionState).toBe('closed');
    expect(t.peers).toHaveLength(3);
    expect(t.engine.describe()).toHaveLength(1);
  });

  it('a leg another window answered is not prepared here; a leg whose answer was not taken is closed and not prepared again', async () => {
    const t = mediaEngine();
    t.engine.onCall(offered('leg-2', { answered: true }));
    await settle();
    expect(t.peers).toEqual([]);
    expect(t.engine.has(LOCAL)).toBe(false);

    t.engine.onCall(offered('leg-3'));
    await settle();
    t.engine.closeRejoinLeg(LOCAL, 'leg-2');
    expect(t.engine.has(LOCAL)).toBe(true);
    t.engine.closeRejoinLeg(LOCAL, 'leg-3');
    expect(t.engine.has(LOCAL)).toBe(false);
    expect(t.peers[0]!.connectionState).toBe('closed');
    t.engine.onCall(offered('leg-3'));
    await settle();
    expect(t.peers).toHaveLength(1);
    expect(t.engine.has(LOCAL)).toBe(false);
  });

  it('an outgoing call\u2019s new leg answers the bridge\u2019s offer and never applies the customer\u2019s old answer', async () => {
    const t = mediaEngine();
    const call = (more: Partial<CallRejoin> = {}) => offered('leg-2', more, outgoing());
    t.engine.onCall(call());
    expect((await t.engine.rejoinAnswerFor(call())).ok).toBe(true);
    t.engine.onCall(call({ answered: true }));
    await settle();
    const pc = t.peers[0]!;
    pc.connect();
    t.engine.onCall(bridged(outgoing()));
    await settle();
    expect(pc.calls).toMatchObject({ setRemoteDescription: 1, createOffer: 0, createAnswer: 1 });
    expect(pc.remoteDescription?.type).toBe('offer');
    expect(pc.candidates.length).toBeGreaterThan(0);
    expect(media(t.engine, 'out:1').phase).toBe('connected');
  });

  it('a held call rejoins held: its new leg sends the music, not the microphone, and keeps the customer silent', async () => {
    const t = mediaEngine();
    const held = (more: Partial<CallRejoin> = {}) => offered('leg-2', more, Object.assign(activeCall(), { heldSince: T0 + 30_000 }));
    t.engine.onCall(held());
    expect((await t.engine.rejoinAnswerFor(held())).ok).toBe(true);
    t.engine.onCall(held({ answered: true }));
    await settle();
    t.peers[0]!.connect();
    await waitFor('the hold music on the sender', () => media(t.engine).sending === 'music');
    expect(media(t.engine)).toMatchObject({ held: true, playing: false, micEnabled: false });
  });

  it('an ended call closes its rejoining media', async () => {
    const t = mediaEngine();
    t.engine.onCall(offered('leg-2'));
    await settle();
    t.engine.onCall(bridged(ended()));
    expect(t.engine.has(LOCAL)).toBe(false);
    expect(t.peers[0]!.connectionState).toBe('closed');
  });
});

describe('how long a bridged call\u2019s media may stay away', () => {
  it('the bridged grace is shorter than a direct call\u2019s: its customer hears the bridge\u2019s music, and the call rejoins rather than ends', () => {
    expect(BRIDGED_DISCONNECT_GRACE_MS).toBe(5_000);
    expect(BRIDGED_DISCONNECT_GRACE_MS).toBeLessThan(DISCONNECT_GRACE_MS);
  });

  async function lostAfter(isBridged: boolean): Promise<MediaFact[]> {
    const t = mediaEngine({ disconnectGraceMs: 400, bridgedDisconnectGraceMs: 20 });
    const facts = factsOf(t.engine);
    const as = (call: CallState) => (isBridged ? bridged(call) : call);
    t.engine.onCall(as(ringingCall()));
    expect((await t.engine.answerFor(ringingCall())).ok).toBe(true);
    t.engine.onCall(as(connectingCall()));
    const pc = t.peers[0]!;
    pc.connect();
    t.engine.onCall(as(activeCall()));
    await settle();
    pc.setState('disconnected', 'disconnected');
    await new Promise((resolve) => setTimeout(resolve, 100));
    return facts;
  }

  it('a bridged call\u2019s media is given up after the bridged grace; a direct call\u2019s waits for its own', async () => {
    expect((await lostAfter(true)).map((f) => f.state)).toEqual(['connected', 'failed']);
    expect((await lostAfter(false)).map((f) => f.state)).toEqual(['connected']);
  });
});
