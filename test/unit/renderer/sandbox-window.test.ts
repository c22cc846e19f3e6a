// The sandbox's "Leave a voicemail" and "Ask to be called back" in Chromium (window-in-chromium.ts):
// each acts for the chosen customer and says what the customer did in a polite status; a refusal is
// the panel's alert.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { err, ok } from '../../../shared/result';
import { snapshot } from './fixtures';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();
let page: Page;
let h: ReturnType<typeof host>;

const ADA = '447700900123';

async function open(): Promise<void> {
  page = await windows.open();
  page.setDefaultTimeout(5000);
  h = host(page);
  await h.start(snapshot([], { presence: { choice: 'available', status: 'available' } }));
  await panel().waitFor();
}

const panel = () => page.getByRole('region', { name: 'Sandbox', exact: true });
const commandsNamed = async (name: string) => (await h.commands()).filter((c) => c.name === name).map((c) => c.params);

describe('the sandbox', () => {
  test('"Leave a voicemail" and "Ask to be called back" act for the chosen customer and say what the customer did', async () => {
    await open();
    await h.answer('simulateVoicemail', ok({ callId: 'wacid.1' }));
    await h.answer('simulateCallbackRequest', ok({ callId: 'wacid.1' }));
    await panel().getByRole('combobox', { name: 'Sandbox customer' }).selectOption('14155550123');
    await panel().getByRole('button', { name: 'Leave a voicemail', exact: true }).click();
    await expect.poll(() => panel().getByRole('status').textContent()).toBe('Jonas Berg left a voicemail');
    await panel().getByRole('button', { name: 'Ask to be called back', exact: true }).click();
    await expect.poll(() => panel().getByRole('status').textContent()).toBe('Jonas Berg asked to be called back');
    await expect(commandsNamed('simulateVoicemail')).resolves.toEqual([{ number: '14155550123' }]);
    await expect(commandsNamed('simulateCallbackRequest')).resolves.toEqual([{ number: '14155550123' }]);
  });

  test('a refusal is the panel\'s alert, in the sandbox\'s words', async () => {
    await open();
    await h.answer('simulateVoicemail', err('invalid_state', 'Call wacid.7 was answered: only a call nobody answered can get a voicemail'));
    await panel().getByRole('button', { name: 'Leave a voicemail', exact: true }).click();
    await expect.poll(() => panel().getByRole('alert').textContent()).toBe('Call wacid.7 was answered: only a call nobody answered can get a voicemail');
    await expect(panel().getByRole('status').textContent()).resolves.toBe('');
    await expect(commandsNamed('simulateVoicemail')).resolves.toEqual([{ number: ADA }]);
  });
});
