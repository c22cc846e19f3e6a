// The Team view's "Callback requested" and "Voicemails", in Chromium (window-in-chromium.ts), on the
// page's own paused clock (Playwright's: time moves only when a test says): each request with its
// customer, the time its permission has left on the relay's clock, and "Call back" — which takes it
// and dials as the dialer does — or who took it; the team's voicemails played as recent calls play
// theirs (a real WAV made here).
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { CALL_PERMISSION_MS, type CallbackRequest } from '../../../shared/callbacks';
import type { HistoryEntry } from '../../../shared/history';
import type { UiLanguage } from '../../../shared/i18n/languages';
import { err, ok } from '../../../shared/result';
import type { TeamVoicemail } from '../../../shared/voicemail';
import { WALLBOARD_REFRESH_MS, type Wallboard } from '../../../shared/wallboard';
import { snapshot } from './fixtures';
import { toneWavBase64 } from './voicemail-audio';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();
let page: Page;

/** 15:30 in London (summer time). */
const NOW = Date.UTC(2025, 5, 10, 14, 30, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const ADA = '447700900123';
const GRACE = '12025550101';
const ALAN = '442079460958';

const SELF = { agentId: 'a2', name: 'Amelia Hart' };
const MAYA = { agentId: 'a1', name: 'Maya Chen' };

/** A request made `agoMs` before NOW, with the service's 7 days to run. */
const request = (id: string, name: string | undefined, number: string | undefined, agoMs: number, extra: Partial<CallbackRequest> = {}): CallbackRequest => ({
  id,
  ...(number === undefined ? {} : { number }),
  ...(name === undefined ? {} : { name }),
  requestedAt: NOW - agoMs,
  expiresAt: NOW - agoMs + CALL_PERMISSION_MS,
  permanent: false,
  ...extra,
});

const CALLBACKS: CallbackRequest[] = [
  request('wacid.cb1', 'Ada Lovelace', ADA, 30_000),
  request('wacid.cb2', 'Grace Hopper', GRACE, 2 * HOUR, { takenBy: { ...MAYA, at: NOW - HOUR } }),
  request('wacid.cb3', 'Alan Turing', ALAN, 3 * 24 * HOUR + 30_000, { takenBy: { ...SELF, at: NOW - 5 * MINUTE } }),
  request('wacid.cb4', undefined, '14155550123', 10 * MINUTE, { permanent: true, expiresAt: undefined }),
];

const VOICEMAILS: TeamVoicemail[] = [
  { callId: 'wacid.vm1', mediaId: 'media-1', at: NOW - 20 * MINUTE, ringingAt: NOW - 21 * MINUTE, number: ADA, name: 'Ada Lovelace' },
  { callId: 'wacid.vm2', mediaId: 'media-2', at: NOW - 26 * HOUR, number: '14155550123' },
];

const board = (overrides: Partial<Wallboard> = {}): Wallboard => ({
  at: NOW,
  timezone: 'Europe/London',
  dayStartedAt: Date.UTC(2025, 5, 9, 23, 0, 0),
  records: 'ok',
  waiting: { calls: 0 },
  today: { answered: 12, missed: 1, abandoned: 0, serviceLevel: { thresholdSec: 20, answeredWithin: 12, offered: 13, ratio: 12 / 13 } },
  agents: [
    { ...MAYA, presence: 'on_call' },
    { ...SELF, presence: 'available', self: true },
  ],
  callbacks: CALLBACKS,
  voicemails: VOICEMAILS,
  ...overrides,
});

type Host = ReturnType<typeof host>;

/** Ada's call that nobody answered: the call her request is about, in this window's recent calls. */
const ADAS_CALL: HistoryEntry = {
  localId: 'in:wacid.cb1',
  callId: 'wacid.cb1',
  direction: 'incoming',
  number: ADA,
  name: 'Ada Lovelace',
  outcome: 'missed',
  startedAt: NOW - 2 * MINUTE,
  endedAt: NOW - MINUTE,
  durationSec: 0,
};

async function open(first: Wallboard, options: { language?: UiLanguage; colorScheme?: 'light' | 'dark'; width?: number; height?: number; realClock?: boolean } = {}): Promise<Host> {
  page = await windows.open({ colorScheme: options.colorScheme ?? 'light', width: options.width ?? 460, height: options.height ?? 900 });
  page.setDefaultTimeout(5000);
  if (!options.realClock) {
    await page.clock.install({ time: NOW - 10_000 });
    await page.clock.pauseAt(NOW);
  }
  const h = host(page);
  await h.answer('getWallboard', ok(first));
  await h.start(snapshot([], { presence: { choice: 'available', status: 'available' }, history: [ADAS_CALL] }), options.language);
  return h;
}

const teamButton = () => page.getByRole('button', { name: 'Team', exact: true });
const teamView = () => page.getByRole('region', { name: 'Team', exact: true });
const requests = () => teamView().getByRole('list', { name: 'Callback requested', exact: true });
const requestItem = (name: string) => requests().getByRole('listitem').filter({ hasText: name });
const callBack = (name: string) => requestItem(name).getByRole('button', { name: 'Call back', exact: true });
const voicemails = () => teamView().getByRole('list', { name: 'Voicemails', exact: true });
const voicemailItem = (text: string) => voicemails().getByRole('listitem').filter({ hasText: text });
const itemTexts = (list: ReturnType<typeof requests>) => list.getByRole('listitem').evaluateAll((items) => items.map((li) => (li.textContent ?? '').replace(/[\u2066-\u2069]/g, '')));
const commandNames = async (h: Host) => (await h.commands()).map((c) => c.name).filter((n) => n !== 'getSnapshot');
const commandsNamed = async (h: Host, name: string) => (await h.commands()).filter((c) => c.name === name).map((c) => c.params);

describe('"Callback requested"', () => {
  test('a heading and a list: each customer with name and number, the time left, and "Call back" — or who took it', async () => {
    await open(board());
    await teamButton().click();
    await teamView().getByRole('heading', { name: 'Callback requested', level: 3, exact: true }).waitFor();
    await expect(itemTexts(requests())).resolves.toEqual([
      'Ada Lovelace+44 7700 9001236 days 23 h leftCall back',
      'Grace Hopper+1 202 555 01016 days 22 h leftTaken by Maya Chen',
      'Alan Turing+44 20 7946 09583 days 23 h leftTaken by youCall back',
      '+1 415 555 0123PermanentCall back',
    ]);
    // A colleague's: no "Call back"; the agent's own: "Call back" still.
    await expect(callBack('Grace Hopper').count()).resolves.toBe(0);
    await callBack('Alan Turing').waitFor();
    // The time left is no live region: a screen reader is not told every minute.
    const live = await requests().evaluate((list) => list.closest('[aria-live], [role="status"], [role="alert"], [role="timer"], [role="log"]') !== null);
    expect(live).toBe(false);
  });

  test('the time left counts down each second between reads, on the relay\'s clock: a relay ahead of the window does not add to it', async () => {
    const at = NOW + 10 * MINUTE;
    // 5 min 1 s left at the relay's `at`: ten minutes more on the window's own clock.
    await open(board({ at, callbacks: [request('wacid.cb1', 'Ada Lovelace', ADA, 0, { expiresAt: at + 5 * MINUTE + 1000 })], voicemails: [] }));
    await teamButton().click();
    await expect.poll(() => itemTexts(requests())).toEqual(['Ada Lovelace+44 7700 9001235 min leftCall back']);
    await page.clock.runFor(2000);
    await expect.poll(() => itemTexts(requests())).toEqual(['Ada Lovelace+44 7700 9001234 min leftCall back']);
  });

  test('hours and minutes on the last day, then minutes; "Expired" once it has run out, with no "Call back"', async () => {
    const callbacks = [request('wacid.cb1', 'Ada Lovelace', ADA, CALL_PERMISSION_MS - 2 * HOUR - 5 * MINUTE - 30_000)];
    const h = await open(board({ callbacks, voicemails: [] }));
    await teamButton().click();
    await requestItem('Ada Lovelace').getByText('2 h 5 min left', { exact: true }).waitFor();
    // Later reads: the relay's time has moved on.
    await h.answer('getWallboard', ok(board({ at: NOW + 2 * HOUR, callbacks, voicemails: [] })));
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await requestItem('Ada Lovelace').getByText('5 min left', { exact: true }).waitFor();
    await h.answer('getWallboard', ok(board({ at: NOW + 2 * HOUR + 6 * MINUTE, callbacks, voicemails: [] })));
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await requestItem('Ada Lovelace').getByText('Expired', { exact: true }).waitFor();
    await expect(callBack('Ada Lovelace').count()).resolves.toBe(0);
  });

  test('"Call back" takes the request, then dials its number as the dialer does, the view read again', async () => {
    const h = await open(board());
    await h.answer('takeCallback', ok({ ...CALLBACKS[0]!, takenBy: { ...SELF, at: NOW } }));
    await h.answer('startCall', ok({ localId: 'out:1', to: ADA, callId: 'wacid.out1' }));
    await teamButton().click();
    await callBack('Ada Lovelace').click();
    // Taken first, the board read again at once, then dialled (the contact panel opening the customer's conversation on the way).
    await expect.poll(async () => (await commandNames(h)).filter((n) => n !== 'getConversation')).toEqual(['getWallboard', 'takeCallback', 'getWallboard', 'startCall']);
    await expect(commandsNamed(h, 'takeCallback')).resolves.toEqual([{ id: 'wacid.cb1' }]);
    // The number the customer called from can always be called back, as from the dialer: no "Call anyway".
    const [started] = (await commandsNamed(h, 'startCall')) as Array<{ to: string; localId: string; sdp: string }>;
    expect(started?.to).toBe(`+${ADA}`);
    expect(started?.localId).toMatch(/^out:/);
    // The call is on the phone screen, with the customer's number in the dialer and their conversation beside it.
    await teamView().waitFor({ state: 'detached' });
    await expect(page.getByRole('textbox', { name: 'Phone number' }).inputValue()).resolves.toBe(`+${ADA}`);
    await expect(teamButton().getAttribute('aria-pressed')).resolves.toBe('false');
  });

  test('the agent\'s own request is taken again and dialled', async () => {
    const h = await open(board());
    await h.answer('takeCallback', ok(CALLBACKS[2]!));
    await h.answer('startCall', ok({ localId: 'out:1', to: ALAN, callId: 'wacid.out1' }));
    await teamButton().click();
    await callBack('Alan Turing').click();
    await expect.poll(() => commandsNamed(h, 'startCall')).toHaveLength(1);
    await expect(commandsNamed(h, 'takeCallback')).resolves.toEqual([{ id: 'wacid.cb3' }]);
  });

  test('a refusal is said in the item, nothing is dialled, and the view is read again: a colleague\'s take then shows once, without "Call back"', async () => {
    const h = await open(board());
    await h.answer('takeCallback', err('invalid_state', 'Taken by Maya Chen'));
    await teamButton().click();
    await h.answer('getWallboard', ok(board({ callbacks: [{ ...CALLBACKS[0]!, takenBy: { ...MAYA, at: NOW } }, ...CALLBACKS.slice(1)] })));
    await callBack('Ada Lovelace').click();
    await expect.poll(() => requestItem('Ada Lovelace').getByRole('alert').textContent()).toBe('Taken by Maya Chen');
    await expect.poll(() => commandNames(h)).toEqual(['getWallboard', 'takeCallback', 'getWallboard']);
    await expect(callBack('Ada Lovelace').count()).resolves.toBe(0);
    await expect(requestItem('Ada Lovelace').getByText('Taken by Maya Chen').count()).resolves.toBe(1);
    await teamView().waitFor();
    // Gone at a later read, the item goes with its note.
    await h.answer('getWallboard', ok(board({ callbacks: CALLBACKS.slice(1) })));
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await requestItem('Ada Lovelace').waitFor({ state: 'detached' });
    await expect(teamView().getByRole('alert').count()).resolves.toBe(0);
  });

  test('a request gone meanwhile is said in its item; the relay\'s words when it gives them', async () => {
    const h = await open(board());
    await h.answer('takeCallback', err('not_found', 'No callback request wacid.cb1 (any more)'));
    await teamButton().click();
    await callBack('Ada Lovelace').click();
    await expect.poll(() => requestItem('Ada Lovelace').getByRole('alert').textContent()).toBe('No callback request wacid.cb1 (any more)');
    // Still there to press again.
    await callBack('Ada Lovelace').waitFor();
    await expect(commandsNamed(h, 'startCall')).resolves.toEqual([]);
  });

  test('a customer known only by user id: no number to dial, said instead of "Call back"', async () => {
    await open(board({ callbacks: [request('wacid.cb5', undefined, undefined, MINUTE, { userId: 'US.13491208655302741918' })], voicemails: [] }));
    await teamButton().click();
    await expect.poll(() => itemTexts(requests())).toEqual(['User ID US.134912086553027419186 days 23 h leftNo phone number to dial']);
    await expect(requests().getByRole('button').count()).resolves.toBe(0);
  });

  test('an empty list says so briefly', async () => {
    await open(board({ callbacks: [] }));
    await teamButton().click();
    await teamView().getByRole('heading', { name: 'Callback requested', level: 3 }).waitFor();
    await teamView().getByText('No customer is waiting to be called back.', { exact: true }).waitFor();
    await expect(requests().count()).resolves.toBe(0);
  });
});

describe('"Voicemails"', () => {
  test('a heading and a list of the team\'s voicemails, newest first: the customer, when it was left, and "Play voicemail"', async () => {
    await open(board());
    await teamButton().click();
    await teamView().getByRole('heading', { name: 'Voicemails', level: 3, exact: true }).waitFor();
    const texts = await itemTexts(voicemails());
    expect(texts).toHaveLength(2);
    // The window's own time zone (UTC here) and its language's clock.
    expect(texts[0]).toBe('Ada Lovelace+44 7700 900123left 02:10 PMPlay voicemail');
    expect(texts[1]).toBe('+1 415 555 0123left Mon 12:30 PMPlay voicemail');
  });

  test('"Play voicemail" fetches it by its call and media id and plays it from a blob: URL, named for the customer', async () => {
    const h = await open(board());
    await h.answer('getVoicemail', ok({ mimeType: 'audio/wav', data: toneWavBase64(1.2, 330) }));
    await teamButton().click();
    const item = voicemailItem('Ada Lovelace');
    await item.getByRole('button', { name: 'Play voicemail', exact: true }).click();
    const audio = item.getByLabel('Voicemail from Ada Lovelace', { exact: true });
    await audio.waitFor();
    await expect(commandsNamed(h, 'getVoicemail')).resolves.toEqual([{ callId: 'wacid.vm1', mediaId: 'media-1' }]);
    await expect(audio.evaluate((el) => (el as HTMLAudioElement).src)).resolves.toMatch(/^blob:/);
    await expect.poll(() => audio.evaluate((el) => (el as HTMLAudioElement).duration)).toBeCloseTo(1.2, 1);
    // The next read of the board leaves the player as it is.
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await expect.poll(async () => (await commandNames(h)).filter((n) => n === 'getWallboard').length).toBe(2);
    await expect(audio.count()).resolves.toBe(1);
    await expect(commandsNamed(h, 'getVoicemail')).resolves.toHaveLength(1);

    await h.answer('getVoicemail', err('not_found', 'No voicemail is known for call wacid.vm2'));
    await voicemailItem('+1 415 555 0123').getByRole('button', { name: 'Play voicemail', exact: true }).click();
    await expect.poll(() => voicemailItem('+1 415 555 0123').getByRole('alert').textContent()).toBe('The voicemail could not be played: No voicemail is known for call wacid.vm2');
  });

  test('none in the last days, a relay without records, and records that cannot be read (the list read before kept)', async () => {
    const h = await open(board({ records: 'unavailable', waiting: undefined, today: undefined, voicemails: undefined }));
    await teamButton().click();
    await teamView().getByText('The team’s voicemails cannot be read right now', { exact: true }).waitFor();
    await h.answer('getWallboard', ok(board({ voicemails: [] })));
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await teamView().getByText('No voicemails in the last 7 days.', { exact: true }).waitFor();

    await h.answer('getWallboard', ok(board()));
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await voicemailItem('Ada Lovelace').waitFor();
    await h.answer('getWallboard', ok(board({ records: 'unavailable', waiting: undefined, today: undefined, voicemails: undefined })));
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await teamView().getByText('The team\'s records cannot be read right now', { exact: true }).waitFor();
    await expect(voicemails().getByRole('listitem').count()).resolves.toBe(2);
    await expect(teamView().getByText('The team’s voicemails cannot be read right now').count()).resolves.toBe(0);

    await h.answer('getWallboard', ok(board({ records: 'none', waiting: undefined, today: undefined, voicemails: undefined })));
    await page.clock.runFor(WALLBOARD_REFRESH_MS);
    await teamView().getByText('The relay keeps no call records: the team’s voicemails are not listed', { exact: true }).waitFor();
    await expect(voicemails().count()).resolves.toBe(0);
    // The callback requests are the relay's live state: there with or without records.
    await expect(requests().getByRole('listitem').count()).resolves.toBe(4);
  });
});

describe('looks and words', () => {
  test('axe finds nothing serious in the lists, light, dark and in forced colours, at the narrowest width', async () => {
    for (const scheme of ['light', 'dark', 'forced colours'] as const) {
      const at = Date.now();
      const shifted = board({
        at,
        callbacks: CALLBACKS.map((c) => ({ ...c, requestedAt: c.requestedAt - NOW + at, ...(c.expiresAt === undefined ? {} : { expiresAt: c.expiresAt - NOW + at }) })),
        voicemails: VOICEMAILS.map((v) => ({ ...v, at: v.at - NOW + at })),
      });
      const h = await open(shifted, { colorScheme: scheme === 'dark' ? 'dark' : 'light', width: 380, realClock: true });
      if (scheme === 'forced colours') await page.emulateMedia({ forcedColors: 'active' });
      await h.answer('getVoicemail', ok({ mimeType: 'audio/wav', data: toneWavBase64(1) }));
      await h.answer('takeCallback', err('invalid_state', 'Taken by Maya Chen'));
      await teamButton().click();
      await voicemailItem('Ada Lovelace').getByRole('button', { name: 'Play voicemail' }).click();
      await voicemailItem('Ada Lovelace').locator('audio').waitFor();
      await callBack('Ada Lovelace').click();
      await requestItem('Ada Lovelace').getByRole('alert').waitFor();
      const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
      const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), scheme).toEqual([]);
      // Nothing makes the narrow window scroll sideways; every number stays on one line.
      await expect(page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).resolves.toBe(false);
      const numberLines = await teamView()
        .locator('.team-request-number')
        .evaluateAll((els) => els.map((el) => Math.round(el.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight))));
      expect(numberLines.every((n) => n === 1)).toBe(true);
      await page.close();
    }
  }, 90_000);

  test('speaks the agent\'s language', async () => {
    await open(board(), { language: 'es' });
    await page.getByRole('button', { name: 'Equipo', exact: true }).click();
    const view = page.getByRole('region', { name: 'Equipo', exact: true });
    const list = view.getByRole('list', { name: 'Piden que los llamen', exact: true });
    await list.getByText('Quedan 6 días 23 h', { exact: true }).waitFor();
    await list.getByText('La tomó Maya Chen', { exact: true }).waitFor();
    await list.getByText('Permanente', { exact: true }).waitFor();
    await expect(list.getByRole('button', { name: 'Devolver llamada', exact: true }).count()).resolves.toBe(3);
    await view.getByRole('list', { name: 'Mensajes de voz', exact: true }).getByRole('button', { name: 'Reproducir mensaje de voz' }).first().waitFor();
  });
});
