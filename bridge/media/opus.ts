// Opus in and out of 16-bit mono PCM at 48 kHz (the node's own libopus, libopus.ts). Decoding and
// encoding happen only where the bridge must make a frame itself (the mix); a single source is
// forwarded as it comes.
import { FRAME_SAMPLES } from './audio-format';
import { OpusDecoder, OpusEncoder } from './libopus';

/** What a mixed voice is encoded at: the service's own offer asks for about 20 kbit/s; twice that is ample for a mix. */
const MIX_BITRATE = 40_000;

export { OpusDecoder, OpusEncoder } from './libopus';

export const newDecoder = (): OpusDecoder => new OpusDecoder();

export function newEncoder(application: 'voice' | 'music' = 'voice'): OpusEncoder {
  return new OpusEncoder({ channels: 1, application: application === 'voice' ? 'voip' : 'audio', bitrate: MIX_BITRATE });
}

/** The PCM of one Opus packet (one or more 20 ms frames of it), the caller's to keep; undefined when it does not decode. */
export function decodePacket(decoder: OpusDecoder, payload: Uint8Array): Int16Array | undefined {
  return decoder.decode(payload)?.slice();
}

/** One 20 ms frame of PCM as an Opus packet. */
export function encodeFrame(encoder: OpusEncoder, pcm: Int16Array): Buffer {
  const packet = encoder.encode(pcm);
  return Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength);
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
