// Voicemail in recent calls, in Chromium (window-in-chromium.ts): the "Voicemail" mark and "Play
// voicemail" on a call that has one; the file the host hands over (a real WAV made here) played from a
// blob: URL in an <audio controls> named for the customer, revoked when the row goes; a failure said
// in the row and tried again; a file not fetched yet said quietly; the row still reads whole at 380 px
// and 1280 × 720.
import AxeBuilder from '@axe-core/playwright';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import type { HistoryEntry } from '../../../shared/history';
import ar from '../../../shared/i18n/locales/ar/index';
import en from '../../../shared/i18n/locales/en/index';
import es from '../../../shared/i18n/locales/es/index';
import { err, ok } from '../../../shared/result';
import { snapshot } from './fixtures';
import { toneWavBase64 } from './voicemail-audio';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();
let page: Page;
let h: ReturnType<typeof host>;

const MINUTE = 60_000;
const ADA = '447700900123';
const LONG_NAME = 'Maximiliana Fernández-Oyelaran de la Cruz';

/** A call nobody answered, with the voicemail its customer left (kept here unless `voicemail` says otherwise). */
function missed(id: string, name: string | undefined, number: string, agoMin: number, voicemail: Partial<NonNullable<HistoryEntry['voicemail']>> | null = {}): HistoryEntry {
  const now = Date.now();
  return {
    localId: `in:${id}`,
    callId: id,
    direction: 'incoming',
    number,
    ...(name === undefined ? {} : { name }),
    outcome: 'missed',
    startedAt: now - (agoMin + 1) * MINUTE,
    endedAt: now - agoMin * MINUTE,
    durationSec: 0,
    ...(voicemail === null ? {} : { voicemail: { mediaId: `media-${id}`, at: now - agoMin * MINUTE + 20_000, saved: true, ...voicemail } }),
  };
}

const HISTORY = (): HistoryEntry[] => [
  missed('wacid.vm1', 'Ada Lovelace', ADA, 2),
  missed('wacid.plain', 'Grace Hopper', '12025550101', 5, null),
  missed('wacid.vm2', undefined, '14155550123', 9),
];

async function open(history: HistoryEntry[] = HISTORY(), options: { width?: number; height?: number; language?: 'en' | 'es' | 'ar'; colorScheme?: 'light' | 'dark' } = {}): Promise<void> {
  page = await windows.open({ width: options.width ?? 460, height: options.height ?? 900, ...(options.colorScheme ? { colorScheme: options.colorScheme } : {}) });
  page.setDefaultTimeout(5000);
  h = host(page);
  await h.start(snapshot([], { history, presence: { choice: 'available', status: 'available' } }), options.language);
  await page.locator(history.length > 0 ? '#recent-calls li' : '#recent-calls').first().waitFor();
}

const recentCard = () => page.getByRole('region', { name: 'Recent calls', exact: true });
const recentRows = () => recentCard().getByRole('list', { name: 'Recent calls', exact: true }).getByRole('listitem');
const row = (text: string) => recentRows().filter({ hasText: text });
const playButton = (r: Locator) => r.getByRole('button', { name: 'Play voicemail', exact: true });
const commandsNamed = async (name: string) => (await h.commands()).filter((c) => c.name === name).map((c) => c.params);

/** What the row's player holds: its source, whether it shows its controls, its length once read, and whether it plays. */
const playerOf = (audio: Locator) =>
  audio.evaluate((el) => {
    const a = el as HTMLAudioElement;
    return { src: a.src, controls: a.controls, duration: a.duration, paused: a.paused, error: a.error?.code ?? null };
  });

describe('a recent call with a voicemail', () => {
  test('shows the "Voicemail" mark and "Play voicemail"; a call without one shows neither', async () => {
    await open();
    await row('Ada Lovelace').getByText('Voicemail', { exact: true }).waitFor();
    await playButton(row('Ada Lovelace')).waitFor();
    await playButton(row('+1 415 555 0123')).waitFor();
    await expect(row('Grace Hopper').getByText('Voicemail', { exact: true }).count()).resolves.toBe(0);
    await expect(playButton(row('Grace Hopper')).count()).resolves.toBe(0);
    // Nothing is fetched before the agent asks.
    await expect(commandsNamed('getVoicemail')).resolves.toEqual([]);
    await expect(recentCard().locator('audio').count()).resolves.toBe(0);
  });

  test('"Play voicemail" fetches it by its call and media id and plays the file from a blob: URL, under the row, named for the customer', async () => {
    await open();
    await h.answer('getVoicemail', ok({ mimeType: 'audio/wav', data: toneWavBase64(1.5) }));
    const ada = row('Ada Lovelace');
    await playButton(ada).click();
    const audio = ada.getByLabel('Voicemail from Ada Lovelace', { exact: true });
    await audio.waitFor();
    await expect(commandsNamed('getVoicemail')).resolves.toEqual([{ callId: 'wacid.vm1', mediaId: 'media-wacid.vm1' }]);
    const player = await playerOf(audio);
    expect(player.src).toMatch(/^blob:http:\/\/127\.0\.0\.1:\d+\//);
    expect(player.controls).toBe(true);
    // The real file, read by Chromium: a second and a half of it, playing.
    await expect.poll(async () => (await playerOf(audio)).duration).toBeCloseTo(1.5, 1);
    await expect.poll(async () => (await playerOf(audio)).paused).toBe(false);
    expect((await playerOf(audio)).error).toBeNull();
    // Under the call's line, not inside its button.
    await expect(ada.locator('.history-item audio').count()).resolves.toBe(0);

    // A number without a name is named by the number.
    await playButton(row('+1 415 555 0123')).click();
    await row('+1 415 555 0123').getByLabel('Voicemail from +1 415 555 0123', { exact: true }).waitFor();
    await expect(commandsNamed('getVoicemail')).resolves.toEqual([
      { callId: 'wacid.vm1', mediaId: 'media-wacid.vm1' },
      { callId: 'wacid.vm2', mediaId: 'media-wacid.vm2' },
    ]);
  });

  test('pressed again, it plays the same file from the start: nothing fetched again', async () => {
    await open();
    await h.answer('getVoicemail', ok({ mimeType: 'audio/wav', data: toneWavBase64(1.5) }));
    const ada = row('Ada Lovelace');
    await playButton(ada).click();
    const audio = ada.getByLabel('Voicemail from Ada Lovelace', { exact: true });
    await expect.poll(async () => (await playerOf(audio)).paused).toBe(false);
    const first = (await playerOf(audio)).src;
    await audio.evaluate((el) => {
      const a = el as HTMLAudioElement;
      a.pause();
      a.currentTime = 1;
    });
    await playButton(ada).click();
    await expect.poll(() => audio.evaluate((el) => (el as HTMLAudioElement).currentTime < 1 && !(el as HTMLAudioElement).paused)).toBe(true);
    expect((await playerOf(audio)).src).toBe(first);
    await expect(commandsNamed('getVoicemail')).resolves.toHaveLength(1);
  });

  test('the blob: URL is revoked when the row goes', async () => {
    await open();
    await h.answer('getVoicemail', ok({ mimeType: 'audio/wav', data: toneWavBase64(1) }));
    await playButton(row('Ada Lovelace')).click();
    const audio = row('Ada Lovelace').getByLabel('Voicemail from Ada Lovelace', { exact: true });
    await expect.poll(async () => (await playerOf(audio)).duration).toBeCloseTo(1, 1);
    const src = (await playerOf(audio)).src;
    const readable = (url: string) =>
      page.evaluate(async (u) => {
        try {
          return (await fetch(u)).ok;
        } catch {
          return false;
        }
      }, url);
    await expect(readable(src)).resolves.toBe(true);
    await h.push('historyChanged', HISTORY().filter((e) => e.callId !== 'wacid.vm1'));
    await row('Ada Lovelace').waitFor({ state: 'detached' });
    await expect(readable(src)).resolves.toBe(false);
  });

  test('a failure is said in the row; pressing again tries again, and plays', async () => {
    await open();
    await h.answer('getVoicemail', err('not_found', 'No voicemail is known for call wacid.vm1'));
    const ada = row('Ada Lovelace');
    await playButton(ada).click();
    await expect.poll(() => ada.getByRole('alert').textContent()).toBe('The voicemail could not be played: No voicemail is known for call wacid.vm1');
    await expect(ada.locator('audio').count()).resolves.toBe(0);
    // Said in this row only.
    await expect(recentCard().getByRole('alert').count()).resolves.toBe(1);

    await h.answer('getVoicemail', err('gateway_unreachable', 'connect ECONNREFUSED 10.0.0.1:443'));
    await playButton(ada).click();
    await expect.poll(() => ada.getByRole('alert').textContent()).toMatch(/^The voicemail could not be played: Cannot reach the calling service/);

    await h.answer('getVoicemail', ok({ mimeType: 'audio/wav', data: toneWavBase64(1) }));
    await playButton(ada).click();
    await ada.getByLabel('Voicemail from Ada Lovelace', { exact: true }).waitFor();
    await expect(ada.getByRole('alert').count()).resolves.toBe(0);
    await expect(commandsNamed('getVoicemail')).resolves.toHaveLength(3);
  });

  test('while the file is on its way the button waits and a polite status says so; a second press sends nothing', async () => {
    await open();
    await h.defer('getVoicemail');
    const ada = row('Ada Lovelace');
    await playButton(ada).click();
    await expect.poll(() => ada.getByRole('status').textContent()).toBe('Fetching the voicemail…');
    await expect(playButton(ada).getAttribute('aria-disabled')).resolves.toBe('true');
    // Pressed all the same (aria-disabled keeps it in the Tab order, and clickable).
    await playButton(ada).click({ force: true });
    await expect(commandsNamed('getVoicemail')).resolves.toHaveLength(1);
    await h.settle('getVoicemail', ok({ mimeType: 'audio/wav', data: toneWavBase64(1) }));
    await ada.getByLabel('Voicemail from Ada Lovelace', { exact: true }).waitFor();
    await expect(ada.getByRole('status').textContent()).resolves.toBe('');
  });

  test('not kept here yet, its last fetch failed: said quietly beside the mark, and "Play voicemail" still offered', async () => {
    await open([missed('wacid.vm1', 'Ada Lovelace', ADA, 2, { saved: false, fetchError: 'The calling service did not answer in time' })]);
    const ada = row('Ada Lovelace');
    await ada.getByText('Not fetched yet: The calling service did not answer in time', { exact: true }).waitFor();
    // Quietly: in no live region.
    await expect(ada.locator('[role="alert"], [role="status"], [aria-live]').filter({ hasText: 'Not fetched yet' }).count()).resolves.toBe(0);
    await h.answer('getVoicemail', ok({ mimeType: 'audio/wav', data: toneWavBase64(1) }));
    await playButton(ada).click();
    await ada.getByLabel('Voicemail from Ada Lovelace', { exact: true }).waitFor();
    // Kept since, or not failed: nothing to say.
    await h.push('historyChanged', [missed('wacid.vm1', 'Ada Lovelace', ADA, 2)]);
    await ada.getByText('Not fetched yet', { exact: false }).waitFor({ state: 'detached' });
    await h.push('historyChanged', [missed('wacid.vm1', 'Ada Lovelace', ADA, 2, { saved: false })]);
    await expect(ada.getByText('Not fetched yet', { exact: false }).count()).resolves.toBe(0);
  });
});

interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
  width: number;
}
const boxOf = (locator: Locator): Promise<Box> =>
  locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width };
  });
const inside = (inner: Box, outer: Box): boolean => inner.left >= outer.left - 0.5 && inner.right <= outer.right + 0.5 && inner.top >= outer.top - 0.5 && inner.bottom <= outer.bottom + 0.5;

describe('the row with its voicemail reads whole', () => {
  const WORDS = { en, es, ar } as const;
  for (const language of ['en', 'es', 'ar'] as const) {
    for (const size of [
      { width: 1280, height: 720 },
      { width: 380, height: 720 },
    ]) {
      test(`${language}, ${size.width} × ${size.height}: the name whole, the number on one line, the mark, the note, the button and the player inside the card`, async () => {
        const words = WORDS[language];
        await open([missed('wacid.vm1', LONG_NAME, ADA, 2, { saved: false, fetchError: 'The calling service did not answer in time' })], { ...size, language });
        await h.answer('getVoicemail', ok({ mimeType: 'audio/wav', data: toneWavBase64(1) }));
        const card = page.getByRole('region', { name: words.calls.recent.title, exact: true });
        const the = card.getByRole('listitem').first();
        await the.getByRole('button', { name: words.calls.voicemail.play, exact: true }).click();
        const audio = the.locator('audio');
        await audio.waitFor();
        await expect(audio.getAttribute('aria-label')).resolves.toBe(words.calls.voicemail.from.replace('{{name}}', LONG_NAME));
        const cardBox = await boxOf(card);

        const title = the.locator('.history-title');
        const name = await title.evaluate((el) => ({ text: el.textContent, clipped: el.scrollWidth > el.clientWidth + 1, width: el.getBoundingClientRect().width }));
        expect(name).toEqual({ text: LONG_NAME, clipped: false, width: expect.any(Number) });
        expect(name.width).toBeGreaterThanOrEqual(60);
        const number = the.locator('.history-number');
        const lines = await number.evaluate((el) => Math.round(el.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight)));
        expect(lines).toBe(1);
        for (const part of [title, number, the.locator('.voicemail-mark'), the.locator('.voicemail-note'), the.getByRole('button', { name: words.calls.voicemail.play, exact: true }), audio]) {
          expect(inside(await boxOf(part), cardBox), await part.evaluate((el) => el.className || el.tagName)).toBe(true);
        }
        // The player is under the call's line.
        expect((await boxOf(audio)).top).toBeGreaterThanOrEqual((await boxOf(the.locator('.history-line'))).bottom - 0.5);
        await expect(page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).resolves.toBe(false);
      });
    }
  }
});

describe('looks', () => {
  test('axe finds nothing serious with a player open and a failure said, light and dark, at the narrowest width', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      await open(HISTORY(), { width: 380, colorScheme });
      await h.answer('getVoicemail', ok({ mimeType: 'audio/wav', data: toneWavBase64(1) }));
      await playButton(row('Ada Lovelace')).click();
      await row('Ada Lovelace').locator('audio').waitFor();
      await h.answer('getVoicemail', err('not_found', 'No voicemail is known for call wacid.vm2'));
      await playButton(row('+1 415 555 0123')).click();
      await row('+1 415 555 0123').getByRole('alert').waitFor();
      const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
      const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), colorScheme).toEqual([]);
      await page.close();
    }
  }, 60_000);
});
