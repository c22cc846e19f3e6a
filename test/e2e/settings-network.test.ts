// Settings → Network against the real service: a bad server line is refused with its line number
// and nothing typed is lost; a save keeps the TURN password out of the page and survives a reload;
// the service then builds calls with exactly those servers and that relay policy.
import { afterEach, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { eventually, stackForFile } from './harness';

const stack = stackForFile();
let page: Page | undefined;

afterEach(async () => {
  await stack.service.handle('saveNetworkSettings', { network: { servers: [], turnUsername: '', turnPassword: '', relayOnly: false } });
});

const STUN = 'stun:127.0.0.1:3478';
const TURN = 'turn:127.0.0.1:443?transport=tcp';
const PASSWORD = 'turn-pass-Vk3q9x';

describe('Settings → Network', () => {
  test('a bad line is named and nothing typed is lost; a save survives a reload and is what calls use', async () => {
    page = await stack.newAgentPage();
    await page.getByRole('button', { name: 'Settings' }).click();
    const section = page.getByRole('region', { name: 'Network' });
    const servers = section.getByLabel('STUN and TURN servers');
    const username = section.getByLabel('TURN username');
    const password = section.getByLabel('TURN password');
    const relayOnly = section.getByRole('checkbox', { name: 'Relay only' });
    const save = section.getByRole('button', { name: 'Save network settings', exact: true });

    // "Relay only" with no TURN server: a warning, not an error.
    await servers.fill(`${STUN}\nturn:bad host:443`);
    await relayOnly.check();
    await section.getByText('Relay only needs a TURN server: add one, or calls will not connect.').waitFor();
    await username.fill('agent-7');
    await password.fill(PASSWORD);
    await save.click();

    const serversError = section.getByRole('alert').filter({ hasText: /^Line 2: must be stun:HOST/ });
    await serversError.waitFor();
    await expect(servers.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(servers.getAttribute('aria-describedby')).resolves.toContain(await serversError.getAttribute('id'));
    await eventually('focus on the servers', () => servers.evaluate((el) => el === document.activeElement));
    // Nothing typed is lost, nothing was saved.
    await expect(servers.inputValue()).resolves.toBe(`${STUN}\nturn:bad host:443`);
    await expect(username.inputValue()).resolves.toBe('agent-7');
    await expect(password.inputValue()).resolves.toBe(PASSWORD);
    await expect(relayOnly.isChecked()).resolves.toBe(true);
    await expect(stack.service.handle('getIceConfig', {})).resolves.toMatchObject({ ok: true, value: { iceServers: [], iceTransportPolicy: 'all' } });

    // Leaving Settings keeps the draft too.
    await page.getByRole('button', { name: 'Back' }).click();
    await page.getByRole('button', { name: 'Settings' }).click();
    await expect(servers.inputValue()).resolves.toBe(`${STUN}\nturn:bad host:443`);
    await expect(password.inputValue()).resolves.toBe(PASSWORD);

    await servers.fill(`${STUN}\n${TURN}`);
    await expect(section.getByText('Relay only needs a TURN server').count()).resolves.toBe(0);
    await expect(serversError.count()).resolves.toBe(0);
    await save.click();
    await section.getByRole('status').getByText('Network settings saved. They apply from the next call.').waitFor();
    await section.getByText('stored', { exact: true }).waitFor();
    await expect(password.inputValue()).resolves.toBe('');

    const snap = await stack.service.handle('getSnapshot', {});
    expect(snap.ok && snap.value.settings.network).toMatchObject({ servers: [STUN, TURN], turnUsername: 'agent-7', hasTurnPassword: true, relayOnly: true });
    expect(JSON.stringify(snap)).not.toContain(PASSWORD);

    await page.reload();
    await page.getByRole('status', { name: 'Connection' }).getByText('Connected').waitFor();
    await page.getByRole('button', { name: 'Settings' }).click();
    await expect(servers.inputValue()).resolves.toBe(`${STUN}\n${TURN}`);
    await expect(username.inputValue()).resolves.toBe('agent-7');
    await expect(relayOnly.isChecked()).resolves.toBe(true);
    await expect(password.inputValue()).resolves.toBe('');
    await section.getByText('stored', { exact: true }).waitFor();
    expect(await page.content()).not.toContain(PASSWORD);

    // What the next call's peer connection is built with.
    const ice = await stack.service.handle('getIceConfig', {});
    expect(ice.ok).toBe(true);
    if (!ice.ok) return;
    expect(ice.value.iceTransportPolicy).toBe('relay');
    expect(ice.value.iceServers).toEqual([{ urls: [STUN] }, { urls: [TURN], username: 'agent-7', credential: PASSWORD }]);
  });
});
