// Main's watch of bridged calls' customer legs (electron/core/bridge-quality.ts) and the relay's
// endpoint it reads (GET /calls/{callId}/bridge/quality). End to end with real parts: a relay with a
// bridge node in its process, the sandbox's customer on a lossy network facing the node, a werift
// window answering its own leg, and the app's RelayClient asking as the agent on the call. The
// watch's pace (at once, then every second, one ask at a time, slower while the relay fails) is
// pinned with a source that answers when told.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CustomerLegQuality } from '../../../shared/api';
import { BRIDGE_AGENT_PATHS, type LegReport } from '../../../shared/bridge';
import type { Logger } from '../../../shared/log';
import { err, ok, type Result } from '../../../shared/result';
import { CustomerLegWatch, type CustomerLegSource } from '../../../electron/core/bridge-quality';
import { RelayClient } from '../../../electron/core/relay-client';
import { localBridge } from '../../../relay/bridged-calls';
import { startRelay, type RelayServer } from '../../../relay/server';
import { CustomerNetwork } from '../../../sandbox/customer-network';
import { CustomerPeer } from '../../../sandbox/customer-peer';
import { loadCustomerVoice } from '../../../sandbox/customer-voice';
import { AgentWindow } from '../bridge/agent-window';
import { eventually, HOST, quietLogger, sleep, startNode, TONE_A } from '../bridge/bridge-harness';
import { APP_SECRET, incomingCall, postWebhook } from '../relay/webhook-fixtures';
import { active, ended, ringing } from '../renderer/fixtures';

const AGENT_A = 'agent-token-0001-0123456789abcdef-0123';
const AGENT_B = 'agent-token-0002-0123456789abcdef-0123';

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

function track<T extends { close(): Promise<void> | void }>(thing: T): T {
  closing.push(async () => void (await thing.close()));
  return thing;
}

/** A relay whose bridged calls go to a node in its process (`--bridge`), and two agents. */
async function bridgedRelay(): Promise<RelayServer> {
  const { node } = startNode({ publicAddress: HOST });
  closing.push(() => node.close());
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agentTokens: [AGENT_A, AGENT_B], heartbeatMs: 60_000, bridgeNodes: localBridge(node), logger: quietLogger });
  closing.push(() => relay.close());
  return relay;
}

async function ask(relay: RelayServer, token: string | undefined, path: string, method = 'POST', body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${relay.url}${path}`, {
    method,
    headers: { ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * An incoming call through the bridge, answered by agent A as the app does it (the agent's leg, the
 * claim, the window's answer for the bridge's, accepted): the customer's media flows to the node.
 */
async function answeredCall(relay: RelayServer, callId: string, lossPercent: number): Promise<{ customer: CustomerPeer; window: AgentWindow }> {
  const network = new CustomerNetwork({ label: `lossy network (${lossPercent} % loss)`, lossPercent });
  const customer = track(new CustomerPeer({ host: HOST, voice: loadCustomerVoice().voice, logger: quietLogger, network, onFirstFrameSent: () => network.mediaStarted(Date.now()) }));
  const offer = await customer.makeOffer();
  if (!offer.ok) throw new Error(offer.error.message);
  expect((await postWebhook(relay.url, incomingCall(callId, { session: { sdp_type: 'offer', sdp: offer.value } }))).status).toBe(200);
  const leg = await eventually('the agent’s leg', async () => {
    const answer = await ask(relay, AGENT_A, BRIDGE_AGENT_PATHS.leg(callId));
    return answer.status === 200 ? answer.body : undefined;
  });
  const window = track(new AgentWindow(TONE_A));
  const windowAnswer = await window.answer(String(leg.offer));
  expect((await ask(relay, AGENT_A, `/calls/${callId}/claim`)).status).toBe(200);
  const handed = await ask(relay, AGENT_A, BRIDGE_AGENT_PATHS.answer(callId), 'POST', { legId: leg.legId, sdp: windowAnswer });
  expect(handed.status).toBe(200);
  expect(await customer.applyAnswer(String(handed.body.sdp))).toEqual({ ok: true, value: undefined });
  expect((await ask(relay, AGENT_A, BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
  return { customer, window };
}

describe('the customer leg’s quality, from a relay with a bridge node in its process', () => {
  it('is asked at once and then every second while the bridged call is active, as the bridge measures it, and no more once it ended', async () => {
    const relay = await bridgedRelay();
    await answeredCall(relay, 'wacid.q-1', 20);
    const reports: { at: number; quality: CustomerLegQuality }[] = [];
    const client = track(new RelayClient({ url: relay.url, token: AGENT_A, logger: quietLogger }));
    const watch = new CustomerLegWatch({ relay: client, isBridged: (callId) => callId === 'wacid.q-1', report: (quality) => reports.push({ at: Date.now(), quality }), logger: quietLogger });
    closing.push(async () => watch.stop());

    // Ringing, or a direct call: nothing is asked.
    watch.callChanged(ringing('wacid.q-1'));
    watch.callChanged(active('wacid.direct'));
    expect(watch.watching()).toEqual([]);
    const startedAt = Date.now();
    watch.callChanged(active('wacid.q-1'));
    watch.callChanged(active('wacid.q-1'));
    expect(watch.watching()).toEqual(['in:wacid.q-1']);

    // The customer's network loses a fifth of its packets on their way to the bridge: the bridge counts them.
    const lossy = await eventually('a report with the customer’s losses', () => {
      const last = reports.at(-1)?.quality;
      return last !== undefined && last.report.packetsReceived > 50 && last.report.packetsLost > 5 ? last : undefined;
    });
    expect(lossy).toMatchObject({ localId: 'in:wacid.q-1', callId: 'wacid.q-1', report: { state: 'connected' } });
    const loss = lossy.report.packetsLost / (lossy.report.packetsLost + lossy.report.packetsReceived);
    expect(loss).toBeGreaterThan(0.08);
    expect(loss).toBeLessThan(0.35);
    expect(reports[0]!.at - startedAt).toBeLessThan(500);

    // About once a second, never two asks at once.
    const from = reports.length;
    await sleep(3_200);
    expect(reports.length - from).toBeGreaterThanOrEqual(2);
    expect(reports.length - from).toBeLessThanOrEqual(4);
    const gaps = reports.slice(1).map((r, i) => r.at - reports[i]!.at);
    expect(Math.min(...gaps)).toBeGreaterThan(700);
    // The counts only grow.
    const received = reports.map((r) => r.quality.report.packetsReceived);
    expect(received).toEqual([...received].sort((a, b) => a - b));

    watch.callChanged(ended('wacid.q-1'));
    expect(watch.watching()).toEqual([]);
    const last = reports.length;
    await sleep(1_500);
    expect(reports.length).toBe(last);
  });

  it('is the call’s agent’s only: 403 for another agent, 404 for a call it does not bridge, 401 without a token, 405 but for GET; the watch lets such a call go', async () => {
    const relay = await bridgedRelay();
    await answeredCall(relay, 'wacid.q-2', 0);
    const path = BRIDGE_AGENT_PATHS.quality('wacid.q-2');

    const mine = await ask(relay, AGENT_A, path, 'GET');
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ state: expect.stringMatching(/^(connecting|connected)$/), packetsReceived: expect.any(Number), packetsLost: expect.any(Number) });
    expect(await ask(relay, AGENT_B, path, 'GET')).toEqual({ status: 403, body: { error: { code: 'forbidden', message: 'only the agent on the call reads its quality' } } });
    expect(await ask(relay, AGENT_A, BRIDGE_AGENT_PATHS.quality('wacid.unknown'), 'GET')).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'no bridged call wacid.unknown' } } });
    expect((await ask(relay, undefined, path, 'GET')).status).toBe(401);
    const post = await ask(relay, AGENT_A, path, 'POST');
    expect(post).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });

    const other = track(new RelayClient({ url: relay.url, token: AGENT_B, logger: quietLogger }));
    expect(await other.bridgeQuality('wacid.q-2')).toMatchObject({ ok: false, error: { code: 'unauthorized', httpStatus: 403 } });
    const reports: CustomerLegQuality[] = [];
    const watch = new CustomerLegWatch({ relay: other, isBridged: () => true, report: (q) => reports.push(q), logger: quietLogger });
    closing.push(async () => watch.stop());
    watch.callChanged(active('wacid.q-2'));
    await eventually('the watch to let the call go', () => watch.watching().length === 0);
    expect(reports).toEqual([]);
  });
});

describe('the watch’s pace', () => {
  const REPORT: LegReport = { state: 'connected', packetsReceived: 50, packetsLost: 1, jitterMs: 3, roundTripMs: 40 };
  const logged: string[] = [];
  const logger: Logger = { ...quietLogger, warn: (message) => void logged.push(`warn ${message}`), info: (message) => void logged.push(`info ${message}`) };

  /** A relay whose answers the test gives, one ask at a time. */
  function scriptedSource() {
    const pending: Array<(answer: Result<LegReport>) => void> = [];
    let asks = 0;
    const source: CustomerLegSource = {
      bridgeQuality: () => {
        asks++;
        return new Promise((resolve) => pending.push(resolve));
      },
    };
    return { source, asks: () => asks, answer: (answer: Result<LegReport>) => pending.shift()?.(answer), waiting: () => pending.length };
  }

  afterEach(() => {
    vi.useRealTimers();
    logged.length = 0;
  });

  it('asks one at a time, every second from the start of the last ask; slower while the relay fails, with one warning; every second again once it answers', async () => {
    vi.useFakeTimers();
    const relay = scriptedSource();
    const reports: CustomerLegQuality[] = [];
    const watch = new CustomerLegWatch({ relay: relay.source, isBridged: () => true, report: (q) => reports.push(q), logger });
    watch.callChanged(active('wacid.p-1'));
    expect(relay.asks()).toBe(1);
    // A slow answer: no second ask meanwhile.
    await vi.advanceTimersByTimeAsync(2_500);
    expect(relay.asks()).toBe(1);
    relay.answer(ok(REPORT));
    await vi.advanceTimersByTimeAsync(0);
    expect(reports).toEqual([{ localId: 'in:wacid.p-1', callId: 'wacid.p-1', report: REPORT }]);
    // It took longer than the interval: the next ask goes at once.
    expect(relay.asks()).toBe(2);
    relay.answer(ok(REPORT));
    await vi.advanceTimersByTimeAsync(999);
    expect(relay.asks()).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(relay.asks()).toBe(3);

    // The relay cannot be reached: 2 s, 4 s, 8 s, then at most 10 s between asks; one warning.
    const askTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      relay.answer(err('gateway_unreachable', 'the relay could not be reached'));
      const before = relay.asks();
      let waited = 0;
      while (relay.asks() === before) {
        await vi.advanceTimersByTimeAsync(100);
        waited += 100;
      }
      askTimes.push(waited);
    }
    expect(askTimes).toEqual([2_000, 4_000, 8_000, 10_000, 10_000]);
    expect(logged.filter((l) => l.startsWith('warn'))).toEqual(['warn the customer leg’s quality could not be read']);
    relay.answer(ok(REPORT));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(relay.asks()).toBe(9);
    expect(logged).toContain('info the customer leg’s quality is read again');
    watch.stop();
    relay.answer(ok(REPORT));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(relay.asks()).toBe(9);
    // The answer to the ask under way when it stopped is dropped.
    expect(reports).toHaveLength(3);
  });

  it('a call that stops being active or ends is let go, even with an ask under way; a held call stays watched', async () => {
    vi.useFakeTimers();
    const relay = scriptedSource();
    const reports: CustomerLegQuality[] = [];
    const watch = new CustomerLegWatch({ relay: relay.source, isBridged: () => true, report: (q) => reports.push(q), logger });
    const call = active('wacid.p-2');
    watch.callChanged(call);
    watch.callChanged({ ...call, heldSince: Date.now() } as typeof call);
    expect(watch.watching()).toEqual(['in:wacid.p-2']);
    watch.callChanged(ended('wacid.p-2'));
    expect(watch.watching()).toEqual([]);
    relay.answer(ok(REPORT));
    await vi.advanceTimersByTimeAsync(3_000);
    expect(reports).toEqual([]);
    expect(relay.asks()).toBe(1);
    expect(relay.waiting()).toBe(0);
  });
});
