// Where a call's set-up spends its time: the main process stamps its steps (command, the claim on
// the relay, the accept or initiate) on the wall clock, and diagnostics keep them with the window's.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CallCoordinator } from '../../../electron/core/call-coordinator';
import { CallDiagnosticsStore } from '../../../electron/core/diagnostics';
import { GatewayClient } from '../../../electron/core/gateway-client';
import { HistoryStore } from '../../../electron/core/history-store';
import type { CallClaims } from '../../../electron/core/relay-client';
import { CALL_SETUP_MOMENTS, callSetupSteps, type MainCallTimings } from '../../../shared/diagnostics';
import { configureLogging } from '../../../shared/log';
import { ok } from '../../../shared/result';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { initiated, startFakeGateway, success, type GatewayHandler } from './fake-gateway';

configureLogging({ sink: () => undefined });

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A relay whose claim takes `claimMs`, and a gateway whose answer takes `gatewayMs`. */
async function coordinatorWith(options: { claimMs: number; gatewayMs: number; handler: GatewayHandler }) {
  const gateway = await startFakeGateway(async (req) => {
    await pause(options.gatewayMs);
    return options.handler(req);
  });
  const dataDir = await mkdtemp(join(tmpdir(), 'softphone-setup-times-'));
  const client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: 'test-api-key-123', product: 'chatapp', timeoutMs: 2_000 });
  const history = await HistoryStore.open({ dataDir });
  const claims: CallClaims = {
    agentId: 'agent-1',
    claim: async () => {
      await pause(options.claimMs);
      return ok({ agentId: 'agent-1' });
    },
    decline: async () => ok({ othersRinging: 0 }),
  };
  const coordinator = new CallCoordinator({ gateway: client, claims, gatewayUrl: gateway.baseUrl, dataDir, history, defaultCountry: 'GB' });
  await coordinator.start();
  cleanups.push(async () => {
    await coordinator.shutdown();
    await client.close();
    await gateway.close();
    await history.flush();
    await rm(dataDir, { recursive: true, force: true });
  });
  return { coordinator, dataDir };
}

describe('the main process stamps its steps of a call set-up', () => {
  it('Answer: command, claim sent and answered, accept sent and answered, in that order and as long as each took', async () => {
    const { coordinator } = await coordinatorWith({ claimMs: 40, gatewayMs: 60, handler: () => success() });
    coordinator.applyRelayEvent({ id: '1', receivedAt: Date.now(), event: { type: 'call.incoming', callId: 'wacid.t1', from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() } });
    const before = performance.timeOrigin + performance.now();
    expect((await coordinator.answerCall('in:wacid.t1', ANSWER_SDP)).ok).toBe(true);
    const after = performance.timeOrigin + performance.now();
    const t = coordinator.timingsOf('in:wacid.t1');
    const order: (keyof MainCallTimings)[] = ['commandAt', 'claimSentAt', 'claimDoneAt', 'gatewaySentAt', 'gatewayDoneAt'];
    const moments = order.map((m) => t[m]);
    expect(moments.every((m) => m !== undefined && m >= before && m <= after), JSON.stringify(t)).toBe(true);
    expect([...moments].sort((a, b) => a! - b!)).toEqual(moments);
    expect(t.claimDoneAt! - t.claimSentAt!).toBeGreaterThanOrEqual(39);
    expect(t.gatewayDoneAt! - t.gatewaySentAt!).toBeGreaterThanOrEqual(59);
    // A second Answer (refused: the call is no longer ringing) changes nothing of the set-up.
    expect((await coordinator.answerCall('in:wacid.t1', ANSWER_SDP)).ok).toBe(false);
    expect(coordinator.timingsOf('in:wacid.t1')).toEqual(t);
  });

  it('an Answer refused (the call not ringing yet, another call not yet connected) starts nothing: the Answer that takes the call does', async () => {
    const { coordinator } = await coordinatorWith({ claimMs: 1, gatewayMs: 1, handler: () => success() });
    const now = () => performance.timeOrigin + performance.now();
    const incoming = (callId: string) =>
      coordinator.applyRelayEvent({ id: callId, receivedAt: Date.now(), event: { type: 'call.incoming', callId, from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() } });

    // Not ringing here yet.
    expect((await coordinator.answerCall('in:wacid.t3', ANSWER_SDP)).ok).toBe(false);
    incoming('wacid.t3');
    await pause(20);
    const first = now();
    expect((await coordinator.answerCall('in:wacid.t3', ANSWER_SDP)).ok).toBe(true);
    expect(coordinator.timingsOf('in:wacid.t3').commandAt).toBeGreaterThanOrEqual(first);

    // A second call rings while the first is still connecting: its Answer is refused until the first is through.
    incoming('wacid.t4');
    expect((await coordinator.answerCall('in:wacid.t4', ANSWER_SDP)).ok).toBe(false);
    expect(coordinator.timingsOf('in:wacid.t4')).toEqual({});
    await pause(20);
    expect((await coordinator.reportMedia({ localId: 'in:wacid.t3', state: 'connected' })).ok).toBe(true);
    const second = now();
    expect((await coordinator.answerCall('in:wacid.t4', ANSWER_SDP)).ok).toBe(true);
    const t = coordinator.timingsOf('in:wacid.t4');
    expect(t.commandAt).toBeGreaterThanOrEqual(second);
    expect(t.claimSentAt).toBeGreaterThanOrEqual(t.commandAt!);
  });

  it('Call: command and initiate; an outgoing call\'s claim (which only routes its events) is no step of it', async () => {
    const { coordinator } = await coordinatorWith({ claimMs: 5, gatewayMs: 30, handler: () => initiated('wacid.t2') });
    const placed = await coordinator.startCall('+44 7400 123456', DIAL_OFFER_SDP, 'out:t2');
    expect(placed.ok).toBe(true);
    await coordinator.whenIdle();
    const t = coordinator.timingsOf('out:t2');
    expect(Object.keys(t).sort()).toEqual(['commandAt', 'gatewayDoneAt', 'gatewaySentAt']);
    expect(t.gatewayDoneAt! - t.gatewaySentAt!).toBeGreaterThanOrEqual(29);
    expect(t.gatewaySentAt!).toBeGreaterThanOrEqual(t.commandAt!);
    expect(coordinator.timingsOf('out:unknown')).toEqual({});
  });
});

describe('callSetupSteps', () => {
  it('names each step by the moment it ends at, skipping moments a call does not have', () => {
    expect(callSetupSteps({ clickedAt: 100, sdpReadyAt: 101.5, commandAt: 103, claimSentAt: 103.2, claimDoneAt: 110, gatewaySentAt: 110.1, gatewayDoneAt: 118, iceStartedAt: 121, iceConnectedAt: 125, mediaConnectedAt: 180 })).toEqual([
      { to: 'sdpReadyAt', ms: 1.5 },
      { to: 'commandAt', ms: 1.5 },
      { to: 'claimSentAt', ms: expect.closeTo(0.2, 5) },
      { to: 'claimDoneAt', ms: expect.closeTo(6.8, 5) },
      { to: 'gatewaySentAt', ms: expect.closeTo(0.1, 5) },
      { to: 'gatewayDoneAt', ms: expect.closeTo(7.9, 5) },
      { to: 'iceStartedAt', ms: 3 },
      { to: 'iceConnectedAt', ms: 4 },
      { to: 'mediaConnectedAt', ms: 55 },
    ]);
    expect(callSetupSteps({ clickedAt: 5, gatewaySentAt: 9 })).toEqual([{ to: 'gatewaySentAt', ms: 4 }]);
    expect(callSetupSteps({ commandAt: 5 })).toEqual([]);
    expect(CALL_SETUP_MOMENTS[0]).toBe('clickedAt');
  });
});

describe('diagnostics keep both sides\' moments with the call', () => {
  it("the window's report and the main process's moments, merged into one entry and kept across a restart", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'softphone-setup-diag-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const store = await CallDiagnosticsStore.open({ dataDir });
    const summary = { samples: 12, avgMos: 4.4, worstMos: 4.3, worstLossPercent: 0, warningsSeen: [] };
    store.record(
      { localId: 'in:wacid.d1', summary, samples: [], timings: { clickedAt: 10, sdpReadyAt: 11, iceStartedAt: 40, iceConnectedAt: 45, mediaConnectedAt: 90 } },
      { callId: 'wacid.d1', direction: 'incoming', timings: { commandAt: 13, claimSentAt: 13.5, claimDoneAt: 20, gatewaySentAt: 20.2, gatewayDoneAt: 35 } },
      1_000,
    );
    const entry = store.recent()[0]!;
    expect(callSetupSteps(entry.timings!).map((s) => s.to)).toEqual(CALL_SETUP_MOMENTS.slice(1));
    await store.flush();
    const again = await CallDiagnosticsStore.open({ dataDir });
    expect(again.recent()[0]!.timings).toEqual(entry.timings);
  });
});
