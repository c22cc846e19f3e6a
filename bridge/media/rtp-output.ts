// What one leg sends: its one outbound stream (outbound-stream.ts) written straight to the leg's
// DTLS-SRTP transport, and RTCP that tells the truth about it.
//
// Why not werift's RTCRtpSender.sendRtp: it overwrites every packet's payload type with the send
// codec's (telephone events would go out as Opus) and applies offsets of its own to sequence numbers
// and timestamps. So the packet is sent with the sender's SSRC through `dtlsTransport.sendRtp`, and
// since werift then sends no sender report (it starts its reports from its own sendRtp), this class
// sends them: about once a second (RFC 3550 6.2, randomised over 0.5–1.5 s), the stream's RTP
// timestamp paired with the wall clock, the packets and payload octets actually sent, and SDES with
// the leg's CNAME. The receiver reports the other side sends about this stream give the round trip.
import { RtcpRrPacket, RtcpSenderInfo, RtcpSourceDescriptionPacket, RtcpSrPacket, RtpHeader, SourceDescriptionChunk, SourceDescriptionItem, type RTCRtpSender, type RtcpPacket } from 'werift';
import { randomInt } from 'node:crypto';
import type { Logger } from '../../shared/log';
import { OutboundStream, type SourcePacket } from './outbound-stream';
import { ntpFromUnixMs, roundTripMs } from './rtcp-clock';

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

export class RtpOutput {
  readonly stream: OutboundStream;
  packetsSent = 0;
  octetsSent = 0;
  /** The latest round trip a receiver report told, ms. */
  roundTripMs: number | undefined;
  private nextReportAt: number | undefined;
  private readonly unsubscribe: () => void;
  /** One header for every packet: SRTP serialises it before sendRtp returns. */
  private readonly header: RtpHeader;

  constructor(
    private readonly sender: RTCRtpSender,
    private readonly payloadTypes: PayloadTypes,
    /** The leg's CNAME, as its local description's a=ssrc line says it. */
    private readonly cname: string | undefined,
    private readonly logger: Logger,
  ) {
    this.stream = new OutboundStream(sender.ssrc, randomInt(0, 0x10000), randomInt(0, 2 ** 32));
    this.header = new RtpHeader({ ssrc: sender.ssrc });
    this.unsubscribe = sender.onRtcp.subscribe((packet) => this.onRtcp(packet)).unSubscribe;
  }

  /** Whether packets can go out now (DTLS-SRTP is up). */
  get ready(): boolean {
    return this.sender.dtlsTransport?.state === 'connected';
  }

  /** Places and sends one packet; false when it was not sent (not ready, no payload type for it, or late for its stretch). */
  send(packet: SourcePacket, now: number): boolean {
    const transport = this.sender.dtlsTransport;
    if (transport?.state !== 'connected') return false;
    const payloadType = packet.kind === 'audio' ? this.payloadTypes.audio : this.payloadTypes.event;
    if (payloadType === undefined) return false;
    const placed = this.stream.place(packet, now);
    if (!placed) return false;
    const header = this.header;
    header.payloadType = payloadType;
    header.sequenceNumber = placed.sequenceNumber;
    header.timestamp = placed.timestamp;
    header.marker = placed.marker;
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload.buffer, packet.payload.byteOffset, packet.payload.byteLength);
    void transport.sendRtp(payload, header);
    this.packetsSent = (this.packetsSent + 1) >>> 0;
    this.octetsSent = (this.octetsSent + payload.length) >>> 0;
    this.nextReportAt ??= now + REPORT_MIN_MS * Math.random();
    return true;
  }

  /** Called on every tick of the media clock: a sender report when one is due. */
  tick(now: number): void {
    if (this.nextReportAt === undefined || now < this.nextReportAt) return;
    this.nextReportAt = now + REPORT_MIN_MS + Math.random() * REPORT_SPREAD_MS;
    const rtpTimestamp = this.stream.timestampAt(now);
    const transport = this.sender.dtlsTransport;
    if (rtpTimestamp === undefined || transport?.state !== 'connected') return;
    const packets: RtcpPacket[] = [
      new RtcpSrPacket({
        ssrc: this.sender.ssrc,
        senderInfo: new RtcpSenderInfo({ ntpTimestamp: ntpFromUnixMs(Date.now()), rtpTimestamp, packetCount: this.packetsSent, octetCount: this.octetsSent }),
      }),
    ];
    const cname = this.cname;
    if (cname) {
      packets.push(
        new RtcpSourceDescriptionPacket({ chunks: [new SourceDescriptionChunk({ source: this.sender.ssrc, items: [new SourceDescriptionItem({ type: SDES_CNAME, text: cname })] })] }),
      );
    }
    transport.sendRtcp(packets).catch((e: unknown) => this.logger.debug('RTCP send failed', { error: e }));
  }

  close(): void {
    this.unsubscribe();
    this.nextReportAt = undefined;
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
