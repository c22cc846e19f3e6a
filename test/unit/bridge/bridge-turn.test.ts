// Legs over a real TURN relay (Debian's coturn on 127.0.0.1, test/support/coturn-server.ts, loopback
// peers allowed), and how the node's media path (bridge/legs/media-path.ts) decides whether it
// reads and writes a leg's RTP itself: only when the pair ICE nominated is a plain UDP socket of its
// own. A window whose only candidates are relayed still reaches the node's socket from the relay's
// address, so the node keeps its path; a leg whose own nominated candidate is the relay's leaves its
// RTP to werift, both ways (REFERENCE.md "The outbound stream": over a TURN relay werift's receiver
// reports).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RTCPeerConnection, RTCRtpCodecParameters, RtcpRrPacket, RtcpSrPacket, StunProtocol, type RTCIceServer, type RTCRtpTransceiver } from 'werift';
import type { BridgeNode } from '../../../bridge/bridge-node';
import { MediaPath } from '../../../bridge/legs/media-path';
import type { RtpPacketIn } from '../../../bridge/media/srtp';
import { turnCredentialsFor } from '../../../relay/turn-credentials';
import { CUSTOMER, type BridgedCallReport } from '../../../shared/bridge';
import { startCoturn, type CoturnHandle } from '../../support/coturn-server';
import { AgentWindow, type WindowNetwork } from './agent-window';
import { closedAfterEach, eventually, expectWindowFacing, HOST, incomingCall, quietLogger, startNode, TONE_A, type ServiceCustomer } from './bridge-harness';

const secret = randomBytes(18).toString('base64url');
let coturn: CoturnHandle;
beforeAll(async () => {
  coturn = await startCoturn(secret);
}, 40_000);
afterAll(async () => {
  await coturn.stop();
});

/** coturn as a peer's ICE server, with credentials of its shared-secret scheme (relay/turn-credentials.ts). */
function turnServer(user: string): RTCIceServer {
  const { username, credential } = turnCredentialsFor({ secret, urls: [`turn:${HOST}:${coturn.port}`] }, user, Date.now()).iceServers[0]!;
  return { urls: `turn:${HOST}:${coturn.port}`, username, credential };
}

const track = closedAfterEach();

/** A bare werift peer with a media path of its own, on 127.0.0.1 or, relay-only, through `turn`. */
class PathPeer {
  readonly pc: RTCPeerConnection;
  readonly transceiver: RTCRtpTransceiver;
  path: MediaPath | undefined;
  /** Every packet the path handed on, and of those, the sequence numbers werift read first. */
  readonly received: RtpPacketIn[] = [];
  readonly viaWerift: number[] = [];

  constructor(turn?: RTCIceServer) {
    this.pc = new RTCPeerConnection({
      iceUseIpv4: false,
      iceUseIpv6: false,
      iceAdditionalHostAddresses: [HOST],
      iceInterfaceAddresses: { udp4: HOST },
      iceServers: turn ? [turn] : [],
      iceTransportPolicy: turn ? 'relay' : 'all',
      bundlePolicy: 'max-bundle',
      codecs: { audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 111 })], video: [] },
      headerExtensions: { audio: [], video: [] },
    });
    this.transceiver = this.pc.addTransceiver('audio', { direction: 'sendrecv' });
    // As a leg wires it (bridge/legs/leg-peer.ts): what werift reads goes to the path.
    this.pc.onTrack.subscribe((track) =>
      track.onReceiveRtp.subscribe((rtp) => {
        this.viaWerift.push(rtp.header.sequenceNumber);
        this.path?.fromWerift(rtp);
      }),
    );
    this.pc.iceConnectionStateChange.subscribe((state) => {
      if (state !== 'connected') return;
      this.path ??= new MediaPath(this.transceiver.dtlsTransport, (packet) => this.received.push(packet), quietLogger);
      this.path.attach();
    });
  }

  get connected(): boolean {
    return this.transceiver.dtlsTransport.state === 'connected';
  }

  get nominatedPair(): { local: string; remote: string } | undefined {
    const pair = this.transceiver.dtlsTransport.iceTransport.connection.nominated;
    return pair && { local: pair.localCandidate.type, remote: pair.remoteCandidate.type };
  }

  send(sequence: number): number {
    const fields = { payloadType: 111, marker: false, sequenceNumber: sequence, timestamp: sequence * 960, ssrc: this.transceiver.sender.ssrc };
    return this.path!.sendRtp(fields, Buffer.from([0xf8, sequence & 0xff]));
  }

  async close(): Promise<void> {
    this.path?.close();
    await this.pc.close();
  }
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

/** An agent's leg offered by the node and answered by a window playing TONE_A on `network`. */
async function windowOnLeg(node: BridgeNode, callId: string, legId: string, network: WindowNetwork): Promise<AgentWindow> {
  const offer = await node.offerAgentLeg(callId, legId);
  if (!offer.ok) throw new Error(offer.error.message);
  expectWindowFacing(offer.value.offer, 'actpass');
  const window = track(new AgentWindow(TONE_A, undefined, network));
  expect(await node.applyAgentAnswer(callId, legId, await window.answer(offer.value.offer))).toEqual({ ok: true, value: null });
  return window;
}

/** Waits until the node received 100 packets on each leg, and the customer and the window 100 each; the node's report then. */
async function hundredPacketsEachWay(node: BridgeNode, callId: string, customer: ServiceCustomer, window: AgentWindow): Promise<BridgedCallReport> {
  return eventually(
    '100 packets each way',
    async () => {
      const report = await node.report(callId);
      if (!report.ok) return undefined;
      const legs = [report.value.customer, report.value.agents['leg-a']];
      const counted = legs.every((leg) => leg !== undefined && leg.packetsReceived >= 100) && customer.packets.length >= 100 && window.received.packets >= 100;
      return counted && report.value;
    },
    10_000,
  );
}

describe('legs over a TURN relay', () => {
  test('a window with relayed candidates only: the call\u2019s audio goes both ways through the relay and the node, on the node\u2019s own path', async () => {
    const { node, events } = startNode();
    track(node);
    const customer = track(await incomingCall(node, 'wacid.turn-1'));
    const window = await windowOnLeg(node, 'wacid.turn-1', 'leg-a', { iceServers: [turnServer('window-a')], iceTransportPolicy: 'relay' });
    // Its description offers the relay's address alone.
    expect(window.pc.localDescription?.sdp.match(/^a=candidate:.*$/gm)?.map((line) => / typ (\w+)/.exec(line)?.[1])).toEqual(['relay']);
    expect(await node.setRoutes('wacid.turn-1', { [CUSTOMER]: ['leg-a'], 'leg-a': [CUSTOMER] })).toEqual({ ok: true, value: null });
    expect(await node.connectCustomer('wacid.turn-1')).toEqual({ ok: true, value: null });
    await eventually('the leg to connect', () => events.some((e) => e.kind === 'leg_connected' && e.legId === 'leg-a'));
    expect(window.nominatedPair).toEqual({ local: 'relay', remote: 'host' });

    // The customer's voice reaches the window, the window's tone the customer, both through the relay.
    await eventually('the customer to hear the agent', () => customer.hears(TONE_A) > 0.3, 10_000);
    await eventually('the window to hear the customer\u2019s voice', () => window.hears(TONE_A).rms > 0.02 && window.hears(TONE_A).share < 0.05, 10_000);
    const report = await hundredPacketsEachWay(node, 'wacid.turn-1', customer, window);
    expect(report.agents['leg-a']).toMatchObject({ state: 'connected', packetsLost: 0 });

    // The node read the window's packets on its own path: the reports on them are its own, in its
    // sender reports (had werift read them, werift's receiver reports would carry them).
    await eventually('a report on the window\u2019s stream', () => window.receptionReports.length >= 2, 10_000);
    expect(new Set(window.receptionReports.map((r) => r.in))).toEqual(new Set(['sr']));
    for (const block of window.receptionReports) expect(block).toMatchObject({ packetsLost: 0, fractionLost: 0 });
  });

  test('a peer whose nominated candidate is the relay\u2019s: its path leaves the RTP to werift both ways, and every packet still arrives once', async () => {
    const relayed = track(new PathPeer(turnServer('peer-a')));
    const direct = track(new PathPeer());
    await relayed.pc.setLocalDescription(await relayed.pc.createOffer());
    await direct.pc.setRemoteDescription(relayed.pc.localDescription!);
    await direct.pc.setLocalDescription(await direct.pc.createAnswer());
    await relayed.pc.setRemoteDescription(direct.pc.localDescription!);
    await eventually('both peers to connect', () => relayed.connected && direct.connected && relayed.path?.ready && direct.path?.ready, 10_000);
    expect(relayed.nominatedPair).toEqual({ local: 'relay', remote: 'host' });
    expect(direct.nominatedPair?.remote).toBe('relay');

    for (const i of range(0, 50)) {
      expect(relayed.send(1_000 + i)).toBeGreaterThan(0);
      expect(direct.send(2_000 + i)).toBeGreaterThan(0);
    }
    await eventually('every packet both ways', () => relayed.received.length === 50 && direct.received.length === 50, 10_000);
    // Out through werift's ICE connection (the relay's channel), in through werift's receiver.
    expect(direct.received.map((p) => p.sequenceNumber)).toEqual(range(1_000, 50));
    expect(relayed.received.map((p) => p.sequenceNumber)).toEqual(range(2_000, 50));
    expect(relayed.viaWerift).toEqual(range(2_000, 50));
    expect(relayed.path!.weriftReportsReception).toBe(true);
    // The other side's plain UDP socket: read on its path, werift's receiver sees none of it.
    expect(direct.viaWerift).toEqual([]);
    expect(direct.path!.weriftReportsReception).toBe(false);
  });

  test('a node that reaches the service only through its TURN relay: the customer\u2019s leg leaves its RTP to werift, the window\u2019s keeps the node\u2019s path, and the call goes both ways', async () => {
    // The node's sockets on ::1, the service's on 127.0.0.1: only the node's relayed candidate (IPv4) pairs with the service's.
    const { node, events } = startNode({ bindAddress: '::1', iceServers: [turnServer('node-1')] });
    track(node);
    const customer = track(await incomingCall(node, 'wacid.turn-3'));
    const service = customer.peer['pc'];
    // The report blocks the service receives on its own stream, and in what kind of RTCP packet.
    const blocksIn: ('sr' | 'rr')[] = [];
    service.getTransceivers()[0]!.dtlsTransport.onRtcp.subscribe((packet) => {
      if (!(packet instanceof RtcpSrPacket || packet instanceof RtcpRrPacket)) return;
      const kind = packet instanceof RtcpSrPacket ? 'sr' : 'rr';
      blocksIn.push(...packet.reports.map(() => kind));
    });
    // Where the node's RTP comes from, datagram by datagram, on the service's one socket.
    const rtpFrom = new Set<string>();
    service.iceConnectionStateChange.subscribe((state) => {
      const protocol = service.iceTransports[0]!.connection.nominated?.protocol;
      if (state !== 'connected' || !(protocol instanceof StunProtocol)) return;
      const { transport } = protocol;
      const werift = transport.onData;
      transport.onData = (data, addr) => {
        if (data.length >= 12 && data[0]! >= 128 && data[0]! <= 191 && !(data[1]! >= 192 && data[1]! <= 223)) rtpFrom.add(`${addr[0]}:${addr[1]}`);
        werift(data, addr);
      };
    });
    const window = await windowOnLeg(node, 'wacid.turn-3', 'leg-a', { host: '::1' });
    expect(await node.setRoutes('wacid.turn-3', { [CUSTOMER]: ['leg-a'], 'leg-a': [CUSTOMER] })).toEqual({ ok: true, value: null });
    expect(await node.connectCustomer('wacid.turn-3')).toEqual({ ok: true, value: null });
    await eventually('both legs to connect', () => events.some((e) => e.kind === 'customer_connected') && events.some((e) => e.kind === 'leg_connected'), 10_000);
    const nominated = service.iceTransports[0]!.connection.nominated;
    expect(nominated?.remoteCandidate.type).toBe('relay');
    expect(window.nominatedPair).toEqual({ local: 'host', remote: 'host' });

    await eventually('the customer to hear the agent', () => customer.hears(TONE_A) > 0.3, 10_000);
    await eventually('the window to hear the customer\u2019s voice', () => window.hears(TONE_A).rms > 0.02 && window.hears(TONE_A).share < 0.05, 10_000);
    const report = await hundredPacketsEachWay(node, 'wacid.turn-3', customer, window);
    // Every RTP packet of the node's reached the service from the relay's address, none straight from a socket of the node's.
    expect([...rtpFrom]).toEqual([nominated!.remoteAddr.join(':')]);
    expect(report.customer).toMatchObject({ state: 'connected', packetsLost: 0 });
    expect(report.agents['leg-a']).toMatchObject({ state: 'connected', packetsLost: 0 });

    // Over the relay werift read the service's packets, and its receiver reports them; the node's
    // sender reports carry no block of their own on that leg. The window's packets the node read itself.
    await eventually('reports on both streams', () => blocksIn.length >= 2 && window.receptionReports.length >= 2, 10_000);
    expect(new Set(blocksIn)).toEqual(new Set(['rr']));
    expect(new Set(window.receptionReports.map((r) => r.in))).toEqual(new Set(['sr']));
  });
});
