// Failed agent authentication, limited per client address (relay/REFERENCE.md "Limits"): after
// `maxFailures` failures within `windowMs` from one address, that address is refused (429) until its
// oldest counted failure leaves the window. Other addresses are never slowed. The table is bounded:
// entries whose failures have all left the window go first, and past `maxAddresses` the address that
// failed least recently is forgotten, so that a storm from many addresses cannot grow it without end.
import { isIPv4, isIPv6 } from 'node:net';

export interface AuthFailureLimits {
  /** Failures within the window after which the address is refused. Default 20. */
  maxFailures?: number;
  /** Default 60 000. */
  windowMs?: number;
  /** Addresses remembered at most. Default 10 000. */
  maxAddresses?: number;
}

const DEFAULT_AUTH_FAILURE_LIMITS: Required<AuthFailureLimits> = { maxFailures: 20, windowMs: 60_000, maxAddresses: 10_000 };

export type LimitVerdict = { limited: false } | { limited: true; retryAfterSec: number };

export class AuthFailureLimiter {
  private readonly limits: Required<AuthFailureLimits>;
  /**
   * Per address key, the times of its latest failures (at most `maxFailures`, oldest first). Map
   * order is the order of each address's latest failure: the first entry failed least recently.
   */
  private readonly failures = new Map<string, number[]>();

  constructor(limits: AuthFailureLimits = {}, private readonly now: () => number = Date.now) {
    this.limits = { ...DEFAULT_AUTH_FAILURE_LIMITS, ...limits };
    const { maxFailures, windowMs, maxAddresses } = this.limits;
    if (!(Number.isInteger(maxFailures) && maxFailures >= 1 && windowMs > 0 && Number.isInteger(maxAddresses) && maxAddresses >= 1)) {
      throw new RangeError('authFailureLimits: maxFailures and maxAddresses must be whole numbers from 1, windowMs above 0');
    }
  }

  /** Addresses remembered now (bounded by `maxAddresses`). */
  get size(): number {
    return this.failures.size;
  }

  /** Whether `key` is refused now, and for how many more seconds. */
  check(key: string): LimitVerdict {
    const times = this.failures.get(key);
    if (times === undefined || times.length < this.limits.maxFailures) return { limited: false };
    const freeAt = times[0]! + this.limits.windowMs;
    const waitMs = freeAt - this.now();
    if (waitMs <= 0) return { limited: false };
    return { limited: true, retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)) };
  }

  /** Counts one failure of `key`; answers whether it is limited from now on (a limited key is refused before it can fail again). */
  fail(key: string): LimitVerdict {
    const now = this.now();
    const times = this.failures.get(key) ?? [];
    this.failures.delete(key);
    times.push(now);
    if (times.length > this.limits.maxFailures) times.shift();
    this.failures.set(key, times);
    this.forgetExpired(now);
    while (this.failures.size > this.limits.maxAddresses) {
      const oldest = this.failures.keys().next();
      if (oldest.done) break;
      this.failures.delete(oldest.value);
    }
    return this.check(key);
  }

  /** Entries whose latest failure left the window; they sit at the front of the map. */
  private forgetExpired(now: number): void {
    for (const [key, times] of this.failures) {
      if (now - times.at(-1)! < this.limits.windowMs) return;
      this.failures.delete(key);
    }
  }
}

/**
 * The key an address is counted under: an IPv4 address as it is (an IPv4-mapped IPv6 address as
 * its IPv4 address), an IPv6 address by its /64, since one host usually holds a whole /64 and could
 * otherwise take a new address for every guess.
 */
export function addressKey(address: string): string {
  const plain = address.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(plain);
  if (mapped) return mapped[1]!;
  if (isIPv4(plain) || !isIPv6(plain)) return plain;
  const groups = ipv6Groups(plain);
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, as lower-case hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const part = (text: string): string[] => {
    if (text === '') return [];
    const pieces = text.split(':');
    const last = pieces.at(-1)!;
    // An embedded IPv4 address (RFC 4291 2.2) holds the last two groups.
    if (last.includes('.')) {
      const [a, b, c, d] = last.split('.').map(Number) as [number, number, number, number];
      pieces.splice(-1, 1, ((a << 8) | b).toString(16), ((c << 8) | d).toString(16));
    }
    return pieces;
  };
  const front = part(head);
  const back = tail === undefined ? [] : part(tail);
  const zeros = tail === undefined ? [] : Array<string>(8 - front.length - back.length).fill('0');
  return [...front, ...zeros, ...back].map((group) => parseInt(group, 16).toString(16));
}
