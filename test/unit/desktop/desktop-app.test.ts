import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WINDOW_GONE_REASON, type PushMessage } from '../../../shared/api';
import type { Result } from '../../../shared/result';
import esRules from '../../../shared/i18n/locales/es/rules.json';
import { fieldRule, text } from '../../../shared/i18n/text';
import { TextError } from '../../../shared/result';
import type { SecretStore } from '../../../electron/core/secret-store';
import { checkGlobalShortcuts } from '../../../electron/desktop/global-shortcuts';
import { startDesktopApp, type DesktopApp, type DesktopService, type DesktopServiceOptions } from '../../../electron/desktop/desktop-app';
import { CONTENT_SECURITY_POLICY } from '../../../electron/desktop/security-policy';
import { app, BrowserWindow, dialog, FakeEvent, FakeWebContents, ipcMain, Notification, resetFakeElectron, session } from './fake-electron';
import { deferred, FakeService, ringing } from './fake-service';
import { recordingLogger } from './recording-logger';

vi.mock('electron', () => import('./fake-electron'));

const APP_URL = 'app://softphone/index.html';
const PRELOAD = '/opt/softphone/dist/electron/preload.cjs';

/** Runs everything already queued, including promise chains a few steps long. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const memorySecrets: SecretStore = {
  kind: 'memory',
  get: async () => undefined,
  set: async () => undefined,
  delete: async () => undefined,
};

describe('desktop host', () => {
  let service: FakeService;
  let serviceOptions: DesktopServiceOptions | undefined;
  let desktop: DesktopApp;
  let logger: ReturnType<typeof recordingLogger>;

  const start = (createService?: () => Promise<DesktopService>) => {
    desktop = startDesktopApp({
      logger,
      createSecretStore: () => memorySecrets,
      createService:
        createService ??
        (async (options) => {
          serviceOptions = options;
          return service;
        }),
    });
    return desktop.ready;
  };
  const theWindow = () => {
    expect(BrowserWindow.instances).toHaveLength(1);
    return BrowserWindow.instances[0]!;
  };

  beforeEach(() => {
    resetFakeElectron();
    service = new FakeService();
    serviceOptions = undefined;
    logger = recordingLogger();
  });
  afterEach(() => {
    service.closing.resolve();
  });

  describe('single instance', () => {
    it('a second instance quits at once: no service, no window', async () => {
      app.singleInstanceLock = false;
      let created = false;
      await start(async () => {
        created = true;
        return service;
      });
      expect(app.quit).toHaveBeenCalledTimes(1);
      expect(app.quitted).toBe(true);
      expect(created).toBe(false);
      expect(BrowserWindow.instances).toHaveLength(0);
    });

    it("the running instance brings its window forward when a second one starts", async () => {
      await start();
      const window = theWindow();
      window.minimized = true;
      app.emit('second-instance', new FakeEvent(), ['softphone'], '/');
      expect(window.minimized).toBe(false);
      expect(window.visible).toBe(true);
      expect(window.focused).toBe(true);
    });
  });

  describe('startup', () => {
    it('creates the service with the user data directory, a secret store and the global-shortcut guard', async () => {
      await start();
      expect(serviceOptions).toEqual({
        dataDir: '/home/agent/.config/softphone',
        secrets: memorySecrets,
        preferencesGuard: checkGlobalShortcuts,
        beforeUpdateRestart: expect.any(Function),
        confirmUpdateFeed: expect.any(Function),
      });
    });

    it('opens one window with the security options written out, loading the built renderer', async () => {
      await start();
      const window = theWindow();
      const webPreferences = window.options.webPreferences as Record<string, unknown>;
      expect(webPreferences.contextIsolation).toBe(true);
      expect(webPreferences.sandbox).toBe(true);
      expect(webPreferences.nodeIntegration).toBe(false);
      expect(webPreferences.webSecurity).toBe(true);
      expect(webPreferences.preload).toBe(PRELOAD);
      expect(window.loadURL).toHaveBeenCalledWith(APP_URL);
      window.emit('ready-to-show');
      expect(window.visible).toBe(true);
    });

    it('shows an error and quits when the service cannot start', async () => {
      await start(() => Promise.reject(new Error('data directory is not writable')));
      expect(dialog.showErrorBox).toHaveBeenCalledWith('Softphone could not start', 'data directory is not writable');
      expect(BrowserWindow.instances).toHaveLength(0);
      await settle();
      expect(app.quitted).toBe(true);
    });

    it("says so in the system's language: there are no preferences without the service", async () => {
      app.systemLanguages = ['es-419'];
      await start(() => Promise.reject(new Error('data directory is not writable')));
      expect(dialog.showErrorBox).toHaveBeenCalledWith('No se pudo iniciar Softphone', 'data directory is not writable');
    });

    it("says a rule of the catalogue that stopped the start in the system's language, the system's own words as they came", async () => {
      app.systemLanguages = ['es-ES'];
      const refused = fieldRule('gatewayUrl', text('settings.versionSegment', { example: 'https://gateway.example.com/restapi/v1' }));
      await start(() => Promise.reject(new TextError(refused)));
      expect(dialog.showErrorBox).toHaveBeenCalledWith(
        'No se pudo iniciar Softphone',
        `gatewayUrl: ${esRules.settings.versionSegment.replace('{{example}}', 'https://gateway.example.com/restapi/v1')}`,
      );
    });

    it('titles the window with the product name, the same in every language', async () => {
      service.prefs = { ...service.prefs, language: 'id' };
      await start();
      expect(theWindow().options.title).toBe('Softphone');
    });

    it('reloads the page when the window\'s renderer process dies', async () => {
      await start();
      const window = theWindow();
      window.webContents.emit('render-process-gone', new FakeEvent(), { reason: 'crashed', exitCode: 139 });
      expect(window.loadURL.mock.calls).toEqual([[APP_URL], [APP_URL]]);
    });

    it('ends the calls whose audio the window carried when it reloads, crashes or closes for real; not on its first load', async () => {
      await start();
      const window = theWindow();
      window.webContents.emit('did-navigate', new FakeEvent(), APP_URL, 200, 'OK');
      expect(service.gone).toEqual([]);
      window.webContents.emit('did-finish-load', new FakeEvent());
      // A navigation that starts but is blocked (a file dropped on the window) commits nothing: no did-navigate.
      window.webContents.emit('did-start-navigation', { isMainFrame: true, isSameDocument: false, url: 'file:///tmp/dropped.pdf' });
      expect(service.gone).toEqual([]);
      window.webContents.emit('did-navigate', new FakeEvent(), APP_URL, 200, 'OK');
      expect(service.gone).toEqual([{ calls: 'all', reason: WINDOW_GONE_REASON.reloaded }]);
      window.webContents.emit('render-process-gone', new FakeEvent(), { reason: 'crashed', exitCode: 139 });
      expect(service.gone.at(-1)).toEqual({ calls: 'all', reason: WINDOW_GONE_REASON.crashed });
      const before = service.gone.length;
      window.webContents.emit('render-process-gone', new FakeEvent(), { reason: 'clean-exit', exitCode: 0 });
      expect(service.gone.length).toBe(before);
    });

    it('quits when the last window is gone: calls have no audio without it', async () => {
      await start();
      app.emit('window-all-closed');
      expect(app.quit).toHaveBeenCalled();
    });
  });

  describe('content security policy', () => {
    it('replaces any CSP on every response with the strict one', async () => {
      await start();
      const listener = session.defaultSession.headersListener!;
      let headers: Record<string, string[]> | undefined;
      listener({ responseHeaders: { 'content-security-policy': ["default-src *"], 'Content-Type': ['text/html'] } }, (r) => (headers = r.responseHeaders));
      expect(headers).toEqual({ 'Content-Type': ['text/html'], 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] });
      for (const directive of [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "img-src 'self' data:",
        "media-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ]) {
        expect(CONTENT_SECURITY_POLICY.split('; ')).toContain(directive);
      }
      expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-');
    });
  });

  describe('permissions', () => {
    const ours = () => theWindow().webContents;

    const request = (permission: string, details: Record<string, unknown>, contents: FakeWebContents = ours()) => {
      let granted: boolean | undefined;
      session.defaultSession.permissionRequestHandler!(contents, permission, (answer: boolean) => (granted = answer), details);
      return granted;
    };
    const check = (permission: string, details: Record<string, unknown>, contents: FakeWebContents | null = ours()) =>
      session.defaultSession.permissionCheckHandler!(contents, permission, 'file:///', { isMainFrame: true, ...details });

    beforeEach(async () => {
      await start();
    });

    it('grants the microphone and notifications to our page', () => {
      expect(request('media', { requestingUrl: APP_URL, isMainFrame: true, mediaTypes: ['audio'] })).toBe(true);
      expect(request('notifications', { requestingUrl: `${APP_URL}#/calls`, isMainFrame: true })).toBe(true);
      expect(check('media', { requestingUrl: APP_URL, mediaType: 'audio' })).toBe(true);
      expect(check('notifications', { requestingUrl: APP_URL })).toBe(true);
    });

    it('denies the camera, also when asked together with the microphone', () => {
      expect(request('media', { requestingUrl: APP_URL, isMainFrame: true, mediaTypes: ['video'] })).toBe(false);
      expect(request('media', { requestingUrl: APP_URL, isMainFrame: true, mediaTypes: ['audio', 'video'] })).toBe(false);
      expect(request('media', { requestingUrl: APP_URL, isMainFrame: true, mediaTypes: [] })).toBe(false);
      expect(request('media', { requestingUrl: APP_URL, isMainFrame: true })).toBe(false);
      expect(check('media', { requestingUrl: APP_URL, mediaType: 'video' })).toBe(false);
      expect(check('media', { requestingUrl: APP_URL, mediaType: 'unknown' })).toBe(false);
    });

    it('denies everything not in the table, for our page too', () => {
      for (const permission of ['geolocation', 'display-capture', 'clipboard-read', 'openExternal', 'midi', 'hid', 'fullscreen', 'unknown', 'toString', '__proto__']) {
        expect(request(permission, { requestingUrl: APP_URL, isMainFrame: true }), permission).toBe(false);
        expect(check(permission, { requestingUrl: APP_URL }), permission).toBe(false);
      }
    });

    it('denies other origins and other local files', () => {
      for (const url of ['https://evil.example/', 'http://127.0.0.1:8080/index.html', 'file:///tmp/evil.html', 'not a url']) {
        expect(request('media', { requestingUrl: url, isMainFrame: true, mediaTypes: ['audio'] }), url).toBe(false);
        expect(request('notifications', { requestingUrl: url, isMainFrame: true }), url).toBe(false);
        expect(check('media', { requestingUrl: url, mediaType: 'audio' }), url).toBe(false);
      }
    });

    it("falls back to the asking web contents' URL, and denies when there is none", () => {
      expect(check('notifications', {})).toBe(true); // our window shows APP_URL
      expect(check('notifications', {}, null)).toBe(false);
      const foreign = new FakeWebContents();
      foreign.url = 'https://evil.example/';
      expect(check('notifications', {}, foreign)).toBe(false);
      expect(request('notifications', { requestingUrl: '', isMainFrame: true }, foreign)).toBe(false);
    });
  });

  describe('navigation guards', () => {
    it('deny navigation, redirects, window.open and webviews in every web contents', async () => {
      await start();
      const created = new FakeWebContents();
      for (const contents of [theWindow().webContents, created]) {
        if (contents === created) app.emit('web-contents-created', new FakeEvent(), created);
        const navigate = new FakeEvent();
        contents.emit('will-navigate', navigate, 'https://evil.example/');
        expect(navigate.defaultPrevented).toBe(true);

        const redirect = new FakeEvent();
        contents.emit('will-redirect', redirect, 'https://evil.example/');
        expect(redirect.defaultPrevented).toBe(true);

        const subframe = new FakeEvent({ isMainFrame: false, url: 'https://evil.example/' });
        contents.emit('will-frame-navigate', subframe);
        expect(subframe.defaultPrevented).toBe(true);

        expect(contents.windowOpenHandler?.({ url: 'https://evil.example/' })).toEqual({ action: 'deny' });

        const webview = new FakeEvent();
        contents.emit('will-attach-webview', webview, {}, {});
        expect(webview.defaultPrevented).toBe(true);
      }
    });
  });

  describe('IPC and pushes', () => {
    it('serves commands from the window and pushes to it', async () => {
      await start();
      const window = theWindow();
      const handler = ipcMain.handlers.get('softphone:hangUp')!;
      const result = await handler({ sender: window.webContents, senderFrame: { url: APP_URL } }, { localId: 'out-1' });
      expect(result).toEqual({ ok: true, value: null });
      // The tray reads the service's snapshot at startup; the window's command is the only other one.
      expect(service.handled.filter((h) => h.name !== 'getSnapshot')).toEqual([{ name: 'hangUp', params: { localId: 'out-1' } }]);

      const refused = (await handler({ sender: new FakeWebContents(), senderFrame: { url: APP_URL } }, { localId: 'out-1' })) as Result<unknown>;
      expect(!refused.ok && refused.error.code).toBe('unauthorized');

      const push: PushMessage = { name: 'connectionChanged', payload: { status: 'connecting', since: 3 } };
      service.push(push);
      expect(window.webContents.sent).toContainEqual(['softphone:push:connectionChanged', push.payload]);
    });
  });

  describe('incoming call notification', () => {
    it('notifies while the window is in the background, focuses it on click, closes when the call stops ringing', async () => {
      await start();
      const window = theWindow();
      window.focused = false;
      service.push({ name: 'callChanged', payload: ringing() });
      service.push({ name: 'callChanged', payload: ringing() }); // a duplicate push shows nothing new
      expect(Notification.instances).toHaveLength(1);
      const notification = Notification.instances[0]!;
      expect(notification.shown).toBe(true);
      expect(notification.options.title).toBe('Incoming call');
      expect(notification.options.body).toContain('Ada');
      expect(window.flashed).toBe(true);

      notification.emit('click');
      expect(window.focused).toBe(true);

      service.push({ name: 'callChanged', payload: ringing('active') });
      expect(notification.closed).toBe(true);
    });

    it('stays quiet while the window is in front', async () => {
      await start();
      theWindow().visible = true;
      theWindow().focused = true;
      service.push({ name: 'callChanged', payload: ringing() });
      expect(Notification.instances).toHaveLength(0);
    });
  });

  describe('quit', () => {
    it('waits for the service to close (ending live calls) before quitting', async () => {
      await start();
      app.quit();
      await settle();
      expect(service.closeCalls).toBe(1);
      expect(app.quitted).toBe(false);

      app.quit(); // a second request while closing neither closes twice nor quits early
      expect(service.closeCalls).toBe(1);
      await settle();
      expect(app.quitted).toBe(false);

      service.closing.resolve();
      await settle();
      expect(app.quitted).toBe(true);
      expect(ipcMain.handlers.size).toBe(0);
    });

    it('quits even when closing the service fails', async () => {
      await start();
      app.quit();
      service.closing.reject(new Error('gateway unreachable'));
      await settle();
      expect(app.quitted).toBe(true);
      expect(logger.records.some((r) => r.level === 'error' && r.msg === 'closing the service failed')).toBe(true);
    });

    it('a quit during startup closes the service once it exists, and opens no window', async () => {
      const starting = deferred<DesktopService>();
      const ready = start(() => starting.promise);
      await settle();
      app.quit();
      expect(app.quitted).toBe(false);
      starting.resolve(service);
      await ready;
      expect(service.closeCalls).toBe(1);
      service.closing.resolve();
      await settle();
      expect(app.quitted).toBe(true);
      expect(BrowserWindow.instances).toHaveLength(0);
    });
  });
});

describe('every BrowserWindow in electron/desktop', () => {
  it('writes the security options out literally (style.md 7)', async () => {
    const dir = join(import.meta.dirname, '../../../electron/desktop');
    const sources = (await readdir(dir)).filter((name) => name.endsWith('.ts'));
    let windows = 0;
    for (const name of sources) {
      const text = await readFile(join(dir, name), 'utf8');
      for (const match of text.matchAll(/new BrowserWindow\(/g)) {
        windows += 1;
        const options = text.slice(match.index, text.indexOf('\n  });', match.index));
        for (const literal of [
          'contextIsolation: true',
          'sandbox: true',
          'nodeIntegration: false',
          'webSecurity: true',
          'allowRunningInsecureContent: false',
          'experimentalFeatures: false',
          'webviewTag: false',
          "disableBlinkFeatures: 'Auxclick'",
        ]) {
          expect(options, `${name}: ${literal}`).toContain(literal);
        }
      }
    }
    expect(windows).toBe(1);
  });
});
