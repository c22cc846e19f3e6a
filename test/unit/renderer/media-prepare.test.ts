// A ringing call's answer is made as soon as it can be: the peer connection takes the customer's
// offer while the microphone opens (its slowest step), and the answer follows once the microphone's
// track is on the one sender. Which reason the agent reads when something fails is unchanged: the
// microphone's first, then the network settings'.
import { afterEach, describe, expect, it } from 'vitest';
import { MediaEngine } from '../../../renderer/webrtc/media-engine';
import { mediaText } from '../../../renderer/webrtc/media-text';
import { chromiumAnswer } from '../../fixtures/sdp';
import { FakeAudioElement, FakePeerConnection, FakeStream, FakeTrack, LOCAL, ringingCall, settle } from './fake-call-media';

const engines: MediaEngine[] = [];
afterEach(() => engines.splice(0).forEach((engine) => engine.closeAll()));

/** A peer connection that refuses the customer's offer, or cannot make an answer to it. */
type PeerRefusal = 'offer' | 'answer';

/** An engine whose microphone opens only when the test says so (or is refused with `name`). */
function slowMicrophone(iceOk = true, refuse?: PeerRefusal) {
  const peers: FakePeerConnection[] = [];
  const mics: FakeTrack[] = [];
  let open: (outcome: { refuse?: string }) => void = () => undefined;
  const engine = new MediaEngine({
    getUserMedia: () =>
      new Promise((resolve, reject) => {
        open = ({ refuse }) => {
          if (refuse) {
            reject(Object.assign(new Error(`${refuse}: refused`), { name: refuse }));
            return;
          }
          const track = new FakeTrack(`mic-${mics.length + 1}`);
          mics.push(track);
          resolve(new FakeStream([track]) as unknown as MediaStream);
        };
      }),
    createPeerConnection: (config) => {
      const pc = new FakePeerConnection(config);
      if (refuse === 'offer') pc.setRemoteDescription = () => Promise.reject(new Error('OperationError: the offer cannot be applied'));
      if (refuse === 'answer') pc.createAnswer = () => Promise.reject(new Error('OperationError: no answer'));
      peers.push(pc);
      return pc as unknown as RTCPeerConnection;
    },
    createAudioElement: () => new FakeAudioElement() as unknown as HTMLAudioElement,
    audioParent: () => ({ append: (el: FakeAudioElement) => void (el.isConnected = true) }) as unknown as HTMLElement,
    iceConfig: async () =>
      iceOk ? { ok: true, value: { iceServers: [], iceTransportPolicy: 'all' } } : { ok: false, error: { code: 'gateway_unreachable', message: 'The network settings could not be read.' } },
  });
  engines.push(engine);
  return { engine, peers, mics, openMicrophone: (outcome: { refuse?: string } = {}) => open(outcome) };
}

describe('preparing an answer while the call rings', () => {
  it('the offer is applied while the microphone opens; the answer is made once its track is on the sender', async () => {
    const t = slowMicrophone();
    t.engine.onCall(ringingCall());
    await settle();
    const pc = t.peers[0]!;
    // The microphone is still opening: the offer (without its candidates) is in already, no answer yet.
    expect(pc.calls).toMatchObject({ setRemoteDescription: 1, addTrack: 0, createAnswer: 0, setLocalDescription: 0 });
    expect(pc.remoteDescription?.sdp).not.toMatch(/^a=candidate:/m);
    // Gathering waits for the answer: no candidate pool before the microphone is open.
    expect(pc.config.iceCandidatePoolSize).toBe(0);

    t.openMicrophone();
    const answer = await t.engine.answerFor(ringingCall());
    expect(answer).toEqual({ ok: true, value: { sdp: chromiumAnswer } });
    expect(pc.calls).toMatchObject({ setRemoteDescription: 1, addTrack: 1, createAnswer: 1, setLocalDescription: 1 });
    expect(pc.senders[0]!.track).toBe(t.mics[0]);
    expect(pc.candidates).toEqual([]);
  });

  it('a microphone refused: nothing prepared, its peer connection closed at once; Answer\u2019s retry says why and closes its own', async () => {
    const t = slowMicrophone();
    t.engine.onCall(ringingCall());
    await settle();
    t.openMicrophone({ refuse: 'NotAllowedError' });
    await settle();
    await settle();
    expect(t.engine.describe().find((m) => m.localId === LOCAL)?.phase).toBe('failed');
    expect(t.peers[0]!.connectionState).toBe('closed');
    // Answer tries once more (the agent is there to see a prompt): refused again, the reason said.
    const again = t.engine.answerFor(ringingCall());
    await settle();
    t.openMicrophone({ refuse: 'NotAllowedError' });
    const answer = await again;
    expect(answer.ok).toBe(false);
    if (!answer.ok) expect(mediaText(answer.error.problem)).toMatch(/microphone/i);
    expect(t.peers.every((pc) => pc.connectionState === 'closed')).toBe(true);
  });

  it('an offer refused while the microphone opens: the microphone is given back as it opens, not kept on while the call rings', async () => {
    const t = slowMicrophone(true, 'offer');
    t.engine.onCall(ringingCall());
    await settle();
    await settle();
    const failed = t.engine.describe().find((m) => m.localId === LOCAL);
    expect(failed?.phase).toBe('failed');
    // Of no use any more: Answer prepares again on a new peer connection.
    expect(t.peers[0]!.connectionState).toBe('closed');
    t.openMicrophone();
    await settle();
    await settle();
    expect(t.mics[0]!.readyState).toBe('ended');
    expect(t.engine.describe().find((m) => m.localId === LOCAL)?.micLive).toBeUndefined();

    // Answer tries once more: the same refusal, said.
    const answer = await t.engine.answerFor(ringingCall());
    expect(answer.ok).toBe(false);
    if (!answer.ok) expect(mediaText(answer.error.problem)).toBe("The customer's offer could not be used (OperationError: the offer cannot be applied).");
    t.openMicrophone();
    await settle();
    expect(t.mics.every((mic) => mic.readyState === 'ended')).toBe(true);
    expect(t.peers.every((pc) => pc.connectionState === 'closed')).toBe(true);
  });

  it('an answer that cannot be made: the microphone is given back and the peer connection closed while the call rings', async () => {
    const t = slowMicrophone(true, 'answer');
    t.engine.onCall(ringingCall());
    await settle();
    t.openMicrophone();
    await settle();
    await settle();
    expect(t.engine.describe().find((m) => m.localId === LOCAL)?.phase).toBe('failed');
    expect(t.mics[0]!.readyState).toBe('ended');
    expect(t.peers[0]!.connectionState).toBe('closed');
  });

  it('network settings that cannot be read: their reason once the microphone opened, which is given back', async () => {
    const t = slowMicrophone(false);
    t.engine.onCall(ringingCall());
    await settle();
    expect(t.peers).toHaveLength(0);
    t.openMicrophone();
    await settle();
    await settle();
    expect(t.mics[0]!.readyState).toBe('ended');
    const failed = t.engine.describe().find((m) => m.localId === LOCAL);
    expect(failed?.phase).toBe('failed');
  });

  it('both refused: the microphone\u2019s reason is the one said', async () => {
    const t = slowMicrophone(false);
    t.engine.onCall(ringingCall());
    await settle();
    const answer = t.engine.answerFor(ringingCall());
    t.openMicrophone({ refuse: 'NotAllowedError' });
    await settle();
    t.openMicrophone({ refuse: 'NotAllowedError' });
    const result = await answer;
    expect(result.ok).toBe(false);
    if (!result.ok) expect(mediaText(result.error.problem)).toMatch(/microphone/i);
  });
});
