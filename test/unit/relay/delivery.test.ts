import { afterEach, describe, expect, it } from 'vitest';
import type { RelayEnvelope } from '../../../shared/events';
import { configureLogging } from '../../../shared/log';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { eventKey, hasMessage, team } from './agent-fixtures';
import { openSse, type SseOpenOptions, type TestSseStream } from './sse-test-client';
import { APP_SECRET, OFFER_SDP, inboundText, incomingCall, postWebhook, terminatedCall } from './webhook-fixtures';

configureLogging({ level: 'error' });

const { agents, tokens } = team('alice', 'bob', 'carol');
const relays: RelayServer[] = [];
const streams: TestSseStream[] = [];

afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await Promise.all(relays.splice(0).map((r) => r.close()));
});

async function relayWith(options: Partial<RelayOptions> = {}): Promise<RelayServer> {
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, ...options });
  relays.push(relay);
  return relay;
}

async function connect(relay: RelayServer, agentId: string, options: Omit<SseOpenOptions, 'token'> = {}): Promise<TestSseStream> {
  const stream = await openSse(relay.url, { token: tokens[agentId], ...options });
  expect(stream.status).toBe(200);
  streams.push(stream);
  return stream;
}

const ids = (envelopes: RelayEnvelope[]) => envelopes.map((e) => e.id);

describe('relay: a slow or stuck agent', () => {
  it('never delays the others, is disconnected past its buffer, and resumes by cursor without a gap', async () => {
    const relay = await relayWith({ maxClientBufferBytes: 256 * 1024 });
    const fast = await connect(relay, 'alice');
    const stuck = await connect(relay, 'bob');
    stuck.response.pause();
    stuck.response.socket.pause();
    const sdp = `${OFFER_SDP}a=x-padding:${'p'.repeat(512 * 1024)}\r\n`;
    let posted = 0;
    let deliveredWhileStuckConnected = 0;
    // Kernel socket buffers absorb some megabytes before the relay's own buffer grows.
    while (relay.stats().connectedAgents === 2 && posted < 200) {
      posted += 1;
      await postWebhook(relay.url, incomingCall(`wacid.slow${posted}`, { session: { sdp_type: 'offer', sdp } }));
      await fast.waitFor((x) => x.envelopes.length === posted, `event ${posted} at the fast agent`);
      if (relay.stats().connectedAgents === 2) deliveredWhileStuckConnected += 1;
    }
    // The fast agent got events while the stuck one was still connected, and the stuck one was let go.
    expect(deliveredWhileStuckConnected).toBeGreaterThan(0);
    expect(relay.stats().connectedAgents).toBe(1);
    await postWebhook(relay.url, inboundText('wamid.after-slow', 'x'));
    await fast.waitFor(hasMessage('wamid.after-slow'), 'an event after the drop');
    expect(fast.envelopes.length).toBe(posted + 1);

    // What the stuck agent parsed before it stalled, then a resume from its last id: everything, once.
    stuck.response.socket.resume();
    stuck.response.resume();
    await stuck.waitFor((x) => x.ended, 'the dropped stream to end');
    const resumed = await connect(relay, 'bob', { ...(stuck.ids.length > 0 ? { lastEventId: stuck.ids.at(-1) } : {}) });
    await resumed.waitFor(hasMessage('wamid.after-slow'), 'the resumed stream to catch up');
    expect([...ids(stuck.envelopes), ...ids(resumed.envelopes)]).toEqual(ids(fast.envelopes));
  });
});

describe('relay: exactly once, in order', () => {
  it('delivers each event once per session and each call in the order of its webhooks, under concurrent webhooks', async () => {
    const relay = await relayWith();
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    const calls = Array.from({ length: 20 }, (_, i) => `wacid.conc${i}`);
    await Promise.all(
      calls.map(async (callId) => {
        await postWebhook(relay.url, incomingCall(callId));
        await Promise.all([postWebhook(relay.url, incomingCall(callId)), postWebhook(relay.url, inboundText(`wamid.${callId}`, 'hi'))]);
        await postWebhook(relay.url, terminatedCall(callId));
        await postWebhook(relay.url, terminatedCall(callId));
      }),
    );
    await postWebhook(relay.url, inboundText('wamid.done', 'done'));
    for (const stream of [alice, bob]) {
      await stream.waitFor(hasMessage('wamid.done'), 'the last event');
      const keys = stream.envelopes.map((e) => eventKey(e.event));
      expect(new Set(keys).size).toBe(keys.length);
      expect(new Set(ids(stream.envelopes)).size).toBe(keys.length);
      expect(keys).toHaveLength(calls.length * 3 + 1);
      for (const callId of calls) expect(keys.indexOf(`call.incoming:${callId}`)).toBeLessThan(keys.indexOf(`call.terminated:${callId}:COMPLETED`));
    }
    expect(ids(bob.envelopes)).toEqual(ids(alice.envelopes));
  });

  it('joins replay and live delivery without a gap or a repeat while webhooks keep coming', async () => {
    const relay = await relayWith();
    const watcher = await connect(relay, 'alice');
    let stop = false;
    let sent = 0;
    const sender = (async () => {
      while (!stop) {
        sent += 1;
        await postWebhook(relay.url, inboundText(`wamid.flow${sent}`, 'x'));
      }
    })();
    await watcher.waitFor((x) => x.envelopes.length >= 5, 'some traffic');
    // Sessions that resume from cursors (and one fresh) while events are being stored.
    const resumed: TestSseStream[] = [];
    for (let i = 0; i < 6; i += 1) {
      const from = watcher.ids[Math.max(0, watcher.ids.length - 1 - i)];
      resumed.push(await connect(relay, i % 2 === 0 ? 'bob' : 'carol', from === undefined ? {} : { lastEventId: from }));
    }
    const target = sent + 5;
    await watcher.waitFor((x) => x.envelopes.length >= target, 'more traffic');
    stop = true;
    await sender;
    await postWebhook(relay.url, inboundText('wamid.flow-end', 'x'));
    await watcher.waitFor(hasMessage('wamid.flow-end'), 'the end at the watcher');
    for (const stream of resumed) {
      await stream.waitFor(hasMessage('wamid.flow-end'), 'the end');
      const got = ids(stream.envelopes);
      const all = ids(watcher.envelopes);
      // A resumed session gets exactly the events after its cursor, in order.
      expect(got).toEqual(all.slice(all.length - got.length));
      expect(new Set(got).size).toBe(got.length);
    }
  });
});

describe('relay: heartbeats', () => {
  it('sends a heartbeat comment on every interval, to replaying and live sessions alike', async () => {
    const relay = await relayWith({ heartbeatMs: 25 });
    const s = await connect(relay, 'alice');
    await s.waitFor((x) => x.comments.filter((c) => c === 'hb').length >= 3, 'three heartbeats');
    expect(s.comments[0]).toBe('connected');
  });
});
