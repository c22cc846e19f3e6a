// A bridged call outlives the window that carried its audio (shared/calls/rejoin.ts): a reload mid-call
// is "Rejoining…" for a moment, the customer hears the bridge's music meanwhile and the agent's voice
// again within 5 s, on the same stream (one SSRC, no gap, no jump); nothing reaches the gateway but
// the accept, and Hang up ends the call as ever. A held call comes back held. The relay runs a bridge
// node in its process (`--bridge`); direct calls keep their rule (window-gone.test.ts).
import { describe, expect, test } from 'vitest';
import { REJOIN_WINDOW_MS } from '../../shared/call-state';
import type { SandboxCallReport, SandboxHeardSound } from '../../shared/sandbox';
import { answeredCall as answered, customerHears as hears, gatewayLogOf, rejoiningSeenAt, watchRejoining } from './rejoin-helpers';
import { currentCall, eventually, expectTwoWayAudio, recentCalls, stackForFile } from './harness';

/** The relay gives an agent whose leg went this long to come back (`startRelay({ rejoinWindowMs })`). */
const STACK = { bridge: true, rejoinWindowMs: REJOIN_WINDOW_MS };
const stack = stackForFile(STACK);
const answeredCall = (p: Parameters<typeof answered>[1]) => answered(stack, p);
const customerHears = (callId: string, what: SandboxHeardSound) => hears(stack, callId, what);

/** From a reload to the customer hearing the agent again (REJOIN-DESIGN "5 s budget"). */
const BACK_WITHIN_MS = 5_000;

/** When the customer began to hear `what` after `since` (unix ms), if it did. */
const heardAfter = (report: SandboxCallReport, what: SandboxHeardSound, since: number): number | undefined => report.heardLog.find((e) => e.heard === what && e.at > since)?.at;

const actionsFor = async (callId: string) => (await gatewayLogOf(stack, callId)).map((l) => l.action);

/** The bridge carries one live leg of this agent's (the old one closed once the new one was answered). */
async function oneAgentLeg(callId: string): Promise<void> {
  const legs = await eventually('the bridge to carry one agent leg', async () => {
    const report = await stack.bridgeReport(callId);
    const connected = Object.values(report.agents).filter((leg) => leg.state === 'connected');
    return connected.length === 1 && connected[0]!.packetsReceived > 0 ? connected : undefined;
  });
  expect(legs).toHaveLength(1);
}

describe('a reload during a bridged call', () => {
  test('rejoins: "Rejoining…", the customer never hears the call drop and hears the agent again on a new leg within 5 s, on one stream; nothing but the accept reaches the gateway; Hang up ends it', async () => {
    const page = await stack.newAgentPage();
    const { callId, name } = await answeredCall(page);
    await watchRejoining(page, 'next document');
    const oldLegs = Object.keys((await stack.bridgeReport(callId)).agents);

    const t0 = Date.now();
    await page.reload();
    await currentCall(page).getByText('Connected').waitFor();
    // The new leg is answered within a few hundred ms here: the music the bridge routes meanwhile is
    // shorter than the customer's 500 ms judging window, so what must hold is that the customer never
    // heard the call drop to silence and the agent's voice comes back on the new leg within 5 s.
    const backAt = await eventually('the customer to hear the agent again on a new leg', async () => {
      const report = await stack.bridgeReport(callId);
      const fresh = Object.entries(report.agents).filter(([legId, leg]) => !oldLegs.includes(legId) && leg.state === 'connected' && leg.packetsReceived > 0);
      return fresh.length === 1 && (await stack.callReport(callId)).heardNow === 'voice' ? Date.now() : undefined;
    });
    expect(backAt - t0).toBeLessThan(BACK_WITHIN_MS);
    const heard = (await stack.callReport(callId)).heardLog.filter((e) => e.at > t0);
    expect(heard.filter((e) => e.heard === 'silence')).toEqual([]);
    const seen = await rejoiningSeenAt(page);
    expect(seen).toBeGreaterThan(t0);
    expect(seen).toBeLessThan(backAt);

    await expectTwoWayAudio(page, stack.callReport, callId);
    await oneAgentLeg(callId);
    expect((await stack.callReport(callId)).rtp).toMatchObject({ ssrcs: 1, sequenceGaps: 0, timestampJumps: 0 });
    expect(await actionsFor(callId)).toEqual(['accept']);
    // The call is still the one it was: live in the service, with no ended call beside it.
    const live = await stack.service.handle('getSnapshot', {});
    expect(live.ok && live.value.calls.filter((c) => c.phase !== 'ended').map((c) => [c.callId, c.phase])).toEqual([[callId, 'active']]);

    await currentCall(page).getByRole('button', { name: 'Hang up' }).click();
    await eventually('terminate to reach the gateway', async () => (await actionsFor(callId)).includes('terminate'));
    expect(await actionsFor(callId)).toEqual(['accept', 'terminate']);
    await recentCalls(page).getByText(name).first().waitFor();
    await eventually('the bridge to end the call', async () => (await stack.bridgeLoad()).calls === 0);
  });

  test('while held: the customer hears music throughout, the call is still "On hold" once back, and Resume brings the agent\u2019s voice', async () => {
    const page = await stack.newAgentPage();
    const { callId } = await answeredCall(page);
    const call = currentCall(page);
    await call.getByRole('button', { name: 'Hold', exact: true }).click();
    await call.getByText('On hold').waitFor();
    await customerHears(callId, 'music');
    await watchRejoining(page, 'next document');

    const t0 = Date.now();
    await page.reload();
    await currentCall(page).getByRole('button', { name: 'Resume', exact: true }).waitFor({ timeout: BACK_WITHIN_MS * 2 });
    await currentCall(page).getByText('On hold').waitFor();
    expect(await rejoiningSeenAt(page)).toBeGreaterThan(t0);
    await oneAgentLeg(callId);
    // Music all along: the agent was never heard while held, reload or not.
    const held = await stack.callReport(callId);
    expect(held.heardNow).toBe('music');
    expect(heardAfter(held, 'voice', t0)).toBeUndefined();

    await currentCall(page).getByRole('button', { name: 'Resume', exact: true }).click();
    await customerHears(callId, 'voice');
    await expectTwoWayAudio(page, stack.callReport, callId);
    expect((await stack.callReport(callId)).rtp).toMatchObject({ ssrcs: 1, sequenceGaps: 0, timestampJumps: 0 });
    expect(await actionsFor(callId)).toEqual(['accept']);
  });

  test('while muted: the call is still muted once back, and Unmute brings the agent\u2019s voice', async () => {
    const page = await stack.newAgentPage();
    const { callId } = await answeredCall(page);
    await currentCall(page).getByRole('button', { name: 'Mute', exact: true }).click();
    await eventually('the customer to stop hearing the agent', async () => (await stack.callReport(callId)).heardNow !== 'voice');

    const t0 = Date.now();
    await page.reload();
    const unmute = currentCall(page).getByRole('button', { name: 'Unmute', exact: true });
    await unmute.waitFor();
    expect(await unmute.getAttribute('aria-pressed')).toBe('true');
    await oneAgentLeg(callId);
    await page.waitForTimeout(1_500);
    expect(heardAfter(await stack.callReport(callId), 'voice', t0)).toBeUndefined();

    await unmute.click();
    await customerHears(callId, 'voice');
  });

  test('muted, in two windows of the agent: both say "Unmute", through the reload of the one with the audio, and the other\'s Unmute brings the voice back', async () => {
    const page = await stack.newAgentPage();
    const { callId } = await answeredCall(page);
    const other = await stack.newAgentPage();
    await currentCall(other).getByText('Connected').waitFor();
    await currentCall(page).getByRole('button', { name: 'Mute', exact: true }).click();
    const unmuteThere = currentCall(other).getByRole('button', { name: 'Unmute', exact: true });
    await unmuteThere.waitFor();
    await eventually('the customer to stop hearing the agent', async () => (await stack.callReport(callId)).heardNow !== 'voice');

    const t0 = Date.now();
    await page.reload();
    await currentCall(page).getByRole('button', { name: 'Unmute', exact: true }).waitFor();
    await oneAgentLeg(callId);
    expect(await unmuteThere.getAttribute('aria-pressed')).toBe('true');
    expect(heardAfter(await stack.callReport(callId), 'voice', t0)).toBeUndefined();

    await unmuteThere.click();
    await currentCall(page).getByRole('button', { name: 'Mute', exact: true }).waitFor();
    await customerHears(callId, 'voice');
    expect(await actionsFor(callId)).toEqual(['accept']);
  });
});
