import { describe, expect, it } from 'vitest';
import { OUTCOME_VISIBLE_MS, currentCall, mergeCall, mergeCalls, mergeSnapshotCalls, ringingCalls } from '../../../renderer/store/call-list';
import { hasBusyCall as hasBusyCallIn, type CallState } from '../../../shared/call-state';

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

  it('counts only calls the agent is on or placing as busy', () => {
    expect(hasBusyCall(byId(ringing(), ended('b')))).toBe(false);
    expect(hasBusyCall(byId(dialing()))).toBe(true);
    expect(hasBusyCall(byId(answering()))).toBe(true);
  });
});
