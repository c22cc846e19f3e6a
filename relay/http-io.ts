// Request bodies and JSON answers of the relay's HTTP endpoints. Every error answer has one shape:
// `{ "error": { "code", "message", … } }` (relay/REFERENCE.md "Errors").
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';

// One reading of bodies and one JSON answer for the relay and the bridge nodes' control API (the
// relay may import bridge/, which it runs with --bridge; the bridge may not import the relay).
export { readBody, sendJson, type BodyResult } from '../bridge/http-io';
import { readBody, sendJson } from '../bridge/http-io';

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
  | 'call_ended'
  | 'too_late'
  | 'taken'
  | 'range_not_satisfiable'
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
