// "Mute" / "Unmute" in the window, in Chromium (window-in-chromium.ts): the mute is the call's, kept
// in the main process (CallState `muted`). The button says what the pushed call says, in every
// window of the agent and after a reload (the snapshot); a click or the mute shortcut asks main with
// setMuted and shows what it asked at once, until main has answered (then the pushed call again).
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import type { CallState } from '../../../shared/call-state';
import { err, ok } from '../../../shared/result';
import { TEAM, active, bridgedActive, snapshot } from './fixtures';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();

const LOCAL = 'in:wacid.1';
const now = () => Date.now();

/** A window on these calls; setMuted answered ok unless the test says otherwise. */
async function open(calls: CallState[]): Promise<{ page: Page; h: ReturnType<typeof host> }> {
  const page = await windows.open();
  page.setDefaultTimeout(5000);
  const h = host(page);
  await h.answer('getTeam', ok(TEAM));
  await h.answer('setMuted', ok(null));
  await h.start(snapshot(calls));
  return { page, h };
}

const panel = (page: Page) => page.getByRole('region', { name: 'Current call' });
/** The mute toggle, whichever it says now. */
const toggle = (page: Page) => panel(page).locator('.call-controls button').first();
const muteCommands = async (h: ReturnType<typeof host>) => (await h.commands()).filter((c) => c.name === 'setMuted').map((c) => c.params);

async function expectShows(page: Page, muted: boolean): Promise<void> {
  await panel(page).getByRole('button', { name: muted ? 'Unmute' : 'Mute', exact: true }).waitFor();
  await expect(toggle(page).getAttribute('aria-pressed')).resolves.toBe(String(muted));
}

describe('"Mute" follows the call main pushes', () => {
  test('a click shows "Unmute" at once and asks main (setMuted); the pushed call keeps it so, and its click asks to unmute', async () => {
    const call = active('wacid.1', now());
    const { page, h } = await open([call]);
    await h.defer('setMuted');
    await expectShows(page, false);

    await panel(page).getByRole('button', { name: 'Mute', exact: true }).click();
    await expectShows(page, true);
    await expect.poll(() => muteCommands(h)).toEqual([{ localId: LOCAL, muted: true }]);
    // Main pushes the call before it answers.
    await h.push('callChanged', { ...call, muted: true });
    await expect(h.settle('setMuted', ok(null))).resolves.toBe(true);
    await expectShows(page, true);

    await panel(page).getByRole('button', { name: 'Unmute', exact: true }).click();
    await expectShows(page, false);
    await expect.poll(() => muteCommands(h)).toEqual([
      { localId: LOCAL, muted: true },
      { localId: LOCAL, muted: false },
    ]);
    await h.push('callChanged', call);
    await expect(h.settle('setMuted', ok(null))).resolves.toBe(true);
    await expectShows(page, false);
  });

  test('Mute then Unmute before main answers: each click shows at once, the unmute goes once the mute is answered, and main ends unmuted', async () => {
    const call = active('wacid.1', now());
    const { page, h } = await open([call]);
    await h.defer('setMuted');
    await expectShows(page, false);

    await panel(page).getByRole('button', { name: 'Mute', exact: true }).click();
    await panel(page).getByRole('button', { name: 'Unmute', exact: true }).click();
    await expectShows(page, false);
    await expect.poll(() => muteCommands(h)).toEqual([{ localId: LOCAL, muted: true }]);

    await h.push('callChanged', { ...call, muted: true });
    await expect(h.settle('setMuted', ok(null))).resolves.toBe(true);
    await expect.poll(() => muteCommands(h)).toEqual([
      { localId: LOCAL, muted: true },
      { localId: LOCAL, muted: false },
    ]);
    // Main says muted for now; the last click said unmute.
    await expectShows(page, false);
    await h.push('callChanged', call);
    await expect(h.settle('setMuted', ok(null))).resolves.toBe(true);
    await expectShows(page, false);

    // The shortcut pressed twice goes the same way.
    await page.keyboard.press('Control+Shift+M');
    await page.keyboard.press('Control+Shift+M');
    await expectShows(page, false);
    await expect.poll(async () => (await muteCommands(h)).length).toBe(3);
    await h.push('callChanged', { ...call, muted: true });
    await expect(h.settle('setMuted', ok(null))).resolves.toBe(true);
    await expect.poll(async () => (await muteCommands(h)).slice(2)).toEqual([
      { localId: LOCAL, muted: true },
      { localId: LOCAL, muted: false },
    ]);
    await h.push('callChanged', call);
    await expect(h.settle('setMuted', ok(null))).resolves.toBe(true);
    await expectShows(page, false);
  });

  test('a window that opens (a reload, a second window of the agent) on a muted call says "Unmute" from the start', async () => {
    const call = { ...bridgedActive(undefined, 'wacid.1', now()), muted: true } as CallState;
    const first = await open([call]);
    const second = await open([call]);
    await expectShows(first.page, true);
    await expectShows(second.page, true);
    // Unmuted from the first window: main pushes the call to both, and both follow it.
    await first.page.getByRole('button', { name: 'Unmute', exact: true }).click();
    await expect.poll(() => muteCommands(first.h)).toEqual([{ localId: LOCAL, muted: false }]);
    const { muted: _muted, ...unmuted } = call;
    for (const w of [first, second]) await w.h.push('callChanged', unmuted);
    await expectShows(first.page, false);
    await expectShows(second.page, false);
    await expect(muteCommands(second.h)).resolves.toEqual([]);
  });

  test('the mute shortcut goes the same way as the button', async () => {
    const call = active('wacid.1', now());
    const { page, h } = await open([call]);
    await expectShows(page, false);
    await page.keyboard.press('Control+Shift+M');
    await expect.poll(() => muteCommands(h)).toEqual([{ localId: LOCAL, muted: true }]);
    await h.push('callChanged', { ...call, muted: true });
    await expectShows(page, true);
    await page.keyboard.press('Control+Shift+M');
    await expect.poll(() => muteCommands(h)).toEqual([
      { localId: LOCAL, muted: true },
      { localId: LOCAL, muted: false },
    ]);
  });

  test('a refusal is said on the call, and the button goes back to what the call is', async () => {
    const call = active('wacid.1', now());
    const { page, h } = await open([call]);
    await h.defer('setMuted');
    await panel(page).getByRole('button', { name: 'Mute', exact: true }).click();
    await expectShows(page, true);
    await expect(h.settle('setMuted', err('not_available', 'Calls are shutting down'))).resolves.toBe(true);
    await panel(page).getByText('Calls are shutting down').waitFor();
    await expectShows(page, false);
  });
});
