// Steps the message end-to-end tests share: the Contact panel, its conversation chooser, and what the
// sandbox recorded as sent to a customer.
import type { Page } from 'playwright-core';
import type { SandboxMessageReport } from '../../shared/sandbox';
import type { Stack } from './harness';

export const contactPanel = (p: Page) => p.getByRole('region', { name: 'Contact' });
export const timeline = (p: Page) => contactPanel(p).getByRole('list', { name: 'Messages' });
export const messageItem = (p: Page, text: string | RegExp) => timeline(p).getByRole('listitem').filter({ hasText: text });

/** The chooser in the Contact panel: a number as typed opens its conversation. */
export async function openConversation(p: Page, number: string): Promise<void> {
  const panel = contactPanel(p);
  const back = panel.getByRole('button', { name: 'All conversations' });
  if (await back.isVisible()) await back.click();
  await panel.getByRole('textbox', { name: 'Contact number' }).fill(`+${number}`);
  await panel.getByRole('button', { name: 'Open', exact: true }).click();
  await panel.getByRole('tablist', { name: 'Composer' }).waitFor();
}

/** What the sandbox recorded as sent to this customer, in order. */
export async function outboundTo(control: Stack['control'], number: string): Promise<SandboxMessageReport[]> {
  const reports = await control<SandboxMessageReport[]>('/control/messages');
  return reports.filter((m) => m.direction === 'outbound' && m.number === number);
}
