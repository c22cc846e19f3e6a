// An incoming call must reach an agent who is typing in another application, without taking their
// keyboard away. While it rings: a hidden or minimised window is shown without focus (showInactive,
// never focus: the agent's next keystrokes must not land in the softphone), the frame flashes until
// it stops ringing, and, while the window is not in front, a system notification names the caller.
// Where the OS offers notification buttons (macOS, Windows) they are Answer and Decline; elsewhere a
// click on the notification brings the window forward. It closes by itself once the call stops
// ringing.
import { Notification, type BrowserWindow, type NotificationConstructorOptions } from 'electron';
import type { SoftphoneBackend, Unsubscribe } from '../../shared/api';
import type { CallState } from '../../shared/call-state';
import { formatPhoneNumber } from '../../shared/phone';

export type NotificationAnswer = 'answer' | 'decline';

export interface IncomingCallNotifierOptions {
  backend: Pick<SoftphoneBackend, 'subscribe'>;
  getWindow: () => BrowserWindow | undefined;
  /** Brings the window to the front with focus: the agent clicked the notification to go there. */
  showWindow: () => void;
  /**
   * Answer or Decline pressed on the notification. The answer's SDP can only be made in the window
   * (the renderer owns media), so the window is asked to do it, as for the keyboard shortcut.
   */
  pressed: (action: NotificationAnswer) => void;
  platform?: NodeJS.Platform;
}

/** Notification buttons: Electron supports them on macOS and Windows only. */
const ACTIONS: ReadonlyArray<{ action: NotificationAnswer; text: string }> = [
  { action: 'answer', text: 'Answer' },
  { action: 'decline', text: 'Decline' },
];

function callerOf(call: CallState): string {
  const { name, number } = call.peer;
  const formatted = number ? formatPhoneNumber(number) : undefined;
  if (name && formatted) return `${name} (${formatted})`;
  return name ?? formatted ?? 'Unknown caller';
}

/** Puts a hidden or minimised window on screen without taking the focus from the agent's typing. */
export function revealWithoutFocus(window: BrowserWindow): void {
  if (!window.isVisible() || window.isMinimized()) window.showInactive();
}

export function notifyIncomingCalls(options: IncomingCallNotifierOptions): Unsubscribe {
  const platform = options.platform ?? process.platform;
  const withActions = platform === 'darwin' || platform === 'win32';
  const ringing = new Map<string, Notification | undefined>();
  let flashing: BrowserWindow | undefined;

  const liveWindow = (): BrowserWindow | undefined => {
    const window = options.getWindow();
    return window && !window.isDestroyed() ? window : undefined;
  };

  const stopFlashing = (): void => {
    if (flashing && !flashing.isDestroyed()) flashing.flashFrame(false);
    flashing = undefined;
  };

  const notify = (call: CallState): Notification | undefined => {
    const settings: NotificationConstructorOptions = { title: 'Incoming call', body: callerOf(call), urgency: 'critical', timeoutType: 'never' };
    if (withActions) settings.actions = ACTIONS.map(({ text }) => ({ type: 'button', text }));
    const notification = new Notification(settings);
    notification.on('click', () => options.showWindow());
    notification.on('action', (event) => {
      const chosen = ACTIONS[event.actionIndex];
      if (chosen === undefined) return;
      const window = liveWindow();
      if (window) revealWithoutFocus(window);
      options.pressed(chosen.action);
    });
    notification.show();
    return notification;
  };

  const unsubscribe = options.backend.subscribe((push) => {
    if (push.name !== 'callChanged') return;
    const call = push.payload;
    if (call.phase !== 'ringing' || call.direction !== 'incoming') {
      if (!ringing.has(call.localId)) return;
      ringing.get(call.localId)?.close();
      ringing.delete(call.localId);
      if (ringing.size === 0) stopFlashing();
      return;
    }
    if (ringing.has(call.localId)) return;
    const window = liveWindow();
    const inFront = window !== undefined && window.isVisible() && !window.isMinimized() && window.isFocused();
    if (window) revealWithoutFocus(window);
    if (window && !inFront) {
      window.flashFrame(true);
      flashing = window;
    }
    ringing.set(call.localId, !inFront && Notification.isSupported() ? notify(call) : undefined);
  });

  return () => {
    unsubscribe();
    for (const notification of ringing.values()) notification?.close();
    ringing.clear();
    stopFlashing();
  };
}
