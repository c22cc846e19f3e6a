// Settings → Diagnostics against the real stack and a real coturn (shared-secret mode, its
// credentials handed out by the relay): "Test my setup" gathers a real relay candidate, measures
// Chromium's fake microphone with processing off, plays the tones, and leaves no peer connection
// open and no track running; "Export diagnostics" downloads one JSON file that, after a real call,
// holds the call but no API key, no agent token, no page token and no full customer number.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { startCoturn, type CoturnHandle } from '../support/coturn-server';
import { eventually, startStack, type Stack } from './harness';
import { callSetupSteps, type CallTimings } from '../../shared/diagnostics';

/**
 * Watches what the page opens, without changing it: every RTCPeerConnection made, every track
 * getUserMedia gave and the constraints it was asked with.
 */
const WATCH_MEDIA = `(() => {
  const peers = [];
  const tracks = [];
  const asked = [];
  const Native = window.RTCPeerConnection;
  window.RTCPeerConnection = class extends Native {
    constructor(...args) {
      super(...args);
      peers.push(this);
    }
  };
  const getUserMedia = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
  navigator.mediaDevices.getUserMedia = async (constraints) => {
    asked.push(JSON.parse(JSON.stringify(constraints)));
    const stream = await getUserMedia(constraints);
    tracks.push(...stream.getTracks());
    return stream;
  };
  window.__watchedMedia = () => ({
    peers: peers.map((pc) => pc.signalingState),
    tracks: tracks.map((t) => t.readyState),
    asked,
  });
})();`;

interface WatchedMedia {
  peers: string[];
  tracks: string[];
  asked: { audio?: boolean | Record<string, unknown> }[];
}

const watched = (p: Page): Promise<WatchedMedia> => p.evaluate(() => (window as unknown as { __watchedMedia(): WatchedMedia }).__watchedMedia());

let coturn: CoturnHandle;
let stack: Stack;
let page: Page | undefined;
const turnSecret = randomBytes(18).toString('base64url');

beforeAll(async () => {
  coturn = await startCoturn(turnSecret);
  stack = await startStack({ relayTurn: { secret: turnSecret, urls: [`turn:127.0.0.1:${coturn.port}?transport=udp`] } });
  // The app's account with secrets this test knows: the stack's API key, and its second agent token
  // as this desk's token. The export must hold neither.
  const saved = await stack.service.handle('saveSettings', {
    settings: { gatewayUrl: `${stack.sandbox.url}/restapi/v1`, apiKey: stack.apiKey, productSegment: 'chatapp', relayUrl: stack.relay.url, agentToken: stack.tapToken },
  });
  expect(saved.ok).toBe(true);
});
afterAll(async () => {
  await stack?.close();
  await coturn?.stop();
});
afterEach(async () => {
  await page?.context().close();
  page = undefined;
  await stack.endCalls();
});

async function openAgentPage(): Promise<Page> {
  const context = await stack.browser.newContext({ permissions: ['microphone'], acceptDownloads: true });
  await context.addInitScript(WATCH_MEDIA);
  const opened = await context.newPage();
  opened.on('pageerror', (e) => console.error('page error:', e.message));
  await opened.goto(stack.host.url);
  await opened.getByRole('status', { name: 'Connection' }).getByText('Connected').waitFor();
  return opened;
}

async function openDiagnostics(p: Page) {
  await p.getByRole('button', { name: 'Settings' }).click();
  const section = p.getByRole('region', { name: 'Diagnostics' });
  await section.waitFor();
  return section;
}

const VERDICT = /^(Your setup is ready for calls\.|Calls may fail: .+|Calls will not work: .+)$/;

describe('Settings → Diagnostics', () => {
  test('"Test my setup" ends with a verdict in under 10 s; the TURN server the relay hands out is reachable', async () => {
    page = await openAgentPage();
    const section = await openDiagnostics(page);
    const started = Date.now();
    await section.getByRole('button', { name: 'Test my setup' }).click();
    const verdict = section.getByRole('status').filter({ hasText: VERDICT });
    await verdict.waitFor({ timeout: 10_000 });
    expect(Date.now() - started).toBeLessThan(10_000);

    const lines = await section.getByRole('list', { name: 'Setup check' }).getByRole('listitem').allTextContents();
    expect(lines).toHaveLength(6);
    const line = (pattern: RegExp) => lines.find((l) => pattern.test(l));
    expect(line(/Microphone works: level peaked at \d+ %/)).toBeDefined();
    expect(line(/Played a tone on the speaker, .+: you should have heard it/)).toBeDefined();
    expect(line(/Played a tone on the ringer, .+: you should have heard it/)).toBeDefined();
    expect(line(/Relay reachable \(\d+ ms\)/)).toBeDefined();
    expect(line(/TURN server reachable \(relay over UDP\)/)).toBeDefined();
    expect(line(/UDP gets out/)).toBeDefined();
    await expect(verdict.textContent()).resolves.toBe('Your setup is ready for calls.');
    // coturn allocated for the check, with the relay's short-lived credentials.
    expect(coturn.log()).toMatch(/ALLOCATE processed, success/);

    // Everything the check opened is closed: its peer connections and the microphone.
    const media = await watched(page);
    expect(media.peers.length).toBeGreaterThanOrEqual(2);
    expect(media.peers.every((state) => state === 'closed')).toBe(true);
    expect(media.tracks.length).toBeGreaterThan(0);
    expect(media.tracks.every((state) => state === 'ended')).toBe(true);
    // The level was measured with the microphone's processing off.
    expect(media.asked.some((c) => typeof c.audio === 'object' && c.audio.echoCancellation === false && c.audio.noiseSuppression === false && c.audio.autoGainControl === false)).toBe(true);
  });

  test('"Export diagnostics" downloads one JSON file: the call is in it; no key, token or full number is', async () => {
    page = await openAgentPage();
    const customer = stack.customer('answers');
    const currentCall = page.getByRole('region', { name: 'Current call' });
    await page.getByLabel('Phone number').fill(`+${customer.number}`);
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await currentCall.getByText('Connected').waitFor();
    const callId = await eventually('the initiate request', async () => (await stack.gatewayLog()).filter((l) => l.action === 'initiate' && l.status === 200).at(-1)?.callId);
    await page.waitForTimeout(1500);
    await currentCall.getByRole('button', { name: 'Hang up' }).click();
    await eventually('terminate to reach the gateway', async () => (await stack.gatewayLog()).some((l) => l.callId === callId && l.action === 'terminate'));
    // The call's quality report comes from the window as its media closes.
    await eventually('the call in the diagnostics', async () => {
      const file = await stack.service.handle('exportDiagnostics', {});
      return file.ok && (JSON.parse(file.value.content) as { calls: unknown[] }).calls.length > 0;
    });

    const section = await openDiagnostics(page);
    const [download] = await Promise.all([page.waitForEvent('download'), section.getByRole('button', { name: 'Export diagnostics' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^softphone-diagnostics-[\w-]+\.json$/);
    await section.getByRole('status').filter({ hasText: `Saved ${download.suggestedFilename()}` }).waitFor();
    const path = await download.path();
    const content = await readFile(path, 'utf8');

    const file = JSON.parse(content) as Record<string, unknown> & { window: { hostKind: string; userAgent: string }; calls: unknown[]; settings: { mode: string } };
    expect(Object.keys(file)).toEqual(expect.arrayContaining(['kind', 'version', 'createdAt', 'app', 'os', 'window', 'settings', 'relayConnection', 'calls', 'logs']));
    expect(file.kind).toBe('softphone-diagnostics');
    expect(file.window.hostKind).toBe('browser');
    expect(file.window.userAgent).toMatch(/Chrome/);
    expect(file.settings.mode).toBe('account');
    expect(file.calls.length).toBeGreaterThan(0);
    // Where the call's set-up spent its time, from the click to media connected, on both sides of the window.
    const timings = (file.calls.at(-1) as { timings?: CallTimings }).timings ?? {};
    expect(Object.keys(timings).sort()).toEqual(['clickedAt', 'commandAt', 'gatewayDoneAt', 'gatewaySentAt', 'iceConnectedAt', 'iceStartedAt', 'mediaConnectedAt', 'sdpReadyAt']);
    const steps = callSetupSteps(timings);
    expect(steps.map((step) => step.to)).toEqual(['sdpReadyAt', 'commandAt', 'gatewaySentAt', 'gatewayDoneAt', 'iceStartedAt', 'iceConnectedAt', 'mediaConnectedAt']);
    expect(steps.every((step) => step.ms >= 0), JSON.stringify(steps)).toBe(true);

    expect(content).not.toContain(stack.apiKey);
    expect(content).not.toContain(stack.tapToken);
    const pageToken = new URL(stack.host.url).searchParams.get('token');
    if (pageToken) expect(content).not.toContain(pageToken);
    expect(content).not.toContain(turnSecret);
    expect(content).not.toContain(customer.number);
  });
});

describe('Settings → Diagnostics, with TURN credentials coturn refuses', () => {
  let refusedStack: Stack;
  let refusedPage: Page | undefined;
  beforeAll(async () => {
    // The relay signs with another secret than coturn's: every allocation is refused.
    refusedStack = await startStack({ relayTurn: { secret: randomBytes(18).toString('base64url'), urls: [`turn:127.0.0.1:${coturn.port}?transport=udp`] } });
  });
  afterAll(async () => {
    await refusedPage?.context().close();
    await refusedStack?.close();
  });

  test('"Test my setup" says the TURN server is not reachable, and that calls may fail', async () => {
    const context = await refusedStack.browser.newContext({ permissions: ['microphone'] });
    refusedPage = await context.newPage();
    await refusedPage.goto(refusedStack.host.url);
    await refusedPage.getByRole('status', { name: 'Connection' }).getByText('Connected').waitFor();
    const section = await openDiagnostics(refusedPage);
    await section.getByRole('button', { name: 'Test my setup' }).click();
    const verdict = section.getByRole('status').filter({ hasText: VERDICT });
    await verdict.waitFor({ timeout: 10_000 });
    const lines = await section.getByRole('list', { name: 'Setup check' }).getByRole('listitem').allTextContents();
    expect(lines.some((l) => l.endsWith('TURN server not reachable: check its address, username and password'))).toBe(true);
    // Chromium learns its public address from a TURN server only with an allocation: no claim about UDP.
    expect(lines.some((l) => l.endsWith('Whether UDP gets out could not be told: the TURN server gave no answer to learn it from (a stun: server would tell)'))).toBe(true);
    await expect(verdict.textContent()).resolves.toBe('Calls may fail: the TURN server is not reachable.');
  });
});
