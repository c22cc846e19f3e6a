// The team's desk end to end: three agents' windows on one relay that keeps call records (the
// embedded database) with the team's settings, and the sandbox's customers. A break stops the
// ringing; after a call the agent is in after-call work with a countdown, saves a wrap-up and says
// "Ready"; the supervisor's report has the wrap-up; the team's figures count answered, missed
// (declined by everyone) and abandoned calls; a voicemail on a declined call plays in every window
// it rang and from the team's records; a callback request is taken by one agent, who dials.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CallRecords } from '../../relay/records/call-records';
import { TeamSettingsSource } from '../../relay/team-settings-source';
import { createLogger } from '../../shared/log';
import { DEFAULT_TEAM_SETTINGS } from '../../shared/team-settings';
import { wallboardSchema, type Wallboard } from '../../shared/wallboard';
import { currentCall, eventually, incomingCard, recentCalls, startTeamStack, type TeamStack } from './harness';

let team: TeamStack;
let records: CallRecords;
let recordsDir: string;
const pages: Page[] = [];

const ANA = 0;
const BEN = 1;
const SUE = 2;

beforeAll(async () => {
  recordsDir = await mkdtemp(join(tmpdir(), 'softphone-e2e-records-'));
  records = new CallRecords({ database: { kind: 'embedded', dataDir: join(recordsDir, 'db') }, dataDir: recordsDir, logger: createLogger('records') });
  const teamSettings = new TeamSettingsSource({ ...DEFAULT_TEAM_SETTINGS, breakReasons: ['Lunch', 'Training'], afterCallWorkSeconds: 30, dispositions: ['Sale', 'No sale', 'Wrong number'] });
  team = await startTeamStack({ agents: 3, names: ['Ana Alves', 'Ben Brooks', 'Sue Supervisor'], supervisors: [SUE], relay: { records, teamSettings } });
  // The embedded database makes itself on its first start: calls wait for nothing, the test's figures do.
  await records.database();
}, 120_000);
afterAll(async () => {
  for (const p of pages) await p.context().close();
  await team?.close();
  await records?.close();
  await rm(recordsDir, { recursive: true, force: true });
});

async function open(index: number): Promise<Page> {
  const p = await team.newAgentPage(index);
  pages.push(p);
  await expect.poll(() => p.getByRole('combobox', { name: 'Presence' }).inputValue()).not.toBe('');
  return p;
}

const presenceOf = (p: Page) => p.getByRole('combobox', { name: 'Presence' });

async function relayGet(path: string, index: number): Promise<Response> {
  return fetch(`${team.relay.url}${path}`, { headers: { authorization: `Bearer ${team.agents[index]!.token}` } });
}

async function wallboard(): Promise<Wallboard> {
  expect(await records.flush()).toBe(true);
  const res = await relayGet('/team/wallboard', SUE);
  expect(res.status).toBe(200);
  return wallboardSchema.parse(await res.json());
}

const today = (): string => new Date().toISOString().slice(0, 10);

describe('the team’s desk', () => {
  let ana: Page;
  let ben: Page;
  let sue: Page;
  let declined: { callId: string };

  test('a break stops the ringing; after the call: a countdown, the wrap-up, "Ready"; the supervisor’s report has it', async () => {
    ana = await open(ANA);
    ben = await open(BEN);
    sue = await open(SUE);
    await eventually('the three agents to be connected', () => team.relay.stats().connectedAgents >= 3);

    await presenceOf(ben).selectOption({ label: 'Break — Lunch' });
    await presenceOf(sue).selectOption({ label: 'Do not disturb' });
    await eventually('Ben on a break at the relay', async () => {
      const board = await wallboard();
      return board.agents.find((a) => a.agentId === 'agent-2')?.presence === 'break' && board.agents.find((a) => a.agentId === 'agent-3')?.presence === 'dnd';
    });

    const customer = team.customer('answers');
    const { callId } = await team.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(ana).getByText(customer.name).waitFor();
    // Ben, on his break, is not rung (nor Sue, in Do not disturb).
    await ana.waitForTimeout(500);
    expect(await incomingCard(ben).count()).toBe(0);
    expect(await incomingCard(sue).count()).toBe(0);

    await incomingCard(ana).getByRole('button', { name: 'Answer' }).click();
    await currentCall(ana).getByText('Connected').waitFor();
    await currentCall(ana).getByRole('button', { name: 'Hang up' }).click();

    // After-call work: the team's 30 s counted down, the relay told.
    const work = ana.getByRole('region', { name: 'After-call work' });
    await work.waitFor();
    const clock = work.getByRole('timer');
    const first = await clock.textContent();
    expect(first).toMatch(/0:[23]\d/);
    await expect.poll(() => clock.textContent(), { timeout: 5_000 }).not.toBe(first);
    await eventually('after-call work at the relay', async () => (await wallboard()).agents.find((a) => a.agentId === 'agent-1')?.presence === 'after_call_work');

    await work.getByRole('combobox', { name: 'Disposition' }).selectOption({ label: 'Sale' });
    await work.getByRole('textbox', { name: 'Notes' }).fill('Two seats, "annual" plan, renews in May');
    await work.getByRole('button', { name: 'Save wrap-up' }).click();
    await work.getByRole('button', { name: 'Ready' }).click();
    await work.waitFor({ state: 'detached' });
    await expect.poll(() => presenceOf(ana).inputValue()).toBe('available');
    await eventually('available again at the relay', async () => (await wallboard()).agents.find((a) => a.agentId === 'agent-1')?.presence === 'available');

    // The supervisor's report of today has the call with Ana's wrap-up; an agent gets none.
    const row = await eventually('the wrap-up in the report', async () => {
      expect(await records.flush()).toBe(true);
      const res = await relayGet(`/reports/calls.csv?from=${today()}&to=${today()}`, SUE);
      expect(res.status).toBe(200);
      return (await res.text()).split('\r\n').find((line) => line.startsWith(`${callId},`) && line.includes('Sale'));
    });
    expect(row).toMatch(new RegExp(`^${callId.replace(/\./g, '\\.')},incoming,${customer.number},agent-1,[^,]+,[^,]+,[^,]+,[\\d.]+,[\\d.]+,,answered,Sale,"Two seats, ""annual"" plan, renews in May"$`));
    expect((await relayGet(`/reports/calls.csv?from=${today()}&to=${today()}`, ANA)).status).toBe(403);
    const states = await (await relayGet(`/reports/states.csv?from=${today()}&to=${today()}`, SUE)).text();
    expect(states).toMatch(/\r\nagent-2,break,Lunch,[^,]+,/);
    expect(states).toContain(`agent-1,after_call_work,${callId},`);
  });

  test('the team’s figures count a call answered, one every agent declined (missed) and one the customer gave up on (abandoned)', async () => {
    await presenceOf(ben).selectOption({ label: 'Available' });
    await eventually('Ben available at the relay', async () => (await wallboard()).agents.find((a) => a.agentId === 'agent-2')?.presence === 'available');

    // Declined by both agents it rang: missed.
    const customer = team.customer('answers');
    declined = await team.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(ana).waitFor();
    await incomingCard(ben).waitFor();
    await incomingCard(ana).getByRole('button', { name: 'Decline' }).click();
    await incomingCard(ben).getByRole('button', { name: 'Decline' }).click();
    await eventually('the declined call to end', async () => (await team.gatewayLog()).some((l) => l.callId === declined.callId && l.action === 'reject'));
    await incomingCard(ana).waitFor({ state: 'detached' });

    // The customer hangs up while it rings: abandoned.
    const gaveUp = await team.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(ana).waitFor();
    await team.control('/control/hangup', { callId: gaveUp.callId });
    await incomingCard(ana).waitFor({ state: 'detached' });

    // Today's, on this relay: the call the first test answered, and these two.
    const after = await eventually('the figures to count both', async () => {
      const board = await wallboard();
      return board.today !== undefined && board.today.missed === 1 && board.today.abandoned === 1 ? board.today : undefined;
    });
    expect(after.answered).toBe(1);
    expect(after.serviceLevel.offered).toBe(3);
    expect(after.averageHandleMs).toBeGreaterThan(0);

    // The supervisor's "Team" view says the same.
    await sue.getByRole('button', { name: 'Team' }).click();
    const tile = (name: string) => sue.getByRole('figure', { name }).locator('.team-tile-value');
    await expect.poll(() => tile('Missed').textContent(), { timeout: 10_000 }).toContain('1');
    expect(await tile('Answered').textContent()).toContain('1');
    expect(await tile('Abandoned').textContent()).toContain('1');
    expect(await tile('Calls waiting').textContent()).toContain('0');
    await sue.getByRole('table').getByRole('row', { name: /Ana Alves/ }).waitFor();

    const report = await (await relayGet(`/reports/calls.csv?from=${today()}&to=${today()}`, SUE)).text();
    expect(report).toMatch(new RegExp(`\\r\\n${declined.callId.replace(/\./g, '\\.')},incoming,[^\\r]*,missed,,\\r\\n`));
    expect(report).toMatch(new RegExp(`\\r\\n${gaveUp.callId.replace(/\./g, '\\.')},incoming,[^\\r]*,abandoned,,\\r\\n`));
  });

  test('a voicemail on the declined call plays in both windows it rang and in the Team view; a callback request is taken by one agent, who dials', async () => {
    const customer = team.customer('answers');
    const left = await team.control<{ callId: string; mediaId: string }>('/control/voicemail', { callId: declined.callId });
    expect(left.callId).toBe(declined.callId);

    // Both agents declined the call; both entries get "Play voicemail", and the audio plays.
    for (const p of [ana, ben]) {
      const row = recentCalls(p).getByRole('listitem').filter({ has: p.getByRole('button', { name: 'Play voicemail' }) });
      await row.first().waitFor({ timeout: 15_000 });
      expect(await row.count()).toBe(1);
      await row.getByRole('button', { name: 'Play voicemail' }).click();
      const player = row.getByLabel(`Voicemail from ${customer.name}`);
      await player.waitFor();
      // The sandbox's voicemail is 4 s of the customer's tone: the element reads its length and plays on.
      await expect.poll(() => player.evaluate((a: HTMLAudioElement) => (a.src.startsWith('blob:') && Number.isFinite(a.duration) ? Math.round(a.duration) : 0)), { timeout: 10_000 }).toBe(4);
      await expect.poll(() => player.evaluate((a: HTMLAudioElement) => a.currentTime), { timeout: 10_000 }).toBeGreaterThan(0.2);
    }
    // The kept file is the sandbox's own: fetched once by id through the gateway, by each app.
    const fetched = (await team.gatewayLog()).filter((l) => l.action === 'media' && (l as { mediaId?: string }).mediaId === left.mediaId);
    expect(fetched.length).toBeGreaterThanOrEqual(2);

    // The team's records have it: the supervisor plays it from the Team view.
    await eventually('the voicemail on the wallboard', async () => (await wallboard()).voicemails?.some((v) => v.callId === declined.callId && v.mediaId === left.mediaId));
    const voicemails = sue.getByRole('list', { name: 'Voicemails' });
    const item = voicemails.getByRole('listitem').filter({ hasText: customer.name });
    await item.first().waitFor({ timeout: 10_000 });
    await item.first().getByRole('button', { name: 'Play voicemail' }).click();
    await expect.poll(() => item.first().getByLabel(`Voicemail from ${customer.name}`).evaluate((a: HTMLAudioElement) => a.src.startsWith('blob:') && a.duration > 3), { timeout: 10_000 }).toBe(true);

    // A customer who does not answer asks to be called back about a call both agents declined:
    // on the team's list, with the time left of 7 days.
    const unanswering = team.customer('no_answer');
    const missedAgain = await team.control<{ callId: string }>('/control/incoming', { number: unanswering.number });
    await incomingCard(ana).waitFor();
    await incomingCard(ben).waitFor();
    await incomingCard(ana).getByRole('button', { name: 'Decline' }).click();
    await incomingCard(ben).getByRole('button', { name: 'Decline' }).click();
    await eventually('the declined call to end', async () => (await team.gatewayLog()).some((l) => l.callId === missedAgain.callId && l.action === 'reject'));
    const asked = await team.control<{ callId: string; messageId: string }>('/control/callback-request', { number: unanswering.number });
    expect(asked.callId).toBe(missedAgain.callId);
    const requests = (p: Page) => p.getByRole('list', { name: 'Callback requested' }).getByRole('listitem');
    const request = requests(sue).filter({ hasText: unanswering.name });
    await request.waitFor({ timeout: 10_000 });
    await expect.poll(() => request.textContent()).toMatch(/6 days 23 h left|7 days left/);
    await ana.getByRole('button', { name: 'Team' }).click();
    const anasRequest = requests(ana).filter({ hasText: unanswering.name });
    await anasRequest.waitFor({ timeout: 10_000 });

    // Ana takes it and dials; the supervisor sees it taken, with no "Call back" of her own.
    await anasRequest.getByRole('button', { name: 'Call back' }).click();
    await currentCall(ana).getByText(unanswering.name).waitFor();
    const dialled = await eventually('the call back at the gateway', async () => (await team.gatewayLog()).find((l) => l.action === 'initiate' && l.status === 200 && l.callId !== undefined));
    await expect.poll(() => request.textContent(), { timeout: 10_000 }).toContain('Taken by Ana Alves');
    expect(await request.getByRole('button', { name: 'Call back' }).count()).toBe(0);
    // Nobody answers: Ana gives up; the request stays hers, to try again.
    await currentCall(ana).getByRole('button', { name: 'Hang up' }).click();
    await eventually('the call back to end', async () => (await team.gatewayLog()).some((l) => l.callId === dialled.callId && l.action === 'terminate'));
    expect((await wallboard()).callbacks).toEqual([expect.objectContaining({ id: asked.callId, takenBy: expect.objectContaining({ agentId: 'agent-1', name: 'Ana Alves' }) })]);

    // Another customer asks, Ben calls back, the customer answers: that request is done and leaves the list.
    await team.control('/control/callback-request', { number: customer.number });
    await ben.getByRole('button', { name: 'Team' }).click();
    const bensRequest = requests(ben).filter({ hasText: customer.name });
    await bensRequest.getByRole('button', { name: 'Call back' }).click({ timeout: 10_000 });
    await currentCall(ben).getByText('Connected').waitFor({ timeout: 20_000 });
    await eventually('the answered customer’s request gone', async () => {
      const { callbacks } = await wallboard();
      return callbacks.length === 1 && callbacks[0]!.id === asked.callId;
    });
    await requests(sue).filter({ hasText: customer.name }).waitFor({ state: 'detached', timeout: 10_000 });
    await currentCall(ben).getByRole('button', { name: 'Hang up' }).click();
    await ben.getByRole('region', { name: 'After-call work' }).getByRole('button', { name: 'Ready' }).click();
  });
});
