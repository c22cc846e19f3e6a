// Incoming calls through a bridge node, with real werift peers on 127.0.0.1: the sandbox's customer
// plays the service (ice-lite, complete, Opus 111 + telephone-event 126, its recorded voice), and
// agents' windows play tones (720 Hz, 960 Hz) so that each listener's ears tell whom it hears.
import { describe, expect, test } from 'vitest';
import type { BridgeNode } from '../../../bridge/bridge-node';
import { CUSTOMER, HOLD_MUSIC } from '../../../shared/bridge';
import { agentByNodeOffer, closedAfterEach, eventually, incomingCall, sleep, startNode, TONE_A, TONE_B, type ServiceCustomer } from './bridge-harness';

const track = closedAfterEach();

async function node(): Promise<{ node: BridgeNode; events: ReturnType<typeof startNode>['events'] }> {
  const started = startNode();
  track(started.node);
  return started;
}

const hearsTone = (customer: ServiceCustomer, hz: number) => customer.hears(hz) > 0.3;

describe('an incoming call through the bridge', () => {
  test('nothing reaches the customer before connectCustomer; then the agent and the customer hear each other', async () => {
    const { node: bridge, events } = await node();
    const customer = track(await incomingCall(bridge, 'wacid.in-1'));
    const agent = track(await agentByNodeOffer(bridge, 'wacid.in-1', 'leg-a', TONE_A));
    await eventually('the agent leg to connect', () => events.some((e) => e.kind === 'leg_connected'));

    // The agent's leg is up and routed to the customer by default, the customer holds the node's
    // answer: still nothing may reach it, not even an ICE check, until the accept went through.
    await sleep(800);
    expect(customer.peer.media().firstPacketAt).toBeUndefined();
    expect(customer.packets).toEqual([]);
    expect((await bridge.report('wacid.in-1')).ok && (await bridge.report('wacid.in-1'))).toMatchObject({ value: { customer: { state: 'new' } } });

    const connectedAt = Date.now();
    expect(await bridge.connectCustomer('wacid.in-1')).toEqual({ ok: true, value: null });
    expect(await bridge.connectCustomer('wacid.in-1')).toEqual({ ok: true, value: null });
    await eventually('the customer to hear the agent\u2019s tone', () => hearsTone(customer, TONE_A));
    expect(customer.peer.media().firstPacketAt).toBeGreaterThanOrEqual(connectedAt);
    await eventually('the agent to hear the customer\u2019s voice', () => agent.hears(TONE_A).rms > 0.02 && agent.hears(TONE_A).share < 0.05);
    expect(events).toEqual([
      { kind: 'leg_connected', callId: 'wacid.in-1', legId: 'leg-a' },
      { kind: 'customer_connected', callId: 'wacid.in-1' },
    ]);

    await sleep(1_500); // long enough for sender and receiver reports both ways
    const report = await bridge.report('wacid.in-1');
    expect(report).toMatchObject({
      ok: true,
      value: {
        callId: 'wacid.in-1',
        customer: { state: 'connected', packetsLost: 0 },
        agents: { 'leg-a': { state: 'connected', packetsLost: 0 } },
        routes: { [CUSTOMER]: ['leg-a'], 'leg-a': [CUSTOMER] },
      },
    });
    if (!report.ok) return;
    for (const leg of [report.value.customer, report.value.agents['leg-a']!]) {
      expect(leg.packetsReceived).toBeGreaterThan(50);
      expect(leg.lastPacketAt).toBeGreaterThan(Date.now() - 1_000);
      expect(leg.roundTripMs).toBeGreaterThanOrEqual(0);
      expect(leg.roundTripMs).toBeLessThan(200);
      expect(leg.jitterMs).toBeLessThan(100);
    }
    expect(bridge.load().calls).toBe(1);

    // The node's sender reports tell the truth about the stream the window received: its SSRC, the
    // packets and payload octets sent, an RTP timestamp on the stream's clock at the NTP time, its CNAME.
    const reports = agent.senderReports;
    expect(reports.length).toBeGreaterThanOrEqual(1);
    for (const sr of reports) {
      expect(sr.ssrc).toBe(agent.received.ssrc);
      expect(sr.packetCount - sr.received.packets).toBeGreaterThanOrEqual(0);
      expect(sr.packetCount - sr.received.packets).toBeLessThanOrEqual(2);
      expect(sr.octetCount - sr.received.octets).toBeGreaterThanOrEqual(0);
      expect(sr.octetCount - sr.received.octets).toBeLessThanOrEqual(2 * 200);
      const ntpUnixMs = Number(sr.ntp >> 32n) * 1000 - 2_208_988_800_000 + (Number(sr.ntp & 0xffff_ffffn) / 2 ** 32) * 1000;
      expect(Math.abs(ntpUnixMs - sr.at)).toBeLessThan(100);
      const expected = sr.received.timestamp + (sr.at - sr.received.at) * 48;
      expect(Math.abs(((sr.rtpTimestamp - expected) | 0))).toBeLessThanOrEqual(48 * 40);
    }
    // Its report blocks on the window's stream tell the truth too: nothing lost, the highest sequence
    // number the window had sent (or one still on its way), the jitter of a loopback.
    expect(agent.receptionReports.length).toBeGreaterThanOrEqual(1);
    for (const block of agent.receptionReports) {
      expect(block).toMatchObject({ packetsLost: 0, fractionLost: 0 });
      expect((block.sentSequence - block.highestSequence) & 0xffff).toBeLessThanOrEqual(2);
      expect(block.jitter).toBeLessThan(48 * 50);
    }
    const legOffer = await bridge.offerAgentLeg('wacid.in-1', 'leg-a'); // asked again: the same offer
    const cname = legOffer.ok ? /a=ssrc:\d+ cname:(\S+)/.exec(legOffer.value.offer)?.[1] : undefined;
    expect(cname).toBeDefined();
    expect([...agent.cnames]).toEqual([cname]);
  });

  test('DTMF from the agent\u2019s window reaches the customer; on hold the customer hears the music, then the agent again', async () => {
    const { node: bridge } = await node();
    const customer = track(await incomingCall(bridge, 'wacid.in-2'));
    const agent = track(await agentByNodeOffer(bridge, 'wacid.in-2', 'leg-a', TONE_A));
    await bridge.connectCustomer('wacid.in-2');
    await eventually('the customer to hear the agent', () => hearsTone(customer, TONE_A));

    agent.sendDigit(4);
    agent.sendDigit(2);
    await eventually('the digits', () => customer.peer.media().digitsHeard === '42');
    // Telephone events went out as telephone events (werift's own sender would have stamped them Opus).
    expect(customer.packets.filter((p) => p.payloadType === 126).length).toBe(6);

    expect(await bridge.setRoutes('wacid.in-2', { [CUSTOMER]: [HOLD_MUSIC], 'leg-a': [] })).toEqual({ ok: true, value: null });
    await eventually('the customer to hear the hold music', () => customer.peer.media().heardNow === 'music');
    await eventually('the agent to hear silence', () => agent.hears(TONE_A).rms < 0.001);

    await bridge.setRoutes('wacid.in-2', { [CUSTOMER]: ['leg-a'], 'leg-a': [CUSTOMER] });
    await eventually('the customer to hear the agent again', () => customer.peer.media().heardNow === 'voice' && hearsTone(customer, TONE_A));
    await eventually('the agent to hear the customer again', () => agent.hears(TONE_A).rms > 0.02);
  });

  test('the customer moves from agent A to agent B, into a three-way mix and out: one stream, continuous, read from its packets', async () => {
    const { node: bridge, events } = await node();
    const customer = track(await incomingCall(bridge, 'wacid.in-3'));
    const agentA = track(await agentByNodeOffer(bridge, 'wacid.in-3', 'leg-a', TONE_A));
    const agentB = track(await agentByNodeOffer(bridge, 'wacid.in-3', 'leg-b', TONE_B));
    await eventually('both legs to connect', () => events.filter((e) => e.kind === 'leg_connected').length === 2);
    await bridge.setRoutes('wacid.in-3', { [CUSTOMER]: ['leg-a'], 'leg-a': [CUSTOMER] });
    await bridge.connectCustomer('wacid.in-3');
    await eventually('the customer to hear A', () => hearsTone(customer, TONE_A) && customer.hears(TONE_B) < 0.05);

    // To B: A hears nothing now.
    await bridge.setRoutes('wacid.in-3', { [CUSTOMER]: ['leg-b'], 'leg-b': [CUSTOMER], 'leg-a': [] });
    await eventually('the customer to hear B alone', () => hearsTone(customer, TONE_B) && customer.hears(TONE_A) < 0.05);
    await eventually('A to hear silence', () => agentA.hears(TONE_A).rms < 0.001);

    // Three-way: each hears the other two, never itself.
    await bridge.setRoutes('wacid.in-3', { [CUSTOMER]: ['leg-a', 'leg-b'], 'leg-a': [CUSTOMER, 'leg-b'], 'leg-b': [CUSTOMER, 'leg-a'] });
    await eventually('the customer to hear A and B', () => customer.hears(TONE_A) > 0.1 && customer.hears(TONE_B) > 0.1);
    await eventually('A to hear B and not itself', () => agentA.hears(TONE_B).share > 0.1 && agentA.hears(TONE_A).share < 0.02);
    await eventually('B to hear A and not itself', () => agentB.hears(TONE_A).share > 0.1 && agentB.hears(TONE_B).share < 0.02);
    await eventually('A and B to hear the customer\u2019s voice besides', () => {
      const a = agentA.hears(TONE_B);
      return a.rms > 0.05 && a.share < 0.9;
    });
    // A digit in a mix still reaches the customer, as a telephone event.
    agentA.sendDigit(7);
    await eventually('the digit through the mix', () => customer.peer.media().digitsHeard === '7');

    // Nobody: silence, and the stream stays alive.
    await bridge.setRoutes('wacid.in-3', {});
    await eventually('the customer to hear silence', () => customer.hears(TONE_A) < 0.01 && customer.hears(TONE_B) < 0.01 && customer.peer.media().recentRms < 0.001);
    const before = customer.packets.length;
    await sleep(300);
    expect(customer.packets.length - before).toBeGreaterThanOrEqual(10);

    await bridge.setRoutes('wacid.in-3', { [CUSTOMER]: ['leg-a'], 'leg-a': [CUSTOMER] });
    await eventually('the customer to hear A again', () => hearsTone(customer, TONE_A));

    const packets = customer.packets;
    expect(packets.length).toBeGreaterThan(60);
    expect(new Set(packets.map((p) => p.ssrc)).size).toBe(1);
    expect(new Set(packets.map((p) => p.payloadType))).toEqual(new Set([111, 126]));
    for (let i = 1; i < packets.length; i++) {
      const [a, b] = [packets[i - 1]!, packets[i]!];
      // Every packet the next sequence number: no gap, no jump, across every change.
      expect(((b.sequenceNumber - a.sequenceNumber) & 0xffff) === 1 ? 1 : { at: i, from: a, to: b }).toBe(1);
      // Timestamps never go back and never leap: at most the time since the last packet (a silence filled in after 200 ms).
      const step = (b.timestamp - a.timestamp) | 0;
      expect(step >= 0 && step <= 48 * 300 ? true : { at: i, step }).toBe(true);
    }
    // And over the whole call the stream's clock kept the wall clock's pace.
    const first = packets[0]!;
    const last = packets[packets.length - 1]!;
    const streamMs = (((last.timestamp - first.timestamp) >>> 0) / 48) | 0;
    expect(Math.abs(streamMs - (last.at - first.at))).toBeLessThan(250);
  });
});
