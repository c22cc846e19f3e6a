// A leg's RTP on the wire: the node's media path, beside werift rather than through it. werift keeps
// everything else of the connection — ICE (checks, consent), DTLS, SRTCP — and the keys its DTLS
// handshake gave; the RTP packets themselves, thousands a second on a busy node, are protected and
// read here (media/srtp.ts) and go straight between the UDP socket of the pair ICE chose and the call.
//
// werift's way for one packet in is a STUN parse, three events each with a promise of its own, an
// SRTP layer that parses the header twice through strings, a router, a receiver that sorts its codecs,
// and a copy; out, two async hops and a serialiser. That was most of a busy node's processor.
//
// - In: the pair's UDP transport hands each datagram to werift through one callback (`onData`); the
//   path takes that callback's place, keeps what is SRTP's RTP (RFC 7983: first byte 128–191; RFC
//   5761: not an RTCP packet type) once werift has the keys, and hands werift all the rest, as before.
//   A path ICE did not give a plain UDP socket (a TURN relay) leaves werift to read the packets, and
//   they come through the track (`fromWerift`): either way the call gets each packet once.
// - Out: protected here and written to the pair's socket and remote address; over a relay, through
//   werift's ICE connection.
import { RtpHeader, StunProtocol, UdpTransport, type RTCDtlsTransport, type RtpPacket } from 'werift';
import type { Logger } from '../../shared/log';
import type { RtpWire } from '../media/rtp-output';
import { SrtpReceiver, SrtpSender, supportedProfile, type RtpFields, type RtpPacketIn, type SrtpKeys } from '../media/srtp';

type SrtpContext = RTCDtlsTransport['srtp']['localContext'];
type CandidatePair = NonNullable<RTCDtlsTransport['iceTransport']['connection']['nominated']>;

const RTP_HEADER_BYTES = 12;
/** RFC 5761 4: a second byte of 192–223 is an RTCP packet type (SR 200, RR 201, …), not RTP. */
const isRtp = (data: Buffer): boolean => data.length >= RTP_HEADER_BYTES && data[0]! >= 128 && data[0]! <= 191 && !(data[1]! >= 192 && data[1]! <= 223);

const keysOf = (context: SrtpContext): SrtpKeys => ({
  profile: context.profile,
  key: context.srtpSessionKey,
  salt: context.srtpSessionSalt,
  authKey: context.srtpSessionAuthTag,
});

/** The transports whose datagrams a path reads, and the path that reads them. */
const readers = new WeakMap<UdpTransport, MediaPath>();

export class MediaPath implements RtpWire {
  /** The SRTP of werift's session these were made from (a new handshake makes a new session). */
  private session: RTCDtlsTransport['srtp'] | undefined;
  private protector: SrtpSender | undefined;
  private reader: SrtpReceiver | undefined;
  /** The pair ICE nominated when the path last looked. */
  private pair: CandidatePair | undefined;
  /** Its UDP transport, when it is a plain UDP one, and the remote address the packets go to. */
  private direct: UdpTransport | undefined;
  private remote: readonly [address: string, port: number] = ['', 0];
  private closed = false;
  /** Whether the latest packet came through werift's receiver, which then sends the receiver reports on them itself. */
  weriftReportsReception = false;

  constructor(
    private readonly dtls: RTCDtlsTransport,
    private readonly onPacket: (packet: RtpPacketIn) => void,
    private readonly logger: Logger,
  ) {}

  /** Whether packets can go out now (DTLS-SRTP is up). */
  get ready(): boolean {
    return !this.closed && this.dtls.state === 'connected';
  }

  /**
   * Reads the nominated pair's datagrams from now on, when it is a plain UDP one. Called once ICE
   * connects (before the DTLS handshake, so that no RTP reaches werift first) and again at DTLS
   * connected; a pair already read is left as it is.
   */
  attach(): void {
    if (this.closed) return;
    const pair = this.dtls.iceTransport.connection.nominated;
    this.pair = pair;
    this.direct = undefined;
    if (!pair || !(pair.protocol instanceof StunProtocol) || !(pair.protocol.transport instanceof UdpTransport)) return;
    const transport = pair.protocol.transport;
    this.direct = transport;
    this.remote = pair.remoteAddr;
    const installed = readers.has(transport);
    readers.set(transport, this);
    if (installed) return;
    const werift = transport.onData;
    transport.onData = (data, addr) => {
      if (!isRtp(data) || !readers.get(transport)?.take(data, transport, addr)) werift(data, addr);
    };
  }

  /** An RTP packet werift read (over a relay, or before the path was attached). */
  fromWerift(rtp: RtpPacket): void {
    if (this.closed) return;
    const { header, payload } = rtp;
    this.weriftReportsReception = true;
    this.onPacket({ payloadType: header.payloadType, marker: header.marker, sequenceNumber: header.sequenceNumber, timestamp: header.timestamp, ssrc: header.ssrc, payload });
  }

  sendRtp(fields: RtpFields, payload: Uint8Array): number {
    if (!this.ready) return 0;
    const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    if (!this.haveKeys() || !this.protector) {
      // A profile not done here: werift's own SRTP, as before the path.
      void this.dtls.sendRtp(bytes, new RtpHeader({ ...fields }));
      return RTP_HEADER_BYTES + bytes.length;
    }
    const connection = this.dtls.iceTransport.connection;
    // ICE may nominate another pair: the packets follow it.
    if (connection.nominated !== this.pair) this.attach();
    const direct = this.direct && !this.direct.closed ? this.direct : undefined;
    // Straight onto the socket, nothing of werift's checks the consent to send (RFC 7675) on the way:
    // a connection whose consent expired is failed, one still checking or being restarted not yet
    // connected, and neither may carry media. (werift's own send checks it itself.)
    if (direct && connection.state !== 'connected' && connection.state !== 'completed') return 0;
    const packet = this.protector.protect(fields, bytes);
    // An index protected once already: sending it again would reuse its nonce.
    if (!packet) return 0;
    if (direct) {
      // With a callback, a failed send (an address the socket cannot reach) is the callback's, not an
      // 'error' event on a socket werift owns.
      direct.socket.send(packet, this.remote[1], this.remote[0], (error) => {
        if (error) this.logger.debug('RTP send failed', { error });
      });
    } else {
      connection.send(packet).catch((e: unknown) => this.logger.debug('RTP send failed', { error: e }));
    }
    return packet.length;
  }

  close(): void {
    this.closed = true;
    const transport = this.direct;
    if (transport && readers.get(transport) === this) readers.delete(transport);
    this.direct = undefined;
  }

  /**
   * An RTP datagram off the socket; false leaves it to werift (no keys yet: werift drops it too).
   * Only the nominated pair's remote address, on the pair's own socket, speaks RTP (the address ICE
   * checked and consent keeps checking): what comes from anywhere else is dropped, whether or not it
   * would authenticate.
   */
  private take(data: Buffer, transport: UdpTransport, [address, port]: readonly [string, number]): boolean {
    if (this.closed || !this.haveKeys() || !this.reader) return false;
    if (this.dtls.iceTransport.connection.nominated !== this.pair) this.attach();
    if (transport !== this.direct || port !== this.remote[1] || address !== this.remote[0]) return true;
    const packet = this.reader.unprotect(data);
    // One that does not authenticate is dropped, as werift drops it.
    if (packet) {
      this.weriftReportsReception = false;
      this.onPacket(packet);
    }
    return true;
  }

  /** Whether werift's DTLS has given keys; the SRTP of its current session is made when they first serve. */
  private haveKeys(): boolean {
    if (!this.dtls.srtpStarted) return false;
    const session = this.dtls.srtp;
    if (session === this.session) return true;
    this.session = session;
    const { localContext, remoteContext } = session;
    if (supportedProfile(localContext.profile)) {
      this.protector = new SrtpSender(keysOf(localContext));
      this.reader = new SrtpReceiver(keysOf(remoteContext));
    } else {
      this.logger.warn('an SRTP profile the media path does not know: werift protects this leg\u2019s RTP', { profile: localContext.profile });
      this.protector = undefined;
      this.reader = undefined;
    }
    return true;
  }
}
