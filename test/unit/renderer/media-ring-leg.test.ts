// A bridged call's leg connected while it rings (CallLeg.warm, MediaEngine.ringAnswerFor /
// warmRingLeg / answerOwnRingLeg): the bridge took the answer made while ringing, so the leg's
// candidates go to ICE before the click; the call hears of the connection only once it is pushed in
// `connecting`, and a failure while it rang is said then.
import { afterEach, describe, expect, it } from 'vitest';
import { mediaText } from '../../../renderer/webrtc/media-text';
import { chromiumAnswer, customerOffer } from '../../fixtures/sdp';
import { LOCAL, closeEngines, connectingCall, mediaEngine, ringingCall, settle } from './fake-call-media';

afterEach(() => closeEngines());

const bridgedRinging = () => ({ ...ringingCall(), bridged: true as const });
const phaseOf = (t: ReturnType<typeof mediaEngine>) => t.engine.describe().find((m) => m.localId === LOCAL)?.phase;

describe('a bridged ring: the leg connects ahead of the click', () => {
  it('the answer made while ringing goes to ICE once the bridge took it; the call is told of the connection at the connecting push', async () => {
    const t = mediaEngine();
    const facts: string[] = [];
    t.engine.onFact((fact) => facts.push(fact.state));
    t.engine.onCall(bridgedRinging());
    expect(await t.engine.ringAnswerFor(LOCAL)).toBe(chromiumAnswer);
    const pc = t.peers[0]!;
    // Another answer than the one this leg made connects nothing.
    t.engine.warmRingLeg(LOCAL, 'v=0\r\no=other\r\n');
    expect(pc.candidates).toEqual([]);
    t.engine.warmRingLeg(LOCAL, chromiumAnswer);
    t.engine.warmRingLeg(LOCAL, chromiumAnswer);
    expect(pc.candidates).toHaveLength(2);
    pc.connect();
    expect(phaseOf(t)).toBe('ready');
    expect(facts).toEqual([]);

    expect(await t.engine.answerFor(bridgedRinging())).toEqual({ ok: true, value: { sdp: chromiumAnswer } });
    // Handed over, the answer is still the one the leg made.
    expect(await t.engine.ringAnswerFor(LOCAL)).toBe(chromiumAnswer);
    t.engine.onCall({ ...connectingCall(), bridged: true });
    expect(phaseOf(t)).toBe('connected');
    expect(facts).toEqual(['connected']);
    expect(pc.candidates).toHaveLength(2);
    expect(pc.calls).toMatchObject({ setRemoteDescription: 1, setLocalDescription: 1, createAnswer: 1 });
  });

  it('a leg that failed while it rang says so once the call is pushed in connecting, not before', async () => {
    const t = mediaEngine();
    const facts: string[] = [];
    t.engine.onFact((fact) => facts.push(fact.state === 'failed' ? `failed: ${mediaText(fact.reason)}` : fact.state));
    t.engine.onCall(bridgedRinging());
    t.engine.warmRingLeg(LOCAL, (await t.engine.ringAnswerFor(LOCAL))!);
    const pc = t.peers[0]!;
    pc.setState('failed', 'failed');
    expect(facts).toEqual([]);
    await t.engine.answerFor(bridgedRinging());
    t.engine.onCall({ ...connectingCall(), bridged: true });
    expect(facts).toHaveLength(1);
    expect(facts[0]).toMatch(/^failed: No network path/);
  });

  it('a leg of its own in place of the ring’s: the old media closes and the new offer is answered; once Answer handed one over, none', async () => {
    const t = mediaEngine();
    t.engine.onCall(bridgedRinging());
    await t.engine.ringAnswerFor(LOCAL);
    const own = customerOffer.replace('o=- ', 'o=own ');
    expect(t.engine.answerOwnRingLeg(bridgedRinging(), own)).toBe(true);
    expect(t.peers[0]!.connectionState).toBe('closed');
    expect(await t.engine.ringAnswerFor(LOCAL)).toBe(chromiumAnswer);
    await settle();
    expect(t.peers[1]!.remoteDescription?.sdp).toContain('o=own ');
    await t.engine.answerFor(bridgedRinging());
    expect(t.engine.answerOwnRingLeg(bridgedRinging(), own)).toBe(false);
    expect(t.peers).toHaveLength(2);
  });
});
