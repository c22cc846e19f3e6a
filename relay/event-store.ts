// The relay's memory: retained events with their resume cursors, de-duplication keys and call
// tombstones (protocol.md "Delivery rules"). In memory only; everything is bounded by time and size.
import { randomBytes } from 'node:crypto';
import { STALE_CONNECT_MS, TOMBSTONE_TTL_MS } from '../shared/call-state';
import type { RelayEnvelope, RelayEvent } from '../shared/events';
import { assertNever } from '../shared/result';

export interface RelayStoreOptions {
  /** How long delivered events stay available for replay. */
  retentionMs: number;
  /** How long a seen (callId, kind) or (messageId, status) is remembered: the service retries for days. */
  dedupWindowMs: number;
  /** Hard caps, whatever the time windows say. */
  maxEvents: number;
  /** Serialised size of all retained events (SDPs make events a few KiB each). */
  maxRetainedBytes: number;
  maxDedupKeys: number;
  now?: () => number;
}

export interface RetainedEvent {
  seq: number;
  envelope: RelayEnvelope;
  /** The envelope serialised once, for every agent it is written to. */
  json: string;
}

export type StoreOutcome =
  | { stored: true; retained: RetainedEvent }
  | { stored: false; reason: 'duplicate' | 'tombstoned' | 'stale' };

/** Where a resuming agent's replay starts. */
export type ReplayPlan =
  | { kind: 'after'; seq: number } // a cursor of this relay process
  | { kind: 'everything' } // a cursor of another relay process, or one this relay never issued
  | { kind: 'recent'; sinceMs: number }; // no cursor: a fresh agent

const CURSOR = /^([a-z0-9]{1,32})-(\d{1,15})$/i;

/**
 * Retained events, cursor issuing and delivery rules. Cursors are `<epoch>-<seq>`: the epoch is
 * random per process start, so a cursor from before a restart is recognised as foreign and its
 * holder gets everything retained instead of a replay that silently skips the new process's events.
 */
export class RelayStore {
  readonly epoch: string = randomBytes(6).toString('hex');
  private readonly events: RetainedEvent[] = [];
  private seq = 0;
  private retainedBytes = 0;
  /** key → expiry; insertion order is expiry order because every key lives equally long. */
  private readonly seen = new Map<string, number>();
  private readonly tombstones = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly options: RelayStoreOptions) {
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.events.length;
  }

  get lastCursor(): string {
    return `${this.epoch}-${this.seq}`;
  }

  /** Applies the delivery rules and, when the event passes, stores it under the next cursor. */
  accept(event: RelayEvent, receivedAt: number): StoreOutcome {
    const now = this.now();
    this.prune(now);
    if (isConnect(event)) {
      // protocol.md: a terminate can overtake its connect, and late connects are worthless.
      if (this.tombstones.has(event.callId)) return { stored: false, reason: 'tombstoned' };
      if (now - event.timestamp > STALE_CONNECT_MS) return { stored: false, reason: 'stale' };
    }
    const key = dedupKey(event);
    if (this.seen.has(key)) return { stored: false, reason: 'duplicate' };
    this.remember(this.seen, key, now + this.options.dedupWindowMs, this.options.maxDedupKeys);
    if (event.type === 'call.terminated') this.remember(this.tombstones, event.callId, now + TOMBSTONE_TTL_MS, this.options.maxDedupKeys);

    this.seq += 1;
    const envelope: RelayEnvelope = { id: `${this.epoch}-${this.seq}`, receivedAt, event };
    const retained: RetainedEvent = { seq: this.seq, envelope, json: JSON.stringify(envelope) };
    this.events.push(retained);
    this.retainedBytes += retained.json.length;
    let drop = 0;
    while (
      drop < this.events.length - 1 &&
      (this.events.length - drop > this.options.maxEvents || this.retainedBytes > this.options.maxRetainedBytes)
    ) {
      this.retainedBytes -= this.events[drop]!.json.length;
      drop += 1;
    }
    if (drop > 0) this.events.splice(0, drop);
    return { stored: true, retained };
  }

  /** How to serve an agent that presents `cursor` (Last-Event-ID or ?since=). */
  planReplay(cursor: string | undefined, freshReplayMs: number): ReplayPlan {
    if (cursor === undefined || cursor.trim() === '') {
      return freshReplayMs > 0 ? { kind: 'recent', sinceMs: this.now() - freshReplayMs } : { kind: 'after', seq: this.seq };
    }
    const match = CURSOR.exec(cursor.trim());
    if (!match || match[1] !== this.epoch) return { kind: 'everything' };
    const seq = Number(match[2]);
    // A seq this process never issued cannot be trusted to mean "up to date".
    if (seq > this.seq) return { kind: 'everything' };
    return { kind: 'after', seq };
  }

  replay(plan: ReplayPlan): { events: RetainedEvent[]; gap: boolean } {
    this.prune(this.now());
    switch (plan.kind) {
      case 'everything':
        return { events: [...this.events], gap: false };
      case 'recent':
        return { events: this.events.filter((e) => e.envelope.receivedAt >= plan.sinceMs), gap: false };
      case 'after': {
        const first = this.events[0];
        const gap = first !== undefined && first.seq > plan.seq + 1;
        return { events: this.events.filter((e) => e.seq > plan.seq), gap };
      }
      default:
        return assertNever(plan, 'replay plan');
    }
  }

  prune(now = this.now()): void {
    const oldest = now - this.options.retentionMs;
    let drop = 0;
    while (drop < this.events.length && this.events[drop]!.envelope.receivedAt < oldest) {
      this.retainedBytes -= this.events[drop]!.json.length;
      drop += 1;
    }
    if (drop > 0) this.events.splice(0, drop);
    expire(this.seen, now);
    expire(this.tombstones, now);
  }

  private remember(map: Map<string, number>, key: string, expiresAt: number, max: number): void {
    map.set(key, expiresAt);
    if (map.size > max) {
      const oldest = map.keys().next();
      if (!oldest.done) map.delete(oldest.value);
    }
  }
}

function expire(map: Map<string, number>, now: number): void {
  for (const [key, expiresAt] of map) {
    if (expiresAt > now) break;
    map.delete(key);
  }
}

function isConnect(event: RelayEvent): event is Extract<RelayEvent, { type: 'call.incoming' | 'call.answered' }> {
  return event.type === 'call.incoming' || event.type === 'call.answered';
}

/** The identity of an event for de-duplication: the same (call, kind) or (message, status) is one event. */
export function dedupKey(event: RelayEvent): string {
  switch (event.type) {
    case 'call.incoming':
      return `call:${event.callId}:incoming`;
    case 'call.answered':
      return `call:${event.callId}:answered`;
    case 'call.status':
      return `call:${event.callId}:status:${event.status}`;
    case 'call.terminated':
      return `call:${event.callId}:terminated`;
    case 'call.claimed':
      return `call:${event.callId}:claimed`;
    case 'message.inbound':
      return `message:${event.messageId}:inbound`;
    case 'message.status':
      return `message:${event.messageId}:status:${event.status}`;
    default:
      return assertNever(event, 'relay event');
  }
}
