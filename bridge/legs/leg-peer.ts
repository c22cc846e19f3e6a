// One leg's peer connection, whichever side it faces: the werift RTCPeerConnection with its one
// sendrecv audio transceiver (added before any description, or an answer comes out recvonly), where
// it stands, the packets it receives (by the codec their payload type was negotiated for) through its
// media path (media-path.ts), the outbound stream it sends once connected, and what it measures
// (media/reception.ts). The signalling — who offers, what is held back — is the customer's and the
// agent's legs' own (customer-leg.ts, agent-leg.ts).
import { performance } from 'node:perf_hooks';
import { RTCPeerConnection, RtcpSrPacket, type RTCRtpTransceiver } from 'werift';
import type { LegReport } from '../../shared/bridge';
import type { Logger } from '../../shared/log';
import { errorText } from '../../shared/result';
import type { InboundPacket } from '../media/call-media';
import { Reception } from '../media/reception';
import { RtpOutput, type PayloadTypes } from '../media/rtp-output';
import type { RtpPacketIn } from '../media/srtp';
import { helloOnceIceConnects } from './dtls-hello';
import { gatherCapped, type GatheringTurns } from './gathering';
import { MediaPath } from './media-path';
import { peerConfig, type LegNetwork } from './peer-config';
import { negotiatedPayloadTypes } from './sdp-rules';

export type LegState = LegReport['state'];

/**
 * A connected leg that receives nothing for this long has failed. Windows and the service send all
 * the time (a muted microphone sends silence, protocol.md), and an ice-lite side never learns of a
 * closed window from ICE: the media stopping is how the node learns it. The window gives a lost
 * path the same 15 s before it gives up.
 */
export const MEDIA_TIMEOUT_MS = 15_000;

/** What every leg of a node is made with. */
export interface LegContext {
  network: LegNetwork;
  turns: GatheringTurns;
  logger: Logger;
  /** MEDIA_TIMEOUT_MS unless said otherwise. */
  mediaTimeoutMs?: number;
}

export interface LegPeerEvents {
  /** The leg connected (its output is ready), failed, or was closed by the other side. */
  stateChanged(state: LegState, peer: LegPeer): void;
  /** An RTP packet arrived (Opus or a telephone event; anything else is not passed on). */
  packet(packet: InboundPacket): void;
}

export class LegPeer {
  readonly pc: RTCPeerConnection;
  readonly transceiver: RTCRtpTransceiver;
  private current: LegState = 'new';
  private rtpOutput: RtpOutput | undefined;
  /** The leg's RTP on the wire, from the moment ICE connects. */
  private path: MediaPath | undefined;
  private readonly reception = new Reception();
  private payloadTypes: PayloadTypes | undefined;
  private packetsReceived = 0;
  private lastPacketAt: number | undefined;
  /** When the leg last showed it is alive: connected, or a packet in. */
  private aliveAt = 0;
  private watchdog: NodeJS.Timeout | undefined;

  constructor(
    private readonly context: LegContext,
    iceLite: boolean,
    private readonly events: LegPeerEvents,
  ) {
    this.pc = new RTCPeerConnection(peerConfig(context.network, iceLite));
    this.transceiver = this.pc.addTransceiver('audio', { direction: 'sendrecv' });
    helloOnceIceConnects(this.pc);
    // Packets werift reads itself: over a TURN relay (the path reads a plain UDP pair's itself).
    this.pc.onTrack.subscribe((track) => track.onReceiveRtp.subscribe((rtp) => this.path?.fromWerift(rtp)));
    this.pc.iceConnectionStateChange.subscribe((state) => {
      if (state === 'connected' || state === 'completed') this.attachPath();
    });
    this.pc.connectionStateChange.subscribe((state) => {
      switch (state) {
        case 'connecting':
          return this.enter('connecting');
        case 'connected':
          return this.onConnected();
        case 'failed':
          return this.enter('failed');
        case 'closed':
          return this.enter('closed');
        default:
          // 'disconnected' comes back by itself or turns 'failed'; 'new' is where it starts.
          return;
      }
    });
  }

  get state(): LegState {
    return this.current;
  }

  /** The leg's outbound stream while it is connected. */
  get output(): RtpOutput | undefined {
    return this.rtpOutput;
  }

  /** Gathers this leg's candidates (capped), so that the description made next is complete. */
  gather(): Promise<void> {
    return gatherCapped(this.pc, this.context.turns);
  }

  report(): LegReport {
    const report: LegReport = { state: this.current, packetsReceived: this.packetsReceived, packetsLost: this.reception.packetsLost };
    const jitterMs = this.reception.jitterMs;
    if (jitterMs !== undefined) report.jitterMs = jitterMs;
    const rtt = this.rtpOutput?.roundTripMs;
    if (rtt !== undefined) report.roundTripMs = rtt;
    if (this.lastPacketAt !== undefined) report.lastPacketAt = this.lastPacketAt;
    return report;
  }

  async close(): Promise<void> {
    if (this.current === 'closed') return;
    this.enter('closed', false);
    await this.pc.close().catch((e: unknown) => this.context.logger.debug('closing a peer connection failed', { error: errorText(e) }));
  }

  private onConnected(): void {
    if (this.current === 'connected' || this.current === 'closed') return;
    this.payloadTypes = negotiatedPayloadTypes(this.transceiver.codecs);
    if (!this.payloadTypes) {
      this.context.logger.warn('a leg connected without Opus');
      return this.enter('failed');
    }
    const sender = this.transceiver.sender;
    const path = this.attachPath();
    if (!path) {
      this.context.logger.warn('a leg connected without a DTLS transport');
      return this.enter('failed');
    }
    const cname = new RegExp(`^a=ssrc:${sender.ssrc} cname:(\\S+)`, 'm').exec(this.pc.localDescription?.sdp ?? '')?.[1];
    this.rtpOutput = new RtpOutput(sender, path, this.payloadTypes, cname, this.reception, this.context.logger);
    this.aliveAt = Date.now();
    const timeout = this.context.mediaTimeoutMs ?? MEDIA_TIMEOUT_MS;
    this.watchdog = setInterval(() => {
      if (Date.now() - this.aliveAt > timeout) {
        this.context.logger.info('a leg received nothing for too long', { timeoutMs: timeout });
        this.enter('failed');
      }
    }, Math.min(1_000, timeout / 4));
    this.watchdog.unref();
    this.enter('connected');
  }

  private enter(state: LegState, tell = true): void {
    if (this.current === state || this.current === 'closed') return;
    this.current = state;
    if (state === 'failed' || state === 'closed') {
      this.rtpOutput?.close();
      this.rtpOutput = undefined;
      this.path?.close();
      clearInterval(this.watchdog);
      this.watchdog = undefined;
    }
    if (tell) this.events.stateChanged(state, this);
  }

  /** The leg's media path, made once the transport exists, reading the pair ICE nominated. */
  private attachPath(): MediaPath | undefined {
    if (this.current === 'closed' || this.current === 'failed') return undefined;
    if (!this.path) {
      const dtls = this.transceiver.sender.dtlsTransport;
      if (!dtls) return undefined;
      this.path = new MediaPath(dtls, (packet) => this.onRtp(packet), this.context.logger);
      // The other side's sender reports: the LSR and DLSR of ours about it.
      dtls.onRtcp.subscribe((packet) => {
        if (packet instanceof RtcpSrPacket) this.reception.senderReport(packet.ssrc, packet.senderInfo.ntpTimestamp, performance.now());
      });
    }
    this.path.attach();
    return this.path;
  }

  private onRtp(rtp: RtpPacketIn): void {
    const types = this.payloadTypes;
    if (!types || this.current !== 'connected') return;
    const { payloadType, ssrc, sequenceNumber, timestamp, marker } = rtp;
    const kind = payloadType === types.audio ? 'audio' : payloadType === types.event ? 'event' : undefined;
    if (!kind) return;
    this.packetsReceived++;
    this.lastPacketAt = Date.now();
    this.aliveAt = this.lastPacketAt;
    this.reception.add(ssrc, sequenceNumber, timestamp, kind === 'audio', performance.now());
    this.events.packet({ kind, ssrc, sequenceNumber, timestamp, marker, payload: rtp.payload });
  }
}
