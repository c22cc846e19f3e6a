// Request bodies and JSON answers of the node's control API and of the relay (relay/http-io.ts uses these):
// every error answer is `{ "error": { "code", "message", … } }`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorCode } from '../shared/result';

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
    let givenUp = false;
    // Listeners written inline: a named one would be made again, and named, for every request.
    req.on('data', (chunk: Buffer) => {
      if (givenUp) return;
      size += chunk.length;
      if (size > drainCap) {
        givenUp = true;
        req.pause();
        resolve({ kind: 'too_large', drained: false });
        return;
      }
      if (size > limit) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? { kind: 'too_large', drained: true } : { kind: 'ok', raw: Buffer.concat(chunks, size) }));
    req.on('error', () => resolve({ kind: 'aborted' }));
    req.on('close', () => {
      if (!req.complete) resolve({ kind: 'aborted' });
    });
  });
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

/** The code of the Result the control answered with, or the API's own: a body too large, a method it does not take. */
export type ControlErrorCode = ErrorCode | 'payload_too_large' | 'method_not_allowed';

export function sendError(res: ServerResponse, status: number, code: ControlErrorCode, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { code, message, ...extra } }, headers);
}
