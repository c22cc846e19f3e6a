// Several relay instances behind one URL share one Redis (relay/REFERENCE.md "Several instances").
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { configureLogging } from '../../../shared/log';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { relayDataDir, type RelayDataDir } from '../../support/relay-data-dir';
import { startRedis, uniquePrefix, type RedisHandle } from '../../support/redis-server';
import { claimCall, eventKeys, hasEvent, hasMessage, putPresence, team } from './agent-fixtures';
import { openSse, type SseOpenOptions, type TestSseStream } from './sse-test-client';
import { APP_SECRET, inboundText, incomingCall, postWebhook, terminatedCall } from './webhook-fixtures';

configureLogging({ level: 'error' });

const root = resolve(import.meta.dirname, '../../..');
const { agents, tokens } = team('alice', 'bob', 'carol');
let redis: RedisHandle;
let prefix: string;
const relays: RelayServer[] = [];
const streams: TestSseStream[] = [];
const children: ChildProcess[] = [];
const dataDirs: RelayDataDir[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});
beforeEach(() => {
  prefix = uniquePrefix('relay-instances');
});
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await Promise.all(
    children.splice(0).map(async (child) => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((done) => child.once('exit', done));
        child.kill('SIGKILL');
        await exited;
      }
    }),
  );
  await Promise.all(dataDirs.splice(0).map((data) => data.remove()));
  await Promise.all(relays.splice(0).map((r) => r.close()));
  await redis.removeKeys(prefix);
});

async function instance(options: Partial<RelayOptions> = {}): Promise<RelayServer> {
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, redisUrl: redis.url, redisPrefix: prefix, ...options });
  relays.push(relay);
  return relay;
}

async function connect(relay: { url: string }, agentId: string, options: Omit<SseOpenOptions, 'token'> = {}): Promise<TestSseStream> {
  const stream = await openSse(relay.url, { token: tokens[agentId], ...options });
  expect(stream.status).toBe(200);
  streams.push(stream);
  return stream;
}

describe('relay: several instances on one Redis', () => {
  it('reports the Redis backend and its instance', async () => {
    const a = await instance({ instanceId: 'relay-a' });
    const health = await fetch(`${a.url}/healthz`);
    expect(await health.json()).toMatchObject({ status: 'ok', backend: 'redis', instance: 'relay-a' });
    expect(a.epoch).toBe('relay-a');
  });

  it('delivers a webhook received by one instance to agents connected to the other, with the same cursors', async () => {
    const a = await instance();
    const b = await instance();
    const alice = await connect(a, 'alice');
    const bob = await connect(b, 'bob');
    await postWebhook(a.url, incomingCall('wacid.r1'));
    await postWebhook(b.url, inboundText('wamid.r2', 'via b'));
    for (const s of [alice, bob]) await s.waitFor((x) => hasMessage('wamid.r2')(x) && hasEvent('call.incoming:wacid.r1')(x), 'both events');
    // Each instance answers 200 first and stores after, so two webhooks at two instances may be
    // stored in either order; the order is one and the same for every agent.
    expect(eventKeys(alice).sort()).toEqual(['call.incoming:wacid.r1', 'message.inbound:wamid.r2']);
    expect(bob.envelopes).toEqual(alice.envelopes);
    // The same webhook at both instances (a retry landing elsewhere) is still one event.
    await postWebhook(b.url, incomingCall('wacid.r1'));
    await eventually(() => b.stats().eventsDropped === 1, 'the retry to be dropped as a duplicate');
    await postWebhook(a.url, inboundText('wamid.r3', 'end'));
    await bob.waitFor(hasMessage('wamid.r3'), 'the end');
    expect(eventKeys(bob).slice(2)).toEqual(['message.inbound:wamid.r3']);
  });

  it('lets a call be claimed once across both; its later events reach only the owner, wherever it is connected', async () => {
    const a = await instance();
    const b = await instance();
    const alice = await connect(a, 'alice');
    const bob = await connect(b, 'bob');
    await postWebhook(a.url, incomingCall('wacid.rc'));
    await alice.waitFor(hasEvent('call.incoming:wacid.rc'), 'alice rings');
    await bob.waitFor(hasEvent('call.incoming:wacid.rc'), 'bob rings');
    const [viaA, viaB] = await Promise.all([claimCall(a.url, tokens.alice!, 'wacid.rc'), claimCall(b.url, tokens.bob!, 'wacid.rc')]);
    expect([viaA.status, viaB.status].sort()).toEqual([200, 409]);
    const [winner, loser] = viaA.status === 200 ? [alice, bob] : [bob, alice];
    const winnerId = viaA.status === 200 ? 'alice' : 'bob';
    expect((viaA.status === 409 ? viaA : viaB).body).toEqual({ error: { code: 'already_claimed', message: 'Answered by another agent', agentId: winnerId } });

    await loser.waitFor(hasEvent('call.claimed:wacid.rc'), 'the answered-elsewhere event at the loser');
    await postWebhook(b.url, terminatedCall('wacid.rc'));
    await winner.waitFor(hasEvent('call.terminated:wacid.rc:COMPLETED'), 'the hang-up at the winner');
    await postWebhook(a.url, inboundText('wamid.rc-end', 'end'));
    await winner.waitFor(hasMessage('wamid.rc-end'), 'the end at the winner');
    await loser.waitFor(hasMessage('wamid.rc-end'), 'the end at the loser');
    expect(eventKeys(winner)).toEqual(['call.incoming:wacid.rc', 'call.claimed:wacid.rc', 'call.terminated:wacid.rc:COMPLETED', 'message.inbound:wamid.rc-end']);
    expect(eventKeys(loser)).toEqual(['call.incoming:wacid.rc', 'call.claimed:wacid.rc', 'message.inbound:wamid.rc-end']);
  });

  it('rings a call_waiting agent on one instance with an available one on the other; the claim of either reaches the other; no head start waits for it', async () => {
    // A head start far longer than this test: a call held for alice would reach bob after the marker.
    const a = await instance({ preferredAgentReleaseMs: 120_000 });
    const b = await instance({ preferredAgentReleaseMs: 120_000 });
    // Reported through both instances, so that neither waits for the other's mirror (the backend
    // tests cover the mirroring); the later report wins on both.
    for (const relay of [a, b]) {
      expect((await putPresence(relay.url, tokens.alice!, { status: 'call_waiting' })).status).toBe(200);
      expect((await putPresence(relay.url, tokens.bob!, { status: 'available' })).status).toBe(200);
      expect((await putPresence(relay.url, tokens.carol!, { status: 'on_call' })).status).toBe(200);
    }
    const alice = await connect(a, 'alice');
    const bob = await connect(b, 'bob');
    const carol = await connect(b, 'carol');
    await postWebhook(b.url, incomingCall('wacid.rcw1'));
    await alice.waitFor(hasEvent('call.incoming:wacid.rcw1'), 'alice rings during her call');
    await bob.waitFor(hasEvent('call.incoming:wacid.rcw1'), 'bob rings');
    expect((await claimCall(b.url, tokens.bob!, 'wacid.rcw1')).status).toBe(200);
    await alice.waitFor(hasEvent('call.claimed:wacid.rcw1'), 'the answered-elsewhere event at alice, on the other instance');

    // alice's voice_call button, while she is on a call: everyone rings at once.
    await postWebhook(a.url, incomingCall('wacid.rcw2', { cta_payload: JSON.stringify({ v: 1, agentId: 'alice' }) }));
    await alice.waitFor(hasEvent('call.incoming:wacid.rcw2'), 'alice rings for her button');
    await postWebhook(a.url, inboundText('wamid.rcw-end', 'end'));
    for (const s of [alice, bob, carol]) await s.waitFor(hasMessage('wamid.rcw-end'), 'the end');
    expect(eventKeys(bob)).toEqual(['call.incoming:wacid.rcw1', 'call.claimed:wacid.rcw1', 'call.incoming:wacid.rcw2', 'message.inbound:wamid.rcw-end']);
    expect(eventKeys(alice)).toEqual(eventKeys(bob));
    // carol is on a call without call waiting: neither call rings her (a ringing call's claim goes to
    // every session, as for anyone who might have rung).
    expect(eventKeys(carol)).toEqual(['call.claimed:wacid.rcw1', 'message.inbound:wamid.rcw-end']);
  });

  it('loses no event when an agent moves to the other instance after a graceful close, with its Last-Event-ID', async () => {
    const a = await instance();
    const b = await instance();
    const watcher = await connect(b, 'carol');
    const alice = await connect(a, 'alice');
    let sent = 0;
    let stop = false;
    // Webhooks keep arriving at both instances while one of them goes away.
    const sender = (async () => {
      while (!stop) {
        sent += 1;
        const target = sent % 2 === 0 ? a : b;
        const status = (await postWebhook(target.url, inboundText(`wamid.move${sent}`, 'x')).catch(() => ({ status: 0 }))).status;
        // A 503 or a refused connection from the closing instance: the gateway retries, here at the other.
        if (status !== 200) await postWebhook(b.url, inboundText(`wamid.move${sent}`, 'x'));
      }
    })();
    await alice.waitFor((x) => x.envelopes.length >= 10, 'traffic at alice');
    await a.close();
    await alice.waitFor((x) => x.ended, 'the drained stream to end');
    const moved = await connect(b, 'alice', { lastEventId: alice.ids.at(-1) });
    const target = sent + 10;
    await watcher.waitFor((x) => x.envelopes.length >= target, 'more traffic');
    stop = true;
    await sender;
    await postWebhook(b.url, inboundText('wamid.move-end', 'end'));
    await watcher.waitFor(hasMessage('wamid.move-end'), 'the end at the watcher');
    await moved.waitFor(hasMessage('wamid.move-end'), 'the end at alice');
    const all = watcher.envelopes.map((e) => e.id);
    expect([...alice.envelopes, ...moved.envelopes].map((e) => e.id)).toEqual(all);
  });

  it('loses no event when an instance is killed and its agents reconnect to the other', async () => {
    const b = await instance({ agentTokens: ['legacy-token-0001-0123456789abcdef'] });
    const killed = await spawnRelay(['--redis', redis.url, '--redis-prefix', prefix, '--agent-token', 'legacy-token-0001-0123456789abcdef']);
    const watcher = await connect(b, 'carol');
    const onKilled = await openSse(killed.url, { token: 'legacy-token-0001-0123456789abcdef' });
    streams.push(onKilled);
    for (let i = 1; i <= 5; i += 1) await postWebhook(b.url, inboundText(`wamid.kill${i}`, 'x'));
    await onKilled.waitFor(hasMessage('wamid.kill5'), 'events through the doomed instance');
    killed.child.kill('SIGKILL');
    await onKilled.waitFor((x) => x.ended, 'the stream to break');
    for (let i = 6; i <= 10; i += 1) await postWebhook(b.url, inboundText(`wamid.kill${i}`, 'x'));
    const resumed = await openSse(b.url, { token: 'legacy-token-0001-0123456789abcdef', lastEventId: onKilled.ids.at(-1) });
    streams.push(resumed);
    await resumed.waitFor(hasMessage('wamid.kill10'), 'the events missed while reconnecting');
    await watcher.waitFor(hasMessage('wamid.kill10'), 'everything at the watcher');
    expect([...onKilled.envelopes, ...resumed.envelopes].map((e) => e.id)).toEqual(watcher.envelopes.map((e) => e.id));
  });
});

async function eventually(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 10));
  }
}

async function spawnRelay(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const data = await relayDataDir();
  dataDirs.push(data);
  const child = spawn(process.execPath, ['--import', 'tsx', 'relay/cli.ts', '--port', '0', '--app-secret', APP_SECRET, '--log-level', 'error', ...args, ...data.flags], {
    cwd: root,
    env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RELAY_'))),
  });
  children.push(child);
  let stdout = '';
  const url = await new Promise<string>((done, fail) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /relay listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match) done(match[1]!);
    });
    child.on('exit', () => fail(new Error(`the relay exited early: ${stdout}`)));
  });
  return { url, child };
}
