// The desk preferences' rules: shortcuts normalised and refused with the field and the reason,
// patches merged part by part, and the missed calls counted from the history.
import { describe, expect, it } from 'vitest';
import type { HistoryEntry } from '../../../shared/history';
import {
  applyPreferencesPatch,
  DEFAULT_PREFERENCES,
  missedCalls,
  missedCallsText,
  parseShortcut,
  preferencesPatchSchema,
  shortcutOfKeyEvent,
  type PreferencesPatch,
} from '../../../shared/preferences';

const patch = (p: PreferencesPatch) => applyPreferencesPatch(DEFAULT_PREFERENCES, preferencesPatchSchema.parse(p));

describe('parseShortcut', () => {
  it.each([
    ['Ctrl+Shift+A', 'Ctrl+Shift+A'],
    ['shift + ctrl + a', 'Ctrl+Shift+A'],
    ['Control+Alt+9', 'Ctrl+Alt+9'],
    ['cmd+shift+m', 'Shift+Meta+M'],
    ['F9', 'F9'],
    ['Alt+F2', 'Alt+F2'],
  ])('%s → %s', (typed, canonical) => {
    expect(parseShortcut(typed)).toEqual({ ok: true, value: canonical });
  });

  it.each([
    ['', 'is empty'],
    ['Ctrl+Shift', 'has no key'],
    ['Ctrl+A+B', 'has two keys'],
    ['Ctrl+Enter', '"ENTER" is not a key it can use'],
    ['Shift+A', 'needs Ctrl, Alt or Meta'],
    ['A', 'needs Ctrl, Alt or Meta'],
  ])('refuses %j: %s', (typed, reason) => {
    const parsed = parseShortcut(typed);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.message).toContain(reason);
  });
});

describe('shortcutOfKeyEvent', () => {
  const key = (over: Partial<Parameters<typeof shortcutOfKeyEvent>[0]>) => ({ key: 'a', code: 'KeyA', ctrlKey: false, altKey: false, shiftKey: false, metaKey: false, ...over });

  it('reads the physical key, whatever Shift or the layout make of it', () => {
    expect(shortcutOfKeyEvent(key({ key: 'A', ctrlKey: true, shiftKey: true }))).toBe('Ctrl+Shift+A');
    expect(shortcutOfKeyEvent(key({ key: 'ä', code: 'KeyA', ctrlKey: true }))).toBe('Ctrl+A');
    expect(shortcutOfKeyEvent(key({ key: '!', code: 'Digit1', ctrlKey: true, shiftKey: true }))).toBe('Ctrl+Shift+1');
    expect(shortcutOfKeyEvent(key({ key: 'F7', code: 'F7' }))).toBe('F7');
  });

  it('is nothing for plain typing or a modifier alone', () => {
    expect(shortcutOfKeyEvent(key({}))).toBeUndefined();
    expect(shortcutOfKeyEvent(key({ shiftKey: true, key: 'A' }))).toBeUndefined();
    expect(shortcutOfKeyEvent(key({ key: 'Control', code: 'ControlLeft', ctrlKey: true }))).toBeUndefined();
  });

  it('is nothing, without throwing, for a key event with no key or code (Chrome autofill sends them)', () => {
    const bare = { ctrlKey: false, altKey: false, shiftKey: false, metaKey: false };
    expect(() => shortcutOfKeyEvent(bare)).not.toThrow();
    expect(shortcutOfKeyEvent(bare)).toBeUndefined();
    expect(shortcutOfKeyEvent({ ...bare, ctrlKey: true, shiftKey: true })).toBeUndefined();
    // What such an event carries at run time, whatever its type says.
    expect(shortcutOfKeyEvent({ ...bare, ctrlKey: true, key: undefined, code: undefined })).toBeUndefined();
    // One of the two is enough for a real combination.
    expect(shortcutOfKeyEvent({ ...bare, ctrlKey: true, shiftKey: true, code: 'KeyA' })).toBe('Ctrl+Shift+A');
    expect(shortcutOfKeyEvent({ ...bare, ctrlKey: true, key: 'b' })).toBe('Ctrl+B');
  });
});

describe('applyPreferencesPatch', () => {
  it('changes only what the patch names', () => {
    const next = patch({ audio: { speaker: { id: 'hs', label: 'Headset' } }, quitOnClose: true });
    expect(next.ok && next.value).toEqual({ ...DEFAULT_PREFERENCES, audio: { ...DEFAULT_PREFERENCES.audio, speaker: { id: 'hs', label: 'Headset' } }, quitOnClose: true });
    const back = next.ok ? applyPreferencesPatch(next.value, preferencesPatchSchema.parse({ audio: { speaker: null } })) : next;
    expect(back.ok && back.value.audio.speaker).toBeNull();
  });

  it('normalises a shortcut', () => {
    const next = patch({ shortcuts: { mute: 'alt + ctrl + m' } });
    expect(next.ok && next.value.shortcuts).toEqual({ ...DEFAULT_PREFERENCES.shortcuts, mute: 'Ctrl+Alt+M' });
  });

  it('refuses an invalid shortcut, naming the field and the rule', () => {
    expect(patch({ shortcuts: { answer: 'Shift+A' } })).toMatchObject({
      ok: false,
      error: { code: 'invalid_input', field: 'shortcuts.answer', message: expect.stringContaining('needs Ctrl, Alt or Meta') },
    });
  });

  it('refuses a shortcut another action has, naming both', () => {
    expect(patch({ shortcuts: { mute: 'Ctrl+Shift+H' } })).toMatchObject({
      ok: false,
      error: { field: 'shortcuts.mute', message: 'shortcuts.mute (Mute): Ctrl+Shift+H is already the shortcut for Hang up' },
    });
    // Swapping two in one patch is fine.
    const swapped = patch({ shortcuts: { mute: 'Ctrl+Shift+H', hangUp: 'Ctrl+Shift+M' } });
    expect(swapped.ok && swapped.value.shortcuts).toMatchObject({ mute: 'Ctrl+Shift+H', hangUp: 'Ctrl+Shift+M' });
  });

  it('refuses a combination the window keeps for itself', () => {
    expect(patch({ shortcuts: { decline: 'ctrl+shift+i' } })).toMatchObject({
      ok: false,
      error: { field: 'shortcuts.decline', message: expect.stringContaining('Ctrl+Shift+I is kept for the developer tools') },
    });
  });

  it('never moves the missed-calls mark backwards', () => {
    const seen = applyPreferencesPatch({ ...DEFAULT_PREFERENCES, missedSeenAt: 500 }, preferencesPatchSchema.parse({ missedSeenAt: 100 }));
    expect(seen.ok && seen.value.missedSeenAt).toBe(500);
  });
});

describe('missedCalls', () => {
  const entry = (over: Partial<HistoryEntry>): HistoryEntry => ({
    localId: `in:${Math.random()}`,
    direction: 'incoming',
    number: '447700900123',
    outcome: 'missed',
    startedAt: 0,
    endedAt: 1_000,
    durationSec: 0,
    ...over,
  });

  it('counts incoming missed calls that ended after the mark', () => {
    const history = [
      entry({ endedAt: 900 }),
      entry({ endedAt: 1_100 }),
      entry({ endedAt: 1_200, outcome: 'completed' }),
      entry({ endedAt: 1_300, outcome: 'answered_elsewhere' }),
      entry({ endedAt: 1_400, direction: 'outgoing', outcome: 'no_answer' }),
      entry({ endedAt: 1_500 }),
    ];
    expect(missedCalls(history, 1_000).map((h) => h.endedAt)).toEqual([1_100, 1_500]);
    expect(missedCalls(history, 1_500)).toEqual([]);
  });

  it('says one missed call, several missed calls', () => {
    expect(missedCallsText(1)).toBe('1 missed call');
    expect(missedCallsText(2)).toBe('2 missed calls');
    expect(missedCallsText(12)).toBe('12 missed calls');
  });
});
