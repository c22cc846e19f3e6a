// What a customer hears, in three words a test can check: silence, the hold music, or anything
// else (a voice). The hold music is built only from the notes of shared/hold-music.ts and their
// octave above, so nearly all its energy sits in narrow bands around those pitches; speech, noise
// and other tones spread theirs across the spectrum. A 500 ms window is music when most of its
// energy falls in those bands.
import { HOLD_MUSIC_NOTES_HZ } from '../shared/hold-music';
import type { SandboxHeardLogEntry, SandboxHeardSound } from '../shared/sandbox';

/** A decoded frame or window quieter than this (RMS, 0..1) counts as silence: about -60 dBFS. */
export const SILENCE_RMS = 0.001;
/** One verdict per this much decoded audio: 25 frames of 20 ms. */
export const HEARD_WINDOW_MS = 500;
/**
 * A window is music when more than this share of its energy lies in the note bands. Measured
 * (heard-audio.test.ts pins the margins): the app's hold music keeps 98 % there, after Opus too,
 * another melody on the notes 96 %; the recorded voices put 5–30 % there (their harmonics cross a
 * band now and then), white noise 1 %, a 1 kHz tone none. 0.6 sits between with a wide margin
 * either way: the bands are narrow enough that no voice fills them, wide enough that music keeps
 * its energy in them.
 */
export const MUSIC_SHARE = 0.6;
/**
 * Each window is measured in blocks of about 170 ms (8192 samples at 48 kHz, 5.9 Hz bins): long
 * enough for bands of three bins (a note's nearest and one either side, within about 3 % of the
 * lowest note) to part neighbouring notes and a voice's harmonics, short enough that a note which
 * starts or stops inside the window keeps its energy in its band.
 */
const BLOCK_SECONDS = 8192 / 48_000;
/** Hann-windowed blocks spread evenly over the window, overlapping by about half. */
const BLOCKS_PER_WINDOW = 5;
/** A sine between two bins keeps ≥ 98 % of its Hann-windowed energy in the nearest bin and its neighbours. */
const BINS_EACH_SIDE = 1;
/** No audio for this long (a sender that stopped): the customer hears silence, whatever the last window was. */
const STALE_MS = 2 * HEARD_WINDOW_MS;
/** Changes kept in the log: the last ones. */
const LOG_LIMIT = 50;

/** One window's verdict and the measures behind it. */
export interface HeardWindow {
  heard: SandboxHeardSound;
  /** RMS (0..1) of the window. */
  rms: number;
  /** Share (0..1) of the window's energy in the note bands. */
  musicShare: number;
}

/** What a customer heard so far, as the call report shows it. */
export interface HeardAudioReport {
  heardNow: SandboxHeardSound;
  heardMs: Record<SandboxHeardSound, number>;
  heardLog: SandboxHeardLogEntry[];
}

/** Goertzel's coefficient 2·cos(2πk/L) for DFT bin k of a block of L samples. */
export const goertzelCoefficient = (bin: number, length: number): number => 2 * Math.cos((2 * Math.PI * bin) / length);

/**
 * |X_k|², the power of one DFT bin of `samples`, by Goertzel's recurrence with that bin's
 * coefficient (goertzelCoefficient(k, samples.length)): one pass, no other bin computed.
 */
export function goertzelPower(samples: ArrayLike<number>, coefficient: number): number {
  let s1 = 0;
  let s2 = 0;
  for (let n = 0; n < samples.length; n++) {
    const s = samples[n]! + coefficient * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  return s1 * s1 + s2 * s2 - coefficient * s1 * s2;
}

/** The DFT bins (of one block) within ±BINS_EACH_SIDE of each note and of its octave above. */
function noteBins(notesHz: readonly number[], blockLength: number, sampleRate: number): number[] {
  const bins = new Set<number>();
  const binHz = sampleRate / blockLength;
  for (const note of notesHz) {
    for (const hz of [note, 2 * note]) {
      const centre = Math.round(hz / binHz);
      for (let k = centre - BINS_EACH_SIDE; k <= centre + BINS_EACH_SIDE; k++) if (k > 0 && k < blockLength / 2) bins.add(k);
    }
  }
  return [...bins].sort((a, b) => a - b);
}

/**
 * Classifies windows of mono PCM (samples -1..1). Goertzel on the note bins of each block: 45 bins
 * × 5 blocks of 8192 samples, about 5 ms per 500 ms window (1 % of a core per call).
 */
export class HeardAudioClassifier {
  readonly windowSamples: number;
  private readonly blockLength: number;
  private readonly hann: Float64Array;
  private readonly block: Float64Array;
  /** Goertzel coefficient 2·cos(2πk/L) of each note bin. */
  private readonly coefficients: Float64Array;

  constructor(sampleRate: number, notesHz: readonly number[] = HOLD_MUSIC_NOTES_HZ) {
    this.windowSamples = Math.round((sampleRate * HEARD_WINDOW_MS) / 1000);
    this.blockLength = Math.min(this.windowSamples, Math.round(sampleRate * BLOCK_SECONDS));
    const length = this.blockLength;
    this.hann = Float64Array.from({ length }, (_, n) => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / length));
    this.block = new Float64Array(length);
    this.coefficients = Float64Array.from(noteBins(notesHz, length, sampleRate), (k) => goertzelCoefficient(k, length));
  }

  classify(window: Float32Array): HeardWindow {
    if (window.length !== this.windowSamples) throw new RangeError(`a window is ${this.windowSamples} samples, not ${window.length}`);
    let squares = 0;
    for (const s of window) squares += s * s;
    const rms = Math.sqrt(squares / window.length);
    if (rms < SILENCE_RMS) return { heard: 'silence', rms, musicShare: 0 };
    let total = 0;
    let inBands = 0;
    const length = this.blockLength;
    const hop = (window.length - length) / (BLOCKS_PER_WINDOW - 1);
    for (let b = 0; b < BLOCKS_PER_WINDOW; b++) {
      const start = Math.round(b * hop);
      for (let n = 0; n < length; n++) {
        const s = window[start + n]! * this.hann[n]!;
        this.block[n] = s;
        total += s * s;
      }
      inBands += this.bandEnergy();
    }
    const musicShare = total === 0 ? 0 : inBands / total;
    return { heard: musicShare > MUSIC_SHARE ? 'music' : 'voice', rms, musicShare };
  }

  /** Energy of the block in the note bins: Parseval, each bin of a real signal counted with its mirror, (2/L)·|X_k|². */
  private bandEnergy(): number {
    let energy = 0;
    for (const c of this.coefficients) energy += goertzelPower(this.block, c);
    return (2 * energy) / this.block.length;
  }
}

/**
 * Fed decoded frames as they arrive; a verdict for every complete window, the time heard as each
 * sound, and the changes between them.
 */
export class HeardAudio {
  private readonly classifier: HeardAudioClassifier;
  private readonly window: Float32Array;
  private filled = 0;
  private last: SandboxHeardSound = 'silence';
  private lastFrameAt: number | undefined;
  private readonly ms: Record<SandboxHeardSound, number> = { silence: 0, music: 0, voice: 0 };
  private readonly log: SandboxHeardLogEntry[] = [];

  constructor(sampleRate: number, notesHz: readonly number[] = HOLD_MUSIC_NOTES_HZ) {
    this.classifier = new HeardAudioClassifier(sampleRate, notesHz);
    this.window = new Float32Array(this.classifier.windowSamples);
  }

  /** One decoded frame (16-bit PCM, mono) that arrived at `at` (unix ms); frames may be of any length. */
  push(pcm: Int16Array, at: number): void {
    this.lastFrameAt = at;
    let read = 0;
    while (read < pcm.length) {
      const take = Math.min(pcm.length - read, this.window.length - this.filled);
      for (let i = 0; i < take; i++) this.window[this.filled + i] = pcm[read + i]! / 32768;
      this.filled += take;
      read += take;
      if (this.filled === this.window.length) {
        this.filled = 0;
        this.judge(this.classifier.classify(this.window).heard, at);
      }
    }
  }

  report(now: number): HeardAudioReport {
    const stale = this.lastFrameAt === undefined || now - this.lastFrameAt > STALE_MS;
    return { heardNow: stale ? 'silence' : this.last, heardMs: { ...this.ms }, heardLog: this.log.map((entry) => ({ ...entry })) };
  }

  private judge(heard: SandboxHeardSound, at: number): void {
    this.ms[heard] += HEARD_WINDOW_MS;
    if (this.log.length === 0 || heard !== this.last) {
      this.log.push({ at, heard });
      if (this.log.length > LOG_LIMIT) this.log.shift();
    }
    this.last = heard;
  }
}
