// A bridged call rejoining (its window reloaded, or its network changed) in the window, in Chromium
// (window-in-chromium.ts): the panel says "Rejoining…", keeps "On hold" beside it for a held call,
// offers nothing that would need the leg being replaced, and keeps Hang up; a new leg whose
// microphone cannot be opened is said, with "Try again".
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import type { CallState } from '../../../shared/call-state';
import { ok } from '../../../shared/result';
import { OFFER_SDP } from '../../fixtures/sdp';
import { TEAM, bridgedActive, snapshot } from './fixtures';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();
let page: Page;

const now = () => Date.now();
const panel = () => page.getByRole('region', { name: 'Current call' });
const controls = () => panel().locator('.call-controls button').allTextContents();
const phases = () => panel().locator('.current-state .phase').allTextContents();

async function open(calls: CallState[]): Promise<ReturnType<typeof host>> {
  page = await windows.open();
  page.setDefaultTimeout(5000);
  const h = host(page);
  await h.answer('getTeam', ok(TEAM));
  await h.start(snapshot(calls));
  return h;
}

const rejoining = (call: CallState, legId?: string): CallState => ({ ...call, rejoin: { since: now(), ...(legId ? { legId, offerSdp: OFFER_SDP } : {}) } }) as CallState;

describe('a call rejoining', () => {
  test('says "Rejoining…", offers no Hold, Transfer or Consult, keeps Mute and Hang up; connected again, all comes back', async () => {
    const call = bridgedActive(undefined, 'wacid.1', now());
    const h = await open([rejoining(call, 'leg-2')]);
    await panel().getByText('Rejoining…', { exact: true }).waitFor();
    expect(await controls()).toEqual(['Mute', 'Keypad', 'Hang up']);
    await expect(panel().getByText('Reconnecting…').count()).resolves.toBe(0);

    await h.push('callChanged', call);
    await panel().getByText('Connected', { exact: true }).waitFor();
    expect(await controls()).toEqual(['Mute', 'Hold', 'Keypad', 'Transfer', 'Consult', 'Hang up']);
  });

  test('its new leg’s microphone cannot be opened: the panel says why and offers "Try again", which opens the microphone and answers the leg', async () => {
    const call = bridgedActive(undefined, 'wacid.1', now());
    page = await windows.open();
    page.setDefaultTimeout(5000);
    const h = host(page);
    await h.answer('getTeam', ok(TEAM));
    await h.answer('rejoinCall', ok(null));
    await h.refuseRejoinMicrophone(true);
    await h.start(snapshot([rejoining(call, 'leg-2')]));
    await panel().getByText('Rejoining…', { exact: true }).waitFor();
    await panel().getByRole('alert').getByText('Microphone access was denied. Allow the microphone for this app, then try again.', { exact: true }).waitFor();
    const again = panel().getByRole('button', { name: 'Try again', exact: true });
    await again.waitFor();
    expect((await h.commands()).filter((c) => c.name === 'rejoinCall')).toEqual([]);

    // Still refused: said again, and offered again.
    await again.click();
    await expect.poll(() => h.rejoinAnswers()).toEqual([`in:${call.callId}`, `in:${call.callId} again`]);
    await again.waitFor();
    expect((await h.commands()).filter((c) => c.name === 'rejoinCall')).toEqual([]);

    // Allowed now: the leg is answered, and nothing is offered any more.
    await h.refuseRejoinMicrophone(false);
    await again.click();
    await expect.poll(async () => (await h.commands()).filter((c) => c.name === 'rejoinCall').map((c) => c.params)).toEqual([{ localId: `in:${call.callId}`, legId: 'leg-2', sdp: 'v=0\r\n' }]);
    await expect(panel().getByRole('alert').count()).resolves.toBe(0);
    await expect(again.count()).resolves.toBe(0);
    await panel().getByText('Rejoining…', { exact: true }).waitFor();
  });

  test('held: "On hold" stays beside "Rejoining…", and the call is still held once it is back', async () => {
    const held = { ...bridgedActive(undefined, 'wacid.1', now() - 60_000), heldSince: now() - 10_000 } as CallState;
    const h = await open([rejoining(held)]);
    await panel().getByText('Rejoining…', { exact: true }).waitFor();
    expect(await phases()).toEqual(['Rejoining…', 'On hold']);
    expect(await controls()).toEqual(['Mute', 'Keypad', 'Hang up']);

    await h.push('callChanged', held);
    await panel().getByRole('button', { name: 'Resume', exact: true }).waitFor();
    expect(await phases()).toEqual(['On hold']);
  });

  test('the other call, held and rejoining: "Rejoining…" beside "On hold", and no Swap until it is back', async () => {
    const inHand = bridgedActive(undefined, 'wacid.1', now());
    const other = { ...bridgedActive(undefined, 'wacid.2', now() - 60_000), heldSince: now() - 10_000 } as CallState;
    const h = await open([inHand, rejoining(other)]);
    const group = panel().getByRole('group', { name: 'Call on hold' });
    await group.getByText('Rejoining…', { exact: true }).waitFor();
    await group.getByText('On hold', { exact: true }).waitFor();
    await expect(group.getByRole('button', { name: 'Swap' }).count()).resolves.toBe(0);

    await h.push('callChanged', other);
    await group.getByRole('button', { name: 'Swap', exact: true }).waitFor();
    await expect(group.getByText('Rejoining…').count()).resolves.toBe(0);
  });
});
