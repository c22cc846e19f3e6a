// The one audio format every leg of a bridged call carries (protocol.md "Media"): Opus at 48 kHz in
// 20 ms frames, RFC 4733 telephone events beside it. Every RTP clock the bridge keeps counts 48 kHz
// samples.

export const SAMPLE_RATE = 48_000;
export const FRAME_MS = 20;
/** 20 ms at 48 kHz. */
export const FRAME_SAMPLES = 960;
export const SAMPLES_PER_MS = SAMPLE_RATE / 1000;

/** What an RTP packet of a leg carries, by the codec its payload type was negotiated for. */
export type PacketKind = 'audio' | 'event';

/** Milliseconds of each Opus frame by TOC configuration (RFC 6716 3.1, table 2): SILK, hybrid, CELT. */
const FRAME_MS_BY_CONFIG: readonly number[] = [
  10, 20, 40, 60, 10, 20, 40, 60, 10, 20, 40, 60, // SILK NB, MB, WB
  10, 20, 10, 20, // hybrid SWB, FB
  2.5, 5, 10, 20, 2.5, 5, 10, 20, 2.5, 5, 10, 20, 2.5, 5, 10, 20, // CELT NB, WB, SWB, FB
];

/**
 * The 48 kHz samples an Opus packet covers, from its TOC byte (RFC 6716 3.1): frame length times
 * frame count. Undefined for a packet too short to say (RFC 6716 3.2.5 code 3 needs a second byte).
 */
export function opusPacketSamples(payload: Uint8Array): number | undefined {
  const toc = payload[0];
  if (toc === undefined) return undefined;
  const frameMs = FRAME_MS_BY_CONFIG[toc >> 3]!;
  const code = toc & 0x03;
  let frames: number;
  if (code === 0) frames = 1;
  else if (code === 1 || code === 2) frames = 2;
  else {
    const count = payload[1];
    if (count === undefined) return undefined;
    frames = count & 0x3f;
  }
  const samples = frameMs * SAMPLES_PER_MS * frames;
  // RFC 6716 3.2.5: a packet never holds more than 120 ms.
  return frames === 0 || samples > 120 * SAMPLES_PER_MS ? undefined : samples;
}
