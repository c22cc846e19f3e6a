// The bridge nodes' endpoints of a real relay over HTTP (relay/REFERENCE.md "Bridge nodes"):
// registration, the load as heartbeat, expiry, the least-loaded pick, two instances on one Redis,
// and who may use them.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hashAgentToken } from '../../../relay/agent-directory';
import { MemoryBackend } from '../../../relay/backend/memory-backend';
import { RedisBackend } from '../../../relay/backend/redis-backend';
import type { RelayBackend } from '../../../relay/backend/types';
import { startRelay, type BridgeEventReport, type RelayOptions, type RelayServer } from '../../../relay/server';
import { BRIDGE_NODE_PATHS, type BridgeNodeRegistration } from '../../../shared/bridge-nodes';
import { configureLogging, type Logger } from '../../../shared/log';
import { FakeClock } from '../../support/fake-clock';
import { startRedis, uniquePrefix, type RedisHandle } from '../../support/redis-server';
import { team, type ApiAnswer } from './agent-fixtures';
import { startControlServer } from '../../../bridge/control-server';
import { RecordingLogger, ScriptedControl } from '../bridge/control-fixtures';
import { openSse } from './sse-test-client';
import { APP_SECRET, incomingCall, postWebhook } from './webhook-fixtures';

configureLogging({ level: 'error' });

const BRIDGE_TOKEN = 'bridge-token-0123456789abcdef-0123456789';
const { agents, tokens } = team('alice');
const relays: RelayServer[] = [];
const backends: RelayBackend[] = [];

afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.close()));
  await Promise.all(backends.splice(0).map((b) => b.close()));
});

async function relayWith(options: Partial<RelayOptions> = {}): Promise<RelayServer> {
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, bridgeToken: BRIDGE_TOKEN, ...options });
  relays.push(relay);
  return relay;
}

const registration = (nodeId: string, extra: Partial<BridgeNodeRegistration> = {}): BridgeNodeRegistration => ({
  nodeId,
  controlUrl: `http://127.0.0.1:${9000 + nodeId.length}`,
  publicAddress: '203.0.113.7',
  ...extra,
});

async function send(relay: { url: string }, method: string, path: string, body?: unknown, token: string | null = BRIDGE_TOKEN): Promise<ApiAnswer & { headers: Headers }> {
  const res = await fetch(`${relay.url}${path}`, {
    method,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: kept as text.
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** `null`: no Authorization header at all. */
const register = (relay: { url: string }, body: unknown, token?: string | null) => send(relay, 'POST', BRIDGE_NODE_PATHS.nodes, body, token);
const reportLoad = (relay: { url: string }, nodeId: string, body: unknown, token?: string | null) => send(relay, 'PUT', BRIDGE_NODE_PATHS.load(nodeId), body, token);
const postEvent = (relay: { url: string }, nodeId: string, body: unknown, token?: string | null) => send(relay, 'POST', BRIDGE_NODE_PATHS.events(nodeId), body, token);
const leave = (relay: { url: string }, nodeId: string, token?: string | null) => send(relay, 'DELETE', BRIDGE_NODE_PATHS.node(nodeId), undefined, token);

/** The `relay_bridge_nodes` gauge as this instance's /metrics says it. */
async function liveNodes(relay: RelayServer): Promise<number> {
  const line = (await relay.metrics()).split('\n').find((l) => l.startsWith('relay_bridge_nodes '));
  if (line === undefined) throw new Error('no relay_bridge_nodes sample');
  return Number(line.split(' ')[1]);
}

describe('relay: bridge nodes register, report their load and leave', () => {
  it('answers a registration with the node id and the heartbeat, takes its load, and lets it leave', async () => {
    const relay = await relayWith({ bridgeHeartbeatMs: 2_000 });
    expect(await liveNodes(relay)).toBe(0);
    expect(await register(relay, registration('node-1', { capacity: 50 }))).toMatchObject({ status: 200, body: { nodeId: 'node-1', heartbeatMs: 2_000 } });
    expect(await liveNodes(relay)).toBe(1);
    const load = await reportLoad(relay, 'node-1', { calls: 3, cpuPercent: 12.5 });
    expect(load).toMatchObject({ status: 200, body: { nodeId: 'node-1', heartbeatMs: 2_000 } });
    expect(load.headers.get('cache-control')).toBe('no-store');
    // Registering again under the same id replaces the node (a restarted node); still one node.
    expect((await register(relay, registration('node-1'))).status).toBe(200);
    expect(await liveNodes(relay)).toBe(1);
    expect(await leave(relay, 'node-1')).toMatchObject({ status: 200, body: { nodeId: 'node-1' } });
    expect(await liveNodes(relay)).toBe(0);
    // Leaving twice is no error; a heartbeat after leaving is told to register again.
    expect((await leave(relay, 'node-1')).status).toBe(200);
    expect(await reportLoad(relay, 'node-1', { calls: 0 })).toMatchObject({
      status: 404,
      body: { error: { code: 'unknown_node', message: 'no live bridge node "node-1": register again (POST /bridge/nodes)', nodeId: 'node-1' } },
    });
  });

  it('uses a five-second heartbeat by default', async () => {
    const relay = await relayWith();
    expect(await register(relay, registration('node-1'))).toMatchObject({ status: 200, body: { heartbeatMs: 5_000 } });
  });

  it('refuses a body that breaks a rule with 400 naming the field', async () => {
    const relay = await relayWith();
    const refusals: Array<[unknown, string, string]> = [
      [{ ...registration('x'), nodeId: undefined }, 'nodeId', 'nodeId: is required and must be a string'],
      [registration('has space'), 'nodeId', 'nodeId: must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'],
      [registration('node-1', { controlUrl: 'ftp://10.0.0.1/' }), 'controlUrl', 'controlUrl: must be an http:// or https:// address'],
      [registration('node-1', { publicAddress: '203.0.113.7:5000' }), 'publicAddress', 'publicAddress: must be an IP address or a host name, without a port'],
      [registration('node-1', { capacity: 0 }), 'capacity', 'capacity: must be a whole number from 1 to 100000'],
      ['{"broken', '(root)', '(root): is required and must be an object'],
      [[], '(root)', '(root): is required and must be an object'],
    ];
    for (const [body, field, message] of refusals) {
      expect(await register(relay, body)).toMatchObject({ status: 400, body: { error: { code: 'invalid_input', field, message } } });
    }
    expect(await liveNodes(relay)).toBe(0);
    expect((await register(relay, registration('node-1'))).status).toBe(200);
    expect(await reportLoad(relay, 'node-1', { calls: -1 })).toMatchObject({ status: 400, body: { error: { field: 'calls', message: 'calls: must be a whole number from 0 to 100000' } } });
    expect(await reportLoad(relay, 'node-1', { calls: 1, cpuPercent: 101 })).toMatchObject({ status: 400, body: { error: { field: 'cpuPercent', message: 'cpuPercent: must be a number from 0 to 100' } } });
    expect(await reportLoad(relay, 'node-1', undefined)).toMatchObject({ status: 400, body: { error: { field: '(root)' } } });
    expect(await send(relay, 'PUT', '/bridge/nodes/bad%20id/load', { calls: 0 })).toMatchObject({ status: 400, body: { error: { code: 'invalid_input', field: 'nodeId' } } });
    expect(await send(relay, 'DELETE', '/bridge/nodes/%E0%A4%A', undefined)).toMatchObject({ status: 400, body: { error: { field: 'nodeId', message: 'nodeId: must be a URL-encoded node id' } } });
    expect(await send(relay, 'POST', BRIDGE_NODE_PATHS.nodes, 'x'.repeat(70 * 1024))).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large', limitBytes: 65_536 } } });
  });

  it('answers other methods 405 with Allow', async () => {
    const relay = await relayWith();
    const get = await send(relay, 'GET', BRIDGE_NODE_PATHS.nodes);
    expect(get).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });
    expect(get.headers.get('allow')).toBe('POST');
    expect((await send(relay, 'POST', BRIDGE_NODE_PATHS.load('node-1'), { calls: 0 })).headers.get('allow')).toBe('PUT');
    expect((await send(relay, 'PUT', BRIDGE_NODE_PATHS.node('node-1'), {})).headers.get('allow')).toBe('DELETE');
  });
});

describe('relay: a bridge node’s events', () => {
  it('hands each event to this instance’s listeners with the node and the time, and answers 200', async () => {
    const relay = await relayWith();
    const heard: BridgeEventReport[] = [];
    const stop = relay.onBridgeEvent((report) => heard.push(report));
    const before = Date.now();
    expect(await postEvent(relay, 'node-1', { kind: 'leg_failed', callId: 'wacid.1', legId: 'leg-1' })).toMatchObject({ status: 200, body: { received: true } });
    expect(await postEvent(relay, 'node-1', { kind: 'customer_connected', callId: 'wacid.1', extra: 'ignored' })).toMatchObject({ status: 200 });
    expect(heard.map(({ nodeId, event }) => ({ nodeId, event }))).toEqual([
      { nodeId: 'node-1', event: { kind: 'leg_failed', callId: 'wacid.1', legId: 'leg-1' } },
      { nodeId: 'node-1', event: { kind: 'customer_connected', callId: 'wacid.1' } },
    ]);
    for (const { receivedAt } of heard) expect(receivedAt).toBeGreaterThanOrEqual(before);
    stop();
    expect((await postEvent(relay, 'node-1', { kind: 'leg_closed', callId: 'wacid.1', legId: 'leg-1' })).status).toBe(200);
    expect(heard).toHaveLength(2);
  });

  it('takes the events of a node it does not know as live (it still tells what became of its calls)', async () => {
    const relay = await relayWith();
    const heard: BridgeEventReport[] = [];
    relay.onBridgeEvent((report) => heard.push(report));
    expect(await liveNodes(relay)).toBe(0);
    expect((await postEvent(relay, 'node-gone', { kind: 'customer_failed', callId: 'wacid.7' })).status).toBe(200);
    expect(heard.map((r) => r.nodeId)).toEqual(['node-gone']);
  });

  it('keeps giving events to the other listeners when one throws, and logs the failure', async () => {
    const errors: string[] = [];
    const logger: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: (msg) => errors.push(msg) };
    const relay = await relayWith({ logger });
    const heard: string[] = [];
    relay.onBridgeEvent(() => {
      throw new Error('listener failed');
    });
    relay.onBridgeEvent((report) => heard.push(report.event.kind));
    expect((await postEvent(relay, 'node-1', { kind: 'customer_failed', callId: 'wacid.1' })).status).toBe(200);
    expect(heard).toEqual(['customer_failed']);
    expect(errors).toEqual(['a bridge event listener failed']);
  });

  it('refuses an event that breaks a rule with 400 naming the field, and tells nobody', async () => {
    const relay = await relayWith();
    const heard: BridgeEventReport[] = [];
    relay.onBridgeEvent((report) => heard.push(report));
    const kinds = 'must be one of leg_connected, leg_failed, leg_closed, customer_connected, customer_failed';
    const refusals: Array<[unknown, string, string]> = [
      [{ kind: 'leg_exploded', callId: 'wacid.1', legId: 'leg-1' }, 'kind', `kind: ${kinds}`],
      [{ callId: 'wacid.1' }, 'kind', `kind: ${kinds}`],
      [{ kind: 'leg_failed', callId: 'wacid.1' }, 'legId', 'legId: is required and must be a string'],
      [{ kind: 'leg_failed', callId: 'wacid.1', legId: '-x' }, 'legId', 'legId: must be 1 to 128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit'],
      [{ kind: 'customer_failed', callId: '' }, 'callId', 'callId: must not be empty'],
      [{ kind: 'customer_failed', callId: 'x'.repeat(257) }, 'callId', 'callId: is too long (256 characters at most)'],
    ];
    for (const [body, field, message] of refusals) {
      expect(await postEvent(relay, 'node-1', body)).toMatchObject({ status: 400, body: { error: { code: 'invalid_input', field, message } } });
    }
    expect(await postEvent(relay, 'bad node', { kind: 'customer_failed', callId: 'wacid.1' })).toMatchObject({ status: 400, body: { error: { field: 'nodeId' } } });
    expect((await send(relay, 'GET', BRIDGE_NODE_PATHS.events('node-1'))).headers.get('allow')).toBe('POST');
    expect(heard).toEqual([]);
  });

  it('takes no event without the bridge token, and none at all without one configured', async () => {
    const relay = await relayWith();
    const heard: BridgeEventReport[] = [];
    relay.onBridgeEvent((report) => heard.push(report));
    const event = { kind: 'customer_failed', callId: 'wacid.1' };
    expect((await postEvent(relay, 'node-1', event, tokens.alice)).status).toBe(401);
    expect((await postEvent(relay, 'node-1', event, null)).status).toBe(401);
    const plain = await relayWith({ bridgeToken: undefined });
    plain.onBridgeEvent((report) => heard.push(report));
    expect(await postEvent(plain, 'node-1', event)).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect(heard).toEqual([]);
  });
});

describe('relay: who may use the bridge nodes’ endpoints', () => {
  it('refuses a missing or wrong token and an agent’s token with 401, and gives the bridge token nothing of an agent', async () => {
    const relay = await relayWith();
    for (const token of [null, tokens.alice!, `${BRIDGE_TOKEN}x`, '']) {
      const refused = await register(relay, registration('node-1'), token);
      expect(refused).toMatchObject({ status: 401, body: { error: { code: 'unauthorized', message: 'the bridge token is required (Authorization: Bearer <bridge token>)' } } });
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="relay-bridge"');
      expect((await reportLoad(relay, 'node-1', { calls: 0 }, token)).status).toBe(401);
      expect((await leave(relay, 'node-1', token)).status).toBe(401);
    }
    expect(await liveNodes(relay)).toBe(0);
    // The bridge token is no agent's.
    for (const [method, path, body] of [
      ['GET', '/me', undefined],
      ['PUT', '/presence', { status: 'available' }],
      ['POST', '/calls/wacid.1/claim', undefined],
      ['GET', '/events', undefined],
      ['GET', '/turn-credentials', undefined],
    ] as const) {
      expect(await send(relay, method, path, body)).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
    }
    // The agent still gets in with its own.
    expect((await send(relay, 'GET', '/me', undefined, tokens.alice)).status).toBe(200);
  });

  it('limits an address that keeps failing, as on the agent endpoints, whatever it presents then', async () => {
    const relay = await relayWith({ authFailureLimits: { maxFailures: 3 } });
    for (let i = 0; i < 3; i += 1) expect((await register(relay, registration('node-1'), 'wrong-token-0123456789abcdef0123456')).status).toBe(401);
    const limited = await register(relay, registration('node-1'));
    expect(limited).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await liveNodes(relay)).toBe(0);
  });

  it('answers 404 as for any unknown path when the relay has no bridge token', async () => {
    const relay = await relayWith({ bridgeToken: undefined });
    for (const answer of [await register(relay, registration('node-1')), await reportLoad(relay, 'node-1', { calls: 0 }), await leave(relay, 'node-1')]) {
      expect(answer).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    }
    expect(await liveNodes(relay)).toBe(0);
  });

  it('refuses to start with a bridge token a node cannot use, or one an agent holds', async () => {
    const start = (options: Partial<RelayOptions>) => startRelay({ port: 0, appSecret: APP_SECRET, agents, agentTokens: ['plain-agent-token-0123456789abcdef0'], ...options });
    await expect(start({ bridgeToken: 'short-bridge-token' })).rejects.toThrow('bridgeToken: must be at least 32 characters');
    await expect(start({ bridgeToken: 'bridge token with spaces 0123456789abcdef' })).rejects.toThrow('bridgeToken: must not contain spaces');
    await expect(start({ bridgeToken: 'plain-agent-token-0123456789abcdef0' })).rejects.toThrow('bridgeToken: must differ from every agent token');
    const aliceToken = 'alice-token-0123456789abcdef-0123456789';
    await expect(start({ bridgeToken: aliceToken, agents: [{ id: 'alice', name: 'Alice', tokenSha256: hashAgentToken(aliceToken).toUpperCase() }] })).rejects.toThrow(
      'bridgeToken: must differ from every agent token',
    );
    await expect(start({ bridgeToken: BRIDGE_TOKEN, bridgeHeartbeatMs: 10 })).rejects.toThrow('bridgeHeartbeatMs: must be a whole number from 50 to 600000');
    // A reloaded agents file that gives an agent the bridge token is refused; the agents stay as they were.
    const relay = await relayWith();
    expect(() => relay.setAgents([{ id: 'mallory', name: 'Mallory', tokenSha256: hashAgentToken(BRIDGE_TOKEN) }])).toThrow('bridgeToken: must differ from every agent token');
    expect((await send(relay, 'GET', '/me', undefined, tokens.alice)).status).toBe(200);
    // Mallory was not added: the bridge token still opens no agent endpoint.
    expect((await send(relay, 'GET', '/me')).status).toBe(401);
  });
});

describe('relay: bridge nodes expire and are picked least-loaded first', () => {
  it('forgets a node after three missed heartbeats; its next heartbeat is told to register again', async () => {
    const clock = new FakeClock(1_760_000_000_000);
    const backend = new MemoryBackend({ retentionMs: 600_000, dedupWindowMs: 60_000, now: clock.now });
    backends.push(backend);
    const relay = await relayWith({ backend, bridgeHeartbeatMs: 1_000 });
    await register(relay, registration('node-1'));
    await register(relay, registration('node-2'));
    clock.advance(2_999);
    expect((await reportLoad(relay, 'node-2', { calls: 0 })).status).toBe(200);
    expect(await liveNodes(relay)).toBe(2);
    clock.advance(1);
    expect(await liveNodes(relay)).toBe(1);
    expect((await reportLoad(relay, 'node-1', { calls: 0 })).status).toBe(404);
    expect((await register(relay, registration('node-1'))).status).toBe(200);
    expect((await reportLoad(relay, 'node-1', { calls: 0 })).status).toBe(200);
    expect((await backend.nodes()).map((n) => n.nodeId)).toEqual(['node-1', 'node-2']);
  });

  it('hands the next call to the node with fewer calls, as the nodes report them', async () => {
    const backend = new MemoryBackend({ retentionMs: 600_000, dedupWindowMs: 60_000 });
    backends.push(backend);
    const relay = await relayWith({ backend });
    await register(relay, registration('node-1'));
    await register(relay, registration('node-2'));
    await reportLoad(relay, 'node-1', { calls: 4 });
    await reportLoad(relay, 'node-2', { calls: 1 });
    expect((await backend.pickNode())?.nodeId).toBe('node-2');
    await reportLoad(relay, 'node-2', { calls: 6 });
    expect((await backend.pickNode())?.nodeId).toBe('node-1');
    await leave(relay, 'node-1');
    expect((await backend.pickNode())?.nodeId).toBe('node-2');
  });
});

describe('relay: bridge nodes across instances on one Redis', () => {
  let redis: RedisHandle;
  let prefix: string;

  beforeAll(async () => {
    redis = await startRedis();
    prefix = uniquePrefix('relay-bridge');
  });
  afterAll(async () => {
    await redis.removeKeys(prefix);
    await redis.stop();
  });

  it('shows every instance the same nodes: registered at one, heartbeat and leave at the other, picked alike', async () => {
    const a = await relayWith({ redisUrl: redis.url, redisPrefix: prefix, instanceId: 'relay-a' });
    const b = await relayWith({ redisUrl: redis.url, redisPrefix: prefix, instanceId: 'relay-b' });
    await register(a, registration('node-1'));
    await register(b, registration('node-2'));
    expect(await liveNodes(a)).toBe(2);
    expect(await liveNodes(b)).toBe(2);
    expect((await reportLoad(b, 'node-1', { calls: 7 })).status).toBe(200);
    expect((await reportLoad(a, 'node-2', { calls: 2 })).status).toBe(200);
    const backend = await RedisBackend.open({ url: redis.url, keyPrefix: prefix, retentionMs: 600_000, dedupWindowMs: 60_000 });
    backends.push(backend);
    expect((await backend.nodes()).map((n) => [n.nodeId, n.calls])).toEqual([
      ['node-1', 7],
      ['node-2', 2],
    ]);
    expect((await backend.pickNode())?.nodeId).toBe('node-2');
    expect((await leave(b, 'node-2')).status).toBe(200);
    expect(await liveNodes(a)).toBe(1);
    expect((await reportLoad(a, 'node-2', { calls: 0 })).status).toBe(404);
    expect((await backend.pickNode())?.nodeId).toBe('node-1');
  });
});

describe('relay: bridged calls go to the registered nodes', () => {
  it('hands a ringing call to the least-loaded node through its control API, and the ring says it is bridged', async () => {
    const busy = new ScriptedControl();
    const idle = new ScriptedControl();
    const busyNode = await startControlServer({ control: busy, bridgeToken: BRIDGE_TOKEN, logger: new RecordingLogger() });
    const idleNode = await startControlServer({ control: idle, bridgeToken: BRIDGE_TOKEN, logger: new RecordingLogger() });
    try {
      const relay = await relayWith();
      expect(await send(relay, 'GET', '/me', undefined, tokens.alice)).toMatchObject({ status: 200, body: { agentId: 'alice', bridged: true } });
      await register(relay, registration('node-busy', { controlUrl: busyNode.url }));
      await register(relay, registration('node-idle', { controlUrl: idleNode.url }));
      await reportLoad(relay, 'node-busy', { calls: 5 });
      const alice = await openSse(relay.url, { token: tokens.alice });
      try {
        expect((await postWebhook(relay.url, incomingCall('wacid.b1'))).status).toBe(200);
        await alice.waitFor((s) => s.envelopes.some((e) => e.event.type === 'call.incoming' && e.event.callId === 'wacid.b1'), 'the ring');
        const ring = alice.envelopes.find((e) => e.event.type === 'call.incoming')?.event;
        expect(ring).toMatchObject({ callId: 'wacid.b1', bridged: true });
        // The node answers the service's offer while the call rings (the relay does not wait for it to ring).
        await expect.poll(() => idle.calls.map((c) => [c.method, c.args[0]])).toEqual([['prepareIncoming', 'wacid.b1']]);
        expect(busy.calls).toEqual([]);
      } finally {
        alice.close();
      }
    } finally {
      await busyNode.close();
      await idleNode.close();
    }
  });

  it('lets a call ring direct when no node is live', async () => {
    const relay = await relayWith();
    const alice = await openSse(relay.url, { token: tokens.alice });
    try {
      await postWebhook(relay.url, incomingCall('wacid.d1'));
      await alice.waitFor((s) => s.envelopes.some((e) => e.event.type === 'call.incoming'), 'the ring');
      expect(alice.envelopes.find((e) => e.event.type === 'call.incoming')?.event).not.toHaveProperty('bridged');
    } finally {
      alice.close();
    }
  });
});

