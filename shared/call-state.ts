// The call state machine: one pure reducer that decides (style.md 5, ARCHITECTURE.md "Decisions
// worth keeping"). `reduceCall(state, event) → { state, effects }`: the effects say what must happen
// (claim the call on the relay, ask for a decline verdict, accept, initiate, reject or terminate,
// start or cancel a deadline, answer the command that waits); the CallCoordinator only runs them
// and feeds their outcomes back as events.
//
// incoming: ringing → answering → connecting → active → ended
// outgoing: dialing → calling → remote_ringing → connecting → active → ended
//
// An active call can be on hold (`heldSince`): the window sends the hold music on the call's own
// sender and mutes the customer; the gateway knows nothing of it (it has no hold). An agent has at
// most two busy calls, and at most one of them is not on hold: answering, dialing or resuming a
// second call holds the other in the same step (the book's rules, applyCallEvent).
//
// protocol.md: duplicates happen, order is not guaranteed (a terminate can arrive before its
// connect) and stale events arrive late. So every transition is idempotent, an ended call is a
// tombstone that nothing revives, connects older than STALE_CONNECT_MS are dropped, and events for
// an outgoing call that arrive before its id is known wait in `pending` until it is.
//
// Beside the phase, each call carries what is still open about it: its claim on the relay (first
// claim wins, relay/README.md), the request under way (accept or initiate), the command waiting
// for its outcome, and the reject or terminate the gateway is still owed (kept until the gateway
// answers; the crash-recovery file is derived from it).
import type { CallErrorInfo } from './events';
import { assertNever, err, ok, type AppError, type Result } from './result';

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

/** How this agent's claim on the relay came out: pending until the relay answers; unknown when it could not be asked. */
export type ClaimState = 'pending' | 'won' | 'lost' | 'unknown';
/** What the gateway hears when this agent ends a call: reject for one never accepted, terminate otherwise. */
export type GatewayEnd = 'reject' | 'terminate';

/** What is still open about a call beside its phase; carried through every transition, the end included. */
interface CallBookkeeping {
  /** First-claim-wins on the relay: from the Answer click (incoming), after initiate (outgoing), or checking a leftover. */
  claim?: ClaimState;
  /** A decline verdict asked of the relay (may a colleague still answer?) and not answered yet. */
  declineVerdict?: 'pending';
  /** The accept or initiate under way. */
  request?: 'accept' | 'initiate';
  /** Our prepared answer, kept only while the claim it waits for is out. */
  localAnswer?: string;
  /** The command (answer or dial) waiting for this call's outcome: answered when the call leaves answering or dialing. */
  awaiting?: string;
  /** The reject or terminate the gateway is still owed; cleared when the gateway answers or ends the call itself. */
  owed?: GatewayEnd;
  /** A call a previous run left live: only what the gateway is owed matters; it never shows nor enters history. */
  leftover?: true;
}

interface CallCommon extends CallBookkeeping {
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
      /** On hold since then (unix ms): the customer hears the hold music, the agent does not hear the customer. */
      heldSince?: number;
      /** Time on hold before the current hold, in ms (a call can be held and resumed many times). */
      heldMs?: number;
    })
  | ((IncomingCommon | OutgoingCommon) & {
      phase: 'ended';
      end: EndReason;
      endedAt: number;
      connectedAt?: number;
      /** Talk time in seconds: the gateway's duration when it sent one, else measured here. */
      durationSec: number;
      /** Time the call spent on hold, in seconds, when it was held at all. */
      heldSec?: number;
    });
export type CallPhase = CallState['phase'];
export type EndedCall = Extract<CallState, { phase: 'ended' }>;

export const LIVE_PHASES: ReadonlySet<CallPhase> = new Set(['ringing', 'answering', 'dialing', 'calling', 'remote_ringing', 'connecting', 'active']);
export const isLive = (c: CallState): boolean => c.phase !== 'ended';

/**
 * The one definition of a busy call: the agent is placing, answering or on it. Presence is
 * "on_call" while one exists; a second call cannot be placed or answered; its customer is the
 * contact in view.
 */
export const BUSY_PHASES: ReadonlySet<CallPhase> = new Set(['dialing', 'calling', 'remote_ringing', 'answering', 'connecting', 'active']);
export const isBusy = (c: Pick<CallState, 'phase'>): boolean => BUSY_PHASES.has(c.phase);
/** An active call on hold. */
export const isHeld = (c: CallState | undefined): boolean => c?.phase === 'active' && c.heldSince !== undefined;
/** At most this many busy calls at once: one on hold and one in hand. */
export const MAX_BUSY_CALLS = 2;
/** The calls that keep the agent busy. */
export const busyCalls = (calls: Iterable<CallState>): CallState[] => [...calls].filter(isBusy);
/**
 * Whether a further call can be taken now beside these (the agent's calls): fewer than two busy, and
 * every busy one connected, so that the one in hand can go on hold. Presence and the window ask it;
 * applyCallEvent decides by the same rule.
 */
export function canTakeAnother(calls: Iterable<CallState>): boolean {
  const busy = busyCalls(calls);
  return busy.length < MAX_BUSY_CALLS && busy.every((c) => c.phase === 'active');
}
/** How long an active call has been on hold in all, at `now`, in ms. */
export function heldMsOf(call: CallState, now: number): number {
  if (call.phase === 'ended') return (call.heldSec ?? 0) * 1000;
  if (call.phase !== 'active') return 0;
  return (call.heldMs ?? 0) + (call.heldSince !== undefined ? Math.max(0, now - call.heldSince) : 0);
}
export const hasBusyCall = (calls: Iterable<Pick<CallState, 'phase'>>): boolean => {
  for (const call of calls) if (isBusy(call)) return true;
  return false;
};

export const ANSWERED_ELSEWHERE_MESSAGE = 'Answered by another agent';

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
  /** An agent's claim won on the relay; `mine` is unknown while this agent's own id is. */
  | { type: 'remote.claimed'; at: number; callId: string; mine?: boolean }
  // the agent's commands; `requestId` names the command that waits for the reply
  | { type: 'local.dial'; at: number; localId: string; peer: Peer; offerSdp: string; requestId?: string }
  | { type: 'local.answer'; at: number; localId: string; answerSdp: string; requestId?: string }
  | { type: 'local.decline'; at: number; localId: string; requestId?: string }
  | { type: 'local.hangup'; at: number; localId: string; requestId?: string }
  /** Hold: the customer hears music; Resume: back to the microphone. Only an active call. */
  | { type: 'local.hold'; at: number; localId: string; requestId?: string }
  | { type: 'local.resume'; at: number; localId: string; requestId?: string }
  // outcomes of effects
  | { type: 'local.initiate_ok'; at: number; localId: string; callId: string }
  | { type: 'local.initiate_failed'; at: number; localId: string; error: AppError }
  | { type: 'local.claim_result'; at: number; localId: string; outcome: Exclude<ClaimState, 'pending'> }
  /** The relay's decline verdict: `last` when nobody else may still answer; undefined when it could not say. */
  | { type: 'local.decline_result'; at: number; localId: string; last: boolean | undefined }
  | { type: 'local.accept_ok'; at: number; localId: string }
  | { type: 'local.accept_failed'; at: number; localId: string; error: AppError }
  /** The gateway's answer to a reject or terminate: done, refused (the call was over there), or not reached. */
  | { type: 'local.end_result'; at: number; localId: string; outcome: 'done' | 'refused' | 'unreached' }
  /** A deadline the reducer set has come (what it means depends on the phase: ring, dial or offer timeout). */
  | { type: 'local.deadline'; at: number; localId: string }
  // media facts from the renderer
  | { type: 'local.media_connected'; at: number; localId: string }
  | { type: 'local.media_failed'; at: number; localId: string; error: LocalError }
  /** Recovery: a call a previous run left live (the crash-recovery file), still owed its reject or terminate. */
  | { type: 'local.leftover'; at: number; localId: string; callId: string; action: GatewayEnd };

/** What the coordinator must do; it feeds each outcome back as the event named beside it. */
export type CallEffect =
  /** POST the relay's claim → local.claim_result. */
  | { kind: 'claim'; localId: string; callId: string }
  /** POST the relay's decline → local.decline_result. */
  | { kind: 'decline'; localId: string; callId: string }
  /** POST accept with the answer → local.accept_ok / local.accept_failed. Never retried (protocol.md). */
  | { kind: 'accept'; localId: string; callId: string; sdp: string }
  /** POST initiate with the offer → local.initiate_ok / local.initiate_failed. Never retried: it would ring twice. */
  | { kind: 'initiate'; localId: string; to: string; sdp: string }
  /** POST reject or terminate → local.end_result. After any accept or initiate of the same call. */
  | { kind: 'end'; localId: string; callId: string; action: GatewayEnd }
  /** Set (or, with `at` undefined, cancel) the call's one deadline → local.deadline. */
  | { kind: 'deadline'; localId: string; at: number | undefined }
  /** Answer the command that waits: Answer once the call is this agent's and accepted, Call once initiated. */
  | { kind: 'reply'; requestId: string; result: Result<CallReply> };

/** A command's reply: the call it concerns, with the gateway's id. */
export interface CallReply {
  localId: string;
  callId: string;
}

export type RemoteCallEvent = Extract<CallEvent, { callId: string; type: `remote.${string}` }>;
export type LocalCallEvent = Exclude<CallEvent, RemoteCallEvent>;

export const incomingLocalId = (callId: string): string => `in:${callId}`;

const BOOKKEEPING_KEYS = ['claim', 'declineVerdict', 'request', 'localAnswer', 'awaiting', 'owed', 'leftover'] as const satisfies readonly (keyof CallBookkeeping)[];

function bookkeepingOf(call: CallState): CallBookkeeping {
  const out: Record<string, unknown> = {};
  for (const key of BOOKKEEPING_KEYS) if (call[key] !== undefined) out[key] = call[key];
  return out as CallBookkeeping;
}

function end(call: CallState, reason: EndReason, at: number, durationSec?: number): EndedCall {
  const connectedAt = call.phase === 'active' ? call.connectedAt : undefined;
  const measured = connectedAt !== undefined ? Math.max(0, Math.round((at - connectedAt) / 1000)) : 0;
  const heldMs = heldMsOf(call, at);
  // What is still open about the call stays with it (the prepared answer has no use any more).
  const { localAnswer: _unused, ...open } = bookkeepingOf(call);
  const base: CallCommon = { localId: call.localId, peer: call.peer, createdAt: call.createdAt, ...open };
  if (call.callId !== undefined) base.callId = call.callId;
  if (call.ctaPayload !== undefined) base.ctaPayload = call.ctaPayload;
  const tail = {
    phase: 'ended' as const,
    end: reason,
    endedAt: at,
    durationSec: durationSec ?? measured,
    ...(connectedAt !== undefined ? { connectedAt } : {}),
    ...(heldMs > 0 ? { heldSec: Math.round(heldMs / 1000) } : {}),
  };
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
      // Only an accept this agent sent can have answered it: while the claim is still out none has
      // gone, so the talk time is a colleague's (whose claim won first).
      if (!answered) return { kind: 'missed' };
      return call.request === 'accept' ? { kind: 'completed', by: 'customer' } : { kind: 'answered_elsewhere' };
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
 * The phase of one call after an event. `undefined` means "no such call"; it returns the state
 * unchanged (the same object) when the event does not apply. reduceCall adds the bookkeeping.
 */
function stepPhase(call: CallState | undefined, ev: CallEvent): CallState | undefined {
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
      case 'local.leftover':
        // Only its id and what it is owed survive a crash; it is held as an ended call (outgoing:
        // the shape that needs no offer) that never shows and never enters history.
        return {
          phase: 'ended',
          direction: 'outgoing',
          localId: ev.localId,
          callId: ev.callId,
          peer: {},
          createdAt: ev.at,
          end: { kind: 'failed', code: 'left_live', message: 'Left live by a previous run' },
          endedAt: ev.at,
          durationSec: 0,
          leftover: true,
          owed: ev.action,
        };
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
    case 'local.leftover':
      return call; // duplicate
    case 'local.claim_result':
    case 'local.decline_result':
    case 'local.end_result':
      return call; // bookkeeping only (reduceCall)
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
      return call.phase === 'dialing' ? end(call, { kind: 'failed', ...localErrorFrom(ev.error) }, ev.at) : call;
    case 'local.answer':
      return call.phase === 'ringing' ? { ...call, phase: 'answering', answeredAt: ev.at } : call;
    case 'local.accept_ok':
      return call.phase === 'answering' ? { ...call, phase: 'connecting' } : call;
    case 'local.accept_failed':
      // The gateway refused the answer: whatever media did, the call is over. Outgoing calls are never accepted.
      return call.direction === 'incoming' && (call.phase === 'answering' || call.phase === 'connecting' || call.phase === 'active')
        ? end(call, { kind: 'failed', ...localErrorFrom(ev.error) }, ev.at)
        : call;
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
    case 'local.hold':
      return call.phase === 'active' && call.heldSince === undefined ? { ...call, heldSince: ev.at } : call;
    case 'local.resume': {
      if (call.phase !== 'active' || call.heldSince === undefined) return call;
      const { heldSince, ...resumed } = call;
      return { ...resumed, heldMs: (call.heldMs ?? 0) + Math.max(0, ev.at - heldSince) };
    }
    case 'local.media_connected':
      // Media may connect before the accept response returns: the gateway had the answer already.
      if (call.phase === 'connecting' || call.phase === 'answering') {
        return { ...call, phase: 'active', connectedAt: ev.at };
      }
      return call;
    case 'local.media_failed':
      // Media broke before the call was answered (e.g. no microphone while dialing): it ends as a hang-up would.
      return call.phase === 'answering' || call.phase === 'connecting' || call.phase === 'active'
        ? end(call, { kind: 'failed', ...ev.error }, ev.at)
        : stepPhase(call, { type: 'local.hangup', at: ev.at, localId: ev.localId });
    case 'local.deadline':
      switch (call.phase) {
        case 'ringing':
          return end(call, { kind: 'missed' }, ev.at);
        case 'calling':
        case 'remote_ringing':
          return end(call, { kind: 'no_answer' }, ev.at);
        default:
          return call;
      }
    default:
      return assertNever(ev, 'event');
  }
}

/** The failure code kept on an ended call: the gateway's number when there is one (e.g. "138006"). */
export const localErrorFrom = (error: AppError): LocalError => ({
  code: error.gatewayCode !== undefined ? String(error.gatewayCode) : error.code,
  message: error.message,
});


export interface CallStep {
  state: CallState | undefined;
  effects: CallEffect[];
}

/** The moment a call in this phase gives up waiting, if it waits for anything. */
export function deadlineOf(call: CallState | undefined): number | undefined {
  if (call === undefined) return undefined;
  switch (call.phase) {
    case 'ringing':
      return call.ringsUntil;
    case 'calling':
    case 'remote_ringing':
      return call.dialsUntil;
    case 'dialing': // the initiate under way has its own timeout in the gateway client
    case 'answering':
    case 'connecting':
    case 'active':
    case 'ended':
      return undefined;
    default:
      return assertNever(call, 'call');
  }
}

/** The call as the window and history see it: without the bookkeeping, which is the main process's alone. */
export function publicCall(call: CallState): CallState {
  if (!BOOKKEEPING_KEYS.some((key) => call[key] !== undefined)) return call;
  const out: Record<string, unknown> = { ...call };
  for (const key of BOOKKEEPING_KEYS) delete out[key];
  return out as unknown as CallState;
}

/** Changes a call's bookkeeping; the same object when nothing changes. */
function withBookkeeping(call: CallState, patch: { [K in keyof CallBookkeeping]?: CallBookkeeping[K] | undefined }): CallState {
  let changed = false;
  const next: Record<string, unknown> = { ...call };
  for (const [key, value] of Object.entries(patch)) {
    if (next[key] === value) continue;
    changed = true;
    if (value === undefined) delete next[key];
    else next[key] = value;
  }
  return changed ? (next as unknown as CallState) : call;
}

/** Why a call ended before the command waiting for it (Answer, Call) could be answered. */
function endedReply(call: EndedCall, ev: CallEvent): Result<never> {
  if (ev.type === 'local.accept_failed' || ev.type === 'local.initiate_failed') return { ok: false, error: ev.error };
  switch (call.end.kind) {
    case 'answered_elsewhere':
      return err('answered_elsewhere', ANSWERED_ELSEWHERE_MESSAGE);
    case 'failed':
      return err(call.end.code === 'media_failed' ? 'media_failed' : 'invalid_state', call.end.message);
    case 'cancelled':
      return err('invalid_state', 'The call was hung up before the gateway placed it; it has been ended');
    default:
      return err('invalid_state', call.direction === 'incoming' ? 'The call ended while it was being answered' : 'The call ended before it was placed');
  }
}

/**
 * The reducer for one call: its next state and what must happen. `undefined` means "no such call";
 * the state is the same object when the event changes nothing, so callers can tell a no-op by
 * identity.
 */
export function reduceCall(call: CallState | undefined, ev: CallEvent): CallStep {
  const effects: CallEffect[] = [];
  const reply = (requestId: string | undefined, result: Result<CallReply>): void => {
    if (requestId !== undefined) effects.push({ kind: 'reply', requestId, result });
  };
  const phaseNext = stepPhase(call, ev);
  let next = phaseNext;

  // Commands that do not apply are answered at once, naming why.
  if (ev.type === 'local.answer' || ev.type === 'local.decline') {
    if (call === undefined) reply(ev.requestId, err('not_found', `There is no call ${ev.localId}`));
    else if (phaseNext === call) {
      if (call.phase === 'ended' && call.end.kind === 'answered_elsewhere') reply(ev.requestId, err('answered_elsewhere', ANSWERED_ELSEWHERE_MESSAGE));
      else reply(ev.requestId, err('invalid_state', `The call is ${call.phase}: only a ringing call can be ${ev.type === 'local.answer' ? 'answered' : 'declined'}`));
    }
  }
  if (ev.type === 'local.dial' && call !== undefined) reply(ev.requestId, err('invalid_state', 'This call has already been placed'));
  if (ev.type === 'local.hold' || ev.type === 'local.resume') {
    // Holding a held call (or resuming one in hand) is harmless; only an active call has either.
    if (call === undefined) reply(ev.requestId, err('not_found', `There is no call ${ev.localId}`));
    else if (call.phase !== 'active') reply(ev.requestId, err('invalid_state', `The call is ${call.phase}: only an active call can be ${ev.type === 'local.hold' ? 'held' : 'resumed'}`));
    else reply(ev.requestId, ok({ localId: call.localId, callId: call.callId }));
  }
  if (ev.type === 'local.hangup') {
    // Hanging up twice is harmless.
    reply(ev.requestId, call === undefined ? err('not_found', `There is no call ${ev.localId}`) : ok({ localId: call.localId, callId: call.callId ?? '' }));
  }
  if (next === undefined) return { state: undefined, effects };

  const callId = next.callId;
  const owe = (action: GatewayEnd, send: boolean): void => {
    next = withBookkeeping(next!, { owed: action });
    if (send && callId !== undefined) effects.push({ kind: 'end', localId: next.localId, callId, action });
  };
  const askDecline = (): void => {
    next = withBookkeeping(next!, { declineVerdict: 'pending' });
    if (callId !== undefined) effects.push({ kind: 'decline', localId: next.localId, callId });
  };

  switch (ev.type) {
    case 'local.dial':
      if (call === undefined && next.peer.number !== undefined) {
        const to = next.peer.number;
        next = withBookkeeping(next, { request: 'initiate', awaiting: ev.requestId });
        effects.push({ kind: 'initiate', localId: next.localId, to, sdp: ev.offerSdp });
      }
      break;
    case 'local.initiate_ok':
      if (call?.request !== 'initiate') break;
      next = withBookkeeping(next, { request: undefined });
      if (next.phase === 'ended' && next.callId === undefined) {
        // Hung up while the initiate was on its way: the customer's phone rings now, so end it there too.
        next = { ...next, callId: ev.callId };
        owe('terminate', false);
        effects.push({ kind: 'end', localId: next.localId, callId: ev.callId, action: 'terminate' });
      } else if (next.phase !== 'ended') {
        // The relay sends a claimed call's later events to its owner only (relay/README.md "Routing").
        next = withBookkeeping(next, { claim: 'pending' });
        effects.push({ kind: 'claim', localId: next.localId, callId: ev.callId });
      }
      break;
    case 'local.initiate_failed':
      next = withBookkeeping(next, { request: undefined });
      break;
    case 'local.answer':
      if (phaseNext !== call && next.phase === 'answering') {
        const answering = next;
        next = withBookkeeping(answering, { claim: 'pending', localAnswer: ev.answerSdp, awaiting: ev.requestId });
        effects.push({ kind: 'claim', localId: answering.localId, callId: answering.callId });
      }
      break;
    case 'local.claim_result': {
      if (next.claim !== 'pending') break;
      next = withBookkeeping(next, { claim: ev.outcome });
      if (next.leftover) {
        // A leftover in progress is terminated only when claiming it again shows it is this agent's;
        // when the relay cannot say, the gateway ends it by itself rather than risk a colleague's call.
        if (ev.outcome === 'won' && next.owed !== undefined) owe(next.owed, true);
        else next = withBookkeeping(next, { owed: undefined });
      } else if (next.phase === 'answering') {
        if (ev.outcome === 'lost') {
          next = end(next, { kind: 'answered_elsewhere' }, ev.at);
        } else {
          // Won, or the relay could not say: a relay that is down must not keep a customer waiting.
          const sdp = next.localAnswer ?? '';
          next = withBookkeeping(next, { request: 'accept', localAnswer: undefined });
          effects.push({ kind: 'accept', localId: next.localId, callId: next.callId!, sdp });
        }
      } else if (next.phase === 'ended' && next.owed !== undefined && next.direction === 'incoming') {
        // Ended here while the claim was out: the gateway hears it only if the call is not a colleague's.
        // (An outgoing call's claim only routes its events: its terminate went out when it ended.)
        if (ev.outcome === 'lost') next = withBookkeeping(next, { owed: undefined });
        else owe(next.owed, true);
      }
      break;
    }
    case 'remote.claimed':
      // A colleague's claim while this agent is answering, with no claim of its own won and no accept
      // out: a claim lost to a relay that answered too late (or not at all) still sends no accept.
      if (ev.mine === false && next.phase === 'answering' && next.claim !== 'won' && next.request !== 'accept') {
        next = withBookkeeping(end(next, { kind: 'answered_elsewhere' }, ev.at), { claim: 'lost' });
      } else if (ev.mine === false && next.phase === 'ended' && next.owed !== undefined && next.claim === 'pending') {
        next = withBookkeeping(next, { owed: undefined });
      }
      break;
    case 'local.accept_ok':
      next = withBookkeeping(next, { request: undefined });
      break;
    case 'local.accept_failed':
      next = withBookkeeping(next, { request: undefined });
      if (phaseNext !== call && phaseNext?.phase === 'ended') {
        // After a timeout or a network error the accept may have landed: terminate covers both.
        // A refusal of our answer itself (error 100 about our SDP, protocol.md) leaves the call
        // ringing at the gateway: reject it. Any other refusal may mean it no longer rings — a
        // colleague accepted it on a claim the relay never stored (a claim the relay cannot answer
        // is accepted anyway) — and a reject must never reach a colleague's call: the gateway ends
        // a call nobody accepted by itself.
        if (ev.error.code === 'timeout' || ev.error.code === 'gateway_unreachable') owe('terminate', true);
        else if (refusesOurAnswer(ev.error)) owe('reject', true);
      }
      break;
    case 'local.decline':
      // In a team the call rings on for colleagues: it stops here at once, and the gateway hears
      // "reject" only when the relay says nobody else may still answer it.
      if (phaseNext !== call) {
        askDecline();
        reply(ev.requestId, ok({ localId: next.localId, callId: next.callId ?? '' }));
      }
      break;
    case 'local.decline_result':
      if (next.declineVerdict !== 'pending') break;
      next = withBookkeeping(next, { declineVerdict: undefined });
      // Rejecting blind could take the call from a colleague about to answer it; unanswered, it
      // ends at the gateway's own timeout.
      if (ev.last === true) owe('reject', true);
      else next = withBookkeeping(next, { owed: undefined });
      break;
    case 'local.hangup':
    case 'local.media_failed':
    case 'local.deadline':
      if (phaseNext === call || call === undefined || next.phase !== 'ended') break;
      if (call.phase === 'ringing') askDecline(); // declined or missed here: the team decides (see local.decline)
      // Ended while the claim was out: no accept will go, so the call still rings at the gateway
      // and is rejected — once the claim shows it is not a colleague's.
      else if (call.phase === 'answering' && call.claim === 'pending') owe('reject', false);
      else if (call.phase !== 'dialing') owe('terminate', true); // a dialing call has no id yet: initiate_ok ends it
      break;
    case 'local.end_result':
      if (next.owed === undefined) break;
      // Not reached: the gateway may still think the call is live; it stays owed (and in the
      // crash-recovery file) for the next start. A leftover had its last try.
      if (ev.outcome !== 'unreached' || next.leftover) next = withBookkeeping(next, { owed: undefined });
      break;
    case 'local.leftover':
      if (call !== undefined) break;
      if (ev.action === 'reject') askDecline();
      else {
        next = withBookkeeping(next, { claim: 'pending' });
        effects.push({ kind: 'claim', localId: next.localId, callId: ev.callId });
      }
      break;
    case 'remote.terminated':
      // The gateway has ended the call: nothing is owed any more, and a decline verdict still out
      // can no longer make it owed (a reject would only be refused).
      if (next.phase === 'ended') next = withBookkeeping(next, { owed: undefined, declineVerdict: undefined });
      break;
    case 'remote.incoming':
    case 'remote.answered':
    case 'remote.status':
    case 'local.media_connected':
    case 'local.hold':
    case 'local.resume':
      break;
    default:
      return assertNever(ev, 'event');
  }

  // The command waiting for this call is answered when the call leaves answering or dialing.
  if (call?.awaiting !== undefined && next.awaiting === call.awaiting && next.phase !== call.phase && (call.phase === 'answering' || call.phase === 'dialing')) {
    const requestId = call.awaiting;
    next = withBookkeeping(next, { awaiting: undefined, localAnswer: undefined });
    reply(requestId, next.phase === 'ended' ? endedReply(next, ev) : ok({ localId: next.localId, callId: next.callId ?? '' }));
  }

  const before = deadlineOf(call);
  const after = deadlineOf(next);
  if (before !== after) effects.push({ kind: 'deadline', localId: next.localId, at: after });
  return { state: next, effects };
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
  /** What must happen, in order. */
  effects: CallEffect[];
}

const isRemote = (ev: CallEvent): ev is RemoteCallEvent => ev.type.startsWith('remote.');

/** The same delivery twice (retries, several subscribers): equal in everything but when it was applied. */
const sameDelivery = (a: RemoteCallEvent, b: RemoteCallEvent): boolean => JSON.stringify({ ...a, at: 0 }) === JSON.stringify({ ...b, at: 0 });

const unchanged = (book: CallBook, effects: CallEffect[] = []): BookChange => ({ book, changed: [], effects });

export function applyCallEvent(book: CallBook, ev: CallEvent): BookChange {
  const change = applyDelivery(book, ev);
  // Effects are settled against where the whole delivery left each call: an end that a replayed
  // event made needless (a call hung up while its initiate was on its way, whose terminate had
  // already come and waited) is not sent.
  const effects = change.effects.filter((e) => e.kind !== 'end' || change.book.calls[e.localId]?.owed !== undefined);
  return effects.length === change.effects.length ? change : { ...change, effects };
}

function applyDelivery(book: CallBook, ev: CallEvent): BookChange {
  if (isRemote(ev)) {
    const localId = book.byCallId[ev.callId];
    if (localId === undefined) {
      const queued = book.pending[ev.callId];
      if (ev.type === 'remote.incoming') {
        // A tombstone drops a late connect, except while the terminate that made it still waits for
        // its call: then the call is opened and what waited is replayed at once, so it lands in the
        // history as it would have in order (missed, answered elsewhere…) without ever ringing.
        if (book.tombstones[ev.callId] !== undefined && queued === undefined) return unchanged(book);
        const localIdIn = incomingLocalId(ev.callId);
        const { [ev.callId]: _tomb, ...tombstones } = book.tombstones;
        const opened = applyToCall({ ...book, tombstones }, localIdIn, ev);
        if (opened.changed.length === 0) return unchanged(book);
        // A claim can overtake the connect it claims (order is not guaranteed, protocol.md).
        return finalOnly(replayPending(opened, ev.callId, localIdIn, ev.at));
      }
      // A tombstone drops what follows a terminate, except while that terminate itself still waits.
      if (book.tombstones[ev.callId] !== undefined && queued === undefined) return unchanged(book);
      if (queued?.some((q) => sameDelivery(q, ev))) return unchanged(book);
      const pending = { ...book.pending, [ev.callId]: [...(queued ?? []), ev] };
      const tombstones = ev.type === 'remote.terminated' ? { ...book.tombstones, [ev.callId]: ev.at } : book.tombstones;
      return unchanged({ ...book, pending, tombstones });
    }
    return applyToCall(book, localId, ev);
  }
  // Two busy calls at most, one of them in hand: a call taken into hand (answered, dialed, resumed)
  // holds the other first, in the same step; one that cannot be held yet (still connecting) refuses it.
  const takes =
    (ev.type === 'local.dial' && book.calls[ev.localId] === undefined) ||
    (ev.type === 'local.answer' && book.calls[ev.localId]?.phase === 'ringing') ||
    (ev.type === 'local.resume' && isHeld(book.calls[ev.localId]));
  if (takes) {
    const others = Object.values(book.calls).filter((c) => c.localId !== ev.localId && isBusy(c));
    const refuse = (message: string): BookChange =>
      unchanged(book, ev.requestId !== undefined ? [{ kind: 'reply', requestId: ev.requestId, result: err('invalid_state', message) }] : []);
    const doing = ev.type === 'local.dial' ? 'dialing a new number' : ev.type === 'local.answer' ? 'answering this one' : 'resuming this one';
    if (ev.type !== 'local.resume' && others.length >= MAX_BUSY_CALLS) return refuse(`Two calls are in progress: hang up one before ${doing}`);
    const inHand = others.filter((c) => !isHeld(c));
    const notHoldable = inHand.find((c) => c.phase !== 'active');
    if (notHoldable !== undefined) return refuse(`Another call is in progress and cannot be held until it is connected: hang up before ${doing}`);
    let held: BookChange = unchanged(book);
    for (const other of inHand) held = chain(held, applyToCall(held.book, other.localId, { type: 'local.hold', at: ev.at, localId: other.localId }));
    const taken = applyToCall(held.book, ev.localId, ev);
    // The command did not apply after all (its own reply says why): the other call stays in hand.
    if (taken.changed.length === 0 && held.changed.length > 0) return unchanged(book, taken.effects);
    return chain(held, taken);
  }
  const first = applyToCall(book, ev.localId, ev);
  if (ev.type !== 'local.initiate_ok') return first;
  // Replay what arrived for this call id before we knew it was ours.
  return finalOnly(replayPending(first, ev.callId, ev.localId, ev.at));
}

/** One change after another: the second's book, both changes and both effects in order. */
const chain = (first: BookChange, then: BookChange): BookChange => ({
  book: then.book,
  changed: [...first.changed, ...then.changed],
  effects: [...first.effects, ...then.effects],
});

/** One change per call, its last: a call opened and ended by one delivery is reported ended, never ringing. */
function finalOnly(change: BookChange): BookChange {
  const last = new Map<string, CallState>();
  for (const call of change.changed) {
    last.delete(call.localId);
    last.set(call.localId, call);
  }
  return { book: change.book, changed: [...last.values()], effects: change.effects };
}

function replayPending(first: BookChange, callId: string, localId: string, at: number): BookChange {
  const waiting = first.book.pending[callId];
  if (!waiting) return first;
  const { [callId]: _drop, ...pending } = first.book.pending;
  const { [callId]: _tomb, ...tombstones } = first.book.tombstones;
  let acc: BookChange = { book: { ...first.book, pending, tombstones }, changed: first.changed, effects: first.effects };
  for (const queued of waiting) {
    acc = chain(acc, applyToCall(acc.book, localId, { ...queued, at }));
  }
  return acc;
}

function applyToCall(book: CallBook, localId: string, ev: CallEvent): BookChange {
  const before = book.calls[localId];
  const { state: after, effects } = reduceCall(before, ev);
  if (after === before || after === undefined) return unchanged(book, effects);
  const calls = { ...book.calls, [localId]: after };
  const byCallId = after.callId !== undefined && book.byCallId[after.callId] !== localId ? { ...book.byCallId, [after.callId]: localId } : book.byCallId;
  return { book: { ...book, calls, byCallId }, changed: [after], effects };
}

/** Drops ended calls, tombstones and pending events past their time; a call the gateway is still owed stays. */
export function pruneBook(book: CallBook, now: number): CallBook {
  const calls: Record<string, CallState> = {};
  const byCallId: Record<string, string> = {};
  const tombstones: Record<string, number> = {};
  for (const [id, call] of Object.entries(book.calls)) {
    if (call.phase === 'ended' && call.owed === undefined && (call.leftover || now - call.endedAt > TOMBSTONE_TTL_MS)) {
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

/**
 * What the gateway would still be owed if this run stopped now, per call id: a live call's reject
 * (ringing) or terminate, and every end not yet confirmed. The crash-recovery file is exactly this.
 */
/** The gateway refused the SDP answer we sent (error 100 with the SDP named in its details, protocol.md). */
// Error 100 on accept is an invalid parameter, and the parameter an accept carries is our SDP
// (protocol.md: "SDP details in error_data"), so 100 is our answer refused — unless the words name
// the call itself (its call_id, or a call no longer or already in some state): then it may be a
// colleague's call now.
function refusesOurAnswer(error: AppError): boolean {
  if (error.gatewayCode !== 100) return false;
  const words = `${error.message} ${error.detail ?? ''}`;
  if (/\bsdp\b/i.test(words)) return true;
  return !/\bcall_id\b|\bthis call\b|\balready\b|\bno longer\b/i.test(words);
}

export function owedOnCrash(book: CallBook): Array<{ callId: string; action: GatewayEnd }> {
  const owed = new Map<string, GatewayEnd>();
  for (const call of Object.values(book.calls)) {
    if (call.callId === undefined) continue;
    if (call.owed !== undefined) owed.set(call.callId, call.owed);
    else if (isLive(call)) owed.set(call.callId, call.phase === 'ringing' ? 'reject' : 'terminate');
  }
  return [...owed].map(([callId, action]) => ({ callId, action })).sort((a, b) => a.callId.localeCompare(b.callId));
}
