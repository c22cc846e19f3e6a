// The relay on the open internet (relay/REFERENCE.md "Limits"): failed agent authentication limited per
// client address, long plain tokens, a cap of streams per agent, header/request/keep-alive timeouts,
// and bounded agent bodies. Real servers and real sockets; "another address" is another loopback
// address (Linux routes all of 127/8 to lo), bound with `localAddress`.
import { randomBytes } from 'node:crypto';
import { Agent, createServer, request, type IncomingHttpHeaders } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogFields, Logger } from '../../../shared/log';
import { configureLogging } from '../../../shared/log';
import { addressKey, AuthFailureLimiter } from '../../../relay/auth-failure-limiter';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { FakeClock } from '../../support/fake-clock';
import { hasMessage, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { APP_SECRET, inboundText, postWebhook } from './webhook-fixtures';

configureLogging({ level: 'error' });

const { agents, tokens } = team('alice', 'bob');
const GUESSER = '127.0.0.1';
const AGENT_HOST = '127.0.0.2';
const cleanups: (() => Promise<unknown> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function relayWith(options: Partial<RelayOptions> = {}): Promise<RelayServer> {
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, ...options });
  cleanups.push(() => relay.close());
  return relay;
}

async function sse(relay: RelayServer, options: Parameters<typeof openSse>[1]): Promise<TestSseStream> {
  const stream = await openSse(relay.url, options);
  cleanups.push(() => stream.close());
  return stream;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

interface SendOptions {
  method?: string;
  token?: string;
  localAddress?: string;
  agent?: Agent;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

/** One HTTP request over a real socket, from `localAddress` when given. */
function send(url: string, options: SendOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        headers,
        ...(options.localAddress !== undefined ? { localAddress: options.localAddress } : {}),
        ...(options.agent !== undefined ? { agent: options.agent } : {}),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

interface LogLine {
  level: string;
  msg: string;
  fields: LogFields;
}

/** A logger that keeps what the relay writes, to see which client address it names. */
function keptLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const keep = (level: string) => (msg: string, fields: LogFields = {}) => void lines.push({ level, msg, fields });
  return { logger: { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') }, lines };
}

const wrongToken = () => randomBytes(32).toString('base64url');
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Runs `tasks` with at most `width` of them at once; the results in order. */
async function pooled<T>(count: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

describe('relay hardening: failed authentication is limited per client address', () => {
  it('a loopback client bound to 127.0.0.2 is seen as 127.0.0.2', async () => {
    // The premise of the tests below: on this machine the relay sees two different addresses.
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.socket.remoteAddress ?? '');
      res.end();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    cleanups.push(() => new Promise((done) => server.close(done)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    await send(url, { localAddress: GUESSER });
    await send(url, { localAddress: AGENT_HOST });
    expect(seen).toEqual([GUESSER, AGENT_HOST]);
  });

  it('answers a storm of 1 000 wrong tokens 429 after the first 20 failures, while an agent on another address connects and gets every event at once', async () => {
    const { logger, lines } = keptLogger();
    const relay = await relayWith({ logger });
    const good = await sse(relay, { token: tokens.alice, localAddress: AGENT_HOST });
    expect(good.status).toBe(200);

    const stormAgent = new Agent({ keepAlive: true, maxSockets: 8 });
    cleanups.push(() => stormAgent.destroy());
    let stormDone = false;
    const storm = pooled(1_000, 8, () => send(`${relay.url}/me`, { token: wrongToken(), localAddress: GUESSER, agent: stormAgent })).finally(() => {
      stormDone = true;
    });

    // While the storm runs: webhooks, health checks and the agent's own requests, from its address.
    const postedAt = new Map<string, number>();
    const agentStatuses: number[] = [];
    let duringStorm = 0;
    for (let i = 0; !stormDone || i < 10; i += 1) {
      if (!stormDone) duringStorm += 1;
      const id = `wamid.storm-${i}`;
      postedAt.set(id, Date.now());
      expect((await postWebhook(relay.url, inboundText(id, `during ${i}`))).status).toBe(200);
      expect((await send(`${relay.url}/healthz`, { localAddress: GUESSER })).status).toBe(200);
      agentStatuses.push((await send(`${relay.url}/me`, { token: tokens.alice, localAddress: AGENT_HOST })).status);
      await sleep(2);
    }
    const answers = await storm;
    expect(duringStorm).toBeGreaterThan(0);

    // The first 20 failures are answered 401, every later guess 429 with Retry-After in seconds.
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(980);
    expect(statuses.indexOf(429)).toBeGreaterThanOrEqual(20);
    for (const answer of answers.filter((a) => a.status === 429)) {
      const retryAfter = Number(answer.headers['retry-after']);
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'rate_limited', retryAfterSec: retryAfter } });
    }

    // The agent on the other address was never slowed, and got every event, each within a sane bound.
    expect(agentStatuses.every((s) => s === 200)).toBe(true);
    const ids = [...postedAt.keys()];
    for (const id of ids) await good.waitFor(hasMessage(id), `event ${id}`);
    const received = good.envelopes.map((e) => (e.event.type === 'message.inbound' ? e.event.messageId : e.event.type));
    expect(received).toEqual(ids);
    const latencies = ids.map((id, i) => good.arrivals[i]! - postedAt.get(id)!);
    expect(Math.max(...latencies)).toBeLessThan(2_000);
    expect(good.ended).toBe(false);

    // While limited, the guessing address is refused whatever it presents, its correct token too.
    const fromGuesser = await send(`${relay.url}/me`, { token: tokens.bob, localAddress: GUESSER });
    expect(fromGuesser.status).toBe(429);
    expect((await sse(relay, { token: tokens.bob, localAddress: GUESSER })).status).toBe(429);
    expect((await send(`${relay.url}/me`, { token: tokens.bob, localAddress: AGENT_HOST })).status).toBe(200);
    // Webhooks and health are no agent endpoints: the limit does not touch them.
    expect((await send(`${relay.url}/healthz`, { localAddress: GUESSER })).status).toBe(200);
    const afterStorm = 'wamid.after-storm';
    expect((await postWebhook(relay.url, inboundText(afterStorm, 'after'))).status).toBe(200);
    await good.waitFor(hasMessage(afterStorm), 'the event after the storm');

    // The relay saw two addresses: failures and the limit name 127.0.0.1, and 127.0.0.2 fails on its own.
    expect((await send(`${relay.url}/me`, { token: wrongToken(), localAddress: AGENT_HOST })).status).toBe(401);
    const refusals = lines.filter((l) => l.msg === 'refused a request without a valid agent token').map((l) => l.fields.client);
    expect(refusals).toEqual([...Array<string>(20).fill(GUESSER), AGENT_HOST]);
    expect(lines.filter((l) => l.msg === 'limited an address that failed agent authentication too often').map((l) => l.fields.client)).toEqual([GUESSER]);

    const metrics = await relay.metrics();
    expect(metrics).toContain('\nrelay_auth_failures_total 21\n');
    expect(metrics).toContain('\nrelay_rate_limited_total 982\n');
    expect(relay.stats()).toMatchObject({ authFailures: 21, rateLimited: 982, connectedAgents: 1 });
  });

  it('lets the address in again once its failures leave the window', async () => {
    const relay = await relayWith({ authFailureLimits: { maxFailures: 3, windowMs: 1_000 } });
    for (let i = 0; i < 3; i += 1) expect((await send(`${relay.url}/me`, { token: wrongToken(), localAddress: GUESSER })).status).toBe(401);
    const limited = await send(`${relay.url}/me`, { token: tokens.alice, localAddress: GUESSER });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    await sleep(1_100);
    expect((await send(`${relay.url}/me`, { token: tokens.alice, localAddress: GUESSER })).status).toBe(200);
    // One more failure within the window of the last two limits it again: the window slides.
    expect((await send(`${relay.url}/me`, { token: wrongToken(), localAddress: GUESSER })).status).toBe(401);
    for (let i = 0; i < 2; i += 1) await send(`${relay.url}/me`, { token: wrongToken(), localAddress: GUESSER });
    expect((await send(`${relay.url}/me`, { token: tokens.alice, localAddress: GUESSER })).status).toBe(429);
  });

  it('counts every agent endpoint, with or without a token', async () => {
    const relay = await relayWith({ authFailureLimits: { maxFailures: 6 } });
    const from = { localAddress: GUESSER };
    expect((await send(`${relay.url}/events`, { ...from, token: wrongToken() })).status).toBe(401);
    expect((await send(`${relay.url}/me`, from)).status).toBe(401);
    expect((await send(`${relay.url}/presence`, { ...from, method: 'PUT', token: wrongToken(), body: '{"status":"available"}' })).status).toBe(401);
    expect((await send(`${relay.url}/calls/wacid.1/claim`, { ...from, method: 'POST', token: wrongToken() })).status).toBe(401);
    expect((await send(`${relay.url}/calls/wacid.1/decline`, { ...from, method: 'POST', token: wrongToken() })).status).toBe(401);
    expect((await send(`${relay.url}/turn-credentials`, { ...from, token: wrongToken() })).status).toBe(401);
    for (const path of ['/events', '/me', '/turn-credentials']) expect((await send(`${relay.url}${path}`, { ...from, token: tokens.alice })).status).toBe(429);
    expect((await send(`${relay.url}/calls/wacid.1/claim`, { ...from, method: 'POST', token: tokens.alice })).status).toBe(429);
  });

  it('with trustProxy, counts the address the proxy appended to X-Forwarded-For; without, ignores the header', async () => {
    const behindProxy = await relayWith({ trustProxy: true, authFailureLimits: { maxFailures: 3 } });
    const via = (client: string) => ({ localAddress: GUESSER, headers: { 'x-forwarded-for': client } });
    for (let i = 0; i < 3; i += 1) expect((await send(`${behindProxy.url}/me`, { ...via('203.0.113.7'), token: wrongToken() })).status).toBe(401);
    expect((await send(`${behindProxy.url}/me`, { ...via('203.0.113.7'), token: tokens.alice })).status).toBe(429);
    // A client may write anything before the proxy's entry; only the last one counts.
    expect((await send(`${behindProxy.url}/me`, { ...via('198.51.100.1, 203.0.113.7'), token: tokens.alice })).status).toBe(429);
    expect((await send(`${behindProxy.url}/me`, { ...via('203.0.113.7, 198.51.100.1'), token: tokens.alice })).status).toBe(200);
    expect((await send(`${behindProxy.url}/me`, { ...via('198.51.100.1'), token: tokens.alice })).status).toBe(200);

    const direct = await relayWith({ authFailureLimits: { maxFailures: 3 } });
    for (let i = 0; i < 3; i += 1) expect((await send(`${direct.url}/me`, { ...via(`198.51.100.${i + 10}`), token: wrongToken() })).status).toBe(401);
    expect((await send(`${direct.url}/me`, { ...via('198.51.100.99'), token: tokens.alice })).status).toBe(429);
    expect((await send(`${direct.url}/me`, { localAddress: AGENT_HOST, token: tokens.alice })).status).toBe(200);
  });

  it('keeps the table of addresses bounded under a storm from many addresses', () => {
    const clock = new FakeClock(0);
    // One failure limits an address here, so that "remembered" and "limited" are the same.
    const limiter = new AuthFailureLimiter({ maxFailures: 1, windowMs: 60_000, maxAddresses: 1_000 }, clock.now);
    const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    let largest = 0;
    let limitedEach = true;
    for (let i = 0; i < 100_000; i += 1) {
      limitedEach &&= limiter.fail(address(i)).limited;
      largest = Math.max(largest, limiter.size);
      clock.advance(1);
    }
    expect(limitedEach).toBe(true);
    expect(largest).toBe(1_000);
    expect(limiter.size).toBe(1_000);
    // The newest thousand are remembered, still within their window; the one before them was let go.
    expect(limiter.check(address(99_000))).toEqual({ limited: true, retryAfterSec: 59 });
    expect(limiter.check(address(99_999))).toEqual({ limited: true, retryAfterSec: 60 });
    expect(limiter.check(address(98_999))).toEqual({ limited: false });
    // Once the window has passed, the next failure forgets every expired address.
    clock.advance(60_001);
    limiter.fail('192.0.2.1');
    expect(limiter.size).toBe(1);
  });

  it('counts an IPv6 client by its /64 and an IPv4-mapped address as IPv4', () => {
    expect(addressKey('127.0.0.2')).toBe('127.0.0.2');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2::1')).toBe(addressKey('2001:0db8:0001:0002:ffff::9'));
    expect(addressKey('2001:db8:1:3::1')).not.toBe(addressKey('2001:db8:1:2::1'));
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('64:ff9b::192.0.2.33')).toBe('64:ff9b:0:0::/64');
  });
});

describe('relay hardening: plain agent tokens', () => {
  it('refuses plain tokens shorter than 32 characters unless dev, at start and on reload', async () => {
    const short = 'short-token-0001';
    await expect(startRelay({ port: 0, appSecret: APP_SECRET, agentTokens: [short] })).rejects.toThrow(
      'agentTokens: must be at least 32 characters (pass dev: true for short development tokens)',
    );
    const long = 'a-plain-token-of-32-characters!!';
    expect(long).toHaveLength(32);
    const relay = await relayWith({ agents: [], agentTokens: [long] });
    expect((await send(`${relay.url}/me`, { token: long })).status).toBe(200);
    expect(() => relay.setAgents([], [short])).toThrow(/agentTokens: must be at least 32 characters/);
    expect((await send(`${relay.url}/me`, { token: long })).status).toBe(200);

    const dev = await relayWith({ agents: [], agentTokens: [short], dev: true });
    expect((await send(`${dev.url}/me`, { token: short })).status).toBe(200);
    // dev still refuses what the command line refuses with --dev: no bearer token can hold whitespace.
    for (const bad of ['x y', 'a-long-development-token with a space', 'seven77']) {
      await expect(startRelay({ port: 0, appSecret: APP_SECRET, agentTokens: [bad], dev: true })).rejects.toThrow(/^agentTokens: must be at least 8 characters without spaces$/);
    }
    expect(() => dev.setAgents([], ['x y'])).toThrow('agentTokens: must be at least 8 characters without spaces');
  });
});

describe('relay hardening: streams per agent', () => {
  it('closes the oldest stream of an agent with a too_many_streams close event when one more opens; the newest stay and get events', async () => {
    const relay = await relayWith();
    const bob = await sse(relay, { token: tokens.bob });
    const alice: TestSseStream[] = [];
    for (let i = 0; i < 6; i += 1) {
      const stream = await sse(relay, { token: tokens.alice });
      expect(stream.status).toBe(200);
      await stream.waitFor((s) => s.comments.includes('connected'), 'the stream to open');
      alice.push(stream);
    }
    const [oldest, ...newest] = alice;
    await oldest!.waitFor((s) => s.ended, 'the oldest stream to end');
    expect(oldest!.named).toHaveLength(1);
    expect(oldest!.named[0]!.event).toBe('close');
    expect(JSON.parse(oldest!.named[0]!.data)).toEqual({ reason: 'too_many_streams', message: expect.stringContaining('at most 5 streams per agent') as unknown });
    expect(oldest!.envelopes).toEqual([]);
    expect(relay.stats().connectedAgents).toBe(6);

    await postWebhook(relay.url, inboundText('wamid.cap-1', 'after the cap'));
    for (const stream of [...newest, bob]) await stream.waitFor(hasMessage('wamid.cap-1'), 'the event at every open stream');
    for (const stream of [...newest, bob]) {
      expect(stream.ended).toBe(false);
      expect(stream.named).toEqual([]);
    }

    // One more: now the oldest of the remaining five goes, and nobody else's stream.
    const seventh = await sse(relay, { token: tokens.alice });
    await newest[0]!.waitFor((s) => s.ended, 'the next oldest to end');
    expect(JSON.parse(newest[0]!.named[0]!.data)).toMatchObject({ reason: 'too_many_streams' });
    await postWebhook(relay.url, inboundText('wamid.cap-2', 'again'));
    for (const stream of [...newest.slice(1), seventh, bob]) await stream.waitFor(hasMessage('wamid.cap-2'), 'the second event');
    expect(bob.ended).toBe(false);
  });

  it('takes the cap from maxStreamsPerAgent', async () => {
    const relay = await relayWith({ maxStreamsPerAgent: 1 });
    const first = await sse(relay, { token: tokens.alice });
    await first.waitFor((s) => s.comments.includes('connected'), 'the first stream to open');
    const second = await sse(relay, { token: tokens.alice });
    await first.waitFor((s) => s.ended, 'the first stream to end');
    expect(JSON.parse(first.named[0]!.data)).toMatchObject({ reason: 'too_many_streams' });
    await postWebhook(relay.url, inboundText('wamid.one', 'one stream'));
    await second.waitFor(hasMessage('wamid.one'), 'the event at the second stream');
    await expect(startRelay({ port: 0, appSecret: APP_SECRET, agents, maxStreamsPerAgent: 0 })).rejects.toThrow(/maxStreamsPerAgent/);
    // The same bounds as --max-streams-per-agent.
    for (const bad of [101, 2.5]) {
      await expect(startRelay({ port: 0, appSecret: APP_SECRET, agents, maxStreamsPerAgent: bad })).rejects.toThrow('maxStreamsPerAgent: must be a whole number from 1 to 100');
    }
  });
});

describe('relay hardening: timeouts', () => {
  /** A raw connection; resolves with what the relay wrote and when it closed the socket. */
  function rawConnection(port: number): { write(text: string): void; closed: Promise<{ afterMs: number; received: string }> } {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<{ afterMs: number; received: string }>((done) => socket.on('close', () => done({ afterMs: Date.now() - started, received })));
    socket.on('error', () => undefined);
    cleanups.push(() => {
      socket.destroy();
    });
    return { write: (text) => socket.write(text), closed };
  }

  it('cuts off a client that sends its headers a line at a time and never finishes them', async () => {
    // The default check interval (1 s), not a shortened one: Node's own, 30 s, would fail this.
    const relay = await relayWith({ headersTimeoutMs: 2_000 });
    const slow = rawConnection(relay.port);
    slow.write('GET /events HTTP/1.1\r\nHost: relay\r\n');
    let line = 0;
    const dribble = setInterval(() => slow.write(`X-Slow-${line++}: still coming\r\n`), 400);
    cleanups.push(() => clearInterval(dribble));
    const { afterMs, received } = await slow.closed;
    clearInterval(dribble);
    expect(line).toBeGreaterThan(2);
    expect(afterMs).toBeGreaterThanOrEqual(1_900);
    expect(afterMs).toBeLessThan(2_000 + 1_000 + 1_000);
    if (received !== '') expect(received).toMatch(/^HTTP\/1\.1 408 /);
    // Everyone else is served as ever.
    expect((await send(`${relay.url}/healthz`)).status).toBe(200);
  });

  it('cuts off a body that trickles past requestTimeout, but never an event stream, and closes idle kept-alive connections', async () => {
    const relay = await relayWith({ headersTimeoutMs: 500, requestTimeoutMs: 1_000, keepAliveTimeoutMs: 500, connectionsCheckingIntervalMs: 100 });
    const stream = await sse(relay, { token: tokens.alice });
    const openedAt = Date.now();

    const trickle = rawConnection(relay.port);
    trickle.write(`PUT /presence HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer ${tokens.bob}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
    const dribble = setInterval(() => trickle.write(' '), 200);
    cleanups.push(() => clearInterval(dribble));
    const cut = await trickle.closed;
    clearInterval(dribble);
    expect(cut.afterMs).toBeLessThan(1_000 + 1_000);
    if (cut.received !== '') expect(cut.received).toMatch(/^HTTP\/1\.1 408 /);

    const idle = rawConnection(relay.port);
    idle.write('GET /healthz HTTP/1.1\r\nHost: relay\r\n\r\n');
    const closedIdle = await idle.closed;
    expect(closedIdle.received).toMatch(/^HTTP\/1\.1 200 /);
    // Node keeps an idle connection 1 s past keepAliveTimeout, so that a client's reuse does not race the close.
    expect(closedIdle.afterMs).toBeLessThan(500 + 1_000 + 1_000);

    // The stream has been open for well over the request timeout, and still delivers.
    await sleep(Math.max(0, 2_500 - (Date.now() - openedAt)));
    await postWebhook(relay.url, inboundText('wamid.long-stream', 'still here'));
    await stream.waitFor(hasMessage('wamid.long-stream'), 'the event on a stream older than requestTimeout');
    expect(stream.ended).toBe(false);
  });
});

describe('relay hardening: agent bodies', () => {
  it('answers 413 naming the limit to agent bodies over 64 KB; webhooks keep their own limit', async () => {
    const relay = await relayWith();
    const pad = (bytes: number) => JSON.stringify({ status: 'available', pad: 'x'.repeat(bytes) });
    const big = pad(65 * 1024);
    for (const [method, path] of [
      ['PUT', '/presence'],
      ['POST', '/calls/wacid.big/claim'],
      ['POST', '/calls/wacid.big/decline'],
    ] as const) {
      const answer = await send(`${relay.url}${path}`, { method, token: tokens.alice, body: big });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body)).toEqual({ error: { code: 'payload_too_large', message: 'the body is larger than 65536 bytes, the limit of agent requests', limitBytes: 65536 } });
    }
    // Just under the limit is read as ever.
    const fits = await send(`${relay.url}/presence`, { method: 'PUT', token: tokens.alice, body: pad(60 * 1024) });
    expect(fits.status).toBe(200);
    expect(JSON.parse(fits.body)).toEqual({ agentId: 'alice', status: 'available', since: expect.any(Number) });
    expect((await send(`${relay.url}/calls/wacid.small/claim`, { method: 'POST', token: tokens.alice })).status).toBe(200);

    const webhook = Buffer.from(JSON.stringify({ ...inboundText('wamid.big-hook', 'x'), pad: 'y'.repeat(200 * 1024) }));
    expect((await postWebhook(relay.url, webhook)).status).toBe(200);
  });
});
