// Calls and call events for the reducer's tests. States are built by running the real reducer over
// real event sequences, so a fixture can never describe a state the machine cannot reach.
import {
  incomingLocalId,
  reduceCall,
  type CallEvent,
  type CallState,
  type EndedCall,
  type Peer,
} from '../../../shared/call-state';

export type Ev<T extends CallEvent['type']> = Extract<CallEvent, { type: T }>;

/** A fixed wall clock: 2025-06-01 09:00:00 UTC. */
export const T0 = Date.UTC(2025, 5, 1, 9, 0, 0);

export const IN_ID = 'wacid.HBgLMTQ0MjA3OTQ2MDk1OBUCABEYEjQ1';
export const IN_LOCAL = incomingLocalId(IN_ID);
export const OUT_ID = 'wacid.HBgLMTIwMjU1NTAxNDMVAgARGBI2Nw';
export const OUT_LOCAL = 'out-7f3a9c';

export const CUSTOMER: Peer = { number: '442079460958', name: 'Ada Lovelace' };
export const CALLEE: Peer = { number: '12025550143', name: 'Grace Hopper' };
export const OFFER_SDP = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\na=ice-lite\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111 126\r\n';
export const ANSWER_SDP = 'v=0\r\no=- 3 4 IN IP4 127.0.0.1\r\ns=-\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111 126\r\na=setup:active\r\n';

/** Ids an event needs to concern one call. */
export interface CallIds {
  callId: string;
  localId: string;
}
export const INCOMING_IDS: CallIds = { callId: IN_ID, localId: IN_LOCAL };
export const OUTGOING_IDS: CallIds = { callId: OUT_ID, localId: OUT_LOCAL };

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
export const claimed = (at: number, callId = IN_ID): Ev<'remote.claimed'> => ({ type: 'remote.claimed', at, callId });
export const dial = (at: number, localId = OUT_LOCAL, peer: Peer = CALLEE): Ev<'local.dial'> => ({ type: 'local.dial', at, localId, peer });
export const initiateOk = (at: number, localId = OUT_LOCAL, callId = OUT_ID): Ev<'local.initiate_ok'> => ({
  type: 'local.initiate_ok',
  at,
  localId,
  callId,
});
export const initiateFailed = (at: number, localId = OUT_LOCAL): Ev<'local.initiate_failed'> => ({
  type: 'local.initiate_failed',
  at,
  localId,
  error: { code: '138006', message: 'The customer has not allowed business calls' },
});
export const answer = (at: number, localId = IN_LOCAL): Ev<'local.answer'> => ({ type: 'local.answer', at, localId });
export const acceptOk = (at: number, localId = IN_LOCAL): Ev<'local.accept_ok'> => ({ type: 'local.accept_ok', at, localId });
export const acceptFailed = (at: number, localId = IN_LOCAL): Ev<'local.accept_failed'> => ({
  type: 'local.accept_failed',
  at,
  localId,
  error: { code: '100', message: 'Invalid parameter: session.sdp' },
});
export const decline = (at: number, localId = IN_LOCAL): Ev<'local.decline'> => ({ type: 'local.decline', at, localId });
export const hangup = (at: number, localId = IN_LOCAL): Ev<'local.hangup'> => ({ type: 'local.hangup', at, localId });
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
export const ringTimeout = (at: number, localId = IN_LOCAL): Ev<'local.ring_timeout'> => ({ type: 'local.ring_timeout', at, localId });
export const dialTimeout = (at: number, localId = OUT_LOCAL): Ev<'local.dial_timeout'> => ({ type: 'local.dial_timeout', at, localId });

/** Runs the reducer over `events`; every step must leave a call. */
export function run(events: readonly CallEvent[], from?: CallState): CallState {
  let call = from;
  for (const ev of events) {
    call = reduceCall(call, ev);
    if (call === undefined) throw new Error(`no call after ${ev.type}`);
  }
  if (call === undefined) throw new Error('no events');
  return call;
}

export function asEnded(call: CallState | undefined): EndedCall {
  if (call?.phase !== 'ended') throw new Error(`expected an ended call, got ${call?.phase ?? 'none'}`);
  return call;
}

/** One reachable state per phase of an incoming call, each one step further than the last. */
export function incomingStates() {
  const ringing = run([incoming(T0)]);
  const answering = run([answer(T0 + 3_000)], ringing);
  const connecting = run([acceptOk(T0 + 4_000)], answering);
  const active = run([mediaConnected(T0 + 5_000)], connecting);
  // Talked for 30 s, the agent hung up.
  const ended = run([hangup(T0 + 35_000)], active);
  return { ringing, answering, connecting, active, ended };
}

/** One reachable state per phase of an outgoing call. */
export function outgoingStates() {
  const dialing = run([dial(T0)]);
  const calling = run([initiateOk(T0 + 1_000)], dialing);
  const remote_ringing = run([status(T0 + 2_000, 'RINGING')], calling);
  const connecting = run([answered(T0 + 8_000)], remote_ringing);
  const active = run([mediaConnected(T0 + 9_000, OUT_LOCAL)], connecting);
  // Nobody picked up: the dial timer gave up.
  const ended = run([dialTimeout(T0 + 61_000)], calling);
  return { dialing, calling, remote_ringing, connecting, active, ended };
}

/** Every way a call can end, reached through the reducer. Keys: `<direction>.<end kind>[.<detail>]`. */
export function endedCalls(): Record<string, EndedCall> {
  const i = incomingStates();
  const o = outgoingStates();
  const outTerm = (at: number, x: Partial<Ev<'remote.terminated'>> = {}) => terminated(at, { callId: OUT_ID, ...x });
  return {
    'incoming.completed.agent': asEnded(i.ended),
    'incoming.completed.customer': asEnded(run([terminated(T0 + 65_000, { durationSec: 60 })], i.active)),
    'incoming.declined': asEnded(run([decline(T0 + 4_000)], i.ringing)),
    'incoming.missed': asEnded(run([ringTimeout(T0 + 58_000)], i.ringing)),
    'incoming.failed': asEnded(run([mediaFailed(T0 + 20_000)], i.connecting)),
    'incoming.answered_elsewhere': asEnded(run([claimed(T0 + 6_000)], i.ringing)),
    'outgoing.completed.agent': asEnded(run([hangup(T0 + 39_000, OUT_LOCAL)], o.active)),
    'outgoing.completed.customer': asEnded(run([outTerm(T0 + 70_000, { durationSec: 61 })], o.active)),
    'outgoing.cancelled': asEnded(run([hangup(T0 + 4_000, OUT_LOCAL)], o.remote_ringing)),
    'outgoing.no_answer': asEnded(o.ended),
    'outgoing.rejected': asEnded(run([status(T0 + 5_000, 'REJECTED')], o.remote_ringing)),
    'outgoing.failed': asEnded(run([initiateFailed(T0 + 700)], o.dialing)),
  };
}
