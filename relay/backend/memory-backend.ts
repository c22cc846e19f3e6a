// The relay's shared state for a single relay process: everything in memory, bounded by time and
// by size. Several relay instances need the Redis backend instead (redis-backend.ts).
import { FrontTrimmedList } from './front-trimmed-list';
import { randomBytes } from 'node:crypto';
import { TOMBSTONE_TTL_MS } from '../../shared/call-state';
import type { RelayEvent } from '../../shared/events';
import type { BridgeNodeLoad, BridgeNodeRegistration } from '../../shared/bridge-nodes';
import type { CallbackRequest } from '../../shared/callbacks';
import { createLogger, type Logger } from '../../shared/log';
import type { Colleague } from '../../shared/transfer';
import { byRequestedAt, CALLBACKS_MAX, customerKeysOf, isLiveCallback, runsOutFirst, type CallbackCustomer } from './callback-rules';
import { CLAIM_TTL_MS, dedupKeyOf, isConnect, isStaleConnect, leavesTombstone } from './delivery-rules';
import { byNodeId, CALL_NODE_TTL_MS, isLive, leastLoaded, registeredNode, withLoad } from './node-rules';
import {
  HOLD_TTL_MS,
  samePresence,
  type AddCallbackOutcome,
  type AppendInput,
  type AppendOutcome,
  type BackendStats,
  type BridgeNode,
  type CallNodeOutcome,
  type ClaimOutcome,
  type Presence,
  type PresenceState,
  type RelayBackend,
  type ReportedPresence,
  type StoredEvent,
  type TakeCallbackOutcome,
} from './types';

export interface MemoryBackendOptions {
  /** How long stored events stay available for replay. */
  retentionMs: number;
  /** How long a seen (call, kind) or (message, status) is remembered. */
  dedupWindowMs: number;
  /** Hard caps, whatever the time windows say. */
  maxEvents?: number;
  /** Estimated size of all retained events (SDPs make call events a few KiB each). */
  maxRetainedBytes?: number;
  maxDedupKeys?: number;
  now?: () => number;
  logger?: Logger;
}

export const MEMORY_DEFAULTS = {
  maxEvents: 20_000,
  maxRetainedBytes: 64 * 1024 * 1024,
  maxDedupKeys: 500_000,
} as const;

interface Retained {
  seq: number;
  /** When this backend stored it: retention and "the last sinceMs" count from here. */
  storedAt: number;
  size: number;
  stored: StoredEvent;
}

/** Cursors are `<epoch>-<seq>`; the epoch starts with a letter so it never reads as a Redis stream id. */
const CURSOR = /^(m[0-9a-f]{12})-(\d{1,15})$/;

/**
 * Cursors are `<epoch>-<seq>` with an epoch that is random per backend instance: a cursor from before
 * a restart is recognised as foreign and its holder gets everything retained, instead of a replay
 * that silently skips the new process's events.
 */
export class MemoryBackend implements RelayBackend {
  readonly kind = 'memory' as const;
  readonly epoch = `m${randomBytes(6).toString('hex')}`;

  private readonly events = new FrontTrimmedList<Retained>();
  private seq = 0;
  private retainedBytes = 0;
  /** key → expiry. Every key lives equally long, so insertion order is expiry order. */
  private readonly seen = new Map<string, number>();
  private readonly tombstones = new Map<string, number>();
  private readonly claims = new Map<string, { agentId: string; expiresAt: number }>();
  private readonly declines = new Map<string, { agentIds: Set<string>; expiresAt: number }>();
  private readonly presence = new Map<string, { state: PresenceState & { since: number }; expiresAt: number }>();
  private readonly bridgeNodes = new Map<string, BridgeNode>();
  /** callId → the node that holds it. Every placement lives equally long, so insertion order is expiry order. */
  private readonly callNodes = new Map<string, { nodeId: string; expiresAt: number }>();
  /** callId → when its hold runs out. Every hold lives equally long, so insertion order is expiry order. */
  private readonly holds = new Map<string, number>();
  /** The team's callback requests by id, and each customer's (`customerKeysOf` → id), as the Redis layout keeps them. */
  private readonly callbackRequests = new Map<string, CallbackRequest>();
  private readonly callbackCustomers = new Map<string, string>();
  /** No request runs out before this: the list is looked through only from then on. */
  private callbacksRunOutAt = Number.POSITIVE_INFINITY;
  /** Replaced, never mutated, so a listener that (un)subscribes during delivery does not disturb it. */
  private listeners: ReadonlyArray<(event: StoredEvent) => void> = [];
  private closed = false;

  private readonly now: () => number;
  private readonly log: Logger;
  private readonly maxEvents: number;
  private readonly maxRetainedBytes: number;
  private readonly maxDedupKeys: number;

  constructor(private readonly options: MemoryBackendOptions) {
    this.now = options.now ?? Date.now;
    this.log = options.logger ?? createLogger('relay-backend');
    this.maxEvents = Math.max(1, options.maxEvents ?? MEMORY_DEFAULTS.maxEvents);
    this.maxRetainedBytes = options.maxRetainedBytes ?? MEMORY_DEFAULTS.maxRetainedBytes;
    this.maxDedupKeys = Math.max(1, options.maxDedupKeys ?? MEMORY_DEFAULTS.maxDedupKeys);
  }

  /** Number of events retained for replay. */
  get size(): number {
    return this.events.length;
  }

  stats(): BackendStats {
    return { retainedEvents: this.events.length };
  }

  /** Listeners are called inside `append`: whatever it stored has reached them once it resolved. */
  flush(): Promise<void> {
    return Promise.resolve();
  }

  append(input: AppendInput): Promise<AppendOutcome> {
    if (this.closed) return Promise.reject(new Error('The relay backend is closed'));
    const now = this.now();
    this.prune(now);
    const { event } = input;
    // The order of the checks is the Redis script's: stale, tombstoned, duplicate. A dropped event
    // leaves no de-duplication key behind.
    if (isStaleConnect(event, now)) return Promise.resolve({ stored: false, reason: 'stale' });
    // protocol.md: a terminate can overtake its connect; the connect must then never ring.
    if (isConnect(event) && this.tombstones.has(event.callId)) return Promise.resolve({ stored: false, reason: 'tombstoned' });
    const key = dedupKeyOf(event, input.audience);
    if (this.seen.has(key)) return Promise.resolve({ stored: false, reason: 'duplicate' });
    remember(this.seen, key, now + this.options.dedupWindowMs, this.maxDedupKeys);
    if (leavesTombstone(event) && 'callId' in event) remember(this.tombstones, event.callId, now + TOMBSTONE_TTL_MS, this.maxDedupKeys);

    this.seq += 1;
    const stored: StoredEvent = { cursor: `${this.epoch}-${this.seq}`, receivedAt: input.receivedAt, event, audience: input.audience };
    const retained: Retained = { seq: this.seq, storedAt: now, size: estimateSize(event), stored };
    this.events.push(retained);
    this.retainedBytes += retained.size;
    this.enforceCaps();

    for (const listener of this.listeners) {
      try {
        listener(stored);
      } catch (error) {
        this.log.error('event listener failed', { error, cursor: stored.cursor });
      }
    }
    return Promise.resolve({ stored: true, event: stored });
  }

  readAfter(cursor: string | undefined, options: { limit: number; sinceMs: number }): Promise<StoredEvent[]> {
    const now = this.now();
    this.prune(now);
    const limit = Math.max(0, options.limit);
    // An empty Last-Event-ID is no cursor at all, not a foreign one.
    if (cursor === undefined || cursor.trim() === '') {
      return Promise.resolve(this.slice(this.firstStoredAtOrAfter(now - options.sinceMs), limit));
    }
    const match = CURSOR.exec(cursor.trim());
    const seq = match && match[1] === this.epoch ? Number(match[2]) : undefined;
    // A seq this instance never issued cannot be trusted to mean "up to date".
    if (seq === undefined || seq > this.seq) return Promise.resolve(this.slice(0, limit));
    const head = this.events.at(0);
    // Seqs are consecutive, so the position of the first event after `seq` is arithmetic.
    const first = head === undefined ? 0 : Math.max(0, seq + 1 - head.seq);
    return Promise.resolve(this.slice(first, limit));
  }

  subscribe(listener: (event: StoredEvent) => void): () => void {
    if (this.closed) return () => {};
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  claim(callId: string, agentId: string): Promise<ClaimOutcome> {
    const now = this.now();
    expire(this.claims, now, (c) => c.expiresAt);
    const owner = this.claims.get(callId);
    if (owner) return Promise.resolve({ won: owner.agentId === agentId, agentId: owner.agentId });
    this.claims.set(callId, { agentId, expiresAt: now + CLAIM_TTL_MS });
    return Promise.resolve({ won: true, agentId });
  }

  claimOwner(callId: string): Promise<string | undefined> {
    expire(this.claims, this.now(), (c) => c.expiresAt);
    return Promise.resolve(this.claims.get(callId)?.agentId);
  }

  decline(callId: string, agentId: string): Promise<string[]> {
    const now = this.now();
    expire(this.declines, now, (d) => d.expiresAt);
    let entry = this.declines.get(callId);
    if (!entry) {
      entry = { agentIds: new Set(), expiresAt: now + CLAIM_TTL_MS };
      this.declines.set(callId, entry);
    }
    entry.agentIds.add(agentId);
    return Promise.resolve([...entry.agentIds]);
  }

  isTombstoned(callId: string): Promise<boolean> {
    expire(this.tombstones, this.now(), (expiresAt) => expiresAt);
    return Promise.resolve(this.tombstones.has(callId));
  }

  setPresence(agentId: string, reported: ReportedPresence, ttlMs: number): Promise<PresenceState & { since: number }> {
    const now = this.now();
    const current = this.livePresence(agentId, now);
    const state = {
      presence: reported.presence,
      ...(reported.reason !== undefined ? { reason: reported.reason } : {}),
      since: current !== undefined && samePresence(current, reported) ? current.since : now,
    };
    // Re-inserted so that the map stays in expiry order only where TTLs are equal; presenceOf checks
    // each entry's own expiry anyway.
    this.presence.delete(agentId);
    this.presence.set(agentId, { state, expiresAt: now + ttlMs });
    return Promise.resolve({ ...state });
  }

  presenceOf(agentId: string): Presence | undefined {
    return this.livePresence(agentId, this.now())?.presence;
  }

  presenceStateOf(agentId: string): PresenceState | undefined {
    const state = this.livePresence(agentId, this.now());
    return state === undefined ? undefined : { ...state };
  }

  private livePresence(agentId: string, now: number): (PresenceState & { since: number }) | undefined {
    const entry = this.presence.get(agentId);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.presence.delete(agentId);
      return undefined;
    }
    return entry.state;
  }

  registerNode(registration: BridgeNodeRegistration, ttlMs: number): Promise<BridgeNode> {
    const node = registeredNode(registration, this.now(), ttlMs);
    this.bridgeNodes.set(node.nodeId, node);
    return Promise.resolve(node);
  }

  reportNodeLoad(nodeId: string, load: BridgeNodeLoad, ttlMs: number): Promise<BridgeNode | undefined> {
    const now = this.now();
    this.pruneNodes(now);
    const current = this.bridgeNodes.get(nodeId);
    if (current === undefined) return Promise.resolve(undefined);
    const node = withLoad(current, load, now, ttlMs);
    this.bridgeNodes.set(nodeId, node);
    return Promise.resolve(node);
  }

  removeNode(nodeId: string): Promise<void> {
    this.bridgeNodes.delete(nodeId);
    return Promise.resolve();
  }

  nodes(): Promise<BridgeNode[]> {
    this.pruneNodes(this.now());
    return Promise.resolve([...this.bridgeNodes.values()].sort(byNodeId));
  }

  async pickNode(): Promise<BridgeNode | undefined> {
    const nodes = await this.nodes();
    expire(this.callNodes, this.now(), (c) => c.expiresAt);
    const placed = new Map<string, number>();
    for (const { nodeId } of this.callNodes.values()) placed.set(nodeId, (placed.get(nodeId) ?? 0) + 1);
    return leastLoaded(nodes, (nodeId) => placed.get(nodeId) ?? 0);
  }

  setCallNode(callId: string, nodeId: string): Promise<CallNodeOutcome> {
    const now = this.now();
    expire(this.callNodes, now, (c) => c.expiresAt);
    const holder = this.callNodes.get(callId)?.nodeId;
    if (holder !== undefined && holder !== nodeId) return Promise.resolve({ placed: false, nodeId: holder });
    // Re-inserted, so that the map stays in expiry order.
    this.callNodes.delete(callId);
    this.callNodes.set(callId, { nodeId, expiresAt: now + CALL_NODE_TTL_MS });
    return Promise.resolve({ placed: true, nodeId });
  }

  callNode(callId: string): Promise<string | undefined> {
    expire(this.callNodes, this.now(), (c) => c.expiresAt);
    return Promise.resolve(this.callNodes.get(callId)?.nodeId);
  }

  dropCallNode(callId: string): Promise<void> {
    this.callNodes.delete(callId);
    return Promise.resolve();
  }

  callsOnNode(nodeId: string): Promise<string[]> {
    expire(this.callNodes, this.now(), (c) => c.expiresAt);
    const calls: string[] = [];
    for (const [callId, holder] of this.callNodes) if (holder.nodeId === nodeId) calls.push(callId);
    return Promise.resolve(calls.sort());
  }

  addCallback(request: CallbackRequest): Promise<AddCallbackOutcome> {
    const now = this.now();
    this.pruneCallbacks(now);
    if (!isLiveCallback(request, now)) return Promise.resolve({ added: false, reason: 'expired' });
    if (this.callbackRequests.has(request.id)) return Promise.resolve({ added: false, reason: 'duplicate' });
    const keys = customerKeysOf(request);
    const replaced = this.dropCallbacksByKeys(keys);
    const { takenBy: _takenBy, ...untaken } = request;
    this.callbackRequests.set(request.id, untaken);
    for (const key of keys) this.callbackCustomers.set(key, request.id);
    if (!untaken.permanent && untaken.expiresAt !== undefined) this.callbacksRunOutAt = Math.min(this.callbacksRunOutAt, untaken.expiresAt);
    if (this.callbackRequests.size > CALLBACKS_MAX) {
      const leaving = [...this.callbackRequests.values()].sort(runsOutFirst).slice(0, this.callbackRequests.size - CALLBACKS_MAX);
      for (const { id } of leaving) this.removeCallback(id);
    }
    return Promise.resolve({ added: true, replaced });
  }

  takeCallback(id: string, agent: Colleague): Promise<TakeCallbackOutcome> {
    const now = this.now();
    this.pruneCallbacks(now);
    const request = this.callbackRequests.get(id);
    if (request === undefined) return Promise.resolve({ kind: 'not_found' });
    if (request.takenBy !== undefined) {
      const taken = { ...request, takenBy: { ...request.takenBy } };
      return Promise.resolve({ kind: request.takenBy.agentId === agent.agentId ? 'taken' : 'taken_by_other', request: taken });
    }
    const taken = { ...request, takenBy: { agentId: agent.agentId, name: agent.name, at: now } };
    this.callbackRequests.set(id, taken);
    return Promise.resolve({ kind: 'taken', request: { ...taken, takenBy: { ...taken.takenBy } } });
  }

  dropCallbacksOf(customer: CallbackCustomer): Promise<string[]> {
    this.pruneCallbacks(this.now());
    return Promise.resolve(this.dropCallbacksByKeys(customerKeysOf(customer)));
  }

  callbacks(): Promise<CallbackRequest[]> {
    this.pruneCallbacks(this.now());
    return Promise.resolve(
      [...this.callbackRequests.values()].map((request) => (request.takenBy === undefined ? { ...request } : { ...request, takenBy: { ...request.takenBy } })).sort(byRequestedAt),
    );
  }

  setCallHeld(callId: string, held: boolean): Promise<void> {
    const now = this.now();
    expire(this.holds, now, (expiresAt) => expiresAt);
    this.holds.delete(callId);
    if (held) this.holds.set(callId, now + HOLD_TTL_MS);
    return Promise.resolve();
  }

  heldCalls(callIds: readonly string[]): Promise<Set<string>> {
    expire(this.holds, this.now(), (expiresAt) => expiresAt);
    return Promise.resolve(new Set(callIds.filter((callId) => this.holds.has(callId))));
  }

  close(): Promise<void> {
    this.closed = true;
    this.listeners = [];
    return Promise.resolve();
  }

  /** Removes the requests these customer keys name; returns their ids. */
  private dropCallbacksByKeys(keys: readonly string[]): string[] {
    const dropped: string[] = [];
    for (const key of keys) {
      const id = this.callbackCustomers.get(key);
      if (id === undefined) continue;
      if (this.callbackRequests.has(id)) dropped.push(id);
      this.removeCallback(id);
      this.callbackCustomers.delete(key);
    }
    return dropped;
  }

  /** Takes a request out of the list, and out of its customer's keys while they still name it. */
  private removeCallback(id: string): void {
    const request = this.callbackRequests.get(id);
    if (request === undefined) return;
    for (const key of customerKeysOf(request)) if (this.callbackCustomers.get(key) === id) this.callbackCustomers.delete(key);
    this.callbackRequests.delete(id);
  }

  private pruneCallbacks(now: number): void {
    if (now < this.callbacksRunOutAt) return;
    let next = Number.POSITIVE_INFINITY;
    for (const [id, request] of this.callbackRequests) {
      if (!isLiveCallback(request, now)) this.removeCallback(id);
      else if (!request.permanent && request.expiresAt !== undefined) next = Math.min(next, request.expiresAt);
    }
    this.callbacksRunOutAt = next;
  }

  /** A node that missed its heartbeats is gone, as if it had never registered. */
  private pruneNodes(now: number): void {
    for (const [nodeId, node] of this.bridgeNodes) if (!isLive(node, now)) this.bridgeNodes.delete(nodeId);
  }

  private slice(from: number, limit: number): StoredEvent[] {
    return this.events.slice(from, from + limit).map((e) => e.stored);
  }

  /** Events are appended in storedAt order, so a binary search finds where "the last sinceMs" starts. */
  private firstStoredAtOrAfter(since: number): number {
    let low = 0;
    let high = this.events.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.events.at(mid)!.storedAt < since) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  private prune(now: number): void {
    const oldest = now - this.options.retentionMs;
    let drop = 0;
    while (drop < this.events.length && this.events.at(drop)!.storedAt < oldest) drop += 1;
    this.dropOldest(drop);
    expire(this.seen, now, (expiresAt) => expiresAt);
    expire(this.tombstones, now, (expiresAt) => expiresAt);
  }

  private enforceCaps(): void {
    let drop = 0;
    let bytes = this.retainedBytes;
    // The newest event always stays, however large: it has to reach the agents.
    while (drop < this.events.length - 1 && (this.events.length - drop > this.maxEvents || bytes > this.maxRetainedBytes)) {
      bytes -= this.events.at(drop)!.size;
      drop += 1;
    }
    this.dropOldest(drop);
  }

  private dropOldest(count: number): void {
    if (count <= 0) return;
    for (let i = 0; i < count; i += 1) this.retainedBytes -= this.events.at(i)!.size;
    this.events.dropFront(count);
  }
}

function remember(map: Map<string, number>, key: string, expiresAt: number, max: number): void {
  map.set(key, expiresAt);
  if (map.size > max) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
}

/** Drops expired entries from the front of a map kept in expiry order. */
function expire<V>(map: Map<string, V>, now: number, expiryOf: (value: V) => number): void {
  for (const [key, value] of map) {
    if (expiryOf(value) > now) break;
    map.delete(key);
  }
}

/**
 * Roughly the serialised size of an event. Exactness does not matter (the cap is a safety net for
 * memory); serialising every event just to measure it would cost more than the cap saves.
 */
function estimateSize(event: RelayEvent): number {
  let size = 64;
  for (const value of Object.values(event)) {
    if (typeof value === 'string') size += value.length + 16;
    else if (typeof value === 'object' && value !== null) size += 128 * (Array.isArray(value) ? value.length + 1 : 1);
    else size += 16;
  }
  return size;
}
