// A bridged call's recorder (bridge/media/call-recorder.ts) fed real Opus packets of known tones: the
// agent's side (what the customer is sent) at 720 Hz, the customer's at 960 Hz. ffprobe and ffmpeg
// read the file it makes: Ogg Opus, two channels at 48 kHz, exactly as long as the ticks recorded,
// channel 0 the business's tone and channel 1 the customer's, the two aligned.
import { describe, expect, test } from 'vitest';
import { CallRecorder } from '../../../bridge/media/call-recorder';
import { LIBOPUS_PRE_SKIP } from '../../../shared/ogg-opus';
import { toneAmplitude } from '../../../sandbox/tone-probe';
import { decodeRecording, dominantHz, FRAME, onset, opusPackets, RATE, rms, tone } from './recording-probe';

const BUSINESS_HZ = 720;
const CUSTOMER_HZ = 960;
const seconds = (s: number) => Math.round(s * RATE);
/** ffprobe's length of a stream: its last granule position over 48 kHz, the pre-skip (the encoder's lookahead, never played) included. */
const probedLength = (s: number) => s + LIBOPUS_PRE_SKIP / RATE;
const middleSecond = (samples: Int16Array) => samples.subarray(Math.floor(samples.length / 2) - RATE / 2, Math.floor(samples.length / 2) + RATE / 2);

/** `frames` ticks, each with one packet of each side first (as a made frame and a packet in time come). */
function feed(recorder: CallRecorder, business: readonly Buffer[], customer: readonly Buffer[], frames: number, from = 0): void {
  for (let f = from; f < from + frames; f++) {
    const b = business[f];
    const c = customer[f];
    if (b) recorder.outbound(b);
    if (c) recorder.inbound(c);
    recorder.tick();
  }
}

describe('the call recorder', () => {
  test('makes an Ogg Opus file of two channels at 48 kHz, as long as it recorded: the business in channel 0, the customer in channel 1', async () => {
    const business = opusPackets(tone(BUSINESS_HZ, seconds(3)));
    const customer = opusPackets(tone(CUSTOMER_HZ, seconds(3)));
    const recorder = new CallRecorder();
    recorder.start();
    expect(recorder.recording).toBe(true);
    feed(recorder, business, customer, 150);
    const { file, durationMs } = recorder.finish();
    expect(durationMs).toBe(3_000);
    expect(recorder.finish().file).toBe(file);
    expect(recorder.recording).toBe(false);

    const decoded = await decodeRecording(file);
    expect(decoded).toMatchObject({ codec: 'opus', channels: 2, sampleRate: 48_000 });
    expect(decoded.durationS).toBeCloseTo(probedLength(3), 4);
    expect(decoded.business.length).toBe(150 * FRAME);
    expect(dominantHz(middleSecond(decoded.business))).toBe(BUSINESS_HZ);
    expect(dominantHz(middleSecond(decoded.customer))).toBe(CUSTOMER_HZ);
    // Each channel holds its own side only.
    expect(toneAmplitude(middleSecond(decoded.business), RATE, BUSINESS_HZ)).toBeGreaterThan(0.2);
    expect(toneAmplitude(middleSecond(decoded.business), RATE, CUSTOMER_HZ)).toBeLessThan(0.01);
    expect(toneAmplitude(middleSecond(decoded.customer), RATE, CUSTOMER_HZ)).toBeGreaterThan(0.2);
    expect(toneAmplitude(middleSecond(decoded.customer), RATE, BUSINESS_HZ)).toBeLessThan(0.01);
  });

  test('keeps the channels aligned: sounds that start together start together in the file', async () => {
    const silence = new Int16Array(seconds(1));
    const pcmOf = (hz: number) => {
      const pcm = new Int16Array(seconds(2));
      pcm.set(silence);
      pcm.set(tone(hz, seconds(0.5)), seconds(1));
      return pcm;
    };
    const recorder = new CallRecorder();
    recorder.start();
    feed(recorder, opusPackets(pcmOf(BUSINESS_HZ)), opusPackets(pcmOf(CUSTOMER_HZ)), 100);
    const decoded = await decodeRecording(recorder.finish().file);
    const business = onset(decoded.business);
    const customer = onset(decoded.customer);
    expect(business).toBeGreaterThan(seconds(0.98));
    expect(business).toBeLessThan(seconds(1.02));
    expect(Math.abs(business - customer)).toBeLessThanOrEqual(seconds(0.001));
  });

  test('a side whose packets come in bursts lags the other by a frame at most, and a frame it lacks at its tick is silence', async () => {
    const pcmOf = (hz: number) => {
      const pcm = new Int16Array(seconds(2));
      pcm.set(tone(hz, seconds(0.5)), seconds(1));
      return pcm;
    };
    const business = opusPackets(pcmOf(BUSINESS_HZ));
    const customer = opusPackets(pcmOf(CUSTOMER_HZ));
    const recorder = new CallRecorder();
    recorder.start();
    // The customer's packets come two at a time, each pair a tick late: f - 1 and f at odd ticks.
    for (let f = 0; f < 100; f++) {
      recorder.outbound(business[f]!);
      if (f % 2 === 1) {
        recorder.inbound(customer[f - 1]!);
        recorder.inbound(customer[f]!);
      }
      recorder.tick();
    }
    const decoded = await decodeRecording(recorder.finish().file);
    const lag = onset(decoded.customer) - onset(decoded.business);
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThanOrEqual(FRAME + seconds(0.001));
    // Both tones were heard whole.
    expect(toneAmplitude(decoded.customer.subarray(seconds(1.1), seconds(1.4)), RATE, CUSTOMER_HZ)).toBeGreaterThan(0.2);
  });

  test('a side that runs ahead loses its oldest frames beyond three waiting, never the alignment of what is heard', () => {
    const recorder = new CallRecorder();
    recorder.start();
    const customer = opusPackets(tone(CUSTOMER_HZ, seconds(0.2)));
    for (const packet of customer) recorder.inbound(packet);
    expect(recorder.dropped).toBe((customer.length - 3) * FRAME);
    recorder.tick();
    expect(recorder.recordedMs).toBe(20);
    recorder.finish();
  });

  test('stopped, it writes nothing and keeps nothing that came meanwhile; started again, it goes on in the same file', async () => {
    const business = opusPackets(tone(BUSINESS_HZ, seconds(3)));
    const customer = opusPackets(tone(CUSTOMER_HZ, seconds(3)));
    const recorder = new CallRecorder();
    recorder.start();
    feed(recorder, business, customer, 50);
    recorder.stop();
    expect(recorder.recording).toBe(false);
    feed(recorder, business, customer, 50, 50);
    // Packets that came while stopped, with no tick since, are not written after the restart.
    recorder.outbound(business[100]!);
    recorder.inbound(customer[100]!);
    recorder.start();
    recorder.tick();
    feed(recorder, business, customer, 49, 101);
    const { file, durationMs } = recorder.finish();
    expect(durationMs).toBe(2_000);
    const decoded = await decodeRecording(file);
    expect(decoded.business.length).toBe(seconds(2));
    expect(decoded.durationS).toBeCloseTo(probedLength(2), 4);
    // The restart's first frame had nothing: silence (the decoder's fade of the frame before aside).
    expect(rms(decoded.customer.subarray(seconds(1) + FRAME / 2, seconds(1) + FRAME))).toBeLessThan(0.02);
    expect(dominantHz(decoded.customer.subarray(seconds(1.2), seconds(1.9)))).toBe(CUSTOMER_HZ);
  });

  test('a packet that does not decode is a frame of silence, and nothing breaks', async () => {
    const business = opusPackets(tone(BUSINESS_HZ, seconds(1)));
    const recorder = new CallRecorder();
    recorder.start();
    for (let f = 0; f < 50; f++) {
      // A code 3 packet that says it holds no frame, an empty one, one longer than any Opus packet.
      const broken = [Buffer.from([0x03, 0x00]), Buffer.alloc(0), Buffer.alloc(5_000, 0xf8)][f % 3]!;
      recorder.outbound(f === 25 ? broken : business[f]!);
      recorder.inbound(broken);
      recorder.tick();
    }
    const decoded = await decodeRecording(recorder.finish().file);
    expect(decoded.business.length).toBe(seconds(1));
    expect(rms(decoded.customer)).toBeLessThan(0.001);
    expect(dominantHz(decoded.business.subarray(seconds(0.6), seconds(0.95)))).toBe(BUSINESS_HZ);
  });

  test('stops growing at its longest, and an empty recording is still a file that plays nothing', async () => {
    const recorder = new CallRecorder({ maxRecordedMs: 100 });
    recorder.start();
    const business = opusPackets(tone(BUSINESS_HZ, seconds(0.2)));
    feed(recorder, business, [], 10);
    expect(recorder.full).toBe(true);
    expect(recorder.finish().durationMs).toBe(100);

    const empty = new CallRecorder();
    empty.start();
    const { file, durationMs } = empty.finish();
    expect(durationMs).toBe(0);
    // After the end nothing is taken.
    empty.tick();
    expect(empty.recordedMs).toBe(0);
    const decoded = await decodeRecording(file);
    expect(decoded).toMatchObject({ codec: 'opus', channels: 2, sampleRate: 48_000 });
    expect(decoded.durationS).toBeCloseTo(probedLength(0), 4);
    expect(decoded.business.length).toBe(0);
  });
});
