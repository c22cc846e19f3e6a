// The benchmark's webhook sender: HTTP/1.1 POSTs, made whole before the clock starts, written on a
// fixed set of keep-alive sockets, one request per socket at a time (as the service sends: no
// pipelining). It does the least a correct client must: one write per request, and per answer the
// status line and Content-Length. undici does much more per request, and on a machine whose cores
// the sender shares with the relay, that work would be taken from the relay being measured.
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/** A request ready to go on the wire, and what to do once it was written and once it was answered. */
export interface PreparedRequest {
  bytes: Buffer;
  /** The moment its first byte was handed to the socket (performance.now()). */
  written?: (at: number) => void;
  /** The answer's status, or undefined when the connection failed before an answer came. */
  done: (status: number | undefined) => void;
}

/** A POST with its headers, in one buffer: what `PreparedRequest.bytes` carries. */
export function postBytes(host: string, port: number, path: string, headers: Record<string, string>, body: string): Buffer {
  const payload = Buffer.from(body, 'utf8');
  let head = `POST ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: keep-alive\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  head += `Content-Length: ${payload.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), payload]);
}

const HEADER_END = Buffer.from('\r\n\r\n', 'latin1');
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)[ \t]*(?=\r\n|$)/i;
const RECONNECT_DELAY_MS = 100;
const CLOSES = /\r\nconnection:[ \t]*close[ \t]*(?=\r\n|$)/i;

/** One keep-alive connection: at most one request on it at a time. */
class Connection {
  private buffered: Buffer = Buffer.alloc(0);
  current: PreparedRequest | undefined;
  ready = false;
  /** Set when the connection can take no more requests: the sender opens another in its place. */
  ended = false;

  constructor(
    readonly socket: Socket,
    private readonly onIdle: (connection: Connection) => void,
    private readonly onEnd: (connection: Connection, wasReady: boolean) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('connect', () => {
      this.ready = true;
      this.onIdle(this);
    });
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => this.end());
  }

  send(request: PreparedRequest): void {
    this.current = request;
    request.written?.(performance.now());
    this.socket.write(request.bytes);
  }

  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const headerEnd = this.buffered.indexOf(HEADER_END);
    if (headerEnd < 0) return;
    const head = this.buffered.toString('latin1', 0, headerEnd);
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1];
    const length = CONTENT_LENGTH.exec(head)?.[1];
    const request = this.current;
    // The relay answers every request with a Content-Length; anything else is not an answer this
    // sender can frame, and an answer to nothing asked breaks the one request at a time.
    if (status === undefined || length === undefined || request === undefined) {
      this.socket.destroy();
      return;
    }
    const end = headerEnd + HEADER_END.length + Number(length);
    if (this.buffered.length < end) return;
    // One request at a time: anything after its answer was not asked for.
    const spokeOutOfTurn = this.buffered.length > end;
    this.buffered = Buffer.alloc(0);
    this.current = undefined;
    request.done(Number(status));
    if (spokeOutOfTurn || CLOSES.test(head)) {
      this.socket.destroy();
      this.end();
      return;
    }
    this.onIdle(this);
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    const wasReady = this.ready;
    this.ready = false;
    const request = this.current;
    this.current = undefined;
    request?.done(undefined);
    this.onEnd(this, wasReady);
  }
}

/**
 * Requests wait in a queue until one of `connections` sockets is free. A socket that closes is
 * replaced, and the request it carried counts as failed (`done(undefined)`), not retried.
 */
export class WebhookSender {
  private readonly idle: Connection[] = [];
  private readonly queue: PreparedRequest[] = [];
  private readonly all = new Set<Connection>();
  private closed = false;
  private readonly connections: number;
  private whenAllIdle: (() => void) | undefined;

  constructor(
    private readonly host: string,
    private readonly port: number,
    connections: number,
  ) {
    this.connections = connections;
    for (let i = 0; i < connections; i++) this.open();
  }

  /** Resolves once every connection is open and idle (the moment to start a clock); rejects after `timeoutMs`. */
  connected(timeoutMs = 10_000): Promise<void> {
    if (this.idle.length === this.all.size) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.whenAllIdle = undefined;
        reject(new Error(`the sender's ${this.connections} connections to ${this.host}:${this.port} did not all open within ${timeoutMs} ms`));
      }, timeoutMs);
      this.whenAllIdle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Requests waiting for a free connection. */
  get waiting(): number {
    return this.queue.length;
  }

  send(request: PreparedRequest): void {
    // The connection idle the longest: none is left unused long enough for the relay to close it.
    const connection = this.idle.shift();
    if (connection !== undefined) connection.send(request);
    else this.queue.push(request);
  }

  close(): void {
    this.closed = true;
    for (const connection of this.all) connection.socket.destroy();
    for (const request of this.queue.splice(0)) request.done(undefined);
  }

  private open(): void {
    const connection = new Connection(
      // An IPv6 address comes as a URL writes it ([::1]); the socket wants it bare.
      connect({ host: this.host.replace(/^\[(.*)\]$/, '$1'), port: this.port }),
      (c) => this.becameIdle(c),
      (c, wasReady) => this.ended(c, wasReady),
    );
    this.all.add(connection);
  }

  private becameIdle(connection: Connection): void {
    const next = this.queue.shift();
    if (next !== undefined) connection.send(next);
    else this.idle.push(connection);
    if (this.whenAllIdle !== undefined && this.idle.length === this.all.size) {
      this.whenAllIdle();
      this.whenAllIdle = undefined;
    }
  }

  private ended(connection: Connection, wasReady: boolean): void {
    this.all.delete(connection);
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    if (this.closed) return;
    // A connection refused outright is tried again a little later, not in a tight loop.
    if (wasReady) this.open();
    else setTimeout(() => this.closed || this.open(), RECONNECT_DELAY_MS).unref();
  }
}
