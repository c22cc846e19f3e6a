// One bridged call's recording (shared/bridge-recording.ts): one Ogg Opus file of two channels,
// channel 0 what the customer hears (every audio packet the node sends the customer, forwarded or
// made) and channel 1 what the customer says (every audio packet the node takes from the customer).
//
// Both sides are decoded as they come and wait in a short queue each; on every tick of the node's
// media clock one 20 ms frame of each goes into one stereo frame, encoded and written. Packets and
// ticks run on different clocks, so each queue holds at most a few frames (the oldest go first):
// a channel is never more than that behind the other, and a frame missing at its tick is silence.
// The recorder is made when recording first starts: a call that never records decodes nothing.
// Stopped, it writes nothing and decodes nothing, until started again; the file holds what was
// recorded, pauses left out.
import { OggOpusWriter } from '../../shared/ogg-opus';
import { errorText } from '../../shared/result';
import { FRAME_MS, FRAME_SAMPLES } from './audio-format';
import { OpusDecoder, OpusEncoder } from './libopus';

/** Frames a channel may hold for the coming ticks: 60 ms at most behind, as a mix's sources (source-decoder.ts). */
export const MAX_WAITING_FRAMES = 3;
/** Beyond this a recording stops growing (about 90 MB): a call left open for days must not fill the node's memory. */
export const MAX_RECORDED_MS = 4 * 60 * 60 * 1_000;
/**
 * A call's two channels at this rate, as the sandbox's service records them: about 22 MB an hour.
 * Below it the two voices share too few bits (at 32 kbit/s the customer's channel loses about half
 * its signal-to-noise ratio whenever the business speaks too).
 */
export const RECORDING_BITRATE = 48_000;
/**
 * libopus's effort, 0–10 (10 by default), which every recorded call pays every 20 ms: at 5 the
 * stereo encoder takes about a fifth of its time at 10 on speech (about 0.1 ms a frame here). The
 * audio application: the VOIP one's speech coder costs three to ten times the CPU at this rate.
 */
export const RECORDING_COMPLEXITY = 5;

export interface FinishedRecording {
  /** The Ogg Opus file. */
  file: Buffer;
  /** The audio it plays, ms (pauses left out). */
  durationMs: number;
}

/** One channel's decoded audio, waiting for the ticks: a ring of samples, allocated once. */
class ChannelQueue {
  private readonly ring = new Int16Array(MAX_WAITING_FRAMES * FRAME_SAMPLES);
  private start = 0;
  private queued = 0;
  /** Samples dropped for coming faster than the ticks took them. */
  dropped = 0;

  push(pcm: Int16Array): void {
    const ring = this.ring;
    // Only the newest samples that fit can be heard in time.
    const from = Math.max(0, pcm.length - ring.length);
    const count = pcm.length - from;
    const over = this.queued + count - ring.length;
    if (over > 0) {
      this.start = (this.start + over) % ring.length;
      this.queued -= over;
      this.dropped += over;
    }
    this.dropped += from;
    let at = (this.start + this.queued) % ring.length;
    for (let i = from; i < pcm.length; i++) {
      ring[at] = pcm[i]!;
      at = at + 1 === ring.length ? 0 : at + 1;
    }
    this.queued += count;
  }

  /** The next frame into every other sample of `stereo` from `channel` on; silence for what has not come. */
  takeInto(stereo: Int16Array, channel: 0 | 1): void {
    const ring = this.ring;
    const count = Math.min(FRAME_SAMPLES, this.queued);
    let at = this.start;
    let out = channel;
    for (let i = 0; i < count; i++, out += 2) {
      stereo[out] = ring[at]!;
      at = at + 1 === ring.length ? 0 : at + 1;
    }
    for (let i = count; i < FRAME_SAMPLES; i++, out += 2) stereo[out] = 0;
    this.start = at;
    this.queued -= count;
  }

  clear(): void {
    this.start = 0;
    this.queued = 0;
  }
}

export class CallRecorder {
  private readonly decoders = { business: new OpusDecoder(), customer: new OpusDecoder() };
  private readonly queues = { business: new ChannelQueue(), customer: new ChannelQueue() };
  private readonly encoder = new OpusEncoder({ channels: 2, application: 'audio', bitrate: RECORDING_BITRATE, complexity: RECORDING_COMPLEXITY });
  private readonly stereo = new Int16Array(FRAME_SAMPLES * 2);
  private readonly pages: Uint8Array[] = [];
  private readonly writer = new OggOpusWriter({ channels: 2, sink: (page) => this.pages.push(page), vendor: 'softphone bridge', comments: ['TITLE=Call recording'] });
  private frames = 0;
  private on = false;
  private finished: FinishedRecording | undefined;
  private readonly maxFrames: number;
  /** Why it stopped for good, if its codec failed: it runs on the media clock, which must never see a throw. */
  private failed: string | undefined;

  /** `maxRecordedMs`: where it stops growing (default MAX_RECORDED_MS). */
  constructor(options: { maxRecordedMs?: number } = {}) {
    this.maxFrames = Math.floor((options.maxRecordedMs ?? MAX_RECORDED_MS) / FRAME_MS);
  }

  /** Whether it records now. */
  get recording(): boolean {
    return this.on && this.finished === undefined;
  }

  /** Audio written so far, ms. */
  get recordedMs(): number {
    return this.frames * FRAME_MS;
  }

  /** Whether it stopped growing at its longest. */
  get full(): boolean {
    return this.frames >= this.maxFrames;
  }

  /** Why its codec failed and it stopped for good, if it did. */
  get failure(): string | undefined {
    return this.failed;
  }

  /** Samples either channel dropped for coming faster than the ticks took them. */
  get dropped(): number {
    return this.queues.business.dropped + this.queues.customer.dropped;
  }

  /** Recording, and not full yet: what comes is decoded and written. */
  private get writing(): boolean {
    return this.on && this.finished === undefined && this.frames < this.maxFrames;
  }

  start(): void {
    if (this.failed === undefined) this.on = true;
  }

  /** Nothing more is written until `start`; what waited is let go, so that a restart begins with what comes then. */
  stop(): void {
    this.on = false;
    this.queues.business.clear();
    this.queues.customer.clear();
  }

  /** An audio packet the customer was sent (Opus). */
  outbound(payload: Uint8Array): void {
    if (this.writing) this.take(this.decoders.business, this.queues.business, payload);
  }

  /** An audio packet the customer sent (Opus). */
  inbound(payload: Uint8Array): void {
    if (this.writing) this.take(this.decoders.customer, this.queues.customer, payload);
  }

  /** One tick of the media clock: one stereo frame, when recording. */
  tick(): void {
    if (!this.writing) return;
    this.queues.business.takeInto(this.stereo, 0);
    this.queues.customer.takeInto(this.stereo, 1);
    try {
      this.writer.write(this.encoder.encode(this.stereo));
    } catch (e) {
      this.failed = errorText(e);
      this.stop();
      return;
    }
    this.frames++;
  }

  /** Ends the recording and frees its codecs; the file and its length. A second call gives the same. */
  finish(): FinishedRecording {
    if (this.finished) return this.finished;
    const samples = this.frames * FRAME_SAMPLES;
    // One silent frame more pushes the last audio out of the encoder's lookahead; the last page's
    // granule position trims it off again. A recording of nothing is that frame trimmed to nothing:
    // a file players open (a stream of no audio packet at all they refuse).
    try {
      this.writer.write(this.encoder.encode(new Int16Array(FRAME_SAMPLES * 2)));
    } catch (e) {
      this.failed ??= errorText(e);
    }
    this.writer.end(samples);
    this.encoder.delete();
    this.decoders.business.delete();
    this.decoders.customer.delete();
    this.finished = { file: Buffer.concat(this.pages), durationMs: this.frames * FRAME_MS };
    this.pages.length = 0;
    return this.finished;
  }

  private take(decoder: OpusDecoder, queue: ChannelQueue, payload: Uint8Array): void {
    // A packet that does not decode is a frame missing: silence at its tick.
    const pcm = decoder.decode(payload);
    if (pcm) queue.push(pcm);
  }
}
