// The Opus codecs of the node's recordings (call-recorder.ts): two mono decoders and one stereo
// encoder per recorded call, on an instance of opusscript's libopus (WebAssembly) of their own.
//
// Why not opusscript's own encode and decode: they copy PCM through a 16-bit view indexed by a byte
// address, so they read and write at twice the address they allocated, outside their buffers, over
// whatever lives there (sandbox/call-recorder.ts says the same). The mixes' codecs (opus.ts) live
// with that in the instance opusscript keeps; a recording runs for the whole call, so its codecs get
// an instance of their own, where every byte read or written lies in a buffer allocated here for it.
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
const APPLICATION_VOIP = 2048;
const APPLICATION_AUDIO = 2049;
const SET_BITRATE = 4002;
const SET_COMPLEXITY = 4010;
/** RFC 6716 3.4: at most 120 ms in a packet, which opusscript's decoder accepts. */
const MAX_PACKET_SAMPLES = 5_760;
/** What opusscript's encoder may write, and the longest packet its decoder is handed. */
const MAX_PACKET_BYTES = 1_276 * 3;
const STEREO = 2;

/**
 * A call's two channels at this rate, as the sandbox's service records them: about 22 MB an hour.
 * Below it the two voices share too few bits (at 32 kbit/s the customer's channel loses about half
 * its signal-to-noise ratio whenever the business speaks too).
 */
export const RECORDING_BITRATE = 48_000;
/**
 * libopus's effort, 0–10 (10 by default), which every recorded call pays every 20 ms: at 5 the
 * stereo encoder takes about a fifth of its time at 10 on speech (about 0.1 ms a frame here).
 */
export const RECORDING_COMPLEXITY = 5;

/** The instance and the scratch buffers every codec of it shares (one call at a time: the node is one thread). */
interface Instance {
  native: NativeModule;
  packetIn: number;
  packetOut: number;
  /** Decoded PCM, one byte a 16-bit cell: 4 bytes a sample, 120 ms at most. */
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
    if (pointer === 0) throw new RangeError('the recordings’ Opus memory is exhausted');
    return pointer;
  };
  instance = {
    native,
    packetIn: malloc(MAX_PACKET_BYTES),
    packetOut: malloc(MAX_PACKET_BYTES),
    pcmOut: malloc(MAX_PACKET_SAMPLES * 4),
    pcmIn: malloc(FRAME_SAMPLES * STEREO * 8),
  };
  return instance;
}

/**
 * A handler of the shared instance. The stereo encoder codes music and speech for two (the VOIP
 * application's speech coder costs three to ten times the CPU at these rates); a decoder takes any.
 */
function newHandler(channels: 1 | 2): { native: NativeModule; handler: NativeHandler } {
  const { native } = shared();
  return { native, handler: new native.OpusScriptHandler(SAMPLE_RATE, channels, channels === STEREO ? APPLICATION_AUDIO : APPLICATION_VOIP) };
}

/** One channel's decoder: 48 kHz mono, whatever the packet's own channels. */
export class RecordingDecoder {
  private readonly native: NativeModule;
  private handler: NativeHandler | undefined;
  /** What `decode` gives: overwritten by the next call. */
  private readonly pcm = new Int16Array(MAX_PACKET_SAMPLES);

  constructor() {
    const made = newHandler(1);
    this.native = made.native;
    this.handler = made.handler;
  }

  /** The packet's samples (valid until the next call), or undefined when it does not decode. */
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
    for (let i = 0, at = pcmOut; i < samples; i++, at += 4) pcm[i] = ((heap[at + 2]! << 8) | heap[at]!) << 16 >> 16;
    return pcm.subarray(0, samples);
  }

  delete(): void {
    if (!this.handler) return;
    this.native.OpusScriptHandler.destroy_handler(this.handler);
    this.handler = undefined;
  }
}

/** The recording's encoder: 20 ms stereo frames (interleaved, channel 0 first) into Opus packets. */
export class RecordingEncoder {
  private readonly native: NativeModule;
  private handler: NativeHandler | undefined;

  constructor() {
    const made = newHandler(STEREO);
    this.native = made.native;
    this.handler = made.handler;
    this.handler._encoder_ctl(SET_BITRATE, RECORDING_BITRATE);
    this.handler._encoder_ctl(SET_COMPLEXITY, RECORDING_COMPLEXITY);
  }

  /** One 20 ms frame, FRAME_SAMPLES × 2 interleaved samples, as a packet of its own. */
  encode(frame: Int16Array): Uint8Array {
    const handler = this.handler;
    if (!handler) throw new Error('the recording’s encoder was deleted');
    if (frame.length !== FRAME_SAMPLES * STEREO) throw new RangeError(`a recording frame is ${FRAME_SAMPLES * STEREO} samples`);
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
    if (length < 0) throw new Error(`Opus could not encode a recording frame (${length})`);
    heap = this.native.HEAPU8;
    return heap.slice(packetOut, packetOut + length);
  }

  delete(): void {
    if (!this.handler) return;
    this.native.OpusScriptHandler.destroy_handler(this.handler);
    this.handler = undefined;
  }
}
