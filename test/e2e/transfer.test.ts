// Transfers, consults and three-way calls through the team's bridge, end to end: three agents (Ana,
// Ben, Cleo), each with its own app and its own Chromium whose microphone plays a tone of its own
// (720, 960, 1245 Hz), and a sandbox customer. Who hears whom is read from what each one receives:
// the customer's probe in the sandbox's report, each agent's from the spectrum of its remote audio.
// The gateway never hears of a transfer: one accept, and one terminate when the last agent leaves.
// The customer's stream keeps one SSRC and continuous numbering across every switch.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import type { SandboxCallReport } from '../../shared/sandbox';
import { currentCall, eventually, expectTwoWayAudio, incomingCard, recentCalls } from './harness';
import { agentHearsTones, customerHearsTones, startToneTeam, type ToneTeam } from './tone-team';

const [ANA, BEN, CLEO] = [720, 960, 1245];
let team: ToneTeam;
const pages: Page[] = [];

beforeAll(async () => {
  team = await startToneTeam({ names: ['Ana', 'Ben', 'Cleo'], tonesHz: [ANA, BEN, CLEO] });
}, 60_000);
afterAll(async () => {
  await team?.close();
});
afterEach(async () => {
  for (const page of pages.splice(0)) await page.context().close().catch(() => undefined);
  for (const agent of team.agents) {
    const snapshot = await agent.service.handle('getSnapshot', {});
    if (!snapshot.ok) continue;
    for (const call of snapshot.value.calls.filter((c) => c.phase !== 'ended')) {
      if (call.phase === 'ringing') await agent.service.handle('declineCall', { localId: call.localId });
      else await agent.service.handle('hangUp', { localId: call.localId });
    }
  }
});

async function open(index: number): Promise<Page> {
  const page = await team.newAgentPage(index);
  pages.push(page);
  return page;
}

const actionsFor = async (callId: string) => (await team.gatewayLog()).filter((l) => l.callId === callId).map((l) => l.action);

async function customerHears(callId: string, what: SandboxCallReport['heardNow']): Promise<void> {
  await eventually(`the customer of ${callId} to hear ${what}`, async () => (await team.callReport(callId)).heardNow === what);
}

/** Ana answers a customer's call: the customer hears her tone. */
async function anaAnswers(ana: Page): Promise<{ callId: string; name: string }> {
  const customer = team.customer('answers');
  const { callId } = await team.control<{ callId: string }>('/control/incoming', { number: customer.number });
  await incomingCard(ana).getByRole('button', { name: 'Answer' }).click();
  await currentCall(ana).getByText('Connected').waitFor();
  await customerHearsTones(team, callId, [ANA], [BEN, CLEO]);
  return { callId, name: customer.name };
}

async function chooseInDialog(page: Page, button: 'Transfer' | 'Consult', colleague: string): Promise<void> {
  await currentCall(page).getByRole('button', { name: button, exact: true }).click();
  const dialog = page.getByRole('dialog', { name: button === 'Transfer' ? 'Transfer to' : 'Consult with' });
  await dialog.getByRole('button', { name: colleague, exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
}

async function expectSeamless(callId: string): Promise<void> {
  const rtp = (await team.callReport(callId)).rtp;
  expect(rtp?.ssrcs).toBe(1);
  expect(rtp?.sequenceGaps).toBe(0);
  expect(rtp?.timestampJumps).toBe(0);
}

describe('transfers through the bridge', () => {
  test('cold transfer: the customer hears music while Ben rings, then Ben; Ana’s call ends “Transferred to Ben” with no terminate', async () => {
    const [ana, ben] = [await open(0), await open(1)];
    const { callId, name } = await anaAnswers(ana);

    await chooseInDialog(ana, 'Transfer', 'Ben');
    await currentCall(ana).getByText('Transferring to Ben…').waitFor();
    await currentCall(ana).getByRole('button', { name: 'Cancel transfer' }).waitFor();
    await customerHears(callId, 'music');

    const card = incomingCard(ben);
    await card.getByText('Transfer from Ana').waitFor();
    await card.getByText(name).waitFor();
    await card.getByRole('button', { name: 'Answer' }).click();
    await currentCall(ben).getByText('Connected').waitFor();

    await customerHearsTones(team, callId, [BEN], [ANA]);
    await expectTwoWayAudio(ben, team.callReport, callId);
    await recentCalls(ana).getByText('Transferred to Ben').waitFor();
    expect(await currentCall(ana).getByText('Connected').count()).toBe(0);
    expect(await actionsFor(callId)).toEqual(['accept']);

    await currentCall(ben).getByRole('button', { name: 'Hang up' }).click();
    await eventually('the terminate to reach the gateway', async () => (await actionsFor(callId)).includes('terminate'));
    expect(await actionsFor(callId)).toEqual(['accept', 'terminate']);
    await expectSeamless(callId);
  });

  test('consult, then complete: Ana and Ben talk while the customer hears music; then the customer is with Ben', async () => {
    const [ana, ben] = [await open(0), await open(1)];
    const { callId } = await anaAnswers(ana);

    await chooseInDialog(ana, 'Consult', 'Ben');
    await customerHears(callId, 'music');
    const card = incomingCard(ben);
    await card.getByText('Consult from Ana').waitFor();
    await card.getByRole('button', { name: 'Answer' }).click();

    // The two agents hear each other; the customer hears neither.
    await agentHearsTones(ana, [BEN]);
    await agentHearsTones(ben, [ANA]);
    await customerHears(callId, 'music');
    await customerHearsTones(team, callId, [], [ANA, BEN]);

    const transferredBefore = await recentCalls(ana).getByText('Transferred to Ben').count();
    await currentCall(ana).getByRole('button', { name: 'Complete transfer' }).click();
    await customerHearsTones(team, callId, [BEN], [ANA]);
    await eventually('Ana’s recent calls to say “Transferred to Ben”', async () => (await recentCalls(ana).getByText('Transferred to Ben').count()) === transferredBefore + 1);
    expect(await actionsFor(callId)).toEqual(['accept']);

    await currentCall(ben).getByRole('button', { name: 'Hang up' }).click();
    await eventually('the terminate to reach the gateway', async () => (await actionsFor(callId)).includes('terminate'));
    await expectSeamless(callId);
  });

  test('consult, then three-way: all three hear each other; the call ends at the gateway only when the last agent leaves', async () => {
    const [ana, ben] = [await open(0), await open(1)];
    const { callId } = await anaAnswers(ana);

    await chooseInDialog(ana, 'Consult', 'Ben');
    await incomingCard(ben).getByRole('button', { name: 'Answer' }).click();
    await agentHearsTones(ana, [BEN]);
    await currentCall(ana).getByRole('button', { name: 'Add to call' }).click();

    await customerHearsTones(team, callId, [ANA, BEN], [CLEO]);
    await agentHearsTones(ana, [BEN]);
    await agentHearsTones(ben, [ANA]);
    await currentCall(ana).getByText('Three-way call with Ben').waitFor();
    await currentCall(ben).getByText('Three-way call with Ana').waitFor();

    // Ana leaves: Ben stays with the customer, and the gateway hears nothing.
    await currentCall(ana).getByRole('button', { name: 'Hang up' }).click();
    await customerHearsTones(team, callId, [BEN], [ANA]);
    expect(await actionsFor(callId)).toEqual(['accept']);

    await currentCall(ben).getByRole('button', { name: 'Hang up' }).click();
    await eventually('the terminate to reach the gateway', async () => (await actionsFor(callId)).includes('terminate'));
    expect(await actionsFor(callId)).toEqual(['accept', 'terminate']);
    await expectSeamless(callId);
  });

  test('“Cancel transfer” while Ben rings, then “Cancel consult” while they talk: Ana is back with the customer each time', async () => {
    const [ana, ben] = [await open(0), await open(1)];
    const { callId } = await anaAnswers(ana);

    await chooseInDialog(ana, 'Transfer', 'Ben');
    await incomingCard(ben).getByText('Transfer from Ana').waitFor();
    await currentCall(ana).getByRole('button', { name: 'Cancel transfer' }).click();
    await incomingCard(ben).waitFor({ state: 'hidden' });
    await customerHearsTones(team, callId, [ANA], [BEN]);

    await chooseInDialog(ana, 'Consult', 'Ben');
    await incomingCard(ben).getByRole('button', { name: 'Answer' }).click();
    await agentHearsTones(ana, [BEN]);
    await currentCall(ana).getByRole('button', { name: 'Cancel consult' }).click();
    await customerHearsTones(team, callId, [ANA], [BEN]);
    await currentCall(ben).getByText('Consult ended').waitFor();
    expect(await actionsFor(callId)).toEqual(['accept']);
    await expectSeamless(callId);
  });

  test('a declined transfer: Ana is back with the customer and sees “Transfer not answered”', async () => {
    const [ana, ben] = [await open(0), await open(1)];
    const { callId } = await anaAnswers(ana);

    await chooseInDialog(ana, 'Transfer', 'Ben');
    await customerHears(callId, 'music');
    await incomingCard(ben).getByRole('button', { name: 'Decline' }).click();

    await currentCall(ana).getByText('Transfer not answered').waitFor();
    await customerHearsTones(team, callId, [ANA], [BEN]);
    expect(await actionsFor(callId)).toEqual(['accept']);
    await expectSeamless(callId);
  });

  test('an unanswered transfer: after 30 s Ana is back with the customer, and Ben’s ring stops', async () => {
    const [ana, ben] = [await open(0), await open(1)];
    const { callId } = await anaAnswers(ana);

    await chooseInDialog(ana, 'Transfer', 'Ben');
    await incomingCard(ben).getByText('Transfer from Ana').waitFor();
    const rangAt = Date.now();
    await currentCall(ana).getByText('Transfer not answered').waitFor({ timeout: 40_000 });
    expect(Date.now() - rangAt).toBeGreaterThan(25_000);
    await incomingCard(ben).waitFor({ state: 'hidden' });
    await customerHearsTones(team, callId, [ANA], [BEN]);
    expect(await actionsFor(callId)).toEqual(['accept']);
  }, 60_000);

  test('“Anyone available” rings Ben and Cleo; the first to answer takes the customer, the other’s ring stops', async () => {
    const [ana, ben, cleo] = [await open(0), await open(1), await open(2)];
    const { callId } = await anaAnswers(ana);

    await chooseInDialog(ana, 'Transfer', 'Anyone available');
    await currentCall(ana).getByText('Transferring to anyone available…').waitFor();
    await incomingCard(ben).getByText('Transfer from Ana').waitFor();
    await incomingCard(cleo).getByText('Transfer from Ana').waitFor();
    await incomingCard(cleo).getByRole('button', { name: 'Answer' }).click();

    await customerHearsTones(team, callId, [CLEO], [ANA, BEN]);
    await incomingCard(ben).waitFor({ state: 'hidden' });
    await recentCalls(ana).getByText('Transferred to Cleo').waitFor();
    expect(await actionsFor(callId)).toEqual(['accept']);
    await expectSeamless(callId);
  });
});
