// The settings screen against the real service, and the call path driven by keyboard alone.
import { describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { startEmbeddedEnvironment } from '../../electron/embedded';
import type { EmbeddedEnvironment } from '../../electron/core/embedded-environment';
import { eventually, stackForFile } from './harness';

const stack = stackForFile();
let page: Page | undefined;


/** Presses Tab until the focused element is the named button; fails if it is never reached. */
async function tabTo(p: Page, name: string): Promise<void> {
  for (let i = 0; i < 40; i++) {
    await p.keyboard.press('Tab');
    const focused = await p.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return el ? (el.getAttribute('aria-label') ?? el.textContent ?? '').trim() : '';
    });
    if (focused === name) return;
  }
  throw new Error(`"${name}" cannot be reached with Tab`);
}

describe('settings', () => {
  test('invalid values are refused with the field and the rule; what was typed stays; a valid account switches the app out of the sandbox', async () => {
    let other: EmbeddedEnvironment | undefined;
    try {
      page = await stack.newAgentPage();
      await expect(page.getByText('Sandbox', { exact: true }).first().isVisible()).resolves.toBe(true);
      await page.getByRole('button', { name: 'Settings' }).click();

      await page.getByLabel('Gateway URL').fill('https://gateway.example.com/restapi');
      await page.getByLabel('API key').fill('key-123456789');
      await page.getByLabel('Relay URL').fill('https://relay.example.com');
      await page.getByLabel('Agent token').fill('token-123456789');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText(/must end in the version segment/i).first().waitFor();
      await expect(page.getByLabel('Gateway URL').inputValue()).resolves.toBe('https://gateway.example.com/restapi');
      await expect(page.getByLabel('Agent token').inputValue()).resolves.toBe('token-123456789');

      // A real account: another relay and gateway stand-in on this machine.
      other = await startEmbeddedEnvironment();
      await page.getByLabel('Gateway URL').fill(other.account.gatewayUrl);
      await page.getByLabel('API key').fill(other.account.apiKey);
      await page.getByLabel('Relay URL').fill(other.account.relayUrl);
      await page.getByLabel('Agent token').fill(other.account.agentToken);
      await page.getByRole('button', { name: 'Save', exact: true }).click();

      await eventually('account mode', async () => {
        const snap = await stack.service.handle('getSnapshot', {});
        return snap.ok && snap.value.mode === 'account' && snap.value.connection.status === 'connected';
      });
      const snap = await stack.service.handle('getSnapshot', {});
      expect(snap.ok && snap.value.settings).toMatchObject({ mode: 'account', gatewayUrl: other.account.gatewayUrl, hasApiKey: true, hasAgentToken: true });
      // The secrets never come back to the page.
      expect(JSON.stringify(snap)).not.toContain(other.account.apiKey);
      expect(JSON.stringify(snap)).not.toContain(other.account.agentToken);

      await page.reload();
      await page.getByRole('status', { name: 'Connection' }).getByText('Connected').waitFor();
      await expect(page.getByText('Sandbox', { exact: true }).count()).resolves.toBe(0);

      // Calls now come from the account's gateway.
      const customers = await (await fetch(`${other.sandboxControlUrl}/control/customers`)).json() as { number: string; behaviour: string; name: string }[];
      const caller = customers.find((c) => c.behaviour === 'answers')!;
      await fetch(`${other.sandboxControlUrl}/control/incoming`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ number: caller.number }) });
      await page.getByRole('dialog', { name: 'Incoming call' }).getByText(caller.name).waitFor();
      await page.getByRole('dialog', { name: 'Incoming call' }).getByRole('button', { name: 'Decline' }).click();

      // Back to the sandbox.
      await page.getByRole('button', { name: 'Settings' }).click();
      await page.getByRole('button', { name: 'Use sandbox' }).click();
      await eventually('sandbox mode', async () => {
        const s = await stack.service.handle('getSnapshot', {});
        return s.ok && s.value.mode === 'sandbox';
      });
    } finally {
      await stack.service.handle('clearSettings', {});
      await other?.close();
    }
  });
});

describe('keyboard', () => {
  test('dial with Enter, hang up and answer with the keyboard alone', async () => {
    page = await stack.newAgentPage();
    const customer = stack.customer('answers');
    await page.getByLabel('Phone number').focus();
    await page.keyboard.type(`+${customer.number}`);
    await page.keyboard.press('Enter');
    const call = page.getByRole('region', { name: 'Current call' });
    await call.getByText('Connected').waitFor();
    await tabTo(page, 'Hang up');
    await page.keyboard.press('Enter');
    await call.getByText(/Call ended/).waitFor();

    const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await page.getByRole('dialog', { name: 'Incoming call' }).waitFor();
    await tabTo(page, 'Answer');
    await page.keyboard.press('Space');
    await call.getByText('Connected').waitFor();
    await tabTo(page, 'Hang up');
    await page.keyboard.press('Enter');
    await eventually('terminate', async () => (await stack.gatewayLog()).some((l) => l.callId === callId && l.action === 'terminate'));
  });
});
