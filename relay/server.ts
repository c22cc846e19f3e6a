// The webhook relay for a team (ARCHITECTURE.md, relay/README.md): receives the gateway's webhooks,
// verifies and normalises them, stores each event once through the backend (memory, or Redis for
// several instances) with the audience it is for, and streams every event to the agent sessions it
// concerns, with replay from a cursor; agents report presence and claim calls. node:http only.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { STALE_CONNECT_MS } from '../shared/call-state';
import { RELAY_PATHS, type RelayEnvelope, type RelayEvent } from '../shared/events';
import { createLogger, type Logger } from '../shared/log';
import { normaliseWebhookDetailed } from '../shared/webhook';
import { AgentDirectory, legacyAgents, type Agent, type AgentConfig } from './agent-directory';
import { SessionHub } from './agent-sessions';
import { createBackend } from './backend/index';
import { envelopeOf, type Audience, type Presence, type RelayBackend, type StoredEvent } from './backend/types';
import { BoundedSet } from './bounded-set';
import { HeadStarts } from './head-starts';
import { methodNotAllowed, readBody, sendError, sendJson } from './http-io';
import { KeyedTaskQueue } from './keyed-task-queue';
import { METRICS_CONTENT_TYPE, RelayMetrics } from './metrics';
import { parseResumeToken } from './resume-token';
import { KnownCalls, orderingKeyOf, preferredAgentOf, type RingingAudience } from './routing';
import { isValidSignature, secretsEqual } from './webhook-security';

export interface RelayOptions {
  /** 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** When set, every webhook must carry a valid X-Hub-Signature-256. */
  appSecret?: string;
  /** For the subscription handshake; without it the handshake is refused. */
  verifyToken?: string;
  /** The team's agents with hashed tokens (the agents file). */
  agents?: AgentConfig[];
  /** Plain tokens (development, older set-ups): agents `agent-1`, `agent-2`, … in order. */
  agentTokens?: string[];
  /** Shared state; when given, the caller owns it and closes it. Otherwise one is created from `redisUrl`. */
  backend?: RelayBackend;
  /** `redis://host:port`: the Redis backend, for several instances behind one URL. Absent: memory. */
  redisUrl?: string;
  /** Prefix of every Redis key (default `relay:`). */
  redisPrefix?: string;
  /** Names this instance in /healthz and logs. Default: random per start. */
  instanceId?: string;
  /** How long events stay available for replay. Default 10 minutes. */
  retentionMs?: number;
  /** Interval of the SSE heartbeat comment. Default 5000. */
  heartbeatMs?: number;
  logger?: Logger;
  /** What an agent without a cursor gets replayed: events received in this window. Default 60 s. */
  freshReplayMs?: number;
  /** How long duplicates are recognised. Default 24 h (the service retries for days). */
  dedupWindowMs?: number;
  /** Bytes queued for one agent session before it is disconnected as too slow. Default 8 MiB. */
  maxClientBufferBytes?: number;
  /** Largest accepted webhook body. Default 3 MiB (protocol.md). */
  maxBodyBytes?: number;
  /** The head start of the agent a voice_call button came from, before everyone else rings. Default 10 000. */
  preferredAgentReleaseMs?: number;
  /** How long a reported presence lasts unless refreshed. Default 60 000 (the app refreshes every 20 s). */
  presenceTtlMs?: number;
  /** How long close() waits for an agent's stream to flush before cutting it. Default 5000. */
  drainTimeoutMs?: number;
}

export interface RelayStats {
  /** Webhooks accepted (answered 200). */
  webhooksReceived: number;
  /** Webhooks refused: bad signature, malformed JSON, too large. */
  webhooksRejected: number;
  /** Events written to agent sessions, counted once per session. */
  eventsDelivered: number;
  /** Open agent sessions on this instance. */
  connectedAgents: number;
  /** Events that passed the delivery rules and were stored by this instance. */
  eventsStored: number;
  /** Events dropped as duplicates, as connects for ended calls, or as stale connects. */
  eventsDropped: number;
  /** Requests whose work close() waits for: webhooks being received, claims, presence reports. */
  inFlight: number;
  /** Events the memory backend retains for replay (absent for Redis). */
  retainedEvents?: number;
}

export interface RelayServer {
  /** http://host:port */
  url: string;
  port: number;
  /** The memory backend's cursor epoch (random per start); the instance id with Redis. */
  epoch: string;
  instanceId: string;
  backendKind: RelayBackend['kind'];
  /** Stops taking webhooks (503), finishes in-flight work, flushes and ends every stream, closes the backend it created. */
  close(): Promise<void>;
  stats(): RelayStats;
  /** The `GET /metrics` text. */
  metrics(): string;
  /** Every stored event this instance fans out (embedded mode, benchmarks). */
  onEvent(listener: (envelope: RelayEnvelope) => void): () => void;
  /** Replaces the agents (a reloaded agents file); open sessions of removed agents keep running until they reconnect. */
  setAgents(agents: AgentConfig[], agentTokens?: string[]): void;
}

export const DEFAULT_RETENTION_MS = 10 * 60_000;
export const DEFAULT_HEARTBEAT_MS = 5_000;
export const MAX_WEBHOOK_BYTES = 3 * 1024 * 1024;
export const DEFAULT_PREFERRED_AGENT_RELEASE_MS = 10_000;
export const DEFAULT_PRESENCE_TTL_MS = 60_000;

/** Paths of the agent API besides RELAY_PATHS (relay/README.md "Endpoints"). */
export const AGENT_API_PATHS = { me: '/me', presence: '/presence', metrics: '/metrics' } as const;
const CLAIM_PATH = /^\/calls\/([^/]+)\/claim$/;
const DECLINE_PATH = /^\/calls\/([^/]+)\/decline$/;

const PRESENCE_RULE = 'must be one of available, on_call, dnd';
const presenceBodySchema = z.object({ status: z.enum(['available', 'on_call', 'dnd'], { error: PRESENCE_RULE }) });
const callIdSchema = z.string().min(1).max(512);

export async function startRelay(options: RelayOptions): Promise<RelayServer> {
  const logger = options.logger ?? createLogger('relay');
  const host = options.host ?? '127.0.0.1';
  const instanceId = options.instanceId ?? randomBytes(6).toString('hex');
  const maxBodyBytes = options.maxBodyBytes ?? MAX_WEBHOOK_BYTES;
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  const releaseMs = Math.max(0, options.preferredAgentReleaseMs ?? DEFAULT_PREFERRED_AGENT_RELEASE_MS);
  const presenceTtlMs = options.presenceTtlMs ?? DEFAULT_PRESENCE_TTL_MS;
  const drainTimeoutMs = options.drainTimeoutMs ?? 5_000;

  const directory = new AgentDirectory([...(options.agents ?? []), ...legacyAgents(options.agentTokens ?? [])]);
  if (directory.size === 0) logger.warn('no agents configured: no agent can connect');
  if (!options.appSecret) logger.warn('no app secret configured: webhook signatures are not checked');

  const ownsBackend = options.backend === undefined;
  const backend =
    options.backend ??
    (await createBackend({
      ...(options.redisUrl !== undefined ? { redisUrl: options.redisUrl } : {}),
      ...(options.redisPrefix !== undefined ? { keyPrefix: options.redisPrefix } : {}),
      retentionMs,
      dedupWindowMs: options.dedupWindowMs ?? 24 * 60 * 60_000,
      logger,
    }));
  const epoch = 'epoch' in backend && typeof backend.epoch === 'string' ? backend.epoch : instanceId;

  const metrics = new RelayMetrics();
  const knownCalls = new KnownCalls();
  const headStarts = new HeadStarts({ backend, logger });
  const hub = new SessionHub({
    backend,
    headStarts,
    metrics,
    logger,
    heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    maxBufferBytes: options.maxClientBufferBytes ?? 8 * 1024 * 1024,
    freshReplayMs: options.freshReplayMs ?? 60_000,
  });
  const listeners = new Set<(envelope: RelayEnvelope) => void>();
  const queue = new KeyedTaskQueue();
  /** Requests whose work close() must let finish: webhooks being read, claims, presence reports. */
  const inflight = new Set<Promise<unknown>>();
  /** Cursors this instance stored that its own subscription has not fanned out yet (close() waits for them). */
  const awaitingFanOut = new BoundedSet(100_000);
  /** Cursors fanned out before their append returned (the memory backend fans out inside append). */
  const fannedOutEarly = new BoundedSet(10_000);
  let draining = false;

  const onStored = (stored: StoredEvent) => {
    try {
      if (!awaitingFanOut.delete(stored.cursor)) fannedOutEarly.add(stored.cursor);
      knownCalls.observe(stored);
      headStarts.observe(stored);
      hub.fanOut(stored);
      if (listeners.size > 0) {
        const envelope = envelopeOf(stored);
        for (const listener of listeners) listener(envelope);
      }
    } catch (error) {
      // The subscription feeds every session: one failure must not stop the next event.
      logger.error('fanning out an event failed', { cursor: stored.cursor, error });
    }
  };
  const unsubscribe = backend.subscribe(onStored);

  // Calls that rang shortly before this instance started: their later events and head starts need them.
  await warmUp(backend, releaseMs + STALE_CONNECT_MS, (stored) => {
    knownCalls.observe(stored);
    headStarts.observe(stored);
  }).catch((error: unknown) => logger.warn('could not read recent events at start-up', { error }));

  const reachable = (agentId: string): boolean => {
    const presence = backend.presenceOf(agentId);
    // An agent with no reported presence but an open stream counts as available.
    return presence === 'available' || (presence === undefined && hub.hasSession(agentId));
  };

  const ringingAudience = (event: Extract<RelayEvent, { type: 'call.incoming' }>, receivedAt: number): RingingAudience => {
    const preferred = preferredAgentOf(event.ctaPayload);
    if (preferred === undefined || releaseMs === 0) return { kind: 'ringing' };
    if (directory.get(preferred) === undefined || !reachable(preferred)) {
      // The agent who sent the button is away: nobody should wait for it.
      logger.debug('a voice_call agent is not reachable; ringing everyone', { callId: event.callId, agentId: preferred });
      return { kind: 'ringing' };
    }
    return { kind: 'ringing', preferredAgentId: preferred, releaseAt: receivedAt + releaseMs };
  };

  const audienceFor = async (event: RelayEvent, receivedAt: number): Promise<Audience> => {
    if (!('callId' in event)) return { kind: 'everyone' };
    const owner = knownCalls.ownerOf(event.callId) ?? (await backend.claimOwner(event.callId));
    if (owner !== undefined) return { kind: 'agent', agentId: owner };
    if (event.type === 'call.incoming') return ringingAudience(event, receivedAt);
    // Outgoing calls before their claim, and calls this instance never saw ring: everyone.
    return knownCalls.ringingAudienceOf(event.callId) ?? { kind: 'everyone' };
  };

  const store = async (event: RelayEvent, receivedAt: number, audience?: Audience): Promise<StoredEvent | undefined> => {
    const outcome = await backend.append({ event, receivedAt, audience: audience ?? (await audienceFor(event, receivedAt)) });
    if (!outcome.stored) {
      metrics.eventsDropped[outcome.reason] += 1;
      logger.debug('dropped an event', { type: event.type, reason: outcome.reason });
      return undefined;
    }
    metrics.eventsStored += 1;
    knownCalls.observe(outcome.event);
    if (!fannedOutEarly.delete(outcome.event.cursor)) awaitingFanOut.add(outcome.event.cursor);
    return outcome.event;
  };

  const ingest = (body: unknown, receivedAt: number) => {
    const { events, skipped } = normaliseWebhookDetailed(body);
    if (skipped.length > 0) logger.warn('skipped malformed webhook items', { count: skipped.length, first: skipped.slice(0, 3) });
    for (const event of events) {
      void queue.run(orderingKeyOf(event), () =>
        store(event, receivedAt).then(
          () => undefined,
          (error: unknown) => logger.error('storing an event failed', { type: event.type, error }),
        ),
      );
    }
  };

  const track = <T>(work: Promise<T>): Promise<T> => {
    inflight.add(work);
    void work.finally(() => inflight.delete(work)).catch(() => undefined);
    return work;
  };

  const authenticate = (req: IncomingMessage, res: ServerResponse): Agent | undefined => {
    const agent = directory.authenticate(req.headers.authorization);
    if (agent === undefined) {
      logger.warn('refused a request without a valid agent token', { path: req.url?.split('?')[0] });
      sendError(res, 401, 'unauthorized', 'a valid agent token is required (Authorization: Bearer <token>)', {}, { 'WWW-Authenticate': 'Bearer realm="relay"' });
    }
    return agent;
  };

  const refuseWhileDraining = (res: ServerResponse): void => {
    sendError(res, 503, 'draining', 'this relay instance is shutting down; retry', {}, { 'Retry-After': '1', Connection: 'close' });
  };

  const rejectWebhook = (res: ServerResponse, status: number, reason: 'signature' | 'too_large' | 'malformed', message: string) => {
    metrics.webhooksRejected[reason] += 1;
    logger.warn('rejected a webhook', { status, reason });
    const code = reason === 'signature' ? 'invalid_signature' : reason === 'too_large' ? 'payload_too_large' : 'invalid_input';
    sendError(res, status, code, message);
  };

  const handleWebhookPost = async (req: IncomingMessage, res: ServerResponse) => {
    if (draining) return refuseWhileDraining(res);
    const body = await readBody(req, maxBodyBytes);
    if (body.kind === 'aborted') return;
    if (body.kind === 'too_large') {
      if (!body.drained) {
        res.setHeader('Connection', 'close');
        res.on('finish', () => req.destroy());
      }
      return rejectWebhook(res, 413, 'too_large', `the body is larger than ${maxBodyBytes} bytes`);
    }
    if (options.appSecret !== undefined && options.appSecret !== '') {
      const header = req.headers['x-hub-signature-256'];
      if (!isValidSignature(body.raw, typeof header === 'string' ? header : undefined, options.appSecret)) {
        return rejectWebhook(res, 401, 'signature', 'missing or invalid X-Hub-Signature-256');
      }
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.raw.toString('utf8'));
    } catch {
      return rejectWebhook(res, 400, 'malformed', 'the body is not valid JSON');
    }
    metrics.webhooksReceived += 1;
    const receivedAt = Date.now();
    // protocol.md: answer 200 at once and do the work after.
    sendJson(res, 200, { received: true });
    try {
      ingest(parsed, receivedAt);
    } catch (error) {
      // Past the 200 nobody is waiting for an answer; the relay must stay up for the next webhook.
      logger.error('processing a webhook failed', { error });
    }
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
    sendError(res, 403, 'verification_failed', 'verification failed');
  };

  const handleEvents = async (req: IncomingMessage, url: URL, res: ServerResponse) => {
    const agent = authenticate(req, res);
    if (agent === undefined) return;
    if (draining) return refuseWhileDraining(res);
    const header = req.headers['last-event-id'];
    const token = (typeof header === 'string' && header.trim() !== '' ? header : undefined) ?? url.searchParams.get('since') ?? undefined;
    const { joined } = hub.open(res, agent, parseResumeToken(token));
    await joined;
  };

  /** The call id in a /calls/{id}/… path, or undefined after answering 400 with the rule. */
  const callIdFromPath = (res: ServerResponse, rawCallId: string): string | undefined => {
    let callId: string;
    try {
      callId = decodeURIComponent(rawCallId);
    } catch {
      sendError(res, 400, 'invalid_input', 'callId: must be a URL-encoded call id', { field: 'callId' });
      return undefined;
    }
    if (!callIdSchema.safeParse(callId).success) {
      sendError(res, 400, 'invalid_input', 'callId: must be 1 to 512 characters', { field: 'callId' });
      return undefined;
    }
    return callId;
  };

  /**
   * An agent declined a ringing call: it stops ringing for that agent only. The answer says how many
   * colleagues may still answer it (available or connected, and not declined too) and who answered
   * it if someone has: the app rejects the call at the gateway only when nobody is left.
   */
  const handleDecline = async (req: IncomingMessage, res: ServerResponse, rawCallId: string) => {
    const agent = authenticate(req, res);
    if (agent === undefined) return;
    const callId = callIdFromPath(res, rawCallId);
    if (callId === undefined) return;
    const owner = knownCalls.ownerOf(callId) ?? (await backend.claimOwner(callId));
    if (owner !== undefined && owner !== agent.id) return sendJson(res, 200, { callId, agentId: agent.id, othersRinging: 0, answeredBy: owner });
    const declined = new Set(await backend.decline(callId, agent.id));
    headStarts.declinedBy(callId, agent.id);
    const othersRinging = directory.ids().filter((id) => id !== agent.id && !declined.has(id) && reachable(id)).length;
    logger.info('a call was declined', { callId, agentId: agent.id, othersRinging });
    sendJson(res, 200, { callId, agentId: agent.id, othersRinging });
  };

  const handleClaim = async (req: IncomingMessage, res: ServerResponse, rawCallId: string) => {
    const agent = authenticate(req, res);
    if (agent === undefined) return;
    const callId = callIdFromPath(res, rawCallId);
    if (callId === undefined) return;
    const outcome = await backend.claim(callId, agent.id);
    if (!outcome.won) {
      logger.info('a claim lost', { callId, agentId: agent.id, owner: outcome.agentId });
      return sendError(res, 409, 'already_claimed', 'Answered by another agent', { agentId: outcome.agentId });
    }
    knownCalls.claimed(callId, agent.id);
    // The others stop ringing on this event: it goes to everyone the call rang. A call that rang
    // nobody (the app claims its own outgoing calls) tells only its owner. A repeated claim by the
    // winner is a duplicate and stores nothing.
    const claimed: RelayEvent = { type: 'call.claimed', callId, agentId: agent.id, timestamp: Date.now() };
    await queue.run(orderingKeyOf(claimed), () =>
      store(claimed, Date.now(), knownCalls.ringingAudienceOf(callId) ?? { kind: 'agent', agentId: agent.id }).then(
        () => undefined,
        (error: unknown) => logger.error('storing a claim event failed', { callId, error }),
      ),
    );
    logger.info('a call was claimed', { callId, agentId: agent.id });
    sendJson(res, 200, { callId, agentId: agent.id });
  };

  const handlePresence = async (req: IncomingMessage, res: ServerResponse) => {
    const agent = authenticate(req, res);
    if (agent === undefined) return;
    const body = await readBody(req, 4 * 1024);
    if (body.kind === 'aborted') return;
    if (body.kind === 'too_large') return sendError(res, 413, 'payload_too_large', 'the body is larger than 4096 bytes');
    let json: unknown;
    try {
      json = JSON.parse(body.raw.toString('utf8'));
    } catch {
      json = undefined;
    }
    const parsed = presenceBodySchema.safeParse(typeof json === 'object' && json !== null && !Array.isArray(json) ? json : {});
    if (!parsed.success) return sendError(res, 400, 'invalid_input', `status: ${PRESENCE_RULE}`, { field: 'status' });
    const status: Presence = parsed.data.status;
    await backend.setPresence(agent.id, status, presenceTtlMs);
    logger.debug('presence', { agentId: agent.id, status });
    sendJson(res, 200, { agentId: agent.id, status });
  };

  const handleHealth = (res: ServerResponse) => {
    sendJson(res, draining ? 503 : 200, {
      status: draining ? 'draining' : 'ok',
      backend: backend.kind,
      instance: instanceId,
      epoch,
      connectedAgents: hub.connected,
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://relay.invalid');
    const method = req.method ?? 'GET';
    const path = url.pathname;
    switch (path) {
      case RELAY_PATHS.webhook:
        if (method === 'POST') return track(handleWebhookPost(req, res));
        if (method === 'GET') return handleVerification(url, res);
        return methodNotAllowed(res, 'GET, POST');
      case RELAY_PATHS.events:
        if (method === 'GET') return handleEvents(req, url, res);
        return methodNotAllowed(res, 'GET');
      case RELAY_PATHS.health:
        if (method === 'GET') return handleHealth(res);
        return methodNotAllowed(res, 'GET');
      case AGENT_API_PATHS.metrics:
        if (method !== 'GET') return methodNotAllowed(res, 'GET');
        res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Cache-Control': 'no-store' });
        res.end(renderMetrics());
        return;
      case AGENT_API_PATHS.me: {
        if (method !== 'GET') return methodNotAllowed(res, 'GET');
        const agent = authenticate(req, res);
        if (agent !== undefined) sendJson(res, 200, { agentId: agent.id, name: agent.name });
        return;
      }
      case AGENT_API_PATHS.presence:
        if (method === 'PUT') return track(handlePresence(req, res));
        return methodNotAllowed(res, 'PUT');
      default: {
        const claim = CLAIM_PATH.exec(path);
        if (claim) {
          if (method === 'POST') return track(handleClaim(req, res, claim[1]!));
          return methodNotAllowed(res, 'POST');
        }
        const decline = DECLINE_PATH.exec(path);
        if (decline) {
          if (method === 'POST') return track(handleDecline(req, res, decline[1]!));
          return methodNotAllowed(res, 'POST');
        }
        return sendError(res, 404, 'not_found', `no such endpoint: ${path}`);
      }
    }
  };

  const renderMetrics = () => metrics.render({ connectedAgents: hub.connected, residentMemoryBytes: process.memoryUsage.rss() });

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error('request failed', { path: req.url?.split('?')[0], error });
      if (!res.headersSent) sendError(res, 503, 'unavailable', 'the relay could not complete the request; retry');
      else res.destroy();
    });
  });
  // Slow senders cannot hold a webhook request open forever; SSE responses are unaffected.
  server.headersTimeout = 15_000;
  server.requestTimeout = 60_000;

  try {
    await new Promise<void>((resolve, rejectListen) => {
      const onError = (e: Error) => rejectListen(e);
      server.once('error', onError);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', onError);
        resolve();
      });
    });
  } catch (error) {
    unsubscribe();
    hub.close();
    headStarts.close();
    if (ownsBackend) await backend.close().catch(() => undefined);
    throw error;
  }
  server.on('error', (error) => logger.error('server error', { error }));
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.info('relay listening', { url, instance: instanceId, backend: backend.kind, agents: directory.size });

  let closing: Promise<void> | undefined;
  const drain = async () => {
    draining = true;
    logger.info('draining', { instance: instanceId, sessions: hub.connected });
    // In-flight webhooks and claims finish, and what they store is stored (a sender that trickles a
    // body, or a backend that hangs, gets drainTimeoutMs per step, not for ever) …
    await withDeadline(
      (async () => {
        while (inflight.size > 0) await Promise.allSettled([...inflight]);
      })(),
      drainTimeoutMs,
    );
    await withDeadline(queue.idle(), drainTimeoutMs);
    // … and reaches this instance's streams (through Redis that takes a moment) …
    await waitUntil(() => awaitingFanOut.size === 0, 2_000);
    // … which are flushed and ended: agents reconnect to another instance with their cursor.
    await hub.drain(drainTimeoutMs);
    unsubscribe();
    headStarts.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    if (ownsBackend) await backend.close();
    logger.info('relay closed', { instance: instanceId });
  };

  return {
    url,
    port,
    epoch,
    instanceId,
    backendKind: backend.kind,
    close() {
      closing ??= drain().catch((error: unknown) => {
        logger.error('closing the relay failed', { error });
        hub.close();
        server.closeAllConnections();
      });
      return closing;
    },
    stats: () => ({
      webhooksReceived: metrics.webhooksReceived,
      webhooksRejected: metrics.webhooksRejectedTotal,
      eventsDelivered: metrics.eventsDelivered,
      connectedAgents: hub.connected,
      eventsStored: metrics.eventsStored,
      eventsDropped: metrics.eventsDroppedTotal,
      inFlight: inflight.size,
      ...('size' in backend && typeof backend.size === 'number' ? { retainedEvents: backend.size } : {}),
    }),
    metrics: renderMetrics,
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    setAgents(agents, agentTokens = []) {
      directory.replace([...agents, ...legacyAgents(agentTokens)]);
      logger.info('agents reloaded', { agents: directory.size });
    },
  };
}

/** Reads the events of the last `windowMs` (start-up), a page at a time. */
async function warmUp(backend: RelayBackend, windowMs: number, observe: (stored: StoredEvent) => void): Promise<void> {
  const pageSize = 1_000;
  let after: string | undefined;
  // A cap, whatever the traffic: the records only matter for calls of the last minute or so.
  for (let pages = 0; pages < 100; pages += 1) {
    const page = await backend.readAfter(after, { limit: pageSize, sinceMs: windowMs });
    for (const stored of page) observe(stored);
    const last = page.at(-1);
    if (page.length < pageSize || last === undefined) return;
    after = last.cursor;
  }
}

async function withDeadline(work: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}
