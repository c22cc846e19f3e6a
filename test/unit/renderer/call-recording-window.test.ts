// The team's recording of a bridged call and the supervisors in it, in the agent's window, in Chromium
// (window-in-chromium.ts): "Record" and "Stop recording" on the call panel of a team that records on
// demand, "Recording" in every window of a call that records whatever the mode, "NAME is whispering",
// "NAME joined the call" and "NAME is listening" as a polite status; in recent calls "Play recording"
// for the team's file and, beside it, "Play the service's recording".
import AxeBuilder from '@axe-core/playwright';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import type { TeamInfo } from '../../../shared/api';
import type { CallMonitor, CallState } from '../../../shared/call-state';
import type { HistoryEntry } from '../../../shared/history';
import type { UiLanguage } from '../../../shared/i18n/languages';
import { err, ok } from '../../../shared/result';
import { DEFAULT_TEAM_SETTINGS } from '../../../shared/team-settings';
import { active, bridgedActive, connecting, snapshot } from './fixtures';
import { toneWavBase64 } from './voicemail-audio';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();
let page: Page;
type Host = ReturnType<typeof host>;

const LOCAL = 'in:wacid.1';
const teamRecording = (record?: TeamInfo['record']): TeamInfo => ({ role: 'agent', settings: { ...DEFAULT_TEAM_SETTINGS }, ...(record ? { record } : {}) });
const bridged = (more: Partial<Pick<CallState, 'recording' | 'monitors'>> = {}, at = Date.now()): CallState => ({ ...bridgedActive(undefined, 'wacid.1', at), ...more }) as CallState;

async function open(calls: CallState[], options: { team?: TeamInfo; history?: HistoryEntry[]; language?: UiLanguage; colorScheme?: 'light' | 'dark' } = {}): Promise<Host> {
  page = await windows.open({ colorScheme: options.colorScheme ?? 'light' });
  page.setDefaultTimeout(5000);
  const h = host(page);
  await h.start(snapshot(calls, { team: options.team ?? teamRecording('on-demand'), history: options.history ?? [], presence: { choice: 'available', status: 'available' } }), options.language);
  return h;
}

const panel = () => page.getByRole('region', { name: 'Current call' });
const button = (name: string) => panel().getByRole('button', { name, exact: true });
const recordingStatus = () => panel().getByRole('status', { name: 'Recording', exact: true });
const controls = () => panel().locator('.call-controls button').allTextContents();
const commandsNamed = async (h: Host, name: string) => (await h.commands()).filter((c) => c.name === name).map((c) => c.params);

describe('"Record" and "Stop recording"', () => {
  test('a team that records on demand: "Record" beside the transfer buttons; the relay\'s word shows "Recording" and "Stop recording"', async () => {
    const h = await open([bridged()]);
    await expect.poll(controls).toEqual(['Mute', 'Hold', 'Keypad', 'Transfer', 'Consult', 'Record', 'Hang up']);
    await expect(recordingStatus().count()).resolves.toBe(0);
    await h.answer('setRecording', ok({ recording: true }));
    await button('Record').click();
    await expect.poll(() => commandsNamed(h, 'setRecording')).toEqual([{ localId: LOCAL, recording: true }]);
    // Every window in the call shows it as the relay tells it (call.recording).
    await h.push('callChanged', bridged({ recording: true }));
    await recordingStatus().waitFor();
    await expect(recordingStatus().textContent()).resolves.toBe('Recording');
    await expect(recordingStatus().locator('.recording-dot').count()).resolves.toBe(1);
    await h.answer('setRecording', ok({ recording: false }));
    await button('Stop recording').click();
    await expect.poll(() => commandsNamed(h, 'setRecording')).toEqual([
      { localId: LOCAL, recording: true },
      { localId: LOCAL, recording: false },
    ]);
    await h.push('callChanged', bridged());
    await recordingStatus().waitFor({ state: 'detached' });
    await button('Record').waitFor();
  });

  test('by keyboard: Tab reaches it after "Consult", Enter presses it', async () => {
    const h = await open([bridged()]);
    await h.answer('setRecording', ok({ recording: true }));
    await button('Consult').focus();
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Record');
    await page.keyboard.press('Enter');
    await expect.poll(() => commandsNamed(h, 'setRecording')).toEqual([{ localId: LOCAL, recording: true }]);
  });

  test('a refusal is said under the buttons, in the relay\'s words', async () => {
    const h = await open([bridged()]);
    await h.answer('setRecording', err('invalid_state', 'The customer is not connected yet'));
    await button('Record').click();
    await expect.poll(() => panel().getByRole('alert').textContent()).toBe('Recording could not start: The customer is not connected yet');
    await h.answer('setRecording', ok({ recording: true }));
    await button('Record').click();
    await expect.poll(() => panel().getByRole('alert').count()).toBe(0);
  });

  test('not offered on a direct call, before the call is connected, or when the team records always or never', async () => {
    const h = await open([active('wacid.1', Date.now())]);
    await button('Hang up').waitFor();
    await expect(button('Record').count()).resolves.toBe(0);
    await h.push('callChanged', { ...connecting('wacid.1', Date.now()), bridged: true });
    await expect(button('Record').count()).resolves.toBe(0);
    for (const record of ['always', undefined] as const) {
      await open([bridged()], { team: teamRecording(record) });
      await button('Hang up').waitFor();
      await expect(button('Record').count()).resolves.toBe(0);
      await page.close();
    }
  });

  test('"Recording" whatever the team\'s mode, whoever started it', async () => {
    const h = await open([bridged()], { team: teamRecording('always') });
    await button('Hang up').waitFor();
    await h.push('callChanged', bridged({ recording: true }));
    await recordingStatus().waitFor();
    await expect(button('Stop recording').count()).resolves.toBe(0);
  });
});

describe('supervisors in the agent\'s call', () => {
  const rosa = (mode: CallMonitor['mode']): CallMonitor => ({ supervisorId: 's1', name: 'Rosa Diaz', mode });

  test('"NAME is whispering", "NAME joined the call", "NAME is listening": a polite status there before the words', async () => {
    const h = await open([bridged()]);
    const said = panel().locator('.call-monitors');
    await said.waitFor({ state: 'attached' });
    await expect(said.getAttribute('role')).resolves.toBe('status');
    await expect(said.textContent()).resolves.toBe('');
    await h.push('callChanged', bridged({ monitors: [rosa('whisper')] }));
    await expect.poll(() => said.textContent()).toBe('Rosa Diaz is whispering');
    await h.push('callChanged', bridged({ monitors: [rosa('barge')] }));
    await expect.poll(() => said.textContent()).toBe('Rosa Diaz joined the call');
    await h.push('callChanged', bridged({ monitors: [rosa('listen'), { supervisorId: 's2', name: 'Priya Nair', mode: 'whisper' }] }));
    await expect.poll(() => said.locator('p').allTextContents()).toEqual(['Rosa Diaz is listening', 'Priya Nair is whispering']);
    await h.push('callChanged', bridged({ monitors: [] }));
    await expect.poll(() => said.textContent()).toBe('');
  });

  test('in Arabic, and with "Recording", axe finds nothing serious, light and dark', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      await open([bridged({ recording: true, monitors: [rosa('whisper')] })], { language: 'ar', colorScheme });
      const arabic = page.getByRole('region', { name: 'المكالمة الحالية' });
      await arabic.getByRole('status', { name: 'جارٍ التسجيل', exact: true }).waitFor();
      await arabic.getByText('Rosa Diaz يهمس', { exact: true }).waitFor();
      await arabic.getByRole('button', { name: 'إيقاف التسجيل', exact: true }).waitFor();
      const results = await new AxeBuilder({ page }).include('.current').withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
      const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), colorScheme).toEqual([]);
      await page.close();
    }
  }, 60_000);
});

describe('recent calls: the team\'s recording', () => {
  const MINUTE = 60_000;
  function entry(id: string, name: string, more: Partial<HistoryEntry> = {}): HistoryEntry {
    const at = Date.now() - 2 * MINUTE;
    return { localId: `in:${id}`, callId: id, direction: 'incoming', number: '447700900123', name, outcome: 'completed', startedAt: at - 3 * MINUTE, endedAt: at, durationSec: 150, ...more };
  }
  const rows = () => page.getByRole('list', { name: 'Recent calls', exact: true }).getByRole('listitem');
  const row = (text: string) => rows().filter({ hasText: text });
  const play = (r: Locator, name: string) => r.getByRole('button', { name, exact: true });

  test('"Play recording" plays the relay\'s file from getRecording, named for the call; nothing is fetched before the agent asks', async () => {
    const h = await open([], { history: [entry('wacid.t1', 'Ada Lovelace', { teamRecording: true }), entry('wacid.none', 'Grace Hopper')] });
    const ada = row('Ada Lovelace');
    await play(ada, 'Play recording').waitFor();
    await expect(play(row('Grace Hopper'), 'Play recording').count()).resolves.toBe(0);
    await expect(play(ada, "Play the service's recording").count()).resolves.toBe(0);
    await expect(commandsNamed(h, 'getRecording')).resolves.toEqual([]);
    await h.answer('getRecording', ok({ mimeType: 'audio/wav', data: toneWavBase64(1.2) }));
    await play(ada, 'Play recording').click();
    const audio = ada.getByLabel('Recording of the call with Ada Lovelace', { exact: true });
    await audio.waitFor();
    await expect(commandsNamed(h, 'getRecording')).resolves.toEqual([{ localId: 'in:wacid.t1' }]);
    await expect.poll(() => audio.evaluate((el) => (el as HTMLAudioElement).duration)).toBeCloseTo(1.2, 1);
    await expect(commandsNamed(h, 'getServiceRecording')).resolves.toEqual([]);
  });

  test('beside the service\'s own: "Play recording" is the team\'s, "Play the service\'s recording" the service\'s, each its own file', async () => {
    const at = Date.now();
    const h = await open([], { history: [entry('wacid.t2', 'Ada Lovelace', { teamRecording: true, serviceRecording: { mediaId: 'rec-1', at, saved: true } })] });
    const ada = row('Ada Lovelace');
    await h.answer('getServiceRecording', ok({ mimeType: 'audio/wav', data: toneWavBase64(2) }));
    await play(ada, "Play the service's recording").click();
    await ada.getByLabel("The service's recording of the call with Ada Lovelace", { exact: true }).waitFor();
    await expect(commandsNamed(h, 'getServiceRecording')).resolves.toEqual([{ localId: 'in:wacid.t2' }]);
    await expect(commandsNamed(h, 'getRecording')).resolves.toEqual([]);
    await h.answer('getRecording', err('not_found', "The team's recording is not ready yet"));
    await play(ada, 'Play recording').click();
    await expect.poll(() => ada.getByRole('alert').textContent()).toBe("The recording could not be played: The team's recording is not ready yet");
    await expect(commandsNamed(h, 'getRecording')).resolves.toEqual([{ localId: 'in:wacid.t2' }]);
  });

  test('in Spanish', async () => {
    await open([], { history: [entry('wacid.t3', 'Ada Lovelace', { teamRecording: true, serviceRecording: { mediaId: 'rec-1', at: Date.now(), saved: true } })], language: 'es' });
    const ada = page.getByRole('listitem').filter({ hasText: 'Ada Lovelace' });
    await ada.getByRole('button', { name: 'Reproducir grabación', exact: true }).waitFor();
    await ada.getByRole('button', { name: 'Reproducir la grabación del servicio', exact: true }).waitFor();
  });
});
