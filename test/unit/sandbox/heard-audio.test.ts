// What a customer hears, told apart: the hold music (only the notes of shared/hold-music.ts and
// their octave), a voice (the recorded customer and agent voices, and anything else that is not
// the music: a 1 kHz tone, white noise), or silence; straight and through real Opus.
import { readFileSync } from 'node:fs';
import OpusScript from 'opusscript';
import { describe, expect, test } from 'vitest';
import { HOLD_MUSIC_NOTES_HZ } from '../../../shared/hold-music';
import { renderHoldMusic } from '../../../shared/hold-music-render';
import type { SandboxHeardSound } from '../../../shared/sandbox';
import { defaultVoicePath, encodeOpusFrames, FRAME_SAMPLES, parsePcmWav, SAMPLE_RATE } from '../../../sandbox/customer-voice';
import { goertzelCoefficient, goertzelPower, HEARD_WINDOW_MS, HeardAudio, HeardAudioClassifier, MUSIC_SHARE } from '../../../sandbox/heard-audio';
import { readWavAt48k, syntheticHoldMusic } from './business-peer';

const AGENT_VOICE = new URL('../../../assets/test/agent-voice.wav', import.meta.url);
const WINDOW = (SAMPLE_RATE * HEARD_WINDOW_MS) / 1000;

const classifier = new HeardAudioClassifier(SAMPLE_RATE);

/** Every complete window's verdict and music share. */
function windows(pcm: Int16Array): { heard: SandboxHeardSound; musicShare: number }[] {
  const out: { heard: SandboxHeardSound; musicShare: number }[] = [];
  for (let start = 0; start + WINDOW <= pcm.length; start += WINDOW) {
    const { heard, musicShare } = classifier.classify(Float32Array.from(pcm.subarray(start, start + WINDOW), (s) => s / 32768));
    out.push({ heard, musicShare });
  }
  return out;
}

/** Through Opus as the customer's phone hears it: 20 ms frames encoded (VOIP, 48 kHz mono) and decoded. */
function throughOpus(pcm: Int16Array): Int16Array {
  const decoder = new OpusScript(SAMPLE_RATE, 1, OpusScript.Application.VOIP);
  try {
    const decoded = encodeOpusFrames(pcm).map((frame) => decoder.decode(frame));
    const out = new Int16Array(decoded.reduce((n, b) => n + b.length / 2, 0));
    let at = 0;
    for (const frame of decoded) for (let i = 0; i + 1 < frame.length; i += 2) out[at++] = frame.readInt16LE(i);
    return out;
  } finally {
    decoder.delete();
  }
}

function sine(hz: number, seconds: number, level: number): Int16Array {
  return Int16Array.from({ length: SAMPLE_RATE * seconds }, (_, i) => Math.round(level * 32767 * Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE)));
}

function whiteNoise(seconds: number, level: number): Int16Array {
  let seed = 12345;
  return Int16Array.from({ length: SAMPLE_RATE * seconds }, () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return Math.round(level * 32767 * (seed / 2 ** 31 - 1));
  });
}

/** The app's hold music at the phone's rate, 16-bit as it is decoded. */
const music = Int16Array.from(renderHoldMusic(SAMPLE_RATE), (s) => Math.round(s * 32767));
/** Another melody on the same notes, of uneven note lengths: notes start and stop anywhere in a window. */
const otherMelody = syntheticHoldMusic(12);
const customerVoice = (() => {
  const parsed = parsePcmWav(readFileSync(defaultVoicePath()));
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
})();
const agentVoice = readWavAt48k(AGENT_VOICE.pathname);

describe('goertzelPower', () => {
  test('is the power of one DFT bin: (L/2)² for a unit cosine on that bin, nothing on another bin', () => {
    const length = 1024;
    const cosine = Float64Array.from({ length }, (_, n) => Math.cos((2 * Math.PI * 37 * n) / length));
    expect(goertzelPower(cosine, goertzelCoefficient(37, length))).toBeCloseTo((length / 2) ** 2, 6);
    expect(goertzelPower(cosine, goertzelCoefficient(38, length))).toBeCloseTo(0, 6);
    expect(goertzelPower(new Float64Array(length), goertzelCoefficient(37, length))).toBe(0);
  });
});

describe('one 500 ms window', () => {
  test.each([
    ['the app’s hold music (renderHoldMusic, an 8 s loop)', music, 16],
    ['another melody on the same notes', otherMelody, 24],
  ])('%s is music, every window, with nearly all its energy on the notes', (_name, pcm, count) => {
    const all = windows(pcm);
    expect(all).toHaveLength(count);
    for (const w of all) {
      expect(w.heard).toBe('music');
      expect(w.musicShare).toBeGreaterThan(0.9);
    }
  });

  test.each([
    ['the customers’ voice (assets/customer-voice.wav)', customerVoice],
    ['the agent’s voice (assets/test/agent-voice.wav, 16 kHz made 48 kHz)', agentVoice],
  ])('%s is a voice, every window, far below the music share', (_name, voice) => {
    const all = windows(voice);
    expect(all.length).toBeGreaterThanOrEqual(6);
    for (const w of all) {
      expect(w.heard).toBe('voice');
      expect(w.musicShare).toBeLessThan(MUSIC_SHARE - 0.2);
    }
  });

  test('silence, and a hiss below -60 dBFS, are silence', () => {
    expect(windows(new Int16Array(WINDOW * 2)).map((w) => w.heard)).toEqual(['silence', 'silence']);
    expect(windows(whiteNoise(1, 0.0005)).map((w) => w.heard)).toEqual(['silence', 'silence']);
  });

  test('what is not the music counts as a voice: a 1 kHz tone, white noise, the music a quarter tone off', () => {
    for (const w of windows(sine(1000, 2, 0.25))) expect(w).toEqual({ heard: 'voice', musicShare: expect.any(Number) });
    for (const w of windows(sine(1000, 2, 0.25))) expect(w.musicShare).toBeLessThan(0.05);
    for (const w of windows(whiteNoise(2, 0.2))) {
      expect(w.heard).toBe('voice');
      expect(w.musicShare).toBeLessThan(0.1);
    }
    // The same melody on pitches between the notes: the bands are narrower than a quarter tone.
    const off = new HeardAudioClassifier(SAMPLE_RATE, HOLD_MUSIC_NOTES_HZ.map((hz) => hz / 2 ** (1 / 24)));
    for (let start = 0; start + WINDOW <= music.length; start += WINDOW) {
      expect(off.classify(Float32Array.from(music.subarray(start, start + WINDOW), (s) => s / 32768)).heard).toBe('voice');
    }
  });

  test('a steady tone on one of the notes is music: the classifier knows the pitches, not the melody', () => {
    expect(windows(sine(HOLD_MUSIC_NOTES_HZ[4]!, 1, 0.25)).map((w) => w.heard)).toEqual(['music', 'music']);
  });

  test('refuses a window of the wrong length', () => {
    expect(() => classifier.classify(new Float32Array(WINDOW - 1))).toThrow(RangeError);
  });
});

describe('through real Opus at 20 ms frames', () => {
  test('the hold music stays music, at full level and 26 dB softer', () => {
    for (const pcm of [music, Int16Array.from(music, (s) => Math.round(s / 20)), otherMelody]) {
      const all = windows(throughOpus(pcm));
      expect(all.length).toBeGreaterThanOrEqual(15);
      for (const w of all) {
        expect(w.heard).toBe('music');
        expect(w.musicShare).toBeGreaterThan(0.9);
      }
    }
  });

  test('the voices stay voices', () => {
    for (const voice of [customerVoice, agentVoice]) {
      for (const w of windows(throughOpus(voice))) expect(w.heard).toBe('voice');
    }
  });
});

describe('fed frame by frame, as the customer’s phone decodes them', () => {
  /** Feeds `pcm` in frames of `frame` samples, 20 ms apart from `at`; returns the time after the last. */
  function feed(heard: HeardAudio, pcm: Int16Array, at: number, frame = FRAME_SAMPLES): number {
    let now = at;
    for (let start = 0; start < pcm.length; start += frame) {
      now += (frame / SAMPLE_RATE) * 1000;
      heard.push(pcm.subarray(start, Math.min(pcm.length, start + frame)), now);
    }
    return now;
  }

  test('nothing heard yet is silence, with no time and no log', () => {
    expect(new HeardAudio(SAMPLE_RATE).report(Date.now())).toEqual({ heardNow: 'silence', heardMs: { silence: 0, music: 0, voice: 0 }, heardLog: [] });
  });

  test('a verdict for every complete 500 ms: the time heard as each, and each change with its time', () => {
    const heard = new HeardAudio(SAMPLE_RATE);
    const t0 = 1_000_000;
    // 24 frames are not a window yet.
    let now = feed(heard, customerVoice.subarray(0, WINDOW - FRAME_SAMPLES), t0);
    expect(heard.report(now)).toEqual({ heardNow: 'silence', heardMs: { silence: 0, music: 0, voice: 0 }, heardLog: [] });
    now = feed(heard, customerVoice.subarray(WINDOW - FRAME_SAMPLES, WINDOW * 2), now);
    expect(heard.report(now)).toEqual({ heardNow: 'voice', heardMs: { silence: 0, music: 0, voice: 1000 }, heardLog: [{ at: t0 + 500, heard: 'voice' }] });

    now = feed(heard, music.subarray(0, WINDOW * 3), now);
    now = feed(heard, new Int16Array(WINDOW), now);
    const r = heard.report(now);
    expect(r.heardNow).toBe('silence');
    expect(r.heardMs).toEqual({ silence: 500, music: 1500, voice: 1000 });
    expect(r.heardLog).toEqual([
      { at: t0 + 500, heard: 'voice' },
      { at: t0 + 1500, heard: 'music' },
      { at: t0 + 3000, heard: 'silence' },
    ]);
  });

  test('frames of any length fill the same windows', () => {
    const heard = new HeardAudio(SAMPLE_RATE);
    const now = feed(heard, music.subarray(0, WINDOW * 4), 0, 1_003);
    expect(heard.report(now)).toMatchObject({ heardNow: 'music', heardMs: { silence: 0, music: 2000, voice: 0 } });
  });

  test('once no audio arrives for a second the customer hears silence; the log keeps the last 50 changes', () => {
    const heard = new HeardAudio(SAMPLE_RATE);
    let now = 0;
    for (let i = 0; i < 30; i++) {
      now = feed(heard, music.subarray(0, WINDOW), now);
      now = feed(heard, customerVoice.subarray(0, WINDOW), now);
    }
    const r = heard.report(now);
    expect(r.heardNow).toBe('voice');
    expect(r.heardMs).toEqual({ silence: 0, music: 15_000, voice: 15_000 });
    expect(r.heardLog).toHaveLength(50);
    expect(r.heardLog.at(-1)).toEqual({ at: now, heard: 'voice' });
    expect(r.heardLog[0]).toEqual({ at: 11 * 500, heard: 'music' });
    expect(heard.report(now + 1000).heardNow).toBe('voice');
    expect(heard.report(now + 1001).heardNow).toBe('silence');
  });
});
