// The node's own libopus (bridge/media/libopus.ts): real Opus both ways, and codecs that never touch
// one another's memory — many alive at once, used in turn, each gives exactly what it gives alone
// (libopus is deterministic), which opusscript's own encode and decode, writing outside their
// buffers, do not promise.
import OpusScript from 'opusscript';
import { describe, expect, test } from 'vitest';
import { OpusDecoder, OpusEncoder } from '../../../bridge/media/libopus';
import { toneAmplitude } from '../../../sandbox/tone-probe';
import { FRAME, RATE, tone } from './recording-probe';

const frames = (pcm: Int16Array): Int16Array[] => Array.from({ length: Math.floor(pcm.length / FRAME) }, (_, i) => pcm.slice(i * FRAME, (i + 1) * FRAME));

function interleave(left: Int16Array, right: Int16Array): Int16Array {
  const stereo = new Int16Array(left.length * 2);
  for (let i = 0; i < left.length; i++) {
    stereo[2 * i] = left[i]!;
    stereo[2 * i + 1] = right[i]!;
  }
  return stereo;
}

describe('the node\u2019s libopus', () => {
  test('decodes what opusscript encodes, and encodes what opusscript decodes: the tone comes back', () => {
    const reference = new OpusScript(RATE, 1, OpusScript.Application.VOIP);
    const decoder = new OpusDecoder();
    const encoder = new OpusEncoder({ channels: 1, application: 'voip', bitrate: 40_000 });
    try {
      const heard: Int16Array[] = [];
      const back: Int16Array[] = [];
      for (const frame of frames(tone(440, RATE / 2))) {
        heard.push(decoder.decode(reference.encode(Buffer.from(frame.buffer), FRAME))!.slice());
        const pcm = reference.decode(Buffer.from(encoder.encode(frame)));
        back.push(Int16Array.from({ length: pcm.length / 2 }, (_, i) => pcm.readInt16LE(i * 2)));
      }
      for (const decoded of [heard, back]) {
        expect(decoded.every((f) => f.length === FRAME)).toBe(true);
        const last = new Int16Array(decoded.slice(-10).flatMap((f) => [...f]));
        expect(toneAmplitude(last, RATE, 440)).toBeGreaterThan(0.2);
      }
      // A packet of two 20 ms frames gives both; what is no Opus packet gives nothing.
      const twice = Buffer.from(reference.encode(Buffer.from(tone(440, FRAME * 2).buffer), FRAME * 2));
      expect(decoder.decode(twice)?.length).toBe(FRAME * 2);
      expect(decoder.decode(Uint8Array.of(0x03, 0x00))).toBeUndefined();
      expect(decoder.decode(new Uint8Array(0))).toBeUndefined();
      expect(decoder.decode(new Uint8Array(5_000))).toBeUndefined();
    } finally {
      reference.delete();
      decoder.delete();
      encoder.delete();
    }
  });

  test('a stereo encoder keeps each channel\u2019s tone in its channel', () => {
    const encoder = new OpusEncoder({ channels: 2, application: 'audio', bitrate: 48_000, complexity: 5 });
    const decoder = new OpusScript(RATE, 2, OpusScript.Application.AUDIO);
    try {
      const left: number[] = [];
      const right: number[] = [];
      const l = frames(tone(720, RATE / 2));
      const r = frames(tone(960, RATE / 2));
      l.forEach((frame, i) => {
        const pcm = decoder.decode(Buffer.from(encoder.encode(interleave(frame, r[i]!))));
        for (let at = 0; at + 3 < pcm.length; at += 4) {
          left.push(pcm.readInt16LE(at));
          right.push(pcm.readInt16LE(at + 2));
        }
      });
      const tail = (samples: number[]) => samples.slice(-RATE / 5);
      expect(toneAmplitude(tail(left), RATE, 720)).toBeGreaterThan(0.2);
      expect(toneAmplitude(tail(left), RATE, 960)).toBeLessThan(0.01);
      expect(toneAmplitude(tail(right), RATE, 960)).toBeGreaterThan(0.2);
      expect(toneAmplitude(tail(right), RATE, 720)).toBeLessThan(0.01);
      expect(() => encoder.encode(new Int16Array(FRAME))).toThrow(RangeError);
    } finally {
      encoder.delete();
      decoder.delete();
    }
  });

  test('forty codecs alive and used in turn each give exactly what one gives alone', () => {
    const count = 20;
    const inputs = Array.from({ length: count }, (_, k) => frames(tone(300 + 37 * k, RATE / 5)));
    const encode = (encoder: OpusEncoder, k: number) => inputs[k]!.map((frame) => encoder.encode(frame));
    const decode = (decoder: OpusDecoder, packets: Uint8Array[]) => packets.map((p) => decoder.decode(p)!.slice());
    // Alone: one codec at a time, deleted before the next.
    const alone = inputs.map((_, k) => {
      const encoder = new OpusEncoder({ channels: 1, application: 'voip', bitrate: 40_000 });
      const decoder = new OpusDecoder();
      const packets = encode(encoder, k);
      const pcm = decode(decoder, packets);
      encoder.delete();
      decoder.delete();
      return { packets, pcm };
    });
    // Together: every codec made first, then a frame of each in turn.
    const encoders = inputs.map(() => new OpusEncoder({ channels: 1, application: 'voip', bitrate: 40_000 }));
    const decoders = inputs.map(() => new OpusDecoder());
    const together = inputs.map(() => ({ packets: [] as Uint8Array[], pcm: [] as Int16Array[] }));
    for (let f = 0; f < inputs[0]!.length; f++) {
      for (let k = 0; k < count; k++) together[k]!.packets.push(encoders[k]!.encode(inputs[k]![f]!));
      for (let k = 0; k < count; k++) together[k]!.pcm.push(decoders[k]!.decode(together[k]!.packets[f]!)!.slice());
    }
    for (const codec of [...encoders, ...decoders]) codec.delete();
    expect(together).toEqual(alone);
  });
});
