// The page owns a call's audio in the browser host: when it goes (a reload, the tab closed), the
// call ends at once with a terminate and the reason, instead of showing "Connected" with no media
// until the service cuts it (138022). Closing the tab mid-call asks first.
import { expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { WINDOW_GONE_REASON } from '../../shared/api';
import { english } from '../../shared/i18n/text';
import { currentCall, eventually, incomingCard, recentCalls, stackForFile } from './harness';

const stack = stackForFile();
let page: Page | undefined;



async function answeredCall(p: Page): Promise<string> {
  const customer = stack.customer('answers');
  const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
  await incomingCard(p).getByRole('button', { name: 'Answer' }).click();
  await currentCall(p).getByText('Connected').waitFor();
  return callId;
}

const gatewayActions = async (callId: string): Promise<string[]> => (await stack.gatewayLog()).filter((l) => l.callId === callId).map((l) => l.action);

test('a reload during a call ends it with terminate, and the reloaded page shows why in recent calls', async () => {
  page = await stack.newAgentPage();
  const callId = await answeredCall(page);

  await page.reload();
  const actions = await eventually('terminate to reach the gateway', async () => {
    const log = await gatewayActions(callId);
    return log.includes('terminate') ? log : undefined;
  });
  expect(actions).toEqual(['accept', 'terminate']);
  await page.getByRole('status', { name: 'Connection' }).getByText('Connected').waitFor();
  await recentCalls(page).getByText(`Failed: ${english(WINDOW_GONE_REASON.reloaded)}`).first().waitFor();
  await expect(currentCall(page).getByText('Connected').count()).resolves.toBe(0);
  const live = await stack.service.handle('getSnapshot', {});
  expect(live.ok && live.value.calls.filter((c) => c.phase !== 'ended')).toEqual([]);
});

test('a reload while a call only rings loses nothing: the reloaded page rings and answers it', async () => {
  page = await stack.newAgentPage();
  const customer = stack.customer('answers');
  const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
  await incomingCard(page).waitFor();
  await page.reload();
  await incomingCard(page).getByRole('button', { name: 'Answer' }).click();
  await currentCall(page).getByText('Connected').waitFor();
  expect(await gatewayActions(callId)).toEqual(['accept']);
});

test('closing the tab during a call asks first; staying keeps the call, leaving ends it', async () => {
  page = await stack.newAgentPage();
  const callId = await answeredCall(page);

  const asked: string[] = [];
  page.once('dialog', (dialog) => {
    asked.push(dialog.type());
    void dialog.dismiss();
  });
  await page.close({ runBeforeUnload: true });
  await eventually('the browser to ask before leaving', () => asked.length > 0);
  expect(asked).toEqual(['beforeunload']);
  // The agent chose to stay: the page and its call are still there.
  await currentCall(page).getByText('Connected').waitFor();
  expect(await gatewayActions(callId)).toEqual(['accept']);

  // Leaving for good (no question this time) ends the call at the gateway.
  await page.close();
  await eventually('terminate to reach the gateway', async () => (await gatewayActions(callId)).includes('terminate'));
  page = undefined;
});
