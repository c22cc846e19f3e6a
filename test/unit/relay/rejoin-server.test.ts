// The rejoin endpoints over HTTP (relay/REFERENCE.md "Rejoining"): a real relay, its agents' event
// streams, a node that records what it is asked, and a fake gateway. The endpoints' answers, a
// node's leg event starting the window, and the agent's `call.bridge_failed` reaching its stream
// before the relay's own terminate reaches the gateway.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalNodeEvents, localBridge } from '../../../relay/bridged-calls';
import { startRelay, type RelayServer } from '../../../relay/server';
import { BRIDGE_AGENT_PATHS } from '../../../shared/bridge';
import type { RelayEvent } from '../../../shared/events';
import { claimCall, postAsAgent, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { quietLogger, RecordingBridge } from './transfer-fixtures';
import { APP_SECRET, incomingCall, postWebhook } from './webhook-fixtures';

const { agents, tokens } = team('alice', 'bob');
const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const KEY = 'team-gateway-key-0123456789';

async function fakeGateway(): Promise<{ url: string; terminated: Array<{ path: string; body: unknown; at: number }> }> {
  const terminated: Array<{ path: string; body: unknown; at: number }> = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      terminated.push({ path: req.url ?? '', body: JSON.parse(raw) as unknown, at: Date.now() });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ messaging_product: 'chatapp', success: true }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closing.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, terminated };
}

async function relayWith(options: { rejoinWindowMs: number; gatewayUrl?: string }): Promise<{ relay: RelayServer; node: RecordingBridge; events: LocalNodeEvents }> {
  const node = new RecordingBridge();
  const events = new LocalNodeEvents();
  const relay = await startRelay({
    port: 0,
    appSecret: APP_SECRET,
    agents,
    heartbeatMs: 60_000,
    logger: quietLogger,
    bridgeNodes: localBridge(node, 'local', events),
    rejoinWindowMs: options.rejoinWindowMs,
    ...(options.gatewayUrl !== undefined ? { gateway: { url: options.gatewayUrl, apiKey: KEY } } : {}),
  });
  closing.push(() => relay.close());
  return { relay, node, events };
}

async function stream(relay: RelayServer, agentId: string): Promise<TestSseStream> {
  const opened = await openSse(relay.url, { token: tokens[agentId] });
  closing.push(() => opened.close());
  return opened;
}

const ask = (relay: RelayServer, agentId: string, path: string, body?: unknown) => postAsAgent(relay.url, tokens[agentId]!, path, body);

const has = (predicate: (event: RelayEvent) => boolean) => (s: TestSseStream) => s.envelopes.some((e) => predicate(e.event));

async function answered(relay: RelayServer, alice: TestSseStream, callId: string): Promise<string> {
  expect((await postWebhook(relay.url, incomingCall(callId))).status).toBe(200);
  await alice.waitFor(has((e) => e.type === 'call.incoming' && e.callId === callId), 'the ring');
  const leg = await ask(relay, 'alice', BRIDGE_AGENT_PATHS.leg(callId));
  expect(leg.status).toBe(200);
  expect((await claimCall(relay.url, tokens.alice!, callId)).status).toBe(200);
  expect((await ask(relay, 'alice', BRIDGE_AGENT_PATHS.answer(callId), { legId: leg.body.legId, sdp: 'window-answer' })).status).toBe(200);
  expect((await ask(relay, 'alice', BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
  return String(leg.body.legId);
}

describe('POST /calls/{id}/bridge/rejoin and /rejoin/answer', () => {
  it('offers a new leg to a member, takes its answer, and refuses the others', async () => {
    const { relay, node } = await relayWith({ rejoinWindowMs: 60_000 });
    const alice = await stream(relay, 'alice');
    const callId = 'wacid.rj-http';
    const oldLeg = await answered(relay, alice, callId);

    expect(await ask(relay, 'alice', BRIDGE_AGENT_PATHS.rejoin('wacid.none'))).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect(await ask(relay, 'bob', BRIDGE_AGENT_PATHS.rejoin(callId))).toMatchObject({ status: 403, body: { error: { code: 'forbidden', message: 'only a member of the call rejoins it' } } });
    const rejoin = await ask(relay, 'alice', BRIDGE_AGENT_PATHS.rejoin(callId));
    expect(rejoin).toMatchObject({ status: 200, body: { legId: expect.stringMatching(/^leg-/) as string, offer: `offer-${String(rejoin.body.legId)}` } });
    const legId = String(rejoin.body.legId);
    expect(node.routes.get(callId)).toEqual({ customer: ['music'] });

    expect(await ask(relay, 'alice', BRIDGE_AGENT_PATHS.rejoinAnswer(callId), { legId: 'leg-other', sdp: 'v=0' })).toMatchObject({ status: 403 });
    expect(await ask(relay, 'alice', BRIDGE_AGENT_PATHS.rejoinAnswer(callId), { legId, sdp: '' })).toMatchObject({ status: 400, body: { error: { code: 'invalid_input', field: 'sdp' } } });
    expect(await ask(relay, 'alice', BRIDGE_AGENT_PATHS.rejoinAnswer(callId), { legId, sdp: 'window-answer-2' })).toEqual({ status: 200, body: { ok: true } });
    expect(node.answers.get(legId)).toBe('window-answer-2');
    expect(node.routes.get(callId)).toEqual({ customer: [legId], [legId]: ['customer'] });
    expect(node.closed).toContain(oldLeg);
  });

  it('a node’s leg_failed starts the window; once over, the agent hears agent_not_back before the relay’s terminate reaches the gateway', async () => {
    const gateway = await fakeGateway();
    const { relay, node, events } = await relayWith({ rejoinWindowMs: 300, gatewayUrl: gateway.url });
    const alice = await stream(relay, 'alice');
    const callId = 'wacid.rj-expire';
    const legId = await answered(relay, alice, callId);

    events.emit({ kind: 'leg_failed', callId, legId, lastPacketAt: Date.now() });
    await alice.waitFor(has((e) => e.type === 'call.bridge_failed' && e.callId === callId), 'agent_not_back');
    const told = alice.envelopes.find((e) => e.event.type === 'call.bridge_failed')!;
    expect(told.event).toEqual({ type: 'call.bridge_failed', callId, reason: 'agent_not_back', awaySec: 0, timestamp: expect.any(Number) as number });
    const toldAt = Date.now();
    await expect.poll(() => gateway.terminated.length, { timeout: 5_000 }).toBe(1);
    expect(gateway.terminated[0]).toMatchObject({ path: '/chatapp/calls/terminate', body: { messaging_product: 'chatapp', call_id: callId, action: 'terminate' } });
    expect(gateway.terminated[0]!.at).toBeGreaterThanOrEqual(toldAt - 50);
    await expect.poll(() => node.endedCalls.includes(callId)).toBe(true);
    expect(await ask(relay, 'alice', BRIDGE_AGENT_PATHS.rejoin(callId))).toMatchObject({ status: 410, body: { error: { code: 'call_ended' } } });
    expect(await (await fetch(`${relay.url}/metrics`)).text()).toContain('relay_bridge_calls_failed_total{reason="agent_not_back"} 1');
  });

  it('a node whose clock runs a minute behind does not cut the window short: its last packet counts at most 20 s back', async () => {
    const { relay, events } = await relayWith({ rejoinWindowMs: 30_000 });
    const alice = await stream(relay, 'alice');
    const callId = 'wacid.rj-skew';
    const legId = await answered(relay, alice, callId);
    events.emit({ kind: 'leg_failed', callId, legId, lastPacketAt: Date.now() - 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(alice.envelopes.filter((e) => e.event.type === 'call.bridge_failed')).toEqual([]);
    expect((await ask(relay, 'alice', BRIDGE_AGENT_PATHS.rejoin(callId))).status).toBe(200);
  });

  it('without a gateway the customer is let go and the call kept until the service ends it', async () => {
    const { relay, node } = await relayWith({ rejoinWindowMs: 300 });
    const alice = await stream(relay, 'alice');
    const callId = 'wacid.rj-keyless';
    await answered(relay, alice, callId);
    expect((await ask(relay, 'alice', BRIDGE_AGENT_PATHS.rejoin(callId))).status).toBe(200);
    await alice.waitFor(has((e) => e.type === 'call.bridge_failed' && e.callId === callId), 'agent_not_back');
    await expect.poll(() => node.released).toEqual([callId]);
    expect(node.endedCalls).toEqual([]);
    expect(await ask(relay, 'alice', BRIDGE_AGENT_PATHS.rejoin(callId))).toMatchObject({ status: 410 });
    expect(await ask(relay, 'alice', BRIDGE_AGENT_PATHS.rejoinAnswer(callId), { legId: 'leg-late', sdp: 'v=0' })).toMatchObject({ status: 410, body: { error: { code: 'call_ended' } } });
  });
});
