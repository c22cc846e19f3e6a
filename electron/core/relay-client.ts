// The agent's requests to the relay besides the event stream (relay/README.md): who am I (GET /me),
// presence (PUT /presence), first-claim-wins (POST /calls/{id}/claim), short-lived TURN
// credentials (GET /turn-credentials), bridged calls' requests, their transfers' too, the team's
// desk (settings, wallboard, wrap-ups, callback requests), and the team's recordings and supervisors'
// requests (`agentRequest`, `recordingFile`). Every
// method resolves to a Result and never throws; the agent token travels only in the Authorization
// header and is never logged or echoed in an error.
import { z } from 'zod';
import { PRESENCE_STATUSES, teamInfoSchema, type PresenceStatus, type TeamInfo } from '../../shared/api';
import { RECORDING_AGENT_PATHS } from '../../shared/bridge-recording';
import { BRIDGE_AGENT_PATHS, legReportSchema, type LegReport } from '../../shared/bridge';
import { ANSWERED_ELSEWHERE } from '../../shared/call-state';
import { takeCallbackPath, takeCallbackReplySchema, type CallbackRequest } from '../../shared/callbacks';
import { english, text, type RuleText, type TextValue } from '../../shared/i18n/text';
import { iceServersSchema, type IceServer } from '../../shared/ice-servers';
import { createLogger, type Logger } from '../../shared/log';
import type { NetworkFailure } from '../../shared/network-error';
import { errText, ok, type ErrorCode, type Result } from '../../shared/result';
import { WALLBOARD_PATH, wallboardSchema, type Wallboard } from '../../shared/wallboard';
import { HttpExchange, type HttpMethod } from './http-exchange';

export interface RelayClientOptions {
  /** The relay's base URL, e.g. https://relay.example.com */
  url: string;
  /** The agent token (Authorization: Bearer). */
  token: string;
  /** Per request, from sending to the whole body read. Default 5 s. */
  timeoutMs?: number;
  /**
   * For claims. Short: a customer is waiting, and a relay that does not answer must not hold the
   * answer back for long (the coordinator answers anyway). Default 2 s.
   */
  claimTimeoutMs?: number;
  logger?: Logger;
}

/** What the call coordinator needs from the relay; RelayClient is the real one. */
export interface CallClaims {
  /** 200 → ok with the owner (this agent); 409 → `answered_elsewhere`; anything else → another error code. */
  claim(callId: string): Promise<Result<{ agentId: string }>>;
  /**
   * This agent declines a ringing call: the relay says how many colleagues may still answer it, and
   * who answered it if someone has. The call is rejected at the gateway only when nobody is left.
   */
  decline(callId: string): Promise<Result<DeclineOutcome>>;
  /** This agent's id on the relay, once known (GET /me or a won claim). */
  readonly agentId: string | undefined;
}

/**
 * What the relay is told of the agent (PUT /presence): a break's `reason` (one of the team's), and the
 * call after-call work follows (`callId`, kept with the time in that state).
 */
export interface PresenceReport {
  status: PresenceStatus;
  reason?: string;
  callId?: string;
}

/** What presence reporting needs from the relay. */
export interface PresenceSink {
  setPresence(report: PresenceReport): Promise<Result<{ agentId: string; status: PresenceStatus }>>;
}

/** What the relay kept of a wrap-up (PUT /calls/{callId}/wrap-up). */
export interface SavedWrapUp {
  callId: string;
  agentId: string;
  disposition: string | null;
  notes: string;
  savedAt: number;
}

/** What GET /me says: who the agent is, whether the team's calls go through a bridge, and whether its bridge records them. */
export interface Me {
  agentId: string;
  name?: string;
  bridged: boolean;
  record?: NonNullable<TeamInfo['record']>;
}

/** A team's recording of a call as the relay serves it (GET /recordings/{callId}). */
export interface RecordingFile {
  bytes: Buffer;
  mimeType: string;
}

export interface DeclineOutcome {
  othersRinging: number;
  answeredBy?: string;
}


const DEFAULT_TIMEOUT_MS = 5_000;
const DEFAULT_CLAIM_TIMEOUT_MS = 2_000;
/** A bridged call's quality is asked once a second: an answer later than this is of no use. */
const QUALITY_TIMEOUT_MS = 2_000;
/** None of the relay's answers to these requests is anywhere near this size. */
const BODY_READ_LIMIT = 64 * 1024;
/** The answers that list the team's calls (a supervisor's live calls) grow with the team. */
export const LIST_READ_LIMIT = 4 * 1024 * 1024;
/** A recording's download, from sending to its last byte: a long call's file on a slow line. */
const RECORDING_TIMEOUT_MS = 120_000;
/** What the relay's recording is when it does not say. */
const RECORDING_MIME = 'audio/ogg';

const meSchema = z.object({
  agentId: z.string().min(1),
  name: z.string().optional(),
  bridged: z.boolean().optional(),
  // A mode this app does not know yet offers nothing here rather than refusing who the agent is.
  record: z.enum(['on-demand', 'always']).optional().catch(undefined),
});
const claimWonSchema = z.object({ callId: z.string(), agentId: z.string().min(1) });
const declinedSchema = z.object({ callId: z.string(), othersRinging: z.number().int().min(0), answeredBy: z.string().min(1).optional() });
const presenceSchema = z.object({ agentId: z.string().min(1), status: z.enum(PRESENCE_STATUSES) });
const savedWrapUpSchema = z.object({ callId: z.string(), agentId: z.string().min(1), disposition: z.string().nullable(), notes: z.string(), savedAt: z.number() });
const turnCredentialsSchema = z.object({
  iceServers: iceServersSchema.min(1),
  ttlSec: z.number().int().positive(),
});
const relayErrorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), agentId: z.string().optional(), name: z.string().optional() }),
});

export class RelayClient implements CallClaims, PresenceSink {
  private readonly http: HttpExchange;
  private readonly timeoutMs: number;
  private readonly claimTimeoutMs: number;
  private readonly log: Logger;
  private readonly baseUrl: string;
  private knownAgentId: string | undefined;

  constructor(options: RelayClientOptions) {
    this.http = new HttpExchange({
      baseUrl: options.url,
      headers: { authorization: `Bearer ${options.token}`, accept: 'application/json' },
      secret: options.token,
      // Keep-alive: the claim sits on the answer path, and presence refreshes keep a connection warm.
      agent: { keepAliveTimeout: 30_000, connections: 4, connect: { timeout: 5_000 } },
    });
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.claimTimeoutMs = options.claimTimeoutMs ?? DEFAULT_CLAIM_TIMEOUT_MS;
    this.log = options.logger ?? createLogger('relay-client');
    this.baseUrl = options.url.replace(/\/+$/, '');
  }

  get agentId(): string | undefined {
    return this.knownAgentId;
  }

  /** GET /me: which agent the token belongs to, whether the team's calls go through a bridge, and whether its bridge records them. */
  async me(): Promise<Result<Me>> {
    const answer = await this.send('GET', '/me', this.timeoutMs);
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    if (status !== 200) return this.refused('me', status, json);
    const parsed = meSchema.safeParse(json);
    if (!parsed.success) return this.unexpected('me', status);
    const { agentId, name, record } = parsed.data;
    this.knownAgentId = agentId;
    return ok({ agentId, bridged: parsed.data.bridged === true, ...(name !== undefined ? { name } : {}), ...(record !== undefined ? { record } : {}) });
  }

  /**
   * One of the agent's requests whose refusals say what they are (the team's recordings and the
   * supervisors' endpoints): a 2xx is its body as `schema` parses it (an empty one as `{}`); a 409 is
   * `invalid_state` and a 404 the relay's `not_found` is `not_found`, both in the relay's words; any
   * other status is refused as the others are (a 403 `unauthorized` in the relay's words).
   */
  async agentRequest<S extends z.ZodType>(what: string, method: HttpMethod, path: string, body: unknown, schema: S, bodyLimit = BODY_READ_LIMIT): Promise<Result<z.infer<S>>> {
    const answer = await this.send(method, path, method === 'GET' ? this.timeoutMs : this.claimTimeoutMs * 2, body, bodyLimit);
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    if (status === 409) return this.conflict(what, json);
    if (status === 404 && relayErrorSchema.safeParse(json).data?.error.code === 'not_found') return this.notThere(what, json);
    if (status < 200 || status >= 300) return this.refused(what, status, json);
    const parsed = schema.safeParse(json ?? {});
    if (!parsed.success) return this.unexpected(what, status);
    return ok(parsed.data);
  }

  /**
   * GET /recordings/{callId}: the team's recording of the call, whole (shared/bridge-recording.ts
   * RECORDING_AGENT_PATHS.file). 404 is `not_found` (none, not yet, or no longer), 403 `unauthorized`
   * in the relay's words; a file past `maxBytes` is not read.
   */
  async recordingFile(callId: string, maxBytes: number): Promise<Result<RecordingFile>> {
    const what = 'recording';
    const path = RECORDING_AGENT_PATHS.file(callId);
    const outcome = await this.http.download({ url: `${this.baseUrl}${path}`, credentials: true, headers: { accept: 'audio/ogg, application/json' }, deadlineMs: RECORDING_TIMEOUT_MS, maxBytes });
    switch (outcome.kind) {
      case 'timeout':
        this.log.warn('the relay did not send a recording in time', { callId });
        return errText('timeout', text('relay.timeout', { method: 'GET', path, seconds: tenthsOfSeconds(RECORDING_TIMEOUT_MS) }));
      case 'aborted':
      case 'network': {
        const reason = outcome.kind === 'network' ? describeNetworkFailure(outcome.failure) : text('relay.connectionReset');
        this.log.warn('the relay could not be reached for a recording', { callId, reason: english(reason) });
        return errText('gateway_unreachable', text('relay.unreachable', { reason }));
      }
      case 'too_large':
        this.log.warn('a recording is larger than the app plays', { callId, bytes: outcome.bytes, maxBytes });
        return errText('not_available', text('teamRecording.tooLarge', { megabytes: Math.ceil(outcome.bytes / (1024 * 1024)), limit: Math.floor(maxBytes / (1024 * 1024)) }), { httpStatus: outcome.status });
      case 'response': {
        if (outcome.status === 200) {
          const type = outcome.headers['content-type'];
          const mimeType = (Array.isArray(type) ? type[0] : type) ?? RECORDING_MIME;
          return ok({ bytes: outcome.body, mimeType: mimeType.trim() === '' ? RECORDING_MIME : mimeType.trim() });
        }
        let json: unknown;
        try {
          json = JSON.parse(outcome.body.toString('utf8'));
        } catch {
          json = undefined;
        }
        return outcome.status === 404 ? this.notThere(what, json) : this.refused(what, outcome.status, json);
      }
    }
  }

  /** A bridge request (bridge/REFERENCE.md "The agent's side"): the reply's body as `schema` parses it. */
  async bridgeRequest<S extends z.ZodType>(what: string, path: string, body: unknown, schema: S): Promise<Result<z.infer<S>>> {
    const answer = await this.send('POST', path, this.claimTimeoutMs * 2, body);
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    if (status !== 200) return this.refused(what, status, json);
    const parsed = schema.safeParse(json);
    if (!parsed.success) return this.unexpected(what, status);
    return ok(parsed.data);
  }

  /**
   * A transfer request (shared/transfer.ts TRANSFER_PATHS): the reply's body as `schema` parses it
   * (a 204 is an empty object). A 409 is the transfer's own conflict: `answered_elsewhere` when a
   * colleague answered first (`already_claimed`, `answered_elsewhere`), else `invalid_state` (the
   * transfer is over, or not in a state that allows it).
   */
  async transferRequest<S extends z.ZodType>(what: string, method: 'GET' | 'POST', path: string, body: unknown, schema: S): Promise<Result<z.infer<S>>> {
    const answer = method === 'GET' ? await this.send('GET', path, this.timeoutMs) : await this.send('POST', path, this.claimTimeoutMs * 2, body);
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    if (status === 409) return this.conflict(what, json);
    if (status !== 200 && status !== 204) return this.refused(what, status, json);
    const parsed = schema.safeParse(status === 204 ? {} : json);
    if (!parsed.success) return this.unexpected(what, status);
    return ok(parsed.data);
  }

  /**
   * GET /calls/{callId}/bridge/quality: a bridged call's customer leg as the bridge measures it now
   * (only the agent on the call may read it: 403, 404 for a call the relay does not bridge).
   */
  async bridgeQuality(callId: string): Promise<Result<LegReport>> {
    const answer = await this.send('GET', BRIDGE_AGENT_PATHS.quality(callId), QUALITY_TIMEOUT_MS);
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    if (status !== 200) return this.refused('bridge quality', status, json);
    const parsed = legReportSchema.safeParse(json);
    if (!parsed.success) return this.unexpected('bridge quality', status);
    return ok(parsed.data);
  }

  /** POST /calls/{callId}/claim: the first agent wins; 409 means another agent has the call. */
  async claim(callId: string): Promise<Result<{ agentId: string }>> {
    const answer = await this.send('POST', `/calls/${encodeURIComponent(callId)}/claim`, this.claimTimeoutMs);
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    if (status === 409) {
      const winner = relayErrorSchema.safeParse(json);
      const agentId = winner.success ? winner.data.error.agentId : undefined;
      this.log.info('claim lost', { callId, winner: agentId });
      return errText('answered_elsewhere', ANSWERED_ELSEWHERE, { httpStatus: 409, ...(agentId !== undefined ? { detail: `claimed by ${agentId}` } : {}) });
    }
    if (status !== 200) return this.refused('claim', status, json);
    const parsed = claimWonSchema.safeParse(json);
    if (!parsed.success) return this.unexpected('claim', status);
    this.knownAgentId = parsed.data.agentId;
    this.log.info('claim won', { callId, agentId: parsed.data.agentId });
    return ok({ agentId: parsed.data.agentId });
  }

  /** POST /calls/{id}/decline. */
  async decline(callId: string): Promise<Result<DeclineOutcome>> {
    const answer = await this.send('POST', `/calls/${encodeURIComponent(callId)}/decline`, this.claimTimeoutMs);
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    if (status !== 200) return this.refused('decline', status, json);
    const parsed = declinedSchema.safeParse(json);
    if (!parsed.success) return this.unexpected('decline', status);
    const { othersRinging, answeredBy } = parsed.data;
    return ok({ othersRinging, ...(answeredBy !== undefined ? { answeredBy } : {}) });
  }

  /**
   * GET /turn-credentials: TURN servers with a username and password valid for `ttlSec`. A relay
   * started without --turn-secret answers 404 not_configured: `not_available` here.
   */
  async turnCredentials(): Promise<Result<{ iceServers: IceServer[]; ttlSec: number }>> {
    const answer = await this.send('GET', '/turn-credentials', this.timeoutMs);
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    if (status === 404) return errText('not_available', text('relay.noTurn'), { httpStatus: 404 });
    if (status !== 200) return this.refused('TURN credentials', status, json);
    const parsed = turnCredentialsSchema.safeParse(json);
    if (!parsed.success) return this.unexpected('TURN credentials', status);
    return ok(parsed.data);
  }

  /** GET /team/settings: this agent's role and the team's settings (relay/REFERENCE.md "Team settings"). */
  async teamInfo(): Promise<Result<TeamInfo>> {
    const answer = await this.send('GET', '/team/settings', this.timeoutMs);
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    if (status !== 200) return this.refused('team settings', status, json);
    const parsed = teamInfoSchema.safeParse(json);
    if (!parsed.success) return this.unexpected('team settings', status);
    return ok(parsed.data);
  }

  /** GET /team/wallboard: the team's live picture (shared/wallboard.ts). */
  async wallboard(): Promise<Result<Wallboard>> {
    const answer = await this.send('GET', WALLBOARD_PATH, this.timeoutMs);
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    if (status !== 200) return this.refused('wallboard', status, json);
    const parsed = wallboardSchema.safeParse(json);
    if (!parsed.success) return this.unexpected('wallboard', status);
    return ok(parsed.data);
  }

  /**
   * PUT /calls/{callId}/wrap-up: the team's record of the call keeps this agent's wrap-up. A refusal
   * keeps its HTTP status (`httpStatus`): 400, 403 and 409 are for good, the rest worth retrying.
   */
  async saveWrapUp(callId: string, wrapUp: { disposition: string | null; notes: string }): Promise<Result<SavedWrapUp>> {
    const answer = await this.send('PUT', `/calls/${encodeURIComponent(callId)}/wrap-up`, this.timeoutMs, wrapUp);
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    if (status !== 200) return this.refused('wrap-up', status, json);
    const parsed = savedWrapUpSchema.safeParse(json);
    if (!parsed.success) return this.unexpected('wrap-up', status);
    return ok(parsed.data);
  }

  /** PUT /calls/{id}/hold: a direct call of this agent's went on hold (`held`) or came off it, for the team's records. */
  async reportHold(callId: string, held: boolean): Promise<Result<null>> {
    const answer = await this.send('PUT', `/calls/${encodeURIComponent(callId)}/hold`, this.timeoutMs, { held });
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    return status === 200 ? ok(null) : this.refused('hold', status, json);
  }

  /**
   * POST /team/callbacks/{id}/take ("Call back"): the request, now this agent's (again 200 when it
   * already was). A colleague's (409 `taken`) is refused `answered_elsewhere` with "Taken by NAME";
   * a request no longer on the list (404 `not_found`) is refused `not_found`.
   */
  async takeCallback(id: string): Promise<Result<CallbackRequest>> {
    const what = 'callback';
    const answer = await this.send('POST', takeCallbackPath(id), this.timeoutMs);
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    const envelope = relayErrorSchema.safeParse(json);
    const relayCode = envelope.success ? envelope.data.error.code : undefined;
    if (status === 409 && relayCode === 'taken') {
      const { name, agentId, message } = envelope.data!.error;
      this.log.info('a callback request is a colleague’s', { id, takenBy: agentId });
      return errText('answered_elsewhere', text('callbacks.taken', { name: name ?? agentId ?? this.http.scrub(message) }), { httpStatus: 409, ...(agentId !== undefined ? { detail: `taken by ${agentId}` } : {}) });
    }
    if (status === 404 && relayCode === 'not_found') return errText('not_found', text('callbacks.gone'), { httpStatus: 404 });
    if (status === 409) return this.conflict(what, json);
    if (status !== 200) return this.refused(what, status, json);
    const parsed = takeCallbackReplySchema.safeParse(json);
    if (!parsed.success) return this.unexpected(what, status);
    return ok(parsed.data.callback);
  }

  /** PUT /presence. */
  async setPresence(report: PresenceReport): Promise<Result<{ agentId: string; status: PresenceStatus }>> {
    const answer = await this.send('PUT', '/presence', this.timeoutMs, report);
    if (!answer.ok) return answer;
    const { status, json } = answer.value;
    if (status !== 200) return this.refused('presence', status, json);
    const parsed = presenceSchema.safeParse(json);
    if (!parsed.success) return this.unexpected('presence', status);
    this.knownAgentId = parsed.data.agentId;
    return ok(parsed.data);
  }

  async close(): Promise<void> {
    await this.http.close();
  }

  /** Sends one request; a Result with the status and the JSON body (undefined when it is not JSON). */
  private async send(method: HttpMethod, path: string, timeoutMs: number, body?: unknown, bodyLimit = BODY_READ_LIMIT): Promise<Result<{ status: number; json: unknown }>> {
    const started = performance.now();
    const outcome = await this.http.exchange({ method, path, json: body, deadlineMs: timeoutMs, bodyLimit });
    const ms = Math.round(performance.now() - started);
    switch (outcome.kind) {
      case 'timeout':
        this.log.warn('the relay did not answer in time', { method, path, ms });
        return errText('timeout', text('relay.timeout', { method, path, seconds: tenthsOfSeconds(timeoutMs) }));
      case 'network': {
        const reason = describeNetworkFailure(outcome.failure);
        this.log.warn('the relay could not be reached', { method, path, ms, reason: english(reason) });
        return errText('gateway_unreachable', text('relay.unreachable', { reason }));
      }
      case 'response': {
        this.log.debug('the relay answered', { method, path, status: outcome.status, ms });
        let json: unknown;
        try {
          json = JSON.parse(outcome.body);
        } catch {
          json = undefined;
        }
        return ok({ status: outcome.status, json });
      }
    }
  }

  /** A status other than the expected one, with the relay's error envelope when it sent one. */
  private refused<T>(what: string, status: number, json: unknown): Result<T> {
    const envelope = relayErrorSchema.safeParse(json);
    const relayMessage = envelope.success ? this.http.scrub(envelope.data.error.message) : undefined;
    const code: ErrorCode =
      status === 401 || status === 403 ? 'unauthorized' : status === 400 ? 'invalid_input' : status === 404 ? 'not_available' : 'gateway_unreachable';
    // The relay's own words, when it sent some, stay its words: a value of the sentence around them.
    // A 401 is the token refused; a 403 is this request refused to an agent the relay knows (one not
    // in the call, a leg not its own), said in the relay's words like any other refusal.
    const said: RuleText =
      status === 401
        ? text('relay.tokenRefused')
        : code === 'not_available'
          ? text('relay.notOffered', { what })
          : relayMessage !== undefined
            ? text('relay.refusedSaying', { what, status, reason: relayMessage })
            : text('relay.refused', { what, status });
    this.log.warn('the relay refused a request', { request: what, httpStatus: status, relayCode: envelope.success ? envelope.data.error.code : undefined });
    return errText(code, said, { httpStatus: status, ...(relayMessage !== undefined ? { detail: relayMessage } : {}) });
  }

  /** A 409: a transfer's (see transferRequest), or a call's state that does not allow the request. */
  private conflict<T>(what: string, json: unknown): Result<T> {
    const envelope = relayErrorSchema.safeParse(json);
    const relayCode = envelope.success ? envelope.data.error.code : undefined;
    const relayMessage = envelope.success ? this.http.scrub(envelope.data.error.message) : undefined;
    const detail = relayMessage !== undefined ? { detail: relayMessage } : {};
    this.log.info('the relay refused a request in the state of what it is about', { request: what, relayCode });
    if (relayCode === 'already_claimed' || relayCode === 'answered_elsewhere') return errText('answered_elsewhere', ANSWERED_ELSEWHERE, { httpStatus: 409, ...detail });
    const said = relayMessage !== undefined ? text('relay.refusedSaying', { what, status: 409, reason: relayMessage }) : text('relay.refused', { what, status: 409 });
    return errText('invalid_state', said, { httpStatus: 409, ...detail });
  }

  /** A 404: what was asked about is not there (no such call, not joined, no recording), in the relay's words when it sent some. */
  private notThere<T>(what: string, json: unknown): Result<T> {
    const envelope = relayErrorSchema.safeParse(json);
    const relayMessage = envelope.success ? this.http.scrub(envelope.data.error.message) : undefined;
    const said = relayMessage !== undefined ? text('relay.refusedSaying', { what, status: 404, reason: relayMessage }) : text('relay.refused', { what, status: 404 });
    this.log.info('the relay has nothing of what was asked', { request: what, relayCode: envelope.success ? envelope.data.error.code : undefined });
    return errText('not_found', said, { httpStatus: 404, ...(relayMessage !== undefined ? { detail: relayMessage } : {}) });
  }

  private unexpected<T>(what: string, status: number): Result<T> {
    this.log.warn('the relay answered with an unexpected body', { request: what, httpStatus: status });
    return errText('gateway_unreachable', text('relay.notAnAnswer', { what }), { httpStatus: status });
  }
}

/** Seconds to a tenth: 2000 ms → 2, 1500 ms → 1.5. */
const tenthsOfSeconds = (ms: number): number => Math.round(ms / 100) / 10;

/** The relay client's words for a network failure. */
function describeNetworkFailure(failure: NetworkFailure): TextValue {
  switch (failure.kind) {
    case 'refused':
      return text('relay.connectionRefused');
    case 'host_not_found':
      return text('relay.hostNotFound');
    case 'reset':
      return text('relay.connectionReset');
    case 'connect_timeout':
      return text('relay.connectTimeout');
    case 'bad_certificate':
    case 'other':
      return failure.code ?? failure.message;
  }
}
