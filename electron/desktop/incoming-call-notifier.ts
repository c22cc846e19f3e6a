// A system notification for each ringing incoming call while the window is not in front, so an
// agent working in another app still sees the call. Clicking it brings the window forward; it
// closes by itself once the call stops ringing. The renderer rings in the window itself, so the
// notification is shown only when the window is unfocused.
import { Notification, type BrowserWindow } from 'electron';
import type { SoftphoneBackend, Unsubscribe } from '../../shared/api';
import type { CallState } from '../../shared/call-state';
import { formatPhoneNumber } from '../../shared/phone';

export interface IncomingCallNotifierOptions {
  backend: Pick<SoftphoneBackend, 'subscribe'>;
  getWindow: () => BrowserWindow | undefined;
  /** Brings the window to the front (also used for a second launch). */
  showWindow: () => void;
}

function callerOf(call: CallState): string {
  const { name, number } = call.peer;
  const formatted = number ? formatPhoneNumber(number) : undefined;
  if (name && formatted) return `${name} (${formatted})`;
  return name ?? formatted ?? 'Unknown caller';
}

export function notifyIncomingCalls(options: IncomingCallNotifierOptions): Unsubscribe {
  const shown = new Map<string, Notification>();

  const unsubscribe = options.backend.subscribe((push) => {
    if (push.name !== 'callChanged') return;
    const call = push.payload;
    const existing = shown.get(call.localId);
    if (call.phase !== 'ringing') {
      if (existing) {
        shown.delete(call.localId);
        existing.close();
      }
      return;
    }
    if (existing || call.direction !== 'incoming' || !Notification.isSupported()) return;
    const window = options.getWindow();
    if (window === undefined || window.isDestroyed() || window.isFocused()) return;
    const notification = new Notification({ title: 'Incoming call', body: callerOf(call), urgency: 'critical' });
    notification.on('click', () => options.showWindow());
    shown.set(call.localId, notification);
    notification.show();
    window.flashFrame(true);
  });

  return () => {
    unsubscribe();
    for (const notification of shown.values()) notification.close();
    shown.clear();
  };
}
