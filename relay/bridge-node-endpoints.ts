// The bridge nodes' endpoints (relay/REFERENCE.md "Bridge nodes"), as HTTP: each request is
// checked against the bridge token (and the per-address limit of failed authentication the agent
// endpoints share), its body parsed with shared/bridge-nodes.ts's schemas, the work handed to the
// BridgeNodeRegistry: registration, the load that is the heartbeat, leaving, and the node's events. No agent token opens them, and the bridge token opens nothing else.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bridgeNodeEventSchema, bridgeNodeIdSchema, bridgeNodeLoadSchema, bridgeNodeRegistrationSchema } from '../shared/bridge-nodes';
import type { Logger } from '../shared/log';
import type { Result } from '../shared/result';
import { issueEnglish, parseWith } from '../shared/validation';
import { addressKey, type AuthFailureLimiter } from './auth-failure-limiter';
import { presentsBridgeToken, type BridgeNodeRegistry } from './bridge-nodes';
import { boundedBody, clientAddressOf, methodNotAllowed, sendError, sendJson } from './http-io';

/** `/bridge/nodes`, `/bridge/nodes/{nodeId}`, `/bridge/nodes/{nodeId}/load`, `/bridge/nodes/{nodeId}/events`. */
const NODES_PATH = /^\/bridge\/nodes(?:\/([^/]+)(?:\/(load|events))?)?$/;

export interface BridgeEndpointOptions {
  bridgeToken: string;
  limiter: AuthFailureLimiter;
  trustProxy: boolean;
  /** Largest body of a node's request. */
  maxBodyBytes: number;
  log: Logger;
}

export class BridgeNodeEndpoints {
  constructor(
    private readonly registry: BridgeNodeRegistry,
    private readonly options: BridgeEndpointOptions,
  ) {}

  /** Whether `path` is one of these endpoints (the others are none of their business). */
  static owns(path: string): boolean {
    return NODES_PATH.test(path);
  }

  async handle(req: IncomingMessage, res: ServerResponse, path: string, method: string): Promise<void> {
    const match = NODES_PATH.exec(path);
    if (match === null) return sendError(res, 404, 'not_found', `no such endpoint: ${path}`);
    const [, rawNodeId, action] = match;
    if (rawNodeId === undefined) {
      if (method !== 'POST') return methodNotAllowed(res, 'POST');
      return this.register(req, res);
    }
    if (action === 'load') {
      if (method !== 'PUT') return methodNotAllowed(res, 'PUT');
      return this.load(req, res, rawNodeId);
    }
    if (action === 'events') {
      if (method !== 'POST') return methodNotAllowed(res, 'POST');
      return this.event(req, res, rawNodeId);
    }
    if (method !== 'DELETE') return methodNotAllowed(res, 'DELETE');
    return this.remove(req, res, rawNodeId);
  }

  private async register(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await this.authenticatedBody(req, res);
    if (body === undefined) return;
    const registration = parseWith(bridgeNodeRegistrationSchema, body.json);
    if (!registration.ok) return refuse(res, registration);
    const node = await this.registry.register(registration.value);
    sendJson(res, 200, { nodeId: node.nodeId, heartbeatMs: this.registry.heartbeatMs });
  }

  /** The heartbeat: 404 `unknown_node` tells a node the relay lost it (expired, removed), so that it registers again. */
  private async load(req: IncomingMessage, res: ServerResponse, rawNodeId: string): Promise<void> {
    const body = await this.authenticatedBody(req, res);
    if (body === undefined) return;
    const nodeId = nodeIdFromPath(res, rawNodeId);
    if (nodeId === undefined) return;
    const load = parseWith(bridgeNodeLoadSchema, body.json);
    if (!load.ok) return refuse(res, load);
    const node = await this.registry.reportLoad(nodeId, load.value);
    if (node === undefined) {
      return sendError(res, 404, 'unknown_node', `no live bridge node "${nodeId}": register again (POST /bridge/nodes)`, { nodeId });
    }
    sendJson(res, 200, { nodeId, heartbeatMs: this.registry.heartbeatMs });
  }

  /**
   * Something that happened on a node, handed to this instance's listeners (`onBridgeEvent`). A node
   * the relay lost still tells what happened to its calls: the event is taken whether it is live or not.
   */
  private async event(req: IncomingMessage, res: ServerResponse, rawNodeId: string): Promise<void> {
    const body = await this.authenticatedBody(req, res);
    if (body === undefined) return;
    const nodeId = nodeIdFromPath(res, rawNodeId);
    if (nodeId === undefined) return;
    const event = parseWith(bridgeNodeEventSchema, body.json);
    if (!event.ok) return refuse(res, event);
    this.registry.deliver({ nodeId, event: event.value, receivedAt: Date.now() });
    sendJson(res, 200, { received: true });
  }

  private async remove(req: IncomingMessage, res: ServerResponse, rawNodeId: string): Promise<void> {
    if ((await this.authenticatedBody(req, res)) === undefined) return;
    const nodeId = nodeIdFromPath(res, rawNodeId);
    if (nodeId === undefined) return;
    await this.registry.remove(nodeId);
    sendJson(res, 200, { nodeId });
  }

  /**
   * The request's JSON body (undefined JSON when it has none or it is not JSON: the schema names
   * what is missing) once the bridge token checks out; undefined once answered.
   */
  private async authenticatedBody(req: IncomingMessage, res: ServerResponse): Promise<{ json: unknown } | undefined> {
    if (!this.authenticate(req, res)) return undefined;
    const limit = this.options.maxBodyBytes;
    const raw = await boundedBody(req, res, limit, `the body is larger than ${limit} bytes, the limit of bridge node requests`);
    if (raw === undefined) return undefined;
    try {
      return { json: raw.length === 0 ? undefined : (JSON.parse(raw.toString('utf8')) as unknown) };
    } catch {
      return { json: undefined };
    }
  }

  /**
   * Whether the request carries the bridge token; otherwise answered 401, or 429 from an address
   * that failed authentication too often (it is the one guessing, whatever it presents now). Also the
   * check of a node's other requests to the relay (a recording's upload, recording-endpoints.ts).
   */
  authenticate(req: IncomingMessage, res: ServerResponse): boolean {
    const { limiter, trustProxy, bridgeToken, log } = this.options;
    const client = addressKey(clientAddressOf(req, trustProxy));
    const verdict = limiter.check(client);
    if (verdict.limited) {
      log.debug('refused a bridge node request from a limited address', { client, retryAfterSec: verdict.retryAfterSec });
      sendError(
        res,
        429,
        'rate_limited',
        `too many failed authentications from this address; retry in ${verdict.retryAfterSec} s`,
        { retryAfterSec: verdict.retryAfterSec },
        { 'Retry-After': String(verdict.retryAfterSec) },
      );
      return false;
    }
    if (presentsBridgeToken(req.headers.authorization, bridgeToken)) return true;
    const after = limiter.fail(client);
    log.warn('refused a bridge node request without the bridge token', { path: req.url?.split('?')[0], client });
    if (after.limited) log.warn('limited an address that failed authentication too often', { client, retryAfterSec: after.retryAfterSec });
    sendError(res, 401, 'unauthorized', 'the bridge token is required (Authorization: Bearer <bridge token>)', {}, { 'WWW-Authenticate': 'Bearer realm="relay-bridge"' });
    return false;
  }
}

/** A refused body: 400 naming the first field that broke its rule. */
function refuse(res: ServerResponse, refused: Extract<Result<unknown>, { ok: false }>): void {
  sendError(res, 400, 'invalid_input', refused.error.message, { field: refused.error.field ?? '(root)' });
}

/** The node id in a /bridge/nodes/{nodeId} path, or undefined after answering 400 with the rule. */
function nodeIdFromPath(res: ServerResponse, raw: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    sendError(res, 400, 'invalid_input', 'nodeId: must be a URL-encoded node id', { field: 'nodeId' });
    return undefined;
  }
  const nodeId = bridgeNodeIdSchema.safeParse(decoded);
  if (!nodeId.success) {
    const rule = nodeId.error.issues[0];
    sendError(res, 400, 'invalid_input', `nodeId: ${rule === undefined ? 'is not a node id' : issueEnglish(rule)}`, { field: 'nodeId' });
    return undefined;
  }
  return nodeId.data;
}
