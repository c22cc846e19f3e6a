// Recent calls read well at the window's usual size and at the narrowest it allows (380 × 560,
// electron/desktop/desktop-app.ts): the customer's name is never cut short, a phone number never
// wraps inside itself, and the outcome, time and hold time all show.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { currentCall, incomingCard, recentCalls, stackForFile } from './harness';

const stack = stackForFile();

/** How each recent call's parts lay out: whether the name is cut, and how many lines the number takes. */
async function rowLayout(p: Page): Promise<{ title: string; titleCut: boolean; numberLines: number; meta: string }[]> {
  return p.evaluate(() =>
    [...document.querySelectorAll('ul[aria-label="Recent calls"] .history-item')].map((row) => {
      const title = row.querySelector<HTMLElement>('.history-title')!;
      const number = row.querySelector<HTMLElement>('.history-number');
      const lineHeight = number === null ? 0 : parseFloat(getComputedStyle(number).lineHeight);
      return {
        title: title.textContent ?? '',
        titleCut: title.scrollWidth > title.clientWidth + 1,
        numberLines: number === null ? 0 : Math.round(number.getBoundingClientRect().height / lineHeight),
        meta: row.querySelector('.history-meta')?.textContent ?? '',
      };
    }),
  );
}

describe('recent calls at any width', () => {
  test('a held call: the name whole, the number on one line, the outcome and hold time shown, at 1280 × 720 and at 380 × 560', async () => {
    const page = await stack.newAgentPage();
    await page.setViewportSize({ width: 1280, height: 720 });
    const customer = stack.customer('answers');
    await stack.control('/control/incoming', { number: customer.number });
    await incomingCard(page).getByRole('button', { name: 'Answer' }).click();
    const call = currentCall(page);
    await call.getByText('Connected').waitFor();
    await call.getByRole('button', { name: 'Hold', exact: true }).click();
    await call.getByText('On hold').waitFor();
    await page.waitForTimeout(1_200);
    await call.getByRole('button', { name: 'Resume', exact: true }).click();
    await call.getByRole('button', { name: 'Hang up' }).click();
    await recentCalls(page).getByText(customer.name).first().waitFor();

    for (const size of [
      { width: 1280, height: 720 },
      { width: 380, height: 560 },
    ]) {
      await page.setViewportSize(size);
      const rows = await rowLayout(page);
      const held = rows.find((r) => r.title === customer.name);
      expect(held, `${size.width}px`).toMatchObject({ titleCut: false, numberLines: 1 });
      expect(held!.meta, `${size.width}px`).toMatch(/Completed/);
      expect(held!.meta, `${size.width}px`).toMatch(/on hold 00:0\d/);
    }
  });
});
