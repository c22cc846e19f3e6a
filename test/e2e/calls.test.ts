// The call path end to end: Chromium runs the real renderer through the browser host; the sandbox's
// customers are real WebRTC peers; the relay is real. Audio is checked on both sides.
import { describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { currentCall, eventually, expectTwoWayAudio, incomingCard, recentCalls, stackForFile } from './harness';

const stack = stackForFile();
let page: Page | undefined;



describe('incoming calls', () => {
  test('(a) answer: audio flows both ways, hang up; the gateway got accept, then terminate', async () => {
    page = await stack.newAgentPage();
    const customer = stack.customer('answers');
    const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });

    const card = incomingCard(page);
    await card.waitFor();
    await expect.poll(() => card.textContent()).toContain(customer.name);
    await expect(card.getByText(/\d+\s*s/).count()).resolves.toBeGreaterThan(0);

    // Nothing may reach the customer while the call rings (protocol.md).
    await page.waitForTimeout(400);
    expect((await stack.callReport(callId)).firstPacketAt).toBeUndefined();
    const clickedAt = Date.now();
    await card.getByRole('button', { name: 'Answer' }).click();

    await currentCall(page).getByText('Connected').waitFor();
    await expectTwoWayAudio(page, stack.callReport, callId);
    const report = await stack.callReport(callId);
    expect(report.firstPacketAt).toBeGreaterThanOrEqual(clickedAt);

    await currentCall(page).getByRole('button', { name: 'Mute' }).click();
    await currentCall(page).getByRole('button', { name: 'Unmute' }).waitFor();
    await currentCall(page).getByRole('button', { name: 'Hang up' }).click();

    const actions = await eventually('terminate to reach the gateway', async () => {
      const log = (await stack.gatewayLog()).filter((l) => l.callId === callId).map((l) => l.action);
      return log.includes('terminate') ? log : undefined;
    });
    expect(actions).toEqual(['accept', 'terminate']);
    await recentCalls(page).getByText(customer.name).first().waitFor();
  });

  test('(c) decline: reject reaches the gateway and the call shows as declined', async () => {
    page = await stack.newAgentPage();
    const customer = stack.customer('answers');
    // This time the call comes from the sandbox's own button in the UI.
    const sandboxPanel = page.getByRole('region', { name: 'Sandbox' });
    await sandboxPanel.getByRole('combobox', { name: 'Sandbox customer' }).selectOption(customer.number);
    await sandboxPanel.getByRole('button', { name: 'Simulate incoming call' }).click();
    await incomingCard(page).getByText(customer.name).waitFor();
    const callId = await eventually('the sandbox call', async () => {
      const calls = await stack.control<{ callId: string; number: string; state: string }[]>('/control/calls');
      return calls.find((c) => c.number === customer.number && c.state === 'ringing')?.callId;
    });
    await incomingCard(page).getByRole('button', { name: 'Decline' }).click();
    await eventually('reject to reach the gateway', async () => (await stack.gatewayLog()).some((l) => l.callId === callId && l.action === 'reject'));
    const actions = (await stack.gatewayLog()).filter((l) => l.callId === callId).map((l) => l.action);
    expect(actions).toEqual(['reject']);
    await recentCalls(page).getByText('Declined').first().waitFor();
    await expect(incomingCard(page).count()).resolves.toBe(0);
  });

  test('(e) the relay restarts while a call rings: it still rings and can be answered', async () => {
    page = await stack.newAgentPage();
    const customer = stack.customer('answers');
    const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(page).waitFor();

    const oldEpoch = stack.relay.epoch;
    await stack.restartRelay();
    expect(stack.relay.epoch).not.toBe(oldEpoch);
    // The app's stream has found the new relay instance (its memory of the call is gone).
    await eventually('the app to reconnect to the restarted relay', () => stack.relay.stats().connectedAgents >= 1);
    await page.getByRole('status', { name: 'Connection' }).getByText('Connected').waitFor();
    await expect(incomingCard(page).isVisible()).resolves.toBe(true);

    await incomingCard(page).getByRole('button', { name: 'Answer' }).click();
    await currentCall(page).getByText('Connected').waitFor();
    await expectTwoWayAudio(page, stack.callReport, callId);
    await currentCall(page).getByRole('button', { name: 'Hang up' }).click();
    await eventually('terminate', async () => (await stack.gatewayLog()).some((l) => l.callId === callId && l.action === 'terminate'));
  });

  test('(f) nobody answers: after about 60 s the call ends as missed and shows in recent calls', { timeout: 120_000 }, async () => {
    page = await stack.newAgentPage();
    const customer = stack.customer('answers');
    const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(page).waitFor();
    await incomingCard(page).waitFor({ state: 'detached', timeout: 75_000 });
    await recentCalls(page).getByText('Missed').first().waitFor();
    // The agent never answered: the gateway must not have seen an accept for this call.
    expect((await stack.gatewayLog()).some((l) => l.callId === callId && l.action === 'accept')).toBe(false);
  });
});

describe('outgoing calls', () => {
  test('(b) call an answering customer: two-way audio; the customer hangs up; the UI shows it ended', async () => {
    page = await stack.newAgentPage();
    const customer = stack.customer('answers');
    await page.getByLabel('Phone number').fill(`+${customer.number}`);
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await currentCall(page).getByText('Connected').waitFor();

    const callId = await eventually('the initiate request', async () => {
      const log = await stack.gatewayLog();
      return log.filter((l) => l.action === 'initiate' && l.status === 200).at(-1)?.callId;
    });
    await expectTwoWayAudio(page, stack.callReport, callId);

    await stack.control('/control/hangup', { callId });
    await currentCall(page).getByText('Call ended').waitFor();
    await recentCalls(page).getByText(customer.name).first().waitFor();
  });

  test('(d) no call permission: the UI says the customer has not allowed business calls', async () => {
    page = await stack.newAgentPage();
    const customer = stack.customer('no_permission');
    await page.getByLabel('Phone number').fill(`+${customer.number}`);
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await page.getByText('The customer has not allowed business calls').first().waitFor();
  });

  test('an invalid number is refused with the reason, and what was typed stays', async () => {
    page = await stack.newAgentPage();
    const initiatesBefore = (await stack.gatewayLog()).filter((l) => l.action === 'initiate').length;
    await page.getByLabel('Phone number').fill('+44 20 79');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await page.getByRole('alert').getByText(/Phone number: too short/).waitFor();
    await expect(page.getByLabel('Phone number').inputValue()).resolves.toBe('+44 20 79');
    expect((await stack.gatewayLog()).filter((l) => l.action === 'initiate')).toHaveLength(initiatesBefore);
  });
});
