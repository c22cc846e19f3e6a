// The relay's events (shared/events.ts) as the call reducer's events: what the coordinator feeds it
// for each envelope. Messaging events are not the coordinator's business.
import type { CallEvent, Peer } from '../../shared/call-state';
import type { RelayEnvelope } from '../../shared/events';
import { assertNever } from '../../shared/result';

/**
 * The call event of an envelope applied at `at`; undefined for events that are not about calls.
 * `selfAgentId` is this agent's id on the relay, once known: whose claim it is matters to a call
 * being answered here.
 */
export function callEventOf(envelope: RelayEnvelope, at: number, selfAgentId: string | undefined): CallEvent | undefined {
  const e = envelope.event;
  switch (e.type) {
    case 'call.incoming': {
      const peer: Peer = {};
      if (e.from !== undefined) peer.number = e.from;
      if (e.fromUserId !== undefined) peer.userId = e.fromUserId;
      if (e.name !== undefined) peer.name = e.name;
      return {
        type: 'remote.incoming',
        at,
        callId: e.callId,
        peer,
        offerSdp: e.sdp,
        timestamp: e.timestamp,
        ...(e.ctaPayload !== undefined ? { ctaPayload: e.ctaPayload } : {}),
      };
    }
    case 'call.answered':
      return { type: 'remote.answered', at, callId: e.callId, answerSdp: e.sdp, timestamp: e.timestamp };
    case 'call.status':
      return { type: 'remote.status', at, callId: e.callId, status: e.status, timestamp: e.timestamp };
    case 'call.terminated':
      return {
        type: 'remote.terminated',
        at,
        callId: e.callId,
        status: e.status,
        timestamp: e.timestamp,
        ...(e.durationSec !== undefined ? { durationSec: e.durationSec } : {}),
        ...(e.errors !== undefined ? { errors: e.errors } : {}),
      };
    case 'call.claimed':
      // Unknown (no `mine`) while this agent's own id is.
      return { type: 'remote.claimed', at, callId: e.callId, ...(selfAgentId !== undefined ? { mine: e.agentId === selfAgentId } : {}) };
    case 'call.bridge_failed':
      return { type: 'remote.bridge_failed', at, callId: e.callId, reason: e.reason };
    case 'message.inbound':
    case 'message.status':
      return undefined;
    default:
      return assertNever(e, 'relay event');
  }
}
