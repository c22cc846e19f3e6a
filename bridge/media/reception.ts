// What a leg receives, as RTCP reports it (RFC 3550 6.4.1, A.3, A.8): per sending SSRC, the packets
// expected and lost, the fraction lost since the last report, the extended highest sequence number,
// the interarrival jitter, and the last sender report heard (LSR) with how long ago (DLSR). The leg's
// report (LegReport) and the report blocks of its RTCP come from here.
//
// A source that starts its numbering again on the same SSRC (a window's new sender, a far jump) is
// followed as RFC 3550 A.1 does: the packet after the jump in sequence confirms it, and the counts start
// again from there (a lone stray moves nothing); the leg's loss keeps what the earlier numberings lost.
//
// Only audio times the jitter: telephone events run on their own 8 kHz clock and hold one timestamp
// for a whole event. Pure: the caller says when each packet arrived (monotonic ms).
import { SAMPLES_PER_MS } from './audio-format';
import { compactNtp } from './rtcp-clock';

/** One RTCP report block (RFC 3550 6.4.1), as werift's RtcpReceiverInfo takes it. */
export interface ReportBlock {
  ssrc: number;
  fractionLost: number;
  packetsLost: number;
  highestSequence: number;
  jitter: number;
  lsr: number;
  dlsr: number;
}

/** RFC 3550 6.4.1: cumulative loss is a signed 24-bit field. */
const MAX_CUMULATIVE_LOST = 0x7f_ffff;
const SEQUENCE_MOD = 0x1_0000;
/**
 * RFC 3550 A.1: a source further ahead than this has restarted its numbering rather than lost
 * packets, once the packet after it in sequence confirms it (60 s of 20 ms audio: longer than any
 * silence a leg outlives, MEDIA_TIMEOUT_MS).
 */
export const MAX_DROPOUT = 3_000;
/** RFC 3550 A.1: less than this far behind the highest, a packet is late or repeated; this far or further, a stray or a restart. */
export const MAX_MISORDER = 100;
/**
 * A transit time that moves by more than this (10 s, in timestamp units) is the source's clock
 * starting again elsewhere (a new sender on the same SSRC), not the network's jitter.
 */
const MAX_TRANSIT_STEP = 10_000 * SAMPLES_PER_MS;
/** No sequence number: what `badSequence` holds while no jump waits for its confirmation. */
const NO_SEQUENCE = SEQUENCE_MOD + 1;

class SourceStatistics {
  private baseSequence = 0;
  private highestSequence = 0;
  private cycles = 0;
  private received = 0;
  /** The number after the last far jump (RFC 3550 A.1 bad_seq): a packet carrying it confirms a restart. */
  private badSequence = NO_SEQUENCE;
  /** Loss counted in the numberings before the source last restarted. */
  private lostBefore = 0;
  /** Interarrival jitter in RTP timestamp units, times 16 (RFC 3550 A.8). */
  private jitterQ4 = 0;
  private lastTransit: number | undefined;
  private expectedPrior = 0;
  private receivedPrior = 0;
  /** The last sender report of this source: its compact NTP time, and when it came (monotonic ms). */
  private lastSenderReport: { lsr: number; at: number } | undefined;
  /** Whether a packet came since the last report block. */
  heard = true;

  constructor(sequence: number) {
    this.baseSequence = sequence;
    this.highestSequence = sequence;
  }

  add(sequence: number, timestamp: number, audio: boolean, arrivedMs: number): void {
    // RFC 3550 A.1 update_seq.
    const delta = (sequence - this.highestSequence) & 0xffff;
    let advances = this.received === 0;
    if (delta > 0 && delta < MAX_DROPOUT) {
      if (sequence < this.highestSequence) this.cycles += SEQUENCE_MOD;
      this.highestSequence = sequence;
      advances = true;
    } else if (delta >= MAX_DROPOUT && delta <= SEQUENCE_MOD - MAX_MISORDER) {
      // A jump: a stray packet, counted nowhere, unless it follows the last one that jumped.
      if (sequence !== this.badSequence) {
        this.badSequence = (sequence + 1) & 0xffff;
        return;
      }
      this.restart(sequence);
      advances = true;
    }
    // Otherwise the highest again, or a packet late by at most MAX_MISORDER: received, nothing moves.
    this.heard = true;
    this.received++;
    if (!advances || !audio) return;
    // Transit in timestamp units; its differences are what matter, so a 32-bit wrap is harmless.
    const transit = (Math.round(arrivedMs * SAMPLES_PER_MS) - timestamp) | 0;
    if (this.lastTransit !== undefined) {
      const d = Math.abs((transit - this.lastTransit) | 0);
      if (d <= MAX_TRANSIT_STEP) this.jitterQ4 += d - ((this.jitterQ4 + 8) >> 4);
    }
    this.lastTransit = transit;
  }

  /**
   * A new numbering from `sequence` (RFC 3550 A.1 init_seq): expected, received and the report
   * interval start again, the loss so far is kept for the leg's count, and the transit time is
   * measured afresh (the new numbering's clock is another); the jitter, the path's, goes on.
   */
  private restart(sequence: number): void {
    this.lostBefore = Math.min(MAX_CUMULATIVE_LOST, this.lostBefore + this.lostInNumbering);
    this.baseSequence = sequence;
    this.highestSequence = sequence;
    this.cycles = 0;
    this.received = 0;
    this.expectedPrior = 0;
    this.receivedPrior = 0;
    this.badSequence = NO_SEQUENCE;
    this.lastTransit = undefined;
  }

  senderReport(ntp: bigint, arrivedMs: number): void {
    this.lastSenderReport = { lsr: compactNtp(ntp), at: arrivedMs };
  }

  get expected(): number {
    return this.cycles + this.highestSequence - this.baseSequence + 1;
  }

  /** Lost in the current numbering: what the report blocks carry (RFC 3550 6.4.1, A.3). */
  private get lostInNumbering(): number {
    return Math.min(MAX_CUMULATIVE_LOST, Math.max(0, this.expected - this.received));
  }

  /** Lost in every numbering of the source: the leg's count. */
  get lost(): number {
    return Math.min(MAX_CUMULATIVE_LOST, this.lostBefore + this.lostInNumbering);
  }

  get jitter(): number {
    return this.jitterQ4 >> 4;
  }

  block(ssrc: number, nowMs: number): ReportBlock {
    const expectedInterval = this.expected - this.expectedPrior;
    const receivedInterval = this.received - this.receivedPrior;
    this.expectedPrior = this.expected;
    this.receivedPrior = this.received;
    const lostInterval = expectedInterval - receivedInterval;
    const fractionLost = expectedInterval <= 0 || lostInterval <= 0 ? 0 : Math.floor((lostInterval * 256) / expectedInterval);
    this.heard = false;
    const sr = this.lastSenderReport;
    return {
      ssrc,
      fractionLost: Math.min(255, fractionLost),
      packetsLost: this.lostInNumbering,
      highestSequence: (this.cycles + this.highestSequence) >>> 0,
      jitter: this.jitter,
      lsr: sr?.lsr ?? 0,
      // In 1/65536 s (RFC 3550 6.4.1).
      dlsr: sr ? Math.min(0xffff_ffff, Math.round(((nowMs - sr.at) / 1000) * 65_536)) : 0,
    };
  }
}

export class Reception {
  private readonly sources = new Map<number, SourceStatistics>();

  /** A packet that arrived (authenticated) at `arrivedMs`. */
  add(ssrc: number, sequence: number, timestamp: number, audio: boolean, arrivedMs: number): void {
    let source = this.sources.get(ssrc);
    if (!source) this.sources.set(ssrc, (source = new SourceStatistics(sequence)));
    source.add(sequence, timestamp, audio, arrivedMs);
  }

  /** A sender report of one of the sources, for the LSR and DLSR of the next blocks. */
  senderReport(ssrc: number, ntp: bigint, arrivedMs: number): void {
    this.sources.get(ssrc)?.senderReport(ntp, arrivedMs);
  }

  /** Whether any packet came yet. */
  get anyPacket(): boolean {
    return this.sources.size > 0;
  }

  /** Packets lost, all sources together (RFC 3550 A.3: expected less received). */
  get packetsLost(): number {
    let lost = 0;
    for (const source of this.sources.values()) lost += source.lost;
    return lost;
  }

  /** The largest interarrival jitter of the sources, ms; undefined before any packet. */
  get jitterMs(): number | undefined {
    let jitter: number | undefined;
    for (const source of this.sources.values()) jitter = Math.max(jitter ?? 0, source.jitter / SAMPLES_PER_MS);
    return jitter;
  }

  /** One report block for each source heard since the last blocks (RFC 3550 6.4). */
  blocks(nowMs: number): ReportBlock[] {
    const blocks: ReportBlock[] = [];
    for (const [ssrc, source] of this.sources) if (source.heard) blocks.push(source.block(ssrc, nowMs));
    return blocks;
  }
}
