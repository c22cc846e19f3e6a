// A bridged call rejoining (its window reloaded, or its network changed) in the window, in Chromium
// (window-in-chromium.ts): the panel says "Rejoining…", keeps "On hold" beside it for a held call,
// offers nothing that would need the leg being replaced, and keeps Hang up.
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
