// One Content-Security-Policy for the page: the meta tag in renderer/index.html, the browser host's
// header and the Electron host's header say the same (the headers add frame-ancestors, which a meta
// tag cannot carry). Both hosts take the text from shared/content-security-policy.ts; the meta tag is
// a static file and says it again. The browser host runs for real (real service, embedded relay and
// sandbox) and serves the real index.html; test/e2e/csp.test.ts checks the built page in Chromium.
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DIAL_PAGE_CONTENT_SECURITY_POLICY, startBrowserHost, type BrowserHost } from '../../../electron/browser/browser-host';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { startEmbeddedEnvironment } from '../../../electron/embedded';
import * as desktop from '../../../electron/desktop/security-policy';
import { CONTENT_SECURITY_POLICY, PAGE_CONTENT_SECURITY_POLICY } from '../../../shared/content-security-policy';
import { configureLogging } from '../../../shared/log';
import { directives, metaPolicy } from './csp-text';

const INDEX_HTML = join(import.meta.dirname, '../../../renderer/index.html');
const FRAME_ANCESTORS = "frame-ancestors 'none'";

let host: BrowserHost;
let service: SoftphoneService;
let dataDir: string;
let staticDir: string;

beforeAll(async () => {
  configureLogging({ level: 'error' });
  dataDir = await mkdtemp(join(tmpdir(), 'softphone-csp-'));
  staticDir = await mkdtemp(join(tmpdir(), 'softphone-csp-static-'));
  await copyFile(INDEX_HTML, join(staticDir, 'index.html'));
  await mkdir(join(staticDir, 'assets'));
  await writeFile(join(staticDir, 'assets', 'index-1.js'), 'console.log("softphone")');
  service = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), embedded: () => startEmbeddedEnvironment() });
  host = await startBrowserHost({ backend: service, staticDir });
});
afterAll(async () => {
  await host?.close();
  await service?.close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(staticDir, { recursive: true, force: true });
});

function get(path: string, hostHeader: string): Promise<{ status: number; csp: string; body: string }> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port: host.port, path, headers: { host: hostHeader, 'sec-fetch-dest': 'document' } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => done({ status: res.statusCode ?? 0, csp: String(res.headers['content-security-policy']), body }));
    });
    req.on('error', fail);
    req.end();
  });
}

describe('the page policy', () => {
  test("renderer/index.html's meta tag is the shared page policy and the Electron host's, word for word", async () => {
    const meta = metaPolicy(await readFile(INDEX_HTML, 'utf8'));
    expect(meta).toBe(PAGE_CONTENT_SECURITY_POLICY);
    expect(meta).toBe(desktop.PAGE_CONTENT_SECURITY_POLICY);
  });

  test('each header is the page policy plus frame-ancestors, and nothing else', () => {
    expect(CONTENT_SECURITY_POLICY).toBe(`${PAGE_CONTENT_SECURITY_POLICY}; ${FRAME_ANCESTORS}`);
    expect(desktop.CONTENT_SECURITY_POLICY).toBe(CONTENT_SECURITY_POLICY);
    expect(directives(PAGE_CONTENT_SECURITY_POLICY).has('frame-ancestors')).toBe(false);
  });

  test("allows the page's own origin only: no other host or scheme (media also from the page's own blob: URLs), no 'unsafe-…', and 'self' for the WebSocket too", () => {
    const policy = directives(CONTENT_SECURITY_POLICY);
    expect(policy.get('default-src')).toEqual(["'none'"]);
    expect(policy.get('script-src')).toEqual(["'self'"]);
    expect(policy.get('style-src')).toEqual(["'self'"]);
    expect(policy.get('connect-src')).toEqual(["'self'"]);
    expect(policy.get('object-src')).toEqual(["'none'"]);
    expect(policy.get('base-uri')).toEqual(["'none'"]);
    expect(policy.get('form-action')).toEqual(["'none'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(policy.get('media-src')).toEqual(["'self'", 'blob:']);
    for (const [name, sources] of policy) {
      for (const source of sources) {
        // data: only for images: the page's `data:,` icon; blob: only for media: a voicemail the page plays from its own object URL.
        const allowed = source === "'self'" || source === "'none'" || (name === 'img-src' && source === 'data:') || (name === 'media-src' && source === 'blob:');
        expect(allowed, `${name} ${source}`).toBe(true);
      }
    }
  });
});

describe('the browser host', () => {
  test.each(['127.0.0.1', 'localhost'])('serves index.html on %s with a header that is its meta tag plus frame-ancestors', async (name) => {
    const page = await get('/', `${name}:${host.port}`);
    expect(page.status).toBe(200);
    expect(page.csp).toBe(`${metaPolicy(page.body)}; ${FRAME_ANCESTORS}`);
    expect(page.csp).toBe(CONTENT_SECURITY_POLICY);
    const script = await get('/assets/index-1.js', `${name}:${host.port}`);
    expect(script.csp).toBe(page.csp);
  });

  test("the /dial page's own inline style is allowed by its hash, nothing else changes, and it has no 'unsafe-inline'", async () => {
    // No softphone tab is open: the page says so (503), styled like every /dial answer.
    const page = await get('/dial?to=tel:+12025550101', `127.0.0.1:${host.port}`);
    expect(page.status).toBe(503);
    expect(page.csp).toBe(DIAL_PAGE_CONTENT_SECURITY_POLICY);
    const style = /<style>([^<]*)<\/style>/.exec(page.body)?.[1];
    expect(style).toBeDefined();
    const hash = createHash('sha256')
      .update(style ?? '')
      .digest('base64');
    const policy = directives(page.csp);
    expect(policy.get('style-src')).toEqual([`'sha256-${hash}'`]);
    policy.delete('style-src');
    const pagePolicy = directives(CONTENT_SECURITY_POLICY);
    pagePolicy.delete('style-src');
    expect(policy).toEqual(pagePolicy);
    expect(page.csp).not.toContain('unsafe-');
  });
});
