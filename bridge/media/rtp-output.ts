// What one leg sends: its one outbound stream (outbound-stream.ts) written to the leg's media path
// (legs/media-path.ts: SRTP on the wire), and RTCP that tells the truth about it and about what the
// leg receives.
//
// Why not werift's RTCRtpSender.sendRtp: it overwrites every packet's payload type with the send
// codec's (telephone events would go out as Opus) and applies offsets of its own to sequence numbers
// and timestamps. So each packet goes out with the sender's SSRC through the media path, and since
// werift then sends no sender report (it starts its reports from its own sendRtp), this class sends
// them: about once a second (RFC 3550 6.2, randomised over 0.5–1.5 s), the stream's RTP timestamp
// paired with the wall clock, the packets and payload octets actually sent, a report block on each
// source the leg heard (reception.ts, RFC 3550 6.4.1), and SDES with the leg's CNAME. A leg that
// sends nothing (not yet, or let go: `tick(now, false)`) reports what it receives in a receiver
// report alone. The receiver reports the other side sends about this stream give the round trip.
import { RtcpReceiverInfo, RtcpRrPacket, RtcpSenderInfo, RtcpSourceDescriptionPacket, RtcpSrPacket, SourceDescriptionChunk, SourceDescriptionItem, type RTCRtpSender, type RtcpPacket } from 'werift';
import { randomInt } from 'node:crypto';
import type { Logger } from '../../shared/log';
import { OutboundStream, type SourcePacket } from './outbound-stream';
import type { Reception } from './reception';
import { ntpFromUnixMs, roundTripMs } from './rtcp-clock';
import type { RtpFields } from './srtp';

/** Where a leg's RTP goes: SRTP on the wire (legs/media-path.ts). */
export interface RtpWire {
  /** Whether packets can go out now (DTLS-SRTP is up). */
  readonly ready: boolean;
  /** Protects and sends one packet; its size on the wire, 0 when it could not go. */
  sendRtp(fields: RtpFields, payload: Uint8Array): number;
  /** Whether werift's own receiver read this leg's packets, and so sends the receiver reports on them itself. */
  readonly weriftReportsReception: boolean;
}

/** The payload types the leg negotiated, by codec (shared/sdp.ts `describeOffer` names). */
export interface PayloadTypes {
  audio: number;
  /** telephone-event/8000, when the other side took it. */
  event?: number;
}

const REPORT_MIN_MS = 500;
const REPORT_SPREAD_MS = 1_000;
/** RFC 3550 6.5.1: SDES item 1 is the CNAME. */
const SDES_CNAME = 1;
/** RFC 3550 6.4: a report's 5-bit count holds at most 31 blocks. */
const MAX_BLOCKS = 31;

export class RtpOutput {
  readonly stream: OutboundStream;
  packetsSent = 0;
  octetsSent = 0;
  /** The latest round trip a receiver report told, ms. */
  roundTripMs: number | undefined;
  private nextReportAt: number | undefined;
  private closed = false;
  private readonly unsubscribe: () => void;
  /** One header's fields for every packet: the wire protects them before sendRtp returns. */
  private readonly fields: RtpFields;

  constructor(
    private readonly sender: RTCRtpSender,
    private readonly wire: RtpWire,
    private readonly payloadTypes: PayloadTypes,
    /** The leg's CNAME, as its local description's a=ssrc line says it. */
    private readonly cname: string | undefined,
    /** What the leg receives, for the report blocks. */
    private readonly reception: Reception,
    private readonly logger: Logger,
  ) {
    this.stream = new OutboundStream(sender.ssrc, randomInt(0, 0x10000), randomInt(0, 2 ** 32));
    this.fields = { payloadType: 0, marker: false, sequenceNumber: 0, timestamp: 0, ssrc: sender.ssrc };
    this.unsubscribe = sender.onRtcp.subscribe((packet) => this.onRtcp(packet)).unSubscribe;
  }

  /** Whether packets can go out now (DTLS-SRTP is up). */
  get ready(): boolean {
    return this.wire.ready;
  }

  /** Places and sends one packet; false when it was not sent (not ready, no payload type for it, or late for its stretch). */
  send(packet: SourcePacket, now: number): boolean {
    if (!this.wire.ready) return false;
    const payloadType = packet.kind === 'audio' ? this.payloadTypes.audio : this.payloadTypes.event;
    if (payloadType === undefined) return false;
    const placed = this.stream.place(packet, now);
    if (!placed) return false;
    const fields = this.fields;
    fields.payloadType = payloadType;
    fields.sequenceNumber = placed.sequenceNumber;
    fields.timestamp = placed.timestamp;
    fields.marker = placed.marker;
    if (this.wire.sendRtp(fields, packet.payload) === 0) return false;
    this.packetsSent = (this.packetsSent + 1) >>> 0;
    this.octetsSent = (this.octetsSent + packet.payload.length) >>> 0;
    this.nextReportAt ??= now + REPORT_MIN_MS * Math.random();
    return true;
  }

  /**
   * Called on every tick of the media clock: the reports when they are due. `sending` false: the leg
   * is let go (call-media.ts `silence`): no sender report says its stream is alive, while what it
   * receives is still reported.
   */
  tick(now: number, sending = true): void {
    if (this.closed) return;
    if (this.nextReportAt === undefined) {
      // A leg that has sent nothing yet still reports what it receives, from its first packet on.
      if (!this.reception.anyPacket) return;
      this.nextReportAt = now + REPORT_MIN_MS * Math.random();
    }
    if (now < this.nextReportAt) return;
    this.nextReportAt = now + REPORT_MIN_MS + Math.random() * REPORT_SPREAD_MS;
    const transport = this.sender.dtlsTransport;
    if (transport?.state !== 'connected') return;
    const rtpTimestamp = sending ? this.stream.timestampAt(now) : undefined;
    const blocks = this.wire.weriftReportsReception ? [] : this.reception.blocks(now).slice(0, MAX_BLOCKS).map((block) => new RtcpReceiverInfo(block));
    const packets: RtcpPacket[] = [];
    if (rtpTimestamp !== undefined) {
      packets.push(
        new RtcpSrPacket({
          ssrc: this.sender.ssrc,
          senderInfo: new RtcpSenderInfo({ ntpTimestamp: ntpFromUnixMs(Date.now()), rtpTimestamp, packetCount: this.packetsSent, octetCount: this.octetsSent }),
          reports: blocks,
        }),
      );
    } else if (blocks.length > 0) {
      packets.push(new RtcpRrPacket({ ssrc: this.sender.ssrc, reports: blocks }));
    } else {
      return;
    }
    const cname = this.cname;
    if (cname) {
      packets.push(
        new RtcpSourceDescriptionPacket({ chunks: [new SourceDescriptionChunk({ source: this.sender.ssrc, items: [new SourceDescriptionItem({ type: SDES_CNAME, text: cname })] })] }),
      );
    }
    transport.sendRtcp(packets).catch((e: unknown) => this.logger.debug('RTCP send failed', { error: e }));
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
  }

  private onRtcp(packet: RtcpPacket): void {
    if (!(packet instanceof RtcpRrPacket) && !(packet instanceof RtcpSrPacket)) return;
    const arrived = Date.now();
    for (const report of packet.reports) {
      if (report.ssrc !== this.sender.ssrc) continue;
      const rtt = roundTripMs(report.lsr, report.dlsr, arrived);
      if (rtt !== undefined) this.roundTripMs = rtt;
    }
  }
}
