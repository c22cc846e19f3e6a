// Recent calls and the call panel read well at the window's usual size (1280 × 720) and at the
// narrowest the desktop window allows (380 px, electron/desktop/desktop-app.ts), in Chromium
// (window-in-chromium.ts): a long name keeps a readable width and is never cut, a phone number stays
// on one line inside its card, the wrap-up under a call and the call's buttons stay inside the card,
// and nothing makes the page scroll sideways; in English, in Spanish (the longest "Call back") and in
// Arabic (right to left).
import type { Locator, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import type { CallState } from '../../../shared/call-state';
import type { HistoryEntry } from '../../../shared/history';
import ar from '../../../shared/i18n/locales/ar/index';
import en from '../../../shared/i18n/locales/en/index';
import es from '../../../shared/i18n/locales/es/index';
import { active, snapshot } from './fixtures';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();
let page: Page;

const LONG_NAME = 'Maximiliana Fernández-Oyelaran de la Cruz';
const HELD_NAME = 'Fitzgerald Abernathy-Okonkwo';
const UK = '442079460958';
const US = '12025550101';
const MINUTE = 60_000;

/** Two calls: the one in hand and one on hold, both with long names. */
function twoCalls(now: number): CallState[] {
  const inHand: CallState = { ...active('wacid.1', now - 2 * MINUTE), peer: { number: US, name: LONG_NAME } };
  const base = active('wacid.2', now - 5 * MINUTE);
  const held: CallState = base.phase === 'active' ? { ...base, peer: { number: UK, name: HELD_NAME }, heldSince: now - MINUTE } : base;
  return [inHand, held];
}

/** Recent calls with long names and numbers, a hold time, a quality summary, wrap-ups and a transfer. */
function history(now: number): HistoryEntry[] {
  const call = (id: string, name: string | undefined, number: string, agoMin: number, extra: Partial<HistoryEntry> = {}): HistoryEntry => ({
    localId: `in:${id}`,
    callId: id,
    direction: 'incoming',
    number,
    ...(name === undefined ? {} : { name }),
    outcome: 'completed',
    startedAt: now - (agoMin + 2) * MINUTE,
    endedAt: now - agoMin * MINUTE,
    durationSec: 95,
    ...extra,
  });
  return [
    call('h1', LONG_NAME, UK, 5, {
      heldSec: 33,
      quality: { samples: 90, avgMos: 3.9, worstMos: 3.1, worstLossPercent: 6, warningsSeen: ['high-packet-loss', 'high-rtt'] },
      wrapUp: {
        disposition: 'Resolved — billing question',
        notes: 'Customer asked about the March invoice; explained the late fee and promised a refund within five working days. Follow up next week if no confirmation arrives.',
        savedAt: now - 4 * MINUTE,
        synced: true,
      },
    }),
    call('h2', HELD_NAME, US, 15, { heldSec: 12 }),
    call('h3', undefined, US, 30, { direction: 'outgoing', localId: 'out:h3', outcome: 'no_answer', durationSec: 0 }),
    call('h4', LONG_NAME, US, 60, {
      outcome: 'transferred',
      transferredTo: 'Maya Chen-Richardson',
      wrapUp: { disposition: null, notes: 'Short note', savedAt: now - 59 * MINUTE, synced: false, syncError: 'The relay could not be reached' },
    }),
  ];
}

const WORDS = { en, es, ar } as const;
let words: typeof en = en;

async function openWindow(size: { width: number; height: number }, language: keyof typeof WORDS): Promise<void> {
  page = await windows.open(size);
  page.setDefaultTimeout(5000);
  const now = Date.now();
  await host(page).start(snapshot(twoCalls(now), { history: history(now) }), language);
  words = WORDS[language];
  await rows().nth(3).waitFor();
}

interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
  width: number;
}

/** How one element lies: its box, how many lines it takes, and whether its text is clipped. */
interface Layout {
  text: string;
  box: Box;
  lines: number;
  clipped: boolean;
}

const layoutOf = (locator: Locator): Promise<Layout> =>
  locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const lineHeight = parseFloat(getComputedStyle(el).lineHeight);
    return {
      text: el.textContent ?? '',
      box: { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width },
      lines: Math.round(r.height / lineHeight),
      clipped: el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1,
    };
  });

const boxOf = async (locator: Locator): Promise<Box> => (await layoutOf(locator)).box;

/** `inner` lies within `outer` (half a pixel for rounding). */
const inside = (inner: Box, outer: Box): boolean => inner.left >= outer.left - 0.5 && inner.right <= outer.right + 0.5 && inner.top >= outer.top - 0.5 && inner.bottom <= outer.bottom + 0.5;

const recentCard = () => page.getByRole('region', { name: words.calls.recent.title, exact: true });
const rows = () => recentCard().getByRole('list', { name: words.calls.recent.list, exact: true }).getByRole('listitem');
const callPanel = () => page.getByRole('region', { name: words.calls.current.label, exact: true });
const pageScrollsSideways = () => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);

/** A name laid out for reading: whole (never clipped, never an ellipsis), and wider than a few letters. */
function expectReadable(name: Layout, expected: string, where: string): void {
  expect(name.text, where).toBe(expected);
  expect(name.clipped, `${where}: clipped`).toBe(false);
  expect(name.box.width, `${where}: width`).toBeGreaterThanOrEqual(60);
}

const SIZES = [
  { width: 1280, height: 720 },
  { width: 380, height: 720 },
];

describe('recent calls', () => {
  for (const language of ['en', 'es', 'ar'] as const) {
    for (const size of SIZES) {
      test(`${language}, ${size.width} × ${size.height}: every name whole and readable, every number one line inside the card`, async () => {
        await openWindow(size, language);
        const card = await boxOf(recentCard());
        const names = [LONG_NAME, HELD_NAME, '+1 202 555 0101', LONG_NAME];
        const numbers = ['+44 20 7946 0958', '+1 202 555 0101', null, '+1 202 555 0101'];
        await expect(rows().count()).resolves.toBe(4);
        for (const [index, name] of names.entries()) {
          const row = rows().nth(index);
          const where = `row ${index + 1}`;
          const title = await layoutOf(row.locator('.history-title'));
          expectReadable(title, name, where);
          expect(inside(title.box, card), `${where}: name inside the card`).toBe(true);
          const number = numbers[index];
          if (number) {
            const shown = await layoutOf(row.locator('.history-number'));
            expect(shown.text.replace(/[\u2066-\u2069]/g, ''), where).toBe(number);
            expect(shown.lines, `${where}: number on one line`).toBe(1);
            expect(inside(shown.box, card), `${where}: number inside the card`).toBe(true);
          }
          // "Call back" beside or under the call, never over its name.
          const callBack = await boxOf(row.getByRole('button', { name: words.calls.recent.callBack.replace('{{name}}', '') }));
          expect(inside(callBack, card), `${where}: "Call back" inside the card`).toBe(true);
          const apart = callBack.left >= title.box.right - 0.5 || callBack.right <= title.box.left + 0.5 || callBack.top >= title.box.bottom - 0.5;
          expect(apart, `${where}: "Call back" clear of the name`).toBe(true);
          for (const part of await row.locator('.history-meta, .history-quality').all()) {
            expect(inside(await boxOf(part), card), `${where}: outcome, time and quality inside the card`).toBe(true);
          }
        }
        await expect(pageScrollsSideways()).resolves.toBe(false);
      });
    }
  }

  for (const size of SIZES) {
    test(`${size.width} × ${size.height}: the wrap-up under a call (disposition, "Saved", notes, "Edit wrap-up") stays inside the card, its notes given the line`, async () => {
      await openWindow(size, 'en');
      const card = await boxOf(recentCard());
      const row = rows().first();
      const summary = row.locator('.wrapup-summary');
      const summaryBox = await boxOf(summary);
      const edit = row.getByRole('button', { name: 'Edit wrap-up', exact: true });
      for (const part of [summary.locator('.wrapup-disposition'), summary.getByText('Saved', { exact: true }), summary.locator('.wrapup-notes'), summary.getByRole('button', { name: 'Show all notes' }), edit]) {
        expect(inside(await boxOf(part), card)).toBe(true);
      }
      // The disposition reads on one line; the notes have the width of the call's line, not a sliver beside the button.
      await expect(layoutOf(summary.locator('.wrapup-disposition'))).resolves.toMatchObject({ lines: 1, clipped: false });
      const title = await boxOf(row.locator('.history-title'));
      expect(summaryBox.width).toBeGreaterThanOrEqual(title.width - 1);
      const editBox = await boxOf(edit);
      expect(editBox.top >= summaryBox.bottom - 0.5 || editBox.left >= summaryBox.right - 0.5).toBe(true);
      // Opened, the form stays inside the card too.
      await edit.click();
      const form = row.getByRole('form', { name: 'Wrap-up' });
      await form.waitFor();
      expect(inside(await boxOf(form), await boxOf(recentCard()))).toBe(true);
      await expect(pageScrollsSideways()).resolves.toBe(false);
    });
  }
});

describe('the call panel with a call on hold', () => {
  for (const language of ['en', 'es', 'ar'] as const) {
    for (const size of SIZES) {
      test(`${language}, ${size.width} × ${size.height}: the customer in hand and the one on hold read whole; the number on one line inside the card`, async () => {
        await openWindow(size, language);
        const panel = callPanel();
        const card = await boxOf(panel);
        const name = await layoutOf(panel.locator('.peer-title > bdi'));
        expectReadable(name, LONG_NAME, 'in hand');
        expect(inside(name.box, card)).toBe(true);
        const number = await layoutOf(panel.locator('.peer-number'));
        expect(number.text.replace(/[\u2066-\u2069]/g, '')).toBe('+1 202 555 0101');
        expect(number.lines, 'number on one line').toBe(1);
        expect(inside(number.box, card), 'number inside the card').toBe(true);

        const held = panel.getByRole('group', { name: words.calls.held.label, exact: true });
        const heldName = await layoutOf(held.locator('.held-peer'));
        expectReadable(heldName, HELD_NAME, 'on hold');
        expect(inside(heldName.box, await boxOf(held))).toBe(true);
        for (const button of await panel.getByRole('button').all()) {
          expect(inside(await boxOf(button), card), `${await button.textContent()} inside the card`).toBe(true);
        }
        await expect(pageScrollsSideways()).resolves.toBe(false);
      });
    }
  }
});
