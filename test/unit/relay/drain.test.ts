import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { configureLogging } from '../../../shared/log';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { eventKeys, hasMessage, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { APP_SECRET, inboundText, postWebhook, signature } from './webhook-fixtures';

configureLogging({ level: 'error' });

const { agents, tokens } = team('alice', 'bob');
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

async function connect(relay: RelayServer, agentId: string): Promise<TestSseStream> {
  const stream = await openSse(relay.url, { token: tokens[agentId] });
  expect(stream.status).toBe(200);
  streams.push(stream);
  return stream;
}

async function eventually(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 5));
  }
}

/** A webhook whose headers and first half are sent now and the rest when `finish` is called. */
function slowWebhook(relayUrl: string, body: string): { finish(): void; status: Promise<number> } {
  const raw = Buffer.from(body);
  const half = Math.floor(raw.length / 2);
  let req: ReturnType<typeof request> | undefined;
  const status = new Promise<number>((resolve, reject) => {
    req = request(
      `${relayUrl}/webhook`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(raw.length), 'x-hub-signature-256': signature(raw) } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.write(raw.subarray(0, half));
  });
  return { finish: () => req!.end(raw.subarray(half)), status };
}

describe('relay: graceful drain', () => {
  it('refuses new webhooks with 503, finishes the one in flight, flushes every stream and then ends it', async () => {
    const relay = await relayWith();
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    for (let i = 1; i <= 3; i += 1) await postWebhook(relay.url, inboundText(`wamid.d${i}`, 'x'));
    await alice.waitFor(hasMessage('wamid.d3'), 'the first events');

    const inFlight = slowWebhook(relay.url, JSON.stringify(inboundText('wamid.d4', 'in flight')));
    await eventually(() => relay.stats().inFlight === 1, 'the slow webhook to reach the relay');
    const closing = relay.close();

    const refused = await postWebhook(relay.url, inboundText('wamid.d5', 'too late'));
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.text)).toMatchObject({ error: { code: 'draining' } });
    expect((await fetch(`${relay.url}/healthz`)).status).toBe(503);
    expect(alice.ended).toBe(false);

    inFlight.finish();
    expect(await inFlight.status).toBe(200);
    await closing;
    for (const stream of [alice, bob]) {
      await stream.waitFor((x) => x.ended, 'the stream to end');
      expect(eventKeys(stream)).toEqual(['wamid.d1', 'wamid.d2', 'wamid.d3', 'wamid.d4'].map((id) => `message.inbound:${id}`));
    }
    await expect(fetch(`${relay.url}/healthz`)).rejects.toThrow();
  });

  it('refuses new agent streams while draining', async () => {
    const relay = await relayWith();
    const inFlight = slowWebhook(relay.url, JSON.stringify(inboundText('wamid.d6', 'x')));
    await eventually(() => relay.stats().inFlight === 1, 'the slow webhook to reach the relay');
    const closing = relay.close();
    const late = await openSse(relay.url, { token: tokens.alice });
    expect(late.status).toBe(503);
    inFlight.finish();
    await closing;
  });

  it('does not wait for ever for an agent that reads nothing', async () => {
    const relay = await relayWith({ drainTimeoutMs: 100, maxClientBufferBytes: 64 * 1024 * 1024 });
    const stuck = await connect(relay, 'alice');
    stuck.response.pause();
    stuck.response.socket.pause();
    // Far more than socket buffers take: the stream cannot be flushed.
    const big = 'x'.repeat(1024 * 1024);
    for (let i = 1; i <= 12; i += 1) await postWebhook(relay.url, inboundText(`wamid.big${i}`, big));
    await relay.close();
    expect(relay.stats().connectedAgents).toBe(0);
  });
});
