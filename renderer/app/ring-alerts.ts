// No ring goes unnoticed. CallActions starts and stops the ringtone; this domain makes sure the ring
// is really heard and seen:
// - sound: the first gesture anywhere in the page unlocks audio for the session (autoplay policy); a
//   ringtone that cannot start shows "Enable sound" and an alert at once; while a call rings, a
//   watchdog checks every second that a ringtone still wanted really plays, recovers it, or raises
//   the alert. It never starts one: a ring CallActions stopped (Answer, before the call moves on)
//   stays stopped;
// - which sound a ring is: a call that rings while another is under way (`isBusy`) rings as the
//   quiet call-waiting tone on the calls' speaker, not as the ringtone (Ringtone.setCallWaiting).
//   Decided as the calls change, before CallActions starts the ring after the render;
// - browser host only (the Electron host notifies natively and flashes its frame): a notification
//   per ringing call while the tab is hidden or not focused, closed when the call stops ringing, and
//   the tab title flashing the caller.
// The DOM it touches comes in as `RingAlertsEnvironment`, so unit tests can hide the tab and refuse focus.
import type { Unsubscribe } from '../../shared/api';
import { hasBusyCall, type CallState } from '../../shared/call-state';
import { createLogger } from '../../shared/log';
import { errorText } from '../../shared/result';
import type { StoreApi } from 'zustand/vanilla';
import { peerTitle } from '../call-display';
import { transferRingHeading } from '../transfer-display';
import { currentLanguage, i18n } from '../i18n/i18n';
import { directionOf } from '../../shared/i18n/languages';
import type { Ringtone } from '../sound/ringtone';
import type { AlertsState, NotificationAccess } from '../store/alerts';
import type { AppState } from '../store/store';

const log = createLogger('ring-alerts');
const t = i18n.getFixedT(null, 'calls');

const WATCH_MS = 1000;
const UNLOCK_EVENTS = ['pointerdown', 'click', 'keydown'] as const;

// No start(): CallActions owns when the ring begins and ends; this domain only recovers a wanted ring.
export type RingtoneControl = Pick<Ringtone, 'state' | 'onStateChange' | 'wanted' | 'playing' | 'contextState' | 'recover' | 'unlock' | 'setCallWaiting'>;

export interface NotificationLike {
  onclick: ((event: Event) => void) | null;
  close(): void;
}

/** The page's Notification class, or a test's. */
export interface NotificationClass {
  readonly permission: NotificationPermission;
  requestPermission(): Promise<NotificationPermission>;
  new (title: string, options?: NotificationOptions): NotificationLike;
}

interface EventTargetLike {
  addEventListener(type: string, listener: () => void, options?: boolean | AddEventListenerOptions): void;
  removeEventListener(type: string, listener: () => void, options?: boolean | EventListenerOptions): void;
}

export interface RingAlertsEnvironment {
  document: EventTargetLike & { readonly visibilityState: DocumentVisibilityState; hasFocus(): boolean; title: string };
  window: EventTargetLike & { focus(): void };
  Notification: NotificationClass | undefined;
}

export function browserEnvironment(): RingAlertsEnvironment {
  return { document, window, Notification: typeof Notification === 'undefined' ? undefined : Notification };
}

export interface RingAlertsDeps {
  /** Read only: the ringing calls. */
  store: StoreApi<AppState>;
  alerts: StoreApi<AlertsState>;
  ringtone: RingtoneControl;
  host: 'electron' | 'browser';
  env: RingAlertsEnvironment;
  /**
   * Runs the title and notification of a new ring once the current task is over, after the ringing
   * card is rendered: the card comes first. Default: a zero-delay timer.
   */
  afterRender?: ((work: () => void) => void) | undefined;
}

/**
 * A notification's text, and the tab title while a caller rings: worded when shown, in the UI's
 * language. A colleague's transfer or consult says so, with the colleague's name, where a call
 * says "Incoming call" and flashes the caller.
 */
export const notificationBody = (call?: Pick<CallState, 'transfer'>): string => (call && transferRingHeading(call)) ?? t('ringAlerts.notificationBody');

// A title has no element to isolate a name in: in a right-to-left language the name is set apart
// (first-strong isolate), so a Latin name neither turns the title left to right nor gets reordered.
const isolated = (name: string): string => (directionOf(currentLanguage()) === 'rtl' ? `\u2068${name}\u2069` : name);

export function callingTitle(caller: string): string {
  return t('ringAlerts.title', { name: isolated(caller) });
}

/** The tab title for a ringing call: "☎ NAME calling", or "☎ Transfer from NAME" for a colleague's transfer. */
export function ringTitle(call: Pick<CallState, 'peer' | 'transfer'>): string {
  const transfer = call.transfer?.role === 'to' ? call.transfer : undefined;
  if (!transfer) return callingTitle(peerTitle(call.peer));
  const name = isolated(transfer.colleague?.name ?? t('transfer.aColleague'));
  return transfer.kind === 'consult' ? t('ringAlerts.consultTitle', { name }) : t('ringAlerts.transferTitle', { name });
}

export class RingAlerts {
  private readonly store: StoreApi<AppState>;
  private readonly alerts: StoreApi<AlertsState>;
  private readonly ringtone: RingtoneControl;
  private readonly host: 'electron' | 'browser';
  private readonly env: RingAlertsEnvironment;
  private readonly afterRender: (work: () => void) => void;
  private running = false;
  private alertQueued = false;
  private watchdog: ReturnType<typeof setInterval> | undefined;
  /** Per ringing call: its notification, or null once one was tried (shown, closed by the agent, or refused). */
  private readonly notifications = new Map<string, NotificationLike | null>();
  /** The page's own title while the caller flashes in its place. */
  private normalTitle: string | null = null;
  private flashOn = false;
  private unlockListening = false;
  private unlocking: Promise<boolean> | null = null;
  private readonly onGesture = (): void => void this.enableSound();
  private readonly onReturn = (): void => this.readPermission();

  constructor(deps: RingAlertsDeps) {
    this.store = deps.store;
    this.alerts = deps.alerts;
    this.ringtone = deps.ringtone;
    this.host = deps.host;
    this.env = deps.env;
    this.afterRender = deps.afterRender ?? ((work) => void setTimeout(work, 0));
  }

  private get browserHost(): boolean {
    return this.host === 'browser';
  }

  start(): Unsubscribe {
    const stops: Unsubscribe[] = [];
    this.readPermission();
    if (this.browserHost) {
      // The permission can change in the browser's site settings while the agent is elsewhere.
      this.env.window.addEventListener('focus', this.onReturn);
      this.env.document.addEventListener('visibilitychange', this.onReturn);
      stops.push(() => {
        this.env.window.removeEventListener('focus', this.onReturn);
        this.env.document.removeEventListener('visibilitychange', this.onReturn);
      });
    }
    this.listenForUnlock();
    stops.push(() => this.stopListeningForUnlock());
    stops.push(this.ringtone.onStateChange(() => this.showSound()));
    stops.push(
      this.store.subscribe((s, before) => {
        if (s.calls !== before.calls) this.callsChanged();
      }),
    );
    this.running = true;
    this.followCallWaiting();
    this.followRinging();
    return () => {
      this.running = false;
      for (const stop of stops.splice(0)) stop();
      this.stopRinging();
      this.ringtone.setCallWaiting(false);
    };
  }

  /** "Enable sound", and any gesture in the page until sound runs: must run inside the gesture's handler. */
  enableSound(): Promise<boolean> {
    // The button's click also reaches the page's listener: one unlock at a time.
    this.unlocking ??= this.ringtone.unlock().then(
      (running) => {
        this.unlocking = null;
        if (running) this.stopListeningForUnlock();
        this.showSound();
        return running;
      },
      (e: unknown) => {
        this.unlocking = null;
        log.warn('unlocking sound failed', { problem: errorText(e) });
        return false;
      },
    );
    return this.unlocking;
  }

  /** "Enable notifications": requestPermission() must be called inside the click's handler. */
  async enableNotifications(): Promise<void> {
    const api = this.env.Notification;
    if (!api || !this.browserHost) return;
    try {
      this.alerts.getState().setNotifications(await api.requestPermission());
    } catch (e) {
      log.warn('asking for notifications failed', { problem: errorText(e) });
      this.readPermission();
    }
  }

  // ---- internals ----

  private ringingCalls(): CallState[] {
    return Object.values(this.store.getState().calls).filter((c) => c.phase === 'ringing');
  }

  /** A ring that stops is followed at once; one that starts or changes once the card is rendered. */
  private callsChanged(): void {
    // At once: CallActions starts the ring after the render, and it must start as the right sound.
    this.followCallWaiting();
    if (this.ringingCalls().length === 0) {
      this.followRinging();
      return;
    }
    if (this.alertQueued) return;
    this.alertQueued = true;
    this.afterRender(() => {
      this.alertQueued = false;
      if (this.running) this.followRinging();
    });
  }

  /** A call rings while another is under way: it rings as the call-waiting tone. */
  private followCallWaiting(): void {
    const calls = Object.values(this.store.getState().calls);
    this.ringtone.setCallWaiting(calls.some((c) => c.phase === 'ringing') && hasBusyCall(calls));
  }

  private followRinging(): void {
    const ringing = this.ringingCalls();
    const ids = new Set(ringing.map((c) => c.localId));
    for (const [localId, notification] of this.notifications) {
      if (ids.has(localId)) continue;
      notification?.close();
      this.notifications.delete(localId);
    }
    if (ringing.length === 0) {
      this.stopRinging();
      return;
    }
    if (this.watchdog === undefined) {
      // The ringtone itself starts after the card renders (CallActions); the first check is a second later.
      this.watchdog = setInterval(() => this.tick(), WATCH_MS);
      this.flashOn = false;
      this.flashTitle();
    }
    this.notifyIfAway(ringing);
  }

  private stopRinging(): void {
    if (this.watchdog !== undefined) clearInterval(this.watchdog);
    this.watchdog = undefined;
    for (const notification of this.notifications.values()) notification?.close();
    this.notifications.clear();
    if (this.normalTitle !== null) this.env.document.title = this.normalTitle;
    this.normalTitle = null;
    this.showSound();
  }

  private tick(): void {
    const ringing = this.ringingCalls();
    if (ringing.length === 0) {
      this.stopRinging();
      return;
    }
    this.checkRingtone();
    this.flashTitle();
    // The agent may have left the tab after the ring began.
    this.notifyIfAway(ringing);
  }

  /** The watchdog: a wanted ring must be playing on a running context; otherwise recover it, or say it is silent. */
  private checkRingtone(): void {
    if (!this.ringtone.wanted) return;
    if (this.ringtone.playing && this.ringtone.contextState() === 'running' && this.ringtone.state() === 'playing') return;
    this.ringtone.recover();
    this.showSound();
  }

  /** Puts the ringtone's state on screen: blocked → the button (and the alert while a call rings). */
  private showSound(): void {
    const state = this.ringtone.state();
    const alerts = this.alerts.getState();
    if (state === 'playing') {
      alerts.setSound('ok');
      return;
    }
    if (state === 'blocked') {
      this.listenForUnlock();
      alerts.setSound(this.ringingCalls().length > 0 ? 'silent_ring' : 'locked');
      return;
    }
    // Idle: nothing rings; sound that was held back still needs a gesture.
    if (alerts.sound === 'silent_ring') alerts.setSound('locked');
  }

  private listenForUnlock(): void {
    if (this.unlockListening) return;
    this.unlockListening = true;
    for (const type of UNLOCK_EVENTS) this.env.window.addEventListener(type, this.onGesture, { capture: true });
  }

  private stopListeningForUnlock(): void {
    if (!this.unlockListening) return;
    this.unlockListening = false;
    for (const type of UNLOCK_EVENTS) this.env.window.removeEventListener(type, this.onGesture, { capture: true });
  }

  private readPermission(): void {
    let access: NotificationAccess;
    if (!this.browserHost) access = 'native';
    else access = this.env.Notification?.permission ?? 'unsupported';
    this.alerts.getState().setNotifications(access);
  }

  private away(): boolean {
    return this.env.document.visibilityState === 'hidden' || !this.env.document.hasFocus();
  }

  private notifyIfAway(ringing: CallState[]): void {
    const api = this.env.Notification;
    if (!this.browserHost || !api || api.permission !== 'granted' || !this.away()) return;
    for (const call of ringing) {
      if (this.notifications.has(call.localId)) continue;
      try {
        const notification = new api(peerTitle(call.peer), { body: notificationBody(call), tag: `call-${call.localId}`, requireInteraction: true });
        notification.onclick = () => {
          this.env.window.focus();
          notification.close();
        };
        this.notifications.set(call.localId, notification);
      } catch (e) {
        // Some browsers only notify from a service worker: the title still flashes.
        log.warn('a notification could not be shown', { problem: errorText(e) });
        this.notifications.set(call.localId, null);
      }
    }
  }

  private flashTitle(): void {
    if (!this.browserHost) return;
    const newest = this.ringingCalls().reduce<CallState | undefined>((a, c) => (a && a.createdAt >= c.createdAt ? a : c), undefined);
    if (!newest) return;
    this.normalTitle ??= this.env.document.title;
    this.flashOn = !this.flashOn;
    this.env.document.title = this.flashOn ? ringTitle(newest) : this.normalTitle;
  }
}
