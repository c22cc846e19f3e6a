// Accessibility end to end: axe-core (WCAG 2.0 and 2.1, A and AA, and its best practices) on every
// screen of the real renderer, in the light and the dark colour scheme and in forced colours, with
// no serious or critical violation allowed; the assertive announcement of a ringing call; the
// keyboard's path through the idle screen and where focus goes as a call starts and ends; reduced
// motion. Chromium runs the renderer through the browser host; the sandbox's customers are real
// WebRTC peers.
import AxeBuilder from '@axe-core/playwright';
import { describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { currentCall, eventually, incomingCard, onCallWithWaiting, recentCalls, stackForFile, twoCustomers } from './harness';
import { contactPanel, messageItem, openConversation } from './conversation-steps';

const stack = stackForFile();
let page: Page | undefined;


const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];
const BLOCKING_IMPACTS: ReadonlySet<string> = new Set(['serious', 'critical']);
type Violation = Awaited<ReturnType<AxeBuilder['analyze']>>['violations'][number];
type ColorScheme = 'light' | 'dark';

/** One violation as a fix starts from it: the rule, its impact and help, and each element it found. */
function describeViolation(screen: string, v: Violation): string {
  const nodes = v.nodes.map((n) => `    ${n.target.join(' ')}\n      ${(n.failureSummary ?? '').replace(/\s*\n\s*/g, ' | ')}`);
  return [`[${screen}] ${v.id} (${v.impact ?? 'no impact'}): ${v.help} <${v.helpUrl}>`, ...nodes].join('\n');
}

/**
 * The serious and critical violations of every screen a test visits, reported together when it
 * ends, so that one run lists all there is to fix.
 */
class AxeAudit {
  private readonly found: string[] = [];

  constructor(
    private readonly p: Page,
    private readonly schemes: readonly ColorScheme[] = ['light', 'dark'],
  ) {}

  /** axe on the page as it is now, or on the part `include` selects, in each colour scheme. */
  async screen(name: string, include?: string): Promise<void> {
    for (const colorScheme of this.schemes) {
      if (this.schemes.length > 1) await this.p.emulateMedia({ colorScheme });
      await settled(this.p);
      const builder = new AxeBuilder({ page: this.p }).withTags(AXE_TAGS);
      if (include !== undefined) builder.include(include);
      const { violations } = await builder.analyze();
      const label = this.schemes.length > 1 ? `${name}, ${colorScheme}` : name;
      for (const v of violations) {
        if (BLOCKING_IMPACTS.has(v.impact ?? '')) this.found.push(describeViolation(label, v));
        // Moderate and minor ones do not fail the test, but are shown to be fixed while they are cheap.
        else console.warn(`accessibility (not failing): ${describeViolation(label, v)}`);
      }
    }
    if (this.schemes.length > 1) await this.p.emulateMedia({ colorScheme: 'light' });
  }

  expectNone(): void {
    expect(this.found.length, `serious or critical accessibility violations:\n\n${this.found.join('\n\n')}\n`).toBe(0);
  }
}

/** Colours read while a transition runs are neither the old nor the new ones: wait for the transitions (not the endless animations). */
async function settled(p: Page): Promise<void> {
  await p.evaluate(() => Promise.all(document.getAnimations().filter((a) => a instanceof CSSTransition).map((a) => a.finished.catch(() => undefined))));
}

/** The focused element as assistive technology sees it: `role "accessible name"`, or '' when nothing on the page has the focus. */
async function focused(p: Page): Promise<string> {
  const element = p.locator('*:focus');
  if ((await element.count()) === 0) return '';
  const [node] = (await element.ariaSnapshotJSON()) as { role?: string; name?: string }[];
  return node ? `${node.role ?? '?'} "${node.name ?? ''}"` : '';
}

/** Each press of Tab from the top of the page: where the focus lands, in order. */
async function tabOrder(p: Page, presses: number): Promise<string[]> {
  await p.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  const order: string[] = [];
  for (let i = 0; i < presses; i++) {
    await p.keyboard.press('Tab');
    order.push(await focused(p));
  }
  return order;
}

/** A customer calls in; the card is on screen. */
async function ring(p: Page, behaviour: 'answers' | 'no_answer' = 'answers'): Promise<{ callId: string; name: string }> {
  const customer = stack.customer(behaviour);
  const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
  await incomingCard(p).getByText(customer.name).waitFor();
  return { callId, name: customer.name };
}

const announcer = (p: Page) => p.locator('[aria-live="assertive"]');

/** The idle screen in sandbox mode, in the order Tab takes: header, dialer, sandbox, then the messages column. */
const IDLE_TAB_ORDER = [
  'combobox "Presence"',
  'button "Team"',
  'button "Settings"',
  'textbox "Phone number"',
  'button "Call"',
  'combobox "Sandbox customer"',
  'button "Simulate incoming call"',
  'button "Leave a voicemail"',
  'button "Ask to be called back"',
  'textbox "Customer message"',
  'button "Simulate inbound message"',
  'textbox "Contact number"',
  'button "Open"',
];

describe('every screen passes axe (no serious or critical violation)', () => {
  // First in the file: the idle screen has no recent calls, conversations or missed calls yet.
  test('the idle screen; Tab goes through it in reading order, and past its end leaves the page', async () => {
    page = await stack.newAgentPage();
    await page.getByRole('combobox', { name: 'Presence' }).waitFor();
    const audit = new AxeAudit(page);
    await audit.screen('idle');
    audit.expectNone();

    const order = await tabOrder(page, IDLE_TAB_ORDER.length + 1);
    expect(order.slice(0, -1)).toEqual(IDLE_TAB_ORDER);
    // Past the end the focus leaves the page (or comes round to the top): no hidden stop on the way.
    expect(['', IDLE_TAB_ORDER[0]]).toContain(order.at(-1));
    // Backwards too: Shift+Tab from the dialer's field reaches the header's last control.
    await page.getByRole('textbox', { name: 'Phone number' }).focus();
    await page.keyboard.press('Shift+Tab');
    expect(await focused(page)).toBe('button "Settings"');
  });

  test('ringing, the active call, the keypad, the ended call and the recent calls; the ring is announced; focus follows the call', async () => {
    page = await stack.newAgentPage();
    const audit = new AxeAudit(page);
    await expect(announcer(page).textContent()).resolves.toBe('');
    const { name } = await ring(page);
    // The assertive live region was in the page before the ring, so screen readers read the change at once.
    await expect.poll(() => announcer(page!).textContent()).toBe(`Incoming call from ${name}`);
    await expect(announcer(page).getAttribute('aria-atomic')).resolves.toBe('true');
    await audit.screen('ringing');

    // Answered from the keyboard: the Answer button goes, and the focus lands on Hang up.
    await incomingCard(page).getByRole('button', { name: 'Answer' }).focus();
    await page.keyboard.press('Enter');
    await currentCall(page).getByText('Connected').waitFor();
    await expect.poll(() => focused(page!)).toBe('button "Hang up"');
    await expect(announcer(page).textContent()).resolves.toBe('');
    await audit.screen('active call');

    await currentCall(page).getByRole('button', { name: 'Keypad' }).click();
    await currentCall(page).getByRole('group', { name: 'Keypad' }).getByRole('button', { name: '5', exact: true }).click();
    await audit.screen('keypad open');

    // Hung up from the keyboard: the focus goes back to the phone number, ready for the next call.
    await currentCall(page).getByRole('button', { name: 'Hang up' }).focus();
    await page.keyboard.press('Enter');
    await currentCall(page).getByText('Call ended').waitFor();
    await expect.poll(() => focused(page!)).toBe('textbox "Phone number"');
    await audit.screen('call ended');
    await recentCalls(page).getByText(name).first().waitFor();
    await audit.screen('recent calls', '#recent-calls');
    audit.expectNone();
  });

  test('two calls: the waiting call is announced and passes axe, so do the held call and Swap; focus stays on the call in hand', async () => {
    page = await stack.newAgentPage();
    const audit = new AxeAudit(page);
    const [first, second] = twoCustomers(stack);
    await onCallWithWaiting(stack, page, first);
    await stack.control('/control/incoming', { number: second.number });
    await incomingCard(page).getByText(second.name).waitFor();
    await expect.poll(() => announcer(page!).textContent()).toBe(`Incoming call from ${second.name}`);
    await audit.screen('call waiting');

    await incomingCard(page).getByRole('button', { name: 'Answer and hold', exact: true }).focus();
    await page.keyboard.press('Enter');
    const held = currentCall(page).getByRole('group', { name: 'Call on hold' });
    await held.getByText(first.name).waitFor();
    await expect.poll(() => focused(page!)).toBe('button "Hang up"');
    await audit.screen('two calls, one on hold');
    // Swap from the keyboard; the held call's own Resume after the call in hand ends.
    await held.getByRole('button', { name: 'Swap', exact: true }).focus();
    await page.keyboard.press('Enter');
    await held.getByText(second.name).waitFor();
    await currentCall(page).getByRole('button', { name: 'Hang up', exact: true }).click();
    await currentCall(page).getByRole('button', { name: 'Resume', exact: true }).waitFor();
    await audit.screen('one call, on hold');
    audit.expectNone();
  });

  test('settings: the account, Network, Audio, Shortcuts and Diagnostics sections, with errors showing', async () => {
    page = await stack.newAgentPage();
    const audit = new AxeAudit(page);
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('region', { name: 'Diagnostics' }).waitFor();
    await audit.screen('settings');
    const sections: [string, string][] = [
      ['settings: account', '.settings > form'],
      ['settings: Network', 'section[aria-labelledby="network-settings-title"]'],
      ['settings: Audio', 'section[aria-labelledby="audio-settings-title"]'],
      ['settings: Shortcuts', 'section[aria-labelledby="shortcuts-title"]'],
      ['settings: calls and window', 'section[aria-labelledby="desk-calls-title"]'],
      ['settings: Diagnostics', 'section[aria-labelledby="diagnostics-settings-title"]'],
    ];
    for (const [name, selector] of sections) {
      await page.locator(selector).scrollIntoViewIfNeeded();
      await audit.screen(name, selector);
    }

    // Refusals beside their fields (nothing is saved).
    await page.getByLabel('Gateway URL').fill('https://gateway.example.com/restapi');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText(/must end in the version segment/i).first().waitFor();
    const network = page.getByRole('region', { name: 'Network' });
    await network.getByRole('textbox', { name: 'STUN and TURN servers' }).fill('stun:stun.example.com:3478\nnot a server');
    await network.getByRole('button', { name: 'Save network settings', exact: true }).click();
    await network.getByRole('alert').first().waitFor();
    await audit.screen('settings with errors');
    audit.expectNone();
  });

  test('the contact panel and the composer with each message type, the window open and closed', async () => {
    page = await stack.newAgentPage();
    const audit = new AxeAudit(page);
    const panel = contactPanel(page);
    const customer = stack.sandbox.customers.find((c) => c.name === 'Grace Hopper')!;
    // Enough messages for the timeline to scroll: keyboard users must be able to scroll it too.
    for (let i = 1; i <= 12; i++) await stack.control('/control/inbound', { number: customer.number, text: `Order A-10${i}: can you tell me where it is?` });
    await openConversation(page, customer.number);
    await panel.getByText(/^Window open/).waitFor();
    await messageItem(page, 'Order A-1012').waitFor();
    expect(await page.locator('.timeline-scroll').evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
    await panel.getByRole('textbox', { name: 'Message' }).fill('It left the warehouse this morning.');
    await panel.getByRole('button', { name: 'Send', exact: true }).click();
    await messageItem(page, 'It left the warehouse this morning.').getByText(/delivered|read/).waitFor();
    await audit.screen('contact panel');

    await panel.getByRole('tab', { name: 'Text' }).click();
    await panel.getByRole('button', { name: 'Send', exact: true }).click();
    await audit.screen('composer: Text, with its rule shown', '.contact-panel');

    await panel.getByRole('tab', { name: 'Media' }).click();
    await audit.screen('composer: Media by link', '.contact-panel');
    await panel.getByRole('combobox', { name: 'Media type' }).selectOption('document');
    await panel.getByRole('radio', { name: 'By media id' }).check();
    await audit.screen('composer: Media, a document by id', '.contact-panel');

    await panel.getByRole('tab', { name: 'Interactive' }).click();
    const variant = panel.getByRole('combobox', { name: 'Message type' });
    const variants = await variant.locator('option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
    expect(variants.length).toBeGreaterThan(1);
    for (const value of variants) {
      await variant.selectOption(value);
      await audit.screen(`composer: Interactive, ${value}`, '.contact-panel');
    }

    await panel.getByRole('tab', { name: 'Template' }).click();
    await audit.screen('composer: Template, nothing pasted', '.contact-panel');
    await panel.getByRole('combobox', { name: 'Sandbox template' }).selectOption({ index: 1 });
    await panel.getByRole('textbox', { name: 'Recipient' }).waitFor();
    await audit.screen('composer: Template, its variables', '.contact-panel');

    // A customer who never wrote: the window is closed, free-form is blocked with the reason.
    await openConversation(page, stack.customer('no_answer').number);
    await panel.getByText('Window closed: send a template').waitFor();
    await audit.screen('contact panel, window closed');
    await panel.getByRole('tab', { name: 'Text' }).click();
    await panel.getByText('Free-form messages are blocked.').waitFor();
    await audit.screen('composer: Text blocked', '.contact-panel');

    await panel.getByRole('button', { name: 'All conversations' }).click();
    await panel.getByRole('list', { name: 'Conversations' }).waitFor();
    await audit.screen('conversations');
    audit.expectNone();
  });
});

describe('focus around calls', () => {
  test('Decline from the keyboard returns the focus to the phone number; so does the end of a call placed from it', async () => {
    page = await stack.newAgentPage();
    await ring(page);
    await incomingCard(page).getByRole('button', { name: 'Decline' }).focus();
    await page.keyboard.press('Enter');
    await incomingCard(page).waitFor({ state: 'detached' });
    await expect.poll(() => focused(page!)).toBe('textbox "Phone number"');

    // Placed with the Call button: once it is disabled for the call, the focus goes on to Hang up.
    const customer = stack.customer('answers');
    await page.getByRole('textbox', { name: 'Phone number' }).fill(`+${customer.number}`);
    await page.getByRole('button', { name: 'Call', exact: true }).focus();
    await page.keyboard.press('Enter');
    await currentCall(page).getByText('Connected').waitFor();
    await expect.poll(() => focused(page!)).toBe('button "Hang up"');
    const callId = await eventually('the initiate request', async () => (await stack.gatewayLog()).filter((l) => l.action === 'initiate' && l.status === 200).at(-1)?.callId);

    // The customer hangs up: Hang up goes, and the focus with it to the phone number.
    await stack.control('/control/hangup', { callId });
    await currentCall(page).getByText('Call ended').waitFor();
    await expect.poll(() => focused(page!)).toBe('textbox "Phone number"');
  });

  test('focus the agent put elsewhere stays there when a call rings and ends', async () => {
    page = await stack.newAgentPage();
    const message = page.getByRole('textbox', { name: 'Customer message' });
    await message.focus();
    await ring(page);
    expect(await focused(page)).toBe('textbox "Customer message"');
    await incomingCard(page).getByRole('button', { name: 'Decline' }).click();
    await incomingCard(page).waitFor({ state: 'detached' });
    // The click moved the focus to Decline, which is gone: back to the phone number.
    await expect.poll(() => focused(page!)).toBe('textbox "Phone number"');
    await message.focus();
    await ring(page);
    await stack.endCalls();
    await incomingCard(page).waitFor({ state: 'detached' });
    await page.waitForTimeout(300);
    expect(await focused(page)).toBe('textbox "Customer message"');
  });
});

/** Every element still moving or able to: a running CSS animation, or a transition that would run. */
async function motion(p: Page): Promise<{ animated: string[]; transitioning: string[]; running: number }> {
  return p.evaluate(() => {
    const longest = (list: string) => Math.max(0, ...list.split(',').map((v) => Number.parseFloat(v) || 0));
    const label = (el: Element) => `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`;
    const animated: string[] = [];
    const transitioning: string[] = [];
    for (const el of document.querySelectorAll('*')) {
      const style = getComputedStyle(el);
      if (style.animationName !== 'none' && longest(style.animationDuration) > 0) animated.push(label(el));
      if (longest(style.transitionDuration) > 0) transitioning.push(label(el));
    }
    return { animated, transitioning, running: document.getAnimations().length };
  });
}

test('reduced motion: with prefers-reduced-motion: reduce nothing animates or transitions, the ringing card included', async () => {
  page = await stack.newAgentPage();
  await ring(page);
  // Without the preference the card pulses: the check below can see motion.
  const moving = await motion(page);
  expect(moving.animated).toContain('div.incoming-pulse');
  expect(moving.running).toBeGreaterThan(0);

  await page.emulateMedia({ reducedMotion: 'reduce' });
  const still = await motion(page);
  expect(still).toEqual({ animated: [], transitioning: [], running: 0 });
  await incomingCard(page).getByRole('button', { name: 'Answer' }).click();
  await currentCall(page).getByText('Connected').waitFor();
  await currentCall(page).getByRole('button', { name: 'Keypad' }).click();
  expect(await motion(page)).toEqual({ animated: [], transitioning: [], running: 0 });
});

/** Buttons on screen that forced colours would leave without an edge: no border on every side and no outline. */
async function bareButtons(p: Page): Promise<string[]> {
  return p.evaluate(() => {
    const invisible = (color: string) => color === 'transparent' || /rgba\([^)]*,\s*0\)$/.test(color);
    const sides = ['top', 'right', 'bottom', 'left'];
    return [...document.querySelectorAll('button')]
      .filter((b) => b.getClientRects().length > 0 && getComputedStyle(b).visibility !== 'hidden')
      .filter((b) => {
        const s = getComputedStyle(b);
        const bordered = sides.every(
          (side) => s.getPropertyValue(`border-${side}-style`) !== 'none' && Number.parseFloat(s.getPropertyValue(`border-${side}-width`)) > 0 && !invisible(s.getPropertyValue(`border-${side}-color`)),
        );
        const outlined = s.outlineStyle !== 'none' && Number.parseFloat(s.outlineWidth) > 0 && !invisible(s.outlineColor);
        return !bordered && !outlined;
      })
      .map((b) => `${(b.getAttribute('aria-label') ?? b.textContent ?? '').trim()} (.${b.className.trim().split(/\s+/).join('.')})`);
  });
}

/** The focused element's outline: what keyboard users follow. */
async function focusOutline(p: Page): Promise<{ style: string; width: number }> {
  return p.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return { style: 'none', width: 0 };
    const s = getComputedStyle(el);
    return { style: s.outlineStyle, width: Number.parseFloat(s.outlineWidth) };
  });
}

test('forced colours: every screen passes axe, every button keeps its edge, and the focus stays visible', async () => {
  page = await stack.newAgentPage();
  await page.emulateMedia({ forcedColors: 'active' });
  expect(await page.evaluate(() => matchMedia('(forced-colors: active)').matches)).toBe(true);
  const audit = new AxeAudit(page, ['light']);
  const bare: string[] = [];
  const look = async (screen: string) => {
    await audit.screen(`forced colours: ${screen}`);
    bare.push(...(await bareButtons(page!)).map((b) => `[${screen}] ${b}`));
  };

  await look('idle');
  await page.getByRole('button', { name: 'Settings' }).focus();
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Tab');
  expect(await focused(page)).toBe('button "Settings"');
  const outline = await focusOutline(page);
  expect(outline.style).not.toBe('none');
  expect(outline.width).toBeGreaterThanOrEqual(2);

  await ring(page);
  await look('ringing');
  await incomingCard(page).getByRole('button', { name: 'Answer' }).click();
  await currentCall(page).getByText('Connected').waitFor();
  await currentCall(page).getByRole('button', { name: 'Mute' }).click();
  await currentCall(page).getByRole('button', { name: 'Keypad' }).click();
  await look('active call, muted, keypad open');
  await currentCall(page).getByRole('button', { name: 'Hang up' }).click();
  await currentCall(page).getByText('Call ended').waitFor();
  await look('call ended, recent calls');

  const customer = stack.customer('answers');
  await stack.control('/control/inbound', { number: customer.number, text: 'Hello?' });
  await openConversation(page, customer.number);
  await contactPanel(page).getByText(/^Window open/).waitFor();
  await look('contact panel');
  await contactPanel(page).getByRole('tab', { name: 'Interactive' }).click();
  await look('composer: Interactive');

  await page.getByRole('button', { name: 'Settings' }).click();
  await page.getByRole('region', { name: 'Diagnostics' }).waitFor();
  await look('settings');

  audit.expectNone();
  expect(bare, `buttons without a visible edge in forced colours:\n${bare.join('\n')}`).toEqual([]);
});
