// How loud each of a few probe tones is in what a peer hears: the end-to-end tests give each party
// its own tone between the hold music's notes (720, 960, 1245, 1440 Hz) and tell from a report who
// hears whom. Each 100 ms block, Hann-windowed so that the music's notes ~60 Hz away do not leak in,
// gives each tone's amplitude (Goertzel at the exact frequency); the report averages the blocks of
// the last half second.
import { goertzelPower } from './heard-audio';

/** The tones probed: between the hold music's notes (C major pentatonic C4–A5 and octaves). */
export const PROBE_TONES_HZ = [720, 960, 1245, 1440] as const;
const WINDOW_MS = 500;
const BLOCK_MS = 100;

const toneCoefficient = (hz: number, sampleRate: number): number => 2 * Math.cos((2 * Math.PI * hz) / sampleRate);
const hann = (n: number, length: number): number => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / (length - 1));

/** A sinusoid of amplitude A under a Hann window gives |X| ≈ A·N/4: the amplitude is 4·√|X|² / N. */
const windowedAmplitude = (windowed: Float64Array, coefficient: number): number => (4 * Math.sqrt(Math.max(0, goertzelPower(windowed, coefficient)))) / windowed.length;

/**
 * How loud a tone of `hz` is in a stretch of 16-bit samples, as a mean amplitude 0..1 of full scale:
 * Goertzel at exactly `hz` on the Hann-windowed stretch, as the probe measures each block. A stretch
 * of T seconds hears next to nothing (below -31 dB) of a tone 2/T Hz or more away: 20 Hz for 100 ms.
 */
export function toneAmplitude(samples: ArrayLike<number>, sampleRate: number, hz: number): number {
  const windowed = Float64Array.from({ length: samples.length }, (_, n) => (samples[n]! / 32768) * hann(n, samples.length));
  return windowedAmplitude(windowed, toneCoefficient(hz, sampleRate));
}

export class ToneProbe {
  private readonly coefficients: number[];
  private readonly window: Float64Array;
  private readonly block: Float64Array;
  private filled = 0;
  private readonly frames: { at: number; amplitudes: number[] }[] = [];

  constructor(sampleRate: number) {
    this.coefficients = PROBE_TONES_HZ.map((hz) => toneCoefficient(hz, sampleRate));
    const length = Math.round((sampleRate * BLOCK_MS) / 1000);
    this.block = new Float64Array(length);
    this.window = Float64Array.from({ length }, (_, n) => hann(n, length));
  }

  /** One decoded frame (16-bit PCM) that arrived at `at` (unix ms). */
  push(frame: Int16Array, at: number): void {
    for (const sample of frame) {
      this.block[this.filled] = (sample / 32768) * this.window[this.filled]!;
      this.filled += 1;
      if (this.filled < this.block.length) continue;
      this.filled = 0;
      const amplitudes = this.coefficients.map((c) => windowedAmplitude(this.block, c));
      this.frames.push({ at, amplitudes });
    }
    this.drop(at);
  }

  /** Each tone's mean amplitude (0..1 of full scale) over the last half second, keyed by its frequency in Hz. */
  report(now: number): Record<string, number> {
    this.drop(now);
    const sums = PROBE_TONES_HZ.map(() => 0);
    for (const frame of this.frames) frame.amplitudes.forEach((a, i) => (sums[i]! += a));
    const out: Record<string, number> = {};
    PROBE_TONES_HZ.forEach((hz, i) => (out[String(hz)] = this.frames.length === 0 ? 0 : Math.round((sums[i]! / this.frames.length) * 10_000) / 10_000));
    return out;
  }

  private drop(now: number): void {
    while (this.frames.length > 0 && now - this.frames[0]!.at > WINDOW_MS) this.frames.shift();
  }
}
