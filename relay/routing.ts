// Who gets which event (relay/README.md "Routing and claims"). The audience is fixed when an event
// is stored (backend/types.ts), so every relay instance and every replay agrees; what depends on
// the moment of delivery — presence, a voice_call head start — is decided per agent session here.
import { TOMBSTONE_TTL_MS } from '../shared/call-state';
import type { RelayEvent } from '../shared/events';
import type { Audience, Presence, StoredEvent } from './backend/types';

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
 * (protocol.md "voice_call button"). The app writes `{"v":1,"agentId":"…"}`; anything else routes
 * the call normally.
 */
export function preferredAgentOf(ctaPayload: string | undefined): string | undefined {
  // protocol.md caps the payload at 512 characters; a longer one was not written by the app.
  if (ctaPayload === undefined || ctaPayload.length > 1024) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(ctaPayload);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const agentId = (parsed as Record<string, unknown>).agentId;
  return typeof agentId === 'string' && agentId !== '' ? agentId : undefined;
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
 * - `ringing`: the `call.incoming` rings sessions whose agent is available (no reported presence
 *   counts as available: the stream is open); the call's later unclaimed events go to every
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
    case 'ringing': {
      if (hasHeadStart(audience) && audience.preferredAgentId !== agentId) {
        const state = headStart ?? 'waiting';
        if (state === 'waiting') return 'hold';
        if (state === 'dropped') return 'skip';
      }
      if (stored.event.type !== 'call.incoming') return 'deliver';
      return (presence() ?? 'available') === 'available' ? 'deliver' : 'skip';
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

  constructor(
    private readonly now: () => number = Date.now,
    private readonly ttlMs = TOMBSTONE_TTL_MS,
    private readonly maxCalls = 200_000,
  ) {}

  observe(stored: StoredEvent): void {
    const { event } = stored;
    if (event.type === 'call.incoming' && stored.audience.kind === 'ringing') this.remember(this.ringing, event.callId, { audience: stored.audience });
    if (event.type === 'call.claimed') this.claimed(event.callId, event.agentId);
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
