// One JSON request over undici with a deadline, and what came of it as a value, never a throw: the
// transport of the relay's client of a node's control API and of a node's client of the relay.
// The bearer token travels in the Authorization header only, and is taken out of every failure's
// words before they go anywhere.
import { Agent, request, type Dispatcher } from 'undici';
import { classifyNetworkError, type NetworkFailure } from '../shared/network-error';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export type HttpOutcome =
  | { kind: 'response'; status: number; body: string }
  /** No whole answer within the deadline. */
  | { kind: 'timeout' }
  /** Never reached, refused, reset…: the failure's words have the token taken out. */
  | { kind: 'network'; failure: NetworkFailure };

export interface HttpExchangeOptions {
  /** The server's base URL; each request's path follows it. */
  baseUrl: string;
  /** `Authorization: Bearer <token>` on every request. */
  token: string;
  /** The connection pool: keep-alive, connections, connect timeout. */
  agent?: Agent.Options;
}

export class HttpExchange {
  private readonly base: string;
  private readonly token: string;
  private readonly agent: Agent;

  constructor(options: HttpExchangeOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.token = options.token;
    this.agent = new Agent({ keepAliveTimeout: 4_000, connect: { timeout: 5_000 }, ...options.agent });
  }

  /** Where requests go (no token in it). */
  get baseUrl(): string {
    return this.base;
  }

  /**
   * One request; its body read as text up to `bodyLimit` bytes, all within `deadlineMs`. It sends
   * `json`, or `bytes` of `contentType` with `headers` of their own.
   */
  async exchange(req: { method: HttpMethod; path: string; json?: unknown; bytes?: { body: Uint8Array; contentType: string; headers?: Record<string, string> }; deadlineMs: number; bodyLimit: number }): Promise<HttpOutcome> {
    const deadline = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      deadline.abort();
    }, req.deadlineMs);
    try {
      const headers: Record<string, string> = { ...req.bytes?.headers, authorization: `Bearer ${this.token}`, accept: 'application/json' };
      let body: string | Uint8Array | undefined;
      if (req.bytes !== undefined) {
        headers['content-type'] = req.bytes.contentType;
        body = req.bytes.body;
      } else if (req.json !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(req.json);
      }
      const res = await request(`${this.base}${req.path}`, {
        method: req.method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal: deadline.signal,
        dispatcher: this.agent,
      });
      return { kind: 'response', status: res.statusCode, body: await readLimited(res.body, req.bodyLimit) };
    } catch (e) {
      if (timedOut) return { kind: 'timeout' };
      const failure = classifyNetworkError(e);
      return { kind: 'network', failure: { ...failure, message: this.scrub(failure.message) } };
    } finally {
      clearTimeout(timer);
    }
  }

  /** A misbehaving server could echo the request's headers back: the token must not travel on. */
  scrub(text: string): string {
    return this.token.length > 0 ? text.split(this.token).join('[redacted]') : text;
  }

  /** Waits for the requests under way, then closes the connections. */
  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}

/** Reads at most `limit` bytes of a body as text. */
export async function readLimited(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
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

/** The JSON of a body, undefined when it is not JSON. */
export function jsonOfText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A network failure in a few words for a log line or an error message. */
export function describeFailure(failure: NetworkFailure): string {
  switch (failure.kind) {
    case 'refused':
      return 'connection refused';
    case 'host_not_found':
      return 'host not found';
    case 'reset':
      return 'connection reset';
    case 'connect_timeout':
      return 'connection timed out';
    case 'bad_certificate':
      return `bad certificate (${failure.code})`;
    case 'other':
      return failure.code ?? failure.message;
  }
}
