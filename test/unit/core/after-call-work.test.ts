// After-call work: when it starts, how long it lasts, "Ready", and a required disposition that holds
// it past its countdown. Time is the clock's own (now and one timer), moved by the test.
import { describe, expect, it } from 'vitest';
import { AfterCallWorkClock } from '../../../electron/core/after-call-work';
import type { EndedCall } from '../../../shared/calls/types';
import { DEFAULT_TEAM_SETTINGS, type TeamSettings } from '../../../shared/team-settings';

function clock() {
  let now = 1_000_000;
  let timer: { at: number; run: () => void } | undefined;
  let changes = 0;
  const work = new AfterCallWorkClock({
    now: () => now,
    onChange: () => changes++,
    setTimer: (run, ms) => {
      timer = { at: now + ms, run };
      return 1 as unknown as ReturnType<typeof setTimeout>;
    },
    clearTimer: () => {
      timer = undefined;
    },
  });
  return {
    work,
    changes: () => changes,
    /** Moves the time on, running the timer when it falls due. */
    pass(ms: number) {
      now += ms;
      if (timer !== undefined && timer.at <= now) {
        const due = timer;
        timer = undefined;
        due.run();
      }
    },
    now: () => now,
  };
}

const ended = (over: Partial<EndedCall> = {}): EndedCall =>
  ({
    localId: 'in:wacid.1',
    callId: 'wacid.1',
    direction: 'incoming',
    offerSdp: 'v=0',
    peer: { number: '447700900123' },
    createdAt: 1,
    phase: 'ended',
    end: { kind: 'completed', by: 'customer' },
    endedAt: 2,
    connectedAt: 1,
    durationSec: 1,
    ...over,
  }) as EndedCall;

const team = (over: Partial<TeamSettings> = {}): TeamSettings => ({ ...DEFAULT_TEAM_SETTINGS, afterCallWorkSeconds: 60, ...over });

describe('AfterCallWorkClock', () => {
  it('follows a call the agent talked on, for the team’s seconds, then ends by itself', () => {
    const c = clock();
    c.work.callEnded(ended(), false, team(), false);
    expect(c.work.current()).toEqual({ localId: 'in:wacid.1', callId: 'wacid.1', startedAt: c.now(), endsAt: c.now() + 60_000, waitingForWrapUp: false });
    expect(c.changes()).toBe(1);
    c.pass(59_999);
    expect(c.work.current()).toBeDefined();
    c.pass(1);
    expect(c.work.current()).toBeUndefined();
    expect(c.changes()).toBe(2);
  });

  it('follows no call the agent did not talk on, none that leaves another busy, and none when the team wants none', () => {
    const c = clock();
    c.work.callEnded(ended({ connectedAt: undefined, end: { kind: 'missed' } }), false, team(), false);
    c.work.callEnded(ended({ end: { kind: 'consult_ended' } }), false, team(), false);
    c.work.callEnded(ended(), true, team(), false);
    c.work.callEnded(ended(), false, team({ afterCallWorkSeconds: 0 }), false);
    expect(c.work.current()).toBeUndefined();
    expect(c.changes()).toBe(0);
    // A transfer the agent handed on was a call it talked on.
    c.work.callEnded(ended({ end: { kind: 'transferred', to: 'Bob' } }), false, team(), false);
    expect(c.work.current()?.localId).toBe('in:wacid.1');
  });

  it('ends at "Ready", and when the agent takes another call', () => {
    const c = clock();
    c.work.callEnded(ended(), false, team(), false);
    expect(c.work.ready()).toEqual({ ok: true, value: null });
    expect(c.work.current()).toBeUndefined();
    c.work.callEnded(ended({ localId: 'out:2' }), false, team(), false);
    c.work.callTaken();
    expect(c.work.current()).toBeUndefined();
    // Its timer went with it: nothing changes when the countdown would have ended.
    const before = c.changes();
    c.pass(60_000);
    expect(c.changes()).toBe(before);
  });

  it('with a required disposition, refuses "Ready" and outlasts its countdown until the wrap-up has one', () => {
    const c = clock();
    c.work.callEnded(ended(), false, team({ dispositionRequired: true }), false);
    expect(c.work.current()?.waitingForWrapUp).toBe(true);
    expect(c.work.ready()).toMatchObject({ ok: false, error: { code: 'invalid_state', message: 'Save the wrap-up with a disposition first: the team asks for one on every call' } });
    c.pass(61_000);
    expect(c.work.current()?.waitingForWrapUp).toBe(true);
    // Notes alone are not a disposition; another call's wrap-up is not this one's.
    c.work.wrapUpSaved('in:wacid.1', false);
    c.work.wrapUpSaved('in:other', true);
    expect(c.work.current()).toBeDefined();
    c.work.wrapUpSaved('in:wacid.1', true);
    expect(c.work.current()).toBeUndefined();
  });

  it('with a required disposition saved before the countdown ends, runs the countdown out; saved during the call, does not wait', () => {
    const c = clock();
    c.work.callEnded(ended(), false, team({ dispositionRequired: true }), false);
    c.pass(10_000);
    c.work.wrapUpSaved('in:wacid.1', true);
    expect(c.work.current()?.waitingForWrapUp).toBe(false);
    expect(c.work.ready()).toEqual({ ok: true, value: null });

    c.work.callEnded(ended({ localId: 'in:wacid.2' }), false, team({ dispositionRequired: true }), true);
    expect(c.work.current()?.waitingForWrapUp).toBe(false);
    c.pass(60_000);
    expect(c.work.current()).toBeUndefined();

    // No countdown, but a disposition to give: after-call work until it is saved.
    c.work.callEnded(ended({ localId: 'in:wacid.3' }), false, team({ dispositionRequired: true, afterCallWorkSeconds: 0 }), false);
    expect(c.work.current()?.waitingForWrapUp).toBe(true);
    c.pass(5_000);
    c.work.wrapUpSaved('in:wacid.3', true);
    expect(c.work.current()).toBeUndefined();
  });
});
