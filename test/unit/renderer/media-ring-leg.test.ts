// A bridged call's leg connected while it rings (CallLeg.warm, MediaEngine.ringLegOf / warmRingLeg /
// answerRingLegAgain): the bridge took the answer made while ringing, so the leg's candidates go to
// ICE before the click; the call hears of the connection only once it is pushed in `connecting`; a
// leg that fails while it rings is answered afresh, never handed over dead.
import { afterEach, describe, expect, it } from 'vitest';
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
    expect(await t.engine.ringLegOf(LOCAL)).toEqual({ sdp: chromiumAnswer, warm: false });
    const pc = t.peers[0]!;
    // Another answer than the one this leg made connects nothing.
    t.engine.warmRingLeg(LOCAL, 'v=0\r\no=other\r\n');
    expect(pc.candidates).toEqual([]);
    t.engine.warmRingLeg(LOCAL, chromiumAnswer);
    t.engine.warmRingLeg(LOCAL, chromiumAnswer);
    expect(pc.candidates).toHaveLength(2);
    expect(await t.engine.ringLegOf(LOCAL)).toEqual({ sdp: chromiumAnswer, warm: true });
    pc.connect();
    expect(phaseOf(t)).toBe('ready');
    expect(facts).toEqual([]);

    expect(await t.engine.answerFor(bridgedRinging())).toEqual({ ok: true, value: { sdp: chromiumAnswer } });
    // Handed over, the answer is still the one the leg made.
    expect(await t.engine.ringLegOf(LOCAL)).toMatchObject({ sdp: chromiumAnswer });
    t.engine.onCall({ ...connectingCall(), bridged: true });
    expect(phaseOf(t)).toBe('connected');
    expect(facts).toEqual(['connected']);
    expect(pc.candidates).toHaveLength(2);
    expect(pc.calls).toMatchObject({ setRemoteDescription: 1, setLocalDescription: 1, createAnswer: 1 });
  });

  it('a leg that fails while it rings is failed and closed at once, said by nobody; answered afresh, the ring\u2019s offer again', async () => {
    const t = mediaEngine();
    const facts: string[] = [];
    t.engine.onFact((fact) => facts.push(fact.state));
    t.engine.onCall(bridgedRinging());
    t.engine.warmRingLeg(LOCAL, (await t.engine.ringLegOf(LOCAL))!.sdp);
    const pc = t.peers[0]!;
    pc.setState('failed', 'failed');
    expect(facts).toEqual([]);
    expect(t.notices).toEqual([]);
    expect(pc.connectionState).toBe('closed');
    expect(await t.engine.ringLegOf(LOCAL)).toBeUndefined();
    expect(t.engine.answerRingLegAgain(bridgedRinging())).toBe(true);
    expect(await t.engine.ringLegOf(LOCAL)).toEqual({ sdp: chromiumAnswer, warm: false });
    await settle();
    expect(t.peers[1]!.remoteDescription?.sdp).toBe(t.peers[0]!.remoteDescription?.sdp);
  });

  it('a leg of its own in place of the ring\u2019s: the old media closes and its offer is answered, at Answer too; once Answer handed one over, none', async () => {
    const t = mediaEngine();
    t.engine.onCall(bridgedRinging());
    await t.engine.ringLegOf(LOCAL);
    const own = customerOffer.replace('o=- ', 'o=own ');
    expect(t.engine.answerRingLegAgain(bridgedRinging(), { legId: 'leg-own', offerSdp: own })).toBe(true);
    expect(t.peers[0]!.connectionState).toBe('closed');
    expect(await t.engine.ringLegOf(LOCAL)).toEqual({ sdp: chromiumAnswer, legId: 'leg-own', warm: false });
    await settle();
    expect(t.peers[1]!.remoteDescription?.sdp).toContain('o=own ');
    // Its media gone (an answer refused), Answer prepares for the window's own leg, not the ring's.
    t.engine.close(LOCAL);
    await t.engine.answerFor(bridgedRinging());
    expect(t.peers[2]!.remoteDescription?.sdp).toContain('o=own ');
    expect(t.engine.answerRingLegAgain(bridgedRinging(), { legId: 'leg-own-2', offerSdp: own })).toBe(false);
    expect(t.peers).toHaveLength(3);
  });
});
