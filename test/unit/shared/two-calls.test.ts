// Two calls per agent: hold, resume, swap, answer-and-hold, a terminate of the held call, late
// events for it. The book's rules (shared/call-state.ts applyCallEvent): at most two busy calls,
// at most one of them not on hold, and a call taken into hand holds the other in the same step.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyCallEvent,
  emptyBook,
  heldMsOf,
  incomingLocalId,
  isBusy,
  isHeld,
  MAX_BUSY_CALLS,
  publicCall,
  type CallBook,
  type CallEffect,
  type CallEvent,
  type CallState,
} from '../../../shared/call-state';
import { term, text } from '../../../shared/i18n/text';
import {
  acceptOk,
  answer,
  answered,
  CALLEE,
  claimed,
  claimResult,
  dial,
  endResult,
  hangup,
  hold,
  IN_ID,
  IN_LOCAL,
  incoming,
  initiateOk,
  mediaConnected,
  mediaFailed,
  OUT_ID,
  OUT_LOCAL,
  resume,
  status,
  T0,
  terminated,
} from './call-fixtures';

const B_ID = 'wacid.HBgLMTQ0MjA3OTQ2MDk1OBUCABEYEjk5';
const B_LOCAL = incomingLocalId(B_ID);
const C_ID = 'wacid.HBgLMTQ0MjA3OTQ2MDk1OBUCABEYEjc3';
const C_LOCAL = incomingLocalId(C_ID);
const SECOND_CUSTOMER = { number: '5511912345678', name: 'Customer B' };

function applyAll(events: readonly CallEvent[], book: CallBook = emptyBook()): { book: CallBook; effects: CallEffect[] } {
  const effects: CallEffect[] = [];
  for (const ev of events) {
    const change = applyCallEvent(book, ev);
    book = change.book;
    effects.push(...change.effects);
  }
  return { book, effects };
}

/** An incoming call answered and connected: claim won, accepted, media up. */
const takeIncoming = (at: number, callId: string, localId: string, requestId?: string): CallEvent[] => [
  answer(at, localId, requestId),
  claimResult(at + 100, 'won', localId),
  acceptOk(at + 200, localId),
  mediaConnected(at + 300, localId),
];

/** On a call with customer A for 10 s; customer B rings. */
function onCallWithSecondRinging(): CallBook {
  return applyAll([
    incoming(T0),
    ...takeIncoming(T0 + 1_000, IN_ID, IN_LOCAL),
    incoming(T0 + 10_000, { callId: B_ID, peer: SECOND_CUSTOMER }),
  ]).book;
}

const replies = (effects: readonly CallEffect[]) => effects.filter((e) => e.kind === 'reply');
const heldOf = (book: CallBook, localId: string): boolean => {
  const call = book.calls[localId];
  return call !== undefined && isHeld(call);
};

describe('hold and resume', () => {
  it('holds an active call and resumes it, counting the time on hold', () => {
    const { book } = applyAll([incoming(T0), ...takeIncoming(T0 + 1_000, IN_ID, IN_LOCAL), hold(T0 + 10_000, IN_LOCAL, 'rq-h')]);
    const call = book.calls[IN_LOCAL]!;
    expect(call).toMatchObject({ phase: 'active', heldSince: T0 + 10_000 });
    expect(heldMsOf(call, T0 + 130_000)).toBe(120_000);
    const back = applyAll([resume(T0 + 130_000, IN_LOCAL, 'rq-r'), hold(T0 + 140_000), resume(T0 + 145_000)], book).book.calls[IN_LOCAL]!;
    expect(back.phase).toBe('active');
    expect(isHeld(back)).toBe(false);
    expect(heldMsOf(back, T0 + 200_000)).toBe(125_000);
    // The history keeps the time on hold, and the talk time still counts from the connect.
    const ended = applyAll([hangup(T0 + 200_000)], applyAll([resume(T0 + 130_000), hold(T0 + 140_000), resume(T0 + 145_000)], book).book).book.calls[IN_LOCAL]!;
    expect(ended).toMatchObject({ phase: 'ended', heldSec: 125, durationSec: 199 });
  });

  it('answers a hold of a call that is not active with invalid_state, and changes nothing', () => {
    const { book } = applyAll([incoming(T0)]);
    const change = applyCallEvent(book, hold(T0 + 1, IN_LOCAL, 'rq-h'));
    expect(change.book).toBe(book);
    expect(change.effects).toEqual([
      { kind: 'reply', requestId: 'rq-h', result: { ok: false, error: { code: 'invalid_state', message: 'The call is ringing: only an active call can be held', text: text('calls.onlyActiveHeld', { phase: term('phaseRinging') }) } } },
    ]);
  });

  it('a call held for two minutes is still the same live call: hold asks nothing of the gateway', () => {
    const start = applyAll([incoming(T0), ...takeIncoming(T0 + 1_000, IN_ID, IN_LOCAL)]).book;
    const { book, effects } = applyAll([hold(T0 + 5_000), status(T0 + 60_000, 'ACCEPTED', IN_ID), resume(T0 + 125_000)], start);
    expect(effects).toEqual([]);
    expect(book.calls[IN_LOCAL]).toMatchObject({ phase: 'active', heldMs: 120_000 });
  });
});

describe('call waiting: answer and hold', () => {
  it('answering the second call holds the first in the same step; the first stays held until resumed', () => {
    const book = onCallWithSecondRinging();
    const change = applyCallEvent(book, answer(T0 + 12_000, B_LOCAL, 'rq-b'));
    expect(change.changed.map((c) => [c.localId, c.phase, isHeld(c)])).toEqual([
      [IN_LOCAL, 'active', true],
      [B_LOCAL, 'answering', false],
    ]);
    expect(change.effects).toContainEqual({ kind: 'claim', localId: B_LOCAL, callId: B_ID });
    const both = applyAll(takeIncoming(T0 + 12_000, B_ID, B_LOCAL).slice(1), change.book).book;
    expect(both.calls[B_LOCAL]?.phase).toBe('active');
    expect(heldOf(both, IN_LOCAL)).toBe(true);
    expect(heldOf(both, B_LOCAL)).toBe(false);
  });

  it('a lost claim on the second call leaves the first on hold, with its Resume in reach', () => {
    const book = onCallWithSecondRinging();
    const { book: after, effects } = applyAll([answer(T0 + 12_000, B_LOCAL, 'rq-b'), claimResult(T0 + 12_100, 'lost', B_LOCAL)], book);
    expect(after.calls[B_LOCAL]).toMatchObject({ phase: 'ended', end: { kind: 'answered_elsewhere' } });
    expect(replies(effects)).toEqual([{ kind: 'reply', requestId: 'rq-b', result: { ok: false, error: { code: 'answered_elsewhere', message: 'Answered by another agent', text: text('calls.answeredElsewhere') } } }]);
    expect(heldOf(after, IN_LOCAL)).toBe(true);
    const resumed = applyCallEvent(after, resume(T0 + 13_000, IN_LOCAL, 'rq-r'));
    expect(heldOf(resumed.book, IN_LOCAL)).toBe(false);
    expect(replies(resumed.effects)).toEqual([{ kind: 'reply', requestId: 'rq-r', result: { ok: true, value: { localId: IN_LOCAL, callId: IN_ID } } }]);
  });

  it('a colleague taking the second call while it rings ends it here as answered elsewhere, and leaves the first untouched', () => {
    const book = onCallWithSecondRinging();
    const { book: after } = applyAll([claimed(T0 + 11_000, B_ID, false)], book);
    expect(after.calls[B_LOCAL]).toMatchObject({ phase: 'ended', end: { kind: 'answered_elsewhere' } });
    expect(after.calls[IN_LOCAL]).toBe(book.calls[IN_LOCAL]);
  });

  it('never more than two calls: a third is neither answered nor dialed, and the command says why', () => {
    const two = applyAll(takeIncoming(T0 + 12_000, B_ID, B_LOCAL), onCallWithSecondRinging()).book;
    const { book } = applyAll([incoming(T0 + 20_000, { callId: C_ID, peer: { number: '5511900000000' } })], two);
    const third = applyCallEvent(book, answer(T0 + 21_000, C_LOCAL, 'rq-c'));
    expect(third.book).toBe(book);
    expect(third.effects).toEqual([
      { kind: 'reply', requestId: 'rq-c', result: { ok: false, error: { code: 'invalid_state', message: 'Two calls are in progress: hang up one before answering this one', text: text('calls.twoInProgress', { doing: term('answeringThis') }) } } },
    ]);
    const dialed = applyCallEvent(book, dial(T0 + 21_000, 'out-3', CALLEE, 'rq-d'));
    expect(dialed.book).toBe(book);
    expect(replies(dialed.effects)[0]).toMatchObject({ result: { ok: false, error: { code: 'invalid_state', message: 'Two calls are in progress: hang up one before dialing a new number' } } });
  });

  it('dialing out from a call holds it; the outgoing call connects beside it', () => {
    const start = applyAll([incoming(T0), ...takeIncoming(T0 + 1_000, IN_ID, IN_LOCAL)]).book;
    const { book, effects } = applyAll(
      [dial(T0 + 5_000, OUT_LOCAL, CALLEE, 'rq-d'), initiateOk(T0 + 6_000), claimResult(T0 + 6_100, 'won', OUT_LOCAL), answered(T0 + 9_000, OUT_ID), mediaConnected(T0 + 9_500, OUT_LOCAL)],
      start,
    );
    expect(effects).toContainEqual({ kind: 'initiate', localId: OUT_LOCAL, to: CALLEE.number, sdp: expect.any(String) });
    expect(heldOf(book, IN_LOCAL)).toBe(true);
    expect(book.calls[OUT_LOCAL]?.phase).toBe('active');
  });
});

describe('swap and end', () => {
  const twoCalls = (): CallBook => applyAll(takeIncoming(T0 + 12_000, B_ID, B_LOCAL), onCallWithSecondRinging()).book;

  it('Swap (resuming the held call) holds the active one in the same step', () => {
    const book = twoCalls();
    const swap = applyCallEvent(book, resume(T0 + 20_000, IN_LOCAL, 'rq-s'));
    expect(swap.changed.map((c) => [c.localId, isHeld(c)])).toEqual([
      [B_LOCAL, true],
      [IN_LOCAL, false],
    ]);
    const back = applyCallEvent(swap.book, resume(T0 + 30_000, B_LOCAL));
    expect(heldOf(back.book, B_LOCAL)).toBe(false);
    expect(heldOf(back.book, IN_LOCAL)).toBe(true);
    // Each call keeps its own hold time.
    expect(heldMsOf(back.book.calls[IN_LOCAL]!, T0 + 40_000)).toBe(8_000 + 10_000);
  });

  it('hanging up the active call leaves the held one on hold; the customer on hold hanging up ends only that call', () => {
    const book = twoCalls();
    const { book: afterHangup, effects } = applyAll([hangup(T0 + 20_000, B_LOCAL)], book);
    expect(afterHangup.calls[B_LOCAL]).toMatchObject({ phase: 'ended', end: { kind: 'completed', by: 'agent' } });
    expect(effects).toContainEqual({ kind: 'end', localId: B_LOCAL, callId: B_ID, action: 'terminate' });
    expect(heldOf(afterHangup, IN_LOCAL)).toBe(true);

    const { book: heldGone } = applyAll([terminated(T0 + 20_000, { callId: IN_ID, durationSec: 19 })], book);
    expect(heldGone.calls[IN_LOCAL]).toMatchObject({ phase: 'ended', end: { kind: 'completed', by: 'customer' }, durationSec: 19, heldSec: 8 });
    expect(heldGone.calls[B_LOCAL]).toBe(book.calls[B_LOCAL]);
  });

  it('late events for the held call change nothing; its media failing ends only it', () => {
    const book = twoCalls();
    const late = applyAll([incoming(T0 + 21_000), claimed(T0 + 21_000, IN_ID, true), claimResult(T0 + 21_000, 'won'), acceptOk(T0 + 21_000), mediaConnected(T0 + 21_000), status(T0 + 21_000, 'ACCEPTED', IN_ID)], book);
    expect(late.book.calls).toBe(book.calls);
    const failed = applyAll([mediaFailed(T0 + 22_000, IN_LOCAL)], book).book;
    expect(failed.calls[IN_LOCAL]?.phase).toBe('ended');
    expect(failed.calls[B_LOCAL]).toBe(book.calls[B_LOCAL]);
    // The ended call is over for good: its end result settles what it was owed, nothing revives it.
    const settled = applyAll([endResult(T0 + 22_500, 'done', IN_LOCAL), resume(T0 + 23_000, IN_LOCAL, 'rq-x')], failed);
    expect(settled.book.calls[IN_LOCAL]?.phase).toBe('ended');
    expect(heldOf(settled.book, B_LOCAL)).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties: two calls of one agent (and a third trying), any order, any repeats.
// ---------------------------------------------------------------------------------------------

const CALLS = [
  { callId: IN_ID, localId: IN_LOCAL },
  { callId: B_ID, localId: B_LOCAL },
  { callId: C_ID, localId: C_LOCAL },
] as const;

/** Steps of one or more events: taking a call is a step, so runs reach two calls in hand often. */
function poolFor(at: number): CallEvent[][] {
  return CALLS.flatMap(({ callId, localId }) => [
    [incoming(at, { callId, timestamp: T0 })],
    [incoming(at, { callId, timestamp: T0 }), ...takeIncoming(at, callId, localId, 'rq-p')],
    [answer(at, localId, 'rq-p')],
    [claimResult(at, 'won', localId)],
    [claimResult(at, 'lost', localId)],
    [claimed(at, callId, false)],
    [acceptOk(at, localId)],
    [mediaConnected(at, localId)],
    [mediaFailed(at, localId)],
    [hold(at, localId, 'rq-p')],
    [resume(at, localId, 'rq-p')],
    [hangup(at, localId)],
    [terminated(at, { callId, timestamp: T0 + 1, durationSec: 5 })],
    [endResult(at, 'done', localId)],
  ]);
}

const busy = (book: CallBook): CallState[] => Object.values(book.calls).filter(isBusy);

describe('properties of two calls', () => {
  it('at most two busy calls, at most one in hand, ended absorbing, repeats change nothing, other calls touched only by a hold', () => {
    let seenTwo = false;
    fc.assert(
      fc.property(fc.array(fc.nat({ max: poolFor(0).length - 1 }), { minLength: 1, maxLength: 30 }), (indices) => {
        let book = emptyBook();
        const endedAs = new Map<string, string>();
        let reachedTwo = false;
        indices.forEach((index, step) => {
          for (const ev of poolFor(T0 + step * 1_000)[index]!) check(ev);
        });
        seenTwo ||= reachedTwo;
        function check(ev: CallEvent): void {
          const change = applyCallEvent(book, ev);
          const next = change.book;
          expect(busy(next).length).toBeLessThanOrEqual(MAX_BUSY_CALLS);
          expect(busy(next).filter((c) => !isHeld(c)).length).toBeLessThanOrEqual(1);
          if (busy(next).filter((c) => c.phase === 'active').length === 2) reachedTwo = true;
          for (const call of Object.values(next.calls)) {
            if ((call as { heldSince?: number }).heldSince !== undefined) expect(call.phase).toBe('active');
            const was = endedAs.get(call.localId);
            if (was !== undefined) expect(call.phase).toBe('ended');
            if (call.phase === 'ended') {
              expect(was === undefined || was === call.end.kind).toBe(true);
              endedAs.set(call.localId, call.end.kind);
            }
          }
          // Another call than the event's is only ever put on hold (answer, dial or resume of this one).
          const target = ev.type.startsWith('remote.') ? next.byCallId[(ev as { callId: string }).callId] : (ev as { localId: string }).localId;
          for (const changed of change.changed) {
            if (changed.localId === target) continue;
            const before = book.calls[changed.localId]!;
            expect(['local.answer', 'local.dial', 'local.resume']).toContain(ev.type);
            expect(isHeld(before)).toBe(false);
            expect(publicCall(changed)).toEqual({ ...publicCall(before), heldSince: ev.at });
          }
          // A colleague's claim never leaves a call this agent's: it ends it, or finds it taken here already.
          if (ev.type === 'remote.claimed') {
            const call = next.calls[target ?? ''];
            expect(call === undefined || call.phase !== 'ringing').toBe(true);
          }
          // The same event again changes nothing.
          const again = applyCallEvent(next, ev);
          expect(again.book.calls).toBe(next.calls);
          expect(again.effects.filter((e) => e.kind !== 'reply')).toEqual([]);
          book = next;
        }
      }),
      { numRuns: 3_000 },
    );
    // The runs did reach two calls on the line at once.
    expect(seenTwo).toBe(true);
  });
});
