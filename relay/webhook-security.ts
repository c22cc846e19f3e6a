// Webhook signatures and token checks (protocol.md "Webhook security"). Every comparison runs in
// constant time so that response timing reveals nothing about a secret.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/**
 * True when `header` is `sha256=<hex>` and the hex is HMAC-SHA256(rawBody, appSecret). The HMAC
 * is over the raw bytes as received, never over re-serialised JSON (protocol.md).
 */
export function isValidSignature(rawBody: Buffer, header: string | undefined, appSecret: string): boolean {
  if (header === undefined) return false;
  const match = SIGNATURE.exec(header.trim());
  if (!match) return false;
  const presented = Buffer.from(match[1]!, 'hex');
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return timingSafeEqual(presented, expected);
}

/**
 * Compares secrets of any length in constant time: both sides are hashed first, so neither the
 * length nor a common prefix of the secret shows in the timing.
 */
export function secretsEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}
