// The relay's side of a remote node's control API (shared/bridge.ts `BridgeControl` over
// `BRIDGE_CONTROL_PATHS`; the server is control-server.ts). Every method resolves to a Result within
// its deadline and never throws; the bridge token travels only in the Authorization header and is
// never logged nor part of an error.
import { z } from 'zod';
import { BRIDGE_CONTROL_PATHS, type BridgeControl, type BridgedCallReport, type Routes } from '../shared/bridge';
import { RECORDING_CONTROL_PATHS } from '../shared/bridge-recording';
import { createLogger, type Logger } from '../shared/log';
import { err, ok, type ErrorCode, type Result } from '../shared/result';
import { describeFailure, HttpExchange, jsonOfText, type HttpMethod } from './http-exchange';
import { noticeToBase64 } from './notice-pcm';

export interface BridgeControlClientOptions {
  /** The node's control URL, as it registered it. */
  controlUrl: string;
  bridgeToken: string;
  /**
   * Per request, from sending to the whole answer read. Default 10 s: an answer or an offer comes
   * once the node has gathered its candidates, which is capped well below that.
   */
  timeoutMs?: number;
  logger?: Logger;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Two SDPs' worth; a report is far smaller. */
const BODY_READ_LIMIT = 256 * 1024;

const sdp = z.string().min(1).max(64 * 1024);
const answerReplySchema = z.object({ answer: sdp });
const offerReplySchema = z.object({ offer: sdp });
const count = z.number().finite();
const legReportSchema = z.object({
  state: z.enum(['new', 'connecting', 'connected', 'failed', 'closed']),
  packetsReceived: count,
  packetsLost: count,
  jitterMs: count.optional(),
  roundTripMs: count.optional(),
  lastPacketAt: count.optional(),
});
const reportSchema = z.object({
  callId: z.string(),
  customer: legReportSchema,
  agents: z.record(z.string(), legReportSchema),
  routes: z.record(z.string(), z.array(z.string())),
}) satisfies z.ZodType<BridgedCallReport>;
const errorEnvelopeSchema = z.object({ error: z.object({ code: z.string(), message: z.string(), field: z.string().optional() }) });

/** Every code a node may answer with; a code this relay does not know reads by the status instead. */
const KNOWN_CODES: Record<ErrorCode, true> = {
  invalid_input: true,
  invalid_phone_number: true,
  not_found: true,
  invalid_state: true,
  no_call_permission: true,
  customer_busy: true,
  window_closed: true,
  gateway_error: true,
  gateway_unreachable: true,
  timeout: true,
  unauthorized: true,
  media_failed: true,
  not_configured: true,
  not_available: true,
  answered_elsewhere: true,
  needs_confirmation: true,
  internal: true,
};
const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(KNOWN_CODES, code);

export class BridgeControlClient implements BridgeControl {
  private readonly http: HttpExchange;
  private readonly timeoutMs: number;
  private readonly log: Logger;

  constructor(options: BridgeControlClientOptions) {
    this.http = new HttpExchange({ baseUrl: options.controlUrl, token: options.bridgeToken, agent: { connections: 8 } });
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.log = options.logger ?? createLogger('bridge-client');
  }

  prepareIncoming(callId: string, offer: string): Promise<Result<{ answer: string }>> {
    return this.valueOf('POST', BRIDGE_CONTROL_PATHS.incoming(callId), { sdp: offer }, answerReplySchema);
  }

  connectCustomer(callId: string): Promise<Result<null>> {
    return this.done('POST', BRIDGE_CONTROL_PATHS.connect(callId), undefined);
  }

  prepareOutgoing(ref: string): Promise<Result<{ offer: string }>> {
    return this.valueOf('POST', BRIDGE_CONTROL_PATHS.outgoing(ref), undefined, offerReplySchema);
  }

  bindOutgoing(ref: string, callId: string): Promise<Result<null>> {
    return this.done('POST', BRIDGE_CONTROL_PATHS.bind(ref), { callId });
  }

  applyCustomerAnswer(callId: string, answer: string): Promise<Result<null>> {
    return this.done('POST', BRIDGE_CONTROL_PATHS.customerAnswer(callId), { sdp: answer });
  }

  offerAgentLeg(callId: string, legId: string): Promise<Result<{ offer: string }>> {
    return this.valueOf('POST', BRIDGE_CONTROL_PATHS.legOffer(callId, legId), undefined, offerReplySchema);
  }

  applyAgentAnswer(callId: string, legId: string, answer: string): Promise<Result<null>> {
    return this.done('POST', BRIDGE_CONTROL_PATHS.legAnswer(callId, legId), { sdp: answer });
  }

  answerAgentLeg(callId: string, legId: string, offer: string): Promise<Result<{ answer: string }>> {
    return this.valueOf('POST', BRIDGE_CONTROL_PATHS.legFromOffer(callId, legId), { sdp: offer }, answerReplySchema);
  }

  setRoutes(callId: string, routes: Routes): Promise<Result<null>> {
    return this.done('POST', BRIDGE_CONTROL_PATHS.routes(callId), { routes });
  }

  closeAgentLeg(callId: string, legId: string): Promise<Result<null>> {
    return this.done('DELETE', BRIDGE_CONTROL_PATHS.leg(callId, legId), undefined);
  }

  endCall(callId: string): Promise<Result<null>> {
    return this.done('DELETE', BRIDGE_CONTROL_PATHS.call(callId), undefined);
  }

  releaseCustomer(callId: string): Promise<Result<null>> {
    return this.done('POST', BRIDGE_CONTROL_PATHS.release(callId), undefined);
  }

  report(callId: string): Promise<Result<BridgedCallReport>> {
    return this.valueOf('GET', BRIDGE_CONTROL_PATHS.call(callId), undefined, reportSchema);
  }

  startRecording(callId: string, notice?: Int16Array): Promise<Result<null>> {
    return this.done('POST', RECORDING_CONTROL_PATHS.start(callId), notice !== undefined && notice.length > 0 ? { notice: noticeToBase64(notice) } : {});
  }

  stopRecording(callId: string): Promise<Result<null>> {
    return this.done('POST', RECORDING_CONTROL_PATHS.stop(callId), undefined);
  }

  /** Waits for the requests under way, then closes the connections. */
  async close(): Promise<void> {
    await this.http.close();
  }

  /** A request answered with no value (204). */
  private async done(method: HttpMethod, path: string, json: unknown): Promise<Result<null>> {
    const answer = await this.send(method, path, json);
    // Whatever a node sends with a success that has nothing to say is not looked at.
    return answer.ok ? ok(null) : answer;
  }

  /** A request answered with a value that `schema` reads. */
  private async valueOf<T>(method: HttpMethod, path: string, json: unknown, schema: z.ZodType<T>): Promise<Result<T>> {
    const answer = await this.send(method, path, json);
    if (!answer.ok) return answer;
    const parsed = schema.safeParse(jsonOfText(answer.value.body));
    if (parsed.success) return ok(parsed.data);
    this.log.warn('a bridge node answered with an unexpected body', { node: this.http.baseUrl, method, path, status: answer.value.status });
    return err('gateway_unreachable', `the bridge node at ${this.http.baseUrl} answered ${method} ${path} with an unexpected body`, { httpStatus: answer.value.status });
  }

  /** One request: a success's status and body, or the failure as an error. */
  private async send(method: HttpMethod, path: string, json: unknown): Promise<Result<{ status: number; body: string }>> {
    const started = performance.now();
    const outcome = await this.http.exchange({ method, path, json, deadlineMs: this.timeoutMs, bodyLimit: BODY_READ_LIMIT });
    const ms = Math.round(performance.now() - started);
    const node = this.http.baseUrl;
    switch (outcome.kind) {
      case 'timeout':
        this.log.warn('a bridge node did not answer in time', { node, method, path, ms });
        return err('timeout', `the bridge node at ${node} did not answer ${method} ${path} within ${this.timeoutMs} ms`);
      case 'network': {
        const reason = describeFailure(outcome.failure);
        this.log.warn('a bridge node could not be reached', { node, method, path, ms, reason });
        return err('gateway_unreachable', `the bridge node at ${node} could not be reached: ${reason}`);
      }
      case 'response':
        this.log.debug('a bridge node answered', { node, method, path, status: outcome.status, ms });
        if (outcome.status >= 200 && outcome.status < 300) return ok({ status: outcome.status, body: outcome.body });
        return this.refused(outcome.status, outcome.body, `${method} ${path}`);
    }
  }

  /** The node's error as its own Result: its code when this relay knows it, else what the status says. */
  private refused<T>(status: number, body: string, what: string): Result<T> {
    const envelope = errorEnvelopeSchema.safeParse(jsonOfText(body));
    const said = envelope.success ? envelope.data.error : undefined;
    const code = said !== undefined && isErrorCode(said.code) ? said.code : codeOfStatus(status);
    const message = said !== undefined ? this.http.scrub(said.message) : `the bridge node at ${this.http.baseUrl} answered ${what} with ${status}`;
    this.log.info('a bridge node refused a request', { node: this.http.baseUrl, request: what, status, code });
    return err(code, message, { httpStatus: status, ...(said?.field !== undefined ? { field: said.field } : {}) });
  }
}

function codeOfStatus(status: number): ErrorCode {
  if (status === 400 || status === 413) return 'invalid_input';
  if (status === 401 || status === 403) return 'unauthorized';
  if (status === 404) return 'not_found';
  if (status === 409) return 'invalid_state';
  if (status === 504) return 'timeout';
  if (status === 503) return 'not_available';
  return 'internal';
}
