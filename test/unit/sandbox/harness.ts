// Real parts for sandbox tests: a tiny webhook receiver standing in for the relay, a sandbox on a
// random 127.0.0.1 port, and helpers to call the gateway and the control API over HTTP.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { configureLogging } from '../../../shared/log';
import { startSandbox, type SandboxOptions, type SandboxServer } from '../../../sandbox/server';

configureLogging({ level: 'error' });

export const API_KEY = 'test-api-key-123';
export const APP_SECRET = 'test-app-secret-456';

export interface ReceivedWebhook {
  raw: Buffer;
  signature: string | undefined;
  contentType: string | undefined;
  body: WebhookEnvelope;
}

/** The parts of the Cloud API envelope the tests look at. */
export interface WebhookEnvelope {
  object: string;
  entry: { id: string; changes: { field: string; value: WebhookValue }[] }[];
}
export interface WebhookValue {
  messaging_product: string;
  metadata: { display_phone_number: string; phone_number_id: string };
  contacts?: { profile: { name: string }; wa_id: string }[];
  calls?: WebhookCall[];
  statuses?: { id: string; type: string; status: string; timestamp: string; recipient_id: string }[];
}
export interface WebhookCall {
  id: string;
  from: string;
  to: string;
  event: 'connect' | 'terminate';
  timestamp: string;
  direction: 'USER_INITIATED' | 'BUSINESS_INITIATED';
  session?: { sdp_type: string; sdp: string };
  status?: string;
  start_time?: string;
  end_time?: string;
  duration?: number;
  errors?: { code: number; message: string; error_data: { details: string } }[];
}

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Requests answered with 503 so far (see failFirst). */
  refused: number;
  /** Answer the next n deliveries with 503, as a relay in trouble would. */
  failNext(n: number): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  let failing = 0;
  const receiver: WebhookReceiver = {
    url: '',
    port: 0,
    received: [],
    refused: 0,
    failNext(n) {
      failing = n;
    },
    close: () => close(server),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url !== '/webhook' || req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      if (failing > 0) {
        failing--;
        receiver.refused++;
        res.writeHead(503).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      const signature = req.headers['x-hub-signature-256'];
      receiver.received.push({
        raw,
        signature: typeof signature === 'string' ? signature : undefined,
        contentType: req.headers['content-type'],
        body: JSON.parse(raw.toString('utf8')) as WebhookEnvelope,
      });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Verifies X-Hub-Signature-256 over the raw bytes, as the relay does (protocol.md). */
export function signatureValid(hook: ReceivedWebhook, secret = APP_SECRET): boolean {
  if (!hook.signature?.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(hook.raw).digest('hex'));
  const given = Buffer.from(hook.signature.slice('sha256='.length));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export const valueOf = (hook: ReceivedWebhook): WebhookValue => hook.body.entry[0]!.changes[0]!.value;

export async function startTestSandbox(relay: { url: string }, extra: Partial<SandboxOptions> = {}): Promise<SandboxServer> {
  return startSandbox({ port: 0, relayUrl: relay.url, appSecret: APP_SECRET, apiKey: API_KEY, ringMs: 50, ...extra });
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** POST {gateway}/chatapp/calls/{action} with the API key and JSON, unless told otherwise. */
export async function gatewayPost(
  sandbox: SandboxServer,
  action: string,
  body: unknown,
  options: { apiKey?: string | null; contentType?: string | null; method?: string; rawBody?: string; product?: string } = {},
): Promise<HttpAnswer> {
  const headers: Record<string, string> = {};
  const apiKey = options.apiKey === undefined ? API_KEY : options.apiKey;
  if (apiKey !== null) headers['API-KEY'] = apiKey;
  const contentType = options.contentType === undefined ? 'application/json' : options.contentType;
  if (contentType !== null) headers['Content-Type'] = contentType;
  const method = options.method ?? 'POST';
  const res = await fetch(`${sandbox.gatewayUrl}/${options.product ?? 'chatapp'}/calls/${action}`, {
    method,
    headers,
    body: method === 'GET' || method === 'HEAD' ? null : (options.rawBody ?? JSON.stringify(body)),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as unknown) : undefined };
}

export async function control<T>(sandbox: SandboxServer, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${sandbox.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** Polls until `check` gives a value; fails with `what` after a generous deadline. Not a timing assertion. */
export async function eventually<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The webhooks' call items and statuses for one call id, in arrival order. */
export function eventsFor(relay: WebhookReceiver, callId: string): string[] {
  const out: string[] = [];
  for (const hook of relay.received) {
    const value = valueOf(hook);
    for (const c of value.calls ?? []) if (c.id === callId) out.push(c.event === 'terminate' ? `terminate:${c.status ?? ''}` : `connect:${c.direction}`);
    for (const s of value.statuses ?? []) if (s.id === callId) out.push(`status:${s.status}`);
  }
  return out;
}

export function callItem(relay: WebhookReceiver, callId: string, event: 'connect' | 'terminate'): { call: WebhookCall; value: WebhookValue; hook: ReceivedWebhook } | undefined {
  for (const hook of relay.received) {
    const value = valueOf(hook);
    const call = value.calls?.find((c) => c.id === callId && c.event === event);
    if (call) return { call, value, hook };
  }
  return undefined;
}
