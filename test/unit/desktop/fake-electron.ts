// A stand-in for the `electron` module, whose binary cannot run here. Each desktop test file mocks
// `electron` with this module (vi.mock('electron', () => import('./fake-electron'))) and drives it
// through `fake`: the recorded windows, handlers and calls. Only what the host uses is modelled.
import { vi } from 'vitest';

type Listener = (...args: never[]) => unknown;

export class FakeEmitter {
  private readonly listeners = new Map<string, Listener[]>();

  on(event: string, listener: Listener): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }

  once(event: string, listener: Listener): this {
    const wrapped = ((...args: never[]) => {
      this.removeListener(event, wrapped);
      return listener(...args);
    }) as Listener;
    return this.on(event, wrapped);
  }

  removeListener(event: string, listener: Listener): this {
    this.listeners.set(
      event,
      (this.listeners.get(event) ?? []).filter((l) => l !== listener),
    );
    return this;
  }

  removeAllListeners(): this {
    this.listeners.clear();
    return this;
  }

  listenerCount(event: string): number {
    return this.listeners.get(event)?.length ?? 0;
  }

  emit(event: string, ...args: unknown[]): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) (listener as (...a: unknown[]) => unknown)(...args);
  }
}

/** An Electron-style event: handlers call preventDefault. */
export class FakeEvent {
  defaultPrevented = false;
  constructor(readonly fields: Record<string, unknown> = {}) {
    Object.assign(this, fields);
  }
  preventDefault(): void {
    this.defaultPrevented = true;
  }
}

export class FakeWebContents extends FakeEmitter {
  url = '';
  destroyed = false;
  readonly sent: Array<[string, unknown]> = [];
  windowOpenHandler: ((details: { url: string }) => { action: string }) | undefined;

  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }): void {
    this.windowOpenHandler = handler;
  }
  send(channel: string, payload: unknown): void {
    this.sent.push([channel, payload]);
  }
  getURL(): string {
    return this.url;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
}

export class BrowserWindow extends FakeEmitter {
  static readonly instances: BrowserWindow[] = [];
  readonly webContents = new FakeWebContents();
  minimized = false;
  visible = false;
  focused = false;
  destroyed = false;
  flashed = false;
  /** Every flashFrame call, in order. */
  readonly flashes: boolean[] = [];
  /** How often focus() was called: an incoming call must never take the focus. */
  focusCalls = 0;
  showInactiveCalls = 0;
  /** How often moveTop() raised the window above others (without focus). */
  moveTopCalls = 0;
  overlay: { image: NativeImage | null; description: string } | undefined;
  readonly loadURL = vi.fn(async (url: string) => {
    this.webContents.url = url;
  });

  constructor(readonly options: Record<string, unknown>) {
    super();
    BrowserWindow.instances.push(this);
    // Electron announces every new web contents to the app; the guards hook in there.
    app.emit('web-contents-created', new FakeEvent(), this.webContents);
  }

  isMinimized(): boolean {
    return this.minimized;
  }
  restore(): void {
    this.minimized = false;
  }
  show(): void {
    const wasVisible = this.visible;
    this.visible = true;
    if (!wasVisible) this.emit('show');
  }
  /** On screen without the focus; a minimised window comes back too (Windows' SW_SHOWNOACTIVATE). */
  showInactive(): void {
    this.showInactiveCalls += 1;
    const wasVisible = this.visible;
    this.visible = true;
    this.minimized = false;
    if (!wasVisible) this.emit('show');
  }
  moveTop(): void {
    this.moveTopCalls += 1;
  }
  minimize(): void {
    this.minimized = true;
    this.focused = false;
  }
  hide(): void {
    const wasVisible = this.visible;
    this.visible = false;
    this.focused = false;
    if (wasVisible) this.emit('hide');
  }
  isVisible(): boolean {
    return this.visible;
  }
  focus(): void {
    this.focusCalls += 1;
    this.focused = true;
  }
  isFocused(): boolean {
    return this.focused;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  flashFrame(flag: boolean): void {
    this.flashes.push(flag);
    this.flashed = flag;
  }
  setOverlayIcon(image: NativeImage | null, description: string): void {
    this.overlay = { image, description };
  }
  /** The agent closes the window (title bar ×): 'close' may prevent it; otherwise it is gone, and the app hears when it was the last. */
  close(): void {
    const event = new FakeEvent();
    this.emit('close', event);
    if (event.defaultPrevented) return;
    this.destroyed = true;
    this.visible = false;
    this.emit('closed');
    if (BrowserWindow.instances.every((w) => w.destroyed)) app.emit('window-all-closed');
  }
}

/** A loaded image: the path it came from, so tests can tell the icons apart. */
export class NativeImage {
  constructor(
    readonly path: string,
    readonly empty: boolean,
  ) {}
  isEmpty(): boolean {
    return this.empty;
  }
}

export const nativeImage = {
  /** Paths that load as an empty image, as Electron does for a missing file. */
  missing: new Set<string>(),
  createFromPath: vi.fn((path: string) => new NativeImage(path, nativeImage.missing.has(path))),
};

/** An Electron menu: the template it was built from, as the user would see it. */
export class FakeMenu {
  constructor(readonly items: Array<Record<string, unknown>>) {}
  /** Clicks the item with this label, as the user would. */
  click(label: string): void {
    const item = this.items.find((i) => i.label === label);
    if (item === undefined) throw new Error(`no menu item "${label}" in ${this.items.map((i) => String(i.label ?? '---')).join(', ')}`);
    if (item.enabled === false) throw new Error(`menu item "${label}" is disabled`);
    (item.click as () => void)();
  }
}

export const Menu = {
  buildFromTemplate: vi.fn((template: Array<Record<string, unknown>>) => new FakeMenu(template)),
  /** The application menu set last (null: none); undefined until one is set. */
  applicationMenu: undefined as FakeMenu | null | undefined,
  setApplicationMenu: vi.fn((menu: FakeMenu | null) => {
    Menu.applicationMenu = menu;
  }),
};

export class Tray extends FakeEmitter {
  static readonly instances: Tray[] = [];
  /** Set to make the next new Tray throw, as on a desktop without a system tray. */
  static failNext = false;
  tooltip = '';
  menu: FakeMenu | undefined;
  destroyed = false;
  readonly setContextMenu = vi.fn((menu: FakeMenu | null) => {
    this.menu = menu ?? undefined;
  });
  /** The image shown now (setImage replaces the one it was made with). */
  current: NativeImage;
  constructor(readonly image: NativeImage) {
    super();
    this.current = image;
    if (Tray.failNext) {
      Tray.failNext = false;
      throw new Error('no system tray');
    }
    Tray.instances.push(this);
  }
  setToolTip(text: string): void {
    this.tooltip = text;
  }
  setImage(image: NativeImage): void {
    this.current = image;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

/** The OS's global shortcuts: `heldElsewhere` are taken by other applications. */
export const globalShortcut = {
  heldElsewhere: new Set<string>(),
  callbacks: new Map<string, () => void>(),
  register: vi.fn((accelerator: string, callback: () => void): boolean => {
    if (globalShortcut.heldElsewhere.has(accelerator) || globalShortcut.callbacks.has(accelerator)) return false;
    globalShortcut.callbacks.set(accelerator, callback);
    return true;
  }),
  unregister: vi.fn((accelerator: string) => {
    globalShortcut.callbacks.delete(accelerator);
  }),
  unregisterAll: vi.fn(() => {
    globalShortcut.callbacks.clear();
  }),
  isRegistered: (accelerator: string): boolean => globalShortcut.callbacks.has(accelerator),
  /** The agent presses the combination in another application. */
  press(accelerator: string): void {
    const callback = globalShortcut.callbacks.get(accelerator);
    if (callback === undefined) throw new Error(`${accelerator} is not registered`);
    callback();
  },
  reset(): void {
    globalShortcut.heldElsewhere.clear();
    globalShortcut.callbacks.clear();
    globalShortcut.register.mockClear();
    globalShortcut.unregister.mockClear();
    globalShortcut.unregisterAll.mockClear();
  },
};

class FakeApp extends FakeEmitter {
  singleInstanceLock = true;
  /** True once a quit went through without a before-quit handler holding it back. */
  quitted = false;
  appPath = '/opt/softphone';
  userData = '/home/agent/.config/softphone';
  /** macOS: the login item started this launch. */
  openedAtLogin = false;
  /** The operating system's languages, most preferred first (empty on some Linux sessions). */
  systemLanguages: string[] = ['en-US'];
  /** The locale Chromium runs in. */
  locale = 'en-US';

  reset(): void {
    this.removeAllListeners();
    this.singleInstanceLock = true;
    this.quitted = false;
    this.openedAtLogin = false;
    this.systemLanguages = ['en-US'];
    this.locale = 'en-US';
    for (const mock of [
      this.requestSingleInstanceLock,
      this.whenReady,
      this.getAppPath,
      this.getPath,
      this.setAppUserModelId,
      this.exit,
      this.quit,
      this.setBadgeCount,
      this.setLoginItemSettings,
      this.getLoginItemSettings,
      this.setAsDefaultProtocolClient,
      this.getPreferredSystemLanguages,
      this.getLocale,
    ]) {
      mock.mockClear();
    }
  }

  readonly requestSingleInstanceLock = vi.fn(() => this.singleInstanceLock);
  readonly whenReady = vi.fn(() => Promise.resolve());
  readonly getAppPath = vi.fn(() => this.appPath);
  readonly getPath = vi.fn((name: string) => {
    if (name !== 'userData') throw new Error(`fake app.getPath: ${name} not modelled`);
    return this.userData;
  });
  readonly setAppUserModelId = vi.fn();
  readonly exit = vi.fn();
  readonly setBadgeCount = vi.fn((_count?: number) => true);
  readonly setLoginItemSettings = vi.fn((_settings: { openAtLogin?: boolean; args?: string[] }) => undefined);
  readonly getLoginItemSettings = vi.fn(() => ({ openAtLogin: false, wasOpenedAtLogin: this.openedAtLogin }));
  readonly setAsDefaultProtocolClient = vi.fn((_protocol: string, _path?: string, _args?: string[]) => true);
  readonly getPreferredSystemLanguages = vi.fn(() => [...this.systemLanguages]);
  readonly getLocale = vi.fn(() => this.locale);
  /** Like Electron: before-quit first; a handler that prevents it keeps the app running. */
  readonly quit = vi.fn(() => {
    const event = new FakeEvent();
    this.emit('before-quit', event);
    if (!event.defaultPrevented) this.quitted = true;
  });
}

export const app = new FakeApp();

type IpcHandler = (event: unknown, ...args: unknown[]) => unknown;
export const ipcMain = {
  handlers: new Map<string, IpcHandler>(),
  handle(channel: string, handler: IpcHandler): void {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, handler);
  },
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  },
};

class FakeIpcRenderer extends FakeEmitter {
  readonly invoke = vi.fn(async (channel: string, params: unknown): Promise<unknown> => ({ ok: true, value: { channel, params } }));
}
export const ipcRenderer = new FakeIpcRenderer();

export const contextBridge = {
  exposed: new Map<string, unknown>(),
  exposeInMainWorld: vi.fn((key: string, api: unknown) => {
    contextBridge.exposed.set(key, api);
  }),
};

/** A reversible stand-in for the keychain: the bytes are not the plain text. */
export const safeStorage = {
  available: true,
  backend: 'gnome_libsecret' as string,
  isEncryptionAvailable: vi.fn(() => safeStorage.available),
  getSelectedStorageBackend: vi.fn(() => safeStorage.backend),
  encryptString: vi.fn((text: string) => Buffer.from(`keychain:${Buffer.from(text, 'utf8').reverse().toString('hex')}`, 'utf8')),
  decryptString: vi.fn((bytes: Buffer) => {
    const text = bytes.toString('utf8');
    if (!text.startsWith('keychain:')) throw new Error('Error while decrypting the ciphertext provided to safeStorage.decryptString.');
    return Buffer.from(text.slice('keychain:'.length), 'hex').reverse().toString('utf8');
  }),
};

type HeadersListener = (details: { responseHeaders?: Record<string, string[]> }, callback: (response: { responseHeaders?: Record<string, string[]> }) => void) => void;
export const session = {
  defaultSession: {
    headersListener: undefined as HeadersListener | undefined,
    permissionRequestHandler: undefined as ((...args: unknown[]) => void) | undefined,
    permissionCheckHandler: undefined as ((...args: unknown[]) => boolean) | undefined,
    webRequest: {
      onHeadersReceived(listener: HeadersListener): void {
        session.defaultSession.headersListener = listener;
      },
    },
    setPermissionRequestHandler(handler: (...args: unknown[]) => void): void {
      session.defaultSession.permissionRequestHandler = handler;
    },
    setPermissionCheckHandler(handler: (...args: unknown[]) => boolean): void {
      session.defaultSession.permissionCheckHandler = handler;
    },
  },
};

/** The app's own scheme: its privileges (registered before ready) and the handler that answers it. */
export const protocol = {
  privileged: [] as Array<{ scheme: string; privileges?: Record<string, boolean> }>,
  handlers: new Map<string, (request: Request) => Promise<Response>>(),
  registerSchemesAsPrivileged: vi.fn((schemes: Array<{ scheme: string; privileges?: Record<string, boolean> }>) => {
    protocol.privileged.push(...schemes);
  }),
  handle: vi.fn((scheme: string, handler: (request: Request) => Promise<Response>) => {
    if (protocol.handlers.has(scheme)) throw new Error(`The scheme "${scheme}" is already handled`);
    protocol.handlers.set(scheme, handler);
  }),
  reset(): void {
    protocol.privileged.length = 0;
    protocol.handlers.clear();
    protocol.registerSchemesAsPrivileged.mockClear();
    protocol.handle.mockClear();
  },
};

export class Notification extends FakeEmitter {
  static readonly instances: Notification[] = [];
  static supported = true;
  static isSupported(): boolean {
    return Notification.supported;
  }
  shown = false;
  closed = false;
  constructor(readonly options: { title: string; body: string; actions?: Array<{ type: string; text: string }> }) {
    super();
    Notification.instances.push(this);
  }
  show(): void {
    this.shown = true;
  }
  close(): void {
    this.closed = true;
  }
}

export const dialog = {
  showErrorBox: vi.fn(),
  showMessageBox: vi.fn(async (..._args: unknown[]) => ({ response: 0, checkboxChecked: false })),
};

/** Fresh fakes for the next test. */
export function resetFakeElectron(): void {
  app.reset();
  BrowserWindow.instances.length = 0;
  Notification.instances.length = 0;
  Notification.supported = true;
  Tray.instances.length = 0;
  Tray.failNext = false;
  Menu.buildFromTemplate.mockClear();
  Menu.setApplicationMenu.mockClear();
  Menu.applicationMenu = undefined;
  nativeImage.missing.clear();
  nativeImage.createFromPath.mockClear();
  globalShortcut.reset();
  ipcMain.handlers.clear();
  contextBridge.exposed.clear();
  contextBridge.exposeInMainWorld.mockClear();
  ipcRenderer.removeAllListeners();
  ipcRenderer.invoke.mockClear();
  for (const mock of [safeStorage.isEncryptionAvailable, safeStorage.getSelectedStorageBackend, safeStorage.encryptString, safeStorage.decryptString]) mock.mockClear();
  safeStorage.available = true;
  safeStorage.backend = 'gnome_libsecret';
  protocol.reset();
  session.defaultSession.headersListener = undefined;
  session.defaultSession.permissionRequestHandler = undefined;
  session.defaultSession.permissionCheckHandler = undefined;
  dialog.showErrorBox.mockClear();
  dialog.showMessageBox.mockClear();
}
