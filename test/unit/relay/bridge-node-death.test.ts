// A bridge node that dies takes its calls with it (relay/REFERENCE.md "Bridge nodes"): a real relay
// with a real backend, real BridgeNodes behind their control servers, and the sandbox's customer
// making each call's offer. Which node holds each call is the team's record: the next call goes to
// the node with fewer, and the calls of a node that missed its heartbeats, left, cannot be reached,
// or lost a customer's leg end with `call.bridge_failed` for their agents, once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BridgeNode } from '../../../bridge/bridge-node';
import { startControlServer, type ControlServer } from '../../../bridge/control-server';
import { MemoryBackend } from '../../../relay/backend/memory-backend';
import { RedisBackend } from '../../../relay/backend/redis-backend';
import type { RelayBackend } from '../../../relay/backend/types';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { BRIDGE_AGENT_PATHS } from '../../../shared/bridge';
import { BRIDGE_NODE_PATHS } from '../../../shared/bridge-nodes';
import type { RelayEvent } from '../../../shared/events';
import { configureLogging } from '../../../shared/log';
import { FakeClock } from '../../support/fake-clock';
import { startRedis, uniquePrefix, type RedisHandle } from '../../support/redis-server';
import { HOST, quietLogger, ServiceCustomer } from '../bridge/bridge-harness';
import { BRIDGE_TOKEN, RecordingLogger } from '../bridge/control-fixtures';
import { claimCall, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { APP_SECRET, inboundText, incomingCall, postWebhook, terminatedCall } from './webhook-fixtures';

configureLogging({ level: 'error' });

/** The shortest heartbeat a relay asks for: the watcher looks every 50 ms, a node is gone 150 ms (of the backend's clock) after its last report. */
const HEARTBEAT_MS = 50;
const TTL_MS = 3 * HEARTBEAT_MS;

const { agents, tokens } = team('alice', 'bob');
const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

interface Answer {
  status: number;
  body: unknown;
}

async function send(relay: { url: string }, method: string, path: string, body?: unknown, token = BRIDGE_TOKEN): Promise<Answer> {
  const res = await fetch(`${relay.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

interface TestRelay {
  relay: RelayServer;
  backend: RelayBackend;
  clock: FakeClock;
  log: RecordingLogger;
}

async function relayOn(backend: RelayBackend, clock: FakeClock, options: Partial<RelayOptions> = {}): Promise<TestRelay> {
  const log = new RecordingLogger();
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, bridgeToken: BRIDGE_TOKEN, bridgeHeartbeatMs: HEARTBEAT_MS, backend, logger: log, ...options });
  closing.push(() => relay.close());
  return { relay, backend, clock, log };
}

/** A relay whose memory backend keeps the test's time: a node expires when the test says so. */
async function memoryRelay(): Promise<TestRelay> {
  const clock = new FakeClock(Date.now());
  const backend = new MemoryBackend({ retentionMs: 600_000, dedupWindowMs: 600_000, now: clock.now });
  closing.push(() => backend.close());
  return relayOn(backend, clock);
}

/** A node as `npm run bridge` runs one, with heartbeats the test sends: its media on 127.0.0.1, its control API, its registration. */
interface TestNode {
  nodeId: string;
  node: BridgeNode;
  server: ControlServer;
  /** One load report, as the node's heartbeat (answered 404 once the relay lost it). */
  beat(relay?: RelayServer): Promise<Answer>;
  /** The process is gone: no control API, no media, no more heartbeats. */
  kill(): Promise<void>;
}

async function startNode(relay: RelayServer, nodeId: string): Promise<TestNode> {
  const node = new BridgeNode({ bindAddress: HOST, publicAddress: HOST, logger: quietLogger });
  const server = await startControlServer({ control: node, bridgeToken: BRIDGE_TOKEN, host: HOST, logger: quietLogger });
  let alive = true;
  const kill = async () => {
    if (!alive) return;
    alive = false;
    await server.close();
    await node.close();
  };
  closing.push(kill);
  expect((await send(relay, 'POST', BRIDGE_NODE_PATHS.nodes, { nodeId, controlUrl: server.url, publicAddress: HOST })).status).toBe(200);
  return { nodeId, node, server, beat: (to = relay) => send(to, 'PUT', BRIDGE_NODE_PATHS.load(nodeId), { calls: node.load().calls }), kill };
}

/** Once the node has answered the service's offer for the call (its report waits for the customer's leg). */
async function answered(node: BridgeNode, callId: string): Promise<void> {
  await expect.poll(async () => (await node.report(callId)).ok).toBe(true);
}

/** A customer calls: the sandbox's customer makes the offer the service would send. */
async function ring(relay: RelayServer, callId: string): Promise<void> {
  const customer = new ServiceCustomer();
  closing.push(() => customer.close());
  const offer = await customer.peer.makeOffer();
  if (!offer.ok) throw new Error(offer.error.message);
  expect((await postWebhook(relay.url, incomingCall(callId, { session: { sdp_type: 'offer', sdp: offer.value } }))).status).toBe(200);
}

async function stream(relay: RelayServer, agent: string): Promise<TestSseStream> {
  const opened = await openSse(relay.url, { token: tokens[agent] });
  closing.push(() => opened.close());
  return opened;
}

const failures = (s: TestSseStream) => s.envelopes.map((e) => e.event).filter((e): e is Extract<RelayEvent, { type: 'call.bridge_failed' }> => e.type === 'call.bridge_failed');
const rang = (callId: string) => (s: TestSseStream) => s.envelopes.some((e) => e.event.type === 'call.incoming' && e.event.callId === callId);
const told = (callId: string) => (s: TestSseStream) => failures(s).some((e) => e.callId === callId);

let sentinels = 0;
/** Every event stored before now has reached these streams: a message to everyone has, and it was stored after. */
async function settled(relay: RelayServer, ...streams: TestSseStream[]): Promise<void> {
  const messageId = `wamid.sentinel-${++sentinels}`;
  await postWebhook(relay.url, inboundText(messageId, 'sentinel'));
  for (const s of streams) await s.waitFor((x) => x.envelopes.some((e) => e.event.type === 'message.inbound' && e.event.messageId === messageId), `the sentinel ${messageId}`);
}

/** Expiry by the backend's clock: `survivors` report just before the others' last report is three heartbeats old. */
async function letExpire(t: TestRelay, ...survivors: TestNode[]): Promise<void> {
  t.clock.advance(TTL_MS - 1);
  for (const node of survivors) expect((await node.beat()).status).toBe(200);
  t.clock.advance(2);
}

async function metric(relay: RelayServer, series: string): Promise<number> {
  const line = (await relay.metrics()).split('\n').find((l) => l.startsWith(`${series} `));
  if (line === undefined) throw new Error(`no sample ${series}`);
  return Number(line.split(' ')[1]);
}

const goneLines = (log: RecordingLogger) => log.lines.filter((l) => l.msg === 'a bridge node is gone: its calls end').map((l) => l.fields);

describe('relay: which node holds a bridged call', () => {
  it('places calls that ring one after another on different nodes before any heartbeat counts them, and drops a call’s placement when it ends', async () => {
    const t = await memoryRelay();
    const a = await startNode(t.relay, 'node-a');
    const b = await startNode(t.relay, 'node-b');
    const alice = await stream(t.relay, 'alice');
    await ring(t.relay, 'wacid.p1');
    await ring(t.relay, 'wacid.p2');
    await alice.waitFor((s) => rang('wacid.p1')(s) && rang('wacid.p2')(s), 'both rings');
    const first = await t.backend.callNode('wacid.p1');
    const second = await t.backend.callNode('wacid.p2');
    expect([first, second].sort()).toEqual(['node-a', 'node-b']);
    expect(await t.backend.callsOnNode(first!)).toEqual(['wacid.p1']);
    // The nodes reported nothing since: the backend's own count of their calls spread them.
    expect((await t.backend.nodes()).map((n) => n.calls)).toEqual([0, 0]);
    await expect.poll(() => a.node.load().calls + b.node.load().calls).toBe(2);

    await postWebhook(t.relay.url, terminatedCall('wacid.p1'));
    await expect.poll(() => t.backend.callNode('wacid.p1')).toBeUndefined();
    expect(await t.backend.callNode('wacid.p2')).toBe(second);
    await expect.poll(() => a.node.load().calls + b.node.load().calls).toBe(1);
  });
});

describe('relay: a bridge node that dies ends its calls', () => {
  it('a node that misses its heartbeats: its claimed call’s owner is told, nobody else; the other node’s call goes on', async () => {
    const t = await memoryRelay();
    const nodes = [await startNode(t.relay, 'node-a'), await startNode(t.relay, 'node-b')];
    const alice = await stream(t.relay, 'alice');
    const bob = await stream(t.relay, 'bob');
    await ring(t.relay, 'wacid.d1');
    await alice.waitFor(rang('wacid.d1'), 'the first ring');
    await ring(t.relay, 'wacid.d2');
    await alice.waitFor(rang('wacid.d2'), 'the second ring');
    expect((await claimCall(t.relay.url, tokens.alice!, 'wacid.d1')).status).toBe(200);
    const holder = await t.backend.callNode('wacid.d1');
    const dying = nodes.find((n) => n.nodeId === holder)!;
    const survivor = nodes.find((n) => n !== dying)!;
    expect(await t.backend.callNode('wacid.d2')).toBe(survivor.nodeId);
    // Each node has answered the service's offer (a request cut short by the kill would say "unreachable").
    await answered(dying.node, 'wacid.d1');
    await answered(survivor.node, 'wacid.d2');

    await dying.kill();
    await letExpire(t, survivor);
    await alice.waitFor(told('wacid.d1'), 'the owner to be told');
    expect(failures(alice)).toEqual([{ type: 'call.bridge_failed', callId: 'wacid.d1', reason: 'node_gone', timestamp: expect.any(Number) as number }]);
    await settled(t.relay, alice, bob);
    // The claimed call's event is its owner's alone; the other node's call goes on, untouched.
    expect(failures(bob)).toEqual([]);
    expect(failures(alice).map((e) => e.callId)).toEqual(['wacid.d1']);
    expect(await t.backend.callNode('wacid.d1')).toBeUndefined();
    expect(await t.backend.callsOnNode(dying.nodeId)).toEqual([]);
    expect(await t.backend.callNode('wacid.d2')).toBe(survivor.nodeId);
    expect(survivor.node.load().calls).toBe(1);

    // The relay's own notice: the node, its calls, the count.
    expect(t.log.lines.some((l) => l.level === 'warn' && l.msg === 'a bridge node missed its heartbeats and is gone' && l.fields?.nodeId === dying.nodeId)).toBe(true);
    expect(goneLines(t.log)).toEqual([expect.objectContaining({ nodeId: dying.nodeId, why: 'expired', calls: ['wacid.d1'] })]);
    expect(await metric(t.relay, 'relay_bridge_calls_failed_total{reason="node_gone"}')).toBe(1);
    expect(await metric(t.relay, 'relay_bridge_nodes')).toBe(1);
    // The dead node's heartbeat, were it to come back, is told to register again.
    expect(await dying.beat()).toMatchObject({ status: 404, body: { error: { code: 'unknown_node' } } });

    // A repeated connect of the lost call never rings it again.
    await ring(t.relay, 'wacid.d1');
    await settled(t.relay, alice, bob);
    expect(alice.envelopes.filter((e) => e.event.type === 'call.incoming' && e.event.callId === 'wacid.d1')).toHaveLength(1);
    // What the survivor prepared for the dropped connect is let go.
    await expect.poll(() => t.backend.callNode('wacid.d1')).toBeUndefined();
    await expect.poll(() => survivor.node.load().calls).toBe(1);
  });

  it('a ringing call nobody claimed: everyone it rings is told', async () => {
    const t = await memoryRelay();
    const node = await startNode(t.relay, 'node-r');
    const alice = await stream(t.relay, 'alice');
    const bob = await stream(t.relay, 'bob');
    await ring(t.relay, 'wacid.r1');
    await alice.waitFor(rang('wacid.r1'), 'the ring');
    await bob.waitFor(rang('wacid.r1'), 'the ring');
    await answered(node.node, 'wacid.r1');
    await node.kill();
    await letExpire(t);
    await alice.waitFor(told('wacid.r1'), 'alice to be told');
    await bob.waitFor(told('wacid.r1'), 'bob to be told');
    await settled(t.relay, alice, bob);
    expect(failures(alice)).toEqual([expect.objectContaining({ callId: 'wacid.r1', reason: 'node_gone' })]);
    expect(failures(bob)).toEqual([expect.objectContaining({ callId: 'wacid.r1', reason: 'node_gone' })]);
    expect(await metric(t.relay, 'relay_bridge_nodes')).toBe(0);
  });

  it('a node that leaves with calls takes them with it at once', async () => {
    const t = await memoryRelay();
    await startNode(t.relay, 'node-l');
    const alice = await stream(t.relay, 'alice');
    await ring(t.relay, 'wacid.l1');
    await alice.waitFor(rang('wacid.l1'), 'the ring');
    expect((await send(t.relay, 'DELETE', BRIDGE_NODE_PATHS.node('node-l'))).status).toBe(200);
    await alice.waitFor(told('wacid.l1'), 'alice to be told');
    expect(goneLines(t.log)).toEqual([expect.objectContaining({ nodeId: 'node-l', why: 'left', calls: ['wacid.l1'] })]);
  });

  it('a node whose control API cannot be reached for a call’s request: its calls end, the request is refused, and it takes no call until it registers again', async () => {
    const t = await memoryRelay();
    const node = await startNode(t.relay, 'node-u');
    const alice = await stream(t.relay, 'alice');
    const bob = await stream(t.relay, 'bob');
    await ring(t.relay, 'wacid.u1');
    await ring(t.relay, 'wacid.u2');
    await alice.waitFor((s) => rang('wacid.u1')(s) && rang('wacid.u2')(s), 'both rings');
    expect(await t.backend.callsOnNode('node-u')).toEqual(['wacid.u1', 'wacid.u2']);
    await answered(node.node, 'wacid.u1');
    await answered(node.node, 'wacid.u2');
    // The control API is gone; the heartbeats still come (a firewall, a crashed control server).
    await node.server.close();
    const leg = await send(t.relay, 'POST', BRIDGE_AGENT_PATHS.leg('wacid.u1'), {}, tokens.bob);
    expect(leg).toMatchObject({ status: 502, body: { error: { code: 'bridge_failed' } } });
    for (const s of [alice, bob]) await s.waitFor((x) => told('wacid.u1')(x) && told('wacid.u2')(x), 'both calls to end');
    expect(failures(bob).map((e) => [e.callId, e.reason]).sort()).toEqual([
      ['wacid.u1', 'node_gone'],
      ['wacid.u2', 'node_gone'],
    ]);
    expect(goneLines(t.log)).toEqual([expect.objectContaining({ nodeId: 'node-u', why: 'unreachable', calls: ['wacid.u1', 'wacid.u2'] })]);
    expect(await metric(t.relay, 'relay_bridge_nodes')).toBe(0);
    expect(await node.beat()).toMatchObject({ status: 404, body: { error: { code: 'unknown_node' } } });
    // No node is live: the next call rings direct.
    await ring(t.relay, 'wacid.u3');
    await alice.waitFor(rang('wacid.u3'), 'the direct ring');
    expect(alice.envelopes.find((e) => e.event.type === 'call.incoming' && e.event.callId === 'wacid.u3')?.event).not.toHaveProperty('bridged');
  });

  it('a customer leg that fails ends its call once the grace has passed, unless the service ended it meanwhile; a node that does not hold the call is not heard', async () => {
    const t = await memoryRelay();
    const node = await startNode(t.relay, 'node-c');
    const alice = await stream(t.relay, 'alice');
    for (const callId of ['wacid.c1', 'wacid.c2', 'wacid.c3']) {
      await ring(t.relay, callId);
      await alice.waitFor(rang(callId), `the ring of ${callId}`);
      expect((await claimCall(t.relay.url, tokens.alice!, callId)).status).toBe(200);
    }
    await expect.poll(() => node.node.load().calls).toBe(3);
    const event = (callId: string, nodeId = 'node-c') => send(t.relay, 'POST', BRIDGE_NODE_PATHS.events(nodeId), { kind: 'customer_failed', callId });
    const failedAt = Date.now();
    expect((await event('wacid.c1')).status).toBe(200);
    // The customer hung up: the leg closes as the terminate is on its way.
    expect((await event('wacid.c2')).status).toBe(200);
    await postWebhook(t.relay.url, terminatedCall('wacid.c2'));
    expect((await event('wacid.c3', 'node-other')).status).toBe(200);

    await alice.waitFor(told('wacid.c1'), 'the owner to be told');
    expect(Date.now() - failedAt).toBeGreaterThanOrEqual(2_900);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await settled(t.relay, alice);
    expect(failures(alice)).toEqual([{ type: 'call.bridge_failed', callId: 'wacid.c1', reason: 'customer_leg_failed', timestamp: expect.any(Number) as number }]);
    // The node let go of the failed call and of the ended one; the third goes on.
    await expect.poll(() => node.node.load().calls).toBe(1);
    expect(await t.backend.callsOnNode('node-c')).toEqual(['wacid.c3']);
    expect(await metric(t.relay, 'relay_bridge_calls_failed_total{reason="customer_leg_failed"}')).toBe(1);
  });
});

describe('relay: a bridge node that dies, across instances on one Redis', () => {
  let redis: RedisHandle;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('both instances see the node go; its call’s agents, on either, are told once', async () => {
    const prefix = uniquePrefix('relay-node-death');
    closing.push(() => redis.removeKeys(prefix));
    const clock = new FakeClock(Date.now());
    const open = async () => {
      const backend = await RedisBackend.open({ url: redis.url, keyPrefix: prefix, retentionMs: 600_000, dedupWindowMs: 600_000, now: clock.now });
      closing.push(() => backend.close());
      return backend;
    };
    const a = await relayOn(await open(), clock, { instanceId: 'relay-a' });
    const b = await relayOn(await open(), clock, { instanceId: 'relay-b' });
    const node = await startNode(a.relay, 'node-x');
    const survivor = await startNode(b.relay, 'node-y');
    // Both nodes hold a call already (another instance placed them): the next one goes to node-x.
    await survivor.beat();
    expect((await send(b.relay, 'PUT', BRIDGE_NODE_PATHS.load('node-y'), { calls: 1 })).status).toBe(200);
    const alice = await stream(b.relay, 'alice');
    const bob = await stream(a.relay, 'bob');
    await ring(a.relay, 'wacid.x1');
    await alice.waitFor(rang('wacid.x1'), 'the ring, through the other instance');
    expect(await b.backend.callNode('wacid.x1')).toBe('node-x');
    expect((await claimCall(b.relay.url, tokens.alice!, 'wacid.x1')).status).toBe(200);
    await answered(node.node, 'wacid.x1');

    // The other instance has looked at the live nodes since they registered (it looks every heartbeat).
    await new Promise((resolve) => setTimeout(resolve, 3 * HEARTBEAT_MS));
    await node.kill();
    clock.advance(TTL_MS - 1);
    expect((await send(b.relay, 'PUT', BRIDGE_NODE_PATHS.load('node-y'), { calls: 1 })).status).toBe(200);
    clock.advance(2);
    await alice.waitFor(told('wacid.x1'), 'alice to be told');
    // Both instances saw the node go; its calls were ended once, and the agents' event stored once.
    const sawGo = (log: RecordingLogger) => log.lines.some((l) => l.msg === 'a bridge node missed its heartbeats and is gone' && l.fields?.nodeId === 'node-x');
    await expect.poll(() => sawGo(a.log) && sawGo(b.log)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 4 * HEARTBEAT_MS));
    // Whichever instance got to its placements first ended the call (both may, at the same moment).
    const ended = [...goneLines(a.log), ...goneLines(b.log)];
    expect(ended.length).toBeGreaterThanOrEqual(1);
    for (const line of ended) expect(line).toMatchObject({ nodeId: 'node-x', why: 'expired', calls: ['wacid.x1'] });
    await settled(a.relay, alice, bob);
    expect(failures(alice)).toEqual([expect.objectContaining({ callId: 'wacid.x1', reason: 'node_gone' })]);
    expect(failures(bob)).toEqual([]);
    expect((await metric(a.relay, 'relay_bridge_calls_failed_total{reason="node_gone"}')) + (await metric(b.relay, 'relay_bridge_calls_failed_total{reason="node_gone"}'))).toBe(1);
    expect(await a.backend.callsOnNode('node-x')).toEqual([]);
  });
});
