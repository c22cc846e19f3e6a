// The agent's desk end to end in Chromium through the browser host: a tel: link opened in a second
// tab reaches the softphone tab (filling the dialer, or dialling with "Dial links at once"), the
// four keyboard shortcuts, changing one in Settings, the missed-call count and "Call back".
import { afterEach, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { DEFAULT_SHORTCUTS } from '../../shared/preferences';
import { currentCall, eventually, incomingCard, stackForFile } from './harness';

const stack = stackForFile();
let page: Page | undefined;

afterEach(async () => {
  await stack.service.handle('setPreferences', { preferences: { dialLinksAtOnce: false, shortcuts: { ...DEFAULT_SHORTCUTS } } });
});

/** Set in the page by spyOnProtocolHandlers(): one entry per registerProtocolHandler() call. */
interface ProtocolHandlerSpy {
  protocolHandlerRegistrations?: { scheme: string; url: string; fromGesture: boolean }[];
}

/**
 * Records registerProtocolHandler() calls from the next document on (still handing them to the
 * browser), noting whether each came with a user gesture: the status text alone would not show that
 * the click asked the browser at all.
 */
async function spyOnProtocolHandlers(p: Page): Promise<void> {
  await p.addInitScript(() => {
    const registrations: { scheme: string; url: string; fromGesture: boolean }[] = [];
    (window as ProtocolHandlerSpy).protocolHandlerRegistrations = registrations;
    const original = navigator.registerProtocolHandler.bind(navigator);
    navigator.registerProtocolHandler = (scheme: string, url: string | URL) => {
      registrations.push({ scheme, url: String(url), fromGesture: navigator.userActivation.isActive });
      original(scheme, url);
    };
  });
}

const protocolHandlerRegistrations = (p: Page) => p.evaluate(() => (window as ProtocolHandlerSpy).protocolHandlerRegistrations);


const initiates = async () => (await stack.gatewayLog()).filter((l) => l.action === 'initiate').length;

async function hangUpCurrentCall(p: Page): Promise<void> {
  await currentCall(p).getByRole('button', { name: 'Hang up' }).click();
  await currentCall(p).getByText(/Call ended/).waitFor();
}

describe('GET /dial from a second tab', () => {
  test('fills the softphone tab’s dialer; with "Dial links at once" it dials; a bad number is refused with the reason', async () => {
    page = await stack.newAgentPage();
    await spyOnProtocolHandlers(page);
    await page.goto(stack.host.url);
    await page.getByRole('status', { name: 'Connection' }).getByText('Connected').waitFor();
    const ada = stack.customer('answers');
    const linkTab = await page.context().newPage();

    const sent = await linkTab.goto(`${stack.host.origin}/dial?to=${encodeURIComponent(`tel:+${ada.number}`)}`);
    expect(sent?.status()).toBe(200);
    await expect(linkTab.locator('body').textContent()).resolves.toContain('+1 202 555 0101 was sent to the softphone tab: it is in the dialer');
    await expect.poll(() => page!.getByLabel('Phone number').inputValue()).toBe(`+${ada.number}`);

    const before = await initiates();
    const refused = await linkTab.goto(`${stack.host.origin}/dial?to=${encodeURIComponent('tel:+44 20 79')}`);
    expect(refused?.status()).toBe(400);
    const refusal = await linkTab.locator('body').textContent();
    expect(refusal).toMatch(/Phone number: .*too short/);
    expect(refusal).toContain('Nothing was dialled.');
    await expect(page.getByLabel('Phone number').inputValue()).resolves.toBe(`+${ada.number}`);

    // The setting, from the softphone tab's Settings; only the Electron host's own settings are absent here.
    await page.getByRole('button', { name: 'Settings' }).click();
    await expect(page.getByRole('checkbox', { name: 'Start at login' }).count()).resolves.toBe(0);
    await expect(page.getByRole('checkbox', { name: 'Quit when the window is closed' }).count()).resolves.toBe(0);
    await expect(page.getByRole('checkbox', { name: 'Global shortcuts' }).count()).resolves.toBe(0);
    // Registered links name this port: the hint says so, since the host may start on another one.
    await page.getByText(`Links go to port ${stack.host.port}.`, { exact: false }).waitFor();
    await expect(protocolHandlerRegistrations(page)).resolves.toEqual([]);
    await page.getByRole('button', { name: 'Handle tel: links' }).click();
    await page.getByText(/^Asked the browser to open/).waitFor();
    const target = `${stack.host.origin}/dial?to=%s`;
    await expect(protocolHandlerRegistrations(page)).resolves.toEqual([
      { scheme: 'tel', url: target, fromGesture: true },
      { scheme: 'callto', url: target, fromGesture: true },
    ]);
    await page.getByRole('checkbox', { name: 'Dial links at once' }).check();
    await eventually('the setting saved', () => stack.service.preferences().dialLinksAtOnce);

    const dialled = await linkTab.goto(`${stack.host.origin}/dial?to=${encodeURIComponent(`callto:+${ada.number}`)}`);
    expect(dialled?.status()).toBe(200);
    await expect(linkTab.locator('body').textContent()).resolves.toContain('was sent to the softphone tab: dialling');
    await currentCall(page).getByText('Connected').waitFor();
    expect(await initiates()).toBe(before + 1);
    expect((await stack.gatewayLog()).filter((l) => l.action === 'initiate').at(-1)?.status).toBe(200);
    await hangUpCurrentCall(page);
  });
});

describe('keyboard shortcuts', () => {
  test('Ctrl+Shift+A answers (from inside a text field), Ctrl+Shift+M mutes, Ctrl+Shift+H hangs up, Ctrl+Shift+D declines', async () => {
    page = await stack.newAgentPage();
    const customer = stack.customer('answers');

    const first = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(page).waitFor();
    await page.getByLabel('Phone number').focus();
    await page.keyboard.press('Control+Shift+A');
    await currentCall(page).getByText('Connected').waitFor();
    await eventually('accept', async () => (await stack.gatewayLog()).some((l) => l.callId === first.callId && l.action === 'accept'));

    await page.keyboard.press('Control+Shift+M');
    await currentCall(page).getByRole('button', { name: 'Unmute' }).waitFor();
    await page.keyboard.press('Control+Shift+M');
    await currentCall(page).getByRole('button', { name: 'Mute', exact: true }).waitFor();
    await page.keyboard.press('Control+Shift+M');
    await currentCall(page).getByRole('button', { name: 'Unmute' }).waitFor();

    await page.keyboard.press('Control+Shift+H');
    await eventually('terminate', async () => (await stack.gatewayLog()).some((l) => l.callId === first.callId && l.action === 'terminate'));
    await currentCall(page).getByText(/Call ended/).waitFor();

    const second = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(page).waitFor();
    await page.keyboard.press('Control+Shift+D');
    await eventually('reject', async () => (await stack.gatewayLog()).some((l) => l.callId === second.callId && l.action === 'reject'));
    await incomingCard(page).waitFor({ state: 'detached' });
  });

  test('a shortcut changed in Settings: a taken one is refused with the reason; a new one is saved and works', async () => {
    page = await stack.newAgentPage();
    await page.getByRole('button', { name: 'Settings' }).click();
    const mute = page.getByRole('textbox', { name: 'Mute', exact: true });
    await expect(mute.inputValue()).resolves.toBe('Ctrl+Shift+M');

    // Pressing a combination in the field records it (and does not act on a call).
    await mute.focus();
    await page.keyboard.press('Control+Shift+A');
    await expect(mute.inputValue()).resolves.toBe('Ctrl+Shift+A');
    await page.getByRole('button', { name: 'Apply shortcuts' }).click();
    await page.getByRole('region', { name: 'Shortcuts' }).getByRole('alert').getByText('shortcuts.mute (Mute): Ctrl+Shift+A is already the shortcut for Answer').waitFor();
    await expect(mute.getAttribute('aria-invalid')).resolves.toBe('true');
    expect(stack.service.preferences().shortcuts.mute).toBe('Ctrl+Shift+M');

    // Typing works too.
    await mute.fill('ctrl+alt+u');
    await page.getByRole('button', { name: 'Apply shortcuts' }).click();
    await page.getByText('Shortcuts saved.').waitFor();
    expect(stack.service.preferences().shortcuts.mute).toBe('Ctrl+Alt+U');
    await expect(mute.inputValue()).resolves.toBe('Ctrl+Alt+U');
    await expect(page.getByRole('region', { name: 'Shortcuts' }).getByRole('alert').count()).resolves.toBe(0);

    await page.getByRole('button', { name: 'Back' }).click();
    const customer = stack.customer('answers');
    const call = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(page).getByRole('button', { name: 'Answer' }).click();
    await currentCall(page).getByText('Connected').waitFor();
    await page.keyboard.press('Control+Alt+U');
    await currentCall(page).getByRole('button', { name: 'Unmute' }).waitFor();
    // The old combination no longer acts: only the new one unmutes.
    await page.keyboard.press('Control+Shift+M');
    await page.keyboard.press('Control+Alt+U');
    await currentCall(page).getByRole('button', { name: 'Mute', exact: true }).waitFor();
    await hangUpCurrentCall(page);
    await eventually('terminate', async () => (await stack.gatewayLog()).some((l) => l.callId === call.callId && l.action === 'terminate'));
  });
});

describe('missed calls', () => {
  test('the header counts a missed call until the agent looks; "Call back NAME" dials', async () => {
    page = await stack.newAgentPage();
    const customer = stack.customer('answers');
    const header = page.getByRole('banner');
    await expect(header.getByRole('button', { name: /missed call/ }).count()).resolves.toBe(0);

    // The customer gives up before anyone answers.
    const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(page).waitFor();
    await stack.control('/control/hangup', { callId });
    await incomingCard(page).waitFor({ state: 'detached' });
    const button = header.getByRole('button', { name: '1 missed call' });
    await button.waitFor();

    await button.click();
    await expect.poll(() => page!.evaluate(() => document.activeElement?.id)).toBe('recent-calls');
    await button.waitFor({ state: 'detached' });
    const entry = await eventually('the missed call in the history', async () => {
      const snap = await stack.service.handle('getSnapshot', {});
      return snap.ok ? snap.value.history.find((h) => h.callId === callId) : undefined;
    });
    expect(entry.outcome).toBe('missed');
    // Seen up to the missed call's own end, not this machine's clock at the click.
    await eventually('seen', () => stack.service.preferences().missedSeenAt === entry.endedAt);

    const before = await initiates();
    await page
      .getByRole('list', { name: 'Recent calls' })
      .getByRole('button', { name: `Call back ${customer.name}` })
      .first()
      .click();
    await currentCall(page).getByText('Connected').waitFor();
    expect(await initiates()).toBe(before + 1);
    await hangUpCurrentCall(page);
  });
});
