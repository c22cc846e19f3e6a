// Bridge nodes as the team runs them: one relay on Redis with a bridge token, two nodes each in a
// process of its own (`npm run bridge`), two agents' apps in Chromium. Calls that ring one after
// another go to different nodes (least loaded, read from the team's record in Redis); a node killed
// mid-call ends its call in the agent's window with the reason shown and a terminate at the gateway,
// while the other node's call goes on with audio both ways.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { english, text } from '../../shared/i18n/text';
import { AUDIBLE_ENERGY, agentInbound, currentCall, eventually, expectTwoWayAudio, incomingCard, mediaIdOf, recentCalls, startBridgeNodesStack, twoCustomers, type BridgeNodesStack } from './harness';

/** Short, so that a node killed mid-call is gone within about two seconds. */
const HEARTBEAT_MS = 500;

let team: BridgeNodesStack;
const pages: Page[] = [];

beforeAll(async () => {
  team = await startBridgeNodesStack({ agents: 2, nodes: 2, heartbeatMs: HEARTBEAT_MS });
});
afterAll(async () => {
  for (const p of pages) await p.context().close().catch(() => undefined);
  await team?.close();
});

async function available(index: number): Promise<Page> {
  const p = await team.newAgentPage(index);
  pages.push(p);
  await expect.poll(() => p.getByRole('combobox', { name: 'Presence' }).inputValue()).toBe('available');
  return p;
}

const actionsFor = async (callId: string) => (await team.gatewayLog()).filter((l) => l.callId === callId).map((l) => l.action);

/** The call's audio still flows both ways now: more heard by the customer and by the agent than a moment ago. */
async function audioGoesOn(p: Page, callId: string): Promise<void> {
  const localId = await mediaIdOf(p, callId);
  const customerBefore = (await team.callReport(callId)).framesHeard;
  const agentBefore = (await agentInbound(p, localId)).inboundPackets;
  await eventually('the customer to hear more of the agent', async () => (await team.callReport(callId)).framesHeard > customerBefore + 25);
  await eventually('the agent to hear more of the customer', async () => {
    const now = await agentInbound(p, localId);
    return now.inboundPackets > agentBefore + 25 && now.inboundEnergy > AUDIBLE_ENERGY;
  });
}

describe('bridge nodes in processes of their own', () => {
  test('two calls go to different nodes; a node killed mid-call ends its call with the reason and a terminate, the other call goes on', async () => {
    const alice = await available(0);
    const bob = await available(1);
    await eventually('both agents on the relay', () => team.relay.stats().connectedAgents >= 2);
    const [first, second] = twoCustomers(team);

    // The first call rings both; Alice answers it.
    const one = await team.control<{ callId: string }>('/control/incoming', { number: first.number });
    await incomingCard(alice).getByText(first.name).waitFor();
    await incomingCard(alice).getByRole('button', { name: 'Answer' }).click();
    await currentCall(alice).getByText('Connected').waitFor();
    // On a call, Alice is not rung again: the second call is Bob's.
    await expect.poll(async () => {
      const snapshot = await team.agents[0]!.service.handle('getSnapshot', {});
      return snapshot.ok ? snapshot.value.presence?.status : undefined;
    }).toBe('on_call');

    const two = await team.control<{ callId: string }>('/control/incoming', { number: second.number });
    await incomingCard(bob).getByText(second.name).waitFor();
    await incomingCard(bob).getByRole('button', { name: 'Answer' }).click();
    await currentCall(bob).getByText('Connected').waitFor();

    // Least loaded first: the second call went to the other node, as the team's record says.
    const nodeOfOne = await team.placements.callNode(one.callId);
    const nodeOfTwo = await team.placements.callNode(two.callId);
    expect(nodeOfOne).toBeDefined();
    expect(nodeOfTwo).toBeDefined();
    expect(nodeOfTwo).not.toBe(nodeOfOne);
    expect(await team.placements.callsOnNode(nodeOfOne!)).toEqual([one.callId]);
    expect(await team.placements.callsOnNode(nodeOfTwo!)).toEqual([two.callId]);
    await expectTwoWayAudio(alice, team.callReport, one.callId);
    await expectTwoWayAudio(bob, team.callReport, two.callId);

    // The node of Alice's call dies.
    const killedAt = Date.now();
    await team.nodes.find((n) => n.nodeId === nodeOfOne)!.kill();

    // Alice's window says why her call ended, in the current call panel and in recent calls.
    const reason = `Failed: ${english(text('calls.bridgeNodeGone'))}`;
    await currentCall(alice).getByRole('status').getByText(reason).waitFor();
    await recentCalls(alice).getByText(reason).first().waitFor();
    // Missed heartbeats are noticed within about four of them.
    expect(Date.now() - killedAt).toBeLessThan(10 * HEARTBEAT_MS + 5_000);
    // The app told the gateway, which the business owes for a call it ends (protocol.md).
    await eventually('terminate to reach the gateway', async () => (await actionsFor(one.callId)).includes('terminate'));
    expect(await actionsFor(one.callId)).toEqual(['accept', 'terminate']);
    expect(await team.placements.callNode(one.callId)).toBeUndefined();
    const snapshot = await team.agents[0]!.service.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.calls.find((c) => c.callId === one.callId)).toMatchObject({ phase: 'ended', end: { kind: 'failed', text: { code: 'calls.bridgeNodeGone' } } });

    // Bob's call, on the other node, goes on: still connected, audio both ways, nothing sent for it.
    await audioGoesOn(bob, two.callId);
    expect(await currentCall(bob).getByText('Connected').count()).toBe(1);
    expect(await actionsFor(two.callId)).toEqual(['accept']);
    expect(await team.placements.callNode(two.callId)).toBe(nodeOfTwo);

    await currentCall(bob).getByRole('button', { name: 'Hang up' }).click();
    await eventually('terminate of the second call', async () => (await actionsFor(two.callId)).includes('terminate'));
    await eventually('the second call’s placement to go', async () => (await team.placements.callNode(two.callId)) === undefined);
  });
});
