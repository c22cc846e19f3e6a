// Every Opus codec of the node — a mix's decoders and encoders, the hold music's and silence's, a
// recording's (call-recorder.ts) — on an instance of opusscript's libopus (WebAssembly) of the
// node's own, where every byte read or written lies in a buffer allocated here for it.
//
// Why not opusscript's own encode and decode: they copy PCM through a 16-bit view indexed by a byte
// address, so they read and write at twice the address they allocated, outside their buffers, over
// whatever lives there — with a few codecs alive, another codec's state (sandbox/call-recorder.ts
// says the same). A node holds many (each mixed source, each mixing listener, each recording) for
// as long as their calls. The instance opusscript keeps stays the tests' and the sandbox's.
// The asm.js build would be as safe, but its stereo encoding costs some twenty times the CPU.
//
// The native side (opusscript's OpusScriptHandler) takes and gives PCM one byte per 16-bit cell,
// little end first: `_encode` packs its input in place before encoding, `_decode` spreads what it
// decoded. Each handler holds an encoder and a decoder; each codec here uses one of them.
import { createRequire } from 'node:module';
import { FRAME_SAMPLES, SAMPLE_RATE } from './audio-format';

/** The part of opusscript's native module this file uses (its WebAssembly build). */
interface NativeHandler {
  _encode(input: number, bytes: number, output: number, frameSize: number): number;
  _decode(input: number, bytes: number, output: number): number;
  _encoder_ctl(ctl: number, arg: number): number;
}
interface NativeModule {
  /** Replaced when the memory grows: read it anew for every call. */
  HEAPU8: Uint8Array;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  OpusScriptHandler: { new (rate: number, channels: number, application: number): NativeHandler; destroy_handler(handler: NativeHandler): void };
}
type NativeFactory = () => NativeModule;

/** libopus's constants (opus_defines.h). */
const APPLICATIONS = { voip: 2048, audio: 2049 } as const;
const SET_BITRATE = 4002;
const SET_COMPLEXITY = 4010;
/** RFC 6716 3.4: at most 120 ms in a packet, which opusscript's decoder accepts. */
const MAX_PACKET_SAMPLES = 5_760;
/** What opusscript's encoder may write, and the longest packet its decoder is handed. */
const MAX_PACKET_BYTES = 1_276 * 3;
const MAX_CHANNELS = 2;

export type OpusApplication = keyof typeof APPLICATIONS;

/** The instance and the scratch buffers every codec of it shares (one call at a time: the node is one thread). */
interface Instance {
  native: NativeModule;
  packetIn: number;
  packetOut: number;
  /** Decoded PCM, one byte a 16-bit cell: 4 bytes a sample, 120 ms of mono at most. */
  pcmOut: number;
  /**
   * PCM to encode, one byte a 16-bit cell. `_encode` packs it in place, reading cell 2i and 2i + 1
   * for every byte i it was told of: for 2n bytes of PCM, cells up to 4n, 8n bytes.
   */
  pcmIn: number;
}

let instance: Instance | undefined;

function loadFactory(): NativeFactory {
  let load: NodeJS.Require;
  try {
    load = createRequire(import.meta.url);
  } catch {
    // A CommonJS bundle (the desktop app's main process) has no import.meta.url, and a __filename.
    load = createRequire(__filename);
  }
  return load('opusscript/build/opusscript_native_wasm.js') as NativeFactory;
}

function shared(): Instance {
  if (instance) return instance;
  const native = loadFactory()();
  const malloc = (bytes: number): number => {
    const pointer = native._malloc(bytes);
    if (pointer === 0) throw new RangeError('the node’s Opus memory is exhausted');
    return pointer;
  };
  instance = {
    native,
    packetIn: malloc(MAX_PACKET_BYTES),
    packetOut: malloc(MAX_PACKET_BYTES),
    pcmOut: malloc(MAX_PACKET_SAMPLES * 4),
    pcmIn: malloc(FRAME_SAMPLES * MAX_CHANNELS * 8),
  };
  return instance;
}

/** A decoder: 48 kHz mono, whatever the packet's own channels. */
export class OpusDecoder {
  private readonly native: NativeModule;
  private handler: NativeHandler | undefined;
  /** What `decode` gives: overwritten by this decoder's next call. */
  private readonly pcm = new Int16Array(MAX_PACKET_SAMPLES);

  constructor() {
    this.native = shared().native;
    this.handler = new this.native.OpusScriptHandler(SAMPLE_RATE, 1, APPLICATIONS.voip);
  }

  /** The packet's samples (valid until this decoder's next call), or undefined when it does not decode. */
  decode(payload: Uint8Array): Int16Array | undefined {
    const handler = this.handler;
    if (!handler || payload.length === 0 || payload.length > MAX_PACKET_BYTES) return undefined;
    const { packetIn, pcmOut } = shared();
    this.native.HEAPU8.set(payload, packetIn);
    const samples = handler._decode(packetIn, payload.length, pcmOut);
    if (samples <= 0 || samples > MAX_PACKET_SAMPLES) return undefined;
    // Read after the call: decoding may have grown the memory and replaced the view.
    const heap = this.native.HEAPU8;
    const pcm = this.pcm;
    for (let i = 0, at = pcmOut; i < samples; i++, at += 4) pcm[i] = (((heap[at + 2]! << 8) | heap[at]!) << 16) >> 16;
    return pcm.subarray(0, samples);
  }

  delete(): void {
    if (!this.handler) return;
    this.native.OpusScriptHandler.destroy_handler(this.handler);
    this.handler = undefined;
  }
}

export interface OpusEncoderOptions {
  channels: 1 | 2;
  application: OpusApplication;
  /** bit/s; libopus's own choice when absent. */
  bitrate?: number;
  /** 0–10; libopus's default (10) when absent. */
  complexity?: number;
}

/** An encoder of 20 ms frames at 48 kHz (interleaved, channel 0 first, when stereo). */
export class OpusEncoder {
  private readonly native: NativeModule;
  private handler: NativeHandler | undefined;
  private readonly samples: number;

  constructor(options: OpusEncoderOptions) {
    this.native = shared().native;
    this.samples = FRAME_SAMPLES * options.channels;
    const handler = new this.native.OpusScriptHandler(SAMPLE_RATE, options.channels, APPLICATIONS[options.application]);
    this.handler = handler;
    if (options.bitrate !== undefined) handler._encoder_ctl(SET_BITRATE, options.bitrate);
    if (options.complexity !== undefined) handler._encoder_ctl(SET_COMPLEXITY, options.complexity);
  }

  /** One 20 ms frame as a packet of its own (a copy, the caller's to keep). */
  encode(frame: Int16Array): Uint8Array {
    const handler = this.handler;
    if (!handler) throw new Error('the Opus encoder was deleted');
    if (frame.length !== this.samples) throw new RangeError(`a frame here is ${this.samples} samples`);
    const { pcmIn, packetOut } = shared();
    let heap = this.native.HEAPU8;
    for (let i = 0, at = pcmIn; i < frame.length; i++, at += 4) {
      const sample = frame[i]!;
      heap[at] = sample & 0xff;
      heap[at + 1] = 0;
      heap[at + 2] = (sample >> 8) & 0xff;
      heap[at + 3] = 0;
    }
    const length = handler._encode(pcmIn, frame.length * 2, packetOut, FRAME_SAMPLES);
    if (length < 0) throw new Error(`Opus could not encode a frame (${length})`);
    heap = this.native.HEAPU8;
    return heap.slice(packetOut, packetOut + length);
  }

  delete(): void {
    if (!this.handler) return;
    this.native.OpusScriptHandler.destroy_handler(this.handler);
    this.handler = undefined;
  }
}
