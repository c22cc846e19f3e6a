// app://softphone/: the window's page and its files come from dist/renderer through the app's own
// scheme (the packaged app's fuses take file:// its privileges). Real files in a temporary folder;
// Electron's protocol module is the fake one, the handler is the real one.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { APP_SCHEME_PRIVILEGES, isInsideFolder, rendererFileHandler } from '../../../electron/desktop/app-protocol';
import { startDesktopApp } from '../../../electron/desktop/desktop-app';
import { CONTENT_SECURITY_POLICY } from '../../../electron/desktop/security-policy';
import { app, BrowserWindow, protocol, resetFakeElectron } from './fake-electron';
import { FakeService } from './fake-service';
import { recordingLogger } from './recording-logger';

vi.mock('electron', () => import('./fake-electron'));

let appPath: string;
beforeAll(async () => {
  appPath = await mkdtemp(join(tmpdir(), 'softphone-app-'));
  await mkdir(join(appPath, 'dist', 'renderer', 'assets'), { recursive: true });
  await writeFile(join(appPath, 'dist', 'renderer', 'index.html'), '<!doctype html><script type="module" crossorigin src="./assets/index-1.js"></script>');
  await writeFile(join(appPath, 'dist', 'renderer', 'assets', 'index-1.js'), 'console.log("softphone")');
  await writeFile(join(appPath, 'secret.txt'), 'not for the page');
  await writeFile(join(appPath, 'dist', 'secret.txt'), 'not for the page either');
});
afterAll(async () => {
  await rm(appPath, { recursive: true, force: true });
});

describe('rendererFileHandler', () => {
  const get = (url: string, method = 'GET') => rendererFileHandler(join(appPath, 'dist', 'renderer'))(new Request(url, { method }));

  it('serves the page and its module script with the CSP and their types', async () => {
    for (const url of ['app://softphone/index.html', 'app://softphone/']) {
      const page = await get(url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await page.text()).toContain('./assets/index-1.js');
    }
    const script = await get('app://softphone/assets/index-1.js');
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toBe('console.log("softphone")');
    const head = await get('app://softphone/index.html', 'HEAD');
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('answers nothing outside dist/renderer, on another host, or for another method', async () => {
    for (const url of [
      'app://softphone/../secret.txt',
      'app://softphone/%2e%2e/secret.txt',
      'app://softphone/assets/%2e%2e/%2e%2e/secret.txt',
      'app://softphone/..%2fsecret.txt',
      'app://softphone/assets/..%2f..%2fsecret.txt',
      'app://softphone/assets/..%2f..%2f..%2fsecret.txt',
      'app://softphone/%00index.html',
      'app://softphone/missing.js',
      'app://softphone/assets',
      'app://elsewhere/index.html',
      'file:///etc/passwd',
    ]) {
      expect((await get(url)).status, url).toBe(404);
    }
    expect((await get('app://softphone/index.html', 'POST')).status).toBe(405);
  });

  it('keeps to the folder itself: not a sibling whose name starts the same, not the folder as a file', () => {
    const root = join(appPath, 'dist', 'renderer');
    expect(isInsideFolder(root, join(root, 'index.html'))).toBe(true);
    expect(isInsideFolder(root, join(root, 'assets', 'index-1.js'))).toBe(true);
    expect(isInsideFolder(`${root}${sep}`, join(root, 'index.html'))).toBe(true);
    for (const outside of [`${root}-evil${sep}index.html`, `${root}-evil`, `${root}evil.js`, root, join(root, '..', 'secret.txt'), join(root, '..', 'renderer-evil', 'x.js')]) {
      expect(isInsideFolder(root, outside), outside).toBe(false);
      expect(isInsideFolder(`${root}${sep}`, outside), outside).toBe(false);
    }
  });

  it('serves the page when the folder is given with a trailing separator', async () => {
    const page = await rendererFileHandler(`${join(appPath, 'dist', 'renderer')}${sep}`)(new Request('app://softphone/index.html'));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('./assets/index-1.js');
  });
});

describe('the desktop host and its scheme', () => {
  beforeEach(() => {
    resetFakeElectron();
    app.appPath = appPath;
  });

  it('registers app: as a standard, secure scheme before ready, and loads the page from it', async () => {
    let readyWhenRegistered: boolean | undefined;
    let ready = false;
    app.whenReady.mockImplementation(() => {
      ready = true;
      return Promise.resolve();
    });
    protocol.registerSchemesAsPrivileged.mockImplementationOnce((schemes) => {
      readyWhenRegistered = ready;
      protocol.privileged.push(...schemes);
    });
    const service = new FakeService();
    const desktop = startDesktopApp({ logger: recordingLogger(), createSecretStore: () => ({ kind: 'memory', get: async () => undefined, set: async () => undefined, delete: async () => undefined }), createService: async () => service });
    await desktop.ready;
    service.closing.resolve();

    expect(readyWhenRegistered).toBe(false);
    expect(protocol.privileged).toEqual([{ scheme: 'app', privileges: { ...APP_SCHEME_PRIVILEGES } }]);
    expect(BrowserWindow.instances[0]!.loadURL).toHaveBeenCalledWith('app://softphone/index.html');
    const handler = protocol.handlers.get('app');
    expect(handler).toBeDefined();
    const page = await handler!(new Request('app://softphone/index.html'));
    expect(page.status).toBe(200);
    expect((await handler!(new Request('app://softphone/../secret.txt'))).status).toBe(404);
  });
});
