// Every string on every screen goes through translation: with the pseudo-locale (en-XA: every
// translated string accented and bracketed, ⟦Åñšŵéŕ⟧) any visible text, accessible name, title or
// placeholder with letters outside the brackets bypassed i18next. Data is exempt: the customers'
// names, what they and the agent wrote, device labels, language names, version strings.
// The screens: idle, ringing, the active call and its keypad, the ended call and recent calls,
// every Settings section with errors showing, the contact panel with each composer tab and each
// interactive variant, the closed window, the conversations list. And what the main process says
// (a refusal, a call's failure reason) is said in the window's language, from its code and values.
import { beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { LANGUAGE_NAMES } from '../../shared/i18n/languages';
import { DEFAULT_TEAM_SETTINGS } from '../../shared/team-settings';
import ar from '../../shared/i18n/locales/ar/index';
import es from '../../shared/i18n/locales/es/index';
import { pseudoLocalize } from '../../renderer/i18n/pseudo';
import { stackForFile } from './harness';
import { WINDOW_GONE_REASON } from '../../shared/api';
import { english } from '../../shared/i18n/text';

const stack = stackForFile();
let page: Page | undefined;

beforeAll(async () => {
  const set = await stack.service.handle('setPreferences', { preferences: { language: 'en-XA' } });
  expect(set.ok).toBe(true);
});

/** The pseudo-localized form of an English name, as a role query's exact name. */
const P = (english: string): string => pseudoLocalize(english);

interface Leak {
  where: string;
  text: string;
}

/**
 * Every piece of text a person or a screen reader meets, in the page as it is now: visible text
 * nodes, every <option>, and the aria-label, aria-description, title, placeholder and alt
 * attributes; the document's title. What is left once translated strings (⟦…⟧, nested too) and the
 * data are taken out must hold no word.
 */
async function leaks(p: Page, data: readonly string[]): Promise<Leak[]> {
  const found = await p.evaluate(() => {
    const out: { where: string; text: string }[] = [{ where: 'document.title', text: document.title }];
    const describe = (el: Element): string => {
      const id = el.id ? `#${el.id}` : '';
      const cls = typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
      return `${el.tagName.toLowerCase()}${id}${cls}`;
    };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      const text = node.textContent ?? '';
      if (!parent || text.trim() === '') continue;
      if (parent.closest('script, style, noscript')) continue;
      const inOption = parent.closest('option') !== null;
      if (!inOption && !parent.checkVisibility()) continue;
      out.push({ where: describe(parent), text });
    }
    for (const el of document.body.querySelectorAll('[aria-label], [aria-description], [title], [placeholder], [alt]')) {
      for (const attribute of ['aria-label', 'aria-description', 'title', 'placeholder', 'alt']) {
        const value = el.getAttribute(attribute);
        if (value && value.trim() !== '') out.push({ where: `${describe(el)}[${attribute}]`, text: value });
      }
    }
    return out;
  });
  const left: Leak[] = [];
  for (const { where, text } of found) {
    let rest = text;
    // Innermost first: a translated string can hold another (a name inside a sentence).
    for (let before = ''; before !== rest; ) {
      before = rest;
      rest = rest.replace(/⟦[^⟦⟧]*⟧/g, ' ');
    }
    for (const d of data) rest = rest.split(d).join(' ');
    if (/\p{L}{2,}/u.test(rest)) left.push({ where, text });
  }
  return left;
}

/** Collects the leaks of each screen a test visits and reports them all at the end. */
class LeakAudit {
  private readonly found: string[] = [];
  constructor(
    private readonly p: Page,
    private readonly data: readonly string[],
  ) {}
  async screen(name: string): Promise<void> {
    for (const leak of await leaks(this.p, this.data)) this.found.push(`[${name}] ${leak.where}: ${JSON.stringify(leak.text)}`);
  }
  expectNone(): void {
    expect([...new Set(this.found)], 'text that bypassed translation').toEqual([]);
  }
}

/** Names, device labels and the like that the page shows as they are. */
async function dataOf(p: Page, more: readonly string[] = []): Promise<string[]> {
  const devices = await p.evaluate(async () => (await navigator.mediaDevices.enumerateDevices()).map((d) => d.label).filter((l) => l !== ''));
  const customers = stack.sandbox.customers.map((c) => c.name);
  // The team's break reasons and dispositions are its own words, shown as the relay gives them.
  const team = [...DEFAULT_TEAM_SETTINGS.breakReasons, ...DEFAULT_TEAM_SETTINGS.dispositions];
  return [...customers, ...devices, ...team, ...Object.values(LANGUAGE_NAMES), ...more].sort((a, b) => b.length - a.length);
}

async function openPage(): Promise<Page> {
  const p = await stack.newAgentPage(P);
  await expect.poll(() => p.evaluate(() => document.documentElement.lang)).toBe('en-XA');
  await p.getByRole('combobox', { name: P('Presence') }).waitFor();
  return p;
}

describe('the pseudo-locale leaves no English on any screen', () => {
  test('idle, ringing, the active call with its keypad, the ended call and the recent calls', async () => {
    page = await openPage();
    const audit = new LeakAudit(page, await dataOf(page));
    await audit.screen('idle');

    const customer = stack.customer('answers');
    await stack.control('/control/incoming', { number: customer.number });
    const card = page.getByRole('dialog', { name: P('Incoming call') });
    await card.getByText(customer.name).waitFor();
    await audit.screen('ringing');

    await card.getByRole('button', { name: P('Answer'), exact: true }).click();
    const call = page.getByRole('region', { name: P('Current call') });
    await call.getByText(P('Connected')).waitFor();
    await audit.screen('active call');
    await call.getByRole('button', { name: P('Keypad'), exact: true }).click();
    await call.getByRole('group', { name: P('Keypad') }).getByRole('button', { name: '5', exact: true }).click();
    await audit.screen('keypad');
    await call.getByRole('button', { name: P('Hang up'), exact: true }).click();
    await call.getByText(new RegExp(P('Call ended').slice(1, -1))).waitFor();
    await page.getByRole('list', { name: P('Recent calls') }).getByText(customer.name).first().waitFor();
    await audit.screen('call ended, recent calls');
    audit.expectNone();
  });

  test('every Settings section, with refusals showing', async () => {
    page = await openPage();
    const audit = new LeakAudit(page, await dataOf(page, ['https://gateway.example.com/restapi/v1', 'https://relay.example.com', 'chatapp', 'GB']));
    await page.getByRole('button', { name: P('Settings'), exact: true }).click();
    await page.getByRole('region', { name: P('Diagnostics') }).waitFor();
    await audit.screen('settings');
    await page.getByLabel(P('Gateway URL')).fill('https://gateway.example.com/restapi');
    await page.getByRole('button', { name: P('Save'), exact: true }).click();
    await page.locator('.field-error').first().waitFor();
    await audit.screen('settings, account refused');
    audit.expectNone();
  });

  test('the contact panel: each composer tab and interactive variant, the closed window, the conversations', async () => {
    page = await openPage();
    const customer = stack.sandbox.customers.find((c) => c.name === 'Grace Hopper')!;
    const said = 'Order A-1001: can you tell me where it is?';
    await stack.control('/control/inbound', { number: customer.number, text: said });
    const audit = new LeakAudit(page, await dataOf(page, [said]));
    const panel = page.getByRole('region', { name: P('Contact') });
    await panel.getByRole('textbox', { name: P('Contact number') }).fill(`+${customer.number}`);
    await panel.getByRole('button', { name: P('Open'), exact: true }).click();
    await panel.getByRole('tablist', { name: P('Composer') }).waitFor();
    await panel.getByText(said).waitFor();
    await audit.screen('contact panel');
    for (const tab of ['Text', 'Media', 'Interactive', 'Template']) {
      await panel.getByRole('tab', { name: P(tab) }).click();
      await audit.screen(`composer: ${tab}`);
      if (tab === 'Text') {
        await panel.getByRole('button', { name: P('Send'), exact: true }).click();
        await audit.screen('composer: Text, its rule shown');
      }
      if (tab === 'Interactive') {
        const variant = panel.getByRole('combobox', { name: P('Message type') });
        for (const value of await variant.locator('option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value))) {
          await variant.selectOption(value);
          await audit.screen(`composer: Interactive, ${value}`);
        }
      }
    }
    await panel.getByRole('button', { name: P('All conversations') }).click();
    await panel.getByRole('list', { name: P('Conversations') }).waitFor();
    await audit.screen('conversations');
    audit.expectNone();
  });
});

describe('what the main process says, in the language of the window that shows it', () => {
  const speak = async (language: 'es' | 'ar' | 'en-XA') => expect((await stack.service.handle('setPreferences', { preferences: { language } })).ok).toBe(true);

  test("a refusal of the settings and a call's failure reason in recent calls, in Spanish, then in Arabic", async () => {
    await speak('es');
    try {
      page = await stack.newAgentPage((words) => (words === 'Connection' ? es.common.header.connection : words === 'Connected' ? es.calls.connection.connected : words));
      await expect.poll(() => page!.evaluate(() => document.documentElement.lang)).toBe('es');

      // A refusal main makes (settings-store: no API key stored and none given), beside its field.
      await page.getByRole('button', { name: es.common.header.settings, exact: true }).click();
      await page.getByLabel(es.settings.account.gatewayUrl.label).fill('https://gateway.example.com/restapi/v1');
      await page.getByLabel(es.settings.account.relayUrl.label).fill('https://relay.example.com');
      await page.getByRole('button', { name: es.settings.screen.save, exact: true }).click();
      // The rule alone, as a sentence: the field it is beside names it already.
      const refused = es.rules.settings.secretRequired.replace('{{what}}', es.rules.terms.apiKey);
      await page.getByText(refused[0]!.toUpperCase() + refused.slice(1), { exact: true }).waitFor();
      await expect(page.getByText(/API key is required|apiKey:/i).count()).resolves.toBe(0);
      await page.getByRole('button', { name: es.common.header.settings, exact: true }).click();

      // A call's failure reason main keeps with the call (its window went: a reload mid-call).
      const customer = stack.customer('answers');
      await stack.control('/control/incoming', { number: customer.number });
      await page.getByRole('dialog', { name: es.calls.incoming.label }).getByRole('button', { name: es.calls.incoming.answer, exact: true }).click();
      await page.getByRole('region', { name: es.calls.current.label }).getByText(es.calls.phase.active).waitFor();
      await page.reload();
      await page.getByRole('status', { name: es.common.header.connection }).getByText(es.calls.connection.connected).waitFor();
      const recent = page.getByRole('list', { name: es.calls.recent.list });
      await recent.getByText(es.errors.failed.replace('{{reason}}', es.rules.callMedia.windowReloaded)).first().waitFor();
      await expect(recent.getByText(english(WINDOW_GONE_REASON.reloaded)).count()).resolves.toBe(0);

      // The same entry in the language chosen now: the reason was kept as its code, not as words.
      await speak('ar');
      await page.getByRole('list', { name: ar.calls.recent.list }).getByText(ar.errors.failed.replace('{{reason}}', ar.rules.callMedia.windowReloaded)).first().waitFor();
    } finally {
      await speak('en-XA');
    }
  });
});
