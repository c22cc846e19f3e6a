// One HTTP exchange for the main process's clients (the gateway, the relay's agent requests and its
// event stream, the sandbox's control API): a request on undici with a deadline and an outside
// abort signal, the body read up to a limit, and what came of it as a value, never a throw. The
// deadline, the abort, the retries a client asks for and the scrubbing of its secret live here.
import { Agent, request, type Dispatcher } from 'undici';
import { classifyNetworkError, type NetworkFailure } from '../../shared/network-error';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface HttpRequest {
  method: HttpMethod;
  /** Follows the base URL: "/me", "/chatapp/calls/accept". */
  path: string;
  /** On top of the exchange's own headers. */
  headers?: Readonly<Record<string, string>>;
  /** Sent as JSON, with its content type. */
  json?: unknown;
  /** From sending to the whole body read (`exchange`), or to the response's headers (`open`). */
  deadlineMs: number;
  /** Ends the exchange from outside (a stop): the outcome is `aborted`. */
  signal?: AbortSignal;
}

export interface ExchangeRequest extends HttpRequest {
  /** Bodies past this many bytes are not read further: no answer the client expects is near it. */
  bodyLimit: number;
  /** Absent: one try. */
  retry?: RetryRule;
}

/** Another try after a pause that doubles each time, while `when` says the outcome is worth it. */
export interface RetryRule {
  /** How many more tries at most. */
  times: number;
  firstPauseMs: number;
  when(outcome: UnabortedOutcome<string>): boolean;
  /** Told before each pause, to log it. */
  onRetry?(outcome: UnabortedOutcome<string>, attempt: number, pauseMs: number): void;
}

export interface HttpResponse<Body> {
  kind: 'response';
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  body: Body;
}

export type HttpOutcome<Body = string> =
  | HttpResponse<Body>
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  /** Never reached, refused, reset…: the failure's words have the secret taken out. */
  | { kind: 'network'; failure: NetworkFailure };

/** What an exchange comes to when nothing outside can abort it. */
export type UnabortedOutcome<Body = string> = Exclude<HttpOutcome<Body>, { kind: 'aborted' }>;

/** A streamed body, read by the caller (`open`). */
export type StreamedBody = Dispatcher.ResponseData['body'];

/** A file at a link the server handed out (a media file's short-lived URL), read whole into memory. */
export interface DownloadRequest {
  /** An absolute http(s) URL, not a path under the base. */
  url: string;
  /**
   * Whether the exchange's own headers (its credentials) go along. The caller decides by the link's
   * origin: a secret must not travel to a host it was not made for.
   */
  credentials: boolean;
  /** On top of the exchange's own headers, or alone without credentials. */
  headers?: Readonly<Record<string, string>>;
  /** From sending to the last byte. */
  deadlineMs: number;
  /** A 2xx body longer than this (by its Content-Length, or as it arrives) is not read: `too_large`. */
  maxBytes: number;
  signal?: AbortSignal;
}

export type DownloadOutcome =
  | HttpOutcome<Buffer>
  /** The file is longer than the request's `maxBytes`; `bytes` is its Content-Length, or what had arrived when it passed the limit. */
  | { kind: 'too_large'; status: number; bytes: number };

/** A body that is not the file (an error's) is read this far: enough for any error envelope. */
const DOWNLOAD_ERROR_BODY_LIMIT = 64 * 1024;

export interface HttpExchangeOptions {
  /** The server's base URL; each request's path follows it. */
  baseUrl: string;
  /** Headers every request carries: the credentials, what is accepted. */
  headers?: Readonly<Record<string, string>>;
  /** The client's secret (API key, agent token): taken out of every failure's words and by `scrub`. */
  secret?: string;
  /** The connection pool: keep-alive, connections, connect timeout. */
  agent?: Agent.Options;
}

export class HttpExchange {
  private readonly base: string;
  private readonly headers: Readonly<Record<string, string>>;
  private readonly secret: string;
  private readonly agent: Agent;

  constructor(options: HttpExchangeOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.headers = options.headers ?? {};
    this.secret = options.secret ?? '';
    this.agent = new Agent(options.agent);
  }

  /** One request, its body read as text up to the limit, tried again as `retry` says. */
  exchange(request: ExchangeRequest & { signal: AbortSignal }): Promise<HttpOutcome>;
  exchange(request: ExchangeRequest & { signal?: undefined }): Promise<UnabortedOutcome>;
  async exchange(request: ExchangeRequest): Promise<HttpOutcome> {
    const read = (res: Dispatcher.ResponseData) => readLimited(res.body, request.bodyLimit);
    let outcome = await this.attempt(request, read);
    const { retry } = request;
    for (let attempt = 1; retry !== undefined && attempt <= retry.times && outcome.kind !== 'aborted' && retry.when(outcome); attempt++) {
      const pauseMs = retry.firstPauseMs * 2 ** (attempt - 1);
      retry.onRetry?.(outcome, attempt, pauseMs);
      if (!(await pause(pauseMs, request.signal))) return { kind: 'aborted' };
      outcome = await this.attempt(request, read);
    }
    return outcome;
  }

  /**
   * A request whose body the caller streams (the relay's event stream): the deadline runs to the
   * response's headers, the outside signal for as long as the body is read. undici's own header and
   * body timeouts are off: a quiet, healthy stream must not trip them, the caller times its body.
   */
  async open(request: HttpRequest): Promise<HttpOutcome<StreamedBody>> {
    return this.attempt(request, async (res) => res.body, { headersTimeout: 0, bodyTimeout: 0 });
  }

  /** A file at an absolute URL, its body read whole up to `maxBytes`; never retried. */
  async download(request: DownloadRequest): Promise<DownloadOutcome> {
    const headers = request.credentials ? { ...this.headers, ...request.headers } : { ...request.headers };
    let tooLarge: number | undefined;
    const read = async (res: Dispatcher.ResponseData): Promise<Buffer> => {
      if (res.statusCode < 200 || res.statusCode >= 300) return Buffer.from(await readLimited(res.body, DOWNLOAD_ERROR_BODY_LIMIT), 'utf8');
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > request.maxBytes) {
        res.body.destroy();
        tooLarge = declared;
        return Buffer.alloc(0);
      }
      const whole = await readUpTo(res.body, request.maxBytes);
      if (whole.kind === 'too_large') tooLarge = whole.bytes;
      return whole.kind === 'bytes' ? whole.body : Buffer.alloc(0);
    };
    const outcome = await this.attemptAt(request.url, headers, { method: 'GET', deadlineMs: request.deadlineMs, signal: request.signal }, read);
    if (outcome.kind === 'response' && tooLarge !== undefined) return { kind: 'too_large', status: outcome.status, bytes: tooLarge };
    return outcome;
  }

  /** A misbehaving server could echo the request's headers back: the secret must not travel on. */
  scrub(text: string): string {
    return this.secret.length > 0 ? text.split(this.secret).join('[redacted]') : text;
  }

  /** Waits for the requests under way, then closes the connections. */
  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }

  /** Ends the requests under way and the connections now. */
  async destroy(): Promise<void> {
    await this.agent.destroy().catch(() => undefined);
  }

  private attempt<Body>(
    req: HttpRequest,
    read: (res: Dispatcher.ResponseData) => Promise<Body>,
    timeouts: { headersTimeout?: number; bodyTimeout?: number } = {},
  ): Promise<HttpOutcome<Body>> {
    const headers: Record<string, string> = { ...this.headers, ...req.headers };
    if (req.json !== undefined) headers['content-type'] = 'application/json';
    return this.attemptAt(`${this.base}${req.path}`, headers, req, read, timeouts);
  }

  private async attemptAt<Body>(
    url: string,
    headers: Readonly<Record<string, string>>,
    req: Pick<HttpRequest, 'method' | 'json' | 'deadlineMs' | 'signal'>,
    read: (res: Dispatcher.ResponseData) => Promise<Body>,
    timeouts: { headersTimeout?: number; bodyTimeout?: number } = {},
  ): Promise<HttpOutcome<Body>> {
    const deadline = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      deadline.abort();
    }, req.deadlineMs);
    try {
      const res = await request(url, {
        method: req.method,
        headers,
        ...(req.json === undefined ? {} : { body: JSON.stringify(req.json) }),
        signal: req.signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, req.signal]),
        dispatcher: this.agent,
        ...timeouts,
      });
      return { kind: 'response', status: res.statusCode, headers: res.headers, body: await read(res) };
    } catch (e) {
      if (timedOut) return { kind: 'timeout' };
      if (req.signal?.aborted === true) return { kind: 'aborted' };
      const failure = classifyNetworkError(e);
      return { kind: 'network', failure: { ...failure, message: this.scrub(failure.message) } };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Reads at most `limit` bytes of a body as text. */
async function readLimited(body: StreamedBody, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const bytes = Buffer.from(chunk as Uint8Array);
    chunks.push(bytes);
    size += bytes.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads a whole body as bytes, unless it passes `limit`: then it stops and says how far it got. */
async function readUpTo(body: StreamedBody, limit: number): Promise<{ kind: 'bytes'; body: Buffer } | { kind: 'too_large'; bytes: number }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const bytes = Buffer.from(chunk as Uint8Array);
    size += bytes.length;
    if (size > limit) {
      body.destroy();
      return { kind: 'too_large', bytes: size };
    }
    chunks.push(bytes);
  }
  return { kind: 'bytes', body: Buffer.concat(chunks, size) };
}

/** Waits `ms`; false when the signal ends the wait first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted === true) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (waited: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      resolve(waited);
    };
    const aborted = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
