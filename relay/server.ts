// The webhook relay (ARCHITECTURE.md, relay/README.md): receives the gateway's webhooks, verifies
// them, normalises, de-duplicates and fans the events out to every connected agent over
// server-sent events, with replay from a cursor. node:http only; state lives in memory.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RELAY_PATHS, type RelayEnvelope } from '../shared/events';
import { createLogger, type Logger } from '../shared/log';
import { normaliseWebhookDetailed } from '../shared/webhook';
import { RelayStore } from './event-store';
import { SseHub } from './sse-hub';
import { isValidSignature, matchAgentToken, secretsEqual } from './webhook-security';

export interface RelayOptions {
  /** 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** When set, every webhook must carry a valid X-Hub-Signature-256. */
  appSecret?: string;
  /** For the subscription handshake; without it the handshake is refused. */
  verifyToken?: string;
  /** Bearer tokens accepted on /events, one per agent or team. */
  agentTokens: string[];
  /** How long events stay available for replay. Default 10 minutes. */
  retentionMs?: number;
  /** Interval of the SSE heartbeat comment. Default 5000. */
  heartbeatMs?: number;
  logger?: Logger;
  /** What an agent without a cursor gets replayed: events received in this window. Default 60 s. */
  freshReplayMs?: number;
  /** How long duplicates are recognised. Default 24 h (the service retries for days). */
  dedupWindowMs?: number;
  /** Bytes queued for one agent before it is disconnected as too slow. Default 8 MiB. */
  maxClientBufferBytes?: number;
  /** Largest accepted webhook body. Default 3 MiB (protocol.md). */
  maxBodyBytes?: number;
}

export interface RelayStats {
  /** Webhooks accepted (answered 200). */
  webhooksReceived: number;
  /** Webhooks refused: bad signature, malformed JSON, too large. */
  webhooksRejected: number;
  /** Events written to agents, counted once per agent. */
  eventsDelivered: number;
  connectedAgents: number;
  /** Events that passed the delivery rules and were stored. */
  eventsStored: number;
  /** Events dropped as duplicates, as connects for ended calls, or as stale connects. */
  eventsDropped: number;
  retainedEvents: number;
}

export interface RelayServer {
  /** http://host:port */
  url: string;
  port: number;
  /** Random per process start; the first part of every cursor. */
  epoch: string;
  close(): Promise<void>;
  stats(): RelayStats;
  /** Every stored event, as it is fanned out (embedded mode, benchmarks). */
  onEvent(listener: (envelope: RelayEnvelope) => void): () => void;
}

export const DEFAULT_RETENTION_MS = 10 * 60_000;
export const DEFAULT_HEARTBEAT_MS = 5_000;
export const MAX_WEBHOOK_BYTES = 3 * 1024 * 1024;

export async function startRelay(options: RelayOptions): Promise<RelayServer> {
  const logger = options.logger ?? createLogger('relay');
  const host = options.host ?? '127.0.0.1';
  const agentTokens = options.agentTokens.filter((t) => typeof t === 'string' && t.length > 0);
  const maxBodyBytes = options.maxBodyBytes ?? MAX_WEBHOOK_BYTES;
  const freshReplayMs = options.freshReplayMs ?? 60_000;
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  if (agentTokens.length === 0) logger.warn('no agent tokens configured: no agent can connect');
  if (!options.appSecret) logger.warn('no app secret configured: webhook signatures are not checked');

  const store = new RelayStore({
    retentionMs,
    dedupWindowMs: options.dedupWindowMs ?? 24 * 60 * 60_000,
    maxEvents: 20_000,
    maxRetainedBytes: 64 * 1024 * 1024,
    maxDedupKeys: 500_000,
  });
  const hub = new SseHub({ heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS, maxBufferBytes: options.maxClientBufferBytes ?? 8 * 1024 * 1024, logger });
  const listeners = new Set<(envelope: RelayEnvelope) => void>();
  const counts = { webhooksReceived: 0, webhooksRejected: 0, eventsStored: 0, eventsDropped: 0 };
  const pruneTimer = setInterval(() => store.prune(), Math.max(1_000, Math.min(retentionMs, 60_000)));
  pruneTimer.unref();

  const ingest = (body: unknown, receivedAt: number) => {
    const { events, skipped } = normaliseWebhookDetailed(body);
    if (skipped.length > 0) logger.warn('skipped malformed webhook items', { count: skipped.length, first: skipped.slice(0, 3) });
    for (const event of events) {
      const outcome = store.accept(event, receivedAt);
      if (!outcome.stored) {
        counts.eventsDropped += 1;
        logger.debug('dropped an event', { type: event.type, reason: outcome.reason });
        continue;
      }
      counts.eventsStored += 1;
      hub.broadcast(outcome.retained);
      for (const listener of listeners) {
        try {
          listener(outcome.retained.envelope);
        } catch (e) {
          logger.error('an event listener failed', { error: e });
        }
      }
    }
  };

  const reject = (res: ServerResponse, status: number, message: string) => {
    counts.webhooksRejected += 1;
    logger.warn('rejected a webhook', { status, reason: message });
    sendJson(res, status, { error: message });
  };

  const handleWebhookPost = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req, maxBodyBytes);
    if (body.kind === 'aborted') {
      counts.webhooksRejected += 1;
      return;
    }
    if (body.kind === 'too_large') {
      if (!body.drained) {
        res.setHeader('Connection', 'close');
        res.on('finish', () => req.destroy());
      }
      return reject(res, 413, `the body is larger than ${maxBodyBytes} bytes`);
    }
    if (options.appSecret !== undefined && options.appSecret !== '') {
      const header = req.headers['x-hub-signature-256'];
      if (!isValidSignature(body.raw, typeof header === 'string' ? header : undefined, options.appSecret)) {
        return reject(res, 401, 'missing or invalid X-Hub-Signature-256');
      }
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.raw.toString('utf8'));
    } catch {
      return reject(res, 400, 'the body is not valid JSON');
    }
    counts.webhooksReceived += 1;
    const receivedAt = Date.now();
    // protocol.md: answer 200 at once and do the work after.
    sendJson(res, 200, { received: true });
    setImmediate(() => {
      try {
        ingest(parsed, receivedAt);
      } catch (e) {
        // Past the 200 nobody is waiting for an answer; the relay must stay up for the next webhook.
        logger.error('processing a webhook failed', { error: e });
      }
    });
  };

  const handleVerification = (url: URL, res: ServerResponse) => {
    const mode = url.searchParams.get('hub.mode');
    const token = url.searchParams.get('hub.verify_token');
    const challenge = url.searchParams.get('hub.challenge');
    const verifyToken = options.verifyToken;
    if (mode === 'subscribe' && token !== null && challenge !== null && verifyToken && secretsEqual(token, verifyToken)) {
      logger.info('webhook subscription verified');
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' });
      res.end(challenge);
      return;
    }
    logger.warn('refused a webhook verification', { mode: mode ?? undefined });
    sendJson(res, 403, { error: 'verification failed' });
  };

  const handleEvents = (req: IncomingMessage, url: URL, res: ServerResponse) => {
    const agent = matchAgentToken(req.headers.authorization, agentTokens);
    if (agent < 0) {
      logger.warn('refused an agent: missing or unknown token');
      res.setHeader('WWW-Authenticate', 'Bearer realm="relay"');
      sendJson(res, 401, { error: 'unauthorized: a valid agent token is required (Authorization: Bearer <token>)' });
      return;
    }
    const header = req.headers['last-event-id'];
    const cursor = (typeof header === 'string' && header.trim() !== '' ? header : undefined) ?? url.searchParams.get('since') ?? undefined;
    const plan = store.planReplay(cursor, freshReplayMs);
    const { events, gap } = store.replay(plan);
    if (gap) logger.warn('an agent resumed from a cursor older than the retention window: some events are gone', { agent: agent + 1 });
    hub.open(res, agent + 1, events);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://relay.invalid');
    const method = req.method ?? 'GET';
    switch (url.pathname) {
      case RELAY_PATHS.webhook:
        if (method === 'POST') return handleWebhookPost(req, res);
        if (method === 'GET') return handleVerification(url, res);
        return methodNotAllowed(res, 'GET, POST');
      case RELAY_PATHS.events:
        if (method === 'GET') return handleEvents(req, url, res);
        return methodNotAllowed(res, 'GET');
      case RELAY_PATHS.health:
        if (method === 'GET') return sendJson(res, 200, { status: 'ok', epoch: store.epoch, connectedAgents: hub.connected, retainedEvents: store.size });
        return methodNotAllowed(res, 'GET');
      default:
        return sendJson(res, 404, { error: 'not found' });
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      logger.error('request failed', { error: e });
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  // Slow senders cannot hold a webhook request open forever; SSE responses are unaffected.
  server.headersTimeout = 15_000;
  server.requestTimeout = 60_000;

  await new Promise<void>((resolve, rejectListen) => {
    const onError = (e: Error) => rejectListen(e);
    server.once('error', onError);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (e) => logger.error('server error', { error: e }));
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.debug('relay listening', { url, epoch: store.epoch });

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    epoch: store.epoch,
    close() {
      closing ??= new Promise<void>((resolve) => {
        clearInterval(pruneTimer);
        hub.closeAll();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
    stats: () => ({
      webhooksReceived: counts.webhooksReceived,
      webhooksRejected: counts.webhooksRejected,
      eventsDelivered: hub.eventsDelivered,
      connectedAgents: hub.connected,
      eventsStored: counts.eventsStored,
      eventsDropped: counts.eventsDropped,
      retainedEvents: store.size,
    }),
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

type BodyResult = { kind: 'ok'; raw: Buffer } | { kind: 'too_large'; drained: boolean } | { kind: 'aborted' };

/**
 * Reads the raw body up to `limit` bytes. An oversized body is drained (up to a hard cap) before
 * the 413 goes out, so that the sender reads the answer instead of a reset connection; beyond
 * the cap the answer goes out at once and the connection is closed.
 */
function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    const drainCap = limit * 4;
    if (Number.isFinite(declared) && declared > drainCap) {
      req.pause();
      resolve({ kind: 'too_large', drained: false });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = Number.isFinite(declared) && declared > limit;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > drainCap) {
        req.off('data', onData);
        req.pause();
        resolve({ kind: 'too_large', drained: false });
        return;
      }
      if (size > limit) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(tooLarge ? { kind: 'too_large', drained: true } : { kind: 'ok', raw: Buffer.concat(chunks, size) }));
    req.on('error', () => resolve({ kind: 'aborted' }));
    req.on('close', () => {
      if (!req.complete) resolve({ kind: 'aborted' });
    });
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(text);
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  res.setHeader('Allow', allow);
  sendJson(res, 405, { error: 'method not allowed' });
}
