// An incoming call must reach an agent who is typing in another application, without taking their
// keyboard away. While it rings: a hidden or minimised window is shown without focus (showInactive,
// never focus: the agent's next keystrokes must not land in the softphone), a window behind others
// is raised above them (moveTop, still without focus), the frame flashes until it stops ringing,
// and, while the window is not in front, a system notification names the caller (a colleague's
// transfer or consult says so in its title, "Transfer from Ben", as the window's card does). A
// window in front when the ring starts is watched: once it loses the focus during the ring, the
// notification and the flash follow. Where the OS offers notification buttons (macOS, Windows) they
// are Answer and Decline, for that call only; elsewhere a click on the notification brings the
// window forward. It closes by itself once the call stops ringing. It is worded in the agent's
// language when it is raised.
import { Notification, type BrowserWindow, type NotificationConstructorOptions } from 'electron';
import type { SoftphoneBackend, Unsubscribe } from '../../shared/api';
import type { CallState } from '../../shared/call-state';
import { formatPhoneNumber } from '../../shared/phone';
import type { DesktopTexts } from './desktop-texts';

export type NotificationAnswer = 'answer' | 'decline';

export interface IncomingCallNotifierOptions {
  backend: Pick<SoftphoneBackend, 'subscribe'>;
  getWindow: () => BrowserWindow | undefined;
  /** Brings the window to the front with focus: the agent clicked the notification to go there. */
  showWindow: () => void;
  /**
   * Answer or Decline pressed on the notification of the call `localId`. The answer's SDP can only
   * be made in the window (the renderer owns media), so the window is asked to do it, as for the
   * keyboard shortcut, naming the call so that another one ringing beside it is left alone.
   */
  pressed: (action: NotificationAnswer, localId: string) => void;
  /** The texts in the agent's language now (the preference may change between two calls). */
  texts: () => DesktopTexts;
  platform?: NodeJS.Platform;
}

/** Notification buttons: Electron supports them on macOS and Windows only. */
const ACTIONS: ReadonlyArray<{ action: NotificationAnswer; text: 'incomingCall.answer' | 'incomingCall.decline' }> = [
  { action: 'answer', text: 'incomingCall.answer' },
  { action: 'decline', text: 'incomingCall.decline' },
];

function callerOf(call: CallState, texts: DesktopTexts): string {
  const { name, number } = call.peer;
  const formatted = number ? texts.ltr(formatPhoneNumber(number)) : undefined;
  if (name && formatted) return texts.t('incomingCall.caller', { name, number: formatted });
  return name ?? formatted ?? texts.t('incomingCall.unknownCaller');
}

/**
 * "Transfer from Ben" / "Consult from Ben" while a colleague's transfer or consult rings here (in the
 * window's words for it, its card's heading), "a colleague" where the relay named none; "Incoming
 * call" for any other ring. The body names the customer either way.
 */
function titleOf(call: CallState, texts: DesktopTexts): string {
  const transfer = call.transfer;
  if (transfer?.role !== 'to' || transfer.state !== 'ringing') return texts.t('incomingCall.title');
  const name = transfer.colleague !== undefined ? texts.name(transfer.colleague.name) : texts.call('transfer.aColleague');
  return texts.call(transfer.kind === 'consult' ? 'incoming.consultFrom' : 'incoming.transferFrom', { name });
}

/**
 * Puts the window on screen and above the other windows without taking the focus from the agent's
 * typing: a hidden or minimised one is shown inactive, one behind others (a CRM over it) is moved to
 * the top. Where the window manager refuses to raise a window that has no focus, moveTop does
 * nothing and the flash and the notification still say it rings.
 */
export function revealWithoutFocus(window: BrowserWindow): void {
  if (!window.isVisible() || window.isMinimized()) window.showInactive();
  if (!window.isFocused()) window.moveTop();
}

const isInFront = (window: BrowserWindow): boolean => window.isVisible() && !window.isMinimized() && window.isFocused();

export function notifyIncomingCalls(options: IncomingCallNotifierOptions): Unsubscribe {
  const platform = options.platform ?? process.platform;
  const withActions = platform === 'darwin' || platform === 'win32';
  /** The calls ringing now, with their notification once one was raised. */
  const ringing = new Map<string, { call: CallState; notification: Notification | undefined }>();
  let flashing: BrowserWindow | undefined;
  /** The window whose blur is watched while calls ring, and what it runs. */
  let watched: { window: BrowserWindow; onBlur: () => void } | undefined;

  const liveWindow = (): BrowserWindow | undefined => {
    const window = options.getWindow();
    return window && !window.isDestroyed() ? window : undefined;
  };

  const stopFlashing = (): void => {
    if (flashing && !flashing.isDestroyed()) flashing.flashFrame(false);
    flashing = undefined;
  };

  const stopWatching = (): void => {
    if (watched && !watched.window.isDestroyed()) watched.window.removeListener('blur', watched.onBlur);
    watched = undefined;
  };

  const notify = (call: CallState): Notification => {
    const texts = options.texts();
    const settings: NotificationConstructorOptions = { title: titleOf(call, texts), body: callerOf(call, texts), urgency: 'critical', timeoutType: 'never' };
    if (withActions) settings.actions = ACTIONS.map(({ text }) => ({ type: 'button', text: texts.t(text) }));
    const notification = new Notification(settings);
    notification.on('click', () => options.showWindow());
    notification.on('action', (event) => {
      const chosen = ACTIONS[event.actionIndex];
      if (chosen === undefined) return;
      const window = liveWindow();
      if (window) revealWithoutFocus(window);
      options.pressed(chosen.action, call.localId);
    });
    notification.show();
    return notification;
  };

  /** The window is not in front: flash it and notify every ringing call that has no notification yet. */
  const alertAway = (window: BrowserWindow | undefined): void => {
    if (window && flashing !== window) {
      stopFlashing();
      window.flashFrame(true);
      flashing = window;
    }
    if (!Notification.isSupported()) return;
    for (const entry of ringing.values()) entry.notification ??= notify(entry.call);
  };

  const watch = (window: BrowserWindow): void => {
    if (watched?.window === window) return;
    stopWatching();
    // The agent may switch to another application while it rings: from then on the window is not
    // in front, so they get what they would have got had it rung then. No moveTop here: they just
    // chose the other window, and pulling ours over it would fight their click.
    const onBlur = (): void => {
      if (ringing.size > 0 && !isInFront(window)) alertAway(window);
    };
    window.on('blur', onBlur);
    watched = { window, onBlur };
  };

  const unsubscribe = options.backend.subscribe((push) => {
    if (push.name !== 'callChanged') return;
    const call = push.payload;
    if (call.phase !== 'ringing' || call.direction !== 'incoming') {
      const entry = ringing.get(call.localId);
      if (entry === undefined) return;
      entry.notification?.close();
      ringing.delete(call.localId);
      if (ringing.size === 0) {
        stopFlashing();
        stopWatching();
      }
      return;
    }
    if (ringing.has(call.localId)) return;
    ringing.set(call.localId, { call, notification: undefined });
    const window = liveWindow();
    if (window) watch(window);
    if (window && isInFront(window)) return;
    if (window) revealWithoutFocus(window);
    alertAway(window);
  });

  return () => {
    unsubscribe();
    for (const entry of ringing.values()) entry.notification?.close();
    ringing.clear();
    stopFlashing();
    stopWatching();
  };
}
