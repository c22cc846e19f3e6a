// The webhook relay for a team (ARCHITECTURE.md, relay/README.md), as HTTP: each endpoint parses
// its request, authenticates the agent, hands the work to the RelayService (relay-service.ts, which
// holds the state and asks routing.ts who gets what) and writes the answer. startRelay wires the
// backend, the service and a node:http server together, and drains them in order on close().
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { RELAY_PATHS, type RelayEnvelope } from '../shared/events';
import { createLogger, type Logger } from '../shared/log';
import { agentTokenProblem, type Agent, type AgentConfig } from './agent-directory';
import { addressKey, AuthFailureLimiter, type AuthFailureLimits } from './auth-failure-limiter';
import { BridgeNodeEndpoints } from './bridge-node-endpoints';
import {
  BRIDGE_TOKEN_SHARED_RULE,
  bridgeTokenRule,
  DEFAULT_BRIDGE_HEARTBEAT_MS,
  isAgentToken,
  MAX_BRIDGE_HEARTBEAT_MS,
  MIN_BRIDGE_HEARTBEAT_MS,
  RegisteredBridgeNodes,
  type BridgeEventReport,
} from './bridge-nodes';
import { DEFAULT_MAX_STREAMS_PER_AGENT, isValidMaxStreamsPerAgent, MAX_STREAMS_PER_AGENT_RULE } from './agent-sessions';
import { createBackend } from './backend/index';
import { handleBridgeRequest, isBridgePath, type BridgeEndpointContext } from './bridge-endpoints';
import { BridgedCalls, type BridgeNodeSource } from './bridged-calls';
import { callRecordingsFor, type CallRecordings, type RelayRecordingOptions } from './call-recordings';
import { handleRecordingRequest, isRecordingPath } from './recording-endpoints';
import type { RecordingsStore } from './recordings-store';
import { handleCallbacksRequest, isCallbacksPath } from './callback-endpoints';
import { GatewayTerminator, type GatewayTarget } from './gateway-terminator';
import type { TeamAgent } from './team';
import { handleTransferRequest, isTransferPath } from './transfer-endpoints';
import { handleWrapUpRequest, isWrapUpPath } from './wrap-up-endpoint';
import { handleHoldRequest, isHoldPath } from './hold-endpoint';
import { handleSupervisorRequest, isSupervisorPath } from './monitor-endpoints';
import { REPORT_PATHS, sendReport, type ReportKind } from './reports';
import { WallboardSource } from './wallboard';
import { WALLBOARD_PATH } from '../shared/wallboard';
import type { RelayBackend } from './backend/types';
import { boundedBody, clientAddressOf, methodNotAllowed, readBody, sendError, sendJson } from './http-io';
import { METRICS_CONTENT_TYPE } from './metrics';
import type { RecordsStatus, RelayRecords, WrapUpRecords } from './records/relay-records';
import type { SqlRunner } from './records/database';

/** What the wallboard and the reports read: the records' database once it is open. */
const readRecords = (records: RelayRecords) => (): Promise<SqlRunner> => records.database();
import { RelayService, withDeadline, type RelayStats } from './relay-service';
import { parsePresenceReport } from './presence-report';
import { parseResumeToken } from './resume-token';
import { TeamSettingsSource } from './team-settings-source';
import { turnConfigProblem, turnCredentialsFor, type TurnConfig } from './turn-credentials';
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
  /** Plain tokens (development, older set-ups): agents `agent-1`, `agent-2`, … in order. At least 32 characters each unless `dev`. */
  agentTokens?: string[];
  /** Accepts plain agent tokens shorter than 32 characters (development and tests only). */
  dev?: boolean;
  /** Shared state; when given, the caller owns it and closes it. Otherwise one is created from `redisUrl`. */
  backend?: RelayBackend;
  /** `redis://host:port`: the Redis backend, for several instances behind one URL. Absent: memory. */
  redisUrl?: string;
  /** Prefix of every Redis key (default `relay:`). */
  redisPrefix?: string;
  /**
   * The bridge nodes' token (relay/REFERENCE.md "Bridge nodes"): with it, nodes register at
   * `/bridge/nodes` and report their load; without it those endpoints answer 404. At least 32
   * characters, no spaces, and no agent's token.
   */
  bridgeToken?: string;
  /** How often a bridge node reports its load; three missed and it is gone. Default 5000. */
  bridgeHeartbeatMs?: number;
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
  /** The TURN server's shared secret and URLs: `GET /turn-credentials` hands agents credentials for it. Absent: that endpoint answers 404. */
  turn?: TurnConfig;
  /** Open event streams per agent on this instance; one more closes the agent's oldest. Default 5. */
  maxStreamsPerAgent?: number;
  /** Failed agent authentication per client address: default 20 failures a minute, 10 000 addresses remembered. */
  authFailureLimits?: AuthFailureLimits;
  /**
   * The client address is the last `X-Forwarded-For` entry rather than the socket's peer. Only for a
   * relay reachable solely through one reverse proxy that appends the address it saw.
   */
  trustProxy?: boolean;
  /** A request's headers must arrive within this. Default 10 000. */
  headersTimeoutMs?: number;
  /** A whole request (headers and body; not the response, so not an event stream) must arrive within this. Default 30 000. */
  requestTimeoutMs?: number;
  /** An idle kept-alive connection is closed after this. Default 5000. */
  keepAliveTimeoutMs?: number;
  /** How often the header and request timeouts are checked. Default 1000. */
  connectionsCheckingIntervalMs?: number;
  /**
   * Where bridged calls' media goes (bridge/REFERENCE.md): the node in this process (`--bridge`) or
   * the team's registered nodes. Absent: the registered nodes when there is a bridge token, else
   * every call is direct.
   */
  bridgeNodes?: BridgeNodeSource;
  /** How long a transfer of a bridged call rings (tests). Default TRANSFER_RING_MS, 30 000. */
  transferRingMs?: number;
  /** How long a member of a bridged call whose leg went has to rejoin (tests). Default REJOIN_WINDOW_MS, 60 000. */
  rejoinWindowMs?: number;
  /**
   * The gateway and the team's key (`--gateway-url`, `--api-key`, `--gateway-product`): the relay
   * then ends at the gateway the bridged calls no agent can end any more (relay/REFERENCE.md
   * "Rejoining"). A function is read at each terminate, for a gateway that starts after the relay.
   * Absent: such a call's customer is let go and the service ends it. The key is never logged.
   */
  gateway?: GatewayTarget | (() => GatewayTarget | undefined);
  /**
   * The team's call records (relay/records/README.md, `CallRecords`): told every call event, claim,
   * decline and presence report this instance handles. The caller owns them: it closes them after
   * the relay, so that what the drain stored is written too. Absent: no records are kept.
   */
  records?: RelayRecords;
  /**
   * The team's settings (relay/REFERENCE.md "Team settings"): the caller's holder, whose changes
   * (`replace`, a reload) reach every open stream as `event: team`. Absent: DEFAULT_TEAM_SETTINGS,
   * in a holder of the relay's own (`RelayServer.teamSettings`).
   */
  teamSettings?: TeamSettingsSource;
  /**
   * The team's recordings of bridged calls (relay/REFERENCE.md "Recordings"): `--record`, the store
   * (`RecordingsStore`, which the caller opens and closes after the relay and its node) and the
   * notice. Recording needs a bridge (`bridgeNodes` or `bridgeToken`). Absent: nothing is recorded.
   */
  recordings?: RelayRecordingOptions;
  /**
   * The agents in a bridged call are told when a supervisor listens to it, as they always are of a
   * whisper or a barge (`--tell-agents-when-monitored`; relay/REFERENCE.md "Supervisors"). Default false.
   */
  tellAgentsWhenMonitored?: boolean;
}

export type { RelayStats } from './relay-service';
export type { BridgeEventReport } from './bridge-nodes';

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
  metrics(): Promise<string>;
  /** Every stored event this instance fans out (embedded mode, benchmarks). */
  onEvent(listener: (envelope: RelayEnvelope) => void): () => void;
  /**
   * Replaces the agents (a reloaded agents file); open sessions of removed agents keep running until
   * they reconnect, and those of an agent whose role changed are told (`event: team`).
   */
  setAgents(agents: AgentConfig[], agentTokens?: string[]): void;
  /** The team's settings in force: `RelayOptions.teamSettings`, or the relay's own holder of the defaults. */
  readonly teamSettings: TeamSettingsSource;
  /**
   * Every event a bridge node posts to this instance (`POST /bridge/nodes/{nodeId}/events`). A relay
   * without a bridge token takes none, and never calls the listener.
   */
  onBridgeEvent(listener: (report: BridgeEventReport) => void): () => void;
}

export const DEFAULT_RETENTION_MS = 10 * 60_000;
export const DEFAULT_HEARTBEAT_MS = 5_000;
export const MAX_WEBHOOK_BYTES = 3 * 1024 * 1024;
export const DEFAULT_PREFERRED_AGENT_RELEASE_MS = 10_000;
export const DEFAULT_PRESENCE_TTL_MS = 60_000;
const MAX_AGENT_BODY_BYTES = 64 * 1024;
const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** Node checks the header and request timeouts only this often (its default, 30 s, would let a slow-headers client stay 40 s). */
const DEFAULT_CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

/** Paths of the agent API besides RELAY_PATHS (relay/REFERENCE.md "Endpoints"). */
export const AGENT_API_PATHS = { me: '/me', presence: '/presence', metrics: '/metrics', turnCredentials: '/turn-credentials', teamSettings: '/team/settings' } as const;
const CLAIM_PATH = /^\/calls\/([^/]+)\/claim$/;
const DECLINE_PATH = /^\/calls\/([^/]+)\/decline$/;

const callIdSchema = z.string().min(1).max(512);

export async function startRelay(options: RelayOptions): Promise<RelayServer> {
  const logger = options.logger ?? createLogger('relay');
  const host = options.host ?? '127.0.0.1';
  const instanceId = options.instanceId ?? randomBytes(6).toString('hex');
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  const drainTimeoutMs = options.drainTimeoutMs ?? 5_000;
  if (!options.appSecret) logger.warn('no app secret configured: webhook signatures are not checked');
  if (options.turn !== undefined) {
    const problem = turnConfigProblem(options.turn);
    if (problem !== undefined) throw new RangeError(problem);
  }
  const dev = options.dev === true;
  checkAgentTokens(options.agentTokens ?? [], dev);
  const { bridgeToken } = options;
  if (bridgeToken !== undefined) checkBridgeToken(bridgeToken, options.agents ?? [], options.agentTokens ?? []);
  const bridgeHeartbeatMs = options.bridgeHeartbeatMs ?? DEFAULT_BRIDGE_HEARTBEAT_MS;
  if (!Number.isInteger(bridgeHeartbeatMs) || bridgeHeartbeatMs < MIN_BRIDGE_HEARTBEAT_MS || bridgeHeartbeatMs > MAX_BRIDGE_HEARTBEAT_MS) {
    throw new RangeError(`bridgeHeartbeatMs: must be a whole number from ${MIN_BRIDGE_HEARTBEAT_MS} to ${MAX_BRIDGE_HEARTBEAT_MS}`);
  }
  const maxStreamsPerAgent = options.maxStreamsPerAgent ?? DEFAULT_MAX_STREAMS_PER_AGENT;
  if (!isValidMaxStreamsPerAgent(maxStreamsPerAgent)) throw new RangeError(`maxStreamsPerAgent: ${MAX_STREAMS_PER_AGENT_RULE}`);
  const limiter = new AuthFailureLimiter(options.authFailureLimits);
  const bridges = options.bridgeNodes !== undefined || bridgeToken !== undefined;
  if (!bridges && options.recordings !== undefined && options.recordings.mode !== 'never') {
    throw new RangeError(`recordings: record ${options.recordings.mode} needs a bridge (bridgeNodes or bridgeToken): recordings are made on the team's bridge`);
  }
  const recordings = bridges ? callRecordingsFor(options.recordings, logger) : undefined;
  const timeouts = {
    headersTimeout: options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    requestTimeout: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: options.connectionsCheckingIntervalMs ?? DEFAULT_CONNECTIONS_CHECKING_INTERVAL_MS,
  };
  // node:http refuses the same, but only once the backend and the service would be running.
  if (timeouts.requestTimeout > 0 && timeouts.headersTimeout > timeouts.requestTimeout) throw new RangeError('headersTimeoutMs: must not exceed requestTimeoutMs');

  const teamSettings = options.teamSettings ?? new TeamSettingsSource();
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
  // Memory cursors carry their process's epoch; Redis cursors are shared, so the instance names itself.
  const epoch = backend.epoch ?? instanceId;

  // With a bridge token and no node of its own, bridged calls go to the team's registered nodes.
  const registeredNodes = options.bridgeNodes === undefined && bridgeToken !== undefined ? new RegisteredBridgeNodes(backend, bridgeToken, logger) : undefined;
  const bridgeNodes = options.bridgeNodes ?? registeredNodes;
  let bridge: BridgedCalls | undefined;
  const gateway = options.gateway;
  const terminator =
    gateway === undefined || bridgeNodes === undefined ? undefined : new GatewayTerminator({ target: typeof gateway === 'function' ? gateway : () => gateway, logger });
  const service: RelayService = await RelayService.start({
    ...(bridgeNodes !== undefined
      ? {
          bridge: (bridge = new BridgedCalls({
            nodes: recordings?.observe(bridgeNodes) ?? bridgeNodes,
            placements: backend,
            ownerOf: (callId) => backend.claimOwner(callId),
            // Asked only by an agent's transfer, once the service below is running.
            team: (): readonly TeamAgent[] => service.transferColleagues(),
            logger,
            ...(options.transferRingMs !== undefined ? { transferRingMs: options.transferRingMs } : {}),
            ...(options.rejoinWindowMs !== undefined ? { rejoinWindowMs: options.rejoinWindowMs } : {}),
            ...(terminator !== undefined ? { terminator } : {}),
            tellAgentsWhenMonitored: options.tellAgentsWhenMonitored === true,
          })),
        }
      : {}),
    backend,
    ownsBackend,
    agents: options.agents ?? [],
    agentTokens: options.agentTokens ?? [],
    logger,
    releaseMs: Math.max(0, options.preferredAgentReleaseMs ?? DEFAULT_PREFERRED_AGENT_RELEASE_MS),
    presenceTtlMs: options.presenceTtlMs ?? DEFAULT_PRESENCE_TTL_MS,
    heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    maxBufferBytes: options.maxClientBufferBytes ?? 8 * 1024 * 1024,
    maxStreamsPerAgent,
    freshReplayMs: options.freshReplayMs ?? 60_000,
    ...(bridgeToken !== undefined ? { bridgeNodes: { heartbeatMs: bridgeHeartbeatMs } } : {}),
    ...(options.records !== undefined ? { records: options.records } : {}),
    ...(recordings !== undefined ? { recordings } : {}),
    teamSettings,
  });
  if (bridge !== undefined) recordings?.attach(bridge);
  options.records?.followPresence((agentId) => backend.presenceOf(agentId), options.presenceTtlMs ?? DEFAULT_PRESENCE_TTL_MS);
  if (service.agentCount === 0) logger.warn('no agents configured: no agent can connect');

  const endpoints = new RelayEndpoints(service, logger, {
    ...(bridge !== undefined ? { bridge } : {}),
    ...(recordings !== undefined ? { recordings } : {}),
    ...(options.recordings?.store !== undefined && bridges ? { recordingsStore: options.recordings.store } : {}),
    ...(options.appSecret !== undefined ? { appSecret: options.appSecret } : {}),
    ...(options.verifyToken !== undefined ? { verifyToken: options.verifyToken } : {}),
    maxBodyBytes: options.maxBodyBytes ?? MAX_WEBHOOK_BYTES,
    maxAgentBodyBytes: MAX_AGENT_BODY_BYTES,
    limiter,
    trustProxy: options.trustProxy === true,
    ...(options.turn !== undefined ? { turn: { ...options.turn, urls: [...options.turn.urls] } } : {}),
    teamSettings,
    health: () => ({ backend: backend.kind, instance: instanceId, epoch, ...(options.records !== undefined ? { records: options.records.status() } : {}) }),
    ...(options.records !== undefined ? { records: options.records } : {}),
    wallboard: new WallboardSource({
      database: options.records === undefined ? undefined : readRecords(options.records),
      settings: () => teamSettings.current(),
      callbacks: () => service.callbacks(),
    }),
    ...(options.records !== undefined ? { reportsDatabase: readRecords(options.records) } : {}),
    ...(bridgeToken !== undefined && service.nodeRegistry !== undefined
      ? { nodes: new BridgeNodeEndpoints(service.nodeRegistry, { bridgeToken, limiter, trustProxy: options.trustProxy === true, maxBodyBytes: MAX_AGENT_BODY_BYTES, log: logger }) }
      : {}),
  });

  // A slow client cannot hold a socket: its headers must come within headersTimeout and its whole
  // request within requestTimeout (Node counts both only until the request is received, so an
  // event stream, a long response, is not cut); an idle kept-alive connection goes after keepAliveTimeout.
  const server = createServer(timeouts, (req, res) => {
    endpoints.handle(req, res).catch((error: unknown) => {
      logger.error('request failed', { path: req.url?.split('?')[0], error });
      if (!res.headersSent) sendError(res, 503, 'unavailable', 'the relay could not complete the request; retry');
      else res.destroy();
    });
  });

  try {
    await listen(server, options.port ?? 0, host);
  } catch (error) {
    service.abort();
    await service.close().catch(() => undefined);
    await registeredNodes?.close();
    await terminator?.close();
    throw error;
  }
  server.on('error', (error) => logger.error('server error', { error }));
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.info('relay listening', { url, instance: instanceId, backend: backend.kind, agents: service.agentCount, turnUrls: options.turn?.urls ?? [], endsCallsAtGateway: terminator !== undefined });

  let closing: Promise<void> | undefined;
  const drain = async () => {
    endpoints.draining = true;
    logger.info('draining', { instance: instanceId, sessions: service.connectedAgents });
    // In-flight webhooks and claims finish (a sender that trickles a body gets drainTimeoutMs, not
    // for ever), then what they stored reaches the streams, which are flushed and ended.
    await endpoints.settle(drainTimeoutMs);
    await service.drain(drainTimeoutMs);
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await service.close();
    await recordings?.close();
    await registeredNodes?.close();
    await terminator?.close();
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
        service.abort();
        server.closeAllConnections();
      });
      return closing;
    },
    stats: () => ({ ...service.stats(), inFlight: endpoints.inFlight }),
    metrics: () => service.renderMetrics(),
    onEvent: (listener) => service.onEvent(listener),
    onBridgeEvent: (listener) => service.nodeRegistry?.onEvent(listener) ?? (() => undefined),
    teamSettings,
    setAgents(agents, agentTokens = []) {
      checkAgentTokens(agentTokens, dev);
      if (bridgeToken !== undefined) checkBridgeToken(bridgeToken, agents, agentTokens);
      service.setAgents(agents, agentTokens);
      logger.info('agents reloaded', { agents: service.agentCount });
    },
  };
}

/** Plain tokens are the development path; a deployment's tokens come from add-agent (32 random bytes). */
function checkAgentTokens(tokens: readonly string[], dev: boolean): void {
  for (const token of tokens) {
    const problem = agentTokenProblem(token, dev);
    if (problem !== undefined) {
      throw new RangeError(`agentTokens: ${problem.message}${problem.kind === 'needs_dev' ? ' (pass dev: true for short development tokens)' : ''}`);
    }
  }
}

/** A bridge token a node cannot use, or that an agent holds too, stops the relay from starting. */
function checkBridgeToken(token: string, agents: readonly AgentConfig[], agentTokens: readonly string[]): void {
  const rule = bridgeTokenRule(token);
  if (rule !== undefined) throw new RangeError(`bridgeToken: ${rule}`);
  if (isAgentToken(token, agents, agentTokens)) throw new RangeError(`bridgeToken: ${BRIDGE_TOKEN_SHARED_RULE}`);
}

interface EndpointOptions {
  /** When set, every webhook must carry a valid X-Hub-Signature-256. */
  appSecret?: string;
  verifyToken?: string;
  /** Largest webhook body. */
  maxBodyBytes: number;
  /** Largest body of an agent request. */
  maxAgentBodyBytes: number;
  /** Failed authentication per client address. */
  limiter: AuthFailureLimiter;
  trustProxy: boolean;
  /** Absent: `GET /turn-credentials` answers 404 not_configured. */
  turn?: TurnConfig;
  /** The team's settings in force: the break reasons `PUT /presence` takes. */
  teamSettings: TeamSettingsSource;
  /** What /healthz says besides the status and the connected agents. */
  health: () => { backend: RelayBackend['kind']; instance: string; epoch: string; records?: RecordsStatus };
  /** The bridge nodes' endpoints; absent without a bridge token, and then they answer 404. */
  nodes?: BridgeNodeEndpoints;
  /** Bridged calls: absent, the bridge endpoints answer 404. */
  bridge?: BridgedCalls;
  /** When bridged calls record ("Record" answers 404 without); and where the recordings are (absent: every one 404). */
  recordings?: CallRecordings;
  recordingsStore?: RecordingsStore;
  /** The call records, for wrap-ups; absent, they answer 503. */
  records?: WrapUpRecords;
  /** The team's live picture (GET /team/wallboard). */
  wallboard: WallboardSource;
  /** The records' database, for the reports; absent, they answer 503. */
  reportsDatabase?: () => Promise<SqlRunner>;
}

/** The HTTP endpoints (relay/REFERENCE.md "Endpoints"): parse, authenticate, ask the service, answer. */
class RelayEndpoints {
  /** Set by close(): webhooks, new streams and /healthz answer 503 from then on. */
  draining = false;
  /** Requests whose work close() must let finish: webhooks being read, claims, declines, presence reports. */
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    private readonly service: RelayService,
    private readonly log: Logger,
    private readonly options: EndpointOptions,
  ) {}

  get inFlight(): number {
    return this.inflight.size;
  }

  /** Waits for the requests in flight, `timeoutMs` at most (and again for any that started meanwhile). */
  async settle(timeoutMs: number): Promise<void> {
    await withDeadline(
      (async () => {
        while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
      })(),
      timeoutMs,
    );
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    // The service's webhooks, most of the requests, need no URL parsed.
    if (method === 'POST' && req.url === RELAY_PATHS.webhook) return this.track(this.webhookPost(req, res));
    const url = new URL(req.url ?? '/', 'http://relay.invalid');
    const path = url.pathname;
    switch (path) {
      case RELAY_PATHS.webhook:
        if (method === 'POST') return this.track(this.webhookPost(req, res));
        if (method === 'GET') return this.verification(url, res);
        return methodNotAllowed(res, 'GET, POST');
      case RELAY_PATHS.events:
        if (method === 'GET') return this.events(req, url, res);
        return methodNotAllowed(res, 'GET');
      case RELAY_PATHS.health:
        if (method === 'GET') return this.health(res);
        return methodNotAllowed(res, 'GET');
      case AGENT_API_PATHS.metrics:
        if (method !== 'GET') return methodNotAllowed(res, 'GET');
        return this.metrics(res);
      case AGENT_API_PATHS.me: {
        if (method !== 'GET') return methodNotAllowed(res, 'GET');
        const agent = this.authenticate(req, res);
        const record = this.options.recordings?.offered;
        if (agent !== undefined) sendJson(res, 200, { agentId: agent.id, name: agent.name, role: agent.role, ...(this.options.bridge !== undefined ? { bridged: true } : {}), ...(record !== undefined ? { record } : {}) });
        return;
      }
      case AGENT_API_PATHS.teamSettings: {
        if (method !== 'GET') return methodNotAllowed(res, 'GET');
        const agent = this.authenticate(req, res);
        if (agent !== undefined) sendJson(res, 200, this.service.teamInfoOf(agent.id) ?? { agentId: agent.id, role: agent.role, settings: this.options.teamSettings.current() });
        return;
      }
      case WALLBOARD_PATH: {
        if (method !== 'GET') return methodNotAllowed(res, 'GET');
        const agent = this.authenticate(req, res);
        if (agent === undefined) return;
        return this.track(this.options.wallboard.wallboard(this.service.team(agent.id).agents).then((board) => sendJson(res, 200, board)));
      }
      case REPORT_PATHS.calls:
      case REPORT_PATHS.states: {
        if (method !== 'GET') return methodNotAllowed(res, 'GET');
        const agent = this.authenticate(req, res);
        if (agent === undefined) return;
        if (agent.role !== 'supervisor') return sendError(res, 403, 'forbidden', "only a supervisor reads the team's reports");
        const kind: ReportKind = path === REPORT_PATHS.calls ? 'calls' : 'states';
        const { reportsDatabase, teamSettings } = this.options;
        return this.track(sendReport(req, res, kind, { database: reportsDatabase, settings: () => teamSettings.current() }));
      }
      case AGENT_API_PATHS.presence:
        if (method === 'PUT') return this.track(this.presence(req, res));
        return methodNotAllowed(res, 'PUT');
      case AGENT_API_PATHS.turnCredentials:
        if (method === 'GET') return this.turnCredentials(req, res);
        return methodNotAllowed(res, 'GET');
      default: {
        const claim = CLAIM_PATH.exec(path);
        if (claim) {
          if (method === 'POST') return this.track(this.claim(req, res, claim[1]!));
          return methodNotAllowed(res, 'POST');
        }
        const decline = DECLINE_PATH.exec(path);
        if (decline) {
          if (method === 'POST') return this.track(this.decline(req, res, decline[1]!));
          return methodNotAllowed(res, 'POST');
        }
        const { bridge } = this.options;
        const { nodes } = this.options;
        if (nodes !== undefined && BridgeNodeEndpoints.owns(path)) return this.track(nodes.handle(req, res, path, method));
        if (bridge !== undefined && isBridgePath(path)) return this.track(handleBridgeRequest({ ...this.agentRequests(), bridge }, path, method, req, res));
        if (isRecordingPath(path)) {
          const { recordings, recordingsStore: store } = this.options;
          const authenticateNode = nodes === undefined ? undefined : (q: IncomingMessage, r: ServerResponse) => nodes.authenticate(q, r);
          return this.track(handleRecordingRequest({ ...this.agentRequests(), recordings, store, authenticateNode, log: this.log }, path, method, req, res));
        }
        if (isWrapUpPath(path)) {
          const { records, teamSettings } = this.options;
          const wrapUp = { authenticate: (q: IncomingMessage, r: ServerResponse) => this.authenticate(q, r), body: (q: IncomingMessage, r: ServerResponse) => this.agentBody(q, r), idFromPath, records, settings: () => teamSettings.current(), log: this.log };
          return this.track(handleWrapUpRequest(wrapUp, path, method, req, res));
        }
        if (isHoldPath(path)) {
          const { service } = this;
          const hold = {
            authenticate: (q: IncomingMessage, r: ServerResponse) => this.authenticate(q, r),
            body: (q: IncomingMessage, r: ServerResponse) => this.agentBody(q, r),
            idFromPath,
            reportHold: (callId: string, agentId: string, held: boolean) => service.reportHold(callId, agentId, held),
            keepsRecords: this.options.records !== undefined,
          };
          return this.track(handleHoldRequest(hold, path, method, req, res));
        }
        if (isCallbacksPath(path)) {
          const { service } = this;
          const callbacks = {
            authenticate: (q: IncomingMessage, r: ServerResponse) => this.authenticate(q, r),
            body: (q: IncomingMessage, r: ServerResponse) => this.agentBody(q, r),
            idFromPath,
            callbacks: () => service.callbacks(),
            takeCallback: (id: string, agent: Agent) => service.takeCallback(id, agent),
          };
          return this.track(handleCallbacksRequest(callbacks, path, method, req, res));
        }
        if (isSupervisorPath(path)) return this.track(handleSupervisorRequest({ ...this.agentRequests(), supervision: this.service.supervision }, path, method, req, res));
        if (isTransferPath(path)) {
          return this.track(handleTransferRequest({ ...this.agentRequests(), bridge, team: (selfId) => this.service.team(selfId) }, path, method, req, res));
        }
        return sendError(res, 404, 'not_found', `no such endpoint: ${path}`);
      }
    }
  }

  /** What the bridge's and the transfers' endpoints need of an agent request. */
  private agentRequests(): Omit<BridgeEndpointContext, 'bridge'> {
    return {
      authenticate: (q, r) => this.authenticate(q, r),
      jsonBody: async (q, r) => {
        const raw = await this.agentBody(q, r);
        if (raw === undefined) return undefined;
        try {
          return raw.length === 0 ? {} : (JSON.parse(raw.toString('utf8')) as unknown);
        } catch {
          return {};
        }
      },
      idFromPath: (r, raw, field) => idFromPath(r, raw, field),
    };
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inflight.add(work);
    void work.finally(() => this.inflight.delete(work)).catch(() => undefined);
    return work;
  }

  /**
   * The agent of a request, or undefined once answered. An address that failed too often lately is
   * refused whatever it presents (relay/REFERENCE.md "Limits"): it is the one guessing, and a correct
   * token from it must not tell a guesser that it guessed right.
   */
  private authenticate(req: IncomingMessage, res: ServerResponse): Agent | undefined {
    const { limiter, trustProxy } = this.options;
    const client = addressKey(clientAddressOf(req, trustProxy));
    const verdict = limiter.check(client);
    if (verdict.limited) {
      this.service.metrics.countRateLimited();
      this.log.debug('refused an agent request from a limited address', { client, retryAfterSec: verdict.retryAfterSec });
      sendError(
        res,
        429,
        'rate_limited',
        `too many failed agent authentications from this address; retry in ${verdict.retryAfterSec} s`,
        { retryAfterSec: verdict.retryAfterSec },
        { 'Retry-After': String(verdict.retryAfterSec) },
      );
      return undefined;
    }
    const agent = this.service.authenticate(req.headers.authorization);
    if (agent === undefined) {
      this.service.metrics.countAuthFailure();
      const after = limiter.fail(client);
      this.log.warn('refused a request without a valid agent token', { path: req.url?.split('?')[0], client });
      if (after.limited) this.log.warn('limited an address that failed agent authentication too often', { client, retryAfterSec: after.retryAfterSec });
      sendError(res, 401, 'unauthorized', 'a valid agent token is required (Authorization: Bearer <token>)', {}, { 'WWW-Authenticate': 'Bearer realm="relay"' });
    }
    return agent;
  }

  /** The body of an agent request, at most maxAgentBodyBytes; undefined once answered 413, or when the client went away. */
  private async agentBody(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined> {
    const limit = this.options.maxAgentBodyBytes;
    return boundedBody(req, res, limit, `the body is larger than ${limit} bytes, the limit of agent requests`);
  }

  private refuseWhileDraining(res: ServerResponse): void {
    sendError(res, 503, 'draining', 'this relay instance is shutting down; retry', {}, { 'Retry-After': '1', Connection: 'close' });
  }

  private rejectWebhook(res: ServerResponse, status: number, reason: 'signature' | 'too_large' | 'malformed', message: string): void {
    this.service.metrics.countWebhookRejected(reason);
    this.log.warn('rejected a webhook', { status, reason });
    const code = reason === 'signature' ? 'invalid_signature' : reason === 'too_large' ? 'payload_too_large' : 'invalid_input';
    sendError(res, status, code, message);
  }

  private async webhookPost(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.draining) return this.refuseWhileDraining(res);
    const { maxBodyBytes, appSecret } = this.options;
    const body = await readBody(req, maxBodyBytes);
    if (body.kind === 'aborted') return;
    if (body.kind === 'too_large') {
      if (!body.drained) {
        res.setHeader('Connection', 'close');
        res.on('finish', () => req.destroy());
      }
      return this.rejectWebhook(res, 413, 'too_large', `the body is larger than ${maxBodyBytes} bytes`);
    }
    if (appSecret !== undefined && appSecret !== '') {
      const header = req.headers['x-hub-signature-256'];
      if (!isValidSignature(body.raw, typeof header === 'string' ? header : undefined, appSecret)) {
        return this.rejectWebhook(res, 401, 'signature', 'missing or invalid X-Hub-Signature-256');
      }
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.raw.toString('utf8'));
    } catch {
      return this.rejectWebhook(res, 400, 'malformed', 'the body is not valid JSON');
    }
    this.service.metrics.countWebhookReceived();
    const receivedAt = Date.now();
    // protocol.md: answer 200 at once and do the work after.
    sendJson(res, 200, { received: true });
    try {
      this.service.ingest(parsed, receivedAt);
    } catch (error) {
      // Past the 200 nobody is waiting for an answer; the relay must stay up for the next webhook.
      this.log.error('processing a webhook failed', { error });
    }
  }

  private verification(url: URL, res: ServerResponse): void {
    const mode = url.searchParams.get('hub.mode');
    const token = url.searchParams.get('hub.verify_token');
    const challenge = url.searchParams.get('hub.challenge');
    const { verifyToken } = this.options;
    if (mode === 'subscribe' && token !== null && challenge !== null && verifyToken && secretsEqual(token, verifyToken)) {
      this.log.info('webhook subscription verified');
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' });
      res.end(challenge);
      return;
    }
    this.log.warn('refused a webhook verification', { mode: mode ?? undefined });
    sendError(res, 403, 'verification_failed', 'verification failed');
  }

  private async events(req: IncomingMessage, url: URL, res: ServerResponse): Promise<void> {
    const agent = this.authenticate(req, res);
    if (agent === undefined) return;
    if (this.draining) return this.refuseWhileDraining(res);
    const header = req.headers['last-event-id'];
    const token = (typeof header === 'string' && header.trim() !== '' ? header : undefined) ?? url.searchParams.get('since') ?? undefined;
    await this.service.openStream(res, agent, parseResumeToken(token));
  }

  private async claim(req: IncomingMessage, res: ServerResponse, rawCallId: string): Promise<void> {
    const agent = this.authenticate(req, res);
    if (agent === undefined) return;
    // No body is expected; one that is sent is still bounded.
    if ((await this.agentBody(req, res)) === undefined) return;
    const callId = callIdFromPath(res, rawCallId);
    if (callId === undefined) return;
    const outcome = await this.service.claim(callId, agent.id);
    if (!outcome.won) return sendError(res, 409, 'already_claimed', 'Answered by another agent', { agentId: outcome.agentId });
    sendJson(res, 200, { callId, agentId: agent.id });
  }

  /** The answer says how many colleagues may still answer: the app rejects the call at the gateway only when nobody is left. */
  private async decline(req: IncomingMessage, res: ServerResponse, rawCallId: string): Promise<void> {
    const agent = this.authenticate(req, res);
    if (agent === undefined) return;
    if ((await this.agentBody(req, res)) === undefined) return;
    const callId = callIdFromPath(res, rawCallId);
    if (callId === undefined) return;
    const verdict = await this.service.decline(callId, agent.id);
    sendJson(res, 200, { callId, agentId: agent.id, ...verdict });
  }

  private async presence(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const agent = this.authenticate(req, res);
    if (agent === undefined) return;
    const raw = await this.agentBody(req, res);
    if (raw === undefined) return;
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      json = undefined;
    }
    const parsed = parsePresenceReport(json, this.options.teamSettings.current());
    if (!parsed.ok) {
      const { field, message, text } = parsed.problem;
      return sendError(res, 400, 'invalid_input', message, { field, ...(text !== undefined ? { text } : {}) });
    }
    const state = await this.service.setPresence(agent.id, parsed.value);
    // A state's reason is said for a break only: an after-call work's is the call it follows.
    sendJson(res, 200, { agentId: agent.id, status: state.presence, ...(state.presence === 'break' && state.reason !== undefined ? { reason: state.reason } : {}), since: state.since });
  }

  /** The token comes first: without one, nobody learns whether this relay hands out TURN credentials. */
  private turnCredentials(req: IncomingMessage, res: ServerResponse): void {
    const agent = this.authenticate(req, res);
    if (agent === undefined) return;
    const { turn } = this.options;
    if (turn === undefined) return sendError(res, 404, 'not_configured', 'this relay hands out no TURN credentials: it runs without --turn-secret and --turn-urls');
    // sendJson answers with Cache-Control: no-store, so no proxy keeps a credential.
    sendJson(res, 200, turnCredentialsFor(turn, agent.id, Date.now()));
  }

  private health(res: ServerResponse): void {
    sendJson(res, this.draining ? 503 : 200, {
      status: this.draining ? 'draining' : 'ok',
      ...this.options.health(),
      connectedAgents: this.service.connectedAgents,
    });
  }

  private async metrics(res: ServerResponse): Promise<void> {
    const text = await this.service.renderMetrics();
    res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Cache-Control': 'no-store' });
    res.end(text);
  }
}

/** The call id in a /calls/{id}/… path, or undefined after answering 400 with the rule. */
function callIdFromPath(res: ServerResponse, rawCallId: string): string | undefined {
  return idFromPath(res, rawCallId, 'callId');
}

/** An id in a path (a call's, a dial's), or undefined after answering 400 naming `field` and the rule. */
function idFromPath(res: ServerResponse, raw: string, field: string): string | undefined {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    sendError(res, 400, 'invalid_input', `${field}: must be a URL-encoded ${field === 'callId' ? 'call id' : 'id'}`, { field });
    return undefined;
  }
  if (!callIdSchema.safeParse(id).success) {
    sendError(res, 400, 'invalid_input', `${field}: must be 1 to 512 characters`, { field });
    return undefined;
  }
  return id;
}

function listen(server: ReturnType<typeof createServer>, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
