// One listener's outbound RTP stream: one SSRC for its whole life, whoever it carries
// (ARCHITECTURE.md "Decisions worth keeping"). Sources come and go — an agent's leg forwarded as it
// comes, the hold music, the mix, silence — and every packet of every source is placed on this one
// stream's sequence numbers and timestamps:
//
// - Within one stretch of one source (a segment) the source's own spacing is kept: sequence number
//   and timestamp are the source's plus an offset, so a lost packet stays a gap the listener's
//   jitter buffer sees, a reordered one stays reordered, and the RFC 4733 packets of one event keep
//   their shared timestamp (they share the source's timestamp base).
// - A new segment starts where the last ended: the next sequence number after the highest sent (no
//   gap, no jump), and a timestamp that moves on from the latest audio sent by the wall-clock time
//   since it went out, at least by that packet's own length, so that no audio overlaps and nothing
//   goes backwards. The first audio packet of a segment is marked (RFC 3551 4.1: a talkspurt starts).
// - A packet of the current source that lies before the segment's first one is late for a stretch
//   already handed on, and is dropped: it would go out under numbers that belong to the source before.
// - A second copy of the source's newest packet is dropped: the stream sends a number once (and the
//   SRTP below it must never protect one index twice).
// - A packet far off the source's sequence is dropped, unless the next one follows it: then the
//   source restarted its numbering, and a new segment starts (RFC 3550 A.1's probation).
//
// Pure: the caller says when (`now`, monotonic ms) and sends what comes back.
import { opusPacketSamples, FRAME_SAMPLES, SAMPLES_PER_MS, type PacketKind } from './audio-format';

/** One packet as its source numbered it. */
export interface SourcePacket {
  /** Who it comes from: a participant, or a stream made here ("music", "silence", "mix"). */
  source: string;
  /** The source's own SSRC; a new one is a new segment (a generated stream keeps a fixed one). */
  ssrc: number;
  sequenceNumber: number;
  timestamp: number;
  marker: boolean;
  kind: PacketKind;
  /** The payload: for audio, its Opus TOC says how many samples it covers. */
  payload: Uint8Array;
}

/** Where a packet goes on this stream. */
export interface PlacedPacket {
  sequenceNumber: number;
  timestamp: number;
  marker: boolean;
}

/**
 * A source that moved further ahead than this within a segment has restarted rather than lost
 * packets (RFC 3550 A.1 keeps 3 000 for any rate; 250 is 5 s of 20 ms audio).
 */
export const MAX_DROPOUT = 250;
/** Packets up to this far behind the source's newest are late (RFC 3550 A.1 MAX_MISORDER); further, a stray or a restart. */
export const MAX_MISORDER = 100;
/** A timestamp step larger than this (10 s) within a segment is a restart of the source's clock. */
export const MAX_TIMESTAMP_STEP = 10 * 1000 * SAMPLES_PER_MS;

interface Segment {
  source: string;
  ssrc: number;
  sequenceOffset: number;
  timestampOffset: number;
  /** How far the source's newest packet is past the segment's first (a late packet further behind is older than the first). */
  span: number;
  /** After a packet far off the sequence: the number that would confirm the source restarted. */
  probation?: number | undefined;
  /** The source's numbers of its newest packet. */
  newestSequence: number;
  newestTimestamp: number;
}

export const uint16 = (n: number): number => n & 0xffff;
export const uint32 = (n: number): number => n >>> 0;
/** b − a as a signed 16-bit step (RFC 1982 serial arithmetic). */
export const sequenceStep = (a: number, b: number): number => ((b - a + 0x8000) & 0xffff) - 0x8000;
/** b − a as a signed 32-bit step. */
export const timestampStep = (a: number, b: number): number => (b - a) | 0;

export class OutboundStream {
  private segment: Segment | undefined;
  /** The highest sequence number sent, undefined before the first packet. */
  private highestSequence: number | undefined;
  /** The audio packet with the latest timestamp sent: its timestamp, the samples it covers, when it went out. */
  private latestAudio: { timestamp: number; samples: number; at: number } | undefined;

  constructor(
    readonly ssrc: number,
    private readonly firstSequence: number,
    private readonly firstTimestamp: number,
  ) {}

  /** The segment's source, undefined before the first packet. */
  get source(): string | undefined {
    return this.segment?.source;
  }

  /** The stream's numbers for `packet`, or undefined when it must be dropped (see the top of the file). */
  place(packet: SourcePacket, now: number): PlacedPacket | undefined {
    const found = this.segmentFor(packet, now);
    if (!found) return undefined;
    const { segment, starts } = found;
    const placed: PlacedPacket = {
      sequenceNumber: uint16(packet.sequenceNumber + segment.sequenceOffset),
      timestamp: uint32(packet.timestamp + segment.timestampOffset),
      // A talkspurt starts with a new segment; a telephone event keeps its own marker (its start).
      marker: packet.marker || (starts && packet.kind === 'audio'),
    };
    if (this.highestSequence === undefined || sequenceStep(this.highestSequence, placed.sequenceNumber) > 0) this.highestSequence = placed.sequenceNumber;
    if (packet.kind === 'audio') {
      const samples = opusPacketSamples(packet.payload) ?? FRAME_SAMPLES;
      if (this.latestAudio === undefined || timestampStep(this.latestAudio.timestamp, placed.timestamp) > 0) {
        this.latestAudio = { timestamp: placed.timestamp, samples, at: now };
      }
    }
    return placed;
  }

  /**
   * The stream's RTP timestamp at `now`: the latest audio's, moved on by the time since it went
   * out (what an RTCP sender report pairs with the wall clock, RFC 3550 6.4.1). Undefined before
   * any audio.
   */
  timestampAt(now: number): number | undefined {
    const latest = this.latestAudio;
    if (!latest) return undefined;
    return uint32(latest.timestamp + Math.round(Math.max(0, now - latest.at) * SAMPLES_PER_MS));
  }

  private segmentFor(packet: SourcePacket, now: number): { segment: Segment; starts: boolean } | undefined {
    const current = this.segment;
    if (!current || current.source !== packet.source || current.ssrc !== packet.ssrc) return { segment: this.startSegment(packet, now), starts: true };
    const step = sequenceStep(current.newestSequence, packet.sequenceNumber);
    if (step < -MAX_MISORDER || step > MAX_DROPOUT) {
      // Far off: a stray packet, or the source restarted its numbering. As RFC 3550 A.1 does, the
      // packet after it in sequence confirms a restart; until then it is dropped.
      if (current.probation !== packet.sequenceNumber) {
        current.probation = uint16(packet.sequenceNumber + 1);
        return undefined;
      }
      return { segment: this.startSegment(packet, now), starts: true };
    }
    current.probation = undefined;
    // The source's newest again: a duplicate, which would go out twice under one sequence number.
    if (step === 0) return undefined;
    // A clock that leaps with the numbers in order (a long pause the source left out): a new stretch, on the wall clock.
    if (Math.abs(timestampStep(current.newestTimestamp, packet.timestamp)) > MAX_TIMESTAMP_STEP) return { segment: this.startSegment(packet, now), starts: true };
    // Measured from the newest, not against the first: a stretch outlives the 16-bit wrap.
    if (step < 0 && -step > current.span) return undefined;
    if (step > 0) {
      current.span = Math.min(current.span + step, MAX_MISORDER);
      current.newestSequence = packet.sequenceNumber;
      current.newestTimestamp = packet.timestamp;
    }
    return { segment: current, starts: false };
  }

  private startSegment(packet: SourcePacket, now: number): Segment {
    const sequence = this.highestSequence === undefined ? this.firstSequence : uint16(this.highestSequence + 1);
    const latest = this.latestAudio;
    const timestamp =
      latest === undefined ? this.firstTimestamp : uint32(latest.timestamp + Math.max(latest.samples, Math.round(Math.max(0, now - latest.at) * SAMPLES_PER_MS)));
    this.segment = {
      source: packet.source,
      ssrc: packet.ssrc,
      sequenceOffset: uint16(sequence - packet.sequenceNumber),
      timestampOffset: uint32(timestamp - packet.timestamp),
      span: 0,
      newestSequence: packet.sequenceNumber,
      newestTimestamp: packet.timestamp,
    };
    return this.segment;
  }
}
