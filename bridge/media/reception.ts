// What a leg receives, as RTCP reports it (RFC 3550 6.4.1, A.3, A.8): per sending SSRC, the packets
// expected and lost, the fraction lost since the last report, the extended highest sequence number,
// the interarrival jitter, and the last sender report heard (LSR) with how long ago (DLSR). The leg's
// report (LegReport) and the report blocks of its RTCP come from here.
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

class SourceStatistics {
  private readonly baseSequence: number;
  private highestSequence: number;
  private cycles = 0;
  received = 0;
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
    this.received++;
    this.heard = true;
    const step = ((sequence - this.highestSequence + 0x8000) & 0xffff) - 0x8000;
    if (this.received > 1 && step <= 0) return;
    if (sequence < this.highestSequence) this.cycles += 0x10000;
    this.highestSequence = sequence;
    if (!audio) return;
    // Transit in timestamp units; its differences are what matter, so a 32-bit wrap is harmless.
    const transit = (Math.round(arrivedMs * SAMPLES_PER_MS) - timestamp) | 0;
    if (this.lastTransit !== undefined) {
      const d = Math.abs((transit - this.lastTransit) | 0);
      this.jitterQ4 += d - ((this.jitterQ4 + 8) >> 4);
    }
    this.lastTransit = transit;
  }

  senderReport(ntp: bigint, arrivedMs: number): void {
    this.lastSenderReport = { lsr: compactNtp(ntp), at: arrivedMs };
  }

  get expected(): number {
    return this.cycles + this.highestSequence - this.baseSequence + 1;
  }

  get lost(): number {
    return Math.min(MAX_CUMULATIVE_LOST, Math.max(0, this.expected - this.received));
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
      packetsLost: this.lost,
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
