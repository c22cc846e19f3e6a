// The page's Content-Security-Policy in Debian's Chromium, on the built renderer served by the real
// browser host: the app loads, connects, takes a call and holds it without one violation; what is
// not the page's own (another origin's fetch or WebSocket, an inline script, style or handler, eval,
// audio from a data: URL) is refused, audio from the page's own blob: URL plays; the /dial page's own inline style is allowed by its hash.
import { readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterEach, expect, test } from 'vitest';
import { currentCall, eventually, incomingCard, stackForFile } from './harness';

const stack = stackForFile();
const RENDERER_DIR = resolve(process.env.E2E_RENDERER_DIR ?? 'dist/renderer');

interface Violation {
  directive: string;
  blocked: string;
  /** The policy that refused it: the header's or the meta tag's (each reports its own). */
  policy: string;
}
interface Watched {
  page: Page;
  /** console.error lines and uncaught errors, in order. */
  errors: string[];
  violations(): Promise<Violation[]>;
}

const contexts: BrowserContext[] = [];
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
});

/** A page whose every CSP violation and console error is recorded from before the first script runs. */
async function watchedPage(): Promise<Watched> {
  const context = await stack.browser.newContext({ permissions: ['microphone'] });
  contexts.push(context);
  await context.addInitScript(() => {
    const seen: Array<{ directive: string; blocked: string; policy: string }> = [];
    Object.defineProperty(window, '__cspViolations', { value: seen });
    document.addEventListener('securitypolicyviolation', (e) => seen.push({ directive: e.effectiveDirective, blocked: e.blockedURI, policy: e.originalPolicy }));
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return {
    page,
    errors,
    violations: () => page.evaluate(() => [...(window as unknown as { __cspViolations: Violation[] }).__cspViolations]),
  };
}

/** The agent's page, loaded and connected over its WebSocket. */
async function openApp(watched: Watched): Promise<{ header: string; meta: string }> {
  const response = await watched.page.goto(stack.host.url);
  if (!response) throw new Error('no response for the page');
  await watched.page.getByRole('status', { name: 'Connection' }).getByText('Connected').waitFor();
  const meta = await watched.page.evaluate(() => document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content') ?? '');
  return { header: response.headers()['content-security-policy'] ?? '', meta };
}

test('the app loads, connects, answers and holds a call with no CSP violation and no console error; its header is its meta tag plus frame-ancestors', async () => {
  const watched = await watchedPage();
  const { header, meta } = await openApp(watched);
  expect(meta).not.toBe('');
  expect(header).toBe(`${meta}; frame-ancestors 'none'`);
  expect(header).not.toContain('unsafe-');

  // A call: the ringtone, the remote audio, the level meters (React `style` props), then hold, whose
  // music is the `?url` asset the engine fetches from the page's own origin.
  const customer = stack.customer('answers');
  await stack.control('/control/incoming', { number: customer.number });
  await incomingCard(watched.page).getByRole('button', { name: 'Answer', exact: true }).click();
  await currentCall(watched.page).getByText('Connected').waitFor();
  await currentCall(watched.page).getByRole('button', { name: 'Hold', exact: true }).click();
  await currentCall(watched.page).getByText('On hold').first().waitFor();
  const music = await eventually('the hold music to be fetched', () =>
    watched.page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .map((e) => e as PerformanceResourceTiming)
        .find((e) => /\/assets\/hold-music-[^/]+\.wav$/.test(new URL(e.name).pathname) && e.responseStatus > 0),
    ),
  );
  expect(music.responseStatus).toBe(200);
  await currentCall(watched.page).getByRole('button', { name: 'Resume', exact: true }).click();
  await currentCall(watched.page).getByRole('button', { name: 'Hold', exact: true }).waitFor();

  expect(await watched.violations()).toEqual([]);
  expect(watched.errors).toEqual([]);
});

test("refuses another origin's fetch and WebSocket, inline scripts, styles and handlers, eval and data: audio, under the header and the meta tag alike; allows its own files, its own WebSocket and its own blob: audio", async () => {
  const watched = await watchedPage();
  const { header, meta } = await openApp(watched);
  const assets = (await readdir(resolve(RENDERER_DIR, 'assets'))).filter((name) => !name.endsWith('.map'));
  expect(assets.some((name) => /^hold-music-.+\.wav$/.test(name))).toBe(true);
  const relayWs = `${stack.relay.url.replace(/^http/, 'ws').replace(/\/$/, '')}/`;

  const outcome = await watched.page.evaluate(
    async ({ assets, sandboxUrl, relayWs }) => {
      // From here on: what loading the app reported is the first test's business.
      (window as unknown as { __cspViolations: unknown[] }).__cspViolations.length = 0;
      const settles = (ws: WebSocket) =>
        new Promise<string>((done) => {
          ws.onopen = () => done('open');
          ws.onerror = () => done('error');
          ws.onclose = (e) => done(`close ${e.code}`);
        });
      const fetched = async (url: string) => {
        try {
          return (await fetch(url)).status;
        } catch (e) {
          return String(e);
        }
      };

      // The page's own files, by the relative URLs Vite writes.
      const own = await Promise.all(assets.map((name) => fetched(`./assets/${name}`)));
      // Its own WebSocket with a wrong token: the host refuses it (401), the policy does not.
      const ownSocket = await settles(new WebSocket(`ws://${location.host}/api?token=wrong`));

      const elsewhere = {
        fetchLoopback: await fetched('http://127.0.0.2:9/'),
        fetchSandbox: await fetched(`${sandboxUrl}/control/log`),
        socketLoopback: await settles(new WebSocket('ws://127.0.0.2:9/')),
        socketRelay: await settles(new WebSocket(relayWs)),
      };

      // Audio: from an object URL the page made itself ("Play voicemail"), not from a data: URL.
      const wav = (() => {
        const samples = 800;
        const view = new DataView(new ArrayBuffer(44 + samples * 2));
        const ascii = (at: number, text: string) => [...text].forEach((c, i) => view.setUint8(at + i, c.charCodeAt(0)));
        ascii(0, 'RIFF');
        view.setUint32(4, 36 + samples * 2, true);
        ascii(8, 'WAVEfmt ');
        view.setUint32(16, 16, true);
        view.setUint16(20, 1, true);
        view.setUint16(22, 1, true);
        view.setUint32(24, 8000, true);
        view.setUint32(28, 16000, true);
        view.setUint16(32, 2, true);
        view.setUint16(34, 16, true);
        ascii(36, 'data');
        view.setUint32(40, samples * 2, true);
        for (let i = 0; i < samples; i++) view.setInt16(44 + i * 2, Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)), true);
        return new Uint8Array(view.buffer);
      })();
      const loads = (src: string) =>
        new Promise<string>((done) => {
          const audio = new Audio();
          audio.onloadedmetadata = () => done('loaded');
          audio.onerror = () => done('error');
          audio.src = src;
        });
      const blobUrl = URL.createObjectURL(new Blob([wav], { type: 'audio/wav' }));
      const blobAudio = await loads(blobUrl);
      URL.revokeObjectURL(blobUrl);
      const dataAudio = await loads(`data:audio/wav;base64,${btoa(String.fromCharCode(...wav))}`);

      const script = document.createElement('script');
      script.textContent = 'window.__inlineScriptRan = true';
      document.head.append(script);
      const style = document.createElement('style');
      style.textContent = 'body { outline: 7px solid rgb(255, 0, 0) !important }';
      document.head.append(style);
      const attributeStyled = document.createElement('div');
      attributeStyled.setAttribute('style', 'color: rgb(1, 2, 3)');
      document.body.append(attributeStyled);
      // What React does for `style={…}`: the CSSOM, which the policy does not govern.
      const cssomStyled = document.createElement('div');
      cssomStyled.style.color = 'rgb(4, 5, 6)';
      document.body.append(cssomStyled);
      const handler = document.createElement('button');
      handler.setAttribute('onclick', 'window.__inlineHandlerRan = true');
      document.body.append(handler);
      handler.click();
      let evalResult: string;
      try {
        evalResult = String(eval('1 + 1'));
      } catch (e) {
        evalResult = e instanceof Error ? e.name : String(e);
      }
      // Violation events are queued as tasks: let them arrive.
      await new Promise((r) => setTimeout(r, 300));
      const flags = window as unknown as { __inlineScriptRan?: boolean; __inlineHandlerRan?: boolean };
      const result = {
        own,
        ownSocket,
        elsewhere,
        inlineScriptRan: flags.__inlineScriptRan === true,
        inlineHandlerRan: flags.__inlineHandlerRan === true,
        inlineStyleOutline: getComputedStyle(document.body).outlineWidth,
        attributeColor: getComputedStyle(attributeStyled).color,
        cssomColor: getComputedStyle(cssomStyled).color,
        evalResult,
        blobAudio,
        dataAudio,
      };
      for (const node of [script, style, attributeStyled, cssomStyled, handler]) node.remove();
      return result;
    },
    { assets, sandboxUrl: stack.sandbox.url, relayWs },
  );

  expect(outcome.own).toEqual(assets.map(() => 200));
  expect(outcome.ownSocket).not.toBe('open');
  expect(outcome.elsewhere.fetchLoopback).toMatch(/TypeError/);
  expect(outcome.elsewhere.fetchSandbox).toMatch(/TypeError/);
  expect(outcome.elsewhere.socketLoopback).not.toBe('open');
  expect(outcome.elsewhere.socketRelay).not.toBe('open');
  expect(outcome.inlineScriptRan).toBe(false);
  expect(outcome.inlineHandlerRan).toBe(false);
  expect(outcome.inlineStyleOutline).not.toBe('7px');
  expect(outcome.attributeColor).not.toBe('rgb(1, 2, 3)');
  expect(outcome.cssomColor).toBe('rgb(4, 5, 6)');
  expect(outcome.evalResult).toBe('EvalError');
  expect(outcome.blobAudio).toBe('loaded');
  expect(outcome.dataAudio).toBe('error');

  // Each refusal was reported once by each policy, the header's and the meta tag's: either alone holds.
  const expected = (
    [
      ['connect-src', 'http://127.0.0.2:9/'],
      ['connect-src', `${stack.sandbox.url}/control/log`],
      ['connect-src', 'ws://127.0.0.2:9/'],
      ['connect-src', relayWs],
      ['script-src-elem', 'inline'],
      ['style-src-elem', 'inline'],
      ['style-src-attr', 'inline'],
      ['script-src-attr', 'inline'],
      ['script-src', 'eval'],
      ['media-src', 'data'],
    ] as const
  ).flatMap(([directive, blocked]): Violation[] => [header, meta].map((policy) => ({ directive, blocked, policy })));
  const order = (list: Violation[]) => [...list].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  // Nothing of the page's own, its WebSocket included, was refused.
  expect(order(await watched.violations())).toEqual(order(expected));
});

test("the /dial page's own inline style applies under its hash, with no violation", async () => {
  const watched = await watchedPage();
  const response = await watched.page.goto(`${stack.host.origin}/dial?to=${encodeURIComponent('tel:+12025550101')}`);
  expect(response?.headers()['content-security-policy']).toMatch(/style-src 'sha256-[A-Za-z0-9+/]+=*'/);
  await watched.page.getByRole('heading').waitFor();
  expect(await watched.page.evaluate(() => getComputedStyle(document.body).maxWidth)).toBe('576px');
  expect(await watched.violations()).toEqual([]);
  expect(watched.errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
});
