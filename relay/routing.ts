// Who gets which event (relay/REFERENCE.md "Routing and claims"). The audience is fixed when an event
// is stored (backend/types.ts), so every relay instance and every replay agrees; what depends on
// the moment of delivery — presence, a voice_call head start — is decided per agent session here.
import { TOMBSTONE_TTL_MS } from '../shared/call-state';
import type { RelayEvent } from '../shared/events';
import { decodeVoiceCallPayload } from '../shared/voice-call-payload';
import type { Audience, Presence, StoredEvent } from './backend/types';
import { leavesTombstone } from './backend/delivery-rules';
import type { CallbackCustomer } from './backend/callback-rules';
import { recipientOf } from './callback-requests';

export type RingingAudience = Extract<Audience, { kind: 'ringing' }>;
export type CallEvent = Extract<RelayEvent, { callId: string }>;

export function callIdOf(event: RelayEvent): string | undefined {
  return 'callId' in event ? event.callId : undefined;
}

/** The key under which events must stay in order: one call, or one message. */
export function orderingKeyOf(event: RelayEvent): string {
  return 'callId' in event ? `call:${event.callId}` : `message:${event.messageId}`;
}

/**
 * The agent a voice_call button was sent by: its payload comes back as the call's `cta_payload`
 * (protocol.md "voice_call button"). Only a payload the app wrote names one
 * (shared/voice-call-payload.ts); anything else — foreign, unversioned, too long — routes the call
 * normally.
 */
export function preferredAgentOf(ctaPayload: string | undefined): string | undefined {
  const decoded = decodeVoiceCallPayload(ctaPayload);
  return decoded.kind === 'ours' ? decoded.payload.agentId : undefined;
}

/** What routing needs to know of one agent of the team at this moment. */
export interface AgentStanding {
  agentId: string;
  /** Its reported presence, unless it never reported one or the report expired. */
  presence: Presence | undefined;
  /** Whether it has an open event stream on this instance. */
  connected: boolean;
}

/** What a reported presence means for a ringing call (relay/REFERENCE.md "Routing and claims"). */
export interface PresenceRouting {
  /** A `call.incoming` rings the agent. */
  rings: boolean;
  /**
   * The agent is free to take a call now. Only a free agent gets a voice_call head start: an agent
   * who is on a call never holds a call back from free colleagues.
   */
  free: boolean;
}

/** A Record, so that a presence the app adds does not compile until it is routed. */
export const PRESENCE_ROUTING = {
  available: { rings: true, free: true },
  // On one call and it asked to be rung during a call (the app's "Ring me during a call"): it rings
  // with the team, as a second call it may take, but it is busy, so nobody waits for it.
  call_waiting: { rings: true, free: false },
  // On two calls, or on one without call waiting.
  on_call: { rings: false, free: false },
  dnd: { rings: false, free: false },
  // Away from the desk, or finishing the last call's work: nobody rings them or waits for them.
  break: { rings: false, free: false },
  after_call_work: { rings: false, free: false },
} as const satisfies Record<Presence, PresenceRouting>;

/**
 * An agent a call can ring now: its presence rings (available, or call_waiting), or it reported
 * none and has an open stream.
 */
export function isReachable(agent: AgentStanding): boolean {
  return agent.presence === undefined ? agent.connected : PRESENCE_ROUTING[agent.presence].rings;
}

/**
 * The presence a ringing call goes by (relay/REFERENCE.md "Supervisors"): a supervisor joined to a
 * live call is on a call, whatever its app last reported, unless what it reported rings nobody anyway.
 */
export function presenceForRinging(reported: Presence | undefined, joinedToCall: boolean): Presence | undefined {
  if (!joinedToCall) return reported;
  return reported === undefined || PRESENCE_ROUTING[reported].rings ? 'on_call' : reported;
}

/** An agent free to take a call now: available, or with an open stream and no reported presence. */
export function isFree(agent: AgentStanding): boolean {
  return agent.presence === undefined ? agent.connected : PRESENCE_ROUTING[agent.presence].free;
}

export interface RingingContext {
  /** When the relay received the call's webhook: the head start counts from here. */
  receivedAt: number;
  /** The voice_call head start; 0 turns head starts off. */
  releaseMs: number;
  /** The standing of an agent of the team; undefined for an id the team does not have. */
  standingOf: (agentId: string) => AgentStanding | undefined;
}

export interface RoutingDecision {
  audience: Audience;
  /** The voice_call agent nobody waits for: not in the team, or not free now (for the logs). */
  passedOver?: string;
}

export interface RingingDecision extends RoutingDecision {
  audience: RingingAudience;
}

/**
 * Who a `call.incoming` rings: every agent whose presence rings; a call from an agent's voice_call
 * button rings that agent alone until `receivedAt + releaseMs`, then the others (head-starts.ts).
 * When that agent is not in the team or not free (on a call, on do-not-disturb, no stream), nobody
 * waits for it: everyone rings at once — that agent too when it is call_waiting.
 */
export function ringingDecision(ctaPayload: string | undefined, context: RingingContext): RingingDecision {
  const preferred = preferredAgentOf(ctaPayload);
  if (preferred === undefined || context.releaseMs <= 0) return { audience: { kind: 'ringing' } };
  const standing = context.standingOf(preferred);
  if (standing === undefined || !isFree(standing)) return { audience: { kind: 'ringing' }, passedOver: preferred };
  return { audience: { kind: 'ringing', preferredAgentId: preferred, releaseAt: context.receivedAt + context.releaseMs } };
}

/** What this instance knows of the call an event belongs to (nothing, for a message). */
export interface CallFacts {
  /** The agent who claimed the call, if anyone did. */
  owner: string | undefined;
  /** The audience its `call.incoming` was stored with, when this instance saw it (KnownCalls). */
  rang: RingingAudience | undefined;
  /**
   * A bridged call that had a transfer: every agent who was in it or rung for it, while this
   * instance holds it (BridgedCalls.participantsOf), and after its end as its end was told
   * (KnownCalls.participantsOf). Its events go to them all, not to its owner alone.
   */
  participants?: readonly string[];
}

export const NO_CALL_FACTS: CallFacts = { owner: undefined, rang: undefined };

/**
 * The audience an event is stored with (relay/REFERENCE.md "Routing and claims"): messages go to
 * everyone; a transferred call's events to everyone who was in it or rung for it; a claimed call's
 * events to its owner; a `call.incoming` rings (ringingDecision); the
 * later events of an unclaimed call go to everyone it rang, and those of a call this instance never
 * saw ring (an outgoing call before its claim) to everyone. The service's recording or transcript of
 * a call nobody is known to have had goes to everyone, with no head start to wait for: the app keeps
 * it only with a call it knows.
 */
export function audienceFor(event: RelayEvent, call: CallFacts, ringing: RingingContext): RoutingDecision {
  if (!('callId' in event)) return { audience: { kind: 'everyone' } };
  if (call.participants !== undefined) return { audience: { kind: 'agents', agentIds: [...call.participants] } };
  if (call.owner !== undefined) return { audience: { kind: 'agent', agentId: call.owner } };
  if (event.type === 'call.incoming') return ringingDecision(event.ctaPayload, ringing);
  if (event.type === 'call.capture_available') return { audience: { kind: 'everyone' } };
  return { audience: call.rang ?? { kind: 'everyone' } };
}

/**
 * The audience of the `call.claimed` a won claim stores: everyone the call rang, so that they stop
 * ringing; a call that rang nobody (the app claims its own outgoing calls) tells only its owner.
 */
export function claimedAudienceFor(rang: RingingAudience | undefined, winner: string): Audience {
  return rang ?? { kind: 'agent', agentId: winner };
}

/** The answer to a decline (relay/REFERENCE.md "Declines"). */
export interface DeclineVerdict {
  /** Colleagues who may still answer the call: reachable, and they have not declined it too. */
  othersRinging: number;
  /** The colleague who claimed it, if one did. */
  answeredBy?: string;
}

/**
 * A decline of a call that was already claimed. A colleague's: nobody else rings and nothing needs
 * recording (the app must not reject a call that is being answered). The decliner's own claim (it
 * let go of a call it had won, e.g. a run after a crash ending it): the others stopped ringing on
 * that claim, so nobody is left and the decliner rejects it. Undefined while nobody claimed it.
 */
export function declineOfAnsweredCall(owner: string | undefined, decliner: string): DeclineVerdict | undefined {
  if (owner === undefined) return undefined;
  return owner !== decliner ? { othersRinging: 0, answeredBy: owner } : { othersRinging: 0 };
}

/**
 * The verdict once the decline is recorded: how many colleagues may still answer. The app rejects
 * the call at the gateway only when this is 0, so one agent's Decline never takes a call from a team.
 */
export function declineVerdict(decliner: string, declined: readonly string[], team: readonly AgentStanding[]): DeclineVerdict {
  const out = new Set(declined);
  const othersRinging = team.filter((agent) => agent.agentId !== decliner && !out.has(agent.agentId) && isReachable(agent)).length;
  return { othersRinging };
}

/** Where a voice_call's head start stands for the agents who are not the preferred one. */
export type HeadStartState = 'waiting' | 'released' | 'dropped';

export type DeliveryDecision = 'deliver' | 'skip' | 'hold';

/**
 * Whether one agent session gets one event now. `presence` is asked only for a `call.incoming`.
 * `headStart` is the state of the call's voice_call
 * head start, needed only when the audience names a preferred agent that is not this one.
 *
 * - `everyone`: every session.
 * - `agent`: the claimed call's owner only.
 * - `agents`: the agents named (a bridged call that had a transfer: everyone who was in it or rung for it).
 * - `ringing`: the `call.incoming` rings sessions whose agent's presence rings (available or
 *   call_waiting; no reported presence counts as available: the stream is open); the call's later
 *   unclaimed events go to every
 *   session, since telling an agent who never rang that a call ended is harmless and not telling
 *   one who rang leaves it ringing. While a preferred agent has its head start, the others hold the
 *   call's events; when the head start ends they get them (released) or never (claimed or ended).
 */
export function decideDelivery(stored: StoredEvent, agentId: string, presence: () => Presence | undefined, headStart: HeadStartState | undefined): DeliveryDecision {
  const { audience } = stored;
  switch (audience.kind) {
    case 'everyone':
      return 'deliver';
    case 'agent':
      return audience.agentId === agentId ? 'deliver' : 'skip';
    case 'agents':
      return audience.agentIds.includes(agentId) ? 'deliver' : 'skip';
    case 'ringing': {
      if (hasHeadStart(audience) && audience.preferredAgentId !== agentId) {
        const state = headStart ?? 'waiting';
        if (state === 'waiting') return 'hold';
        if (state === 'dropped') return 'skip';
      }
      if (stored.event.type !== 'call.incoming') return 'deliver';
      return PRESENCE_ROUTING[presence() ?? 'available'].rings ? 'deliver' : 'skip';
    }
  }
}

/** True when the audience gives a preferred agent a head start that other sessions must wait for. */
export function hasHeadStart(audience: Audience): audience is RingingAudience & { preferredAgentId: string; releaseAt: number } {
  return audience.kind === 'ringing' && audience.preferredAgentId !== undefined && audience.releaseAt !== undefined;
}

/**
 * What this instance knows about recent calls from the events it has seen stored: the ringing
 * audience of each incoming call, so that the call's later events reach everyone it rang (or would
 * ring), and the owner of each claimed call, so that its events need no round trip to the backend
 * (a claim is final, so a remembered owner is never wrong; an unknown one is asked for). Entries
 * live as long as a tombstone: an unclaimed call rings for a minute at most, and a claim lasts 1 h.
 */
export class KnownCalls {
  private readonly ringing = new Map<string, { audience: RingingAudience; expiresAt: number }>();
  private readonly owners = new Map<string, { agentId: string; expiresAt: number }>();
  /**
   * The agents a transferred bridged call's end was told to: the bridge forgets the call at its end,
   * and what the service sends after it (its recording, its transcript) goes to the same agents.
   */
  private readonly endedWith = new Map<string, { agentIds: readonly string[]; expiresAt: number }>();
  /** An outgoing call's customer, as its first status that names them says (the callback list's "answered"). */
  private readonly recipients = new Map<string, { customer: CallbackCustomer; expiresAt: number }>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly ttlMs = TOMBSTONE_TTL_MS,
    private readonly maxCalls = 200_000,
  ) {}

  observe(stored: StoredEvent): void {
    const { event } = stored;
    if (event.type === 'call.incoming' && stored.audience.kind === 'ringing') this.remember(this.ringing, event.callId, { audience: stored.audience });
    if (event.type === 'call.claimed') this.claimed(event.callId, event.agentId);
    if (leavesTombstone(event) && 'callId' in event && stored.audience.kind === 'agents') this.remember<{ agentIds: readonly string[] }>(this.endedWith, event.callId, { agentIds: stored.audience.agentIds });
    const recipient = recipientOf(event);
    if (recipient !== undefined && 'callId' in event) this.remember(this.recipients, event.callId, { customer: recipient });
  }

  claimed(callId: string, agentId: string): void {
    this.remember(this.owners, callId, { agentId });
  }

  ringingAudienceOf(callId: string): RingingAudience | undefined {
    return this.lookUp(this.ringing, callId)?.audience;
  }

  ownerOf(callId: string): string | undefined {
    return this.lookUp(this.owners, callId)?.agentId;
  }

  /** Everyone in or rung for a transferred bridged call that has ended, as its end was told. */
  participantsOf(callId: string): readonly string[] | undefined {
    return this.lookUp(this.endedWith, callId)?.agentIds;
  }

  /** The customer of an outgoing call, if a status of it named them. */
  customerOf(callId: string): CallbackCustomer | undefined {
    return this.lookUp(this.recipients, callId)?.customer;
  }

  private remember<T>(map: Map<string, T & { expiresAt: number }>, callId: string, value: T): void {
    if (map.has(callId)) return;
    const now = this.now();
    // Every entry lives equally long, so insertion order is expiry order.
    for (const [key, entry] of map) {
      if (entry.expiresAt > now) break;
      map.delete(key);
    }
    map.set(callId, { ...value, expiresAt: now + this.ttlMs });
    if (map.size > this.maxCalls) {
      const oldest = map.keys().next();
      if (!oldest.done) map.delete(oldest.value);
    }
  }

  private lookUp<T extends { expiresAt: number }>(map: Map<string, T>, callId: string): T | undefined {
    const entry = map.get(callId);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      map.delete(callId);
      return undefined;
    }
    return entry;
  }
}
