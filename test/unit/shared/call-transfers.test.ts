// Transfers, consults and three-way calls in the call reducer (shared/transfer.ts, shared/calls/).
// First the transition table of calls in a transfer — a colleague's that rings this agent (`asked`),
// and this agent's own (`own`) — × every event that can reach them; then what each transition
// records, and the book: a transfer's ring beside an ended call of the same id, repeats, the crash file.
import { describe, expect, it } from 'vitest';
import {
  applyCallEvent,
  deadlineOf,
  emptyBook,
  owedOnCrash,
  pruneBook,
  publicCall,
  reduceCall,
  TOMBSTONE_TTL_MS,
  TRANSFER_REFUSALS,
  transferableCall,
  transferLocalId,
  transferToActOn,
  type CallBook,
  type CallEffect,
  type CallEvent,
  type CallRecord,
} from '../../../shared/call-state';
import { historyEntryFor } from '../../../shared/history';
import { english, type RuleText } from '../../../shared/i18n/text';
import type { ErrorCode } from '../../../shared/result';
import { TRANSFER_RING_MS, type TransferUpdateState } from '../../../shared/transfer';
import {
  acceptFailed,
  acceptOk,
  answer,
  ANSWER_REQUEST,
  ANSWER_SDP,
  asEnded,
  askedStates,
  ASKED_LOCAL,
  ASKED_TRANSFER,
  BOB,
  bridgeFailed,
  CAROL,
  claimed,
  claimResult,
  CUSTOMER,
  deadline,
  decline,
  declineResult,
  endResult,
  hangup,
  hold,
  IN_ID,
  IN_LOCAL,
  incoming,
  incomingStates,
  initiateOk,
  dial,
  leftover,
  mediaConnected,
  mediaFailed,
  OFFER_SDP,
  OUT_ID,
  OUT_LOCAL,
  OWN_TRANSFER,
  ownStates,
  resume,
  run,
  runWithEffects,
  T0,
  terminated,
  transferGone,
  transferRing,
  transferUpdate,
} from './call-fixtures';

// ---------------------------------------------------------------------------------------------
// The transition table.
// ---------------------------------------------------------------------------------------------

/** When the table's events happen: after every fixture state was reached. */
const AT = T0 + 100_000;
const TABLE_REQUEST = 'rq-transfer-table';

const EVENT_KEYS = [
  'transfer:ringing', // the row's own transfer
  'transfer:ringing:new', // another transfer of the call starts ringing (this agent started it)
  'transfer:consulting',
  'transfer:joined',
  'transfer:transferred',
  'transfer:with_customer',
  'transfer:not_answered',
  'transfer:cancelled',
  'transfer:answered_elsewhere',
  'transfer:other', // a word on a transfer that is not the call's
  'remote.transfer_ring', // the row's transfer rings again (a replay)
  'remote.terminated',
  'remote.terminated+duration',
  'remote.claimed',
  'remote.bridge_failed',
  'local.answer',
  'local.accept_ok',
  'local.accept_failed:answered_elsewhere', // the relay took a colleague's answer first (409)
  'local.accept_failed:over', // the transfer was over (409 invalid_state)
  'local.decline',
  'local.hangup',
  'local.hold',
  'local.resume',
  'local.deadline',
  'local.media_connected',
  'local.media_failed',
  'local.transfer_gone', // the relay answered this agent's cancel of the row's transfer with 404
] as const;
type EventKey = (typeof EVENT_KEYS)[number];

/** One event of each kind for a call (its local id) in a transfer (its id). */
function tableEvents(localId: string, transferId: string): Record<EventKey, CallEvent> {
  const about = (state: TransferUpdateState, o: Partial<Extract<CallEvent, { type: 'remote.transfer' }>> = {}) => transferUpdate(AT, state, { transferId, ...o });
  return {
    'transfer:ringing': about('ringing', { colleague: CAROL }),
    'transfer:ringing:new': about('ringing', { transferId: 'xfer-next', colleague: BOB }),
    'transfer:consulting': about('consulting', { colleague: CAROL }),
    'transfer:joined': about('joined', { colleague: CAROL }),
    'transfer:transferred': about('transferred', { colleague: CAROL }),
    'transfer:with_customer': about('with_customer', { colleague: CAROL }),
    'transfer:not_answered': about('not_answered', { reason: 'declined' }),
    'transfer:cancelled': about('cancelled'),
    'transfer:answered_elsewhere': about('answered_elsewhere'),
    'transfer:other': about('cancelled', { transferId: 'xfer-other' }),
    'remote.transfer_ring': transferRing(AT, { transferId }),
    'remote.terminated': terminated(AT),
    'remote.terminated+duration': terminated(AT, { durationSec: 95 }),
    'remote.claimed': claimed(AT, IN_ID, false),
    'remote.bridge_failed': bridgeFailed(AT),
    'local.answer': answer(AT, localId, TABLE_REQUEST),
    'local.accept_ok': acceptOk(AT, localId),
    'local.accept_failed:answered_elsewhere': acceptFailed(AT, localId, { code: 'answered_elsewhere', message: 'Answered by another agent', httpStatus: 409 }),
    'local.accept_failed:over': acceptFailed(AT, localId, { code: 'invalid_state', message: 'The relay refused the transfer answer request (HTTP 409: the transfer is over)', httpStatus: 409 }),
    'local.decline': decline(AT, localId, TABLE_REQUEST),
    'local.hangup': hangup(AT, localId, TABLE_REQUEST),
    'local.hold': hold(AT, localId, TABLE_REQUEST),
    'local.resume': resume(AT, localId, TABLE_REQUEST),
    'local.deadline': deadline(AT, localId),
    'local.media_connected': mediaConnected(AT, localId),
    'local.media_failed': mediaFailed(AT, localId),
    'local.transfer_gone': transferGone(AT, localId, transferId),
  };
}

const asked = askedStates('consult');
const askedTransfer = askedStates('transfer');
const own = ownStates('consult');
const ROWS = {
  'asked.ringing': asked.ringing, // Bob's consult rings here
  'asked.answering': asked.answering, // answered: the answer is with the relay
  'asked.connecting': asked.connecting, // the relay took it: consulting
  'asked.consulting': asked.active,
  'asked.joined': asked.joined, // Bob added this agent: three-way
  'asked.transfer_taken': askedTransfer.active, // Bob's transfer answered: this agent has the customer
  'own.ringing': own.ringing, // this agent's consult rings Carol
  'own.consulting': own.consulting,
  'own.joined': own.joined,
  'own.not_answered': own.notAnswered, // nobody took it: back with the customer
  'own.done': own.cancelled, // taken back while it rang: back with the customer
} as const;
type RowKey = keyof typeof ROWS;
const isOwn = (row: RowKey): boolean => row.startsWith('own.');

type Outcome = '=' | string;
type Fx = 'accept' | 'end:terminate' | 'end:reject' | 'transfer_decline' | 'rejoin' | 'deadline:cancel' | 'deadline:set' | `reply:${'ok' | ErrorCode}` | `awaited:${'ok' | ErrorCode}`;
type Cell = Outcome | readonly [Outcome, ...Fx[]];

/**
 * Outcomes: `=` the very same call; `<phase>` or `ended:<kind>[/<code>]`, and after `+` the
 * transfer's state as the call then holds it (`none` when it has none).
 */
const EXPECTED: Record<RowKey, Record<EventKey, Cell>> = {
  'asked.ringing': {
    'transfer:ringing': '=', // told only to the agent who started it
    'transfer:ringing:new': '=', // a ringing call starts no transfer
    'transfer:consulting': '=', // not answered here
    'transfer:joined': '=',
    'transfer:transferred': '=',
    'transfer:with_customer': '=',
    'transfer:not_answered': '=',
    'transfer:cancelled': ['ended:missed+ringing', 'deadline:cancel'], // Bob took it back: nothing to decline
    'transfer:answered_elsewhere': ['ended:answered_elsewhere+ringing', 'deadline:cancel'], // another colleague rung with it was first
    'transfer:other': '=',
    'remote.transfer_ring': '=', // it never rings twice
    'remote.terminated': ['ended:missed+ringing', 'deadline:cancel'], // the customer hung up
    'remote.terminated+duration': ['ended:missed+ringing', 'deadline:cancel'], // the talk was Bob's
    'remote.claimed': '=', // the call's claim is older than the transfer
    'remote.bridge_failed': ['ended:failed/media_failed+ringing', 'deadline:cancel'], // no reject: the gateway's call was accepted long ago
    'local.answer': ['answering+ringing', 'accept', 'deadline:cancel'], // no claim: the relay's answer is first-answer-wins
    'local.accept_ok': '=',
    'local.accept_failed:answered_elsewhere': '=',
    'local.accept_failed:over': '=',
    'local.decline': ['ended:declined+ringing', 'reply:ok', 'transfer_decline', 'deadline:cancel'], // the relay hears it, never the gateway
    'local.hangup': ['ended:declined+ringing', 'reply:ok', 'transfer_decline', 'deadline:cancel'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.deadline': ['ended:missed+ringing', 'transfer_decline', 'deadline:cancel'],
    'local.media_connected': '=',
    'local.media_failed': ['ended:declined+ringing', 'transfer_decline', 'deadline:cancel'],
    'local.transfer_gone': '=',
  },
  'asked.answering': {
    'transfer:ringing': '=',
    'transfer:ringing:new': '=',
    'transfer:consulting': 'answering+consulting',
    'transfer:joined': 'answering+joined',
    'transfer:transferred': '=',
    'transfer:with_customer': 'answering+done', // Bob left: the customer is this agent's
    'transfer:not_answered': '=',
    'transfer:cancelled': ['ended:consult_ended+ringing', 'awaited:invalid_state'], // nothing owed to anyone
    'transfer:answered_elsewhere': ['ended:answered_elsewhere+ringing', 'awaited:answered_elsewhere'],
    'transfer:other': '=',
    'remote.transfer_ring': '=',
    'remote.terminated': ['ended:missed+ringing', 'awaited:invalid_state'],
    'remote.terminated+duration': ['ended:completed/customer+ringing', 'awaited:invalid_state'],
    'remote.claimed': '=',
    'remote.bridge_failed': ['ended:failed/media_failed+ringing', 'end:terminate', 'awaited:media_failed'], // leaves the call (bridged-calls.ts) before any terminate
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': ['connecting+consulting', 'awaited:ok'],
    'local.accept_failed:answered_elsewhere': ['ended:answered_elsewhere+ringing', 'awaited:answered_elsewhere'], // no reject, no terminate
    'local.accept_failed:over': ['ended:failed/invalid_state+ringing', 'transfer_decline', 'awaited:invalid_state'], // declined on the relay: Bob hears at once it is not taken here
    'local.decline': ['=', 'reply:invalid_state'],
    'local.hangup': ['ended:completed/agent+ringing', 'reply:ok', 'end:terminate', 'awaited:invalid_state'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.deadline': '=',
    'local.media_connected': ['active+consulting', 'awaited:ok'], // media may beat the relay's answer
    'local.media_failed': ['ended:failed/ice_failed+ringing', 'end:terminate', 'awaited:invalid_state'],
    'local.transfer_gone': '=',
  },
  'asked.connecting': {
    'transfer:ringing': '=',
    'transfer:ringing:new': '=',
    'transfer:consulting': '=',
    'transfer:joined': 'connecting+joined',
    'transfer:transferred': '=',
    'transfer:with_customer': 'connecting+done',
    'transfer:not_answered': '=',
    'transfer:cancelled': 'ended:consult_ended+consulting',
    'transfer:answered_elsewhere': '=', // this agent's answer was taken
    'transfer:other': '=',
    'remote.transfer_ring': '=',
    'remote.terminated': 'ended:completed/customer+consulting',
    'remote.terminated+duration': 'ended:completed/customer+consulting',
    'remote.claimed': '=',
    'remote.bridge_failed': ['ended:failed/media_failed+consulting', 'end:terminate'],
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed:answered_elsewhere': 'ended:answered_elsewhere+consulting',
    'local.accept_failed:over': ['ended:failed/invalid_state+consulting', 'transfer_decline'], // the relay did not take the answer: it stops ringing here
    'local.decline': ['=', 'reply:invalid_state'],
    'local.hangup': ['ended:completed/agent+consulting', 'reply:ok', 'end:terminate'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:invalid_state'],
    'local.deadline': '=',
    'local.media_connected': 'active+consulting',
    'local.media_failed': ['ended:failed/ice_failed+consulting', 'end:terminate'],
    'local.transfer_gone': '=',
  },
  'asked.consulting': {
    'transfer:ringing': '=',
    'transfer:ringing:new': '=', // a colleague's call still: this agent cannot have started one
    'transfer:consulting': '=',
    'transfer:joined': 'active+joined',
    'transfer:transferred': '=',
    'transfer:with_customer': 'active+done', // Bob completed the transfer, or left
    'transfer:not_answered': '=',
    'transfer:cancelled': 'ended:consult_ended+consulting', // Bob is back with the customer
    'transfer:answered_elsewhere': '=',
    'transfer:other': '=',
    'remote.transfer_ring': '=',
    'remote.terminated': 'ended:completed/customer+consulting',
    'remote.terminated+duration': 'ended:completed/customer+consulting', // measured here: the 95 s were mostly Bob's
    'remote.claimed': '=',
    'remote.bridge_failed': ['ended:failed/media_failed+consulting', 'end:terminate'],
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed:answered_elsewhere': 'ended:answered_elsewhere+consulting',
    'local.accept_failed:over': ['ended:failed/invalid_state+consulting', 'transfer_decline'], // the relay did not take the answer: it stops ringing here
    'local.decline': ['=', 'reply:invalid_state'],
    'local.hangup': ['ended:completed/agent+consulting', 'reply:ok', 'end:terminate'], // leaves first: Bob stays with the customer
    'local.hold': ['=', 'reply:invalid_state'], // the relay routes the customer now
    'local.resume': ['=', 'reply:ok'],
    'local.deadline': '=',
    'local.media_connected': '=',
    'local.media_failed': ['active+consulting', 'rejoin', 'deadline:set'], // its leg broke (a network change): a new one, Bob and the customer kept
    'local.transfer_gone': '=',
  },
  'asked.joined': {
    'transfer:ringing': '=',
    'transfer:ringing:new': '=',
    'transfer:consulting': '=',
    'transfer:joined': '=',
    'transfer:transferred': '=',
    'transfer:with_customer': 'active+done',
    'transfer:not_answered': '=',
    'transfer:cancelled': '=', // a three-way call is no consult to cancel
    'transfer:answered_elsewhere': '=',
    'transfer:other': '=',
    'remote.transfer_ring': '=',
    'remote.terminated': 'ended:completed/customer+joined',
    'remote.terminated+duration': 'ended:completed/customer+joined',
    'remote.claimed': '=',
    'remote.bridge_failed': ['ended:failed/media_failed+joined', 'end:terminate'],
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed:answered_elsewhere': 'ended:answered_elsewhere+joined',
    'local.accept_failed:over': ['ended:failed/invalid_state+joined', 'transfer_decline'], // the relay did not take the answer: it stops ringing here
    'local.decline': ['=', 'reply:invalid_state'],
    'local.hangup': ['ended:completed/agent+joined', 'reply:ok', 'end:terminate'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:ok'],
    'local.deadline': '=',
    'local.media_connected': '=',
    'local.media_failed': ['active+joined', 'rejoin', 'deadline:set'],
    'local.transfer_gone': '=',
  },
  'asked.transfer_taken': {
    'transfer:ringing': '=',
    'transfer:ringing:new': ['active+ringing', 'deadline:set'], // the customer is this agent's: it may hand them on in turn
    'transfer:consulting': '=',
    'transfer:joined': '=',
    'transfer:transferred': '=',
    'transfer:with_customer': '=',
    'transfer:not_answered': '=',
    'transfer:cancelled': '=', // too late: the customer is this agent's
    'transfer:answered_elsewhere': '=',
    'transfer:other': '=',
    'remote.transfer_ring': '=',
    'remote.terminated': 'ended:completed/customer+done',
    'remote.terminated+duration': 'ended:completed/customer+done',
    'remote.claimed': '=',
    'remote.bridge_failed': ['ended:failed/media_failed+done', 'end:terminate'],
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed:answered_elsewhere': 'ended:answered_elsewhere+done',
    'local.accept_failed:over': ['ended:failed/invalid_state+done', 'transfer_decline'], // the relay did not take the answer: it stops ringing here
    'local.decline': ['=', 'reply:invalid_state'],
    'local.hangup': ['ended:completed/agent+done', 'reply:ok', 'end:terminate'],
    'local.hold': ['active:held+done', 'reply:ok'], // the agent's own call now
    'local.resume': ['=', 'reply:ok'],
    'local.deadline': '=',
    'local.media_connected': '=',
    'local.media_failed': ['active+done', 'rejoin', 'deadline:set'],
    'local.transfer_gone': '=',
  },
  'own.ringing': {
    'transfer:ringing': '=', // the same ring again
    'transfer:ringing:new': '=', // one transfer at a time
    'transfer:consulting': ['active+consulting', 'deadline:cancel'], // Carol answered
    'transfer:joined': ['active+joined', 'deadline:cancel'],
    'transfer:transferred': ['ended:transferred+ringing', 'deadline:cancel'], // a cold transfer Carol answered: no terminate, nothing owed
    'transfer:with_customer': ['active+done', 'deadline:cancel'],
    'transfer:not_answered': ['active+not_answered', 'deadline:cancel'], // back with the customer
    'transfer:cancelled': ['active+done', 'deadline:cancel'], // taken back: over, and nothing told of it again reopens it
    'transfer:answered_elsewhere': '=', // not said to the agent who started it
    'transfer:other': '=',
    'remote.transfer_ring': '=', // a colleague's transfer never rings over a live call
    'remote.terminated': ['ended:completed/customer+ringing', 'deadline:cancel'],
    'remote.terminated+duration': ['ended:completed/customer+ringing', 'deadline:cancel'],
    'remote.claimed': '=',
    'remote.bridge_failed': ['ended:failed/media_failed+ringing', 'end:terminate', 'deadline:cancel'],
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed:answered_elsewhere': ['ended:failed/answered_elsewhere+ringing', 'deadline:cancel'], // a gateway accept of its own, never a transfer answer
    'local.accept_failed:over': ['ended:failed/invalid_state+ringing', 'deadline:cancel'],
    'local.decline': ['=', 'reply:invalid_state'],
    'local.hangup': ['ended:completed/agent+ringing', 'reply:ok', 'end:terminate', 'deadline:cancel'],
    'local.hold': ['=', 'reply:invalid_state'], // the customer hears the music already
    'local.resume': ['=', 'reply:ok'],
    'local.deadline': ['active+not_answered', 'deadline:cancel'], // the relay's word never came: not answered, back with the customer
    'local.media_connected': '=',
    'local.media_failed': ['active+ringing', 'rejoin'], // a new leg, the ring's deadline kept: it comes before the rejoin's
    'local.transfer_gone': ['active+done', 'deadline:cancel'], // the relay no longer knows it: over here too
  },
  'own.consulting': {
    'transfer:ringing': '=',
    'transfer:ringing:new': '=',
    'transfer:consulting': '=',
    'transfer:joined': 'active+joined', // Add to call
    'transfer:transferred': 'ended:transferred+consulting', // Complete transfer
    'transfer:with_customer': 'active+done', // Carol hung up
    'transfer:not_answered': 'active+not_answered',
    'transfer:cancelled': 'active+done', // Cancel consult
    'transfer:answered_elsewhere': '=',
    'transfer:other': '=',
    'remote.transfer_ring': '=',
    'remote.terminated': 'ended:completed/customer+consulting',
    'remote.terminated+duration': 'ended:completed/customer+consulting',
    'remote.claimed': '=',
    'remote.bridge_failed': ['ended:failed/media_failed+consulting', 'end:terminate'],
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed:answered_elsewhere': ['ended:failed/answered_elsewhere+consulting'],
    'local.accept_failed:over': ['ended:failed/invalid_state+consulting'],
    'local.decline': ['=', 'reply:invalid_state'],
    'local.hangup': ['ended:completed/agent+consulting', 'reply:ok', 'end:terminate'], // leaves first: Carol stays with the customer
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:ok'],
    'local.deadline': '=',
    'local.media_connected': '=',
    'local.media_failed': ['active+consulting', 'rejoin', 'deadline:set'],
    'local.transfer_gone': 'active+done',
  },
  'own.joined': {
    'transfer:ringing': '=',
    'transfer:ringing:new': '=',
    'transfer:consulting': '=',
    'transfer:joined': '=',
    'transfer:transferred': 'ended:transferred+joined',
    'transfer:with_customer': 'active+done', // Carol left the three-way call
    'transfer:not_answered': '=',
    'transfer:cancelled': 'active+done',
    'transfer:answered_elsewhere': '=',
    'transfer:other': '=',
    'remote.transfer_ring': '=',
    'remote.terminated': 'ended:completed/customer+joined',
    'remote.terminated+duration': 'ended:completed/customer+joined',
    'remote.claimed': '=',
    'remote.bridge_failed': ['ended:failed/media_failed+joined', 'end:terminate'],
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed:answered_elsewhere': ['ended:failed/answered_elsewhere+joined'],
    'local.accept_failed:over': ['ended:failed/invalid_state+joined'],
    'local.decline': ['=', 'reply:invalid_state'],
    'local.hangup': ['ended:completed/agent+joined', 'reply:ok', 'end:terminate'],
    'local.hold': ['=', 'reply:invalid_state'],
    'local.resume': ['=', 'reply:ok'],
    'local.deadline': '=',
    'local.media_connected': '=',
    'local.media_failed': ['active+joined', 'rejoin', 'deadline:set'],
    'local.transfer_gone': '=', // no cancel applies to a three-way call
  },
  'own.not_answered': {
    'transfer:ringing': '=', // that one is over
    'transfer:ringing:new': ['active+ringing', 'deadline:set'], // the agent tries again
    'transfer:consulting': '=',
    'transfer:joined': '=',
    'transfer:transferred': '=', // that transfer is over: nothing of it moves the call any more
    'transfer:with_customer': '=',
    'transfer:not_answered': '=',
    'transfer:cancelled': '=',
    'transfer:answered_elsewhere': '=',
    'transfer:other': '=',
    'remote.transfer_ring': '=',
    'remote.terminated': 'ended:completed/customer+not_answered',
    'remote.terminated+duration': 'ended:completed/customer+not_answered',
    'remote.claimed': '=',
    'remote.bridge_failed': ['ended:failed/media_failed+not_answered', 'end:terminate'],
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed:answered_elsewhere': ['ended:failed/answered_elsewhere+not_answered'],
    'local.accept_failed:over': ['ended:failed/invalid_state+not_answered'],
    'local.decline': ['=', 'reply:invalid_state'],
    'local.hangup': ['ended:completed/agent+not_answered', 'reply:ok', 'end:terminate'],
    'local.hold': ['active:held+not_answered', 'reply:ok'], // the agent's own call again
    'local.resume': ['=', 'reply:ok'],
    'local.deadline': '=',
    'local.media_connected': '=',
    'local.media_failed': ['active+not_answered', 'rejoin', 'deadline:set'],
    'local.transfer_gone': '=',
  },
  'own.done': {
    'transfer:ringing': '=', // its ring told again: it never rings again
    'transfer:ringing:new': ['active+ringing', 'deadline:set'], // a new transfer may start once the last is over
    'transfer:consulting': '=',
    'transfer:joined': '=',
    'transfer:transferred': '=', // that transfer is over: nothing of it moves the call any more
    'transfer:with_customer': '=',
    'transfer:not_answered': '=',
    'transfer:cancelled': '=',
    'transfer:answered_elsewhere': '=',
    'transfer:other': '=',
    'remote.transfer_ring': '=',
    'remote.terminated': 'ended:completed/customer+done',
    'remote.terminated+duration': 'ended:completed/customer+done',
    'remote.claimed': '=',
    'remote.bridge_failed': ['ended:failed/media_failed+done', 'end:terminate'],
    'local.answer': ['=', 'reply:invalid_state'],
    'local.accept_ok': '=',
    'local.accept_failed:answered_elsewhere': ['ended:failed/answered_elsewhere+done'],
    'local.accept_failed:over': ['ended:failed/invalid_state+done'],
    'local.decline': ['=', 'reply:invalid_state'],
    'local.hangup': ['ended:completed/agent+done', 'reply:ok', 'end:terminate'],
    'local.hold': ['active:held+done', 'reply:ok'], // the agent's own call again
    'local.resume': ['=', 'reply:ok'],
    'local.deadline': '=',
    'local.media_connected': '=',
    'local.media_failed': ['active+done', 'rejoin', 'deadline:set'],
    'local.transfer_gone': '=',
  },
};

function outcomeOf(call: CallRecord | undefined): string {
  if (call === undefined) return 'none';
  let phase: string = call.phase;
  if (call.phase === 'active' && call.heldSince !== undefined) phase = 'active:held';
  if (call.phase === 'ended') {
    const e = call.end;
    phase = e.kind === 'completed' ? `ended:completed/${e.by}` : e.kind === 'failed' ? `ended:failed/${e.code}` : `ended:${e.kind}`;
  }
  return `${phase}+${call.transfer?.state ?? 'none'}`;
}

function fxOf(effect: CallEffect): string {
  switch (effect.kind) {
    case 'reply':
      return `${effect.requestId === TABLE_REQUEST ? 'reply' : 'awaited'}:${effect.result.ok ? 'ok' : effect.result.error.code}`;
    case 'end':
      return `end:${effect.action}`;
    case 'deadline':
      return effect.at === undefined ? 'deadline:cancel' : 'deadline:set';
    default:
      return effect.kind;
  }
}

function alone(call: CallRecord): CallBook {
  return { ...emptyBook(), calls: { [call.localId]: call }, byCallId: call.callId !== undefined ? { [call.callId]: call.localId } : {} };
}

describe('reduceCall: a call in a transfer × every event', () => {
  it('has rows for every state of both roles, each as its story left it', () => {
    expect(Object.fromEntries(Object.entries(ROWS).map(([row, call]) => [row, { localId: call.localId, phase: call.phase, bridged: call.bridged, transfer: call.transfer }]))).toEqual({
      'asked.ringing': { localId: ASKED_LOCAL, phase: 'ringing', bridged: true, transfer: { id: ASKED_TRANSFER, kind: 'consult', role: 'to', colleague: BOB, state: 'ringing' } },
      'asked.answering': { localId: ASKED_LOCAL, phase: 'answering', bridged: true, transfer: { id: ASKED_TRANSFER, kind: 'consult', role: 'to', colleague: BOB, state: 'ringing' } },
      'asked.connecting': { localId: ASKED_LOCAL, phase: 'connecting', bridged: true, transfer: { id: ASKED_TRANSFER, kind: 'consult', role: 'to', colleague: BOB, state: 'consulting' } },
      'asked.consulting': { localId: ASKED_LOCAL, phase: 'active', bridged: true, transfer: { id: ASKED_TRANSFER, kind: 'consult', role: 'to', colleague: BOB, state: 'consulting' } },
      'asked.joined': { localId: ASKED_LOCAL, phase: 'active', bridged: true, transfer: { id: ASKED_TRANSFER, kind: 'consult', role: 'to', colleague: BOB, state: 'joined' } },
      'asked.transfer_taken': { localId: ASKED_LOCAL, phase: 'active', bridged: true, transfer: { id: ASKED_TRANSFER, kind: 'transfer', role: 'to', colleague: BOB, state: 'done' } },
      'own.ringing': {
        localId: IN_LOCAL,
        phase: 'active',
        bridged: true,
        // The relay's ring (30 s) and 10 s for its word, before the ring is taken as not answered here.
        transfer: { id: OWN_TRANSFER, kind: 'consult', role: 'from', colleague: CAROL, state: 'ringing', ringsUntil: T0 + 20_000 + TRANSFER_RING_MS + 10_000 },
      },
      'own.consulting': { localId: IN_LOCAL, phase: 'active', bridged: true, transfer: { id: OWN_TRANSFER, kind: 'consult', role: 'from', colleague: CAROL, state: 'consulting' } },
      'own.joined': { localId: IN_LOCAL, phase: 'active', bridged: true, transfer: { id: OWN_TRANSFER, kind: 'consult', role: 'from', colleague: CAROL, state: 'joined' } },
      'own.not_answered': { localId: IN_LOCAL, phase: 'active', bridged: true, transfer: { id: OWN_TRANSFER, kind: 'consult', role: 'from', colleague: CAROL, state: 'not_answered' } },
      'own.done': { localId: IN_LOCAL, phase: 'active', bridged: true, transfer: { id: OWN_TRANSFER, kind: 'consult', role: 'from', colleague: CAROL, state: 'done' } },
    });
    // The Answer of a colleague's transfer waits for the relay's answer, with no claim before it.
    expect(ROWS['asked.answering'].open).toEqual({ waiting: 'accept', replyTo: ANSWER_REQUEST });
  });

  describe.each(Object.keys(ROWS) as RowKey[])('%s', (row) => {
    it.each(EVENT_KEYS)('× %s', (key) => {
      const state = ROWS[row];
      const ev = tableEvents(state.localId, isOwn(row) ? OWN_TRANSFER : ASKED_TRANSFER)[key];
      const cell = EXPECTED[row][key];
      const [expected, ...fx] = typeof cell === 'string' ? [cell] : cell;
      const first = applyCallEvent(alone(state), ev);
      const next = first.book.calls[state.localId];
      expect(first.effects.map(fxOf)).toEqual(fx);
      // Nothing opens beside a call in a transfer: the ring of its own transfer is that call.
      expect(Object.keys(first.book.calls)).toEqual([state.localId]);
      for (const effect of first.effects) {
        if (effect.kind === 'accept') expect(effect).toEqual({ kind: 'accept', localId: state.localId, callId: IN_ID, sdp: ANSWER_SDP });
        if (effect.kind === 'transfer_decline') expect(effect).toEqual({ kind: 'transfer_decline', localId: state.localId, callId: IN_ID, transferId: ASKED_TRANSFER });
        if (effect.kind === 'end') expect(effect.callId).toBe(IN_ID);
        if (effect.kind === 'rejoin') expect(effect).toEqual({ kind: 'rejoin', localId: state.localId, callId: IN_ID });
        if (effect.kind === 'deadline') expect(effect.at).toBe(deadlineOf(next));
      }
      if (expected === '=') {
        expect(next).toBe(state);
      } else {
        expect(next).not.toBe(state);
        expect(outcomeOf(next)).toBe(expected);
        expect(publicCall(next!)).not.toEqual(publicCall(state));
        // A transfer's end takes nothing from the call but what ended: who, the bridge, the transfer as it was.
        expect(next).toMatchObject({ localId: state.localId, callId: IN_ID, peer: CUSTOMER, bridged: true, direction: 'incoming' });
      }
      // Idempotent: the same event again leaves the very same book and asks for nothing but a reply.
      const again = applyCallEvent(first.book, ev);
      expect(again.book).toBe(first.book);
      expect(again.effects.filter((e) => e.kind !== 'reply')).toEqual([]);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// What the transitions record.
// ---------------------------------------------------------------------------------------------

describe('a colleague’s transfer or consult that rings this agent', () => {
  it('rings as a bridged incoming call of its own under tr:<transferId>, with the customer, its leg’s offer and who asks', () => {
    const { state, effects } = reduceCall(undefined, transferRing(T0, { timestamp: T0 - 1_000 }));
    expect(state).toEqual({
      phase: 'ringing',
      direction: 'incoming',
      localId: transferLocalId(ASKED_TRANSFER),
      callId: IN_ID,
      peer: CUSTOMER,
      offerSdp: OFFER_SDP,
      createdAt: T0,
      // The relay's ring (30 s) and 5 s for its word on how it ended to arrive first.
      ringsUntil: T0 - 1_000 + TRANSFER_RING_MS + 5_000,
      bridged: true,
      transfer: { id: ASKED_TRANSFER, kind: 'consult', role: 'to', colleague: BOB, state: 'ringing' },
    });
    expect(effects).toEqual([{ kind: 'deadline', localId: ASKED_LOCAL, at: T0 - 1_000 + TRANSFER_RING_MS + 5_000 }]);
  });

  it('rings from the earlier of the relay’s time and the local clock, and drops a ring the relay has given up on', () => {
    expect(reduceCall(undefined, transferRing(T0, { timestamp: T0 + 9_000 })).state).toMatchObject({ ringsUntil: T0 + TRANSFER_RING_MS + 5_000 });
    expect(reduceCall(undefined, transferRing(T0, { timestamp: T0 - TRANSFER_RING_MS })).state).toMatchObject({ phase: 'ringing' });
    expect(reduceCall(undefined, transferRing(T0, { timestamp: T0 - TRANSFER_RING_MS - 1 }))).toEqual({ state: undefined, effects: [] });
  });

  it('never rings twice: a repeated ring changes nothing, ringing, answered or ended', () => {
    let book = applyCallEvent(emptyBook(), transferRing(T0)).book;
    expect(applyCallEvent(book, transferRing(T0 + 500)).book).toBe(book);
    book = applyCallEvent(book, decline(T0 + 1_000, ASKED_LOCAL)).book;
    const again = applyCallEvent(book, transferRing(T0 + 2_000));
    expect(again.book).toBe(book);
    expect(again.effects).toEqual([]);
  });

  it('never rings over a call of the same id that is live here, nor one a previous run left live', () => {
    const live = applyCallEvent(emptyBook(), incoming(T0)).book;
    expect(applyCallEvent(live, transferRing(T0 + 1_000)).book).toBe(live);
    const left = applyCallEvent(emptyBook(), leftover(T0, 'terminate', IN_ID)).book;
    expect(applyCallEvent(left, transferRing(T0 + 1_000)).book).toBe(left);
  });

  it('rings beside an ended call of the same id, which stays in the history as it was; the id names the new call from then on', () => {
    // This agent missed the call; Bob answered it and now asks this agent to consult.
    const missed = applyAll([incoming(T0), deadline(T0 + 58_000), declineResult(T0 + 58_100, false)]);
    const before = missed.book.calls[IN_LOCAL]!;
    const entry = historyEntryFor(asEnded(before));
    const rung = applyCallEvent(missed.book, transferRing(T0 + 120_000));
    expect(rung.changed.map((c) => c.localId)).toEqual([ASKED_LOCAL]);
    expect(rung.book.calls[IN_LOCAL]).toBe(before);
    expect(rung.book.byCallId[IN_ID]).toBe(ASKED_LOCAL);
    // The call's events reach the consult now; the missed call is untouched by them.
    const talked = applyAll([answer(T0 + 121_000, ASKED_LOCAL), acceptOk(T0 + 121_500, ASKED_LOCAL), mediaConnected(T0 + 122_000, ASKED_LOCAL), terminated(T0 + 150_000, { durationSec: 170 })], rung.book);
    expect(talked.book.calls[IN_LOCAL]).toBe(before);
    expect(historyEntryFor(asEnded(talked.book.calls[IN_LOCAL]))).toEqual(entry);
    expect(talked.book.calls[ASKED_LOCAL]).toMatchObject({ phase: 'ended', end: { kind: 'completed', by: 'customer' }, durationSec: 28 });
    // A late step of the older call (its end confirmed) does not take the id back.
    const owedBook = applyAll([incoming(T0), decline(T0 + 1_000), declineResult(T0 + 1_100, true), transferRing(T0 + 60_000)]).book;
    expect(owedBook.byCallId[IN_ID]).toBe(ASKED_LOCAL);
    const confirmed = applyCallEvent(owedBook, endResult(T0 + 60_500, 'done'));
    expect(confirmed.book.calls[IN_LOCAL]).toMatchObject({ phase: 'ended', end: { kind: 'declined' } });
    expect(confirmed.book.calls[IN_LOCAL]).not.toHaveProperty('open');
    expect(confirmed.book.byCallId[IN_ID]).toBe(ASKED_LOCAL);
  });

  it('keeps the id on the newest call when the older one is pruned, and on the consult while both are kept', () => {
    const book = applyAll([incoming(T0), claimed(T0 + 1_000), transferRing(T0 + 600_000), decline(T0 + 601_000, ASKED_LOCAL)]).book;
    const kept = pruneBook(book, T0 + 700_000);
    expect(Object.keys(kept.calls).sort()).toEqual([ASKED_LOCAL, IN_LOCAL].sort());
    expect(kept.byCallId).toEqual({ [IN_ID]: ASKED_LOCAL });
    const later = pruneBook(book, T0 + 1_000 + TOMBSTONE_TTL_MS + 1);
    expect(Object.keys(later.calls)).toEqual([ASKED_LOCAL]);
    expect(later.byCallId).toEqual({ [IN_ID]: ASKED_LOCAL });
  });

  it('is answered without a claim: the answer goes out at once, and the call in hand goes on hold in the same step', () => {
    const onCall = applyAll([incoming(T0, { callId: 'wacid.other' }), answer(T0 + 1_000, 'in:wacid.other'), claimResult(T0 + 1_100, 'won', 'in:wacid.other'), acceptOk(T0 + 1_500, 'in:wacid.other'), mediaConnected(T0 + 2_000, 'in:wacid.other')]).book;
    const rung = applyCallEvent(onCall, transferRing(T0 + 10_000)).book;
    const answered = applyCallEvent(rung, answer(T0 + 12_000, ASKED_LOCAL, 'rq-answer-transfer'));
    expect(answered.effects).toEqual([
      { kind: 'accept', localId: ASKED_LOCAL, callId: IN_ID, sdp: ANSWER_SDP },
      { kind: 'deadline', localId: ASKED_LOCAL, at: undefined },
    ]);
    expect(answered.book.calls['in:wacid.other']).toMatchObject({ phase: 'active', heldSince: T0 + 12_000 });
    expect(answered.book.calls[ASKED_LOCAL]).toMatchObject({ phase: 'answering', open: { waiting: 'accept', replyTo: 'rq-answer-transfer' } });
    // The relay took it: the Answer command is answered; the two agents consult.
    const taken = applyCallEvent(answered.book, acceptOk(T0 + 12_400, ASKED_LOCAL));
    expect(taken.effects).toEqual([{ kind: 'reply', requestId: 'rq-answer-transfer', result: { ok: true, value: { localId: ASKED_LOCAL, callId: IN_ID } } }]);
    expect(taken.book.calls[ASKED_LOCAL]?.transfer?.state).toBe('consulting');
  });

  it('a colleague answered first: answered elsewhere, the Answer told so, and nothing owed to the gateway or after a crash', () => {
    const { state, effects } = runWithEffects(
      [transferRing(T0), answer(T0 + 1_000, ASKED_LOCAL, 'rq-a'), acceptFailed(T0 + 1_300, ASKED_LOCAL, { code: 'answered_elsewhere', message: 'Answered by another agent', httpStatus: 409 })],
    );
    expect(state).toMatchObject({ phase: 'ended', end: { kind: 'answered_elsewhere' }, durationSec: 0 });
    expect(state).not.toHaveProperty('open');
    expect(effects.filter((e) => e.kind === 'reply')).toEqual([{ kind: 'reply', requestId: 'rq-a', result: { ok: false, error: { code: 'answered_elsewhere', message: 'Answered by another agent', httpStatus: 409 } } }]);
    expect(effects.map((e) => e.kind)).not.toContain('end');
    expect(owedOnCrash(alone(state))).toEqual([]);
  });

  it('declined, rung out or let go while it rings: the relay hears it, never the gateway', () => {
    for (const [ending, kind] of [
      [decline(T0 + 2_000, ASKED_LOCAL), 'declined'],
      [hangup(T0 + 2_000, ASKED_LOCAL), 'declined'],
      [deadline(T0 + TRANSFER_RING_MS + 4_000, ASKED_LOCAL), 'missed'],
    ] as const) {
      const { state, effects } = runWithEffects([transferRing(T0), ending]);
      expect(state).toMatchObject({ phase: 'ended', end: { kind } });
      expect(state).not.toHaveProperty('open');
      expect(effects.filter((e) => e.kind !== 'deadline' && e.kind !== 'reply')).toEqual([{ kind: 'transfer_decline', localId: ASKED_LOCAL, callId: IN_ID, transferId: ASKED_TRANSFER }]);
    }
  });

  it('a consult taken back ends consult_ended, and the call’s terminate afterwards changes nothing: the talk after is the colleague’s', () => {
    const ended = asEnded(run([transferUpdate(T0 + 30_000, 'cancelled')], asked.active));
    expect(ended).toMatchObject({ end: { kind: 'consult_ended' }, durationSec: 26, connectedAt: T0 + 4_000 });
    expect(reduceCall(ended, terminated(T0 + 90_000, { durationSec: 88 })).state).toBe(ended);
    expect(owedOnCrash(alone(ended))).toEqual([]);
  });
});

describe('this agent’s own transfer or consult', () => {
  it('rings with the colleague named, or without one for “Anyone available”', () => {
    expect(run([transferUpdate(T0 + 20_000, 'ringing', { transferId: OWN_TRANSFER, colleague: CAROL })], own.bridged).transfer).toEqual({
      id: OWN_TRANSFER,
      kind: 'consult',
      role: 'from',
      colleague: CAROL,
      state: 'ringing',
      ringsUntil: T0 + 20_000 + TRANSFER_RING_MS + 10_000,
    });
    const anyone = run([transferUpdate(T0 + 20_000, 'ringing', { transferId: OWN_TRANSFER, kind: 'transfer' })], own.bridged);
    expect(anyone.transfer).toEqual({ id: OWN_TRANSFER, kind: 'transfer', role: 'from', state: 'ringing', ringsUntil: T0 + 20_000 + TRANSFER_RING_MS + 10_000 });
    // Who answered comes with the relay's next word.
    expect(run([transferUpdate(T0 + 22_000, 'consulting', { transferId: OWN_TRANSFER, colleague: BOB })], anyone).transfer).toMatchObject({ colleague: BOB, state: 'consulting' });
  });

  it('handed on: ends transferred to the colleague, with no terminate and nothing owed, and a later terminate changes nothing', () => {
    const { state, effects } = runWithEffects([transferUpdate(T0 + 60_000, 'transferred', { transferId: OWN_TRANSFER, colleague: CAROL })], own.consulting);
    const ended = asEnded(state);
    expect(ended).toMatchObject({ end: { kind: 'transferred', to: CAROL.name }, durationSec: 55, bridged: true });
    expect(effects).toEqual([]);
    expect(owedOnCrash(alone(ended))).toEqual([]);
    expect(reduceCall(ended, terminated(T0 + 300_000, { durationSec: 290 })).state).toBe(ended);
  });

  it('cancelled, or the colleague gone: back with the customer, the transfer kept as done (nothing under way)', () => {
    for (const state of ['cancelled', 'with_customer'] as const) {
      const back = run([transferUpdate(T0 + 30_000, state, { transferId: OWN_TRANSFER })], own.consulting);
      expect(back).toMatchObject({ phase: 'active', bridged: true });
      expect(publicCall(back)).toEqual({ ...publicCall(own.bridged), transfer: { id: OWN_TRANSFER, kind: 'consult', role: 'from', colleague: CAROL, state: 'done' } });
      expect(transferableCall(back)).toEqual({ ok: true, value: { callId: IN_ID } });
      expect(transferToActOn(back, 'cancel')).toEqual(refused(TRANSFER_REFUSALS.none));
    }
  });

  it('holds nothing while the relay routes the customer, and says why; holds again once the transfer is over', () => {
    for (const during of [own.ringing, own.consulting, own.joined, asked.active, asked.joined]) {
      const { state, effects } = reduceCall(during, hold(T0 + 90_000, during.localId, 'rq-hold'));
      expect(state).toBe(during);
      expect(effects).toEqual([{ kind: 'reply', requestId: 'rq-hold', result: refused(TRANSFER_REFUSALS.hold) }]);
      expect(effects).toMatchObject([{ result: { error: { text: { code: 'calls.noHoldDuringTransfer' } } } }]);
    }
    expect(reduceCall(own.notAnswered, hold(T0 + 90_000)).state).toMatchObject({ heldSince: T0 + 90_000 });
  });

  it('refuses to take another call into hand while the one in hand is in a transfer: it cannot be held', () => {
    const ringing = applyAll([transferUpdate(T0 + 20_000, 'ringing', { transferId: OWN_TRANSFER, colleague: CAROL })], alone(own.bridged));
    const book = applyAll([dial(T0 + 21_000, OUT_LOCAL, undefined, 'rq-dial')], ringing.book);
    expect(book.book.calls[OUT_LOCAL]).toBeUndefined();
    expect(book.effects).toEqual([{ kind: 'reply', requestId: 'rq-dial', result: refused(TRANSFER_REFUSALS.hold) }]);
    expect(book.effects).toMatchObject([{ result: { error: { message: 'The call cannot be held during a transfer, consult or three-way call', text: { code: 'calls.noHoldDuringTransfer' } } } }]);
    expect(book.book.calls[IN_LOCAL]).not.toHaveProperty('heldSince');
  });
});

describe('a held call that goes into a transfer', () => {
  /** This agent's bridged call, held at T0 + 10 s, whose consult to Carol rings at T0 + 20 s. */
  const heldRinging = () => run([hold(T0 + 10_000), transferUpdate(T0 + 20_000, 'ringing', { transferId: OWN_TRANSFER, colleague: CAROL })], own.bridged);

  it('stays held while its transfer rings: the customer hears the music either way', () => {
    expect(heldRinging()).toMatchObject({ phase: 'active', heldSince: T0 + 10_000, transfer: { state: 'ringing' } });
  });

  it('is no longer held once the colleague answers the consult or all three talk: the relay took the customer off hold, and the time held is counted', () => {
    for (const state of ['consulting', 'joined'] as const) {
      const talking = run([transferUpdate(T0 + 25_000, state, { transferId: OWN_TRANSFER, colleague: CAROL })], heldRinging());
      expect(talking).toMatchObject({ phase: 'active', heldMs: 15_000, transfer: { state } });
      expect(talking).not.toHaveProperty('heldSince');
      expect(run([hangup(T0 + 45_000)], talking)).toMatchObject({ phase: 'ended', heldSec: 15, durationSec: 40 });
    }
  });

  it('is not held once the colleague left it, nor after it was handed on', () => {
    const alone = run([transferUpdate(T0 + 25_000, 'with_customer', { transferId: OWN_TRANSFER, colleague: CAROL })], heldRinging());
    expect(alone).toMatchObject({ phase: 'active', heldMs: 15_000, transfer: { state: 'done' } });
    expect(alone).not.toHaveProperty('heldSince');
    const handedOn = run([transferUpdate(T0 + 25_000, 'transferred', { transferId: OWN_TRANSFER, colleague: CAROL })], heldRinging());
    expect(handedOn).toMatchObject({ phase: 'ended', end: { kind: 'transferred' }, heldSec: 15 });
    expect(handedOn).not.toHaveProperty('heldSince');
  });

  it('stays held when its ring ends unanswered or is taken back: the relay kept the customer on hold', () => {
    for (const ending of [
      transferUpdate(T0 + 25_000, 'cancelled', { transferId: OWN_TRANSFER }),
      transferUpdate(T0 + 25_000, 'not_answered', { transferId: OWN_TRANSFER, reason: 'declined' }),
      deadline(T0 + 60_000),
      transferGone(T0 + 25_000),
    ]) {
      expect(run([ending], heldRinging())).toMatchObject({ phase: 'active', heldSince: T0 + 10_000 });
    }
  });
});

describe('the relay’s word on a transfer that is over', () => {
  /** Every word the relay can say of a transfer. */
  const STATES = ['ringing', 'consulting', 'joined', 'transferred', 'with_customer', 'not_answered', 'cancelled', 'answered_elsewhere'] as const satisfies readonly TransferUpdateState[];

  it('changes nothing when told again, whatever it says: cancelled, the colleague gone, not answered', () => {
    const over = {
      cancelled: run([transferUpdate(T0 + 30_000, 'cancelled', { transferId: OWN_TRANSFER })], own.ringing),
      with_customer: run([transferUpdate(T0 + 30_000, 'with_customer', { transferId: OWN_TRANSFER, colleague: CAROL })], own.consulting),
      not_answered: own.notAnswered,
    };
    for (const [how, call] of Object.entries(over)) {
      expect(call.transfer?.state, how).toBe(how === 'not_answered' ? 'not_answered' : 'done');
      for (const state of STATES) {
        const book = alone(call);
        const again = applyCallEvent(book, transferUpdate(T0 + 40_000, state, { transferId: OWN_TRANSFER, colleague: CAROL }));
        expect(again.book, `${how} × ${state}`).toBe(book);
        expect(again.effects).toEqual([]);
      }
    }
  });

  it('a ring of the same transfer redelivered after it was cancelled never reopens it; a new transfer rings', () => {
    const cancelled = run([transferUpdate(T0 + 30_000, 'cancelled', { transferId: OWN_TRANSFER })], own.ringing);
    expect(reduceCall(cancelled, transferUpdate(T0 + 31_000, 'ringing', { transferId: OWN_TRANSFER, colleague: CAROL })).state).toBe(cancelled);
    const next = reduceCall(cancelled, transferUpdate(T0 + 32_000, 'ringing', { transferId: 'xfer-next', colleague: BOB }));
    expect(next.state?.transfer).toEqual({ id: 'xfer-next', kind: 'consult', role: 'from', colleague: BOB, state: 'ringing', ringsUntil: T0 + 32_000 + TRANSFER_RING_MS + 10_000 });
    expect(next.effects).toEqual([{ kind: 'deadline', localId: IN_LOCAL, at: T0 + 32_000 + TRANSFER_RING_MS + 10_000 }]);
  });

  it('a colleague’s transfer this agent took is over too: nothing told of it again moves the call', () => {
    for (const state of STATES) {
      const book = alone(askedTransfer.active);
      expect(applyCallEvent(book, transferUpdate(T0 + 40_000, state, { colleague: BOB })).book, state).toBe(book);
    }
  });
});

describe('this agent’s transfer ringing, when the relay’s word does not come', () => {
  const RINGS_UNTIL = T0 + 20_000 + TRANSFER_RING_MS + 10_000;

  it('has a deadline of the relay’s ring and 10 s: then it is not answered, back with the customer', () => {
    expect(deadlineOf(own.ringing)).toBe(RINGS_UNTIL);
    const { state, effects } = reduceCall(own.ringing, deadline(RINGS_UNTIL));
    expect(state).toMatchObject({ phase: 'active', transfer: { id: OWN_TRANSFER, role: 'from', state: 'not_answered' } });
    expect(state?.transfer).not.toHaveProperty('ringsUntil');
    expect(effects).toEqual([{ kind: 'deadline', localId: IN_LOCAL, at: undefined }]);
    // The relay's own word, late: changes nothing.
    expect(reduceCall(state, transferUpdate(RINGS_UNTIL + 1_000, 'not_answered', { transferId: OWN_TRANSFER, reason: 'no_answer' })).state).toBe(state);
  });

  it('the deadline goes as soon as the ring ends otherwise; a ring told again keeps it as it was', () => {
    for (const [ev, state] of [
      [transferUpdate(T0 + 22_000, 'consulting', { transferId: OWN_TRANSFER, colleague: CAROL }), 'consulting'],
      [transferUpdate(T0 + 22_000, 'not_answered', { transferId: OWN_TRANSFER, reason: 'declined' }), 'not_answered'],
      [transferUpdate(T0 + 22_000, 'cancelled', { transferId: OWN_TRANSFER }), 'done'],
      [transferGone(T0 + 22_000), 'done'],
    ] as const) {
      const { state: after, effects } = reduceCall(own.ringing, ev);
      expect(after?.transfer?.state).toBe(state);
      expect(deadlineOf(after)).toBeUndefined();
      expect(effects).toEqual([{ kind: 'deadline', localId: IN_LOCAL, at: undefined }]);
    }
    const again = reduceCall(own.ringing, transferUpdate(T0 + 25_000, 'ringing', { transferId: OWN_TRANSFER, colleague: CAROL }));
    expect(again.state).toBe(own.ringing);
    expect(again.effects).toEqual([]);
    // A deadline that comes once the ring is over changes nothing.
    const consulting = run([transferUpdate(T0 + 22_000, 'consulting', { transferId: OWN_TRANSFER, colleague: CAROL })], own.ringing);
    expect(reduceCall(consulting, deadline(RINGS_UNTIL)).state).toBe(consulting);
  });

  it('a transfer the relay no longer knows is over, under way or consulting; another transfer’s, or a three-way call, is left as it is', () => {
    expect(run([transferGone(T0 + 30_000)], own.consulting).transfer).toEqual({ id: OWN_TRANSFER, kind: 'consult', role: 'from', colleague: CAROL, state: 'done' });
    expect(reduceCall(own.ringing, transferGone(T0 + 30_000, IN_LOCAL, 'xfer-other')).state).toBe(own.ringing);
    expect(reduceCall(own.joined, transferGone(T0 + 30_000)).state).toBe(own.joined);
    expect(reduceCall(asked.active, transferGone(T0 + 30_000, ASKED_LOCAL, ASKED_TRANSFER)).state).toBe(asked.active);
  });
});

describe('a colleague’s transfer whose answer the relay did not take', () => {
  it('ends failed and is declined on the relay, so that it stops ringing here and the colleague hears at once', () => {
    const { state, effects } = runWithEffects([answer(T0 + 1_000, ASKED_LOCAL, 'rq-a'), acceptFailed(T0 + 1_300, ASKED_LOCAL, { code: 'timeout', message: 'The relay did not answer' })], asked.ringing);
    expect(state).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'timeout' } });
    expect(effects.filter((e) => e.kind !== 'deadline')).toEqual([
      { kind: 'accept', localId: ASKED_LOCAL, callId: IN_ID, sdp: ANSWER_SDP },
      { kind: 'transfer_decline', localId: ASKED_LOCAL, callId: IN_ID, transferId: ASKED_TRANSFER },
      { kind: 'reply', requestId: 'rq-a', result: { ok: false, error: { code: 'timeout', message: 'The relay did not answer' } } },
    ]);
    expect(owedOnCrash(alone(state))).toEqual([]);
  });
});

describe('the talk time of a call in a transfer, once ended here', () => {
  it('is never refined by the gateway’s later duration: the call went on with a colleague', () => {
    for (const ended of [
      asEnded(run([hangup(T0 + 45_000), endResult(T0 + 45_300, 'done')], own.joined)), // left a three-way call
      asEnded(run([hangup(T0 + 45_000), endResult(T0 + 45_300, 'done')], own.consulting)), // left the consult to Carol
      asEnded(run([hangup(T0 + 45_000, ASKED_LOCAL), endResult(T0 + 45_300, 'done', ASKED_LOCAL)], asked.active)), // left Bob's consult
      asEnded(run([hangup(T0 + 45_000, ASKED_LOCAL), endResult(T0 + 45_300, 'done', ASKED_LOCAL)], asked.withCustomer)),
      asEnded(run([hangup(T0 + 45_000), endResult(T0 + 45_300, 'done')], own.cancelled)),
    ]) {
      expect(ended.durationSec).toBeLessThan(300);
      expect(reduceCall(ended, terminated(T0 + 300_000, { durationSec: 295 })).state).toBe(ended);
    }
    // A call that was never in a transfer still takes the gateway's duration.
    const plain = asEnded(run([hangup(T0 + 45_000), endResult(T0 + 45_300, 'done')], own.bridged));
    expect(reduceCall(plain, terminated(T0 + 46_000, { durationSec: 41 })).state).toMatchObject({ durationSec: 41 });
  });
});

describe('bridged calls', () => {
  it('a ring the relay bridges, and a dial the bridge placed, are bridged calls, and stay marked so when they end', () => {
    const i = incomingStates();
    expect(i.ringing).not.toHaveProperty('bridged');
    const ringing = run([incoming(T0, { bridged: true })]);
    expect(ringing).toMatchObject({ phase: 'ringing', bridged: true });
    expect(run([hangup(T0 + 1_000)], ringing)).toMatchObject({ phase: 'ended', bridged: true });
    const calling = run([{ ...initiateOk(T0 + 1_000), bridged: true }], run([dial(T0)]));
    expect(calling).toMatchObject({ phase: 'calling', callId: OUT_ID, bridged: true });
    expect(run([initiateOk(T0 + 1_000)], run([dial(T0)]))).not.toHaveProperty('bridged');
  });

  it('owedOnCrash: a colleague’s transfer ringing here owes nothing, whatever an earlier call of that id ended here still waits for', () => {
    const rung = applyAll([transferRing(T0)]).book;
    expect(owedOnCrash(rung)).toEqual([]);
    const answered = applyAll([answer(T0 + 1_000, ASKED_LOCAL), acceptOk(T0 + 1_200, ASKED_LOCAL)], rung).book;
    // On the call now: a run after a crash takes it up again (restore), or, an older one, leaves it (bridged-calls.ts) or ends it.
    expect(owedOnCrash(answered)).toEqual([{ callId: IN_ID, action: 'terminate', restore: publicCall(answered.calls[ASKED_LOCAL]!) }]);
    // Declined here as the last agent, the reject not confirmed; then Bob took the call and transfers it here.
    const unconfirmed = applyAll([incoming(T0), decline(T0 + 1_000), declineResult(T0 + 1_100, true), endResult(T0 + 1_300, 'unreached')]).book;
    expect(owedOnCrash(unconfirmed)).toEqual([{ callId: IN_ID, action: 'reject' }]);
    expect(owedOnCrash(applyCallEvent(unconfirmed, transferRing(T0 + 40_000)).book)).toEqual([]);
    // Other calls are owed as before.
    expect(owedOnCrash(applyAll([incoming(T0, { callId: OUT_ID })], rung).book)).toEqual([{ callId: OUT_ID, action: 'reject' }]);
  });
});

describe('transferableCall and transferToActOn: what the agent’s transfer commands may act on', () => {
  it('each refusal is a text of the catalogue, said in English as the commands always said it', () => {
    const said = (value: RuleText) => ({ code: value.code, english: english(value) });
    expect(Object.fromEntries(Object.entries(TRANSFER_REFUSALS).map(([name, value]) => [name, typeof value === 'function' ? said(value('ringing')) : said(value)]))).toEqual({
      notBridged: { code: 'calls.transfersNotBridged', english: 'Calls are not bridged: transfers, consults and three-way calls need the team’s media server' },
      callNotBridged: { code: 'calls.callNotBridged', english: 'This call does not go through the team’s media server, so it cannot be transferred' },
      onlyActive: { code: 'calls.onlyActiveTransferred', english: 'The call is ringing: only an active call can be transferred' },
      notYours: { code: 'calls.transferNotYours', english: 'A colleague still has this call: only the agent who has the customer can transfer it' },
      colleagues: { code: 'calls.transferColleagues', english: 'A colleague started this transfer or consult: only they can cancel, complete or join it' },
      underWay: { code: 'calls.transferUnderWay', english: 'A transfer or consult of this call is already under way' },
      none: { code: 'calls.noTransfer', english: 'This call has no transfer or consult under way' },
      cancel: { code: 'calls.transferNotCancellable', english: 'Only a transfer that still rings, or a consult, can be cancelled' },
      complete: { code: 'calls.consultNotAnsweredComplete', english: 'Only a consult the colleague has answered can be completed' },
      join: { code: 'calls.consultNotAnsweredJoin', english: 'Only a consult the colleague has answered can become a three-way call' },
      hold: { code: 'calls.noHoldDuringTransfer', english: 'The call cannot be held during a transfer, consult or three-way call' },
    });
    // The phase is the catalogue's word for it, said in the window's language.
    expect(TRANSFER_REFUSALS.onlyActive('remote_ringing')).toEqual({ code: 'calls.onlyActiveTransferred', values: { phase: { term: 'phaseRemoteRinging' } } });
    expect(english(TRANSFER_REFUSALS.onlyActive('remote_ringing'))).toBe('The call is remote_ringing: only an active call can be transferred');
  });

  it('a new transfer: only a bridged, active call that is this agent’s, with no transfer under way', () => {
    expect(transferableCall(own.bridged)).toEqual({ ok: true, value: { callId: IN_ID } });
    expect(transferableCall(own.notAnswered)).toEqual({ ok: true, value: { callId: IN_ID } });
    expect(transferableCall(askedTransfer.active)).toEqual({ ok: true, value: { callId: IN_ID } });
    expect(transferableCall(asked.withCustomer)).toEqual({ ok: true, value: { callId: IN_ID } });
    expect(transferableCall(incomingStates().active)).toEqual(refused(TRANSFER_REFUSALS.callNotBridged));
    expect(transferableCall(asked.ringing)).toEqual(refused(TRANSFER_REFUSALS.onlyActive('ringing')));
    expect(transferableCall(asked.active)).toEqual(refused(TRANSFER_REFUSALS.notYours));
    expect(transferableCall(asked.joined)).toEqual(refused(TRANSFER_REFUSALS.notYours));
    for (const under of [own.ringing, own.consulting, own.joined]) expect(transferableCall(under)).toEqual(refused(TRANSFER_REFUSALS.underWay));
    expect(transferableCall(asked.ringing)).toMatchObject({ error: { message: 'The call is ringing: only an active call can be transferred', text: { code: 'calls.onlyActiveTransferred', values: { phase: { term: 'phaseRinging' } } } } });
  });

  it('cancel while it rings or consults; complete and join a consult the colleague answered', () => {
    const acts = (call: CallRecord) => ({ cancel: transferToActOn(call, 'cancel'), complete: transferToActOn(call, 'complete'), join: transferToActOn(call, 'join') });
    const on = { ok: true, value: { callId: IN_ID, transferId: OWN_TRANSFER } };
    expect(acts(own.ringing)).toEqual({ cancel: on, complete: refused(TRANSFER_REFUSALS.complete), join: refused(TRANSFER_REFUSALS.join) });
    expect(acts(own.consulting)).toEqual({ cancel: on, complete: on, join: on });
    expect(acts(own.joined)).toEqual({ cancel: refused(TRANSFER_REFUSALS.cancel), complete: refused(TRANSFER_REFUSALS.complete), join: refused(TRANSFER_REFUSALS.join) });
    const none = { cancel: refused(TRANSFER_REFUSALS.none), complete: refused(TRANSFER_REFUSALS.none), join: refused(TRANSFER_REFUSALS.none) };
    expect(acts(own.bridged)).toEqual(none);
    expect(acts(own.notAnswered)).toEqual(none);
    expect(acts(asked.withCustomer)).toEqual(none);
    const colleagues = { cancel: refused(TRANSFER_REFUSALS.colleagues), complete: refused(TRANSFER_REFUSALS.colleagues), join: refused(TRANSFER_REFUSALS.colleagues) };
    expect(acts(asked.active)).toEqual(colleagues);
    const ended = run([transferUpdate(T0 + 60_000, 'transferred', { transferId: OWN_TRANSFER, colleague: CAROL })], own.consulting);
    expect(acts(ended)).toEqual(none);
  });
});

/** A transfer refusal as the reducer replies it: an invalid_state, its English beside its text. */
function refused(said: RuleText): { ok: false; error: { code: ErrorCode; message: string; text: RuleText } } {
  return { ok: false, error: { code: 'invalid_state', message: english(said), text: said } };
}

function applyAll(events: readonly CallEvent[], book: CallBook = emptyBook()): { book: CallBook; effects: CallEffect[] } {
  let acc = { book, effects: [] as CallEffect[] };
  for (const ev of events) {
    const next = applyCallEvent(acc.book, ev);
    acc = { book: next.book, effects: [...acc.effects, ...next.effects] };
  }
  return acc;
}
