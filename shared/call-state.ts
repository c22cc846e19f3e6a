// The call state machine: one pure reducer (style.md 5). Timers and I/O live in the CallCoordinator.
//
// incoming: ringing → answering → connecting → active → ended
// outgoing: dialing → calling → remote_ringing → connecting → active → ended
//
// protocol.md: duplicates happen, order is not guaranteed (a terminate can arrive before its
// connect) and stale events arrive late. So every transition is idempotent, an ended call is a
// tombstone that nothing revives, connects older than STALE_CONNECT_MS are dropped, and events for
// an outgoing call that arrive before its id is known wait in `pending` until it is.
import type { CallErrorInfo } from './events';
import { assertNever } from './result';

export const RING_TIMEOUT_MS = 60_000;
export const DIAL_TIMEOUT_MS = 60_000;
export const STALE_CONNECT_MS = 60_000;
/** How long an event for an unknown call id waits for an initiate response that may carry it. */
export const PENDING_TTL_MS = 60_000;
/** How long ended calls and tombstones are kept. */
export const TOMBSTONE_TTL_MS = 60 * 60_000;

export type Direction = 'incoming' | 'outgoing';

export type EndReason =
  | { kind: 'completed'; by: 'agent' | 'customer' }
  | { kind: 'declined' } // the agent declined an incoming call
  | { kind: 'missed' } // an incoming call nobody answered (timeout, or the customer gave up)
  | { kind: 'cancelled' } // the agent hung up an outgoing call before it was answered
  | { kind: 'no_answer' } // an outgoing call the customer did not answer
  | { kind: 'rejected' } // the customer rejected an outgoing call
  | { kind: 'failed'; code: string; message: string } // gateway code (e.g. "138006") or a local one
  | { kind: 'answered_elsewhere' };
export type EndKind = EndReason['kind'];

export interface Peer {
  /** Digits with country code (gateway form); absent when only a business-scoped user id is known. */
  number?: string;
  userId?: string;
  name?: string;
}

interface CallCommon {
  /** Stable id in this app: `in:<callId>` for incoming calls, generated for outgoing ones. */
  localId: string;
  callId?: string;
  peer: Peer;
  createdAt: number;
  ctaPayload?: string;
}
interface IncomingCommon extends CallCommon {
  direction: 'incoming';
  callId: string;
  offerSdp: string;
}
interface OutgoingCommon extends CallCommon {
  direction: 'outgoing';
}

export type CallState =
  | (IncomingCommon & { phase: 'ringing'; ringsUntil: number })
  | (IncomingCommon & { phase: 'answering'; answeredAt: number })
  | (OutgoingCommon & { phase: 'dialing' })
  | (OutgoingCommon & { phase: 'calling'; callId: string; dialsUntil: number })
  | (OutgoingCommon & { phase: 'remote_ringing'; callId: string; dialsUntil: number })
  | ((IncomingCommon | (OutgoingCommon & { callId: string; answerSdp: string })) & { phase: 'connecting'; answeredAt: number })
  | ((IncomingCommon | (OutgoingCommon & { callId: string; answerSdp: string })) & {
      phase: 'active';
      answeredAt: number;
      connectedAt: number;
    })
  | ((IncomingCommon | OutgoingCommon) & {
      phase: 'ended';
      end: EndReason;
      endedAt: number;
      connectedAt?: number;
      /** Talk time in seconds: the gateway's duration when it sent one, else measured here. */
      durationSec: number;
    });
export type CallPhase = CallState['phase'];
export type EndedCall = Extract<CallState, { phase: 'ended' }>;

export const LIVE_PHASES: ReadonlySet<CallPhase> = new Set(['ringing', 'answering', 'dialing', 'calling', 'remote_ringing', 'connecting', 'active']);
export const isLive = (c: CallState): boolean => c.phase !== 'ended';

export interface LocalError {
  code: string;
  message: string;
}

/** Everything that can happen to a call. `at` is the local clock (unix ms) when it was applied. */
export type CallEvent =
  // from the relay
  | { type: 'remote.incoming'; at: number; callId: string; peer: Peer; offerSdp: string; timestamp: number; ctaPayload?: string }
  | { type: 'remote.answered'; at: number; callId: string; answerSdp: string; timestamp: number }
  | { type: 'remote.status'; at: number; callId: string; status: 'RINGING' | 'ACCEPTED' | 'REJECTED'; timestamp: number }
  | {
      type: 'remote.terminated';
      at: number;
      callId: string;
      status: 'COMPLETED' | 'FAILED';
      timestamp: number;
      durationSec?: number;
      errors?: CallErrorInfo[];
    }
  | { type: 'remote.claimed'; at: number; callId: string }
  // from the agent, the gateway's answers and the media engine
  | { type: 'local.dial'; at: number; localId: string; peer: Peer }
  | { type: 'local.initiate_ok'; at: number; localId: string; callId: string }
  | { type: 'local.initiate_failed'; at: number; localId: string; error: LocalError }
  | { type: 'local.answer'; at: number; localId: string }
  | { type: 'local.accept_ok'; at: number; localId: string }
  | { type: 'local.accept_failed'; at: number; localId: string; error: LocalError }
  /** The relay gave the call to another agent (its claim answered 409): no accept may be sent. */
  | { type: 'local.claim_lost'; at: number; localId: string }
  | { type: 'local.decline'; at: number; localId: string }
  | { type: 'local.hangup'; at: number; localId: string }
  | { type: 'local.media_connected'; at: number; localId: string }
  | { type: 'local.media_failed'; at: number; localId: string; error: LocalError }
  | { type: 'local.ring_timeout'; at: number; localId: string }
  | { type: 'local.dial_timeout'; at: number; localId: string };

export type RemoteCallEvent = Extract<CallEvent, { callId: string; type: `remote.${string}` }>;
export type LocalCallEvent = Exclude<CallEvent, RemoteCallEvent>;

export const incomingLocalId = (callId: string): string => `in:${callId}`;

function end(call: CallState, reason: EndReason, at: number, durationSec?: number): EndedCall {
  const connectedAt = call.phase === 'active' ? call.connectedAt : undefined;
  const measured = connectedAt !== undefined ? Math.max(0, Math.round((at - connectedAt) / 1000)) : 0;
  const base: CallCommon = { localId: call.localId, peer: call.peer, createdAt: call.createdAt };
  if (call.callId !== undefined) base.callId = call.callId;
  if (call.ctaPayload !== undefined) base.ctaPayload = call.ctaPayload;
  const tail = { phase: 'ended' as const, end: reason, endedAt: at, durationSec: durationSec ?? measured, ...(connectedAt !== undefined ? { connectedAt } : {}) };
  return call.direction === 'incoming'
    ? { ...base, direction: 'incoming', callId: call.callId, offerSdp: call.offerSdp, ...tail }
    : { ...base, direction: 'outgoing', ...tail };
}

function terminateReason(call: CallState, ev: Extract<CallEvent, { type: 'remote.terminated' }>): EndReason {
  const first = ev.errors?.[0];
  if (ev.status === 'FAILED' || first) {
    return { kind: 'failed', code: first ? String(first.code) : 'FAILED', message: first?.message ?? 'The call failed' };
  }
  // protocol.md: a terminate carries a duration only when the call was answered. A call that was
  // still ringing here but talked for a while was taken by someone else (a colleague whose claim
  // never reached us, another device), not missed. One this agent was answering was answered by
  // this agent's accept, whose response had not come back yet. An outgoing one was answered
  // although its connect was lost or overtaken.
  const answered = ev.durationSec !== undefined && ev.durationSec > 0;
  switch (call.phase) {
    case 'ringing':
      return answered ? { kind: 'answered_elsewhere' } : { kind: 'missed' };
    case 'answering':
      return answered ? { kind: 'completed', by: 'customer' } : { kind: 'missed' };
    case 'dialing':
    case 'calling':
    case 'remote_ringing':
      return answered ? { kind: 'completed', by: 'customer' } : { kind: 'no_answer' };
    case 'connecting':
    case 'active':
    case 'ended':
      return { kind: 'completed', by: 'customer' };
    default:
      return assertNever(call, 'call');
  }
}

/**
 * The reducer for one call. `undefined` means "no such call"; it returns the state unchanged
 * (the same object) when the event does not apply, so callers can tell a no-op by identity.
 */
export function reduceCall(call: CallState | undefined, ev: CallEvent): CallState | undefined {
  if (call === undefined) {
    switch (ev.type) {
      case 'remote.incoming':
        if (ev.at - ev.timestamp > STALE_CONNECT_MS) return undefined;
        return {
          phase: 'ringing',
          direction: 'incoming',
          localId: incomingLocalId(ev.callId),
          callId: ev.callId,
          peer: ev.peer,
          offerSdp: ev.offerSdp,
          createdAt: ev.at,
          ringsUntil: Math.min(ev.timestamp, ev.at) + RING_TIMEOUT_MS,
          ...(ev.ctaPayload !== undefined ? { ctaPayload: ev.ctaPayload } : {}),
        };
      case 'local.dial':
        return { phase: 'dialing', direction: 'outgoing', localId: ev.localId, peer: ev.peer, createdAt: ev.at };
      default:
        return undefined;
    }
  }

  if (call.phase === 'ended') {
    // A tombstone: nothing revives it. A late terminate may still tell the real duration.
    if (ev.type === 'remote.terminated' && ev.durationSec !== undefined && call.durationSec !== ev.durationSec && call.connectedAt !== undefined) {
      return { ...call, durationSec: ev.durationSec };
    }
    // protocol.md: "REJECTED is followed by a terminate", but order is not guaranteed; when the
    // terminate came first the call looked unanswered. The customer's rejection is the truer record.
    if (ev.type === 'remote.status' && ev.status === 'REJECTED' && call.direction === 'outgoing' && call.end.kind === 'no_answer') {
      return { ...call, end: { kind: 'rejected' } };
    }
    return call;
  }

  switch (ev.type) {
    case 'remote.incoming':
    case 'local.dial':
      return call; // duplicate
    case 'remote.terminated': {
      const reason = terminateReason(call, ev);
      // A colleague's talk time is not this agent's.
      return end(call, reason, ev.at, reason.kind === 'answered_elsewhere' ? undefined : ev.durationSec);
    }
    case 'remote.claimed':
      // Only a ringing call: the claim event carries no agent, and the claimant itself is already
      // answering when its own claim comes back from the relay.
      return call.phase === 'ringing' ? end(call, { kind: 'answered_elsewhere' }, ev.at) : call;
    case 'remote.status':
      if (call.direction !== 'outgoing') return call;
      if (ev.status === 'REJECTED') {
        return call.phase === 'calling' || call.phase === 'remote_ringing' || call.phase === 'dialing' ? end(call, { kind: 'rejected' }, ev.at) : call;
      }
      if (ev.status === 'RINGING' && call.phase === 'calling') return { ...call, phase: 'remote_ringing' };
      return call; // ACCEPTED: media is never gated on it (protocol.md)
    case 'remote.answered':
      if (call.phase === 'calling' || call.phase === 'remote_ringing') {
        return { ...call, phase: 'connecting', answerSdp: ev.answerSdp, answeredAt: ev.at };
      }
      return call;
    case 'local.initiate_ok':
      if (call.phase !== 'dialing') return call;
      return { ...call, phase: 'calling', callId: ev.callId, dialsUntil: ev.at + DIAL_TIMEOUT_MS };
    case 'local.initiate_failed':
      return call.phase === 'dialing' ? end(call, { kind: 'failed', ...ev.error }, ev.at) : call;
    case 'local.answer':
      return call.phase === 'ringing' ? { ...call, phase: 'answering', answeredAt: ev.at } : call;
    case 'local.accept_ok':
      return call.phase === 'answering' ? { ...call, phase: 'connecting' } : call;
    case 'local.accept_failed':
      // The gateway refused the answer: whatever media did, the call is over. Outgoing calls are never accepted.
      return call.direction === 'incoming' && (call.phase === 'answering' || call.phase === 'connecting' || call.phase === 'active')
        ? end(call, { kind: 'failed', ...ev.error }, ev.at)
        : call;
    case 'local.claim_lost':
      // Before the accept only: once the gateway has this agent's answer, the call is this agent's.
      return call.phase === 'ringing' || call.phase === 'answering' ? end(call, { kind: 'answered_elsewhere' }, ev.at) : call;
    case 'local.decline':
      return call.phase === 'ringing' ? end(call, { kind: 'declined' }, ev.at) : call;
    case 'local.hangup':
      switch (call.phase) {
        case 'ringing':
          return end(call, { kind: 'declined' }, ev.at);
        case 'dialing':
        case 'calling':
        case 'remote_ringing':
          return end(call, { kind: 'cancelled' }, ev.at);
        case 'answering':
        case 'connecting':
        case 'active':
          return end(call, { kind: 'completed', by: 'agent' }, ev.at);
        default:
          return assertNever(call, 'call');
      }
    case 'local.media_connected':
      // Media may connect before the accept response returns: the gateway had the answer already.
      if (call.phase === 'connecting' || call.phase === 'answering') {
        return { ...call, phase: 'active', connectedAt: ev.at };
      }
      return call;
    case 'local.media_failed':
      return call.phase === 'answering' || call.phase === 'connecting' || call.phase === 'active'
        ? end(call, { kind: 'failed', ...ev.error }, ev.at)
        : call;
    case 'local.ring_timeout':
      return call.phase === 'ringing' ? end(call, { kind: 'missed' }, ev.at) : call;
    case 'local.dial_timeout':
      return call.phase === 'calling' || call.phase === 'remote_ringing' ? end(call, { kind: 'no_answer' }, ev.at) : call;
    default:
      return assertNever(ev, 'event');
  }
}

/** All calls of one agent, with the bookkeeping that makes delivery order not matter. */
export interface CallBook {
  calls: Readonly<Record<string, CallState>>;
  /** gateway call id → localId */
  byCallId: Readonly<Record<string, string>>;
  /** gateway call id → when it ended, for calls this agent never saw begin (terminate before connect). */
  tombstones: Readonly<Record<string, number>>;
  /** Events for call ids not known yet: an outgoing call's events can overtake its initiate response. */
  pending: Readonly<Record<string, readonly RemoteCallEvent[]>>;
}

export const emptyBook = (): CallBook => ({ calls: {}, byCallId: {}, tombstones: {}, pending: {} });

export interface BookChange {
  book: CallBook;
  /** The calls whose state changed, oldest change first. */
  changed: CallState[];
}

const isRemote = (ev: CallEvent): ev is RemoteCallEvent => ev.type.startsWith('remote.');

/** The same delivery twice (retries, several subscribers): equal in everything but when it was applied. */
const sameDelivery = (a: RemoteCallEvent, b: RemoteCallEvent): boolean => JSON.stringify({ ...a, at: 0 }) === JSON.stringify({ ...b, at: 0 });

export function applyCallEvent(book: CallBook, ev: CallEvent): BookChange {
  if (isRemote(ev)) {
    const localId = book.byCallId[ev.callId];
    if (localId === undefined) {
      const queued = book.pending[ev.callId];
      if (ev.type === 'remote.incoming') {
        // A tombstone drops a late connect, except while the terminate that made it still waits for
        // its call: then the call is opened and what waited is replayed at once, so it lands in the
        // history as it would have in order (missed, answered elsewhere…) without ever ringing.
        if (book.tombstones[ev.callId] !== undefined && queued === undefined) return { book, changed: [] };
        const localIdIn = incomingLocalId(ev.callId);
        const { [ev.callId]: _tomb, ...tombstones } = book.tombstones;
        const opened = applyToCall({ ...book, tombstones }, localIdIn, ev);
        if (opened.changed.length === 0) return { book, changed: [] };
        // A claim can overtake the connect it claims (order is not guaranteed, protocol.md).
        return finalOnly(replayPending(opened, ev.callId, localIdIn, ev.at));
      }
      // A tombstone drops what follows a terminate, except while that terminate itself still waits.
      if (book.tombstones[ev.callId] !== undefined && queued === undefined) return { book, changed: [] };
      if (queued?.some((q) => sameDelivery(q, ev))) return { book, changed: [] };
      const pending = { ...book.pending, [ev.callId]: [...(queued ?? []), ev] };
      const tombstones = ev.type === 'remote.terminated' ? { ...book.tombstones, [ev.callId]: ev.at } : book.tombstones;
      return { book: { ...book, pending, tombstones }, changed: [] };
    }
    return applyToCall(book, localId, ev);
  }
  const first = applyToCall(book, ev.localId, ev);
  if (ev.type !== 'local.initiate_ok') return first;
  // Replay what arrived for this call id before we knew it was ours.
  return finalOnly(replayPending(first, ev.callId, ev.localId, ev.at));
}

/** One change per call, its last: a call opened and ended by one delivery is reported ended, never ringing. */
function finalOnly(change: BookChange): BookChange {
  const last = new Map<string, CallState>();
  for (const call of change.changed) {
    last.delete(call.localId);
    last.set(call.localId, call);
  }
  return { book: change.book, changed: [...last.values()] };
}

function replayPending(first: BookChange, callId: string, localId: string, at: number): BookChange {
  const waiting = first.book.pending[callId];
  if (!waiting) return first;
  const { [callId]: _drop, ...pending } = first.book.pending;
  const { [callId]: _tomb, ...tombstones } = first.book.tombstones;
  let acc: BookChange = { book: { ...first.book, pending, tombstones }, changed: first.changed };
  for (const queued of waiting) {
    const next = applyToCall(acc.book, localId, { ...queued, at });
    acc = { book: next.book, changed: [...acc.changed, ...next.changed] };
  }
  return acc;
}

function applyToCall(book: CallBook, localId: string, ev: CallEvent): BookChange {
  const before = book.calls[localId];
  const after = reduceCall(before, ev);
  if (after === before || after === undefined) return { book, changed: [] };
  const calls = { ...book.calls, [localId]: after };
  const byCallId = after.callId !== undefined && book.byCallId[after.callId] !== localId ? { ...book.byCallId, [after.callId]: localId } : book.byCallId;
  return { book: { ...book, calls, byCallId }, changed: [after] };
}

/** Drops ended calls, tombstones and pending events past their time. */
export function pruneBook(book: CallBook, now: number): CallBook {
  const calls: Record<string, CallState> = {};
  const byCallId: Record<string, string> = {};
  const tombstones: Record<string, number> = {};
  for (const [id, call] of Object.entries(book.calls)) {
    if (call.phase === 'ended' && now - call.endedAt > TOMBSTONE_TTL_MS) {
      if (call.callId !== undefined) tombstones[call.callId] = call.endedAt;
      continue;
    }
    calls[id] = call;
    if (call.callId !== undefined) byCallId[call.callId] = id;
  }
  for (const [id, at] of Object.entries(book.tombstones)) if (now - at <= TOMBSTONE_TTL_MS && tombstones[id] === undefined) tombstones[id] = at;
  const pending: Record<string, RemoteCallEvent[]> = {};
  for (const [id, events] of Object.entries(book.pending)) {
    const fresh = events.filter((e) => now - e.at <= PENDING_TTL_MS);
    if (fresh.length > 0) pending[id] = fresh;
  }
  return { calls, byCallId, tombstones, pending };
}

export const liveCalls = (book: CallBook): CallState[] => Object.values(book.calls).filter(isLive);
