// The hold music, made from numbers alone: an 8-second loop of arpeggiated chords (C – Am – D – G,
// 120 beats a minute, eighth notes) played with a soft mallet tone, every note one of
// HOLD_MUSIC_NOTES_HZ. Pure and deterministic: scripts/make-hold-music.ts writes its WAV
// (assets/hold-music.wav) from here, a test checks the file still equals it, and the window renders
// it again when the file cannot be decoded.
//
// Why it is built this way:
// - Each note is a sine at its pitch plus a quieter sine an octave above (the mallet's brightness),
//   under slow exponential decays: the energy stays on the notes and their octave, where a listener
//   that knows the notes (the sandbox's customers) finds it, and Opus at speech rates keeps it.
// - Notes are laid on a circle: a note that rings past the loop's end goes on at its start, so the
//   loop played end to end is one continuous piece, without a click at the seam.
// - Onsets are raised-cosine ramps and every note fades out before it stops: no edge anywhere.
import { HOLD_MUSIC_NOTES_HZ } from './hold-music';

/** The loop's length in seconds: four bars of two seconds. */
export const HOLD_MUSIC_LOOP_S = 8;
/** The asset's sample rate: the music's highest partial is 1760 Hz, and the file stays small (~384 kB). */
export const HOLD_MUSIC_SAMPLE_RATE = 24_000;
/** The loop's peak, linear: -7 dBFS, under the -6 dBFS ceiling after 16-bit rounding. */
export const HOLD_MUSIC_PEAK = 0.4467;

const BAR_S = 2;
const STEP_S = BAR_S / 8;

/** The notes by name: indexes into HOLD_MUSIC_NOTES_HZ (C major pentatonic, C4 to A5). */
const NOTE = { C4: 0, D4: 1, E4: 2, G4: 3, A4: 4, C5: 5, D5: 6, E5: 7, G5: 8, A5: 9 } as const;
type NoteName = keyof typeof NOTE;

interface Bar {
  /** Held under the bar. */
  bass: NoteName;
  /** The arpeggio's four tones, low to high. */
  tones: readonly [NoteName, NoteName, NoteName, NoteName];
}

/** C – Am/E – Dsus2 – Gsus4: with no B and no F in the scale, the suspended G leads home to C. */
const BARS: readonly Bar[] = [
  { bass: 'C4', tones: ['E4', 'G4', 'C5', 'E5'] },
  { bass: 'E4', tones: ['A4', 'C5', 'E5', 'A5'] },
  { bass: 'D4', tones: ['A4', 'D5', 'E5', 'A5'] },
  { bass: 'G4', tones: ['C5', 'D5', 'G5', 'A5'] },
];

/** Each eighth of a bar: which of the bar's tones it plays (up, and back down to the middle), with a little weight on the beat. */
const ARPEGGIO: readonly { tone: 0 | 1 | 2 | 3; accent: number }[] = [
  { tone: 0, accent: 1 },
  { tone: 1, accent: 0.72 },
  { tone: 2, accent: 0.82 },
  { tone: 3, accent: 0.72 },
  { tone: 2, accent: 0.9 },
  { tone: 1, accent: 0.72 },
  { tone: 2, accent: 0.82 },
  { tone: 3, accent: 0.72 },
];

interface Voice {
  gain: number;
  /** The fundamental's decay time constant, s. */
  decayS: number;
  /** The octave partial's level against the fundamental, and its (quicker) decay. */
  octaveGain: number;
  octaveDecayS: number;
  /** How long the note sounds in all, its fade-out included. */
  lengthS: number;
  releaseS: number;
}

const ATTACK_S = 0.012;
const MALLET: Voice = { gain: 0.2, decayS: 0.75, octaveGain: 0.22, octaveDecayS: 0.28, lengthS: 1.8, releaseS: 0.35 };
const BASS: Voice = { gain: 0.26, decayS: 1.4, octaveGain: 0.12, octaveDecayS: 0.5, lengthS: 2.6, releaseS: 0.6 };

interface Strike {
  atS: number;
  hz: number;
  velocity: number;
  voice: Voice;
}

function score(): Strike[] {
  const strikes: Strike[] = [];
  BARS.forEach((bar, b) => {
    const barS = b * BAR_S;
    strikes.push({ atS: barS, hz: pitch(bar.bass), velocity: 1, voice: BASS });
    ARPEGGIO.forEach(({ tone, accent }, step) => {
      strikes.push({ atS: barS + step * STEP_S, hz: pitch(bar.tones[tone]), velocity: accent, voice: MALLET });
    });
  });
  return strikes;
}

function pitch(name: NoteName): number {
  const hz = HOLD_MUSIC_NOTES_HZ[NOTE[name]];
  if (hz === undefined) throw new Error(`no note ${name} in HOLD_MUSIC_NOTES_HZ`);
  return hz;
}

/**
 * The hold music at `sampleRate`: exactly HOLD_MUSIC_LOOP_S seconds, mono, peak HOLD_MUSIC_PEAK,
 * meant to be played in a loop (its last sample leads smoothly into its first).
 */
export function renderHoldMusic(sampleRate: number): Float32Array<ArrayBuffer> {
  if (!Number.isInteger(sampleRate) || sampleRate < 8_000) throw new Error(`unusable sample rate ${sampleRate}`);
  const length = HOLD_MUSIC_LOOP_S * sampleRate;
  // Summed in double precision; a Float32Array only at the end.
  const mix = new Float64Array(length);
  for (const strike of score()) addStrike(mix, strike, sampleRate);
  let peak = 0;
  for (const v of mix) peak = Math.max(peak, Math.abs(v));
  const out = new Float32Array(length);
  const scale = peak > 0 ? HOLD_MUSIC_PEAK / peak : 0;
  for (let i = 0; i < length; i++) out[i] = mix[i]! * scale;
  return out;
}

function addStrike(mix: Float64Array, strike: Strike, sampleRate: number): void {
  const { voice } = strike;
  const n = Math.round(voice.lengthS * sampleRate);
  const start = Math.round(strike.atS * sampleRate);
  const attack = ATTACK_S * sampleRate;
  const releaseFrom = (voice.lengthS - voice.releaseS) * sampleRate;
  const release = voice.releaseS * sampleRate;
  const w1 = (2 * Math.PI * strike.hz) / sampleRate;
  const w2 = 2 * w1;
  for (let i = 0; i < n; i++) {
    const t = i / sampleRate;
    let envelope = 1;
    if (i < attack) envelope = 0.5 - 0.5 * Math.cos((Math.PI * i) / attack);
    if (i > releaseFrom) envelope *= 0.5 + 0.5 * Math.cos((Math.PI * (i - releaseFrom)) / release);
    const fundamental = Math.exp(-t / voice.decayS) * Math.sin(w1 * i);
    const octave = voice.octaveGain * Math.exp(-t / voice.octaveDecayS) * Math.sin(w2 * i);
    const at = (start + i) % mix.length;
    mix[at] = mix[at]! + voice.gain * strike.velocity * envelope * (fundamental + octave);
  }
}

/** Mono 16-bit PCM WAV bytes (RIFF, little-endian) of samples in -1..1, rounded and clipped. */
export function encodeWavPcm16(samples: Float32Array, sampleRate: number): Uint8Array {
  const dataBytes = samples.length * 2;
  const bytes = new Uint8Array(44 + dataBytes);
  const view = new DataView(bytes.buffer);
  const ascii = (at: number, text: string): void => {
    for (let i = 0; i < text.length; i++) view.setUint8(at + i, text.charCodeAt(i));
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true); // fmt chunk size
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true); // bytes per second
  view.setUint16(32, 2, true); // block align
  view.setUint16(34, 16, true); // bits per sample
  ascii(36, 'data');
  view.setUint32(40, dataBytes, true);
  samples.forEach((v, i) => view.setInt16(44 + i * 2, Math.max(-32768, Math.min(32767, Math.round(v * 32767))), true));
  return bytes;
}

/** The bytes of assets/hold-music.wav, exactly as scripts/make-hold-music.ts writes them. */
export function holdMusicWav(): Uint8Array {
  return encodeWavPcm16(renderHoldMusic(HOLD_MUSIC_SAMPLE_RATE), HOLD_MUSIC_SAMPLE_RATE);
}
