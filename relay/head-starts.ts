// The voice_call head start (relay/REFERENCE.md "Routing and claims"): a call brought back by an
// agent's voice_call button rings that agent first; the other agents get it when the head start
// ends, unless the call was claimed or ended by then, in which case they never hear of it.
//
// Every instance sees every stored event (backend subscribe), so each keeps the same record of each
// such call and decides the release alike; the shared claim and tombstone settle the race at the
// moment of release. The record also keeps the call's events, so that an agent who disconnected
// while holding them can pick them up on any instance (resume-token.ts).
import { STALE_CONNECT_MS } from '../shared/call-state';
import type { Logger } from '../shared/log';
import type { RelayBackend, StoredEvent } from './backend/types';
import { callIdOf, hasHeadStart, type HeadStartState } from './routing';

export interface HeadStartWatcher {
  headStartEnded(callId: string, state: 'released' | 'dropped'): void;
}

interface HeadStart {
  callId: string;
  preferredAgentId: string;
  releaseAt: number;
  /** `checking`: the head start is over and the backend is being asked whether the call was claimed or ended. */
  state: 'waiting' | 'checking' | 'released' | 'dropped';
  /** The call's events this instance saw, in stored order. */
  events: StoredEvent[];
  watchers: Set<HeadStartWatcher>;
  timer: NodeJS.Timeout | undefined;
  expiresAt: number;
}

export interface HeadStartsOptions {
  backend: Pick<RelayBackend, 'claimOwner' | 'isTombstoned'>;
  logger: Logger;
  now?: () => number;
  /** How long a record outlives its release: a call older than that no longer rings anyway. */
  lingerMs?: number;
}

/** A call stops being a candidate for ringing the others once it is claimed or ended. */
const endsHeadStart = (stored: StoredEvent) => stored.event.type === 'call.claimed' || stored.event.type === 'call.terminated';

export class HeadStarts {
  private readonly calls = new Map<string, HeadStart>();
  private readonly now: () => number;
  private readonly lingerMs: number;
  private readonly sweep: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly options: HeadStartsOptions) {
    this.now = options.now ?? Date.now;
    this.lingerMs = options.lingerMs ?? STALE_CONNECT_MS;
    this.sweep = setInterval(() => this.expire(), 5_000);
    this.sweep.unref();
  }

  get size(): number {
    return this.calls.size;
  }

  /** Every stored event, live, in stored order (before it is fanned out to the sessions). */
  observe(stored: StoredEvent): void {
    const callId = callIdOf(stored.event);
    if (callId === undefined) return;
    const record = this.calls.get(callId) ?? this.create(stored, callId);
    if (record === undefined) return;
    if (!record.events.some((e) => e.cursor === stored.cursor)) record.events.push(stored);
    if (endsHeadStart(stored)) this.end(record, 'dropped');
  }

  /**
   * The head-start state for a session that meets `stored` (live or in a replay), creating the
   * record when this instance has none (it started after the call came in, or the record expired).
   */
  stateFor(stored: StoredEvent): HeadStartState | undefined {
    const callId = callIdOf(stored.event);
    if (callId === undefined || !hasHeadStart(stored.audience)) return undefined;
    const record = this.calls.get(callId) ?? this.create(stored, callId);
    if (record === undefined) return undefined;
    if (endsHeadStart(stored)) this.end(record, 'dropped');
    return record.state === 'checking' ? 'waiting' : record.state;
  }

  /** Whether this instance keeps a record of the call (a resumed session can only pick up held events then). */
  has(callId: string): boolean {
    return this.calls.has(callId);
  }

  /**
   * The call's events stored before `cursor` (all of them when `cursor` is not among them). A
   * session that resumes with held events uses it: events after its resume point come from the
   * replay, so the call's events before the first one of the replay are the ones it held.
   */
  eventsBefore(callId: string, cursor: string | undefined): StoredEvent[] {
    const events = this.calls.get(callId)?.events ?? [];
    const index = cursor === undefined ? -1 : events.findIndex((e) => e.cursor === cursor);
    return index < 0 ? [...events] : events.slice(0, index);
  }

  /**
   * The agent with the head start declined the call: the others need not wait for the rest of it.
   * Decided on the instance that took the decline; the others release at the usual time (the shared
   * claim and tombstone settle the release alike everywhere).
   */
  declinedBy(callId: string, agentId: string): void {
    const record = this.calls.get(callId);
    if (record?.preferredAgentId !== agentId) return;
    this.release(record);
  }

  watch(callId: string, watcher: HeadStartWatcher): void {
    this.calls.get(callId)?.watchers.add(watcher);
  }

  unwatch(callId: string, watcher: HeadStartWatcher): void {
    this.calls.get(callId)?.watchers.delete(watcher);
  }

  close(): void {
    this.closed = true;
    clearInterval(this.sweep);
    for (const record of this.calls.values()) clearTimeout(record.timer);
    this.calls.clear();
  }

  private create(stored: StoredEvent, callId: string): HeadStart | undefined {
    if (this.closed || !hasHeadStart(stored.audience)) return undefined;
    const now = this.now();
    const { releaseAt, preferredAgentId } = stored.audience;
    const record: HeadStart = {
      callId,
      preferredAgentId,
      releaseAt,
      state: 'waiting',
      events: [],
      watchers: new Set(),
      timer: undefined,
      expiresAt: Math.max(releaseAt, now) + this.lingerMs,
    };
    this.calls.set(callId, record);
    if (releaseAt > now) {
      record.timer = setTimeout(() => this.release(record), releaseAt - now);
      record.timer.unref();
    } else {
      this.release(record);
    }
    return record;
  }

  /** The head start is over: the others ring unless the call was claimed or ended meanwhile, on any instance. */
  private release(record: HeadStart): void {
    if (record.state !== 'waiting') return;
    clearTimeout(record.timer);
    record.timer = undefined;
    record.state = 'checking';
    const { backend, logger } = this.options;
    Promise.all([backend.claimOwner(record.callId), backend.isTombstoned(record.callId)]).then(
      ([owner, ended]) => this.end(record, owner !== undefined || ended ? 'dropped' : 'released'),
      (error: unknown) => {
        // Ringing a call someone already took is a nuisance; never ringing an unanswered one loses a customer.
        logger.warn('could not check a voice_call head start; ringing everyone', { callId: record.callId, error });
        this.end(record, 'released');
      },
    );
  }

  private end(record: HeadStart, state: 'released' | 'dropped'): void {
    if (record.state === 'released' || record.state === 'dropped' || this.closed) return;
    clearTimeout(record.timer);
    record.timer = undefined;
    record.state = state;
    const watchers = [...record.watchers];
    record.watchers.clear();
    for (const watcher of watchers) {
      try {
        watcher.headStartEnded(record.callId, state);
      } catch (error) {
        this.options.logger.error('a session failed to take a released call', { callId: record.callId, error });
      }
    }
  }

  private expire(): void {
    const now = this.now();
    for (const [callId, record] of this.calls) {
      if (record.expiresAt > now) continue;
      this.end(record, 'dropped');
      this.calls.delete(callId);
    }
  }
}
