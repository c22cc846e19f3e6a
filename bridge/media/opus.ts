// Opus in and out of 16-bit mono PCM at 48 kHz (opusscript). Decoding and encoding happen only where
// the bridge must make a frame itself (the mix); a single source is forwarded as it comes.
import OpusScript from 'opusscript';
import { FRAME_SAMPLES, SAMPLE_RATE } from './audio-format';

/** What a mixed voice is encoded at: the service's own offer asks for about 20 kbit/s; twice that is ample for a mix. */
const MIX_BITRATE = 40_000;

export type OpusCoder = OpusScript;

export const newDecoder = (): OpusCoder => new OpusScript(SAMPLE_RATE, 1, OpusScript.Application.VOIP);

export function newEncoder(application: 'voice' | 'music' = 'voice'): OpusCoder {
  const encoder = new OpusScript(SAMPLE_RATE, 1, application === 'voice' ? OpusScript.Application.VOIP : OpusScript.Application.AUDIO);
  encoder.setBitrate(MIX_BITRATE);
  return encoder;
}

/** The PCM of one Opus packet (one or more 20 ms frames of it); undefined when it does not decode. */
export function decodePacket(decoder: OpusCoder, payload: Uint8Array): Int16Array | undefined {
  let pcm: Buffer;
  try {
    pcm = decoder.decode(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength));
  } catch {
    return undefined;
  }
  const samples = pcm.length >> 1;
  if (pcm.byteOffset % 2 === 0) return new Int16Array(pcm.buffer, pcm.byteOffset, samples).slice();
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++) out[i] = pcm.readInt16LE(i * 2);
  return out;
}

/** One 20 ms frame of PCM as an Opus packet. */
export function encodeFrame(encoder: OpusCoder, pcm: Int16Array): Buffer {
  return Buffer.from(encoder.encode(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), FRAME_SAMPLES));
}

let silence: Buffer | undefined;

/** 20 ms of digital silence as Opus, encoded once per process. */
export function silenceFrame(): Buffer {
  if (!silence) {
    const encoder = newEncoder();
    try {
      silence = encodeFrame(encoder, new Int16Array(FRAME_SAMPLES));
    } finally {
      encoder.delete();
    }
  }
  return silence;
}
