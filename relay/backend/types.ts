// The relay's shared state behind one interface, so that one relay process (memory) or several
// behind one URL (Redis) behave alike. Everything that must be decided once for the whole team —
// de-duplication, tombstones, the order of events, who claimed a call, who is available — is
// decided here; each relay instance only fans out to the agents connected to it.
import { PRESENCE_STATUSES, type PresenceStatus } from '../../shared/api';
import type { BridgeNodeLoad, BridgeNodeRegistration } from '../../shared/bridge-nodes';
import type { CallbackRequest } from '../../shared/callbacks';
import type { RelayEnvelope, RelayEvent } from '../../shared/events';
import type { Colleague } from '../../shared/transfer';
import type { CallbackCustomer } from './callback-rules';

/**
 * What an agent reports with `PUT /presence`: the app's PresenceStatus (shared/api.ts). `on_call`:
 * busy with a call; `call_waiting`: on exactly one call, and the agent asked to be rung during a
 * call. What each means for a ringing call is routing.ts's `PRESENCE_ROUTING`.
 */
export type Presence = PresenceStatus;
/** Every presence, in the order the relay names them (the `PUT /presence` rule, the Redis records). */
export const PRESENCES = PRESENCE_STATUSES;

/**
 * A presence as an agent reports it. `reason` is a break's reason, or the call an `after_call_work`
 * follows; the presence and the reason together are the agent's state.
 */
export interface ReportedPresence {
  presence: Presence;
  reason?: string;
}

/** A presence as the team shares it: what was reported, and since when the agent is in that state. */
export interface PresenceState extends ReportedPresence {
  /** When the agent entered this state (unix ms); absent only from a record an older relay wrote. */
  since?: number;
}

/** The longest a call stays on hold for the team's live calls without word of its resume or its end. */
export const HOLD_TTL_MS = 12 * 60 * 60_000;

/** Whether two reports are the same state: a refresh of a state keeps its `since`. */
export function samePresence(a: ReportedPresence | undefined, b: ReportedPresence | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.presence === b.presence && (a.reason ?? '') === (b.reason ?? '');
}

/** Who an event is for, fixed when it is stored so that every instance and every replay agrees. */
export type Audience =
  /** Every connected agent (message events, events of calls nobody claimed). */
  | { kind: 'everyone' }
  /**
   * An incoming call: it rings agents who are available when it is delivered. When
   * `preferredAgentId` is set (the call came from that agent's voice_call button), only that agent
   * gets it until `releaseAt`; then every available agent, unless the call was claimed or ended.
   */
  | { kind: 'ringing'; preferredAgentId?: string; releaseAt?: number }
  /** A claimed call's later events: its owner only (plus `call.claimed` itself, which goes to everyone it rang). */
  | { kind: 'agent'; agentId: string }
  /**
   * Several named agents: the events of a bridged call that had a transfer go to every agent who was
   * in it or was rung for it (relay/REFERENCE.md "Transfers").
   */
  | { kind: 'agents'; agentIds: string[] };

export interface StoredEvent {
  /** The resume cursor: increasing in the order the backend stored events, the same on every instance. */
  cursor: string;
  receivedAt: number;
  event: RelayEvent;
  audience: Audience;
}

export const envelopeOf = (e: StoredEvent): RelayEnvelope => ({ id: e.cursor, receivedAt: e.receivedAt, event: e.event });

export type AppendOutcome =
  | { stored: true; event: StoredEvent }
  | { stored: false; reason: 'duplicate' | 'tombstoned' | 'stale' };

export type ClaimOutcome = { won: true; agentId: string } | { won: false; agentId: string };

export interface AppendInput {
  event: RelayEvent;
  receivedAt: number;
  audience: Audience;
}

/** A live bridge node: what it registered with, its last reported load, and when it is gone unless it reports again. */
export interface BridgeNode extends BridgeNodeRegistration, BridgeNodeLoad {
  /** When it registered (the backend's clock, unix ms). */
  registeredAt: number;
  /** Its last registration or load report. */
  lastSeenAt: number;
  /** It is gone from this moment on unless it reports its load before. */
  expiresAt: number;
}

/**
 * Where a call's media went: the first node it was placed on holds it, across instances. `placed`
 * is false when another node already held the call; `nodeId` is the node that holds it either way.
 */
export type CallNodeOutcome = { placed: true; nodeId: string } | { placed: false; nodeId: string };

/**
 * A callback request put on the team's list: `replaced` names the customer's earlier requests it
 * took the place of. Not added: the list already holds a request of that id (`duplicate`: it is
 * left as it is, taken or not), or its permission has run out by the backend's clock (`expired`).
 */
export type AddCallbackOutcome = { added: true; replaced: string[] } | { added: false; reason: 'duplicate' | 'expired' };

/** A callback request with the agent who took it. */
export type TakenCallback = CallbackRequest & Required<Pick<CallbackRequest, 'takenBy'>>;

/**
 * A take of a callback request: `taken`, it is the asker's (now, or since an earlier take of its
 * own); `taken_by_other`, a colleague had taken it (the request names them); `not_found`, the list
 * holds no live request of that id.
 */
export type TakeCallbackOutcome = { kind: 'taken'; request: TakenCallback } | { kind: 'taken_by_other'; request: TakenCallback } | { kind: 'not_found' };

/** What a backend can say about itself for `RelayServer.stats()`. */
export interface BackendStats {
  /** Events retained for replay in this process (memory); absent where they live elsewhere (Redis). */
  retainedEvents?: number;
}

export interface RelayBackend {
  readonly kind: 'memory' | 'redis';

  /**
   * The epoch of the cursors when they are private to this backend instance (memory: random per
   * start, so that a cursor from before a restart reads as foreign); undefined when every instance
   * shares the cursors (Redis stream ids).
   */
  readonly epoch: string | undefined;

  /**
   * Stores an event unless it is a duplicate (same call id and event kind/status, or same message
   * id and status, within the de-duplication window), a connect for a tombstoned call, or a
   * connect older than 60 s. A `call.terminated` or a `call.bridge_failed` leaves a tombstone. Atomic across instances.
   */
  append(input: AppendInput): Promise<AppendOutcome>;

  /**
   * Events stored after `cursor` (exclusive), oldest first, at most `limit`. A cursor this backend
   * does not know (another deployment, trimmed away, malformed) → everything retained, so nothing
   * is skipped; duplicates are harmless downstream. `undefined` → events of the last `sinceMs`.
   */
  readAfter(cursor: string | undefined, options: { limit: number; sinceMs: number }): Promise<StoredEvent[]>;

  /**
   * Every event stored by any instance, in cursor order, as it is stored. When a listener hears of
   * an event this instance appended differs by backend and cannot be made the same: memory calls
   * it inside `append`, before the append resolves (a session gets the event without a turn of the
   * event loop); Redis when its stream reader reads the entry back, which may be before or after
   * the append's reply arrives (two connections). Callers that must know that their own appends
   * reached the listeners use `flush`, not the timing.
   */
  subscribe(listener: (event: StoredEvent) => void): () => void;

  /**
   * Resolves once every event this instance appended (whose append resolved) has been handed to
   * the listeners: at once for memory, when the stream reader has caught up for Redis. Resolves
   * too when the backend closes. Callers bound the wait (a Redis that is gone never catches up).
   */
  flush(): Promise<void>;

  /** Counters of this instance's share of the state. */
  stats(): BackendStats;

  /** First claim wins, across instances. Claiming again as the winner still wins. */
  claim(callId: string, agentId: string): Promise<ClaimOutcome>;
  /** The winner of a call's claim, if any. */
  claimOwner(callId: string): Promise<string | undefined>;
  isTombstoned(callId: string): Promise<boolean>;
  /**
   * Records that `agentId` declined the call (it stops ringing for that agent only) and returns
   * every agent who has declined it so far, across instances.
   */
  decline(callId: string, agentId: string): Promise<string[]>;

  /**
   * Presence per agent, shared by every instance; expires unless refreshed within `ttlMs`. A report
   * of the state the agent is in (same presence and reason, not expired) keeps its `since`, decided
   * atomically across instances; any other starts it now. Resolves with the state stored.
   */
  setPresence(agentId: string, reported: ReportedPresence, ttlMs: number): Promise<PresenceState & { since: number }>;
  /** A local mirror kept current by the backend (instances deliver without a round trip). */
  presenceOf(agentId: string): Presence | undefined;
  /** The same mirror's whole state of the agent: its presence, reason and since. */
  presenceStateOf(agentId: string): PresenceState | undefined;

  /**
   * Registers a bridge node, or replaces the one of the same id: 0 calls, alive for `ttlMs` unless
   * it reports its load. Seen by every instance.
   */
  registerNode(registration: BridgeNodeRegistration, ttlMs: number): Promise<BridgeNode>;
  /**
   * A live node's load, which is its heartbeat too: alive for `ttlMs` more. Undefined when no live
   * node has that id (never registered, removed, or expired): it must register again.
   */
  reportNodeLoad(nodeId: string, load: BridgeNodeLoad, ttlMs: number): Promise<BridgeNode | undefined>;
  /** The node leaves; removing an unknown node is no error. */
  removeNode(nodeId: string): Promise<void>;
  /** Every live node, by id. */
  nodes(): Promise<BridgeNode[]>;
  /**
   * The live node that takes the next call (node-rules.ts `leastLoaded`): one with room for it, the
   * fewest calls first, counting those placed on it since its last report. Undefined when no live
   * node has room.
   */
  pickNode(): Promise<BridgeNode | undefined>;

  /**
   * Places a call on a node; the first placement wins, across instances, as a claim does. Placing
   * it again on the node that holds it keeps it another `CALL_NODE_TTL_MS` (1 h, like a claim);
   * another node is refused with the holder's id. To move a call, drop it first.
   */
  setCallNode(callId: string, nodeId: string): Promise<CallNodeOutcome>;
  /** The node that holds a call, if one does. */
  callNode(callId: string): Promise<string | undefined>;
  /** The call's media has left its node (ended, or moving); dropping an unplaced call is no error. */
  dropCallNode(callId: string): Promise<void>;
  /**
   * The calls placed on a node, by id; also after the node is gone, so that the relay can end or
   * move them.
   */
  callsOnNode(nodeId: string): Promise<string[]>;

  /**
   * A call its agent put on hold (`held`), or took off it: the team's live calls show it on every
   * instance (relay/REFERENCE.md "Supervisors"). A hold lasts HOLD_TTL_MS at most (a call that ended
   * on hold is forgotten so).
   */
  setCallHeld(callId: string, held: boolean): Promise<void>;
  /** Which of these calls are on hold now. */
  heldCalls(callIds: readonly string[]): Promise<Set<string>>;

  /**
   * Puts a customer's callback request on the team's list (callback-rules.ts), in place of any
   * earlier request of the same customer (the same number, or the same user id), atomically across
   * instances. A request of an id the list holds changes nothing; one that has run out is not added.
   * Beyond CALLBACKS_MAX the request that runs out first leaves.
   */
  addCallback(request: CallbackRequest): Promise<AddCallbackOutcome>;
  /**
   * Takes a live request for an agent, first take wins across instances (as a claim does); taking
   * it again as its taker keeps the first take's time.
   */
  takeCallback(id: string, agent: Colleague): Promise<TakeCallbackOutcome>;
  /** Removes the customer's requests, taken or not; resolves with their ids. */
  dropCallbacksOf(customer: CallbackCustomer): Promise<string[]>;
  /** Every live request, the oldest first (`byRequestedAt`); those that ran out are removed. */
  callbacks(): Promise<CallbackRequest[]>;

  close(): Promise<void>;
}
