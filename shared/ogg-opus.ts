// Opus packets into an Ogg Opus file (RFC 7845 on RFC 3533), as they come: the identification
// header (OpusHead) and the comment header (OpusTags) each on a page of their own, then the audio in
// pages of at most a second. Long recordings stream through a sink page by page, never held whole;
// a short file (a voicemail) is built in memory with oggOpusFile.
//
// Granule positions count 48 kHz samples per channel from the first decoded sample, the pre-skip's
// included (RFC 7845 4): a page's granule is the end of the last packet completed on it, and a player
// plays the granule less the pre-skip. The last page may say less than its packets hold (end
// trimming), so a file decodes to exactly the samples that were encoded. Valid Opus packets (at most 120 ms, 61 440 bytes) always fit in one
// page, so no packet is ever continued across pages.
import { err, ok, type Result } from './result';

/** Ogg Opus's granule rate, whatever the input's (RFC 7845 4). */
export const OGG_OPUS_RATE = 48_000;
/** What the service and the app call an Ogg Opus file. */
export const OGG_OPUS_MIME_TYPE = 'audio/ogg; codecs=opus';
/**
 * libopus's encoder lookahead at 48 kHz for the VOIP and AUDIO applications (2.5 ms of analysis and
 * 4 ms of delay compensation): the samples a decoder drops before the first one that was encoded.
 */
export const LIBOPUS_PRE_SKIP = 312;
/** Audio pages close once they hold this much (libopusenc's default): short enough to seek, few enough pages. */
const MAX_PAGE_SAMPLES = OGG_OPUS_RATE;
/** A page's lacing table holds at most 255 values (RFC 3533 6). */
const MAX_SEGMENTS = 255;
/** RFC 6716 3.4: 120 ms at most, each frame 1 275 bytes at most, 48 frames at most. */
const MAX_PACKET_SAMPLES = 5_760;
const MAX_PACKET_BYTES = 1_275 * 48;

const FLAG_BEGIN = 0x02;
const FLAG_END = 0x04;

export interface OggOpusOptions {
  channels: 1 | 2;
  /** Receives each page, in order, as soon as it is complete. */
  sink: (page: Uint8Array) => void;
  /** Samples (48 kHz) to drop at the start: the encoder's lookahead. Default LIBOPUS_PRE_SKIP. */
  preSkip?: number;
  /** The rate the audio was recorded at, for information only (RFC 7845 5.1). Default 48 000. */
  inputSampleRate?: number;
  /** The logical stream's serial number; default a random one. */
  serial?: number;
  /** The encoder's name in OpusTags. */
  vendor?: string;
  /** "NAME=value" comments (RFC 7845 5.2), e.g. "TITLE=Voicemail". */
  comments?: readonly string[];
}

/** How many 48 kHz samples an Opus packet holds, from its TOC byte (RFC 6716 3.1), or why it is not one. */
export function opusPacketSamples(packet: Uint8Array): Result<number> {
  const toc = packet[0];
  if (toc === undefined) return err('invalid_input', 'packet: an Opus packet has at least one byte', { field: 'packet' });
  if (packet.length > MAX_PACKET_BYTES) return err('invalid_input', `packet: longer than an Opus packet can be (${MAX_PACKET_BYTES} bytes)`, { field: 'packet' });
  const config = toc >> 3;
  const frameSamples = config < 12 ? [480, 960, 1920, 2880][config & 3]! : config < 16 ? [480, 960][config & 1]! : [120, 240, 480, 960][config & 3]!;
  let frames: number;
  switch (toc & 3) {
    case 0:
      frames = 1;
      break;
    case 1:
    case 2:
      frames = 2;
      break;
    default: {
      const count = packet[1];
      if (count === undefined || (count & 0x3f) === 0) return err('invalid_input', 'packet: a code 3 Opus packet names one frame or more in its second byte', { field: 'packet' });
      frames = count & 0x3f;
    }
  }
  const samples = frames * frameSamples;
  if (samples > MAX_PACKET_SAMPLES) return err('invalid_input', `packet: ${samples / 48} ms, more than an Opus packet may hold (120 ms)`, { field: 'packet' });
  return ok(samples);
}

/**
 * Writes one Ogg Opus stream: `write` each packet in order, then `end` once. The headers go out
 * before the first packet; a page goes to the sink when the next packet would not fit in it.
 */
export class OggOpusWriter {
  private readonly serial: number;
  private readonly preSkip: number;
  private sequence = 0;
  /** Samples (48 kHz, pre-skip included) of every packet written so far. */
  private granule = 0;
  /** The granule of the last page sent: the final page's may not go below it. */
  private sentGranule = 0;
  private pending: Uint8Array[] = [];
  private pendingSegments = 0;
  private pendingSamples = 0;
  private state: 'new' | 'writing' | 'ended' = 'new';

  constructor(private readonly options: OggOpusOptions) {
    this.serial = options.serial ?? Math.floor(Math.random() * 0x1_0000_0000);
    this.preSkip = options.preSkip ?? LIBOPUS_PRE_SKIP;
  }

  /** Samples per channel a player would play of what was written so far (48 kHz): the pre-skip is not played. */
  get samples(): number {
    return Math.max(0, this.granule - this.preSkip);
  }

  /** Adds one Opus packet; refused (and nothing written) when it is not one, or after `end`. */
  write(packet: Uint8Array): Result<{ samples: number }> {
    if (this.state === 'ended') return err('invalid_state', 'the Ogg Opus stream has ended');
    const samples = opusPacketSamples(packet);
    if (!samples.ok) return samples;
    this.begin();
    const segments = Math.floor(packet.length / 255) + 1;
    if (this.pending.length > 0 && (this.pendingSegments + segments > MAX_SEGMENTS || this.pendingSamples + samples.value > MAX_PAGE_SAMPLES)) {
      this.flush(0, this.granule);
    }
    this.pending.push(packet);
    this.pendingSegments += segments;
    this.pendingSamples += samples.value;
    this.granule += samples.value;
    return ok({ samples: samples.value });
  }

  /**
   * Sends the last page, marked end of stream. `samples` is how many samples per channel (48 kHz)
   * the encoder was given: the padding of the last packet past them is trimmed by the decoder.
   * A second call does nothing.
   */
  end(samples?: number): void {
    if (this.state === 'ended') return;
    this.begin();
    this.state = 'ended';
    if (this.pending.length === 0) {
      // No audio at all: an empty last page.
      this.flush(FLAG_END, 0);
      return;
    }
    const trimmed = samples === undefined ? this.granule : Math.min(this.granule, this.preSkip + Math.max(0, Math.floor(samples)));
    // A page's granule never goes below the one before (RFC 7845 4.5): trimming stops at the last page sent.
    this.flush(FLAG_END, Math.max(this.sentGranule, trimmed));
  }

  private begin(): void {
    if (this.state !== 'new') return;
    this.state = 'writing';
    this.page(FLAG_BEGIN, 0, [opusHead(this.options.channels, this.preSkip, this.options.inputSampleRate ?? OGG_OPUS_RATE)]);
    this.page(0, 0, [opusTags(this.options.vendor ?? 'softphone', this.options.comments ?? [])]);
  }

  private flush(flags: number, granule: number): void {
    this.page(flags, granule, this.pending);
    this.sentGranule = granule;
    this.pending = [];
    this.pendingSegments = 0;
    this.pendingSamples = 0;
  }

  /** One page holding whole packets (RFC 3533 6): the header, its lacing values, the packets; CRC over all. */
  private page(flags: number, granule: number, packets: readonly Uint8Array[]): void {
    const lacing: number[] = [];
    for (const packet of packets) {
      for (let left = packet.length; ; left -= 255) {
        lacing.push(Math.min(left, 255));
        if (left < 255) break;
      }
    }
    const bodyLength = packets.reduce((sum, p) => sum + p.length, 0);
    const page = new Uint8Array(27 + lacing.length + bodyLength);
    const view = new DataView(page.buffer);
    page.set([0x4f, 0x67, 0x67, 0x53], 0); // "OggS"
    page[4] = 0; // stream structure version
    page[5] = flags;
    view.setUint32(6, granule % 0x1_0000_0000, true);
    view.setUint32(10, Math.floor(granule / 0x1_0000_0000), true);
    view.setUint32(14, this.serial, true);
    view.setUint32(18, this.sequence++, true);
    // Bytes 22–25, the CRC, stay zero while it is computed.
    page[26] = lacing.length;
    page.set(lacing, 27);
    let at = 27 + lacing.length;
    for (const packet of packets) {
      page.set(packet, at);
      at += packet.length;
    }
    view.setUint32(22, oggCrc32(page), true);
    this.options.sink(page);
  }
}

/**
 * A whole Ogg Opus file from its packets. `samples` (per channel, 48 kHz) trims the last packet's
 * padding, as OggOpusWriter.end does. Refused when a packet is not an Opus packet.
 */
export function oggOpusFile(packets: Iterable<Uint8Array>, options: Omit<OggOpusOptions, 'sink'> & { samples?: number }): Result<Uint8Array> {
  const pages: Uint8Array[] = [];
  const { samples, ...rest } = options;
  const writer = new OggOpusWriter({ ...rest, sink: (page) => pages.push(page) });
  for (const packet of packets) {
    const written = writer.write(packet);
    if (!written.ok) return written;
  }
  writer.end(samples);
  const file = new Uint8Array(pages.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const page of pages) {
    file.set(page, at);
    at += page.length;
  }
  return ok(file);
}

/** RFC 7845 5.1, channel mapping family 0: mono or stereo, no mapping table. */
function opusHead(channels: number, preSkip: number, inputSampleRate: number): Uint8Array {
  const head = new Uint8Array(19);
  const view = new DataView(head.buffer);
  head.set(ascii('OpusHead'), 0);
  head[8] = 1; // version
  head[9] = channels;
  view.setUint16(10, preSkip, true);
  view.setUint32(12, inputSampleRate, true);
  view.setInt16(16, 0, true); // output gain
  head[18] = 0; // mapping family
  return head;
}

/** RFC 7845 5.2: the vendor string and the comments, each a 32-bit length and UTF-8. */
function opusTags(vendor: string, comments: readonly string[]): Uint8Array {
  const strings = [vendor, ...comments].map(utf8);
  const tags = new Uint8Array(8 + strings.reduce((sum, s) => sum + 4 + s.length, 0) + 4);
  const view = new DataView(tags.buffer);
  tags.set(ascii('OpusTags'), 0);
  let at = 8;
  strings.forEach((s, i) => {
    view.setUint32(at, s.length, true);
    tags.set(s, at + 4);
    at += 4 + s.length;
    // The comment count follows the vendor string.
    if (i === 0) {
      view.setUint32(at, comments.length, true);
      at += 4;
    }
  });
  return tags;
}

const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));

/** UTF-8 bytes of a string (shared/ has no TextEncoder); a lone surrogate becomes U+FFFD. */
function utf8(s: string): Uint8Array {
  const out: number[] = [];
  for (const char of s) {
    let code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
    if (code < 0x80) out.push(code);
    else if (code < 0x800) out.push(0xc0 | (code >> 6), 0x80 | (code & 0x3f));
    else if (code < 0x10000) out.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    else out.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
  }
  return Uint8Array.from(out);
}

/** Ogg's CRC-32 (RFC 3533 6): polynomial 0x04C11DB7, not reflected, initial value 0, no final XOR. */
const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, i) => {
  let r = i << 24;
  for (let bit = 0; bit < 8; bit++) r = r & 0x8000_0000 ? (r << 1) ^ 0x04c1_1db7 : r << 1;
  return r >>> 0;
});

export function oggCrc32(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  return crc;
}
