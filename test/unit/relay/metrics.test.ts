import { afterEach, describe, expect, it } from 'vitest';
import { configureLogging } from '../../../shared/log';
import { LATENCY_BUCKETS_SECONDS } from '../../../relay/metrics';
import { startRelay, type RelayServer } from '../../../relay/server';
import { hasMessage, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { APP_SECRET, inboundText, incomingCall, postWebhook, terminatedCall, unixSeconds } from './webhook-fixtures';

configureLogging({ level: 'error' });

const { agents, tokens } = team('alice', 'bob');
const relays: RelayServer[] = [];
const streams: TestSseStream[] = [];

afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await Promise.all(relays.splice(0).map((r) => r.close()));
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * A strict reader of the Prometheus text format: every line is a comment, a sample or empty (the
 * format allows empty lines; prom-client puts one between metric families), or it throws.
 */
function parsePrometheus(text: string): { samples: Sample[]; types: Map<string, string>; help: Map<string, string> } {
  expect(text.endsWith('\n')).toBe(true);
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    const helpLine = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$/.exec(line);
    if (helpLine) {
      help.set(helpLine[1]!, helpLine[2]!);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*",?)*)\})? (-?[0-9.e+-]+|\+Inf|NaN)$/.exec(line);
    if (!sample) throw new Error(`not a Prometheus line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (sample[2] ?? '').split(',').filter(Boolean)) {
      const [k, v] = pair.split('=') as [string, string];
      labels[k] = v.slice(1, -1);
    }
    samples.push({ name: sample[1]!, labels, value: Number(sample[3]) });
  }
  return { samples, types, help };
}

async function scrape(relay: RelayServer) {
  const res = await fetch(`${relay.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  const parsed = parsePrometheus(await res.text());
  const value = (name: string, labels: Record<string, string> = {}) => {
    const found = parsed.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length);
    if (!found) throw new Error(`no sample ${name} ${JSON.stringify(labels)}`);
    return found.value;
  };
  return { ...parsed, value };
}

/** The contract of relay/REFERENCE.md "Metrics": dashboards and alerts are written against these names, types, labels and help texts. */
const CONTRACT = {
  relay_webhooks_received_total: { type: 'counter', help: 'Webhooks accepted (answered 200).' },
  relay_webhooks_rejected_total: { type: 'counter', help: 'Webhooks refused, by reason.' },
  relay_events_stored_total: { type: 'counter', help: 'Events that passed the delivery rules and were stored.' },
  relay_events_dropped_total: { type: 'counter', help: 'Events dropped by the delivery rules, by reason.' },
  relay_events_delivered_total: { type: 'counter', help: 'Events written to agent streams, once per session.' },
  relay_connected_agents: { type: 'gauge', help: 'Open agent event streams (sessions) on this instance.' },
  relay_delivery_latency_seconds: { type: 'histogram', help: 'From receiving a webhook to writing its event to an agent stream (live deliveries).' },
  relay_auth_failures_total: { type: 'counter', help: 'Agent requests refused for a missing or unknown token (answered 401).' },
  relay_rate_limited_total: { type: 'counter', help: 'Agent requests refused because their address failed authentication too often (answered 429).' },
  relay_bridge_nodes: { type: 'gauge', help: 'Live bridge nodes registered with the team (every instance counts the same nodes).' },
  relay_bridge_calls_failed_total: { type: 'counter', help: 'Bridged calls ended because the bridge lost them, by reason (counted by the instance that told their agents).' },
  process_resident_memory_bytes: { type: 'gauge', help: 'Resident memory size in bytes.' },
} as const;

const LATENCY_BOUNDS = ['0.001', '0.002', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '+Inf'];

/** Every series of the contract, as `name{label="value",…}`, sorted. */
const CONTRACT_SERIES = [
  'relay_webhooks_received_total',
  ...['signature', 'too_large', 'malformed'].map((reason) => `relay_webhooks_rejected_total{reason="${reason}"}`),
  'relay_events_stored_total',
  ...['duplicate', 'tombstoned', 'stale'].map((reason) => `relay_events_dropped_total{reason="${reason}"}`),
  'relay_events_delivered_total',
  'relay_connected_agents',
  ...LATENCY_BOUNDS.map((le) => `relay_delivery_latency_seconds_bucket{le="${le}"}`),
  'relay_delivery_latency_seconds_sum',
  'relay_delivery_latency_seconds_count',
  'relay_auth_failures_total',
  'relay_rate_limited_total',
  'relay_bridge_nodes',
  ...['node_gone', 'customer_leg_failed', 'agent_not_back'].map((reason) => `relay_bridge_calls_failed_total{reason="${reason}"}`),
  'process_resident_memory_bytes',
].sort();

const seriesOf = (samples: readonly Sample[]): string[] =>
  samples
    .map((s) => {
      const labels = Object.entries(s.labels)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}="${v}"`);
      return labels.length === 0 ? s.name : `${s.name}{${labels.join(',')}}`;
    })
    .sort();

describe('relay: metrics', () => {
  it('exposes every metric of the contract in Prometheus text, and the counts move', async () => {
    const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000 });
    relays.push(relay);
    const before = await scrape(relay);
    expect(Object.fromEntries(before.types)).toEqual(Object.fromEntries(Object.entries(CONTRACT).map(([name, { type }]) => [name, type])));
    expect(Object.fromEntries(before.help)).toEqual(Object.fromEntries(Object.entries(CONTRACT).map(([name, { help }]) => [name, help])));
    // Every series is there before anything happened (a rate() needs its first sample), and no other.
    expect(seriesOf(before.samples)).toEqual(CONTRACT_SERIES);
    for (const reason of ['signature', 'too_large', 'malformed']) expect(before.value('relay_webhooks_rejected_total', { reason })).toBe(0);
    for (const reason of ['duplicate', 'tombstoned', 'stale']) expect(before.value('relay_events_dropped_total', { reason })).toBe(0);
    expect(before.value('relay_webhooks_received_total')).toBe(0);
    expect(before.value('relay_auth_failures_total')).toBe(0);
    expect(before.value('relay_rate_limited_total')).toBe(0);
    expect(before.value('relay_events_stored_total')).toBe(0);
    expect(before.value('relay_events_delivered_total')).toBe(0);
    expect(before.value('relay_connected_agents')).toBe(0);
    expect(before.value('relay_bridge_nodes')).toBe(0);
    for (const reason of ['node_gone', 'customer_leg_failed', 'agent_not_back']) expect(before.value('relay_bridge_calls_failed_total', { reason })).toBe(0);
    expect(before.value('relay_delivery_latency_seconds_count')).toBe(0);
    expect(before.value('relay_delivery_latency_seconds_sum')).toBe(0);
    const les = before.samples.filter((s) => s.name === 'relay_delivery_latency_seconds_bucket').map((s) => s.labels.le);
    expect(les).toEqual([...LATENCY_BUCKETS_SECONDS.map(String), '+Inf']);
    expect(les).toEqual(LATENCY_BOUNDS);

    const alice = await openSse(relay.url, { token: tokens.alice });
    const bob = await openSse(relay.url, { token: tokens.bob });
    streams.push(alice, bob);
    await postWebhook(relay.url, incomingCall('wacid.m1'));
    await postWebhook(relay.url, incomingCall('wacid.m1')); // duplicate
    await postWebhook(relay.url, terminatedCall('wacid.m2'));
    await postWebhook(relay.url, incomingCall('wacid.m2')); // tombstoned
    await postWebhook(relay.url, incomingCall('wacid.m3', { timestamp: unixSeconds(Date.now() - 120_000) })); // stale
    await postWebhook(relay.url, inboundText('wamid.m4', 'x'), { secret: 'wrong-secret' });
    await postWebhook(relay.url, '{"broken');
    await postWebhook(relay.url, Buffer.alloc(3 * 1024 * 1024 + 1, 0x20));
    await postWebhook(relay.url, inboundText('wamid.m5', 'x'));
    await alice.waitFor(hasMessage('wamid.m5'), 'the last event at alice');
    await bob.waitFor(hasMessage('wamid.m5'), 'the last event at bob');

    const after = await scrape(relay);
    expect(seriesOf(after.samples)).toEqual(CONTRACT_SERIES);
    expect(after.value('relay_webhooks_received_total')).toBe(6);
    expect(after.value('relay_webhooks_rejected_total', { reason: 'signature' })).toBe(1);
    expect(after.value('relay_webhooks_rejected_total', { reason: 'malformed' })).toBe(1);
    expect(after.value('relay_webhooks_rejected_total', { reason: 'too_large' })).toBe(1);
    expect(after.value('relay_events_stored_total')).toBe(3);
    expect(after.value('relay_events_dropped_total', { reason: 'duplicate' })).toBe(1);
    expect(after.value('relay_events_dropped_total', { reason: 'tombstoned' })).toBe(1);
    expect(after.value('relay_events_dropped_total', { reason: 'stale' })).toBe(1);
    expect(after.value('relay_events_delivered_total')).toBe(6);
    expect(after.value('relay_connected_agents')).toBe(2);

    // Every live delivery is one observation; buckets are cumulative and end at the count.
    const buckets = after.samples.filter((s) => s.name === 'relay_delivery_latency_seconds_bucket').map((s) => s.value);
    expect(after.value('relay_delivery_latency_seconds_count')).toBe(6);
    expect(buckets.at(-1)).toBe(6);
    for (let i = 1; i < buckets.length; i += 1) expect(buckets[i]).toBeGreaterThanOrEqual(buckets[i - 1]!);
    // Seconds, not milliseconds: six local deliveries take well under a minute in all.
    expect(after.value('relay_delivery_latency_seconds_sum')).toBeGreaterThanOrEqual(0);
    expect(after.value('relay_delivery_latency_seconds_sum')).toBeLessThan(60);

    // The relay runs in this process: its resident memory is this process's, read at the scrape.
    const rss = process.memoryUsage.rss();
    expect(after.value('process_resident_memory_bytes')).toBeGreaterThan(rss / 2);
    expect(after.value('process_resident_memory_bytes')).toBeLessThan(rss * 2);

    // stats() counts the same things.
    expect(relay.stats()).toMatchObject({ webhooksReceived: 6, webhooksRejected: 3, eventsStored: 3, eventsDropped: 3, eventsDelivered: 6, connectedAgents: 2 });
    expect(await relay.metrics()).toContain('\nrelay_events_stored_total 3\n');

    // The gauge is read at each scrape: a closed stream is gone from the next one.
    bob.close();
    await expect.poll(async () => (await scrape(relay)).value('relay_connected_agents')).toBe(1);
  });

  it('counts each relay of one process on its own', async () => {
    const first = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000 });
    const second = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000 });
    relays.push(first, second);
    const alice = await openSse(first.url, { token: tokens.alice });
    streams.push(alice);
    await postWebhook(first.url, inboundText('wamid.p1', 'x'));
    await postWebhook(first.url, inboundText('wamid.p1', 'x')); // duplicate
    await postWebhook(first.url, '{"broken');
    await alice.waitFor(hasMessage('wamid.p1'), 'the message at alice');
    await postWebhook(second.url, inboundText('wamid.p2', 'x'), { secret: 'wrong-secret' });

    const one = await scrape(first);
    const two = await scrape(second);
    expect(seriesOf(one.samples)).toEqual(CONTRACT_SERIES);
    expect(seriesOf(two.samples)).toEqual(CONTRACT_SERIES);

    expect(one.value('relay_webhooks_received_total')).toBe(2);
    expect(one.value('relay_webhooks_rejected_total', { reason: 'malformed' })).toBe(1);
    expect(one.value('relay_webhooks_rejected_total', { reason: 'signature' })).toBe(0);
    expect(one.value('relay_events_stored_total')).toBe(1);
    expect(one.value('relay_events_dropped_total', { reason: 'duplicate' })).toBe(1);
    expect(one.value('relay_events_delivered_total')).toBe(1);
    expect(one.value('relay_delivery_latency_seconds_count')).toBe(1);
    expect(one.value('relay_connected_agents')).toBe(1);

    expect(two.value('relay_webhooks_received_total')).toBe(0);
    expect(two.value('relay_webhooks_rejected_total', { reason: 'malformed' })).toBe(0);
    expect(two.value('relay_webhooks_rejected_total', { reason: 'signature' })).toBe(1);
    expect(two.value('relay_events_stored_total')).toBe(0);
    expect(two.value('relay_events_dropped_total', { reason: 'duplicate' })).toBe(0);
    expect(two.value('relay_events_delivered_total')).toBe(0);
    expect(two.value('relay_delivery_latency_seconds_count')).toBe(0);
    expect(two.value('relay_connected_agents')).toBe(0);

    expect(first.stats()).toMatchObject({ webhooksReceived: 2, webhooksRejected: 1, eventsStored: 1, eventsDropped: 1, eventsDelivered: 1 });
    expect(second.stats()).toMatchObject({ webhooksReceived: 0, webhooksRejected: 1, eventsStored: 0, eventsDropped: 0, eventsDelivered: 0 });
  });

  it('counts the team’s live bridge nodes at each scrape', async () => {
    const bridgeToken = 'bridge-token-0123456789abcdef-0123456789';
    const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, bridgeToken });
    relays.push(relay);
    const node = (method: string, path: string, body?: unknown) =>
      fetch(`${relay.url}${path}`, { method, headers: { authorization: `Bearer ${bridgeToken}`, 'content-type': 'application/json' }, body: body === undefined ? null : JSON.stringify(body) });
    expect((await scrape(relay)).value('relay_bridge_nodes')).toBe(0);
    for (const nodeId of ['node-1', 'node-2']) expect((await node('POST', '/bridge/nodes', { nodeId, controlUrl: 'http://10.0.0.2:8790', publicAddress: '10.0.0.2' })).status).toBe(200);
    const two = await scrape(relay);
    expect(seriesOf(two.samples)).toEqual(CONTRACT_SERIES);
    expect(two.value('relay_bridge_nodes')).toBe(2);
    expect((await node('DELETE', '/bridge/nodes/node-1')).status).toBe(200);
    expect((await scrape(relay)).value('relay_bridge_nodes')).toBe(1);
  });
});
