// The service's own recording and transcript of a call, made where the customer's phone stands
// (protocol.md "What the service added in 2026"): one Ogg Opus file of two channels, 0 the business
// (what the phone received), 1 the customer (what it sent, the notice included), from the first
// frame of the notice to the call's end; and a transcript whose segments follow each channel's voice
// activity.
//
// The phone's send clock drives the recording: every frame it sends makes one stereo frame, with
// the next 20 ms of what it received beside it. Received audio waits in a short queue, so that
// jitter moves it by a frame or two and never drifts the channels apart.
//
// The text is what the sandbox knows was said: the notice's words, and for the rest an honest
// placeholder (sandbox/REFERENCE.md "The service's recording and transcript").
import OpusScript from 'opusscript';
import type { TranscriptSegment } from '../shared/service-capture';
import { OggOpusWriter } from '../shared/ogg-opus';
import { FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE } from './customer-voice';

/** What a sent frame is part of: frames of one key make at most one segment; no text, no segment (a chime). */
export interface Utterance {
  key: string;
  /** The words, or null when it is no speech. */
  text: string | null;
  /** How sure the text is: 1 for words the sandbox itself played, 0 for a placeholder. */
  confidence: number;
}

/** What the phone feeds a recorder: each frame it sends (Opus) and each it decodes from the business. */
export interface CaptureSink {
  sent(payload: Buffer, utterance: Utterance): void;
  heard(pcm: Int16Array): void;
}

/** The business's channel: the sandbox cannot tell what an agent says. */
export const BUSINESS_PLACEHOLDER = '[the business speaks: the sandbox does not transcribe the business side]';
/** The customer's recorded voice, whose words the sandbox was not given. */
export const CUSTOMER_PLACEHOLDER = '[the customer speaks: the sandbox plays a recorded voice whose words it does not know]';

/** A frame louder than this (RMS, 0..1: about -40 dBFS) is voiced. */
export const VOICED_RMS = 0.01;
/** A segment ends after this much silence: pauses between words stay inside it. */
const HANGOVER_FRAMES = 25;
/** A voiced stretch shorter than this is a click, not speech. */
const MIN_SEGMENT_FRAMES = 5;
/** Received audio waits until this much is queued, at the start and after the queue ran dry: a small jitter buffer. */
const PRIMED_SAMPLES = 3 * FRAME_SAMPLES;
/** At most this much received audio waits for the send clock; older frames are dropped. */
const MAX_QUEUED_SAMPLES = 10 * FRAME_SAMPLES;
/** The stereo stream's rate: speech for two, well under the service's own file sizes. */
const BITRATE = 48_000;
/** Beyond this the recording stops growing (about 2 hours, some 45 MB): a sandbox left running must not fill the memory. */
const MAX_FRAMES = 2 * 60 * 60 * (1000 / FRAME_MS);

export interface RecorderOptions {
  /** Keep the audio (recording asked for); without it only the transcript's voice activity is measured. */
  audio: boolean;
}

export interface Recording {
  /** The Ogg Opus file, when audio was kept. */
  file?: Uint8Array;
  /** Samples per channel (48 kHz) the file plays. */
  samples: number;
  segments: (TranscriptSegment & { words: never[] })[];
}

interface OpenSegment {
  startFrame: number;
  lastVoicedFrame: number;
  utterance: Utterance;
}

class ChannelActivity {
  private open: OpenSegment | undefined;
  readonly segments: { startFrame: number; endFrame: number; utterance: Utterance }[] = [];

  constructor(readonly channel: 0 | 1) {}

  frame(index: number, voiced: boolean, utterance: Utterance): void {
    if (this.open && (this.open.utterance.key !== utterance.key || index - this.open.lastVoicedFrame > HANGOVER_FRAMES)) this.close();
    if (!voiced) return;
    if (this.open) this.open.lastVoicedFrame = index;
    else this.open = { startFrame: index, lastVoicedFrame: index, utterance };
  }

  close(): void {
    const open = this.open;
    this.open = undefined;
    if (!open || open.utterance.text === null) return;
    if (open.lastVoicedFrame + 1 - open.startFrame < MIN_SEGMENT_FRAMES) return;
    this.segments.push({ startFrame: open.startFrame, endFrame: open.lastVoicedFrame + 1, utterance: open.utterance });
  }
}

const BUSINESS_UTTERANCE: Utterance = { key: 'business', text: BUSINESS_PLACEHOLDER, confidence: 0 };
const seconds = (frames: number): number => Math.round(frames * FRAME_MS) / 1000;

/**
 * opusscript 0.1's own encode and decode copy PCM through a 16-bit view indexed by a byte address,
 * so they read and write at twice the address they allocated: outside their buffers, over whatever
 * lives there. The recorder's codecs write their PCM (one byte a 16-bit cell, as the native side
 * reads it) inside their own buffers instead, and live in the asm.js build's heap, apart from the
 * other peers' codecs and their stray writes.
 */
interface OpusScriptBuffers {
  handler: {
    _encode(input: number, bytes: number, output: number, frameSize: number): number;
    _decode(input: number, bytes: number, output: number): number;
  };
  inPCM: Uint16Array;
  inPCMPointer: number;
  inOpusPointer: number;
  outOpusPointer: number;
  outPCMPointer: number;
}

const buffersOf = (codec: OpusScript): OpusScriptBuffers => codec as unknown as OpusScriptBuffers;

function heapOf(codec: OpusScriptBuffers): ArrayBuffer {
  const heap = codec.inPCM.buffer;
  if (heap.byteLength === 0) throw new Error('the Opus codec’s memory moved');
  return heap as ArrayBuffer;
}

function encodeFrame(encoder: OpusScript, pcm: Buffer): Buffer {
  const codec = buffersOf(encoder);
  const heap = heapOf(codec);
  new Uint16Array(heap, codec.inPCMPointer, pcm.length).set(pcm);
  const length = codec.handler._encode(codec.inPCMPointer, pcm.length, codec.outOpusPointer, FRAME_SAMPLES);
  if (length < 0) throw new Error(`Opus encode failed (${length})`);
  return Buffer.from(new Uint8Array(heap, codec.outOpusPointer, length));
}

/** One 20 ms mono frame; a packet that does not decode is silence. */
function decodeFrame(decoder: OpusScript, packet: Buffer): Int16Array {
  const codec = buffersOf(decoder);
  const heap = heapOf(codec);
  const out = new Int16Array(FRAME_SAMPLES);
  if (packet.length > OpusScript.MAX_PACKET_SIZE) return out;
  new Uint8Array(heap, codec.inOpusPointer, packet.length).set(packet);
  const samples = codec.handler._decode(codec.inOpusPointer, packet.length, codec.outPCMPointer);
  if (samples <= 0) return out;
  const bytes = Buffer.from(new Uint16Array(heap, codec.outPCMPointer, Math.min(samples, FRAME_SAMPLES) * 2));
  for (let i = 0; i * 2 + 1 < bytes.length; i++) out[i] = bytes.readInt16LE(i * 2);
  return out;
}

function rms(pcm: Int16Array): number {
  let squares = 0;
  for (const s of pcm) squares += (s / 32768) ** 2;
  return pcm.length === 0 ? 0 : Math.sqrt(squares / pcm.length);
}

export class CallRecorder implements CaptureSink {
  private readonly decoder = new OpusScript(SAMPLE_RATE, 1, OpusScript.Application.VOIP, { wasm: false });
  private readonly encoder: OpusScript | undefined;
  private readonly writer: OggOpusWriter | undefined;
  private readonly pages: Uint8Array[] = [];
  private readonly queue: Int16Array[] = [];
  private queued = 0;
  private primed = false;
  private readonly business = new ChannelActivity(0);
  private readonly customer = new ChannelActivity(1);
  private frames = 0;
  private finished: Recording | undefined;
  /** When the first frame (the notice's) went out, unix ms. */
  startedAt: number | undefined;

  constructor(options: RecorderOptions) {
    if (options.audio) {
      this.encoder = new OpusScript(SAMPLE_RATE, 2, OpusScript.Application.AUDIO, { wasm: false });
      this.encoder.setBitrate(BITRATE);
      this.writer = new OggOpusWriter({ channels: 2, sink: (page) => this.pages.push(page), vendor: 'softphone sandbox', comments: ['TITLE=Call recording'] });
    }
  }

  /** Milliseconds recorded so far. */
  get recordedMs(): number {
    return this.frames * FRAME_MS;
  }

  heard(pcm: Int16Array): void {
    // Before the notice starts nothing is recorded.
    if (this.finished || this.startedAt === undefined) return;
    this.queue.push(pcm);
    this.queued += pcm.length;
    while (this.queued - (this.queue[0]?.length ?? 0) >= MAX_QUEUED_SAMPLES) this.queued -= this.queue.shift()!.length;
  }

  sent(payload: Buffer, utterance: Utterance): void {
    if (this.finished || this.frames >= MAX_FRAMES) return;
    this.startedAt ??= Date.now();
    const customer = decodeFrame(this.decoder, payload);
    const business = this.take(FRAME_SAMPLES);
    const index = this.frames++;
    this.business.frame(index, rms(business) > VOICED_RMS, BUSINESS_UTTERANCE);
    this.customer.frame(index, rms(customer) > VOICED_RMS, utterance);
    if (this.encoder && this.writer) {
      const stereo = Buffer.alloc(FRAME_SAMPLES * 4);
      for (let i = 0; i < FRAME_SAMPLES; i++) {
        stereo.writeInt16LE(business[i]!, i * 4);
        stereo.writeInt16LE(customer[i]!, i * 4 + 2);
      }
      this.writer.write(encodeFrame(this.encoder, stereo));
    }
  }

  /** Ends the recording (a second call gives the same): the file, and the transcript's segments in time order. */
  finish(): Recording {
    if (this.finished) return this.finished;
    this.business.close();
    this.customer.close();
    const samples = this.frames * FRAME_SAMPLES;
    let file: Uint8Array | undefined;
    if (this.encoder && this.writer) {
      // One silent frame more pushes the last audio out of the encoder's lookahead; the end trimming drops it.
      if (this.frames > 0) this.writer.write(encodeFrame(this.encoder, Buffer.alloc(FRAME_SAMPLES * 4)));
      this.writer.end(samples);
      file = new Uint8Array(this.pages.reduce((sum, p) => sum + p.length, 0));
      let at = 0;
      for (const page of this.pages) {
        file.set(page, at);
        at += page.length;
      }
      this.encoder.delete();
    }
    this.decoder.delete();
    const segments = [this.business, this.customer]
      .flatMap((activity) =>
        activity.segments.map((s) => ({
          speaker: activity.channel === 0 ? 'Business' : 'Customer',
          channel: activity.channel,
          start: seconds(s.startFrame),
          end: seconds(s.endFrame),
          text: s.utterance.text ?? '',
          confidence: s.utterance.confidence,
          words: [] as never[],
        })),
      )
      .sort((a, b) => a.start - b.start || a.channel - b.channel);
    this.finished = { ...(file ? { file } : {}), samples, segments };
    this.pages.length = 0;
    this.queue.length = 0;
    return this.finished;
  }

  private take(count: number): Int16Array {
    const out = new Int16Array(count);
    if (!this.primed && this.queued < PRIMED_SAMPLES) return out;
    this.primed = this.queued >= count;
    let filled = 0;
    while (filled < count && this.queue.length > 0) {
      const head = this.queue[0]!;
      const n = Math.min(count - filled, head.length);
      out.set(head.subarray(0, n), filled);
      filled += n;
      if (n === head.length) this.queue.shift();
      else this.queue[0] = head.subarray(n);
      this.queued -= n;
    }
    return out;
  }
}
