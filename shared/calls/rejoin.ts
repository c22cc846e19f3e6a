// A bridged call outlives the window that carried its audio (relay/REFERENCE.md "Rejoining"). When
// this agent's leg goes — its window reloaded, closed or crashed, the app restarted, its network
// changed — the call is not ended: the relay keeps the customer on hold music and offers a new leg,
// which the first window to answer takes. The call shows "Rejoining…" (`rejoin`) until the new leg's
// media connects; its hold and transfer stay as they were, untouched. The relay times the agent's
// absence (REJOIN_WINDOW_MS) and has the last word on it; this app gives up a little later, should
// that word never come.
//
// Only calls this agent is in rejoin: bridged, connecting or active. A direct call, and one still
// answering or dialing, ends as it always did when its media goes (`mediaLost`).
import { text, type RuleText } from '../i18n/text';
import { assertNever, errText, ok, type Result } from '../result';
import { rejoinDeadline, type CallRecord, type LiveRecord } from './record';
import { endCall, failedWith, letGo, mediaLost, noSuchCall, NOTHING, replyTo, type Handler, type Step } from './steps';
import {
  REJOIN_REFUSALS,
  REJOIN_WINDOW_MS,
  type CallEffect,
  type CallEvent,
  type CallRejoin,
  type CallReply,
  type RestorableCall,
} from './types';

type Rejoinable = Extract<LiveRecord, { phase: 'connecting' | 'active' }>;
type Rejoining = Rejoinable & { rejoin: CallRejoin };

/** A call this agent can take up again with a new leg: a bridged call it is in (answered, dialled, or a colleague's transfer or consult it took). */
export function canRejoin(call: CallRecord | undefined): call is Rejoinable {
  return call?.bridged === true && (call.phase === 'connecting' || call.phase === 'active');
}

function rejoining(call: CallRecord | undefined): Rejoining | undefined {
  return canRejoin(call) && call.rejoin !== undefined ? (call as Rejoining) : undefined;
}

/** Why a call ended when this agent was not back in time: `seconds`, the relay's window. */
export const agentNotBackText = (seconds: number): RuleText => text('calls.agentNotBack', { seconds });
const notBack = (seconds: number = REJOIN_WINDOW_MS / 1000) => failedWith('agent_not_back', agentNotBackText(seconds));

/**
 * Asks the relay for a new leg. The absence counts from `since` however often a leg is asked for;
 * whatever the last offer was is dropped with it. A window's answer still waiting on the relay is
 * told that its offer is closed (`replies`, after the request).
 */
function askToRejoin(call: Rejoinable, since: number, replies: readonly CallEffect[] = []): Step {
  const { rejoin: _last, open: _open, ...rest } = call;
  const asking: CallRecord = { ...rest, rejoin: { since }, open: { waiting: 'rejoin_offer' } };
  return { call: asking, effects: [{ kind: 'rejoin', localId: call.localId, callId: call.callId }, ...replies] };
}

/** The reply to the rejoinCall command the call waits on, if one does. */
function answerReply(call: Rejoinable, result: Result<CallReply>): CallEffect[] {
  return call.open?.waiting === 'rejoin_answer' && call.open.replyTo !== undefined ? [{ kind: 'reply', requestId: call.open.replyTo, result }] : [];
}

/** This agent's leg of a call it can rejoin went (its window, its network): a new one is asked for, unless one is on its way. */
function legGone(call: Rejoinable, at: number): Step {
  const { rejoin, open } = call;
  if (rejoin === undefined) return askToRejoin(call, at);
  // The window that answered the offer (or is answering it) is the one gone, or its new leg broke:
  // that leg will never carry the call, so another is asked for.
  if (rejoin.answered === true || open?.waiting === 'rejoin_answer') return askToRejoin(call, rejoin.since, answerReply(call, errText('invalid_state', REJOIN_REFUSALS.offerClosed)));
  // Asked for, or offered and not answered yet: the next window answers that one.
  return NOTHING;
}

export const windowGone: Handler<Extract<CallEvent, { type: 'local.window_gone' }>> = (ev, { call }) => {
  if (call === undefined || call.phase === 'ended') return NOTHING;
  return canRejoin(call) ? legGone(call, ev.at) : mediaLost(call, ev.error, ev.at);
};

export const mediaFailed: Handler<Extract<CallEvent, { type: 'local.media_failed' }>> = (ev, { call }) => {
  if (call === undefined || call.phase === 'ended') return NOTHING;
  // An active bridged call whose media broke (a network change): a new leg, as after a reload. One
  // still connecting never had media that worked, so it ends with the honest reason, unless it is
  // rejoining already (its new leg broke).
  if (canRejoin(call) && (call.phase === 'active' || call.rejoin !== undefined)) return legGone(call, ev.at);
  return mediaLost(call, ev.error, ev.at);
};

export const rejoinOffer: Handler<Extract<CallEvent, { type: 'local.rejoin_offer' }>> = (ev, { call }) => {
  const asking = rejoining(call);
  if (asking?.open?.waiting !== 'rejoin_offer') return NOTHING;
  const { open: _offered, ...rest } = asking;
  return { call: { ...rest, rejoin: { since: asking.rejoin.since, legId: ev.legId, offerSdp: ev.offerSdp } } };
};

export const rejoinFailed: Handler<Extract<CallEvent, { type: 'local.rejoin_failed' }>> = (ev, { call }) => {
  const asking = rejoining(call);
  if (asking?.open?.waiting !== 'rejoin_offer') return NOTHING;
  switch (ev.verdict) {
    case 'not_member':
      // The call went on without this agent: it is a colleague's to end, not this agent's.
      return endCall(asking, failedWith('rejoin_not_member', text('calls.rejoinNotMember')), ev.at);
    case 'ended':
      // The relay gave it up for this agent being away too long. Let go as its event says: the
      // hang-up leaves through the relay, which says whether it ended the call at the gateway
      // itself (then nothing is owed) or only let the customer go (then the gateway hears it here).
      return letGo(asking, notBack(), ev.at);
    case 'gone':
      // A relay that could not be reached all through the window: this agent was not back in time.
      if (ev.at >= asking.rejoin.since + REJOIN_WINDOW_MS) return letGo(asking, notBack(), ev.at);
      return letGo(asking, { kind: 'failed', ...ev.error }, ev.at);
    default:
      return assertNever(ev.verdict, 'rejoin verdict');
  }
};

export const rejoinAnswer: Handler<Extract<CallEvent, { type: 'local.rejoin_answer' }>> = (ev, { call }) => {
  if (call === undefined) return { reply: noSuchCall(ev.localId) };
  const offered = rejoining(call);
  // First window wins: another one's answer to the same offer, or one to an offer replaced since, is refused.
  if (offered === undefined || offered.rejoin.legId !== ev.legId || offered.rejoin.answered === true || offered.open !== undefined) {
    return { reply: errText('invalid_state', REJOIN_REFUSALS.offerClosed) };
  }
  return {
    call: { ...offered, open: { waiting: 'rejoin_answer', legId: ev.legId, ...replyTo(ev.requestId) } },
    effects: [{ kind: 'rejoin_answer', localId: offered.localId, callId: offered.callId, legId: ev.legId, sdp: ev.sdp }],
  };
};

export const rejoinAnswered: Handler<Extract<CallEvent, { type: 'local.rejoin_answered' }>> = (ev, { call }) => {
  const answering = rejoining(call);
  if (answering?.open?.waiting !== 'rejoin_answer' || answering.open.legId !== ev.legId) return NOTHING;
  const { outcome } = ev;
  switch (outcome.kind) {
    case 'answered': {
      // The window may connect its leg now.
      const { open: _answered, ...rest } = answering;
      return { call: { ...rest, rejoin: { ...answering.rejoin, answered: true } }, effects: answerReply(answering, ok({ localId: answering.localId, callId: answering.callId })) };
    }
    case 'sdp_refused':
      // That window's answer will not do: a fresh leg is offered to whichever window answers next.
      return askToRejoin(answering, answering.rejoin.since, answerReply(answering, { ok: false, error: outcome.error }));
    case 'refused': {
      // Not the leg the relay offered last, or no longer this agent's to rejoin: the relay's word on the call follows.
      const { open: _refused, ...rest } = answering;
      return { call: rest, effects: answerReply(answering, { ok: false, error: outcome.error }) };
    }
    default:
      return assertNever(outcome, 'rejoin answer outcome');
  }
};

/**
 * Media connected on a rejoining call: connected again once it is the answered leg's; anything
 * earlier is the old leg's. Undefined for a call that is not rejoining.
 */
export function rejoinConnected(call: CallRecord | undefined, at: number): Step | undefined {
  const back = rejoining(call);
  if (back === undefined) return undefined;
  if (back.rejoin.answered !== true) return NOTHING;
  const { rejoin: _done, open: _open, ...rest } = back;
  return { call: rest.phase === 'connecting' ? { ...rest, phase: 'active', connectedAt: at } : rest };
}

/**
 * The call's deadline has come while it rejoins: when it is the rejoin's (not an earlier one of this
 * agent's transfer ringing), this agent was not back in time and the relay never said so: let go.
 */
export function rejoinDeadlineCome(call: CallRecord | undefined, at: number): Step | undefined {
  const away = rejoining(call);
  if (away === undefined) return undefined;
  const ring = away.phase === 'active' && away.transfer?.role === 'from' && away.transfer.state === 'ringing' ? away.transfer.ringsUntil : undefined;
  if (ring !== undefined && ring < rejoinDeadline(away.rejoin)) return undefined;
  return letGo(away, notBack(), at);
}

/**
 * The relay let this agent go for being away too long (`remote.bridge_failed` agent_not_back). With
 * colleagues still in the call it goes on with them, and nothing is owed; else the customer was
 * alone, and the gateway hears terminate (refused harmlessly when the relay ended it already).
 */
export function notBackInTime(call: LiveRecord, ev: Extract<CallEvent, { type: 'remote.bridge_failed' }>): Step {
  const reason = notBack(ev.awaySec);
  return ev.goesOn === true ? endCall(call, reason, ev.at) : letGo(call, reason, ev.at);
}

/** Refuses a hold, a resume or a transfer command while the call rejoins. */
export const refusedWhileRejoining = (call: CallRecord): Result<never> | undefined => (rejoining(call) !== undefined ? errText('invalid_state', REJOIN_REFUSALS.rejoining) : undefined);

/** A rejoinable call as the crash-recovery file keeps it: as the window saw it, without its rejoin. */
export function restorable(call: CallRecord): RestorableCall | undefined {
  if (!canRejoin(call)) return undefined;
  const { open: _open, rejoin: _rejoin, ...shown } = call;
  return shown;
}

/**
 * A call a previous run left live, kept with `restore` (owedOnCrash): a bridged call this agent was
 * in, taken up again as it was, rejoining from now. It is a call of this run: it shows, and enters
 * the history. Undefined when it is not one (the leftover is then ended as any other).
 */
export function restoredCall(ev: Extract<CallEvent, { type: 'local.leftover' }>, calls: Readonly<Record<string, CallRecord>>): Step | undefined {
  const { restore } = ev;
  if (restore === undefined || restore.callId !== ev.callId || !canRejoin(restore) || calls[restore.localId] !== undefined) return undefined;
  return askToRejoin(restore, ev.at);
}
