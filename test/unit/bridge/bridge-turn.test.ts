// Legs over a real TURN relay (Debian's coturn on 127.0.0.1, turn-relay.ts), and how the media
// path (bridge/legs/media-path.ts) decides whether it reads and writes a leg's RTP itself: only
// when the pair ICE nominated is a plain UDP socket of its own. A window whose only candidates are
// relayed still reaches the node's socket from the relay's address, so the node keeps its path;
// a peer whose own candidate is the relayed one leaves its RTP to werift, both ways.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { RTCPeerConnection, RTCRtpCodecParameters, type RTCIceServer, type RTCRtpTransceiver } from 'werift';
import { MediaPath } from '../../../bridge/legs/media-path';
import type { RtpPacketIn } from '../../../bridge/media/srtp';
import { CUSTOMER } from '../../../shared/bridge';
import { AgentWindow } from './agent-window';
import { eventually, expectWindowFacing, HOST, incomingCall, quietLogger, startNode, TONE_A } from './bridge-harness';
import { TurnRelay } from './turn-relay';

let relay: TurnRelay;
beforeAll(async () => {
  relay = await TurnRelay.start();
});
afterAll(async () => {
  await relay.stop();
});

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((peer) => peer.close()));
});
function track<T extends { close(): Promise<void> }>(peer: T): T {
  open.push(peer);
  return peer;
}

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

describe('legs over a TURN relay', () => {
  test('a window with relayed candidates only: the call\u2019s audio goes both ways through the relay and the node, on the node\u2019s own path', async () => {
    const { node, events } = startNode();
    track(node);
    const customer = track(await incomingCall(node, 'wacid.turn-1'));
    const offer = await node.offerAgentLeg('wacid.turn-1', 'leg-a');
    if (!offer.ok) throw new Error(offer.error.message);
    expectWindowFacing(offer.value.offer, 'actpass');
    const window = track(new AgentWindow(TONE_A, undefined, { iceServers: [relay.iceServer], iceTransportPolicy: 'relay' }));
    const answer = await window.answer(offer.value.offer);
    // Its description offers the relay's address alone.
    expect(answer.match(/^a=candidate:.*$/gm)?.map((line) => / typ (\w+)/.exec(line)?.[1])).toEqual(['relay']);
    expect(await node.applyAgentAnswer('wacid.turn-1', 'leg-a', answer)).toEqual({ ok: true, value: null });
    expect(await node.setRoutes('wacid.turn-1', { [CUSTOMER]: ['leg-a'], 'leg-a': [CUSTOMER] })).toEqual({ ok: true, value: null });
    expect(await node.connectCustomer('wacid.turn-1')).toEqual({ ok: true, value: null });
    await eventually('the leg to connect', () => events.some((e) => e.kind === 'leg_connected' && e.legId === 'leg-a'));
    expect(window.nominatedPair).toEqual({ local: 'relay', remote: 'host' });

    // The customer's voice reaches the window, the window's tone the customer, both through the relay.
    await eventually('the customer to hear the agent', () => customer.hears(TONE_A) > 0.3, 10_000);
    await eventually('the window to hear the customer\u2019s voice', () => window.hears(TONE_A).rms > 0.02 && window.hears(TONE_A).share < 0.05, 10_000);
    // Packets counted at both ends: 100 of the window's at the node and on at the customer, 100 of the customer's at the window.
    const leg = await eventually(
      '100 packets each way',
      async () => {
        const report = await node.report('wacid.turn-1');
        const leg = report.ok ? report.value.agents['leg-a'] : undefined;
        return leg && leg.packetsReceived >= 100 && customer.packets.length >= 100 && window.received.packets >= 100 && leg;
      },
      10_000,
    );
    expect(leg).toMatchObject({ state: 'connected', packetsLost: 0 });

    // The node read the window's packets on its own path: the reports on them are its own, in its
    // sender reports (had werift read them, werift's receiver reports would carry them).
    await eventually('a report on the window\u2019s stream', () => window.receptionReports.length >= 2, 10_000);
    expect(new Set(window.receptionReports.map((r) => r.in))).toEqual(new Set(['sr']));
    for (const block of window.receptionReports) expect(block).toMatchObject({ packetsLost: 0, fractionLost: 0 });
  });

  test('a peer whose nominated candidate is the relay\u2019s: its path leaves the RTP to werift both ways, and every packet still arrives once', async () => {
    const relayed = track(new PathPeer(relay.iceServer));
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
});
