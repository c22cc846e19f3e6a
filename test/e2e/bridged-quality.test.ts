// Quality on both legs of a bridged call, end to end: the relay runs a bridge node in its process,
// the sandbox's customer is a real WebRTC peer facing it, and the agent's Chromium has its own leg
// to it. The customer's network is made poor on the sandbox's side (POST /control/network) while the
// window's leg stays clean: the window measures only its own leg, main asks the relay for the
// customer's leg as the bridge measures it and pushes it to the window, which says whose connection
// is poor, scores the call end to end, and keeps both legs in the call's history and diagnostics.
import { expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import type { QualitySummary } from '../../shared/call-quality';
import type { QualityView } from '../../renderer/webrtc/media-health';
import { currentCall, eventually, incomingCard, recentCalls, stackForFile } from './harness';

const stack = stackForFile({ bridge: true });

const qualityStatus = (p: Page) => currentCall(p).getByRole('status', { name: 'Call quality' });
const CUSTOMER_LOSS = /^The customer’s connection is poor: \d+(\.\d)? % packet loss$/;

async function quality(p: Page): Promise<number | undefined> {
  const text = await currentCall(p).getByText(/^Quality \d\.\d$/).textContent({ timeout: 1_000 }).catch(() => null);
  return text === null ? undefined : Number(text.replace('Quality ', ''));
}

test('a customer on a poor network through the bridge: the window says the customer’s connection is poor, not the agent’s; Quality drops; the history and the diagnostics name the customer’s leg', { timeout: 90_000 }, async () => {
  const page = await stack.newAgentPage();
  const customer = stack.customer('answers');
  const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
  await incomingCard(page).getByRole('button', { name: 'Answer' }).click();
  await currentCall(page).getByText('Connected').waitFor();

  // A clean call first: a high score, and no warning.
  const clean = await eventually('a score for the clean call', async () => {
    const score = await quality(page);
    return score !== undefined && score >= 4 ? score : undefined;
  });
  // The bridge has reported on the customer's leg: the window knows the call is bridged.
  await eventually('the bridge to carry the customer’s media', async () => (await stack.bridgeReport(callId)).customer.packetsReceived > 100);
  await page.waitForTimeout(2_000);
  await expect(qualityStatus(page).locator('.quality-warning').count()).resolves.toBe(0);

  // The customer's network loses 12 % of the packets, both ways: the bridge sees it on the customer's leg.
  await stack.control('/control/network', { callId, lossPercent: 12 });
  await qualityStatus(page).getByText(CUSTOMER_LOSS).waitFor({ timeout: 20_000 });
  const bridgeSaw = await stack.bridgeReport(callId);
  expect(bridgeSaw.customer.packetsLost).toBeGreaterThan(10);
  // The end-to-end score drops with it.
  const dropped = await eventually('the score to drop', async () => {
    const score = await quality(page);
    return score !== undefined && score <= clean - 0.5 ? score : undefined;
  });
  expect(dropped).toBeLessThan(3.9);
  // A few more seconds of it: the window itself receives the customer's gaps (the bridge passes them
  // on), yet its own leg is never said to be poor.
  let windowLoss = 0;
  for (let i = 0; i < 8; i++) {
    await expect(qualityStatus(page).getByText(/^Poor connection:/).count()).resolves.toBe(0);
    const view = await page.evaluate(
      (localId) => (window as unknown as { __softphoneMedia: { quality(localId: string): QualityView | undefined } }).__softphoneMedia.quality(localId),
      `in:${callId}`,
    );
    windowLoss = Math.max(windowLoss, view?.sample?.inboundLoss ?? 0);
    expect(view?.customerWarnings).toContain('high-packet-loss');
    expect(view?.warnings).not.toContain('high-packet-loss');
    await page.waitForTimeout(1_000);
  }
  expect(windowLoss).toBeGreaterThan(0.05);
  await expect(qualityStatus(page).getByText(CUSTOMER_LOSS).count()).resolves.toBe(1);

  await currentCall(page).getByRole('button', { name: 'Hang up' }).click();
  const entry = await eventually('the call in the history with its quality', async () => {
    const snapshot = await stack.service.handle('getSnapshot', {});
    return snapshot.ok ? snapshot.value.history.find((e) => e.callId === callId && e.quality !== undefined) : undefined;
  });
  const summary = entry.quality!;
  expect(summary.legs?.customer.warningsSeen).toContain('high-packet-loss');
  expect(summary.legs?.customer.worstLossPercent).toBeGreaterThan(5);
  expect(summary.legs?.agent.warningsSeen).not.toContain('high-packet-loss');
  expect(summary.warningsSeen).toContain('high-packet-loss');
  expect(summary.worstLossPercent).toBeGreaterThan(5);
  await recentCalls(page).getByText(/warned: .*customer’s packet loss/).first().waitFor();

  // "Export diagnostics" says which leg was poor.
  const exported = await eventually('the call in the diagnostics', async () => {
    const file = await stack.service.handle('exportDiagnostics', {});
    if (!file.ok) return undefined;
    const calls = (JSON.parse(file.value.content) as { calls: { direction?: string; summary: QualitySummary }[] }).calls;
    return calls.find((c) => c.direction === 'incoming' && c.summary.legs !== undefined);
  });
  expect(exported.summary.legs?.customer.warningsSeen).toContain('high-packet-loss');
  expect(exported.summary.legs?.agent.warningsSeen).not.toContain('high-packet-loss');
});
