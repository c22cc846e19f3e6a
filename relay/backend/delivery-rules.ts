// The delivery rules every backend applies in the same way (protocol.md "Delivery rules"), so that a
// team served by one memory relay or by several Redis-backed relays drops exactly the same events.
import { STALE_CONNECT_MS, TOMBSTONE_TTL_MS } from '../../shared/call-state';
import type { RelayEvent } from '../../shared/events';
import { assertNever } from '../../shared/result';
import type { Audience } from './types';

/** A claim lives as long as the call's tombstone: after that, nobody asks who answered it. */
export const CLAIM_TTL_MS = TOMBSTONE_TTL_MS;

export type ConnectEvent = Extract<RelayEvent, { type: 'call.incoming' | 'call.answered' }>;

/** The events that make a call ring or connect: only these are blocked by tombstones and age. */
export function isConnect(event: RelayEvent): event is ConnectEvent {
  return event.type === 'call.incoming' || event.type === 'call.answered';
}

/** protocol.md: connects older than about 60 s are worthless (the caller has given up or been told "Not answered"). */
export function isStaleConnect(event: RelayEvent, now: number): boolean {
  return isConnect(event) && now - event.timestamp > STALE_CONNECT_MS;
}

/**
 * The events after which a call is over for the team: the service's terminate, and the bridge losing
 * the call (its media is gone; a late or repeated connect must never ring it again).
 */
export function leavesTombstone(event: RelayEvent): boolean {
  // An agent not back while colleagues keep the call (`goesOn`): the call is not over.
  return event.type === 'call.terminated' || (event.type === 'call.bridge_failed' && event.goesOn !== true);
}

/**
 * The identity of an event for de-duplication: the service retries webhooks for days and several
 * subscribers may forward the same one, so the same (call, kind[, status]) or (message, status) is
 * stored once. A call ends once: `terminated` is keyed without its COMPLETED/FAILED status.
 */
export function dedupKeyOf(event: RelayEvent, audience?: Audience): string {
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
    // Every instance that sees the node go tells the call's agents; they hear it once.
    // An agent not back while the call goes on is one word to that agent, not the call's end: one
    // per agent told and time it was not back (it may be asked in again, and go again).
    case 'call.bridge_failed':
      return event.goesOn === true ? `call:${event.callId}:bridge_failed:goes_on:${audienceKeyOf(audience)}:${event.timestamp}` : `call:${event.callId}:bridge_failed`;
    // One ring per leg of a transfer; one word of its outcome per agent and state.
    case 'call.transfer_ring':
      return `call:${event.callId}:transfer:${event.transferId}:ring:${event.legId}`;
    case 'call.transfer_update':
      return `call:${event.callId}:transfer:${event.transferId}:${event.agentId}:${event.state}`;
    // The service's recording and its transcript of a call are each ready once.
    case 'call.capture_available':
      return `call:${event.callId}:capture:${event.kind}`;
    // Each start and stop of the team's recording is its own word (its time, later than the last
    // one's), to the members then or to a member who joined while it records.
    case 'call.recording':
      return `call:${event.callId}:recording:${event.recording ? 'on' : 'off'}:${audienceKeyOf(audience)}:${event.timestamp}`;
    // Each change of a supervisor's join is told once to each audience: the supervisor and the
    // agents may hear one change in different words. One instance tells them, at times of its own.
    case 'call.monitor':
      return `call:${event.callId}:monitor:${event.supervisorId}:${event.mode}:${audienceKeyOf(audience)}:${event.timestamp}`;
    case 'message.inbound':
      return `msg:${event.messageId}:inbound`;
    case 'message.status':
      return `msg:${event.messageId}:${event.status}`;
    default:
      return assertNever(event, 'relay event');
  }
}

/** Whom an event is for, as a key: the agents it names, or its kind. */
function audienceKeyOf(audience: Audience | undefined): string {
  if (audience?.kind === 'agent') return audience.agentId;
  if (audience?.kind === 'agents') return [...audience.agentIds].sort().join(',');
  return audience?.kind ?? 'everyone';
}
