// The customers' recorded voice: a small 48 kHz mono WAV, encoded once into 20 ms Opus frames.
import { statSync } from 'node:fs';
import OpusScript from 'opusscript';
import { describe, expect, test } from 'vitest';
import { defaultVoicePath, encodeOpusFrames, FRAME_SAMPLES, loadCustomerVoice, parsePcmWav, parsePcmWavAnyRate } from '../../../sandbox/customer-voice';

function wav(options: { rate?: number; channels?: number; bits?: number; samples?: number } = {}): Buffer {
  const { rate = 48000, channels = 1, bits = 16, samples = 4800 } = options;
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(10000 * Math.sin(i / 7)), i * 2);
  const fmt = Buffer.alloc(16);
  fmt.writeUInt16LE(1, 0);
  fmt.writeUInt16LE(channels, 2);
  fmt.writeUInt32LE(rate, 4);
  fmt.writeUInt32LE(rate * channels * (bits / 8), 8);
  fmt.writeUInt16LE(channels * (bits / 8), 12);
  fmt.writeUInt16LE(bits, 14);
  const chunk = (id: string, body: Buffer) => Buffer.concat([Buffer.from(id, 'ascii'), Buffer.from(Uint32Array.of(body.length).buffer), body]);
  const body = Buffer.concat([Buffer.from('WAVE', 'ascii'), chunk('fmt ', fmt), chunk('LIST', Buffer.from('INFOx\0')), chunk('data', data)]);
  return Buffer.concat([Buffer.from('RIFF', 'ascii'), Buffer.from(Uint32Array.of(body.length).buffer), body]);
}

describe('the bundled voice', () => {
  test('is a small 48 kHz mono 16-bit WAV of a few seconds', () => {
    expect(statSync(defaultVoicePath()).size).toBeLessThan(300_000);
    const { voice, problem } = loadCustomerVoice();
    expect(problem).toBeUndefined();
    expect(voice.source).toBe(defaultVoicePath());
    // 1 to 3.2 seconds of 20 ms frames.
    expect(voice.frames.length).toBeGreaterThanOrEqual(50);
    expect(voice.frames.length).toBeLessThanOrEqual(160);
  });

  test('decodes back into audible speech', () => {
    const { voice } = loadCustomerVoice();
    const decoder = new OpusScript(48000, 1, OpusScript.Application.VOIP);
    let squares = 0;
    let count = 0;
    for (const frame of voice.frames) {
      const pcm = decoder.decode(frame);
      expect(pcm.length).toBe(FRAME_SAMPLES * 2);
      for (let i = 0; i < pcm.length; i += 2) squares += (pcm.readInt16LE(i) / 32768) ** 2;
      count += FRAME_SAMPLES;
    }
    decoder.delete();
    expect(Math.sqrt(squares / count)).toBeGreaterThan(0.02);
  });
});

describe('parsePcmWav', () => {
  test('reads the samples after skipping other chunks', () => {
    const parsed = parsePcmWav(wav({ samples: 1000 }));
    expect(parsed.ok && parsed.value.length).toBe(1000);
    expect(parsed.ok && parsed.value[1]).toBe(Math.round(10000 * Math.sin(1 / 7)));
  });

  test.each([
    ['not RIFF', Buffer.from('hello world, not a wav file'), /RIFF/],
    ['stereo', wav({ channels: 2 }), /mono/],
    ['44.1 kHz', wav({ rate: 44100 }), /48000 Hz/],
    ['shorter than a frame', wav({ samples: 100 }), /shorter/],
  ])('refuses %s', (_what, bytes, reason) => {
    const parsed = parsePcmWav(bytes);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error.message).toMatch(reason);
  });

  test('a missing file falls back to an audible tone and says why', () => {
    const { voice, problem } = loadCustomerVoice('/nonexistent/voice.wav');
    expect(voice.source).toBe('synthetic');
    expect(voice.frames.length).toBeGreaterThan(0);
    expect(problem).toMatch(/cannot read/);
  });

  test('encodes whole 20 ms frames only', () => {
    expect(encodeOpusFrames(new Int16Array(FRAME_SAMPLES * 3 + 10))).toHaveLength(3);
  });
});

describe('parsePcmWavAnyRate', () => {
  test('reads the samples and the rate they were recorded at, however short', () => {
    const parsed = parsePcmWavAnyRate(wav({ rate: 16000, samples: 100 }));
    expect(parsed.ok && parsed.value.rate).toBe(16000);
    expect(parsed.ok && parsed.value.samples.length).toBe(100);
    expect(parsed.ok && parsed.value.samples[1]).toBe(Math.round(10000 * Math.sin(1 / 7)));
  });

  test.each([
    ['not RIFF', Buffer.from('hello world, not a wav file'), /RIFF/],
    ['stereo', wav({ channels: 2 }), /mono/],
    ['8-bit', wav({ bits: 8 }), /16-bit/],
  ])('refuses %s', (_what, bytes, reason) => {
    const parsed = parsePcmWavAnyRate(bytes);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error.message).toMatch(reason);
  });
});
