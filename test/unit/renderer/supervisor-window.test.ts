// Supervisors in the window, in Chromium (window-in-chromium.ts): the Team view's "Live calls" as a
// supervisor sees them (and an agent does not), read every LIVE_CALLS_REFRESH_MS on the page's own
// clock; "Listen", "Whisper", "Barge" joining a call and switching it; the joined call's panel on every
// screen with "Leave"; "Recording" on a call that records, in the list and on the joined call's panel;
// the relay's word that the call ended; the layout at the narrowest width and at 1280×720, and axe. The supervisor's leg is the page's stand-in (window-page.ts `monitorLog`).
import AxeBuilder from '@axe-core/playwright';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import type { AppSnapshot, TeamInfo } from '../../../shared/api';
import type { UiLanguage } from '../../../shared/i18n/languages';
import { err, ok } from '../../../shared/result';
import { LIVE_CALLS_REFRESH_MS, type LiveCall } from '../../../shared/supervision';
import { DEFAULT_TEAM_SETTINGS } from '../../../shared/team-settings';
import type { Wallboard } from '../../../shared/wallboard';
import { snapshot } from './fixtures';
import { host, windowsForFile } from './window-in-chromium';

const windows = windowsForFile();
let page: Page;
type Host = ReturnType<typeof host>;

const NOW = Date.UTC(2025, 5, 10, 14, 30, 0);
const SUPERVISOR: TeamInfo = { role: 'supervisor', settings: { ...DEFAULT_TEAM_SETTINGS } };

const board = (at: number): Wallboard => ({
  at,
  timezone: 'Europe/London',
  dayStartedAt: Date.UTC(2025, 5, 9, 23, 0, 0),
  records: 'none',
  agents: [{ agentId: 's1', name: 'Rosa Diaz', presence: 'available', self: true }],
  callbacks: [],
});

const liveCalls = (at: number): LiveCall[] => [
  {
    callId: 'c-talk',
    direction: 'incoming',
    customer: { number: '447700900123', name: 'Amelia Hart' },
    agents: [{ id: 'a1', name: 'Maya Chen' }],
    state: 'talking',
    startedAt: at - 140_000,
    answeredAt: at - 125_000,
    bridged: true,
    quality: { mos: 4.31, lossPercent: 0.2, jitterMs: 4 },
    monitors: [],
  },
  {
    callId: 'c-hold',
    direction: 'outgoing',
    customer: { number: '14155550123' },
    agents: [{ id: 'a3', name: 'Jonas Berg' }],
    state: 'on_hold',
    startedAt: at - 400_000,
    answeredAt: at - 390_000,
    bridged: true,
    quality: { mos: 3.72 },
    monitors: [{ id: 's2', name: 'Priya Nair', mode: 'listen' }],
  },
  { callId: 'c-ring', direction: 'incoming', customer: { number: '5511987654321', name: 'Bruno Souza' }, agents: [], state: 'ringing', startedAt: at - 8_000, bridged: true, monitors: [] },
  {
    callId: 'c-direct',
    direction: 'incoming',
    customer: { number: '919812345678', name: 'Ananya Iyer' },
    agents: [{ id: 'a4', name: 'Olu Adeyemi' }],
    state: 'talking',
    startedAt: at - 30_000,
    answeredAt: at - 25_000,
    bridged: false,
    monitors: [],
  },
  {
    callId: 'c-xfer',
    direction: 'incoming',
    customer: { number: '6281234567890', name: 'Siti Rahma' },
    agents: [
      { id: 'a5', name: 'Zoë Tran' },
      { id: 'a6', name: 'Ben Okafor' },
    ],
    state: 'transferring',
    startedAt: at - 200_000,
    answeredAt: at - 190_000,
    bridged: true,
    quality: { mos: 2.94, lossPercent: 6 },
    recording: true,
    monitors: [],
  },
];

/** The window of a supervisor (unless `team` says otherwise) on a paused clock at NOW, unless `realClock`. */
async function open(options: { team?: TeamInfo; language?: UiLanguage; width?: number; height?: number; colorScheme?: 'light' | 'dark'; realClock?: boolean; extra?: Partial<AppSnapshot>; calls?: (at: number) => LiveCall[]; wallboard?: 'defer' } = {}): Promise<Host> {
  page = await windows.open({ width: options.width ?? 460, height: options.height ?? 900, colorScheme: options.colorScheme ?? 'light' });
  page.setDefaultTimeout(5000);
  const at = options.realClock ? Date.now() : NOW;
  if (!options.realClock) {
    await page.clock.install({ time: NOW - 10_000 });
    await page.clock.pauseAt(NOW);
  }
  const h = host(page);
  if (options.wallboard === 'defer') await h.defer('getWallboard');
  else await h.answer('getWallboard', ok(board(at)));
  await h.answer('getLiveCalls', ok({ at, calls: (options.calls ?? liveCalls)(at) }));
  await h.answer('startMonitor', ok({ callId: 'c-talk', mode: 'listen', legId: 'leg-1', offer: 'v=0\r\n' }));
  await h.answer('answerMonitor', ok(null));
  await h.answer('leaveMonitor', ok(null));
  await h.start(snapshot([], { presence: { choice: 'available', status: 'available' }, team: options.team ?? SUPERVISOR, ...options.extra }), options.language);
  return h;
}

const teamButton = () => page.getByRole('button', { name: 'Team', exact: true });
const liveList = () => page.getByRole('region', { name: 'Team', exact: true }).getByRole('list', { name: 'Live calls', exact: true });
const item = (text: string) => liveList().locator(':scope > li').filter({ hasText: text });
const panel = () => page.getByRole('region', { name: 'Joined call', exact: true });
const modeButton = (where: Locator, name: 'Listen' | 'Whisper' | 'Barge') => where.getByRole('button', { name, exact: true });
const commandsNamed = async (h: Host, name: string) => (await h.commands()).filter((c) => c.name === name).map((c) => c.params);
const descriptionOf = (button: Locator) => button.evaluate((b) => document.getElementById(b.getAttribute('aria-describedby') ?? '')?.textContent);
const pressed = (where: Locator) =>
  where.getByRole('button').evaluateAll((buttons) => buttons.filter((b) => ['Listen', 'Whisper', 'Barge'].includes(b.textContent ?? '')).map((b) => [b.textContent, b.getAttribute('aria-pressed'), b.getAttribute('aria-disabled')]));

/** Each item as its parts read on screen. */
const itemTexts = () =>
  liveList()
    .locator(':scope > li')
    .evaluateAll((items) =>
      items.map((li) => ({
        agents: li.querySelector('.live-call-agents')?.textContent,
        customer: [...li.querySelectorAll('.live-call-customer > :not([aria-hidden])')].map((s) => s.textContent).join(' '),
        facts: [...li.querySelectorAll('.live-call-facts > span')].map((s) => s.textContent),
        buttons: [...li.querySelectorAll('button')].map((b) => b.textContent),
        note: li.querySelector('.live-call-direct, .live-call-monitors')?.textContent ?? null,
      })),
    );

async function joinMaya(h: Host): Promise<void> {
  await teamButton().click();
  await modeButton(item('Maya Chen'), 'Listen').click();
  await panel().waitFor();
  await expect.poll(() => h.monitorLog()).toEqual(['answer c-talk leg-1 listen', 'connect leg-1']);
}

describe('a supervisor\'s Team view: "Live calls"', () => {
  test('this supervisor\'s own join is not said as "NAME is listening" (its panel says it); a colleague supervisor\'s is', async () => {
    const withSelf = (at: number) => liveCalls(at).map((call) => (call.callId === 'c-hold' ? { ...call, monitors: [{ id: 's1', name: 'Rosa Diaz', mode: 'whisper' as const }, ...call.monitors] } : call));
    await open({ calls: withSelf });
    await teamButton().click();
    await liveList().waitFor();
    const notes = (await itemTexts()).map((i) => i.note);
    expect(notes[0]).toBe('Priya Nair is listening');
    expect(notes.join(' ')).not.toContain('Rosa Diaz');
  });

  test('the relay\'s word of who this agent is suffices: its own join is not said while the board is still loading', async () => {
    const withSelf = (at: number) => liveCalls(at).map((call) => (call.callId === 'c-talk' ? { ...call, monitors: [{ id: 's1', name: 'Rosa Diaz', mode: 'listen' as const }] } : call));
    await open({ calls: withSelf, wallboard: 'defer', team: { ...SUPERVISOR, agentId: 's1' } });
    await teamButton().click();
    await item('Jonas Berg').waitFor();
    const notes = (await itemTexts()).map((i) => i.note);
    expect(notes).toContain('Priya Nair is listening');
    expect(notes.join(' ')).not.toContain('Rosa Diaz');
  });

  test('every live call of the team: agents, customer, direction, state, duration, quality; the buttons on a bridged answered call only', async () => {
    const h = await open();
    await teamButton().click();
    await liveList().waitFor();
    await page.getByRole('heading', { name: 'Live calls', level: 3 }).waitFor();
    expect(await itemTexts()).toEqual([
      { agents: 'Jonas Berg', customer: '+1 415 555 0123', facts: ['Outgoing', 'On hold', 'Duration: 6:30', 'FairQuality: Fair, MOS 3.7'], buttons: ['Listen', 'Whisper', 'Barge'], note: 'Priya Nair is listening' },
      { agents: 'Zoë Tran and Ben Okafor', customer: 'Siti Rahma +62 812 3456 7890', facts: ['Incoming', 'Transferring', 'Duration: 3:10', 'PoorQuality: Poor, MOS 2.9', 'Recording'], buttons: ['Listen', 'Whisper', 'Barge'], note: null },
      { agents: 'Maya Chen', customer: 'Amelia Hart +44 7700 900123', facts: ['Incoming', 'Talking', 'Duration: 2:05', 'GoodQuality: Good, MOS 4.3'], buttons: ['Listen', 'Whisper', 'Barge'], note: null },
      { agents: 'Olu Adeyemi', customer: 'Ananya Iyer +91 98123 45678', facts: ['Incoming', 'Talking', 'Duration: 0:25'], buttons: [], note: 'Direct call: cannot be joined' },
      { agents: 'Ringing for the team', customer: 'Bruno Souza +55 11 98765 4321', facts: ['Incoming', 'Ringing', 'Duration: 0:08'], buttons: [], note: null },
    ]);
    // The quality's word on screen, its MOS for screen readers (and on hover).
    const quality = item('Maya Chen').locator('.live-quality');
    await expect(quality.locator('[aria-hidden="true"]').textContent()).resolves.toBe('Good');
    await expect(quality.locator('.visually-hidden').textContent()).resolves.toBe('Quality: Good, MOS 4.3');
    await expect(quality.getAttribute('title')).resolves.toBe('Quality: Good, MOS 4.3');
    // Each button names the call it acts on.
    for (const name of ['Listen', 'Whisper', 'Barge'] as const) {
      await expect(descriptionOf(modeButton(item('Maya Chen'), name))).resolves.toBe('Call between Maya Chen and Amelia Hart');
      await expect(modeButton(item('Maya Chen'), name).getAttribute('aria-pressed')).resolves.toBe('false');
    }
    await expect(descriptionOf(modeButton(item('Zoë Tran'), 'Barge'))).resolves.toBe('Call between Zoë Tran and Ben Okafor and Siti Rahma');
    // "Recording" as the agent's call panel shows it (the red dot), in words the list's reads do not announce.
    const recording = item('Zoë Tran').locator('.recording-indicator');
    await expect(recording.locator('.recording-dot[aria-hidden="true"]').count()).resolves.toBe(1);
    await expect(recording.getAttribute('role')).resolves.toBe(null);
    await expect(liveList().getByRole('status').count()).resolves.toBe(0);
    // Between reads (the next one not answered yet) the durations tick, in no live region.
    await h.defer('getLiveCalls');
    await page.clock.runFor(2000);
    await expect.poll(async () => (await itemTexts())[2]?.facts[2]).toBe('Duration: 2:07');
    const live = await liveList().evaluate((list) => list.closest('[aria-live], [role="status"], [role="alert"], [role="timer"], [role="log"]') !== null);
    expect(live).toBe(false);
  });

  test('read every second while the view shows, never two at once; none once it closes', async () => {
    const h = await open();
    const reads = async () => (await commandsNamed(h, 'getLiveCalls')).length;
    expect(await reads()).toBe(0);
    await teamButton().click();
    await expect.poll(reads).toBe(1);
    await h.defer('getLiveCalls');
    await page.clock.runFor(LIVE_CALLS_REFRESH_MS);
    await expect.poll(reads).toBe(2);
    await page.clock.runFor(LIVE_CALLS_REFRESH_MS * 3);
    expect(await reads()).toBe(2);
    // It answered late: the next read goes at once.
    await h.settle('getLiveCalls', ok({ at: NOW, calls: [] }));
    await liveList().waitFor({ state: 'detached' });
    await page.getByText('No call is live right now.', { exact: true }).waitFor();
    await page.clock.runFor(1);
    await expect.poll(reads).toBe(3);
    await h.settle('getLiveCalls', ok({ at: NOW, calls: [] }));
    await teamButton().click();
    await page.clock.runFor(LIVE_CALLS_REFRESH_MS * 3);
    expect(await reads()).toBe(3);
  });

  test('a failed read is said, the list read before kept', async () => {
    const h = await open();
    await teamButton().click();
    await item('Maya Chen').waitFor();
    await h.answer('getLiveCalls', err('gateway_unreachable', 'connect ECONNREFUSED'));
    await page.clock.runFor(LIVE_CALLS_REFRESH_MS);
    await expect.poll(() => page.getByRole('region', { name: 'Team', exact: true }).getByRole('alert').textContent()).toMatch(/^The team's live calls could not be read: /);
    await expect(liveList().locator(':scope > li').count()).resolves.toBe(5);
  });
});

describe('an agent who is not a supervisor', () => {
  test('sees no live calls and no "Listen", "Whisper" or "Barge" anywhere, and never asks for them', async () => {
    const h = await open({ team: { role: 'agent', settings: { ...DEFAULT_TEAM_SETTINGS } } });
    await teamButton().click();
    await page.getByRole('table', { name: 'Agents' }).waitFor();
    await expect(page.getByRole('heading', { name: 'Live calls' }).count()).resolves.toBe(0);
    for (const name of ['Listen', 'Whisper', 'Barge']) await expect(page.getByRole('button', { name, exact: true }).count()).resolves.toBe(0);
    await page.clock.runFor(LIVE_CALLS_REFRESH_MS * 3);
    await expect(commandsNamed(h, 'getLiveCalls')).resolves.toEqual([]);
  });

  test('a supervisor made an agent while the view shows: the list goes', async () => {
    const h = await open();
    await teamButton().click();
    await liveList().waitFor();
    await h.push('teamChanged', { role: 'agent', settings: { ...DEFAULT_TEAM_SETTINGS } });
    await liveList().waitFor({ state: 'detached' });
    await expect(page.getByRole('button', { name: 'Listen', exact: true }).count()).resolves.toBe(0);
  });
});

describe('joining a call', () => {
  test('"Listen" joins it: the leg answered and handed back; the panel says who the supervisor hears, the mode pressed in the panel and the item', async () => {
    const h = await open();
    await joinMaya(h);
    await expect(commandsNamed(h, 'startMonitor')).resolves.toEqual([{ callId: 'c-talk', mode: 'listen' }]);
    await expect(commandsNamed(h, 'answerMonitor')).resolves.toEqual([{ callId: 'c-talk', legId: 'leg-1', sdp: 'v=0\r\n' }]);
    await expect(panel().getByRole('status').textContent()).resolves.toBe('Listening to Maya Chen and Amelia Hart');
    await panel().getByText('Connecting the audio…', { exact: true }).waitFor();
    await h.monitorFact({ callId: 'c-talk', legId: 'leg-1', state: 'connected' });
    await panel().getByText('Connecting the audio…', { exact: true }).waitFor({ state: 'detached' });
    expect(await pressed(panel())).toEqual([
      ['Listen', 'true', 'true'],
      ['Whisper', 'false', null],
      ['Barge', 'false', null],
    ]);
    expect(await pressed(item('Maya Chen'))).toEqual(await pressed(panel()));
    await expect(descriptionOf(panel().getByRole('button', { name: 'Leave', exact: true }))).resolves.toBe('Call between Maya Chen and Amelia Hart');
    await expect(panel().getByRole('group', { name: 'How you are in the call' }).getByRole('button').count()).resolves.toBe(3);
  });

  test('"Whisper" and "Barge" switch the joined call without a new leg; the panel says it politely', async () => {
    const h = await open();
    await joinMaya(h);
    await h.answer('startMonitor', ok({ callId: 'c-talk', mode: 'whisper' }));
    await modeButton(panel(), 'Whisper').click();
    await expect.poll(() => panel().getByRole('status').textContent()).toBe('Whispering to Maya Chen');
    await h.answer('startMonitor', ok({ callId: 'c-talk', mode: 'barge' }));
    await modeButton(item('Maya Chen'), 'Barge').click();
    await expect.poll(() => panel().getByRole('status').textContent()).toBe('In the call with Maya Chen and Amelia Hart');
    await expect(commandsNamed(h, 'startMonitor')).resolves.toEqual([
      { callId: 'c-talk', mode: 'listen' },
      { callId: 'c-talk', mode: 'whisper' },
      { callId: 'c-talk', mode: 'barge' },
    ]);
    await expect(h.monitorLog()).resolves.toEqual(['answer c-talk leg-1 listen', 'connect leg-1', 'mode whisper', 'mode barge']);
    await expect(commandsNamed(h, 'answerMonitor')).resolves.toHaveLength(1);
    // The pressed mode does nothing more.
    await modeButton(panel(), 'Barge').click({ force: true });
    await expect(commandsNamed(h, 'startMonitor')).resolves.toHaveLength(3);
  });

  test('the panel shows on the phone and in Settings; "Leave" there leaves, the microphone and leg let go', async () => {
    const h = await open();
    await joinMaya(h);
    await teamButton().click();
    await page.getByRole('textbox', { name: 'Phone number' }).waitFor();
    await panel().waitFor();
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await panel().waitFor();
    await panel().getByRole('button', { name: 'Leave', exact: true }).click();
    await panel().waitFor({ state: 'detached' });
    await expect(commandsNamed(h, 'leaveMonitor')).resolves.toEqual([{ callId: 'c-talk' }]);
    await expect(h.monitorLog()).resolves.toEqual(['answer c-talk leg-1 listen', 'connect leg-1', 'close']);
  });

  test('"Leave" in the Team view gives the focus to the call\'s own item', async () => {
    const h = await open();
    await joinMaya(h);
    await panel().getByRole('button', { name: 'Leave', exact: true }).click();
    await panel().waitFor({ state: 'detached' });
    await expect(page.evaluate(() => document.activeElement?.closest('li')?.querySelector('.live-call-agents')?.textContent)).resolves.toBe('Maya Chen');
  });

  test('the call records: its panel shows "Recording" (a status named so, the red dot) on every screen while the relay says so', async () => {
    const h = await open();
    await joinMaya(h);
    const recording = () => panel().getByRole('status', { name: 'Recording', exact: true });
    await expect(recording().count()).resolves.toBe(0);
    await h.push('monitorChanged', { callId: 'c-talk', mode: 'listen', recording: true });
    await recording().waitFor();
    await expect(recording().textContent()).resolves.toBe('Recording');
    await expect(recording().locator('.recording-dot[aria-hidden="true"]').count()).resolves.toBe(1);
    const red = await recording().evaluate((el) => {
      const dot = el.querySelector('.recording-dot');
      return { dot: dot && getComputedStyle(dot).backgroundColor, danger: getComputedStyle(el).color };
    });
    expect(red.dot).toBe(red.danger);
    // The mode said with it stays as it was; the panel is on the phone too.
    await expect(panel().getByRole('status').filter({ hasText: 'Listening to' }).textContent()).resolves.toBe('Listening to Maya Chen and Amelia Hart');
    await teamButton().click();
    await page.getByRole('textbox', { name: 'Phone number' }).waitFor();
    await recording().waitFor();
    await expect(h.monitorLog()).resolves.toEqual(['answer c-talk leg-1 listen', 'connect leg-1']);
    await h.push('monitorChanged', { callId: 'c-talk', mode: 'listen', recording: false });
    await recording().waitFor({ state: 'detached' });
    await panel().waitFor();
  });

  test('the call ended under the supervisor: the panel goes, and why is said', async () => {
    const h = await open();
    await joinMaya(h);
    await h.push('monitorChanged', { callId: 'c-talk', mode: 'left', reason: 'call_ended' });
    await panel().waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'The call you joined has ended.' }).waitFor();
    await expect(h.monitorLog()).resolves.toEqual(['answer c-talk leg-1 listen', 'connect leg-1', 'close']);
    await expect(commandsNamed(h, 'leaveMonitor')).resolves.toEqual([]);
  });

  test('a refusal is said in the call\'s item, in the relay\'s words', async () => {
    const h = await open();
    await h.answer('startMonitor', err('invalid_state', 'Finish your own call before joining another'));
    await teamButton().click();
    await modeButton(item('Jonas Berg'), 'Barge').click();
    await expect.poll(() => item('Jonas Berg').getByRole('alert').textContent()).toBe('The call could not be joined: Finish your own call before joining another');
    await expect(panel().count()).resolves.toBe(0);
    await expect(h.monitorLog()).resolves.toEqual([]);
  });

  test('in Spanish', async () => {
    await open({ language: 'es' });
    await page.getByRole('button', { name: 'Equipo', exact: true }).click();
    const list = page.getByRole('list', { name: 'Llamadas en curso', exact: true });
    await list.waitFor();
    await list.locator(':scope > li').filter({ hasText: 'Maya Chen' }).getByRole('button', { name: 'Escuchar', exact: true }).click();
    const joined = page.getByRole('region', { name: 'Llamada a la que te uniste', exact: true });
    await expect.poll(() => joined.getByRole('status').textContent()).toBe('Escuchando a Maya Chen y Amelia Hart');
    await joined.getByRole('button', { name: 'Salir', exact: true }).waitFor();
    await list.getByText('Llamada directa: no es posible unirse', { exact: true }).waitFor();
  });
});

describe('looks', () => {
  /** Elements whose text breaks into more lines than `lines` (a name squeezed to a letter a line), or that overflow their box. */
  const squeezed = (lines: number) =>
    page.evaluate((most) => {
      const found: string[] = [];
      for (const el of document.querySelectorAll<HTMLElement>('.live-call-agents, .live-call-name, .live-call-number, .live-state, .live-quality, .recording-indicator, .monitor-sentence, .btn-monitor, .btn-leave')) {
        const style = getComputedStyle(el);
        const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.25;
        const rows = Math.round(el.getBoundingClientRect().height / line);
        if (rows > most || el.scrollWidth > el.clientWidth + 1) found.push(`${el.className}: ${el.textContent} (${rows} lines)`);
      }
      return found;
    }, lines);

  test('nothing is cut or squeezed to a letter, at the narrowest window and at 1280×720, light, dark and in forced colours; axe finds nothing serious', async () => {
    for (const [width, height] of [
      [380, 900],
      [1280, 720],
    ] as const) {
      for (const scheme of ['light', 'dark', 'forced colours'] as const) {
        const h = await open({ width, height, realClock: true, colorScheme: scheme === 'dark' ? 'dark' : 'light' });
        if (scheme === 'forced colours') await page.emulateMedia({ forcedColors: 'active' });
        await teamButton().click();
        await item('Maya Chen').waitFor();
        await modeButton(item('Maya Chen'), 'Listen').click();
        await panel().waitFor();
        await h.monitorFact({ callId: 'c-talk', legId: 'leg-1', state: 'connected' });
        await h.push('monitorChanged', { callId: 'c-talk', mode: 'listen', recording: true });
        await panel().getByRole('status', { name: 'Recording', exact: true }).waitFor();
        await expect(page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth), `${width} ${scheme}`).resolves.toBe(false);
        expect(await squeezed(3), `${width} ${scheme}`).toEqual([]);
        const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
        const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), `${width} ${scheme}`).toEqual([]);
        await page.close();
      }
    }
  }, 120_000);
});
