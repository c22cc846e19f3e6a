import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpExchange, type UnabortedOutcome } from '../../../electron/core/http-exchange';
import { closedPortUrl, closingServer, type FailingServer } from '../shared/network-failures';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server | undefined;
const seen: Seen[] = [];
const exchanges: HttpExchange[] = [];
const failing: FailingServer[] = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse, n: number) => void): Promise<string> {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, seen.length);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const exchangeWith = (baseUrl: string, options: { headers?: Record<string, string>; secret?: string } = {}): HttpExchange => {
  const http = new HttpExchange({ baseUrl, ...options });
  exchanges.push(http);
  return http;
};

afterEach(async () => {
  for (const http of exchanges.splice(0)) await http.destroy();
  for (const f of failing.splice(0)) await f.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  seen.length = 0;
});

describe('HttpExchange', () => {
  it('sends its headers and the JSON body to the base URL and path, and answers status, headers and body', async () => {
    const url = await serve((_req, res) => res.writeHead(201, { 'x-answer': 'yes' }).end('{"ok":true}'));
    const http = exchangeWith(`${url}//`, { headers: { authorization: 'Bearer t0ken', accept: 'application/json' } });
    const outcome = await http.exchange({ method: 'POST', path: '/calls/a%2Fb/claim', headers: { 'x-extra': '1' }, json: { n: 1 }, deadlineMs: 2_000, bodyLimit: 1024 });
    expect(outcome).toMatchObject({ kind: 'response', status: 201, body: '{"ok":true}' });
    expect(outcome.kind === 'response' && outcome.headers['x-answer']).toBe('yes');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/calls/a%2Fb/claim', body: '{"n":1}' });
    expect(seen[0]!.headers).toMatchObject({ authorization: 'Bearer t0ken', accept: 'application/json', 'x-extra': '1', 'content-type': 'application/json' });
  });

  it('sends no body and no content type without JSON', async () => {
    const url = await serve((_req, res) => res.end('fine'));
    expect(await exchangeWith(url).exchange({ method: 'GET', path: '/me', deadlineMs: 2_000, bodyLimit: 1024 })).toMatchObject({ kind: 'response', status: 200, body: 'fine' });
    expect(seen[0]!.body).toBe('');
    expect(seen[0]!.headers['content-type']).toBeUndefined();
  });

  it('stops reading a body at the limit', async () => {
    const url = await serve((_req, res) => {
      res.write('a'.repeat(64 * 1024));
      // The rest never comes: a body read to its end would wait for the deadline.
    });
    const started = Date.now();
    const outcome = await exchangeWith(url).exchange({ method: 'GET', path: '/big', deadlineMs: 5_000, bodyLimit: 1024 });
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(outcome.kind).toBe('response');
    if (outcome.kind !== 'response') return;
    expect(outcome.body.length).toBeGreaterThanOrEqual(1024);
    expect(outcome.body.length).toBeLessThanOrEqual(64 * 1024);
  });

  it('times out when no answer comes, and when the body stops before its end: the deadline runs to the last byte', async () => {
    const url = await serve((req, res) => {
      if (req.url === '/stalls') res.writeHead(200, { 'content-length': '10' }).write('12345');
    });
    const http = exchangeWith(url);
    expect(await http.exchange({ method: 'GET', path: '/hangs', deadlineMs: 150, bodyLimit: 1024 })).toEqual({ kind: 'timeout' });
    expect(await http.exchange({ method: 'GET', path: '/stalls', deadlineMs: 150, bodyLimit: 1024 })).toEqual({ kind: 'timeout' });
  });

  it('is aborted by the outside signal, also one aborted before it starts', async () => {
    const url = await serve(() => undefined);
    const http = exchangeWith(url);
    const outside = new AbortController();
    const pending = http.exchange({ method: 'GET', path: '/hangs', deadlineMs: 5_000, bodyLimit: 1024, signal: outside.signal });
    setTimeout(() => outside.abort(), 50);
    expect(await pending).toEqual({ kind: 'aborted' });
    expect(await http.exchange({ method: 'GET', path: '/hangs', deadlineMs: 5_000, bodyLimit: 1024, signal: outside.signal })).toEqual({ kind: 'aborted' });
  });

  it('classifies a network failure and takes the secret out of its words', async () => {
    const refused = await exchangeWith(await closedPortUrl()).exchange({ method: 'GET', path: '/', deadlineMs: 2_000, bodyLimit: 1024 });
    expect(refused).toMatchObject({ kind: 'network', failure: { kind: 'refused', code: 'ECONNREFUSED' } });
    const secret = 's3cret-host-token';
    const unresolvable = await exchangeWith(`http://${secret}.invalid`, { secret }).exchange({ method: 'GET', path: '/', deadlineMs: 5_000, bodyLimit: 1024 });
    expect(unresolvable).toMatchObject({ kind: 'network', failure: { kind: 'host_not_found' } });
    expect(JSON.stringify(unresolvable)).not.toContain(secret);
    expect(JSON.stringify(unresolvable)).toContain('[redacted].invalid');
  });

  it('scrubs its secret out of any text, and leaves text alone without one', () => {
    expect(exchangeWith('http://127.0.0.1:9', { secret: 'k3y' }).scrub('echo k3y and k3y')).toBe('echo [redacted] and [redacted]');
    expect(exchangeWith('http://127.0.0.1:9').scrub('echo k3y')).toBe('echo k3y');
  });
});

describe('HttpExchange retries', () => {
  const worthIt = (outcome: UnabortedOutcome) => outcome.kind === 'network' || (outcome.kind === 'response' && outcome.status >= 500);

  it('tries again while the rule says so, pausing twice as long each time, and answers the last outcome', async () => {
    const url = await serve((_req, res, n) => res.writeHead(n <= 2 ? 503 : 200).end(`try ${n}`));
    const told: Array<[number, number, number | undefined]> = [];
    const stamps: number[] = [];
    const outcome = await exchangeWith(url).exchange({
      method: 'POST',
      path: '/t',
      json: { a: 1 },
      deadlineMs: 2_000,
      bodyLimit: 1024,
      retry: {
        times: 3,
        firstPauseMs: 40,
        when: worthIt,
        onRetry: (o, attempt, pauseMs) => {
          stamps.push(Date.now());
          told.push([attempt, pauseMs, o.kind === 'response' ? o.status : undefined]);
        },
      },
    });
    expect(outcome).toMatchObject({ kind: 'response', status: 200, body: 'try 3' });
    expect(told).toEqual([
      [1, 40, 503],
      [2, 80, 503],
    ]);
    expect(seen.map((s) => s.body)).toEqual(['{"a":1}', '{"a":1}', '{"a":1}']);
  });

  it('gives up after its number of tries, on network failures too', async () => {
    const closing = await closingServer();
    failing.push(closing);
    let retries = 0;
    const outcome = await exchangeWith(closing.url).exchange({
      method: 'GET',
      path: '/',
      deadlineMs: 2_000,
      bodyLimit: 1024,
      retry: { times: 2, firstPauseMs: 1, when: worthIt, onRetry: () => (retries += 1) },
    });
    expect(outcome).toMatchObject({ kind: 'network', failure: { kind: 'reset', code: 'UND_ERR_SOCKET' } });
    expect(retries).toBe(2);
  });

  it('does not try again when the rule says no: a timeout, a 4xx', async () => {
    const url = await serve((req, res) => {
      if (req.url === '/refused') res.writeHead(400).end('no');
    });
    const http = exchangeWith(url);
    const retry = { times: 3, firstPauseMs: 1, when: worthIt };
    expect(await http.exchange({ method: 'GET', path: '/hangs', deadlineMs: 100, bodyLimit: 1024, retry })).toEqual({ kind: 'timeout' });
    expect(await http.exchange({ method: 'GET', path: '/refused', deadlineMs: 1_000, bodyLimit: 1024, retry })).toMatchObject({ kind: 'response', status: 400 });
    expect(seen.map((s) => s.url)).toEqual(['/hangs', '/refused']);
  });

  it('ends a pause between tries when the outside signal aborts', async () => {
    const url = await serve((_req, res) => res.writeHead(503).end());
    const outside = new AbortController();
    const started = Date.now();
    const outcome = await exchangeWith(url).exchange({
      method: 'GET',
      path: '/',
      deadlineMs: 1_000,
      bodyLimit: 1024,
      signal: outside.signal,
      retry: { times: 1, firstPauseMs: 10_000, when: worthIt, onRetry: () => outside.abort() },
    });
    expect(outcome).toEqual({ kind: 'aborted' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(seen).toHaveLength(1);
  });
});

describe('HttpExchange.open', () => {
  it("times out only until the headers: a quiet body after them is the caller's to time", async () => {
    const url = await serve((req, res) => {
      if (req.url !== '/stream') return;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('a');
      setTimeout(() => res.end('b'), 300);
    });
    const http = exchangeWith(url);
    expect(await http.open({ method: 'GET', path: '/hangs', deadlineMs: 100 })).toEqual({ kind: 'timeout' });
    const opened = await http.open({ method: 'GET', path: '/stream', deadlineMs: 100 });
    expect(opened.kind).toBe('response');
    if (opened.kind !== 'response') return;
    expect(opened.headers['content-type']).toBe('text/event-stream');
    expect(await opened.body.text()).toBe('ab');
  });

  it('the outside signal ends the body after the headers', async () => {
    const url = await serve((_req, res) => res.writeHead(200).write(':\n'));
    const outside = new AbortController();
    const opened = await exchangeWith(url).open({ method: 'GET', path: '/stream', deadlineMs: 1_000, signal: outside.signal });
    expect(opened.kind).toBe('response');
    if (opened.kind !== 'response') return;
    setTimeout(() => outside.abort(), 50);
    await expect(opened.body.text()).rejects.toThrow();
  });
});
