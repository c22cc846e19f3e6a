// The embedded default as a newcomer meets it (`npm start` with no account): the in-process relay
// with its bridge, the sandbox, and two simulated colleagues who answer a transfer or a consult after
// about two seconds and talk. From one window: a cold transfer to Maya, then a consult with Leo that
// becomes a three-way call.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startBrowserHost, type BrowserHost } from '../../electron/browser/browser-host';
import { startEmbeddedEnvironment } from '../../electron/embedded';
import { MemorySecretStore } from '../../electron/core/secret-store';
import { createSoftphoneService, type SoftphoneService } from '../../electron/core/softphone-service';
import type { SandboxCallReport, SandboxCustomer } from '../../shared/sandbox';
import { agentInbound, CHROMIUM_ARGS, currentCall, eventually, incomingCard, keepLogs, mediaIdOf, openAgentPage, RENDERER_DIR, recentCalls } from './harness';

let dataDir: string;
let service: SoftphoneService;
let host: BrowserHost;
let browser: Browser;
let controlUrl: string;

beforeAll(async () => {
  keepLogs(undefined);
  dataDir = await mkdtemp(join(tmpdir(), 'softphone-e2e-colleagues-'));
  service = await createSoftphoneService({
    dataDir,
    secrets: new MemorySecretStore(),
    embedded: async () => {
      const env = await startEmbeddedEnvironment();
      controlUrl = env.sandboxControlUrl;
      return env;
    },
  });
  host = await startBrowserHost({ backend: service, staticDir: RENDERER_DIR });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}, 60_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await host?.close();
  await service?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function control<T>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${controlUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`sandbox ${path}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}
const callReport = (callId: string) => control<SandboxCallReport>(`/control/calls/${encodeURIComponent(callId)}`);
const actionsFor = async (callId: string) => (await control<{ action: string; callId?: string }[]>('/control/log')).filter((l) => l.callId === callId).map((l) => l.action);

async function answerACustomer(page: Page): Promise<{ callId: string }> {
  const customers = await control<SandboxCustomer[]>('/control/customers');
  const customer = customers.find((c) => c.behaviour === 'answers')!;
  const { callId } = await control<{ callId: string }>('/control/incoming', { number: customer.number });
  await incomingCard(page).getByRole('button', { name: 'Answer' }).click();
  await currentCall(page).getByText('Connected').waitFor();
  await eventually('the customer to hear the agent', async () => (await callReport(callId)).heardNow === 'voice');
  return { callId };
}

describe('the embedded team’s simulated colleagues', () => {
  test('a transfer to Maya: she answers after about two seconds and the customer hears her; no terminate', async () => {
    const page = await openAgentPage(browser, host.url, 'agent');
    const { callId } = await answerACustomer(page);

    await currentCall(page).getByRole('button', { name: 'Transfer', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Transfer to' });
    await dialog.getByRole('button', { name: 'Leo Santos', exact: true }).waitFor();
    await dialog.getByRole('button', { name: 'Maya Chen', exact: true }).click();
    await currentCall(page).getByText('Transferring to Maya Chen…').waitFor();
    await eventually('the customer to hear the music', async () => (await callReport(callId)).heardNow === 'music');

    await recentCalls(page).getByText('Transferred to Maya Chen').waitFor({ timeout: 15_000 });
    // Maya talks to the customer now, and nobody's tone is in it: the voice is hers.
    const report = await eventually('the customer to hear Maya', async () => {
      const r = await callReport(callId);
      return r.heardNow === 'voice' ? r : undefined;
    });
    expect(report.state).toBe('connected');
    expect(await actionsFor(callId)).toEqual(['accept']);

    await control('/control/hangup', { callId });
    await page.context().close();
  });

  test('a consult with Leo becomes a three-way call; when the agent leaves, Leo stays with the customer', async () => {
    const page = await openAgentPage(browser, host.url, 'agent');
    const { callId } = await answerACustomer(page);

    await currentCall(page).getByRole('button', { name: 'Consult', exact: true }).click();
    await page.getByRole('dialog', { name: 'Consult with' }).getByRole('button', { name: 'Leo Santos', exact: true }).click();
    await eventually('the customer to hear the music', async () => (await callReport(callId)).heardNow === 'music');
    await currentCall(page).getByRole('button', { name: 'Add to call' }).waitFor({ timeout: 15_000 });
    // Leo talks to the agent while the customer waits.
    const localId = await mediaIdOf(page, callId);
    const before = (await agentInbound(page, localId)).inboundEnergy;
    await eventually('the agent to hear Leo', async () => (await agentInbound(page, localId)).inboundEnergy > before + 0.01);
    expect((await callReport(callId)).heardNow).toBe('music');
    await currentCall(page).getByRole('button', { name: 'Add to call' }).click();
    await currentCall(page).getByText('Three-way call with Leo Santos').waitFor();
    await eventually('the customer to hear the call again', async () => (await callReport(callId)).heardNow === 'voice');

    await currentCall(page).getByRole('button', { name: 'Hang up' }).click();
    await page.waitForTimeout(1_000);
    expect(await actionsFor(callId)).toEqual(['accept']);
    expect((await callReport(callId)).state).toBe('connected');
    await eventually('Leo to be still with the customer', async () => (await callReport(callId)).heardNow === 'voice');

    await control('/control/hangup', { callId });
    await page.context().close();
  });
});
