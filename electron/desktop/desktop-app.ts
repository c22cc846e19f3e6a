// The Electron host's lifecycle: one instance, one window, one service. main.ts supplies the real
// service; tests supply a fake one, with the `electron` module mocked.
import { app, BrowserWindow, dialog, session } from 'electron';
import type { SoftphoneBackend } from '../../shared/api';
import { createLogger, type Logger } from '../../shared/log';
import type { SecretStore } from '../core/secret-store';
import { notifyIncomingCalls } from './incoming-call-notifier';
import { registerSoftphoneIpc } from './ipc';
import { rendererLocation, type RendererLocation } from './renderer-location';
import { createSafeStorageSecretStore } from './safe-storage-secret-store';
import { installNavigationGuards, installSessionSecurity } from './security-policy';
import { errorText } from '../../shared/result';

/** Must match appId in electron-builder.yml: Windows ties notifications to it. */
export const APP_ID = 'app.softphone.desktop';

/** What the host needs of the main-process service (electron/core/softphone-service.ts). */
export interface DesktopService extends SoftphoneBackend {
  /** Terminates live calls (protocol.md: terminate is sent also on app quit) and stops everything. */
  close(): Promise<void>;
}

export interface DesktopServiceOptions {
  dataDir: string;
  secrets: SecretStore;
}

export interface DesktopAppOptions {
  createService: (options: DesktopServiceOptions) => Promise<DesktopService>;
  /** Defaults to the safeStorage store in `<userData>/secrets.json`. */
  createSecretStore?: (userDataDir: string) => SecretStore;
  logger?: Logger;
  /** Quitting waits this long at most for the service to end its calls. */
  closeTimeoutMs?: number;
}

export interface DesktopApp {
  /** Settles when startup has finished: the window exists, or startup failed, or this was a second instance. */
  ready: Promise<void>;
  getWindow(): BrowserWindow | undefined;
}

export function startDesktopApp(options: DesktopAppOptions): DesktopApp {
  const logger = options.logger ?? createLogger('desktop');
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
  const createSecretStore = options.createSecretStore ?? ((userDataDir: string) => createSafeStorageSecretStore({ userDataDir }));

  // A second launch (e.g. from a desktop shortcut) must not start a second service: two would
  // both claim incoming calls. It hands over to the running instance and leaves.
  if (!app.requestSingleInstanceLock()) {
    logger.info('the softphone is already running: bringing its window forward');
    app.quit();
    return { ready: Promise.resolve(), getWindow: () => undefined };
  }

  let window: BrowserWindow | undefined;
  let serviceStarting: Promise<DesktopService | undefined> = Promise.resolve(undefined);
  let quitPhase: 'running' | 'closing' | 'closed' = 'running';
  const cleanups: Array<() => void> = [];

  const liveWindow = (): BrowserWindow | undefined => (window && !window.isDestroyed() ? window : undefined);
  const showWindow = (): void => {
    const current = liveWindow();
    if (!current) return;
    if (current.isMinimized()) current.restore();
    current.show();
    current.focus();
  };

  app.on('second-instance', showWindow);
  installNavigationGuards(app, logger);
  if (process.platform === 'win32') app.setAppUserModelId(APP_ID);

  // Media lives in the window (ARCHITECTURE.md: the renderer owns media), so without it no call can
  // have audio: closing the window quits, on every platform.
  app.on('window-all-closed', () => app.quit());

  app.on('before-quit', (event) => {
    if (quitPhase === 'closed') return;
    event.preventDefault();
    if (quitPhase === 'closing') return;
    quitPhase = 'closing';
    void closeService().finally(() => {
      quitPhase = 'closed';
      app.quit();
    });
  });

  async function closeService(): Promise<void> {
    const service = await serviceStarting;
    if (service) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timed-out'>((resolve) => {
        timer = setTimeout(() => resolve('timed-out'), closeTimeoutMs);
      });
      try {
        const outcome = await Promise.race([service.close().then(() => 'closed' as const), timedOut]);
        if (outcome === 'timed-out') logger.warn('the service did not finish closing in time: quitting anyway', { closeTimeoutMs });
      } catch (e) {
        logger.error('closing the service failed', { error: e });
      } finally {
        clearTimeout(timer);
      }
    }
    for (const cleanup of cleanups.splice(0)) cleanup();
  }

  function createWindow(location: RendererLocation): BrowserWindow {
    const created = new BrowserWindow({
      width: 960,
      height: 700,
      minWidth: 380,
      minHeight: 560,
      title: 'Softphone',
      show: false,
      autoHideMenuBar: true,
      webPreferences: {
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        preload: location.preloadPath,
        webSecurity: true,
        // A hidden or minimised window must still ring on time and keep call audio flowing.
        backgroundThrottling: false,
      },
    });
    created.once('ready-to-show', () => created.show());
    created.on('closed', () => {
      if (window === created) window = undefined;
    });
    created.webContents.on('render-process-gone', (_event, details) => {
      logger.error('the window stopped', { reason: details.reason, exitCode: details.exitCode });
      if (details.reason !== 'clean-exit' && quitPhase === 'running' && !created.isDestroyed()) loadPage(created, location.appUrl);
    });
    loadPage(created, location.appUrl);
    return created;
  }

  function loadPage(target: BrowserWindow, appUrl: string): void {
    target.loadURL(appUrl).catch((e: unknown) => logger.error('the window could not load its page (was `npm run build:renderer` run?)', { url: appUrl, error: e }));
  }

  async function start(): Promise<void> {
    await app.whenReady();
    const location = rendererLocation(app.getAppPath());
    installSessionSecurity(session.defaultSession, location.appUrl, logger);

    const dataDir = app.getPath('userData');
    const starting = options.createService({ dataDir, secrets: createSecretStore(dataDir) });
    serviceStarting = starting;
    const service = await starting;
    if (quitPhase !== 'running') return;

    cleanups.push(registerSoftphoneIpc({ backend: service, appUrl: location.appUrl, getWebContents: () => liveWindow()?.webContents, logger }));
    cleanups.push(notifyIncomingCalls({ backend: service, getWindow: liveWindow, showWindow }));
    window = createWindow(location);
  }

  const ready = start().catch((e: unknown) => {
    serviceStarting = Promise.resolve(undefined);
    logger.error('the softphone could not start', { error: e });
    dialog.showErrorBox('Softphone could not start', errorText(e));
    app.quit();
  });

  return { ready, getWindow: liveWindow };
}
