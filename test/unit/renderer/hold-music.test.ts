// Hold in the window: the hold music (renderer/webrtc/hold-music.ts) and the media engine following
// a call's `heldSince`. Node has no WebRTC and no WebAudio, so the peer connection, the tracks, the
// remote <audio> (fake-call-media.ts) and the AudioContext (fake-audio.ts) are small fakes that
// record what the engine asks of them; what is checked is the contract the gateway imposes: one
// sender, no renegotiation, the microphone never sent while held, and RTP going on (a track on the
// sender at all times).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { HOLD_MUSIC_SAMPLE_RATE, renderHoldMusic } from '../../../shared/hold-music-render';
import { HOLD_MUSIC_PATH } from '../../../scripts/make-hold-music';
import { HoldMusic } from '../../../renderer/webrtc/hold-music';
import { ended } from './fixtures';
import { FakeAudioContext, type FakeAudioBuffer } from './fake-audio';
import { FakeHoldMusic, LOCAL, ID, activeCall, callAs, closeEngines, heldCall, media, mediaEngine as setUp, settle, waitFor } from './fake-call-media';

afterEach(() => closeEngines());

describe('MediaEngine: hold and resume follow the call’s heldSince', () => {
  it('hold puts the music on the same sender: no new sender, no transceiver, no renegotiation', async () => {
    const t = setUp();
    const { pc, sender, mic } = await t.connectCall();
    const negotiated = { ...pc.calls };
    expect(media(t.engine)).toMatchObject({ held: false, sending: 'microphone', micEnabled: true });

    t.engine.onCall(heldCall());
    await settle();
    const music = t.music.players[0]!;
    expect(sender.track).toBe(music.track);
    expect(pc.senders).toHaveLength(1);
    expect(pc.getTransceivers()).toHaveLength(1);
    expect(pc.calls).toEqual(negotiated);
    // The microphone stays open underneath (instant resume), closed: nothing of it can leave.
    expect(mic.readyState).toBe('live');
    expect(mic.enabled).toBe(false);
    expect(media(t.engine)).toMatchObject({ held: true, sending: 'music', micEnabled: false, micLive: true });
    expect(t.engine.describe()).toEqual([expect.objectContaining({ localId: LOCAL, phase: 'connected', held: true, sending: 'music', playing: false })]);

    // Every later push of the held call changes nothing.
    t.engine.onCall(heldCall());
    t.engine.reconcile([heldCall()]);
    await settle();
    expect(t.music.players).toHaveLength(1);
    expect(sender.replaced).toEqual([music.track]);
  });

  it('resume puts the microphone back at once, then stops the music', async () => {
    const t = setUp();
    const { pc, sender, mic } = await t.connectCall();
    t.engine.onCall(heldCall());
    await settle();
    const music = t.music.players[0]!;

    t.engine.onCall(activeCall());
    // One replaceTrack, nothing to wait for: the microphone was open all along.
    await Promise.resolve();
    await Promise.resolve();
    expect(sender.track).toBe(mic);
    expect(mic.enabled).toBe(true);
    await settle();
    expect(music.stopped).toBe(true);
    expect(sender.replaced).toEqual([music.track, mic]);
    expect(pc.calls.setLocalDescription).toBe(1);
    expect(pc.calls.createOffer + pc.calls.createAnswer).toBe(1);
    expect(media(t.engine)).toMatchObject({ held: false, sending: 'microphone', micEnabled: true });
  });

  it('a snapshot (reconcile) holds and resumes as a push does', async () => {
    const t = setUp();
    const { sender, mic } = await t.connectCall();
    t.engine.reconcile([heldCall()]);
    await settle();
    expect(sender.track).toBe(t.music.players[0]!.track);
    t.engine.reconcile([activeCall()]);
    await settle();
    expect(sender.track).toBe(mic);
  });

  it('mute is kept apart from hold: a muted call is resumed muted, an unmute while held waits for the resume', async () => {
    const t = setUp();
    const { sender, mic } = await t.connectCall();
    t.engine.onCall(callAs({ held: false, muted: true }));
    t.engine.onCall(callAs({ held: true, muted: true }));
    await settle();
    expect(media(t.engine)).toMatchObject({ muted: true, held: true, sending: 'music' });
    t.engine.onCall(callAs({ held: false, muted: true }));
    await settle();
    expect(sender.track).toBe(mic);
    expect(mic.enabled).toBe(false);
    expect(media(t.engine)).toMatchObject({ muted: true, held: false, sending: 'microphone', micEnabled: false });

    // Unmuted while held: the microphone stays closed until the resume, and is open after it.
    t.engine.onCall(callAs({ held: true, muted: true }));
    await settle();
    t.engine.onCall(heldCall());
    expect(mic.enabled).toBe(false);
    expect(sender.track).toBe(t.music.players[1]!.track);
    t.engine.onCall(activeCall());
    await settle();
    expect(sender.track).toBe(mic);
    expect(mic.enabled).toBe(true);
  });

  it('a microphone chosen while held is only kept: the music goes on, the resume sends the new microphone', async () => {
    const t = setUp();
    const { sender, mic } = await t.connectCall();
    t.engine.onCall(heldCall());
    await settle();
    const music = t.music.players[0]!;

    await t.engine.useDevices({ microphone: 'headset', speaker: '' });
    const headset = t.mics[1]!;
    expect(headset.deviceId).toBe('headset');
    expect(sender.track).toBe(music.track);
    expect(sender.replaced).toEqual([music.track]);
    expect(headset.enabled).toBe(false);
    expect(mic.readyState).toBe('ended');
    expect(media(t.engine)).toMatchObject({ micDeviceId: 'headset', held: true, sending: 'music', micLive: true });

    t.engine.onCall(activeCall());
    await settle();
    expect(sender.track).toBe(headset);
    expect(headset.enabled).toBe(true);
    expect(sender.replaced).toEqual([music.track, headset]);
  });

  it('a microphone whose track ends while held is captured again, and still not sent', async () => {
    const t = setUp();
    const { sender, mic } = await t.connectCall();
    t.engine.onCall(heldCall());
    await settle();
    mic.stop();
    mic.dispatchEvent(new Event('ended'));
    await waitFor('the capture again', () => t.mics.length === 2);
    await settle();
    expect(sender.track).toBe(t.music.players[0]!.track);
    expect(t.mics[1]!.enabled).toBe(false);
  });

  it('the held customer is not heard; the resume lets the customer be heard again', async () => {
    const t = setUp();
    const { audio } = await t.connectCall();
    expect(audio).toMatchObject({ muted: false, paused: false });
    t.engine.onCall(heldCall());
    expect(audio).toMatchObject({ muted: true, paused: true });
    expect(media(t.engine).playing).toBe(false);
    t.engine.onCall(activeCall());
    await settle();
    expect(audio).toMatchObject({ muted: false, paused: false });
    expect(media(t.engine).playing).toBe(true);
  });

  it('until the music plays, the closed microphone stays on the sender (silence, still RTP); then the music takes over', async () => {
    const music = new FakeHoldMusic();
    music.readyAtOnce = false;
    const t = setUp({ music });
    const { sender, mic } = await t.connectCall();
    t.engine.onCall(heldCall());
    await settle();
    expect(sender.track).toBe(mic);
    expect(mic.enabled).toBe(false);
    expect(media(t.engine)).toMatchObject({ held: true, sending: 'microphone', micEnabled: false });
    // A new microphone meanwhile takes the old one's place, closed: the silent music track would send no RTP at all.
    await t.engine.useDevices({ microphone: 'headset', speaker: '' });
    const headset = t.mics[1]!;
    expect(sender.track).toBe(headset);
    expect(headset.enabled).toBe(false);
    music.players[0]!.start(true);
    await settle();
    expect(sender.track).toBe(music.players[0]!.track);
  });

  it('a resume before the music played: the music never reaches the sender and is stopped', async () => {
    const music = new FakeHoldMusic();
    music.readyAtOnce = false;
    const t = setUp({ music });
    const { sender, mic } = await t.connectCall();
    t.engine.onCall(heldCall());
    t.engine.onCall(activeCall());
    await settle();
    music.players[0]!.start(true);
    await settle();
    expect(sender.replaced).toEqual([]);
    expect(sender.track).toBe(mic);
    expect(mic.enabled).toBe(true);
    expect(music.players[0]!.stopped).toBe(true);
  });

  it('with no music to be had, a held call sends silence: the closed microphone, never the open one', async () => {
    const music = new FakeHoldMusic();
    music.fail = true;
    const t = setUp({ music });
    const { sender, mic } = await t.connectCall();
    t.engine.onCall(heldCall());
    await settle();
    expect(sender.track).toBe(mic);
    expect(mic.enabled).toBe(false);
    t.engine.onCall(activeCall());
    expect(mic.enabled).toBe(true);
  });

  it('music that will not play (no buffer, a context refused) leaves the closed microphone on the sender', async () => {
    const music = new FakeHoldMusic();
    music.readyAtOnce = false;
    const t = setUp({ music });
    const { sender, mic } = await t.connectCall();
    t.engine.onCall(heldCall());
    music.players[0]!.start(false);
    await settle();
    expect(sender.track).toBe(mic);
    expect(mic.enabled).toBe(false);
  });

  it('the end of a held call stops its music; the other call is untouched', async () => {
    const t = setUp();
    const { sender } = await t.connectCall();
    t.engine.onCall(heldCall());
    await settle();
    t.engine.onCall(ended(ID));
    expect(t.music.players[0]!.stopped).toBe(true);
    expect(t.engine.has(LOCAL)).toBe(false);
    expect(sender.replaced).toHaveLength(1);
  });

  it('close() while held stops the music too', async () => {
    const t = setUp();
    await t.connectCall();
    t.engine.onCall(heldCall());
    await settle();
    t.engine.close(LOCAL);
    expect(t.music.players[0]!.stopped).toBe(true);
  });

  it('the levels say nothing of the microphone while held (the sender’s source is the music)', async () => {
    const t = setUp();
    await t.connectCall();
    await expect(t.engine.levels(LOCAL)).resolves.toEqual({ mic: 0.5, customer: 0.25 });
    t.engine.onCall(heldCall());
    await expect(t.engine.levels(LOCAL)).resolves.toEqual({ mic: 0, customer: 0.25 });
    t.engine.onCall(activeCall());
    await expect(t.engine.levels(LOCAL)).resolves.toEqual({ mic: 0.5, customer: 0.25 });
  });
});

// ---- the hold music itself, on a fake AudioContext (fake-audio.ts) ----

const assetBytes = (): ArrayBuffer => {
  const file = readFileSync(HOLD_MUSIC_PATH);
  return file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);
};

describe('HoldMusic', () => {
  it('decodes the bundled file once; each held call gets its own looping source and its own track', async () => {
    const ctx = new FakeAudioContext();
    let loads = 0;
    const music = new HoldMusic({ createContext: () => ctx, loadFile: async () => (loads++, assetBytes()) });
    const first = music.play();
    const second = music.play();
    await expect(first.ready).resolves.toBe(true);
    await expect(second.ready).resolves.toBe(true);
    expect(loads).toBe(1);
    expect(ctx.decodes).toBe(1);
    expect(music.origin()).toBe('file');
    expect(ctx.state).toBe('running');
    expect(ctx.sources).toHaveLength(2);
    expect(ctx.sources.map((s) => [s.loop, s.started, s.connectedTo])).toEqual([
      [true, true, ctx.destinations[0]],
      [true, true, ctx.destinations[1]],
    ]);
    // The file's 8 s at 24 kHz.
    expect(ctx.sources[0]!.buffer).toMatchObject({ length: 8 * HOLD_MUSIC_SAMPLE_RATE, sampleRate: HOLD_MUSIC_SAMPLE_RATE });
    expect(first.track).toBe(ctx.destinations[0]!.track);
    expect(first.track).not.toBe(second.track);
    expect(music.players).toBe(2);
  });

  it('one call’s stop ends only its music; the last one rests the context, the next hold wakes it', async () => {
    const ctx = new FakeAudioContext();
    const music = new HoldMusic({ createContext: () => ctx, loadFile: async () => assetBytes() });
    const first = music.play();
    const second = music.play();
    await Promise.all([first.ready, second.ready]);
    first.stop();
    first.stop();
    expect([ctx.sources[0]!.stopped, ctx.sources[0]!.connectedTo, ctx.destinations[0]!.track.readyState]).toEqual([true, null, 'ended']);
    expect([ctx.sources[1]!.stopped, ctx.destinations[1]!.track.readyState]).toEqual([false, 'live']);
    expect(ctx.state).toBe('running');
    second.stop();
    await settle();
    expect(ctx.state).toBe('suspended');
    const third = music.play();
    await expect(third.ready).resolves.toBe(true);
    expect(ctx.state).toBe('running');
    expect(ctx.decodes).toBe(1);
  });

  it('a file that cannot be decoded: the same music is rendered in the window at the context’s rate', async () => {
    const ctx = new FakeAudioContext();
    const music = new HoldMusic({ createContext: () => ctx, loadFile: async () => new TextEncoder().encode('<!doctype html>').buffer });
    const player = music.play();
    await expect(player.ready).resolves.toBe(true);
    expect(music.origin()).toBe('rendered');
    const buffer = ctx.sources[0]!.buffer as FakeAudioBuffer;
    expect(buffer.sampleRate).toBe(48_000);
    expect(Buffer.from(buffer.channels[0]!.buffer).equals(Buffer.from(renderHoldMusic(48_000).buffer))).toBe(true);
  });

  it('a file that cannot be fetched is rendered too', async () => {
    const ctx = new FakeAudioContext();
    const music = new HoldMusic({
      createContext: () => ctx,
      loadFile: async () => {
        throw new Error('HTTP 404');
      },
    });
    await expect(music.play().ready).resolves.toBe(true);
    expect(music.origin()).toBe('rendered');
  });

  it('a stop before the music is ready starts nothing', async () => {
    const ctx = new FakeAudioContext();
    const music = new HoldMusic({ createContext: () => ctx, loadFile: async () => assetBytes() });
    const player = music.play();
    player.stop();
    await expect(player.ready).resolves.toBe(false);
    expect(ctx.sources).toHaveLength(0);
    expect(music.players).toBe(0);
  });

  it('a context the autoplay policy holds back: not ready (the track would carry nothing) until it runs', async () => {
    const ctx = new FakeAudioContext('', { activated: false, failResume: false });
    const music = new HoldMusic({ createContext: () => ctx, loadFile: async () => assetBytes() });
    const player = music.play();
    let ready: boolean | undefined;
    void player.ready.then((r) => (ready = r));
    await settle();
    expect(ready).toBeUndefined();
    expect(ctx.sources).toHaveLength(0);
    // The page had its gesture: the browser runs the context, and the resume asked for completes.
    ctx.setState('running');
    await settle();
    expect(ready).toBe(true);
    expect(ctx.sources[0]!.started).toBe(true);
  });

  it('a context that refuses to run: never ready', async () => {
    const ctx = new FakeAudioContext('', { activated: true, failResume: true });
    const music = new HoldMusic({ createContext: () => ctx, loadFile: async () => assetBytes() });
    await expect(music.play().ready).resolves.toBe(false);
  });
});
