// A leg's media path (bridge/legs/media-path.ts) between two real werift peer connections on
// 127.0.0.1: RTP goes both ways through the paths, werift's own receiver reads none of it, and what
// stays werift's — DTLS, SRTCP — still works beside them; a peer without a path reads the path's
// packets through werift as any WebRTC peer does.
import { createSocket } from 'node:dgram';
import { afterEach, describe, expect, test } from 'vitest';
import { RTCPeerConnection, RTCRtpCodecParameters, RtcpSenderInfo, RtcpSrPacket, RtpHeader, StunProtocol, UdpTransport, type RTCRtpTransceiver } from 'werift';
import { MediaPath } from '../../../bridge/legs/media-path';
import { SrtpSender, type RtpPacketIn } from '../../../bridge/media/srtp';
import { eventually, HOST, quietLogger } from './bridge-harness';

class Peer {
  readonly pc: RTCPeerConnection;
  readonly transceiver: RTCRtpTransceiver;
  path: MediaPath | undefined;
  readonly viaPath: RtpPacketIn[] = [];
  readonly viaWerift: number[] = [];
  readonly srs: number[] = [];

  constructor(withPath: boolean) {
    this.pc = new RTCPeerConnection({
      iceUseIpv4: false,
      iceUseIpv6: false,
      iceAdditionalHostAddresses: [HOST],
      iceInterfaceAddresses: { udp4: HOST },
      iceServers: [],
      bundlePolicy: 'max-bundle',
      codecs: { audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 111 })], video: [] },
      headerExtensions: { audio: [], video: [] },
    });
    this.transceiver = this.pc.addTransceiver('audio', { direction: 'sendrecv' });
    this.pc.onTrack.subscribe((track) =>
      track.onReceiveRtp.subscribe((rtp) => {
        this.viaWerift.push(rtp.header.sequenceNumber);
        this.path?.fromWerift(rtp);
      }),
    );
    this.transceiver.dtlsTransport.onRtcp.subscribe((packet) => {
      if (packet instanceof RtcpSrPacket) this.srs.push(packet.senderInfo.packetCount);
    });
    if (withPath) {
      this.pc.iceConnectionStateChange.subscribe((state) => {
        if (state !== 'connected') return;
        this.path ??= new MediaPath(this.transceiver.dtlsTransport, (packet) => this.viaPath.push(packet), quietLogger);
        this.path.attach();
      });
    }
  }

  /** The UDP transport of the pair ICE nominated. */
  get transport(): UdpTransport {
    const protocol = this.transceiver.dtlsTransport.iceTransport.connection.nominated?.protocol;
    if (!(protocol instanceof StunProtocol) || !(protocol.transport instanceof UdpTransport)) throw new Error('no UDP pair');
    return protocol.transport;
  }

  /** A sender on this peer's own SRTP keys: what it protects is as authentic as what the peer sends. */
  forger(): SrtpSender {
    const context = this.transceiver.dtlsTransport.srtp.localContext;
    return new SrtpSender({ profile: context.profile, key: context.srtpSessionKey, salt: context.srtpSessionSalt, authKey: context.srtpSessionAuthTag });
  }

  get connected(): boolean {
    return this.transceiver.dtlsTransport.state === 'connected';
  }
}

const open: Peer[] = [];
afterEach(async () => {
  for (const peer of open.splice(0)) {
    peer.path?.close();
    await peer.pc.close();
  }
});

async function connect(aPath: boolean, bPath: boolean): Promise<[Peer, Peer]> {
  const a = new Peer(aPath);
  const b = new Peer(bPath);
  open.push(a, b);
  await a.pc.setLocalDescription(await a.pc.createOffer());
  await b.pc.setRemoteDescription(a.pc.localDescription!);
  await b.pc.setLocalDescription(await b.pc.createAnswer());
  await a.pc.setRemoteDescription(b.pc.localDescription!);
  await eventually('both peers to connect', () => a.connected && b.connected);
  return [a, b];
}

const fields = (ssrc: number, sequence: number) => ({ payloadType: 111, marker: sequence === 0, sequenceNumber: sequence & 0xffff, timestamp: (sequence * 960) >>> 0, ssrc });

describe('MediaPath', () => {
  test('carries RTP both ways that werift never reads, while SRTCP still goes through werift', async () => {
    const [a, b] = await connect(true, true);
    expect(a.path?.ready && b.path?.ready).toBe(true);
    for (let i = 0; i < 50; i++) {
      a.path!.sendRtp(fields(a.transceiver.sender.ssrc, i), Buffer.from([0xf8, i]));
      b.path!.sendRtp(fields(b.transceiver.sender.ssrc, 1000 + i), Uint8Array.of(0xf8, i));
    }
    // A sequence number sent already is not protected again (its SRTP index, its GCM nonce, are spent).
    expect(a.path!.sendRtp(fields(a.transceiver.sender.ssrc, 49), Buffer.from([0xf8, 0xff]))).toBe(0);
    await eventually('every packet', () => a.viaPath.length === 50 && b.viaPath.length === 50);
    expect(b.viaPath.map((p) => p.sequenceNumber)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(b.viaPath[0]).toMatchObject({ payloadType: 111, marker: true, timestamp: 0, ssrc: a.transceiver.sender.ssrc });
    expect([...b.viaPath[7]!.payload]).toEqual([0xf8, 7]);
    expect(a.viaPath.map((p) => p.sequenceNumber)).toEqual(Array.from({ length: 50 }, (_, i) => 1000 + i));
    expect([a.viaWerift, b.viaWerift]).toEqual([[], []]);
    expect([a.path!.weriftReportsReception, b.path!.weriftReportsReception]).toEqual([false, false]);

    const report = new RtcpSrPacket({ ssrc: a.transceiver.sender.ssrc, senderInfo: new RtcpSenderInfo({ ntpTimestamp: 1n << 40n, rtpTimestamp: 0, packetCount: 50, octetCount: 100 }) });
    await a.transceiver.dtlsTransport.sendRtcp([report]);
    await eventually('the sender report', () => b.srs.includes(50));
  });

  test('a peer without a path reads the path\u2019s packets through werift, and its packets reach the path', async () => {
    const [a, b] = await connect(true, false);
    for (let i = 0; i < 20; i++) {
      a.path!.sendRtp(fields(a.transceiver.sender.ssrc, 65_530 + i), Buffer.from([0xf8, i]));
      void b.transceiver.dtlsTransport.sendRtp(Buffer.from([0xf8, i]), new RtpHeader(fields(b.transceiver.sender.ssrc, 65_530 + i)));
    }
    await eventually('every packet', () => b.viaWerift.length === 20 && a.viaPath.length === 20);
    expect(b.viaWerift).toEqual(Array.from({ length: 20 }, (_, i) => (65_530 + i) & 0xffff));
    expect(a.viaPath.map((p) => p.sequenceNumber)).toEqual(Array.from({ length: 20 }, (_, i) => (65_530 + i) & 0xffff));
    expect(a.viaWerift).toEqual([]);
  });

  test('sends nothing once closed, and leaves the socket\u2019s packets to werift', async () => {
    const [a, b] = await connect(true, true);
    b.path!.close();
    expect(b.path!.ready).toBe(false);
    expect(b.path!.sendRtp(fields(b.transceiver.sender.ssrc, 1), Buffer.from([0xf8]))).toBe(0);
    a.path!.sendRtp(fields(a.transceiver.sender.ssrc, 1), Buffer.from([0xf8]));
    await eventually('werift to read it', () => b.viaWerift.length === 1);
    expect(b.viaPath).toEqual([]);
  });

  test('takes RTP only from the nominated pair’s remote address: an authentic packet from another port is dropped', async () => {
    const [a, b] = await connect(true, true);
    const forger = a.forger();
    const ssrc = a.transceiver.sender.ssrc;
    const stray = createSocket('udp4');
    await new Promise<void>((resolve) => stray.bind(0, HOST, resolve));
    try {
      const target = b.transport;
      await new Promise<void>((resolve, reject) => stray.send(forger.protect(fields(ssrc, 500), Buffer.from([0xf8, 1]))!, target.port, HOST, (e) => (e ? reject(e) : resolve())));
      // The same keys, from the pair's own address: this one is read.
      a.transport.socket.send(forger.protect(fields(ssrc, 501), Buffer.from([0xf8, 2]))!, target.port, HOST);
      await eventually('the packet from the pair’s address', () => b.viaPath.length === 1);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(b.viaPath.map((p) => p.sequenceNumber)).toEqual([501]);
      expect(b.viaWerift).toEqual([]);
    } finally {
      stray.close();
    }
  });

  test('sends nothing straight onto the socket while the ICE connection is not connected (consent to send, RFC 7675)', async () => {
    const [a, b] = await connect(true, true);
    const connection = a.transceiver.dtlsTransport.iceTransport.connection;
    // What werift's consent expiry leaves (30 s without a consent response): the connection failed.
    // Set here rather than waited for; werift's own send checks its consent flag, not this state.
    connection.state = 'failed';
    expect(a.path!.sendRtp(fields(a.transceiver.sender.ssrc, 1), Buffer.from([0xf8, 1]))).toBe(0);
    connection.state = 'connected';
    expect(a.path!.sendRtp(fields(a.transceiver.sender.ssrc, 2), Buffer.from([0xf8, 2]))).toBeGreaterThan(0);
    await eventually('the packet sent once connected', () => b.viaPath.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(b.viaPath.map((p) => p.sequenceNumber)).toEqual([2]);
  });
});
