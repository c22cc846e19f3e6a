// Transfers, consults and three-way calls in the window, in Chromium (window-in-chromium.ts): the
// real App on a host whose answers each test gives, found by role and name as the agent's tools
// find them. The dialog is a real modal <dialog>, so its focus, Escape and the inert page behind it
// are the browser's own.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import type { CallState } from '../../../shared/call-state';
import type { HistoryEntry } from '../../../shared/history';
import type { UiLanguage } from '../../../shared/i18n/languages';
import { err, ok } from '../../../shared/result';
import { BEN, TEAM, active, bridgedActive, ended, endedWith, ringing, snapshot, transferOf, transferRinging } from './fixtures';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();
let page: Page;

const LOCAL = 'in:wacid.1';
const now = () => Date.now();

/** The window on these calls, with this team behind "Transfer to" (unless the test answers getTeam itself). */
async function open(calls: CallState[], options: { team?: boolean; language?: UiLanguage } = {}): Promise<ReturnType<typeof host>> {
  page = await windows.open();
  page.setDefaultTimeout(5000);
  const h = host(page);
  if (options.team !== false) await h.answer('getTeam', ok(TEAM));
  await h.start(snapshot(calls), options.language);
  return h;
}

const panel = () => page.getByRole('region', { name: 'Current call' });
const button = (name: string) => panel().getByRole('button', { name, exact: true });
const focusedName = () => page.evaluate(() => (document.activeElement as HTMLElement | null)?.textContent?.trim() ?? null);
const commandsNamed = async (h: ReturnType<typeof host>, name: string) => (await h.commands()).filter((c) => c.name === name).map((c) => c.params);

describe('"Transfer" and "Consult"', () => {
  test('are offered beside Hold on an active call through the bridge, not on a direct one', async () => {
    const h = await open([active('wacid.2', now())]);
    await button('Hold').waitFor();
    await expect(button('Transfer').count()).resolves.toBe(0);
    await expect(button('Consult').count()).resolves.toBe(0);

    await h.push('callChanged', bridgedActive(undefined, 'wacid.1', now() + 1));
    const names = await panel().locator('.call-controls button').allTextContents();
    expect(names).toEqual(['Mute', 'Hold', 'Keypad', 'Transfer', 'Consult', 'Hang up']);
  });

  test('are not offered while the call rings or connects', async () => {
    await open([{ ...ringing('wacid.1', now()), bridged: true }]);
    await page.getByRole('dialog', { name: 'Incoming call' }).waitFor();
    await expect(page.getByRole('button', { name: 'Transfer', exact: true }).count()).resolves.toBe(0);
  });
});

describe('the "Transfer to" dialog', () => {
  test('says it loads the team, then lists "Anyone available" and every colleague but the agent, by name, with their presence', async () => {
    const h = await open([bridgedActive(undefined, 'wacid.1', now())], { team: false });
    await h.defer('getTeam');
    await button('Transfer').click();
    const dialog = page.getByRole('dialog', { name: 'Transfer to' });
    await dialog.waitFor();
    await expect(dialog.evaluate((d) => d.matches(':modal'))).resolves.toBe(true);
    // Whose call goes on: the customer, as the dialog's description.
    await expect(dialog.evaluate((d) => document.getElementById(d.getAttribute('aria-describedby') ?? '')?.textContent)).resolves.toBe('Amelia Hart');
    await dialog.getByRole('status').filter({ hasText: 'Loading the team…' }).waitFor();
    // The focus is in the dialog from the start.
    await expect(dialog.evaluate((d) => d.contains(document.activeElement))).resolves.toBe(true);

    await expect(h.settle('getTeam', ok(TEAM))).resolves.toBe(true);
    const list = dialog.getByRole('list', { name: 'Colleagues' });
    await list.getByRole('button', { name: 'Anyone available' }).waitFor();
    expect(await list.getByRole('button').allTextContents()).toEqual(['Anyone available', 'Ben Okafor', 'Cato Silva', 'Dana Kim', 'eli Novak', 'Olu Adeyemi', 'Zoë Tran']);
    await expect(dialog.getByRole('button', { name: 'Amara Diaz' }).count()).resolves.toBe(0);

    const presence: Record<string, string> = {
      'Ben Okafor': 'Available',
      'Cato Silva': 'On a call, can take another',
      'Dana Kim': 'Do not disturb',
      'eli Novak': 'On a call',
      'Olu Adeyemi': 'Offline',
      'Zoë Tran': 'Available',
    };
    for (const [name, words] of Object.entries(presence)) {
      const colleague = list.getByRole('button', { name, exact: true });
      await expect.poll(() => colleague.evaluate((b) => document.getElementById(b.getAttribute('aria-describedby') ?? '')?.textContent)).toBe(words);
      await expect(colleague.isDisabled()).resolves.toBe(words === 'Offline' || words === 'Do not disturb');
    }
    // Once the team is there, the first choice has the focus.
    expect(await focusedName()).toBe('Anyone available');
  });

  test('Escape closes it and gives the focus back to "Transfer"; "Cancel" does the same for "Consult with"', async () => {
    await open([bridgedActive(undefined, 'wacid.1', now())]);
    await button('Transfer').focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Transfer to' });
    await dialog.getByRole('button', { name: 'Anyone available' }).waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await focusedName()).toBe('Transfer');

    await button('Consult').click();
    const consult = page.getByRole('dialog', { name: 'Consult with' });
    await consult.getByRole('button', { name: 'Ben Okafor' }).waitFor();
    await consult.getByRole('button', { name: 'Cancel' }).click();
    await consult.waitFor({ state: 'detached' });
    expect(await focusedName()).toBe('Consult');
  });

  test('a team that cannot be loaded says why and offers "Try again"', async () => {
    const h = await open([bridgedActive(undefined, 'wacid.1', now())], { team: false });
    await h.answer('getTeam', err('gateway_unreachable', 'connect ECONNREFUSED 127.0.0.1:8788'));
    await button('Transfer').click();
    const dialog = page.getByRole('dialog', { name: 'Transfer to' });
    await expect(dialog.getByRole('alert').textContent()).resolves.toBe('The team could not be loaded. Cannot reach the calling service. Check the network connection and try again.');
    await expect.poll(focusedName).toBe('Try again');

    await h.answer('getTeam', ok(TEAM));
    await dialog.getByRole('button', { name: 'Try again' }).click();
    await dialog.getByRole('button', { name: 'Ben Okafor' }).waitFor();
    await expect(dialog.getByRole('alert').count()).resolves.toBe(0);
    expect(await commandsNamed(h, 'getTeam')).toHaveLength(2);
  });

  test('a refused choice is said in the dialog and the list stays; a choice taken closes it, and the focus goes to "Cancel transfer"', async () => {
    const h = await open([bridgedActive(undefined, 'wacid.1', now())]);
    await h.answer('transferCall', err('invalid_state', 'Ben Okafor is offline'));
    await button('Transfer').click();
    const dialog = page.getByRole('dialog', { name: 'Transfer to' });
    await dialog.getByRole('button', { name: 'Ben Okafor' }).click();
    await expect(dialog.getByRole('alert').textContent()).resolves.toBe('Ben Okafor is offline');
    await expect(dialog.getByRole('button', { name: 'Zoë Tran' }).isEnabled()).resolves.toBe(true);

    await h.answer('transferCall', ok({ transferId: 'tr-1' }));
    await dialog.getByRole('button', { name: 'Zoë Tran' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await commandsNamed(h, 'transferCall')).toEqual([
      { localId: LOCAL, to: 'agent-ben', kind: 'transfer' },
      { localId: LOCAL, to: 'agent-zoe', kind: 'transfer' },
    ]);

    await h.push('callChanged', bridgedActive({ ...transferOf('from', 'transfer', 'ringing'), colleague: { agentId: 'agent-zoe', name: 'Zoë Tran' } }, 'wacid.1', now()));
    await panel().getByText('Transferring to Zoë Tran…').waitFor();
    await expect.poll(focusedName).toBe('Cancel transfer');
  });

  test('"Anyone available" for a consult asks for "available"', async () => {
    const h = await open([bridgedActive(undefined, 'wacid.1', now())]);
    await h.answer('transferCall', ok({ transferId: 'tr-1' }));
    await button('Consult').click();
    await page.getByRole('dialog', { name: 'Consult with' }).getByRole('button', { name: 'Anyone available' }).click();
    await page.getByRole('dialog', { name: 'Consult with' }).waitFor({ state: 'detached' });
    expect(await commandsNamed(h, 'transferCall')).toEqual([{ localId: LOCAL, to: 'available', kind: 'consult' }]);
  });

  test('closes when the call ends under it', async () => {
    const h = await open([bridgedActive(undefined, 'wacid.1', now())]);
    await button('Transfer').click();
    await page.getByRole('dialog', { name: 'Transfer to' }).getByRole('button', { name: 'Ben Okafor' }).waitFor();
    await h.push('callChanged', { ...ended('wacid.1', now() - 10_000, now()), bridged: true });
    await page.getByRole('dialog', { name: 'Transfer to' }).waitFor({ state: 'detached' });
    await panel().getByRole('status').filter({ hasText: 'Call ended by the customer' }).waitFor();
  });

  test('speaks the agent’s language', async () => {
    await open([bridgedActive(undefined, 'wacid.1', now())], { language: 'es' });
    await page.getByRole('region', { name: 'Llamada actual' }).getByRole('button', { name: 'Transferir', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Transferir a' });
    await dialog.getByRole('button', { name: 'Cualquiera disponible' }).waitFor();
    const cato = dialog.getByRole('button', { name: 'Cato Silva' });
    await expect(cato.evaluate((b) => document.getElementById(b.getAttribute('aria-describedby') ?? '')?.textContent)).resolves.toBe('En una llamada, puede atender otra');
    await dialog.getByRole('button', { name: 'Cancelar' }).waitFor();
  });
});

describe('the call panel of the agent who transfers', () => {
  const HOLD_AND_TRANSFER = ['Hold', 'Resume', 'Transfer', 'Consult'];
  async function expectNone(names: string[]): Promise<void> {
    for (const name of names) await expect(button(name).count(), name).resolves.toBe(0);
  }

  test('a transfer ringing: "Transferring to NAME…" (or anyone available) and "Cancel transfer"; no Hold, no Transfer', async () => {
    const h = await open([bridgedActive(transferOf('from', 'transfer', 'ringing'), 'wacid.1', now())]);
    await panel().getByRole('status').filter({ hasText: 'Transferring to Ben Okafor…' }).waitFor();
    await expectNone(HOLD_AND_TRANSFER);
    for (const name of ['Mute', 'Keypad', 'Hang up']) await button(name).waitFor();
    await h.answer('cancelTransfer', ok(null));
    await button('Cancel transfer').click();
    await expect.poll(() => commandsNamed(h, 'cancelTransfer')).toEqual([{ localId: LOCAL }]);

    await h.push('callChanged', bridgedActive(transferOf('from', 'transfer', 'ringing', null), 'wacid.1', now()));
    await panel().getByText('Transferring to anyone available…').waitFor();
  });

  test('a consult ringing: "Calling NAME for a consult…" and "Cancel consult"', async () => {
    const h = await open([bridgedActive(transferOf('from', 'consult', 'ringing'), 'wacid.1', now())]);
    await panel().getByText('Calling Ben Okafor for a consult…').waitFor();
    await button('Cancel consult').waitFor();
    await expectNone([...HOLD_AND_TRANSFER, 'Cancel transfer']);
    await h.push('callChanged', bridgedActive(transferOf('from', 'consult', 'ringing', null), 'wacid.1', now()));
    await panel().getByText('Calling anyone available for a consult…').waitFor();
  });

  test('consulting: the words, and "Complete transfer", "Add to call", "Cancel consult" each send their command', async () => {
    const h = await open([bridgedActive(transferOf('from', 'consult', 'consulting'), 'wacid.1', now())]);
    await panel().getByText('Consulting Ben Okafor — the customer is on hold').waitFor();
    await expectNone(HOLD_AND_TRANSFER);
    for (const command of ['completeTransfer', 'addToCall', 'cancelTransfer']) await h.answer(command, ok(null));
    await button('Complete transfer').click();
    await expect.poll(() => commandsNamed(h, 'completeTransfer')).toEqual([{ localId: LOCAL }]);
    await button('Add to call').click();
    await expect.poll(() => commandsNamed(h, 'addToCall')).toEqual([{ localId: LOCAL }]);
    await button('Cancel consult').click();
    await expect.poll(() => commandsNamed(h, 'cancelTransfer')).toEqual([{ localId: LOCAL }]);
  });

  test('a refused step is said on the panel', async () => {
    const h = await open([bridgedActive(transferOf('from', 'consult', 'consulting'), 'wacid.1', now())]);
    await h.answer('completeTransfer', err('invalid_state', 'The consult is over'));
    await button('Complete transfer').click();
    await expect(panel().getByRole('alert').textContent()).resolves.toBe('The consult is over');
  });

  test('joined: "Three-way call with NAME"; Hang up stays, no Hold, Transfer or Consult', async () => {
    await open([bridgedActive(transferOf('from', 'consult', 'joined'), 'wacid.1', now())]);
    await panel().getByText('Three-way call with Ben Okafor').waitFor();
    await button('Hang up').waitFor();
    await expectNone([...HOLD_AND_TRANSFER, 'Complete transfer', 'Add to call', 'Cancel consult']);
  });

  test('not answered: the alert "Transfer not answered", and Hold, Transfer and Consult again', async () => {
    await open([bridgedActive(transferOf('from', 'transfer', 'not_answered'), 'wacid.1', now())]);
    await expect(panel().getByRole('alert').textContent()).resolves.toBe('Transfer not answered');
    for (const name of ['Hold', 'Transfer', 'Consult']) await button(name).waitFor();
  });

  test('the customer handed on: the outcome "Transferred to NAME"', async () => {
    await open([{ ...endedWith({ kind: 'transferred', to: 'Ben Okafor' }, 'wacid.1', now() - 10_000, now()), bridged: true }]);
    await expect(panel().getByRole('status').textContent()).resolves.toBe('Transferred to Ben Okafor');
  });
});

describe('the colleague a transfer rings', () => {
  test('the card: "Transfer from NAME" over the customer, with "Answer" and "Decline"', async () => {
    const h = await open([transferRinging('transfer', BEN, now())]);
    const card = page.getByRole('dialog', { name: 'Incoming call' });
    await expect(card.getByRole('heading').textContent()).resolves.toBe('Transfer from Ben Okafor');
    await card.getByText('Amelia Hart').waitFor();
    await card.getByText('+44 7700 900123').waitFor();
    await h.answer('answerCall', ok(null));
    await card.getByRole('button', { name: 'Answer', exact: true }).click();
    await expect.poll(async () => (await commandsNamed(h, 'answerCall')).map((p) => (p as { localId: string }).localId)).toEqual(['tr:tr-9']);
    await card.getByRole('button', { name: 'Decline' }).waitFor();
  });

  test('the screen reader hears who hands the call on and whose call it is, beside an ordinary ring', async () => {
    await open([{ ...ringing('wacid.1', now()), peer: { number: '14155550123', name: 'Jonas Berg' } }, transferRinging('transfer', BEN, now() + 1)]);
    const announcer = page.locator('[aria-live="assertive"]');
    await expect.poll(() => announcer.textContent()).toBe('Incoming call from Jonas Berg Transfer from Ben Okafor: Amelia Hart');
  });

  test('a consult: "Consult from NAME"; during another call its answer is "Answer and hold"', async () => {
    await open([bridgedActive(undefined, 'wacid.1', now()), transferRinging('consult', BEN, now() + 1)]);
    const card = page.getByRole('dialog', { name: 'Incoming call' });
    await expect(card.getByRole('heading').textContent()).resolves.toBe('Consult from Ben Okafor');
    await card.getByText('Call waiting').waitFor();
    await card.getByRole('button', { name: 'Answer and hold' }).waitFor();
    await card.getByRole('button', { name: 'Decline' }).waitFor();
  });

  test('answered: the consult, the three-way call and the customer handed over, each in words', async () => {
    const answered = (transfer: Parameters<typeof bridgedActive>[0]): CallState => ({ ...bridgedActive(transfer, 'wacid.9', now()), localId: 'tr:tr-9' });
    const h = await open([answered(transferOf('to', 'consult', 'consulting'))]);
    await panel().getByText('Consult from Ben Okafor — the customer is on hold').waitFor();
    for (const name of ['Hold', 'Transfer', 'Consult']) await expect(button(name).count()).resolves.toBe(0);

    await h.push('callChanged', answered(transferOf('to', 'consult', 'joined')));
    await panel().getByText('Three-way call with Ben Okafor').waitFor();

    await h.push('callChanged', answered(transferOf('to', 'consult', 'done')));
    await panel().getByText('Transferred from Ben Okafor').waitFor();
    for (const name of ['Hold', 'Transfer', 'Consult', 'Hang up']) await button(name).waitFor();
  });

  test('a consult that ends without the customer: "Consult ended"', async () => {
    await open([{ ...endedWith({ kind: 'consult_ended' }, 'wacid.9', now() - 10_000, now()), localId: 'tr:tr-9', bridged: true }]);
    await expect(panel().getByRole('status').textContent()).resolves.toBe('Consult ended');
  });
});

describe('recent calls', () => {
  test('say "Transferred to NAME" and "Consult ended"', async () => {
    const entry = (localId: string, outcome: HistoryEntry['outcome'], extra: Partial<HistoryEntry> = {}): HistoryEntry => ({
      localId,
      direction: 'incoming',
      number: '447700900123',
      name: 'Amelia Hart',
      outcome,
      startedAt: now() - 120_000,
      endedAt: now() - 60_000,
      durationSec: 50,
      ...extra,
    });
    const h = await open([]);
    await h.push('historyChanged', [entry('in:a', 'transferred', { transferredTo: 'Ben Okafor' }), entry('tr:b', 'consult_ended', { endedAt: now() - 30_000 })]);
    const list = page.getByRole('list', { name: 'Recent calls' });
    await list.getByText('Transferred to Ben Okafor').waitFor();
    await list.getByText('Consult ended').waitFor();
  });
});

describe('accessibility (axe-core: WCAG 2.0/2.1 A and AA, best practices)', () => {
  /** The serious and critical violations on the page as it is now, in the light and the dark scheme. */
  async function violations(): Promise<string[]> {
    const found: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      // Colours read while a transition runs are neither the old nor the new ones.
      await page.evaluate(() => Promise.all(document.getAnimations().filter((a) => a instanceof CSSTransition).map((a) => a.finished.catch(() => undefined))));
      const { violations } = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
      for (const v of violations) if (v.impact === 'serious' || v.impact === 'critical') found.push(`${colorScheme}: ${v.id} ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    }
    return found;
  }

  test('the dialog, the consult and the transfer card have none', async () => {
    const h = await open([bridgedActive(undefined, 'wacid.1', now())]);
    await button('Transfer').click();
    await page.getByRole('dialog', { name: 'Transfer to' }).getByRole('button', { name: 'Ben Okafor' }).waitFor();
    expect(await violations()).toEqual([]);
    await page.keyboard.press('Escape');

    await h.push('callChanged', bridgedActive(transferOf('from', 'consult', 'consulting'), 'wacid.1', now()));
    await h.push('callChanged', transferRinging('transfer', { agentId: 'agent-zoe', name: 'Zoë Tran' }, now()));
    await button('Complete transfer').waitFor();
    await page.getByRole('heading', { name: 'Transfer from Zoë Tran' }).waitFor();
    expect(await violations()).toEqual([]);
  });
});

describe('the pseudo-locale', () => {
  /** Text a person or a screen reader meets in the page now, with what translation made (⟦…⟧) and the data taken out: no word may be left. */
  async function untranslated(data: readonly string[]): Promise<string[]> {
    const texts = await page.evaluate(() => {
      const out: string[] = [];
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement?.checkVisibility() && (node.textContent ?? '').trim() !== '') out.push(node.textContent ?? '');
      }
      for (const el of document.body.querySelectorAll('[aria-label], [title], [placeholder]')) {
        for (const attribute of ['aria-label', 'title', 'placeholder']) out.push(el.getAttribute(attribute) ?? '');
      }
      return out;
    });
    return texts.filter((text) => {
      let rest = text;
      for (let before = ''; before !== rest; ) {
        before = rest;
        rest = rest.replace(/⟦[^⟦⟧]*⟧/g, ' ');
      }
      for (const d of data) rest = rest.split(d).join(' ');
      return /\p{L}{2,}/u.test(rest);
    });
  }
  const DATA = ['Amelia Hart', 'Jonas Berg', ...TEAM.map((m) => m.name)].sort((a, b) => b.length - a.length);

  test('leaves no English in the dialog, the steps and the transfer card', async () => {
    const h = await open([bridgedActive(undefined, 'wacid.1', now())], { language: 'en-XA' });
    await page.locator('.call-controls button').nth(3).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Ben Okafor' }).waitFor();
    expect(await untranslated(DATA)).toEqual([]);
    await page.keyboard.press('Escape');
    for (const transfer of [transferOf('from', 'transfer', 'ringing', null), transferOf('from', 'consult', 'consulting'), transferOf('from', 'consult', 'joined'), transferOf('from', 'transfer', 'not_answered')]) {
      await h.push('callChanged', bridgedActive(transfer, 'wacid.1', now()));
      await page.locator('.transfer-box, .transfer-alert').first().waitFor();
      expect(await untranslated(DATA), `${transfer.role} ${transfer.state}`).toEqual([]);
    }
    await h.push('callChanged', transferRinging('consult', BEN, now()));
    await page.locator('.transfer-heading').waitFor();
    expect(await untranslated(DATA)).toEqual([]);
  });
});
