// The call path through the team's bridge, end to end: the relay runs a bridge node in its own
// process (`--bridge`), the sandbox's customers are real WebRTC peers facing it, and the agent's
// Chromium window has a leg of its own to it. Every step of the direct call path must work the same:
// ring, nothing before Answer, two-way audio, DTMF, hold with the bridge's music, resume, hang up;
// outgoing calls; decline. The customer's stream keeps one SSRC and continuous sequence numbers and
// timestamps across every change of source, read from the packets it received.
import { describe, expect, test } from 'vitest';
import type { SandboxCallReport } from '../../shared/sandbox';
import { AUDIBLE_ENERGY, agentInbound, currentCall, eventually, expectTwoWayAudio, incomingCard, mediaIdOf, onCallWithWaiting, recentCalls, stackForFile, twoCustomers } from './harness';

const stack = stackForFile({ bridge: true });

async function customerHears(callId: string, what: SandboxCallReport['heardNow']): Promise<SandboxCallReport> {
  return eventually(`the customer of ${callId} to hear ${what}`, async () => {
    const report = await stack.callReport(callId);
    return report.heardNow === what ? report : undefined;
  });
}

const actionsFor = async (callId: string) => (await stack.gatewayLog()).filter((l) => l.callId === callId).map((l) => l.action);

describe('bridged calls', () => {
  test('answer through the bridge: nothing before Answer, two-way audio, DTMF, hold with the bridge’s music, resume, hang up', async () => {
    const page = await stack.newAgentPage();
    const customer = stack.customer('answers');
    const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
    const card = incomingCard(page);
    await card.getByText(customer.name).waitFor();

    // The bridge answered the service's offer while the call rang, but holds its candidates back.
    await page.waitForTimeout(400);
    expect((await stack.callReport(callId)).firstPacketAt).toBeUndefined();
    const clickedAt = Date.now();
    await card.getByRole('button', { name: 'Answer' }).click();
    await currentCall(page).getByText('Connected').waitFor();
    await expectTwoWayAudio(page, stack.callReport, callId);
    const answered = await stack.callReport(callId);
    expect(answered.firstPacketAt).toBeGreaterThanOrEqual(clickedAt);

    // The customer's media ends on the bridge: it measures both legs, and only it checked the customer.
    const legs = await eventually('the bridge to carry both legs', async () => {
      const report = await stack.bridgeReport(callId);
      const agentLegs = Object.values(report.agents);
      return report.customer.packetsReceived > 0 && agentLegs.some((l) => l.packetsReceived > 0) ? report : undefined;
    });
    expect(legs.customer.state).toBe('connected');
    expect(answered.checkedBy).toHaveLength(1);

    // DTMF from the window's keypad reaches the customer through the bridge.
    const call = currentCall(page);
    await call.getByRole('button', { name: 'Keypad' }).click();
    const keypad = call.getByRole('group', { name: 'Keypad' });
    for (const key of ['4', '2', '#']) await keypad.getByRole('button', { name: key, exact: true }).click();
    await eventually('the digits to reach the customer', async () => (await stack.callReport(callId)).digitsHeard === '42#');

    // Hold: the bridge plays the music; resume: the agent's voice again.
    await call.getByRole('button', { name: 'Hold', exact: true }).click();
    await customerHears(callId, 'music');
    await call.getByRole('button', { name: 'Resume', exact: true }).click();
    await customerHears(callId, 'voice');

    // One stream toward the customer, whoever spoke: no new SSRC, no gap, no jump (read from its packets).
    const rtp = (await stack.callReport(callId)).rtp;
    expect(rtp?.ssrcs).toBe(1);
    expect(rtp?.sequenceGaps).toBe(0);
    expect(rtp?.timestampJumps).toBe(0);
    expect(rtp?.packets).toBeGreaterThan(50);

    await call.getByRole('button', { name: 'Hang up' }).click();
    await eventually('terminate to reach the gateway', async () => (await actionsFor(callId)).includes('terminate'));
    expect(await actionsFor(callId)).toEqual(['accept', 'terminate']);
    await recentCalls(page).getByText(customer.name).first().waitFor();
    // The bridge let go of the call.
    await eventually('the bridge to end the call', async () => (await stack.bridgeLoad()).calls === 0);
  });

  test('the agent’s leg connects while the call rings and carries nothing; a second window answers with a leg of its own', async () => {
    const first = await stack.newAgentPage();
    const customer = stack.customer('answers');
    const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(first).getByText(customer.name).waitFor();
    const connectedLegs = async (n: number) =>
      eventually(`${n} agent legs connected to the bridge while the call rings`, async () => {
        const legs = Object.values((await stack.bridgeReport(callId)).agents).filter((l) => l.state === 'connected');
        return legs.length >= n ? legs : undefined;
      });
    // The first window's leg is up before any click: its microphone reaches the bridge, which routes it nowhere.
    await connectedLegs(1);
    // A second window of the same agent, opened while it rings, is given a leg of its own.
    const second = await stack.newAgentPage();
    const card = incomingCard(second);
    await card.getByText(customer.name).waitFor();
    await connectedLegs(2);
    await second.waitForTimeout(300);
    expect((await stack.callReport(callId)).firstPacketAt).toBeUndefined();
    for (const page of [first, second]) expect((await agentInbound(page, await mediaIdOf(page, callId))).inboundEnergy).toBeLessThan(AUDIBLE_ENERGY);
    expect(await actionsFor(callId)).toEqual([]);

    await card.getByRole('button', { name: 'Answer' }).click();
    await currentCall(second).getByText('Connected').waitFor();
    await expectTwoWayAudio(second, stack.callReport, callId);
    // The other window's leg closed at the accept: the bridge carries the answering window's alone.
    await eventually('the first window’s leg to close', async () => Object.keys((await stack.bridgeReport(callId)).agents).length === 1);
    // The window that did not answer never hears the customer.
    expect((await agentInbound(first, await mediaIdOf(first, callId))).inboundEnergy).toBeLessThan(AUDIBLE_ENERGY);
    await currentCall(second).getByRole('button', { name: 'Hang up' }).click();
    await eventually('terminate to reach the gateway', async () => (await actionsFor(callId)).includes('terminate'));
    expect(await actionsFor(callId)).toEqual(['accept', 'terminate']);
    await first.close();
  });

  test('call out through the bridge: the customer answers, two-way audio, the customer hangs up', async () => {
    const page = await stack.newAgentPage();
    const customer = stack.customer('answers');
    await page.getByLabel('Phone number').fill(`+${customer.number}`);
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await currentCall(page).getByText('Connected').waitFor();
    const callId = await eventually('the initiate request', async () => (await stack.gatewayLog()).filter((l) => l.action === 'initiate' && l.status === 200).at(-1)?.callId);
    await expectTwoWayAudio(page, stack.callReport, callId);
    const report = await stack.bridgeReport(callId);
    expect(report.customer.packetsReceived).toBeGreaterThan(0);

    await stack.control('/control/hangup', { callId });
    await currentCall(page).getByText('Call ended').waitFor();
    await eventually('the bridge to end the call', async () => (await stack.bridgeLoad()).calls === 0);
  });

  test('call waiting and swap through the bridge: "Answer and hold" puts A on the bridge’s music, "Swap" brings A back, each stream seamless', async () => {
    const page = await stack.newAgentPage();
    const [first, second] = twoCustomers(stack);
    const a = await onCallWithWaiting(stack, page, first);
    await customerHears(a.callId, 'voice');
    const b = await stack.control<{ callId: string }>('/control/incoming', { number: second.number });
    await incomingCard(page).getByText(second.name).waitFor();
    await incomingCard(page).getByRole('button', { name: 'Answer and hold', exact: true }).click();
    await customerHears(a.callId, 'music');
    await customerHears(b.callId, 'voice');
    // Two bridged calls, each with its own leg from this window.
    await eventually('the bridge to hold both calls', async () => (await stack.bridgeLoad()).calls === 2);

    const held = currentCall(page).getByRole('group', { name: 'Call on hold' });
    await held.getByRole('button', { name: 'Swap', exact: true }).click();
    await customerHears(a.callId, 'voice');
    await customerHears(b.callId, 'music');
    for (const callId of [a.callId, b.callId]) {
      expect((await stack.callReport(callId)).rtp).toMatchObject({ ssrcs: 1, sequenceGaps: 0, timestampJumps: 0 });
    }

    await stack.control('/control/hangup', { callId: b.callId });
    await stack.control('/control/hangup', { callId: a.callId });
    await eventually('the bridge to end both calls', async () => (await stack.bridgeLoad()).calls === 0);
    expect((await stack.gatewayLog()).filter((l) => l.callId === a.callId || l.callId === b.callId).map((l) => l.action)).toEqual(['accept', 'accept']);
  });

  test('decline: reject reaches the gateway; the bridge lets go of the call', async () => {
    const page = await stack.newAgentPage();
    const customer = stack.customer('answers');
    const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(page).getByText(customer.name).waitFor();
    await incomingCard(page).getByRole('button', { name: 'Decline' }).click();
    await eventually('reject to reach the gateway', async () => (await actionsFor(callId)).includes('reject'));
    expect(await actionsFor(callId)).toEqual(['reject']);
    await recentCalls(page).getByText('Declined').first().waitFor();
    await eventually('the bridge to end the call', async () => (await stack.bridgeLoad()).calls === 0);
  });
});
