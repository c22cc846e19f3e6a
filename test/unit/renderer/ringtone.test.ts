// The ringtone says whether it is really heard. Headless Chromium (the end-to-end tests) does not
// enforce the autoplay policy and Node has no WebAudio, so the held-back, failing and recovering paths
// run here against a fake AudioContext that holds resume() back until the page had a gesture.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CALL_WAITING_PATTERN, RING_PATTERN, Ringtone, type RingtoneState } from '../../../renderer/sound/ringtone';
import { FakeAudioContext, fakeAudio } from './fake-audio';

const GRACE_MS = 300;

function setUp(policy: Parameters<typeof fakeAudio>[0] = {}) {
  const audio = fakeAudio(policy);
  /** The calls' speaker, as MediaEngine.speakerId says it. */
  const routing = { speaker: 'headset' };
  const ringtone = new Ringtone({ createContext: audio.createContext, blockedAfterMs: GRACE_MS, speaker: () => routing.speaker });
  const states: RingtoneState[] = [];
  ringtone.onStateChange((s) => states.push(s));
  return { audio, ringtone, states, routing };
}

describe('Ringtone', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('plays when the context may run: two tones per burst, on the default output', async () => {
    const t = setUp();
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.ringtone.state()).toBe('playing');
    expect(t.ringtone.playing).toBe(true);
    expect(t.ringtone.contextState()).toBe('running');
    expect(t.audio.last().sinkId).toBe('');
    expect(t.audio.last().live().map((o) => o.frequency.value)).toEqual([400, 450]);
    await vi.advanceTimersByTimeAsync(3000);
    expect(t.audio.last().oscillators).toHaveLength(4);
    expect(t.states).toEqual(['playing']);
  });

  it('a context the autoplay policy holds suspended is reported blocked after the grace, and schedules no burst', async () => {
    const t = setUp({ activated: false });
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(GRACE_MS - 1);
    expect(t.ringtone.state()).toBe('idle');
    await vi.advanceTimersByTimeAsync(1);
    expect(t.ringtone.state()).toBe('blocked');
    expect(t.states).toEqual(['blocked']);
    expect(t.ringtone.contextState()).toBe('suspended');
    // Bursts on a clock that stands still would all sound together once it runs.
    await vi.advanceTimersByTimeAsync(9000);
    expect(t.audio.last().oscillators).toHaveLength(0);
  });

  it('unlock() from a gesture runs the held context, rings at once and reports playing', async () => {
    const t = setUp({ activated: false });
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    expect(t.ringtone.state()).toBe('blocked');
    t.audio.activate();
    await expect(t.ringtone.unlock()).resolves.toBe(true);
    expect(t.ringtone.state()).toBe('playing');
    expect(t.states).toEqual(['blocked', 'playing']);
    expect(t.audio.last().live()).toHaveLength(2);
    expect(t.audio.contexts).toHaveLength(1);
  });

  it('unlock() without a gesture leaves it blocked and says so', async () => {
    const t = setUp({ activated: false });
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    const unlocked = t.ringtone.unlock();
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    // Chromium keeps such a resume() pending; the ring stays reported as blocked meanwhile.
    expect(t.ringtone.state()).toBe('blocked');
    t.audio.activate();
    await expect(t.ringtone.unlock()).resolves.toBe(true);
    await expect(unlocked).resolves.toBe(true);
    expect(t.ringtone.state()).toBe('playing');
  });

  it('unlock() while nothing rings makes the context once and suspends it again', async () => {
    const t = setUp();
    await expect(t.ringtone.unlock()).resolves.toBe(true);
    expect(t.ringtone.state()).toBe('idle');
    expect(t.audio.last().state).toBe('suspended');
    expect(t.audio.last().suspendCalls).toBe(1);
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.ringtone.state()).toBe('playing');
    expect(t.audio.contexts).toHaveLength(1);
  });

  it('a start that throws (no audio output at all) is reported blocked at once', () => {
    const t = setUp();
    t.audio.failSinks.add('*');
    t.ringtone.start();
    expect(t.ringtone.state()).toBe('blocked');
    expect(t.ringtone.contextState()).toBe('none');
  });

  it('a resume that rejects is reported blocked without waiting for the grace', async () => {
    const t = setUp({ failResume: true, activated: false });
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.ringtone.state()).toBe('blocked');
  });

  it('a ring the OS suspends is reported blocked; start() recovers it', async () => {
    const t = setUp();
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    t.audio.last().setState('interrupted');
    expect(t.ringtone.state()).toBe('blocked');
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.ringtone.state()).toBe('playing');
    expect(t.states).toEqual(['playing', 'blocked', 'playing']);
  });

  it('stop() silences every burst, suspends the context and reports idle', async () => {
    const t = setUp();
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    const ctx = t.audio.last();
    t.ringtone.stop();
    expect(t.ringtone.state()).toBe('idle');
    expect(t.ringtone.playing).toBe(false);
    expect(ctx.state).toBe('suspended');
    expect(ctx.live()).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(6000);
    expect(ctx.oscillators).toHaveLength(2);
    // A suspend under a stopped ring is not a blocked ring.
    expect(t.states).toEqual(['playing', 'idle']);
  });

  it('a closed context is made again by start(), on the remembered output', async () => {
    const t = setUp();
    await t.ringtone.setSinkId('ringer-2');
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.audio.last().sinkId).toBe('ringer-2');
    t.audio.last().setState('closed');
    expect(t.ringtone.state()).toBe('blocked');
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.audio.contexts).toHaveLength(2);
    expect(t.audio.last().sinkId).toBe('ringer-2');
    expect(t.ringtone.state()).toBe('playing');
  });
});

describe('Ringtone.setSinkId', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('before any context: remembered, and the context is made on it', async () => {
    const t = setUp();
    await t.ringtone.setSinkId('speaker-3');
    expect(t.ringtone.sinkId).toBe('speaker-3');
    expect(t.audio.contexts).toHaveLength(0);
    t.ringtone.start();
    expect(t.audio.last().sinkId).toBe('speaker-3');
  });

  it('on a live context: switched with AudioContext.setSinkId; "" goes back to the system default', async () => {
    const t = setUp();
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    await t.ringtone.setSinkId('speaker-2');
    await t.ringtone.setSinkId('');
    expect(t.audio.last().sinkCalls).toEqual(['speaker-2', '']);
    expect(t.ringtone.sinkId).toBe('');
    expect(t.audio.contexts).toHaveLength(1);
  });

  it('a device the browser refuses rejects and keeps the previous one', async () => {
    const t = setUp();
    await t.ringtone.setSinkId('speaker-2');
    t.ringtone.start();
    await expect(t.ringtone.setSinkId('gone')).rejects.toThrow('NotFoundError');
    expect(t.ringtone.sinkId).toBe('speaker-2');
    expect(t.audio.last().sinkId).toBe('speaker-2');
  });

  it('a remembered device that is gone when the context is made: the ring falls back to the default output', async () => {
    const t = setUp();
    await t.ringtone.setSinkId('unplugged');
    t.audio.failSinks.add('unplugged');
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.audio.last().sinkId).toBe('');
    expect(t.ringtone.state()).toBe('playing');
  });
});

describe('Ringtone.wanted and recover()', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('is wanted from start() until stop(); recover() after stop() starts nothing', async () => {
    const t = setUp();
    expect(t.ringtone.wanted).toBe(false);
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.ringtone.wanted).toBe(true);
    t.ringtone.stop();
    expect(t.ringtone.wanted).toBe(false);
    t.ringtone.recover();
    await vi.advanceTimersByTimeAsync(3000);
    expect(t.ringtone.playing).toBe(false);
    expect(t.ringtone.state()).toBe('idle');
    expect(t.audio.last().state).toBe('suspended');
    expect(t.audio.last().oscillators).toHaveLength(2);
  });

  it('recover() before any start() makes no context', () => {
    const t = setUp();
    t.ringtone.recover();
    expect(t.audio.contexts).toHaveLength(0);
    expect(t.ringtone.state()).toBe('idle');
  });

  it('recover() brings back a wanted ring whose context was closed', async () => {
    const t = setUp();
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    t.audio.last().setState('closed');
    expect(t.ringtone.state()).toBe('blocked');
    t.ringtone.recover();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.audio.contexts).toHaveLength(2);
    expect(t.ringtone.state()).toBe('playing');
    expect(t.audio.last().live()).toHaveLength(2);
  });
});

describe('Ringtone.playTest ("Test ringer")', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('plays one double burst on the ringtone\'s own context and output, then suspends it again', async () => {
    const t = setUp();
    await t.ringtone.setSinkId('ringer-2');
    let done = false;
    const test = t.ringtone.playTest().then(() => (done = true));
    await vi.advanceTimersByTimeAsync(0);
    const ctx = t.audio.last();
    expect(t.audio.contexts).toHaveLength(1);
    expect(ctx.sinkId).toBe('ringer-2');
    expect(ctx.state).toBe('running');
    expect(ctx.live().map((o) => o.frequency.value)).toEqual([400, 450]);
    expect(ctx.oscillators.every((o) => o.endsAt !== undefined && o.endsAt > 1 && o.endsAt < 1.2)).toBe(true);
    // It resolves once the burst has played, not before.
    await vi.advanceTimersByTimeAsync(1000);
    expect(done).toBe(false);
    expect(ctx.state).toBe('running');
    await vi.advanceTimersByTimeAsync(100);
    await test;
    expect(ctx.state).toBe('suspended');
    // A test is not a ring: no pattern, no state change, nothing more scheduled.
    expect(t.ringtone.playing).toBe(false);
    expect(t.ringtone.wanted).toBe(false);
    expect(t.states).toEqual([]);
    await vi.advanceTimersByTimeAsync(6000);
    expect(ctx.oscillators).toHaveLength(2);
  });

  it('uses the same context as the ring, made later on the same output', async () => {
    const t = setUp();
    const test = t.ringtone.playTest();
    await vi.advanceTimersByTimeAsync(1100);
    await test;
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.audio.contexts).toHaveLength(1);
    expect(t.ringtone.state()).toBe('playing');
  });

  it('during a ring: plays over it and leaves the context running', async () => {
    const t = setUp();
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    const test = t.ringtone.playTest();
    await vi.advanceTimersByTimeAsync(1100);
    await test;
    const ctx = t.audio.last();
    expect(ctx.oscillators).toHaveLength(4);
    expect(ctx.state).toBe('running');
    expect(t.ringtone.state()).toBe('playing');
    expect(ctx.suspendCalls).toBe(0);
  });

  it('an unlock() from the same click does not suspend the context under the test', async () => {
    const t = setUp();
    const unlocked = t.ringtone.unlock();
    const test = t.ringtone.playTest();
    await expect(unlocked).resolves.toBe(true);
    const ctx = t.audio.last();
    expect(ctx.state).toBe('running');
    expect(ctx.suspendCalls).toBe(0);
    await vi.advanceTimersByTimeAsync(1100);
    await test;
    expect(ctx.state).toBe('suspended');
    expect(ctx.suspendCalls).toBe(1);
  });

  it('a context that does not run rejects after the grace and schedules nothing', async () => {
    const t = setUp({ activated: false });
    const test = t.ringtone.playTest();
    const failed = expect(test).rejects.toThrow('the audio output did not start');
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    await failed;
    expect(t.audio.last().oscillators).toHaveLength(0);
    expect(t.ringtone.state()).toBe('idle');
  });

  it('no audio output at all rejects at once', async () => {
    const t = setUp();
    t.audio.failSinks.add('*');
    await expect(t.ringtone.playTest()).rejects.toThrow('no audio output could be opened');
  });
});

describe('Ringtone.setCallWaiting (a call rings while another is under way)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const frequencies = (ctx: FakeAudioContext): number[] => ctx.live().map((o) => o.frequency.value);
  const peak = (ctx: FakeAudioContext): number => Math.max(...ctx.oscillators.map((o) => FakeAudioContext.peakOf(o)));

  it('rings as two quiet 440 Hz beeps on the calls’ speaker, every 10 s, instead of the ringtone on the ringer', async () => {
    const t = setUp();
    await t.ringtone.setSinkId('ringer-2');
    t.ringtone.setCallWaiting(true);
    expect(t.ringtone.sound).toBe('call-waiting');
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    const ctx = t.audio.last();
    expect(ctx.sinkId).toBe('headset');
    expect(t.ringtone.contextSinkId()).toBe('headset');
    expect(t.ringtone.state()).toBe('playing');
    expect(frequencies(ctx)).toEqual([440]);
    // Two beeps of 0.3 s, 0.2 s apart: the tone ends 0.8 s after it starts.
    const beep = ctx.oscillators[0]!;
    expect(beep.endsAt! - beep.startedAt!).toBeCloseTo(0.85, 5);
    expect(peak(ctx)).toBe(CALL_WAITING_PATTERN.volume);
    expect(CALL_WAITING_PATTERN.volume).toBeLessThanOrEqual(RING_PATTERN.volume / 2);
    await vi.advanceTimersByTimeAsync(9_000);
    expect(ctx.oscillators).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(ctx.oscillators).toHaveLength(2);
  });

  it('a ring that sounds switches at once: the ringtone stops, the context moves to the speaker and beeps there; and back', async () => {
    const t = setUp();
    await t.ringtone.setSinkId('ringer-2');
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    const ctx = t.audio.last();
    expect(frequencies(ctx)).toEqual([400, 450]);

    t.ringtone.setCallWaiting(true);
    expect(ctx.live()).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(ctx.sinkCalls).toEqual(['headset']);
    expect(frequencies(ctx)).toEqual([440]);
    expect(t.audio.contexts).toHaveLength(1);
    // No ring burst any more: the next sound is the next beep, 10 s on.
    await vi.advanceTimersByTimeAsync(3_000);
    expect(ctx.oscillators.map((o) => o.frequency.value)).toEqual([400, 450, 440]);

    // The other call ended while this one rings: the ringtone again, on the ringer.
    t.ringtone.setCallWaiting(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(ctx.sinkCalls).toEqual(['headset', 'ringer-2']);
    expect(frequencies(ctx)).toEqual([400, 450]);
    expect(t.ringtone.state()).toBe('playing');
    expect(t.states).toEqual(['playing']);
  });

  it('the ringer chosen meanwhile is kept for the ringtone, not played on', async () => {
    const t = setUp();
    t.ringtone.setCallWaiting(true);
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    const ctx = t.audio.last();
    await t.ringtone.setSinkId('ringer-3');
    expect(ctx.sinkId).toBe('headset');
    expect(t.ringtone.sinkId).toBe('ringer-3');
    t.ringtone.setCallWaiting(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(ctx.sinkId).toBe('ringer-3');
  });

  it('follows a speaker chosen while it beeps; a speaker that is gone leaves it on the default output', async () => {
    const t = setUp();
    t.ringtone.setCallWaiting(true);
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    const ctx = t.audio.last();
    t.routing.speaker = 'monitor';
    await vi.advanceTimersByTimeAsync(10_000);
    expect(ctx.sinkId).toBe('monitor');
    t.routing.speaker = 'gone';
    await vi.advanceTimersByTimeAsync(10_000);
    expect(ctx.sinkCalls).toEqual(['monitor', 'gone', '']);
    expect(ctx.sinkId).toBe('');
    expect(t.ringtone.state()).toBe('playing');
  });

  it('stop() silences it as it does the ringtone; the next ring after the other call is the ringtone', async () => {
    const t = setUp();
    t.ringtone.setCallWaiting(true);
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    t.ringtone.stop();
    const ctx = t.audio.last();
    expect(ctx.live()).toHaveLength(0);
    expect(t.ringtone.state()).toBe('idle');
    t.ringtone.setCallWaiting(false);
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.audio.contexts).toHaveLength(1);
    expect(ctx.sinkId).toBe('');
    expect(frequencies(ctx)).toEqual([400, 450]);
  });

  it('held back by the autoplay policy, it is reported blocked like the ringtone, and unlock() plays it', async () => {
    const t = setUp({ activated: false });
    t.ringtone.setCallWaiting(true);
    t.ringtone.start();
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    expect(t.ringtone.state()).toBe('blocked');
    t.audio.activate();
    await expect(t.ringtone.unlock()).resolves.toBe(true);
    expect(frequencies(t.audio.last())).toEqual([440]);
  });
});
