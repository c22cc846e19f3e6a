// The keyboard shortcuts (preferences.shortcuts): one dispatcher for the keys pressed in this window
// and for the Electron host's global shortcuts and notification buttons (the shortcutPressed push), so
// all do exactly what the buttons do, through CallActions. It also keeps the host's list of global
// shortcuts another application holds (shortcutsRefused) for Settings.
import type { SoftphoneApi, Unsubscribe } from '../../shared/api';
import { createLogger } from '../../shared/log';
import { SHORTCUT_ACTIONS, shortcutOfKeyEvent, type Preferences, type ShortcutAction } from '../../shared/preferences';
import type { StoreApi } from 'zustand/vanilla';
import { parsePush } from '../bridge/payload-schemas';
import { currentCall, ringingCalls } from '../store/call-list';
import { shortcutStatusStore } from '../store/shortcut-status';
import type { AppState } from '../store/store';
import type { CallActions } from './call-actions';

const log = createLogger('shortcuts');

/** Marks an element whose key presses are being recorded as a shortcut (the settings' fields): the dispatcher leaves them alone. */
export const SHORTCUT_RECORDER_ATTRIBUTE = 'data-shortcut-recorder';

/** The part of a KeyboardEvent the dispatcher reads and acts on. */
export interface ShortcutKeyEvent {
  key: string;
  code?: string;
  ctrlKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
  metaKey: boolean;
  repeat?: boolean;
  target?: unknown;
  preventDefault(): void;
}

/** Where key presses come from: the window. */
export interface KeySource {
  addEventListener(type: 'keydown', listener: (ev: ShortcutKeyEvent) => void, options: { capture: boolean }): void;
  removeEventListener(type: 'keydown', listener: (ev: ShortcutKeyEvent) => void, options: { capture: boolean }): void;
}

export interface ShortcutsDeps {
  store: StoreApi<AppState>;
  calls: Pick<CallActions, 'answer' | 'decline' | 'hangUp' | 'toggleMute'>;
  api: Pick<SoftphoneApi, 'onShortcutPressed' | 'onShortcutsRefused'>;
  /** The window; absent where there is none (the push is still followed). */
  keys?: KeySource | undefined;
  now?: () => number;
}

/** The action a key press stands for under the agent's shortcuts, if any. */
export function actionOfKey(ev: Omit<ShortcutKeyEvent, 'preventDefault'>, shortcuts: Preferences['shortcuts']): ShortcutAction | undefined {
  const combo = shortcutOfKeyEvent(ev);
  if (combo === undefined) return undefined;
  return SHORTCUT_ACTIONS.find((a) => shortcuts[a] === combo);
}

/**
 * Does what the action's button does: answer and decline act on the ringing call that has waited
 * longest (the first card), hang up and mute on the call the call panel shows. With `localId` (a
 * notification's button names its call) it acts on that call only: answer and decline while it
 * still rings, hang up and mute until it has ended. Returns the call it acted on, or undefined when
 * there was none (then nothing happens).
 */
export function runShortcut(action: ShortcutAction, deps: Pick<ShortcutsDeps, 'store' | 'calls' | 'now'>, localId?: string): string | undefined {
  const calls = deps.store.getState().calls;
  switch (action) {
    case 'answer':
    case 'decline': {
      // A notification can be pressed after its call stopped ringing (answered elsewhere, given up):
      // then the press is stale, and another call that rings now is not the one the agent chose.
      const ringing = localId === undefined ? ringingCalls(calls)[0] : ringingCalls(calls).find((c) => c.localId === localId);
      if (!ringing) return undefined;
      void (action === 'answer' ? deps.calls.answer(ringing.localId) : deps.calls.decline(ringing.localId));
      return ringing.localId;
    }
    case 'hangUp':
    case 'mute': {
      const call = localId === undefined ? currentCall(calls, (deps.now ?? Date.now)()) : calls[localId];
      // An ended call's outcome stays on the panel for a moment; there is nothing left to act on.
      if (!call || call.phase === 'ended') return undefined;
      if (action === 'hangUp') void deps.calls.hangUp(call.localId);
      else void deps.calls.toggleMute(call.localId);
      return call.localId;
    }
  }
}

function isRecorder(target: unknown): boolean {
  const el = target as { closest?: (selector: string) => unknown } | null | undefined;
  return typeof el?.closest === 'function' && el.closest(`[${SHORTCUT_RECORDER_ATTRIBUTE}]`) !== null;
}

/** Listens for the shortcuts in the window and for the host's global ones (and their refusals); the returned function stops all. */
export function installShortcuts(deps: ShortcutsDeps): Unsubscribe {
  const stops: Unsubscribe[] = [];
  const keys = deps.keys;
  if (keys) {
    const onKeyDown = (ev: ShortcutKeyEvent): void => {
      // A held key repeats: one press is one action (a held Mute would flicker on and off).
      if (ev.repeat || isRecorder(ev.target)) return;
      const action = actionOfKey(ev, deps.store.getState().preferences.shortcuts);
      if (action === undefined) return;
      // The combination belongs to the softphone while it has the focus, whether or not there is a call to act on.
      ev.preventDefault();
      runShortcut(action, deps);
    };
    // The capture phase on the window: a shortcut works while the focus is in a text field, before
    // the field (or anything that stops the event's propagation) sees it.
    const options = { capture: true };
    keys.addEventListener('keydown', onKeyDown, options);
    stops.push(() => keys.removeEventListener('keydown', onKeyDown, options));
  }
  stops.push(
    deps.api.onShortcutPressed((payload: unknown) => {
      const parsed = parsePush('shortcutPressed', payload);
      if (!parsed.ok) {
        log.warn('dropped a malformed push', { push: 'shortcutPressed', problem: parsed.error.message });
        return;
      }
      const { action, localId } = parsed.value;
      if (runShortcut(action, deps, localId) === undefined && localId !== undefined) log.info('a shortcut for a call that no longer rings was ignored', { action, localId });
    }),
  );
  stops.push(
    deps.api.onShortcutsRefused((payload: unknown) => {
      const parsed = parsePush('shortcutsRefused', payload);
      if (!parsed.ok) {
        log.warn('dropped a malformed push', { push: 'shortcutsRefused', problem: parsed.error.message });
        return;
      }
      shortcutStatusStore.getState().setRefused(parsed.value.refused);
    }),
  );
  return () => {
    for (const stop of stops.splice(0)) stop();
  };
}
