// The desk settings' rules: a refusal lands next to the shortcut it names, only edited shortcuts are
// sent, a global shortcut another application holds is named for its field, and "Start at login" is
// offered only where Electron has login items.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { applyPreferencesPatch, DEFAULT_PREFERENCES } from '../../../shared/preferences';
import { ok } from '../../../shared/result';
import type { MediaControls } from '../../../renderer/app/call-actions';
import { ControllersContext } from '../../../renderer/app/controllers-context';
import { createControllers } from '../../../renderer/app/controllers';
import { permanentLink } from '../../../renderer/bridge/host-link';
import { DeskSettings, offersStartAtLogin, shortcutOfError, shortcutsPatch, takenShortcutText } from '../../../renderer/components/DeskSettings';
import { appStore, resetStore } from '../../../renderer/store/store';
import { fakeApi } from './fake-api';

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

describe('a global shortcut another application holds', () => {
  test('is named for its own action while it is the saved combination', () => {
    const refused = [{ action: 'decline' as const, accelerator: 'Ctrl+Shift+D' }];
    expect(takenShortcutText(refused, 'decline', 'Ctrl+Shift+D')).toBe('Ctrl+Shift+D is taken by another application: it works only while the softphone has the focus');
    expect(takenShortcutText(refused, 'answer', 'Ctrl+Shift+A')).toBeUndefined();
    // Saved again since: the list that follows will say whether the new one is taken.
    expect(takenShortcutText(refused, 'decline', 'Ctrl+Alt+D')).toBeUndefined();
    expect(takenShortcutText([], 'decline', 'Ctrl+Shift+D')).toBeUndefined();
  });
});

describe('"Start at login"', () => {
  test('is offered on macOS and Windows, not on Linux (Electron has no login items there)', () => {
    expect(offersStartAtLogin('MacIntel')).toBe(true);
    expect(offersStartAtLogin('Win32')).toBe(true);
    expect(offersStartAtLogin('Linux x86_64')).toBe(false);
    expect(offersStartAtLogin('Linux aarch64')).toBe(false);
  });
});

describe('the rendered desk settings', () => {
  const engine: MediaControls = {
    onCall: () => undefined,
    reconcile: () => undefined,
    answerFor: async () => ok({ sdp: 'v=0\r\n' }),
    connect: () => undefined,
    prepareOutgoing: async () => ok({ sdp: 'v=0\r\n' }),
    onFact: () => () => undefined,
    onCondition: () => () => undefined,
    onCallQuality: () => () => undefined,
    noteTiming: () => undefined,
    close: () => undefined,
    closeAll: () => undefined,
    setMuted: () => undefined,
    sendDtmf: () => false,
    has: () => false,
    levels: async () => ({ mic: 0, customer: 0 }),
  };
  const render = (hostKind: 'electron' | 'browser'): string => {
    const { controllers } = createControllers({ api: fakeApi({}).api, link: permanentLink(), store: appStore, engine, hostKind });
    return renderToStaticMarkup(createElement(ControllersContext.Provider, { value: controllers }, createElement(DeskSettings)));
  };

  beforeEach(() => {
    resetStore();
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  test('"Start at login" shows in Electron on Windows, not on Linux, never in the browser', () => {
    // The browser host's part reads the page's address.
    vi.stubGlobal('location', { origin: 'http://127.0.0.1:5170', port: '5170' });
    vi.stubGlobal('navigator', { platform: 'Win32' });
    expect(render('electron')).toContain('Start at login');
    expect(render('browser')).not.toContain('Start at login');
    vi.stubGlobal('navigator', { platform: 'Linux x86_64' });
    const linux = render('electron');
    expect(linux).not.toContain('Start at login');
    expect(linux).toContain('Quit when the window is closed');
    expect(linux).toContain('Global shortcuts');
  });
});
