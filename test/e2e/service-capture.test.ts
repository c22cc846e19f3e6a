// The service's own recording and transcript end to end: the agent asks for both in Settings; the
// next call's accept carries them (the sandbox says what it was asked); the sandbox plays its notice
// to both sides, and a few seconds after the hang-up sends both files' events through the relay;
// the app fetches them at once, and recent calls play the recording and show the transcript.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import type { SandboxCallReport } from '../../shared/sandbox';
import { currentCall, eventually, incomingCard, recentCalls, stackForFile } from './harness';

const stack = stackForFile();

async function askForBoth(page: Page, purpose: string): Promise<void> {
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.getByRole('navigation', { name: 'Settings sections' }).getByRole('link', { name: 'Recording and transcription' }).click();
  await page.getByRole('checkbox', { name: 'Ask the service to record calls' }).check();
  await page.getByRole('checkbox', { name: 'Ask the service to transcribe calls' }).check();
  // A purpose is required: saving without one names the field.
  await page.getByRole('button', { name: 'Save recording settings' }).click();
  await page.getByText('Purpose is required').waitFor();
  await page.getByRole('textbox', { name: 'Purpose' }).fill(purpose);
  await page.getByRole('combobox', { name: 'Notice language' }).selectOption('en_GB');
  await page.getByRole('button', { name: 'Save recording settings' }).click();
  await page.getByText('Recording and transcription settings saved.').waitFor();
  await page.getByRole('button', { name: 'Back' }).click();
}

describe('the service’s recording and transcript', () => {
  test('asked in Settings, carried by the accept, fetched after the call: "Play recording" plays it, "Transcript" shows who said what and when', async () => {
    const page = await stack.newAgentPage();
    await askForBoth(page, 'Quality assurance');

    const customer = stack.customer('answers');
    const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(page).getByRole('button', { name: 'Answer' }).click();
    await currentCall(page).getByText('Connected').waitFor();
    // The notice (a chime, then about 2.5 s of words) goes to both sides before the call goes on.
    const heard = await eventually('the notice played whole', async () => {
      const report = await stack.control<SandboxCallReport>(`/control/calls/${encodeURIComponent(callId)}`);
      return report.capture?.notice.heardByCustomer === true ? report.capture : undefined;
    }, 20_000);
    expect(heard.recording).toEqual({ purpose: 'Quality assurance', announcementLanguage: 'en_GB' });
    expect(heard.transcription).toEqual({ purpose: 'Quality assurance', announcementLanguage: 'en_GB' });
    await page.waitForTimeout(1_500);
    await currentCall(page).getByRole('button', { name: 'Hang up' }).click();

    // The events come a few seconds after the terminate; the app fetches both files at once.
    const sent = await eventually('both events sent', async () => {
      const report = await stack.control<SandboxCallReport>(`/control/calls/${encodeURIComponent(callId)}`);
      return report.capture?.sentAt !== undefined ? report.capture : undefined;
    }, 20_000);
    expect(sent.capturedMs).toBeGreaterThan(3_500);
    const row = recentCalls(page).getByRole('listitem').filter({ hasText: customer.name }).first();
    await row.getByRole('button', { name: 'Play recording' }).waitFor({ timeout: 20_000 });
    const fetched = (await stack.gatewayLog()).filter((l) => l.action === 'media_file');
    expect(fetched.length).toBeGreaterThanOrEqual(2);

    await row.getByRole('button', { name: 'Play recording' }).click();
    const player = row.getByLabel(`Recording of the call with ${customer.name}`);
    await player.waitFor();
    await expect.poll(() => player.evaluate((a: HTMLAudioElement) => (a.src.startsWith('blob:') && Number.isFinite(a.duration) ? a.duration : 0)), { timeout: 10_000 }).toBeGreaterThan(3);
    const duration = await player.evaluate((a: HTMLAudioElement) => a.duration);
    expect(Math.abs(duration * 1000 - sent.capturedMs)).toBeLessThan(500);
    await expect.poll(() => player.evaluate((a: HTMLAudioElement) => a.currentTime), { timeout: 10_000 }).toBeGreaterThan(0.2);

    await row.getByRole('button', { name: 'Transcript' }).click();
    const transcript = page.getByRole('dialog', { name: 'Transcript' });
    await transcript.waitFor();
    // The notice's words, said on the customer's side (channel 1): under the customer's name, from 0:00.
    const notice = transcript.getByRole('listitem').filter({ hasText: 'This call may be recorded and transcribed.' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain(customer.name);
    expect(await notice.textContent()).toMatch(/0:0\d/);
    // The business side (channel 0) under the agent's own name.
    const business = transcript.getByRole('listitem').filter({ hasText: 'the sandbox does not transcribe the business side' });
    expect(await business.count()).toBeGreaterThan(0);
    expect(await business.first().textContent()).not.toContain(customer.name);
    await transcript.getByRole('button', { name: 'Close' }).click();
    await transcript.waitFor({ state: 'detached' });
  });
});
