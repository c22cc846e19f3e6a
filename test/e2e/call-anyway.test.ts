// "Call anyway", end to end: Chromium runs the real renderer through the browser host. A number of
// the right length that the numbering-plan metadata does not list gets a warning instead of a call;
// "Call anyway" places it, and the gateway (here the sandbox, which holds to the same metadata and
// answers 138001) is the judge: its refusal is shown, and what the agent typed stays.
import { describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { eventually, stackForFile } from './harness';

// London's 020 5 range is not allocated: libphonenumber knows its length but lists no number in it.
const UNLISTED_TYPED = '+44 20 5946 0958';
const UNLISTED = '442059460958';

const stack = stackForFile();
let page: Page | undefined;


const dialer = (p: Page) => p.getByRole('region', { name: 'Dialer' });
const initiates = async () => (await stack.gatewayLog()).filter((l) => l.action === 'initiate');

describe('a number the metadata does not list', () => {
  test('warns with "Call anyway"; an edit clears the warning; Call anyway reaches the gateway, whose 138001 is shown', async () => {
    page = await stack.newAgentPage();
    const number = dialer(page).getByLabel('Phone number');
    const warning = dialer(page).getByRole('alert');
    const callAnyway = dialer(page).getByRole('button', { name: 'Call anyway' });
    const initiatesBefore = (await initiates()).length;

    await number.fill(UNLISTED_TYPED);
    await dialer(page).getByRole('button', { name: 'Call', exact: true }).click();
    await warning.getByText('Phone number: +44 20 5946 0958 is not listed as a valid number for its country. Check it, or call anyway.').waitFor();
    await callAnyway.waitFor();
    // The warning is the field's description, and the field is not marked invalid: the number may be real.
    const describedBy = await number.getAttribute('aria-describedby');
    expect(describedBy).not.toBeNull();
    expect(await warning.getAttribute('id')).toBe(describedBy);
    expect(await number.getAttribute('aria-invalid')).toBeNull();
    // Call alone placed nothing.
    expect((await initiates()).length).toBe(initiatesBefore);

    // Editing the number clears the warning; nothing typed is lost.
    await number.press('End');
    await number.press('Backspace');
    await expect.poll(() => callAnyway.count()).toBe(0);
    expect(await warning.count()).toBe(0);
    await expect(number.inputValue()).resolves.toBe('+44 20 5946 095');
    await number.pressSequentially('8');
    await expect(number.inputValue()).resolves.toBe(UNLISTED_TYPED);
    await dialer(page).getByRole('button', { name: 'Call', exact: true }).click();
    await callAnyway.waitFor();

    await callAnyway.click();
    // The initiate reached the gateway, which refused it: the sandbox takes only listed numbers.
    const initiate = await eventually('the initiate to reach the gateway', async () => {
      const all = await initiates();
      return all.length > initiatesBefore && all[all.length - 1]!.status !== 0 ? all[all.length - 1] : undefined;
    });
    expect(initiate.status).toBe(400);
    expect((await initiates()).length).toBe(initiatesBefore + 1);

    // The agent sees the gateway's verdict in plain words, and the number is still there.
    await warning.getByText('This customer cannot be called.').waitFor();
    expect(await callAnyway.count()).toBe(0);
    await expect(number.inputValue()).resolves.toBe(UNLISTED_TYPED);

    // The call that went out was to that number, and it failed with the gateway's own code.
    const entry = await eventually('the failed call in the history', async () => {
      const snapshot = await stack.service.handle('getSnapshot', {});
      return snapshot.ok ? snapshot.value.history.find((e) => e.direction === 'outgoing' && e.number === UNLISTED) : undefined;
    });
    expect(entry).toMatchObject({ outcome: 'failed', failureCode: '138001' });
  });
});
