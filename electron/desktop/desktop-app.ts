// The Electron host's lifecycle: one instance, one window, one service. main.ts supplies the real
// service; tests supply a fake one, with the `electron` module mocked.
import { join } from 'node:path';
import { app, BrowserWindow, dialog, protocol, session } from 'electron';
import { WINDOW_GONE_REASON, type SoftphoneBackend } from '../../shared/api';
import { createLogger, type Logger } from '../../shared/log';
import type { Preferences } from '../../shared/preferences';
import type { RuleText } from '../../shared/i18n/text';
import type { SecretStore } from '../core/secret-store';
import { registerAppScheme, serveRenderer } from './app-protocol';
import { HIDDEN_ARG, startDesk, type Desk } from './desk';
import { desktopTextsFor, type DesktopTexts } from './desktop-texts';
import { dialLinksIn, registerDialLinkSchemes, type LaunchInfo } from './dial-links';
import { withHostPushes } from './host-pushes';
import type { PreferencesGuard } from '../core/preferences-store';
import { checkGlobalShortcuts } from './global-shortcuts';
import { notifyIncomingCalls } from './incoming-call-notifier';
import { registerSoftphoneIpc } from './ipc';
import { rendererLocation, type RendererLocation } from './renderer-location';
import { createSafeStorageSecretStore } from './safe-storage-secret-store';
import { installNavigationGuards, installSessionSecurity } from './security-policy';
import type { RefusedShortcut } from './tray-menu';
import { errorText, TextError, type Result } from '../../shared/result';

/** Must match appId in electron-builder.yml: Windows ties notifications to it. */
export const APP_ID = 'app.softphone.desktop';

/** What the host needs of the main-process service (electron/core/softphone-service.ts). */
export interface DesktopService extends SoftphoneBackend {
  /** Terminates live calls (protocol.md: terminate is sent also on app quit) and stops everything. */
  close(): Promise<void>;
  /** The desk preferences now; changes arrive as preferencesChanged pushes. */
  preferences(): Preferences;
  /** A tel:/callto: link: checked, then handed to the window as dialRequested (refused with the reason when bad). */
  requestDial(link: string): Result<{ number: string; dial: boolean }>;
}

export interface DesktopServiceOptions {
  dataDir: string;
  secrets: SecretStore;
  /** The host's check of a preferences change: global shortcuts another application holds are refused. */
  preferencesGuard: PreferencesGuard;
  /**
   * Called just before an update quits the app to install itself: the window then closes instead
   * of hiding to the tray. Returns what undoes it when the install does not start.
   */
  beforeUpdateRestart: () => () => void;
  /**
   * Asks the agent in a dialog of this process, which the window cannot answer for them, whether
   * updates may come from a new feed (update-service.ts confirmFeedChange): the feed decides what
   * runs at the next restart. Resolves true only on "Use this feed".
   */
  confirmUpdateFeed: (feedUrl: string) => Promise<boolean>;
}

export interface DesktopAppOptions {
  createService: (options: DesktopServiceOptions) => Promise<DesktopService>;
  /** Defaults to the safeStorage store in `<userData>/secrets.json`. */
  createSecretStore?: (userDataDir: string) => SecretStore;
  logger?: Logger;
  /** Quitting waits this long at most for the service to end its calls. */
  closeTimeoutMs?: number;
  /** Defaults to process.platform. */
  platform?: NodeJS.Platform;
  /** How this process was started (its argv may hold a tel: link); defaults to `process`'s. */
  launch?: LaunchInfo;
}

export interface DesktopApp {
  /** Settles when startup has finished: the window exists, or startup failed, or this was a second instance. */
  ready: Promise<void>;
  getWindow(): BrowserWindow | undefined;
  /**
   * Global shortcuts another application already holds: they work only while the window has the
   * focus. Also listed in the tray menu and logged.
   */
  refusedShortcuts(): readonly RefusedShortcut[];
}

export function startDesktopApp(options: DesktopAppOptions): DesktopApp {
  const logger = options.logger ?? createLogger('desktop');
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
  const createSecretStore = options.createSecretStore ?? ((userDataDir: string) => createSafeStorageSecretStore({ userDataDir }));
  const platform = options.platform ?? process.platform;
  const launch = options.launch ?? { defaultApp: process.defaultApp === true, execPath: process.execPath, argv: process.argv };

  // A second launch (e.g. from a desktop shortcut, or a tel: link) must not start a second service:
  // two would both claim incoming calls. It hands its arguments to the running instance and leaves.
  if (!app.requestSingleInstanceLock()) {
    logger.info('the softphone is already running: bringing its window forward');
    app.quit();
    return { ready: Promise.resolve(), getWindow: () => undefined, refusedShortcuts: () => [] };
  }

  // Before ready: Chromium fixes the privileges of its schemes at start (app-protocol.ts).
  registerAppScheme(protocol);

  let window: BrowserWindow | undefined;
  let serviceStarting: Promise<DesktopService | undefined> = Promise.resolve(undefined);
  let service: DesktopService | undefined;
  let desk: Desk | undefined;
  let quitPhase: 'running' | 'closing' | 'closed' = 'running';
  /** An update is quitting the app to install itself: the window closes for real. */
  let restartingToUpdate = false;
  const cleanups: Array<() => void> = [];
  /** Dial links wait here until the window listens for dialRequested (host-pushes.ts). */
  const pendingLinks: string[] = [];
  let rendererListening = false;
  /** Started by the login item: the window stays in the tray until the agent asks for it. */
  let launchedHidden = false;
  let settleDesk: () => void = () => undefined;
  /** Settles once the desk started or failed to: only then is it known whether there is a tray. */
  const deskSettled = new Promise<void>((resolve) => {
    settleDesk = resolve;
  });
  const hasTray = (): boolean => desk?.hasTray() === true;
  /** What this process says, in the agent's language; the operating system's until the service is up. */
  const texts = (): DesktopTexts => desktopTextsFor(service?.preferences().language ?? 'auto', app);

  const liveWindow = (): BrowserWindow | undefined => (window && !window.isDestroyed() ? window : undefined);
  /** The agent asked for the window (tray, second launch, a link they clicked): it may take the focus. */
  const showWindow = (): void => {
    const current = liveWindow();
    if (!current) return;
    if (current.isMinimized()) current.restore();
    current.show();
    current.focus();
  };

  const deliverLinks = (): void => {
    if (service === undefined || !rendererListening) return;
    for (const link of pendingLinks.splice(0)) {
      const result = service.requestDial(link);
      if (result.ok) continue;
      logger.warn('a dial link was refused', { reason: result.error.message });
      const current = liveWindow();
      // The reason is a rule of shared/'s catalogue (dial-link.ts): said in the agent's language.
      const { t, text } = texts();
      const box = { type: 'warning' as const, message: t('dialLinkRefused'), detail: text(result.error.text ?? result.error.message) };
      void (current ? dialog.showMessageBox(current, box) : dialog.showMessageBox(box)).catch((e: unknown) => logger.warn('the refusal could not be shown', { error: e }));
    }
  };
  const openDialLinks = (links: readonly string[]): void => {
    pendingLinks.push(...links);
    deliverLinks();
  };

  app.on('second-instance', (_event, argv) => {
    showWindow();
    openDialLinks(dialLinksIn(argv));
  });
  // macOS hands links over this way, also before the app is ready when a link launched it.
  app.on('open-url', (event, url) => {
    event.preventDefault();
    showWindow();
    openDialLinks(dialLinksIn([url]));
  });
  // macOS: a click on the Dock icon brings back a window closed to the tray.
  app.on('activate', showWindow);
  installNavigationGuards(app, logger);
  if (platform === 'win32') app.setAppUserModelId(APP_ID);

  // Closing the window hides it to the tray (see createWindow); the window closes for real only
  // with "Quit when the window is closed" on, and then the app goes with it: media lives in the
  // window (ARCHITECTURE.md: the renderer owns media), so without it no call can have audio.
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
    const starting = await serviceStarting;
    if (starting) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timed-out'>((resolve) => {
        timer = setTimeout(() => resolve('timed-out'), closeTimeoutMs);
      });
      try {
        const outcome = await Promise.race([starting.close().then(() => 'closed' as const), timedOut]);
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
      title: texts().t('windowTitle'),
      show: false,
      autoHideMenuBar: true,
      // Electron's security checklist, each item written out even where it is the default, so that
      // no default changing under us can loosen the window (electron/REFERENCE.md "Security checklist").
      webPreferences: {
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        nodeIntegrationInSubFrames: false,
        nodeIntegrationInWorker: false,
        // The preload exposes SoftphoneApi through contextBridge and nothing else (preload.ts).
        preload: location.preloadPath,
        webSecurity: true,
        allowRunningInsecureContent: false,
        experimentalFeatures: false,
        webviewTag: false,
        navigateOnDragDrop: false,
        // A middle click must not open a link in a new window (setWindowOpenHandler denies it anyway).
        disableBlinkFeatures: 'Auxclick',
        // A hidden or minimised window must still ring on time and keep call audio flowing.
        backgroundThrottling: false,
      },
    });
    created.once('ready-to-show', () => {
      if (!launchedHidden) {
        created.show();
        return;
      }
      // Without a tray a hidden window could not be found again: it waits minimised instead.
      void deskSettled.then(() => {
        if (created.isDestroyed() || created.isVisible() || hasTray()) return;
        created.showInactive();
        created.minimize();
      });
    });
    created.on('close', (event) => {
      // Quitting (tray, app menu) closes the window for real; the agent closing it only hides it,
      // so that the service stays online and calls keep ringing.
      if (quitPhase !== 'running' || restartingToUpdate || service?.preferences().quitOnClose === true) return;
      event.preventDefault();
      // Some Linux desktops have no tray: a hidden window would be out of reach, so it is minimised.
      if (hasTray()) created.hide();
      else created.minimize();
    });
    // Windows log-off or shutdown: a window that refused to close would hold the session up.
    created.on('session-end', () => app.quit());
    created.on('show', () => desk?.windowChanged());
    created.on('hide', () => desk?.windowChanged());
    created.on('closed', () => {
      if (window === created) window = undefined;
    });
    // The window carries the calls' audio (the renderer owns the media): a reload, a crash or the
    // window closing for real ends them, with the reason, rather than leave a call that shows
    // "Connected" with no media until the service cuts it. A bridged call rejoins instead: the
    // reloaded window answers the relay's new leg (rejoinCall).
    const mediaGone = (reason: RuleText): void => {
      if (quitPhase !== 'running') return;
      void service?.windowGone?.('all', reason).catch((e: unknown) => logger.error('ending the calls of a gone window failed', { error: errorText(e) }));
    };
    let loadedOnce = false;
    created.webContents.on('did-finish-load', () => {
      loadedOnce = true;
    });
    // did-navigate: the main frame committed a new document (a reload included). Not
    // did-start-navigation, which also fires for a navigation the security policy then blocks
    // (a file dropped on the window): that one leaves the page, and its calls, as they are.
    created.webContents.on('did-navigate', () => {
      if (loadedOnce) mediaGone(WINDOW_GONE_REASON.reloaded);
    });
    created.on('closed', () => mediaGone(WINDOW_GONE_REASON.reloaded));
    created.webContents.on('render-process-gone', (_event, details) => {
      logger.error('the window stopped', { reason: details.reason, exitCode: details.exitCode });
      if (details.reason !== 'clean-exit') mediaGone(WINDOW_GONE_REASON.crashed);
      rendererListening = false;
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
    // Windows starts the login item with HIDDEN_ARG; macOS says so itself (Linux has no login item).
    launchedHidden = launch.argv.includes(HIDDEN_ARG) || (platform === 'darwin' && app.getLoginItemSettings().wasOpenedAtLogin);
    registerDialLinkSchemes(app, launch, logger);
    const location = rendererLocation(app.getAppPath());
    installSessionSecurity(session.defaultSession, location.appUrl, logger);
    serveRenderer(protocol, location.rendererDir);

    const dataDir = app.getPath('userData');
    const beforeUpdateRestart = (): (() => void) => {
      restartingToUpdate = true;
      return () => {
        restartingToUpdate = false;
      };
    };
    const confirmUpdateFeed = async (feedUrl: string): Promise<boolean> => {
      const current = liveWindow();
      const { t } = texts();
      const box = {
        type: 'warning' as const,
        title: t('updateFeed.title'),
        message: t('updateFeed.message'),
        detail: t('updateFeed.detail', { url: feedUrl }),
        buttons: [t('updateFeed.use'), t('updateFeed.cancel')],
        defaultId: 1,
        cancelId: 1,
        noLink: true,
      };
      const answer = await (current ? dialog.showMessageBox(current, box) : dialog.showMessageBox(box));
      return answer.response === 0;
    };
    const starting = options.createService({ dataDir, secrets: createSecretStore(dataDir), preferencesGuard: checkGlobalShortcuts, beforeUpdateRestart, confirmUpdateFeed });
    serviceStarting = starting;
    const started = await starting;
    if (quitPhase !== 'running') return;
    service = started;

    const hostPushes = withHostPushes(started);
    cleanups.push(registerSoftphoneIpc({ backend: hostPushes.backend, appUrl: location.appUrl, getWebContents: () => liveWindow()?.webContents, logger }));
    cleanups.push(
      hostPushes.onRendererListening(() => {
        rendererListening = true;
        deliverLinks();
      }),
    );
    cleanups.push(
      notifyIncomingCalls({
        backend: started,
        getWindow: liveWindow,
        showWindow,
        pressed: (action, localId) => hostPushes.push({ name: 'shortcutPressed', payload: { action, localId } }),
        texts,
        platform,
      }),
    );
    window = createWindow(location);
    // A link that launched this instance (Windows, Linux) waits for the window to listen.
    openDialLinks(dialLinksIn(launch.argv));

    try {
      const startedDesk = await startDesk({
        service: started,
        hostPush: (push) => hostPushes.push(push),
        onRendererListening: (listener) => hostPushes.onRendererListening(listener),
        getWindow: liveWindow,
        showWindow,
        quit: () => app.quit(),
        assetsDir: join(app.getAppPath(), 'assets'),
        platform,
        logger,
      });
      if (quitPhase !== 'running') {
        startedDesk.dispose();
        return;
      }
      desk = startedDesk;
      cleanups.push(() => startedDesk.dispose());
    } catch (e) {
      // Calls work without the tray, the badge and the global shortcuts: keep going.
      logger.error('the tray and the desk features could not start', { error: e });
    } finally {
      settleDesk();
    }
  }

  const ready = start().catch((e: unknown) => {
    serviceStarting = Promise.resolve(undefined);
    logger.error('the softphone could not start', { error: e });
    // Mostly the system's own words (a folder that cannot be written), kept as they came; a rule of
    // the catalogue is said in the agent's language.
    const { t, text } = texts();
    dialog.showErrorBox(t('startFailed'), e instanceof TextError ? text(e.text) : errorText(e));
    app.quit();
  });

  return { ready, getWindow: liveWindow, refusedShortcuts: () => desk?.refusedShortcuts() ?? [] };
}
