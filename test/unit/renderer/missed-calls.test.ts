// The header's missed-call count and what looking marks seen, and the recent calls' "Call back"
// names: the rules the components show.
import { describe, expect, test } from 'vitest';
import type { HistoryEntry } from '../../../shared/history';
import { applyPreferencesPatch, DEFAULT_PREFERENCES } from '../../../shared/preferences';
import { missedCallsButton } from '../../../renderer/components/Header';
import { callBackLabel, seenPatchFor } from '../../../renderer/components/RecentCalls';
import { T0 } from './fixtures';

let n = 0;
const entry = (outcome: HistoryEntry['outcome'], endedAt: number, extra: Partial<HistoryEntry> = {}): HistoryEntry => ({
  localId: `in:${++n}`,
  direction: 'incoming',
  outcome,
  startedAt: endedAt - 30_000,
  endedAt,
  durationSec: 0,
  number: '447700900123',
  name: 'Amelia Hart',
  ...extra,
});

describe('the header’s missed calls', () => {
  test('counts incoming calls nobody answered since the agent last looked; nothing else', () => {
    const history = [
      entry('missed', T0 + 1_000),
      entry('missed', T0 + 5_000),
      entry('completed', T0 + 6_000),
      entry('declined', T0 + 7_000),
      entry('answered_elsewhere', T0 + 7_500),
      entry('no_answer', T0 + 8_000, { direction: 'outgoing', localId: 'out-1' }),
      entry('missed', T0 + 3_000),
    ];
    expect(missedCallsButton(history, 0)).toEqual({ text: '3 missed calls', seen: { missedSeenAt: T0 + 5_000 } });
    expect(missedCallsButton(history, T0 + 2_000)).toEqual({ text: '2 missed calls', seen: { missedSeenAt: T0 + 5_000 } });
    expect(missedCallsButton(history, T0 + 4_000)).toEqual({ text: '1 missed call', seen: { missedSeenAt: T0 + 5_000 } });
  });

  test('no button once they are seen, or when there were none', () => {
    const history = [entry('missed', T0 + 1_000), entry('completed', T0 + 9_000)];
    expect(missedCallsButton(history, T0 + 1_000)).toBeUndefined();
    expect(missedCallsButton([], 0)).toBeUndefined();
    expect(missedCallsButton([entry('completed', T0)], 0)).toBeUndefined();
  });

  test('looking marks seen up to the newest missed call’s own end: one missed after it still counts', () => {
    const first = [entry('missed', T0 + 1_000), entry('missed', T0 + 4_000)];
    const seen = seenPatchFor(first);
    expect(seen).toEqual({ missedSeenAt: T0 + 4_000 });
    expect(seenPatchFor([])).toBeUndefined();
    const applied = applyPreferencesPatch(DEFAULT_PREFERENCES, seen!);
    expect(applied.ok).toBe(true);
    const seenAt = applied.ok ? applied.value.missedSeenAt : 0;
    const later = [...first, entry('missed', T0 + 4_001)];
    expect(missedCallsButton(later, seenAt)?.text).toBe('1 missed call');
  });
});

describe('Call back', () => {
  test('names the customer, or the number when there is no name; nothing without a number', () => {
    expect(callBackLabel({ name: 'Amelia Hart', number: '447700900123' })).toBe('Call back Amelia Hart');
    expect(callBackLabel({ number: '442079460958' })).toBe('Call back +44 20 7946 0958');
    expect(callBackLabel({ name: '  ', number: '12025550101' })).toBe('Call back +1 202 555 0101');
    expect(callBackLabel({ name: 'Amelia Hart' })).toBeUndefined();
  });
});
