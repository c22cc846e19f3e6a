// The sandbox: a stand-in for the gateway and its customers on 127.0.0.1 (sandbox/README.md).
// Gateway endpoints follow gateway-spec.md 4.1–4.3 and protocol.md to the letter, including their
// refusals; the control API lets the app's embedded mode and tests play the customers.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { CALL_ACTIONS, DEFAULT_PRODUCT, callRequestSchemas, type CallAction } from '../shared/gateway';
import { createLogger, type Logger } from '../shared/log';
import { freeFormMessageSchema } from '../shared/messages';
import { normalisePhoneNumber } from '../shared/phone';
import { withoutTexts, type AppError, type Result } from '../shared/result';
import { SANDBOX_NETWORK_LIMITS, SANDBOX_PATHS, SANDBOX_UNREACHABLE_NUMBERS, type SandboxCustomer } from '../shared/sandbox';
import { templateMessageSchema } from '../shared/templates';
import { fieldPath, issueEnglish, nonEmptyString, parseWith, ruleMessage, strictObjectNamed } from '../shared/validation';
import { CallSimulator, DEFAULT_TIMEOUTS, type GatewayOutcome, type SandboxTimeouts } from './call-simulator';
import { loadCustomerVoice } from './customer-voice';
import { DEFAULT_CUSTOMERS } from './customers';
import { graphErrorBody, invalidParameter, type GraphFailure } from './graph-error';
import { MediaJudge } from './media-judge';
import { defaultMediaDir, MediaLibrary } from './media-library';
import { MediaStore } from './media-store';
import { DEFAULT_MESSAGING_TIMINGS, MessageSimulator, type MessagingTimings } from './message-simulator';
import { defaultNoticePath, loadServiceNotice } from './service-notice';
import { templateCatalogue } from './template-catalogue';
import { VOICEMAIL_MIME_TYPE, voicemailAudio } from './voicemail-audio';
import { WebhookSender, type BusinessIdentity } from './webhook-sender';

export type { SandboxTimeouts } from './call-simulator';
export type { MessagingTimings } from './message-simulator';
export type { BusinessIdentity } from './webhook-sender';

export interface SandboxOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The relay's base URL; webhooks are POSTed to relayUrl + "/webhook". */
  relayUrl: string;
  /** When set, webhooks carry X-Hub-Signature-256. */
  appSecret?: string;
  /** The key every gateway request must carry in its API-KEY header. */
  apiKey: string;
  /** The path segment and messaging_product word (protocol.md: a setting). Default "chatapp". */
  product?: string;
  customers?: SandboxCustomer[];
  logger?: Logger;
  /** How long an answering customer's phone rings before it answers. Default 1000 ms. */
  ringMs?: number;
  /** The real service's timeouts; shorter ones make tests of them quick. */
  timeouts?: Partial<SandboxTimeouts>;
  /** The business account the webhooks speak for. */
  business?: Partial<BusinessIdentity>;
  /** The address of the customers' media candidates. Default 127.0.0.1. */
  mediaHost?: string;
  /** A 48 kHz mono 16-bit WAV the customers say; default assets/customer-voice.wav. */
  voicePath?: string;
  /** What the voice says, word for word: the service's transcript then gives the words instead of a placeholder. */
  voiceWords?: string;
  /** The spoken part of the service's notice (16-bit mono WAV, any rate); default service-notice.wav beside the voice. */
  noticePath?: string;
  /** Delivery-status delays and the window's length; shorter ones make tests quick. */
  messaging?: { statusDelaysMs?: Partial<MessagingTimings['statusDelaysMs']>; windowMs?: number };
  /** Valid numbers without a chat-app account (messages to them fail); default SANDBOX_UNREACHABLE_NUMBERS. */
  unreachableNumbers?: readonly string[];
  /**
   * Media by link is fetched as the app fetches it: `timeoutMs` before any byte is due (default 8 s)
   * and `msPerMb` more for each MB to read (default 1 s). `dir` holds the library's files; default
   * the project's assets/sandbox-media/, which a bundled sandbox must be told instead.
   */
  media?: { timeoutMs?: number; msPerMb?: number; dir?: string };
  /**
   * The media the service keeps (GET /restapi/v1/{product}/media/{id}): how long an id is known
   * (default 7 days) and its download url lives (default 5 minutes), and the clock (unix ms) that
   * judges both, default Date.now: a test moves it on instead of waiting.
   */
  mediaStore?: { keptMs?: number; urlLifetimeMs?: number; clock?: () => number };
}

export interface SandboxServer {
  /** http://host:port, where the control API lives. */
  url: string;
  /** The gateway's {base_url}: url + "/restapi/v1". */
  gatewayUrl: string;
  port: number;
  customers: SandboxCustomer[];
  /** Closes the server and every customer's peer, and stops webhook retries. */
  close(): Promise<void>;
}

/** One gateway request as received; `status` is 0 until it is answered. */
export interface GatewayLogEntry {
  /** accept, reject, terminate, initiate, replymessage, sendtemplate, media (a media id's url) or media_file (its download). */
  action: string;
  callId?: string;
  messageId?: string;
  mediaId?: string;
  at: number;
  status: number;
}

export const DEFAULT_BUSINESS: BusinessIdentity = { wabaId: '104000000000001', phoneNumberId: '106000000000001', displayPhoneNumber: '16505550100' };
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_LOG_ENTRIES = 5_000;
const GATEWAY_PATH = /^\/restapi\/v1\/([^/]+)\/calls\/([^/]+)\/?$/;
const MESSAGE_PATH = /^\/restapi\/v1\/([^/]+)\/(replymessage|sendtemplate)\/?$/;
const MEDIA_PATH = /^\/restapi\/v1\/([^/]+)\/media\/([^/]+)(\/file)?\/?$/;
/** A Host header fit to put in a url: a name or an address, and a port. */
const URL_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

const numberField = nonEmptyString();
const incomingBody = z.object({ number: numberField });
const hangupBody = z.object({ callId: nonEmptyString() });
const inboundBody = z.object({
  number: numberField,
  text: nonEmptyString().max(4096, 'must be at most 4096 characters'),
});
const pressCallButtonBody = z.object({ number: numberField });
/** 0 when absent: a field left out is a clean part of the network. */
const impairmentField = (max: number, unit: string) => {
  const rule = `must be a number from 0 to ${max} (${unit})`;
  return z.number({ error: rule }).min(0, rule).max(max, rule).default(0);
};
/** Strict: a misspelt "calId" must not leave a voicemail on some other call. */
const voicemailBody = strictObjectNamed({ callId: nonEmptyString().optional(), number: numberField.optional() }, 'a voicemail').superRefine((body, ctx) => {
  if (body.callId !== undefined && body.number !== undefined) ctx.addIssue({ code: 'custom', path: ['number'], message: ruleMessage('common.notTogether', { first: 'callId', second: 'number' }) });
  else if (body.callId === undefined && body.number === undefined) ctx.addIssue({ code: 'custom', path: ['callId'], message: ruleMessage('common.exactlyOne', { first: 'callId', second: 'number' }) });
});
/** Strict: a misspelt "permanant" must not turn a permanent permission into a 7-day one. */
const callbackRequestBody = strictObjectNamed(
  {
    number: numberField,
    callId: nonEmptyString().optional(),
    permanent: z.boolean({ error: ruleMessage('common.mustBeBoolean') }).optional(),
  },
  'a callback request',
);
// Strict: a misspelt "loss" must not leave a network clean that the caller meant to make bad.
const networkBody = strictObjectNamed(
  {
    callId: nonEmptyString(),
    lossPercent: impairmentField(SANDBOX_NETWORK_LIMITS.lossPercent, 'percent'),
    delayMs: impairmentField(SANDBOX_NETWORK_LIMITS.delayMs, 'milliseconds'),
    jitterMs: impairmentField(SANDBOX_NETWORK_LIMITS.jitterMs, 'milliseconds'),
    blackoutMs: impairmentField(SANDBOX_NETWORK_LIMITS.blackoutMs, 'milliseconds'),
  },
  'a network impairment',
);

class BodyTooLarge extends Error {}

const unknownPath = (path: string): GraphFailure => ({ status: 404, code: 2500, message: `Unknown path components: ${path}` });
/** The Graph API's answer for an object it does not have (sandbox/REFERENCE.md "Media ids"), as a 404. */
const unknownMedia = (id: string): GraphFailure => ({
  status: 404,
  code: 100,
  type: 'GraphMethodException',
  message: `(#100) Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation`,
  details: `No media ${id}: unknown, or older than 7 days (media ids are kept 7 days)`,
});
const expiredMediaUrl = (id: string, why: string): GraphFailure => ({
  status: 404,
  code: 100,
  type: 'GraphMethodException',
  message: `(#100) The media url has expired: get media ${id} again for a new url`,
  details: why,
});

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BodyTooLarge());
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const digest = (s: string) => createHash('sha256').update(s).digest();
const sameSecret = (given: string, expected: string) => timingSafeEqual(digest(given), digest(expected));

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A path segment as sent, where it is not valid percent-encoding. */
function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const controlError = (res: ServerResponse, status: number, error: AppError) => sendJson(res, status, { error: withoutTexts(error) });

export async function startSandbox(options: SandboxOptions): Promise<SandboxServer> {
  const logger = options.logger ?? createLogger('sandbox');
  const product = options.product ?? DEFAULT_PRODUCT;
  const customers = [...(options.customers ?? DEFAULT_CUSTOMERS)];
  const business = { ...DEFAULT_BUSINESS, ...options.business };
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const schemas = callRequestSchemas(product);
  const loaded = loadCustomerVoice(options.voicePath);
  if (loaded.problem) logger.warn('customer voice unavailable, customers play a tone instead', { problem: loaded.problem });
  const voice = options.voiceWords === undefined ? loaded.voice : { ...loaded.voice, words: options.voiceWords };
  const { notice, problem: noticeProblem } = loadServiceNotice(options.noticePath ?? defaultNoticePath(options.voicePath));
  if (noticeProblem) logger.warn('the service’s notice has no words, its chime alone is played', { problem: noticeProblem });

  const webhooks = new WebhookSender({ relayUrl: options.relayUrl, appSecret: options.appSecret, product, business, logger, retryWindowMs: timeouts.webhookRetryWindowMs });
  const { library: mediaLibrary, problems: mediaProblems } = MediaLibrary.load(options.media?.dir ?? defaultMediaDir());
  if (mediaProblems.length > 0) logger.warn('media library files unavailable, their ids are unknown', { problems: mediaProblems });
  const mediaStore = new MediaStore({
    ...options.mediaStore,
    // The account's uploaded files are media of the account's too: the same lookup serves them.
    uploaded: (id) => {
      const file = mediaLibrary.bytes(id);
      return file && { id, mimeType: file.media.mimeType, bytes: file.bytes, sha256: file.media.sha256 };
    },
  });
  const simulator = new CallSimulator({
    customers,
    product,
    businessNumber: business.displayPhoneNumber,
    webhooks,
    voice,
    mediaHost: options.mediaHost ?? '127.0.0.1',
    ringMs: options.ringMs ?? 1000,
    timeouts,
    logger,
    notice,
    media: {
      keep: (bytes, mimeType) => mediaStore.keep(bytes, mimeType),
      url: (id) => `${url}/restapi/v1/${product}/media/${encodeURIComponent(id)}/file?${mediaStore.signedQuery(id)}`,
    },
  });
  const { timeoutMs: mediaTimeoutMs, msPerMb } = options.media ?? {};
  const mediaJudge = new MediaJudge({
    library: mediaLibrary,
    logger,
    ...(mediaTimeoutMs !== undefined ? { timeoutMs: mediaTimeoutMs } : {}),
    ...(msPerMb !== undefined ? { msPerMb } : {}),
  });
  const messages = new MessageSimulator({
    judgeMedia: (message) => mediaJudge.judge(message),
    customers,
    product,
    webhooks,
    logger,
    timings: {
      statusDelaysMs: { ...DEFAULT_MESSAGING_TIMINGS.statusDelaysMs, ...options.messaging?.statusDelaysMs },
      windowMs: options.messaging?.windowMs ?? DEFAULT_MESSAGING_TIMINGS.windowMs,
    },
    unreachableNumbers: options.unreachableNumbers ?? SANDBOX_UNREACHABLE_NUMBERS,
  });
  const gatewayLog: GatewayLogEntry[] = [];
  let url = '';

  /** Check 2 of every gateway request: the API-KEY header. */
  function keyFailure(req: IncomingMessage): GraphFailure | undefined {
    const apiKey = req.headers['api-key'];
    if (typeof apiKey === 'string' && sameSecret(apiKey, options.apiKey)) return undefined;
    return { status: 401, code: 190, message: apiKey === undefined ? 'API-KEY header: is required' : 'API-KEY header: invalid key' };
  }

  /**
   * The checks every gateway request passes first, in the order sandbox/REFERENCE.md lists them: method, API key,
   * Content-Type, a readable JSON body. Undefined when `fail` already answered.
   */
  async function gatewayBody(req: IncomingMessage, fail: (failure: GraphFailure, headers?: Record<string, string>) => void, methodHint: string): Promise<{ body: unknown } | undefined> {
    if (req.method !== 'POST') {
      req.resume();
      fail({ status: 405, code: 100, message: `(#100) method ${req.method ?? ''} is not allowed: use POST${methodHint}` }, { Allow: 'POST' });
      return undefined;
    }
    const badKey = keyFailure(req);
    if (badKey) {
      req.resume();
      fail(badKey);
      return undefined;
    }
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (contentType !== 'application/json') {
      req.resume();
      fail({ status: 415, code: 100, message: `(#100) Content-Type header: must be application/json (got ${contentType || 'none'})` });
      return undefined;
    }
    let raw: Buffer;
    try {
      raw = await readBody(req);
    } catch (e) {
      fail(
        e instanceof BodyTooLarge
          ? { status: 413, code: 100, message: `(#100) body: larger than ${MAX_BODY_BYTES} bytes` }
          : { status: 400, code: 100, message: '(#100) body: could not be read' },
      );
      return undefined;
    }
    try {
      return { body: JSON.parse(raw.toString('utf8')) as unknown };
    } catch {
      fail(invalidParameter('body', 'must be valid JSON'));
      return undefined;
    }
  }

  /** The first broken rule names its field; all of them go into error_data.details. */
  function schemaFailure(error: z.ZodError): GraphFailure {
    const first = error.issues[0];
    const details = error.issues.map((i) => `${fieldPath(i.path)}: ${issueEnglish(i)}`).join('; ');
    return invalidParameter(first ? fieldPath(first.path) : '(root)', first ? issueEnglish(first) : 'invalid', details);
  }

  function logEntry(action: string, at: number): GatewayLogEntry {
    const entry: GatewayLogEntry = { action, at, status: 0 };
    gatewayLog.push(entry);
    if (gatewayLog.length > MAX_LOG_ENTRIES) gatewayLog.splice(0, gatewayLog.length - MAX_LOG_ENTRIES);
    return entry;
  }

  /** gateway-spec.md 4.1 and 4.3: the same rules as the app's, and the 24-hour window. */
  async function messaging(req: IncomingMessage, res: ServerResponse, path: string, match: RegExpExecArray, at: number): Promise<void> {
    const endpoint = match[2] as 'replymessage' | 'sendtemplate';
    const entry = logEntry(endpoint, at);
    const fail = (failure: GraphFailure, headers?: Record<string, string>) => {
      entry.status = failure.status;
      sendJson(res, failure.status, graphErrorBody(failure), headers);
    };
    if (match[1] !== product) {
      req.resume();
      return fail(unknownPath(path));
    }
    // gateway-spec.md 4.3 names GET for sendtemplate, but the template travels in the body.
    const hint = endpoint === 'sendtemplate' ? ' with the template as a JSON body (sendtemplate does not take GET)' : '';
    const read = await gatewayBody(req, fail, hint);
    if (!read) return;
    let outcome: GatewayOutcome;
    if (endpoint === 'replymessage') {
      const parsed = freeFormMessageSchema(product).safeParse(read.body);
      outcome = parsed.success ? await messages.replyJudged(parsed.data, at) : { ok: false, failure: schemaFailure(parsed.error) };
    } else {
      const parsed = templateMessageSchema(product).safeParse(read.body);
      outcome = parsed.success ? messages.template(parsed.data, at) : { ok: false, failure: schemaFailure(parsed.error) };
    }
    if (!outcome.ok) {
      logger.info('gateway request refused', { action: endpoint, code: outcome.failure.code, message: outcome.failure.message });
      return fail(outcome.failure);
    }
    const messageId = (outcome.body as { messages?: { id: string }[] }).messages?.[0]?.id;
    if (messageId) entry.messageId = messageId;
    entry.status = 200;
    sendJson(res, 200, outcome.body);
  }

  /**
   * sandbox/REFERENCE.md "Media ids": a media id answers with a signed url that lives a few minutes,
   * and the url (with the API key too, as the service requires) with the file.
   */
  function media(req: IncomingMessage, res: ServerResponse, path: string, match: RegExpExecArray, at: number): void {
    req.resume();
    const download = match[3] !== undefined;
    const id = decodedSegment(match[2]!);
    const entry = logEntry(download ? 'media_file' : 'media', at);
    entry.mediaId = id;
    const fail = (failure: GraphFailure, headers?: Record<string, string>) => {
      entry.status = failure.status;
      sendJson(res, failure.status, graphErrorBody(failure), headers);
    };
    if (match[1] !== product) return fail(unknownPath(path));
    if (req.method !== 'GET') return fail({ status: 405, code: 100, message: `(#100) method ${req.method ?? ''} is not allowed: use GET` }, { Allow: 'GET' });
    const badKey = keyFailure(req);
    if (badKey) return fail(badKey);
    if (download) {
      const verdict = mediaStore.verify(id, new URL(req.url ?? '/', 'http://sandbox').searchParams);
      if (verdict.kind === 'expired') return fail(expiredMediaUrl(id, `The url expired at ${new Date(verdict.at).toISOString()}`));
      if (verdict.kind === 'forged') return fail(expiredMediaUrl(id, 'The url was not made for this media, or its query was changed'));
    }
    const found = mediaStore.find(id);
    if (!found) return fail(unknownMedia(id));
    entry.status = 200;
    if (download) {
      res.writeHead(200, { 'Content-Type': found.mimeType, 'Content-Length': found.bytes.length });
      return void res.end(found.bytes);
    }
    // The url is on the host the request came to, so that it has the origin of the caller's base url.
    const host = req.headers.host;
    const origin = host !== undefined && URL_HOST.test(host) ? `http://${host}` : url;
    sendJson(res, 200, {
      id,
      url: `${origin}/restapi/v1/${product}/media/${encodeURIComponent(id)}/file?${mediaStore.signedQuery(id)}`,
      mime_type: found.mimeType,
      sha256: found.sha256,
      file_size: found.bytes.length,
    });
  }

  async function gateway(req: IncomingMessage, res: ServerResponse, path: string, at: number): Promise<void> {
    const mediaMatch = MEDIA_PATH.exec(path);
    if (mediaMatch) return media(req, res, path, mediaMatch, at);
    const messageMatch = MESSAGE_PATH.exec(path);
    if (messageMatch) return messaging(req, res, path, messageMatch, at);
    const match = GATEWAY_PATH.exec(path);
    const entry = logEntry(match?.[2] ?? path, at);
    const fail = (failure: GraphFailure, headers?: Record<string, string>) => {
      entry.status = failure.status;
      sendJson(res, failure.status, graphErrorBody(failure), headers);
    };

    if (!match || match[1] !== product || !(CALL_ACTIONS as readonly string[]).includes(match[2] ?? '')) {
      req.resume();
      return fail(unknownPath(path));
    }
    const action = match[2] as CallAction;
    const read = await gatewayBody(req, fail, '');
    if (!read) return;
    // gateway-spec.md 4.2: each action has its own body; the first broken rule names its field.
    const run = <S extends z.ZodType>(schema: S, op: (request: z.infer<S>) => Promise<GatewayOutcome>): Promise<GatewayOutcome> => {
      const parsed = schema.safeParse(read.body);
      return parsed.success ? op(parsed.data) : Promise.resolve({ ok: false, failure: schemaFailure(parsed.error) });
    };
    let outcome: GatewayOutcome;
    switch (action) {
      case 'accept':
        outcome = await run(schemas.accept, (r) => simulator.accept(r, at));
        break;
      case 'reject':
        outcome = await run(schemas.reject, (r) => simulator.reject(r, at));
        break;
      case 'terminate':
        outcome = await run(schemas.terminate, (r) => simulator.terminate(r, at));
        break;
      case 'initiate':
        outcome = await run(schemas.initiate, (r) => simulator.initiate(r, at));
        break;
    }
    if (outcome.callId) entry.callId = outcome.callId;
    if (!outcome.ok) {
      logger.info('gateway request refused', { action, callId: outcome.callId, code: outcome.failure.code, message: outcome.failure.message });
      return fail(outcome.failure);
    }
    entry.status = 200;
    sendJson(res, 200, outcome.body);
  }

  /** A number in gateway digits or as typed (`+44 20 …`). */
  function customerNumber(raw: string): Result<string> {
    const trimmed = raw.trim();
    const number = normalisePhoneNumber(/^[0-9]+$/.test(trimmed) ? `+${trimmed}` : trimmed);
    return number.ok ? number : { ok: false, error: { ...number.error, field: 'number' } };
  }

  async function control(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const method = req.method ?? 'GET';
    const readJson = async (): Promise<unknown> => {
      const raw = await readBody(req);
      return raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
    };
    if (method === 'GET' && path === SANDBOX_PATHS.customers) return sendJson(res, 200, customers);
    if (method === 'GET' && path === SANDBOX_PATHS.calls) return sendJson(res, 200, simulator.reports());
    if (method === 'GET' && path === SANDBOX_PATHS.log) return sendJson(res, 200, gatewayLog);
    if (method === 'GET' && path === SANDBOX_PATHS.messages) return sendJson(res, 200, messages.reports());
    if (method === 'GET' && path === SANDBOX_PATHS.templates) return sendJson(res, 200, templateCatalogue(product));
    if (method === 'GET' && path === SANDBOX_PATHS.media) return sendJson(res, 200, mediaLibrary.list());
    if (method === 'GET' && path.startsWith(`${SANDBOX_PATHS.media}/`)) {
      const id = decodeURIComponent(path.slice(SANDBOX_PATHS.media.length + 1));
      const file = mediaLibrary.bytes(id);
      if (!file) return controlError(res, 404, { code: 'not_found', message: `no media ${id}`, field: 'id' });
      res.writeHead(200, { 'Content-Type': file.media.mimeType, 'Content-Length': file.bytes.length });
      return void res.end(file.bytes);
    }
    if (method === 'GET' && path.startsWith(`${SANDBOX_PATHS.calls}/`)) {
      const callId = decodeURIComponent(path.slice(SANDBOX_PATHS.calls.length + 1));
      const report = simulator.callReport(callId);
      return report ? sendJson(res, 200, report) : controlError(res, 404, { code: 'not_found', message: `no call ${callId}`, field: 'callId' });
    }
    const posts: string[] = [
      SANDBOX_PATHS.incoming,
      SANDBOX_PATHS.hangup,
      SANDBOX_PATHS.inbound,
      SANDBOX_PATHS.pressCallButton,
      SANDBOX_PATHS.network,
      SANDBOX_PATHS.voicemail,
      SANDBOX_PATHS.callbackRequest,
    ];
    if (method === 'POST' && posts.includes(path)) {
      let body: unknown;
      try {
        body = await readJson();
      } catch {
        return controlError(res, 400, { code: 'invalid_input', message: 'body: must be valid JSON', field: '(root)' });
      }
      if (path === SANDBOX_PATHS.incoming) {
        const parsed = parseWith(incomingBody, body);
        if (!parsed.ok) return controlError(res, 400, parsed.error);
        const number = customerNumber(parsed.value.number);
        if (!number.ok) return controlError(res, 400, number.error);
        const started = await simulator.incoming(number.value);
        return started.ok ? sendJson(res, 200, started.value) : controlError(res, 500, started.error);
      }
      if (path === SANDBOX_PATHS.inbound) {
        const parsed = parseWith(inboundBody, body);
        if (!parsed.ok) return controlError(res, 400, parsed.error);
        const number = customerNumber(parsed.value.number);
        if (!number.ok) return controlError(res, 400, number.error);
        const written = messages.inbound(number.value, parsed.value.text);
        return written.ok ? sendJson(res, 200, written.value) : controlError(res, written.error.code === 'not_found' ? 404 : 500, written.error);
      }
      if (path === SANDBOX_PATHS.pressCallButton) {
        const parsed = parseWith(pressCallButtonBody, body);
        if (!parsed.ok) return controlError(res, 400, parsed.error);
        const number = customerNumber(parsed.value.number);
        if (!number.ok) return controlError(res, 400, number.error);
        const button = messages.callButton(number.value, Date.now());
        if (!button.ok) return controlError(res, button.error.code === 'not_found' ? 404 : 409, button.error);
        // protocol.md: the button's payload comes back as the call's cta_payload.
        const started = await simulator.incoming(number.value, { ctaPayload: button.value.payload });
        return started.ok ? sendJson(res, 200, { ...started.value, payload: button.value.payload }) : controlError(res, 500, started.error);
      }
      if (path === SANDBOX_PATHS.voicemail) {
        const parsed = parseWith(voicemailBody, body);
        if (!parsed.ok) return controlError(res, 400, parsed.error);
        let target: { callId: string } | { number: string };
        if (parsed.value.number !== undefined) {
          const number = customerNumber(parsed.value.number);
          if (!number.ok) return controlError(res, 400, number.error);
          target = { number: number.value };
        } else target = { callId: parsed.value.callId ?? '' };
        const call = simulator.voicemailCall(target);
        if (!call.ok) return controlError(res, call.error.code === 'not_found' ? 404 : 409, call.error);
        const { callId, customer } = call.value;
        const audio = mediaStore.keep(voicemailAudio(customer.number), VOICEMAIL_MIME_TYPE);
        const left = messages.voicemail(customer, callId, audio);
        if (!left.ok) return controlError(res, 500, left.error);
        simulator.voicemailLeft(callId, audio.id);
        return sendJson(res, 200, { callId, mediaId: audio.id });
      }
      if (path === SANDBOX_PATHS.callbackRequest) {
        const parsed = parseWith(callbackRequestBody, body);
        if (!parsed.ok) return controlError(res, 400, parsed.error);
        const number = customerNumber(parsed.value.number);
        if (!number.ok) return controlError(res, 400, number.error);
        const call = simulator.customerCall(number.value, parsed.value.callId);
        if (!call.ok) return controlError(res, call.error.code === 'not_found' ? 404 : 409, call.error);
        const asked = messages.callbackRequest(call.value.customer, call.value.callId, parsed.value.permanent ?? false);
        if (!asked.ok) return controlError(res, asked.error.code === 'not_found' ? 404 : 500, asked.error);
        return sendJson(res, 200, { callId: call.value.callId, messageId: asked.value.messageId });
      }
      if (path === SANDBOX_PATHS.network) {
        const parsed = parseWith(networkBody, body);
        if (!parsed.ok) return controlError(res, 400, parsed.error);
        const { callId, ...impairment } = parsed.value;
        const changed = simulator.setNetwork(callId, impairment);
        return changed.ok ? sendJson(res, 200, changed.value) : controlError(res, 404, changed.error);
      }
      const parsed = parseWith(hangupBody, body);
      if (!parsed.ok) return controlError(res, 400, parsed.error);
      const done = await simulator.hangup(parsed.value.callId);
      if (done.ok) return sendJson(res, 200, done.value);
      return controlError(res, done.error.code === 'not_found' ? 404 : 409, done.error);
    }
    req.resume();
    return controlError(res, 404, { code: 'not_found', message: `no control endpoint ${method} ${path}` });
  }

  async function route(req: IncomingMessage, res: ServerResponse, path: string, at: number): Promise<void> {
    if (path.startsWith('/control/')) return control(req, res, path);
    if (path.startsWith('/restapi/')) return gateway(req, res, path, at);
    req.resume();
    sendJson(res, 404, graphErrorBody(unknownPath(path)));
  }

  const server = createServer((req, res) => {
    const at = Date.now();
    const path = new URL(req.url ?? '/', 'http://sandbox').pathname;
    const handled = route(req, res, path, at);
    handled.catch((e: unknown) => {
      logger.error('request failed', { path, error: e });
      if (!res.headersSent) sendJson(res, 500, graphErrorBody({ status: 500, code: 1, message: 'An unknown error occurred' }));
      else res.destroy();
    });
  });

  // The service's front ends keep an idle connection for about a minute, so that the accept an
  // agent sends seconds after the last request reuses it; Node's default (5 s) would not.
  server.keepAliveTimeout = 65_000;

  const host = options.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    messages.close();
    await simulator.close();
    await webhooks.close();
    throw e;
  }
  const port = (server.address() as AddressInfo).port;
  url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.info('sandbox listening', { url, product, customers: customers.length });

  let closing: Promise<void> | undefined;
  return {
    url,
    gatewayUrl: `${url}/restapi/v1`,
    port,
    customers,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        mediaJudge.close();
        messages.close();
        await simulator.close();
        await webhooks.close();
        await stopped;
      })();
      return closing;
    },
  };
}
