// The benchmark's webhook sender against a real node:http server: what it writes is a request the
// server reads whole, and it frames the answers by their Content-Length, however they arrive.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postBytes, WebhookSender } from '../../../bench/webhook-sender';

let server: Server | undefined;
let sender: WebhookSender | undefined;

afterEach(async () => {
  sender?.close();
  sender = undefined;
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server?.closeAllConnections();
  server = undefined;
});

async function listen(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<number> {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, Buffer.concat(chunks).toString('utf8'), res));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Sends every body and resolves with the statuses in the order of the bodies. */
async function sendAll(port: number, connections: number, bodies: string[], headers: Record<string, string> = {}): Promise<(number | undefined)[]> {
  sender = new WebhookSender('127.0.0.1', port, connections);
  await sender.connected();
  return Promise.all(
    bodies.map(
      (body) =>
        new Promise<number | undefined>((resolve) => {
          sender!.send({ bytes: postBytes('127.0.0.1', port, '/webhook', { 'Content-Type': 'application/json', ...headers }, body), done: resolve });
        }),
    ),
  );
}

describe("the benchmark's webhook sender", () => {
  it('sends requests the server reads whole, headers and UTF-8 body, and counts each answer once', async () => {
    const seen: { method?: string; url?: string; type?: string; signature?: string; body: string }[] = [];
    const port = await listen((req, body, res) => {
      seen.push({ method: req.method, url: req.url, type: req.headers['content-type'], signature: req.headers['x-hub-signature-256'] as string, body });
      // As the relay answers: a Content-Length on every answer.
      res.writeHead(body.includes('refuse') ? 401 : 200, { 'Content-Type': 'application/json', 'Content-Length': '17' });
      res.end('{"received":true}');
    });
    const bodies = Array.from({ length: 40 }, (_, i) => (i === 7 ? '{"refuse":"é"}' : `{"n":${i},"name":"Zoë ${i}"}`));
    const statuses = await sendAll(port, 4, bodies, { 'X-Hub-Signature-256': 'sha256=abc' });
    expect(statuses.filter((s) => s === 200)).toHaveLength(39);
    expect(statuses[7]).toBe(401);
    expect(seen.map((s) => s.body).sort()).toEqual([...bodies].sort());
    expect(seen.every((s) => s.method === 'POST' && s.url === '/webhook' && s.type === 'application/json' && s.signature === 'sha256=abc')).toBe(true);
  });

  it('frames answers split across reads and answers with bodies of any length', async () => {
    const port = await listen((_req, body, res) => {
      const answer = 'x'.repeat(Number(JSON.parse(body).size));
      res.writeHead(200, { 'Content-Length': String(Buffer.byteLength(answer)) });
      // Header and body in separate writes, the body byte by byte at first.
      res.flushHeaders();
      for (const ch of answer.slice(0, 3)) res.write(ch);
      res.end(answer.slice(3));
    });
    const statuses = await sendAll(port, 2, [0, 1, 5, 70_000, 3].map((size) => JSON.stringify({ size })));
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
  });

  it('counts a request whose connection closed without an answer as failed, and carries on with a new connection', async () => {
    const port = await listen((req, body, res) => {
      if (body.includes('drop')) {
        req.socket.destroy();
        return;
      }
      res.end('ok');
    });
    const statuses = await sendAll(port, 1, ['{"a":1}', '{"drop":true}', '{"b":2}', '{"c":3}']);
    expect(statuses).toEqual([200, undefined, 200, 200]);
  });

  it('opens a new connection after an answer that says Connection: close', async () => {
    let connections = 0;
    const port = await listen((_req, body, res) => {
      if (body.includes('close')) res.setHeader('Connection', 'close');
      res.writeHead(503, { 'Content-Length': '8' });
      res.end('draining');
    });
    server!.on('connection', () => connections++);
    const statuses = await sendAll(port, 1, ['{"close":1}', '{"x":2}', '{"close":3}', '{"x":4}']);
    expect(statuses).toEqual([503, 503, 503, 503]);
    expect(connections).toBe(3);
  });

  it('gives up on an answer it cannot frame (no Content-Length) instead of miscounting', async () => {
    const port = await listen((_req, _body, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('chunked');
      res.end();
    });
    const statuses = await sendAll(port, 1, ['{"a":1}', '{"b":2}']);
    expect(statuses).toEqual([undefined, undefined]);
  });

  it('drops a connection that answers what was not asked, so that no two requests ever share a socket', async () => {
    let connections = 0;
    const port = await listen((req) => {
      // The answer and a second one nobody asked for, in one write.
      req.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno');
    });
    server!.on('connection', () => connections++);
    const statuses = await sendAll(port, 1, ['{"a":1}', '{"b":2}', '{"c":3}']);
    // Each request is counted once, by its own answer; the socket that spoke out of turn is replaced each time.
    expect(statuses).toEqual([200, 200, 200]);
    expect(connections).toBe(3);
  });

  it('says so when its connections do not open in time', async () => {
    const port = await listen((_req, _body, res) => res.end('ok'));
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    sender = new WebhookSender('127.0.0.1', port, 2);
    await expect(sender.connected(300)).rejects.toThrow(`the sender's 2 connections to 127.0.0.1:${port} did not all open within 300 ms`);
  });
});
