// The window (window-page.ts) in Debian's Chromium: bundled with esbuild, with the product's own
// styles, served from 127.0.0.1 and driven by Playwright. The page's host answers what the test
// tells it (`host(page)`), so a test sees the real DOM, focus and top layer of what it renders.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { AppSnapshot } from '../../../shared/api';
import type { Result } from '../../../shared/result';
import type { UiLanguage } from '../../../shared/i18n/languages';
import type { MonitorFact } from '../../../renderer/webrtc/monitor-media';
import type { PageHost } from './window-page';

const PAGE = `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8"><title>Softphone</title><link rel="stylesheet" href="/styles.css"></head>
  <body><div id="root"></div><script type="module" src="/page.js"></script></body>
</html>`;

/** A window's size (default 460 × 900) and colour scheme (default light). */
export interface WindowOptions {
  width?: number;
  height?: number;
  colorScheme?: 'light' | 'dark';
}

export interface WindowInChromium {
  browser: Browser;
  url: string;
  /** A new page with the window's script loaded, not started yet (`start`). */
  newPage(options?: WindowOptions): Promise<Page>;
  close(): Promise<void>;
}

export async function startWindowInChromium(): Promise<WindowInChromium> {
  const bundled = await build({
    entryPoints: [resolve('test/unit/renderer/window-page.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
  const script = bundled.outputFiles[0]?.text ?? '';
  const styles = await readFile(resolve('renderer/styles.css'), 'utf8');
  const server: Server = createServer((req, res) => {
    if (req.url === '/page.js') res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(script);
    else if (req.url === '/styles.css') res.writeHead(200, { 'Content-Type': 'text/css' }).end(styles);
    else if (req.url === '/') res.writeHead(200, { 'Content-Type': 'text/html' }).end(PAGE);
    else res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  // Contexts still closing when the browser goes would reject unheard: close waits for them.
  const closing = new Set<Promise<void>>();
  return {
    browser,
    url,
    async newPage(options = {}) {
      // A context of its own (axe-core asks for one), closed with its page.
      const context = await browser.newContext({ viewport: { width: options.width ?? 460, height: options.height ?? 900 }, colorScheme: options.colorScheme ?? 'light' });
      const page = await context.newPage();
      page.on('close', () => {
        const closed = context.close().catch(() => undefined);
        closing.add(closed);
        void closed.finally(() => closing.delete(closed));
      });
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      await page.goto(url);
      await page.waitForFunction(() => 'window' in globalThis && '__host' in window);
      if (problems.length > 0) throw new Error(`the window's script failed: ${problems.join('; ')}`);
      return page;
    },
    async close() {
      await Promise.all(closing);
      await browser.close();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/**
 * A Chromium for one test file's windows: started before its tests, closed after them, and each
 * window a test opens (`open`) closed after that test, its context with it.
 */
export function windowsForFile(): { open(options?: WindowOptions): Promise<Page> } {
  let chromium: WindowInChromium | undefined;
  const opened: Page[] = [];
  beforeAll(async () => {
    chromium = await startWindowInChromium();
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
  });
  afterEach(async () => {
    for (const page of opened.splice(0)) await page.context().close();
  });
  return {
    async open(options) {
      if (chromium === undefined) throw new Error('the window tests’ Chromium is not running: open windows inside a test');
      const page = await chromium.newPage(options);
      opened.push(page);
      return page;
    },
  };
}

/** The page's host, from the test's side. */
export const host = (page: Page) => ({
  start: (snapshot: AppSnapshot, language?: UiLanguage) => page.evaluate(([s, l]) => (window as unknown as { __host: PageHost }).__host.start(s, l), [snapshot, language] as const),
  answer: (name: string, result: Result<unknown>) => page.evaluate(([n, r]) => (window as unknown as { __host: PageHost }).__host.answer(n, r), [name, result] as const),
  defer: (name: string) => page.evaluate((n) => (window as unknown as { __host: PageHost }).__host.defer(n), name),
  settle: (name: string, result: Result<unknown>) => page.evaluate(([n, r]) => (window as unknown as { __host: PageHost }).__host.settle(n, r), [name, result] as const),
  push: (name: string, payload: unknown) => page.evaluate(([n, p]) => (window as unknown as { __host: PageHost }).__host.push(n, p), [name, payload] as const),
  commands: () => page.evaluate(() => (window as unknown as { __host: PageHost }).__host.commands),
  monitorLog: () => page.evaluate(() => (window as unknown as { __host: PageHost }).__host.monitorLog),
  monitorFact: (fact: MonitorFact) => page.evaluate((f) => (window as unknown as { __host: PageHost }).__host.monitorFact(f), fact),
  refuseRejoinMicrophone: (refused: boolean) => page.evaluate((r) => (window as unknown as { __host: PageHost }).__host.refuseRejoinMicrophone(r), refused),
  rejoinAnswers: () => page.evaluate(() => (window as unknown as { __host: PageHost }).__host.rejoinAnswers),
});
