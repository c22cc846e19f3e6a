// The desk features the Electron host adds around the service, for an agent who keeps the app open
// all day: the tray (state, Show, presence, Quit), the missed-call badge, start at login and the
// global shortcuts. They follow the service's pushes, so a change made in the window (presence,
// preferences) shows in the tray and takes effect at once, and they work with the window hidden.
// The global shortcuts another application holds are also pushed to the window (shortcutsRefused),
// whose Settings say so next to their fields. The tray and the overlay speak the agent's language
// (the preference `language`, desktop-texts.ts) and follow a change of it at once.
import { join } from 'node:path';
import { app, Menu, nativeImage, type BrowserWindow, type NativeImage } from 'electron';
import type { AgentPresence, ConnectionState, PresenceChoice, PushMessage, SoftphoneBackend, Unsubscribe } from '../../shared/api';
import type { HistoryEntry } from '../../shared/history';
import type { Logger } from '../../shared/log';
import { missedCalls, type Preferences } from '../../shared/preferences';
import { appMenuTemplate } from './app-menu';
import { desktopTextsFor } from './desktop-texts';
import { GlobalShortcuts } from './global-shortcuts';
import { MissedBadge } from './missed-badge';
import { TrayIcon } from './tray';
import { trayStatusOf, type RefusedShortcut, type TrayState, type TrayStatus } from './tray-menu';

export interface DeskService extends Pick<SoftphoneBackend, 'handle' | 'subscribe'> {
  preferences(): Preferences;
}

export interface DeskOptions {
  service: DeskService;
  /** Sends the window a push of the host's own (host-pushes.ts). */
  hostPush: (push: PushMessage) => void;
  /** Runs the listener each time a page starts listening for pushes (HostPushes.onRendererListening). */
  onRendererListening: (listener: () => void) => Unsubscribe;
  getWindow: () => BrowserWindow | undefined;
  showWindow: () => void;
  quit: () => void;
  /** The folder holding icons/ (assets/ in the app). */
  assetsDir: string;
  platform: NodeJS.Platform;
  logger: Logger;
}

export interface Desk {
  /** Global shortcuts another application holds (also listed in the tray menu). */
  refusedShortcuts(): readonly RefusedShortcut[];
  /** False on a desktop without a system tray: then nothing would bring a hidden window back. */
  hasTray(): boolean;
  /** The window appeared, disappeared or was replaced: the tray and the overlay icon follow. */
  windowChanged(): void;
  dispose(): void;
}

/**
 * The argument the login item starts the app with (Windows; macOS reports wasOpenedAtLogin): the
 * window then stays in the tray, since the agent did not ask for it.
 */
export const HIDDEN_ARG = '--hidden';

/** Under assets/. tray-icon@2x.png next to the tray icon serves high-density screens. */
export const DESK_ICONS = {
  tray: 'icons/tray-icon.png',
  missedOverlay: 'icons/missed-overlay.png',
  /** The tray icon with the status's dot (tray-<status>@2x.png beside each). */
  status: {
    available: 'icons/tray-available.png',
    on_call: 'icons/tray-on_call.png',
    dnd: 'icons/tray-dnd.png',
    // A break takes no calls, as Do not disturb; after-call work is still the call's time.
    break: 'icons/tray-dnd.png',
    after_call_work: 'icons/tray-on_call.png',
    disconnected: 'icons/tray-disconnected.png',
  },
} as const satisfies { status: Record<TrayStatus, string> } & Record<string, unknown>;

function loadImage(path: string, logger: Logger): NativeImage | undefined {
  const image = nativeImage.createFromPath(path);
  if (!image.isEmpty()) return image;
  logger.warn('an icon could not be loaded', { path });
  return undefined;
}

export async function startDesk(options: DeskOptions): Promise<Desk> {
  const { service, logger } = options;
  let preferences = service.preferences();
  let presence: AgentPresence = { choice: 'available', status: 'available' };
  let connection: ConnectionState['status'] = 'connecting';
  let history: readonly HistoryEntry[] = [];
  let openAtLogin: boolean | undefined;

  const shortcuts = new GlobalShortcuts({
    logger,
    pressed: (action) => options.hostPush({ name: 'shortcutPressed', payload: { action } }),
  });
  const badge = new MissedBadge({ app, platform: options.platform, overlay: loadImage(join(options.assetsDir, DESK_ICONS.missedOverlay), logger) });

  let tray: TrayIcon | undefined;
  const trayIcon = loadImage(join(options.assetsDir, DESK_ICONS.tray), logger);
  try {
    if (trayIcon) {
      const statusIcons: Partial<Record<TrayStatus, NativeImage>> = {};
      for (const status of Object.keys(DESK_ICONS.status) as TrayStatus[]) {
        const image = loadImage(join(options.assetsDir, DESK_ICONS.status[status]), logger);
        if (image) statusIcons[status] = image;
      }
      tray = new TrayIcon(trayIcon, {
        show: options.showWindow,
        setPresence: (choice: PresenceChoice) => {
          void service.handle('setPresence', { status: choice }).then((result) => {
            if (!result.ok) logger.warn('the presence chosen in the tray was refused', { choice, error: result.error.message });
          });
        },
        quit: options.quit,
      }, statusIcons);
    }
  } catch (e) {
    // Some Linux desktops have no tray at all; the app still works, and a second launch shows the window.
    logger.warn('no tray icon: this desktop has no system tray', { error: e });
  }

  /** The language the application menu was last made in: it is made again only when that changes. */
  let menuLanguage: string | undefined;
  const render = (): void => {
    const missed = missedCalls(history, preferences.missedSeenAt).length;
    const texts = desktopTextsFor(preferences.language, app);
    if (texts.language !== menuLanguage) {
      menuLanguage = texts.language;
      const template = appMenuTemplate(options.platform, texts);
      Menu.setApplicationMenu(template ? Menu.buildFromTemplate(template) : null);
    }
    const window = options.getWindow();
    badge.show(missed, missed > 0 ? texts.t('missedCalls', { count: missed }) : '', window);
    const state: TrayState = {
      status: connection === 'connected' ? trayStatusOf(presence.status) : 'disconnected',
      choice: presence.choice,
      missedCount: missed,
      windowVisible: window !== undefined && !window.isDestroyed() && window.isVisible(),
      refusedShortcuts: shortcuts.refused(),
    };
    tray?.render(state, texts);
  };

  /** What the window was last told of the refused shortcuts; undefined until it was told. */
  let refusedSent: string | undefined;
  const pushRefused = (force: boolean): void => {
    const refused = shortcuts.refused().map(({ action, accelerator }) => ({ action, accelerator }));
    const key = JSON.stringify(refused);
    if (!force && key === refusedSent) return;
    refusedSent = key;
    options.hostPush({ name: 'shortcutsRefused', payload: { refused } });
  };
  // A page that starts listening (first load, reload) has none of the earlier pushes.
  const stopListening = options.onRendererListening(() => pushRefused(true));

  const applyPreferences = (): void => {
    shortcuts.apply(preferences);
    pushRefused(false);
    if (openAtLogin !== preferences.startAtLogin) {
      openAtLogin = preferences.startAtLogin;
      // macOS and Windows; Electron has no login items on Linux, where this does nothing (the
      // window's Settings do not offer it there). `args` is read on Windows only.
      app.setLoginItemSettings({ openAtLogin, args: [HIDDEN_ARG] });
    }
  };

  // Subscribed before the snapshot is asked for, so no change falls between the two; a push that
  // arrives while the snapshot is on its way is newer than it.
  const pushed = new Set<PushMessage['name']>();
  const unsubscribe: Unsubscribe = service.subscribe((push) => {
    pushed.add(push.name);
    switch (push.name) {
      case 'presenceChanged':
        presence = push.payload;
        break;
      case 'connectionChanged':
        connection = push.payload.status;
        break;
      case 'historyChanged':
        history = push.payload;
        break;
      case 'preferencesChanged':
        preferences = push.payload;
        applyPreferences();
        break;
      default:
        return;
    }
    render();
  });

  const snapshot = await service.handle('getSnapshot', {});
  if (snapshot.ok) {
    if (!pushed.has('presenceChanged')) presence = snapshot.value.presence ?? presence;
    if (!pushed.has('connectionChanged')) connection = snapshot.value.connection.status;
    if (!pushed.has('historyChanged')) history = snapshot.value.history;
  } else {
    logger.warn('the tray starts without the service state', { error: snapshot.error.message });
  }
  applyPreferences();
  render();

  return {
    refusedShortcuts: () => shortcuts.refused(),
    hasTray: () => tray !== undefined,
    windowChanged: () => {
      badge.paintWindow(options.getWindow());
      render();
    },
    dispose: () => {
      unsubscribe();
      stopListening();
      shortcuts.dispose();
      tray?.destroy();
      tray = undefined;
    },
  };
}
