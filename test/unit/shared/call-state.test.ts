import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyCallEvent,
  BUSY_PHASES,
  deadlineOf,
  DIAL_TIMEOUT_MS,
  emptyBook,
  hasBusyCall,
  incomingLocalId,
  isBusy,
  isLive,
  LIVE_PHASES,
  liveCalls,
  localErrorFrom,
  owedOnCrash,
  PENDING_TTL_MS,
  pruneBook,
  REJOIN_VERDICTS,
  publicCall,
  reduceCall,
  RING_TIMEOUT_MS,
  STALE_CONNECT_MS,
  TOMBSTONE_TTL_MS,
  type CallBook,
  type CallEffect,
  type CallEvent,
  type CallPhase,
  type CallRecord,
  type EndedRecord,
  type EndKind,
  type Leftover,
} from '../../../shared/call-state';
import { term, text, type RuleText } from '../../../shared/i18n/text';
import { TRANSFER_STATES } from '../../../shared/transfer';
import type { AppError, ErrorCode } from '../../../shared/result';
import {
  ACCEPT_TIMEOUT,
  acceptFailed,
  acceptOk,
  answer,
  ANSWER_REQUEST,
  ANSWER_SDP,
  answered,
  asEnded,
  ASKED_IDS,
  ASKED_LOCAL,
  bridgeFailed,
  CALLEE,
  CAROL,
  claimed,
  claimResult,
  CUSTOMER,
  deadline,
  decline,
  declineResult,
  dial,
  DIAL_OFFER_SDP,
  DIAL_REQUEST,
  endedCalls,
  endResult,
  hangup,
  hold,
  resume,
  IN_ID,
  IN_LOCAL,
  incoming,
  incomingStates,
  INCOMING_IDS,
  initiateFailed,
  initiateOk,
  LEFT_ID,
  LEFT_LOCAL,
  leftover,
  LEFTOVER_IDS,
  mediaConnected,
  mediaFailed,
  OFFER_SDP,
  OUT_ID,
  OUT_LOCAL,
  outgoingStates,
  OUTGOING_IDS,
  OWN_TRANSFER,
  REJOIN_LEG,
  REJOIN_REFUSED,
  REJOIN_SDP_REFUSED,
  rejoinAnswer,
  rejoinAnswered,
  rejoinFailed,
  rejoinOffer,
  run,
  runWithEffects,
  status,
  T0,
  terminated,
  transferGone,
  transferRing,
  transferUpdate,
  windowGone,
  type CallIds,
} from './call-fixtures';

// ---------------------------------------------------------------------------------------------
// The transition table: every phase (incoming, outgoing) × every event; then a call left live by a
// previous run × every event.
// ---------------------------------------------------------------------------------------------

type PhaseOutcome = Exclude<CallPhase, 'ended'> | 'active:held' | `ended:${EndKind}` | `ended:completed/${'agent' | 'customer'}` | `ended:failed/${string}`;
/**
 * `=`: the event does not apply and the reducer returns the very same object.
 * `<outcome> (open)`: only what is still open about the call changed (its claim, a verdict or request
 * under way, what the gateway is owed): a new object whose public view is the same.
 * `<outcome>`: the call as the agent sees it changed.
 */
type Outcome = '=' | PhaseOutcome | `${PhaseOutcome} (open)`;
/**
 * An effect as the table names it. `reply:*` answers the command of the cell's own event,
 * `awaited:*` the command the call was waiting on (the Answer or Call that built the row).
 */
type Fx =
  | 'claim'
  | 'decline'
  | 'accept'
  | 'initiate'
  | 'end:reject'
  | 'end:terminate'
  | 'transfer_decline'
  | 'deadline:set'
  | 'deadline:cancel'
  | `reply:${'ok' | ErrorCode}`
  | `awaited:${'ok' | ErrorCode}`;
/** What one event does to one row: its outcome, and the effects it asks for, in order. */
type Cell = Outcome | readonly [Outcome, ...Fx[]];

const EVENT_KEYS = [
  'remote.incoming',
  'remote.answered',
  'remote.status:RINGING',
  'remote.status:ACCEPTED',
  'remote.status:REJECTED',
  'remote.terminated:COMPLETED',
  'remote.terminated:COMPLETED+duration',
  'remote.terminated:FAILED',
  'remote.claimed', // whose claim it is is not known here (this agent's id is not known yet)
  'remote.claimed:mine',
  'remote.claimed:theirs',
  'remote.bridge_failed', // the node that held the call's media is gone
  'remote.transfer_ring', // a colleague's consult of the call rings this agent (a call of its own)
  // The relay's word on a transfer that is not the call's (the rows here have none): only its start counts.
  'remote.transfer:ringing',
  'remote.transfer:consulting',
  'remote.transfer:joined',
  'remote.transfer:transferred',
  'remote.transfer:with_customer',
  'remote.transfer:not_answered',
  'remote.transfer:cancelled',
  'remote.transfer:answered_elsewhere',
  'local.transfer_gone', // the relay no longer knows a transfer of the call (the rows here have none)
  // Who else hears the call (calls/oversight.ts; call-oversight.test.ts): the rows here record nothing and have no supervisor in them.
  'remote.recording:on',
  'remote.recording:off',
  'remote.monitor:whisper',
  'remote.monitor:left',
  'local.dial',
  'local.initiate_ok',
  'local.initiate_failed',
  'local.answer',
  'local.accept_ok',
  'local.accept_failed', // refused: the call still rings at the gateway
  'local.accept_failed:timeout', // the accept may have landed
  'local.claim_result:won',
  'local.claim_result:lost',
  'local.claim_result:unknown',
  'local.decline',
  'local.decline_result:last',
  'local.decline_result:others', // a colleague may still answer
  'local.decline_result:unknown', // the relay could not say
  'local.hangup',
  'local.hold',
  'local.resume',
  'local.mute', // the agent's microphone muted (calls/mute.ts; call-mute.test.ts)
  'local.media_connected',
  'local.media_failed',
  'local.deadline',
  'local.end_result:done',
  'local.end_result:refused',
  'local.end_result:unreached',
  'local.leftover:reject',
  'local.leftover:terminate',
  // A bridged call rejoining after its leg went (calls/rejoin.ts; call-rejoin.test.ts): none of the rows here is bridged.
  'local.window_gone',
  'local.rejoin_offer',
  'local.rejoin_failed:not_member',
  'local.rejoin_failed:ended',
  'local.rejoin_failed:gone',
  'local.rejoin_answer',
  'local.rejoin_answered:answered',
  'local.rejoin_answered:sdp_refused',
  'local.rejoin_answered:refused',
] as const;
type EventKey = (typeof EVENT_KEYS)[number];
type RejoinKey = Extract<EventKey, 'local.window_gone' | `local.rejoin_${string}`>;

/** When the table's events happen: after every fixture state was reached. */
const AT = T0 + 100_000;
/** The request id of the table's own commands. */
const TABLE_REQUEST = 'rq-table';

/** One event of each kind, carrying the ids of the call it is applied to. */
function tableEvents({ callId, localId }: CallIds): Record<EventKey, CallEvent> {
  return {
    'remote.incoming': incoming(AT, { callId }),
    'remote.answered': answered(AT, callId),
    'remote.status:RINGING': status(AT, 'RINGING', callId),
    'remote.status:ACCEPTED': status(AT, 'ACCEPTED', callId),
    'remote.status:REJECTED': status(AT, 'REJECTED', callId),
    'remote.terminated:COMPLETED': terminated(AT, { callId }),
    'remote.terminated:COMPLETED+duration': terminated(AT, { callId, durationSec: 42 }),
    'remote.terminated:FAILED': terminated(AT, {
      callId,
      status: 'FAILED',
      errors: [{ code: 138021, message: 'No media received from the business' }],
    }),
    'remote.claimed': claimed(AT, callId),
    'remote.claimed:mine': claimed(AT, callId, true),
    'remote.claimed:theirs': claimed(AT, callId, false),
    'remote.bridge_failed': bridgeFailed(AT, callId),
    'remote.transfer_ring': transferRing(AT, { callId }),
    'remote.transfer:ringing': transferUpdate(AT, 'ringing', { callId, transferId: OWN_TRANSFER, colleague: CAROL }),
    'remote.transfer:consulting': transferUpdate(AT, 'consulting', { callId, transferId: OWN_TRANSFER, colleague: CAROL }),
    'remote.transfer:joined': transferUpdate(AT, 'joined', { callId, transferId: OWN_TRANSFER, colleague: CAROL }),
    'remote.transfer:transferred': transferUpdate(AT, 'transferred', { callId, transferId: OWN_TRANSFER, colleague: CAROL }),
    'remote.transfer:with_customer': transferUpdate(AT, 'with_customer', { callId, transferId: OWN_TRANSFER, colleague: CAROL }),
    'remote.transfer:not_answered': transferUpdate(AT, 'not_answered', { callId, transferId: OWN_TRANSFER, reason: 'no_answer' }),
    'remote.transfer:cancelled': transferUpdate(AT, 'cancelled', { callId, transferId: OWN_TRANSFER }),
    'remote.transfer:answered_elsewhere': transferUpdate(AT, 'answered_elsewhere', { callId, transferId: OWN_TRANSFER }),
    'local.transfer_gone': transferGone(AT, localId, OWN_TRANSFER),
    'remote.recording:on': { type: 'remote.recording', at: AT, callId, recording: true, timestamp: AT - 100 },
    'remote.recording:off': { type: 'remote.recording', at: AT, callId, recording: false, timestamp: AT - 100 },
    'remote.monitor:whisper': { type: 'remote.monitor', at: AT, callId, supervisorId: 'sam', name: 'Sam Supervisor', mode: 'whisper', timestamp: AT - 100 },
    'remote.monitor:left': { type: 'remote.monitor', at: AT, callId, supervisorId: 'sam', name: 'Sam Supervisor', mode: 'left', timestamp: AT - 100 },
    'local.dial': dial(AT, localId, CALLEE, TABLE_REQUEST),
    'local.initiate_ok': initiateOk(AT, localId, callId),
    'local.initiate_failed': initiateFailed(AT, localId),
    'local.answer': answer(AT, localId, TABLE_REQUEST),
    'local.accept_ok': acceptOk(AT, localId),
    'local.accept_failed': acceptFailed(AT, localId),
    'local.accept_failed:timeout': acceptFailed(AT, localId, ACCEPT_TIMEOUT),
    'local.claim_result:won': claimResult(AT, 'won', localId),
    'local.claim_result:lost': claimResult(AT, 'lost', localId),
    'local.claim_result:unknown': claimResult(AT, 'unknown', localId),
    'local.decline': decline(AT, localId, TABLE_REQUEST),
    'local.decline_result:last': declineResult(AT, true, localId),
    'local.decline_result:others': declineResult(AT, false, localId),
    'local.decline_result:unknown': declineResult(AT, undefined, localId),
    'local.hangup': hangup(AT, localId, TABLE_REQUEST),
    'local.hold': hold(AT, localId, TABLE_REQUEST),
    'local.resume': resume(AT, localId, TABLE_REQUEST),
    'local.mute': { type: 'local.mute', at: AT, localId, muted: true, requestId: TABLE_REQUEST },
    'local.media_connected': mediaConnected(AT, localId),
    'local.media_failed': mediaFailed(AT, localId),
    'local.deadline': deadline(AT, localId),
    'local.end_result:done': endResult(AT, 'done', localId),
    'local.end_result:refused': endResult(AT, 'refused', localId),
    'local.end_result:unreached': endResult(AT, 'unreached', localId),
    'local.leftover:reject': leftover(AT, 'reject', callId, localId),
    'local.leftover:terminate': leftover(AT, 'terminate', callId, localId),
    'local.window_gone': windowGone(AT, localId, mediaFailed(AT, localId).error), // with the media failure's reason: a direct call ends exactly as with that
    'local.rejoin_offer': rejoinOffer(AT, localId),
    'local.rejoin_failed:not_member': rejoinFailed(AT, 'not_member', localId),
    'local.rejoin_failed:ended': rejoinFailed(AT, 'ended', localId),
    'local.rejoin_failed:gone': rejoinFailed(AT, 'gone', localId),
    'local.rejoin_answer': rejoinAnswer(AT, localId, REJOIN_LEG, TABLE_REQUEST),
    'local.rejoin_answered:answered': rejoinAnswered(AT, { kind: 'answered' }, localId),
    'local.rejoin_answered:sdp_refused': rejoinAnswered(AT, { kind: 'sdp_refused', error: REJOIN_SDP_REFUSED }, localId),
    'local.rejoin_answered:refused': rejoinAnswered(AT, { kind: 'refused', error: REJOIN_REFUSED }, localId),
  };
}

const inStates = incomingStates();
const outStates = outgoingStates();
const ROWS = {
  'in.ringing': inStates.ringing,
  'in.answering': inStates.answering, // Answer clicked: the claim is out, the answer held
  'in.accepting': inStates.accepting, // the claim won: the accept is out
  'in.connecting': inStates.connecting,
  'in.active': inStates.active,
  'in.held': inStates.held, // on hold: the customer hears music
  'in.hung_up': inStates.hungUp, // the agent hung up after 30 s; the terminate is not confirmed yet
  'in.ended': inStates.ended, // ... and confirmed: nothing is open any more
  'in.declining': run([decline(T0 + 4_000)], inStates.ringing), // declined here; the relay's verdict is out
  'out.dialing': outStates.dialing, // the initiate is out
  'out.cancelled': run([hangup(T0 + 500, OUT_LOCAL)], outStates.dialing), // hung up while the initiate was out
  'out.calling': outStates.calling,
  'out.remote_ringing': outStates.remote_ringing,
  'out.connecting': outStates.connecting,
  'out.active': outStates.active,
  'out.held': outStates.held,
  'out.ended': outStates.ended, // no answer: the dial deadline gave up; the terminate is confirmed
} as const;
type RowKey = keyof typeof ROWS;

/**
 * None of these calls is in a transfer: the relay's word on one changes nothing (a transfer this
 * agent starts rings only on an active call, below), and a colleague's transfer never rings over a
 * live call of the same id (it rings beside an ended one: see the check of what opens beside).
 */
const NO_TRANSFER_OF_ITS_OWN = {
  'remote.transfer_ring': '=',
  'remote.transfer:ringing': '=',
  'remote.transfer:consulting': '=',
  'remote.transfer:joined': '=',
  'remote.transfer:transferred': '=',
  'remote.transfer:with_customer': '=',
  'remote.transfer:not_answered': '=',
  'remote.transfer:cancelled': '=',
  'remote.transfer:answered_elsewhere': '=',
  'local.transfer_gone': '=',
} as const satisfies Partial<Record<EventKey, Cell>>;

/**
 * The team's recording and the supervisors of a call the relay knows (calls/oversight.ts): a live
 * call in `phase` starts recording and has a supervisor whispering in it, as the relay says; none of
 * these rows records or has one, so a stop or a leave changes nothing. An ended call hears none of it,
 * and a call without its id yet waits for it (the book holds the word).
 */
const overseen = (phase: PhaseOutcome | '=') =>
  ({
    'remote.recording:on': phase,
    'remote.recording:off': '=',
    'remote.monitor:whisper': phase,
    'remote.monitor:left': '=',
  }) as const satisfies Partial<Record<EventKey, Cell>>;

// The state machine, written out (ARCHITECTURE.md, protocol.md, relay/REFERENCE.md "Routing and claims"):
//   incoming: ringing → answering → connecting → active → ended
//   outgoing: dialing → calling → remote_ringing → connecting → active → ended
// with, beside the phase, the claim, the decline verdict, the request under way and the end owed.
const WRITTEN_OUT: Record<Exclude<RowKey, 'in.held' | 'out.held'>, Record<Exclude<EventKey, RejoinKey>, Cell>> = {
  'in.ringing': {
    'remote.incoming': '=', // a duplicate connect
    'remote.answered': '=',
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': '=',
    'remote.terminated:COMPLETED': ['ended:missed', 'deadline:cancel'], // the customer gave up
    'remote.terminated:COMPLETED+duration': ['ended:answered_elsewhere', 'deadline:cancel'], // it was answered, not here
    'remote.terminated:FAILED': ['ended:failed/138021', 'deadline:cancel'],
    'remote.claimed': ['ended:answered_elsewhere', 'deadline:cancel'],
    'remote.claimed:mine': ['ended:answered_elsewhere', 'deadline:cancel'], // this agent, on another device
    'remote.claimed:theirs': ['ended:answered_elsewhere', 'deadline:cancel'],
    'remote.bridge_failed': ['ended:failed/media_failed', 'end:reject', 'deadline:cancel'], // nobody can answer it now: rejected at once, no verdict waited for
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': ['answering', 'claim', 'deadline:cancel'], // first claim wins: no accept before it
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.accept_failed:timeout': '=',
    'local.claim_result:won': '=', // no claim was made
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['ended:declined', 'reply:ok', 'decline', 'deadline:cancel'], // the relay decides whether the gateway hears reject
    'local.decline_result:last': '=', // no verdict was asked for
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    'local.hangup': ['ended:declined', 'reply:ok', 'decline', 'deadline:cancel'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.mute': ['ringing', 'reply:ok'], // muted, in the phase it was
    'local.media_connected': '=',
    'local.media_failed': ['ended:declined', 'decline', 'deadline:cancel'], // as a hang-up would
    'local.deadline': ['ended:missed', 'decline', 'deadline:cancel'], // rang out here: a colleague may still answer
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('ringing'),
  },
  'in.answering': {
    'remote.incoming': '=',
    'remote.answered': '=',
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': '=',
    'remote.terminated:COMPLETED': ['ended:missed', 'awaited:invalid_state'], // the customer gave up before the answer
    // No accept of this agent's went out: whoever talked, it was a colleague.
    'remote.terminated:COMPLETED+duration': ['ended:answered_elsewhere', 'awaited:answered_elsewhere'],
    'remote.terminated:FAILED': ['ended:failed/138021', 'awaited:invalid_state'],
    'remote.claimed': '=', // whose claim? this agent's own claim result will say
    'remote.claimed:mine': '=', // its own claim coming back
    'remote.claimed:theirs': ['ended:answered_elsewhere', 'awaited:answered_elsewhere'], // a colleague's claim won: no accept goes out
    'remote.bridge_failed': ['ended:failed/media_failed', 'awaited:media_failed'], // owed a reject once the claim shows it is this agent's, as a hang-up
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': ['=', 'reply:invalid_state'], // answered twice: once is enough
    'local.accept_ok': ['connecting', 'awaited:ok'], // never comes before the claim: no accept is out yet
    'local.accept_failed': ['ended:failed/100', 'end:reject', 'awaited:gateway_error'], // likewise
    'local.accept_failed:timeout': ['ended:failed/timeout', 'end:terminate', 'awaited:timeout'],
    'local.claim_result:won': ['answering (open)', 'accept'], // the held answer goes out now
    'local.claim_result:lost': ['ended:answered_elsewhere', 'awaited:answered_elsewhere'], // 409: no accept goes out
    'local.claim_result:unknown': ['answering (open)', 'accept'], // a relay that is down must not keep a customer waiting
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': '=',
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    // Owed a reject, sent once the claim shows the call is not a colleague's.
    'local.hangup': ['ended:completed/agent', 'reply:ok', 'awaited:invalid_state'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.mute': ['answering', 'reply:ok'], // muted, in the phase it was
    'local.media_connected': ['active', 'awaited:ok'],
    'local.media_failed': ['ended:failed/ice_failed', 'awaited:invalid_state'], // owed a reject, as a hang-up
    'local.deadline': '=', // an answering call has no deadline
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('answering'),
  },
  'in.accepting': {
    'remote.incoming': '=',
    'remote.answered': '=',
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': '=',
    'remote.terminated:COMPLETED': ['ended:missed', 'awaited:invalid_state'], // hung up before the answer reached the gateway
    'remote.terminated:COMPLETED+duration': ['ended:completed/customer', 'awaited:invalid_state'], // our accept landed; its response had not come back
    'remote.terminated:FAILED': ['ended:failed/138021', 'awaited:invalid_state'],
    'remote.claimed': '=',
    'remote.claimed:mine': '=',
    'remote.claimed:theirs': '=', // the claim is won and the accept out: it is this agent's call
    'remote.bridge_failed': ['ended:failed/media_failed', 'end:terminate', 'awaited:media_failed'],
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': '=',
    'local.initiate_failed': '=', // never sent for an incoming call
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': ['connecting', 'awaited:ok'],
    'local.accept_failed': ['ended:failed/100', 'end:reject', 'awaited:gateway_error'], // refused: it still rings at the gateway
    'local.accept_failed:timeout': ['ended:failed/timeout', 'end:terminate', 'awaited:timeout'], // it may have landed: terminate covers both
    'local.claim_result:won': '=', // the claim has already come back
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': '=',
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    'local.hangup': ['ended:completed/agent', 'reply:ok', 'end:terminate', 'awaited:invalid_state'], // after the accept (coordinator order)
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.mute': ['answering', 'reply:ok'], // muted, in the phase it was
    'local.media_connected': ['active', 'awaited:ok'], // media may beat the accept response
    'local.media_failed': ['ended:failed/ice_failed', 'end:terminate', 'awaited:invalid_state'],
    'local.deadline': '=',
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('answering'),
  },
  'in.connecting': {
    'remote.incoming': '=',
    'remote.answered': '=',
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': '=',
    'remote.terminated:COMPLETED': 'ended:completed/customer',
    'remote.terminated:COMPLETED+duration': 'ended:completed/customer',
    'remote.terminated:FAILED': 'ended:failed/138021',
    'remote.claimed': '=',
    'remote.claimed:mine': '=',
    'remote.claimed:theirs': '=', // the gateway has this agent's answer
    'remote.bridge_failed': ['ended:failed/media_failed', 'end:terminate'],
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed': ['ended:failed/100', 'end:reject'],
    'local.accept_failed:timeout': ['ended:failed/timeout', 'end:terminate'],
    'local.claim_result:won': '=',
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': '=',
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    'local.hangup': ['ended:completed/agent', 'reply:ok', 'end:terminate'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.mute': ['connecting', 'reply:ok'], // muted, in the phase it was
    'local.media_connected': 'active',
    'local.media_failed': ['ended:failed/ice_failed', 'end:terminate'],
    'local.deadline': '=',
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('connecting'),
  },
  'in.active': {
    'remote.incoming': '=',
    'remote.answered': '=',
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': '=',
    'remote.terminated:COMPLETED': 'ended:completed/customer',
    'remote.terminated:COMPLETED+duration': 'ended:completed/customer',
    'remote.terminated:FAILED': 'ended:failed/138021',
    'remote.claimed': '=',
    'remote.claimed:mine': '=',
    'remote.claimed:theirs': '=',
    'remote.bridge_failed': ['ended:failed/media_failed', 'end:terminate'],
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=', // the accept response came back after media connected
    'local.accept_failed': ['ended:failed/100', 'end:reject'],
    'local.accept_failed:timeout': ['ended:failed/timeout', 'end:terminate'],
    'local.claim_result:won': '=',
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': '=',
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    'local.hangup': ['ended:completed/agent', 'reply:ok', 'end:terminate'],
    'local.hold': ['active:held', 'reply:ok'],
    'local.resume': ['=', 'reply:ok'], // in hand already
    'local.mute': ['active', 'reply:ok'], // muted, in the phase it was
    'local.media_connected': '=',
    'local.media_failed': ['ended:failed/ice_failed', 'end:terminate'],
    'local.deadline': '=',
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('active'),
    'remote.transfer:ringing': ['active', 'deadline:set'], // this agent's own transfer rings a colleague (the relay says so), until the relay's word or its deadline
  },
  'in.hung_up': {
    'remote.incoming': '=',
    'remote.answered': '=',
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': '=',
    'remote.terminated:COMPLETED': 'ended:completed/agent (open)', // the gateway ended it: nothing owed
    'remote.terminated:COMPLETED+duration': 'ended:completed/agent', // the gateway's talk time, and nothing owed
    'remote.terminated:FAILED': 'ended:completed/agent (open)',
    'remote.claimed': '=',
    'remote.claimed:mine': '=',
    'remote.claimed:theirs': '=', // its claim was won: the terminate stays owed
    'remote.bridge_failed': '=',
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.accept_failed:timeout': '=',
    'local.claim_result:won': '=',
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': '=',
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    'local.hangup': ['=', 'reply:ok'], // hanging up twice is harmless, and sends nothing more
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.mute': ['=', 'reply:invalid_state'], // over: nothing to mute
    'local.media_connected': '=',
    'local.media_failed': '=',
    'local.deadline': '=',
    'local.end_result:done': 'ended:completed/agent (open)',
    'local.end_result:refused': 'ended:completed/agent (open)', // it was over there already
    'local.end_result:unreached': '=', // still owed: the crash-recovery file keeps it
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('='),
    'remote.transfer_ring': '=', // a call of its own beside this one: nobody live holds the id
  },
  'in.ended': {
    'remote.incoming': '=',
    'remote.answered': '=',
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': '=',
    'remote.terminated:COMPLETED': '=',
    'remote.terminated:COMPLETED+duration': 'ended:completed/agent', // only the duration changes
    'remote.terminated:FAILED': '=',
    'remote.claimed': '=',
    'remote.claimed:mine': '=',
    'remote.claimed:theirs': '=',
    'remote.bridge_failed': '=',
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.accept_failed:timeout': '=',
    'local.claim_result:won': '=',
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': '=',
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    'local.hangup': ['=', 'reply:ok'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.mute': ['=', 'reply:invalid_state'], // over: nothing to mute
    'local.media_connected': '=',
    'local.media_failed': '=',
    'local.deadline': '=',
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('='),
    'remote.transfer_ring': '=', // a call of its own beside this one: nobody live holds the id
  },
  'in.declining': {
    'remote.incoming': '=',
    'remote.answered': '=',
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': '=',
    // The gateway ended it: whatever the verdict says, it will not be rejected.
    'remote.terminated:COMPLETED': 'ended:declined (open)',
    'remote.terminated:COMPLETED+duration': 'ended:declined (open)', // never connected here: no talk time
    'remote.terminated:FAILED': 'ended:declined (open)',
    'remote.claimed': '=',
    'remote.claimed:mine': '=',
    'remote.claimed:theirs': '=', // the verdict will say so too
    'remote.bridge_failed': '=', // colleagues still ringing hear it too, and reject it themselves
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.accept_failed:timeout': '=',
    'local.claim_result:won': '=',
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': ['ended:declined (open)', 'end:reject'], // nobody else may answer it
    'local.decline_result:others': 'ended:declined (open)', // it rings on for a colleague
    'local.decline_result:unknown': 'ended:declined (open)', // left to ring: rejecting blind could take it from a colleague
    'local.hangup': ['=', 'reply:ok'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.mute': ['=', 'reply:invalid_state'], // over: nothing to mute
    'local.media_connected': '=',
    'local.media_failed': '=',
    'local.deadline': '=',
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('='),
    'remote.transfer_ring': '=', // a call of its own beside this one: nobody live holds the id
  },
  'out.dialing': {
    // No call id yet: a connect with the id it will get is a call of its own (it never comes); the
    // rest wait in `pending` until initiate_ok names the call (see applyCallEvent).
    'remote.incoming': '=',
    'remote.answered': '=',
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': '=',
    'remote.terminated:COMPLETED': '=',
    'remote.terminated:COMPLETED+duration': '=',
    'remote.terminated:FAILED': '=',
    'remote.claimed': '=',
    'remote.claimed:mine': '=',
    'remote.claimed:theirs': '=',
    'remote.bridge_failed': '=', // waits for the id, as every remote event
    'local.dial': ['=', 'reply:invalid_state'],
    // Placed: the claim routes its later events here; the Call command is answered; the dial deadline starts.
    'local.initiate_ok': ['calling', 'claim', 'awaited:ok', 'deadline:set'],
    'local.initiate_failed': ['ended:failed/138006', 'awaited:no_call_permission'],
    'local.answer': ['=', 'reply:invalid_state'],
    // An outgoing call is never accepted, so these never come.
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.accept_failed:timeout': '=',
    'local.claim_result:won': '=',
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': '=',
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    'local.hangup': ['ended:cancelled', 'reply:ok', 'awaited:invalid_state'], // no id yet: initiate_ok will terminate it
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.mute': ['dialing', 'reply:ok'], // muted, in the phase it was
    'local.media_connected': '=',
    'local.media_failed': ['ended:cancelled', 'awaited:invalid_state'], // e.g. no microphone: as a hang-up would
    'local.deadline': '=', // the initiate under way has its own timeout
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('='),
    'remote.transfer_ring': '=', // a call of its own beside this one: nobody live holds the id
  },
  'out.cancelled': {
    'remote.incoming': '=',
    'remote.answered': '=', // a connect after the end never revives the call
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': '=',
    'remote.terminated:COMPLETED': '=',
    'remote.terminated:COMPLETED+duration': '=',
    'remote.terminated:FAILED': '=',
    'remote.claimed': '=',
    'remote.claimed:mine': '=',
    'remote.claimed:theirs': '=',
    'remote.bridge_failed': '=',
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': ['ended:cancelled', 'end:terminate'], // the customer's phone rings now: end it there too (and learn its id)
    'local.initiate_failed': 'ended:cancelled (open)', // nothing was placed: nothing to end
    'local.answer': ['=', 'reply:invalid_state'],
    // Never sent for an outgoing call (see out.dialing).
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.accept_failed:timeout': '=',
    'local.claim_result:won': '=',
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': '=',
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    'local.hangup': ['=', 'reply:ok'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.mute': ['=', 'reply:invalid_state'], // over: nothing to mute
    'local.media_connected': '=',
    'local.media_failed': '=',
    'local.deadline': '=',
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('='),
    'remote.transfer_ring': '=', // a call of its own beside this one: nobody live holds the id
  },
  'out.calling': {
    'remote.incoming': '=',
    'remote.answered': ['connecting', 'deadline:cancel'], // answered without a RINGING first
    'remote.status:RINGING': 'remote_ringing', // the dial deadline runs on
    'remote.status:ACCEPTED': '=', // never gate anything on ACCEPTED (protocol.md)
    'remote.status:REJECTED': ['ended:rejected', 'deadline:cancel'], // the customer said no: the gateway knows
    'remote.terminated:COMPLETED': ['ended:no_answer', 'deadline:cancel'],
    'remote.terminated:COMPLETED+duration': ['ended:completed/customer', 'deadline:cancel'],
    'remote.terminated:FAILED': ['ended:failed/138021', 'deadline:cancel'],
    'remote.claimed': '=',
    'remote.claimed:mine': '=',
    'remote.claimed:theirs': '=',
    'remote.bridge_failed': ['ended:failed/media_failed', 'end:terminate', 'deadline:cancel'],
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': '=', // a repeated initiate response
    'local.initiate_failed': '=',
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.accept_failed:timeout': '=',
    'local.claim_result:won': '=',
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': '=',
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    'local.hangup': ['ended:cancelled', 'reply:ok', 'end:terminate', 'deadline:cancel'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.mute': ['calling', 'reply:ok'], // muted, in the phase it was
    'local.media_connected': '=',
    'local.media_failed': ['ended:cancelled', 'end:terminate', 'deadline:cancel'],
    'local.deadline': ['ended:no_answer', 'end:terminate', 'deadline:cancel'],
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('calling'),
  },
  'out.remote_ringing': {
    'remote.incoming': '=',
    'remote.answered': ['connecting', 'deadline:cancel'],
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': ['ended:rejected', 'deadline:cancel'],
    'remote.terminated:COMPLETED': ['ended:no_answer', 'deadline:cancel'],
    'remote.terminated:COMPLETED+duration': ['ended:completed/customer', 'deadline:cancel'],
    'remote.terminated:FAILED': ['ended:failed/138021', 'deadline:cancel'],
    'remote.claimed': '=',
    'remote.claimed:mine': '=',
    'remote.claimed:theirs': '=',
    'remote.bridge_failed': ['ended:failed/media_failed', 'end:terminate', 'deadline:cancel'],
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.accept_failed:timeout': '=',
    'local.claim_result:won': '=',
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': '=',
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    'local.hangup': ['ended:cancelled', 'reply:ok', 'end:terminate', 'deadline:cancel'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.mute': ['remote_ringing', 'reply:ok'], // muted, in the phase it was
    'local.media_connected': '=',
    'local.media_failed': ['ended:cancelled', 'end:terminate', 'deadline:cancel'],
    'local.deadline': ['ended:no_answer', 'end:terminate', 'deadline:cancel'],
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('remote_ringing'),
  },
  'out.connecting': {
    'remote.incoming': '=',
    'remote.answered': '=', // a repeated connect
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': '=',
    'remote.terminated:COMPLETED': 'ended:completed/customer',
    'remote.terminated:COMPLETED+duration': 'ended:completed/customer',
    'remote.terminated:FAILED': 'ended:failed/138021',
    'remote.claimed': '=',
    'remote.claimed:mine': '=',
    'remote.claimed:theirs': '=',
    'remote.bridge_failed': ['ended:failed/media_failed', 'end:terminate'],
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed': '=', // outgoing calls are never accepted
    'local.accept_failed:timeout': '=',
    'local.claim_result:won': '=',
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': '=',
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    'local.hangup': ['ended:completed/agent', 'reply:ok', 'end:terminate'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.mute': ['connecting', 'reply:ok'], // muted, in the phase it was
    'local.media_connected': 'active',
    'local.media_failed': ['ended:failed/ice_failed', 'end:terminate'],
    'local.deadline': '=', // answered: the dial deadline no longer applies
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('connecting'),
  },
  'out.active': {
    'remote.incoming': '=',
    'remote.answered': '=',
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=', // ACCEPTED often arrives after media flows
    'remote.status:REJECTED': '=',
    'remote.terminated:COMPLETED': 'ended:completed/customer',
    'remote.terminated:COMPLETED+duration': 'ended:completed/customer',
    'remote.terminated:FAILED': 'ended:failed/138021',
    'remote.claimed': '=',
    'remote.claimed:mine': '=',
    'remote.claimed:theirs': '=',
    'remote.bridge_failed': ['ended:failed/media_failed', 'end:terminate'],
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.accept_failed:timeout': '=',
    'local.claim_result:won': '=',
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': '=',
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    'local.hangup': ['ended:completed/agent', 'reply:ok', 'end:terminate'],
    'local.hold': ['active:held', 'reply:ok'],
    'local.resume': ['=', 'reply:ok'], // in hand already
    'local.mute': ['active', 'reply:ok'], // muted, in the phase it was
    'local.media_connected': '=',
    'local.media_failed': ['ended:failed/ice_failed', 'end:terminate'],
    'local.deadline': '=',
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('active'),
    'remote.transfer:ringing': ['active', 'deadline:set'], // this agent's own transfer rings a colleague (the relay says so), until the relay's word or its deadline
  },
  'out.ended': {
    'remote.incoming': '=',
    'remote.answered': '=', // a connect after the end never revives the call
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': 'ended:rejected', // the terminate overtook the rejection
    'remote.terminated:COMPLETED': '=',
    'remote.terminated:COMPLETED+duration': '=', // never connected here: no talk time to correct
    'remote.terminated:FAILED': '=',
    'remote.claimed': '=',
    'remote.claimed:mine': '=',
    'remote.claimed:theirs': '=',
    'remote.bridge_failed': '=',
    'local.dial': ['=', 'reply:invalid_state'],
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.accept_failed:timeout': '=',
    'local.claim_result:won': '=',
    'local.claim_result:lost': '=',
    'local.claim_result:unknown': '=',
    'local.decline': ['=', 'reply:invalid_state'],
    'local.decline_result:last': '=',
    'local.decline_result:others': '=',
    'local.decline_result:unknown': '=',
    'local.hangup': ['=', 'reply:ok'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.mute': ['=', 'reply:invalid_state'], // over: nothing to mute
    'local.media_connected': '=',
    'local.media_failed': '=',
    'local.deadline': '=',
    'local.end_result:done': '=',
    'local.end_result:refused': '=',
    'local.end_result:unreached': '=',
    'local.leftover:reject': '=',
    'local.leftover:terminate': '=',
    ...NO_TRANSFER_OF_ITS_OWN,
    ...overseen('='),
    'remote.transfer_ring': '=', // a call of its own beside this one: nobody live holds the id
  },
};

/**
 * A direct call never rejoins: its window going is its media failing, exactly, and nothing a rejoin
 * brings applies to it (a window's answer to an offer it never had is refused).
 */
function direct(row: Record<Exclude<EventKey, RejoinKey>, Cell>): Record<EventKey, Cell> {
  return {
    ...row,
    'local.window_gone': row['local.media_failed'],
    'local.rejoin_offer': '=',
    'local.rejoin_failed:not_member': '=',
    'local.rejoin_failed:ended': '=',
    'local.rejoin_failed:gone': '=',
    'local.rejoin_answer': ['=', 'reply:invalid_state'],
    'local.rejoin_answered:answered': '=',
    'local.rejoin_answered:sdp_refused': '=',
    'local.rejoin_answered:refused': '=',
  };
}

/** On hold, a call answers every event as when in hand, except hold (held already) and resume (back to the microphone); muted, it stays held. */
const heldRow = (inHand: Record<EventKey, Cell>): Record<EventKey, Cell> => ({
  ...inHand,
  'local.hold': ['=', 'reply:ok'],
  'local.resume': ['active', 'reply:ok'],
  'local.mute': ['active:held', 'reply:ok'],
  'remote.transfer:ringing': ['active:held', 'deadline:set'],
  ...overseen('active:held'),
});
const EXPECTED: Record<RowKey, Record<EventKey, Cell>> = {
  ...(Object.fromEntries(Object.entries(WRITTEN_OUT).map(([row, cells]) => [row, direct(cells)])) as Record<keyof typeof WRITTEN_OUT, Record<EventKey, Cell>>),
  'in.held': heldRow(direct(WRITTEN_OUT['in.active'])),
  'out.held': heldRow(direct(WRITTEN_OUT['out.active'])),
};

function outcomeOf(call: CallRecord | undefined): string {
  if (call === undefined) return 'none';
  if (call.phase === 'active' && call.heldSince !== undefined) return 'active:held';
  if (call.phase !== 'ended') return call.phase;
  const e = call.end;
  if (e.kind === 'completed') return `ended:completed/${e.by}`;
  if (e.kind === 'failed') return `ended:failed/${e.code}`;
  return `ended:${e.kind}`;
}

/** The table's name for an effect. */
function fxOf(effect: CallEffect): string {
  switch (effect.kind) {
    case 'reply': {
      const result = effect.result.ok ? 'ok' : effect.result.error.code;
      return effect.requestId === TABLE_REQUEST ? `reply:${result}` : `awaited:${result}`;
    }
    case 'end':
      return `end:${effect.action}`;
    case 'deadline':
      return effect.at === undefined ? 'deadline:cancel' : 'deadline:set';
    default:
      return effect.kind;
  }
}

const idsOf = (row: RowKey): CallIds => (row.startsWith('in.') ? INCOMING_IDS : OUTGOING_IDS);
const OPEN_ONLY = ' (open)';

/** A book holding this one call. */
function alone(call: CallRecord): CallBook {
  return { ...emptyBook(), calls: { [call.localId]: call }, byCallId: call.callId !== undefined ? { [call.callId]: call.localId } : {} };
}

/** The command a call in answering or dialing waits to answer. */
const waitingOn = (call: CallRecord | undefined): string | undefined => (call?.phase === 'answering' || call?.phase === 'dialing' ? call.open.replyTo : undefined);

/** Whether an effect concerns this call (a request or deadline for it, or a reply to the table's command or the one it waited on). */
const concerns = (effect: CallEffect, before: CallRecord | undefined, localId: string | undefined): boolean =>
  effect.kind === 'reply' ? effect.requestId === TABLE_REQUEST || effect.requestId === waitingOn(before) : effect.localId === localId;

/** What every effect must carry, whatever the cell: the call's ids, the right SDP, the deadline the call now has in the book. */
function checkEffectDetails(before: CallRecord | undefined, book: CallBook, effects: readonly CallEffect[]): void {
  for (const effect of effects) {
    if (effect.kind === 'reply') {
      expect([TABLE_REQUEST, waitingOn(before)]).toContain(effect.requestId);
      const after = before !== undefined ? book.calls[before.localId] : undefined;
      if (effect.result.ok) expect(effect.result.value).toEqual({ localId: after?.localId, callId: after?.callId ?? '' });
      continue;
    }
    const after = book.calls[effect.localId];
    switch (effect.kind) {
      case 'deadline':
        expect(after).toBeDefined();
        expect(effect.at).toBe(deadlineOf(after));
        break;
      case 'claim':
      case 'decline':
      case 'end':
        expect(effect.callId).toBe(after?.callId ?? Object.values(book.leftovers).find((l) => l.localId === effect.localId)?.callId);
        break;
      case 'transfer_decline':
        expect(effect).toEqual({ kind: 'transfer_decline', localId: after?.localId, callId: after?.callId, transferId: after?.transfer?.id });
        expect(after?.transfer?.role).toBe('to');
        break;
      case 'accept':
        expect(effect).toEqual({ kind: 'accept', localId: after?.localId, callId: after?.callId, sdp: ANSWER_SDP });
        break;
      case 'initiate':
        expect(effect).toEqual({ kind: 'initiate', localId: after?.localId, to: CALLEE.number, sdp: DIAL_OFFER_SDP });
        break;
    }
  }
}

describe('reduceCall: the transition table', () => {
  it('covers every event type, every outcome of every effect, and every phase of both directions', () => {
    const allTypes: Record<CallEvent['type'], true> = {
      'remote.incoming': true,
      'remote.answered': true,
      'remote.status': true,
      'remote.terminated': true,
      'remote.claimed': true,
      'remote.bridge_failed': true,
      'remote.transfer_ring': true,
      'remote.transfer': true,
      'remote.recording': true,
      'remote.monitor': true,
      'local.dial': true,
      'local.answer': true,
      'local.decline': true,
      'local.hangup': true,
      'local.hold': true,
      'local.resume': true,
      'local.mute': true,
      'local.initiate_ok': true,
      'local.initiate_failed': true,
      'local.claim_result': true,
      'local.decline_result': true,
      'local.accept_ok': true,
      'local.accept_failed': true,
      'local.end_result': true,
      'local.deadline': true,
      'local.media_connected': true,
      'local.media_failed': true,
      'local.leftover': true,
      'local.transfer_gone': true,
      'local.window_gone': true,
      'local.rejoin_offer': true,
      'local.rejoin_failed': true,
      'local.rejoin_answer': true,
      'local.rejoin_answered': true,
    };
    const events = Object.values(tableEvents(INCOMING_IDS));
    const covered = new Set(events.map((e) => e.type));
    expect([...covered].sort()).toEqual(Object.keys(allTypes).sort());
    // Every answer the relay and the gateway can give, and both kinds of leftover.
    const variants = (type: CallEvent['type'], pick: (e: CallEvent) => unknown) => events.filter((e) => e.type === type).map(pick);
    expect(variants('local.claim_result', (e) => e.type === 'local.claim_result' && e.outcome).sort()).toEqual(['lost', 'unknown', 'won']);
    expect(variants('local.decline_result', (e) => e.type === 'local.decline_result' && String(e.last)).sort()).toEqual(['false', 'true', 'undefined']);
    expect(variants('local.end_result', (e) => e.type === 'local.end_result' && e.outcome).sort()).toEqual(['done', 'refused', 'unreached']);
    expect(variants('local.leftover', (e) => e.type === 'local.leftover' && e.action).sort()).toEqual(['reject', 'terminate']);
    expect(variants('remote.claimed', (e) => e.type === 'remote.claimed' && String(e.mine)).sort()).toEqual(['false', 'true', 'undefined']);
    expect(variants('local.rejoin_failed', (e) => e.type === 'local.rejoin_failed' && e.verdict).sort()).toEqual([...REJOIN_VERDICTS].sort());
    expect(variants('local.rejoin_answered', (e) => e.type === 'local.rejoin_answered' && e.outcome.kind).sort()).toEqual(['answered', 'refused', 'sdp_refused']);

    const phases = new Set(Object.values(ROWS).map((s) => s.phase));
    expect([...phases].sort()).toEqual([...LIVE_PHASES, 'ended'].sort());
    expect(Object.entries(ROWS).map(([k, s]) => [k, s.phase, s.direction])).toEqual([
      ['in.ringing', 'ringing', 'incoming'],
      ['in.answering', 'answering', 'incoming'],
      ['in.accepting', 'answering', 'incoming'],
      ['in.connecting', 'connecting', 'incoming'],
      ['in.active', 'active', 'incoming'],
      ['in.held', 'active', 'incoming'],
      ['in.hung_up', 'ended', 'incoming'],
      ['in.ended', 'ended', 'incoming'],
      ['in.declining', 'ended', 'incoming'],
      ['out.dialing', 'dialing', 'outgoing'],
      ['out.cancelled', 'ended', 'outgoing'],
      ['out.calling', 'calling', 'outgoing'],
      ['out.remote_ringing', 'remote_ringing', 'outgoing'],
      ['out.connecting', 'connecting', 'outgoing'],
      ['out.active', 'active', 'outgoing'],
      ['out.held', 'active', 'outgoing'],
      ['out.ended', 'ended', 'outgoing'],
    ]);
  });

  it('has rows with what each one stands for still open', () => {
    expect(Object.fromEntries(Object.entries(ROWS).map(([row, s]) => [row, s.open]))).toEqual({
      'in.ringing': undefined,
      'in.answering': { waiting: 'claim', answerSdp: ANSWER_SDP, replyTo: ANSWER_REQUEST },
      'in.accepting': { waiting: 'accept', replyTo: ANSWER_REQUEST },
      'in.connecting': undefined,
      'in.active': undefined,
      'in.held': undefined,
      'in.hung_up': { waiting: 'confirmation', owed: 'terminate' },
      'in.ended': undefined,
      'in.declining': { waiting: 'verdict' },
      'out.dialing': { waiting: 'initiate', replyTo: DIAL_REQUEST },
      'out.cancelled': { waiting: 'initiate' },
      'out.calling': undefined,
      'out.remote_ringing': undefined,
      'out.connecting': undefined,
      'out.active': undefined,
      'out.held': undefined,
      'out.ended': undefined,
    });
    // Nothing open is ever a key without a value.
    for (const s of Object.values(ROWS)) if (s.open === undefined) expect(s).not.toHaveProperty('open');
  });

  describe.each(Object.keys(ROWS) as RowKey[])('%s', (row) => {
    it.each(EVENT_KEYS)('× %s', (key) => {
      const state = ROWS[row];
      const ev = tableEvents(idsOf(row))[key];
      const cell = EXPECTED[row][key];
      const [expected, ...fx] = typeof cell === 'string' ? [cell] : cell;
      const first = applyCallEvent(alone(state), ev);
      const next = first.book.calls[state.localId];
      expect(first.effects.filter((e) => concerns(e, state, state.localId)).map(fxOf)).toEqual(fx);
      // Anything else concerns a call opened beside this one: a connect with the id a dialing call has
      // not got yet, or a colleague's transfer of a call this agent has no live call of.
      const opened = first.changed.map((c) => c.localId).filter((localId) => localId !== state.localId);
      const ringsBeside = key === 'remote.transfer_ring' && (state.phase === 'ended' || state.callId === undefined);
      const besideExpected = key === 'remote.incoming' && state.callId === undefined ? [incomingLocalId(OUT_ID)] : ringsBeside ? [ASKED_LOCAL] : [];
      expect(opened).toEqual(besideExpected);
      for (const effect of first.effects.filter((e) => !concerns(e, state, state.localId))) expect(effect).toMatchObject({ kind: 'deadline', localId: besideExpected[0] });
      checkEffectDetails(state, first.book, first.effects);
      expect(first.book.leftovers).toEqual({});
      if (expected === '=') {
        expect(next).toBe(state);
      } else {
        expect(next).not.toBe(state);
        const openOnly = expected.endsWith(OPEN_ONLY);
        expect(outcomeOf(next)).toBe(openOnly ? expected.slice(0, -OPEN_ONLY.length) : expected);
        if (openOnly) expect(publicCall(next!)).toEqual(publicCall(state));
        else expect(publicCall(next!)).not.toEqual(publicCall(state));
        expect(next?.direction).toBe(state.direction);
        expect(next?.localId).toBe(state.localId);
        // One call alone is the same step through reduceCall.
        expect(reduceCall(state, ev)).toEqual({ state: next, effects: first.effects });
      }
      // Every transition is idempotent: the same event again leaves the very same book, and asks for
      // nothing more than a reply to a repeated command.
      const again = applyCallEvent(first.book, ev);
      expect(again.book).toBe(first.book);
      expect(again.effects.filter((e) => e.kind !== 'reply')).toEqual([]);
    });
  });

  it.each(EVENT_KEYS)('no call × %s: only a connect or a dial opens one; a command for no call is answered not_found', (key) => {
    const expected: Partial<Record<EventKey, readonly [string, ...string[]]>> = {
      'remote.incoming': ['ringing', 'deadline:set'],
      'remote.transfer_ring': ['ringing', 'deadline:set'],
      'local.dial': ['dialing', 'initiate'],
      // A call a previous run left live is no call: it is a leftover (see below), checked with the relay first.
      'local.leftover:reject': ['none', 'decline'],
      'local.leftover:terminate': ['none', 'claim'],
      'local.answer': ['none', 'reply:not_found'],
      'local.decline': ['none', 'reply:not_found'],
      'local.hangup': ['none', 'reply:not_found'],
      'local.hold': ['none', 'reply:not_found'],
      'local.resume': ['none', 'reply:not_found'],
      'local.mute': ['none', 'reply:not_found'],
      'local.rejoin_answer': ['none', 'reply:not_found'],
    };
    const ids = key === 'remote.incoming' ? INCOMING_IDS : key.startsWith('local.leftover') ? LEFTOVER_IDS : OUTGOING_IDS;
    const ev = tableEvents(ids)[key];
    const { book, changed, effects } = applyCallEvent(emptyBook(), ev);
    const [outcome, ...fx] = expected[key] ?? ['none'];
    expect(outcomeOf(changed[0])).toBe(outcome);
    expect(changed.length).toBeLessThanOrEqual(1);
    expect(effects.map(fxOf)).toEqual(fx);
    checkEffectDetails(undefined, book, effects);
    expect(reduceCall(undefined, ev)).toEqual({ state: changed[0], effects });
  });
});

// ---------------------------------------------------------------------------------------------
// A call a previous run left live × every event.
// ---------------------------------------------------------------------------------------------

type LeftoverOutcome = 'verdict' | 'claim' | 'confirmation:reject' | 'confirmation:terminate' | 'settled';
type LeftoverCell = '=' | LeftoverOutcome | readonly ['=' | LeftoverOutcome, ...Fx[]];

function leftoverBook(...events: CallEvent[]): CallBook {
  let book = emptyBook();
  for (const ev of events) book = applyCallEvent(book, ev).book;
  return book;
}
const LEFT_ROWS = {
  'left.verdict': leftoverBook(leftover(T0, 'reject')), // rang when a previous run stopped: the verdict is out
  'left.claim': leftoverBook(leftover(T0, 'terminate')), // was this agent's call: the claim is out
  'left.ending': leftoverBook(leftover(T0, 'terminate'), claimResult(T0 + 100, 'won', LEFT_LOCAL)), // still its own: the terminate is out
  'left.settled': leftoverBook(leftover(T0, 'terminate'), claimResult(T0 + 100, 'lost', LEFT_LOCAL)), // a colleague's: nothing owed
} as const;
type LeftRowKey = keyof typeof LEFT_ROWS;

const leftoverOutcome = (left: Leftover): LeftoverOutcome =>
  left.open === undefined ? 'settled' : left.open.waiting === 'confirmation' ? `confirmation:${left.open.owed}` : left.open.waiting;

/** What is the same for every leftover: it is no call, so the agent's commands find none; and it never rings again. */
const LEFTOVER_COMMON: Record<EventKey, LeftoverCell> = Object.fromEntries(EVENT_KEYS.map((key) => [key, '='])) as Record<EventKey, LeftoverCell>;
Object.assign(LEFTOVER_COMMON, {
  'local.dial': ['=', 'reply:invalid_state'], // its local id is taken
  'local.answer': ['=', 'reply:not_found'],
  'local.decline': ['=', 'reply:not_found'],
  'local.hangup': ['=', 'reply:not_found'],
  'local.hold': ['=', 'reply:not_found'],
  'local.resume': ['=', 'reply:not_found'],
  'local.mute': ['=', 'reply:not_found'],
  'local.rejoin_answer': ['=', 'reply:not_found'],
});
const LEFTOVER_EXPECTED: Record<LeftRowKey, Record<EventKey, LeftoverCell>> = {
  'left.verdict': {
    ...LEFTOVER_COMMON,
    // The gateway ended it: nothing to reject any more.
    'remote.terminated:COMPLETED': 'settled',
    'remote.terminated:COMPLETED+duration': 'settled',
    'remote.terminated:FAILED': 'settled',
    'remote.claimed:theirs': '=', // the verdict will say so
    'local.decline_result:last': ['confirmation:reject', 'end:reject'],
    'local.decline_result:others': 'settled', // a colleague may still answer it
    'local.decline_result:unknown': 'settled', // left to the gateway's own timeout
  },
  'left.claim': {
    ...LEFTOVER_COMMON,
    'remote.terminated:COMPLETED': 'settled',
    'remote.terminated:COMPLETED+duration': 'settled',
    'remote.terminated:FAILED': 'settled',
    'remote.claimed:theirs': 'settled', // a colleague's call by now: leave it alone
    'local.claim_result:won': ['confirmation:terminate', 'end:terminate'], // still this agent's: terminate it
    'local.claim_result:lost': 'settled', // a colleague's: nothing owed
    'local.claim_result:unknown': 'settled', // rather the gateway's timeout than a colleague's call
  },
  'left.ending': {
    ...LEFTOVER_COMMON,
    'remote.terminated:COMPLETED': 'settled',
    'remote.terminated:COMPLETED+duration': 'settled',
    'remote.terminated:FAILED': 'settled',
    'local.end_result:done': 'settled',
    'local.end_result:refused': 'settled',
    'local.end_result:unreached': 'settled', // a leftover has had its last try
  },
  'left.settled': LEFTOVER_COMMON,
};

describe('applyCallEvent: a call a previous run left live', () => {
  it('has rows with what each one stands for still open, and no call', () => {
    expect(Object.fromEntries(Object.entries(LEFT_ROWS).map(([row, book]) => [row, book.leftovers[LEFT_ID]?.open]))).toEqual({
      'left.verdict': { waiting: 'verdict', owed: 'reject' },
      'left.claim': { waiting: 'claim', owed: 'terminate' },
      'left.ending': { waiting: 'confirmation', owed: 'terminate' },
      'left.settled': undefined,
    });
    for (const book of Object.values(LEFT_ROWS)) {
      expect(book.calls).toEqual({});
      expect(book.leftovers[LEFT_ID]).toMatchObject({ localId: LEFT_LOCAL, callId: LEFT_ID, since: T0 });
    }
  });

  describe.each(Object.keys(LEFT_ROWS) as LeftRowKey[])('%s', (row) => {
    it.each(EVENT_KEYS)('× %s', (key) => {
      const book = LEFT_ROWS[row];
      const before = book.leftovers[LEFT_ID]!;
      const ev = tableEvents(LEFTOVER_IDS)[key];
      const cell = LEFTOVER_EXPECTED[row][key];
      const [expected, ...fx] = typeof cell === 'string' ? [cell] : cell;
      const first = applyCallEvent(book, ev);
      const after = first.book.leftovers[LEFT_ID]!;
      expect(first.effects.map(fxOf)).toEqual(fx);
      checkEffectDetails(undefined, first.book, first.effects);
      // It never shows, never rings again, and never becomes a call.
      expect(first.changed).toEqual([]);
      expect(first.book.calls).toEqual({});
      if (expected === '=') {
        expect(first.book).toBe(book);
      } else {
        expect(after).not.toBe(before);
        expect(leftoverOutcome(after)).toBe(expected);
      }
      const again = applyCallEvent(first.book, ev);
      expect(again.book).toBe(first.book);
      expect(again.effects.filter((e) => e.kind !== 'reply')).toEqual([]);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// What each transition records.
// ---------------------------------------------------------------------------------------------

describe('reduceCall: what the transitions record', () => {
  it('opens a ringing incoming call keyed in:<call id>, ringing until 60 s after the connect', () => {
    const { state: call, effects } = reduceCall(undefined, incoming(T0, { timestamp: T0 - 2_000, ctaPayload: 'agent:ada' }));
    expect(call).toEqual({
      phase: 'ringing',
      direction: 'incoming',
      localId: `in:${IN_ID}`,
      callId: IN_ID,
      peer: CUSTOMER,
      offerSdp: OFFER_SDP,
      createdAt: T0,
      ringsUntil: T0 - 2_000 + RING_TIMEOUT_MS,
      ctaPayload: 'agent:ada',
    });
    expect(effects).toEqual([{ kind: 'deadline', localId: IN_LOCAL, at: T0 - 2_000 + RING_TIMEOUT_MS }]);
    expect(incomingLocalId(IN_ID)).toBe(IN_LOCAL);
  });

  it('leaves ctaPayload out when the connect had none', () => {
    expect(reduceCall(undefined, incoming(T0)).state).not.toHaveProperty('ctaPayload');
  });

  it('rings from the earlier of the gateway time and the local clock (a gateway clock ahead is not trusted)', () => {
    const call = reduceCall(undefined, incoming(T0, { timestamp: T0 + 30_000 })).state;
    expect(call?.phase === 'ringing' && call.ringsUntil).toBe(T0 + RING_TIMEOUT_MS);
  });

  it('drops a connect older than 60 s, and keeps one exactly 60 s old', () => {
    expect(reduceCall(undefined, incoming(T0, { timestamp: T0 - STALE_CONNECT_MS - 1 }))).toEqual({ state: undefined, effects: [] });
    expect(reduceCall(undefined, incoming(T0, { timestamp: T0 - 5 * 60_000 })).state).toBeUndefined();
    expect(reduceCall(undefined, incoming(T0, { timestamp: T0 - STALE_CONNECT_MS })).state?.phase).toBe('ringing');
  });

  it('opens a dialing call with the peer and no call id, and sends the initiate with the offer', () => {
    const { state, effects } = reduceCall(undefined, dial(T0, OUT_LOCAL, CALLEE, DIAL_REQUEST));
    expect(state).toEqual({ phase: 'dialing', direction: 'outgoing', localId: OUT_LOCAL, peer: CALLEE, createdAt: T0, open: { waiting: 'initiate', replyTo: DIAL_REQUEST } });
    expect(publicCall(state!)).toEqual({ phase: 'dialing', direction: 'outgoing', localId: OUT_LOCAL, peer: CALLEE, createdAt: T0 });
    // The Call command is answered once the gateway has placed the call, not now.
    expect(effects).toEqual([{ kind: 'initiate', localId: OUT_LOCAL, to: CALLEE.number, sdp: DIAL_OFFER_SDP }]);
  });

  it('learns the call id on initiate_ok, dials for 60 s from then, claims it and answers the Call command', () => {
    const { state, effects } = runWithEffects([dial(T0, OUT_LOCAL, CALLEE, DIAL_REQUEST), initiateOk(T0 + 900)]);
    expect(state).toMatchObject({ phase: 'calling', callId: OUT_ID, dialsUntil: T0 + 900 + DIAL_TIMEOUT_MS, createdAt: T0 });
    expect(state).not.toHaveProperty('open');
    expect(effects.slice(1)).toEqual([
      { kind: 'claim', localId: OUT_LOCAL, callId: OUT_ID },
      { kind: 'reply', requestId: DIAL_REQUEST, result: { ok: true, value: { localId: OUT_LOCAL, callId: OUT_ID } } },
      { kind: 'deadline', localId: OUT_LOCAL, at: T0 + 900 + DIAL_TIMEOUT_MS },
    ]);
  });

  it("keeps the customer's answer SDP and when it came", () => {
    const call = run([answered(T0 + 8_000)], outStates.remote_ringing);
    expect(call).toMatchObject({ phase: 'connecting', answerSdp: ANSWER_SDP, answeredAt: T0 + 8_000, callId: OUT_ID });
  });

  it('records when the agent answered and when media connected', () => {
    expect(inStates.answering).toMatchObject({ phase: 'answering', answeredAt: T0 + 3_000 });
    expect(inStates.accepting).toMatchObject({ phase: 'answering', answeredAt: T0 + 3_000 });
    expect(inStates.connecting).toMatchObject({ phase: 'connecting', answeredAt: T0 + 3_000 });
    expect(inStates.active).toMatchObject({ phase: 'active', answeredAt: T0 + 3_000, connectedAt: T0 + 5_000 });
  });

  it('goes active when media connects before the accept response, and the late accept_ok changes nothing', () => {
    const { state: active, effects } = runWithEffects([mediaConnected(T0 + 3_500)], inStates.accepting);
    expect(active).toMatchObject({ phase: 'active', connectedAt: T0 + 3_500 });
    expect(active).not.toHaveProperty('open');
    expect(effects).toEqual([{ kind: 'reply', requestId: ANSWER_REQUEST, result: { ok: true, value: { localId: IN_LOCAL, callId: IN_ID } } }]);
    expect(reduceCall(active, acceptOk(T0 + 3_600))).toEqual({ state: active, effects: [] });
    expect(reduceCall(active, acceptOk(T0 + 3_600)).state).toBe(active);
  });

  it('measures talk time from media connect, rounded to whole seconds', () => {
    expect(asEnded(run([hangup(T0 + 35_400)], inStates.active)).durationSec).toBe(30);
    expect(asEnded(run([hangup(T0 + 35_600)], inStates.active)).durationSec).toBe(31);
    // A call that never connected talked for 0 s.
    expect(asEnded(run([hangup(T0 + 20_000)], inStates.connecting)).durationSec).toBe(0);
    expect(asEnded(run([hangup(T0 + 20_000, OUT_LOCAL)], outStates.remote_ringing)).durationSec).toBe(0);
  });

  it("prefers the gateway's duration to the measured one", () => {
    const ended = asEnded(run([terminated(T0 + 65_000, { durationSec: 61 })], inStates.active));
    expect(ended).toMatchObject({ end: { kind: 'completed', by: 'customer' }, durationSec: 61, connectedAt: T0 + 5_000, endedAt: T0 + 65_000 });
  });

  it('keeps who, what and when on the ended call, with what is still owed beside it', () => {
    const incomingEnded = asEnded(
      run([
        incoming(T0, { ctaPayload: 'p' }),
        answer(T0 + 3_000),
        claimResult(T0 + 3_200, 'won'),
        acceptOk(T0 + 4_000),
        mediaConnected(T0 + 5_000),
        hangup(T0 + 35_000),
      ]),
    );
    const shown = {
      phase: 'ended',
      direction: 'incoming',
      localId: IN_LOCAL,
      callId: IN_ID,
      peer: CUSTOMER,
      offerSdp: OFFER_SDP,
      createdAt: T0,
      ctaPayload: 'p',
      end: { kind: 'completed', by: 'agent' },
      endedAt: T0 + 35_000,
      connectedAt: T0 + 5_000,
      durationSec: 30,
    };
    expect(incomingEnded).toEqual({ ...shown, open: { waiting: 'confirmation', owed: 'terminate' } });
    expect(publicCall(incomingEnded)).toEqual(shown);
    // Once the gateway confirms, nothing is owed.
    expect(run([endResult(T0 + 35_300, 'done')], incomingEnded)).toEqual(shown);

    const outgoingEnded = asEnded(run([hangup(T0 + 4_000, OUT_LOCAL)], outStates.remote_ringing));
    expect(outgoingEnded).toEqual({
      phase: 'ended',
      direction: 'outgoing',
      localId: OUT_LOCAL,
      callId: OUT_ID,
      peer: CALLEE,
      createdAt: T0,
      end: { kind: 'cancelled' },
      endedAt: T0 + 4_000,
      durationSec: 0,
      open: { waiting: 'confirmation', owed: 'terminate' },
    });
    // Cancelled before the gateway gave it an id.
    expect(asEnded(run([hangup(T0 + 100, OUT_LOCAL)], outStates.dialing))).not.toHaveProperty('callId');
  });

  it("takes a failure's code and message from the terminate's first error", () => {
    const failed = asEnded(
      run(
        [
          terminated(T0 + 30_000, {
            status: 'FAILED',
            errors: [
              { code: 138022, message: 'Media transmit timeout' },
              { code: 1, message: 'second' },
            ],
          }),
        ],
        inStates.active,
      ),
    );
    expect(failed.end).toEqual({ kind: 'failed', code: '138022', message: 'Media transmit timeout' });
  });

  it('says the call failed when a FAILED terminate carries no errors, and treats errors on COMPLETED as a failure', () => {
    expect(asEnded(run([terminated(T0 + 9_000, { status: 'FAILED' })], inStates.ringing)).end).toEqual({
      kind: 'failed',
      code: 'FAILED',
      message: 'The call failed',
      text: text('calls.failed'),
    });
    expect(asEnded(run([terminated(T0 + 9_000, { errors: [{ code: 138019, message: 'Call setup failed' }] })], inStates.connecting)).end).toEqual({
      kind: 'failed',
      code: '138019',
      message: 'Call setup failed',
    });
  });

  it("carries local errors into the end reason: the gateway's number when there is one, else the error's code", () => {
    expect(asEnded(run([initiateFailed(T0 + 500)], outStates.dialing)).end).toEqual({
      kind: 'failed',
      code: '138006',
      message: 'The customer has not allowed business calls',
    });
    expect(asEnded(run([acceptFailed(T0 + 4_000)], inStates.accepting)).end).toEqual({ kind: 'failed', code: '100', message: 'Invalid parameter: session.sdp' });
    expect(asEnded(run([acceptFailed(T0 + 4_000, IN_LOCAL, ACCEPT_TIMEOUT)], inStates.accepting)).end).toEqual({
      kind: 'failed',
      code: 'timeout',
      message: 'The gateway did not answer in time',
    });
    expect(asEnded(run([mediaFailed(T0 + 4_000)], inStates.active)).end).toEqual({ kind: 'failed', code: 'ice_failed', message: 'The audio connection failed' });
    expect(localErrorFrom({ code: 'gateway_error', message: 'm', gatewayCode: 131047, httpStatus: 400, detail: 'd' })).toEqual({ code: '131047', message: 'm' });
    expect(localErrorFrom({ code: 'gateway_unreachable', message: 'down' })).toEqual({ code: 'gateway_unreachable', message: 'down' });
  });

  it("does not count a colleague's talk time as this agent's", () => {
    const taken = asEnded(run([terminated(T0 + 90_000, { durationSec: 80 })], inStates.ringing));
    expect(taken.end).toEqual({ kind: 'answered_elsewhere' });
    expect(taken.durationSec).toBe(0);
    expect(taken).not.toHaveProperty('connectedAt');
  });

  it("counts a talked-for terminate while answering as this agent's call only once its accept is out", () => {
    const landed = asEnded(run([terminated(T0 + 50_000, { durationSec: 44 })], inStates.accepting));
    expect(landed.end).toEqual({ kind: 'completed', by: 'customer' });
    expect(landed.durationSec).toBe(44);
    // The claim still out, no accept sent: the talk was a colleague's, whose claim won first.
    const { state, effects } = runWithEffects([terminated(T0 + 50_000, { durationSec: 44 })], inStates.answering);
    expect(asEnded(state).end).toEqual({ kind: 'answered_elsewhere' });
    expect(asEnded(state).durationSec).toBe(0);
    expect(effects).toEqual([{ kind: 'reply', requestId: ANSWER_REQUEST, result: fail('answered_elsewhere', 'Answered by another agent', text('calls.answeredElsewhere')) }]);
    // ... and the claim's 409 coming back after it changes nothing that shows.
    const lost = reduceCall(state, claimResult(T0 + 50_100, 'lost'));
    expect(publicCall(lost.state!)).toEqual(publicCall(state));
    expect(lost.effects).toEqual([]);
  });

  it('treats a zero duration as not answered', () => {
    expect(asEnded(run([terminated(T0 + 20_000, { durationSec: 0 })], inStates.ringing)).end.kind).toBe('missed');
    expect(asEnded(run([terminated(T0 + 20_000, { callId: OUT_ID, durationSec: 0 })], outStates.calling)).end.kind).toBe('no_answer');
  });
});

// ---------------------------------------------------------------------------------------------
// The claim, the accept, the decline verdict and what the gateway is owed.
// ---------------------------------------------------------------------------------------------

/** A refusal: its English, and its code and values when the catalogue made it. */
const fail = (code: ErrorCode, message: string, said?: RuleText) => ({ ok: false, error: { code, message, ...(said !== undefined ? { text: said } : {}) } });

describe('reduceCall: claims, verdicts and what the gateway is owed', () => {
  it('Answer claims first and holds the answer; the accept carries it once the claim wins; the command is answered once the accept succeeds', () => {
    const claiming = runWithEffects([answer(T0 + 3_000, IN_LOCAL, 'rq-1')], inStates.ringing);
    expect(claiming.state).toEqual({ ...publicCall(claiming.state), open: { waiting: 'claim', answerSdp: ANSWER_SDP, replyTo: 'rq-1' } });
    expect(claiming.state.phase).toBe('answering');
    expect(claiming.effects).toEqual([
      { kind: 'claim', localId: IN_LOCAL, callId: IN_ID },
      { kind: 'deadline', localId: IN_LOCAL, at: undefined },
    ]);
    const accepting = runWithEffects([claimResult(T0 + 3_100, 'won')], claiming.state);
    // The answer went out with the accept: it is not kept any more.
    expect(accepting.state).toEqual({ ...publicCall(accepting.state), open: { waiting: 'accept', replyTo: 'rq-1' } });
    expect(accepting.state.phase).toBe('answering');
    expect(accepting.effects).toEqual([{ kind: 'accept', localId: IN_LOCAL, callId: IN_ID, sdp: ANSWER_SDP }]);
    const connecting = runWithEffects([acceptOk(T0 + 3_400)], accepting.state);
    expect(connecting.state).toMatchObject({ phase: 'connecting' });
    expect(connecting.state).not.toHaveProperty('open');
    expect(connecting.effects).toEqual([{ kind: 'reply', requestId: 'rq-1', result: { ok: true, value: { localId: IN_LOCAL, callId: IN_ID } } }]);
  });

  it('accepts when the relay could not say whose the call is, and never when the claim is lost', () => {
    expect(runWithEffects([claimResult(T0 + 3_100, 'unknown')], inStates.answering).effects.map((e) => e.kind)).toEqual(['accept']);
    const lost = runWithEffects([claimResult(T0 + 3_100, 'lost')], inStates.answering);
    expect(lost.state).toMatchObject({ phase: 'ended', end: { kind: 'answered_elsewhere' } });
    expect(lost.state).not.toHaveProperty('open');
    expect(lost.effects).toEqual([{ kind: 'reply', requestId: ANSWER_REQUEST, result: fail('answered_elsewhere', 'Answered by another agent', text('calls.answeredElsewhere')) }]);
  });

  it("ends an answering call on a colleague's claim only while no claim of its own has won and no accept is out", () => {
    const theirs = runWithEffects([claimed(T0 + 3_100, IN_ID, false)], inStates.answering);
    expect(theirs.state).toMatchObject({ phase: 'ended', end: { kind: 'answered_elsewhere' } });
    expect(theirs.state).not.toHaveProperty('open');
    expect(theirs.effects.map((e) => e.kind)).toEqual(['reply']);
    // Its late claim result changes nothing, and sends no accept.
    expect(reduceCall(theirs.state, claimResult(T0 + 3_200, 'unknown'))).toEqual({ state: theirs.state, effects: [] });
    expect(reduceCall(inStates.answering, claimed(T0 + 3_100, IN_ID, true)).state).toBe(inStates.answering);
    expect(reduceCall(inStates.answering, claimed(T0 + 3_100, IN_ID)).state).toBe(inStates.answering);
    expect(reduceCall(inStates.accepting, claimed(T0 + 3_100, IN_ID, false)).state).toBe(inStates.accepting);
    const unknownAccepting = run([claimResult(T0 + 3_100, 'unknown')], inStates.answering);
    expect(reduceCall(unknownAccepting, claimed(T0 + 3_150, IN_ID, false)).state).toBe(unknownAccepting);
  });

  it('hung up while the claim is out: the reject is owed at once but sent only when the claim shows the call is this agent’s', () => {
    const hungUp = runWithEffects([hangup(T0 + 3_050)], inStates.answering);
    expect(hungUp.state).toMatchObject({ phase: 'ended', open: { waiting: 'claim', owed: 'reject' } });
    expect(hungUp.effects.filter((e) => e.kind === 'end')).toEqual([]);
    const sent = runWithEffects([claimResult(T0 + 3_100, 'won')], hungUp.state);
    expect(sent.state).toMatchObject({ open: { waiting: 'confirmation', owed: 'reject' } });
    expect(sent.effects).toEqual([{ kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'reject' }]);
    // Lost, or a relay that cannot say (it may have given the call to a colleague who accepted it):
    // nothing reaches the gateway, which ends a call nobody accepted by itself.
    for (const outcome of ['lost', 'unknown'] as const) {
      const kept = runWithEffects([claimResult(T0 + 3_100, outcome)], hungUp.state);
      expect(kept.state).not.toHaveProperty('open');
      expect(kept.effects).toEqual([]);
    }
    // A colleague's claim announced first says the same.
    const announced = runWithEffects([claimed(T0 + 3_080, IN_ID, false)], hungUp.state);
    expect(announced.state).not.toHaveProperty('open');
    expect(runWithEffects([claimResult(T0 + 3_100, 'lost')], announced.state).effects).toEqual([]);
    // ... and so does the gateway's own terminate.
    const over = run([terminated(T0 + 3_080)], hungUp.state);
    expect(over).not.toHaveProperty('open');
    expect(runWithEffects([claimResult(T0 + 3_100, 'won')], over).effects).toEqual([]);
  });

  it('a refused accept owes a reject (the call still rings there); one that timed out or was not reached owes a terminate', () => {
    expect(runWithEffects([acceptFailed(T0 + 3_500)], inStates.accepting).state).toMatchObject({ open: { waiting: 'confirmation', owed: 'reject' } });
    expect(runWithEffects([acceptFailed(T0 + 3_500, IN_LOCAL, ACCEPT_TIMEOUT)], inStates.accepting).state).toMatchObject({ open: { waiting: 'confirmation', owed: 'terminate' } });
    const unreached = runWithEffects([acceptFailed(T0 + 3_500, IN_LOCAL, { code: 'gateway_unreachable', message: 'ECONNRESET' })], inStates.accepting);
    expect(unreached.state).toMatchObject({ open: { owed: 'terminate' }, end: { kind: 'failed', code: 'gateway_unreachable' } });
    expect(unreached.effects).toEqual([
      { kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'terminate' },
      { kind: 'reply', requestId: ANSWER_REQUEST, result: fail('gateway_unreachable', 'ECONNRESET') },
    ]);
  });

  it('a refused accept that is not about our answer owes nothing: the call may be a colleague\'s already', () => {
    const notRinging: AppError = { code: 'gateway_error', message: 'Invalid parameter', detail: 'cannot accept this call: it is already accepted', gatewayCode: 100, httpStatus: 400 };
    for (const error of [notRinging, { ...notRinging, gatewayCode: 138002, detail: 'The call is no longer ringing' }]) {
      const refused = runWithEffects([acceptFailed(T0 + 3_500, IN_LOCAL, error)], inStates.accepting);
      expect(refused.state).toMatchObject({ end: { kind: 'failed' } });
      expect(refused.state).not.toHaveProperty('open');
      expect(refused.effects.filter((e) => e.kind === 'end')).toEqual([]);
    }
    // The SDP named in the details (protocol.md: error 100 with error_data) is our answer refused: reject.
    const sdpInDetail = runWithEffects([acceptFailed(T0 + 3_500, IN_LOCAL, { ...notRinging, detail: 'Invalid parameter {"details":"session.sdp: no a=fingerprint"}' })], inStates.accepting);
    expect(sdpInDetail.state).toMatchObject({ open: { owed: 'reject' } });
    // An error 100 that names no parameter is about the one an accept carries, our SDP: reject.
    const bare = runWithEffects([acceptFailed(T0 + 3_500, IN_LOCAL, { ...notRinging, detail: 'bad fingerprint' })], inStates.accepting);
    expect(bare.state).toMatchObject({ open: { owed: 'reject' } });
    // One that names the call id is about the call, whatever else it says.
    const callId = runWithEffects([acceptFailed(T0 + 3_500, IN_LOCAL, { code: 'gateway_error', message: '(#100) call_id: unknown call id', gatewayCode: 100, httpStatus: 400 })], inStates.accepting);
    expect(callId.state).not.toHaveProperty('open');
  });

  it('a decline asks the relay; only the last of the team rejects, and not once the gateway has ended the call', () => {
    const declining = ROWS['in.declining'];
    const last = runWithEffects([declineResult(T0 + 4_100, true)], declining);
    expect(last.state).toMatchObject({ open: { waiting: 'confirmation', owed: 'reject' } });
    expect(last.effects).toEqual([{ kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'reject' }]);
    for (const verdict of [false, undefined]) {
      const ringsOn = runWithEffects([declineResult(T0 + 4_100, verdict)], declining);
      expect(ringsOn.state).not.toHaveProperty('open');
      expect(ringsOn.effects).toEqual([]);
    }
    // The customer hung up while the verdict was out: a reject now would only be refused.
    const over = run([terminated(T0 + 4_050)], declining);
    expect(over).not.toHaveProperty('open');
    expect(runWithEffects([declineResult(T0 + 4_100, true)], over)).toEqual({ state: over, effects: [] });
  });

  it('a ring timeout or a hang-up of a ringing call asks for the same verdict as a decline', () => {
    expect(run([deadline(T0 + 58_000)], inStates.ringing)).toMatchObject({ end: { kind: 'missed' }, open: { waiting: 'verdict' } });
    expect(run([hangup(T0 + 5_000)], inStates.ringing)).toMatchObject({ end: { kind: 'declined' }, open: { waiting: 'verdict' } });
  });

  it('keeps an end the gateway did not confirm as owed, and forgets one it answered', () => {
    const hungUp = inStates.hungUp;
    expect(run([endResult(T0 + 35_500, 'unreached')], hungUp)).toBe(hungUp);
    expect(run([endResult(T0 + 35_500, 'refused')], hungUp)).not.toHaveProperty('open');
    expect(run([endResult(T0 + 35_500, 'done')], hungUp)).not.toHaveProperty('open');
  });

  it('terminates a call hung up while its initiate was on its way, once the gateway names it; nothing when the initiate failed', () => {
    const cancelled = ROWS['out.cancelled'];
    const placed = runWithEffects([initiateOk(T0 + 900)], cancelled);
    expect(placed.state).toMatchObject({ phase: 'ended', end: { kind: 'cancelled' }, callId: OUT_ID, open: { waiting: 'confirmation', owed: 'terminate' } });
    expect(placed.effects).toEqual([{ kind: 'end', localId: OUT_LOCAL, callId: OUT_ID, action: 'terminate' }]);
    const failed = runWithEffects([initiateFailed(T0 + 900)], cancelled);
    expect(failed.state).not.toHaveProperty('open');
    expect(failed.effects).toEqual([]);
  });

  it("sends an outgoing call's terminate once when it ends while its claim (for routing only) is out", () => {
    const claiming = run([dial(T0), initiateOk(T0 + 1_000)]);
    expect(claiming).toMatchObject({ phase: 'calling' });
    for (const ending of [hangup(T0 + 2_000, OUT_LOCAL), deadline(T0 + 61_000, OUT_LOCAL), mediaFailed(T0 + 2_000, OUT_LOCAL)]) {
      const ended = runWithEffects([ending], claiming);
      expect(ended.effects.filter((e) => e.kind === 'end')).toEqual([{ kind: 'end', localId: OUT_LOCAL, callId: OUT_ID, action: 'terminate' }]);
      for (const outcome of ['won', 'unknown', 'lost'] as const) {
        // The claim only routed its events: its answer changes nothing, the terminate is owed until the gateway answers it.
        expect(reduceCall(ended.state, claimResult(T0 + 62_000, outcome, OUT_LOCAL))).toEqual({ state: ended.state, effects: [] });
        expect(ended.state).toMatchObject({ open: { waiting: 'confirmation', owed: 'terminate' } });
      }
    }
  });

  it('answers the Call command with why the call ended before the gateway placed it', () => {
    const replyOf = (events: CallEvent[]) => runWithEffects(events, outStates.dialing).effects.find((e) => e.kind === 'reply');
    expect(replyOf([initiateFailed(T0 + 500)])).toEqual({ kind: 'reply', requestId: DIAL_REQUEST, result: { ok: false, error: expect.objectContaining({ code: 'no_call_permission', gatewayCode: 138006 }) } });
    expect(replyOf([hangup(T0 + 500, OUT_LOCAL)])).toEqual({
      kind: 'reply',
      requestId: DIAL_REQUEST,
      result: fail('invalid_state', 'The call was hung up before the gateway placed it; it has been ended', text('calls.hungUpBeforePlaced')),
    });
  });

  it('answers the Answer command with media_failed when the media engine reported it', () => {
    const failed = runWithEffects([{ type: 'local.media_failed', at: T0 + 3_300, localId: IN_LOCAL, error: { code: 'media_failed', message: 'No microphone' } }], inStates.accepting);
    expect(failed.effects.at(-1)).toEqual({ kind: 'reply', requestId: ANSWER_REQUEST, result: fail('media_failed', 'No microphone') });
    // A reason the window reported as its code and values stays one: on the ended call and in the reply.
    const said = text('callMedia.micNotFound');
    const worded = runWithEffects([{ type: 'local.media_failed', at: T0 + 3_300, localId: IN_LOCAL, error: { code: 'media_failed', message: 'No microphone was found. Connect one, then try again.', text: said } }], inStates.accepting);
    expect(asEnded(worded.state).end).toEqual({ kind: 'failed', code: 'media_failed', message: 'No microphone was found. Connect one, then try again.', text: said });
    expect(worded.effects.at(-1)).toEqual({ kind: 'reply', requestId: ANSWER_REQUEST, result: fail('media_failed', 'No microphone was found. Connect one, then try again.', said) });
  });

  it('ends a call the bridge lost as failed with the reason in the catalogue’s words, and tells the gateway', () => {
    const gone = text('calls.bridgeNodeGone');
    const legFailed = text('calls.bridgeCustomerLegFailed');
    const active = runWithEffects([bridgeFailed(T0 + 40_000)], inStates.active);
    expect(asEnded(active.state).end).toEqual({ kind: 'failed', code: 'media_failed', message: 'The team’s media server for this call stopped, and the call ended with it', text: gone });
    expect(active.effects).toEqual([{ kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'terminate' }]);
    const outgoing = runWithEffects([bridgeFailed(T0 + 40_000, OUT_ID, 'customer_leg_failed')], outStates.active);
    expect(asEnded(outgoing.state).end).toEqual({ kind: 'failed', code: 'media_failed', message: 'The customer’s audio connection to the team’s media server failed, and the call ended with it', text: legFailed });
    expect(outgoing.effects).toEqual([{ kind: 'end', localId: OUT_LOCAL, callId: OUT_ID, action: 'terminate' }]);
    // A ringing call nobody can answer any more is rejected here at once, with the same reason.
    const ringing = runWithEffects([bridgeFailed(T0 + 2_000)], inStates.ringing);
    expect(asEnded(ringing.state).end).toEqual({ kind: 'failed', code: 'media_failed', message: 'The team’s media server for this call stopped, and the call ended with it', text: gone });
    expect(ringing.effects.filter((e) => e.kind !== 'deadline')).toEqual([{ kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'reject' }]);
    // The Answer under way hears why.
    const answering = runWithEffects([bridgeFailed(T0 + 3_300)], inStates.accepting);
    expect(answering.effects.at(-1)).toEqual({ kind: 'reply', requestId: ANSWER_REQUEST, result: fail('media_failed', 'The team’s media server for this call stopped, and the call ended with it', gone) });
    // An outgoing call's failure that overtakes its initiate response waits for it, then ends the call.
    const early = applyCallEvent(alone(outStates.dialing), bridgeFailed(T0 + 500, OUT_ID));
    expect(early.book.calls[OUT_LOCAL]).toBe(outStates.dialing);
    const placed = applyCallEvent(early.book, initiateOk(T0 + 600));
    expect(placed.book.calls[OUT_LOCAL]).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'media_failed', text: gone } });
    expect(placed.effects.filter((e) => e.kind === 'end')).toEqual([{ kind: 'end', localId: OUT_LOCAL, callId: OUT_ID, action: 'terminate' }]);
  });

  it('a leftover is ended only if it is still this agent’s: terminate after its claim wins, reject after a last verdict', () => {
    const ringingLeft = applyCallEvent(emptyBook(), leftover(T0, 'reject'));
    expect(ringingLeft.effects).toEqual([{ kind: 'decline', localId: LEFT_LOCAL, callId: LEFT_ID }]);
    expect(applyCallEvent(ringingLeft.book, declineResult(T0 + 100, true, LEFT_LOCAL)).effects).toEqual([{ kind: 'end', localId: LEFT_LOCAL, callId: LEFT_ID, action: 'reject' }]);
    const ownLeft = applyCallEvent(emptyBook(), leftover(T0, 'terminate'));
    expect(ownLeft.effects).toEqual([{ kind: 'claim', localId: LEFT_LOCAL, callId: LEFT_ID }]);
    expect(applyCallEvent(ownLeft.book, claimResult(T0 + 100, 'won', LEFT_LOCAL)).effects).toEqual([{ kind: 'end', localId: LEFT_LOCAL, callId: LEFT_ID, action: 'terminate' }]);
    // Never shown, never in history: it is no call at all, only what the gateway is owed.
    for (const { book, changed } of [ringingLeft, ownLeft]) {
      expect(changed).toEqual([]);
      expect(book.calls).toEqual({});
      expect(liveCalls(book)).toEqual([]);
    }
    expect(ownLeft.book.leftovers).toEqual({ [LEFT_ID]: { localId: LEFT_LOCAL, callId: LEFT_ID, since: T0, open: { waiting: 'claim', owed: 'terminate' } } });
  });
});

describe('deadlineOf, publicCall, isBusy and owedOnCrash', () => {
  it('a ringing call waits for its ring deadline, a placed one for its dial deadline; nothing else waits', () => {
    expect(deadlineOf(undefined)).toBeUndefined();
    expect(deadlineOf(inStates.ringing)).toBe(T0 - 2_000 + RING_TIMEOUT_MS);
    expect(deadlineOf(outStates.calling)).toBe(T0 + 1_000 + DIAL_TIMEOUT_MS);
    expect(deadlineOf(outStates.remote_ringing)).toBe(T0 + 1_000 + DIAL_TIMEOUT_MS);
    for (const s of [outStates.dialing, inStates.answering, inStates.connecting, inStates.active, outStates.connecting, inStates.ended]) expect(deadlineOf(s)).toBeUndefined();
  });

  it('publicCall drops what is open, and returns a call with nothing open as it is', () => {
    for (const s of Object.values(ROWS)) {
      const shown = publicCall(s);
      expect(shown).not.toHaveProperty('open');
      expect({ ...shown, ...(s.open !== undefined ? { open: s.open } : {}) }).toEqual(s);
      if (s.open === undefined) expect(shown).toBe(s);
    }
    expect(publicCall(inStates.ringing)).toBe(inStates.ringing);
  });

  it('a call is busy while placed, answered or talked on; ringing and ended calls are not', () => {
    expect([...BUSY_PHASES].sort()).toEqual(['active', 'answering', 'calling', 'connecting', 'dialing', 'remote_ringing']);
    for (const s of Object.values(ROWS)) expect(isBusy(s)).toBe(s.phase !== 'ringing' && s.phase !== 'ended');
    expect(hasBusyCall([inStates.ringing, inStates.ended])).toBe(false);
    expect(hasBusyCall([inStates.ringing, outStates.dialing])).toBe(true);
    expect(hasBusyCall([])).toBe(false);
  });

  it('owedOnCrash lists a live call (reject while ringing, else terminate) and every end not confirmed, by call id', () => {
    const book = applyAll([incoming(T0), dial(T0 + 1, OUT_LOCAL), initiateOk(T0 + 2), leftover(T0 + 3, 'terminate')]).book;
    expect(owedOnCrash(book)).toEqual(
      [
        { callId: IN_ID, action: 'reject' },
        { callId: OUT_ID, action: 'terminate' },
        { callId: LEFT_ID, action: 'terminate' },
      ].sort((a, b) => a.callId.localeCompare(b.callId)),
    );
    // A dialing call has no id to end; an ended call whose end is confirmed owes nothing.
    expect(owedOnCrash(applyAll([dial(T0, OUT_LOCAL)]).book)).toEqual([]);
    const settled = applyAll([incoming(T0), decline(T0 + 1), declineResult(T0 + 2, true), endResult(T0 + 3, 'done')]).book;
    expect(owedOnCrash(settled)).toEqual([]);
    const unconfirmed = applyAll([incoming(T0), decline(T0 + 1), declineResult(T0 + 2, true), endResult(T0 + 3, 'unreached')]).book;
    expect(owedOnCrash(unconfirmed)).toEqual([{ callId: IN_ID, action: 'reject' }]);
  });
});

// ---------------------------------------------------------------------------------------------
// Tombstones: an ended call is never revived.
// ---------------------------------------------------------------------------------------------

describe('reduceCall: ended calls are tombstones', () => {
  const ended: Record<string, EndedRecord> = {
    ...endedCalls(),
    // Answered elsewhere as the claim race's loser learns it: its own claim answered 409.
    'incoming.answered_elsewhere.claim_lost': asEnded(run([claimResult(T0 + 3_100, 'lost')], inStates.answering)),
  };

  it('has every end reason of both directions among the fixtures', () => {
    const kinds = new Set(Object.values(ended).map((c) => c.end.kind));
    expect([...kinds].sort()).toEqual(['answered_elsewhere', 'cancelled', 'completed', 'consult_ended', 'declined', 'failed', 'missed', 'no_answer', 'rejected', 'transferred']);
  });

  it('has nothing left open on any of them', () => {
    for (const call of Object.values(ended)) expect(call).not.toHaveProperty('open');
  });

  describe.each(Object.keys(ended))('%s', (name) => {
    const call = ended[name]!;
    const ids = call.localId === ASKED_LOCAL ? ASKED_IDS : call.direction === 'incoming' ? INCOMING_IDS : OUTGOING_IDS;
    it.each(EVENT_KEYS)('stays ended after %s', (key) => {
      const ev = tableEvents(ids)[key];
      const { state: next, effects } = reduceCall(call, ev);
      expect(next?.phase).toBe('ended');
      // Nothing is asked of anyone for an ended call with nothing open: at most a command is answered.
      // (A connect with the id a call never got, its initiate having failed, is a call of its own; so
      // is a colleague's transfer of the call.)
      expect(effects.filter((e) => e.kind !== 'reply' && e.localId === call.localId)).toEqual([]);
      if ((call.callId !== undefined || key !== 'remote.incoming') && key !== 'remote.transfer_ring') expect(effects.filter((e) => e.kind !== 'reply')).toEqual([]);
      // The talk after a transfer, or the call's before a colleague's consult, is not this agent's.
      const handedOn = call.end.kind === 'transferred' || call.end.kind === 'consult_ended';
      const refinesDuration = key === 'remote.terminated:COMPLETED+duration' && call.connectedAt !== undefined && !handedOn;
      const refinesRejection = key === 'remote.status:REJECTED' && call.end.kind === 'no_answer';
      if (refinesDuration) {
        expect(next).toEqual({ ...call, durationSec: 42 });
      } else if (refinesRejection) {
        expect(next).toEqual({ ...call, end: { kind: 'rejected' } });
      } else {
        expect(next).toBe(call);
      }
    });
  });

  it('lets a late terminate fill in the duration, once', () => {
    const hungUp = inStates.ended; // measured 30 s
    expect(asEnded(hungUp).durationSec).toBe(30);
    const late = terminated(T0 + 36_000, { durationSec: 31 });
    const filled = asEnded(reduceCall(hungUp, late).state);
    expect(filled).toEqual({ ...hungUp, durationSec: 31 });
    expect(reduceCall(filled, late).state).toBe(filled);
    expect(reduceCall(filled, terminated(T0 + 37_000)).state).toBe(filled);
  });

  it('does not invent talk time for a call that never connected here', () => {
    const declined = ended['incoming.declined']!;
    expect(reduceCall(declined, terminated(T0 + 9_000, { durationSec: 12 })).state).toBe(declined);
  });

  it('records the rejection when the terminate overtook REJECTED', () => {
    const remote = run([initiateOk(T0 + 1_000), status(T0 + 2_000, 'RINGING')], run([dial(T0)]));
    const byTerminate = asEnded(run([terminated(T0 + 6_000, { callId: OUT_ID })], remote));
    expect(byTerminate.end).toEqual({ kind: 'no_answer' });
    const rejected = asEnded(reduceCall(byTerminate, status(T0 + 6_100, 'REJECTED')).state);
    expect(rejected).toEqual({ ...byTerminate, end: { kind: 'rejected' } });
    expect(reduceCall(rejected, status(T0 + 6_200, 'REJECTED')).state).toBe(rejected);
  });
});

// ---------------------------------------------------------------------------------------------
// The book: several calls, out-of-order and duplicate delivery.
// ---------------------------------------------------------------------------------------------

function applyAll(events: readonly CallEvent[], book: CallBook = emptyBook()): { book: CallBook; changed: CallRecord[]; effects: CallEffect[] } {
  let acc = { book, changed: [] as CallRecord[], effects: [] as CallEffect[] };
  for (const ev of events) {
    const next = applyCallEvent(acc.book, ev);
    acc = { book: next.book, changed: [...acc.changed, ...next.changed], effects: [...acc.effects, ...next.effects] };
  }
  return acc;
}

describe('applyCallEvent', () => {
  it('opens an incoming call under in:<call id>, indexes its call id and starts its ring deadline', () => {
    const { book, changed, effects } = applyCallEvent(emptyBook(), incoming(T0));
    expect(changed.map(outcomeOf)).toEqual(['ringing']);
    expect(book.calls[IN_LOCAL]).toBe(changed[0]);
    expect(book.byCallId).toEqual({ [IN_ID]: IN_LOCAL });
    expect(book.pending).toEqual({});
    expect(book.tombstones).toEqual({});
    expect(effects).toEqual([{ kind: 'deadline', localId: IN_LOCAL, at: T0 - 2_000 + RING_TIMEOUT_MS }]);
  });

  it('returns the very same book for a duplicate connect, asking for nothing', () => {
    const first = applyCallEvent(emptyBook(), incoming(T0));
    const again = applyCallEvent(first.book, incoming(T0 + 50));
    expect(again.book).toBe(first.book);
    expect(again.changed).toEqual([]);
    expect(again.effects).toEqual([]);
  });

  it('routes remote events by call id and local events by local id', () => {
    const { book } = applyAll([incoming(T0), dial(T0 + 1, OUT_LOCAL), initiateOk(T0 + 2)]);
    expect(book.calls[IN_LOCAL]?.phase).toBe('ringing');
    expect(book.calls[OUT_LOCAL]?.phase).toBe('calling');
    expect(book.byCallId).toEqual({ [IN_ID]: IN_LOCAL, [OUT_ID]: OUT_LOCAL });
    const after = applyAll([status(T0 + 4, 'RINGING'), terminated(T0 + 5)], book).book;
    expect(after.calls[OUT_LOCAL]?.phase).toBe('remote_ringing');
    expect(outcomeOf(after.calls[IN_LOCAL])).toBe('ended:missed');
    const hungUp = applyCallEvent(after, hangup(T0 + 6, OUT_LOCAL)).book;
    expect(outcomeOf(hungUp.calls[OUT_LOCAL])).toBe('ended:cancelled');
    expect(hungUp.calls[IN_LOCAL]).toBe(after.calls[IN_LOCAL]);
  });

  it('refuses a second call while the first cannot be held yet: neither placed nor answered, and the command says why', () => {
    // The outgoing call is still ringing the customer: it has no media to hold.
    const { book } = applyAll([incoming(T0), dial(T0 + 1, OUT_LOCAL), initiateOk(T0 + 2)]);
    const answering = applyCallEvent(book, answer(T0 + 3, IN_LOCAL, 'rq-2'));
    expect(answering.book).toBe(book);
    expect(answering.effects).toEqual([
      { kind: 'reply', requestId: 'rq-2', result: fail('invalid_state', 'Another call is in progress and cannot be held until it is connected: hang up before answering this one', text('calls.otherNotConnected', { doing: term('answeringThis') })) },
    ]);
    const second = applyCallEvent(book, dial(T0 + 3, 'out-2', CALLEE, 'rq-3'));
    expect(second.book).toBe(book);
    expect(second.effects).toEqual([
      { kind: 'reply', requestId: 'rq-3', result: fail('invalid_state', 'Another call is in progress and cannot be held until it is connected: hang up before dialing a new number', text('calls.otherNotConnected', { doing: term('dialingNew') })) },
    ]);
    // A ringing call does not keep the agent busy: dialing out while one rings is fine.
    expect(applyAll([incoming(T0), dial(T0 + 1, OUT_LOCAL)]).book.calls[OUT_LOCAL]?.phase).toBe('dialing');
  });

  it('ignores local events for unknown calls, and answers commands for them with not_found', () => {
    const book = emptyBook();
    for (const ev of [answer(T0), hangup(T0), decline(T0), mediaConnected(T0), initiateOk(T0, 'nobody'), deadline(T0), claimResult(T0, 'won'), endResult(T0, 'done')]) {
      const result = applyCallEvent(book, ev);
      expect(result.book).toBe(book);
      expect(result.changed).toEqual([]);
      expect(result.effects).toEqual([]);
    }
    for (const ev of [answer(T0, IN_LOCAL, 'rq-a'), hangup(T0, IN_LOCAL, 'rq-a'), decline(T0, IN_LOCAL, 'rq-a')]) {
      const result = applyCallEvent(book, ev);
      expect(result.book).toBe(book);
      expect(result.effects).toEqual([{ kind: 'reply', requestId: 'rq-a', result: fail('not_found', `There is no call ${IN_LOCAL}`, text('calls.noSuchCall', { localId: IN_LOCAL })) }]);
    }
  });

  describe('terminate before connect', () => {
    it('leaves a tombstone; the late connect never rings but the call is kept as missed, as in order', () => {
      const t = applyCallEvent(emptyBook(), terminated(T0 + 1_000));
      expect(t.changed).toEqual([]);
      expect(t.book.tombstones).toEqual({ [IN_ID]: T0 + 1_000 });
      const late = applyCallEvent(t.book, incoming(T0 + 1_500));
      expect(late.changed.map(outcomeOf)).toEqual(['ended:missed']);
      expect(liveCalls(late.book)).toEqual([]);
      expect(late.book.pending).toEqual({});
      // Deadlines follow where the delivery leaves the call: an ended call has none, so none is ever set.
      expect(late.effects).toEqual([]);
      // The same connect again, or after the ended call: nothing more happens.
      expect(applyCallEvent(late.book, incoming(T0 + 1_600)).changed).toEqual([]);
    });

    it('drops a connect whose tombstone no longer has its terminate waiting', () => {
      const t = applyCallEvent(emptyBook(), terminated(T0 + 1_000));
      const pruned = pruneBook(t.book, T0 + 1_000 + PENDING_TTL_MS + 1);
      expect(pruned.tombstones[IN_ID]).toBe(T0 + 1_000);
      const late = applyCallEvent(pruned, incoming(T0 + PENDING_TTL_MS + 2_000, { timestamp: T0 + PENDING_TTL_MS + 2_000 }));
      expect(late.book).toBe(pruned);
      expect(late.changed).toEqual([]);
      expect(late.effects).toEqual([]);
    });

    it('returns the same book for a repeated terminate', () => {
      const t = applyCallEvent(emptyBook(), terminated(T0 + 1_000));
      expect(applyCallEvent(t.book, terminated(T0 + 1_000)).book).toBe(t.book);
      expect(applyCallEvent(t.book, { ...terminated(T0 + 1_000), at: T0 + 2_000 }).book).toBe(t.book);
    });
  });

  it('keeps an ended call ended when its connect arrives again', () => {
    const { book } = applyAll([incoming(T0), terminated(T0 + 5_000), incoming(T0 + 6_000)]);
    expect(outcomeOf(book.calls[IN_LOCAL])).toBe('ended:missed');
    expect(liveCalls(book)).toEqual([]);
  });

  it('ignores a status after the terminate', () => {
    const { book } = applyAll([dial(T0), initiateOk(T0 + 1_000), terminated(T0 + 3_000, { callId: OUT_ID }), status(T0 + 3_500, 'RINGING'), status(T0 + 3_600, 'ACCEPTED'), answered(T0 + 3_700)]);
    expect(outcomeOf(book.calls[OUT_LOCAL])).toBe('ended:no_answer');
  });

  it('returns the same book for a repeated connect of an outgoing call', () => {
    const { book } = applyAll([dial(T0), initiateOk(T0 + 1_000), answered(T0 + 5_000)]);
    const again = applyCallEvent(book, answered(T0 + 5_000));
    expect(again.book).toBe(book);
    expect(again.changed).toEqual([]);
  });

  describe('events for an outgoing call that overtake its initiate response', () => {
    it('holds RINGING and the answer until initiate_ok, then replays them in order', () => {
      const early = applyAll([dial(T0), status(T0 + 300, 'RINGING'), answered(T0 + 400)]);
      expect(early.changed.map(outcomeOf)).toEqual(['dialing']);
      expect(early.book.pending[OUT_ID]?.map((e) => e.type)).toEqual(['remote.status', 'remote.answered']);
      expect(early.book.calls[OUT_LOCAL]?.phase).toBe('dialing');

      const ok = applyCallEvent(early.book, initiateOk(T0 + 900));
      // Only the final state is reported: the app never sees a phase that was already over.
      expect(ok.changed.map(outcomeOf)).toEqual(['connecting']);
      const call = ok.book.calls[OUT_LOCAL];
      expect(call).toMatchObject({ phase: 'connecting', callId: OUT_ID, answerSdp: ANSWER_SDP, answeredAt: T0 + 900 });
      expect(ok.book.pending).toEqual({});
      expect(ok.book.byCallId).toEqual({ [OUT_ID]: OUT_LOCAL });
      // The replayed answer leaves it connecting, which has no deadline: no dial deadline is ever set.
      expect(ok.effects.filter((e) => e.kind === 'deadline')).toEqual([]);
      // Later events find the call by its id.
      expect(applyCallEvent(ok.book, mediaConnected(T0 + 1_200, OUT_LOCAL)).book.calls[OUT_LOCAL]?.phase).toBe('active');
    });

    it('ends the call on initiate_ok when its terminate came first, owing the gateway nothing', () => {
      const early = applyAll([dial(T0), terminated(T0 + 500, { callId: OUT_ID })]);
      expect(early.book.tombstones[OUT_ID]).toBe(T0 + 500);
      const ok = applyCallEvent(early.book, initiateOk(T0 + 900));
      expect(ok.changed.map(outcomeOf)).toEqual(['ended:no_answer']);
      expect(ok.book.tombstones).toEqual({});
      expect(ok.book.pending).toEqual({});
      expect(ok.book.byCallId[OUT_ID]).toBe(OUT_LOCAL);
      expect(ok.effects.filter((e) => e.kind === 'end')).toEqual([]);
      expect(owedOnCrash(ok.book)).toEqual([]);
    });

    it('keeps the rejection that arrived after its terminate, both before initiate_ok', () => {
      const early = applyAll([dial(T0), terminated(T0 + 500, { callId: OUT_ID }), status(T0 + 600, 'REJECTED')]);
      const ok = applyCallEvent(early.book, initiateOk(T0 + 900));
      expect(outcomeOf(ok.book.calls[OUT_LOCAL])).toBe('ended:rejected');
    });

    it('holds a duplicate only once', () => {
      const once = applyAll([dial(T0), status(T0 + 300, 'RINGING')]).book;
      const twice = applyCallEvent(once, status(T0 + 300, 'RINGING'));
      expect(twice.book).toBe(once);
      // Delivered again later: the same delivery, so still held once.
      expect(applyCallEvent(once, { ...status(T0 + 300, 'RINGING'), at: T0 + 800 }).book).toBe(once);
      // A different status is news.
      expect(applyCallEvent(once, status(T0 + 800, 'RINGING')).book.pending[OUT_ID]).toHaveLength(2);
    });

    it('does not terminate a call cancelled while dialing when the gateway’s own terminate was among what waited', () => {
      const early = applyAll([dial(T0), hangup(T0 + 400, OUT_LOCAL), status(T0 + 500, 'REJECTED'), terminated(T0 + 600, { callId: OUT_ID })]);
      const ok = applyCallEvent(early.book, initiateOk(T0 + 900));
      expect(outcomeOf(ok.book.calls[OUT_LOCAL])).toBe('ended:cancelled');
      expect(ok.book.calls[OUT_LOCAL]).toMatchObject({ callId: OUT_ID });
      expect(ok.book.calls[OUT_LOCAL]).not.toHaveProperty('open');
      expect(ok.effects).toEqual([]);
      expect(owedOnCrash(ok.book)).toEqual([]);
    });

    it('replays nothing into a call the agent cancelled while dialing: it only learns its id, to terminate it', () => {
      const early = applyAll([dial(T0), status(T0 + 300, 'RINGING'), hangup(T0 + 400, OUT_LOCAL)]);
      const cancelled = early.book.calls[OUT_LOCAL]!;
      const ok = applyCallEvent(early.book, initiateOk(T0 + 900));
      expect(outcomeOf(ok.book.calls[OUT_LOCAL])).toBe('ended:cancelled');
      expect(ok.changed.map((c) => publicCall(c))).toEqual([{ ...publicCall(cancelled), callId: OUT_ID }]);
      expect(ok.effects).toEqual([{ kind: 'end', localId: OUT_LOCAL, callId: OUT_ID, action: 'terminate' }]);
      expect(ok.book.pending).toEqual({});
    });
  });

  it('ends an incoming call at once when its claim overtook the connect', () => {
    const early = applyCallEvent(emptyBook(), claimed(T0 + 100));
    expect(early.changed).toEqual([]);
    const late = applyCallEvent(early.book, incoming(T0 + 200));
    expect(late.changed.map(outcomeOf)).toEqual(['ended:answered_elsewhere']);
    expect(late.book.pending).toEqual({});
    expect(liveCalls(late.book)).toEqual([]);
  });

  it('drops a stale connect without opening a call', () => {
    const book = emptyBook();
    const stale = applyCallEvent(book, incoming(T0, { timestamp: T0 - STALE_CONNECT_MS - 1_000 }));
    expect(stale.book).toBe(book);
    expect(stale.changed).toEqual([]);
    expect(stale.effects).toEqual([]);
  });

  it('fills the duration from a late terminate after the agent hung up, and stops owing the terminate', () => {
    const { book } = applyAll([incoming(T0), answer(T0 + 3_000), claimResult(T0 + 3_100, 'won'), acceptOk(T0 + 4_000), mediaConnected(T0 + 5_000), hangup(T0 + 35_000)]);
    const late = applyCallEvent(book, terminated(T0 + 36_000, { durationSec: 31 }));
    expect(late.changed).toHaveLength(1);
    expect(late.book.calls[IN_LOCAL]).toMatchObject({ phase: 'ended', end: { kind: 'completed', by: 'agent' }, durationSec: 31 });
    expect(late.book.calls[IN_LOCAL]).not.toHaveProperty('open');
  });

  it('reports the changed calls oldest first, bookkeeping changes included', () => {
    const { changed } = applyAll([incoming(T0), answer(T0 + 1), claimResult(T0 + 2, 'won'), acceptOk(T0 + 3), mediaConnected(T0 + 4), hangup(T0 + 5), endResult(T0 + 6, 'done')]);
    expect(changed.map(outcomeOf)).toEqual(['ringing', 'answering', 'answering', 'connecting', 'active', 'ended:completed/agent', 'ended:completed/agent']);
  });
});

describe('pruneBook', () => {
  it('keeps live calls however old they are', () => {
    const { book } = applyAll([incoming(T0), dial(T0, OUT_LOCAL)]);
    const pruned = pruneBook(book, T0 + 10 * TOMBSTONE_TTL_MS);
    expect(Object.keys(pruned.calls).sort()).toEqual([IN_LOCAL, OUT_LOCAL].sort());
    expect(pruned.byCallId).toEqual({ [IN_ID]: IN_LOCAL });
  });

  it('keeps ended calls for the tombstone time, then forgets them but still drops their late events', () => {
    const { book } = applyAll([incoming(T0), terminated(T0 + 10_000)]);
    expect(pruneBook(book, T0 + 10_000 + TOMBSTONE_TTL_MS).calls[IN_LOCAL]?.phase).toBe('ended');
    const pruned = pruneBook(book, T0 + 10_001 + TOMBSTONE_TTL_MS);
    expect(pruned.calls).toEqual({});
    expect(pruned.byCallId).toEqual({});
    expect(pruned.tombstones[IN_ID]).toBe(T0 + 10_000);
    // A very late terminate and connect find the tombstone, not an empty book.
    const late = applyAll([terminated(T0 + 10_002 + TOMBSTONE_TTL_MS), incoming(T0 + 10_003 + TOMBSTONE_TTL_MS)], pruned);
    expect(late.changed).toEqual([]);
    expect(late.book.pending).toEqual({});
  });

  it('keeps an ended call the gateway is still owed however old it is; drops a settled leftover at once, keeping its tombstone', () => {
    const { book } = applyAll([
      incoming(T0),
      answer(T0 + 1),
      claimResult(T0 + 2, 'won'),
      acceptOk(T0 + 3),
      hangup(T0 + 4),
      endResult(T0 + 5, 'unreached'),
      leftover(T0 + 6, 'terminate'),
      claimResult(T0 + 7, 'lost', LEFT_LOCAL),
    ]);
    const pruned = pruneBook(book, T0 + 10 * TOMBSTONE_TTL_MS);
    expect(Object.keys(pruned.calls)).toEqual([IN_LOCAL]);
    expect(pruned.calls[IN_LOCAL]).toMatchObject({ open: { waiting: 'confirmation', owed: 'terminate' } });
    expect(pruned.leftovers).toEqual({});
    const soon = pruneBook(book, T0 + 8);
    expect(soon.leftovers[LEFT_ID]).toBeUndefined();
    expect(soon.tombstones[LEFT_ID]).toBe(T0 + 6);
    // A leftover still owed its end stays, however old.
    const owedLeft = applyAll([leftover(T0, 'reject')]).book;
    expect(pruneBook(owedLeft, T0 + 10 * TOMBSTONE_TTL_MS).leftovers[LEFT_ID]).toBe(owedLeft.leftovers[LEFT_ID]);
  });

  it('drops tombstones past their time', () => {
    const { book } = applyAll([terminated(T0)]);
    expect(pruneBook(book, T0 + TOMBSTONE_TTL_MS).tombstones).toEqual({ [IN_ID]: T0 });
    expect(pruneBook(book, T0 + TOMBSTONE_TTL_MS + 1).tombstones).toEqual({});
  });

  it('drops pending events past their time, event by event', () => {
    const { book } = applyAll([status(T0, 'RINGING'), answered(T0 + 30_000)]);
    expect(pruneBook(book, T0 + PENDING_TTL_MS).pending[OUT_ID]).toHaveLength(2);
    expect(pruneBook(book, T0 + PENDING_TTL_MS + 1).pending[OUT_ID]?.map((e) => e.type)).toEqual(['remote.answered']);
    expect(pruneBook(book, T0 + 30_000 + PENDING_TTL_MS + 1).pending).toEqual({});
  });
});

describe('liveCalls and isLive', () => {
  it('lists only calls that have not ended', () => {
    const { book } = applyAll([incoming(T0), dial(T0, OUT_LOCAL), hangup(T0 + 1, OUT_LOCAL)]);
    expect(liveCalls(book).map((c) => c.localId)).toEqual([IN_LOCAL]);
    for (const s of Object.values(ROWS)) expect(isLive(s)).toBe(s.phase !== 'ended');
    for (const s of Object.values(ROWS)) expect(LIVE_PHASES.has(s.phase)).toBe(isLive(s));
  });
});

// ---------------------------------------------------------------------------------------------
// Properties: any order, any duplicates.
// ---------------------------------------------------------------------------------------------

/** Remote events for one incoming call, as delivery can scramble them. */
const REMOTE_POOL = (at: number): CallEvent[] => [
  incoming(at, { timestamp: T0 - 1_000 }),
  incoming(at, { timestamp: T0 - 1_000, ctaPayload: 'button' }),
  incoming(at, { timestamp: T0 - 10 * 60_000 }), // stale
  terminated(at, { timestamp: T0 + 20_000 }),
  terminated(at, { timestamp: T0 + 40_000, durationSec: 25 }),
  terminated(at, { timestamp: T0 + 40_000, status: 'FAILED', errors: [{ code: 138020, message: 'Relay timeout' }] }),
  claimed(at),
  claimed(at, IN_ID, true),
  claimed(at, IN_ID, false),
  status(at, 'RINGING', IN_ID),
  status(at, 'ACCEPTED', IN_ID),
  status(at, 'REJECTED', IN_ID),
  answered(at, IN_ID),
  bridgeFailed(at),
  bridgeFailed(at, IN_ID, 'customer_leg_failed'),
];
const LOCAL_POOL = (at: number): CallEvent[] => [
  answer(at),
  answer(at, IN_LOCAL, 'rq-p'),
  acceptOk(at),
  acceptFailed(at),
  acceptFailed(at, IN_LOCAL, ACCEPT_TIMEOUT),
  decline(at),
  hangup(at),
  mediaConnected(at),
  mediaFailed(at),
  deadline(at),
  claimResult(at, 'won'),
  claimResult(at, 'lost'),
  claimResult(at, 'unknown'),
  declineResult(at, true),
  declineResult(at, false),
  declineResult(at, undefined),
  endResult(at, 'done'),
  endResult(at, 'refused'),
  endResult(at, 'unreached'),
];

/** Picks from a pool by index, so a run holds repeats in any order. */
const picks = (poolSize: number) => fc.array(fc.nat({ max: poolSize - 1 }), { minLength: 1, maxLength: 24 });

function checkIncomingRun(indices: number[], pool: (at: number) => CallEvent[]): void {
  let book = emptyBook();
  let terminateApplied = false;
  let endedAs: string | undefined;
  indices.forEach((index, step) => {
    const ev = pool(T0 + step * 1_000)[index]!;
    const { book: next } = applyCallEvent(book, ev);
    // Applying the same event twice never changes the state.
    const again = applyCallEvent(next, ev);
    expect(again.book).toBe(next);
    expect(again.changed).toEqual([]);
    expect(again.effects.filter((e) => e.kind !== 'reply')).toEqual([]);

    book = next;
    if (ev.type === 'remote.terminated') terminateApplied = true;
    const call = book.calls[IN_LOCAL];
    if (terminateApplied) {
      expect(call === undefined || call.phase === 'ended').toBe(true);
    }
    if (endedAs !== undefined) {
      // Once ended, always ended, with the same reason.
      expect(outcomeOf(call)).toBe(endedAs);
    } else if (call?.phase === 'ended') {
      endedAs = outcomeOf(call);
    }
  });
}

/** Whether `after` is `before` with at most the refinements an ended call allows: the gateway's talk time, a rejection. */
function isRefinementOf(before: CallRecord, after: CallRecord): boolean {
  if (before.phase !== 'ended' || after.phase !== 'ended') return false;
  const a = publicCall(before);
  const b = publicCall(after);
  const norm = (c: ReturnType<typeof publicCall>) => (c.phase === 'ended' ? { ...c, durationSec: 0, end: c.end.kind === 'rejected' ? { kind: 'no_answer' } : c.end } : c);
  return JSON.stringify(norm(a)) === JSON.stringify(norm(b));
}

describe('properties', () => {
  it('remote events for one incoming call: after a terminate it never rings, and a repeat never changes anything', () => {
    fc.assert(
      fc.property(picks(REMOTE_POOL(0).length), (indices) => checkIncomingRun(indices, REMOTE_POOL)),
      { numRuns: 3_000 },
    );
  });

  it('remote and local events mixed: the same holds', () => {
    const mixed = (at: number) => [...REMOTE_POOL(at), ...LOCAL_POOL(at)];
    fc.assert(
      fc.property(picks(mixed(0).length), (indices) => checkIncomingRun(indices, mixed)),
      { numRuns: 3_000 },
    );
  });

  it('shuffled deliveries of one story end the same way whatever the order, once the call is known', () => {
    // The customer calls, a colleague answers, they talk, the customer hangs up. Delivered in any
    // order and with repeats, this agent never ends up with a ringing or live call.
    const story = [incoming(0), claimed(0), terminated(0, { durationSec: 33 })];
    fc.assert(
      fc.property(fc.shuffledSubarray([0, 1, 2, 0, 1, 2], { minLength: 6, maxLength: 6 }), (order) => {
        const { book, effects } = applyAll(order.map((i, step) => ({ ...story[i]!, at: T0 + step * 500 })));
        const call = book.calls[IN_LOCAL];
        expect(call === undefined || outcomeOf(call) === 'ended:answered_elsewhere').toBe(true);
        expect(liveCalls(book)).toEqual([]);
        // A colleague's call: nothing asked of the relay or the gateway, nothing owed after a crash.
        expect(effects.filter((e) => e.kind !== 'deadline')).toEqual([]);
        expect(owedOnCrash(book)).toEqual([]);
      }),
      { numRuns: 2_000 },
    );
  });

  it('for any calls and any event, the reducer is idempotent and ended is absorbing', () => {
    const events = (at: number) => [
      ...Object.values(tableEvents(INCOMING_IDS)),
      ...Object.values(tableEvents(OUTGOING_IDS)),
      // A colleague's transfer of the incoming call, rung here, and the relay's every word on it.
      ...Object.values(tableEvents(ASKED_IDS)),
      ...TRANSFER_STATES.map((state) => transferUpdate(at, state)),
      ...REMOTE_POOL(at),
      ...LOCAL_POOL(at),
      dial(at),
      initiateOk(at),
      initiateFailed(at),
      deadline(at, OUT_LOCAL),
      status(at, 'RINGING'),
      answered(at),
      hangup(at, OUT_LOCAL),
      mediaConnected(at, OUT_LOCAL),
      claimResult(at, 'won', OUT_LOCAL),
      endResult(at, 'done', OUT_LOCAL),
    ];
    const size = events(0).length;
    fc.assert(
      fc.property(fc.array(fc.nat({ max: size - 1 }), { minLength: 1, maxLength: 30 }), (indices) => {
        let book = emptyBook();
        indices.forEach((index, step) => {
          const ev = events(T0 + step * 1_000)[index]!;
          const next = applyCallEvent(book, ev);
          const again = applyCallEvent(next.book, ev);
          expect(again.book).toBe(next.book);
          expect(again.effects.filter((e) => e.kind !== 'reply')).toEqual([]);
          for (const [localId, call] of Object.entries(book.calls)) {
            const after = next.book.calls[localId];
            expect(after).toBeDefined();
            if (call.phase !== 'ended' || after === undefined) continue;
            expect(after.phase).toBe('ended');
            // What the agent sees of an ended call changes only by a refinement.
            if (JSON.stringify(publicCall(after)) !== JSON.stringify(publicCall(call))) {
              expect(isRefinementOf(call, after) || (ev.type === 'local.initiate_ok' && call.callId === undefined)).toBe(true);
            }
          }
          book = next.book;
        });
      }),
      { numRuns: 3_000 },
    );
  });
});
