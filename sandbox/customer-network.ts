// The network between a customer's phone and the business, made bad on purpose (POST
// /control/network, and the customers who always call from a bad network): random loss, delay with
// jitter that reorders packets, and blackouts, both ways, on every packet the customer's werift
// peer sends or receives.
//
// Where it hooks in: werift's ICE connection owns one StunProtocol per local candidate, and every
// byte of the call passes through that protocol's UdpTransport — `onData` for each datagram that
// arrives, `send` for each that leaves. STUN (checks and their answers), DTLS, SRTP and SRTCP all
// share that one socket (RFC 7983 demultiplexing happens above it), so impairing these two members
// is a bad network as the business sees it: in a blackout its ICE checks go unanswered and its ICE
// state turns 'disconnected', then recovers by itself when packets flow again. Higher hooks miss
// part of it (the RTP sender and track events see no STUN, the ICE `send` sees no STUN answers);
// a UDP proxy in front of the peer would need NAT-style address rewriting in SDP and STUN. The
// transport members are public in werift, but the connection's list of protocols is private:
// werift 0.24's shape is checked at runtime and a mismatch fails the call loudly rather than
// leaving a "bad" network that is silently clean.
//
// What is spared: the call's setup (until the customer's first frame) and DTLS cross untouched
// except by a blackout, because werift's DTLS, the customer's own phone, does not survive what a
// real phone's stack does (see `admit`). The business's media, RTCP and ICE consent checks once
// the call is up, which is what the business's quality and reconnection logic reads, are impaired.
import type { RTCPeerConnection } from 'werift';
import type { SandboxCustomerNetwork, SandboxNetworkImpairment, SandboxNetworkReport, SandboxPacketCount } from '../shared/sandbox';

type Address = readonly [string, number];
type Direction = 'toBusiness' | 'fromBusiness';

/** The two members of werift's UdpTransport every datagram passes through. */
interface PacketSocket {
  closed: boolean;
  onData: (data: Buffer, addr: Address) => void;
  send: (data: Buffer, addr?: Address) => Promise<void>;
}

const CLEAN_NETWORK: Readonly<SandboxNetworkImpairment> = { lossPercent: 0, delayMs: 0, jitterMs: 0, blackoutMs: 0 };

/** RFC 7983: a first byte of 20..63 is DTLS (STUN is 0..3, SRTP and SRTCP 128..191). */
const isDtls = (data: Buffer): boolean => data.length > 0 && data[0]! >= 20 && data[0]! <= 63;

function isPacketSocket(value: unknown): value is PacketSocket {
  const socket = value as Partial<PacketSocket> | null;
  return typeof socket === 'object' && socket !== null && typeof socket.onData === 'function' && typeof socket.send === 'function';
}

/** Every local socket of a werift peer's ICE transports (see the top of this file for why these). */
function packetSockets(pc: RTCPeerConnection): PacketSocket[] {
  const sockets: PacketSocket[] = [];
  for (const transport of pc.iceTransports) {
    const protocols = (transport.connection as unknown as { protocols?: unknown }).protocols;
    if (!Array.isArray(protocols)) throw new Error('werift ICE connection has no protocol list to impair');
    for (const protocol of protocols) {
      const socket = (protocol as { transport?: unknown } | null)?.transport;
      if (!isPacketSocket(socket)) throw new Error('werift ICE protocol has no UDP transport to impair');
      sockets.push(socket);
    }
  }
  if (sockets.length === 0) throw new Error('werift peer has no socket to impair');
  return sockets;
}

export class CustomerNetwork {
  private impairment: SandboxNetworkImpairment = { ...CLEAN_NETWORK };
  /** A built-in blackout, waiting for media to start. */
  private scheduled: { afterMs: number; durationMs: number } | undefined;
  private blackout: { startsAt: number; endsAt: number } | undefined;
  private readonly counts: Record<Direction, SandboxPacketCount> = { toBusiness: { packets: 0, dropped: 0 }, fromBusiness: { packets: 0, dropped: 0 } };
  private readonly inFlight = new Set<NodeJS.Timeout>();
  private readonly hooked = new WeakSet<PacketSocket>();
  /** Until the customer's first frame, the call is being set up: see `admit`. */
  private mediaFlowing = false;
  private closed = false;

  /** `builtIn`: the customer's own bad network, on every call (from its first frame, as any impairment). */
  constructor(builtIn?: SandboxCustomerNetwork) {
    if (!builtIn) return;
    this.impairment = {
      lossPercent: builtIn.lossPercent ?? 0,
      delayMs: builtIn.delayMs ?? 0,
      jitterMs: builtIn.jitterMs ?? 0,
      blackoutMs: builtIn.blackoutMs ?? 0,
    };
    if (this.impairment.blackoutMs > 0) this.scheduled = { afterMs: builtIn.blackoutAfterMs ?? 0, durationMs: this.impairment.blackoutMs };
  }

  /** Puts the peer's sockets behind this network; call once its candidates are gathered, before any peer knows them. */
  attach(pc: RTCPeerConnection): void {
    for (const socket of packetSockets(pc)) {
      if (this.hooked.has(socket)) continue;
      this.hooked.add(socket);
      this.hook(socket);
    }
  }

  /**
   * A later impairment replaces the one in force (a built-in one too, and its blackout to come); a
   * blackout starts now. All fields 0 is a clean network.
   */
  replace(impairment: SandboxNetworkImpairment, now: number): SandboxNetworkReport {
    this.impairment = { ...impairment };
    this.scheduled = undefined;
    this.blackout = impairment.blackoutMs > 0 ? { startsAt: now, endsAt: now + impairment.blackoutMs } : undefined;
    return this.report(now);
  }

  /** The customer's first frame went out: a built-in blackout is counted from here. */
  mediaStarted(now: number): void {
    this.mediaFlowing = true;
    if (!this.scheduled) return;
    const startsAt = now + this.scheduled.afterMs;
    this.blackout = { startsAt, endsAt: startsAt + this.scheduled.durationMs };
    this.scheduled = undefined;
  }

  report(now: number): SandboxNetworkReport {
    return {
      ...this.impairment,
      ...(this.blackout ? { blackoutStartsAt: this.blackout.startsAt, blackoutEndsAt: this.blackout.endsAt } : {}),
      blackedOut: !this.closed && this.blackedOutAt(now),
      toBusiness: { ...this.counts.toBusiness },
      fromBusiness: { ...this.counts.fromBusiness },
    };
  }

  /** Packets still on their way are lost with the call. */
  close(): void {
    this.closed = true;
    for (const timer of this.inFlight) clearTimeout(timer);
    this.inFlight.clear();
  }

  private hook(socket: PacketSocket): void {
    const receive = socket.onData.bind(socket);
    const send = socket.send.bind(socket);
    socket.onData = (data, addr) => {
      const delay = this.admit('fromBusiness', data);
      if (delay === 0) receive(data, addr);
      else if (delay !== undefined) this.later('fromBusiness', delay, () => receive(data, addr));
    };
    socket.send = (data, addr) => {
      const delay = this.admit('toBusiness', data);
      // On a clean path the packet leaves as werift sent it: same call, same promise.
      if (delay === 0) return send(data, addr);
      if (delay !== undefined) {
        this.later('toBusiness', delay, () => {
          if (!socket.closed) send(data, addr).catch(() => undefined);
        });
      }
      // A datagram lost or held up in the network was still sent as far as the sender knows.
      return Promise.resolve();
    };
  }

  /** One packet enters the network: undefined when it is dropped, else its delay in ms. */
  private admit(direction: Direction, data: Buffer): number | undefined {
    const count = this.counts[direction];
    count.packets++;
    if (this.closed || this.blackedOutAt(Date.now())) {
      count.dropped++;
      return undefined;
    }
    // The setup (ICE checks and the DTLS handshake, until the customer's first frame) and DTLS at
    // any time cross at once, never lost, delayed or reordered; only a blackout stops them.
    // werift's handshake does not survive a bad path, with Chromium or werift as the business: a
    // record lost or out of order fails the call (138004) or leaves it connecting, and so does a
    // setup held back by 400 ms of delay with jitter. Only the setup is quicker than on a real bad
    // path; an audio call sends no DTLS once it is up.
    if (!this.mediaFlowing || isDtls(data)) return 0;
    const { lossPercent, delayMs, jitterMs } = this.impairment;
    if (lossPercent > 0 && Math.random() * 100 < lossPercent) {
      count.dropped++;
      return undefined;
    }
    // Each packet draws its own jitter, so one sent later may arrive first, as on a real path.
    return delayMs + (jitterMs > 0 ? Math.random() * jitterMs : 0);
  }

  private later(direction: Direction, delayMs: number, deliver: () => void): void {
    const timer = setTimeout(() => {
      this.inFlight.delete(timer);
      // A blackout also takes the packets that were on their way when it began.
      if (this.closed || this.blackedOutAt(Date.now())) {
        this.counts[direction].dropped++;
        return;
      }
      deliver();
    }, delayMs);
    this.inFlight.add(timer);
  }

  private blackedOutAt(now: number): boolean {
    return this.blackout !== undefined && now >= this.blackout.startsAt && now < this.blackout.endsAt;
  }
}
