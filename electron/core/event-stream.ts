// The agent's end of the relay's event stream (relay/README.md): one long-lived server-sent events
// request, parsed incrementally, validated at the edge, de-duplicated, and resumed from the last
// event id after any failure so that no event is lost (ARCHITECTURE.md: "once per agent, in
// order, also across reconnects").
import { teamInfoSchema, type ConnectionState, type TeamInfo } from '../../shared/api';
import { english, isRuleText, text, type TextValue } from '../../shared/i18n/text';
import { RELAY_PATHS, relayEnvelopeSchema, type RelayEnvelope } from '../../shared/events';
import { createLogger, type Logger } from '../../shared/log';
import { classifyNetworkError, type NetworkFailure } from '../../shared/network-error';
import { TextError } from '../../shared/result';
import { parseWith } from '../../shared/validation';
import { HttpExchange } from './http-exchange';
import { SseParser, type SseMessage } from '../../shared/sse';

export { SseParser, type SseMessage } from '../../shared/sse';

export interface RelayEventStreamOptions {
  /** The relay's base URL, e.g. https://relay.example.com */
  url: string;
  /** The agent token (Authorization: Bearer). Never logged. */
  token: string;
  onEvent: (envelope: RelayEnvelope) => void;
  onState: (state: ConnectionState) => void;
  /** The relay's `team` event: this agent's role and the team's settings, after the relay reloaded them. */
  onTeam?: (info: TeamInfo) => void;
  logger?: Logger;
  /** No bytes (events or heartbeats) for this long means the stream is dead. Default 15000. */
  heartbeatTimeoutMs?: number;
  /** A cursor saved earlier, to resume from on the first connect. */
  lastEventId?: string;
  /** Reconnect backoff bounds. Default 200 ms → 5 s. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Delay before retrying after the relay refused the token. Default 30 s. */
  unauthorizedRetryMs?: number;
  /**
   * Delay before coming back after the relay closed this stream for a newer one of the same agent
   * (`too_many_streams`). Default 60 s: coming back at once would close that newer one in turn.
   */
  displacedRetryMs?: number;
}

export const UNAUTHORIZED_MESSAGE = english(text('stream.unauthorized'));
export const DISPLACED_MESSAGE = english(text('stream.displaced'));

/** How many recent event ids are remembered for de-duplication. */
const SEEN_IDS = 4096;

/** Capped exponential backoff with equal jitter: attempt 0 waits 200–400 ms, later ones up to 5 s. */
export function reconnectDelay(attempt: number, minMs = 200, maxMs = 5_000, random: () => number = Math.random): number {
  const base = Math.min(maxMs, minMs * 2 ** (attempt + 1));
  return Math.max(minMs, Math.round(base / 2 + random() * (base / 2)));
}

/** The longest `Retry-After` honoured: a relay that asks for more is asked again after this. */
const MAX_RETRY_AFTER_MS = 5 * 60_000;

/**
 * How long a failed attempt waits: the usual backoff, a fixed long delay when retrying soon cannot
 * help, or what the relay asked for with its 429's `Retry-After` (relay/REFERENCE.md "Limits").
 */
type RetryAfter = { kind: 'backoff' } | { kind: 'unauthorized' } | { kind: 'displaced' } | { kind: 'relay_asked'; ms: number };
/** A failed attempt's reason: the catalogue's words, or a library's own (a certificate's, an unknown error's). */
type AttemptOutcome = { kind: 'stopped' } | { kind: 'failed'; reason: TextValue; retry: RetryAfter; wasConnected: boolean };

/** A `Retry-After` of whole seconds, in ms and at most MAX_RETRY_AFTER_MS; undefined when absent, zero or not seconds. */
export function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const text = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  if (!/^\d{1,10}$/.test(text)) return undefined;
  const seconds = Number(text);
  return seconds > 0 ? Math.min(seconds * 1_000, MAX_RETRY_AFTER_MS) : undefined;
}

/** The stream of one agent. `start()` once; `stop()` ends it and waits until nothing is left running. */
export class RelayEventStream {
  private readonly logger: Logger;
  private readonly heartbeatTimeoutMs: number;
  private cursor: string | undefined;
  private readonly seen = new Set<string>();
  private readonly seenOrder: string[] = [];
  private state: ConnectionState | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private abortCurrent: (() => void) | undefined;
  private wakeUp: (() => void) | undefined;
  private http: HttpExchange | undefined;
  /** The reason of the relay's `close` event on the current connection (relay/REFERENCE.md "Closing"). */
  private closeReason: string | undefined;

  constructor(private readonly options: RelayEventStreamOptions) {
    this.logger = options.logger ?? createLogger('event-stream');
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 15_000;
    this.cursor = options.lastEventId;
  }

  /** The cursor of the last event received: resume from here. */
  get lastEventId(): string | undefined {
    return this.cursor;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.http = new HttpExchange({
      baseUrl: this.options.url,
      headers: { authorization: `Bearer ${this.options.token}`, accept: 'text/event-stream', 'cache-control': 'no-cache' },
      secret: this.options.token,
      agent: { keepAliveTimeout: 1_000, connect: { timeout: 10_000 } },
    });
    this.running = this.run(this.http);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abortCurrent?.();
    this.wakeUp?.();
    await this.running;
    this.running = undefined;
    const http = this.http;
    this.http = undefined;
    await http?.destroy();
  }

  private async run(http: HttpExchange): Promise<void> {
    this.setState({ status: 'connecting', since: Date.now() });
    let attempt = 0;
    let reconnectingSince: number | undefined;
    while (!this.stopped) {
      const outcome = await this.connectOnce(http, () => {
        attempt = 0;
        reconnectingSince = undefined;
        this.setState({ status: 'connected', since: Date.now() });
      });
      if (outcome.kind === 'stopped' || this.stopped) break;
      reconnectingSince ??= Date.now();
      const lastError = english(outcome.reason);
      this.setState({ status: 'reconnecting', since: reconnectingSince, lastError, ...(isRuleText(outcome.reason) ? { lastErrorText: outcome.reason } : {}) });
      const delay = this.retryDelay(outcome.retry, attempt);
      attempt += 1;
      // A stream that was up and broke is worth a warning; a relay still unreachable is not, every time.
      const fields = { reason: lastError, retryInMs: delay };
      if (outcome.wasConnected) this.logger.warn('event stream interrupted', fields);
      else this.logger.debug('event stream still down', fields);
      await this.sleep(delay);
    }
  }

  private retryDelay(retry: RetryAfter, attempt: number): number {
    switch (retry.kind) {
      case 'unauthorized':
        return this.options.unauthorizedRetryMs ?? 30_000;
      case 'displaced':
        return this.options.displacedRetryMs ?? 60_000;
      case 'relay_asked':
        return retry.ms;
      case 'backoff':
        return reconnectDelay(attempt, this.options.minBackoffMs, this.options.maxBackoffMs);
    }
  }

  private async connectOnce(http: HttpExchange, onConnected: () => void): Promise<AttemptOutcome> {
    const controller = new AbortController();
    this.abortCurrent = () => controller.abort();
    const silence = text('stream.silent', { seconds: Math.round(this.heartbeatTimeoutMs / 100) / 10 });
    let deadReason: TextValue | undefined;
    let watchdog: NodeJS.Timeout | undefined;
    // No bytes for heartbeatTimeoutMs means a dead stream: up to the response's headers the exchange's
    // deadline says so, after them this watchdog, fed by every chunk (heartbeats keep it fed).
    const feedWatchdog = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        deadReason = silence;
        controller.abort();
      }, this.heartbeatTimeoutMs);
    };
    let wasConnected = false;
    const fail = (reason: TextValue, retry: RetryAfter = { kind: 'backoff' }): AttemptOutcome => ({ kind: 'failed', reason, retry, wasConnected });
    this.closeReason = undefined;
    try {
      const outcome = await http.open({
        method: 'GET',
        path: RELAY_PATHS.events,
        headers: this.cursor === undefined ? {} : { 'last-event-id': this.cursor },
        deadlineMs: this.heartbeatTimeoutMs,
        signal: controller.signal,
      });
      switch (outcome.kind) {
        case 'aborted':
          return { kind: 'stopped' };
        case 'timeout':
          return fail(silence);
        case 'network':
          return fail(describeNetworkFailure(outcome.failure));
        case 'response':
          break;
      }
      const response = outcome;
      // From the headers on, the watchdog bounds every read: an error's body that stalls too.
      feedWatchdog();
      if (response.status === 401 || response.status === 403) {
        await response.body.dump().catch(() => undefined);
        return fail(text('stream.unauthorized'), { kind: 'unauthorized' });
      }
      if (response.status === 429) {
        await response.body.dump().catch(() => undefined);
        // The relay limits an address that failed authentication too often: retrying sooner only adds failures.
        const ms = retryAfterMs(response.headers['retry-after']);
        return fail(text('stream.tooManyRequests'), ms === undefined ? { kind: 'backoff' } : { kind: 'relay_asked', ms });
      }
      if (response.status !== 200) {
        await response.body.dump().catch(() => undefined);
        return fail(text('stream.httpStatus', { status: response.status }));
      }
      const type = String(response.headers['content-type'] ?? '');
      if (!type.toLowerCase().startsWith('text/event-stream')) {
        await response.body.dump().catch(() => undefined);
        return fail(text('stream.notEventStream', { type }));
      }
      wasConnected = true;
      feedWatchdog();
      onConnected();
      const parser = new SseParser();
      const decoder = new TextDecoder('utf-8');
      for await (const chunk of response.body) {
        feedWatchdog();
        for (const message of parser.push(decoder.decode(chunk as Buffer, { stream: true }))) this.handle(message);
      }
      // A stream closed for a newer one of this agent stays closed for a while: coming back at once
      // would close the newest in turn, and so on between every holder of the token.
      if (this.closeReason === 'too_many_streams') return fail(text('stream.displaced'), { kind: 'displaced' });
      return fail(text('stream.closed'));
    } catch (e) {
      if (this.stopped) return { kind: 'stopped' };
      return fail(deadReason ?? (e instanceof TextError ? e.text : describeNetworkFailure(classifyNetworkError(e))));
    } finally {
      clearTimeout(watchdog);
      this.abortCurrent = undefined;
    }
  }

  private handleTeam(data: string): void {
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      json = undefined;
    }
    const parsed = teamInfoSchema.safeParse(json);
    if (!parsed.success) {
      this.logger.warn('skipped a team event the app cannot read', { field: parsed.error.issues[0]?.path.join('.') });
      return;
    }
    this.options.onTeam?.(parsed.data);
  }

  private handle(message: SseMessage): void {
    // The cursor advances past every event, valid or not: a bad event would be just as bad again.
    if (message.id !== undefined && message.id !== '') this.cursor = message.id;
    if (message.event === 'close') {
      this.closeReason = closeReasonOf(message.data);
      this.logger.info('the relay is closing the event stream', { reason: this.closeReason });
      return;
    }
    if (message.event === 'team') {
      this.handleTeam(message.data);
      return;
    }
    if (message.event !== 'message') return;
    let json: unknown;
    try {
      json = JSON.parse(message.data);
    } catch {
      this.logger.warn('skipped an event that is not JSON', { id: message.id });
      return;
    }
    const parsed = parseWith(relayEnvelopeSchema, json);
    if (!parsed.ok) {
      this.logger.warn('skipped an invalid event', { id: message.id, field: parsed.error.field, reason: parsed.error.message });
      return;
    }
    const envelope = parsed.value;
    if (message.id === undefined) this.cursor = envelope.id;
    if (this.seen.has(envelope.id)) {
      this.logger.debug('skipped a duplicate event', { id: envelope.id });
      return;
    }
    this.seen.add(envelope.id);
    this.seenOrder.push(envelope.id);
    if (this.seenOrder.length > SEEN_IDS) this.seen.delete(this.seenOrder.shift()!);
    try {
      this.options.onEvent(envelope);
    } catch (e) {
      this.logger.error('an event handler failed', { id: envelope.id, type: envelope.event.type, error: e });
    }
  }

  private setState(next: ConnectionState): void {
    const prev = this.state;
    const same = prev !== undefined && prev.status === next.status && (prev.status !== 'reconnecting' || next.status !== 'reconnecting' || prev.lastError === next.lastError);
    if (same) return;
    this.state = next;
    try {
      this.options.onState(next);
    } catch (e) {
      this.logger.error('a state handler failed', { error: e });
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }
}

/** The `reason` of a `close` event's JSON data; undefined when it has none. */
function closeReasonOf(data: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(data);
    if (typeof parsed === 'object' && parsed !== null && 'reason' in parsed && typeof parsed.reason === 'string') return parsed.reason;
  } catch {
    // Not JSON: a reason this client does not know.
  }
  return undefined;
}

/** The event stream's words for a network failure (the connection state shows them). */
function describeNetworkFailure(failure: NetworkFailure): TextValue {
  switch (failure.kind) {
    case 'refused':
      return text('stream.connectionRefused');
    case 'host_not_found':
      return text('stream.hostNotFound');
    case 'reset':
      return text('stream.connectionReset');
    case 'connect_timeout':
      return text('stream.connectTimeout');
    case 'bad_certificate':
    case 'other':
      return failure.message;
  }
}
