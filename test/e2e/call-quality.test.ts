// Call quality and network loss end to end: the sandbox's customers are real WebRTC peers whose
// network it makes bad (POST /control/network: loss, jitter, blackouts, both ways). The agent's
// Chromium measures what it gets (getStats once a second), warns in words on the call panel,
// shows "Reconnecting…" while media is away, and gives the call up after 15 s without media.
import { expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { NETWORK_LOST_REASON } from '../../renderer/webrtc/media-health';
import { currentCall, eventually, incomingCard, recentCalls, stackForFile } from './harness';

const stack = stackForFile();
let page: Page | undefined;


const qualityStatus = (p: Page) => currentCall(p).getByRole('status', { name: 'Call quality' });

async function answer(p: Page, number: string): Promise<string> {
  const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number });
  await incomingCard(p).getByRole('button', { name: 'Answer' }).click();
  await currentCall(p).getByText('Connected').waitFor();
  return callId;
}

const lossyCustomer = () => {
  const found = stack.sandbox.customers.find((c) => c.network?.lossPercent !== undefined && c.network.lossPercent > 0);
  if (!found) throw new Error('the sandbox has no lossy customer');
  return found;
};

test('a lossy customer: the panel warns "Poor connection: … packet loss" in words, and the call\'s history keeps it', { timeout: 60_000 }, async () => {
  page = await stack.newAgentPage();
  const customer = lossyCustomer();
  const callId = await answer(page, customer.number);

  const warning = qualityStatus(page).getByText(/^Poor connection: \d+(\.\d)? % packet loss$/);
  await warning.waitFor({ timeout: 20_000 });
  await expect(currentCall(page).getByText(/^Quality \d\.\d$/).count()).resolves.toBe(1);

  await currentCall(page).getByRole('button', { name: 'Hang up' }).click();
  const entry = await eventually('the call in the history with its quality', async () => {
    const snapshot = await stack.service.handle('getSnapshot', {});
    return snapshot.ok ? snapshot.value.history.find((e) => e.callId === callId && e.quality !== undefined) : undefined;
  });
  expect(entry.quality!.warningsSeen).toContain('high-packet-loss');
  expect(entry.quality!.worstLossPercent).toBeGreaterThan(1);
  expect(entry.quality!.avgMos).toBeGreaterThan(1);
  await recentCalls(page).getByText(/loss up to \d+(\.\d)? %.*warned: .*packet loss/).first().waitFor();
});

test('a clean call recovers: a warning raised by loss clears once the network is clean again', { timeout: 60_000 }, async () => {
  page = await stack.newAgentPage();
  const callId = await answer(page, stack.customer('answers').number);
  await stack.control('/control/network', { callId, lossPercent: 12 });
  const warning = qualityStatus(page).getByText(/^Poor connection: \d+(\.\d)? % packet loss$/);
  await warning.waitFor({ timeout: 20_000 });
  await stack.control('/control/network', { callId, lossPercent: 0 });
  await warning.waitFor({ state: 'detached', timeout: 25_000 });
  await expect(currentCall(page).getByText('Connected').count()).resolves.toBe(1);
});

test('a short blackout: "Reconnecting…" at once, and it clears when media returns; the call goes on', { timeout: 60_000 }, async () => {
  page = await stack.newAgentPage();
  const callId = await answer(page, stack.customer('answers').number);
  await page.waitForTimeout(1_500);
  await stack.control('/control/network', { callId, blackoutMs: 5_000 });
  await currentCall(page).getByText('Reconnecting…', { exact: true }).waitFor({ timeout: 5_000 });
  await qualityStatus(page).getByText(/^Reconnecting…/).waitFor();
  await currentCall(page).getByText('Connected', { exact: true }).waitFor({ timeout: 15_000 });
  await expect(qualityStatus(page).getByText(/^Reconnecting…/).count()).resolves.toBe(0);
  expect((await stack.gatewayLog()).filter((l) => l.callId === callId).map((l) => l.action)).toEqual(['accept']);
});

test('media gone for good: after 15 s the call ends with "The network connection was lost" and terminate is sent', { timeout: 60_000 }, async () => {
  page = await stack.newAgentPage();
  const callId = await answer(page, stack.customer('answers').number);
  await page.waitForTimeout(1_500);
  await stack.control('/control/network', { callId, blackoutMs: 60_000 });
  await currentCall(page).getByText('Reconnecting…', { exact: true }).waitFor({ timeout: 5_000 });
  await currentCall(page).getByText(`Failed: ${NETWORK_LOST_REASON}`).waitFor({ timeout: 25_000 });
  const actions = await eventually('terminate to reach the gateway', async () => {
    const log = (await stack.gatewayLog()).filter((l) => l.callId === callId).map((l) => l.action);
    return log.includes('terminate') ? log : undefined;
  });
  expect(actions).toEqual(['accept', 'terminate']);
  await recentCalls(page).getByText(`Failed: ${NETWORK_LOST_REASON}`).first().waitFor();
});
