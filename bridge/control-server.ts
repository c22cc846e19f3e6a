// The node's control API (shared/bridge.ts `BRIDGE_CONTROL_PATHS`): the relay drives a node's calls
// over HTTP with the bridge token. Each request is authenticated first (the token compared in
// constant time), its ids and body parsed with shared/bridge.ts's schemas, then handed to the node's
// `BridgeControl`; its Result comes back as 200 with the value (204 when there is none) or as
// `{ error: { code, message, field? } }` with the status its code stands for.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { bindBodySchema, legIdSchema, routesBodySchema, sdpBodySchema, type BridgeControl } from '../shared/bridge';
import { recordingStartBodySchema } from '../shared/bridge-recording';
import { createLogger, type Logger } from '../shared/log';
import { errorText, type AppError, type ErrorCode, type Result } from '../shared/result';
import { issueEnglish, parseWith } from '../shared/validation';
import { readBody, sendError, sendJson } from './http-io';
import { noticeFromBase64 } from './notice-pcm';

export interface ControlServerOptions {
  control: BridgeControl;
  /** What the relay presents: `Authorization: Bearer <bridge token>`. */
  bridgeToken: string;
  /** Default 127.0.0.1: the relay reaches it over the team's own network. */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  logger?: Logger;
}

export interface ControlServer {
  /** http://host:port, as the node registers it (a wildcard host is said as 127.0.0.1). */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A complete SDP is at most 64 KiB (shared/bridge.ts); its JSON escapes add a little. */
const MAX_BODY_BYTES = 256 * 1024;
/** A recording's notice: 30 s of 48 kHz PCM is under 4 MB of base64; the schema takes 8 MiB. */
const MAX_NOTICE_BODY_BYTES = 8 * 1024 * 1024 + 1024;
/** The relay's own limits on slow clients (relay/REFERENCE.md "Limits"). */
const TIMEOUTS = { headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000, connectionsCheckingInterval: 1_000 };

/** The HTTP status each error code stands for: the body says the code, the status what kind of failure it is. */
const STATUS_OF_CODE: Record<ErrorCode, number> = {
  invalid_input: 400,
  invalid_phone_number: 400,
  needs_confirmation: 400,
  unauthorized: 401,
  no_call_permission: 403,
  not_found: 404,
  invalid_state: 409,
  answered_elsewhere: 409,
  customer_busy: 409,
  window_closed: 409,
  internal: 500,
  media_failed: 500,
  not_configured: 501,
  gateway_error: 502,
  gateway_unreachable: 502,
  not_available: 503,
  timeout: 504,
};

/** A call id as shared/bridge.ts's bodies take it (the service's are far shorter). */
const MAX_CALL_ID_CHARS = 256;

type Reply = Result<unknown>;
type Work = (body: unknown) => Promise<Reply>;

/** One path's methods: what each does with the parsed ids. */
interface Route {
  methods: Partial<Record<'GET' | 'POST' | 'DELETE', Work>>;
  /** Its bodies' limit, when not MAX_BODY_BYTES. */
  maxBodyBytes?: number;
}

export async function startControlServer(options: ControlServerOptions): Promise<ControlServer> {
  const log = options.logger ?? createLogger('bridge-control');
  const expected = digest(options.bridgeToken);
  const server = createServer(TIMEOUTS, (req, res) => {
    const started = performance.now();
    handle(req, res, options.control, expected, log)
      .catch((error: unknown) => {
        log.error('a control request failed', { method: req.method, path: pathOf(req), error });
        if (!res.headersSent) sendError(res, 500, 'internal', 'the bridge node could not complete the request');
        else res.destroy();
      })
      .finally(() => log.debug('control request', { method: req.method, path: pathOf(req), status: res.statusCode, ms: Math.round(performance.now() - started) }));
  });
  await listen(server, options.port ?? 0, options.host ?? '127.0.0.1');
  server.on('error', (error) => log.error('control server error', { error }));
  const { port, address } = server.address() as AddressInfo;
  const host = address === '0.0.0.0' || address === '::' ? '127.0.0.1' : address;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log.info('control API listening', { url });
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, control: BridgeControl, expected: Buffer, log: Logger): Promise<void> {
  if (!presentsToken(req.headers.authorization, expected)) {
    log.warn('refused a control request without the bridge token', { method: req.method, path: pathOf(req), client: req.socket.remoteAddress });
    return sendError(res, 401, 'unauthorized', 'the bridge token is required (Authorization: Bearer <bridge token>)', {}, { 'WWW-Authenticate': 'Bearer realm="bridge"' });
  }
  const path = pathOf(req);
  const route = routeOf(path, control);
  if (route.kind === 'refused') return sendError(res, 400, 'invalid_input', route.message, { field: route.field });
  if (route.kind === 'none') return sendError(res, 404, 'not_found', `no such endpoint: ${path}`);
  const method = req.method ?? 'GET';
  const work = route.route.methods[method as keyof Route['methods']];
  if (work === undefined) {
    const allow = Object.keys(route.route.methods).join(', ');
    return sendError(res, 405, 'method_not_allowed', `use ${allow}`, {}, { Allow: allow });
  }
  const limit = route.route.maxBodyBytes ?? MAX_BODY_BYTES;
  const body = await readBody(req, limit);
  if (body.kind === 'aborted') return;
  if (body.kind === 'too_large') {
    if (!body.drained) {
      res.setHeader('Connection', 'close');
      res.on('finish', () => req.destroy());
    }
    return sendError(res, 413, 'payload_too_large', `the body is larger than ${limit} bytes`, { limitBytes: limit });
  }
  const reply = await work(jsonOf(body.raw));
  if (reply.ok) {
    if (reply.value === null) {
      res.writeHead(204, { 'Cache-Control': 'no-store' });
      res.end();
      return;
    }
    return sendJson(res, 200, reply.value);
  }
  return sendError(res, STATUS_OF_CODE[reply.error.code], reply.error.code, reply.error.message, fieldOf(reply.error));
}

type Routed = { kind: 'route'; route: Route } | { kind: 'none' } | { kind: 'refused'; field: string; message: string };

/**
 * The route of a path of `BRIDGE_CONTROL_PATHS`, its ids decoded and checked: a call id, an
 * outgoing call's reference, an agent leg's id.
 */
function routeOf(path: string, control: BridgeControl): Routed {
  const segments = path.split('/').slice(1);
  const [root, first, second, third, fourth] = segments;
  if (root === 'calls' && first !== undefined) {
    const callId = idOf('callId', first, callIdRule);
    if (!callId.ok) return callId.refused;
    const id = callId.value;
    if (segments.length === 2) return route({ GET: () => control.report(id), DELETE: () => control.endCall(id) });
    if (segments.length === 3) {
      switch (second) {
        case 'incoming':
          return route({ POST: withBody(sdpBodySchema, ({ sdp }) => control.prepareIncoming(id, sdp)) });
        case 'connect':
          return route({ POST: () => control.connectCustomer(id) });
        case 'customer-answer':
          return route({ POST: withBody(sdpBodySchema, ({ sdp }) => control.applyCustomerAnswer(id, sdp)) });
        case 'routes':
          return route({ POST: withBody(routesBodySchema, ({ routes }) => control.setRoutes(id, routes)) });
        case 'release':
          return route({ POST: () => control.releaseCustomer(id) });
        default:
          return { kind: 'none' };
      }
    }
    if (second === 'recording' && segments.length === 4) {
      if (third === 'start') return { kind: 'route', route: { methods: { POST: withBody(recordingStartBodySchema, ({ notice }) => startRecording(control, id, notice)) }, maxBodyBytes: MAX_NOTICE_BODY_BYTES } };
      if (third === 'stop') return route({ POST: () => control.stopRecording(id) });
      return { kind: 'none' };
    }
    if (second !== 'legs' || third === undefined || segments.length > 5) return { kind: 'none' };
    const legId = idOf('legId', third, legIdRule);
    if (!legId.ok) return legId.refused;
    const leg = legId.value;
    if (segments.length === 4) return route({ DELETE: () => control.closeAgentLeg(id, leg) });
    switch (fourth) {
      case 'offer':
        return route({ POST: () => control.offerAgentLeg(id, leg) });
      case 'answer':
        return route({ POST: withBody(sdpBodySchema, ({ sdp }) => control.applyAgentAnswer(id, leg, sdp)) });
      case 'from-offer':
        return route({ POST: withBody(sdpBodySchema, ({ sdp }) => control.answerAgentLeg(id, leg, sdp)) });
      default:
        return { kind: 'none' };
    }
  }
  if (root === 'outgoing' && first !== undefined && segments.length <= 3) {
    const ref = idOf('ref', first, legIdRule);
    if (!ref.ok) return ref.refused;
    if (segments.length === 2) return route({ POST: () => control.prepareOutgoing(ref.value) });
    if (second === 'bind') return route({ POST: withBody(bindBodySchema, ({ callId }) => control.bindOutgoing(ref.value, callId)) });
  }
  return { kind: 'none' };
}

const route = (methods: Route['methods']): Routed => ({ kind: 'route', route: { methods } });

/** RECORDING_CONTROL_PATHS.start: the notice's base64 read into PCM first (an empty one is none). */
async function startRecording(control: BridgeControl, callId: string, notice: string | undefined): Promise<Reply> {
  if (notice === undefined || notice === '') return control.startRecording(callId);
  const pcm = noticeFromBase64(notice);
  return pcm.ok ? control.startRecording(callId, pcm.value) : pcm;
}

/** The body parsed with its schema before the work sees it; a broken rule is answered 400 naming the field. */
function withBody<S extends z.ZodType>(schema: S, work: (body: z.infer<S>) => Promise<Reply>): Work {
  return async (body) => {
    const parsed = parseWith(schema, body);
    return parsed.ok ? work(parsed.value) : parsed;
  };
}

const callIdRule = (id: string): string | undefined => (id.length >= 1 && id.length <= MAX_CALL_ID_CHARS ? undefined : `must be 1 to ${MAX_CALL_ID_CHARS} characters`);

function legIdRule(id: string): string | undefined {
  const parsed = legIdSchema.safeParse(id);
  const issue = parsed.success ? undefined : parsed.error.issues[0];
  return parsed.success ? undefined : issue === undefined ? 'is not an id' : issueEnglish(issue);
}

/** An id of the path, URL-decoded and checked by `rule`. */
function idOf(field: string, raw: string, rule: (id: string) => string | undefined): { ok: true; value: string } | { ok: false; refused: Routed } {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    return { ok: false, refused: { kind: 'refused', field, message: `${field}: must be URL-encoded` } };
  }
  const broken = rule(id);
  return broken === undefined ? { ok: true, value: id } : { ok: false, refused: { kind: 'refused', field, message: `${field}: ${broken}` } };
}

const fieldOf = (error: AppError): Record<string, unknown> => (error.field !== undefined ? { field: error.field } : {});

/** A body that is empty or not JSON reads as nothing: the schema then says what is required. */
function jsonOf(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** Hashed first, so that neither the token's length nor a common prefix shows in the timing. */
function presentsToken(authorization: string | undefined, expected: Buffer): boolean {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  return timingSafeEqual(digest(presented ?? ''), expected) && presented !== undefined;
}

function pathOf(req: IncomingMessage): string {
  try {
    return new URL(req.url ?? '/', 'http://bridge.invalid').pathname;
  } catch (error) {
    return `(unreadable: ${errorText(error)})`;
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
