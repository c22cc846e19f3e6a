// A real HTTP server on 127.0.0.1 playing the relay's agent-facing contract (relay/REFERENCE.md) for
// the core tests: Bearer tokens per agent, GET /me, PUT /presence, POST /calls/{id}/claim with
// first-claim-wins, POST /calls/{id}/decline (colleagues still ringing: available and not declined),
// GET /team/settings and its `team` event, PUT /calls/{id}/wrap-up, POST /team/callbacks/{id}/take,
// and GET /events as server-sent events. Every request is recorded; a test may take over the answer to a claim or a wrap-up,
// say more in GET /me (`me`: what another relay's version may say), and answer other paths (`routes`: the answers a
// RelayClient request must read, whatever their status, type or size).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TeamInfo } from '../../../shared/api';
import type { CallbackRequest } from '../../../shared/callbacks';
import type { RelayEnvelope, RelayEvent } from '../../../shared/events';
import { DEFAULT_TEAM_SETTINGS } from '../../../shared/team-settings';

export interface TeamAgent {
  id: string;
  name: string;
  token: string;
}

export interface TeamRelayRequest {
  method: string;
  path: string;
  /** The agent the token belongs to; undefined when it belongs to none. */
  agentId: string | undefined;
  authorization: string | undefined;
  body: unknown;
}

export type ClaimAnswer = { status: number; body: string } | 'hang' | 'default';
/** 'default' keeps the wrap-up and answers 200. */
export type WrapUpAnswer = { status: number; body: unknown } | 'default';

/** A route's answer: JSON, or a file's bytes with their type and headers. */
export type RouteAnswer = { status: number; json: unknown } | { status: number; bytes: Buffer; headers: Record<string, string> };
/** A route added to the contract: an answer for the requests it serves (the agent's known), undefined for the others. */
export type TeamRelayRoute = (req: TeamRelayRequest & { agentId: string; headers: IncomingMessage['headers'] }) => RouteAnswer | undefined | Promise<RouteAnswer | undefined>;

export interface TeamRelay {
  url: string;
  agents: TeamAgent[];
  requests: TeamRelayRequest[];
  presence: Map<string, string>;
  /** What GET /team/settings answers (every agent is told the same role). */
  team: TeamInfo;
  /** Said in GET /me beside the agent's id and name (e.g. `bridged`, `record`). */
  me: Record<string, unknown>;
  /** Asked in order before a request is answered 404. */
  routes: TeamRelayRoute[];
  /** `callId agentId` → the wrap-up kept. */
  wrapUps: Map<string, unknown>;
  /** The team's callback requests by id; a take marks one taken by its agent. */
  callbacks: Map<string, CallbackRequest>;
  /** Takes over the answer to a wrap-up. */
  onWrapUp: (callId: string, agentId: string) => WrapUpAnswer;
  /** Sends the named `team` event (no id) to the streams of the given agents (all when none are given). */
  sendTeam(info: TeamInfo, agentIds?: string[]): void;
  /** callId → the agent whose claim won. */
  claims: Map<string, string>;
  /** callId → the agents who declined it. */
  declines: Map<string, Set<string>>;
  /** Takes over the answer to claims ('default' keeps first-claim-wins). */
  onClaim: (callId: string, agentId: string) => ClaimAnswer | Promise<ClaimAnswer>;
  /** Open event streams, per agent id. */
  connected(agentId?: string): number;
  /** Sends an event to the streams of the given agents (all when none are given). */
  send(event: RelayEvent, agentIds?: string[]): void;
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, value: unknown): void => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(value));
};

/** `port` 0 picks a free one; a given port lets a test bring a relay back where it was. */
export async function startTeamRelay(agents: TeamAgent[], port = 0): Promise<TeamRelay> {
  const streams = new Map<ServerResponse, string>();
  const hanging = new Set<ServerResponse>();
  let seq = 0;
  const relay: TeamRelay = {
    url: '',
    agents,
    requests: [],
    presence: new Map(),
    team: { role: 'agent', settings: { ...DEFAULT_TEAM_SETTINGS } },
    me: {},
    routes: [],
    wrapUps: new Map(),
    callbacks: new Map(),
    onWrapUp: () => 'default',
    sendTeam(info, agentIds) {
      for (const [res, id] of streams) if (agentIds === undefined || agentIds.includes(id)) res.write(`event: team\ndata: ${JSON.stringify(info)}\n\n`);
    },
    claims: new Map(),
    declines: new Map(),
    onClaim: () => 'default',
    connected: (agentId) => [...streams.values()].filter((id) => agentId === undefined || id === agentId).length,
    send(event, agentIds) {
      const envelope: RelayEnvelope = { id: `c-${++seq}`, receivedAt: Date.now(), event };
      for (const [res, id] of streams) {
        if (agentIds === undefined || agentIds.includes(id)) res.write(`id: ${envelope.id}\ndata: ${JSON.stringify(envelope)}\n\n`);
      }
    },
    async close() {
      for (const res of [...streams.keys(), ...hanging]) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> => {
    const authorization = req.headers.authorization;
    const agent = agents.find((a) => authorization === `Bearer ${a.token}`);
    let body: unknown;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      body = raw;
    }
    const path = req.url ?? '';
    relay.requests.push({ method: req.method ?? '', path, agentId: agent?.id, authorization, body });
    if (!agent) return json(res, 401, { error: { code: 'unauthorized', message: 'unknown agent token' } });

    if (req.method === 'GET' && path === '/me') return json(res, 200, { agentId: agent.id, name: agent.name, ...relay.me });

    if (req.method === 'PUT' && path === '/presence') {
      const { status, reason } = (body ?? {}) as { status?: unknown; reason?: unknown };
      if (typeof status !== 'string' || !['available', 'on_call', 'call_waiting', 'dnd', 'break', 'after_call_work'].includes(status)) {
        return json(res, 400, { error: { code: 'invalid_input', message: 'status: must be one of available, on_call, call_waiting, dnd, break, after_call_work', field: 'status' } });
      }
      if (status === 'break' && (typeof reason !== 'string' || !relay.team.settings.breakReasons.includes(reason))) {
        return json(res, 400, { error: { code: 'invalid_input', message: `reason: must be one of the team's break reasons: ${relay.team.settings.breakReasons.join(', ')}`, field: 'reason' } });
      }
      relay.presence.set(agent.id, status);
      return json(res, 200, { agentId: agent.id, status, ...(status === 'break' ? { reason } : {}), since: Date.now() });
    }

    if (req.method === 'GET' && path === '/team/settings') return json(res, 200, relay.team);

    const wrapUp = /^\/calls\/([^/]+)\/wrap-up$/.exec(path);
    if (req.method === 'PUT' && wrapUp) {
      const callId = decodeURIComponent(wrapUp[1]!);
      const answer = relay.onWrapUp(callId, agent.id);
      if (answer !== 'default') return json(res, answer.status, answer.body);
      const { disposition, notes } = (body ?? {}) as { disposition?: unknown; notes?: unknown };
      relay.wrapUps.set(`${callId} ${agent.id}`, body);
      return json(res, 200, { callId, agentId: agent.id, disposition, notes, savedAt: Date.now() });
    }

    const take = /^\/team\/callbacks\/([^/]+)\/take$/.exec(path);
    if (req.method === 'POST' && take) {
      const request = relay.callbacks.get(decodeURIComponent(take[1]!));
      if (request === undefined) return json(res, 404, { error: { code: 'not_found', message: 'no such callback request' } });
      const taker = request.takenBy;
      if (taker !== undefined && taker.agentId !== agent.id) {
        return json(res, 409, { error: { code: 'taken', message: `Taken by ${taker.name}`, agentId: taker.agentId, name: taker.name } });
      }
      const taken: CallbackRequest = { ...request, takenBy: taker ?? { agentId: agent.id, name: agent.name, at: Date.now() } };
      relay.callbacks.set(request.id, taken);
      return json(res, 200, { callback: taken });
    }

    const claim = /^\/calls\/([^/]+)\/claim$/.exec(path);
    if (req.method === 'POST' && claim) {
      const callId = decodeURIComponent(claim[1]!);
      const answer = await relay.onClaim(callId, agent.id);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      if (answer !== 'default') {
        res.writeHead(answer.status, { 'Content-Type': 'application/json' });
        res.end(answer.body);
        return;
      }
      const owner = relay.claims.get(callId) ?? agent.id;
      relay.claims.set(callId, owner);
      if (owner !== agent.id) return json(res, 409, { error: { code: 'already_claimed', message: 'Answered by another agent', agentId: owner } });
      return json(res, 200, { callId, agentId: agent.id });
    }

    const decline = /^\/calls\/([^/]+)\/decline$/.exec(path);
    if (req.method === 'POST' && decline) {
      const callId = decodeURIComponent(decline[1]!);
      const owner = relay.claims.get(callId);
      if (owner !== undefined && owner !== agent.id) return json(res, 200, { callId, agentId: agent.id, othersRinging: 0, answeredBy: owner });
      // The claim's own holder lets go: the others stopped ringing on its claim.
      if (owner === agent.id) return json(res, 200, { callId, agentId: agent.id, othersRinging: 0 });
      const declined = relay.declines.get(callId) ?? new Set<string>();
      declined.add(agent.id);
      relay.declines.set(callId, declined);
      const othersRinging = agents.filter((a) => a.id !== agent.id && !declined.has(a.id) && ['available', 'call_waiting'].includes(relay.presence.get(a.id) ?? '')).length;
      return json(res, 200, { callId, agentId: agent.id, othersRinging });
    }

    if (req.method === 'GET' && path.startsWith('/events')) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      res.write(': connected\n\n');
      streams.set(res, agent.id);
      res.on('close', () => streams.delete(res));
      return;
    }
    for (const route of relay.routes) {
      const answer = await route({ method: req.method ?? '', path, agentId: agent.id, authorization, body, headers: req.headers });
      if (answer === undefined) continue;
      if ('json' in answer) return json(res, answer.status, answer.json);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.bytes);
      return;
    }
    json(res, 404, { error: { code: 'not_found', message: `no ${req.method} ${path}` } });
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  relay.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return relay;
}

export const ALICE: TeamAgent = { id: 'alice', name: 'Alice Agent', token: 'alice-token-0123456789' };
export const BOB: TeamAgent = { id: 'bob', name: 'Bob Agent', token: 'bob-token-0123456789' };
