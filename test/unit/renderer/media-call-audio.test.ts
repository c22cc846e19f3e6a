// A call's audio has one writer (renderer/webrtc/call-audio.ts `reconcile`): mute and hold (the pushed
// call's) and a device change only change the wish, and whatever the order and however quick, the
// call ends with the latest wish: the microphone's `enabled`, what the one sender carries, the
// customer heard or not, the devices. A step that fails leaves what really is on the sender, said
// truthfully, and the next reconcile tries again: never a local "held" beside a main process that
// says resumed.
import { afterEach, describe, expect, it } from 'vitest';
import type { MediaEngine } from '../../../renderer/webrtc/media-engine';
import { FakeHoldMusic, LOCAL, activeCall, callAs, closeEngines, heldCall, media, mediaEngine, settle, waitFor } from './fake-call-media';

afterEach(() => closeEngines());

type Step = 'mute' | 'hold' | 'device';

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

/**
 * Each change as it reaches the media: the mute and the hold in the call main pushes (CallState
 * `muted`, `heldSince`: each push carries both, as `wish` has them), the devices from Settings → Audio.
 */
function change(engine: MediaEngine, wish: { held: boolean; muted: boolean }, step: Step, on: boolean): Promise<void> | void {
  switch (step) {
    case 'mute':
      wish.muted = on;
      return engine.onCall(callAs(wish));
    case 'hold':
      wish.held = on;
      return engine.onCall(callAs(wish));
    case 'device':
      return engine.useDevices({ microphone: on ? 'headset' : '', speaker: on ? 'headset-out' : '' });
  }
}

describe('CallAudio.reconcile: the latest wish, whatever the order', () => {
  for (const order of permutations<Step>(['mute', 'hold', 'device'])) {
    it(`${order.join(', ')} at once, then undone in the same order: each time the call ends as wished`, async () => {
      const t = mediaEngine();
      const { sender, audio } = await t.connectCall();
      const wish = { held: false, muted: false };

      // No step waits for the one before: they overlap on the sender.
      for (const step of order) void change(t.engine, wish, step, true);
      await settle();
      await settle();
      const headset = t.mics.find((m) => m.deviceId === 'headset')!;
      const music = t.music.players[0]!;
      expect(sender.track).toBe(music.track);
      expect(headset.enabled).toBe(false);
      expect(t.mics.filter((m) => m.readyState === 'live')).toEqual([headset]);
      expect(audio).toMatchObject({ muted: true, paused: true, sinkId: 'headset-out' });
      expect(media(t.engine)).toMatchObject({ muted: true, held: true, sending: 'music', micDeviceId: 'headset', micEnabled: false, micLive: true, playing: false });

      for (const step of order) void change(t.engine, wish, step, false);
      await settle();
      await settle();
      const fallback = t.mics[t.mics.length - 1]!;
      expect(fallback.deviceId).toBe('default');
      expect(sender.track).toBe(fallback);
      expect(fallback.enabled).toBe(true);
      expect(music.stopped).toBe(true);
      expect(t.mics.filter((m) => m.readyState === 'live')).toEqual([fallback]);
      expect(audio).toMatchObject({ muted: false, paused: false, sinkId: '' });
      expect(media(t.engine)).toMatchObject({ muted: false, held: false, sending: 'microphone', micEnabled: true, playing: true });
      // Never a second sender, never a renegotiation.
      expect(t.peers[0]!.senders).toHaveLength(1);
      expect(t.peers[0]!.calls.setLocalDescription).toBe(1);
    });
  }

  it('a wish changed back before its pass ran leaves nothing behind', async () => {
    const t = mediaEngine();
    const { sender, mic } = await t.connectCall();
    t.engine.onCall(heldCall());
    t.engine.onCall(activeCall());
    t.engine.onCall(callAs({ held: false, muted: true }));
    t.engine.onCall(activeCall());
    await settle();
    await settle();
    expect(sender.track).toBe(mic);
    expect(mic.enabled).toBe(true);
    // The music asked for by the hold never reached the sender, and is stopped.
    expect(sender.replaced).toEqual([]);
    expect(t.music.players.every((p) => p.stopped)).toBe(true);
  });

  it('the microphone is never enabled while held, at any moment of a device change', async () => {
    const t = mediaEngine();
    const { sender } = await t.connectCall();
    t.engine.onCall(heldCall());
    const switching = t.engine.useDevices({ microphone: 'headset', speaker: '' });
    // Every track that has been the call's microphone, checked at every turn of the event loop.
    for (let i = 0; i < 5; i++) {
      expect(t.mics.every((m) => !m.enabled || m.readyState === 'ended')).toBe(true);
      await Promise.resolve();
    }
    await switching;
    expect(sender.track).toBe(t.music.players[0]!.track);
  });
});

describe('CallAudio.reconcile: a failure is recorded truthfully and tried again', () => {
  it('a resume whose replaceTrack fails: held is what main says, the sender still carries the music, and the next reconcile puts the microphone back', async () => {
    const t = mediaEngine();
    const { sender, mic, audio } = await t.connectCall();
    t.engine.onCall(heldCall());
    await settle();
    const music = t.music.players[0]!;
    expect(sender.track).toBe(music.track);

    sender.failReplace = 1;
    t.engine.onCall(activeCall());
    await settle();
    // Resumed, as the main process says: the agent hears the customer, the microphone is open...
    expect(media(t.engine)).toMatchObject({ held: false, micEnabled: true, playing: true });
    expect(audio).toMatchObject({ muted: false, paused: false });
    // ...but the sender really carries the music still, and says so; the music plays on rather than silence.
    expect(media(t.engine).sending).toBe('music');
    expect(sender.track).toBe(music.track);
    expect(music.stopped).toBe(false);

    // The next push of the call (any reconcile) tries again.
    t.engine.onCall(activeCall());
    await settle();
    expect(sender.track).toBe(mic);
    expect(media(t.engine)).toMatchObject({ held: false, sending: 'microphone', micEnabled: true });
    expect(music.stopped).toBe(true);
  });

  it('a hold whose replaceTrack fails sends the closed microphone (silence), and the next reconcile sends the music', async () => {
    const music = new FakeHoldMusic();
    music.readyAtOnce = false;
    const t = mediaEngine({ music });
    const { sender, mic } = await t.connectCall();
    t.engine.onCall(heldCall());
    await settle();
    // The music plays, and the sender refuses it.
    sender.failReplace = 1;
    music.players[0]!.start(true);
    await settle();
    expect(sender.track).toBe(mic);
    expect(mic.enabled).toBe(false);
    expect(media(t.engine)).toMatchObject({ held: true, sending: 'microphone', micEnabled: false, playing: false });

    t.engine.onCall(callAs({ held: true, muted: true }));
    await settle();
    expect(sender.track).toBe(t.music.players[0]!.track);
    expect(media(t.engine)).toMatchObject({ held: true, muted: true, sending: 'music' });
  });

  it('a new microphone the sender refuses: the old one keeps sending, the new one is released, the agent is told', async () => {
    const t = mediaEngine();
    const { sender, mic } = await t.connectCall();
    sender.failReplace = 1;
    await t.engine.useDevices({ microphone: 'headset', speaker: '' });
    const headset = t.mics[1]!;
    expect(sender.track).toBe(mic);
    expect(mic.readyState).toBe('live');
    expect(headset.readyState).toBe('ended');
    expect(media(t.engine)).toMatchObject({ sending: 'microphone', micDeviceId: 'default', micEnabled: true });
    expect(t.notices).toEqual(['The microphone could not be switched (InvalidModificationError: the track cannot be taken).']);
  });

  it('a microphone that cannot be opened is said once; a mute or a hold does not ask the device again, a new choice does', async () => {
    const t = mediaEngine();
    const { sender, mic } = await t.connectCall();
    t.refuse.set('headset', 'NotReadableError');
    await t.engine.useDevices({ microphone: 'headset', speaker: '' });
    expect(t.notices).toEqual(['The microphone could not be switched: The microphone cannot be opened: another application may be using it.']);
    expect(sender.track).toBe(mic);
    t.engine.onCall(callAs({ held: false, muted: true }));
    t.engine.onCall(callAs({ held: true, muted: true }));
    t.engine.onCall(callAs({ held: false, muted: true }));
    t.engine.onCall(activeCall());
    await settle();
    expect(t.notices).toHaveLength(1);
    expect(sender.track).toBe(mic);
    expect(mic.enabled).toBe(true);

    t.refuse.delete('headset');
    await t.engine.useDevices({ microphone: 'headset', speaker: '' });
    expect(sender.track).toBe(t.mics[1]);
    expect(media(t.engine)).toMatchObject({ micDeviceId: 'headset', sending: 'microphone', micEnabled: true });
  });

  it('a chosen microphone that is not here: the call opens the default once, and no mute, hold or push opens it again', async () => {
    const t = mediaEngine();
    t.refuse.set('headset', 'NotFoundError');
    await t.engine.useDevices({ microphone: 'headset', speaker: '' });
    const { sender, mic } = await t.connectCall();
    t.engine.onCall(callAs({ held: false, muted: true }));
    t.engine.onCall(callAs({ held: true, muted: true }));
    t.engine.onCall(callAs({ held: false, muted: true }));
    t.engine.onCall(activeCall());
    await settle();
    await settle();
    expect(t.mics).toEqual([mic]);
    expect(sender.track).toBe(mic);
    expect(media(t.engine)).toMatchObject({ micDeviceId: 'default', sending: 'microphone', micEnabled: true, micLive: true });

    // Plugged in and chosen again: the call takes it.
    t.refuse.delete('headset');
    await t.engine.useDevices({ microphone: 'headset', speaker: '' });
    expect(sender.track).toBe(t.mics[1]);
    expect(media(t.engine)).toMatchObject({ micDeviceId: 'headset', sending: 'microphone' });
  });

  it('a microphone chosen mid-call that is not here: the default is opened in its place once, not at every reconcile', async () => {
    const t = mediaEngine();
    const { sender } = await t.connectCall();
    t.refuse.set('headset', 'NotFoundError');
    await t.engine.useDevices({ microphone: 'headset', speaker: '' });
    expect(t.mics).toHaveLength(2);
    const fallback = t.mics[1]!;
    expect(sender.track).toBe(fallback);
    t.engine.onCall(callAs({ held: false, muted: true }));
    t.engine.onCall(callAs({ held: true, muted: true }));
    t.engine.onCall(callAs({ held: false, muted: true }));
    t.engine.onCall(activeCall());
    await settle();
    await settle();
    expect(t.mics).toHaveLength(2);
    expect(sender.track).toBe(fallback);
    expect(fallback.readyState).toBe('live');

    // Its track ends: captured again, the chosen device asked for first.
    fallback.stop();
    fallback.dispatchEvent(new Event('ended'));
    await settle();
    await settle();
    expect(t.mics).toHaveLength(3);
    expect(sender.track).toBe(t.mics[2]);
  });

  it('the call ends while a new microphone goes on the sender: neither the old microphone nor the new one stays live', async () => {
    const t = mediaEngine();
    const { sender, mic } = await t.connectCall();
    let release: (() => void) | undefined;
    const replace = sender.replaceTrack.bind(sender);
    sender.replaceTrack = async (track) => {
      await new Promise<void>((resolve) => (release = resolve));
      return replace(track);
    };
    const switched = t.engine.useDevices({ microphone: 'headset', speaker: '' });
    await waitFor('the switch under way', () => release !== undefined);
    t.engine.close(LOCAL);
    // The closed connection refuses the track.
    sender.failReplace = 1;
    release!();
    await switched;
    await settle();
    expect(t.mics).toHaveLength(2);
    expect(mic.readyState).toBe('ended');
    expect(t.mics[1]!.readyState).toBe('ended');
    expect(t.notices).toEqual([]);
  });

  it('the call ends while a new microphone goes on the sender, which takes it: both are stopped', async () => {
    const t = mediaEngine();
    const { sender, mic } = await t.connectCall();
    let release: (() => void) | undefined;
    const replace = sender.replaceTrack.bind(sender);
    sender.replaceTrack = async (track) => {
      await new Promise<void>((resolve) => (release = resolve));
      return replace(track);
    };
    const switched = t.engine.useDevices({ microphone: 'headset', speaker: '' });
    await waitFor('the switch under way', () => release !== undefined);
    t.engine.close(LOCAL);
    release!();
    await switched;
    await settle();
    expect(mic.readyState).toBe('ended');
    expect(t.mics[1]!.readyState).toBe('ended');
  });

  it('a lost microphone that cannot be captured again is said as lost', async () => {
    const t = mediaEngine();
    const { mic } = await t.connectCall();
    t.refuse.set('', 'NotAllowedError');
    mic.stop();
    mic.dispatchEvent(new Event('ended'));
    await settle();
    await settle();
    expect(t.notices).toEqual([
      'The microphone stopped and could not be opened again: Microphone access was denied. Allow the microphone for this app, then try again.',
    ]);
  });
});
