import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyCallEvent,
  DIAL_TIMEOUT_MS,
  emptyBook,
  incomingLocalId,
  isLive,
  LIVE_PHASES,
  liveCalls,
  PENDING_TTL_MS,
  pruneBook,
  reduceCall,
  RING_TIMEOUT_MS,
  STALE_CONNECT_MS,
  TOMBSTONE_TTL_MS,
  type CallBook,
  type CallEvent,
  type CallPhase,
  type CallState,
  type EndKind,
} from '../../../shared/call-state';
import {
  acceptFailed,
  acceptOk,
  answer,
  answered,
  ANSWER_SDP,
  asEnded,
  CALLEE,
  claimed,
  CUSTOMER,
  decline,
  dial,
  dialTimeout,
  endedCalls,
  hangup,
  IN_ID,
  IN_LOCAL,
  incoming,
  incomingStates,
  INCOMING_IDS,
  initiateFailed,
  initiateOk,
  mediaConnected,
  mediaFailed,
  OFFER_SDP,
  OUT_ID,
  OUT_LOCAL,
  outgoingStates,
  OUTGOING_IDS,
  ringTimeout,
  run,
  status,
  T0,
  terminated,
  type CallIds,
} from './call-fixtures';

// ---------------------------------------------------------------------------------------------
// The transition table: every phase (incoming and outgoing) × every event.
// ---------------------------------------------------------------------------------------------

/** `=`: the event does not apply and the reducer returns the very same object. */
type Outcome = '=' | Exclude<CallPhase, 'ended'> | `ended:${EndKind}` | `ended:completed/${'agent' | 'customer'}` | `ended:failed/${string}`;

const EVENT_KEYS = [
  'remote.incoming',
  'remote.answered',
  'remote.status:RINGING',
  'remote.status:ACCEPTED',
  'remote.status:REJECTED',
  'remote.terminated:COMPLETED',
  'remote.terminated:COMPLETED+duration',
  'remote.terminated:FAILED',
  'remote.claimed',
  'local.dial',
  'local.initiate_ok',
  'local.initiate_failed',
  'local.answer',
  'local.accept_ok',
  'local.accept_failed',
  'local.claim_lost',
  'local.decline',
  'local.hangup',
  'local.media_connected',
  'local.media_failed',
  'local.ring_timeout',
  'local.dial_timeout',
] as const;
type EventKey = (typeof EVENT_KEYS)[number];

/** When the table's events happen: after every fixture state was reached. */
const AT = T0 + 100_000;

/** One event of each type, carrying the ids of the call it is applied to. */
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
    'local.dial': dial(AT, localId),
    'local.initiate_ok': initiateOk(AT, localId, callId),
    'local.initiate_failed': initiateFailed(AT, localId),
    'local.answer': answer(AT, localId),
    'local.accept_ok': acceptOk(AT, localId),
    'local.accept_failed': acceptFailed(AT, localId),
    'local.claim_lost': { type: 'local.claim_lost', at: AT, localId },
    'local.decline': decline(AT, localId),
    'local.hangup': hangup(AT, localId),
    'local.media_connected': mediaConnected(AT, localId),
    'local.media_failed': mediaFailed(AT, localId),
    'local.ring_timeout': ringTimeout(AT, localId),
    'local.dial_timeout': dialTimeout(AT, localId),
  };
}

const inStates = incomingStates();
const outStates = outgoingStates();
const ROWS = {
  'in.ringing': inStates.ringing,
  'in.answering': inStates.answering,
  'in.connecting': inStates.connecting,
  'in.active': inStates.active,
  'in.ended': inStates.ended, // completed by the agent after 30 s of talk
  'out.dialing': outStates.dialing,
  'out.calling': outStates.calling,
  'out.remote_ringing': outStates.remote_ringing,
  'out.connecting': outStates.connecting,
  'out.active': outStates.active,
  'out.ended': outStates.ended, // no answer: the dial timer gave up
} as const;
type RowKey = keyof typeof ROWS;

// The state machine, written out (ARCHITECTURE.md, protocol.md):
//   incoming: ringing → answering → connecting → active → ended
//   outgoing: dialing → calling → remote_ringing → connecting → active → ended
const EXPECTED: Record<RowKey, Record<EventKey, Outcome>> = {
  'in.ringing': {
    'remote.incoming': '=', // a duplicate connect
    'remote.answered': '=',
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': '=',
    'remote.terminated:COMPLETED': 'ended:missed', // the customer gave up
    'remote.terminated:COMPLETED+duration': 'ended:answered_elsewhere', // it was answered, not here
    'remote.terminated:FAILED': 'ended:failed/138021',
    'remote.claimed': 'ended:answered_elsewhere',
    'local.dial': '=',
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': 'answering',
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.claim_lost': 'ended:answered_elsewhere', // another agent's claim won
    'local.decline': 'ended:declined',
    'local.hangup': 'ended:declined',
    'local.media_connected': '=',
    'local.media_failed': '=',
    'local.ring_timeout': 'ended:missed',
    'local.dial_timeout': '=',
  },
  'in.answering': {
    'remote.incoming': '=',
    'remote.answered': '=',
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': '=',
    'remote.terminated:COMPLETED': 'ended:missed', // hung up before the answer reached the gateway
    'remote.terminated:COMPLETED+duration': 'ended:completed/customer', // our accept landed; its response had not come back
    'remote.terminated:FAILED': 'ended:failed/138021',
    'remote.claimed': '=', // this agent's own claim coming back: it is answering
    'local.dial': '=',
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': '=',
    'local.accept_ok': 'connecting',
    'local.accept_failed': 'ended:failed/100',
    'local.claim_lost': 'ended:answered_elsewhere', // the claim answered 409: no accept goes out
    'local.decline': '=',
    'local.hangup': 'ended:completed/agent',
    'local.media_connected': 'active', // media may beat the accept response
    'local.media_failed': 'ended:failed/ice_failed',
    'local.ring_timeout': '=',
    'local.dial_timeout': '=',
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
    'local.dial': '=',
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': '=',
    'local.accept_ok': '=',
    'local.accept_failed': 'ended:failed/100',
    'local.claim_lost': '=', // the gateway has this agent's answer
    'local.decline': '=',
    'local.hangup': 'ended:completed/agent',
    'local.media_connected': 'active',
    'local.media_failed': 'ended:failed/ice_failed',
    'local.ring_timeout': '=',
    'local.dial_timeout': '=',
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
    'local.dial': '=',
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': '=',
    'local.accept_ok': '=', // the accept response came back after media connected
    'local.accept_failed': 'ended:failed/100',
    'local.claim_lost': '=',
    'local.decline': '=',
    'local.hangup': 'ended:completed/agent',
    'local.media_connected': '=',
    'local.media_failed': 'ended:failed/ice_failed',
    'local.ring_timeout': '=',
    'local.dial_timeout': '=',
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
    'local.dial': '=',
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': '=',
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.claim_lost': '=',
    'local.decline': '=',
    'local.hangup': '=',
    'local.media_connected': '=',
    'local.media_failed': '=',
    'local.ring_timeout': '=',
    'local.dial_timeout': '=',
  },
  'out.dialing': {
    'remote.incoming': '=',
    'remote.answered': '=', // no call id yet: the book holds it back until initiate_ok
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': 'ended:rejected',
    'remote.terminated:COMPLETED': 'ended:no_answer',
    'remote.terminated:COMPLETED+duration': 'ended:completed/customer',
    'remote.terminated:FAILED': 'ended:failed/138021',
    'remote.claimed': '=',
    'local.dial': '=',
    'local.initiate_ok': 'calling',
    'local.initiate_failed': 'ended:failed/138006',
    'local.answer': '=',
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.claim_lost': '=',
    'local.decline': '=',
    'local.hangup': 'ended:cancelled',
    'local.media_connected': '=',
    'local.media_failed': '=',
    'local.ring_timeout': '=',
    'local.dial_timeout': '=',
  },
  'out.calling': {
    'remote.incoming': '=',
    'remote.answered': 'connecting', // answered without a RINGING first
    'remote.status:RINGING': 'remote_ringing',
    'remote.status:ACCEPTED': '=', // never gate anything on ACCEPTED (protocol.md)
    'remote.status:REJECTED': 'ended:rejected',
    'remote.terminated:COMPLETED': 'ended:no_answer',
    'remote.terminated:COMPLETED+duration': 'ended:completed/customer',
    'remote.terminated:FAILED': 'ended:failed/138021',
    'remote.claimed': '=',
    'local.dial': '=',
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': '=',
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.claim_lost': '=',
    'local.decline': '=',
    'local.hangup': 'ended:cancelled',
    'local.media_connected': '=',
    'local.media_failed': '=',
    'local.ring_timeout': '=',
    'local.dial_timeout': 'ended:no_answer',
  },
  'out.remote_ringing': {
    'remote.incoming': '=',
    'remote.answered': 'connecting',
    'remote.status:RINGING': '=',
    'remote.status:ACCEPTED': '=',
    'remote.status:REJECTED': 'ended:rejected',
    'remote.terminated:COMPLETED': 'ended:no_answer',
    'remote.terminated:COMPLETED+duration': 'ended:completed/customer',
    'remote.terminated:FAILED': 'ended:failed/138021',
    'remote.claimed': '=',
    'local.dial': '=',
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': '=',
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.claim_lost': '=',
    'local.decline': '=',
    'local.hangup': 'ended:cancelled',
    'local.media_connected': '=',
    'local.media_failed': '=',
    'local.ring_timeout': '=',
    'local.dial_timeout': 'ended:no_answer',
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
    'local.dial': '=',
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': '=',
    'local.accept_ok': '=',
    'local.accept_failed': '=', // outgoing calls are never accepted
    'local.claim_lost': '=',
    'local.decline': '=',
    'local.hangup': 'ended:completed/agent',
    'local.media_connected': 'active',
    'local.media_failed': 'ended:failed/ice_failed',
    'local.ring_timeout': '=',
    'local.dial_timeout': '=', // answered: the dial timer no longer applies
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
    'local.dial': '=',
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': '=',
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.claim_lost': '=',
    'local.decline': '=',
    'local.hangup': 'ended:completed/agent',
    'local.media_connected': '=',
    'local.media_failed': 'ended:failed/ice_failed',
    'local.ring_timeout': '=',
    'local.dial_timeout': '=',
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
    'local.dial': '=',
    'local.initiate_ok': '=',
    'local.initiate_failed': '=',
    'local.answer': '=',
    'local.accept_ok': '=',
    'local.accept_failed': '=',
    'local.claim_lost': '=',
    'local.decline': '=',
    'local.hangup': '=',
    'local.media_connected': '=',
    'local.media_failed': '=',
    'local.ring_timeout': '=',
    'local.dial_timeout': '=',
  },
};

function outcomeOf(call: CallState | undefined): string {
  if (call === undefined) return 'none';
  if (call.phase !== 'ended') return call.phase;
  const e = call.end;
  if (e.kind === 'completed') return `ended:completed/${e.by}`;
  if (e.kind === 'failed') return `ended:failed/${e.code}`;
  return `ended:${e.kind}`;
}

const idsOf = (row: RowKey): CallIds => (row.startsWith('in.') ? INCOMING_IDS : OUTGOING_IDS);

describe('reduceCall: the transition table', () => {
  it('covers every event type and every phase of both directions', () => {
    const allTypes: Record<CallEvent['type'], true> = {
      'remote.incoming': true,
      'remote.answered': true,
      'remote.status': true,
      'remote.terminated': true,
      'remote.claimed': true,
      'local.dial': true,
      'local.initiate_ok': true,
      'local.initiate_failed': true,
      'local.answer': true,
      'local.accept_ok': true,
      'local.accept_failed': true,
      'local.claim_lost': true,
      'local.decline': true,
      'local.hangup': true,
      'local.media_connected': true,
      'local.media_failed': true,
      'local.ring_timeout': true,
      'local.dial_timeout': true,
    };
    const covered = new Set(Object.values(tableEvents(INCOMING_IDS)).map((e) => e.type));
    expect([...covered].sort()).toEqual(Object.keys(allTypes).sort());

    const phases = new Set(Object.values(ROWS).map((s) => s.phase));
    expect([...phases].sort()).toEqual([...LIVE_PHASES, 'ended'].sort());
    expect(Object.entries(ROWS).map(([k, s]) => [k, s.phase, s.direction])).toEqual([
      ['in.ringing', 'ringing', 'incoming'],
      ['in.answering', 'answering', 'incoming'],
      ['in.connecting', 'connecting', 'incoming'],
      ['in.active', 'active', 'incoming'],
      ['in.ended', 'ended', 'incoming'],
      ['out.dialing', 'dialing', 'outgoing'],
      ['out.calling', 'calling', 'outgoing'],
      ['out.remote_ringing', 'remote_ringing', 'outgoing'],
      ['out.connecting', 'connecting', 'outgoing'],
      ['out.active', 'active', 'outgoing'],
      ['out.ended', 'ended', 'outgoing'],
    ]);
  });

  describe.each(Object.keys(ROWS) as RowKey[])('%s', (row) => {
    it.each(EVENT_KEYS)('× %s', (key) => {
      const state = ROWS[row];
      const ev = tableEvents(idsOf(row))[key];
      const expected = EXPECTED[row][key];
      const next = reduceCall(state, ev);
      if (expected === '=') {
        expect(next).toBe(state);
      } else {
        expect(next).not.toBe(state);
        expect(outcomeOf(next)).toBe(expected);
        expect(next?.direction).toBe(state.direction);
        expect(next?.localId).toBe(state.localId);
      }
      // Every transition is idempotent: the same event again returns the very same object.
      expect(reduceCall(next, ev)).toBe(next);
    });
  });

  it.each(EVENT_KEYS)('no call × %s: only a connect or a dial opens one', (key) => {
    const expected: Partial<Record<EventKey, string>> = { 'remote.incoming': 'ringing', 'local.dial': 'dialing' };
    const ids = key === 'remote.incoming' ? INCOMING_IDS : OUTGOING_IDS;
    expect(outcomeOf(reduceCall(undefined, tableEvents(ids)[key]))).toBe(expected[key] ?? 'none');
  });
});

// ---------------------------------------------------------------------------------------------
// What each transition records.
// ---------------------------------------------------------------------------------------------

describe('reduceCall: what the transitions record', () => {
  it('opens a ringing incoming call keyed in:<call id>, ringing until 60 s after the connect', () => {
    const call = reduceCall(undefined, incoming(T0, { timestamp: T0 - 2_000, ctaPayload: 'agent:ada' }));
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
    expect(incomingLocalId(IN_ID)).toBe(IN_LOCAL);
  });

  it('leaves ctaPayload out when the connect had none', () => {
    expect(reduceCall(undefined, incoming(T0))).not.toHaveProperty('ctaPayload');
  });

  it('rings from the earlier of the gateway time and the local clock (a gateway clock ahead is not trusted)', () => {
    const call = reduceCall(undefined, incoming(T0, { timestamp: T0 + 30_000 }));
    expect(call?.phase === 'ringing' && call.ringsUntil).toBe(T0 + RING_TIMEOUT_MS);
  });

  it('drops a connect older than 60 s, and keeps one exactly 60 s old', () => {
    expect(reduceCall(undefined, incoming(T0, { timestamp: T0 - STALE_CONNECT_MS - 1 }))).toBeUndefined();
    expect(reduceCall(undefined, incoming(T0, { timestamp: T0 - 5 * 60_000 }))).toBeUndefined();
    expect(reduceCall(undefined, incoming(T0, { timestamp: T0 - STALE_CONNECT_MS }))?.phase).toBe('ringing');
  });

  it('opens a dialing call with the peer and no call id', () => {
    expect(reduceCall(undefined, dial(T0))).toEqual({ phase: 'dialing', direction: 'outgoing', localId: OUT_LOCAL, peer: CALLEE, createdAt: T0 });
  });

  it('learns the call id on initiate_ok and dials for 60 s from then', () => {
    const call = run([dial(T0), initiateOk(T0 + 900)]);
    expect(call).toMatchObject({ phase: 'calling', callId: OUT_ID, dialsUntil: T0 + 900 + DIAL_TIMEOUT_MS, createdAt: T0 });
  });

  it("keeps the customer's answer SDP and when it came", () => {
    const call = run([answered(T0 + 8_000)], outStates.remote_ringing);
    expect(call).toMatchObject({ phase: 'connecting', answerSdp: ANSWER_SDP, answeredAt: T0 + 8_000, callId: OUT_ID });
  });

  it('records when the agent answered and when media connected', () => {
    expect(inStates.answering).toMatchObject({ phase: 'answering', answeredAt: T0 + 3_000 });
    expect(inStates.connecting).toMatchObject({ phase: 'connecting', answeredAt: T0 + 3_000 });
    expect(inStates.active).toMatchObject({ phase: 'active', answeredAt: T0 + 3_000, connectedAt: T0 + 5_000 });
  });

  it('goes active when media connects before the accept response, and the late accept_ok changes nothing', () => {
    const active = run([mediaConnected(T0 + 3_500)], inStates.answering);
    expect(active).toMatchObject({ phase: 'active', connectedAt: T0 + 3_500 });
    expect(reduceCall(active, acceptOk(T0 + 3_600))).toBe(active);
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

  it('keeps who, what and when on the ended call', () => {
    const incomingEnded = asEnded(
      run([incoming(T0, { ctaPayload: 'p' }), answer(T0 + 3_000), acceptOk(T0 + 4_000), mediaConnected(T0 + 5_000), hangup(T0 + 35_000)]),
    );
    expect(incomingEnded).toEqual({
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
    });
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
    });
    expect(asEnded(run([terminated(T0 + 9_000, { errors: [{ code: 138019, message: 'Call setup failed' }] })], inStates.connecting)).end).toEqual({
      kind: 'failed',
      code: '138019',
      message: 'Call setup failed',
    });
  });

  it('carries local errors into the end reason', () => {
    expect(asEnded(run([initiateFailed(T0 + 500)], outStates.dialing)).end).toEqual({
      kind: 'failed',
      code: '138006',
      message: 'The customer has not allowed business calls',
    });
    expect(asEnded(run([acceptFailed(T0 + 4_000)], inStates.answering)).end).toEqual({ kind: 'failed', code: '100', message: 'Invalid parameter: session.sdp' });
    expect(asEnded(run([mediaFailed(T0 + 4_000)], inStates.active)).end).toEqual({ kind: 'failed', code: 'ice_failed', message: 'The audio connection failed' });
  });

  it("does not count a colleague's talk time as this agent's", () => {
    const taken = asEnded(run([terminated(T0 + 90_000, { durationSec: 80 })], inStates.ringing));
    expect(taken.end).toEqual({ kind: 'answered_elsewhere' });
    expect(taken.durationSec).toBe(0);
    expect(taken).not.toHaveProperty('connectedAt');
  });

  it("counts a talked-for terminate while answering as this agent's call, with the gateway's talk time", () => {
    const landed = asEnded(run([terminated(T0 + 50_000, { durationSec: 44 })], inStates.answering));
    expect(landed.end).toEqual({ kind: 'completed', by: 'customer' });
    expect(landed.durationSec).toBe(44);
  });

  it('treats a zero duration as not answered', () => {
    expect(asEnded(run([terminated(T0 + 20_000, { durationSec: 0 })], inStates.ringing)).end.kind).toBe('missed');
    expect(asEnded(run([terminated(T0 + 20_000, { callId: OUT_ID, durationSec: 0 })], outStates.calling)).end.kind).toBe('no_answer');
  });
});

// ---------------------------------------------------------------------------------------------
// Tombstones: an ended call is never revived.
// ---------------------------------------------------------------------------------------------

describe('reduceCall: ended calls are tombstones', () => {
  const ended = endedCalls();

  it('has every end reason of both directions among the fixtures', () => {
    const kinds = new Set(Object.values(ended).map((c) => c.end.kind));
    expect([...kinds].sort()).toEqual(['answered_elsewhere', 'cancelled', 'completed', 'declined', 'failed', 'missed', 'no_answer', 'rejected']);
  });

  describe.each(Object.keys(ended))('%s', (name) => {
    const call = ended[name]!;
    const ids = call.direction === 'incoming' ? INCOMING_IDS : OUTGOING_IDS;
    it.each(EVENT_KEYS)('stays ended after %s', (key) => {
      const ev = tableEvents(ids)[key];
      const next = reduceCall(call, ev);
      expect(next?.phase).toBe('ended');
      const refinesDuration = key === 'remote.terminated:COMPLETED+duration' && call.connectedAt !== undefined;
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
    const filled = asEnded(reduceCall(hungUp, late));
    expect(filled).toEqual({ ...hungUp, durationSec: 31 });
    expect(reduceCall(filled, late)).toBe(filled);
    expect(reduceCall(filled, terminated(T0 + 37_000))).toBe(filled);
  });

  it('does not invent talk time for a call that never connected here', () => {
    const declined = ended['incoming.declined']!;
    expect(reduceCall(declined, terminated(T0 + 9_000, { durationSec: 12 }))).toBe(declined);
  });

  it('records the rejection when the terminate overtook REJECTED', () => {
    const remote = run([initiateOk(T0 + 1_000), status(T0 + 2_000, 'RINGING')], run([dial(T0)]));
    const byTerminate = asEnded(run([terminated(T0 + 6_000, { callId: OUT_ID })], remote));
    expect(byTerminate.end).toEqual({ kind: 'no_answer' });
    const rejected = asEnded(reduceCall(byTerminate, status(T0 + 6_100, 'REJECTED')));
    expect(rejected).toEqual({ ...byTerminate, end: { kind: 'rejected' } });
    expect(reduceCall(rejected, status(T0 + 6_200, 'REJECTED'))).toBe(rejected);
  });
});

// ---------------------------------------------------------------------------------------------
// The book: several calls, out-of-order and duplicate delivery.
// ---------------------------------------------------------------------------------------------

function applyAll(events: readonly CallEvent[], book: CallBook = emptyBook()): { book: CallBook; changed: CallState[] } {
  let acc = { book, changed: [] as CallState[] };
  for (const ev of events) {
    const next = applyCallEvent(acc.book, ev);
    acc = { book: next.book, changed: [...acc.changed, ...next.changed] };
  }
  return acc;
}

describe('applyCallEvent', () => {
  it('opens an incoming call under in:<call id> and indexes its call id', () => {
    const { book, changed } = applyCallEvent(emptyBook(), incoming(T0));
    expect(changed.map(outcomeOf)).toEqual(['ringing']);
    expect(book.calls[IN_LOCAL]).toBe(changed[0]);
    expect(book.byCallId).toEqual({ [IN_ID]: IN_LOCAL });
    expect(book.pending).toEqual({});
    expect(book.tombstones).toEqual({});
  });

  it('returns the very same book for a duplicate connect', () => {
    const first = applyCallEvent(emptyBook(), incoming(T0));
    const again = applyCallEvent(first.book, incoming(T0 + 50));
    expect(again.book).toBe(first.book);
    expect(again.changed).toEqual([]);
  });

  it('routes remote events by call id and local events by local id', () => {
    const { book } = applyAll([incoming(T0), dial(T0 + 1, OUT_LOCAL), initiateOk(T0 + 2), answer(T0 + 3)]);
    expect(book.calls[IN_LOCAL]?.phase).toBe('answering');
    expect(book.calls[OUT_LOCAL]?.phase).toBe('calling');
    expect(book.byCallId).toEqual({ [IN_ID]: IN_LOCAL, [OUT_ID]: OUT_LOCAL });
    const after = applyAll([status(T0 + 4, 'RINGING'), terminated(T0 + 5)], book).book;
    expect(after.calls[OUT_LOCAL]?.phase).toBe('remote_ringing');
    expect(outcomeOf(after.calls[IN_LOCAL])).toBe('ended:missed');
  });

  it('ignores local events for unknown calls', () => {
    const book = emptyBook();
    for (const ev of [answer(T0), hangup(T0), mediaConnected(T0), initiateOk(T0, 'nobody'), ringTimeout(T0)]) {
      const result = applyCallEvent(book, ev);
      expect(result.book).toBe(book);
      expect(result.changed).toEqual([]);
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
      // Later events find the call by its id.
      expect(applyCallEvent(ok.book, mediaConnected(T0 + 1_200, OUT_LOCAL)).book.calls[OUT_LOCAL]?.phase).toBe('active');
    });

    it('ends the call on initiate_ok when its terminate came first', () => {
      const early = applyAll([dial(T0), terminated(T0 + 500, { callId: OUT_ID })]);
      expect(early.book.tombstones[OUT_ID]).toBe(T0 + 500);
      const ok = applyCallEvent(early.book, initiateOk(T0 + 900));
      expect(ok.changed.map(outcomeOf)).toEqual(['ended:no_answer']);
      expect(ok.book.tombstones).toEqual({});
      expect(ok.book.pending).toEqual({});
      expect(ok.book.byCallId[OUT_ID]).toBe(OUT_LOCAL);
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

    it('replays nothing into a call the agent cancelled while dialing', () => {
      const early = applyAll([dial(T0), status(T0 + 300, 'RINGING'), hangup(T0 + 400, OUT_LOCAL)]);
      const ok = applyCallEvent(early.book, initiateOk(T0 + 900));
      expect(outcomeOf(ok.book.calls[OUT_LOCAL])).toBe('ended:cancelled');
      expect(ok.changed).toEqual([]);
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
  });

  it('fills the duration from a late terminate after the agent hung up', () => {
    const { book } = applyAll([incoming(T0), answer(T0 + 3_000), acceptOk(T0 + 4_000), mediaConnected(T0 + 5_000), hangup(T0 + 35_000)]);
    const late = applyCallEvent(book, terminated(T0 + 36_000, { durationSec: 31 }));
    expect(late.changed).toHaveLength(1);
    expect(late.book.calls[IN_LOCAL]).toMatchObject({ phase: 'ended', end: { kind: 'completed', by: 'agent' }, durationSec: 31 });
  });

  it('reports the changed calls oldest first', () => {
    const { changed } = applyAll([incoming(T0), answer(T0 + 1), acceptOk(T0 + 2), mediaConnected(T0 + 3), hangup(T0 + 4)]);
    expect(changed.map(outcomeOf)).toEqual(['ringing', 'answering', 'connecting', 'active', 'ended:completed/agent']);
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
  status(at, 'RINGING', IN_ID),
  status(at, 'ACCEPTED', IN_ID),
  status(at, 'REJECTED', IN_ID),
  answered(at, IN_ID),
];
const LOCAL_POOL = (at: number): CallEvent[] => [
  answer(at),
  acceptOk(at),
  acceptFailed(at),
  decline(at),
  hangup(at),
  mediaConnected(at),
  mediaFailed(at),
  ringTimeout(at),
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
        const { book } = applyAll(order.map((i, step) => ({ ...story[i]!, at: T0 + step * 500 })));
        const call = book.calls[IN_LOCAL];
        expect(call === undefined || outcomeOf(call) === 'ended:answered_elsewhere').toBe(true);
        expect(liveCalls(book)).toEqual([]);
      }),
      { numRuns: 2_000 },
    );
  });

  it('for any call state and any event, the reducer is idempotent and ended is absorbing', () => {
    const events = (at: number) => [
      ...Object.values(tableEvents(INCOMING_IDS)),
      ...Object.values(tableEvents(OUTGOING_IDS)),
      ...REMOTE_POOL(at),
      ...LOCAL_POOL(at),
      dial(at),
      initiateOk(at),
      dialTimeout(at),
      status(at, 'RINGING'),
      answered(at),
      hangup(at, OUT_LOCAL),
      mediaConnected(at, OUT_LOCAL),
    ];
    const size = events(0).length;
    fc.assert(
      fc.property(fc.array(fc.nat({ max: size - 1 }), { minLength: 1, maxLength: 30 }), (indices) => {
        let call: CallState | undefined;
        indices.forEach((index, step) => {
          const ev = events(T0 + step * 1_000)[index]!;
          const next = reduceCall(call, ev);
          expect(reduceCall(next, ev)).toBe(next);
          if (call?.phase === 'ended') expect(next?.phase).toBe('ended');
          if (call !== undefined) expect(next).toBeDefined();
          call = next;
        });
      }),
      { numRuns: 3_000 },
    );
  });
});
