// The gateway over HTTP. Call control (gateway-spec.md 4.2, protocol.md "Call control"): accept,
// reject, terminate and initiate. Messaging (gateway-spec.md 4.1, 4.3): free-form messages and
// templates. Media (sandbox/REFERENCE.md "Media", modelled on the service's): a media id's
// short-lived url, then the file. Every method resolves to a Result and never throws.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  callActionSuccessSchema,
  callRequestSchemas,
  GATEWAY_ERROR_TEXT,
  graphErrorSchema,
  initiateSuccessSchema,
  type CallAction,
  type CallRequestSchemas,
} from '../../shared/gateway';
import { createLogger, type Logger } from '../../shared/log';
import { freeFormMessageSchema, MESSAGE_ERROR_TEXT, messageSentSchema, type FreeFormMessage, type SentMessage } from '../../shared/messages';
import type { NetworkFailure } from '../../shared/network-error';
import { english, text, type RuleText, type TextValue } from '../../shared/i18n/text';
import { errText, ok, type AppError, type ErrorCode, type Result } from '../../shared/result';
import { templateMessageSchema, type TemplateMessage } from '../../shared/templates';
import { parseWith } from '../../shared/validation';
import { withoutQuery } from '../../shared/media-fetch';
import type { captureMembers } from '../../shared/service-capture';
import { HttpExchange, type HttpOutcome, type RetryRule, type UnabortedOutcome } from './http-exchange';

export interface GatewayClientOptions {
  /** The gateway base URL, ending in the version segment (…/restapi/v1). */
  baseUrl: string;
  apiKey: string;
  /** The product path segment and messaging_product value ("chatapp" by default, protocol.md). */
  product: string;
  /** Per request, from sending to the whole body read. Default 10 s. */
  timeoutMs?: number;
  /** How many more times a terminate is tried after a network error or a 5xx. Default 3. */
  terminateRetries?: number;
  /** First pause before retrying a terminate; it doubles each time. Default 250 ms. */
  terminateBackoffMs?: number;
  /** A media file's download, from sending to its last byte. Default 120 s (16 MB on a slow line). */
  downloadTimeoutMs?: number;
  /**
   * What accept and initiate ask of the service's own recording and transcription, read at each
   * (shared/service-capture.ts captureMembers): never on reject or terminate. None by default.
   */
  capture?: () => CaptureMembers;
  logger?: Logger;
}

/** What the call coordinator needs from the gateway; GatewayClient is the real one. */
export interface CallControl {
  /** `opaque`: the call's record id, echoed by the service on the call's events (biz_opaque_callback_data). */
  accept(callId: string, sdp: string, opaque?: string): Promise<Result<null>>;
  reject(callId: string): Promise<Result<null>>;
  terminate(callId: string): Promise<Result<null>>;
  /** `bridged`: the call's media goes through the team's bridge (bridged-calls.ts). */
  initiate(to: string, sdp: string, opaque?: string): Promise<Result<{ callId: string; bridged?: true }>>;
}

/** What the messaging side of the app needs from the gateway; GatewayClient is the real one. */
export interface MessageSending {
  sendMessage(message: FreeFormMessage): Promise<Result<SentMessage>>;
  sendTemplate(message: TemplateMessage): Promise<Result<SentMessage>>;
}

/** The `recording` / `transcription` members of accept and connect. */
export type CaptureMembers = ReturnType<typeof captureMembers>;

/** A media file as the service keeps it: its bytes, their type, their SHA-256 (hex). */
export interface MediaFile {
  mediaId: string;
  mimeType: string;
  bytes: Buffer;
  sha256: string;
}

/** Where the service said a media file is for a few minutes, and what it is (a recording's or transcript's event). */
export interface MediaLink {
  url: string;
  mimeType: string;
  sha256?: string;
}

/** What fetching a call's media needs from the gateway; GatewayClient is the real one. */
export interface MediaFetching {
  /**
   * The file of `mediaId`, refused when it is longer than `maxBytes`; `signal` gives up on it (the
   * app quits). `link`: a url the service gave with the media id, tried first.
   */
  fetchMedia(mediaId: string, maxBytes: number, signal?: AbortSignal, link?: MediaLink): Promise<Result<MediaFile>>;
}

/** GET {base}/{product}/media/{mediaId}: where the file is for the next few minutes, and what it is. */
const mediaInfoSchema = z.object({
  url: z.string().min(1),
  mime_type: z.string().min(1),
  sha256: z.string().optional(),
  file_size: z.union([z.number().int().nonnegative(), z.string().regex(/^[0-9]+$/).transform(Number)]).optional(),
});
type MediaInfo = z.infer<typeof mediaInfoSchema>;

/** The two messaging endpoints (gateway-spec.md 4.1, 4.3). */
export type MessageEndpoint = 'replymessage' | 'sendtemplate';

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_DOWNLOAD_TIMEOUT_MS = 120_000;
const DETAIL_LIMIT = 2048;
/** Bodies past this size are not read further: no call-control answer is anywhere near it. */
const BODY_READ_LIMIT = 256 * 1024;

/** The gateway codes that have their own ErrorCode (result.ts); all others are 'gateway_error'. */
const CODE_FOR_GATEWAY_ERROR: Readonly<Record<number, ErrorCode>> = {
  138006: 'no_call_permission',
  138003: 'customer_busy',
  131047: 'window_closed',
};

/** protocol.md: use the SDP as produced, with CRLF line ends and nothing else changed. */
export const normaliseSdpLineEnds = (sdp: string): string => sdp.replace(/\r\n|\r|\n/g, '\r\n');

const truncate = (text: string, limit = DETAIL_LIMIT): string => (text.length > limit ? `${text.slice(0, limit)}… (truncated)` : text);

/** The media lookup's one error code: in a GET that carries only the id, the id is the parameter refused. */
const MEDIA_LOOKUP_ERROR_TEXT: Readonly<Record<number, string>> = {
  100: 'The service does not have this media (it keeps media for 7 days)',
};

/** One request: `label` names it in messages and logs, `path` follows {base}/{product}/. */
interface GatewayRequest {
  label: string;
  path: string;
  schema: z.ZodType;
  body: unknown;
  callId?: string;
  /** Clear words per gateway error code, looked up before GATEWAY_ERROR_TEXT. */
  errorText?: Readonly<Record<number, string>>;
  /** Only terminate has one. */
  retry?: RetryRule;
}

export class GatewayClient implements CallControl, MessageSending {
  private readonly product: string;
  private readonly timeoutMs: number;
  private readonly terminateRetries: number;
  private readonly terminateBackoffMs: number;
  private readonly downloadTimeoutMs: number;
  /** The gateway's own origin: the only one its API key is sent to with a media file's download. */
  private readonly origin: string | undefined;
  private readonly schemas: CallRequestSchemas;
  private readonly capture: () => CaptureMembers;
  private readonly log: Logger;
  private readonly http: HttpExchange;

  constructor(options: GatewayClientOptions) {
    this.http = new HttpExchange({
      baseUrl: options.baseUrl,
      headers: { 'API-KEY': options.apiKey, Accept: 'application/json' },
      secret: options.apiKey,
      // Keep-alive so that accept, the one request a ringing customer waits on, reuses a warm connection.
      agent: { keepAliveTimeout: 60_000, keepAliveMaxTimeout: 10 * 60_000, connections: 8 },
    });
    this.product = options.product;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.terminateRetries = Math.max(0, options.terminateRetries ?? 3);
    this.terminateBackoffMs = options.terminateBackoffMs ?? 250;
    this.downloadTimeoutMs = options.downloadTimeoutMs ?? DEFAULT_DOWNLOAD_TIMEOUT_MS;
    this.origin = URL.canParse(options.baseUrl) ? new URL(options.baseUrl).origin : undefined;
    this.schemas = callRequestSchemas(options.product);
    this.capture = options.capture ?? (() => ({}));
    this.log = options.logger ?? createLogger('gateway');
  }

  /** Never retried: a second accept could race the first (protocol.md: the answer must be the same). */
  async accept(callId: string, sdp: string, opaque?: string): Promise<Result<null>> {
    const body = {
      messaging_product: this.product,
      call_id: callId,
      action: 'accept',
      session: { sdp_type: 'answer', sdp: normaliseSdpLineEnds(sdp) },
      ...(opaque !== undefined ? { biz_opaque_callback_data: opaque } : {}),
      ...this.capture(),
    };
    return this.callAction('accept', this.schemas.accept, body, callId);
  }

  async reject(callId: string): Promise<Result<null>> {
    return this.callAction('reject', this.schemas.reject, { messaging_product: this.product, call_id: callId, action: 'reject' }, callId);
  }

  /**
   * Retried on network errors and 5xx only: terminate is idempotent and must reach the gateway
   * (protocol.md). Timeouts are not retried, to keep quitting the app bounded.
   */
  async terminate(callId: string): Promise<Result<null>> {
    const body = { messaging_product: this.product, call_id: callId, action: 'terminate' };
    return this.callAction('terminate', this.schemas.terminate, body, callId, {
      times: this.terminateRetries,
      firstPauseMs: this.terminateBackoffMs,
      when: (outcome) => outcome.kind === 'network' || (outcome.kind === 'response' && outcome.status >= 500),
      onRetry: (outcome, attempt, pauseMs) => {
        const why = outcome.kind === 'response' ? { httpStatus: outcome.status } : outcome.kind === 'network' ? { reason: english(describeNetworkFailure(outcome.failure)) } : {};
        this.log.warn('terminate failed, retrying', { callId, attempt, pauseMs, ...why });
      },
    });
  }

  /** Never retried: a second initiate would ring the customer twice (protocol.md: never auto-redial). */
  async initiate(to: string, sdp: string, opaque?: string): Promise<Result<{ callId: string }>> {
    // gateway-spec.md 4.2: the path is "initiate", the body's action is "connect".
    const body = {
      messaging_product: this.product,
      to,
      action: 'connect',
      session: { sdp_type: 'offer', sdp: normaliseSdpLineEnds(sdp) },
      ...(opaque !== undefined ? { biz_opaque_callback_data: opaque } : {}),
      ...this.capture(),
    };
    const answer = await this.send({ label: 'initiate', path: 'calls/initiate', schema: this.schemas.initiate, body });
    if (!answer.ok) return answer;
    const parsed = initiateSuccessSchema.safeParse(answer.value.json);
    if (!parsed.success) return this.opaque('initiate', answer.value.status, answer.value.body);
    const callId = parsed.data.calls[0]!.id;
    this.log.info('call initiated', { callId, to });
    return ok({ callId });
  }

  /**
   * POST {base}/{product}/replymessage (gateway-spec.md 4.1). Never retried: a send whose answer was
   * lost may have gone out, and a second one would reach the customer twice. 131047 means the
   * 24-hour window is closed (`window_closed`): the caller records it and offers a template.
   */
  sendMessage(message: FreeFormMessage): Promise<Result<SentMessage>> {
    return this.sendToMessaging('replymessage', freeFormMessageSchema(this.product), message);
  }

  /**
   * POST {base}/{product}/sendtemplate with a JSON body: gateway-spec.md 4.3 names GET in the
   * endpoint line but the request carries a body, so POST is the working form. Never retried.
   */
  sendTemplate(message: TemplateMessage): Promise<Result<SentMessage>> {
    return this.sendToMessaging('sendtemplate', templateMessageSchema(this.product), message);
  }

  /**
   * A media file by its id: GET {base}/{product}/media/{mediaId} (the API key in its header, as every
   * request) for a url that lives a few minutes, then GET of that url, with the key only when the url
   * is on the gateway's own origin. A url that lapsed before its download (404) is asked for once more.
   * The bytes are checked against the size and SHA-256 the lookup gave. Never more than `maxBytes`
   * is read. A `link` the service gave is downloaded first, on the same terms; when it fails (it
   * lapsed, or is no http(s) url) the media id is looked up.
   */
  async fetchMedia(mediaId: string, maxBytes: number, signal?: AbortSignal, link?: MediaLink): Promise<Result<MediaFile>> {
    if (link !== undefined && /^https?:$/.test(URL.canParse(link.url) ? new URL(link.url).protocol : '')) {
      const given = await this.downloadMedia(mediaId, { url: link.url, mime_type: link.mimeType, ...(link.sha256 !== undefined ? { sha256: link.sha256 } : {}) }, maxBytes, signal);
      if (given.ok || signal?.aborted === true || given.error.text?.code === 'gateway.mediaTooLarge') return given;
      this.log.info('a media url the service gave could not be fetched; asking for the media id', { mediaId, reason: given.error.message });
    }
    const first = await this.lookUpMedia(mediaId, signal);
    if (!first.ok) return first;
    const downloaded = await this.downloadMedia(mediaId, first.value, maxBytes, signal);
    if (downloaded.ok || downloaded.error.httpStatus !== 404) return downloaded;
    this.log.info('a media url lapsed before its download; asking for a new one', { mediaId });
    const again = await this.lookUpMedia(mediaId, signal);
    if (!again.ok) return again;
    return this.downloadMedia(mediaId, again.value, maxBytes, signal);
  }

  async close(): Promise<void> {
    await this.http.close();
  }

  private async lookUpMedia(mediaId: string, signal: AbortSignal | undefined): Promise<Result<MediaInfo>> {
    const action = 'media';
    const started = performance.now();
    const request = { method: 'GET', path: `/${encodeURIComponent(this.product)}/media/${encodeURIComponent(mediaId)}`, deadlineMs: this.timeoutMs, bodyLimit: BODY_READ_LIMIT } as const;
    const outcome = signal === undefined ? await this.http.exchange(request) : await this.http.exchange({ ...request, signal });
    if (outcome.kind === 'aborted') return errText('not_available', text('service.shuttingDown'));
    const answer = this.answerOf({ action, outcome, started, seconds: this.timeoutMs / 1000, errorText: MEDIA_LOOKUP_ERROR_TEXT });
    if (!answer.ok) return answer;
    const parsed = mediaInfoSchema.safeParse(answer.value.json);
    if (!parsed.success || !/^https?:$/.test(URL.canParse(parsed.data.url) ? new URL(parsed.data.url).protocol : '')) {
      return this.opaque(action, answer.value.status, answer.value.body);
    }
    return ok(parsed.data);
  }

  private async downloadMedia(mediaId: string, info: MediaInfo, maxBytes: number, signal: AbortSignal | undefined): Promise<Result<MediaFile>> {
    const action = 'media download';
    if (info.file_size !== undefined && info.file_size > maxBytes) return this.tooLarge(mediaId, info.file_size, maxBytes);
    const url = new URL(info.url);
    const credentials = url.origin === this.origin;
    const started = performance.now();
    const outcome = await this.http.download({ url: info.url, credentials, headers: { Accept: '*/*' }, deadlineMs: this.downloadTimeoutMs, maxBytes, signal });
    if (outcome.kind === 'aborted') return errText('not_available', text('service.shuttingDown'));
    if (outcome.kind === 'too_large') return this.tooLarge(mediaId, outcome.bytes, maxBytes);
    if (outcome.kind === 'response' && outcome.status >= 200 && outcome.status < 300) {
      const bytes = outcome.body;
      this.log.info('media downloaded', { mediaId, from: url.origin, withKey: credentials, bytes: bytes.length, ms: Math.round(performance.now() - started) });
      const sha256 = createHash('sha256').update(bytes).digest();
      const sizeWrong = info.file_size !== undefined && info.file_size !== bytes.length;
      if (sizeWrong || (info.sha256 !== undefined && !sameDigest(info.sha256, sha256))) {
        this.log.warn('a media file did not match what the service said of it', { mediaId, bytes: bytes.length, fileSize: info.file_size, sha256Matches: !sizeWrong });
        return errText('gateway_unreachable', text('gateway.mediaDamaged', { mediaId }), { detail: `${bytes.length} bytes, SHA-256 ${sha256.toString('hex')}` });
      }
      return ok({ mediaId, mimeType: info.mime_type, bytes, sha256: sha256.toString('hex') });
    }
    const asText: UnabortedOutcome = outcome.kind === 'response' ? { ...outcome, body: outcome.body.toString('utf8') } : outcome;
    const answer = this.answerOf({ action, outcome: asText, started, seconds: this.downloadTimeoutMs / 1000 });
    // answerOf accepts a 2xx only, which was taken above: this is always a failure.
    return answer.ok ? this.opaque(action, answer.value.status, answer.value.body) : answer;
  }

  private tooLarge(mediaId: string, bytes: number, maxBytes: number): Result<never> {
    this.log.warn('a media file is larger than the app fetches', { mediaId, bytes, maxBytes });
    return errText('not_available', text('gateway.mediaTooLarge', { mediaId, megabytes: Math.floor(maxBytes / (1024 * 1024)) }), { detail: `${bytes} bytes` });
  }

  private async sendToMessaging(endpoint: MessageEndpoint, schema: z.ZodType, message: unknown): Promise<Result<SentMessage>> {
    const answer = await this.send({ label: endpoint, path: endpoint, schema, body: message, errorText: MESSAGE_ERROR_TEXT });
    if (!answer.ok) {
      const { error } = answer;
      // The request went out; only its answer is missing: say that the message may have been sent.
      if (error.code === 'timeout') return errText('timeout', text('gateway.messageTimeout', { seconds: Math.round(this.timeoutMs / 1000) }));
      // A 2xx says the gateway took the message, whatever its body: the agent must not be told it failed outright.
      const status = error.httpStatus;
      if (error.code === 'gateway_unreachable' && status !== undefined && status >= 200 && status < 300) return { ok: false, error: unreadableAcceptance(error, status) };
      return answer;
    }
    const parsed = messageSentSchema.safeParse(answer.value.json);
    if (!parsed.success) {
      const opaque = this.opaque<SentMessage>(endpoint, answer.value.status, answer.value.body);
      return opaque.ok ? opaque : { ok: false, error: unreadableAcceptance(opaque.error, answer.value.status) };
    }
    const sent: SentMessage = { messageId: parsed.data.messages[0]!.id, waId: parsed.data.contacts[0]!.wa_id };
    const type = (message as { type?: unknown }).type;
    this.log.info('message sent', { endpoint, messageId: sent.messageId, to: (message as { to?: unknown }).to, type });
    return ok(sent);
  }

  private async callAction(action: CallAction, schema: z.ZodType, body: unknown, callId: string, retry?: RetryRule): Promise<Result<null>> {
    const answer = await this.send({ label: action, path: `calls/${action}`, schema, body, callId, retry });
    if (!answer.ok) return answer;
    if (!callActionSuccessSchema.safeParse(answer.value.json).success) return this.opaque(action, answer.value.status, answer.value.body, callId);
    return ok(null);
  }

  /** Validates, sends and classifies: a Result with the parsed JSON of a 2xx answer. */
  private async send(request: GatewayRequest): Promise<Result<{ status: number; body: string; json: unknown }>> {
    const { label: action, schema, body, callId } = request;
    const valid = parseWith(schema, body);
    if (!valid.ok) {
      this.log.warn('refused to send an invalid request', { action, callId, field: valid.error.field, reason: valid.error.message });
      return valid;
    }
    const started = performance.now();
    const outcome = await this.http.exchange({
      method: 'POST',
      path: `/${encodeURIComponent(this.product)}/${request.path}`,
      json: valid.value,
      deadlineMs: this.timeoutMs,
      bodyLimit: BODY_READ_LIMIT,
      retry: request.retry,
    });
    return this.answerOf({ action, outcome, started, seconds: this.timeoutMs / 1000, callId, errorText: request.errorText });
  }

  /** Classifies an exchange's outcome: a Result with the parsed JSON of a 2xx answer. */
  private answerOf(o: {
    action: string;
    outcome: Exclude<HttpOutcome, { kind: 'aborted' }>;
    started: number;
    seconds: number;
    callId?: string | undefined;
    errorText?: Readonly<Record<number, string>> | undefined;
  }): Result<{ status: number; body: string; json: unknown }> {
    const { action, outcome, callId } = o;
    const ms = Math.round(performance.now() - o.started);
    switch (outcome.kind) {
      case 'timeout':
        this.log.warn('gateway timed out', { action, callId, ms });
        return errText('timeout', text('gateway.timeout', { action, seconds: Math.round(o.seconds) }));
      case 'network': {
        const reason = describeNetworkFailure(outcome.failure);
        this.log.warn('gateway unreachable', { action, callId, ms, reason: withoutQuery(english(reason)) });
        return errText('gateway_unreachable', text('gateway.unreachable', { reason }));
      }
      case 'response': {
        const { status, body: text } = outcome;
        this.log.info('gateway answered', { action, callId, status, ms });
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          return this.opaque(action, status, text, callId);
        }
        const graph = graphErrorSchema.safeParse(json);
        if (graph.success) return { ok: false, error: this.graphError(action, status, graph.data.error, callId, o.errorText) };
        if (status < 200 || status >= 300) return this.opaque(action, status, text, callId);
        return ok({ status, body: text, json });
      }
    }
  }

  private graphError(
    action: string,
    status: number,
    e: { message: string; code: number; error_data?: unknown },
    callId: string | undefined,
    errorText: Readonly<Record<number, string>> = {},
  ): AppError {
    const code = CODE_FOR_GATEWAY_ERROR[e.code] ?? 'gateway_error';
    const error: AppError = {
      code,
      message: this.http.scrub(errorText[e.code] ?? GATEWAY_ERROR_TEXT[e.code] ?? e.message),
      gatewayCode: e.code,
      httpStatus: status,
    };
    // error_data carries the specifics, e.g. what was wrong with the SDP for code 100 (protocol.md).
    const details = [e.message, e.error_data === undefined ? undefined : JSON.stringify(e.error_data)].filter((d) => d !== undefined).join(' ');
    if (details !== '') error.detail = this.http.scrub(truncate(details));
    this.log.warn('gateway refused', { action, callId, gatewayCode: e.code, httpStatus: status, gatewayMessage: this.http.scrub(e.message) });
    return error;
  }

  /** protocol.md: any body that is not a Graph answer is an opaque error, kept for diagnostics. */
  private opaque<T>(action: string, status: number, body: string, callId?: string): Result<T> {
    const shown = body.trim() === '' ? '(empty body)' : body;
    const detail = this.http.scrub(`HTTP ${status}: ${truncate(shown)}`);
    this.log.warn('gateway answered with an unexpected body', { action, callId, httpStatus: status, bodyStart: detail.slice(0, 200) });
    return errText('gateway_unreachable', text('gateway.notAnAnswer', { action, status }), { httpStatus: status, detail });
  }
}

/** A digest the service gave, hex or base64, against the bytes' own. */
function sameDigest(given: string, digest: Buffer): boolean {
  const trimmed = given.trim();
  if (/^[0-9a-f]{64}$/i.test(trimmed)) return trimmed.toLowerCase() === digest.toString('hex');
  return trimmed.replace(/=+$/, '') === digest.toString('base64').replace(/=+$/, '') || trimmed.replace(/=+$/, '') === digest.toString('base64url');
}

/** A 2xx whose body could not be read: the error as it was, saying that the message may have gone out. */
function unreadableAcceptance(error: AppError, status: number): AppError {
  const said: RuleText = text('gateway.unreadableAcceptance', { status });
  return { ...error, message: english(said), text: said };
}

/** The gateway's words for a network failure: its code, or what undici says of a socket closed under it. */
function describeNetworkFailure(failure: NetworkFailure): TextValue {
  if (failure.code === 'UND_ERR_SOCKET') return text('gateway.connectionClosed', { detail: failure.message });
  return failure.code ?? failure.message;
}
