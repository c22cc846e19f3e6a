// A deliberately plain SSE reader for testing the relay on its own (the product's client is
// electron/core/event-stream.ts, tested separately against this relay).
import { request, type IncomingMessage } from 'node:http';
import type { RelayEnvelope } from '../../../shared/events';

export interface SseOpenOptions {
  token?: string;
  authorization?: string;
  lastEventId?: string;
  query?: string;
  /** The local address the connection comes from (any of 127/8 on Linux), as the relay sees it. */
  localAddress?: string;
  /** More request headers. */
  headers?: Record<string, string>;
}

export interface TestSseStream {
  status: number;
  /** Body of a non-200 answer. */
  body: string;
  envelopes: RelayEnvelope[];
  /** SSE `id:` of each event, in order. */
  ids: string[];
  /** When each envelope was read (Date.now()), in order. */
  arrivals: number[];
  comments: string[];
  /** Events with an `event:` field (the relay's `close`, `team`), with their data as sent, and their `id:` if one came. */
  named: { event: string; data: string; id?: string }[];
  ended: boolean;
  /** Resolves once `predicate` holds (checked after every chunk); rejects when the stream ends first. */
  waitFor(predicate: (s: TestSseStream) => boolean, what: string): Promise<void>;
  close(): void;
  response: IncomingMessage;
}

export function openSse(baseUrl: string, options: SseOpenOptions = {}): Promise<TestSseStream> {
  const url = new URL(`/events${options.query ?? ''}`, baseUrl);
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  const auth = options.authorization ?? (options.token !== undefined ? `Bearer ${options.token}` : undefined);
  if (auth) headers.authorization = auth;
  if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers, ...(options.localAddress !== undefined ? { localAddress: options.localAddress } : {}) }, (res) => {
      const waiters = new Set<() => void>();
      let buffer = '';
      const stream: TestSseStream = {
        status: res.statusCode ?? 0,
        body: '',
        envelopes: [],
        ids: [],
        arrivals: [],
        comments: [],
        named: [],
        ended: false,
        response: res,
        waitFor(predicate, what) {
          return new Promise<void>((ok, fail) => {
            const check = () => {
              if (predicate(stream)) {
                waiters.delete(check);
                ok();
              } else if (stream.ended) {
                waiters.delete(check);
                fail(new Error(`the stream ended before: ${what} (got ${stream.envelopes.length} events)`));
              }
            };
            waiters.add(check);
            check();
          });
        },
        close() {
          req.destroy();
        },
      };
      const notify = () => {
        for (const w of [...waiters]) w();
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (stream.status !== 200) {
          stream.body += chunk;
          return;
        }
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: string | undefined;
          let data: string | undefined;
          let event: string | undefined;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) stream.comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('data: ')) data = line.slice(6);
            else if (line.startsWith('event: ')) event = line.slice(7);
          }
          if (event !== undefined) {
            stream.named.push({ event, data: data ?? '', ...(id !== undefined ? { id } : {}) });
          } else if (data !== undefined) {
            stream.envelopes.push(JSON.parse(data) as RelayEnvelope);
            stream.ids.push(id ?? '');
            stream.arrivals.push(Date.now());
          }
        }
        notify();
      });
      const end = () => {
        stream.ended = true;
        notify();
      };
      res.on('end', end);
      res.on('close', end);
      res.on('error', end);
      if (stream.status === 200) resolve(stream);
      else res.on('end', () => resolve(stream));
    });
    req.on('error', reject);
    req.end();
  });
}
