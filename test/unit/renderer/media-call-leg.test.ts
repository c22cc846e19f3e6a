// The call leg (renderer/webrtc/call-leg.ts) and the one trigger media acts on, the call pushed by
// the main process: nothing reaches the customer before the call is this agent's. The answer is made
// while ringing from the offer without its candidates; the customer's candidates wait in the leg
// until the call is pushed in `connecting` (the accept went through), never on the Answer click nor
// on the command's reply. An outgoing call's answer is applied once, when it comes with the push.
import { afterEach, describe, expect, it } from 'vitest';
import type { CallState } from '../../../shared/call-state';
import { mediaProblem, mediaText } from '../../../renderer/webrtc/media-text';
import { chromiumAnswer, customerOffer } from '../../fixtures/sdp';
import { dialing, ended, T0 } from './fixtures';
import { LOCAL, activeCall, closeEngines, connectingCall, mediaEngine, ringingCall, settle } from './fake-call-media';

afterEach(() => closeEngines());

const phaseOf = (t: ReturnType<typeof mediaEngine>, localId = LOCAL) => t.engine.describe().find((m) => m.localId === localId)?.phase;

describe('CallLeg: the customer\u2019s candidates wait for the connecting push', () => {
  it('ringing: the offer is applied without its candidates and the answer is made; nothing goes to ICE', async () => {
    const t = mediaEngine();
    t.engine.onCall(ringingCall());
    await settle();
    await settle();
    const pc = t.peers[0]!;
    expect(phaseOf(t)).toBe('ready');
    expect(customerOffer).toMatch(/^a=candidate:/m);
    expect(pc.remoteDescription?.sdp).not.toMatch(/^a=candidate:/m);
    expect(pc.localDescription?.sdp).toBe(chromiumAnswer);
    expect(pc.candidates).toEqual([]);
  });

  it('Answer hands the answer over; neither the click nor the answering push adds a candidate; the connecting push does, once', async () => {
    const t = mediaEngine();
    t.engine.onCall(ringingCall());
    const answer = await t.engine.answerFor(ringingCall());
    expect(answer).toEqual({ ok: true, value: { sdp: chromiumAnswer } });
    const pc = t.peers[0]!;
    expect(phaseOf(t)).toBe('answering');
    expect(pc.candidates).toEqual([]);

    // The call as main pushes it while it claims and accepts.
    t.engine.onCall({ ...ringingCall(), phase: 'answering', answeredAt: T0 + 1000 });
    await settle();
    expect(pc.candidates).toEqual([]);

    t.engine.onCall(connectingCall());
    expect(phaseOf(t)).toBe('connecting');
    expect(pc.candidates).toEqual([
      { candidate: 'candidate:1 1 udp 2113937151 203.0.113.10 3480 typ host generation 0', sdpMid: 'audio', sdpMLineIndex: 0 },
      { candidate: '', sdpMid: 'audio', sdpMLineIndex: 0 },
    ]);
    // Every later push of the call changes nothing on the leg.
    t.engine.onCall(connectingCall());
    t.engine.onCall(activeCall());
    t.engine.reconcile([activeCall()]);
    expect(pc.candidates).toHaveLength(2);
    pc.connect();
    expect(phaseOf(t)).toBe('connected');
    // One offer/answer exchange, never a renegotiation.
    expect(pc.calls).toMatchObject({ setRemoteDescription: 1, setLocalDescription: 1, createAnswer: 1, createOffer: 0 });
  });

  it('a call pushed in connecting that this window never handed an answer for starts nothing', async () => {
    const t = mediaEngine();
    t.engine.onCall(ringingCall());
    await settle();
    await settle();
    t.engine.onCall(connectingCall());
    expect(phaseOf(t)).toBe('ready');
    expect(t.peers[0]!.candidates).toEqual([]);
  });

  it('a colleague won the claim: the call is pushed ended, the media closes, no candidate was ever added', async () => {
    const t = mediaEngine();
    t.engine.onCall(ringingCall());
    await t.engine.answerFor(ringingCall());
    const pc = t.peers[0]!;
    t.engine.onCall({ ...ended('wacid.1'), end: { kind: 'answered_elsewhere' } } as CallState);
    expect(t.engine.has(LOCAL)).toBe(false);
    expect(pc.connectionState).toBe('closed');
    expect(pc.candidates).toEqual([]);
    expect(t.mics[0]!.readyState).toBe('ended');
    // A connecting push that comes late finds nothing to start.
    t.engine.onCall(connectingCall());
    expect(pc.candidates).toEqual([]);
  });

  it('a snapshot without the ringing call closes the media its push prepared', async () => {
    const t = mediaEngine();
    t.engine.onCall(ringingCall());
    await settle();
    await settle();
    expect(phaseOf(t)).toBe('ready');
    // The call went while this window was not listening (a reconnect): the snapshot no longer has it.
    t.engine.reconcile([]);
    expect(t.engine.has(LOCAL)).toBe(false);
    expect(t.peers[0]!.connectionState).toBe('closed');
    expect(t.mics[0]!.readyState).toBe('ended');
  });

  it('a connection that fails before it was through says why, once, as a fact and a notice', async () => {
    const t = mediaEngine();
    const facts: string[] = [];
    t.engine.onFact((fact) => facts.push(fact.state === 'failed' ? `failed: ${mediaText(fact.reason)}` : fact.state));
    t.engine.onCall(ringingCall());
    await t.engine.answerFor(ringingCall());
    t.engine.onCall(connectingCall());
    const pc = t.peers[0]!;
    pc.setState('failed', 'failed');
    pc.setState('failed', 'failed');
    const reason =
      'No network path to the customer (ICE failed). A firewall may block outbound UDP to the calling service: a TURN server over TCP or TLS (Settings → Network) gets through.';
    expect(facts).toEqual([`failed: ${reason}`]);
    expect(t.notices).toEqual([reason]);
    expect(phaseOf(t)).toBe('failed');
  });

  it('a microphone refused while ringing: Answer tries once more, and says why when it fails again', async () => {
    const t = mediaEngine();
    t.refuse.set('', 'NotAllowedError');
    t.engine.onCall(ringingCall());
    await settle();
    await settle();
    expect(phaseOf(t)).toBe('failed');
    expect(t.notices).toEqual([]);
    const answer = await t.engine.answerFor(ringingCall());
    expect(answer.ok).toBe(false);
    if (!answer.ok) expect(answer.error).toMatchObject({ code: 'media_failed', problem: mediaProblem('micDenied') });
    expect(t.notices).toEqual(['Microphone access was denied. Allow the microphone for this app, then try again.']);
    expect(t.engine.has(LOCAL)).toBe(false);

    // Allowed now: the next Answer prepares afresh and hands an answer over.
    t.refuse.clear();
    await expect(t.engine.answerFor(ringingCall())).resolves.toEqual({ ok: true, value: { sdp: chromiumAnswer } });
  });
});

describe('CallLeg: an outgoing call', () => {
  const OUT = 'out:1';
  const pushed = (phase: 'calling' | 'connecting' | 'active'): CallState => {
    const base = { direction: 'outgoing' as const, localId: OUT, peer: { number: '14155550123' }, createdAt: T0, callId: 'wacid.out-1' };
    if (phase === 'calling') return { ...base, phase, dialsUntil: T0 + 60_000 };
    if (phase === 'connecting') return { ...base, phase, answerSdp: chromiumAnswer, answeredAt: T0 + 5000 };
    return { ...base, phase, answerSdp: chromiumAnswer, answeredAt: T0 + 5000, connectedAt: T0 + 5500 };
  };

  it('makes one complete offer; the customer\u2019s answer, pushed with the call, is applied once', async () => {
    const t = mediaEngine();
    const offer = await t.engine.prepareOutgoing(OUT);
    expect(offer.ok).toBe(true);
    const pc = t.peers[0]!;
    expect(phaseOf(t, OUT)).toBe('ready');
    t.engine.onCall(dialing(OUT));
    t.engine.onCall(pushed('calling'));
    expect(pc.calls.setRemoteDescription).toBe(0);

    t.engine.onCall(pushed('connecting'));
    t.engine.onCall(pushed('connecting'));
    await settle();
    t.engine.onCall(pushed('active'));
    await settle();
    expect(pc.calls.setRemoteDescription).toBe(1);
    expect(pc.remoteDescription).toEqual({ type: 'answer', sdp: chromiumAnswer });
    expect(phaseOf(t, OUT)).toBe('connecting');
    expect(pc.calls).toMatchObject({ createOffer: 1, setLocalDescription: 1, createAnswer: 0 });
  });

  it('a call being placed is not closed by a snapshot taken before main had it; once pushed, it is', async () => {
    const t = mediaEngine();
    await t.engine.prepareOutgoing(OUT);
    t.engine.reconcile([]);
    expect(t.engine.has(OUT)).toBe(true);
    t.engine.onCall(pushed('calling'));
    t.engine.reconcile([]);
    expect(t.engine.has(OUT)).toBe(false);
  });

  it('a second preparation for the same call is refused', async () => {
    const t = mediaEngine();
    await t.engine.prepareOutgoing(OUT);
    const again = await t.engine.prepareOutgoing(OUT);
    expect(again.ok).toBe(false);
    if (!again.ok) expect(mediaText(again.error.problem)).toBe('This call already has media');
  });

  it('the network settings that cannot be read: no offer, the reason as the settings said it', async () => {
    const t = mediaEngine({ iceConfig: async () => ({ ok: false, error: { code: 'gateway_unreachable', message: 'The network settings could not be read (The host could not be reached).' } }) });
    const offer = await t.engine.prepareOutgoing(OUT);
    expect(offer.ok).toBe(false);
    if (!offer.ok) expect(mediaText(offer.error.problem)).toBe('The network settings could not be read (The host could not be reached).');
    expect(t.engine.has(OUT)).toBe(false);
    expect(t.mics[0]!.readyState).toBe('ended');
  });
});
