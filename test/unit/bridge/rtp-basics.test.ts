// The small arithmetic under the bridge's RTP: how long an Opus packet is (its TOC), the NTP clock
// of sender reports and the round trip a receiver report tells.
import OpusScript from 'opusscript';
import { describe, expect, test } from 'vitest';
import { FRAME_SAMPLES, opusPacketSamples } from '../../../bridge/media/audio-format';
import { holdMusic, HOLD_MUSIC_FRAMES } from '../../../bridge/media/hold-music';
import { decodePacket, newDecoder, silenceFrame } from '../../../bridge/media/opus';
import { compactNtp, ntpFromUnixMs, roundTripMs } from '../../../bridge/media/rtcp-clock';
import { MAX_WAITING_FRAMES, SourceDecoder } from '../../../bridge/media/source-decoder';

describe('opusPacketSamples', () => {
  test('reads frame length and count from the TOC byte (RFC 6716 3.1)', () => {
    expect(opusPacketSamples(Uint8Array.of(0xf8))).toBe(960); // CELT FB 20 ms, one frame
    expect(opusPacketSamples(Uint8Array.of(0xf9))).toBe(1920); // two frames of 20 ms
    expect(opusPacketSamples(Uint8Array.of(0x50))).toBe(1920); // SILK WB 40 ms
    expect(opusPacketSamples(Uint8Array.of(0x18))).toBe(2880); // SILK NB 60 ms
    expect(opusPacketSamples(Uint8Array.of(0x83, 0x03))).toBe(3 * 120); // CELT NB 2.5 ms, three frames (code 3)
    expect(opusPacketSamples(Uint8Array.of(0x1b, 0x03))).toBeUndefined(); // three 60 ms frames: more than 120 ms
    expect(opusPacketSamples(Uint8Array.of(0x03))).toBeUndefined(); // code 3 without its count byte
    expect(opusPacketSamples(new Uint8Array(0))).toBeUndefined();
  });

  test('agrees with a real encoder\u2019s 20 ms frames', () => {
    const encoder = new OpusScript(48_000, 1, OpusScript.Application.VOIP);
    try {
      const pcm = Buffer.alloc(FRAME_SAMPLES * 2);
      for (let i = 0; i < FRAME_SAMPLES; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 48_000)), i * 2);
      expect(opusPacketSamples(encoder.encode(pcm, FRAME_SAMPLES))).toBe(FRAME_SAMPLES);
      expect(opusPacketSamples(silenceFrame())).toBe(FRAME_SAMPLES);
    } finally {
      encoder.delete();
    }
  });
});

describe('RTCP clock', () => {
  test('NTP timestamps count from 1900, the fraction in 1/2^32 s', () => {
    expect(ntpFromUnixMs(0)).toBe(2_208_988_800n << 32n);
    expect(ntpFromUnixMs(1500)).toBe(((2_208_988_800n + 1n) << 32n) | 0x8000_0000n);
    expect(compactNtp(ntpFromUnixMs(1500))).toBe(Number(((2_208_988_800n + 1n) & 0xffffn) << 16n) | 0x8000);
  });

  test('a receiver report\u2019s round trip: arrival − LSR − DLSR (RFC 3550 6.4.1)', () => {
    const sentAt = 1_795_000_000_000;
    const lsr = compactNtp(ntpFromUnixMs(sentAt));
    const dlsr = 0.25 * 65_536; // the other side held the report 250 ms
    expect(roundTripMs(lsr, dlsr, sentAt + 290)).toBeCloseTo(40, 0);
    expect(roundTripMs(0, dlsr, sentAt + 290)).toBeUndefined();
    // A report that would make the round trip negative is nonsense, not a measure.
    expect(roundTripMs(lsr, dlsr, sentAt + 100)).toBeUndefined();
  });
});

describe('hold music and decoding', () => {
  test('the music is one 8 s loop of 20 ms Opus frames, its PCM beside it, made once per process', () => {
    const music = holdMusic();
    expect(music.frames.length).toBe(HOLD_MUSIC_FRAMES);
    expect(HOLD_MUSIC_FRAMES).toBe(400);
    expect(music.pcm.length).toBe(400 * FRAME_SAMPLES);
    expect(holdMusic()).toBe(music);
    for (const frame of music.frames.slice(0, 10)) expect(opusPacketSamples(frame)).toBe(FRAME_SAMPLES);
  });

  test('a mixed source waits at most a few frames: the oldest go first', () => {
    const decoder = new SourceDecoder();
    try {
      const frames = holdMusic().frames;
      for (let i = 0; i < MAX_WAITING_FRAMES + 2; i++) decoder.push(frames[i]!);
      expect(decoder.dropped).toBe(2);
      let taken = 0;
      while (decoder.take()) taken++;
      expect(taken).toBe(MAX_WAITING_FRAMES);
      decoder.push(Uint8Array.of(0xff, 0xff, 0xff)); // undecodable: nothing
      expect(decoder.take()).toBeUndefined();
    } finally {
      decoder.close();
    }
  });

  test('decodePacket gives 16-bit PCM of the packet\u2019s length', () => {
    const decoder = newDecoder();
    try {
      expect(decodePacket(decoder, silenceFrame())?.length).toBe(FRAME_SAMPLES);
    } finally {
      decoder.delete();
    }
  });
});
