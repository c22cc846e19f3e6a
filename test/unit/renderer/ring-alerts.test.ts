// Ring alerts: the sound unlock, the watchdog, notifications and the flashing title. The end-to-end
// tests cannot reach these paths: headless Chromium does not enforce the autoplay policy and never
// hides a tab or takes focus away from it. So the page's document, window and Notification class are
// injected fakes here, and the ringtone is the real one on a fake AudioContext (fake-audio.ts).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { RingAlerts, type NotificationLike, type RingAlertsEnvironment } from '../../../renderer/app/ring-alerts';
import { Ringtone } from '../../../renderer/sound/ringtone';
import { alertsStore, resetAlertsStore } from '../../../renderer/store/alerts';
import { appStore, resetStore } from '../../../renderer/store/store';
import type { CallState } from '../../../shared/call-state';
import { fakeAudio } from './fake-audio';
import { active, dialing, ended, ringing, transferRinging } from './fixtures';

const GRACE_MS = 300;

class FakeTarget {
  readonly listeners = new Map<string, Set<() => void>>();
  addEventListener(type: string, listener: () => void): void {
    const set = this.listeners.get(type) ?? new Set();
    set.add(listener);
    this.listeners.set(type, set);
  }
  removeEventListener(type: string, listener: () => void): void {
    this.listeners.get(type)?.delete(listener);
  }
  dispatch(type: string): void {
    for (const listener of [...(this.listeners.get(type) ?? [])]) listener();
  }
  count(type: string): number {
    return this.listeners.get(type)?.size ?? 0;
  }
}

class FakeDocument extends FakeTarget {
  visibilityState: DocumentVisibilityState = 'visible';
  focused = true;
  title = 'Softphone';
  hasFocus(): boolean {
    return this.focused;
  }
}

class FakeWindow extends FakeTarget {
  focusCalls = 0;
  focus(): void {
    this.focusCalls += 1;
  }
}

interface ShownNotification extends NotificationLike {
  title: string;
  options?: NotificationOptions | undefined;
  closed: boolean;
}

function notificationClass(initial: NotificationPermission, answer: NotificationPermission = 'granted') {
  const shown: ShownNotification[] = [];
  let requests = 0;
  class FakeNotification implements ShownNotification {
    static permission: NotificationPermission = initial;
    static async requestPermission(): Promise<NotificationPermission> {
      requests += 1;
      FakeNotification.permission = answer;
      return answer;
    }
    onclick: ((event: Event) => void) | null = null;
    closed = false;
    constructor(
      public title: string,
      public options?: NotificationOptions,
    ) {
      shown.push(this);
    }
    close(): void {
      this.closed = true;
    }
  }
  return { FakeNotification, shown, requests: () => requests };
}

function setUp(options: { host?: 'electron' | 'browser'; permission?: NotificationPermission; activated?: boolean; afterRender?: (work: () => void) => void } = {}) {
  const audio = fakeAudio({ activated: options.activated ?? true });
  // The calls play on the headset; the ringer is the system default.
  const ringtone = new Ringtone({ createContext: audio.createContext, blockedAfterMs: GRACE_MS, speaker: () => 'headset' });
  const doc = new FakeDocument();
  const win = new FakeWindow();
  const notifications = notificationClass(options.permission ?? 'granted');
  const env: RingAlertsEnvironment = { document: doc, window: win, Notification: notifications.FakeNotification };
  const alerts = new RingAlerts({ store: appStore, alerts: alertsStore, ringtone, host: options.host ?? 'browser', env, afterRender: options.afterRender ?? ((work) => work()) });
  stops.push(alerts.start());
  stops.push(() => ringtone.stop());
  /** A call rings, and the ringtone starts as CallActions starts it once the card is rendered. */
  const ring = (call: CallState = ringing('wacid.1')) => {
    appStore.getState().applyCall(call);
    ringtone.start();
  };
  const endRinging = (call: CallState = ringing('wacid.1')) => {
    appStore.getState().applyCall({ ...call, phase: 'ended', end: { kind: 'declined' }, endedAt: call.createdAt + 5000, durationSec: 0 });
    ringtone.stop();
  };
  return { audio, ringtone, doc, win, notifications, alerts, ring, endRinging };
}

const stops: Array<() => void> = [];
const sound = () => alertsStore.getState().sound;

beforeEach(() => {
  vi.useFakeTimers();
  resetStore();
  resetAlertsStore();
});
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  vi.useRealTimers();
  await setUiLanguage('en', undefined);
});

describe('sound held back by the autoplay policy', () => {
  it('a ringtone that cannot start shows "Enable sound" and the silent-ring alert at once', async () => {
    const t = setUp({ activated: false });
    t.ring();
    expect(sound()).toBe('ok');
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    expect(sound()).toBe('silent_ring');
  });

  it('any click in the page unlocks sound for the session: the ring is heard and the listeners go', async () => {
    const t = setUp({ activated: false });
    expect(t.win.count('pointerdown') + t.win.count('click') + t.win.count('keydown')).toBe(3);
    t.ring();
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    expect(sound()).toBe('silent_ring');
    t.audio.activate(); // the browser's side of a click
    t.win.dispatch('pointerdown');
    await vi.advanceTimersByTimeAsync(0);
    expect(t.ringtone.state()).toBe('playing');
    expect(t.audio.last().live()).toHaveLength(2);
    expect(sound()).toBe('ok');
    expect(t.win.count('pointerdown') + t.win.count('click') + t.win.count('keydown')).toBe(0);
  });

  it('a key press before any call unlocks too, so the next ring is heard', async () => {
    const t = setUp({ activated: false });
    t.audio.activate();
    t.win.dispatch('keydown');
    await vi.advanceTimersByTimeAsync(0);
    expect(t.win.count('keydown')).toBe(0);
    t.ring();
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    expect(t.ringtone.state()).toBe('playing');
    expect(sound()).toBe('ok');
  });

  it('the "Enable sound" button unlocks once even though its click also reaches the page listener', async () => {
    const t = setUp({ activated: false });
    t.ring();
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    t.audio.activate();
    const button = t.alerts.enableSound();
    t.win.dispatch('click');
    await expect(button).resolves.toBe(true);
    expect(t.audio.contexts).toHaveLength(1);
    expect(sound()).toBe('ok');
  });

  it('a silent ring that ends leaves "Enable sound" without the alert', async () => {
    const t = setUp({ activated: false });
    t.ring();
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    t.endRinging();
    expect(sound()).toBe('locked');
  });
});

describe('the watchdog while a call rings', () => {
  it('a context suspended without a word is resumed within a second', async () => {
    const t = setUp();
    t.ring();
    await vi.advanceTimersByTimeAsync(0);
    const ctx = t.audio.last();
    ctx.state = 'suspended'; // no statechange event: only a check can find it
    await vi.advanceTimersByTimeAsync(500);
    expect(ctx.state).toBe('suspended');
    await vi.advanceTimersByTimeAsync(500);
    expect(ctx.state).toBe('running');
    expect(t.ringtone.state()).toBe('playing');
    expect(sound()).toBe('ok');
  });

  it('a wanted ring whose context closed without a word is made again and rings', async () => {
    const t = setUp();
    t.ring();
    await vi.advanceTimersByTimeAsync(0);
    t.audio.last().state = 'closed'; // no statechange event: only a check can find it
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.audio.contexts).toHaveLength(2);
    expect(t.audio.last().live()).toHaveLength(2);
    expect(t.ringtone.state()).toBe('playing');
    expect(sound()).toBe('ok');
  });

  it('never starts the ringtone itself: stopped by Answer while the call still rings, it stays silent', async () => {
    const t = setUp();
    t.ring();
    await vi.advanceTimersByTimeAsync(0);
    const ctx = t.audio.last();
    // Answer stops the ring at once; the call is still 'ringing' in the store until the host says otherwise.
    t.ringtone.stop();
    expect(appStore.getState().calls['in:wacid.1']?.phase).toBe('ringing');
    const titles: string[] = [];
    for (let i = 0; i < 3; i++) {
      await vi.advanceTimersByTimeAsync(1000);
      titles.push(t.doc.title);
    }
    // The watchdog still runs for the ringing call: the title keeps flashing.
    expect(titles).toEqual(['Softphone', '☎ Amelia Hart calling', 'Softphone']);
    expect(t.ringtone.wanted).toBe(false);
    expect(t.ringtone.playing).toBe(false);
    expect(t.ringtone.state()).toBe('idle');
    expect(ctx.state).toBe('suspended');
    expect(ctx.oscillators).toHaveLength(2);
    expect(t.audio.contexts).toHaveLength(1);
  });

  it('a ring that cannot be recovered shows the alert', async () => {
    const t = setUp();
    t.ring();
    await vi.advanceTimersByTimeAsync(0);
    t.audio.policy.activated = false;
    t.audio.policy.failResume = true;
    t.audio.last().state = 'suspended';
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.ringtone.state()).toBe('blocked');
    expect(sound()).toBe('silent_ring');
  });

  it('stops with the ring: no check touches the ringtone afterwards', async () => {
    const t = setUp();
    t.ring();
    await vi.advanceTimersByTimeAsync(0);
    t.endRinging();
    await vi.advanceTimersByTimeAsync(5000);
    expect(t.ringtone.state()).toBe('idle');
    expect(t.ringtone.playing).toBe(false);
  });
});

describe('browser notifications', () => {
  it('"Enable notifications" is offered while the permission is undecided, and asks for it', async () => {
    const t = setUp({ permission: 'default' });
    expect(alertsStore.getState().notifications).toBe('default');
    await t.alerts.enableNotifications();
    expect(t.notifications.requests()).toBe(1);
    expect(alertsStore.getState().notifications).toBe('granted');
  });

  it('a permission changed in the site settings is read when the agent comes back', () => {
    const t = setUp({ permission: 'default' });
    t.notifications.FakeNotification.permission = 'denied';
    t.win.dispatch('focus');
    expect(alertsStore.getState().notifications).toBe('denied');
  });

  it('the Electron host notifies natively: no button, no page notification, no title flashing', async () => {
    const t = setUp({ host: 'electron', permission: 'default' });
    expect(alertsStore.getState().notifications).toBe('native');
    await t.alerts.enableNotifications();
    expect(t.notifications.requests()).toBe(0);
    t.doc.visibilityState = 'hidden';
    t.ring();
    await vi.advanceTimersByTimeAsync(2000);
    expect(t.notifications.shown).toHaveLength(0);
    expect(t.doc.title).toBe('Softphone');
  });

  it('a call that rings while the tab is hidden is notified: caller, "Incoming call", a tag per call, kept until acted on', () => {
    const t = setUp();
    t.doc.visibilityState = 'hidden';
    t.ring();
    expect(t.notifications.shown).toHaveLength(1);
    const [n] = t.notifications.shown;
    expect(n?.title).toBe('Amelia Hart');
    expect(n?.options).toEqual({ body: 'Incoming call', tag: 'call-in:wacid.1', requireInteraction: true });
  });

  it('a visible tab without focus (the CRM window in front) is notified too; a number stands for a caller with no name', () => {
    const t = setUp();
    t.doc.focused = false;
    t.ring({ ...ringing('wacid.2'), peer: { number: '447700900123' } });
    expect(t.notifications.shown.map((n) => n.title)).toEqual(['+44 7700 900123']);
  });

  it('nothing is notified while the tab is visible and focused, until the agent leaves it', async () => {
    const t = setUp();
    t.ring();
    await vi.advanceTimersByTimeAsync(2000);
    expect(t.notifications.shown).toHaveLength(0);
    t.doc.visibilityState = 'hidden';
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.notifications.shown).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(3000);
    expect(t.notifications.shown).toHaveLength(1);
  });

  it('without permission nothing is notified', async () => {
    const t = setUp({ permission: 'denied' });
    t.doc.visibilityState = 'hidden';
    t.ring();
    await vi.advanceTimersByTimeAsync(2000);
    expect(t.notifications.shown).toHaveLength(0);
  });

  it('clicking the notification focuses the tab and closes it', () => {
    const t = setUp();
    t.doc.visibilityState = 'hidden';
    t.ring();
    const n = t.notifications.shown[0];
    n?.onclick?.(new Event('click'));
    expect(t.win.focusCalls).toBe(1);
    expect(n?.closed).toBe(true);
  });

  it('the notification is closed when its call stops ringing; another ringing call keeps its own', () => {
    const t = setUp();
    t.doc.visibilityState = 'hidden';
    t.ring(ringing('wacid.1'));
    t.ring({ ...ringing('wacid.2'), peer: { number: '14155550123', name: 'Jonas Berg' } });
    expect(t.notifications.shown.map((n) => n.title)).toEqual(['Amelia Hart', 'Jonas Berg']);
    appStore.getState().applyCall({ ...ringing('wacid.1'), phase: 'answering', answeredAt: Date.now() });
    expect(t.notifications.shown.map((n) => n.closed)).toEqual([true, false]);
    t.endRinging({ ...ringing('wacid.2'), peer: { number: '14155550123', name: 'Jonas Berg' } });
    expect(t.notifications.shown.map((n) => n.closed)).toEqual([true, true]);
  });
});

describe('the tab title while a call rings', () => {
  it('flashes "☎ NAME calling" with the normal title every second, and is restored afterwards', async () => {
    const t = setUp();
    t.ring();
    expect(t.doc.title).toBe('☎ Amelia Hart calling');
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.doc.title).toBe('Softphone');
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.doc.title).toBe('☎ Amelia Hart calling');
    t.endRinging();
    expect(t.doc.title).toBe('Softphone');
    await vi.advanceTimersByTimeAsync(3000);
    expect(t.doc.title).toBe('Softphone');
  });

  it('a new ring’s title and notification come after the card is rendered; a ring over by then shows neither', () => {
    const queued: Array<() => void> = [];
    const t = setUp({ afterRender: (work) => void queued.push(work) });
    t.doc.visibilityState = 'hidden';
    t.ring();
    expect(t.doc.title).toBe('Softphone');
    expect(t.notifications.shown).toHaveLength(0);
    for (const work of queued.splice(0)) work();
    expect(t.doc.title).toBe('☎ Amelia Hart calling');
    expect(t.notifications.shown).toHaveLength(1);
    t.endRinging();
    expect(t.doc.title).toBe('Softphone');
    t.ring(ringing('wacid.3'));
    t.endRinging(ringing('wacid.3'));
    for (const work of queued.splice(0)) work();
    expect(t.doc.title).toBe('Softphone');
    expect(t.notifications.shown).toHaveLength(1);
  });

  it('speaks the agent\'s language, switched mid-ring too; in Arabic the caller\'s name is set apart from the right-to-left words', async () => {
    await setUiLanguage('es', undefined);
    const t = setUp();
    t.doc.visibilityState = 'hidden';
    t.ring();
    expect(t.doc.title).toBe('☎ Amelia Hart está llamando');
    expect(t.notifications.shown[0]?.options?.body).toBe('Llamada entrante');
    await setUiLanguage('ar', undefined);
    await vi.advanceTimersByTimeAsync(2000);
    expect(t.doc.title).toBe('☎ \u2068Amelia Hart\u2069 يتصل');
  });

  it('is restored when the domain stops mid-flash', () => {
    const t = setUp();
    t.ring();
    expect(t.doc.title).toBe('☎ Amelia Hart calling');
    for (const stop of stops.splice(0)) stop();
    expect(t.doc.title).toBe('Softphone');
    expect(t.win.count('pointerdown')).toBe(0);
  });
});

describe('a colleague\'s transfer or consult ringing', () => {
  it('is notified under the customer as "Transfer from NAME", and the title flashes it', async () => {
    const t = setUp();
    t.doc.visibilityState = 'hidden';
    t.ring(transferRinging('transfer'));
    const [n] = t.notifications.shown;
    expect(n?.title).toBe('Amelia Hart');
    expect(n?.options).toEqual({ body: 'Transfer from Ben Okafor', tag: 'call-tr:tr-9', requireInteraction: true });
    expect(t.doc.title).toBe('☎ Transfer from Ben Okafor');
  });

  it('a consult says "Consult from NAME", in the agent\'s language; in Arabic the name is set apart', async () => {
    const t = setUp();
    t.doc.visibilityState = 'hidden';
    t.ring(transferRinging('consult'));
    expect(t.notifications.shown[0]?.options?.body).toBe('Consult from Ben Okafor');
    expect(t.doc.title).toBe('☎ Consult from Ben Okafor');
    await setUiLanguage('ar', undefined);
    await vi.advanceTimersByTimeAsync(2000);
    expect(t.doc.title).toBe('☎ استشارة من \u2068Ben Okafor\u2069');
  });
});

describe('a call that rings while another is under way', () => {
  const tones = (t: ReturnType<typeof setUp>): number[] => t.audio.last().live().map((o) => o.frequency.value);

  it('rings as the call-waiting tone on the calls’ speaker, not as the ringtone', async () => {
    const t = setUp();
    appStore.getState().applyCall(active('wacid.1'));
    t.ring(ringing('wacid.2'));
    await vi.advanceTimersByTimeAsync(0);
    expect(t.ringtone.sound).toBe('call-waiting');
    expect(t.audio.last().sinkId).toBe('headset');
    expect(tones(t)).toEqual([440]);
    // The watchdog keeps it as it keeps a ring, and the card's alerts go on as for any ring.
    await vi.advanceTimersByTimeAsync(3000);
    expect(t.ringtone.state()).toBe('playing');
    expect(sound()).toBe('ok');
    expect(t.audio.last().oscillators.map((o) => o.frequency.value)).toEqual([440]);
  });

  it('a call being placed counts as under way too', async () => {
    const t = setUp();
    appStore.getState().applyCall(dialing('out-1'));
    t.ring(ringing('wacid.2'));
    await vi.advanceTimersByTimeAsync(0);
    expect(tones(t)).toEqual([440]);
  });

  it('once the other call ends, the call still ringing rings with the ringtone on the ringer', async () => {
    const t = setUp();
    appStore.getState().applyCall(active('wacid.1'));
    t.ring(ringing('wacid.2'));
    await vi.advanceTimersByTimeAsync(0);
    appStore.getState().applyCall(ended('wacid.1'));
    await vi.advanceTimersByTimeAsync(0);
    expect(t.ringtone.sound).toBe('ring');
    expect(t.audio.last().sinkId).toBe('');
    expect(tones(t)).toEqual([400, 450]);
  });

  it('two calls ringing with none under way ring with the ringtone; the next ring after a call is the ringtone again', async () => {
    const t = setUp();
    t.ring(ringing('wacid.1'));
    t.ring(ringing('wacid.2'));
    await vi.advanceTimersByTimeAsync(0);
    expect(tones(t)).toEqual([400, 450]);
    t.endRinging(ringing('wacid.1'));
    t.endRinging(ringing('wacid.2'));

    appStore.getState().applyCall(active('wacid.3'));
    t.ring(ringing('wacid.4'));
    await vi.advanceTimersByTimeAsync(0);
    expect(tones(t)).toEqual([440]);
    t.endRinging(ringing('wacid.4'));
    expect(t.ringtone.sound).toBe('ring');
  });
});
