import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { DISPLACED_MESSAGE, RelayEventStream, UNAUTHORIZED_MESSAGE, type RelayEventStreamOptions } from '../../../electron/core/event-stream';
import type { ConnectionState } from '../../../shared/api';
import type { RelayEnvelope } from '../../../shared/events';
import { text } from '../../../shared/i18n/text';
import { configureLogging } from '../../../shared/log';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { AGENT_TOKEN, APP_SECRET, inboundText, postWebhook } from '../relay/webhook-fixtures';
import { closedPortUrl, closingServer, selfSignedServer, UNRESOLVABLE_HOST } from '../shared/network-failures';
import { startTcpProxy, type TcpProxy } from './tcp-proxy';

configureLogging({ level: 'error' });

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function relayWith(options: Partial<RelayOptions> = {}): Promise<RelayServer> {
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agentTokens: [AGENT_TOKEN], heartbeatMs: 1_000, ...options });
  cleanups.push(() => relay.close());
  return relay;
}

async function proxyTo(relay: RelayServer): Promise<TcpProxy> {
  const proxy = await startTcpProxy(relay.port);
  cleanups.push(() => proxy.close());
  return proxy;
}

interface Collected {
  stream: RelayEventStream;
  events: RelayEnvelope[];
  states: ConnectionState[];
  messageIds(): string[];
  waitFor(predicate: () => boolean, what: string): Promise<void>;
}

/** Starts a client and records what it reports. */
function client(options: Omit<RelayEventStreamOptions, 'onEvent' | 'onState'>): Collected {
  const events: RelayEnvelope[] = [];
  const states: ConnectionState[] = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  const stream = new RelayEventStream({
    minBackoffMs: 50,
    maxBackoffMs: 250,
    ...options,
    onEvent: (env) => {
      events.push(env);
      notify();
    },
    onState: (state) => {
      states.push(state);
      notify();
    },
  });
  cleanups.push(() => stream.stop());
  stream.start();
  return {
    stream,
    events,
    states,
    messageIds: () => events.map((e) => (e.event.type === 'message.inbound' ? e.event.messageId : e.event.type)),
    waitFor(predicate, what) {
      return new Promise<void>((resolve, reject) => {
        // A bound so that a broken build fails with a message instead of the test timeout.
        const guard = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`still waiting for ${what}; states: ${JSON.stringify(states.map((s) => s.status))}, events: ${events.length}`));
        }, 15_000);
        const check = () => {
          if (!predicate()) return;
          clearTimeout(guard);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      });
    },
  };
}

const post = async (relay: RelayServer, id: string) => expect((await postWebhook(relay.url, inboundText(id, id))).status).toBe(200);
const lastStatus = (c: Collected) => c.states.at(-1)?.status;

describe('RelayEventStream against the relay', () => {
  it('connects, reports its state, and receives validated events with their cursor', async () => {
    const relay = await relayWith();
    const c = client({ url: relay.url, token: AGENT_TOKEN });
    await c.waitFor(() => lastStatus(c) === 'connected', 'connected');
    await post(relay, 'wamid.1');
    await post(relay, 'wamid.2');
    await c.waitFor(() => c.events.length === 2, 'two events');
    expect(c.states.map((s) => s.status)).toEqual(['connecting', 'connected']);
    expect(c.messageIds()).toEqual(['wamid.1', 'wamid.2']);
    expect(c.events[0]!.event).toMatchObject({ type: 'message.inbound', text: 'wamid.1', name: 'Ada Customer' });
    expect(c.stream.lastEventId).toBe(c.events[1]!.id);
  });

  it('reconnects when the relay restarts on the same port, and gets what the new relay received meanwhile', async () => {
    const first = await relayWith();
    const port = first.port;
    const c = client({ url: first.url, token: AGENT_TOKEN });
    await c.waitFor(() => lastStatus(c) === 'connected', 'connected');
    await post(first, 'wamid.before');
    await c.waitFor(() => c.events.length === 1, 'the first event');

    await first.close();
    await c.waitFor(() => lastStatus(c) === 'reconnecting', 'reconnecting');
    const second = await relayWith({ port });
    await post(second, 'wamid.during');
    await c.waitFor(() => c.messageIds().includes('wamid.during'), 'the event posted while reconnecting');
    await post(second, 'wamid.after');
    await c.waitFor(() => c.messageIds().includes('wamid.after'), 'the live event');

    expect(c.messageIds()).toEqual(['wamid.before', 'wamid.during', 'wamid.after']);
    const statuses = c.states.map((s) => s.status);
    expect(statuses.slice(0, 3)).toEqual(['connecting', 'connected', 'reconnecting']);
    expect(statuses.at(-1)).toBe('connected');
    expect(c.stream.lastEventId?.startsWith(`${second.epoch}-`)).toBe(true);
  });

  it('loses and repeats nothing when the connection breaks while the relay stays up', async () => {
    const relay = await relayWith();
    const proxy = await proxyTo(relay);
    const c = client({ url: `http://127.0.0.1:${proxy.port}`, token: AGENT_TOKEN });
    for (const id of ['wamid.a1', 'wamid.a2', 'wamid.a3']) await post(relay, id);
    await c.waitFor(() => c.events.length === 3, 'three events');
    const cursor = c.stream.lastEventId!;

    proxy.setBlocked(true);
    proxy.dropAll();
    await c.waitFor(() => lastStatus(c) === 'reconnecting', 'reconnecting');
    for (const id of ['wamid.a4', 'wamid.a5', 'wamid.a6']) await post(relay, id);
    proxy.setBlocked(false);
    await c.waitFor(() => c.events.length === 6, 'the three missed events');
    await post(relay, 'wamid.a7');
    await c.waitFor(() => c.events.length === 7, 'the live event');

    expect(c.messageIds()).toEqual(['wamid.a1', 'wamid.a2', 'wamid.a3', 'wamid.a4', 'wamid.a5', 'wamid.a6', 'wamid.a7']);
    expect(proxy.requests.at(-1)?.toLowerCase()).toContain(`last-event-id: ${cursor}`);
    expect(lastStatus(c)).toBe('connected');
  });

  it('treats a silent stream as dead and reconnects', async () => {
    const relay = await relayWith({ heartbeatMs: 50 });
    const proxy = await proxyTo(relay);
    const c = client({ url: `http://127.0.0.1:${proxy.port}`, token: AGENT_TOKEN, heartbeatTimeoutMs: 1_000 });
    await c.waitFor(() => lastStatus(c) === 'connected', 'connected');
    proxy.freeze();
    await c.waitFor(() => lastStatus(c) === 'reconnecting', 'the dead stream noticed');
    const state = c.states.at(-1);
    expect(state?.status === 'reconnecting' && state.lastError).toMatch(/^no data from the relay for 1 s$/);
    await c.waitFor(() => lastStatus(c) === 'connected', 'connected again');
    await post(relay, 'wamid.after-freeze');
    await c.waitFor(() => c.events.length === 1, 'the event after the freeze');
  });

  it('reports an unknown token as unauthorized', async () => {
    const relay = await relayWith();
    const c = client({ url: relay.url, token: 'not-the-token' });
    await c.waitFor(() => lastStatus(c) === 'reconnecting', 'the refusal');
    expect(c.states).toEqual([
      { status: 'connecting', since: expect.any(Number) },
      { status: 'reconnecting', since: expect.any(Number), lastError: UNAUTHORIZED_MESSAGE, lastErrorText: text('stream.unauthorized') },
    ]);
    expect(UNAUTHORIZED_MESSAGE).toBe('unauthorized: check the agent token');
  });

  it('stays away for displacedRetryMs when the relay closed its stream for a newer one of the same token, then resumes', async () => {
    const relay = await relayWith({ maxStreamsPerAgent: 1 });
    const proxy = await proxyTo(relay);
    const first = client({ url: `http://127.0.0.1:${proxy.port}`, token: AGENT_TOKEN, displacedRetryMs: 1_500 });
    await first.waitFor(() => lastStatus(first) === 'connected', 'the first client connected');
    await post(relay, 'wamid.d1');
    await first.waitFor(() => first.events.length === 1, 'the first event');

    const second = client({ url: relay.url, token: AGENT_TOKEN });
    await second.waitFor(() => lastStatus(second) === 'connected', 'the second client connected');
    await first.waitFor(() => lastStatus(first) === 'reconnecting', 'the first client closed for the second');
    const displacedAt = Date.now();
    expect(first.states.at(-1)).toEqual({ status: 'reconnecting', since: expect.any(Number), lastError: DISPLACED_MESSAGE, lastErrorText: text('stream.displaced') });

    // No reconnect storm: the newer stream keeps running while the displaced client waits.
    await post(relay, 'wamid.d2');
    await second.waitFor(() => second.messageIds().includes('wamid.d2'), 'the event at the second client');
    await new Promise((done) => setTimeout(done, 1_000));
    expect(proxy.requests).toHaveLength(1);
    expect(lastStatus(second)).toBe('connected');

    // After the delay it comes back from its cursor, with what it missed, and the other stream goes in turn.
    await first.waitFor(() => first.messageIds().includes('wamid.d2'), 'the missed event after the delay');
    expect(Date.now() - displacedAt).toBeGreaterThanOrEqual(1_400);
    expect(proxy.requests).toHaveLength(2);
    expect(first.messageIds()).toEqual(['wamid.d1', 'wamid.d2']);
    await second.waitFor(() => lastStatus(second) === 'reconnecting', 'the second client closed for the first');
  });

  it('stops cleanly while connected and while waiting to retry', async () => {
    const relay = await relayWith();
    const c = client({ url: relay.url, token: AGENT_TOKEN });
    await c.waitFor(() => lastStatus(c) === 'connected', 'connected');
    await c.stream.stop();
    await post(relay, 'wamid.after-stop');
    await post(relay, 'wamid.after-stop-2');
    expect(relay.stats().connectedAgents).toBe(0);
    expect(c.events).toEqual([]);

    const nowhere = client({ url: 'http://127.0.0.1:9', token: AGENT_TOKEN });
    await nowhere.waitFor(() => lastStatus(nowhere) === 'reconnecting', 'a failed connect');
    const state = nowhere.states.at(-1);
    expect(state?.status === 'reconnecting' && state.lastError).toMatch(/refused/);
    await nowhere.stream.stop();
  });
});

describe('RelayEventStream against a hand-written stream', () => {
  /** Serves `rounds[n]` to the n-th request; every round but the last ends the stream afterwards. */
  async function serve(...rounds: string[]): Promise<{ url: string; requests: { lastEventId?: string }[] }> {
    const requests: { lastEventId?: string }[] = [];
    const server: Server = createServer((req, res) => {
      const round = requests.length;
      requests.push({ lastEventId: req.headers['last-event-id'] as string | undefined });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.socket?.setNoDelay(true);
      const bytes = Buffer.from(rounds[Math.min(round, rounds.length - 1)]!, 'utf8');
      let at = 0;
      // Three bytes at a time: every boundary, including inside multi-byte characters.
      const next = () => {
        if (res.destroyed) return;
        if (at >= bytes.length) {
          if (round < rounds.length - 1) res.end();
          return; // the last round stays open and silent
        }
        res.write(bytes.subarray(at, at + 3));
        at += 3;
        setImmediate(next);
      };
      next();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    cleanups.push(() => {
      server.closeAllConnections();
      return new Promise((done) => server.close(done));
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    return { url: `http://127.0.0.1:${address.port}`, requests };
  }

  const envelope = (id: string, text: string): RelayEnvelope => ({
    id,
    receivedAt: 1,
    event: { type: 'message.inbound', messageId: `wamid.${id}`, timestamp: 2, messageType: 'text', text },
  });
  const frame = (id: string, data: string) => `id: ${id}\r\ndata: ${data}\r\n\r\n`;

  it('skips invalid, unknown and repeated events, keeps the valid ones whole, and moves its cursor past all', async () => {
    const body = [
      ': connected\n\n',
      frame('e-1', JSON.stringify(envelope('e-1', 'héllo – 👋 привет'))),
      frame('e-2', '{not json'),
      frame('e-3', JSON.stringify({ id: 'e-3', receivedAt: 'yesterday', event: { type: 'call.unknown' } })),
      // A newer relay's event of a type this app does not know: skipped, the stream goes on.
      frame('e-3b', JSON.stringify({ id: 'e-3b', receivedAt: 1, event: { type: 'call.newer_kind', callId: 'wacid.1', reason: 'node_gone', timestamp: 2 } })),
      frame('e-1', JSON.stringify(envelope('e-1', 'héllo – 👋 привет'))),
      frame('e-4', JSON.stringify(envelope('e-4', 'second'))),
      frame('e-5', JSON.stringify({ ...envelope('e-5', 'x'), event: { type: 'call.incoming', callId: 'wacid.1' } })),
    ].join('');
    // The stream ends and the client comes back; a server that ignores Last-Event-ID repeats itself.
    const fake = await serve(body, body + frame('e-6', JSON.stringify(envelope('e-6', 'third'))));
    const c = client({ url: fake.url, token: AGENT_TOKEN });
    await c.waitFor(() => c.events.length === 3, 'the whole stream, twice');
    expect(c.events).toEqual([envelope('e-1', 'héllo – 👋 привет'), envelope('e-4', 'second'), envelope('e-6', 'third')]);
    expect(fake.requests).toEqual([{ lastEventId: undefined }, { lastEventId: 'e-5' }]);
    expect(c.stream.lastEventId).toBe('e-6');
  });

  it('reconnects as usual after a close event with a reason it does not know', async () => {
    const fake = await serve(': connected\n\nevent: close\ndata: {"reason":"shutting_down"}\n\n', ': again\n\n');
    const c = client({ url: fake.url, token: AGENT_TOKEN, displacedRetryMs: 60_000 });
    await c.waitFor(() => fake.requests.length === 2 && lastStatus(c) === 'connected', 'the reconnect');
    expect(c.states.map((s) => s.status)).toEqual(['connecting', 'connected', 'reconnecting', 'connected']);
    expect(c.events).toEqual([]);
  });

  it("waits the relay's Retry-After after a 429, and its usual backoff when the 429 names no delay", async () => {
    // 429 without Retry-After, then 429 with Retry-After: 1, then the stream.
    const refusals: (string | undefined)[] = [undefined, '1'];
    const arrivals: number[] = [];
    const server: Server = createServer((req, res) => {
      arrivals.push(Date.now());
      const round = arrivals.length - 1;
      if (round < refusals.length) {
        const retryAfter = refusals[round];
        res.writeHead(429, { 'content-type': 'application/json', ...(retryAfter !== undefined ? { 'retry-after': retryAfter } : {}) });
        res.end(JSON.stringify({ error: { code: 'rate_limited', message: 'too many failed agent authentications from this address' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': connected\n\n');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    cleanups.push(() => {
      server.closeAllConnections();
      return new Promise((done) => server.close(done));
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');

    const c = client({ url: `http://127.0.0.1:${address.port}`, token: AGENT_TOKEN });
    await c.waitFor(() => lastStatus(c) === 'connected', 'connected after the 429s');
    expect(arrivals).toHaveLength(3);
    // The client's backoff here is 50–250 ms; the relay asked for 1 s.
    // Without Retry-After the usual backoff, shorter than the wait the relay asked for the second time.
    expect(arrivals[1]! - arrivals[0]!).toBeLessThan(arrivals[2]! - arrivals[1]!);
    expect(arrivals[2]! - arrivals[1]!).toBeGreaterThanOrEqual(950);
    expect(c.states.map((s) => s.status)).toEqual(['connecting', 'reconnecting', 'connected']);
    expect(c.states[1]).toEqual({ status: 'reconnecting', since: expect.any(Number), lastError: 'the relay answered HTTP 429 (too many requests)', lastErrorText: text('stream.tooManyRequests') });
  });

  it('resumes from a cursor it was given', async () => {
    const fake = await serve(': nothing yet\n\n');
    const c = client({ url: `${fake.url}/`, token: AGENT_TOKEN, lastEventId: 'abc-41' });
    await c.waitFor(() => lastStatus(c) === 'connected', 'connected');
    expect(fake.requests).toEqual([{ lastEventId: 'abc-41' }]);
    expect(c.stream.lastEventId).toBe('abc-41');
  });
});

describe('RelayEventStream and the network', () => {
  /** The words the connection state shows after the first failed connect to `url`. */
  async function firstError(url: string): Promise<string | undefined> {
    const c = client({ url, token: AGENT_TOKEN });
    await c.waitFor(() => lastStatus(c) === 'reconnecting', 'a failed connect');
    await c.stream.stop();
    const state = c.states.at(-1);
    return state?.status === 'reconnecting' ? state.lastError : undefined;
  }

  it('says each network failure in its words', async () => {
    expect(await firstError(await closedPortUrl())).toBe('the relay refused the connection (is it running?)');
    expect(await firstError(`http://${UNRESOLVABLE_HOST}`)).toBe('the relay host name could not be resolved');
    const closing = await closingServer();
    cleanups.push(() => closing.close());
    expect(await firstError(closing.url)).toBe('the connection to the relay was reset');
    const tls = await selfSignedServer();
    cleanups.push(() => tls.close());
    expect(await firstError(`https://localhost:${tls.port}`)).toBe('self-signed certificate');
  });

  it("gives its words as codes and values beside the English, and a library's words as they came", async () => {
    const reconnecting = async (url: string) => {
      const c = client({ url, token: AGENT_TOKEN });
      await c.waitFor(() => lastStatus(c) === 'reconnecting', 'a failed connect');
      await c.stream.stop();
      return c.states.at(-1);
    };
    expect(await reconnecting(await closedPortUrl())).toEqual({
      status: 'reconnecting',
      since: expect.any(Number),
      lastError: 'the relay refused the connection (is it running?)',
      lastErrorText: text('stream.connectionRefused'),
    });
    const tls = await selfSignedServer();
    cleanups.push(() => tls.close());
    expect(await reconnecting(`https://localhost:${tls.port}`)).toEqual({ status: 'reconnecting', since: expect.any(Number), lastError: 'self-signed certificate' });
  });

  it('says a relay that sends no headers in time is silent', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => {
      silent.closeAllConnections();
      silent.close(() => resolve());
    }));
    const port = (silent.address() as { port: number }).port;
    const c = client({ url: `http://127.0.0.1:${port}`, token: AGENT_TOKEN, heartbeatTimeoutMs: 200 });
    await c.waitFor(() => lastStatus(c) === 'reconnecting', 'the silent relay given up');
    const state = c.states.at(-1);
    expect(state?.status === 'reconnecting' && state.lastError).toBe('no data from the relay for 0.2 s');
  });

  it('gives up on a refusal whose body stalls, and tries again: a proxy that answers 503 and hangs loses no agent', async () => {
    let requests = 0;
    const stalling = createServer((_req, res) => {
      requests += 1;
      res.writeHead(503, { 'content-type': 'text/plain', 'content-length': '100' });
      res.write('Service'); // 7 of the 100 bytes promised, then nothing
    });
    await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => {
      stalling.closeAllConnections();
      stalling.close(() => resolve());
    }));
    const port = (stalling.address() as { port: number }).port;
    const c = client({ url: `http://127.0.0.1:${port}`, token: AGENT_TOKEN, heartbeatTimeoutMs: 200 });
    await c.waitFor(() => lastStatus(c) === 'reconnecting', 'the stalled refusal given up');
    // The retry changes no state (still reconnecting): the relay's side counts it.
    for (let waited = 0; requests < 2 && waited < 5_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(requests).toBeGreaterThanOrEqual(2);
    const state = c.states.find((s) => s.status === 'reconnecting');
    expect(state?.status === 'reconnecting' && state.lastError).toBe('the relay answered HTTP 503');
  });
});
