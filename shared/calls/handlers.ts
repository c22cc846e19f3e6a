// What each event does: one handler per event type, in one table the compiler checks for every
// type. A handler gets the call (or the leftover) the book found for the event and returns one Step:
// the call after it, what must happen, and the answer to its command. The steps several events
// share — ending a call, owing the gateway an end, asking the relay for a decline verdict — are in
// steps.ts; taking a call into hand and a transfer's course are the small functions after the table;
// a bridged call rejoining after its leg went has its handlers in rejoin.ts, the team's recording
// of a bridged call and the supervisors in it theirs in oversight.ts, and mute its own in mute.ts.
//
// protocol.md: duplicates happen, order is not guaranteed (a terminate can arrive before its
// connect) and stale events arrive late. So every handler is idempotent: the same event again
// changes nothing, an ended call is a tombstone that nothing revives, and connects older than
// STALE_CONNECT_MS are dropped.
import type { BridgeFailure } from '../events';
import { term, text, type RuleText } from '../i18n/text';
import type { RuleTerm } from '../i18n/rules';
import { assertNever, errText, ok, type AppError, type Result } from '../result';
import { OTHER_PARTNER_CODE } from '../gateway';
import { TRANSFER_RING_MS } from '../transfer';
import type { CallBook } from './book';
import type { AnsweringOpen, CallRecord, EndedRecord, Leftover, LiveRecord } from './record';
import { muteChanged } from './mute';
import { monitorChanged, recordingChanged } from './oversight';
import {
  mediaFailed,
  notBackInTime,
  refusedWhileRejoining,
  rejoinAnswer,
  rejoinAnswered,
  rejoinConnected,
  rejoinDeadlineCome,
  rejoinFailed,
  rejoinOffer,
  restoredCall,
  windowGone,
} from './rejoin';
import {
  askVerdict,
  endCall,
  failedWith,
  hangUpReason,
  isAsked,
  letGo,
  noSuchCall,
  NOTHING,
  owe,
  proceed,
  replyTo,
  transferTo,
  type Handler,
  type Step,
  type TransferTo,
} from './steps';
import { TRANSFER_OVER, TRANSFER_REFUSALS, transferUnderWay } from './transfers';
import {
  ANSWERED_ELSEWHERE,
  DIAL_TIMEOUT_MS,
  incomingLocalId,
  isBusy,
  isHeld,
  isLive,
  isRejoining,
  localErrorFrom,
  MAX_BUSY_CALLS,
  PHASE_TERM,
  REJOIN_REFUSALS,
  RING_TIMEOUT_MS,
  STALE_CONNECT_MS,
  transferLocalId,
  type CallEffect,
  type CallEvent,
  type CallPhase,
  type CallTransfer,
  type EndReason,
  type GatewayEnd,
} from './types';

/**
 * A transfer's ring here outlasts the relay's own (TRANSFER_RING_MS) by this much, so that the
 * relay's word on how it ended (cancelled, answered elsewhere) comes before the ring gives up.
 */
const TRANSFER_RING_GRACE_MS = 5_000;

/**
 * This agent's own transfer rings a colleague for TRANSFER_RING_MS; its ringing is taken as not
 * answered here this much later, should the relay's word on how it ended never come (the relay
 * restarted, or lost the call): the agent is never left with a ring that does not end.
 */
const STARTED_RING_GRACE_MS = 10_000;

export const handlers: { [T in CallEvent['type']]: Handler<Extract<CallEvent, { type: T }>> } = {
  'remote.incoming': (ev, { call, leftover, book }) => {
    // A connect again, or the connect of a call a previous run left live replayed: it never rings (again).
    if (call !== undefined || leftover !== undefined) return NOTHING;
    if (ev.at - ev.timestamp > STALE_CONNECT_MS) return NOTHING;
    // A tombstone drops a late connect, except while the terminate that made it still waits for its
    // call: then the call is opened and what waited is replayed at once (applyCallEvent), so it lands
    // in the history as it would have in order (missed, answered elsewhere…) without ever ringing.
    if (book.tombstones[ev.callId] !== undefined && book.pending[ev.callId] === undefined) return NOTHING;
    const localId = incomingLocalId(ev.callId);
    if (book.calls[localId] !== undefined) return NOTHING; // never over another call
    return {
      call: {
        phase: 'ringing',
        direction: 'incoming',
        localId,
        callId: ev.callId,
        peer: ev.peer,
        offerSdp: ev.offerSdp,
        createdAt: ev.at,
        // A gateway clock ahead of ours is not trusted.
        ringsUntil: Math.min(ev.timestamp, ev.at) + RING_TIMEOUT_MS,
        ...(ev.ctaPayload !== undefined ? { ctaPayload: ev.ctaPayload } : {}),
        ...(ev.bridged === true ? { bridged: true } : {}),
      },
    };
  },

  'remote.transfer_ring': (ev, { call, book }) => {
    // The same transfer again (the book finds it by its own local id): it never rings twice.
    if (call !== undefined) return NOTHING;
    // Never over a call of this agent's that is still live with that id, nor one a previous run left
    // live (its end is still to be settled); an ended one stays in the history as it was.
    const holder = book.byCallId[ev.callId];
    const holding = holder !== undefined ? book.calls[holder] : undefined;
    if ((holding !== undefined && isLive(holding)) || book.leftovers[ev.callId] !== undefined) return NOTHING;
    // The relay's ring is over by now (a replay after a reconnect). No tombstone drops it: the call
    // this agent had of that id may have ended here long ago while it went on with colleagues.
    if (ev.at - ev.timestamp > TRANSFER_RING_MS) return NOTHING;
    return {
      call: {
        phase: 'ringing',
        direction: 'incoming',
        localId: transferLocalId(ev.transferId),
        callId: ev.callId,
        peer: ev.peer,
        offerSdp: ev.offerSdp,
        createdAt: ev.at,
        ringsUntil: Math.min(ev.timestamp, ev.at) + TRANSFER_RING_MS + TRANSFER_RING_GRACE_MS,
        bridged: true,
        transfer: { id: ev.transferId, kind: ev.kind, role: 'to', colleague: ev.by, state: 'ringing' },
      },
    };
  },

  'remote.transfer': (ev, { call }) => {
    if (call === undefined || call.phase === 'ended') return NOTHING;
    const current = call.transfer;
    // Only this agent's own transfer starts here: the relay tells the agent who started it that it rings.
    if (current === undefined || current.id !== ev.transferId) return ev.state === 'ringing' ? startedTransfer(call, ev) : NOTHING;
    // A transfer that is over stays over: its ring or its end told again (a redelivery, a replay
    // after a reconnect) changes nothing.
    if (TRANSFER_OVER.has(current.state)) return NOTHING;
    return isAsked(current) ? askedTransferUpdate(call, current, ev) : startedTransferUpdate(call, current, ev);
  },

  'remote.answered': (ev, { call }) => {
    if (call?.phase !== 'calling' && call?.phase !== 'remote_ringing') return NOTHING;
    return { call: { ...call, phase: 'connecting', answerSdp: ev.answerSdp, answeredAt: ev.at } };
  },

  'remote.status': (ev, { call }) => {
    if (call?.direction !== 'outgoing') return NOTHING;
    if (call.phase === 'ended') {
      // protocol.md: "REJECTED is followed by a terminate", but order is not guaranteed; when the
      // terminate came first the call looked unanswered. The customer's rejection is the truer record.
      return ev.status === 'REJECTED' && call.end.kind === 'no_answer' ? { call: { ...call, end: { kind: 'rejected' } } } : NOTHING;
    }
    if (ev.status === 'REJECTED') {
      return call.phase === 'calling' || call.phase === 'remote_ringing' || call.phase === 'dialing' ? endCall(call, { kind: 'rejected' }, ev.at) : NOTHING;
    }
    if (ev.status === 'RINGING' && call.phase === 'calling') return { call: { ...call, phase: 'remote_ringing' } };
    return NOTHING; // ACCEPTED: media is never gated on it (protocol.md)
  },

  'remote.terminated': (ev, { call, leftover }) => {
    // The gateway has ended the call: nothing is owed any more, and a decline verdict still out can
    // no longer make it owed (a reject would only be refused).
    if (leftover !== undefined) return leftover.open !== undefined ? { leftover: settled(leftover) } : NOTHING;
    if (call === undefined) return NOTHING;
    // A colleague's talk time is not this agent's: nor is the call's before a colleague handed it on here.
    const theirs = call.transfer?.role === 'to';
    if (call.phase !== 'ended') {
      const reason = terminateReason(call, ev);
      return endCall(call, reason, ev.at, theirs || reason.kind === 'answered_elsewhere' || ev.durationSec === undefined ? {} : { durationSec: ev.durationSec });
    }
    // Handed on, or a consult over: the call went on without this agent, and its end is the colleague's.
    if (call.end.kind === 'transferred' || call.end.kind === 'consult_ended') return NOTHING;
    // A tombstone: nothing revives it. A late terminate may still tell the real duration — not of a
    // call that was in a transfer: this agent may have left it to a colleague, whose time the
    // service's duration counts too.
    const refines = call.transfer === undefined && ev.durationSec !== undefined && call.durationSec !== ev.durationSec && call.connectedAt !== undefined;
    if (!refines && call.open === undefined) return NOTHING;
    const over = withNothingOpen(call);
    return { call: refines ? { ...over, durationSec: ev.durationSec ?? over.durationSec } : over };
  },

  'remote.claimed': (ev, { call, leftover }) => {
    if (leftover !== undefined) {
      // A colleague's call by now: leave it alone.
      return ev.mine === false && leftover.open?.waiting === 'claim' ? { leftover: settled(leftover) } : NOTHING;
    }
    // A transfer to this agent has its own first answer (remote.transfer answered_elsewhere): the call's claim is older.
    if (transferTo(call) !== undefined) return NOTHING;
    switch (call?.phase) {
      case 'ringing':
        // Whoever claimed it: the claim event carries no agent, and the claimant itself is already
        // answering when its own claim comes back from the relay.
        return endCall(call, { kind: 'answered_elsewhere' }, ev.at);
      case 'answering':
        // A colleague's claim while this agent is answering, with no claim of its own won and no accept
        // out: a claim lost to a relay that answered too late (or not at all) still sends no accept.
        return ev.mine === false && call.open.waiting === 'claim' ? endCall(call, { kind: 'answered_elsewhere' }, ev.at) : NOTHING;
      case 'ended':
        // Ended here while its claim was out: a colleague's call now, not this agent's to reject.
        return ev.mine === false && call.open?.waiting === 'claim' ? { call: withNothingOpen(call) } : NOTHING;
      default:
        return NOTHING;
    }
  },

  'remote.bridge_failed': (ev, { call }) => {
    // A leftover is owed its end already; an ended call stays as it ended.
    if (call === undefined || call.phase === 'ended') return NOTHING;
    // This agent was away from the call too long: the relay says whether it goes on without it.
    if (ev.reason === 'agent_not_back') return notBackInTime(call, ev);
    const reason = failedWith('media_failed', BRIDGE_FAILURE_TEXT[ev.reason]);
    // Nobody can answer a call whose media the bridge lost, so no colleague's verdict is waited for:
    // every app it rings rejects it at once (the gateway takes the first and refuses the rest, which
    // settles them too), and the customer is not left ringing until the service gives up.
    if (call.phase === 'ringing') {
      // A transfer's ring: the gateway's call was accepted long ago, and is over with the bridge.
      if (transferTo(call) !== undefined) return endCall(call, reason, ev.at);
      return endCall(call, reason, ev.at, owe(call.localId, call.callId, 'reject'));
    }
    return letGo(call, reason, ev.at);
  },

  'remote.recording': recordingChanged,
  'remote.monitor': monitorChanged,

  'local.dial': (ev, { call, leftover, book }) => {
    if (call !== undefined || leftover !== undefined) return { reply: errText('invalid_state', text('calls.alreadyPlaced')) };
    const taking = takeIntoHand(book, ev.localId, ev.at, 'dialingNew', { counts: true });
    if ('refusal' in taking) return { reply: taking.refusal };
    return {
      held: taking.held,
      call: {
        phase: 'dialing',
        direction: 'outgoing',
        localId: ev.localId,
        peer: ev.peer,
        createdAt: ev.at,
        open: { waiting: 'initiate', ...replyTo(ev.requestId) },
      },
      effects: [{ kind: 'initiate', localId: ev.localId, to: ev.peer.number, sdp: ev.offerSdp }],
    };
  },

  'local.initiate_ok': (ev, { call, book }) => {
    if (call?.phase === 'dialing') {
      const { open: _initiated, ...dialing } = call;
      // The relay sends a claimed call's later events to its owner only (relay/REFERENCE.md "Routing").
      const calling = { ...dialing, phase: 'calling' as const, callId: ev.callId, dialsUntil: ev.at + DIAL_TIMEOUT_MS, ...(ev.bridged === true ? { bridged: true as const } : {}) };
      return proceed(call, calling, [{ kind: 'claim', localId: call.localId, callId: ev.callId }]);
    }
    if (call?.phase === 'ended' && call.open?.waiting === 'initiate') {
      // Hung up while the initiate was on its way: the customer's phone rings now, so end it there too
      // — unless the gateway's own terminate came first and waits for this id (applyCallEvent replays
      // it next): then the call is over there already.
      const named = { ...withNothingOpen(call), callId: ev.callId };
      if (book.pending[ev.callId]?.some((e) => e.type === 'remote.terminated')) return { call: named };
      const owed = owe(named.localId, ev.callId, 'terminate');
      return { call: { ...named, open: owed.open }, effects: owed.effects };
    }
    // Named already by its record id on an event that overtook this answer (book.ts namedByRecordId):
    // only whether its media goes through the team's bridge is news.
    if (call !== undefined && call.phase !== 'ended' && call.callId === ev.callId && ev.bridged === true && call.bridged !== true) return { call: { ...call, bridged: true } };
    return NOTHING;
  },

  'local.initiate_failed': (ev, { call }) => {
    if (call?.phase === 'dialing') return endCall(call, ev.error.gatewayCode === OTHER_PARTNER_CODE ? { kind: 'other_partner' } : { kind: 'failed', ...localErrorFrom(ev.error) }, ev.at, { error: ev.error });
    // Hung up while it was on its way: no call was placed, nothing is left to end.
    if (call?.phase === 'ended' && call.open?.waiting === 'initiate') return { call: withNothingOpen(call) };
    return NOTHING;
  },

  'local.answer': (ev, { call, book }) => {
    if (call === undefined) return { reply: noSuchCall(ev.localId) };
    if (call.phase !== 'ringing') return { reply: notRinging(call, 'answered') };
    const taking = takeIntoHand(book, call.localId, ev.at, 'answeringThis', { counts: true });
    if ('refusal' in taking) return { reply: taking.refusal };
    if (transferTo(call) !== undefined) {
      // The relay's transfer answer is first-answer-wins itself (409 when a colleague was first): no claim.
      return {
        held: taking.held,
        call: { ...call, phase: 'answering', answeredAt: ev.at, open: { waiting: 'accept', ...replyTo(ev.requestId) } },
        effects: [{ kind: 'accept', localId: call.localId, callId: call.callId, sdp: ev.answerSdp }],
      };
    }
    // First claim wins (relay/README.md): no accept goes before this agent's claim is won, so the
    // answer waits; the Answer command is answered once the call is this agent's and accepted.
    return {
      held: taking.held,
      call: { ...call, phase: 'answering', answeredAt: ev.at, open: { waiting: 'claim', answerSdp: ev.answerSdp, ...replyTo(ev.requestId) } },
      effects: [{ kind: 'claim', localId: call.localId, callId: call.callId }],
    };
  },

  'local.claim_result': (ev, { call, leftover }) => {
    if (leftover !== undefined) {
      if (leftover.open?.waiting !== 'claim') return NOTHING;
      // A leftover in progress is terminated only when claiming it again shows it is this agent's;
      // when the relay cannot say, the gateway ends it by itself rather than risk a colleague's call.
      if (ev.outcome !== 'won') return { leftover: settled(leftover) };
      const owed = owe(leftover.localId, leftover.callId, leftover.open.owed);
      return { leftover: { ...leftover, open: owed.open }, effects: owed.effects };
    }
    if (call?.phase === 'answering' && call.open.waiting === 'claim') {
      if (ev.outcome === 'lost') return endCall(call, { kind: 'answered_elsewhere' }, ev.at);
      // Won, or the relay could not say: a relay that is down must not keep a customer waiting.
      const accepting: AnsweringOpen = { waiting: 'accept', ...replyTo(call.open.replyTo) };
      return { call: { ...call, open: accepting }, effects: [{ kind: 'accept', localId: call.localId, callId: call.callId, sdp: call.open.answerSdp }] };
    }
    if (call?.phase === 'ended' && call.direction === 'incoming' && call.open?.waiting === 'claim') {
      // Ended here while the claim was out: the gateway hears it only when the claim shows the call is
      // this agent's. A relay that cannot say may have given it to a colleague who accepted it; a call
      // nobody accepted the gateway ends by itself.
      if (ev.outcome !== 'won') return { call: withNothingOpen(call) };
      const owed = owe(call.localId, call.callId, call.open.owed);
      return { call: { ...call, open: owed.open }, effects: owed.effects };
    }
    // An outgoing call's claim only routes its events (relay/REFERENCE.md "Routing"): its outcome changes
    // nothing here; its terminate, if it ended meanwhile, went out when it ended.
    return NOTHING;
  },

  'local.accept_ok': (_ev, { call }) => {
    if (call?.phase !== 'answering') return NOTHING;
    const { open: _accepted, ...answering } = call;
    return proceed(call, { ...answering, phase: 'connecting', ...answeredTransfer(call) });
  },

  'local.accept_failed': (ev, { call }) => {
    // The gateway refused the answer: whatever media did, the call is over. Outgoing calls are never accepted.
    if (call?.direction !== 'incoming' || (call.phase !== 'answering' && call.phase !== 'connecting' && call.phase !== 'active')) return NOTHING;
    const asked = transferTo(call);
    if (asked !== undefined) {
      // The answer went to the relay, never to the gateway: nothing is owed there.
      if (ev.error.code === 'answered_elsewhere') return endCall(call, { kind: 'answered_elsewhere' }, ev.at, { error: ev.error });
      // The relay did not take it: it is declined there, so that it stops ringing this agent and the
      // colleague who asked hears at once that it is not taken here.
      const declined: CallEffect = { kind: 'transfer_decline', localId: call.localId, callId: call.callId, transferId: asked.id };
      return endCall(call, { kind: 'failed', ...localErrorFrom(ev.error) }, ev.at, { effects: [declined], error: ev.error });
    }
    // Another partner answers this number's calls: the call rings on there, and nothing is ours to end.
    if (ev.error.gatewayCode === OTHER_PARTNER_CODE) return endCall(call, { kind: 'other_partner' }, ev.at, { error: ev.error });
    // After a timeout or a network error the accept may have landed: terminate covers both.
    // A refusal of our answer itself (error 100 about our SDP, protocol.md) leaves the call
    // ringing at the gateway: reject it. Any other refusal may mean it no longer rings — a
    // colleague accepted it on a claim the relay never stored (a claim the relay cannot answer
    // is accepted anyway) — and a reject must never reach a colleague's call: the gateway ends
    // a call nobody accepted by itself.
    const action: GatewayEnd | undefined =
      ev.error.code === 'timeout' || ev.error.code === 'gateway_unreachable' ? 'terminate' : refusesOurAnswer(ev.error) ? 'reject' : undefined;
    const owed = action !== undefined ? owe(call.localId, call.callId, action) : {};
    return endCall(call, { kind: 'failed', ...localErrorFrom(ev.error) }, ev.at, { ...owed, error: ev.error });
  },

  'local.decline': (ev, { call }) => {
    if (call === undefined) return { reply: noSuchCall(ev.localId) };
    if (call.phase !== 'ringing') return { reply: notRinging(call, 'declined') };
    if (transferTo(call) !== undefined) return { ...letGo(call, { kind: 'declined' }, ev.at), reply: ok({ localId: call.localId, callId: call.callId }) };
    // In a team the call rings on for colleagues: it stops here at once, and the gateway hears
    // "reject" only when the relay says nobody else may still answer it.
    return { ...endCall(call, { kind: 'declined' }, ev.at, askVerdict(call.localId, call.callId)), reply: ok({ localId: call.localId, callId: call.callId }) };
  },

  'local.decline_result': (ev, { call, leftover }) => {
    // Rejecting blind could take the call from a colleague about to answer it; unanswered, it ends
    // at the gateway's own timeout. Only the last of the team rejects.
    if (leftover !== undefined) {
      if (leftover.open?.waiting !== 'verdict') return NOTHING;
      if (ev.last !== true) return { leftover: settled(leftover) };
      const owed = owe(leftover.localId, leftover.callId, 'reject');
      return { leftover: { ...leftover, open: owed.open }, effects: owed.effects };
    }
    if (call?.phase !== 'ended' || call.direction !== 'incoming' || call.open?.waiting !== 'verdict') return NOTHING;
    if (ev.last !== true) return { call: withNothingOpen(call) };
    const owed = owe(call.localId, call.callId, 'reject');
    return { call: { ...call, open: owed.open }, effects: owed.effects };
  },

  'local.hangup': (ev, { call }) => {
    if (call === undefined) return { reply: noSuchCall(ev.localId) };
    // Hanging up twice is harmless, and sends nothing more.
    const reply = ok({ localId: call.localId, callId: call.callId ?? '' });
    if (call.phase === 'ended') return { reply };
    return { ...letGo(call, hangUpReason(call), ev.at), reply };
  },

  'local.hold': (ev, { call }) => {
    if (call === undefined) return { reply: noSuchCall(ev.localId) };
    if (call.phase !== 'active') return { reply: errText('invalid_state', text('calls.onlyActiveHeld', { phase: phaseTerm(call.phase) })) };
    // The relay keeps the customer on hold music meanwhile; the hold is the agent's to change once it is back.
    const rejoiningNow = refusedWhileRejoining(call);
    if (rejoiningNow !== undefined) return { reply: rejoiningNow };
    if (transferUnderWay(call)) return { reply: errText('invalid_state', TRANSFER_REFUSALS.hold) };
    // Holding a held call is harmless.
    const reply = ok({ localId: call.localId, callId: call.callId });
    return call.heldSince === undefined ? { call: hold(call, ev.at), reply } : { reply };
  },

  'local.resume': (ev, { call, book }) => {
    if (call === undefined) return { reply: noSuchCall(ev.localId) };
    if (call.phase !== 'active') return { reply: errText('invalid_state', text('calls.onlyActiveResumed', { phase: phaseTerm(call.phase) })) };
    const rejoiningNow = refusedWhileRejoining(call);
    if (rejoiningNow !== undefined) return { reply: rejoiningNow };
    // Resuming a call in hand is harmless.
    const reply = ok({ localId: call.localId, callId: call.callId });
    const { heldSince, ...resumed } = call;
    if (heldSince === undefined) return { reply };
    // Swap: the call in hand goes on hold in the same step. Resuming adds no busy call: no cap to check.
    const taking = takeIntoHand(book, call.localId, ev.at, 'resumingThis', { counts: false });
    if ('refusal' in taking) return { reply: taking.refusal };
    return { held: taking.held, call: { ...resumed, heldMs: (call.heldMs ?? 0) + Math.max(0, ev.at - heldSince) }, reply };
  },

  'local.mute': muteChanged,

  'local.media_connected': (ev, { call }) => {
    const back = rejoinConnected(call, ev.at);
    if (back !== undefined) return back;
    if (call?.phase === 'connecting') return { call: { ...call, phase: 'active', connectedAt: ev.at } };
    if (call?.phase !== 'answering') return NOTHING;
    // Media may connect before the accept response returns: the gateway had the answer already.
    const { open: _accepted, ...answering } = call;
    return proceed(call, { ...answering, phase: 'active', connectedAt: ev.at, ...answeredTransfer(call) });
  },

  'local.media_failed': mediaFailed,
  'local.window_gone': windowGone,
  'local.rejoin_offer': rejoinOffer,
  'local.rejoin_failed': rejoinFailed,
  'local.rejoin_answer': rejoinAnswer,
  'local.rejoin_answered': rejoinAnswered,

  'local.deadline': (ev, { call }) => {
    // What the deadline means depends on the phase: ring timeout, or dial timeout; while the call
    // rejoins, this agent not back in time.
    const notBack = rejoinDeadlineCome(call, ev.at);
    if (notBack !== undefined) return notBack;
    if (call?.phase === 'ringing') return letGo(call, { kind: 'missed' }, ev.at); // rang out here: a colleague may still answer
    if (call?.phase === 'calling' || call?.phase === 'remote_ringing') return letGo(call, { kind: 'no_answer' }, ev.at);
    // This agent's transfer rang on with no word from the relay: back with the customer, as the relay's not_answered would say.
    if (call?.phase === 'active' && call.transfer?.role === 'from' && call.transfer.state === 'ringing') return withTransfer(call, settledTransfer(call.transfer, 'not_answered'));
    return NOTHING;
  },

  'local.transfer_gone': (ev, { call }) => {
    if (call === undefined || call.phase === 'ended') return NOTHING;
    const current = call.transfer;
    // Only what a cancel acts on: a three-way call goes on with its agents, whatever became of the transfer it came from.
    if (current?.role !== 'from' || current.id !== ev.transferId || (current.state !== 'ringing' && current.state !== 'consulting')) return NOTHING;
    return withTransfer(call, settledTransfer(current, 'done'));
  },

  'local.end_result': (ev, { call, leftover }) => {
    // Not reached: the gateway may still think the call is live; it stays owed (and in the
    // crash-recovery file) for the next start. A leftover had its last try.
    if (leftover !== undefined) return leftover.open?.waiting === 'confirmation' ? { leftover: settled(leftover) } : NOTHING;
    if (call?.phase !== 'ended' || call.open?.waiting !== 'confirmation' || ev.outcome === 'unreached') return NOTHING;
    return { call: withNothingOpen(call) };
  },

  'local.leftover': (ev, { call, leftover, book }) => {
    if (call !== undefined || leftover !== undefined || book.byCallId[ev.callId] !== undefined || book.leftovers[ev.callId] !== undefined) return NOTHING;
    // A bridged call this agent was in: it rejoins rather than ending (rejoin.ts).
    const restored = restoredCall(ev, book.calls);
    if (restored !== undefined) return restored;
    const left: Leftover = { localId: ev.localId, callId: ev.callId, since: ev.at };
    if (ev.action === 'reject') {
      // It rang when the previous run stopped: the team decides, as for a decline.
      const asked = askVerdict(ev.localId, ev.callId);
      return { leftover: { ...left, open: { waiting: 'verdict', owed: 'reject' } }, effects: asked.effects };
    }
    // It was this agent's call: terminated once claiming it again shows it still is.
    return { leftover: { ...left, open: { waiting: 'claim', owed: 'terminate' } }, effects: [{ kind: 'claim', localId: ev.localId, callId: ev.callId }] };
  },
};

// ---------------------------------------------------------------------------------------------
// Taking a call into hand, and why the gateway's terminate ended a call.
// ---------------------------------------------------------------------------------------------

/**
 * Two busy calls at most, one of them in hand: a call taken into hand (answered, dialed, resumed)
 * holds the one in hand first, in the same step; one that cannot be held yet (still connecting)
 * refuses it. `counts`: the call taken adds a busy call (not so a resumed one).
 */
function takeIntoHand(book: CallBook, localId: string, at: number, doing: RuleTerm, { counts }: { counts: boolean }): { held: CallRecord[] } | { refusal: Result<never> } {
  const others = Object.values(book.calls).filter((c) => c.localId !== localId && isBusy(c));
  if (counts && others.length >= MAX_BUSY_CALLS) return { refusal: errText('invalid_state', text('calls.twoInProgress', { doing: term(doing) })) };
  const held: CallRecord[] = [];
  for (const other of others) {
    if (isHeld(other)) continue;
    if (other.phase !== 'active') return { refusal: errText('invalid_state', text('calls.otherNotConnected', { doing: term(doing) })) };
    // Its leg is being replaced: it cannot be held before it is back (see local.hold).
    if (isRejoining(other)) return { refusal: errText('invalid_state', REJOIN_REFUSALS.rejoining) };
    // The relay routes that call's customer now: it cannot be held (see local.hold).
    if (transferUnderWay(other)) return { refusal: errText('invalid_state', TRANSFER_REFUSALS.hold) };
    held.push(hold(other, at));
  }
  return { held };
}

function hold(call: Extract<CallRecord, { phase: 'active' }>, at: number): CallRecord {
  return { ...call, heldSince: at };
}

function terminateReason(call: LiveRecord, ev: Extract<CallEvent, { type: 'remote.terminated' }>): EndReason {
  const first = ev.errors?.[0];
  if (ev.status === 'FAILED' || first) {
    // The gateway's own words when it gave some; else the catalogue's.
    if (first) return { kind: 'failed', code: String(first.code), message: first.message };
    return failedWith('FAILED', text('calls.failed'));
  }
  // protocol.md: a terminate carries a duration only when the call was answered. A call that was
  // still ringing here but talked for a while was taken by someone else (a colleague whose claim
  // never reached us, another device), not missed. One this agent was answering was answered by
  // this agent's accept, whose response had not come back yet. An outgoing one was answered
  // although its connect was lost or overtaken.
  const answered = ev.durationSec !== undefined && ev.durationSec > 0;
  switch (call.phase) {
    case 'ringing':
      // A transfer's ring: the talk so far was the colleague's with the customer, who gave up now.
      return answered && transferTo(call) === undefined ? { kind: 'answered_elsewhere' } : { kind: 'missed' };
    case 'answering':
      // Only an accept this agent sent can have answered it: while the claim is still out none has
      // gone, so the talk time is a colleague's (whose claim won first).
      if (!answered) return { kind: 'missed' };
      return call.open.waiting === 'accept' ? { kind: 'completed', by: 'customer' } : { kind: 'answered_elsewhere' };
    case 'dialing':
    case 'calling':
    case 'remote_ringing':
      return answered ? { kind: 'completed', by: 'customer' } : { kind: 'no_answer' };
    case 'connecting':
    case 'active':
      return { kind: 'completed', by: 'customer' };
    default:
      return assertNever(call, 'call');
  }
}

// ---------------------------------------------------------------------------------------------
// Transfers (shared/transfer.ts): how the relay's word changes the call it concerns.
// ---------------------------------------------------------------------------------------------

type TransferEvent = Extract<CallEvent, { type: 'remote.transfer' }>;

const sameColleague = (a: CallTransfer['colleague'], b: CallTransfer['colleague']): boolean => a?.agentId === b?.agentId && a?.name === b?.name;

/** The call with its transfer changed; the call as given (the very same when nothing else changed) when the transfer stays as it is. */
function withTransfer(call: LiveRecord, next: CallTransfer): Step {
  const current = call.transfer;
  const same =
    current !== undefined &&
    current.id === next.id &&
    current.kind === next.kind &&
    current.role === next.role &&
    current.state === next.state &&
    current.ringsUntil === next.ringsUntil &&
    sameColleague(current.colleague, next.colleague);
  return { call: same ? call : { ...call, transfer: next } };
}

/** A transfer or consult this agent started rings a colleague: only on an active call of its own, with no other transfer under way. */
function startedTransfer(call: LiveRecord, ev: TransferEvent): Step {
  if (call.phase !== 'active') return NOTHING;
  const current = call.transfer;
  if (current !== undefined && !TRANSFER_OVER.has(current.state)) return NOTHING;
  return withTransfer(call, {
    id: ev.transferId,
    kind: ev.kind,
    role: 'from',
    ...(ev.colleague !== undefined ? { colleague: ev.colleague } : {}),
    state: 'ringing',
    ringsUntil: ev.at + TRANSFER_RING_MS + STARTED_RING_GRACE_MS,
  });
}

/** How a transfer or consult this agent started goes on (it is under way: one that is over hears nothing more). */
function startedTransferUpdate(call: LiveRecord, current: CallTransfer, ev: TransferEvent): Step {
  const colleague = ev.colleague ?? current.colleague;
  const named = colleague !== undefined ? { colleague } : {};
  const moved = (state: CallTransfer['state']): Step => withTransfer(call, { ...settledTransfer(current, state), ...named });
  // The relay takes the customer off hold when a colleague answers a consult, a three-way call
  // begins, or the colleague leaves it: the call is no longer held here either (the window's media
  // follows the hold, and would keep the agent deaf to the colleague).
  const resumed = (state: CallTransfer['state']): Step => withTransfer(unheld(call, ev.at), { ...settledTransfer(current, state), ...named });
  switch (ev.state) {
    case 'ringing':
      return current.state === 'ringing' ? moved('ringing') : NOTHING;
    case 'consulting':
      return current.state === 'ringing' || current.state === 'consulting' ? resumed('consulting') : NOTHING;
    case 'joined':
      return resumed('joined');
    case 'not_answered':
      return current.state === 'ringing' || current.state === 'consulting' ? moved('not_answered') : NOTHING;
    case 'transferred':
      // The colleague has the customer: this agent's part is over, and the gateway hears nothing of it.
      return endCall(call, { kind: 'transferred', to: colleague?.name ?? '' }, ev.at);
    case 'cancelled':
      // Taken back: back with the customer alone, held as before if it still rang (the relay held the customer on).
      return moved('done');
    case 'with_customer':
      // The colleague left: this agent is alone with the customer, whom the relay no longer holds.
      return resumed('done');
    case 'answered_elsewhere':
      return NOTHING;
    default:
      return assertNever(ev.state, 'transfer state');
  }
}

/** This agent's transfer in a new state: the deadline of its ring goes once it no longer rings. */
function settledTransfer(current: CallTransfer, state: CallTransfer['state']): CallTransfer {
  if (state === 'ringing') return current;
  const { ringsUntil: _ringsUntil, ...rest } = current;
  return { ...rest, state };
}

/** The call off hold, its time on hold counted, when the relay took the customer off hold. */
function unheld(call: LiveRecord, at: number): LiveRecord {
  if (call.phase !== 'active' || call.heldSince === undefined) return call;
  const { heldSince, ...rest } = call;
  return { ...rest, heldMs: (call.heldMs ?? 0) + Math.max(0, at - heldSince) };
}

/** How a transfer or consult a colleague rang this agent with goes on. */
function askedTransferUpdate(call: LiveRecord, current: TransferTo, ev: TransferEvent): Step {
  const answered = call.phase !== 'ringing';
  switch (ev.state) {
    case 'answered_elsewhere':
      // Another colleague rung with it answered first. Nothing is owed to anyone.
      return call.phase === 'ringing' || call.phase === 'answering' ? endCall(call, { kind: 'answered_elsewhere' }, ev.at) : NOTHING;
    case 'cancelled':
      // The colleague took it back: its ring stops, or the consult ends here; the customer stays with them.
      if (current.state !== 'ringing' && current.state !== 'consulting') return NOTHING;
      return endCall(call, answered ? { kind: 'consult_ended' } : { kind: 'missed' }, ev.at);
    case 'consulting':
      return answered && current.state === 'ringing' ? withTransfer(call, { ...current, state: 'consulting' }) : NOTHING;
    case 'joined':
      return answered && current.state !== 'done' ? withTransfer(call, { ...current, state: 'joined' }) : NOTHING;
    case 'with_customer':
      // The colleague left or completed the transfer: this agent has the customer now.
      return answered ? withTransfer(call, { ...current, state: 'done' }) : NOTHING;
    case 'ringing':
    case 'transferred':
    case 'not_answered':
      return NOTHING;
    default:
      return assertNever(ev.state, 'transfer state');
  }
}

/** A colleague's transfer or consult answered here: the two talk (a consult), or this agent has the customer (a transfer). */
function answeredTransfer(call: LiveRecord): { transfer?: CallTransfer } {
  const asked = transferTo(call);
  if (asked === undefined || asked.state !== 'ringing') return {};
  return { transfer: { ...asked, state: asked.kind === 'consult' ? 'consulting' : 'done' } };
}

/**
 * The gateway refused the SDP answer we sent. Error 100 on accept is an invalid parameter, and the
 * parameter an accept carries is our SDP (protocol.md: "SDP details in error_data"), so 100 is our
 * answer refused — unless the words name the call itself (its call_id, or a call no longer or
 * already in some state): then it may be a colleague's call now.
 */
function refusesOurAnswer(error: AppError): boolean {
  if (error.gatewayCode !== 100) return false;
  const words = `${error.message} ${error.detail ?? ''}`;
  if (/\bsdp\b/i.test(words)) return true;
  return !/\bcall_id\b|\bthis call\b|\balready\b|\bno longer\b/i.test(words);
}

/** Why the bridge let a call go, as the ended call says it (this agent not back: rejoin.ts). */
const BRIDGE_FAILURE_TEXT: Readonly<Record<Exclude<BridgeFailure, 'agent_not_back'>, RuleText>> = {
  node_gone: text('calls.bridgeNodeGone'),
  customer_leg_failed: text('calls.bridgeCustomerLegFailed'),
};

const phaseTerm = (phase: CallPhase) => term(PHASE_TERM[phase]);

function notRinging(call: CallRecord, verb: 'answered' | 'declined'): Result<never> {
  if (call.phase === 'ended' && call.end.kind === 'answered_elsewhere') return errText('answered_elsewhere', ANSWERED_ELSEWHERE);
  return errText('invalid_state', text(verb === 'answered' ? 'calls.onlyRingingAnswered' : 'calls.onlyRingingDeclined', { phase: phaseTerm(call.phase) }));
}

/** An ended call with nothing open any more. */
function withNothingOpen(call: EndedRecord): EndedRecord {
  if (call.open === undefined) return call;
  const { open: _settled, ...rest } = call;
  return rest;
}

/** A leftover with nothing owed any more: dropped at the next prune, its tombstone kept. */
function settled(leftover: Leftover): Leftover {
  const { open: _settled, ...rest } = leftover;
  return rest;
}
