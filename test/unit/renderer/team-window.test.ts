// The "Team" view in the window, in Chromium (window-in-chromium.ts): the header's button, the
// wallboard's tiles and agents as the agent's tools find them (by role and name), and its reads of
// getWallboard on the page's own clock (Playwright's fake clock: time moves only when a test says).
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import type { AppSnapshot } from '../../../shared/api';
import type { UiLanguage } from '../../../shared/i18n/languages';
import { err, ok } from '../../../shared/result';
import { WALLBOARD_REFRESH_MS, type Wallboard } from '../../../shared/wallboard';
import { snapshot } from './fixtures';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();
let page: Page;

/** 15:30 in London (summer time): the team's day began at 23:00 UTC the day before. */
const NOW = Date.UTC(2025, 5, 10, 14, 30, 0);
const LONDON_MIDNIGHT = Date.UTC(2025, 5, 9, 23, 0, 0);

/**
 * A wallboard as a newer relay sends it: members may carry `reason` and `since`, and states the shared
 * enum does not list yet; `callbacks` as an older relay leaves it out.
 */
type Member = Omit<Wallboard['agents'][number], 'presence'> & { presence: string; reason?: string; since?: number };
type Board = Omit<Wallboard, 'agents' | 'callbacks'> & { agents: Member[]; callbacks?: Wallboard['callbacks'] };

const board = (overrides: Partial<Board> = {}): Board => ({
  at: NOW,
  timezone: 'Europe/London',
  dayStartedAt: LONDON_MIDNIGHT,
  records: 'ok',
  waiting: { calls: 3, longestSince: NOW - 82_000 },
  today: { answered: 128, missed: 7, abandoned: 4, averageHandleMs: 263_400, serviceLevel: { thresholdSec: 20, answeredWithin: 112, offered: 132, ratio: 112 / 132 } },
  agents: [
    { agentId: 'a1', name: 'Maya Chen', presence: 'on_call', since: NOW - 125_000 },
    { agentId: 'a2', name: 'Amelia Hart', presence: 'available', self: true, since: NOW - 41_000 },
    { agentId: 'a3', name: 'Jonas Berg', presence: 'break', reason: 'Lunch', since: NOW - 1_199_000 },
    { agentId: 'a4', name: 'Olu Adeyemi', presence: 'after_call_work', since: NOW - 19_000 },
    { agentId: 'a5', name: 'Zoë Tran', presence: 'dnd' },
    { agentId: 'a6', name: 'Ben Okafor', presence: 'offline', since: NOW - 4 * 3_600_000 - 61_000 },
    { agentId: 'a7', name: 'Priya Nair', presence: 'call_waiting', since: NOW - 2_000 },
  ],
  ...overrides,
});

type Host = ReturnType<typeof host>;

/** The window on a paused clock at NOW (unless `realClock`), getWallboard answered with `first` (or deferred). */
async function open(first: Board | 'defer', extra: Partial<AppSnapshot> = {}, options: { language?: UiLanguage; colorScheme?: 'light' | 'dark'; width?: number; realClock?: boolean } = {}): Promise<Host> {
  page = await windows.open({ colorScheme: options.colorScheme ?? 'light', width: options.width ?? 460 });
  page.setDefaultTimeout(5000);
  // axe-core waits on timers of its own: it runs on the real clock.
  if (!options.realClock) {
    await page.clock.install({ time: NOW - 10_000 });
    await page.clock.pauseAt(NOW);
  }
  const h = host(page);
  if (first === 'defer') await h.defer('getWallboard');
  else await h.answer('getWallboard', ok(first));
  await h.start(snapshot([], { presence: { choice: 'available', status: 'available' }, ...extra }), options.language);
  return h;
}

const teamButton = () => page.getByRole('button', { name: 'Team', exact: true });
const teamView = () => page.getByRole('region', { name: 'Team', exact: true });
const tile = (name: string) => teamView().getByRole('figure', { name, exact: true });
const tileText = (name: string) => tile(name).textContent();
const reads = async (h: Host) => (await h.commands()).filter((c) => c.name === 'getWallboard').length;
const rows = () => teamView().getByRole('table', { name: 'Agents' }).locator('tbody tr');
const rowTexts = () => rows().evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent ?? '')));
const status = () => teamView().getByRole('status');

describe('the "Team" button', () => {
  test('opens the Team view and takes the agent back to the phone', async () => {
    await open(board());
    await expect(teamButton().getAttribute('aria-pressed')).resolves.toBe('false');
    await teamButton().click();
    await teamView().waitFor();
    await expect(teamButton().getAttribute('aria-pressed')).resolves.toBe('true');
    await expect(page.getByRole('textbox', { name: 'Phone number' }).count()).resolves.toBe(0);
    await teamButton().click();
    await teamView().waitFor({ state: 'detached' });
    await page.getByRole('textbox', { name: 'Phone number' }).waitFor();
    // Settings from the Team view, and back to the phone from there.
    await teamButton().click();
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await teamView().waitFor({ state: 'detached' });
    await expect(teamButton().getAttribute('aria-pressed')).resolves.toBe('false');
  });
});

describe('the wallboard', () => {
  test('tiles: the calls waiting, the longest wait in m:ss, the day\'s counts, the handle time and the service level', async () => {
    await open(board());
    await teamButton().click();
    await expect(tileText('Calls waiting')).resolves.toBe('Calls waiting: 3');
    await expect(tileText('Longest wait')).resolves.toBe('Longest wait: 1:22');
    await expect(tileText('Answered')).resolves.toBe('Answered: 128');
    await expect(tileText('Missed')).resolves.toBe('Missed: 7');
    await expect(tileText('Abandoned')).resolves.toBe('Abandoned: 4');
    await expect(tileText('Average handle time')).resolves.toBe('Average handle time: 4:23');
    await expect(tileText('Service level')).resolves.toBe('Service level: 85%112 of 132 within 20 s');
    await tile('Service level').getByText('112 of 132 within 20 s', { exact: true }).waitFor();
    await teamView().getByText('Today since 00:00 Europe/London', { exact: true }).waitFor();
  });

  test('"—" when nobody waits, no call was answered, or none was offered', async () => {
    await open(board({ waiting: { calls: 0 }, today: { answered: 0, missed: 0, abandoned: 2, serviceLevel: { thresholdSec: 30, answeredWithin: 0, offered: 0 } } }));
    await teamButton().click();
    await expect(tileText('Calls waiting')).resolves.toBe('Calls waiting: 0');
    await expect(tileText('Longest wait')).resolves.toBe('Longest wait: —');
    await expect(tileText('Average handle time')).resolves.toBe('Average handle time: —');
    await expect(tileText('Service level')).resolves.toBe('Service level: —');
  });

  test('every agent by name with its state, "(you)" on this agent\'s row, and the time in that state ticking each second', async () => {
    await open(board());
    await teamButton().click();
    await teamView().getByRole('columnheader', { name: 'Agent', exact: true }).waitFor();
    await teamView().getByRole('columnheader', { name: 'State', exact: true }).waitFor();
    await teamView().getByRole('columnheader', { name: 'Time in state', exact: true }).waitFor();
    await expect(rowTexts()).resolves.toEqual([
      ['Amelia Hart (you)', 'Available', '0:41'],
      ['Ben Okafor', 'Offline', '4:01:01'],
      ['Jonas Berg', 'Break — Lunch', '19:59'],
      ['Maya Chen', 'On a call', '2:05'],
      ['Olu Adeyemi', 'After-call work', '0:19'],
      ['Priya Nair', 'On a call', '0:02'],
      ['Zoë Tran', 'Do not disturb', ''],
    ]);
    await teamView().getByRole('rowheader', { name: 'Amelia Hart (you)' }).waitFor();
    await page.clock.runFor(2000);
    await expect.poll(() => rows().first().textContent()).toBe('Amelia Hart (you)Available0:43');
    await expect(tileText('Longest wait')).resolves.toBe('Longest wait: 1:24');
    // No clock is in a live region: a screen reader is not told every second.
    const live = await teamView().evaluate((view) =>
      [...view.querySelectorAll('figure, table')].filter((el) => el.closest('[aria-live], [role="status"], [role="alert"], [role="timer"], [role="log"]') !== null).length,
    );
    expect(live).toBe(0);
  });

  test('the clocks count on the relay\'s time: a relay clock ahead of the window\'s does not add to them', async () => {
    const at = NOW + 60_000;
    await open(board({ at, waiting: { calls: 1, longestSince: at - 30_000 }, agents: [{ agentId: 'a1', name: 'Maya Chen', presence: 'on_call', since: at - 5_000 }] }));
    await teamButton().click();
    await expect.poll(rowTexts).toEqual([['Maya Chen', 'On a call', '0:05']]);
    await expect(tileText('Longest wait')).resolves.toBe('Longest wait: 0:30');
  });

  test('the team\'s own time zone names the day', async () => {
    await open(board({ timezone: 'Asia/Kolkata', dayStartedAt: Date.UTC(2025, 5, 9, 18, 30, 0) }));
    await teamButton().click();
    await teamView().getByText('Today since 00:00 Asia/Kolkata', { exact: true }).waitFor();
  });
});

describe('reading it live', () => {
  test('reads every 3 s while open, never two at once, and stops when the view closes', async () => {
    const h = await open('defer');
    expect(await reads(h)).toBe(0);
    await teamButton().click();
    await expect.poll(() => reads(h)).toBe(1);
    // A read that has not answered holds the next one back.
    await page.clock.runFor(WALLBOARD_REFRESH_MS * 2);
    expect(await reads(h)).toBe(1);
    await teamView().getByText('Reading the team\'s wallboard…').waitFor();
    // It answered late: the next read goes at once.
    await expect(h.settle('getWallboard', ok(board()))).resolves.toBe(true);
    await page.clock.runFor(1);
    await expect.poll(() => reads(h)).toBe(2);
    await expect(h.settle('getWallboard', ok(board()))).resolves.toBe(true);
    await tile('Calls waiting').waitFor();
    // Then every 3 s from the start of the one before.
    await page.clock.runFor(WALLBOARD_REFRESH_MS - 10);
    expect(await reads(h)).toBe(2);
    await page.clock.runFor(10);
    await expect.poll(() => reads(h)).toBe(3);
    await h.settle('getWallboard', ok(board()));
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await expect.poll(() => reads(h)).toBe(4);

    await teamButton().click();
    await teamView().waitFor({ state: 'detached' });
    await h.settle('getWallboard', ok(board()));
    await page.clock.runFor(WALLBOARD_REFRESH_MS * 4);
    expect(await reads(h)).toBe(4);
  });

  test('reads nothing while the window is hidden, and at once when it shows again', async () => {
    const h = await open(board());
    await teamButton().click();
    await expect.poll(() => reads(h)).toBe(1);
    const setHidden = (hidden: boolean) =>
      page.evaluate((h) => {
        Object.defineProperty(document, 'visibilityState', { value: h ? 'hidden' : 'visible', configurable: true });
        document.dispatchEvent(new Event('visibilitychange'));
      }, hidden);
    await setHidden(true);
    await page.clock.runFor(WALLBOARD_REFRESH_MS * 3);
    expect(await reads(h)).toBe(1);
    await setHidden(false);
    await expect.poll(() => reads(h)).toBe(2);
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await expect.poll(() => reads(h)).toBe(3);
  });

  test('a failed read is said and tried again at the next tick, the board kept meanwhile', async () => {
    const h = await open(board());
    await teamButton().click();
    await tile('Answered').waitFor();
    await h.answer('getWallboard', err('gateway_unreachable', 'connect ECONNREFUSED'));
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await expect.poll(() => teamView().getByRole('alert').textContent()).toMatch(/^The team's wallboard could not be read: Cannot reach/);
    await expect(tileText('Answered')).resolves.toBe('Answered: 128');
    await expect(rows().count()).resolves.toBe(7);
    await h.answer('getWallboard', ok(board({ today: { ...board().today!, answered: 129 } })));
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await expect.poll(() => tileText('Answered')).toBe('Answered: 129');
    await expect(teamView().getByRole('alert').count()).resolves.toBe(0);
  });

  test('a first read that fails is said, with no figures made up', async () => {
    const h = await open(board());
    await h.answer('getWallboard', err('not_available', 'getWallboard is not part of this page'));
    await teamButton().click();
    await teamView().getByRole('alert').waitFor();
    await expect(teamView().getByRole('figure').count()).resolves.toBe(0);
    await expect(teamView().getByRole('table').count()).resolves.toBe(0);
  });
});

describe('the team\'s records', () => {
  test('none: the figures say the relay keeps no records; the agents are still there', async () => {
    await open(board({ records: 'none', waiting: undefined, today: undefined }));
    await teamButton().click();
    await teamView().getByText('The relay keeps no call records: the day\'s figures are not available', { exact: true }).waitFor();
    await expect(teamView().getByRole('figure').count()).resolves.toBe(0);
    await expect(rows().count()).resolves.toBe(7);
  });

  test('unavailable: the last figures stay, marked with the time they were read; the polite status says so once, and when they are back', async () => {
    const h = await open(board());
    await teamButton().click();
    await expect(tileText('Longest wait')).resolves.toBe('Longest wait: 1:22');
    await expect(status().textContent()).resolves.toBe('');
    await h.answer('getWallboard', ok(board({ at: NOW + 3000, records: 'unavailable', waiting: undefined, today: undefined })));
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await teamView().getByText('The team\'s records cannot be read right now Figures from 15:30', { exact: true }).waitFor();
    await expect(status().textContent()).resolves.toBe('The team\'s records cannot be read right now');
    await expect(tileText('Answered')).resolves.toBe('Answered: 128');
    // Kept figures stand still.
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await expect(tileText('Longest wait')).resolves.toBe('Longest wait: 1:22');

    await h.answer('getWallboard', ok(board({ at: NOW + 9000 })));
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await expect.poll(() => status().textContent()).toBe('The day\'s figures can be read again');
    await expect(teamView().getByText('The team\'s records cannot be read right now').count()).resolves.toBe(0);
  });

  test('unavailable from the first read: said, with no figures', async () => {
    await open(board({ records: 'unavailable', waiting: undefined, today: undefined }));
    await teamButton().click();
    await teamView().getByText('The team\'s records cannot be read right now', { exact: true }).waitFor();
    await expect(teamView().getByRole('figure').count()).resolves.toBe(0);
    await expect(rows().count()).resolves.toBe(7);
  });
});

describe('looks and words', () => {
  test('axe finds nothing serious in the Team view, light, dark and in forced colours, at the narrowest width', async () => {
    for (const scheme of ['light', 'dark', 'forced colours'] as const) {
      const colorScheme = scheme === 'dark' ? 'dark' : 'light';
      await open(board({ at: Date.now() }), {}, { colorScheme, width: 380, realClock: true });
      if (scheme === 'forced colours') await page.emulateMedia({ forcedColors: 'active' });
      await teamButton().click();
      await tile('Service level').waitFor();
      const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
      const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), scheme).toEqual([]);
      // The tiles reflow: two a row in the narrowest window.
      const lefts = await teamView().getByRole('figure').evaluateAll((figures) => new Set(figures.map((f) => Math.round(f.getBoundingClientRect().left))).size);
      expect(lefts).toBe(2);
      await page.close();
    }
  }, 60_000);

  test('speaks the agent\'s language', async () => {
    await open(board(), {}, { language: 'es' });
    await page.getByRole('button', { name: 'Equipo', exact: true }).click();
    const view = page.getByRole('region', { name: 'Equipo', exact: true });
    await view.getByRole('figure', { name: 'Llamadas en espera', exact: true }).waitFor();
    await view.getByText('Hoy desde las 00:00 Europe/London', { exact: true }).waitFor();
    await view.getByRole('cell', { name: 'Pausa — Lunch', exact: true }).waitFor();
  });
});
