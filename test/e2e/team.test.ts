// A team on one relay: two agents, each with their own token, app (service + browser host) and
// Chromium page, one sandbox. An incoming call rings both; the first Answer wins through the relay's
// claim (relay/README.md); the other agent stops ringing and reads "Answered by another agent"; the
// gateway sees exactly one accept.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { currentCall, eventually, expectTwoWayAudio, incomingCard, recentCalls, startTeamStack, type TeamStack } from './harness';

let team: TeamStack;
let pages: Page[] = [];

beforeAll(async () => {
  team = await startTeamStack({ agents: 2 });
});
afterAll(async () => {
  await team?.close();
});
afterEach(async () => {
  for (const p of pages) await p.context().close();
  pages = [];
  // A test that failed mid-call must not leave an agent busy ("on_call" is not rung) for the next one.
  for (const agent of team.agents) {
    const snapshot = await agent.service.handle('getSnapshot', {});
    if (!snapshot.ok) continue;
    for (const call of snapshot.value.calls) if (call.phase !== 'ended') await agent.service.handle('hangUp', { localId: call.localId });
  }
});

async function openAgents(): Promise<[Page, Page]> {
  const a = await team.newAgentPage(0);
  const b = await team.newAgentPage(1);
  pages = [a, b];
  // Both apps have told the relay they are available before the customer calls.
  for (const p of pages) await expect.poll(() => p.getByRole('combobox', { name: 'Presence' }).inputValue()).toBe('available');
  await eventually('both agents to be connected to the relay', () => team.relay.stats().connectedAgents >= 2);
  return [a, b];
}


const acceptsFor = async (callId: string) => (await team.gatewayLog()).filter((l) => l.callId === callId && l.action === 'accept');

async function hangUpAndWait(p: Page, callId: string) {
  await currentCall(p).getByRole('button', { name: 'Hang up' }).click();
  await eventually('terminate to reach the gateway', async () => (await team.gatewayLog()).some((l) => l.callId === callId && l.action === 'terminate'));
}

describe('a team of two agents', () => {
  test('a call rings both; the first Answer wins with two-way audio; the other stops ringing: "Answered by another agent"', async () => {
    const [alice, bob] = await openAgents();
    const customer = team.customer('answers');
    const { callId } = await team.control<{ callId: string }>('/control/incoming', { number: customer.number });

    await incomingCard(alice).getByText(customer.name).waitFor();
    await incomingCard(bob).getByText(customer.name).waitFor();

    await incomingCard(alice).getByRole('button', { name: 'Answer' }).click();
    await currentCall(alice).getByText('Connected').waitFor();
    await expectTwoWayAudio(alice, team.callReport, callId);

    // Bob's card goes away and his app says why.
    await incomingCard(bob).waitFor({ state: 'detached' });
    await bob.getByText('Answered by another agent').first().waitFor();
    await recentCalls(bob).getByText('Answered by another agent').first().waitFor();
    expect(await acceptsFor(callId)).toHaveLength(1);

    await hangUpAndWait(alice, callId);
    const actions = (await team.gatewayLog()).filter((l) => l.callId === callId).map((l) => l.action);
    // Only the winner spoke to the gateway: no reject from the other agent.
    expect(actions).toEqual(['accept', 'terminate']);
  });

  test('both agents press Answer at once: one call, one accept; the other is told it was answered elsewhere', async () => {
    const [alice, bob] = await openAgents();
    const customer = team.customer('answers');
    const { callId } = await team.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(alice).getByText(customer.name).waitFor();
    await incomingCard(bob).getByText(customer.name).waitFor();

    // Both clicks at one moment of the browser's clock (the pages share it). A click that finds the
    // card already gone (the other agent's claim was announced first) is a loss like any other.
    const at = Date.now() + 300;
    const clicked = await Promise.all(
      [alice, bob].map((p) =>
        p.evaluate(
          `new Promise((resolve) => setTimeout(() => {
            const card = document.querySelector('[role="dialog"][aria-label="Incoming call"]');
            const answer = card && Array.from(card.querySelectorAll('button')).find((b) => (b.textContent || '').trim() === 'Answer');
            if (answer) answer.click();
            resolve(Boolean(answer));
          }, Math.max(0, ${at} - Date.now())))`,
        ),
      ),
    );
    expect(clicked.some(Boolean)).toBe(true);

    const winner = await eventually('one agent to be connected', async () => {
      for (const p of [alice, bob]) if (await currentCall(p).getByText('Connected').isVisible()) return p;
      return undefined;
    });
    const loser = winner === alice ? bob : alice;
    await loser.getByText('Answered by another agent').first().waitFor();
    await expectTwoWayAudio(winner, team.callReport, callId);
    expect(await acceptsFor(callId)).toHaveLength(1);
    // The loser made its answer too, but never reached the customer: one peer ever sent it a check.
    expect((await team.callReport(callId)).checkedBy).toHaveLength(1);
    await expect(incomingCard(loser).count()).resolves.toBe(0);
    await hangUpAndWait(winner, callId);
  });

  test('one agent declines: the call keeps ringing for the other, who answers it; the gateway never hears a reject', async () => {
    const [alice, bob] = await openAgents();
    const customer = team.customer('answers');
    const { callId } = await team.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(alice).getByText(customer.name).waitFor();
    await incomingCard(bob).getByText(customer.name).waitFor();

    await incomingCard(alice).getByRole('button', { name: 'Decline' }).click();
    await incomingCard(alice).waitFor({ state: 'detached' });
    await recentCalls(alice).getByText('Declined').first().waitFor();
    // Bob still rings, and answering works.
    await bob.waitForTimeout(300);
    await expect(incomingCard(bob).count()).resolves.toBe(1);
    await incomingCard(bob).getByRole('button', { name: 'Answer' }).click();
    await currentCall(bob).getByText('Connected').waitFor();
    await expectTwoWayAudio(bob, team.callReport, callId);
    await hangUpAndWait(bob, callId);
    const actions = (await team.gatewayLog()).filter((l) => l.callId === callId).map((l) => l.action);
    expect(actions).toEqual(['accept', 'terminate']);
  });

  test('an agent on "Do not disturb" is not rung; the choice survives a reload', async () => {
    const [alice, bob] = await openAgents();
    await bob.getByRole('combobox', { name: 'Presence' }).selectOption({ label: 'Do not disturb' });
    await eventually('the relay to know', async () => {
      const snapshot = await team.agents[1]!.service.handle('getSnapshot', {});
      return snapshot.ok && snapshot.value.presence?.status === 'dnd';
    });
    await bob.reload();
    await expect.poll(() => bob.getByRole('combobox', { name: 'Presence' }).inputValue()).toBe('dnd');

    const customer = team.customer('answers');
    const { callId } = await team.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(alice).getByText(customer.name).waitFor();
    // The call reached the team (Alice rings) but not Bob.
    await alice.waitForTimeout(500);
    await expect(incomingCard(bob).count()).resolves.toBe(0);
    await incomingCard(alice).getByRole('button', { name: 'Decline' }).click();
    await eventually('reject to reach the gateway', async () => (await team.gatewayLog()).some((l) => l.callId === callId && l.action === 'reject'));

    await bob.getByRole('combobox', { name: 'Presence' }).selectOption({ label: 'Available' });
    await expect.poll(() => bob.getByRole('combobox', { name: 'Presence' }).inputValue()).toBe('available');
  });
});
