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
    this.visible = true;
  }
  focus(): void {
    this.focused = true;
  }
  isFocused(): boolean {
    return this.focused;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  flashFrame(flag: boolean): void {
    this.flashed = flag;
  }
}

class FakeApp extends FakeEmitter {
  singleInstanceLock = true;
  /** True once a quit went through without a before-quit handler holding it back. */
  quitted = false;
  appPath = '/opt/softphone';
  userData = '/home/agent/.config/softphone';

  reset(): void {
    this.removeAllListeners();
    this.singleInstanceLock = true;
    this.quitted = false;
    for (const mock of [this.requestSingleInstanceLock, this.whenReady, this.getAppPath, this.getPath, this.setAppUserModelId, this.exit, this.quit]) mock.mockClear();
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

export class Notification extends FakeEmitter {
  static readonly instances: Notification[] = [];
  static isSupported(): boolean {
    return true;
  }
  shown = false;
  closed = false;
  constructor(readonly options: { title: string; body: string }) {
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

export const dialog = { showErrorBox: vi.fn() };

/** Fresh fakes for the next test. */
export function resetFakeElectron(): void {
  app.reset();
  BrowserWindow.instances.length = 0;
  Notification.instances.length = 0;
  ipcMain.handlers.clear();
  contextBridge.exposed.clear();
  contextBridge.exposeInMainWorld.mockClear();
  ipcRenderer.removeAllListeners();
  ipcRenderer.invoke.mockClear();
  for (const mock of [safeStorage.isEncryptionAvailable, safeStorage.getSelectedStorageBackend, safeStorage.encryptString, safeStorage.decryptString]) mock.mockClear();
  safeStorage.available = true;
  safeStorage.backend = 'gnome_libsecret';
  session.defaultSession.headersListener = undefined;
  session.defaultSession.permissionRequestHandler = undefined;
  session.defaultSession.permissionCheckHandler = undefined;
  dialog.showErrorBox.mockClear();
}
