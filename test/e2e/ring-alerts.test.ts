// Ring alerts in Chromium through the browser host: what headless Chromium can show. It never hides a
// tab nor takes focus from it, and runs with the autoplay policy off (harness.ts), so the notification
// itself and the "Enable sound" paths are unit-tested with a fake document, Notification and
// AudioContext (test/unit/renderer/ring-alerts.test.ts, ringtone.test.ts).
import { describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { eventually, stackForFile } from './harness';

const stack = stackForFile();
let page: Page | undefined;

/** Set in the page by spyOnPermissionRequests(): one entry per requestPermission() call. */
interface PermissionSpy {
  notificationPermissionRequests?: { fromGesture: boolean }[];
}

/**
 * Counts Notification.requestPermission() calls from the next document on, noting whether each came
 * with a user gesture: a granted permission alone would not show that the click asked for it.
 */
async function spyOnPermissionRequests(p: Page): Promise<void> {
  await p.addInitScript(() => {
    const requests: { fromGesture: boolean }[] = [];
    (window as PermissionSpy).notificationPermissionRequests = requests;
    const original = Notification.requestPermission.bind(Notification);
    Notification.requestPermission = (callback?: NotificationPermissionCallback) => {
      requests.push({ fromGesture: navigator.userActivation.isActive });
      return original(callback);
    };
  });
}

const permissionRequests = (p: Page): Promise<{ fromGesture: boolean }[] | undefined> =>
  p.evaluate(() => (window as PermissionSpy).notificationPermissionRequests);


describe('ring alerts in the browser host', () => {
  test('"Enable notifications" asks for the permission from its click and goes once it is granted', async () => {
    page = await stack.newAgentPage();
    // A context that grants the microphone denies everything else, notifications too: start undecided
    // (the microphone still opens: --use-fake-ui-for-media-stream accepts its prompt).
    await page.context().clearPermissions();
    await spyOnPermissionRequests(page);
    await page.reload();
    await page.getByRole('status', { name: 'Connection' }).getByText('Connected').waitFor();
    const button = page.getByRole('button', { name: 'Enable notifications' });
    await button.waitFor();
    expect(await page.evaluate(() => Notification.permission)).toBe('default');
    expect(await permissionRequests(page)).toEqual([]);
    // The browser's answer to the prompt: granted for this origin.
    await page.context().grantPermissions(['notifications'], { origin: new URL(page.url()).origin });
    await button.click();
    await button.waitFor({ state: 'detached' });
    // The click itself asked, once, inside its gesture.
    expect(await permissionRequests(page)).toEqual([{ fromGesture: true }]);
    expect(await page.evaluate(() => Notification.permission)).toBe('granted');
    // Sound runs here (no autoplay policy in this Chromium): no "Enable sound" is offered.
    expect(await page.getByRole('button', { name: 'Enable sound' }).count()).toBe(0);
  });

  test('the tab title flashes the caller while the call rings and is restored after Decline', async () => {
    page = await stack.newAgentPage();
    const normalTitle = await page.title();
    const customer = stack.customer('answers');
    await stack.control('/control/incoming', { number: customer.number });
    const card = page.getByRole('dialog', { name: 'Incoming call' });
    await card.waitFor();

    const calling = `☎ ${customer.name} calling`;
    const p = page;
    await eventually('the caller in the title', async () => (await p.title()) === calling);
    // It alternates with the normal title while the call rings.
    await eventually('the normal title between flashes', async () => (await p.title()) === normalTitle);
    await eventually('the caller again', async () => (await p.title()) === calling);

    await card.getByRole('button', { name: 'Decline' }).click();
    await card.waitFor({ state: 'detached' });
    await eventually('the normal title back', async () => (await p.title()) === normalTitle);
    // And it stays: nothing flashes once nothing rings.
    await p.waitForTimeout(2500);
    expect(await p.title()).toBe(normalTitle);
  });
});
