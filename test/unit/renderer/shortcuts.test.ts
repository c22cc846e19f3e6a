// The keyboard shortcuts' dispatcher: a key press in the window (in the capture phase, so a text
// field with the focus does not swallow it) or the host's shortcutPressed push does what the
// button does, on the right call, through CallActions.
import { beforeEach, describe, expect, test } from 'vitest';
import { DEFAULT_PREFERENCES, type ShortcutAction } from '../../../shared/preferences';
import { ok } from '../../../shared/result';
import { createControllers } from '../../../renderer/app/controllers';
import { permanentLink } from '../../../renderer/bridge/host-link';
import { installShortcuts, runShortcut, SHORTCUT_RECORDER_ATTRIBUTE, type KeySource, type ShortcutKeyEvent, type ShortcutsDeps } from '../../../renderer/app/shortcuts';
import { appStore, resetStore } from '../../../renderer/store/store';
import { resetShortcutStatusStore, shortcutStatusStore } from '../../../renderer/store/shortcut-status';
import { fakeApi } from './fake-api';
import { active, dialing, ended, idleMediaControls, ringing, T0 } from './fixtures';

/** CallActions as far as the shortcuts use it: records what it was asked to do. */
function recordingCalls(): ShortcutsDeps['calls'] & { done: string[] } {
  const done: string[] = [];
  return {
    done,
    answer: async (localId) => void done.push(`answer ${localId}`),
    decline: async (localId) => void done.push(`decline ${localId}`),
    hangUp: async (localId) => void done.push(`hangUp ${localId}`),
    toggleMute: async (localId) => void done.push(`toggleMute ${localId}`),
  };
}

/** The window as the dispatcher sees it: keydown listeners, and a way to press keys. */
class FakeWindow implements KeySource {
  readonly listeners: { listener: (ev: ShortcutKeyEvent) => void; capture: boolean }[] = [];
  addEventListener(_type: 'keydown', listener: (ev: ShortcutKeyEvent) => void, options: { capture: boolean }): void {
    this.listeners.push({ listener, capture: options.capture });
  }
  removeEventListener(_type: 'keydown', listener: (ev: ShortcutKeyEvent) => void): void {
    const i = this.listeners.findIndex((l) => l.listener === listener);
    if (i >= 0) this.listeners.splice(i, 1);
  }
  /** "Ctrl+Shift+A" → the keydown a keyboard makes; returns whether the page's default was prevented. */
  press(combo: string, extra: Partial<ShortcutKeyEvent> = {}): boolean {
    const parts = combo.split('+');
    const key = parts[parts.length - 1]!;
    let prevented = false;
    const ev: ShortcutKeyEvent = {
      key: parts.includes('Shift') ? key.toUpperCase() : key.toLowerCase(),
      code: /^[A-Z]$/.test(key) ? `Key${key}` : key,
      ctrlKey: parts.includes('Ctrl'),
      altKey: parts.includes('Alt'),
      shiftKey: parts.includes('Shift'),
      metaKey: parts.includes('Meta'),
      preventDefault: () => {
        prevented = true;
      },
      ...extra,
    };
    for (const { listener } of [...this.listeners]) listener(ev);
    return prevented;
  }
}

let keys: FakeWindow;
let calls: ReturnType<typeof recordingCalls>;
let host: ReturnType<typeof fakeApi>;
let stop: () => void;

beforeEach(() => {
  resetStore();
  resetShortcutStatusStore();
  keys = new FakeWindow();
  calls = recordingCalls();
  host = fakeApi({});
  stop = installShortcuts({ store: appStore, calls, api: host.api, keys, now: () => T0 + 20_000 });
  return () => stop();
});

describe('keys in the window', () => {
  test('listens in the capture phase, so a focused text field does not swallow the shortcut; stopping removes it and the push listener', () => {
    expect(keys.listeners).toHaveLength(1);
    expect(keys.listeners[0]!.capture).toBe(true);
    expect(host.listeners('shortcutPressed')).toBe(1);
    expect(host.listeners('shortcutsRefused')).toBe(1);
    stop();
    expect(keys.listeners).toHaveLength(0);
    expect(host.listeners('shortcutPressed')).toBe(0);
    expect(host.listeners('shortcutsRefused')).toBe(0);
  });

  test('Ctrl+Shift+A answers and Ctrl+Shift+D declines the ringing call that has waited longest', () => {
    appStore.getState().applyCall(ringing('late', T0 + 5_000));
    appStore.getState().applyCall(ringing('early', T0));
    expect(keys.press('Ctrl+Shift+A')).toBe(true);
    expect(keys.press('Ctrl+Shift+D')).toBe(true);
    expect(calls.done).toEqual(['answer in:early', 'decline in:early']);
  });

  test('Ctrl+Shift+H hangs up and Ctrl+Shift+M toggles mute on the current call, not on one that rings beside it', () => {
    appStore.getState().applyCall(active('talking', T0));
    appStore.getState().applyCall(ringing('waiting', T0 + 1_000));
    keys.press('Ctrl+Shift+M');
    keys.press('Ctrl+Shift+H');
    expect(calls.done).toEqual(['toggleMute in:talking', 'hangUp in:talking']);
  });

  test('an outgoing call that is still dialling can be hung up', () => {
    appStore.getState().applyCall(dialing('out-7', T0));
    keys.press('Ctrl+Shift+H');
    expect(calls.done).toEqual(['hangUp out-7']);
  });

  test('with no call to act on nothing happens, though the combination stays the softphone’s', () => {
    expect(keys.press('Ctrl+Shift+A')).toBe(true);
    expect(keys.press('Ctrl+Shift+H')).toBe(true);
    // A call that just ended is still on the panel, but there is nothing left to hang up or mute.
    appStore.getState().applyCall(ended('gone', T0, T0 + 18_000));
    keys.press('Ctrl+Shift+H');
    keys.press('Ctrl+Shift+M');
    expect(calls.done).toEqual([]);
  });

  test('follows the agent’s own shortcuts: the default no longer acts once changed', () => {
    appStore.getState().applyCall(active('talking', T0));
    appStore.getState().setPreferences({ ...DEFAULT_PREFERENCES, shortcuts: { ...DEFAULT_PREFERENCES.shortcuts, mute: 'Alt+F9' } });
    expect(keys.press('Ctrl+Shift+M')).toBe(false);
    expect(keys.press('Alt+F9', { key: 'F9', code: 'F9' })).toBe(true);
    expect(calls.done).toEqual(['toggleMute in:talking']);
  });

  test('the physical key counts, whatever the layout makes of it', () => {
    appStore.getState().applyCall(ringing('r', T0));
    keys.press('Ctrl+Shift+A', { key: 'Ä' });
    expect(calls.done).toEqual(['answer in:r']);
  });

  test('ignores a held key’s repeats, other keys, and a field that is recording a shortcut', () => {
    appStore.getState().applyCall(active('talking', T0));
    expect(keys.press('Ctrl+Shift+M', { repeat: true })).toBe(false);
    expect(keys.press('Ctrl+M')).toBe(false);
    expect(keys.press('Shift+M')).toBe(false);
    const recorder = { closest: (selector: string) => (selector === `[${SHORTCUT_RECORDER_ATTRIBUTE}]` ? {} : null) };
    expect(keys.press('Ctrl+Shift+M', { target: recorder })).toBe(false);
    const field = { closest: () => null };
    expect(keys.press('Ctrl+Shift+M', { target: field })).toBe(true);
    expect(calls.done).toEqual(['toggleMute in:talking']);
  });
});

describe('the host’s global shortcuts (shortcutPressed)', () => {
  test('a push does what the key does; a malformed one is dropped', () => {
    appStore.getState().applyCall(ringing('r', T0));
    host.push('shortcutPressed', { action: 'answer' });
    host.push('shortcutPressed', { action: 'explode' });
    host.push('shortcutPressed', 'answer');
    expect(calls.done).toEqual(['answer in:r']);
  });

  test('a notification’s button names its call: that one is answered or declined, not the one that waited longest', () => {
    appStore.getState().applyCall(ringing('early', T0));
    appStore.getState().applyCall(ringing('late', T0 + 5_000));
    host.push('shortcutPressed', { action: 'answer', localId: 'in:late' });
    host.push('shortcutPressed', { action: 'decline', localId: 'in:early' });
    expect(calls.done).toEqual(['answer in:late', 'decline in:early']);
  });

  test('a button pressed for a call that no longer rings does nothing, though another call rings', () => {
    appStore.getState().applyCall(active('taken', T0));
    appStore.getState().applyCall(ringing('other', T0 + 1_000));
    host.push('shortcutPressed', { action: 'answer', localId: 'in:taken' });
    host.push('shortcutPressed', { action: 'decline', localId: 'in:gone' });
    host.push('shortcutPressed', { action: 'answer', localId: '' });
    expect(calls.done).toEqual([]);
  });
});

describe('the host’s refused global shortcuts (shortcutsRefused)', () => {
  test('are kept for Settings, replaced by each push; a malformed one is dropped', () => {
    expect(shortcutStatusStore.getState().refused).toEqual([]);
    host.push('shortcutsRefused', { refused: [{ action: 'decline', accelerator: 'Ctrl+Shift+D' }] });
    expect(shortcutStatusStore.getState().refused).toEqual([{ action: 'decline', accelerator: 'Ctrl+Shift+D' }]);
    host.push('shortcutsRefused', { refused: [{ action: 'explode', accelerator: 'Ctrl+Shift+X' }] });
    host.push('shortcutsRefused', ['Ctrl+Shift+D']);
    expect(shortcutStatusStore.getState().refused).toEqual([{ action: 'decline', accelerator: 'Ctrl+Shift+D' }]);
    host.push('shortcutsRefused', { refused: [] });
    expect(shortcutStatusStore.getState().refused).toEqual([]);
  });
});

describe('runShortcut', () => {
  test('returns the call it acted on, or undefined', () => {
    const deps = { store: appStore, calls, now: () => T0 + 20_000 };
    const all: ShortcutAction[] = ['answer', 'decline', 'hangUp', 'mute'];
    expect(all.map((a) => runShortcut(a, deps))).toEqual([undefined, undefined, undefined, undefined]);
    appStore.getState().applyCall(ringing('r', T0));
    appStore.getState().applyCall(active('a', T0));
    expect(all.map((a) => runShortcut(a, deps))).toEqual(['in:r', 'in:r', 'in:a', 'in:a']);
    // Named calls: answer and decline only a ringing one, hang up and mute any call not ended.
    appStore.getState().applyCall(ended('e', T0, T0 + 1_000));
    expect(all.map((a) => runShortcut(a, deps, 'in:a'))).toEqual([undefined, undefined, 'in:a', 'in:a']);
    expect(all.map((a) => runShortcut(a, deps, 'in:r'))).toEqual(['in:r', 'in:r', 'in:r', 'in:r']);
    expect(all.map((a) => runShortcut(a, deps, 'in:e'))).toEqual([undefined, undefined, undefined, undefined]);
  });
});

describe('as createControllers starts them', () => {
  test('the window’s keys and the push reach CallActions; stopping removes both; the host kind is passed on', async () => {
    stop();
    const engine = idleMediaControls();
    const api = fakeApi({ declineCall: () => ok(null), setMuted: () => ok(null) });
    const softphone = createControllers({ api: api.api, link: permanentLink(), store: appStore, engine, keys, hostKind: 'electron' });
    expect(softphone.controllers.hostKind).toBe('electron');
    const stopAll = softphone.start();
    try {
      appStore.getState().applyCall(active('talking', T0));
      keys.press('Ctrl+Shift+M');
      // The mute is the call's: the key asks main, as the button does.
      expect(api.calls.filter((c) => c.name === 'setMuted')).toEqual([{ name: 'setMuted', params: { localId: 'in:talking', muted: true } }]);
      appStore.getState().applyCall(ringing('r', T0 + 1_000));
      api.push('shortcutPressed', { action: 'decline' });
      await new Promise((r) => setTimeout(r, 0));
      expect(api.calls.filter((c) => c.name === 'declineCall')).toEqual([{ name: 'declineCall', params: { localId: 'in:r' } }]);
    } finally {
      stopAll();
    }
    expect(keys.listeners).toHaveLength(0);
    expect(api.listeners('shortcutPressed')).toBe(0);
    const plain = createControllers({ api: api.api, link: permanentLink(), store: appStore, engine });
    expect(plain.controllers.hostKind).toBe('browser');
  });
});
