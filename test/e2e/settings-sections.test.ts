// Settings' list of sections ("Settings sections") at the window's usual size and at the narrowest
// it allows (380 × 560, electron/desktop/desktop-app.ts): it lists every section heading in the page's
// order; choosing an entry, with the mouse or the keyboard, brings its heading into view, clear of
// the sticky bars, and gives it the focus; the entry of the section being read is marked as the page
// scrolls; with less motion asked for, the page jumps instead of gliding.
import type { Locator, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { stackForFile } from './harness';

const stack = stackForFile();

const SIZES = [
  { width: 1280, height: 720 },
  { width: 380, height: 560 },
];

const sectionList = (p: Page) => p.getByRole('navigation', { name: 'Settings sections' });
const settingsScreen = (p: Page) => p.getByRole('region', { name: 'Settings', exact: true });

async function openSettings(size: { width: number; height: number }): Promise<Page> {
  const page = await stack.newAgentPage();
  await page.setViewportSize(size);
  await page.getByRole('button', { name: 'Settings' }).click();
  await sectionList(page).waitFor();
  return page;
}

/** The screen's section headings, in the page's order. */
async function sectionHeadings(p: Page): Promise<string[]> {
  return (await settingsScreen(p).getByRole('heading', { level: 3 }).allTextContents()).map((text) => text.trim());
}

/** Whether the heading shows whole, not under the sticky header or list: what is drawn at its middle is the heading itself. */
async function headingShows(heading: Locator): Promise<boolean> {
  return heading.evaluate((el) => {
    const box = el.getBoundingClientRect();
    if (box.top < 0 || box.bottom > window.innerHeight) return false;
    const drawn = document.elementFromPoint(box.left + Math.min(box.width / 2, 20), box.top + box.height / 2);
    return drawn !== null && el.contains(drawn);
  });
}

/** Waits until the page stops scrolling (a smooth scroll takes a few hundred milliseconds). */
async function scrollStops(p: Page): Promise<void> {
  await p.evaluate(
    () =>
      new Promise<void>((done) => {
        let last = NaN;
        let still = 0;
        const look = () => {
          still = window.scrollY === last ? still + 1 : 0;
          last = window.scrollY;
          if (still >= 5) done();
          else requestAnimationFrame(look);
        };
        look();
      }),
  );
}

const isFocused = (heading: Locator) => heading.evaluate((el) => document.activeElement === el);

/** The entries marked aria-current="true". */
const markedEntries = (p: Page) => sectionList(p).locator('a[aria-current="true"]').allTextContents();

describe('the list of Settings sections', () => {
  for (const size of SIZES) {
    test(`${size.width} × ${size.height}: lists every section heading in order; choosing one shows its heading and focuses it, and marks it`, async () => {
      const page = await openSettings(size);
      const entries = sectionList(page).getByRole('link');
      const headings = await sectionHeadings(page);
      expect(headings).toEqual(['Language', 'Account', 'Network', 'Audio', 'Shortcuts', 'Calls and window', 'Recording and transcription', 'Diagnostics', 'Updates']);
      expect((await entries.allTextContents()).map((text) => text.trim())).toEqual(headings);
      // At the top, the first section is the one being read.
      await expect(markedEntries(page)).resolves.toEqual(['Language']);

      // Down and back up the page, far and near, with the mouse.
      for (const name of ['Updates', 'Account', 'Diagnostics', 'Audio', 'Recording and transcription', 'Calls and window', 'Network', 'Shortcuts', 'Language']) {
        await sectionList(page).getByRole('link', { name, exact: true }).click();
        const heading = settingsScreen(page).getByRole('heading', { name, exact: true, level: 3 });
        await scrollStops(page);
        await expect(headingShows(heading), `${name} in view`).resolves.toBe(true);
        await expect(isFocused(heading), `${name} focused`).resolves.toBe(true);
        await expect.poll(() => markedEntries(page), { message: `${name} marked` }).toEqual([name]);
      }
    });

    test(`${size.width} × ${size.height}: Tab reaches the list after Back; Enter on an entry moves the focus to its heading`, async () => {
      const page = await openSettings(size);
      await settingsScreen(page).getByRole('button', { name: 'Back', exact: true }).focus();
      await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Language');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Network');
      await page.keyboard.press('Enter');
      const heading = settingsScreen(page).getByRole('heading', { name: 'Network', exact: true });
      await expect.poll(() => isFocused(heading)).toBe(true);
      await scrollStops(page);
      await expect(headingShows(heading)).resolves.toBe(true);
      await expect.poll(() => markedEntries(page)).toEqual(['Network']);
      // From the heading, Tab goes on into the section.
      await page.keyboard.press('Tab');
      await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('network-servers');
    });

    test(`${size.width} × ${size.height}: as the page scrolls, the entry of the section being read is marked`, async () => {
      const page = await openSettings(size);
      for (const name of ['Audio', 'Shortcuts', 'Account']) {
        // Scrolled by the page itself, not by the list: the heading a little under the sticky bars.
        await settingsScreen(page)
          .getByRole('heading', { name, exact: true, level: 3 })
          .evaluate((el) => {
            const margin = parseFloat(getComputedStyle(el).scrollMarginTop);
            window.scrollTo({ top: window.scrollY + el.getBoundingClientRect().top - margin - 20, behavior: 'instant' });
          });
        await expect.poll(() => markedEntries(page), { message: name }).toEqual([name]);
      }
      await page.mouse.move(size.width / 2, size.height / 2);
      await page.mouse.wheel(0, 20_000);
      await expect.poll(() => markedEntries(page), { message: 'at the end' }).toEqual(['Updates']);
      await page.mouse.wheel(0, -20_000);
      await expect.poll(() => markedEntries(page), { message: 'back at the top' }).toEqual(['Language']);
    });
  }

  test('with less motion asked for, the page jumps to the chosen section at once', async () => {
    const page = await openSettings({ width: 1280, height: 720 });
    const topAfterClick = (name: string) =>
      page.evaluate((entry) => {
        const link = [...document.querySelectorAll<HTMLAnchorElement>('nav a')].find((a) => a.textContent === entry)!;
        const heading = document.getElementById(link.hash.slice(1))!;
        link.click();
        // Read in the same task as the click: a smooth scroll has not moved yet, a jump has.
        return heading.getBoundingClientRect().top - parseFloat(getComputedStyle(heading).scrollMarginTop);
      }, name);
    // Smooth by default: the heading is still far down just after the click.
    expect(await topAfterClick('Audio')).toBeGreaterThan(100);
    await scrollStops(page);
    await expect(headingShows(settingsScreen(page).getByRole('heading', { name: 'Audio', exact: true }))).resolves.toBe(true);

    await page.emulateMedia({ reducedMotion: 'reduce' });
    await page.evaluate(() => window.scrollTo({ top: 0, behavior: 'instant' }));
    expect(Math.abs(await topAfterClick('Audio'))).toBeLessThan(2);
    expect(Math.abs(await topAfterClick('Account'))).toBeLessThan(2);
  });
});
