// The wrap-up asked for as a call ends, in Chromium (window-in-chromium.ts): with no after-call work,
// a card "Wrap-up" where that panel would be, after a call the agent talked on only; "Later", a save
// and a new call close it; the draft is the one recent calls open. The host's pushes come in the main
// process's order: the history, the ended call, then the presence that says whether after-call work follows.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import type { AgentPresence, AppSnapshot } from '../../../shared/api';
import type { CallState, EndedCall, EndReason } from '../../../shared/call-state';
import { historyEntryFor, type HistoryEntry } from '../../../shared/history';
import type { UiLanguage } from '../../../shared/i18n/languages';
import { ok } from '../../../shared/result';
import { active, ringing, snapshot } from './fixtures';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();
let page: Page;
let h: ReturnType<typeof host>;

const available: AgentPresence = { choice: 'available', status: 'available' };
const onCall: AgentPresence = { choice: 'available', status: 'on_call' };
let history: HistoryEntry[] = [];

async function open(extra: Partial<AppSnapshot> = {}, options: { language?: UiLanguage; colorScheme?: 'light' | 'dark' } = {}): Promise<void> {
  history = [];
  page = await windows.open(options.colorScheme ? { colorScheme: options.colorScheme } : {});
  page.setDefaultTimeout(5000);
  h = host(page);
  await h.start(snapshot([], { presence: available, ...extra }), options.language);
}

const call = (id: string, name: string): CallState => {
  const ring = ringing(id, Date.now() - 60_000);
  return { ...ring, peer: { ...ring.peer, name } };
};

/** A call that rings and is answered: the presence says the agent is on it. */
async function talk(id: string, name: string): Promise<void> {
  await h.push('callChanged', call(id, name));
  await h.push('callChanged', { ...active(id, Date.now() - 60_000), peer: call(id, name).peer });
  await h.push('presenceChanged', onCall);
}

/** The call ends as the main process tells it: its recent-calls entry, the ended call, then the presence. */
async function end(id: string, name: string, how: EndReason, presence: AgentPresence = available, durationSec = 55): Promise<EndedCall> {
  const ended: EndedCall = { ...call(id, name), phase: 'ended', end: how, endedAt: Date.now(), durationSec };
  history = [historyEntryFor(ended), ...history];
  await h.push('historyChanged', history);
  await h.push('callChanged', ended);
  await h.push('presenceChanged', presence);
  return ended;
}

const completed: EndReason = { kind: 'completed', by: 'customer' };
const card = () => page.getByRole('region', { name: 'Wrap-up', exact: true });
const acw = () => page.getByRole('region', { name: 'After-call work', exact: true });
const recentCall = (name: string) => page.getByRole('list', { name: 'Recent calls' }).getByRole('listitem').filter({ hasText: name });
const focusedId = () => page.evaluate(() => document.activeElement?.id ?? null);
const commandsNamed = async (name: string) => (await h.commands()).filter((c) => c.name === name).map((c) => c.params);
/** Waits until the window has drawn what the last push brought, so that a card that should not be there would be. */
const settled = () => recentCall(history[0]?.name ?? '').first().waitFor();

describe('the wrap-up card', () => {
  test('appears when a talked-on call ends with no after-call work, once the presence says the call is over, without taking the focus', async () => {
    await open();
    const dial = page.getByRole('textbox', { name: 'Phone number' });
    await dial.focus();
    await talk('wacid.1', 'Amelia Hart');
    const ended: EndedCall = { ...call('wacid.1', 'Amelia Hart'), phase: 'ended', end: completed, endedAt: Date.now(), durationSec: 55 };
    await h.push('historyChanged', [historyEntryFor(ended)]);
    await h.push('callChanged', ended);
    // Still "on a call" as far as the main process has said: after-call work may yet follow.
    await recentCall('Amelia Hart').waitFor();
    await expect(card().count()).resolves.toBe(0);

    await h.push('presenceChanged', available);
    await card().waitFor();
    await card().getByText('After your call with Amelia Hart').waitFor();
    await card().getByRole('heading', { name: 'Wrap-up', level: 2 }).waitFor();
    const form = card().getByRole('form', { name: 'Wrap-up' });
    await form.getByRole('combobox', { name: 'Disposition' }).waitFor();
    await form.getByRole('textbox', { name: 'Notes' }).waitFor();
    await form.getByRole('button', { name: 'Save wrap-up' }).waitFor();
    await card().getByRole('button', { name: 'Later', exact: true }).waitFor();
    expect(await focusedId()).toBe('dial-number');
    await expect(acw().count()).resolves.toBe(0);
    // Between the call and the dialer, where the after-call work panel goes.
    const order = await page.evaluate(() => [...document.querySelectorAll('.col-phone > section')].map((s) => s.className.split(' ').find((c) => ['current', 'wrapup-card', 'dialer'].includes(c))).filter(Boolean));
    expect(order).toEqual(['current', 'wrapup-card', 'dialer']);
  });

  test('also after a transfer and a call that failed during the talk; not after a missed, declined, answered-elsewhere or failed-unanswered call', async () => {
    await open();
    const unasked: [string, string, EndReason, number][] = [
      ['wacid.1', 'Olu Adeyemi', { kind: 'missed' }, 0],
      ['wacid.2', 'Maya Chen', { kind: 'declined' }, 0],
      ['wacid.3', 'Jonas Berg', { kind: 'answered_elsewhere' }, 0],
      ['wacid.4', 'Ines Duarte', { kind: 'failed', code: 'media_failed', message: 'The call failed' }, 0],
    ];
    for (const [id, name, how, duration] of unasked) {
      await h.push('callChanged', call(id, name));
      await end(id, name, how, available, duration);
      await settled();
      await expect(card().count(), name).resolves.toBe(0);
    }

    await talk('wacid.5', 'Zoë Tran');
    await end('wacid.5', 'Zoë Tran', { kind: 'transferred', to: 'Ben Okafor' });
    await card().getByText('After your call with Zoë Tran').waitFor();
    await talk('wacid.6', 'Kofi Mensah');
    await card().waitFor({ state: 'detached' });
    await end('wacid.6', 'Kofi Mensah', { kind: 'failed', code: 'media_failed', message: 'The network connection was lost' });
    await card().getByText('After your call with Kofi Mensah').waitFor();
  });

  test('after-call work for the call shows its panel instead, never both; "Ready" brings no card', async () => {
    await open();
    await talk('wacid.1', 'Amelia Hart');
    const working: AgentPresence = {
      choice: 'available',
      status: 'after_call_work',
      afterCallWork: { localId: 'in:wacid.1', callId: 'wacid.1', startedAt: Date.now(), endsAt: Date.now() + 30_000, waitingForWrapUp: false },
    };
    await end('wacid.1', 'Amelia Hart', completed, working);
    await acw().getByRole('form', { name: 'Wrap-up' }).waitFor();
    await expect(card().count()).resolves.toBe(0);

    await h.answer('endAfterCallWork', ok(available));
    await acw().getByRole('button', { name: 'Ready', exact: true }).click();
    await acw().waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'After-call work ended' }).waitFor();
    await expect(card().count()).resolves.toBe(0);
  });

  test('"Later" closes it with the draft kept: recent calls\' "Wrap-up" opens it again; the focus goes on to the phone number', async () => {
    await open();
    await talk('wacid.1', 'Amelia Hart');
    await end('wacid.1', 'Amelia Hart', completed);
    const form = card().getByRole('form', { name: 'Wrap-up' });
    await form.getByRole('combobox', { name: 'Disposition' }).selectOption('Resolved');
    await form.getByRole('textbox', { name: 'Notes' }).fill('Router reset, works now');
    await card().getByRole('button', { name: 'Later', exact: true }).click();
    await card().waitFor({ state: 'detached' });
    await expect.poll(focusedId).toBe('dial-number');
    expect(await commandsNamed('saveWrapUp')).toEqual([]);

    const row = recentCall('Amelia Hart');
    await row.getByRole('button', { name: 'Wrap-up', exact: true }).click();
    const again = row.getByRole('form', { name: 'Wrap-up' });
    await expect(again.getByRole('textbox', { name: 'Notes' }).inputValue()).resolves.toBe('Router reset, works now');
    await expect(again.getByRole('combobox', { name: 'Disposition' }).inputValue()).resolves.toBe('Resolved');
    // Closed, it stays closed: nothing brings it back by itself.
    await h.push('presenceChanged', { choice: 'dnd', status: 'dnd' });
    await h.push('presenceChanged', available);
    await expect(card().count()).resolves.toBe(0);
  });

  test('a save closes it and says "Wrap-up saved" politely for a moment; recent calls show the wrap-up', async () => {
    await open();
    await talk('wacid.1', 'Amelia Hart');
    const ended = await end('wacid.1', 'Amelia Hart', completed);
    const form = card().getByRole('form', { name: 'Wrap-up' });
    await form.getByRole('textbox', { name: 'Notes' }).fill('Two headsets');
    await h.answer('saveWrapUp', ok({ ...historyEntryFor(ended), wrapUp: { disposition: null, notes: 'Two headsets', savedAt: Date.now(), synced: true } }));
    await form.getByRole('button', { name: 'Save wrap-up' }).click();
    await card().waitFor({ state: 'detached' });
    expect(await commandsNamed('saveWrapUp')).toEqual([{ localId: 'in:wacid.1', disposition: null, notes: 'Two headsets' }]);
    const status = page.locator('.wrapup-card-status');
    await expect(status.getAttribute('role')).resolves.toBe('status');
    await expect(status.textContent()).resolves.toBe('Wrap-up saved');
    await expect(status.isVisible()).resolves.toBe(true);
    await expect(status.evaluate((el) => el.closest('[aria-live="assertive"]'))).resolves.toBeNull();
    await expect.poll(focusedId).toBe('dial-number');
    await recentCall('Amelia Hart').getByText('Two headsets').waitFor();
    // Then it goes, leaving nothing seen in the column.
    await expect.poll(() => status.count(), { timeout: 8000 }).toBe(0);
    await expect(page.getByRole('status').filter({ hasText: 'Wrap-up saved' }).count()).resolves.toBe(0);
  });

  test('a save from recent calls\' form closes it too', async () => {
    await open();
    await talk('wacid.1', 'Amelia Hart');
    const ended = await end('wacid.1', 'Amelia Hart', completed);
    await card().waitFor();
    const row = recentCall('Amelia Hart');
    await row.getByRole('button', { name: 'Wrap-up', exact: true }).click();
    await h.answer('saveWrapUp', ok({ ...historyEntryFor(ended), wrapUp: { disposition: null, notes: '', savedAt: Date.now(), synced: true } }));
    await row.getByRole('button', { name: 'Save wrap-up' }).click();
    await card().waitFor({ state: 'detached' });
  });

  test('a new call ringing closes it and takes its place; it does not come back; the next talked-on call gets its own', async () => {
    await open();
    await talk('wacid.1', 'Amelia Hart');
    await end('wacid.1', 'Amelia Hart', completed);
    await card().getByRole('textbox', { name: 'Notes' }).fill('Half typed');
    await h.push('callChanged', call('wacid.2', 'Jonas Berg'));
    await page.getByRole('dialog', { name: 'Incoming call' }).waitFor();
    await card().waitFor({ state: 'detached' });
    // The customer gives up: no card, and not the old one again.
    await end('wacid.2', 'Jonas Berg', { kind: 'missed' }, available, 0);
    await page.getByRole('dialog', { name: 'Incoming call' }).waitFor({ state: 'detached' });
    await expect(card().count()).resolves.toBe(0);

    // A call placed from the dialer closes it too; the latest call's card is its own.
    await talk('wacid.3', 'Maya Chen');
    await end('wacid.3', 'Maya Chen', completed);
    await card().getByText('After your call with Maya Chen').waitFor();
    await expect(card().getByRole('textbox', { name: 'Notes' }).inputValue()).resolves.toBe('');
    await h.push('callChanged', { phase: 'dialing', direction: 'outgoing', localId: 'out-1', peer: { number: '14155550123' }, createdAt: Date.now() });
    await card().waitFor({ state: 'detached' });
    // The first call's draft is where it was.
    await recentCall('Amelia Hart').getByRole('button', { name: 'Wrap-up', exact: true }).click();
    await expect(recentCall('Amelia Hart').getByRole('textbox', { name: 'Notes' }).inputValue()).resolves.toBe('Half typed');
  });

  test('axe finds nothing serious in the card, light and dark', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      await open({}, { colorScheme });
      await talk('wacid.1', 'Amelia Hart');
      await end('wacid.1', 'Amelia Hart', completed);
      await card().waitFor();
      const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
      const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), colorScheme).toEqual([]);
      await page.context().close();
    }
  });

  test('speaks the agent\'s language', async () => {
    await open({}, { language: 'es' });
    await talk('wacid.1', 'Amelia Hart');
    await end('wacid.1', 'Amelia Hart', completed);
    const region = page.getByRole('region', { name: 'Cierre de la llamada', exact: true });
    await region.getByText('Después de tu llamada con Amelia Hart').waitFor();
    await region.getByRole('button', { name: 'Más tarde', exact: true }).waitFor();
    await region.getByRole('button', { name: 'Guardar cierre' }).waitFor();
  });
});
