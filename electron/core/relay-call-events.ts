// The relay's events (shared/events.ts) as the call reducer's events: what the coordinator feeds it
// for each envelope. Messaging events are not the coordinator's business.
import type { CallEvent, Peer } from '../../shared/call-state';
import type { RelayEnvelope } from '../../shared/events';
import { assertNever } from '../../shared/result';

/**
 * The call event of an envelope applied at `at`; undefined for events that are not about calls.
 * `selfAgentId` is this agent's id on the relay, once known: whose claim it is matters to a call
 * being answered here. `joinedCallId` is a colleague's call this agent is joined to as a
 * supervisor, none of its own (monitoring.ts).
 */
export function callEventOf(envelope: RelayEnvelope, at: number, selfAgentId: string | undefined, joinedCallId?: string): CallEvent | undefined {
  const e = envelope.event;
  switch (e.type) {
    case 'call.incoming':
      return {
        type: 'remote.incoming',
        at,
        callId: e.callId,
        peer: peerOf(e),
        offerSdp: e.sdp,
        timestamp: e.timestamp,
        ...(e.ctaPayload !== undefined ? { ctaPayload: e.ctaPayload } : {}),
        ...(e.bridged === true ? { bridged: true } : {}),
      };
    case 'call.transfer_ring':
      // `sdp` is this agent's own leg on the bridge (bridged-calls.ts keeps its leg id for the answer).
      return { type: 'remote.transfer_ring', at, callId: e.callId, transferId: e.transferId, kind: e.kind, by: e.by, peer: peerOf(e), offerSdp: e.sdp, timestamp: e.timestamp };
    case 'call.transfer_update':
      // Told to one agent in its own words: another's are not this agent's business. While this
      // agent's id is not known, it is taken as its own (the relay sends an agent only its own).
      if (selfAgentId !== undefined && e.agentId !== selfAgentId) return undefined;
      return {
        type: 'remote.transfer',
        at,
        callId: e.callId,
        transferId: e.transferId,
        kind: e.kind,
        state: e.state,
        ...(e.colleague !== undefined ? { colleague: e.colleague } : {}),
        ...(e.reason !== undefined ? { reason: e.reason } : {}),
      };
    case 'call.answered':
      return { type: 'remote.answered', at, callId: e.callId, answerSdp: e.sdp, timestamp: e.timestamp };
    case 'call.status':
      return { type: 'remote.status', at, callId: e.callId, status: e.status, timestamp: e.timestamp, ...(e.opaque !== undefined ? { opaque: e.opaque } : {}) };
    case 'call.terminated':
      return {
        type: 'remote.terminated',
        at,
        callId: e.callId,
        status: e.status,
        timestamp: e.timestamp,
        ...(e.durationSec !== undefined ? { durationSec: e.durationSec } : {}),
        ...(e.errors !== undefined ? { errors: e.errors } : {}),
        ...(e.opaque !== undefined ? { opaque: e.opaque } : {}),
      };
    case 'call.claimed':
      // Unknown (no `mine`) while this agent's own id is.
      return { type: 'remote.claimed', at, callId: e.callId, ...(selfAgentId !== undefined ? { mine: e.agentId === selfAgentId } : {}) };
    case 'call.bridge_failed':
      // agent_not_back: `goesOn` says colleagues keep the customer (nothing is owed), `awaySec` the relay's window.
      return {
        type: 'remote.bridge_failed',
        at,
        callId: e.callId,
        reason: e.reason,
        ...(e.goesOn === true ? { goesOn: true } : {}),
        ...(e.awaySec !== undefined ? { awaySec: e.awaySec } : {}),
      };
    case 'call.recording':
      // A joined colleague's call records: monitoring.ts tells the windows. Left to the reducer it
      // would wait for a call of that id that never comes.
      if (e.callId === joinedCallId) return undefined;
      return { type: 'remote.recording', at, callId: e.callId, recording: e.recording, timestamp: e.timestamp };
    case 'call.monitor':
      // This agent's own join of a colleague's call (it is a supervisor) is no call of its own:
      // monitoring.ts follows it. A call this agent is in hears of the supervisors who join it.
      if (selfAgentId !== undefined && e.supervisorId === selfAgentId) return undefined;
      return { type: 'remote.monitor', at, callId: e.callId, supervisorId: e.supervisorId, name: e.name, mode: e.mode, timestamp: e.timestamp };
    case 'message.inbound':
    case 'message.status':
      return undefined;
    case 'call.capture_available':
      // After the call's end, for its recent-calls entry (capture-keeper.ts): never the reducer's.
      return undefined;
    default:
      return assertNever(e, 'relay event');
  }
}

/** The customer as a relay event names them. */
function peerOf(e: { from?: string | undefined; fromUserId?: string | undefined; name?: string | undefined }): Peer {
  const peer: Peer = {};
  if (e.from !== undefined) peer.number = e.from;
  if (e.fromUserId !== undefined) peer.userId = e.fromUserId;
  if (e.name !== undefined) peer.name = e.name;
  return peer;
}
