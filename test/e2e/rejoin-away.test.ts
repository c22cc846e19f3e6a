// A bridged call whose agent's leg goes for longer than a reload (shared/calls/rejoin.ts): a network
// change drops the leg and the window rejoins by itself; a window closed for good leaves the customer
// on the bridge's music until the relay's rejoin window is over, then the call is ended at the gateway
// with terminate and the reason is kept with the call. The relay holds the account's key
// (`--gateway-url`, `--api-key`); its window is shortened here from 60 s to keep the test short.
import { describe, expect, test } from 'vitest';
import { currentCall, eventually, expectTwoWayAudio, recentCalls, stackForFile } from './harness';
import { answeredCall, customerHears, gatewayLogOf, rejoiningSeenAt, watchRejoining } from './rejoin-helpers';

const AWAY_MS = 6_000;
const stack = stackForFile({ bridge: true, relayGateway: true, rejoinWindowMs: AWAY_MS });

describe('an agent leg gone for longer than a reload', () => {
  test('a network change drops the leg: "Rejoining…", the customer hears music, then the agent again on a new leg, on one stream; nothing but the accept reaches the gateway', async () => {
    const page = await stack.newAgentPage();
    const { callId } = await answeredCall(stack, page);
    await watchRejoining(page, 'now');
    const oldLegs = Object.keys((await stack.bridgeReport(callId)).agents);

    const t0 = Date.now();
    await stack.dropAgentLeg(callId);
    await eventually('the window to say "Rejoining…"', () => rejoiningSeenAt(page));
    await eventually('the customer to hear the agent again on a new leg', async () => {
      const report = await stack.bridgeReport(callId);
      const fresh = Object.entries(report.agents).filter(([legId, leg]) => !oldLegs.includes(legId) && leg.state === 'connected' && leg.packetsReceived > 0);
      return fresh.length === 1 && (await stack.callReport(callId)).heardNow === 'voice';
    });
    await currentCall(page).getByText('Connected').waitFor();
    const report = await stack.callReport(callId);
    // Never a dropped call: what the customer heard after the drop was the agent or the music.
    const since = report.heardLog.filter((e) => e.at > t0);
    expect(since.filter((e) => e.heard === 'silence')).toEqual([]);
    expect(since.map((e) => e.heard)).toEqual(['music', 'voice']);
    expect(report.rtp).toMatchObject({ ssrcs: 1, sequenceGaps: 0, timestampJumps: 0 });
    await expectTwoWayAudio(page, stack.callReport, callId);
    expect((await gatewayLogOf(stack, callId)).map((l) => l.action)).toEqual(['accept']);
  });

  test('a window closed for good: the customer hears music, the call is ended at the gateway with terminate once the rejoin window is over, and the agent\u2019s next window says why', async () => {
    const page = await stack.newAgentPage();
    const { callId, name } = await answeredCall(stack, page);

    const t0 = Date.now();
    await page.context().close();
    await customerHears(stack, callId, 'music');
    const ended = await eventually(
      'the call to end at the gateway',
      async () => {
        const report = await stack.callReport(callId);
        return report.state === 'ended' ? report : undefined;
      },
      AWAY_MS + 15_000,
    );
    // Music until the end: the customer was never left in silence on a call still live.
    expect(ended.heardLog.filter((e) => e.at > t0 && e.heard === 'silence')).toEqual([]);
    await eventually('the bridge to end the call', async () => (await stack.bridgeLoad()).calls === 0);
    // One terminate, the relay's (the app, told first, left the call through the relay, which said
    // it had ended it at the gateway), once the window was over.
    const log = await gatewayLogOf(stack, callId);
    expect(log.map((l) => [l.action, l.status])).toEqual([
      ['accept', 200],
      ['terminate', 200],
    ]);
    expect(log[1]!.at - t0).toBeGreaterThanOrEqual(AWAY_MS - 1_000);

    // The agent's next window: the call is in recent calls as failed, with the reason kept.
    const again = await stack.newAgentPage();
    await recentCalls(again).getByText(name).first().waitFor();
    await expect.poll(async () => (await recentCalls(again).textContent()) ?? '').toContain('Failed');
    const live = await stack.service.handle('getSnapshot', {});
    expect(live.ok).toBe(true);
    const call = live.ok ? live.value.calls.find((c) => c.callId === callId) : undefined;
    expect(call).toMatchObject({
      phase: 'ended',
      end: { kind: 'failed', code: 'agent_not_back', message: `You did not come back to the call within ${AWAY_MS / 1000} s, so it was ended` },
    });
  });
});
