// A remote bridge node end to end: a real BridgeNode behind its control server registers with a real
// relay and reports its load; the relay picks it and drives a real call through BridgeControlClient
// (the sandbox's customer on the service's side, a werift window on the agent's), and the node's
// events reach the relay's listeners over HTTP.
import { afterEach, describe, expect, it } from 'vitest';
import { BridgeNode } from '../../../bridge/bridge-node';
import { startControlServer, type ControlServer } from '../../../bridge/control-server';
import { RelayEventForwarder } from '../../../bridge/event-forwarder';
import { NodeRegistration } from '../../../bridge/registration';
import { RelayLink } from '../../../bridge/relay-link';
import { MemoryBackend } from '../../../relay/backend/memory-backend';
import { RegisteredBridgeNodes } from '../../../relay/bridge-nodes';
import { startRelay, type BridgeEventReport, type RelayServer } from '../../../relay/server';
import { BRIDGE_AGENT_PATHS, CUSTOMER } from '../../../shared/bridge';
import { configureLogging } from '../../../shared/log';
import { APP_SECRET, incomingCall, postWebhook } from '../relay/webhook-fixtures';
import { AgentWindow } from './agent-window';
import { eventually, expectServiceFacing, HOST, quietLogger, ServiceCustomer, TONE_A, TONE_B } from './bridge-harness';
import { BRIDGE_TOKEN } from './control-fixtures';

configureLogging({ level: 'error' });

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

interface RemoteNode {
  relay: RelayServer;
  backend: MemoryBackend;
  node: BridgeNode;
  server: ControlServer;
  heard: BridgeEventReport[];
}

/** A relay, and a node on 127.0.0.1 registered with it the way `npm run bridge` runs one. */
async function remoteNode(options: { mediaTimeoutMs?: number } = {}): Promise<RemoteNode> {
  const backend = new MemoryBackend({ retentionMs: 600_000, dedupWindowMs: 60_000 });
  closing.push(() => backend.close());
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agentTokens: ['agent-token-0001-0123456789abcdef-0123'], heartbeatMs: 60_000, bridgeToken: BRIDGE_TOKEN, bridgeHeartbeatMs: 100, backend, logger: quietLogger });
  closing.push(() => relay.close());
  const heard: BridgeEventReport[] = [];
  relay.onBridgeEvent((report) => heard.push(report));

  const link = new RelayLink({ relayUrl: relay.url, bridgeToken: BRIDGE_TOKEN });
  closing.push(() => link.close());
  const events: { forwarder?: RelayEventForwarder } = {};
  const node = new BridgeNode({ bindAddress: HOST, publicAddress: HOST, logger: quietLogger, onEvent: (event) => events.forwarder?.send(event), ...options });
  closing.push(() => node.close());
  const server = await startControlServer({ control: node, bridgeToken: BRIDGE_TOKEN, host: HOST, logger: quietLogger });
  closing.push(() => server.close());
  const forwarder = new RelayEventForwarder({ relay: link, nodeId: 'node-rt', logger: quietLogger });
  closing.push(async () => forwarder.close());
  events.forwarder = forwarder;
  const registration = new NodeRegistration({
    relay: link,
    registration: { nodeId: 'node-rt', controlUrl: server.url, publicAddress: HOST, capacity: 10 },
    load: () => node.load(),
    logger: quietLogger,
  });
  closing.push(() => registration.stop());
  registration.start();
  await eventually('the node to register', async () => (await backend.nodes()).length === 1);
  return { relay, backend, node, server, heard };
}

function track<T extends { close(): Promise<void> }>(peer: T): T {
  closing.push(() => peer.close());
  return peer;
}

describe('a remote bridge node driven through its control API', () => {
  it('carries an incoming call: the relay picks the node, the customer and the agent hear each other, the node’s load and events reach the relay', async () => {
    const { backend, heard } = await remoteNode();
    const nodes = new RegisteredBridgeNodes(backend, BRIDGE_TOKEN, quietLogger);
    closing.push(() => nodes.close());
    const picked = await nodes.pick();
    expect(picked?.nodeId).toBe('node-rt');
    if (picked === undefined) return;
    const control = picked.control;

    const customer = track(new ServiceCustomer());
    const offer = await customer.peer.makeOffer();
    if (!offer.ok) throw new Error(offer.error.message);
    const prepared = await control.prepareIncoming('wacid.rt-1', offer.value);
    if (!prepared.ok) throw new Error(prepared.error.message);
    expectServiceFacing(prepared.value.answer, 'answer');
    expect(await customer.peer.applyAnswer(prepared.value.answer)).toEqual({ ok: true, value: undefined });

    const legOffer = await control.offerAgentLeg('wacid.rt-1', 'leg-a');
    if (!legOffer.ok) throw new Error(legOffer.error.message);
    const agent = track(new AgentWindow(TONE_A));
    expect(await control.applyAgentAnswer('wacid.rt-1', 'leg-a', await agent.answer(legOffer.value.offer))).toEqual({ ok: true, value: null });
    expect(await control.setRoutes('wacid.rt-1', { [CUSTOMER]: ['leg-a'], 'leg-a': [CUSTOMER] })).toEqual({ ok: true, value: null });
    expect(await control.connectCustomer('wacid.rt-1')).toEqual({ ok: true, value: null });

    await eventually('the customer to hear the agent’s tone', () => customer.hears(TONE_A) > 0.3);
    await eventually('the agent to hear the customer’s voice', () => agent.hears(TONE_A).rms > 0.02 && agent.hears(TONE_A).share < 0.05);
    await eventually('the node’s events at the relay', () => heard.length >= 2);
    // The two legs connect independently: either may be first.
    expect(heard.map((r) => [r.nodeId, r.event])).toHaveLength(2);
    expect(heard.map((r) => [r.nodeId, r.event])).toEqual(
      expect.arrayContaining([
        ['node-rt', { kind: 'leg_connected', callId: 'wacid.rt-1', legId: 'leg-a' }],
        ['node-rt', { kind: 'customer_connected', callId: 'wacid.rt-1' }],
      ]),
    );
    // The heartbeat carries the call to the relay's registry.
    await eventually('the node’s load at the relay', async () => (await backend.nodes())[0]?.calls === 1);

    const report = await control.report('wacid.rt-1');
    expect(report).toMatchObject({ ok: true, value: { callId: 'wacid.rt-1', customer: { state: 'connected' }, agents: { 'leg-a': { state: 'connected' } }, routes: { [CUSTOMER]: ['leg-a'], 'leg-a': [CUSTOMER] } } });

    // The node's refusals come back as the node said them.
    expect(await control.offerAgentLeg('wacid.unknown', 'leg-b')).toMatchObject({ ok: false, error: { code: 'not_found', httpStatus: 404 } });

    expect(await control.endCall('wacid.rt-1')).toEqual({ ok: true, value: null });
    expect(await control.endCall('wacid.rt-1')).toEqual({ ok: true, value: null });
    await eventually('the node’s load at the relay to drop', async () => (await backend.nodes())[0]?.calls === 0);
    expect(await control.report('wacid.rt-1')).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
  });

  it('carries an outgoing call: the customer leg’s offer for initiate, the window’s leg answered, the customer’s answer applied', async () => {
    const { backend } = await remoteNode();
    const nodes = new RegisteredBridgeNodes(backend, BRIDGE_TOKEN, quietLogger);
    closing.push(() => nodes.close());
    const picked = await nodes.pick();
    if (picked === undefined) throw new Error('no node picked');
    const control = picked.control;

    const dial = await control.prepareOutgoing('dial-rt-1');
    if (!dial.ok) throw new Error(dial.error.message);
    expectServiceFacing(dial.value.offer, 'offer');
    const agent = track(new AgentWindow(TONE_A));
    const legAnswer = await control.answerAgentLeg('dial-rt-1', 'leg-out', await agent.offer());
    if (!legAnswer.ok) throw new Error(legAnswer.error.message);
    await agent.applyAnswer(legAnswer.value.answer);
    expect(await control.bindOutgoing('dial-rt-1', 'wacid.rt-out')).toEqual({ ok: true, value: null });
    expect(await control.setRoutes('wacid.rt-out', { [CUSTOMER]: ['leg-out'], 'leg-out': [CUSTOMER] })).toEqual({ ok: true, value: null });

    const customer = track(new ServiceCustomer());
    const answered = await customer.peer.answerOffer(dial.value.offer);
    if (!answered.ok) throw new Error(answered.error.message);
    expect(await control.applyCustomerAnswer('wacid.rt-out', answered.value)).toEqual({ ok: true, value: null });
    await eventually('the customer to hear the agent’s tone', () => customer.hears(TONE_A) > 0.3);
    await eventually('the agent to hear the customer’s voice', () => agent.hears(TONE_A).rms > 0.02);
    expect(await control.closeAgentLeg('wacid.rt-out', 'leg-out')).toEqual({ ok: true, value: null });
    expect(await control.endCall('wacid.rt-out')).toEqual({ ok: true, value: null });
  });

  it('carries a call the relay bridges on its own: ring, the agent’s leg, claim, answer and accept go to the remote node over HTTP', async () => {
    const { relay, heard } = await remoteNode();
    const customer = track(new ServiceCustomer());
    const offer = await customer.peer.makeOffer();
    if (!offer.ok) throw new Error(offer.error.message);
    expect((await postWebhook(relay.url, incomingCall('wacid.rt-relay', { session: { sdp_type: 'offer', sdp: offer.value } }))).status).toBe(200);

    const agentToken = 'agent-token-0001-0123456789abcdef-0123';
    const ask = async (path: string, body?: unknown) => {
      const res = await fetch(`${relay.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    // The relay hands the ring to the node as it stores it; the agent's leg follows.
    const leg = await eventually('the agent’s leg', async () => {
      const answer = await ask(BRIDGE_AGENT_PATHS.leg('wacid.rt-relay'));
      return answer.status === 200 ? answer.body : undefined;
    });
    const agent = track(new AgentWindow(TONE_A));
    const windowAnswer = await agent.answer(String(leg.offer));
    expect((await ask('/calls/wacid.rt-relay/claim')).status).toBe(200);
    const handed = await ask(BRIDGE_AGENT_PATHS.answer('wacid.rt-relay'), { legId: leg.legId, sdp: windowAnswer });
    expect(handed.status).toBe(200);
    expectServiceFacing(String(handed.body.sdp), 'answer');
    expect(await customer.peer.applyAnswer(String(handed.body.sdp))).toEqual({ ok: true, value: undefined });
    expect((await ask(BRIDGE_AGENT_PATHS.accepted('wacid.rt-relay'))).status).toBe(200);

    await eventually('the customer to hear the agent’s tone', () => customer.hears(TONE_A) > 0.3);
    await eventually('the agent to hear the customer’s voice', () => agent.hears(TONE_A).rms > 0.02 && agent.hears(TONE_A).share < 0.05);
    await eventually('the customer’s leg event at the relay', () => heard.some((r) => r.event.kind === 'customer_connected' && r.event.callId === 'wacid.rt-relay'));
  });

  it('rejoins a member whose window went: its failed leg reaches the relay with its last packet time, and the new leg is made and heard on the remote node', { timeout: 30_000 }, async () => {
    const { relay, heard } = await remoteNode({ mediaTimeoutMs: 1_000 });
    const customer = track(new ServiceCustomer());
    const offer = await customer.peer.makeOffer();
    if (!offer.ok) throw new Error(offer.error.message);
    const callId = 'wacid.rt-rejoin';
    expect((await postWebhook(relay.url, incomingCall(callId, { session: { sdp_type: 'offer', sdp: offer.value } }))).status).toBe(200);
    const agentToken = 'agent-token-0001-0123456789abcdef-0123';
    const ask = async (path: string, body?: unknown) => {
      const res = await fetch(`${relay.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const leg = await eventually('the agent’s leg', async () => {
      const answer = await ask(BRIDGE_AGENT_PATHS.leg(callId));
      return answer.status === 200 ? answer.body : undefined;
    });
    const window = new AgentWindow(TONE_A);
    const windowAnswer = await window.answer(String(leg.offer));
    expect((await ask(`/calls/${callId}/claim`)).status).toBe(200);
    const handed = await ask(BRIDGE_AGENT_PATHS.answer(callId), { legId: leg.legId, sdp: windowAnswer });
    expect(await customer.peer.applyAnswer(String(handed.body.sdp))).toEqual({ ok: true, value: undefined });
    expect((await ask(BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
    await eventually('the customer to hear the agent’s tone', () => customer.hears(TONE_A) > 0.3);

    const goneAt = Date.now();
    await window.close();
    const failed = await eventually('the failed leg at the relay', () => heard.find((r) => r.event.kind === 'leg_failed' && r.event.callId === callId)?.event);
    expect(failed).toEqual({ kind: 'leg_failed', callId, legId: leg.legId, lastPacketAt: expect.any(Number) as number });
    expect(failed.kind === 'leg_failed' ? failed.lastPacketAt : undefined).toBeLessThanOrEqual(goneAt);

    const rejoin = await ask(BRIDGE_AGENT_PATHS.rejoin(callId));
    expect(rejoin.status).toBe(200);
    const reloaded = track(new AgentWindow(TONE_B));
    expect(await ask(BRIDGE_AGENT_PATHS.rejoinAnswer(callId), { legId: rejoin.body.legId, sdp: await reloaded.answer(String(rejoin.body.offer)) })).toEqual({ status: 200, body: { ok: true } });
    await eventually('the customer to hear the rejoined window', () => customer.hears(TONE_B) > 0.3, 10_000);
  });
});
