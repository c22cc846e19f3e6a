// The desk settings' rules: a refusal lands next to the shortcut it names, and only edited shortcuts are sent.
import { describe, expect, test } from 'vitest';
import { applyPreferencesPatch, DEFAULT_PREFERENCES } from '../../../shared/preferences';
import { shortcutOfError, shortcutsPatch } from '../../../renderer/components/DeskSettings';

describe('a refused shortcut', () => {
  test('is placed next to the field the main process names', () => {
    const taken = applyPreferencesPatch(DEFAULT_PREFERENCES, { shortcuts: { mute: 'Ctrl+Shift+A' } });
    expect(taken.ok).toBe(false);
    if (!taken.ok) {
      expect(taken.error.message).toContain('shortcuts.mute');
      expect(shortcutOfError(taken.error)).toBe('mute');
    }
    const reserved = applyPreferencesPatch(DEFAULT_PREFERENCES, { shortcuts: { hangUp: 'ctrl+shift+i' } });
    expect(!reserved.ok && shortcutOfError(reserved.error)).toBe('hangUp');
    // Without the field (an older main process), the message's own start names it.
    expect(shortcutOfError({ message: 'shortcuts.decline (Decline): needs Ctrl, Alt or Meta' })).toBe('decline');
    expect(shortcutOfError({ message: 'The connection to the softphone service was closed' })).toBeUndefined();
    expect(shortcutOfError({ field: 'missedSeenAt', message: 'missedSeenAt: must be a time' })).toBeUndefined();
  });
});

describe('the shortcuts patch', () => {
  test('carries only what the agent edited', () => {
    expect(shortcutsPatch({})).toEqual({});
    expect(shortcutsPatch({ mute: 'Alt+M', answer: undefined })).toEqual({ mute: 'Alt+M' });
    expect(shortcutsPatch({ answer: 'Ctrl+Alt+A', decline: 'Ctrl+Alt+D', hangUp: 'Ctrl+Alt+H', mute: 'Ctrl+Alt+M' })).toEqual({
      answer: 'Ctrl+Alt+A',
      decline: 'Ctrl+Alt+D',
      hangUp: 'Ctrl+Alt+H',
      mute: 'Ctrl+Alt+M',
    });
  });
});
