// A real HTTP server on 127.0.0.1 playing the relay's agent-facing contract for bridged calls and
// their transfers, as the app's RelayClient talks to it: GET /me (with `bridged`), claims and
// declines, BRIDGE_AGENT_PATHS (bridge/REFERENCE.md "The agent's side", rejoining and ring answers included) and TRANSFER_PATHS
// (shared/transfer.ts), each body checked with the contract's own schema. Every request is
// recorded; a test may take over the answer to any of them.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerBodySchema, holdBodySchema, rejoinAnswerBodySchema, ringAnswerBodySchema, sdpBodySchema } from '../../../shared/bridge';
import { transferRequestSchema, type TeamMember } from '../../../shared/transfer';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';

/** What the bridge answers the gateway with (the customer leg's answer), and its answer to the window's offer. */
export const BRIDGE_ANSWER_SDP = ANSWER_SDP.replace('o=- 3 4', 'o=- 30 40');
export const WINDOW_LEG_ANSWER_SDP = ANSWER_SDP.replace('o=- 3 4', 'o=- 31 41');
/** The bridge's offer of an agent's leg, and of the customer leg for initiate. */
export const LEG_OFFER_SDP = OFFER_SDP.replace('o=- 1 2', 'o=- 10 20');
export const CUSTOMER_LEG_OFFER_SDP = DIAL_OFFER_SDP.replace('o=- 5 6', 'o=- 50 60');
/** The bridge's offer of the new leg of a member rejoining a call. */
export const REJOIN_OFFER_SDP = OFFER_SDP.replace('o=- 1 2', 'o=- 11 21');

export interface BridgeRelayRequest {
  method: string;
  path: string;
  body: unknown;
}

export interface Reply {
  status: number;
  body?: unknown;
}

export interface BridgeRelay {
  url: string;
  token: string;
  requests: BridgeRelayRequest[];
  /** What GET /me says of the team's calls. */
  bridged: boolean;
  team: TeamMember[];
  /** What POST …/bridge/leave answers: whether this agent was the last one with the customer. */
  leaveLast: boolean;
  /** Per call id, the rejoin leg offered last and not answered yet: only its answer is taken (else 403). */
  rejoinOffered: Map<string, string>;
  /** Takes over the answer to a request (undefined keeps the contract's). */
  onRequest: (req: BridgeRelayRequest) => Reply | undefined | Promise<Reply | undefined>;
  /** The requests to paths matching `pattern`, as "METHOD path". */
  seen(pattern?: RegExp): string[];
  close(): Promise<void>;
}

export const AGENT_ID = 'alice';
const TOKEN = 'alice-token-0123456789';

const refusal = (status: number, code: string, message: string): Reply => ({ status, body: { error: { code, message } } });

export async function startBridgeRelay(): Promise<BridgeRelay> {
  let transfers = 0;
  let rejoins = 0;
  const relay: BridgeRelay = {
    url: '',
    token: TOKEN,
    requests: [],
    bridged: true,
    team: [
      { agentId: AGENT_ID, name: 'Alice Agent', presence: 'on_call', self: true },
      { agentId: 'bob', name: 'Bob Agent', presence: 'available' },
      { agentId: 'carol', name: 'Carol Agent', presence: 'dnd' },
    ],
    leaveLast: false,
    rejoinOffered: new Map(),
    onRequest: () => undefined,
    seen: (pattern) => relay.requests.filter((r) => pattern === undefined || pattern.test(r.path)).map((r) => `${r.method} ${r.path}`),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  /** The contract's answer to one request. */
  const contract = (req: BridgeRelayRequest): Reply => {
    const { method, path, body } = req;
    const checked = (schema: { safeParse(v: unknown): { success: boolean } }, then: () => Reply): Reply =>
      schema.safeParse(body).success ? then() : refusal(400, 'invalid_input', 'the body breaks the contract');
    if (method === 'GET' && path === '/me') return { status: 200, body: { agentId: AGENT_ID, name: 'Alice Agent', bridged: relay.bridged } };
    if (method === 'GET' && path === '/team') return { status: 200, body: { agents: relay.team } };
    if (method !== 'POST') return refusal(404, 'not_found', `no ${method} ${path}`);
    let m: RegExpExecArray | null;
    if ((m = /^\/calls\/([^/]+)\/claim$/.exec(path))) return { status: 200, body: { callId: decodeURIComponent(m[1]!), agentId: AGENT_ID } };
    if ((m = /^\/calls\/([^/]+)\/decline$/.exec(path))) return { status: 200, body: { callId: decodeURIComponent(m[1]!), othersRinging: 0 } };
    if ((m = /^\/calls\/([^/]+)\/bridge\/leg$/.exec(path))) return { status: 200, body: { legId: `leg-${decodeURIComponent(m[1]!)}`, offer: LEG_OFFER_SDP } };
    if (/^\/calls\/[^/]+\/bridge\/answer$/.test(path)) return checked(answerBodySchema, () => ({ status: 200, body: { sdp: BRIDGE_ANSWER_SDP } }));
    if (/^\/calls\/[^/]+\/bridge\/leg\/answer$/.test(path)) return checked(ringAnswerBodySchema, () => ({ status: 200, body: { ok: true } }));
    if (/^\/calls\/[^/]+\/bridge\/accepted$/.test(path)) return { status: 200, body: {} };
    if (/^\/calls\/[^/]+\/bridge\/hold$/.test(path)) return checked(holdBodySchema, () => ({ status: 200, body: {} }));
    if (path === '/bridge/dial') return checked(sdpBodySchema, () => ({ status: 200, body: { ref: 'ref-1', legId: 'leg-dial-1', offer: CUSTOMER_LEG_OFFER_SDP, answer: WINDOW_LEG_ANSWER_SDP } }));
    if (/^\/bridge\/dial\/[^/]+\/placed$/.test(path)) return { status: 200, body: {} };
    if (/^\/calls\/[^/]+\/bridge\/transfer$/.test(path)) return checked(transferRequestSchema, () => ({ status: 200, body: { transferId: `xfer-${++transfers}` } }));
    if (/^\/calls\/[^/]+\/bridge\/transfer\/[^/]+\/answer$/.test(path)) return checked(answerBodySchema, () => ({ status: 200, body: {} }));
    if (/^\/calls\/[^/]+\/bridge\/transfer\/[^/]+\/(cancel|complete|join|decline)$/.test(path)) return { status: 200, body: {} };
    if (/^\/calls\/[^/]+\/bridge\/leave$/.test(path)) return { status: 200, body: { last: relay.leaveLast } };
    if ((m = /^\/calls\/([^/]+)\/bridge\/rejoin$/.exec(path))) {
      const legId = `leg-rejoin-${++rejoins}`;
      relay.rejoinOffered.set(decodeURIComponent(m[1]!), legId);
      return { status: 200, body: { legId, offer: REJOIN_OFFER_SDP } };
    }
    if ((m = /^\/calls\/([^/]+)\/bridge\/rejoin\/answer$/.exec(path))) {
      const callId = decodeURIComponent(m[1]!);
      return checked(rejoinAnswerBodySchema, () => {
        if (relay.rejoinOffered.get(callId) !== (body as { legId: string }).legId) return refusal(403, 'forbidden', 'not the leg offered');
        relay.rejoinOffered.delete(callId);
        return { status: 200, body: { ok: true } };
      });
    }
    return refusal(404, 'not_found', `no ${method} ${path}`);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> => {
    let body: unknown;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      body = raw;
    }
    const recorded: BridgeRelayRequest = { method: req.method ?? '', path: req.url ?? '', body };
    relay.requests.push(recorded);
    const reply = req.headers.authorization !== `Bearer ${TOKEN}` ? refusal(401, 'unauthorized', 'unknown agent token') : ((await relay.onRequest(recorded)) ?? contract(recorded));
    if (reply.body === undefined) {
      res.writeHead(reply.status);
      res.end();
      return;
    }
    res.writeHead(reply.status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(reply.body));
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  relay.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return relay;
}
