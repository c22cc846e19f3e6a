// The service's own recording and transcript in the window, in Chromium (window-in-chromium.ts):
// Settings → "Recording and transcription" (saved on its own, the purpose required when a box is
// ticked and at most 250 characters, each error naming its field, the notice's languages named in the
// window's language); under a recent call, "Play recording" playing the file the host hands over (a
// real WAV made here) with the voicemail's player, and "Transcript" opening a dialog that lists each
// segment with its speaker (the agent's name for channel 0, "You" when unknown; the customer's for
// channel 1) and its m:ss; a file not fetched yet said quietly, a failure said and tried again.
import AxeBuilder from '@axe-core/playwright';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import type { HistoryEntry } from '../../../shared/history';
import en from '../../../shared/i18n/locales/en/index';
import es from '../../../shared/i18n/locales/es/index';
import { err, ok } from '../../../shared/result';
import type { ServiceCaptureSettings, TranscriptSegment } from '../../../shared/service-capture';
import { sandboxSettings, snapshot } from './fixtures';
import { toneWavBase64 } from './voicemail-audio';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();
let page: Page;
let h: ReturnType<typeof host>;

const MINUTE = 60_000;
const ADA = '447700900123';

const commandsNamed = async (name: string) => (await h.commands()).filter((c) => c.name === name).map((c) => c.params);

describe('Settings → "Recording and transcription"', () => {
  async function openSettings(saved: ServiceCaptureSettings = { record: false, transcribe: false, purpose: '', language: 'en_US' }, options: { width?: number; colorScheme?: 'light' | 'dark'; language?: 'en' | 'es' } = {}): Promise<Locator> {
    page = await windows.open({ width: options.width ?? 1280, height: 900, ...(options.colorScheme ? { colorScheme: options.colorScheme } : {}) });
    page.setDefaultTimeout(5000);
    h = host(page);
    await h.start(snapshot([], { settings: { ...sandboxSettings, serviceCapture: saved } }), options.language);
    const words = options.language === 'es' ? es : en;
    await page.getByRole('button', { name: words.common.header.settings, exact: true }).click();
    const section = page.getByRole('region', { name: words.settings.serviceCapture.title, exact: true });
    await section.waitFor();
    return section;
  }
  const savedAs = (serviceCapture: ServiceCaptureSettings) => ok({ ...sandboxSettings, serviceCapture });

  test('is a section of the list, after "Calls and window"; its fields show what is saved', async () => {
    const section = await openSettings({ record: true, transcribe: false, purpose: 'Quality assurance', language: 'en_GB' });
    const entries = (await page.getByRole('navigation', { name: 'Settings sections' }).getByRole('link').allTextContents()).map((s) => s.trim());
    expect(entries.slice(entries.indexOf('Calls and window'), entries.indexOf('Calls and window') + 2)).toEqual(['Calls and window', 'Recording and transcription']);
    await expect(section.getByRole('checkbox', { name: 'Ask the service to record calls', exact: true }).isChecked()).resolves.toBe(true);
    await expect(section.getByRole('checkbox', { name: 'Ask the service to transcribe calls', exact: true }).isChecked()).resolves.toBe(false);
    await expect(section.getByRole('textbox', { name: 'Purpose', exact: true }).inputValue()).resolves.toBe('Quality assurance');
    const language = section.getByRole('combobox', { name: 'Notice language', exact: true });
    await expect(language.inputValue()).resolves.toBe('en_GB');
    // Each of the service's languages, by name in the window's language.
    const names = await language.locator('option').allTextContents();
    expect(names).toHaveLength(8);
    expect(names).toContain('British English');
    expect(names).toContain('Brazilian Portuguese');
    expect(names).toContain('Hindi');
    await expect(section.getByText('17/250', { exact: true }).count()).resolves.toBe(1);
  });

  test('"Save recording settings" sends the section as it is filled, and says it was saved; the saved state shows', async () => {
    const section = await openSettings();
    await section.getByRole('checkbox', { name: 'Ask the service to record calls', exact: true }).check();
    await section.getByRole('checkbox', { name: 'Ask the service to transcribe calls', exact: true }).check();
    await section.getByRole('textbox', { name: 'Purpose', exact: true }).fill('  Quality assurance and training  ');
    await section.getByRole('combobox', { name: 'Notice language', exact: true }).selectOption('es_MX');
    const saved: ServiceCaptureSettings = { record: true, transcribe: true, purpose: 'Quality assurance and training', language: 'es_MX' };
    await h.answer('saveServiceCapture', savedAs(saved));
    await section.getByRole('button', { name: 'Save recording settings', exact: true }).click();
    await expect.poll(() => section.getByRole('status').textContent()).toBe('Recording and transcription settings saved.');
    // Trimmed as the main process keeps it.
    await expect(commandsNamed('saveServiceCapture')).resolves.toEqual([{ serviceCapture: saved }]);
    await expect(section.getByRole('textbox', { name: 'Purpose', exact: true }).inputValue()).resolves.toBe('Quality assurance and training');
    // Another window's save reaches this one.
    await h.push('settingsChanged', { ...sandboxSettings, serviceCapture: { ...saved, record: false } });
    await expect.poll(() => section.getByRole('checkbox', { name: 'Ask the service to record calls', exact: true }).isChecked()).toBe(false);
  });

  test('a ticked box without a purpose: "Purpose is required" at the field, the focus there, nothing sent; unticked, an empty purpose saves', async () => {
    const section = await openSettings();
    await section.getByRole('checkbox', { name: 'Ask the service to transcribe calls', exact: true }).check();
    await section.getByRole('textbox', { name: 'Purpose', exact: true }).fill('   ');
    await section.getByRole('button', { name: 'Save recording settings', exact: true }).click();
    const purpose = section.getByRole('textbox', { name: 'Purpose', exact: true });
    await expect.poll(() => section.getByRole('alert').textContent()).toBe('Purpose is required');
    await expect(purpose.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect.poll(() => purpose.evaluate((el) => document.activeElement === el)).toBe(true);
    // The error is the field's description too.
    await expect(purpose.evaluate((el) => (el.getAttribute('aria-describedby') ?? '').split(' ').map((id) => document.getElementById(id)?.textContent))).resolves.toContain('Purpose is required');
    await expect(commandsNamed('saveServiceCapture')).resolves.toEqual([]);

    // Typing in the field clears its error; with nothing asked for, no purpose is needed.
    await purpose.fill('');
    await expect(section.getByRole('alert').count()).resolves.toBe(0);
    await section.getByRole('checkbox', { name: 'Ask the service to transcribe calls', exact: true }).uncheck();
    await h.answer('saveServiceCapture', savedAs({ record: false, transcribe: false, purpose: '', language: 'en_US' }));
    await section.getByRole('button', { name: 'Save recording settings', exact: true }).click();
    await expect.poll(() => commandsNamed('saveServiceCapture')).toEqual([{ serviceCapture: { record: false, transcribe: false, purpose: '', language: 'en_US' } }]);
  });

  test('at most 250 characters: the counter says so past it, and the save names the field and the limit; 250 save', async () => {
    const section = await openSettings({ record: true, transcribe: false, purpose: '', language: 'en_US' });
    const purpose = section.getByRole('textbox', { name: 'Purpose', exact: true });
    await purpose.fill('x'.repeat(251));
    const counter = section.getByText('251/250', { exact: true });
    await counter.waitFor();
    await expect(counter.getAttribute('class')).resolves.toContain('is-over');
    await section.getByRole('button', { name: 'Save recording settings', exact: true }).click();
    await expect.poll(() => section.getByRole('alert').textContent()).toBe('Purpose must be at most 250 characters');
    await expect(commandsNamed('saveServiceCapture')).resolves.toEqual([]);

    await purpose.fill('y'.repeat(250));
    await section.getByText('250/250', { exact: true }).waitFor();
    await h.answer('saveServiceCapture', savedAs({ record: true, transcribe: false, purpose: 'y'.repeat(250), language: 'en_US' }));
    await section.getByRole('button', { name: 'Save recording settings', exact: true }).click();
    await expect.poll(() => section.getByRole('status').textContent()).toBe('Recording and transcription settings saved.');
    await expect(commandsNamed('saveServiceCapture')).resolves.toEqual([{ serviceCapture: { record: true, transcribe: false, purpose: 'y'.repeat(250), language: 'en_US' } }]);
  });

  test('the main process\'s refusal goes to the field it names; another one above the button', async () => {
    const section = await openSettings({ record: true, transcribe: false, purpose: 'QA', language: 'en_US' });
    await h.answer('saveServiceCapture', {
      ok: false,
      error: { code: 'invalid_input', message: 'serviceCapture.purpose: is required', issues: [{ field: 'serviceCapture.purpose', text: { code: 'common.required' } }] },
    });
    await section.getByRole('button', { name: 'Save recording settings', exact: true }).click();
    await expect.poll(() => section.getByRole('alert').textContent()).toBe('Purpose is required');
    await expect(section.getByRole('textbox', { name: 'Purpose', exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');

    await h.answer('saveServiceCapture', err('internal', 'The settings file could not be written'));
    await section.getByRole('textbox', { name: 'Purpose', exact: true }).fill('Quality assurance');
    await section.getByRole('button', { name: 'Save recording settings', exact: true }).click();
    // Not about a field: above the button, the purpose no longer marked.
    await expect.poll(() => section.locator('.form-error').textContent()).toMatch(/^Something went wrong inside the app/);
    await expect(section.getByRole('alert').count()).resolves.toBe(1);
    await expect(section.getByRole('textbox', { name: 'Purpose', exact: true }).getAttribute('aria-invalid')).resolves.toBe(null);
  });

  test('in Spanish, the section, its fields and the languages are in Spanish', async () => {
    const section = await openSettings(undefined, { language: 'es' });
    await section.getByRole('checkbox', { name: 'Pedir al servicio que grabe las llamadas', exact: true }).waitFor();
    const names = await section.getByRole('combobox', { name: 'Idioma del aviso', exact: true }).locator('option').allTextContents();
    expect(names).toContain('hindi');
    expect(names).not.toContain('Hindi');
  });

  test('axe finds nothing serious with an error said, light and dark, wide and narrow', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const width of [1280, 380]) {
        const section = await openSettings({ record: true, transcribe: true, purpose: '', language: 'en_US' }, { width, colorScheme });
        await section.getByRole('button', { name: 'Save recording settings', exact: true }).click();
        await section.getByRole('alert').waitFor();
        await expect(page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).resolves.toBe(false);
        const results = await new AxeBuilder({ page }).include('.capture-settings').withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
        const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), `${colorScheme} ${width}`).toEqual([]);
        await page.close();
      }
    }
  }, 60_000);
});

describe('a recent call the service recorded and transcribed', () => {
  /** An answered call, with the service's recording and transcript (kept here unless told otherwise). */
  function answered(id: string, name: string | undefined, number: string, capture: { recording?: Partial<NonNullable<HistoryEntry['serviceRecording']>> | null; transcript?: Partial<NonNullable<HistoryEntry['transcript']>> | null } = {}): HistoryEntry {
    const now = Date.now();
    const at = now - 2 * MINUTE;
    return {
      localId: `in:${id}`,
      callId: id,
      direction: 'incoming',
      number,
      ...(name === undefined ? {} : { name }),
      outcome: 'completed',
      startedAt: at - 3 * MINUTE,
      endedAt: at,
      durationSec: 150,
      ...(capture.recording === null ? {} : { serviceRecording: { mediaId: `rec-${id}`, at: at + 5000, saved: true, ...capture.recording } }),
      ...(capture.transcript === null ? {} : { transcript: { mediaId: `doc-${id}`, at: at + 6000, saved: true, ...capture.transcript } }),
    };
  }

  const SEGMENTS: TranscriptSegment[] = [
    { speaker: 'Customer', channel: 1, start: 3.4, end: 6, text: 'Hello, my parcel has not arrived.', confidence: 0.92 },
    { speaker: 'Business', channel: 0, start: 0, end: 2.2, text: 'This call is recorded.' },
    { speaker: 'Business', channel: 0, start: 65.7, end: 70, text: 'It leaves the depot today.' },
  ];

  async function open(history: HistoryEntry[], options: { width?: number; colorScheme?: 'light' | 'dark' } = {}): Promise<void> {
    page = await windows.open({ width: options.width ?? 460, height: 900, ...(options.colorScheme ? { colorScheme: options.colorScheme } : {}) });
    page.setDefaultTimeout(5000);
    h = host(page);
    await h.start(snapshot([], { history, presence: { choice: 'available', status: 'available' } }));
    await page.locator('#recent-calls li').first().waitFor();
  }
  const recentRows = () => page.getByRole('region', { name: 'Recent calls', exact: true }).getByRole('list', { name: 'Recent calls', exact: true }).getByRole('listitem');
  const row = (text: string) => recentRows().filter({ hasText: text });
  const playRecording = (r: Locator) => r.getByRole('button', { name: 'Play recording', exact: true });
  const transcriptButton = (r: Locator) => r.getByRole('button', { name: 'Transcript', exact: true });
  const dialog = () => page.getByRole('dialog', { name: 'Transcript', exact: true });
  const segmentsOf = (d: Locator) =>
    d.getByRole('listitem').evaluateAll((items) =>
      items.map((li) => ({ speaker: li.querySelector('.transcript-speaker')?.textContent, time: li.querySelector('time')?.textContent, text: li.querySelector('.transcript-text')?.textContent })),
    );

  test('"Play recording" and "Transcript" under the call; a call without them shows neither, and nothing is fetched before the agent asks', async () => {
    await open([answered('wacid.r1', 'Ada Lovelace', ADA), answered('wacid.plain', 'Grace Hopper', '12025550101', { recording: null, transcript: null }), answered('wacid.r2', 'Alan Turing', '14155550123', { transcript: null })]);
    await playRecording(row('Ada Lovelace')).waitFor();
    await transcriptButton(row('Ada Lovelace')).waitFor();
    await playRecording(row('Alan Turing')).waitFor();
    await expect(transcriptButton(row('Alan Turing')).count()).resolves.toBe(0);
    await expect(playRecording(row('Grace Hopper')).count()).resolves.toBe(0);
    await expect(transcriptButton(row('Grace Hopper')).count()).resolves.toBe(0);
    await expect(commandsNamed('getServiceRecording')).resolves.toEqual([]);
    await expect(commandsNamed('getTranscript')).resolves.toEqual([]);
  });

  test('"Play recording" fetches the call\'s recording and plays it from a blob: URL under the row, named for the call; again plays it from the start', async () => {
    await open([answered('wacid.r1', 'Ada Lovelace', ADA)]);
    await h.answer('getServiceRecording', ok({ mimeType: 'audio/wav', data: toneWavBase64(1.5) }));
    const ada = row('Ada Lovelace');
    await playRecording(ada).click();
    const audio = ada.getByLabel('Recording of the call with Ada Lovelace', { exact: true });
    await audio.waitFor();
    await expect(commandsNamed('getServiceRecording')).resolves.toEqual([{ localId: 'in:wacid.r1' }]);
    const state = () => audio.evaluate((el) => ({ src: (el as HTMLAudioElement).src, duration: (el as HTMLAudioElement).duration, paused: (el as HTMLAudioElement).paused, controls: (el as HTMLAudioElement).controls }));
    expect((await state()).src).toMatch(/^blob:http:\/\/127\.0\.0\.1:\d+\//);
    expect((await state()).controls).toBe(true);
    await expect.poll(async () => (await state()).duration).toBeCloseTo(1.5, 1);
    await expect.poll(async () => (await state()).paused).toBe(false);
    await expect(playRecording(ada).getAttribute('aria-controls')).resolves.toBe(await audio.getAttribute('id'));

    await audio.evaluate((el) => {
      (el as HTMLAudioElement).pause();
      (el as HTMLAudioElement).currentTime = 1;
    });
    await playRecording(ada).click();
    await expect.poll(() => audio.evaluate((el) => (el as HTMLAudioElement).currentTime < 1 && !(el as HTMLAudioElement).paused)).toBe(true);
    await expect(commandsNamed('getServiceRecording')).resolves.toHaveLength(1);
  });

  test('a recording that cannot be played is said in the row; pressing again tries again', async () => {
    await open([answered('wacid.r1', 'Ada Lovelace', ADA)]);
    await h.answer('getServiceRecording', err('not_found', 'The service no longer has this recording'));
    const ada = row('Ada Lovelace');
    await playRecording(ada).click();
    await expect.poll(() => ada.getByRole('alert').textContent()).toBe('The recording could not be played: The service no longer has this recording');
    await h.answer('getServiceRecording', ok({ mimeType: 'audio/wav', data: toneWavBase64(1) }));
    await playRecording(ada).click();
    await ada.getByLabel('Recording of the call with Ada Lovelace', { exact: true }).waitFor();
    await expect(ada.getByRole('alert').count()).resolves.toBe(0);
  });

  test('"Transcript" opens a dialog listing each segment in order: the agent\'s name for channel 0, the customer\'s for channel 1, m:ss from the start, the words', async () => {
    await open([answered('wacid.r1', 'Ada Lovelace', ADA)]);
    await h.answer('getTranscript', ok({ segments: SEGMENTS }));
    await h.answer('getTeam', ok([
      { agentId: 'a1', name: 'Jake Peralta', presence: 'available' },
      { agentId: 'a2', name: 'Rosa Diaz', presence: 'available', self: true },
    ]));
    await transcriptButton(row('Ada Lovelace')).click();
    const d = dialog();
    await d.waitFor();
    await d.getByRole('listitem').first().waitFor();
    await expect(commandsNamed('getTranscript')).resolves.toEqual([{ localId: 'in:wacid.r1' }]);
    await expect(segmentsOf(d)).resolves.toEqual([
      { speaker: 'Rosa Diaz', time: '0:00', text: 'This call is recorded.' },
      { speaker: 'Ada Lovelace', time: '0:03', text: 'Hello, my parcel has not arrived.' },
      { speaker: 'Rosa Diaz', time: '1:05', text: 'It leaves the depot today.' },
    ]);
    await expect(d.getByText('Call with Ada Lovelace', { exact: true }).count()).resolves.toBe(1);
    // Modal: Escape closes it, and the focus is back on "Transcript".
    await page.keyboard.press('Escape');
    await d.waitFor({ state: 'detached' });
    await expect(transcriptButton(row('Ada Lovelace')).evaluate((el) => document.activeElement === el)).resolves.toBe(true);
  });

  test('an agent the app knows no name for is "You"; a customer without a name is their number; "Close" closes', async () => {
    await open([answered('wacid.r2', undefined, '14155550123')]);
    await h.answer('getTranscript', ok({ segments: SEGMENTS.slice(0, 2) }));
    await transcriptButton(row('+1 415 555 0123')).click();
    const d = dialog();
    await d.getByRole('listitem').first().waitFor();
    await expect(segmentsOf(d)).resolves.toEqual([
      { speaker: 'You', time: '0:00', text: 'This call is recorded.' },
      { speaker: '+1 415 555 0123', time: '0:03', text: 'Hello, my parcel has not arrived.' },
    ]);
    await d.getByRole('button', { name: 'Close', exact: true }).click();
    await d.waitFor({ state: 'detached' });
  });

  test('a transcript that cannot be read is said in the dialog, with "Try again", which reads it', async () => {
    await open([answered('wacid.r1', 'Ada Lovelace', ADA)]);
    await h.answer('getTranscript', err('not_found', 'The service no longer has this transcript'));
    await transcriptButton(row('Ada Lovelace')).click();
    const d = dialog();
    await expect.poll(() => d.getByRole('alert').textContent()).toBe('The transcript could not be read: The service no longer has this transcript');
    const retry = d.getByRole('button', { name: 'Try again', exact: true });
    await expect.poll(() => retry.evaluate((el) => document.activeElement === el)).toBe(true);
    await h.answer('getTranscript', ok({ segments: SEGMENTS }));
    await retry.click();
    await d.getByRole('listitem').first().waitFor();
    await expect(d.getByRole('listitem').count()).resolves.toBe(3);
    await expect(commandsNamed('getTranscript')).resolves.toHaveLength(2);
  });

  test('not kept here yet: said quietly beside each button, with the reason when a fetch failed; the buttons still offered', async () => {
    await open([answered('wacid.r1', 'Ada Lovelace', ADA, { recording: { saved: false, fetchError: 'The media link had lapsed' }, transcript: { saved: false } })]);
    const ada = row('Ada Lovelace');
    await ada.getByText('Recording not fetched yet: The media link had lapsed', { exact: true }).waitFor();
    await ada.getByText('Transcript not fetched yet', { exact: true }).waitFor();
    await expect(ada.locator('[role="alert"], [role="status"], [aria-live]').filter({ hasText: 'not fetched yet' }).count()).resolves.toBe(0);
    await playRecording(ada).waitFor();
    await transcriptButton(ada).waitFor();
    // Kept since: nothing to say.
    await h.push('historyChanged', [answered('wacid.r1', 'Ada Lovelace', ADA)]);
    await ada.getByText('not fetched yet', { exact: false }).first().waitFor({ state: 'detached' });
  });

  test('axe finds nothing serious with the recording playing and the transcript open, light and dark, at the narrowest width', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      await open([answered('wacid.r1', 'Ada Lovelace', ADA, { transcript: { saved: false, fetchError: 'The media link had lapsed' } })], { width: 380, colorScheme });
      await h.answer('getServiceRecording', ok({ mimeType: 'audio/wav', data: toneWavBase64(1) }));
      await h.answer('getTranscript', ok({ segments: SEGMENTS }));
      await playRecording(row('Ada Lovelace')).click();
      await row('Ada Lovelace').locator('audio').waitFor();
      await expect(page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).resolves.toBe(false);
      await transcriptButton(row('Ada Lovelace')).click();
      await dialog().getByRole('listitem').first().waitFor();
      const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
      const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), colorScheme).toEqual([]);
      await page.close();
    }
  }, 60_000);
});
