// What a simulated customer says: a short recorded voice (assets/customer-voice.wav, 48 kHz mono
// 16-bit), encoded once into 20 ms Opus frames that every customer's peer loops. Encoding once keeps
// many concurrent calls cheap: Opus encoding costs far more than sending a ready packet.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import OpusScript from 'opusscript';
import { err, ok, type Result } from '../shared/result';
import { readPcmWav } from '../shared/wav';

export const SAMPLE_RATE = 48_000;
/** 20 ms at 48 kHz (protocol.md: ptime 20). */
export const FRAME_SAMPLES = 960;
export const FRAME_MS = 20;

const VOICE_FILE = 'customer-voice.wav';
/** What the simulated colleagues say (colleagues.ts). */
export const COLLEAGUE_VOICE_FILE = 'colleague-voice.wav';

/** A bundled voice: next to this module when run from source, else under the working directory. */
export function defaultVoicePath(file = VOICE_FILE): string {
  try {
    return fileURLToPath(new URL(`../assets/${file}`, import.meta.url));
  } catch {
    // A CommonJS bundle has no import.meta.url.
    return resolve('assets', file);
  }
}

/** The samples of a RIFF/WAVE file of 16-bit PCM and one channel (shared/wav.ts reads it), at its own rate. */
function readMonoWav(bytes: Buffer): Result<{ rate: number; samples: Int16Array }> {
  const wav = readPcmWav(bytes);
  if (!wav.ok) return err('invalid_input', `voice file: ${wav.error.message}`, { field: 'voice' });
  if (wav.value.channels !== 1) return err('invalid_input', 'voice file: must be 16-bit PCM, mono', { field: 'voice' });
  return ok({ rate: wav.value.sampleRate, samples: wav.value.samples });
}

/** PCM samples of a RIFF/WAVE file that is 16-bit PCM, mono, 48 kHz; anything else is refused. */
export function parsePcmWav(bytes: Buffer): Result<Int16Array> {
  const wav = readMonoWav(bytes);
  if (!wav.ok) return wav;
  const { rate, samples } = wav.value;
  if (rate !== SAMPLE_RATE) return err('invalid_input', `voice file: must be 16-bit PCM, mono, ${SAMPLE_RATE} Hz`, { field: 'voice' });
  if (samples.length < FRAME_SAMPLES) return err('invalid_input', 'voice file: shorter than one 20 ms frame', { field: 'voice' });
  return ok(samples);
}

/**
 * The samples of a 16-bit PCM mono RIFF/WAVE file at whatever rate it was recorded, and that rate:
 * for sound made elsewhere (a test microphone's recording) that whoever plays it resamples.
 */
export function parsePcmWavAnyRate(bytes: Buffer): Result<{ rate: number; samples: Int16Array }> {
  return readMonoWav(bytes);
}

/** A fallback voice when the file is missing: a warbling tone, clearly audible, never silent. */
function syntheticVoice(): Int16Array {
  const samples = new Int16Array(SAMPLE_RATE * 2);
  for (let i = 0; i < samples.length; i++) {
    const t = i / SAMPLE_RATE;
    const pitch = 220 + 60 * Math.sin(2 * Math.PI * 3 * t);
    samples[i] = Math.round(6000 * Math.sin(2 * Math.PI * pitch * t));
  }
  return samples;
}

/** Encodes PCM into 20 ms Opus frames; the tail shorter than a frame is dropped. */
export function encodeOpusFrames(samples: Int16Array): Buffer[] {
  const encoder = new OpusScript(SAMPLE_RATE, 1, OpusScript.Application.VOIP);
  try {
    const frames: Buffer[] = [];
    for (let start = 0; start + FRAME_SAMPLES <= samples.length; start += FRAME_SAMPLES) {
      const pcm = Buffer.from(samples.buffer, samples.byteOffset + start * 2, FRAME_SAMPLES * 2);
      frames.push(Buffer.from(encoder.encode(pcm, FRAME_SAMPLES)));
    }
    return frames;
  } finally {
    encoder.delete();
  }
}

export interface CustomerVoice {
  /** Opus packets, 20 ms each, played in a loop. */
  frames: readonly Buffer[];
  /** Where the voice came from: a file path or "synthetic". */
  source: string;
  /** What it says, word for word, when known: the service's transcript gives these (call-recorder.ts). */
  words?: string;
}

const cache = new Map<string, CustomerVoice>();

/** Loads and encodes the voice once per path. A missing or broken file falls back to a tone, with `problem` saying why. */
export function loadCustomerVoice(path = defaultVoicePath()): { voice: CustomerVoice; problem?: string } {
  const cached = cache.get(path);
  if (cached) return { voice: cached };
  let samples: Result<Int16Array>;
  try {
    samples = parsePcmWav(readFileSync(path));
  } catch (e) {
    samples = err('invalid_input', `voice file: cannot read ${path}: ${(e as Error).message}`, { field: 'voice' });
  }
  if (!samples.ok) return { voice: { frames: encodeOpusFrames(syntheticVoice()), source: 'synthetic' }, problem: samples.error.message };
  const voice = { frames: encodeOpusFrames(samples.value), source: path };
  cache.set(path, voice);
  return { voice };
}
