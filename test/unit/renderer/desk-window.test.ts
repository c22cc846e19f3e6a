// The desk in the window, in Chromium (window-in-chromium.ts): the "Presence" select's breaks, the
// after-call work's countdown and "Ready", and the wrap-up in after-call work and in recent calls,
// found by role and name as the agent's tools find them, on a host whose answers each test gives.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import type { AfterCallWork, AgentPresence, AppSnapshot, TeamInfo } from '../../../shared/api';
import type { HistoryEntry, WrapUp } from '../../../shared/history';
import type { UiLanguage } from '../../../shared/i18n/languages';
import { err, ok } from '../../../shared/result';
import { DEFAULT_TEAM_SETTINGS, WRAP_UP_NOTES_MAX, type TeamSettings } from '../../../shared/team-settings';
import { snapshot } from './fixtures';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();
let page: Page;

const HOUR = 3_600_000;
const team = (settings: Partial<TeamSettings> = {}): TeamInfo => ({ role: 'agent', settings: { ...DEFAULT_TEAM_SETTINGS, ...settings } });
const available: AgentPresence = { choice: 'available', status: 'available' };

/** An answered incoming call that ended `agoMs` ago. */
const answeredCall = (id: string, name: string, agoMs: number, extra: Partial<HistoryEntry> = {}): HistoryEntry => {
  const endedAt = Date.now() - agoMs;
  return { localId: `in:${id}`, callId: id, direction: 'incoming', number: '447700900123', name, outcome: 'completed', startedAt: endedAt - 60_000, endedAt, durationSec: 55, ...extra };
};

const work = (overrides: Partial<AfterCallWork> = {}): AfterCallWork => ({
  localId: 'in:wacid.1',
  callId: 'wacid.1',
  startedAt: Date.now(),
  endsAt: Date.now() + 30_000,
  waitingForWrapUp: false,
  ...overrides,
});
const inAfterCallWork = (overrides: Partial<AfterCallWork> = {}): AgentPresence => ({ choice: 'available', status: 'after_call_work', afterCallWork: work(overrides) });

async function open(extra: Partial<AppSnapshot>, language?: UiLanguage): Promise<ReturnType<typeof host>> {
  page = await windows.open();
  page.setDefaultTimeout(5000);
  const h = host(page);
  await h.start(snapshot([], { presence: available, ...extra }), language);
  return h;
}

const commandsNamed = async (h: ReturnType<typeof host>, name: string) => (await h.commands()).filter((c) => c.name === name).map((c) => c.params);
const presenceSelect = () => page.getByRole('combobox', { name: 'Presence', exact: true });
const optionTexts = (select: ReturnType<Page['getByRole']>) => select.locator('option').allTextContents();
const selectedText = (select: ReturnType<Page['getByRole']>) => select.evaluate((s: HTMLSelectElement) => s.selectedOptions[0]?.textContent ?? null);
const acw = () => page.getByRole('region', { name: 'After-call work', exact: true });
const recentCall = (name: string) => page.getByRole('list', { name: 'Recent calls' }).getByRole('listitem').filter({ hasText: name });
const description = (locator: ReturnType<Page['getByRole']>) => locator.evaluate((el) => (el.getAttribute('aria-describedby') ?? '').split(' ').map((id) => document.getElementById(id)?.textContent ?? '').join(' '));
const focusedLabel = () => page.evaluate(() => (document.activeElement as HTMLElement | null)?.id ?? null);

describe('the "Presence" select', () => {
  test('offers "Available", a break per team reason, "Do not disturb"; a break sends its reason', async () => {
    const h = await open({ team: team({ breakReasons: ['Lunch', 'Short break'] }) });
    await expect.poll(() => optionTexts(presenceSelect())).toEqual(['Available', 'Break — Lunch', 'Break — Short break', 'Do not disturb']);
    await h.answer('setPresence', ok({ choice: 'break', status: 'break', breakReason: 'Short break' }));
    await presenceSelect().selectOption({ label: 'Break — Short break' });
    await expect.poll(() => commandsNamed(h, 'setPresence')).toEqual([{ status: 'break', reason: 'Short break' }]);
    await expect.poll(() => selectedText(presenceSelect())).toBe('Break — Short break');

    await h.answer('setPresence', ok({ choice: 'dnd', status: 'dnd' }));
    await presenceSelect().selectOption({ label: 'Do not disturb' });
    await expect.poll(() => commandsNamed(h, 'setPresence')).toEqual([{ status: 'break', reason: 'Short break' }, { status: 'dnd' }]);
  });

  test('the team\'s defaults until told; teamChanged brings new reasons and keeps the agent\'s own, now dropped', async () => {
    const h = await open({ presence: { choice: 'break', status: 'break', breakReason: 'Lunch' } });
    await expect.poll(() => optionTexts(presenceSelect())).toEqual(['Available', ...DEFAULT_TEAM_SETTINGS.breakReasons.map((r) => `Break — ${r}`), 'Do not disturb']);
    await h.push('teamChanged', team({ breakReasons: ['Coaching', 'Meeting'] }));
    await expect.poll(() => optionTexts(presenceSelect())).toEqual(['Available', 'Break — Coaching', 'Break — Meeting', 'Break — Lunch', 'Do not disturb']);
    await expect(selectedText(presenceSelect())).resolves.toBe('Break — Lunch');
    // Once off that break, the dropped reason is no longer offered.
    await h.push('presenceChanged', available);
    await expect.poll(() => optionTexts(presenceSelect())).toEqual(['Available', 'Break — Coaching', 'Break — Meeting', 'Do not disturb']);
  });

  test('a refused break is said', async () => {
    const h = await open({ team: team({ breakReasons: ['Lunch'] }) });
    await h.answer('setPresence', err('invalid_input', 'reason: must be one of the team\'s break reasons: Lunch'));
    await presenceSelect().selectOption({ label: 'Break — Lunch' });
    await expect(page.locator('header').getByRole('alert').textContent()).resolves.toBe('reason: must be one of the team\'s break reasons: Lunch');
  });

  test('the header says "After-call work" while it goes on', async () => {
    const h = await open({ presence: inAfterCallWork() });
    await page.locator('header').getByText('After-call work', { exact: true }).waitFor();
    await h.push('presenceChanged', available);
    await page.locator('header').getByText('After-call work', { exact: true }).waitFor({ state: 'detached' });
  });
});

describe('after-call work', () => {
  test('counts down in m:ss, and the live region says it started, not every second', async () => {
    await open({ presence: inAfterCallWork({ endsAt: Date.now() + 75_000 }), history: [answeredCall('wacid.1', 'Amelia Hart', 1000)] });
    const timer = acw().getByRole('timer');
    await expect.poll(async () => (await timer.textContent())?.replace('Time left: ', '')).toMatch(/^1:1[45]$/);
    const first = await timer.textContent();
    await expect.poll(() => timer.textContent(), { timeout: 3000 }).not.toBe(first);
    await acw().getByText('After your call with Amelia Hart').waitFor();
    const live = page.getByRole('status').filter({ hasText: 'After-call work started' });
    await expect(live.textContent()).resolves.toBe('After-call work started');
    // The clock itself is not live.
    await expect(timer.evaluate((el) => el.closest('[aria-live]') === null)).resolves.toBe(true);
  });

  test('"Ready" ends it: the region goes and the live region says so', async () => {
    const h = await open({ presence: inAfterCallWork() });
    await h.answer('endAfterCallWork', ok(available));
    await acw().getByRole('button', { name: 'Ready', exact: true }).click();
    await expect.poll(() => commandsNamed(h, 'endAfterCallWork')).toEqual([{}]);
    await acw().waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'After-call work ended' }).waitFor();
  });

  test('a refused "Ready" is said in the region', async () => {
    const h = await open({ presence: inAfterCallWork() });
    await h.answer('endAfterCallWork', err('invalid_state', 'The wrap-up is not saved yet'));
    await acw().getByRole('button', { name: 'Ready', exact: true }).click();
    await expect(acw().getByRole('alert').textContent()).resolves.toBe('The wrap-up is not saved yet');
  });

  test('while the wrap-up is awaited "Ready" is aria-disabled with its reason and sends nothing; past zero it says the work goes on', async () => {
    const h = await open({ presence: inAfterCallWork({ waitingForWrapUp: true, endsAt: Date.now() + 1500 }), team: team({ dispositionRequired: true }) });
    const ready = acw().getByRole('button', { name: 'Ready', exact: true });
    await expect(ready.getAttribute('aria-disabled')).resolves.toBe('true');
    await expect(description(ready)).resolves.toBe('Save the wrap-up first');
    await acw().getByText('Save the wrap-up first').waitFor();
    // Playwright will not click what says it is disabled; the agent can.
    await ready.dispatchEvent('click');
    expect(await commandsNamed(h, 'endAfterCallWork')).toEqual([]);

    const overtime = 'Time is up: after-call work goes on until the wrap-up is saved';
    await acw().getByText(overtime).waitFor();
    await expect(acw().getByRole('timer').count()).resolves.toBe(0);
    await page.getByRole('status').filter({ hasText: overtime }).waitFor();

    // The wrap-up saved, the main process stops waiting: "Ready" works again.
    await h.push('presenceChanged', inAfterCallWork({ waitingForWrapUp: false, endsAt: Date.now() + 10_000 }));
    await expect.poll(() => ready.getAttribute('aria-disabled')).toBeNull();
  });
});

describe('the wrap-up', () => {
  const SAVED_AT = Date.now();
  const savedEntry = (wrapUp: Partial<WrapUp>): HistoryEntry =>
    answeredCall('wacid.1', 'Amelia Hart', 1000, { wrapUp: { disposition: 'Sale', notes: 'Two headsets', savedAt: SAVED_AT, synced: true, ...wrapUp } });

  test('"Disposition" lists the team\'s codes, with "None" only when the team does not require one', async () => {
    const h = await open({ presence: inAfterCallWork(), history: [answeredCall('wacid.1', 'Amelia Hart', 1000)], team: team({ dispositions: ['Resolved', 'Sale'] }) });
    const disposition = acw().getByRole('combobox', { name: 'Disposition' });
    await expect.poll(() => optionTexts(disposition)).toEqual(['None', 'Resolved', 'Sale']);
    await expect(selectedText(disposition)).resolves.toBe('None');
    await h.push('teamChanged', team({ dispositions: ['Resolved', 'Sale'], dispositionRequired: true }));
    await expect.poll(() => optionTexts(disposition)).toEqual(['Choose a disposition', 'Resolved', 'Sale']);
    await disposition.selectOption('Sale');
    await expect.poll(() => optionTexts(disposition)).toEqual(['Resolved', 'Sale']);
  });

  test('"Save wrap-up" sends it; a refusal naming a field is said at that field, and nothing typed is lost', async () => {
    const h = await open({ presence: inAfterCallWork({ waitingForWrapUp: true }), history: [answeredCall('wacid.1', 'Amelia Hart', 1000)], team: team({ dispositionRequired: true }) });
    const form = acw().getByRole('form', { name: 'Wrap-up' });
    const disposition = form.getByRole('combobox', { name: 'Disposition' });
    const notes = form.getByRole('textbox', { name: 'Notes' });

    // Required and not chosen: said at the field, the focus there, nothing sent.
    await form.getByRole('button', { name: 'Save wrap-up' }).click();
    await expect(form.getByRole('alert').textContent()).resolves.toBe('Disposition: Is required: the team asks for a disposition on every call');
    await expect(disposition.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(description(disposition)).resolves.toBe('Disposition: Is required: the team asks for a disposition on every call');
    await expect.poll(focusedLabel).toBe('acw-wrapup-disposition');
    expect(await commandsNamed(h, 'saveWrapUp')).toEqual([]);

    await disposition.selectOption('Follow-up needed');
    await expect(form.getByRole('alert').count()).resolves.toBe(0);
    await notes.fill('Call back on Thursday');
    await h.answer('saveWrapUp', {
      ok: false,
      error: { code: 'invalid_input', message: 'disposition: must be one of the team\'s dispositions: Resolved, Sale', field: 'disposition', text: { code: 'common.fieldRule', values: { field: 'disposition', rule: { code: 'team.disposition', values: { values: { list: ['Resolved', 'Sale'], join: 'comma' } } } } } },
    });
    await form.getByRole('button', { name: 'Save wrap-up' }).click();
    await expect(form.getByRole('alert').textContent()).resolves.toBe('Disposition: Must be one of the team\'s dispositions: Resolved, Sale');
    await expect(disposition.inputValue()).resolves.toBe('Follow-up needed');
    await expect(notes.inputValue()).resolves.toBe('Call back on Thursday');

    // A refusal about neither field is said above the button; the draft stays still.
    await h.answer('saveWrapUp', err('gateway_unreachable', 'connect ECONNREFUSED'));
    await form.getByRole('button', { name: 'Save wrap-up' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toMatch(/^The wrap-up was not saved: /);
    await expect(notes.inputValue()).resolves.toBe('Call back on Thursday');

    const saved = answeredCall('wacid.1', 'Amelia Hart', 1000, { wrapUp: { disposition: 'Follow-up needed', notes: 'Call back on Thursday', savedAt: Date.now(), synced: false } });
    await h.answer('saveWrapUp', ok(saved));
    await form.getByRole('button', { name: 'Save wrap-up' }).click();
    await form.getByRole('status').filter({ hasText: 'Wrap-up saved' }).waitFor();
    expect(await commandsNamed(h, 'saveWrapUp')).toEqual([
      { localId: 'in:wacid.1', disposition: 'Follow-up needed', notes: 'Call back on Thursday' },
      { localId: 'in:wacid.1', disposition: 'Follow-up needed', notes: 'Call back on Thursday' },
      { localId: 'in:wacid.1', disposition: 'Follow-up needed', notes: 'Call back on Thursday' },
    ]);
    // Recent calls show it at once, not yet with the team.
    await recentCall('Amelia Hart').getByText('Not sent to the team yet').waitFor();
  });

  test('"None" sends a null disposition', async () => {
    const h = await open({ presence: inAfterCallWork(), history: [answeredCall('wacid.1', 'Amelia Hart', 1000)] });
    await h.answer('saveWrapUp', ok(savedEntry({ disposition: null, notes: '' })));
    await acw().getByRole('button', { name: 'Save wrap-up' }).click();
    await expect.poll(() => commandsNamed(h, 'saveWrapUp')).toEqual([{ localId: 'in:wacid.1', disposition: null, notes: '' }]);
  });

  test('"Notes" counts its characters and refuses more than the most', async () => {
    const h = await open({ presence: inAfterCallWork(), history: [answeredCall('wacid.1', 'Amelia Hart', 1000)] });
    const form = acw().getByRole('form', { name: 'Wrap-up' });
    const notes = form.getByRole('textbox', { name: 'Notes' });
    await notes.fill('Hello');
    await form.getByText(`5/${WRAP_UP_NOTES_MAX.toLocaleString('en')}`).waitFor();
    await expect(description(notes)).resolves.toBe(`At most ${WRAP_UP_NOTES_MAX.toLocaleString('en')} characters`);
    await notes.fill('x'.repeat(WRAP_UP_NOTES_MAX + 1));
    await form.getByRole('button', { name: 'Save wrap-up' }).click();
    await expect(form.getByRole('alert').textContent()).resolves.toBe(`Notes: Must be at most ${WRAP_UP_NOTES_MAX} characters`);
    expect(await commandsNamed(h, 'saveWrapUp')).toEqual([]);
  });

  test('in recent calls: "Wrap-up" opens the form; its draft outlives closing, reopening and new history', async () => {
    const h = await open({ history: [answeredCall('wacid.1', 'Amelia Hart', HOUR)] });
    const row = recentCall('Amelia Hart');
    const toggle = row.getByRole('button', { name: 'Wrap-up', exact: true });
    await expect(toggle.getAttribute('aria-expanded')).resolves.toBe('false');
    await toggle.click();
    await expect(toggle.getAttribute('aria-expanded')).resolves.toBe('true');
    const form = row.getByRole('form', { name: 'Wrap-up' });
    await form.getByRole('combobox', { name: 'Disposition' }).selectOption('Resolved');
    await form.getByRole('textbox', { name: 'Notes' }).fill('Fixed the router');
    await toggle.click();
    await form.waitFor({ state: 'detached' });
    await h.push('historyChanged', [answeredCall('wacid.1', 'Amelia Hart', HOUR), answeredCall('wacid.2', 'Jonas Berg', 2 * HOUR)]);
    await recentCall('Jonas Berg').waitFor();
    await toggle.click();
    await expect(form.getByRole('textbox', { name: 'Notes' }).inputValue()).resolves.toBe('Fixed the router');
    await expect(form.getByRole('combobox', { name: 'Disposition' }).inputValue()).resolves.toBe('Resolved');

    await h.answer('saveWrapUp', ok(answeredCall('wacid.1', 'Amelia Hart', HOUR, { wrapUp: { disposition: 'Resolved', notes: 'Fixed the router', savedAt: Date.now(), synced: true } })));
    await form.getByRole('button', { name: 'Save wrap-up' }).click();
    await row.getByRole('button', { name: 'Edit wrap-up', exact: true }).waitFor();
    await row.getByText('Saved', { exact: true }).waitFor();
  });

  test('is offered within 24 hours of an answered call\'s end only; a saved one still shows after', async () => {
    await open({
      history: [
        answeredCall('wacid.1', 'Amelia Hart', 23 * HOUR),
        answeredCall('wacid.2', 'Jonas Berg', 25 * HOUR),
        answeredCall('wacid.3', 'Maya Chen', 30 * HOUR, { wrapUp: { disposition: 'Resolved', notes: 'Done', savedAt: Date.now() - 29 * HOUR, synced: true } }),
        answeredCall('wacid.4', 'Olu Adeyemi', HOUR, { outcome: 'missed', durationSec: 0 }),
        answeredCall('wacid.5', 'Zoë Tran', HOUR, { outcome: 'transferred', transferredTo: 'Ben Okafor' }),
      ],
    });
    await recentCall('Amelia Hart').getByRole('button', { name: 'Wrap-up', exact: true }).waitFor();
    await recentCall('Zoë Tran').getByRole('button', { name: 'Wrap-up', exact: true }).waitFor();
    for (const name of ['Jonas Berg', 'Maya Chen', 'Olu Adeyemi']) {
      await expect(recentCall(name).getByRole('button', { name: /wrap-up/i }).count(), name).resolves.toBe(0);
    }
    await recentCall('Maya Chen').getByText('Resolved', { exact: true }).waitFor();
  });

  test('recent calls say whether the team has it: saved, not sent yet (why), kept here only (why); long notes shortened, whole a click away', async () => {
    const long = `Customer wants a callback on Thursday about the renewal of the premium plan; they were unhappy about the price change and asked for a discount code.`;
    await open({
      history: [
        answeredCall('wacid.1', 'Amelia Hart', HOUR, { wrapUp: { disposition: 'Sale', notes: 'Two headsets', savedAt: SAVED_AT, synced: true } }),
        answeredCall('wacid.2', 'Jonas Berg', 2 * HOUR, { wrapUp: { disposition: 'Follow-up needed', notes: long, savedAt: SAVED_AT, synced: false, syncError: 'The relay could not be reached' } }),
        answeredCall('wacid.3', 'Maya Chen', 3 * HOUR, { wrapUp: { disposition: null, notes: '', savedAt: SAVED_AT, synced: false, refused: true, syncError: 'a wrap-up can be changed for 24 hours after the call' } }),
      ],
    });
    await recentCall('Amelia Hart').getByText('Saved', { exact: true }).waitFor();
    await recentCall('Amelia Hart').getByText('Two headsets').waitFor();
    await recentCall('Jonas Berg').getByText('Not sent to the team yet: The relay could not be reached').waitFor();
    await recentCall('Maya Chen').getByText('Kept on this computer only: a wrap-up can be changed for 24 hours after the call').waitFor();
    await recentCall('Maya Chen').getByText('No disposition').waitFor();

    const jonas = recentCall('Jonas Berg');
    const shown = jonas.locator('.wrapup-notes bdi');
    const short = await shown.textContent();
    expect(short?.endsWith('…')).toBe(true);
    expect(long.startsWith(short!.slice(0, -1))).toBe(true);
    const more = jonas.getByRole('button', { name: 'Show all notes' });
    await expect(more.getAttribute('aria-expanded')).resolves.toBe('false');
    await more.click();
    await expect(shown.textContent()).resolves.toBe(long);
    await jonas.getByRole('button', { name: 'Show less' }).waitFor();
  });

  test('axe finds nothing serious in after-call work and an open wrap-up, light and dark', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      page = await windows.open({ colorScheme });
      page.setDefaultTimeout(5000);
      await host(page).start(
        snapshot([], {
          presence: inAfterCallWork({ waitingForWrapUp: true }),
          team: team({ dispositionRequired: true }),
          history: [answeredCall('wacid.1', 'Amelia Hart', 1000), savedEntry({ synced: false, syncError: 'The relay could not be reached' })].map((e, i) => ({ ...e, localId: `in:wacid.${i + 1}` })),
        }),
      );
      await page.getByRole('button', { name: 'Edit wrap-up', exact: true }).click();
      const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
      const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), colorScheme).toEqual([]);
      await page.close();
    }
  });

  test('speaks the agent\'s language', async () => {
    await open({ presence: inAfterCallWork({ waitingForWrapUp: true }), team: team({ breakReasons: ['Lunch'] }) }, 'es');
    await expect.poll(() => optionTexts(page.getByRole('combobox', { name: 'Estado' }))).toContain('Pausa — Lunch');
    const region = page.getByRole('region', { name: 'Trabajo posterior a la llamada' });
    await region.getByRole('button', { name: 'Listo', exact: true }).waitFor();
    await region.getByText('Guarda primero el cierre').waitFor();
    await region.getByRole('button', { name: 'Guardar cierre' }).waitFor();
  });
});
