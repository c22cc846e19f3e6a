// A real HTTP server on 127.0.0.1 that serves media files the ways real servers do (style.md 10):
// with or without Range support, with or without a Content-Length, in shorter ranges than asked,
// behind redirects, slowly, never, or endlessly. Every request is recorded (with its query), so a
// test sees which ranges were asked for.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  path: string;
  /** The query string with its "?", or "". */
  query: string;
  range?: string;
}

export type Route = (req: IncomingMessage, res: ServerResponse) => void;

export interface MediaFileServer {
  url: string;
  seen: SeenRequest[];
  /** Routes by path (query aside); a path without a route is a 404. */
  routes: Map<string, Route>;
  /** Requests for `path` since `from` (an index into seen). */
  requestsFor(path: string, from?: number): SeenRequest[];
  close(): Promise<void>;
}

export interface FileOptions {
  /** Answer `Range: bytes=a-b` with 206 and a Content-Range (default true); false answers 200 with the whole file. */
  ranges?: boolean;
  /** Send a Content-Length (default true); false streams the body chunked, its size unsaid. */
  length?: boolean;
  /** Content-Type header; undefined sends none. */
  contentType?: string | undefined;
  /** Refuse HEAD with this status (signed links are often signed for GET only). */
  refuseHead?: number;
  /** Send at most this many bytes of any range asked for (a 206 for its start only). */
  maxRangeBytes?: number;
}

/** `Range: bytes=a-b` (or `a-`) of a file of `size` bytes; undefined without one, 'past' when a ≥ size. */
function rangeOf(req: IncomingMessage, size: number): { start: number; end: number } | 'past' | undefined {
  const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
  if (!range) return undefined;
  const start = Number(range[1]);
  if (start >= size) return 'past';
  return { start, end: Math.min(range[2] === '' ? size - 1 : Number(range[2]), size - 1) };
}

/** A file as a server with `options` serves it. */
export function file(bytes: Uint8Array, options: FileOptions = {}): Route {
  const ranges = options.ranges ?? true;
  return (req, res) => {
    if (req.method === 'HEAD' && options.refuseHead !== undefined) {
      res.writeHead(options.refuseHead).end();
      return;
    }
    const headers: Record<string, string> = {};
    if (options.contentType !== undefined) headers['Content-Type'] = options.contentType;
    const range = ranges ? rangeOf(req, bytes.length) : undefined;
    if (range === 'past') {
      res.writeHead(416, { ...headers, 'Content-Range': `bytes */${bytes.length}` }).end();
      return;
    }
    if (range) {
      const { start } = range;
      // Some servers send at most so much of a range (RFC 9110 14.4 allows it).
      const end = options.maxRangeBytes === undefined ? range.end : Math.min(range.end, start + options.maxRangeBytes - 1);
      const part = bytes.subarray(start, end + 1);
      res.writeHead(206, { ...headers, 'Content-Range': `bytes ${start}-${end}/${bytes.length}`, 'Content-Length': String(part.length) });
      res.end(req.method === 'HEAD' ? undefined : part);
      return;
    }
    if (options.length ?? true) headers['Content-Length'] = String(bytes.length);
    res.writeHead(200, headers);
    if (req.method === 'HEAD') res.end();
    else if (options.length ?? true) res.end(bytes);
    else {
      // Two writes make the body chunked, its size unsaid.
      const half = Math.floor(bytes.length / 2);
      res.write(bytes.subarray(0, half));
      res.end(bytes.subarray(half));
    }
  };
}

export const redirect =
  (to: string, status = 302): Route =>
  (_req, res) => {
    res.writeHead(status, { Location: to }).end();
  };

export const statusOnly =
  (status: number, headers: Record<string, string> = {}): Route =>
  (_req, res) => {
    res.writeHead(status, headers).end();
  };

/**
 * Headers, then `first` bytes of zeros, then a body that never ends (nothing more is sent, the
 * response stays open): whoever waits for the end of it waits forever.
 */
export function neverEnding(headers: Record<string, string>, status = 200, first = 1024): Route {
  return (_req, res) => {
    res.writeHead(status, headers);
    res.write(new Uint8Array(first));
  };
}

/** Zeros, streamed chunked as fast as they are read, for as long as the reader keeps reading. */
export function endlessStream(contentType: string): Route {
  return (_req, res) => {
    res.writeHead(200, { 'Content-Type': contentType });
    const chunk = new Uint8Array(64 * 1024);
    const pump = () => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once('drain', pump);
    };
    res.on('close', () => res.removeAllListeners('drain'));
    pump();
  };
}

/** Headers and some bytes, then the connection is cut. */
export function cutOff(headers: Record<string, string>, sent: number): Route {
  return (_req, res) => {
    res.writeHead(200, headers);
    res.write(new Uint8Array(sent), () => res.socket?.destroy());
  };
}

/** Never answers (the test's close destroys the socket). */
export const silent: Route = () => undefined;

export interface DribbleOptions {
  contentType: string;
  /** Bytes per write. */
  chunkBytes: number;
  /** The pause before each write. */
  everyMs: number;
  /** Stop sending (the response stays open) once this many bytes of the answer went out. */
  stallAfter?: number;
  /** Honour Range (default true); false sends the whole file with 200. */
  ranges?: boolean;
  /** Say the size in a Content-Length (default true); false leaves it unsaid (chunked). */
  length?: boolean;
}

/**
 * A file sent slowly but steadily, `chunkBytes` every `everyMs`: a large file on a slow link. With
 * `stallAfter`, a server that stops sending in the middle and never ends the answer.
 */
export function dribble(bytes: Uint8Array, options: DribbleOptions): Route {
  return (req, res) => {
    const range = (options.ranges ?? true) ? rangeOf(req, bytes.length) : undefined;
    if (range === 'past') {
      res.writeHead(416, { 'Content-Type': options.contentType, 'Content-Range': `bytes */${bytes.length}` }).end();
      return;
    }
    const part = range ? bytes.subarray(range.start, range.end + 1) : bytes;
    const headers: Record<string, string> = { 'Content-Type': options.contentType };
    if (options.length ?? true) headers['Content-Length'] = String(part.length);
    if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end}/${bytes.length}`;
    res.writeHead(range ? 206 : 200, headers);
    let sent = 0;
    const timer = setInterval(() => {
      if (res.destroyed) return clearInterval(timer);
      if (options.stallAfter !== undefined && sent >= options.stallAfter) return clearInterval(timer);
      const next = part.subarray(sent, sent + options.chunkBytes);
      sent += next.length;
      if (sent >= part.length) {
        clearInterval(timer);
        res.end(next);
      } else res.write(next);
    }, options.everyMs);
    res.on('close', () => clearInterval(timer));
  };
}

export async function startMediaFileServer(routes: Record<string, Route> = {}): Promise<MediaFileServer> {
  const seen: SeenRequest[] = [];
  const table = new Map(Object.entries(routes));
  const server: Server = createServer((req, res) => {
    const { pathname: path, search: query } = new URL(req.url ?? '/', 'http://x');
    seen.push({ method: req.method ?? '', path, query, ...(typeof req.headers.range === 'string' ? { range: req.headers.range } : {}) });
    const route = table.get(path);
    if (route) route(req, res);
    else res.writeHead(404, { 'Content-Type': 'text/html' }).end('<h1>Not found</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    routes: table,
    requestsFor: (path, from = 0) => seen.slice(from).filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
