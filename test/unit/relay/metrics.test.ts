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

/** A strict reader of the Prometheus text format: every line is a comment or a sample, or it throws. */
function parsePrometheus(text: string): { samples: Sample[]; types: Map<string, string>; help: Set<string> } {
  expect(text.endsWith('\n')).toBe(true);
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const help = new Set<string>();
  for (const line of text.slice(0, -1).split('\n')) {
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    const helpLine = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+$/.exec(line);
    if (helpLine) {
      help.add(helpLine[1]!);
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
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const parsed = parsePrometheus(await res.text());
  const value = (name: string, labels: Record<string, string> = {}) => {
    const found = parsed.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length);
    if (!found) throw new Error(`no sample ${name} ${JSON.stringify(labels)}`);
    return found.value;
  };
  return { ...parsed, value };
}

describe('relay: metrics', () => {
  it('exposes every metric of the contract in Prometheus text, and the counts move', async () => {
    const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000 });
    relays.push(relay);
    const before = await scrape(relay);
    const declared = {
      relay_webhooks_received_total: 'counter',
      relay_webhooks_rejected_total: 'counter',
      relay_events_stored_total: 'counter',
      relay_events_dropped_total: 'counter',
      relay_events_delivered_total: 'counter',
      relay_connected_agents: 'gauge',
      relay_delivery_latency_seconds: 'histogram',
      process_resident_memory_bytes: 'gauge',
    };
    expect(Object.fromEntries(before.types)).toEqual(declared);
    for (const name of Object.keys(declared)) expect(before.help.has(name)).toBe(true);
    for (const reason of ['signature', 'too_large', 'malformed']) expect(before.value('relay_webhooks_rejected_total', { reason })).toBe(0);
    for (const reason of ['duplicate', 'tombstoned', 'stale']) expect(before.value('relay_events_dropped_total', { reason })).toBe(0);
    expect(before.value('relay_connected_agents')).toBe(0);
    expect(before.value('process_resident_memory_bytes')).toBeGreaterThan(0);
    const les = before.samples.filter((s) => s.name === 'relay_delivery_latency_seconds_bucket').map((s) => s.labels.le);
    expect(les).toEqual([...LATENCY_BUCKETS_SECONDS.map(String), '+Inf']);
    expect(les.slice(0, -1)).toEqual(['0.001', '0.002', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1']);

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
    expect(after.value('relay_delivery_latency_seconds_sum')).toBeGreaterThanOrEqual(0);
    expect(relay.metrics()).toContain('relay_events_stored_total 3');
  });
});
