import { describe, expect, it } from 'vitest';
import { OUTCOME_VISIBLE_MS, currentCall, hasCallInHand, heldCalls, mergeCall, mergeCalls, mergeSnapshotCalls, ringingCalls } from '../../../renderer/store/call-list';
import { canTakeAnother, hasBusyCall as hasBusyCallIn, type CallState } from '../../../shared/call-state';

const hasBusyCall = (calls: Record<string, CallState>): boolean => hasBusyCallIn(Object.values(calls));
import { T0, active, answering, dialing, ended, ringing } from './fixtures';

const byId = (...calls: CallState[]): Record<string, CallState> => Object.fromEntries(calls.map((c) => [c.localId, c]));

describe('mergeCall', () => {
  it('moves forward', () => {
    expect(mergeCall(ringing(), answering())).toEqual(answering());
    expect(mergeCall(answering(), active())).toEqual(active());
    expect(mergeCall(undefined, ringing())).toEqual(ringing());
  });

  it('never moves backwards: a late ringing push does not revive an answered or ended call', () => {
    const done = ended();
    expect(mergeCall(done, ringing())).toBe(done);
    const talking = active();
    expect(mergeCall(talking, answering())).toBe(talking);
  });

  it('takes the newer version within the same phase (a late terminate can correct the duration)', () => {
    const first = ended();
    const corrected = { ...ended(), durationSec: 42 } as CallState;
    expect(mergeCall(first, corrected)).toBe(corrected);
  });

  it('keeps the record object when nothing changes', () => {
    const calls = byId(active());
    expect(mergeCalls(calls, ringing())).toBe(calls);
    expect(mergeCalls(calls, ended())).not.toBe(calls);
  });
});

describe('mergeSnapshotCalls', () => {
  it('drops live calls the snapshot no longer has, keeps ended ones for their outcome', () => {
    const merged = mergeSnapshotCalls(byId(active('a'), ended('b'), ringing('c')), [ringing('d')]);
    expect(Object.keys(merged).sort()).toEqual(['in:b', 'in:d']);
  });

  it('does not let an older snapshot undo a newer push', () => {
    const merged = mergeSnapshotCalls(byId(ended('a')), [active('a')]);
    expect(merged['in:a']?.phase).toBe('ended');
  });
});

describe('selections', () => {
  it('lists ringing calls oldest first', () => {
    const calls = byId(ringing('late', T0 + 5000), active('x'), ringing('early', T0));
    expect(ringingCalls(calls).map((c) => c.callId)).toEqual(['early', 'late']);
  });

  it('shows the newest live call that is not ringing on the panel', () => {
    const calls = byId(ringing('r', T0 + 9000), active('old', T0), dialing('out-2', T0 + 1000));
    expect(currentCall(calls, T0 + 20_000)?.localId).toBe('out-2');
  });

  it('shows a call that just ended, briefly', () => {
    const calls = byId(ended('a', T0, T0 + 10_000));
    expect(currentCall(calls, T0 + 10_000 + OUTCOME_VISIBLE_MS)?.localId).toBe('in:a');
    expect(currentCall(calls, T0 + 10_001 + OUTCOME_VISIBLE_MS)).toBeUndefined();
  });

  it('prefers a live call to an outcome', () => {
    const calls = byId(ended('a', T0, T0 + 10_000), active('b', T0 - 60_000));
    expect(currentCall(calls, T0 + 10_500)?.localId).toBe('in:b');
  });

  it('shows the call in hand on the panel, the held one beside it; a call alone on hold is the panel’s', () => {
    const onHold = (id: string, at: number): CallState => ({ ...(active(id, at) as Extract<CallState, { phase: 'active' }>), heldSince: at + 5_000 });
    // The held call is the newer one: the panel still shows the call the agent talks on.
    const two = byId(active('talking', T0), onHold('waiting', T0 + 1_000));
    expect(currentCall(two, T0 + 20_000)?.localId).toBe('in:talking');
    expect(heldCalls(two, currentCall(two, T0 + 20_000)?.localId).map((c) => c.localId)).toEqual(['in:waiting']);
    const alone = byId(onHold('waiting', T0), ended('gone', T0, T0 + 10_000));
    expect(currentCall(alone, T0 + 11_000)?.localId).toBe('in:waiting');
    expect(heldCalls(alone, currentCall(alone, T0 + 11_000)?.localId)).toEqual([]);
    // A second call can be taken beside one connected call, never beside one still connecting or two.
    expect(canTakeAnother(Object.values(byId(ringing())))).toBe(true);
    expect(canTakeAnother(Object.values(byId(active('a'))))).toBe(true);
    expect(canTakeAnother(Object.values(byId(answering())))).toBe(false);
    expect(canTakeAnother(Object.values(two))).toBe(false);
    expect(hasCallInHand(byId(ringing(), ended('b')))).toBe(false);
    expect(hasBusyCall(byId(onHold('w', T0)))).toBe(true);
    // A call alone on hold is busy but not in hand: a new call is answered without holding anything.
    expect(hasCallInHand(byId(onHold('w', T0)))).toBe(false);
    expect(hasCallInHand(two)).toBe(true);
  });

  it('counts only calls the agent is on or placing as busy', () => {
    expect(hasBusyCall(byId(ringing(), ended('b')))).toBe(false);
    expect(hasBusyCall(byId(dialing()))).toBe(true);
    expect(hasBusyCall(byId(answering()))).toBe(true);
  });
});
