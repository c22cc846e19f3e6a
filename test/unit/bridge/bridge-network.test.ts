// The node's network settings: the address its candidates carry, the one address it binds, its RTP
// port range (legs made at once never pick one port), and the settings it refuses.
import { randomInt } from 'node:crypto';
import sdpTransform from 'sdp-transform';
import { describe, expect, test } from 'vitest';
import { BridgeNode } from '../../../bridge/bridge-node';
import { networkProblems } from '../../../bridge/legs/peer-config';
import { CUSTOMER } from '../../../shared/bridge';
import { AgentWindow } from './agent-window';
import { closedAfterEach, eventually, HOST, incomingCall, quietLogger, ServiceCustomer, TONE_A } from './bridge-harness';

const track = closedAfterEach();

const candidatesOf = (sdp: string) => (sdpTransform.parse(sdp).media[0]?.candidates ?? []).map((c) => ({ ip: c.ip, port: Number(c.port), type: c.type }));

describe('the node\u2019s network', () => {
  test('with a port range, every leg binds a port of it, no two the same, also when made at once; media flows', async () => {
    const from = randomInt(40_000, 50_000);
    const to = from + 40;
    // No bindAddress: the sockets bind every interface, the candidates carry the public address.
    const bridge = track(new BridgeNode({ publicAddress: HOST, rtpPorts: { from, to }, logger: quietLogger }));
    const customer = track(await incomingCall(bridge, 'wacid.ports'));
    const offers = await Promise.all(['leg-1', 'leg-2', 'leg-3', 'leg-4', 'leg-5'].map((legId) => bridge.offerAgentLeg('wacid.ports', legId)));
    const ports = offers.flatMap((offer) => (offer.ok ? candidatesOf(offer.value.offer) : []));
    expect(ports).toHaveLength(5);
    for (const { ip, port, type } of ports) {
      expect({ ip, type }).toEqual({ ip: HOST, type: 'host' });
      expect(port).toBeGreaterThanOrEqual(from);
      expect(port).toBeLessThanOrEqual(to);
    }
    expect(new Set(ports.map((p) => p.port)).size).toBe(5);

    const window = track(new AgentWindow(TONE_A));
    const first = offers[0]!;
    if (!first.ok) throw new Error(first.error.message);
    expect(await bridge.applyAgentAnswer('wacid.ports', 'leg-1', await window.answer(first.value.offer))).toEqual({ ok: true, value: null });
    await bridge.setRoutes('wacid.ports', { [CUSTOMER]: ['leg-1'], 'leg-1': [CUSTOMER] });
    await bridge.connectCustomer('wacid.ports');
    await eventually('the customer to hear the agent', () => customer.hears(TONE_A) > 0.3);
  });

  test('the candidates carry the public address, the sockets the bound one', async () => {
    const bridge = track(new BridgeNode({ bindAddress: HOST, publicAddress: '127.0.0.2', logger: quietLogger }));
    const customer = track(new ServiceCustomer());
    const offer = await customer.peer.makeOffer();
    if (!offer.ok) throw new Error(offer.error.message);
    const answer = await bridge.prepareIncoming('wacid.public', offer.value);
    expect(answer.ok && candidatesOf(answer.value.answer).map((c) => c.ip)).toEqual(['127.0.0.2']);
    const legOffer = await bridge.offerAgentLeg('wacid.public', 'leg-1');
    expect(legOffer.ok && candidatesOf(legOffer.value.offer).map((c) => c.ip)).toEqual(['127.0.0.2']);
  });

  test('settings that cannot work are refused, each named', () => {
    expect(networkProblems({ publicAddress: 'bridge.example.com' })).toEqual(['publicAddress must be an IP address (found "bridge.example.com")']);
    expect(networkProblems({ bindAddress: '::1', publicAddress: '203.0.113.5' })).toEqual(['publicAddress and bindAddress must be of one IP version']);
    expect(networkProblems({ rtpPorts: { from: 40_000, to: 40_000 } })).toHaveLength(1);
    expect(networkProblems({ rtpPorts: { from: 80, to: 90 } })).toHaveLength(1);
    expect(networkProblems({ publicAddress: '203.0.113.5', bindAddress: '10.0.0.5', rtpPorts: { from: 40_000, to: 40_100 } })).toEqual([]);
    expect(() => new BridgeNode({ rtpPorts: { from: 50_000, to: 49_000 }, logger: quietLogger })).toThrow(/rtpPorts/);
  });
});
