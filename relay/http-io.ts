// Request bodies and JSON answers of the relay's HTTP endpoints. Every error answer has one shape:
// `{ "error": { "code", "message", … } }` (relay/REFERENCE.md "Errors").
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';

export type BodyResult = { kind: 'ok'; raw: Buffer } | { kind: 'too_large'; drained: boolean } | { kind: 'aborted' };

/**
 * Reads the raw body up to `limit` bytes. An oversized body is drained (up to a hard cap) before
 * the 413 goes out, so that the sender reads the answer instead of a reset connection; beyond
 * the cap the answer goes out at once and the connection is closed.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    const drainCap = limit * 4;
    if (Number.isFinite(declared) && declared > drainCap) {
      req.pause();
      resolve({ kind: 'too_large', drained: false });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = Number.isFinite(declared) && declared > limit;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > drainCap) {
        req.off('data', onData);
        req.pause();
        resolve({ kind: 'too_large', drained: false });
        return;
      }
      if (size > limit) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(tooLarge ? { kind: 'too_large', drained: true } : { kind: 'ok', raw: Buffer.concat(chunks, size) }));
    req.on('error', () => resolve({ kind: 'aborted' }));
    req.on('close', () => {
      if (!req.complete) resolve({ kind: 'aborted' });
    });
  });
}

/**
 * The body of a request up to `limit` bytes; undefined once answered 413 (`message`, naming the
 * limit) or when the client went away. An oversized body that was not drained closes the connection.
 */
export async function boundedBody(req: IncomingMessage, res: ServerResponse, limit: number, message: string): Promise<Buffer | undefined> {
  const body = await readBody(req, limit);
  if (body.kind === 'aborted') return undefined;
  if (body.kind === 'too_large') {
    if (!body.drained) {
      res.setHeader('Connection', 'close');
      res.on('finish', () => req.destroy());
    }
    sendError(res, 413, 'payload_too_large', message, { limitBytes: limit });
    return undefined;
  }
  return body.raw;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  res.end(text);
}

export type RelayErrorCode =
  | 'unauthorized'
  | 'invalid_signature'
  | 'invalid_input'
  | 'payload_too_large'
  | 'already_claimed'
  | 'verification_failed'
  | 'not_found'
  | 'unknown_node'
  | 'not_configured'
  | 'method_not_allowed'
  | 'draining'
  | 'rate_limited'
  | 'unavailable'
  | 'forbidden'
  | 'invalid_state'
  | 'bridge_failed'
  | 'internal';

export function sendError(res: ServerResponse, status: number, code: RelayErrorCode, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { code, message, ...extra } }, headers);
}

export function methodNotAllowed(res: ServerResponse, allow: string): void {
  sendError(res, 405, 'method_not_allowed', `use ${allow}`, {}, { Allow: allow });
}

/**
 * The address a request comes from: the socket's peer, or, with `trustProxy` (one reverse proxy in
 * front that appends the address it saw), the last `X-Forwarded-For` entry. Earlier entries are
 * whatever the client wrote, so they are never used.
 */
export function clientAddressOf(req: IncomingMessage, trustProxy: boolean): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  if (!trustProxy) return peer;
  const header = req.headers['x-forwarded-for'];
  const value = Array.isArray(header) ? header.at(-1) : header;
  const last = value?.split(',').at(-1)?.trim();
  return last !== undefined && isIP(last) !== 0 ? last : peer;
}
