// A supervisor's leg of a joined call (webrtc/monitor-media.ts), on the media engine's fakes: the
// node's offer answered as a rejoining leg's is (its candidates reach ICE only once the relay took the
// answer), the microphone disabled while listening and open while whispering or barging, the call's
// audio on the calls' speaker, and everything let go on leave: the peer connection, the microphone
// track, the <audio>. One joined call at a time.
import { afterEach, describe, expect, test } from 'vitest';
import type { MonitorFact } from '../../../renderer/webrtc/monitor-media';
import { customerOffer, chromiumAnswer } from '../../fixtures/sdp';
import { closeEngines, mediaEngine, settle } from './fake-call-media';

afterEach(() => closeEngines());

/** The node's offer: ice-lite with its candidates inline, like a rejoining leg's. */
const NODE_OFFER = customerOffer;

function joinedLeg() {
  const t = mediaEngine();
  const facts: MonitorFact[] = [];
  t.engine.monitor.onFact((fact) => facts.push(fact));
  return { ...t, monitor: t.engine.monitor, facts };
}

describe('the leg of a joined call', () => {
  test('"Listen": answered with the microphone on its one sender, disabled; the node\'s candidates reach ICE only once the relay took the answer', async () => {
    const t = joinedLeg();
    const answer = await t.monitor.answer('wacid.7', 'leg-1', NODE_OFFER, 'listen');
    expect(answer).toEqual({ ok: true, value: { sdp: chromiumAnswer } });
    const pc = t.peers[0]!;
    expect(pc.remoteDescription?.sdp).not.toMatch(/^a=candidate:/m);
    expect(pc.senders[0]!.track).toBe(t.mics[0]);
    expect(t.mics[0]!.enabled).toBe(false);
    expect(pc.candidates).toEqual([]);
    expect(t.monitor.legOf('wacid.7')).toBe('leg-1');

    t.monitor.connect('leg-other');
    expect(pc.candidates).toEqual([]);
    t.monitor.connect('leg-1');
    await settle();
    expect(pc.candidates.length).toBeGreaterThan(0);
    pc.connect();
    expect(t.facts).toEqual([{ callId: 'wacid.7', legId: 'leg-1', state: 'connected' }]);
    expect(t.monitor.describe()).toMatchObject({ callId: 'wacid.7', legId: 'leg-1', phase: 'connected', connection: 'connected', micEnabled: false, micLive: true, playing: true });
    // One exchange, never renegotiated.
    expect(pc.calls).toMatchObject({ setRemoteDescription: 1, createAnswer: 1, setLocalDescription: 1, createOffer: 0 });
  });

  test('"Whisper" and "Barge" open the microphone; back to "Listen" closes it, on the same track and sender', async () => {
    const t = joinedLeg();
    await t.monitor.answer('wacid.7', 'leg-1', NODE_OFFER, 'whisper');
    const mic = t.mics[0]!;
    expect(mic.enabled).toBe(true);
    t.monitor.setMode('listen');
    expect(mic.enabled).toBe(false);
    t.monitor.setMode('barge');
    expect(mic.enabled).toBe(true);
    await settle();
    expect(t.peers[0]!.senders[0]!.track).toBe(mic);
    expect(t.mics).toHaveLength(1);
  });

  test('close (Leave, the call\'s end): the peer connection, the microphone and the call\'s audio go; it says nothing more', async () => {
    const t = joinedLeg();
    await t.monitor.answer('wacid.7', 'leg-1', NODE_OFFER, 'barge');
    t.monitor.connect('leg-1');
    t.monitor.close();
    expect(t.peers[0]!.connectionState).toBe('closed');
    expect(t.mics[0]!.readyState).toBe('ended');
    expect(t.audios[0]!.isConnected).toBe(false);
    expect(t.monitor.describe()).toBeUndefined();
    expect(t.monitor.legOf('wacid.7')).toBeUndefined();
    t.peers[0]!.connect();
    expect(t.facts).toEqual([]);
    t.monitor.close();
  });

  test('another call\'s leg closes the one before: one joined call at a time', async () => {
    const t = joinedLeg();
    await t.monitor.answer('wacid.7', 'leg-1', NODE_OFFER, 'listen');
    await t.monitor.answer('wacid.8', 'leg-2', NODE_OFFER, 'listen');
    expect(t.peers[0]!.connectionState).toBe('closed');
    expect(t.mics[0]!.readyState).toBe('ended');
    expect(t.monitor.legOf('wacid.7')).toBeUndefined();
    expect(t.monitor.legOf('wacid.8')).toBe('leg-2');
  });

  test('ICE that fails is said once, as a failure of this leg', async () => {
    const t = joinedLeg();
    await t.monitor.answer('wacid.7', 'leg-1', NODE_OFFER, 'listen');
    t.monitor.connect('leg-1');
    t.peers[0]!.setState('failed', 'failed');
    t.peers[0]!.setState('failed', 'failed');
    expect(t.facts).toEqual([{ callId: 'wacid.7', legId: 'leg-1', state: 'failed', reason: { code: 'callMedia.iceFailed' } }]);
  });

  test('a microphone refused: no answer, the reason said, nothing left open', async () => {
    const t = joinedLeg();
    t.refuse.set('', 'NotAllowedError');
    const answer = await t.monitor.answer('wacid.7', 'leg-1', NODE_OFFER, 'listen');
    expect(answer).toMatchObject({ ok: false, error: { code: 'media_failed', problem: { code: 'callMedia.micDenied' } } });
    expect(t.monitor.describe()).toBeUndefined();
    expect(t.peers.every((pc) => pc.connectionState === 'closed')).toBe(true);
  });

  test('plays on the calls\' speaker, and follows a device chosen meanwhile; the window going closes it with the calls', async () => {
    const t = joinedLeg();
    await t.engine.useDevices({ microphone: '', speaker: 'headset' });
    await t.monitor.answer('wacid.7', 'leg-1', NODE_OFFER, 'whisper');
    await settle();
    expect(t.audios[0]!.sinkId).toBe('headset');
    await t.engine.useDevices({ microphone: 'usb-mic', speaker: 'desk' });
    await settle();
    expect(t.audios[0]!.sinkId).toBe('desk');
    expect(t.monitor.audioRoute()).toMatchObject({ micDeviceId: 'usb-mic', micEnabled: true, sinkId: 'desk' });
    t.engine.closeAll();
    expect(t.monitor.describe()).toBeUndefined();
    expect(t.mics.every((mic) => mic.readyState === 'ended')).toBe(true);
  });
});
