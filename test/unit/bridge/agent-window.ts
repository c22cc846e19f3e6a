// An agent's window for the bridge's tests: a real werift peer shaped as Chromium faces the service
// (full ICE, DTLS client when answering, one sendrecv audio m-line with Opus 111 and
// telephone-event 126), on 127.0.0.1 (or another address, or a TURN relay's). It plays a steady
// tone (each agent its own pitch, so a listener can tell who it hears), sends RFC 4733 digits in the
// same RTP stream as a browser's RTCDTMFSender does, and measures what it hears with Goertzel
// filters on the decoded PCM.
import OpusScript from 'opusscript';
import { RTCPeerConnection, RTCRtpCodecParameters, RtcpRrPacket, RtcpSourceDescriptionPacket, RtcpSrPacket, RtpHeader, type RTCIceServer, type RTCRtpTransceiver } from 'werift';
import { goertzelCoefficient, goertzelPower } from '../../../sandbox/heard-audio';

const SAMPLE_RATE = 48_000;
const FRAME = 960;
/** How far back `hears` looks: half a second of decoded audio. */
const WINDOW_SAMPLES = SAMPLE_RATE / 2;

/** Share of a window's energy at `hz` (one DFT bin either side), 0..1. */
export function toneShare(samples: Float32Array, hz: number): number {
  let total = 0;
  for (const s of samples) total += s * s;
  if (total === 0) return 0;
  let inBand = 0;
  const bin = Math.round((hz * samples.length) / SAMPLE_RATE);
  for (let k = bin - 1; k <= bin + 1; k++) inBand += goertzelPower(samples, goertzelCoefficient(k, samples.length));
  return (2 * inBand) / samples.length / total;
}

/** The payload types a window negotiates: Chromium's are Opus 111 and telephone-event/8000 126. */
export interface WindowPayloadTypes {
  opus: number;
  event: number;
}

/** Where a window's candidates are: its one host address (127.0.0.1), its ICE servers, whether it may use only their relayed candidates (RTCIceTransportPolicy). */
export interface WindowNetwork {
  host?: string;
  iceServers?: RTCIceServer[];
  iceTransportPolicy?: 'all' | 'relay';
}

export class AgentWindow {
  readonly pc: RTCPeerConnection;
  private readonly transceiver: RTCRtpTransceiver;
  private readonly encoder = new OpusScript(SAMPLE_RATE, 1, OpusScript.Application.VOIP);
  private readonly decoder = new OpusScript(SAMPLE_RATE, 1, OpusScript.Application.VOIP);
  private timer: NodeJS.Timeout | undefined;
  private readonly heard = new Float32Array(WINDOW_SAMPLES);
  private heardAt = 0;
  private readonly digits: number[] = [];
  private sequence = Math.floor(Math.random() * 0xffff);
  private timestamp = Math.floor(Math.random() * 0xffff_ffff);
  private frames = 0;
  framesHeard = 0;
  /** The payload types of the RTP it received, in order of arrival (the last 500). */
  readonly payloadTypes: number[] = [];
  /** RTP received: packets, payload octets, and the latest packet's timestamp and arrival (unix ms). */
  readonly received = { packets: 0, octets: 0, ssrc: 0, timestamp: 0, at: 0 };
  /** Sender reports received, with what had been received when each came. */
  readonly senderReports: { ssrc: number; ntp: bigint; rtpTimestamp: number; packetCount: number; octetCount: number; at: number; received: { packets: number; octets: number; timestamp: number; at: number } }[] = [];
  /** CNAMEs of the SDES chunks received. */
  readonly cnames = new Set<string>();
  /** The report blocks received about this window's own stream, with the highest sequence number it had sent when each came. */
  readonly receptionReports: { packetsLost: number; highestSequence: number; fractionLost: number; jitter: number; sentSequence: number; in: 'sr' | 'rr' }[] = [];

  constructor(
    readonly toneHz: number,
    readonly types: WindowPayloadTypes = { opus: 111, event: 126 },
    network: WindowNetwork = {},
  ) {
    const { host = '127.0.0.1', iceServers = [], iceTransportPolicy = 'all' } = network;
    this.pc = new RTCPeerConnection({
      iceUseIpv4: false,
      iceUseIpv6: false,
      iceAdditionalHostAddresses: [host],
      iceInterfaceAddresses: host.includes(':') ? { udp6: host } : { udp4: host },
      iceServers,
      iceTransportPolicy,
      bundlePolicy: 'max-bundle',
      codecs: {
        audio: [
          new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: types.opus, parameters: 'minptime=10;useinbandfec=1' }),
          new RTCRtpCodecParameters({ mimeType: 'audio/telephone-event', clockRate: 8000, payloadType: types.event }),
        ],
        video: [],
      },
      headerExtensions: { audio: [], video: [] },
    });
    this.transceiver = this.pc.addTransceiver('audio', { direction: 'sendrecv' });
    this.transceiver.dtlsTransport.onRtcp.subscribe((packet) => {
      if (packet instanceof RtcpSrPacket) {
        const { ntpTimestamp, rtpTimestamp, packetCount, octetCount } = packet.senderInfo;
        this.senderReports.push({ ssrc: packet.ssrc, ntp: ntpTimestamp, rtpTimestamp, packetCount, octetCount, at: Date.now(), received: { ...this.received } });
      }
      if (packet instanceof RtcpSrPacket || packet instanceof RtcpRrPacket) {
        for (const { ssrc, packetsLost, highestSequence, fractionLost, jitter } of packet.reports) {
          if (ssrc !== this.transceiver.sender.ssrc) continue;
          this.receptionReports.push({ packetsLost, highestSequence, fractionLost, jitter, sentSequence: (this.sequence - 1) & 0xffff, in: packet instanceof RtcpSrPacket ? 'sr' : 'rr' });
        }
      } else if (packet instanceof RtcpSourceDescriptionPacket) {
        for (const chunk of packet.chunks) for (const item of chunk.items) if (item.type === 1) this.cnames.add(item.text);
      }
    });
    this.pc.onTrack.subscribe((track) =>
      track.onReceiveRtp.subscribe((rtp) => {
        Object.assign(this.received, {
          packets: this.received.packets + 1,
          octets: this.received.octets + rtp.payload.length,
          ssrc: rtp.header.ssrc,
          timestamp: rtp.header.timestamp,
          at: Date.now(),
        });
        this.payloadTypes.push(rtp.header.payloadType);
        if (this.payloadTypes.length > 500) this.payloadTypes.shift();
        if (rtp.header.payloadType !== this.types.opus) return;
        const pcm = this.decoder.decode(rtp.payload);
        for (let i = 0; i + 1 < pcm.length; i += 2) {
          this.heard[this.heardAt] = pcm.readInt16LE(i) / 32768;
          this.heardAt = (this.heardAt + 1) % WINDOW_SAMPLES;
        }
        this.framesHeard++;
      }),
    );
    this.pc.connectionStateChange.subscribe((state) => {
      if (state === 'connected') this.startSending();
    });
  }

  /** The candidate types of the pair ICE nominated: this window's own, and the far side's. */
  get nominatedPair(): { local: string; remote: string } | undefined {
    const pair = this.transceiver.dtlsTransport.iceTransport.connection.nominated;
    return pair && { local: pair.localCandidate.type, remote: pair.remoteCandidate.type };
  }

  /** Answers the node's offer as the window answers the service's: full ICE, a=setup:active, complete. */
  async answer(offer: string): Promise<string> {
    await this.pc.setRemoteDescription({ type: 'offer', sdp: offer });
    await this.pc.setLocalDescription(await this.pc.createAnswer());
    return this.pc.localDescription!.sdp;
  }

  /** An outgoing call's offer, as the window makes it: complete, actpass. */
  async offer(): Promise<string> {
    await this.pc.setLocalDescription(await this.pc.createOffer());
    return this.pc.localDescription!.sdp;
  }

  async applyAnswer(sdp: string): Promise<void> {
    await this.pc.setRemoteDescription({ type: 'answer', sdp });
  }

  /** An RFC 4733 digit (0-9), sent in place of the next audio frames as a browser does. */
  sendDigit(digit: number): void {
    this.digits.push(digit);
  }

  /** Share of the last half second's energy at `hz`, and its RMS. */
  hears(hz: number): { share: number; rms: number } {
    const window = Float32Array.from({ length: WINDOW_SAMPLES }, (_, i) => this.heard[(this.heardAt + i) % WINDOW_SAMPLES]!);
    let squares = 0;
    for (const s of window) squares += s * s;
    return { share: toneShare(window, hz), rms: Math.sqrt(squares / WINDOW_SAMPLES) };
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.pc.close();
    this.encoder.delete();
    this.decoder.delete();
  }

  private send(payloadType: number, payload: Buffer, timestamp: number, marker: boolean): void {
    const sender = this.transceiver.sender;
    const transport = sender.dtlsTransport;
    if (transport?.state !== 'connected') return;
    const header = new RtpHeader({ payloadType, ssrc: sender.ssrc, sequenceNumber: this.sequence, timestamp: timestamp >>> 0, marker });
    this.sequence = (this.sequence + 1) & 0xffff;
    void transport.sendRtp(payload, header);
  }

  private startSending(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      const digit = this.digits.shift();
      if (digit !== undefined) {
        // One event: three packets sharing the event's timestamp, the first marked, the last with the end bit.
        const eventTimestamp = this.timestamp;
        for (let i = 0; i < 3; i++) this.send(this.types.event, Buffer.from([digit, (i === 2 ? 0x80 : 0) | 10, 0, 160 * (i + 1)]), eventTimestamp, i === 0);
        this.timestamp = (this.timestamp + FRAME) >>> 0;
        return;
      }
      const pcm = Buffer.alloc(FRAME * 2);
      for (let i = 0; i < FRAME; i++) pcm.writeInt16LE(Math.round(6000 * Math.sin((2 * Math.PI * this.toneHz * (this.frames * FRAME + i)) / SAMPLE_RATE)), i * 2);
      this.send(this.types.opus, Buffer.from(this.encoder.encode(pcm, FRAME)), this.timestamp, this.frames === 0);
      this.frames++;
      this.timestamp = (this.timestamp + FRAME) >>> 0;
    }, 20);
  }
}
