// The Electron host as an all-day desk tool: close to tray, the tray menu, the missed-call badge,
// incoming-call notifications that never take the focus, tel:/callto: links, global shortcuts and
// start at login — driven through startDesktopApp with the `electron` module mocked.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CallState } from '../../../shared/call-state';
import type { HistoryEntry } from '../../../shared/history';
import { formatPhoneNumber } from '../../../shared/phone';
import { numberFromDialLink } from '../../../shared/dial-link';
import arRules from '../../../shared/i18n/locales/ar/rules.json';
import esRules from '../../../shared/i18n/locales/es/rules.json';
import arCalls from '../../../shared/i18n/locales/ar/calls.json';
import esCalls from '../../../shared/i18n/locales/es/calls.json';
import { startDesktopApp, type DesktopApp, type DesktopServiceOptions } from '../../../electron/desktop/desktop-app';
import type { LaunchInfo } from '../../../electron/desktop/dial-links';
import { DESK_ICONS } from '../../../electron/desktop/desk';
import { app, BrowserWindow, dialog, FakeEvent, globalShortcut, ipcMain, Menu, Notification, resetFakeElectron, Tray, type FakeMenu } from './fake-electron';
import { FakeService, ringing } from './fake-service';
import { recordingLogger } from './recording-logger';

vi.mock('electron', () => import('./fake-electron'));

const APP_URL = 'app://softphone/index.html';
const settle = () => new Promise<void>((done) => setImmediate(done));
/** The reason the service gives for a link it refuses (shared/dial-link.ts), in English. */
const refusalOf = (link: string): string => {
  const result = numberFromDialLink(link);
  if (result.ok) throw new Error(`${link} was taken`);
  return result.error.message;
};

const missed = (localId: string, endedAt: number, direction: 'incoming' | 'outgoing' = 'incoming', outcome: HistoryEntry['outcome'] = 'missed'): HistoryEntry => ({
  localId,
  direction,
  number: '442079460958',
  outcome,
  startedAt: endedAt - 30_000,
  endedAt,
  durationSec: 0,
});

describe('the desk host', () => {
  let service: FakeService;
  let desktop: DesktopApp;
  let logger: ReturnType<typeof recordingLogger>;

  const start = async (options: { platform?: NodeJS.Platform; argv?: string[]; launch?: Partial<LaunchInfo> } = {}) => {
    desktop = startDesktopApp({
      logger,
      platform: options.platform ?? 'linux',
      launch: { defaultApp: false, execPath: '/opt/softphone/softphone', argv: options.argv ?? ['/opt/softphone/softphone'], ...options.launch },
      createSecretStore: () => ({ kind: 'memory', get: async () => undefined, set: async () => undefined, delete: async () => undefined }),
      createService: async () => service,
    });
    await desktop.ready;
    await settle();
  };
  /** Starts the host and keeps what it hands the service (the guard, the feed confirmation, …). */
  const startKeepingOptions = async (): Promise<DesktopServiceOptions> => {
    let kept: DesktopServiceOptions | undefined;
    desktop = startDesktopApp({
      logger,
      platform: 'linux',
      launch: { defaultApp: false, execPath: '/opt/softphone/softphone', argv: ['/opt/softphone/softphone'] },
      createSecretStore: () => ({ kind: 'memory', get: async () => undefined, set: async () => undefined, delete: async () => undefined }),
      createService: async (options) => {
        kept = options;
        return service;
      },
    });
    await desktop.ready;
    return kept!;
  };
  const theWindow = () => {
    expect(BrowserWindow.instances).toHaveLength(1);
    return BrowserWindow.instances[0]!;
  };
  /** The window's page has loaded and shown itself. */
  const shown = () => {
    const window = theWindow();
    window.emit('ready-to-show');
    window.focused = true;
    return window;
  };
  /** The renderer subscribes to pushes, then asks for its snapshot (renderer/app/host-sync.ts). */
  const rendererStarts = async () => {
    const window = theWindow();
    await ipcMain.handlers.get('softphone:getSnapshot')!({ sender: window.webContents, senderFrame: { url: APP_URL } }, {});
  };
  const tray = () => {
    expect(Tray.instances).toHaveLength(1);
    return Tray.instances[0]!;
  };
  const menu = (): FakeMenu => tray().menu!;
  const menuLabels = () => menu().items.map((i) => String(i.label ?? '---'));
  const pushesSent = (name: string) =>
    theWindow()
      .webContents.sent.filter(([channel]) => channel === `softphone:push:${name}`)
      .map(([, payload]) => payload);

  beforeEach(() => {
    resetFakeElectron();
    service = new FakeService();
    logger = recordingLogger();
  });
  afterEach(() => {
    service.closing.resolve();
  });

  describe('close to tray', () => {
    it('closing the window hides it: the service and the app keep running, and a call still rings', async () => {
      await start();
      const window = shown();
      window.close();
      expect(window.destroyed).toBe(false);
      expect(window.visible).toBe(false);
      expect(app.quit).not.toHaveBeenCalled();
      expect(service.closeCalls).toBe(0);
      expect(tray().tooltip).toBe('Softphone: Available, window hidden, calls still ring');

      service.push({ name: 'callChanged', payload: ringing() });
      expect(window.visible).toBe(true);
      expect(Notification.instances).toHaveLength(1);
    });

    it('"Quit when the window is closed" makes closing quit, ending the calls first', async () => {
      await start();
      const window = shown();
      service.setPreferences({ quitOnClose: true });
      window.close();
      expect(window.destroyed).toBe(true);
      expect(app.quit).toHaveBeenCalled();
      await settle();
      expect(service.closeCalls).toBe(1);
      expect(app.quitted).toBe(false);
      service.closing.resolve();
      await settle();
      expect(app.quitted).toBe(true);
    });

    it('Quit in the tray quits for real: the window closes, the tray and the shortcuts go', async () => {
      service.prefs = { ...service.prefs, globalShortcuts: true };
      await start();
      const window = shown();
      expect(globalShortcut.callbacks.size).toBe(4);
      menu().click('Quit');
      await settle();
      expect(service.closeCalls).toBe(1);
      service.closing.resolve();
      await settle();
      expect(app.quitted).toBe(true);
      expect(tray().destroyed).toBe(true);
      expect(globalShortcut.callbacks.size).toBe(0);
      // Electron then closes the windows: nothing holds that close back any more.
      window.close();
      expect(window.destroyed).toBe(true);
    });

    it('Windows log-off or shutdown quits instead of hiding', async () => {
      await start({ platform: 'win32' });
      const window = shown();
      window.emit('session-end');
      await settle();
      expect(service.closeCalls).toBe(1);
      service.closing.resolve();
      await settle();
      expect(app.quitted).toBe(true);
      window.close();
      expect(window.destroyed).toBe(true);
    });

    it('a Dock click (macOS) brings a hidden window back', async () => {
      await start({ platform: 'darwin' });
      const window = shown();
      window.close();
      app.emit('activate');
      expect(window.visible).toBe(true);
      expect(window.focused).toBe(true);
    });
  });

  describe('tray', () => {
    it('uses the tray icon from assets/ and shows the state', async () => {
      await start();
      shown();
      expect(tray().image.path).toBe(join('/opt/softphone/assets', DESK_ICONS.tray));
      expect(menuLabels()).toEqual(['Status: Available', '---', 'Show', '---', 'Available', 'Do not disturb', '---', 'Quit']);
      expect(tray().tooltip).toBe('Softphone: Available');

      service.setPresence({ choice: 'available', status: 'on_call' });
      expect(menuLabels()[0]).toBe('Status: On a call');
      expect(tray().current.path).toBe(join('/opt/softphone/assets', DESK_ICONS.status.on_call));
      service.setConnection({ status: 'reconnecting', since: 5, lastError: 'relay unreachable' });
      expect(menuLabels()[0]).toBe('Status: Disconnected');
      expect(tray().current.path).toBe(join('/opt/softphone/assets', DESK_ICONS.status.disconnected));
      service.setConnection({ status: 'connected', since: 6 });
      expect(menuLabels()[0]).toBe('Status: On a call');
    });

    it('starts from the service state, not from defaults', async () => {
      service.presence = { choice: 'dnd', status: 'dnd' };
      service.connection = { status: 'connecting', since: 1 };
      await start();
      expect(menuLabels()[0]).toBe('Status: Disconnected');
      expect(menu().items.find((i) => i.label === 'Do not disturb')!.checked).toBe(true);
    });

    it('the presence choices set the presence in the service', async () => {
      await start();
      menu().click('Do not disturb');
      await settle();
      expect(service.handled).toContainEqual({ name: 'setPresence', params: { status: 'dnd' } });
      expect(menuLabels()[0]).toBe('Status: Do not disturb');
      expect(menu().items.find((i) => i.label === 'Do not disturb')!.checked).toBe(true);
      menu().click('Available');
      await settle();
      expect(service.handled).toContainEqual({ name: 'setPresence', params: { status: 'available' } });
    });

    it('Show brings the hidden window forward', async () => {
      await start();
      const window = shown();
      window.close();
      window.focused = false;
      menu().click('Show');
      expect(window.visible).toBe(true);
      expect(window.focused).toBe(true);
      expect(tray().tooltip).toBe('Softphone: Available');
    });

    it('without a system tray the app still starts, and says why there is no icon', async () => {
      Tray.failNext = true;
      await start();
      expect(Tray.instances).toHaveLength(0);
      expect(theWindow().loadURL).toHaveBeenCalledWith(APP_URL);
      expect(logger.records.some((r) => r.level === 'warn' && r.msg.includes('no system tray'))).toBe(true);
    });

    it('without a system tray, closing the window minimises it instead of hiding it out of reach', async () => {
      Tray.failNext = true;
      await start();
      const window = shown();
      window.close();
      expect(window.destroyed).toBe(false);
      expect(window.visible).toBe(true);
      expect(window.minimized).toBe(true);
      expect(service.closeCalls).toBe(0);
      expect(app.quit).not.toHaveBeenCalled();
      // A call still comes back on screen without focus.
      service.push({ name: 'callChanged', payload: ringing() });
      expect(window.minimized).toBe(false);
      expect(window.focusCalls).toBe(0);
    });

    it("speaks the system's language with the preference on 'auto', and a chosen one at once when it changes", async () => {
      app.systemLanguages = ['es-MX', 'en-US'];
      await start();
      const window = shown();
      expect(menuLabels()).toEqual(['Estado: Disponible', '---', 'Mostrar', '---', 'Disponible', 'No molestar', '---', 'Salir']);
      window.close();
      expect(tray().tooltip).toBe('Softphone: Disponible, ventana oculta, las llamadas siguen sonando');

      service.setPreferences({ language: 'ar' });
      expect(menuLabels()).toEqual(['الحالة: متاح', '---', 'إظهار', '---', 'متاح', 'عدم الإزعاج', '---', 'إنهاء']);
      expect(tray().tooltip).toBe('Softphone: متاح، النافذة مخفية، والمكالمات لا تزال ترنّ');
      menu().click('عدم الإزعاج');
      await settle();
      expect(service.handled).toContainEqual({ name: 'setPresence', params: { status: 'dnd' } });
      expect(menuLabels()[0]).toBe('الحالة: عدم الإزعاج');

      service.setPreferences({ language: 'auto' });
      expect(menuLabels()[0]).toBe('Estado: No molestar');
      menu().click('Mostrar');
      expect(window.visible).toBe(true);
    });

    it('sets no application menu on Linux: Electron\u2019s English default menu is not shown', async () => {
      await start();
      expect(Menu.setApplicationMenu).toHaveBeenCalledTimes(1);
      expect(Menu.applicationMenu).toBeNull();
    });

    it('on macOS sets an application menu in the agent\u2019s language, made again when the language changes', async () => {
      app.systemLanguages = ['es-MX'];
      await start({ platform: 'darwin' });
      expect(Menu.applicationMenu?.items.map((i) => i.label)).toEqual(['Softphone', 'Edición', 'Ventana']);
      service.setPreferences({ language: 'ar' });
      expect(Menu.applicationMenu?.items.map((i) => i.label)).toEqual(['Softphone', 'تحرير', 'نافذة']);
      const calls = Menu.setApplicationMenu.mock.calls.length;
      // Other changes (the missed calls looked at) do not make the menu again.
      service.setPreferences({ missedSeenAt: 5 });
      expect(Menu.setApplicationMenu.mock.calls.length).toBe(calls);
    });

    it('the icons it loads exist in assets/ as PNG files', () => {
      const { status, ...single } = DESK_ICONS;
      for (const path of [...Object.values(single), ...Object.values(status), ...Object.values(status).map((p) => p.replace(/\.png$/, '@2x.png'))]) {
        const file = resolve(import.meta.dirname, '../../../assets', path);
        expect(existsSync(file), file).toBe(true);
        expect(readFileSync(file).subarray(1, 4).toString('latin1'), file).toBe('PNG');
      }
    });
  });

  describe('missed calls badge', () => {
    const history = [missed('in:1', 2_000), missed('in:2', 3_000), missed('in:old', 500), missed('out:1', 2_500, 'outgoing', 'no_answer'), missed('in:3', 2_600, 'incoming', 'completed')];

    it('counts the missed calls since the agent last looked, on the badge and in the tray', async () => {
      service.history = history;
      service.prefs = { ...service.prefs, missedSeenAt: 1_000 };
      await start();
      expect(app.setBadgeCount).toHaveBeenLastCalledWith(2);
      expect(menuLabels()[1]).toBe('2 missed calls');

      service.setHistory([missed('in:4', 4_000), ...history]);
      expect(app.setBadgeCount).toHaveBeenLastCalledWith(3);
      service.setPreferences({ missedSeenAt: 4_000 });
      expect(app.setBadgeCount).toHaveBeenLastCalledWith(0);
      expect(menuLabels()).not.toContain('3 missed calls');
      expect(theWindow().overlay).toBeUndefined(); // the overlay is Windows-only
    });

    it('on Windows, an overlay icon on the taskbar button says "N missed calls"', async () => {
      service.history = history;
      service.prefs = { ...service.prefs, missedSeenAt: 1_000 };
      await start({ platform: 'win32' });
      const window = theWindow();
      expect(window.overlay?.description).toBe('2 missed calls');
      expect((window.overlay?.image as { path: string } | null)?.path).toBe(join('/opt/softphone/assets', DESK_ICONS.missedOverlay));
      service.setPreferences({ missedSeenAt: 9_000 });
      expect(window.overlay).toEqual({ image: null, description: '' });
    });

    it("says the count in the agent's language, Arabic's dual included, and again when the language changes", async () => {
      service.history = history;
      service.prefs = { ...service.prefs, missedSeenAt: 1_000, language: 'ar' };
      await start({ platform: 'win32' });
      const window = theWindow();
      expect(window.overlay?.description).toBe('مكالمتان فائتتان');
      expect(menuLabels()[1]).toBe('مكالمتان فائتتان');
      service.setHistory([missed('in:4', 4_000), ...history]);
      expect(window.overlay?.description).toBe('3 مكالمات فائتة');
      const badgeCounts = app.setBadgeCount.mock.calls.length;
      service.setPreferences({ language: 'es' });
      expect(window.overlay?.description).toBe('3 llamadas perdidas');
      expect(menuLabels()[1]).toBe('3 llamadas perdidas');
      // The count itself did not change: the badge is not set again.
      expect(app.setBadgeCount.mock.calls.length).toBe(badgeCounts);
    });
  });

  describe('incoming call', () => {
    it('shows a hidden window without taking the focus, flashes the frame until it stops ringing', async () => {
      await start();
      const window = shown();
      window.close(); // to the tray
      const focusBefore = window.focusCalls;
      service.push({ name: 'callChanged', payload: ringing() });
      expect(window.visible).toBe(true);
      expect(window.showInactiveCalls).toBe(1);
      expect(window.focusCalls).toBe(focusBefore);
      expect(window.focused).toBe(false);
      expect(window.flashes).toEqual([true]);

      service.push({ name: 'callChanged', payload: ringing() });
      expect(window.flashes).toEqual([true]);
      service.push({ name: 'callChanged', payload: ringing('active') });
      expect(window.flashes).toEqual([true, false]);
      expect(window.focusCalls).toBe(focusBefore);
    });

    it('restores a minimised window without focus', async () => {
      await start();
      const window = shown();
      window.minimized = true;
      window.focused = false;
      service.push({ name: 'callChanged', payload: ringing() });
      expect(window.minimized).toBe(false);
      expect(window.showInactiveCalls).toBe(1);
      expect(window.focusCalls).toBe(0);
    });

    it('leaves a window in front alone: no notification, no flash, no focus change', async () => {
      await start();
      const window = shown();
      service.push({ name: 'callChanged', payload: ringing() });
      expect(window.showInactiveCalls).toBe(0);
      expect(window.flashes).toEqual([]);
      expect(Notification.instances).toHaveLength(0);
    });

    it('with two calls ringing, the frame flashes until the last one stops', async () => {
      await start();
      const window = shown();
      window.focused = false;
      service.push({ name: 'callChanged', payload: ringing('ringing', 'in:wacid.1') });
      service.push({ name: 'callChanged', payload: ringing('ringing', 'in:wacid.2') });
      service.push({ name: 'callChanged', payload: ringing('active', 'in:wacid.1') });
      expect(window.flashed).toBe(true);
      service.push({ name: 'callChanged', payload: ringing('active', 'in:wacid.2') });
      expect(window.flashes.at(-1)).toBe(false);
      expect(Notification.instances.map((n) => n.closed)).toEqual([true, true]);
    });

    for (const [index, action] of [
      [0, 'answer'],
      [1, 'decline'],
    ] as const) {
      it(`macOS: the notification's ${action === 'answer' ? 'Answer' : 'Decline'} button asks the window to ${action}, without focus`, async () => {
        await start({ platform: 'darwin' });
        const window = shown();
        window.close();
        service.push({ name: 'callChanged', payload: ringing() });
        const notification = Notification.instances[0]!;
        expect(notification.options.actions).toEqual([
          { type: 'button', text: 'Answer' },
          { type: 'button', text: 'Decline' },
        ]);
        window.hide(); // hidden again meanwhile
        notification.emit('action', { actionIndex: index }, index);
        expect(pushesSent('shortcutPressed')).toEqual([{ action, localId: 'in:wacid.1' }]);
        expect(window.visible).toBe(true);
        expect(window.focusCalls).toBe(0);
      });
    }

    it('each notification\'s buttons name its own call (Windows)', async () => {
      await start({ platform: 'win32' });
      const window = shown();
      window.focused = false;
      service.push({ name: 'callChanged', payload: ringing('ringing', 'in:wacid.1') });
      service.push({ name: 'callChanged', payload: ringing('ringing', 'in:wacid.2') });
      const [first, second] = Notification.instances;
      second!.emit('action', { actionIndex: 0 }, 0);
      first!.emit('action', { actionIndex: 1 }, 1);
      expect(pushesSent('shortcutPressed')).toEqual([
        { action: 'answer', localId: 'in:wacid.2' },
        { action: 'decline', localId: 'in:wacid.1' },
      ]);
      expect(window.focusCalls).toBe(0);
    });

    it('raises a window that is behind other windows above them, without focus, and notifies', async () => {
      await start();
      const window = shown();
      window.focused = false; // the agent works in another application over it
      service.push({ name: 'callChanged', payload: ringing() });
      expect(window.moveTopCalls).toBe(1);
      expect(window.showInactiveCalls).toBe(0);
      expect(window.focusCalls).toBe(0);
      expect(window.flashes).toEqual([true]);
      expect(Notification.instances).toHaveLength(1);
    });

    it('notifies and flashes once the window loses the focus during the ring, not before, and only once', async () => {
      await start();
      const window = shown();
      const blurListeners = window.listenerCount('blur');
      service.push({ name: 'callChanged', payload: ringing() });
      expect(Notification.instances).toHaveLength(0);
      window.emit('blur'); // a blur while it still has the focus (another window of ours, say) changes nothing
      expect(Notification.instances).toHaveLength(0);

      window.focused = false;
      window.emit('blur');
      expect(Notification.instances).toHaveLength(1);
      expect(Notification.instances[0]!.options.body).toContain('Ada');
      expect(window.flashes).toEqual([true]);
      // The agent chose the other window: it is not pulled over it.
      expect(window.moveTopCalls).toBe(0);
      expect(window.focusCalls).toBe(0);
      window.emit('focus');
      window.emit('blur');
      expect(Notification.instances).toHaveLength(1);

      service.push({ name: 'callChanged', payload: ringing('active') });
      expect(Notification.instances[0]!.closed).toBe(true);
      expect(window.flashes).toEqual([true, false]);
      expect(window.listenerCount('blur')).toBe(blurListeners);
      window.emit('blur');
      expect(Notification.instances).toHaveLength(1);
    });

    it('Linux: no buttons; a click on the notification brings the window forward', async () => {
      await start({ platform: 'linux' });
      const window = shown();
      window.focused = false;
      service.push({ name: 'callChanged', payload: ringing() });
      const notification = Notification.instances[0]!;
      expect(notification.options.actions).toBeUndefined();
      expect(notification.options.title).toBe('Incoming call');
      notification.emit('click');
      expect(window.focused).toBe(true);
      expect(pushesSent('shortcutPressed')).toEqual([]);
    });

    it("is worded in the agent's language when it rings: title, caller, buttons", async () => {
      service.prefs = { ...service.prefs, language: 'es' };
      await start({ platform: 'win32' });
      const window = shown();
      window.focused = false;
      service.push({ name: 'callChanged', payload: ringing() });
      const notification = Notification.instances[0]!;
      expect(notification.options).toMatchObject({
        title: 'Llamada entrante',
        body: `Ada (${formatPhoneNumber('447700900123')})`,
        actions: [
          { type: 'button', text: 'Contestar' },
          { type: 'button', text: 'Rechazar' },
        ],
      });
      notification.emit('action', { actionIndex: 1 }, 1);
      expect(pushesSent('shortcutPressed')).toEqual([{ action: 'decline', localId: 'in:wacid.1' }]);

      // The next call follows a change of language; a caller with no name or number is unknown,
      // and in Arabic a number stays left to right.
      service.setPreferences({ language: 'ar' });
      const anonymous = ringing('ringing', 'in:wacid.2');
      service.push({ name: 'callChanged', payload: { ...anonymous, peer: {} } });
      expect(Notification.instances[1]!.options).toMatchObject({ title: 'مكالمة واردة', body: 'متصل غير معروف', actions: [{ type: 'button', text: 'رد' }, { type: 'button', text: 'رفض' }] });
      const numberOnly = ringing('ringing', 'in:wacid.3');
      service.push({ name: 'callChanged', payload: { ...numberOnly, peer: { number: '447700900123' } } });
      expect(Notification.instances[2]!.options.body).toBe(`\u2066${formatPhoneNumber('447700900123')}\u2069`);
    });

    it("says a colleague's transfer or consult in its title, the customer in its body, in the agent's language", async () => {
      await start({ platform: 'win32' });
      const window = shown();
      window.focused = false;
      const BEN = { agentId: 'ben', name: 'Ben Agent' };
      const transferRing = (localId: string, kind: 'transfer' | 'consult', colleague?: typeof BEN): CallState => ({
        ...ringing('ringing', localId),
        bridged: true,
        transfer: { id: localId.slice(3), kind, role: 'to', state: 'ringing', ...(colleague !== undefined ? { colleague } : {}) },
      });
      service.push({ name: 'callChanged', payload: transferRing('tr:xfer-1', 'transfer', BEN) });
      expect(Notification.instances[0]!.options).toMatchObject({
        title: 'Transfer from Ben Agent',
        body: `Ada (${formatPhoneNumber('447700900123')})`,
        actions: [
          { type: 'button', text: 'Answer' },
          { type: 'button', text: 'Decline' },
        ],
      });
      Notification.instances[0]!.emit('action', { actionIndex: 0 }, 0);
      expect(pushesSent('shortcutPressed')).toEqual([{ action: 'answer', localId: 'tr:xfer-1' }]);
      // The relay named no colleague: the window's word for one.
      service.push({ name: 'callChanged', payload: transferRing('tr:xfer-2', 'consult') });
      expect(Notification.instances[1]!.options).toMatchObject({ title: 'Consult from a colleague', body: `Ada (${formatPhoneNumber('447700900123')})` });
      // A customer's own call beside them is still an incoming call.
      service.push({ name: 'callChanged', payload: ringing('ringing', 'in:wacid.9') });
      expect(Notification.instances[2]!.options.title).toBe('Incoming call');

      // In the window's words for the same card, in the agent's language; in Arabic the name is set apart.
      service.setPreferences({ language: 'es' });
      service.push({ name: 'callChanged', payload: transferRing('tr:xfer-3', 'consult', BEN) });
      expect(Notification.instances[3]!.options).toMatchObject({ title: esCalls.incoming.consultFrom.replace('{{name}}', 'Ben Agent'), actions: [{ type: 'button', text: 'Contestar' }, { type: 'button', text: 'Rechazar' }] });
      expect(Notification.instances[3]!.options.title).toBe('Consulta de Ben Agent');
      service.setPreferences({ language: 'ar' });
      service.push({ name: 'callChanged', payload: transferRing('tr:xfer-4', 'transfer', BEN) });
      expect(Notification.instances[4]!.options.title).toBe(arCalls.incoming.transferFrom.replace('{{name}}', '\u2068Ben Agent\u2069'));
      service.push({ name: 'callChanged', payload: transferRing('tr:xfer-5', 'transfer') });
      expect(Notification.instances[5]!.options.title).toBe(arCalls.incoming.transferFrom.replace('{{name}}', arCalls.transfer.aColleague));
      expect(Notification.instances.map((n) => n.closed)).toEqual([false, false, false, false, false, false]);
    });

    it('still shows and flashes the window where notifications are not supported', async () => {
      Notification.supported = false;
      await start();
      const window = shown();
      window.close();
      service.push({ name: 'callChanged', payload: ringing() });
      expect(Notification.instances).toHaveLength(0);
      expect(window.visible).toBe(true);
      expect(window.flashes).toEqual([true]);
    });
  });

  describe('tel: and callto: links', () => {
    it('registers as the handler of both schemes (in development, with the script to run)', async () => {
      await start();
      expect(app.setAsDefaultProtocolClient.mock.calls).toEqual([['tel'], ['callto']]);

      resetFakeElectron();
      await start({ launch: { defaultApp: true, execPath: '/usr/lib/electron/electron', argv: ['/usr/lib/electron/electron', 'dist/electron/main.cjs'] } });
      expect(app.setAsDefaultProtocolClient.mock.calls).toEqual([
        ['tel', '/usr/lib/electron/electron', [resolve('dist/electron/main.cjs')]],
        ['callto', '/usr/lib/electron/electron', [resolve('dist/electron/main.cjs')]],
      ]);
    });

    it('a link handed over by a second instance goes to the service and the window comes forward', async () => {
      await start();
      const window = shown();
      await rendererStarts();
      window.close();
      app.emit('second-instance', new FakeEvent(), ['/opt/softphone/softphone', '--no-sandbox', 'tel:+44-20-7946-0958'], '/home/agent');
      expect(service.dialLinks).toEqual(['tel:+44-20-7946-0958']);
      expect(pushesSent('dialRequested')).toEqual([{ number: '442079460958', dial: false }]);
      expect(window.visible).toBe(true);
      expect(window.focused).toBe(true);
    });

    it('macOS open-url goes to the service', async () => {
      service.prefs = { ...service.prefs, dialLinksAtOnce: true };
      await start({ platform: 'darwin' });
      shown();
      await rendererStarts();
      const event = new FakeEvent();
      app.emit('open-url', event, 'callto://+442079460958');
      expect(event.defaultPrevented).toBe(true);
      expect(service.dialLinks).toEqual(['callto://+442079460958']);
      expect(pushesSent('dialRequested')).toEqual([{ number: '442079460958', dial: true }]);
    });

    it('a link that launched the app waits until the window listens', async () => {
      await start({ argv: ['/opt/softphone/softphone', 'tel:+442079460958'] });
      shown();
      expect(service.dialLinks).toEqual([]);
      await rendererStarts();
      expect(service.dialLinks).toEqual(['tel:+442079460958']);
      expect(pushesSent('dialRequested')).toEqual([{ number: '442079460958', dial: false }]);
      await rendererStarts(); // a reload asks again: the link is not dialled twice
      expect(service.dialLinks).toHaveLength(1);
    });

    it('a link that arrives before the service exists (macOS launch) is kept for it', async () => {
      const event = new FakeEvent();
      desktop = startDesktopApp({
        logger,
        platform: 'darwin',
        launch: { defaultApp: false, execPath: '/x', argv: ['/x'] },
        createSecretStore: () => ({ kind: 'memory', get: async () => undefined, set: async () => undefined, delete: async () => undefined }),
        createService: async () => service,
      });
      app.emit('open-url', event, 'tel:+442079460958');
      await desktop.ready;
      await rendererStarts();
      expect(service.dialLinks).toEqual(['tel:+442079460958']);
    });

    it('a bad number is refused with the reason, nothing dialled', async () => {
      await start();
      shown();
      await rendererStarts();
      app.emit('second-instance', new FakeEvent(), ['/opt/softphone/softphone', 'tel:not-a-number'], '/');
      expect(service.dialLinks).toEqual(['tel:not-a-number']);
      expect(pushesSent('dialRequested')).toEqual([]);
      expect(dialog.showMessageBox).toHaveBeenCalledTimes(1);
      const box = dialog.showMessageBox.mock.calls[0]!.at(-1) as { message: string; detail: string };
      expect(box.message).toBe('This link cannot be dialled');
      expect(box.detail).toMatch(/^Phone number/);
      // English is the catalogue's own: the reason exactly as the service gave it.
      expect(box.detail).toBe(refusalOf('tel:not-a-number'));
    });

    it("a refused link's reason is said in the agent's language too, values kept left to right in Arabic", async () => {
      service.prefs = { ...service.prefs, language: 'es' };
      await start();
      shown();
      await rendererStarts();
      app.emit('second-instance', new FakeEvent(), ['/opt/softphone/softphone', 'tel:not-a-number'], '/');
      const spanish = dialog.showMessageBox.mock.calls[0]!.at(-1) as { message: string; detail: string };
      expect(spanish.message).toBe('No se puede marcar este enlace');
      expect(spanish.detail).toBe(`${esRules.terms.phoneNumber}: ${esRules.phone.characters}`);
      expect(spanish.detail).not.toMatch(/Phone number|only digits|are allowed/);

      service.setPreferences({ language: 'ar' });
      const long = `tel:${'1'.repeat(600)}`;
      app.emit('second-instance', new FakeEvent(), ['/opt/softphone/softphone', long], '/');
      const arabic = dialog.showMessageBox.mock.calls[1]!.at(-1) as { detail: string };
      expect(refusalOf(long)).toBe('Phone number: the link is too long (512 characters at most)');
      expect(arabic.detail).toBe(`${arRules.terms.phoneNumber}: ${arRules.phone.linkTooLong_many.replace('{{count}}', '512')}`);
      expect(arabic.detail).not.toMatch(/[A-Za-z]/);
    });

    it("a refused link is said in the agent's language", async () => {
      app.systemLanguages = ['pt-BR'];
      await start();
      shown();
      await rendererStarts();
      app.emit('second-instance', new FakeEvent(), ['/opt/softphone/softphone', 'tel:not-a-number'], '/');
      expect((dialog.showMessageBox.mock.calls[0]!.at(-1) as { message: string }).message).toBe('Não é possível discar este link');
      service.setPreferences({ language: 'hi' });
      app.emit('second-instance', new FakeEvent(), ['/opt/softphone/softphone', 'tel:not-a-number'], '/');
      expect((dialog.showMessageBox.mock.calls[1]!.at(-1) as { message: string }).message).toBe('इस लिंक पर कॉल नहीं की जा सकती');
    });

    it('a second launch without a link only shows the window', async () => {
      await start();
      shown();
      await rendererStarts();
      app.emit('second-instance', new FakeEvent(), ['/opt/softphone/softphone', '--flag=tel:1'], '/');
      expect(service.dialLinks).toEqual([]);
    });
  });

  describe('update feed', () => {
    it('a new feed is asked of the agent in a native dialog, in their language, naming the address; Cancel is the default', async () => {
      const confirm = (await startKeepingOptions()).confirmUpdateFeed;
      dialog.showMessageBox.mockResolvedValueOnce({ response: 0, checkboxChecked: false });
      await expect(confirm('https://updates.example.com/softphone')).resolves.toBe(true);
      const box = dialog.showMessageBox.mock.calls[0]!.at(-1) as { message: string; detail: string; buttons: string[]; defaultId: number; cancelId: number };
      expect(box).toMatchObject({ message: 'Take updates from a new address?', buttons: ['Use this feed', 'Cancel'], defaultId: 1, cancelId: 1 });
      expect(box.detail).toContain('https://updates.example.com/softphone');

      service.setPreferences({ language: 'es' });
      dialog.showMessageBox.mockResolvedValueOnce({ response: 1, checkboxChecked: false });
      await expect(confirm('https://evil.example.net/')).resolves.toBe(false);
      const asked = dialog.showMessageBox.mock.calls[1]!.at(-1) as { message: string; detail: string; buttons: string[] };
      expect(asked.message).toBe('¿Recibir actualizaciones desde una dirección nueva?');
      expect(asked.buttons).toEqual(['Usar este origen', 'Cancelar']);
      expect(asked.detail).toContain('https://evil.example.net/');
    });
  });

  describe('global shortcuts', () => {
    it('hands the service a guard that refuses, before saving, a global shortcut another application holds', async () => {
      const guard = (await startKeepingOptions()).preferencesGuard;
      globalShortcut.heldElsewhere.add('Ctrl+Shift+D');
      const wanted = { ...service.prefs, globalShortcuts: true };
      expect(guard(wanted)).toMatchObject({
        ok: false,
        error: { code: 'invalid_input', field: 'shortcuts.decline', message: 'shortcuts.decline (Decline): Ctrl+Shift+D is taken by another application; choose another for a global shortcut' },
      });
      // Trying the free ones gave them back at once: the desk registers what is saved.
      expect(globalShortcut.callbacks.size).toBe(0);
      expect(guard({ ...wanted, shortcuts: { ...wanted.shortcuts, decline: 'Ctrl+Alt+D' } })).toEqual({ ok: true, value: undefined });
      expect(globalShortcut.callbacks.size).toBe(0);
      // Off: nothing to check, whoever holds what.
      expect(guard({ ...wanted, globalShortcuts: false })).toEqual({ ok: true, value: undefined });
    });

    it('registers the four shortcuts when turned on; a press reaches the window as shortcutPressed', async () => {
      await start();
      shown();
      expect(globalShortcut.register).not.toHaveBeenCalled();
      service.setPreferences({ globalShortcuts: true });
      expect([...globalShortcut.callbacks.keys()]).toEqual(['Ctrl+Shift+A', 'Ctrl+Shift+D', 'Ctrl+Shift+H', 'Ctrl+Shift+M']);
      globalShortcut.press('Ctrl+Shift+A');
      globalShortcut.press('Ctrl+Shift+M');
      // No call named: the window acts on the ringing call that waited longest, or the current one.
      expect(pushesSent('shortcutPressed')).toStrictEqual([{ action: 'answer' }, { action: 'mute' }]);
    });

    it('follows a changed shortcut, ignores unrelated changes, and lets go of all when turned off', async () => {
      service.prefs = { ...service.prefs, globalShortcuts: true };
      await start();
      expect(globalShortcut.register).toHaveBeenCalledTimes(4);
      service.setPreferences({ dialLinksAtOnce: true });
      expect(globalShortcut.register).toHaveBeenCalledTimes(4);

      service.setPreferences({ shortcuts: { ...service.prefs.shortcuts, mute: 'Ctrl+Alt+M' } });
      expect(globalShortcut.isRegistered('Ctrl+Shift+M')).toBe(false);
      expect(globalShortcut.isRegistered('Ctrl+Alt+M')).toBe(true);
      expect(globalShortcut.callbacks.size).toBe(4);
      shown();
      globalShortcut.press('Ctrl+Alt+M');
      expect(pushesSent('shortcutPressed')).toEqual([{ action: 'mute' }]);

      service.setPreferences({ globalShortcuts: false });
      expect(globalShortcut.callbacks.size).toBe(0);
    });

    it('a shortcut another application holds is refused, logged, listed in the tray and reported', async () => {
      globalShortcut.heldElsewhere.add('Ctrl+Shift+D');
      service.prefs = { ...service.prefs, globalShortcuts: true };
      await start();
      expect([...globalShortcut.callbacks.keys()]).toEqual(['Ctrl+Shift+A', 'Ctrl+Shift+H', 'Ctrl+Shift+M']);
      expect(desktop.refusedShortcuts()).toEqual([{ action: 'decline', accelerator: 'Ctrl+Shift+D' }]);
      expect(logger.records.filter((r) => r.level === 'warn' && r.msg.includes('held by another application')).map((r) => r.fields)).toEqual([
        { action: 'decline', accelerator: 'Ctrl+Shift+D' },
      ]);
      expect(menuLabels()).toContain('Ctrl+Shift+D (Decline) is taken by another application');

      service.setPreferences({ shortcuts: { ...service.prefs.shortcuts, decline: 'Ctrl+Alt+D' } });
      expect(desktop.refusedShortcuts()).toEqual([]);
      expect(menuLabels().some((l) => l.includes('taken by another application'))).toBe(false);
    });

    it('the refused ones are pushed to the window when they change and to each page that starts listening', async () => {
      globalShortcut.heldElsewhere.add('Ctrl+Shift+D');
      await start();
      shown();
      // Turned off: none refused.
      expect(pushesSent('shortcutsRefused')).toEqual([{ refused: [] }]);
      service.setPreferences({ globalShortcuts: true });
      expect(pushesSent('shortcutsRefused')).toEqual([{ refused: [] }, { refused: [{ action: 'decline', accelerator: 'Ctrl+Shift+D' }] }]);
      // Unchanged: nothing new to say.
      service.setPreferences({ dialLinksAtOnce: true });
      service.setPreferences({ shortcuts: { ...service.prefs.shortcuts, mute: 'Ctrl+Alt+M' } });
      expect(pushesSent('shortcutsRefused')).toHaveLength(2);
      // A page loading (or reloading) asks for its snapshot and hears the list again.
      await rendererStarts();
      expect(pushesSent('shortcutsRefused').at(-1)).toEqual({ refused: [{ action: 'decline', accelerator: 'Ctrl+Shift+D' }] });
      expect(pushesSent('shortcutsRefused')).toHaveLength(3);
      service.setPreferences({ shortcuts: { ...service.prefs.shortcuts, decline: 'Ctrl+Alt+D' } });
      expect(pushesSent('shortcutsRefused').at(-1)).toEqual({ refused: [] });
      expect(pushesSent('shortcutsRefused')).toHaveLength(4);
    });

    it('an accelerator Electron rejects is refused like a taken one', async () => {
      globalShortcut.register.mockImplementationOnce(() => {
        throw new Error('Failed to parse accelerator');
      });
      service.prefs = { ...service.prefs, globalShortcuts: true };
      await start();
      expect(desktop.refusedShortcuts()).toEqual([{ action: 'answer', accelerator: 'Ctrl+Shift+A' }]);
      expect(globalShortcut.callbacks.size).toBe(3);
    });
  });

  describe('start at login', () => {
    it('follows the preference', async () => {
      await start();
      expect(app.setLoginItemSettings.mock.calls).toEqual([[{ openAtLogin: false, args: ['--hidden'] }]]);
      service.setPreferences({ startAtLogin: true });
      expect(app.setLoginItemSettings.mock.calls.at(-1)).toEqual([{ openAtLogin: true, args: ['--hidden'] }]);
      service.setPreferences({ dialLinksAtOnce: true });
      expect(app.setLoginItemSettings).toHaveBeenCalledTimes(2);
      service.setPreferences({ startAtLogin: false });
      expect(app.setLoginItemSettings.mock.calls.at(-1)).toEqual([{ openAtLogin: false, args: ['--hidden'] }]);
    });

    it('a launch by the login item (Windows: --hidden) keeps the window in the tray until the agent asks for it', async () => {
      await start({ platform: 'win32', argv: ['C:\\Softphone\\Softphone.exe', '--hidden'] });
      const window = theWindow();
      window.emit('ready-to-show');
      await settle();
      expect(window.visible).toBe(false);
      expect(window.minimized).toBe(false);
      // Still reachable, and still rings.
      menu().click('Show');
      expect(window.visible).toBe(true);
      window.close();
      service.push({ name: 'callChanged', payload: ringing() });
      expect(window.visible).toBe(true);
      expect(window.focusCalls).toBe(1); // the Show click only
    });

    it('macOS: a launch at login keeps the window hidden too', async () => {
      app.openedAtLogin = true;
      await start({ platform: 'darwin' });
      const window = theWindow();
      window.emit('ready-to-show');
      await settle();
      expect(window.visible).toBe(false);
    });

    it('an ordinary launch shows the window', async () => {
      await start({ platform: 'win32' });
      const window = theWindow();
      window.emit('ready-to-show');
      expect(window.visible).toBe(true);
      expect(app.getLoginItemSettings).not.toHaveBeenCalled();
    });

    it('without a tray, a launch at login leaves the window minimised, never focused', async () => {
      Tray.failNext = true;
      await start({ platform: 'win32', argv: ['C:\\Softphone\\Softphone.exe', '--hidden'] });
      const window = theWindow();
      window.emit('ready-to-show');
      await settle();
      expect(window.visible).toBe(true);
      expect(window.minimized).toBe(true);
      expect(window.focusCalls).toBe(0);
    });
  });
});
