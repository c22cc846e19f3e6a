// Electron's security checklist (electronjs.org/docs/latest/tutorial/security), item by item, for
// the items not covered elsewhere; electron/REFERENCE.md "Security checklist" maps every item to its
// code and its test. The `electron` module is the fake one; the window's options, the session's
// hooks and the app:// handler are the real ones.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { APP_SCHEME_PRIVILEGES, rendererFileHandler } from '../../../electron/desktop/app-protocol';
import { startDesktopApp } from '../../../electron/desktop/desktop-app';
import { CONTENT_SECURITY_POLICY, PAGE_CONTENT_SECURITY_POLICY } from '../../../electron/desktop/security-policy';
import { directives, metaPolicy } from '../browser/csp-text';
import { app, BrowserWindow, FakeEvent, protocol, resetFakeElectron, session } from './fake-electron';
import { FakeService } from './fake-service';
import { recordingLogger } from './recording-logger';

vi.mock('electron', () => import('./fake-electron'));

const ROOT = join(import.meta.dirname, '../../..');

/** Every TypeScript file under electron/, with its text. */
async function electronSources(): Promise<Array<{ name: string; text: string }>> {
  const files = (await readdir(join(ROOT, 'electron'), { recursive: true })).filter((name) => name.endsWith('.ts'));
  return Promise.all(files.map(async (name) => ({ name, text: await readFile(join(ROOT, 'electron', name), 'utf8') })));
}

describe('the window', () => {
  let service: FakeService;
  let webPreferences: Record<string, unknown>;

  beforeEach(async () => {
    resetFakeElectron();
    service = new FakeService();
    const desktop = startDesktopApp({
      logger: recordingLogger(),
      createSecretStore: () => ({ kind: 'memory', get: async () => undefined, set: async () => undefined, delete: async () => undefined }),
      createService: async () => service,
    });
    await desktop.ready;
    expect(BrowserWindow.instances).toHaveLength(1);
    webPreferences = BrowserWindow.instances[0]!.options.webPreferences as Record<string, unknown>;
  });
  afterEach(() => {
    service.closing.resolve();
  });

  it.each([
    ['2. no Node.js integration', 'nodeIntegration', false],
    ['2. nor in subframes', 'nodeIntegrationInSubFrames', false],
    ['2. nor in workers', 'nodeIntegrationInWorker', false],
    ['3. context isolation', 'contextIsolation', true],
    ['4. the process sandbox', 'sandbox', true],
    ['6. web security on', 'webSecurity', true],
    ['8. no insecure content', 'allowRunningInsecureContent', false],
    ['9. no experimental features', 'experimentalFeatures', false],
    ['11, 12. no <webview> tag', 'webviewTag', false],
    ['13. a dropped file does not navigate', 'navigateOnDragDrop', false],
    ['middle click (auxclick) disabled', 'disableBlinkFeatures', 'Auxclick'],
  ] as const)('%s: %s is %s', (_item, option, value) => {
    expect(webPreferences[option]).toBe(value);
  });

  it('10. enables no Blink feature, here or anywhere in electron/', async () => {
    expect(webPreferences).not.toHaveProperty('enableBlinkFeatures');
    for (const { name, text } of await electronSources()) expect(text, name).not.toMatch(/enableBlinkFeatures|experimentalFeatures:\s*true|allowRunningInsecureContent:\s*true|webviewTag:\s*true/);
  });

  it("7. the CSP: every response's header, from the session's hook and from app://, is the page's meta tag plus frame-ancestors", async () => {
    const indexHtml = await readFile(join(ROOT, 'renderer', 'index.html'), 'utf8');
    expect(metaPolicy(indexHtml)).toBe(PAGE_CONTENT_SECURITY_POLICY);
    const expected = `${PAGE_CONTENT_SECURITY_POLICY}; frame-ancestors 'none'`;

    let hooked: Record<string, string[]> | undefined;
    session.defaultSession.headersListener!({ responseHeaders: { 'Content-Security-Policy': ["default-src *; script-src 'unsafe-inline'"] } }, (r) => (hooked = r.responseHeaders));
    expect(hooked).toEqual({ 'Content-Security-Policy': [expected] });

    // The page as app://softphone/ serves it, from the source folder (the build copies the tag as it is).
    const page = await rendererFileHandler(join(ROOT, 'renderer'))(new Request('app://softphone/index.html'));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(expected);
    expect(`${metaPolicy(await page.text())}; frame-ancestors 'none'`).toBe(page.headers.get('content-security-policy'));
    expect(CONTENT_SECURITY_POLICY).toBe(expected);
  });

  it("7. the CSP allows the page's own origin only, and nothing inline", () => {
    const policy = directives(CONTENT_SECURITY_POLICY);
    expect(policy.get('default-src')).toEqual(["'none'"]);
    for (const [name, sources] of policy) {
      for (const source of sources) {
        const allowed = source === "'self'" || source === "'none'" || (name === 'img-src' && source === 'data:') || (name === 'media-src' && source === 'blob:');
        expect(allowed, `${name} ${source}`).toBe(true);
      }
    }
  });

  it('18. app: is standard and secure, with fetch and CORS as for https, and nothing that bypasses the CSP or adds service workers', () => {
    expect(APP_SCHEME_PRIVILEGES).toEqual({ standard: true, secure: true, supportFetchAPI: true, corsEnabled: true });
    expect(protocol.privileged).toEqual([{ scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true } }]);
  });

  it('14. a middle click or window.open in any web contents opens nothing', () => {
    const contents = BrowserWindow.instances[0]!.webContents;
    expect(contents.windowOpenHandler?.({ url: 'app://softphone/index.html' })).toEqual({ action: 'deny' });
    expect(contents.windowOpenHandler?.({ url: 'https://evil.example/' })).toEqual({ action: 'deny' });
    const navigate = new FakeEvent();
    contents.emit('will-navigate', navigate, 'app://softphone/index.html');
    expect(navigate.defaultPrevented).toBe(true);
    expect(app.listenerCount('web-contents-created')).toBe(1);
  });
});

describe('the main process', () => {
  it('15. never hands a URL to the system: no shell.openExternal, openPath or showItemInFolder in electron/', async () => {
    const sources = await electronSources();
    expect(sources.length).toBeGreaterThan(10);
    for (const { name, text } of sources) {
      expect(text, name).not.toMatch(/\bopenExternal\s*\(|\bopenPath\s*\(|\bshowItemInFolder\s*\(/);
      expect(text, name).not.toMatch(/import\s*\{[^}]*\bshell\b[^}]*\}\s*from\s*'electron'/);
    }
  });
});
