// The steps several events share: what an event concerns and what it does (`On`, `Step`), ending a
// call, owing the gateway an end, asking the relay for a decline verdict, letting a live call go,
// and the replies these leave for the command a call was waiting on. The handlers of handlers.ts and
// rejoin.ts are made of them.
import { english, text, type RuleText } from '../i18n/text';
import { assertNever, err, errText, ok, type AppError, type Result } from '../result';
import type { CallBook } from './book';
import type { CallRecord, EndedOpen, EndedRecord, Leftover, LiveRecord } from './record';
import { ANSWERED_ELSEWHERE, heldMsOf, REJOIN_REFUSALS, type CallEffect, type CallEvent, type CallReply, type CallTransfer, type EndedCall, type EndReason, type GatewayEnd, type LocalError } from './types';

/** What an event concerns, as the book found it: the call holding its id, or a leftover; neither when nobody holds it. */
export interface On {
  call?: CallRecord;
  leftover?: Leftover;
  /** All of the agent's calls: taking a call into hand looks at the others, a new call at what waited for its id. */
  book: CallBook;
}

/** What one event does. Left out: unchanged (a call or leftover given back as it was is unchanged too). */
export interface Step {
  /** The call after the event, when the event opened or changed it. */
  call?: CallRecord;
  /** The leftover after the event, when the event took it over or changed it. */
  leftover?: Leftover;
  /** Calls put on hold first: taking another call into hand holds the one in hand, in the same step. */
  held?: readonly CallRecord[];
  /** Requests for the relay and the gateway, then the reply to the command the call was waiting on, in order. */
  effects?: readonly CallEffect[];
  /** The answer to the event's own command (Call, Answer, Decline, Hang up, Hold, Resume). */
  reply?: Result<CallReply>;
}

export type Handler<E extends CallEvent> = (ev: E, on: On) => Step;

export const NOTHING: Step = {};

/** A transfer or consult a colleague rang this agent with (its call is `tr:<transferId>` here). */
export type TransferTo = CallTransfer & { role: 'to' };
export const isAsked = (transfer: CallTransfer | undefined): transfer is TransferTo => transfer?.role === 'to';
export function transferTo(call: CallRecord | undefined): TransferTo | undefined {
  const transfer = call?.transfer;
  return isAsked(transfer) ? transfer : undefined;
}

/** How an ended call leaves things with the relay and the gateway. */
interface Ending {
  /** The gateway's talk time, when it sent one. */
  durationSec?: number;
  /** What is still open with the relay or the gateway. */
  open?: EndedOpen;
  /** The requests that go with it. */
  effects?: readonly CallEffect[];
  /** The error that ended it, told to the command waiting on it (a refused accept or initiate). */
  error?: AppError;
}

/**
 * Ends a live call: the ended call (who, what, when, talk and hold time, what is still open) and its
 * requests, then the reply to the command it was waiting on, if any (Answer, Call).
 */
export function endCall(call: LiveRecord, reason: EndReason, at: number, ending: Ending = {}): Step {
  const connectedAt = call.phase === 'active' ? call.connectedAt : undefined;
  const measured = connectedAt !== undefined ? Math.max(0, Math.round((at - connectedAt) / 1000)) : 0;
  const heldMs = heldMsOf(call, at);
  const tail = {
    phase: 'ended' as const,
    end: reason,
    endedAt: at,
    durationSec: ending.durationSec ?? measured,
    ...(connectedAt !== undefined ? { connectedAt } : {}),
    ...(heldMs > 0 ? { heldSec: Math.round(heldMs / 1000) } : {}),
  };
  const base = {
    localId: call.localId,
    peer: call.peer,
    createdAt: call.createdAt,
    ...(call.callId !== undefined ? { callId: call.callId } : {}),
    ...(call.ctaPayload !== undefined ? { ctaPayload: call.ctaPayload } : {}),
    ...(call.bridged !== undefined ? { bridged: call.bridged } : {}),
    ...(call.transfer !== undefined ? { transfer: call.transfer } : {}),
  };
  const shown: EndedCall =
    call.direction === 'incoming'
      ? { ...base, direction: 'incoming', callId: call.callId, offerSdp: call.offerSdp, ...tail }
      : { ...base, direction: 'outgoing', ...tail };
  const ended: EndedRecord = ending.open !== undefined ? { ...shown, open: ending.open } : shown;
  return { call: ended, effects: [...(ending.effects ?? []), ...answerWaiting(call, endedReply(shown, ending.error)), ...rejoinAnswerClosed(call)] };
}

/** A call leaves answering or dialing for the next phase: the command waiting on it (Answer, Call) is answered. */
export function proceed(call: LiveRecord, next: CallRecord, effects: readonly CallEffect[] = []): Step {
  return { call: next, effects: [...effects, ...answerWaiting(call, ok({ localId: next.localId, callId: next.callId ?? '' }))] };
}

/** The reply to the command a call in answering or dialing was waiting on, now that it leaves that phase. */
export function answerWaiting(call: LiveRecord, result: Result<CallReply>): CallEffect[] {
  if (call.phase !== 'answering' && call.phase !== 'dialing') return [];
  return call.open.replyTo !== undefined ? [{ kind: 'reply', requestId: call.open.replyTo, result }] : [];
}

/** A window's answer to a rejoin offer still with the relay when the call ends: its offer is closed with it. */
function rejoinAnswerClosed(call: LiveRecord): CallEffect[] {
  if (call.phase !== 'connecting' && call.phase !== 'active') return [];
  const waiting = call.open?.waiting === 'rejoin_answer' ? call.open.replyTo : undefined;
  return waiting !== undefined ? [{ kind: 'reply', requestId: waiting, result: errText('invalid_state', REJOIN_REFUSALS.offerClosed) }] : [];
}

/** Owes the gateway a reject or terminate and sends it: owed until the gateway answers. */
export function owe(localId: string, callId: string, action: GatewayEnd): { open: { waiting: 'confirmation'; owed: GatewayEnd }; effects: CallEffect[] } {
  return { open: { waiting: 'confirmation', owed: action }, effects: [{ kind: 'end', localId, callId, action }] };
}

/** Asks the relay whether anyone else may still answer a call that stops ringing here (may it be rejected?). */
export function askVerdict(localId: string, callId: string): { open: { waiting: 'verdict' }; effects: CallEffect[] } {
  return { open: { waiting: 'verdict' }, effects: [{ kind: 'decline', localId, callId }] };
}

/** The agent lets a live call go (hang-up, media failure, its deadline): what the relay and the gateway must hear of it. */
export function letGo(call: LiveRecord, reason: EndReason, at: number): Step {
  switch (call.phase) {
    case 'ringing': {
      // A colleague's transfer or consult: the relay hears it is not taken here (the gateway has
      // nothing to reject: the call is accepted and goes on with the colleague).
      const asked = transferTo(call);
      if (asked !== undefined) return endCall(call, reason, at, { effects: [{ kind: 'transfer_decline', localId: call.localId, callId: call.callId, transferId: asked.id }] });
      // Declined or missed here: the team decides (see local.decline).
      return endCall(call, reason, at, askVerdict(call.localId, call.callId));
    }
    case 'answering':
      // Ended while the claim was out: no accept will go, so the call still rings at the gateway
      // and is rejected — once the claim shows it is not a colleague's.
      if (call.open.waiting === 'claim') return endCall(call, reason, at, { open: { waiting: 'claim', owed: 'reject' } });
      return endCall(call, reason, at, owe(call.localId, call.callId, 'terminate'));
    case 'dialing':
      // No id yet: the initiate response names the call, and ends it then.
      return endCall(call, reason, at, { open: { waiting: 'initiate' } });
    case 'calling':
    case 'remote_ringing':
    case 'connecting':
    case 'active':
      return endCall(call, reason, at, owe(call.localId, call.callId, 'terminate'));
    default:
      return assertNever(call, 'call');
  }
}

/** Why a call the agent hangs up ends: declined while it rang, cancelled before the customer answered, completed after. */
export function hangUpReason(call: LiveRecord): EndReason {
  switch (call.phase) {
    case 'ringing':
      return { kind: 'declined' };
    case 'dialing':
    case 'calling':
    case 'remote_ringing':
      return { kind: 'cancelled' };
    case 'answering':
    case 'connecting':
    case 'active':
      return { kind: 'completed', by: 'agent' };
    default:
      return assertNever(call, 'call');
  }
}

/** Why a call ended before the command waiting for it (Answer, Call) could be answered. */
export function endedReply(call: EndedCall, error: AppError | undefined): Result<never> {
  if (error !== undefined) return { ok: false, error };
  switch (call.end.kind) {
    case 'answered_elsewhere':
      return errText('answered_elsewhere', ANSWERED_ELSEWHERE);
    case 'failed': {
      const { code, message, text: said } = call.end;
      const kind = code === 'media_failed' ? 'media_failed' : 'invalid_state';
      return err(kind, message, said !== undefined ? { text: said } : {});
    }
    case 'cancelled':
      return errText('invalid_state', text('calls.hungUpBeforePlaced'));
    default:
      return errText('invalid_state', text(call.direction === 'incoming' ? 'calls.endedWhileAnswering' : 'calls.endedBeforePlaced'));
  }
}

/** A failure the catalogue words: its English as the message, its text beside it. */
export function failedWith(code: string, said: RuleText): EndReason {
  return { kind: 'failed', code, message: english(said), text: said };
}

export const noSuchCall = (localId: string): Result<never> => errText('not_found', text('calls.noSuchCall', { localId }));

export const replyTo = (requestId: string | undefined): { replyTo?: string } => (requestId !== undefined ? { replyTo: requestId } : {});

/**
 * The window's media failed (or the window went, for a call that cannot rejoin): after the answer
 * the call ends failed, with the window's reason; before it (e.g. no microphone while dialing) as a
 * hang-up would.
 */
export function mediaLost(call: LiveRecord, error: LocalError, at: number): Step {
  const answered = call.phase === 'answering' || call.phase === 'connecting' || call.phase === 'active';
  return letGo(call, answered ? { kind: 'failed', ...error } : hangUpReason(call), at);
}
