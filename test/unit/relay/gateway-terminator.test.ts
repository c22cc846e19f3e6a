// The relay's own terminate: the request's shape, retries on network failures and 5xx only, the
// gateway's refusal taken as said, and the key in no log line and no error.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { GatewayTerminator } from '../../../relay/gateway-terminator';
import type { Logger } from '../../../shared/log';

const KEY = 'team-gateway-key-0123456789';

interface Seen {
  method: string;
  url: string;
  apiKey: string | undefined;
  body: unknown;
}

const servers: Server[] = [];
const terminators: GatewayTerminator[] = [];
afterEach(async () => {
  await Promise.all(terminators.splice(0).map((t) => t.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A gateway that answers each request with the next of `answers` (the last one again once they run out). */
async function gateway(answers: Array<(res: ServerResponse) => void>): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const apiKey = req.headers['api-key'];
      seen.push({ method: req.method ?? '', url: req.url ?? '', apiKey: typeof apiKey === 'string' ? apiKey : undefined, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') as unknown });
      (answers[seen.length - 1] ?? answers[answers.length - 1]!)(res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const json = (status: number, body: unknown) => (res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const success = json(200, { messaging_product: 'chatapp', success: true });

function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const line = (message: string, fields?: unknown) => lines.push(`${message} ${JSON.stringify(fields ?? {})}`);
  return { logger: { debug: line, info: line, warn: line, error: line }, lines };
}

function terminator(url: string, logger: Logger, product?: string): GatewayTerminator {
  const t = new GatewayTerminator({ target: () => ({ url, apiKey: KEY, ...(product !== undefined ? { product } : {}) }), logger, firstPauseMs: 10 });
  terminators.push(t);
  return t;
}

describe('the relay’s terminate', () => {
  test('POST {url}/{product}/calls/terminate with the key in API-KEY and the terminate body', async () => {
    const gw = await gateway([success]);
    const { logger } = recordingLogger();
    expect(await terminator(`${gw.url}/`, logger).terminate('wacid.t1')).toEqual({ ok: true, value: null });
    expect(gw.seen).toEqual([{ method: 'POST', url: '/chatapp/calls/terminate', apiKey: KEY, body: { messaging_product: 'chatapp', call_id: 'wacid.t1', action: 'terminate' } }]);
  });

  test('another product word goes in the path and the body', async () => {
    const gw = await gateway([json(200, { messaging_product: 'whatsapp', success: true })]);
    expect(await terminator(gw.url, recordingLogger().logger, 'whatsapp').terminate('wacid.t2')).toEqual({ ok: true, value: null });
    expect(gw.seen[0]).toMatchObject({ url: '/whatsapp/calls/terminate', body: { messaging_product: 'whatsapp' } });
  });

  test('retried after a 5xx until it succeeds', async () => {
    const gw = await gateway([json(503, { error: { message: 'busy', code: 1 } }), json(502, {}), success]);
    expect(await terminator(gw.url, recordingLogger().logger).terminate('wacid.t3')).toEqual({ ok: true, value: null });
    expect(gw.seen).toHaveLength(3);
  });

  test('three retries, then unreachable', async () => {
    const gw = await gateway([json(500, {})]);
    const result = await terminator(gw.url, recordingLogger().logger).terminate('wacid.t4');
    expect(result).toMatchObject({ ok: false, error: { code: 'gateway_unreachable', httpStatus: 500 } });
    expect(gw.seen).toHaveLength(4);
  });

  test('a Graph error is the gateway’s word: not retried', async () => {
    const gw = await gateway([json(400, { error: { message: 'Call is not active', type: 'OAuthException', code: 138007 } })]);
    const result = await terminator(gw.url, recordingLogger().logger).terminate('wacid.t5');
    expect(result).toMatchObject({ ok: false, error: { code: 'gateway_error', httpStatus: 400, gatewayCode: 138007, message: 'Call is not active' } });
    expect(gw.seen).toHaveLength(1);
  });

  test('a gateway that cannot be reached is retried, and neither the log nor the error says the key', async () => {
    const gw = await gateway([success]);
    const closed = servers.pop()!;
    await new Promise((resolve) => closed.close(resolve));
    const { logger, lines } = recordingLogger();
    const result = await terminator(gw.url, logger).terminate('wacid.t6');
    expect(result).toMatchObject({ ok: false, error: { code: 'gateway_unreachable' } });
    expect(lines.filter((l) => l.startsWith('terminate failed, retrying'))).toHaveLength(3);
    expect(JSON.stringify(result)).not.toContain(KEY);
    expect(lines.join('\n')).not.toContain(KEY);
  });

  test('a gateway that echoes the key back: it is taken out of the error and the log', async () => {
    const gw = await gateway([json(401, { error: { message: `bad key ${KEY}`, code: 190 } })]);
    const { logger, lines } = recordingLogger();
    const result = await terminator(gw.url, logger).terminate('wacid.t7');
    expect(result).toMatchObject({ ok: false, error: { code: 'gateway_error', gatewayCode: 190, message: 'bad key [redacted]' } });
    expect(JSON.stringify(result)).not.toContain(KEY);
    expect(lines.join('\n')).not.toContain(KEY);
  });

  test('no gateway named: nothing is sent', async () => {
    const t = new GatewayTerminator({ target: () => undefined, logger: recordingLogger().logger });
    terminators.push(t);
    expect(t.configured).toBe(false);
    expect(await t.terminate('wacid.t8')).toMatchObject({ ok: false, error: { code: 'not_available' } });
  });
});
