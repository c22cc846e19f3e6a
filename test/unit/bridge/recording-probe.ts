// What the bridge's recording tests read of a recording: Debian's ffprobe says its stream (codec,
// channels, rate, length) and ffmpeg decodes it (checking every page's CRC, honouring the pre-skip
// and the end trimming), each channel apart; and test tones made into real Opus packets.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpusScript from 'opusscript';
import { expect } from 'vitest';
import { toneAmplitude } from '../../../sandbox/tone-probe';

const run = promisify(execFile);
export const RATE = 48_000;
export const FRAME = 960;

export interface DecodedRecording {
  codec: string;
  channels: number;
  sampleRate: number;
  /** ffprobe's length of the stream, s. */
  durationS: number;
  /** Channel 0 (the business) and channel 1 (the customer), 16-bit at 48 kHz. */
  business: Int16Array;
  customer: Int16Array;
}

/** ffprobe's and ffmpeg's reading of an Ogg Opus file; any complaint of ffmpeg's fails the test. */
export async function decodeRecording(file: Uint8Array): Promise<DecodedRecording> {
  const dir = await mkdtemp(join(tmpdir(), 'bridge-recording-'));
  try {
    const path = join(dir, 'call.ogg');
    await writeFile(path, file);
    const probe = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,channels,sample_rate:format=duration', '-of', 'json', path]);
    const probed = JSON.parse(probe.stdout) as { streams: { codec_name: string; channels: number; sample_rate: string }[]; format: { duration: string } };
    const stream = probed.streams[0]!;
    const { stdout, stderr } = await run('ffmpeg', ['-v', 'error', '-i', path, '-f', 's16le', '-ac', '2', '-ar', String(RATE), '-'], { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 });
    expect(stderr.toString('utf8')).toBe('');
    const frames = stdout.length / 4;
    const business = new Int16Array(frames);
    const customer = new Int16Array(frames);
    for (let i = 0; i < frames; i++) {
      business[i] = stdout.readInt16LE(i * 4);
      customer[i] = stdout.readInt16LE(i * 4 + 2);
    }
    return { codec: stream.codec_name, channels: stream.channels, sampleRate: Number(stream.sample_rate), durationS: Number(probed.format.duration), business, customer };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A steady tone at `amplitude` of full scale, `samples` long, its phase running on from `from`. */
export function tone(hz: number, samples: number, amplitude = 0.3, from = 0): Int16Array {
  return Int16Array.from({ length: samples }, (_, i) => Math.round(amplitude * 32_767 * Math.sin((2 * Math.PI * hz * (from + i)) / RATE)));
}

/** 20 ms Opus packets of mono PCM, as a window or a phone sends them (one encoder, its state running on). */
export function opusPackets(pcm: Int16Array): Buffer[] {
  const encoder = new OpusScript(RATE, 1, OpusScript.Application.VOIP);
  try {
    const packets: Buffer[] = [];
    for (let at = 0; at + FRAME <= pcm.length; at += FRAME) {
      const frame = pcm.slice(at, at + FRAME);
      packets.push(Buffer.from(encoder.encode(Buffer.from(frame.buffer), FRAME)));
    }
    return packets;
  } finally {
    encoder.delete();
  }
}

/**
 * The loudest frequency of a stretch between `fromHz` and `toHz`, to the hertz: Goertzel on the
 * Hann-windowed samples, every 10 Hz first, then every hertz around the loudest. The stretch's
 * first quarter second is enough (a Hann window 0.25 s long tells tones 16 Hz apart).
 */
export function dominantHz(samples: Int16Array, fromHz = 200, toHz = 3_000): number {
  const stretch = samples.subarray(0, RATE / 4);
  const loudest = (hzs: number[]) => hzs.reduce((best, hz) => {
    const amplitude = toneAmplitude(stretch, RATE, hz);
    return amplitude > best.amplitude ? { hz, amplitude } : best;
  }, { hz: 0, amplitude: -1 }).hz;
  const coarse = loudest(Array.from({ length: Math.floor((toHz - fromHz) / 10) + 1 }, (_, i) => fromHz + i * 10));
  return loudest(Array.from({ length: 21 }, (_, i) => coarse - 10 + i));
}

/**
 * The share of a stretch's 20 ms frames in which a tone is at least `amplitude` (0..1 of full
 * scale). A frame the node had nothing for at its tick is silence in a recording, and a busy machine
 * makes more of them: a measure over the whole stretch would take such breaks for a weaker tone.
 */
export function framesWithTone(samples: Int16Array, hz: number, amplitude = 0.1): number {
  let frames = 0;
  let heard = 0;
  for (let at = 0; at + FRAME <= samples.length; at += FRAME, frames++) if (toneAmplitude(samples.subarray(at, at + FRAME), RATE, hz) >= amplitude) heard++;
  return frames === 0 ? 0 : heard / frames;
}

export function rms(samples: Int16Array): number {
  let squares = 0;
  for (const s of samples) squares += (s / 32_768) ** 2;
  return samples.length === 0 ? 0 : Math.sqrt(squares / samples.length);
}

/** The first sample from which 5 ms blocks are louder than `threshold` (RMS, 0..1). */
export function onset(samples: Int16Array, threshold = 0.05): number {
  const block = RATE / 200;
  for (let at = 0; at + block <= samples.length; at += block / 5) {
    if (rms(samples.subarray(at, at + block)) > threshold) return at;
  }
  return -1;
}
