// Calls and call events for the reducer's tests. States are built by running the real reducer over
// real event sequences, in the order the coordinator feeds them (a command, then the outcomes of
// the effects it asked for), so a fixture can never describe a state the machine cannot reach.
import type { AppError } from '../../../shared/result';
import { text } from '../../../shared/i18n/text';
import type { Colleague, TransferKind, TransferUpdateState } from '../../../shared/transfer';
import {
  incomingLocalId,
  reduceCall,
  transferLocalId,
  type CallEffect,
  type CallEvent,
  type CallRecord,
  type EndedRecord,
  type GatewayEnd,
  type LocalError,
  type Peer,
  type RejoinAnswerOutcome,
  type RejoinVerdict,
  type RestorableCall,
} from '../../../shared/call-state';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';

export { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP };

export type Ev<T extends CallEvent['type']> = Extract<CallEvent, { type: T }>;

/** A fixed wall clock: 2025-06-01 09:00:00 UTC. */
export const T0 = Date.UTC(2025, 5, 1, 9, 0, 0);

export const IN_ID = 'wacid.HBgLMTQ0MjA3OTQ2MDk1OBUCABEYEjQ1';
export const IN_LOCAL = incomingLocalId(IN_ID);
export const OUT_ID = 'wacid.HBgLMTIwMjU1NTAxNDMVAgARGBI2Nw';
export const OUT_LOCAL = 'out-7f3a9c';
/** A call a previous run left live, as the coordinator names it on start. */
export const LEFT_ID = 'wacid.HBgLMTIwMjU1NTAxNDMVAgARGBI5OQ';
export const LEFT_LOCAL = `left:${LEFT_ID}`;

/** A colleague's transfer or consult of the incoming call that rings this agent, and this agent's own transfer of a call. */
export const ASKED_TRANSFER = 'xfer-9pLw2Q';
export const ASKED_LOCAL = transferLocalId(ASKED_TRANSFER);
export const OWN_TRANSFER = 'xfer-4Rt7Kd';
/** The colleague who rang this agent with a transfer or consult; the one this agent transfers to. */
export const BOB: Colleague = { agentId: 'bob', name: 'Bob Agent' };
export const CAROL: Colleague = { agentId: 'carol', name: 'Carol Agent' };

export const CUSTOMER: Peer = { number: '442079460958', name: 'Ada Lovelace' };
export const CALLEE: Peer & { number: string } = { number: '12025550143', name: 'Grace Hopper' };

/** The request ids of the commands that build the fixtures: their replies are part of the story. */
export const ANSWER_REQUEST = 'rq-answer';
export const DIAL_REQUEST = 'rq-dial';

/** Ids an event needs to concern one call. */
export interface CallIds {
  callId: string;
  localId: string;
}
export const INCOMING_IDS: CallIds = { callId: IN_ID, localId: IN_LOCAL };
export const OUTGOING_IDS: CallIds = { callId: OUT_ID, localId: OUT_LOCAL };
export const LEFTOVER_IDS: CallIds = { callId: LEFT_ID, localId: LEFT_LOCAL };
/** The incoming call's id as it rings this agent again, with a colleague's transfer. */
export const ASKED_IDS: CallIds = { callId: IN_ID, localId: ASKED_LOCAL };

export const incoming = (at: number, o: Partial<Ev<'remote.incoming'>> = {}): Ev<'remote.incoming'> => ({
  type: 'remote.incoming',
  at,
  callId: IN_ID,
  peer: CUSTOMER,
  offerSdp: OFFER_SDP,
  timestamp: at - 2_000,
  ...o,
});
export const answered = (at: number, callId = OUT_ID): Ev<'remote.answered'> => ({
  type: 'remote.answered',
  at,
  callId,
  answerSdp: ANSWER_SDP,
  timestamp: at - 1_000,
});
export const status = (at: number, s: Ev<'remote.status'>['status'], callId = OUT_ID): Ev<'remote.status'> => ({
  type: 'remote.status',
  at,
  callId,
  status: s,
  timestamp: at - 1_000,
});
export const terminated = (at: number, o: Partial<Ev<'remote.terminated'>> = {}): Ev<'remote.terminated'> => ({
  type: 'remote.terminated',
  at,
  callId: IN_ID,
  status: 'COMPLETED',
  timestamp: at - 1_000,
  ...o,
});
/** An agent's claim won on the relay; `mine` left out when this agent's own id is not known. */
export const claimed = (at: number, callId = IN_ID, mine?: boolean): Ev<'remote.claimed'> => ({
  type: 'remote.claimed',
  at,
  callId,
  ...(mine !== undefined ? { mine } : {}),
});

const withRequest = (requestId: string | undefined): { requestId?: string } => (requestId !== undefined ? { requestId } : {});

export const dial = (at: number, localId = OUT_LOCAL, peer: Peer & { number: string } = CALLEE, requestId?: string): Ev<'local.dial'> => ({
  type: 'local.dial',
  at,
  localId,
  peer,
  offerSdp: DIAL_OFFER_SDP,
  ...withRequest(requestId),
});
export const initiateOk = (at: number, localId = OUT_LOCAL, callId = OUT_ID): Ev<'local.initiate_ok'> => ({
  type: 'local.initiate_ok',
  at,
  localId,
  callId,
});
/** The gateway's refusal as the gateway client reports it: its number rides along as gatewayCode. */
export const NO_PERMISSION: AppError = {
  code: 'no_call_permission',
  message: 'The customer has not allowed business calls',
  gatewayCode: 138006,
  httpStatus: 400,
};
export const initiateFailed = (at: number, localId = OUT_LOCAL, error: AppError = NO_PERMISSION): Ev<'local.initiate_failed'> => ({
  type: 'local.initiate_failed',
  at,
  localId,
  error,
});
export const answer = (at: number, localId = IN_LOCAL, requestId?: string): Ev<'local.answer'> => ({
  type: 'local.answer',
  at,
  localId,
  answerSdp: ANSWER_SDP,
  ...withRequest(requestId),
});
export const acceptOk = (at: number, localId = IN_LOCAL): Ev<'local.accept_ok'> => ({ type: 'local.accept_ok', at, localId });
/** The gateway refused the answer (a Graph error): the call still rings there. */
export const BAD_ANSWER: AppError = { code: 'gateway_error', message: 'Invalid parameter: session.sdp', gatewayCode: 100, httpStatus: 400 };
/** No answer in time: the accept may have landed. */
export const ACCEPT_TIMEOUT: AppError = { code: 'timeout', message: 'The gateway did not answer in time' };
export const acceptFailed = (at: number, localId = IN_LOCAL, error: AppError = BAD_ANSWER): Ev<'local.accept_failed'> => ({
  type: 'local.accept_failed',
  at,
  localId,
  error,
});
export const claimResult = (at: number, outcome: Ev<'local.claim_result'>['outcome'], localId = IN_LOCAL): Ev<'local.claim_result'> => ({
  type: 'local.claim_result',
  at,
  localId,
  outcome,
});
export const declineResult = (at: number, last: boolean | undefined, localId = IN_LOCAL): Ev<'local.decline_result'> => ({
  type: 'local.decline_result',
  at,
  localId,
  last,
});
export const endResult = (at: number, outcome: Ev<'local.end_result'>['outcome'], localId = IN_LOCAL): Ev<'local.end_result'> => ({
  type: 'local.end_result',
  at,
  localId,
  outcome,
});
export const decline = (at: number, localId = IN_LOCAL, requestId?: string): Ev<'local.decline'> => ({ type: 'local.decline', at, localId, ...withRequest(requestId) });
export const hangup = (at: number, localId = IN_LOCAL, requestId?: string): Ev<'local.hangup'> => ({ type: 'local.hangup', at, localId, ...withRequest(requestId) });
export const hold = (at: number, localId = IN_LOCAL, requestId?: string): Ev<'local.hold'> => ({ type: 'local.hold', at, localId, ...withRequest(requestId) });
export const resume = (at: number, localId = IN_LOCAL, requestId?: string): Ev<'local.resume'> => ({ type: 'local.resume', at, localId, ...withRequest(requestId) });
export const mediaConnected = (at: number, localId = IN_LOCAL): Ev<'local.media_connected'> => ({
  type: 'local.media_connected',
  at,
  localId,
});
export const mediaFailed = (at: number, localId = IN_LOCAL): Ev<'local.media_failed'> => ({
  type: 'local.media_failed',
  at,
  localId,
  error: { code: 'ice_failed', message: 'The audio connection failed' },
});
/** A colleague (Bob) rings this agent with a consult (or a transfer) of the incoming call: this agent's own leg's offer. */
export const transferRing = (at: number, o: Partial<Ev<'remote.transfer_ring'>> = {}): Ev<'remote.transfer_ring'> => ({
  type: 'remote.transfer_ring',
  at,
  callId: IN_ID,
  transferId: ASKED_TRANSFER,
  kind: 'consult',
  by: BOB,
  peer: CUSTOMER,
  offerSdp: OFFER_SDP,
  timestamp: at - 1_000,
  ...o,
});
/** The relay's word on a transfer, as it concerns this agent. */
export const transferUpdate = (at: number, state: TransferUpdateState, o: Partial<Ev<'remote.transfer'>> = {}): Ev<'remote.transfer'> => ({
  type: 'remote.transfer',
  at,
  callId: IN_ID,
  transferId: ASKED_TRANSFER,
  kind: 'consult',
  state,
  ...o,
});
/** The team's bridge lost the call's media (its node is gone). */
export const bridgeFailed = (at: number, callId = IN_ID, reason: Ev<'remote.bridge_failed'>['reason'] = 'node_gone'): Ev<'remote.bridge_failed'> => ({
  type: 'remote.bridge_failed',
  at,
  callId,
  reason,
});
/** Why the window went, as the host reports it (WINDOW_GONE_REASON.reloaded). */
export const WINDOW_RELOADED: LocalError = {
  code: 'media_failed',
  message: 'The window was reloaded or closed during the call, and its audio ended with it',
  text: text('callMedia.windowReloaded'),
};
export const windowGone = (at: number, localId = IN_LOCAL, error: LocalError = WINDOW_RELOADED): Ev<'local.window_gone'> => ({ type: 'local.window_gone', at, localId, error });
/** The bridge's new leg for this agent, as the relay offers it on a rejoin. */
export const REJOIN_LEG = 'leg-r7Kq2c';
export const rejoinOffer = (at: number, localId = IN_LOCAL, legId = REJOIN_LEG): Ev<'local.rejoin_offer'> => ({ type: 'local.rejoin_offer', at, localId, legId, offerSdp: OFFER_SDP });
/** The relay's refusals of a rejoin, as the app reports them: 404 (gone), 403 (not a member), 410 (ended). */
export const REJOIN_REFUSALS_SEEN: Readonly<Record<RejoinVerdict, LocalError>> = {
  gone: { code: 'not_found', message: 'The relay refused the rejoin request (HTTP 404)' },
  not_member: { code: 'unauthorized', message: 'The relay refused the rejoin request (HTTP 403)' },
  ended: { code: 'invalid_state', message: 'The relay refused the rejoin request (HTTP 410)' },
};
export const rejoinFailed = (at: number, verdict: RejoinVerdict, localId = IN_LOCAL): Ev<'local.rejoin_failed'> => ({
  type: 'local.rejoin_failed',
  at,
  localId,
  error: REJOIN_REFUSALS_SEEN[verdict],
  verdict,
});
export const rejoinAnswer = (at: number, localId = IN_LOCAL, legId = REJOIN_LEG, requestId?: string): Ev<'local.rejoin_answer'> => ({
  type: 'local.rejoin_answer',
  at,
  localId,
  legId,
  sdp: ANSWER_SDP,
  ...withRequest(requestId),
});
/** The relay's refusals of a window's answer to a rejoin offer: its SDP (400), or not the leg it offered last (403). */
export const REJOIN_SDP_REFUSED: AppError = { code: 'invalid_input', message: 'sdp: the bridge could not apply the answer', field: 'sdp', httpStatus: 400 };
export const REJOIN_REFUSED: AppError = { code: 'unauthorized', message: 'The relay refused the rejoin answer request (HTTP 403)', httpStatus: 403 };
export const rejoinAnswered = (at: number, outcome: RejoinAnswerOutcome, localId = IN_LOCAL, legId = REJOIN_LEG): Ev<'local.rejoin_answered'> => ({
  type: 'local.rejoin_answered',
  at,
  localId,
  legId,
  outcome,
});
/** The call's one deadline has come: ring timeout for a ringing call, dial timeout for an unanswered outgoing one. */
export const deadline = (at: number, localId = IN_LOCAL): Ev<'local.deadline'> => ({ type: 'local.deadline', at, localId });
/** The relay answered this agent's cancel with 404: it no longer knows the transfer. */
export const transferGone = (at: number, localId = IN_LOCAL, transferId = OWN_TRANSFER): Ev<'local.transfer_gone'> => ({ type: 'local.transfer_gone', at, localId, transferId });
export const leftover = (at: number, action: GatewayEnd, callId = LEFT_ID, localId = `left:${callId}`, restore?: RestorableCall): Ev<'local.leftover'> => ({
  type: 'local.leftover',
  at,
  localId,
  callId,
  action,
  ...(restore !== undefined ? { restore } : {}),
});

/** Runs the reducer over `events` for one call, alone in its book; every step must leave a call. */
export function run(events: readonly CallEvent[], from?: CallRecord): CallRecord {
  return runWithEffects(events, from).state;
}

/** Runs the reducer over `events` for one call, alone in its book, keeping every effect it asked for, in order. */
export function runWithEffects(events: readonly CallEvent[], from?: CallRecord): { state: CallRecord; effects: CallEffect[] } {
  let call = from;
  const effects: CallEffect[] = [];
  for (const ev of events) {
    const step = reduceCall(call, ev);
    call = step.state;
    effects.push(...step.effects);
    if (call === undefined) throw new Error(`no call after ${ev.type}`);
  }
  if (call === undefined) throw new Error('no events');
  return { state: call, effects };
}

export function asEnded(call: CallRecord | undefined): EndedRecord {
  if (call?.phase !== 'ended') throw new Error(`expected an ended call, got ${call?.phase ?? 'none'}`);
  return call;
}

/**
 * One reachable state per phase of an incoming call, each one step further than the last, as the
 * coordinator gets there: Answer claims the call (answering), the claim wins and the accept goes
 * out (accepting), the accept succeeds (connecting), media connects (active), the agent hangs up
 * and the gateway confirms the terminate (ended).
 */
export function incomingStates() {
  const ringing = run([incoming(T0)]);
  const answering = run([answer(T0 + 3_000, IN_LOCAL, ANSWER_REQUEST)], ringing);
  const accepting = run([claimResult(T0 + 3_200, 'won')], answering);
  const connecting = run([acceptOk(T0 + 4_000)], accepting);
  const active = run([mediaConnected(T0 + 5_000)], connecting);
  // On hold since 20 s into the call.
  const held = run([hold(T0 + 25_000)], active);
  // Talked for 30 s, the agent hung up; the terminate is still on its way to the gateway.
  const hungUp = run([hangup(T0 + 35_000)], active);
  const ended = run([endResult(T0 + 35_300, 'done')], hungUp);
  return { ringing, answering, accepting, connecting, active, held, hungUp, ended };
}

/** One reachable state per phase of an outgoing call. */
export function outgoingStates() {
  const dialing = run([dial(T0, OUT_LOCAL, CALLEE, DIAL_REQUEST)]);
  // The gateway placed it; the claim that routes its events here has come back.
  const calling = run([initiateOk(T0 + 1_000), claimResult(T0 + 1_100, 'won', OUT_LOCAL)], dialing);
  const remote_ringing = run([status(T0 + 2_000, 'RINGING')], calling);
  const connecting = run([answered(T0 + 8_000)], remote_ringing);
  const active = run([mediaConnected(T0 + 9_000, OUT_LOCAL)], connecting);
  const held = run([hold(T0 + 29_000, OUT_LOCAL)], active);
  // Nobody picked up: the dial deadline gave up and the gateway confirmed the terminate.
  const ended = run([deadline(T0 + 61_000, OUT_LOCAL), endResult(T0 + 61_300, 'done', OUT_LOCAL)], calling);
  return { dialing, calling, remote_ringing, connecting, active, held, ended };
}

/**
 * A colleague's consult (or transfer) that rings this agent, one step further each, as the
 * coordinator gets there: Answer sends the answer to the relay at once (answering), the relay takes
 * it (connecting: consulting, or this agent has the customer after a transfer), media connects
 * (active); Add to call (joined); the colleague leaves (this agent alone with the customer).
 */
export function askedStates(kind: TransferKind = 'consult') {
  const ringing = run([transferRing(T0, { kind })]);
  const answering = run([answer(T0 + 3_000, ASKED_LOCAL, ANSWER_REQUEST)], ringing);
  const connecting = run([acceptOk(T0 + 3_500, ASKED_LOCAL)], answering);
  const active = run([mediaConnected(T0 + 4_000, ASKED_LOCAL)], connecting);
  const joined = run([transferUpdate(T0 + 20_000, 'joined', { kind, colleague: BOB })], active);
  const withCustomer = run([transferUpdate(T0 + 30_000, 'with_customer', { kind, colleague: BOB })], joined);
  return { ringing, answering, connecting, active, joined, withCustomer };
}

/**
 * A bridged call at each step of a rejoin, as the coordinator gets there: answered and connected,
 * then its window reloaded 20 s into the call (the relay is asked for a new leg), the relay's offer,
 * the next window's answer with the relay (`answering`), applied (`answered`), and its media
 * connected again (`back`). `from` is the call it starts from (a held one, one in a transfer).
 */
export function rejoinStates(from: CallRecord = bridgedStates().active, localId = from.localId) {
  const asking = run([windowGone(T0 + 25_000, localId)], from);
  const offered = run([rejoinOffer(T0 + 25_050, localId)], asking);
  const answering = run([rejoinAnswer(T0 + 26_500, localId, REJOIN_LEG, REJOIN_REQUEST)], offered);
  const answered = run([rejoinAnswered(T0 + 26_520, { kind: 'answered' }, localId)], answering);
  const back = run([mediaConnected(T0 + 26_800, localId)], answered);
  return { asking, offered, answering, answered, back };
}
/** The request id of the rejoinCall command in the rejoin fixtures. */
export const REJOIN_REQUEST = 'rq-rejoin';

/** A bridged incoming call at each phase this agent is in it: connecting, active (from 5 s), held (from 20 s); and an outgoing one. */
export function bridgedStates() {
  const connecting = run([incoming(T0, { bridged: true }), answer(T0 + 3_000), claimResult(T0 + 3_200, 'won'), acceptOk(T0 + 4_000)]);
  const active = run([mediaConnected(T0 + 5_000)], connecting);
  const held = run([hold(T0 + 20_000)], active);
  const outgoing = run([dial(T0), { ...initiateOk(T0 + 1_000), bridged: true }, claimResult(T0 + 1_100, 'won', OUT_LOCAL), answered(T0 + 8_000), mediaConnected(T0 + 9_000, OUT_LOCAL)]);
  return { connecting, active, held, outgoing };
}

/**
 * This agent's own transfer or consult (to Carol) of a bridged incoming call it answered: it rings,
 * the two talk, all three talk, nobody took it, or this agent took it back while it rang.
 */
export function ownStates(kind: TransferKind = 'consult') {
  const bridged = run([incoming(T0, { bridged: true }), answer(T0 + 3_000), claimResult(T0 + 3_200, 'won'), acceptOk(T0 + 4_000), mediaConnected(T0 + 5_000)]);
  const own = (at: number, state: TransferUpdateState): Ev<'remote.transfer'> => transferUpdate(at, state, { transferId: OWN_TRANSFER, kind, colleague: CAROL });
  const ringing = run([own(T0 + 20_000, 'ringing')], bridged);
  const consulting = run([own(T0 + 25_000, 'consulting')], ringing);
  const joined = run([own(T0 + 40_000, 'joined')], consulting);
  const notAnswered = run([own(T0 + 50_000, 'not_answered')], ringing);
  const cancelled = run([own(T0 + 50_000, 'cancelled')], ringing);
  return { bridged, ringing, consulting, joined, notAnswered, cancelled };
}

/**
 * Every way a call can end, reached through the reducer, with every outcome it waited for
 * delivered (nothing left open). Keys: `<direction>.<end kind>[.<detail>]`.
 */
export function endedCalls(): Record<string, EndedRecord> {
  const i = incomingStates();
  const o = outgoingStates();
  const outTerm = (at: number, x: Partial<Ev<'remote.terminated'>> = {}) => terminated(at, { callId: OUT_ID, ...x });
  return {
    'incoming.completed.agent': asEnded(i.ended),
    'incoming.completed.customer': asEnded(run([terminated(T0 + 65_000, { durationSec: 60 })], i.active)),
    // The last of the team to decline: the gateway hears reject.
    'incoming.declined': asEnded(run([decline(T0 + 4_000), declineResult(T0 + 4_100, true), endResult(T0 + 4_300, 'done')], i.ringing)),
    // Nobody answered here; a colleague may still: the gateway hears nothing.
    'incoming.missed': asEnded(run([deadline(T0 + 58_000), declineResult(T0 + 58_100, false)], i.ringing)),
    'incoming.failed': asEnded(run([mediaFailed(T0 + 20_000), endResult(T0 + 20_300, 'done')], i.connecting)),
    'incoming.answered_elsewhere': asEnded(run([claimed(T0 + 6_000)], i.ringing)),
    // Handed on to Carol after a consult: no terminate, nothing owed.
    'incoming.transferred': asEnded(run([transferUpdate(T0 + 60_000, 'transferred', { transferId: OWN_TRANSFER, colleague: CAROL })], ownStates().consulting)),
    // Bob took his consult back while this agent talked with him.
    'incoming.consult_ended': asEnded(run([transferUpdate(T0 + 30_000, 'cancelled')], askedStates().active)),
    'outgoing.completed.agent': asEnded(run([hangup(T0 + 39_000, OUT_LOCAL), endResult(T0 + 39_300, 'done', OUT_LOCAL)], o.active)),
    'outgoing.completed.customer': asEnded(run([outTerm(T0 + 70_000, { durationSec: 61 })], o.active)),
    'outgoing.cancelled': asEnded(run([hangup(T0 + 4_000, OUT_LOCAL), endResult(T0 + 4_300, 'done', OUT_LOCAL)], o.remote_ringing)),
    'outgoing.no_answer': asEnded(o.ended),
    'outgoing.rejected': asEnded(run([status(T0 + 5_000, 'REJECTED')], o.remote_ringing)),
    'outgoing.failed': asEnded(run([initiateFailed(T0 + 700)], o.dialing)),
  };
}
