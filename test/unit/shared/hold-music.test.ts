// The hold music: its length, that its energy sits on the notes of HOLD_MUSIC_NOTES_HZ and their
// octave (what the sandbox's customers listen for), its level, a loop without a click at the seam,
// and that assets/hold-music.wav is what scripts/make-hold-music.ts makes from the code today.
import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HOLD_MUSIC_NOTES_HZ } from '../../../shared/hold-music';
import { encodeWavPcm16, HOLD_MUSIC_LOOP_S, HOLD_MUSIC_SAMPLE_RATE, renderHoldMusic } from '../../../shared/hold-music-render';
import { HOLD_MUSIC_PATH, holdMusicFileBytes } from '../../../scripts/make-hold-music';
import { goertzelCoefficient, goertzelPower } from '../../../sandbox/heard-audio';

const SR = HOLD_MUSIC_SAMPLE_RATE;
const music = renderHoldMusic(SR);

const energy = (x: Float32Array): number => x.reduce((sum, v) => sum + v * v, 0);

/**
 * The share of the loop's energy within ±halfWidthHz of these frequencies. The loop is periodic, so
 * its DFT over exactly one loop has no leakage: bins are 1/loop Hz apart, each found by the
 * sandbox's Goertzel (what its customers listen with), and Parseval turns their powers into energy
 * (×2 for the mirrored negative frequencies).
 */
function shareNear(x: Float32Array, sampleRate: number, frequencies: readonly number[], halfWidthHz: number): number {
  const n = x.length;
  const seconds = n / sampleRate;
  const bins = new Set<number>();
  for (const f of frequencies) for (let k = Math.ceil((f - halfWidthHz) * seconds); k <= Math.floor((f + halfWidthHz) * seconds); k++) bins.add(k);
  let inBands = 0;
  for (const k of bins) inBands += (2 * goertzelPower(x, goertzelCoefficient(k, n))) / n;
  return inBands / energy(x);
}

/**
 * The largest fourth difference over the samples around the seam (the end followed by the start),
 * and over the rest of the loop. A sum of decaying sines has tiny fourth differences; a jump of J
 * anywhere gives one of up to 6J.
 */
function seamRoughness(x: Float32Array): { seam: number; inside: number } {
  const n = x.length;
  const at = (i: number): number => x[((i % n) + n) % n]!;
  const d4 = (i: number): number => Math.abs(at(i) - 4 * at(i + 1) + 6 * at(i + 2) - 4 * at(i + 3) + at(i + 4));
  let seam = 0;
  for (let i = n - 4; i < n; i++) seam = Math.max(seam, d4(i));
  let inside = 0;
  for (let i = 0; i + 4 < n; i++) inside = Math.max(inside, d4(i));
  return { seam, inside };
}

const NOTES_AND_OCTAVES = [...HOLD_MUSIC_NOTES_HZ, ...HOLD_MUSIC_NOTES_HZ.map((f) => 2 * f)];

describe('renderHoldMusic', () => {
  it('is one loop of exactly HOLD_MUSIC_LOOP_S seconds at any sample rate', () => {
    expect(HOLD_MUSIC_LOOP_S).toBe(8);
    expect(music).toHaveLength(8 * SR);
    expect(renderHoldMusic(48_000)).toHaveLength(8 * 48_000);
    expect(() => renderHoldMusic(44_100.5)).toThrow('unusable sample rate');
  });

  it('is the same numbers every time', () => {
    expect(Buffer.from(renderHoldMusic(SR).buffer).equals(Buffer.from(music.buffer))).toBe(true);
  });

  it('puts more than 80 % of its energy within ±3 Hz of the notes and their octave above', () => {
    expect(shareNear(music, SR, NOTES_AND_OCTAVES, 3)).toBeGreaterThan(0.8);
    // The fundamentals alone carry most of it: the octave only brightens the tone.
    expect(shareNear(music, SR, HOLD_MUSIC_NOTES_HZ, 3)).toBeGreaterThan(0.6);
  });

  it('the measure tells other music apart: the loop a semitone higher has almost nothing on the notes', () => {
    const n = music.length;
    const shifted = new Float32Array(n);
    // Every note a semitone higher (C#, D#, F, G#, A#: none in the scale), 15 Hz or more off every note.
    const ratio = 2 ** (1 / 12);
    for (let i = 0; i < n; i++) {
      const t = (i * ratio) % n;
      const j = Math.floor(t);
      shifted[i] = music[j]! + (music[(j + 1) % n]! - music[j]!) * (t - j);
    }
    expect(shareNear(shifted, SR, NOTES_AND_OCTAVES, 3)).toBeLessThan(0.3);
  });

  it('peaks at -7 dBFS, under the -6 dBFS ceiling, and is not silent', () => {
    const peak = music.reduce((p, v) => Math.max(p, Math.abs(v)), 0);
    expect(20 * Math.log10(peak)).toBeLessThanOrEqual(-6);
    expect(20 * Math.log10(peak)).toBeGreaterThan(-8);
    const rmsDb = 10 * Math.log10(energy(music) / music.length);
    expect(rmsDb).toBeGreaterThan(-24);
  });

  it('loops without a click: the end leads into the start as smoothly as any two samples inside', () => {
    const { seam, inside } = seamRoughness(music);
    expect(seam).toBeLessThanOrEqual(inside);
    // The same measure finds the click of a loop cut short (notes stopped dead at the end).
    const cut = seamRoughness(music.subarray(0, music.length - 1_000));
    expect(cut.seam).toBeGreaterThan(10 * inside);
  });
});

describe('assets/hold-music.wav', () => {
  const onDisk = new Uint8Array(readFileSync(HOLD_MUSIC_PATH));

  it('equals what scripts/make-hold-music.ts writes from the code (run it after changing the music)', () => {
    expect(Buffer.from(onDisk).equals(Buffer.from(holdMusicFileBytes()))).toBe(true);
  });

  it('is mono 16-bit PCM at 24 kHz, 8 s, under 800 kB', () => {
    expect(statSync(HOLD_MUSIC_PATH).size).toBeLessThanOrEqual(800 * 1024);
    const view = new DataView(onDisk.buffer, onDisk.byteOffset, onDisk.byteLength);
    const text = (at: number, length: number): string => String.fromCharCode(...onDisk.subarray(at, at + length));
    expect([text(0, 4), text(8, 4), text(12, 4), text(36, 4)]).toEqual(['RIFF', 'WAVE', 'fmt ', 'data']);
    expect({ format: view.getUint16(20, true), channels: view.getUint16(22, true), rate: view.getUint32(24, true), bits: view.getUint16(34, true) }).toEqual({
      format: 1,
      channels: 1,
      rate: 24_000,
      bits: 16,
    });
    expect(view.getUint32(40, true)).toBe(8 * 24_000 * 2);
    expect(view.getUint32(4, true)).toBe(onDisk.length - 8);
  });
});

describe('encodeWavPcm16', () => {
  it('rounds to 16 bits and clips what lies outside -1..1', () => {
    const bytes = encodeWavPcm16(new Float32Array([0, 0.5, -0.5, 1, -1, 2, -2]), 8_000);
    const view = new DataView(bytes.buffer);
    const samples = Array.from({ length: 7 }, (_, i) => view.getInt16(44 + 2 * i, true));
    expect(samples).toEqual([0, 16384, -16383, 32767, -32767, 32767, -32768]);
    expect(view.getUint32(24, true)).toBe(8_000);
    expect(view.getUint32(28, true)).toBe(16_000);
  });
});
