// Settings' list of sections in the window, in Chromium (window-in-chromium.ts): right to left it
// mirrors (the column on the right, the row starting at the right), a narrow window's row brings the
// marked entry into its sight as the page scrolls, and axe finds nothing serious in it, wide or
// narrow, light or dark, in English and in Arabic.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import type { AppSnapshot } from '../../../shared/api';
import type { HistoryEntry } from '../../../shared/history';
import { describe, expect, test } from 'vitest';
import type { UiLanguage } from '../../../shared/i18n/languages';
import ar from '../../../shared/i18n/locales/ar/index';
import en from '../../../shared/i18n/locales/en/index';
import { snapshot, T0 } from './fixtures';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();
let page: Page;

const WORDS = { en, ar } as const;

/** Settings, open in a window of this size, in this language. */
async function openSettings(language: 'en' | 'ar', size: { width: number; height: number }, extra: Partial<AppSnapshot> = {}): Promise<typeof WORDS.en> {
  page = await windows.open(size);
  page.setDefaultTimeout(5000);
  await host(page).start(snapshot([], extra), language satisfies UiLanguage);
  const words = WORDS[language];
  await page.getByRole('button', { name: words.common.header.settings, exact: true }).click();
  await sectionList(words).waitFor();
  return words;
}

const sectionList = (words: typeof WORDS.en) => page.getByRole('navigation', { name: words.settings.screen.sections });
const marked = (words: typeof WORDS.en) => sectionList(words).locator('a[aria-current="true"]').allTextContents();

/** The boxes of the list, the sections' column and an entry, in CSS pixels. */
const boxes = (entry: string) =>
  page.evaluate((name) => {
    const nav = document.querySelector('nav')!;
    const list = nav.querySelector('ul')!;
    const link = [...nav.querySelectorAll('a')].find((a) => a.textContent === name)!;
    const box = (el: Element) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
    };
    return { nav: box(nav), list: box(list), sections: box(document.querySelector('.settings')!), entry: box(link), entryStyle: { right: getComputedStyle(link).borderRightWidth, left: getComputedStyle(link).borderLeftWidth } };
  }, entry);

const scrollToEnd = () => page.evaluate(() => window.scrollTo({ top: document.documentElement.scrollHeight, behavior: 'instant' }));

describe('right to left', () => {
  test('wide: the list is a column on the right of the sections, the marked entry edged on its right; its entries are the Arabic headings', async () => {
    const words = await openSettings('ar', { width: 1280, height: 720 });
    await expect(page.evaluate(() => document.documentElement.dir)).resolves.toBe('rtl');
    const headings = (await page.locator('.settings h3').allTextContents()).map((t) => t.trim());
    expect(headings[0]).toBe(words.common.language.label);
    expect(headings[1]).toBe(words.settings.account.title);
    expect(await sectionList(words).getByRole('link').allTextContents()).toEqual(headings);
    await expect(marked(words)).resolves.toEqual([words.common.language.label]);
    const b = await boxes(words.common.language.label);
    expect(b.nav.left).toBeGreaterThanOrEqual(b.sections.right);
    expect(b.entryStyle).toEqual({ right: '3px', left: '0px' });
  });

  test('narrow: the row starts at the right; at the page\'s end the last entry is marked and scrolled into the row\'s sight', async () => {
    const words = await openSettings('ar', { width: 380, height: 560 });
    const first = await boxes(words.common.language.label);
    // A row above the sections, the first entry at its right end.
    expect(first.nav.bottom).toBeLessThanOrEqual(first.sections.top + 1);
    expect(first.list.right - first.entry.right).toBeLessThan(12);
    const last = words.settings.updates.title;
    expect((await boxes(last)).entry.right).toBeLessThan(first.list.left);
    await scrollToEnd();
    await expect.poll(() => marked(words)).toEqual([last]);
    await expect
      .poll(async () => {
        const b = await boxes(last);
        return b.entry.left >= b.list.left && b.entry.right <= b.list.right;
      })
      .toBe(true);
  });
});

describe('a narrow window', () => {
  test('the row stays under the header as the page scrolls, and brings the marked entry into its sight', async () => {
    const words = await openSettings('en', { width: 380, height: 560 });
    const last = words.settings.updates.title;
    const before = await boxes(last);
    expect(before.entry.left).toBeGreaterThan(before.list.right);
    await scrollToEnd();
    await expect.poll(() => marked(words)).toEqual([last]);
    await expect
      .poll(async () => {
        const b = await boxes(last);
        return b.entry.left >= b.list.left && b.entry.right <= b.list.right;
      })
      .toBe(true);
    // Stuck right under the header, which the window still shows.
    const header = await page.locator('.app-header').evaluate((el) => el.getBoundingClientRect().bottom);
    expect(Math.abs((await boxes(last)).nav.top - header)).toBeLessThan(1);
  });
});

describe('moving between the sections', () => {
  for (const size of [
    { width: 1280, height: 720 },
    { width: 380, height: 720 },
  ]) {
    test(`${size.width} × ${size.height}: the list names the nine sections; at the top the first is marked; choosing one focuses its heading and marks it`, async () => {
      // Updates supported here, so that their form (and its "Save update settings") shows.
      const words = await openSettings('en', size, { updateStatus: { kind: 'idle' } });
      const screen = page.getByRole('region', { name: words.settings.screen.title, exact: true });
      const names = ['Language', 'Account', 'Network', 'Audio', 'Shortcuts', 'Calls and window', 'Recording and transcription', 'Diagnostics', 'Updates'];
      expect(await sectionList(words).getByRole('link').allTextContents()).toEqual(names);
      expect((await screen.getByRole('heading', { level: 3 }).allTextContents()).map((t) => t.trim())).toEqual(names);
      // Nothing scrolled yet: the page is read from its first section, however short it is.
      await expect(marked(words)).resolves.toEqual(['Language']);
      for (const name of ['Diagnostics', 'Account', 'Updates', 'Audio', 'Language']) {
        await sectionList(words).getByRole('link', { name, exact: true }).click();
        const heading = screen.getByRole('heading', { name, exact: true, level: 3 });
        await expect.poll(() => heading.evaluate((el) => document.activeElement === el), { message: `${name} focused` }).toBe(true);
        await expect.poll(() => marked(words), { message: `${name} marked` }).toEqual([name]);
      }
      // Every section's own buttons keep their names: five saves, none merged or renamed.
      for (const name of ['Save', 'Save network settings', 'Apply shortcuts', 'Save recording settings', 'Save update settings']) {
        await expect(screen.getByRole('button', { name, exact: true }).count(), name).resolves.toBe(1);
      }
    });
  }
});

test('a scroll cut short reports its end once the next has begun: the section chosen since stays marked', async () => {
  const words = await openSettings('en', { width: 380, height: 720 }, { updateStatus: { kind: 'idle' } });
  await scrollToEnd();
  await expect.poll(() => marked(words), { timeout: 5000 }).toEqual(['Updates']);
  // Language's short section lets Account's heading reach the reading line once Language's is at the
  // top: only the choice keeps Language marked there. The end of the scroll the choice cut short comes
  // while Language's heading is still far above the window.
  const headingTop = await page.evaluate(() => {
    [...document.querySelectorAll('nav a')].find((a) => a.textContent === 'Language')!.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
    window.dispatchEvent(new Event('scrollend'));
    return document.getElementById('language-settings-title')!.getBoundingClientRect().top;
  });
  expect(headingTop).toBeLessThan(0);
  await expect.poll(() => page.evaluate(() => document.activeElement?.textContent), { timeout: 5000 }).toBe('Language');
  // Where the choice takes it: Language's heading under the bars, the page not at its top.
  await expect
    .poll(() => page.evaluate(() => Math.abs(document.getElementById('language-settings-title')!.getBoundingClientRect().top - document.querySelector('nav')!.getBoundingClientRect().bottom - 12) < 2 && window.scrollY > 1), { timeout: 5000 })
    .toBe(true);
  expect(await marked(words)).toEqual(['Language']);
});

test('a press on the page\'s scroll bar while it travels to a chosen section hands the mark back to the page', async () => {
  const words = await openSettings('en', { width: 380, height: 720 }, { updateStatus: { kind: 'idle' } });
  await expect(marked(words)).resolves.toEqual(['Language']);
  // Diagnostics chosen; the agent grabs the scroll bar (a pointerdown on the root element) and drags
  // the page back to its top before it gets there.
  await page.evaluate(() => {
    [...document.querySelectorAll('nav a')].find((a) => a.textContent === 'Diagnostics')!.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
    document.documentElement.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true }));
    window.scrollTo({ top: 0, behavior: 'instant' });
  });
  await page.waitForFunction(() => new Promise((resolve) => { const y = window.scrollY; setTimeout(() => resolve(window.scrollY === y), 300); }));
  expect(await page.evaluate(() => window.scrollY)).toBe(0);
  await expect.poll(() => marked(words), { timeout: 5000 }).toEqual(['Language']);
  // A press inside a section leaves a chosen one marked.
  await sectionList(words).getByRole('link', { name: 'Diagnostics', exact: true }).click();
  await expect.poll(() => marked(words), { timeout: 5000 }).toEqual(['Diagnostics']);
  // There: its heading whole below the bars.
  await expect
    .poll(() => page.evaluate(() => { const box = document.getElementById('diagnostics-settings-title')!.getBoundingClientRect(); return box.top >= document.querySelector('nav')!.getBoundingClientRect().bottom && box.bottom <= window.innerHeight; }), { timeout: 5000 })
    .toBe(true);
  await page.getByRole('heading', { name: 'Diagnostics', exact: true, level: 3 }).click();
  await page.waitForTimeout(100);
  expect(await marked(words)).toEqual(['Diagnostics']);
});

test('opened from a phone screen scrolled down to its recent calls, Settings starts at its top, its first section marked', async () => {
  page = await windows.open({ width: 380, height: 720 });
  page.setDefaultTimeout(5000);
  const history = Array.from({ length: 12 }, (_, i): HistoryEntry => ({
    localId: `in:h${i}`,
    direction: 'incoming',
    number: '447700900123',
    name: 'Amelia Hart',
    outcome: 'completed',
    startedAt: T0 + i * 60_000,
    endedAt: T0 + i * 60_000 + 30_000,
    durationSec: 30,
  }));
  await host(page).start(snapshot([], { history }), 'en');
  await page.evaluate(() => window.scrollTo({ top: document.documentElement.scrollHeight, behavior: 'instant' }));
  await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(300);
  await page.getByRole('button', { name: en.common.header.settings, exact: true }).click();
  await sectionList(en).waitFor();
  await expect(page.evaluate(() => window.scrollY)).resolves.toBe(0);
  await expect.poll(() => marked(en)).toEqual([en.common.language.label]);
});

describe('accessibility (axe-core: WCAG 2.0/2.1 A and AA, best practices)', () => {
  async function violations(): Promise<string[]> {
    const found: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      const { violations } = await new AxeBuilder({ page }).include('nav').withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
      for (const v of violations) if (v.impact === 'serious' || v.impact === 'critical') found.push(`${colorScheme}: ${v.id} ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    }
    return found;
  }

  for (const language of ['en', 'ar'] as const) {
    for (const size of [
      { width: 1280, height: 720 },
      { width: 380, height: 560 },
    ]) {
      test(`${language}, ${size.width} × ${size.height}: the list has none, with an entry marked`, async () => {
        const words = await openSettings(language, size);
        await sectionList(words).getByRole('link', { name: words.settings.network.title, exact: true }).click();
        await expect.poll(() => marked(words)).toEqual([words.settings.network.title]);
        await expect(violations()).resolves.toEqual([]);
      });
    }
  }
});
