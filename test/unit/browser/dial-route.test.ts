// GET /dial on the browser host, against the real service (embedded relay and sandbox): a tel: or
// callto: link reaches the softphone tab's WebSocket as dialRequested; a bad number, a missing tab,
// or a request that is not a tab's navigation dials nothing.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { startBrowserHost, type BrowserHost } from '../../../electron/browser/browser-host';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { startEmbeddedEnvironment } from '../../../electron/embedded';
import type { WsServerFrame } from '../../../shared/api';
import { configureLogging } from '../../../shared/log';

let host: BrowserHost;
let service: SoftphoneService;
let dataDir: string;
let staticDir: string;
const tabs: WebSocket[] = [];

beforeAll(async () => {
  configureLogging({ level: 'error' });
  dataDir = await mkdtemp(join(tmpdir(), 'softphone-dial-'));
  staticDir = await mkdtemp(join(tmpdir(), 'softphone-dial-static-'));
  await writeFile(join(staticDir, 'index.html'), '<!doctype html><title>Softphone</title>');
  service = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), embedded: () => startEmbeddedEnvironment() });
  host = await startBrowserHost({ backend: service, staticDir });
});
afterEach(async () => {
  for (const ws of tabs.splice(0)) ws.close();
  await service.handle('setPreferences', { preferences: { dialLinksAtOnce: false } });
  // The host forgets a tab once its socket has closed.
  await new Promise((r) => setTimeout(r, 50));
});
afterAll(async () => {
  await host?.close();
  await service?.close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(staticDir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

function get(target: BrowserHost, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port: target.port, path, method, headers: { host: `127.0.0.1:${target.port}`, ...headers } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

/** Opens the page's link the way a browser tab does when the agent clicks it (the headers Chromium sends for that navigation). */
const openLink = (target: BrowserHost, to: string) =>
  get(target, `/dial?to=${encodeURIComponent(to)}`, { 'sec-fetch-dest': 'document', 'sec-fetch-mode': 'navigate', 'sec-fetch-user': '?1' });

/** The same navigation started by another page's script: no user activation, so no Sec-Fetch-User. */
const openLinkByScript = (target: BrowserHost, to: string) =>
  get(target, `/dial?to=${encodeURIComponent(to)}`, { 'sec-fetch-dest': 'document', 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'cross-site' });

/** A softphone tab: the WebSocket with the token, collecting its dialRequested pushes. */
async function openTab(target: BrowserHost): Promise<{ dials: { number: string; dial: boolean }[] }> {
  const ws = new WebSocket(`ws://127.0.0.1:${target.port}/api?token=${encodeURIComponent(target.token)}`, { origin: target.origin });
  tabs.push(ws);
  const dials: { number: string; dial: boolean }[] = [];
  ws.on('message', (d) => {
    const frame = JSON.parse(d.toString()) as WsServerFrame;
    if (frame.kind === 'push' && frame.push.name === 'dialRequested') dials.push(frame.push.payload);
  });
  await new Promise<void>((done, fail) => {
    ws.on('open', () => done());
    ws.on('error', fail);
  });
  return { dials };
}

/** Pushes are delivered asynchronously: waits a moment for any that are coming. */
const settle = () => new Promise((r) => setTimeout(r, 100));

describe('GET /dial', () => {
  test('a tel: link fills the open tab’s dialer; the link’s tab says where the number went, under the host’s CSP', async () => {
    const tab = await openTab(host);
    const res = await openLink(host, 'tel:+44-20-7946-0958');
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toContain('text/html');
    expect(String(res.headers['content-security-policy'])).toContain("script-src 'self'");
    expect(String(res.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
    expect(res.body).toContain('+44 20 7946 0958 was sent to the softphone tab: it is in the dialer');
    await settle();
    expect(tab.dials).toEqual([{ number: '442079460958', dial: false }]);
  });

  test('with "Dial links at once" a callto: link dials, and the page says so', async () => {
    const tab = await openTab(host);
    const saved = await service.handle('setPreferences', { preferences: { dialLinksAtOnce: true } });
    expect(saved.ok).toBe(true);
    const res = await openLink(host, 'callto://+12025550101');
    expect(res.status).toBe(200);
    expect(res.body).toContain('+1 202 555 0101 was sent to the softphone tab: dialling');
    await settle();
    expect(tab.dials).toEqual([{ number: '12025550101', dial: true }]);
  });

  test('with "Dial links at once", a navigation no click started only fills the dialer, and the page says why', async () => {
    const tab = await openTab(host);
    const saved = await service.handle('setPreferences', { preferences: { dialLinksAtOnce: true } });
    expect(saved.ok).toBe(true);
    const res = await openLinkByScript(host, 'tel:+12025550101');
    expect(res.status).toBe(200);
    expect(res.body).toContain('+1 202 555 0101 was sent to the softphone tab: it is in the dialer');
    expect(res.body).toContain('not opened by a click');
    expect(res.body).not.toContain('dialling');
    const noHeaders = await get(host, `/dial?to=${encodeURIComponent('tel:+12025550102')}`);
    expect(noHeaders.status).toBe(200);
    expect(noHeaders.body).toContain('it is in the dialer');
    const notUser = await get(host, `/dial?to=${encodeURIComponent('tel:+12025550103')}`, { 'sec-fetch-dest': 'document', 'sec-fetch-user': '?0' });
    expect(notUser.body).toContain('it is in the dialer');
    await settle();
    expect(tab.dials).toEqual([
      { number: '12025550101', dial: false },
      { number: '12025550102', dial: false },
      { number: '12025550103', dial: false },
    ]);
  });

  test('a bad number is refused with the reason (escaped) and nothing is dialled', async () => {
    const tab = await openTab(host);
    const short = await openLink(host, 'tel:12');
    expect(short.status).toBe(400);
    expect(short.body).toMatch(/Phone number/);
    expect(short.body).toContain('Nothing was dialled.');

    const foreign = await openLink(host, 'javascript:alert(1)');
    expect(foreign.status).toBe(400);
    expect(foreign.body).toContain('&quot;javascript:&quot; links are not phone numbers');
    expect(foreign.body).not.toContain('"javascript:"');

    const missing = await get(host, '/dial', { 'sec-fetch-dest': 'document' });
    expect(missing.status).toBe(400);
    expect(missing.body).toContain('the link has no number');
    await settle();
    expect(tab.dials).toEqual([]);
  });

  test('with no softphone tab open it says so (503) and hands nothing over', async () => {
    const pushed: string[] = [];
    const stop = service.subscribe((p) => pushed.push(p.name));
    try {
      const res = await openLink(host, 'tel:+442079460958');
      expect(res.status).toBe(503);
      expect(res.body).toContain('No softphone tab is open');
      await settle();
      expect(pushed).not.toContain('dialRequested');
    } finally {
      stop();
    }
  });

  test('only a tab’s navigation dials: not a fetch or an image from another page, nor a HEAD', async () => {
    const tab = await openTab(host);
    const image = await get(host, '/dial?to=%2B442079460958', { 'sec-fetch-dest': 'image', 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'cross-site' });
    expect(image.status).toBe(403);
    const fetched = await get(host, '/dial?to=%2B442079460958', { 'sec-fetch-dest': 'empty', 'sec-fetch-mode': 'cors' });
    expect(fetched.status).toBe(403);
    const head = await get(host, '/dial?to=%2B442079460958', {}, 'HEAD');
    expect(head.status).toBe(405);
    const foreignHost = await get(host, '/dial?to=%2B442079460958', { host: `evil.example:${host.port}`, 'sec-fetch-dest': 'document' });
    expect(foreignHost.status).toBe(421);
    await settle();
    expect(tab.dials).toEqual([]);
  });

  test('a backend without requestDial answers 503', async () => {
    const plain = await startBrowserHost({ backend: { handle: (name, params) => service.handle(name, params), subscribe: (l) => service.subscribe(l) }, staticDir });
    try {
      await openTab(plain);
      const res = await openLink(plain, 'tel:+442079460958');
      expect(res.status).toBe(503);
      expect(res.body).toContain('does not take numbers from links');
    } finally {
      await plain.close();
    }
  });
});
