// A bridged call outlives the window that carried its audio (shared/calls/rejoin.ts): main asks the
// relay for a new leg (BridgedCallControl.rejoin, rejoin-runner.ts), the window's answer goes to the
// relay's rejoin answer, and the call is connected again when the new leg's media is; the relay's
// refusals decide what becomes of it; a call a crash left live is taken up again from
// live-calls.json; a direct call still ends. Real parts: RelayClient, GatewayClient,
// BridgedCallControl, CallCoordinator, the history store and the live-calls file, against a relay
// peer speaking the agent's contract (bridge-relay.ts) and the fake gateway.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BridgedCallControl } from '../../../electron/core/bridged-calls';
import { CallCoordinator } from '../../../electron/core/call-coordinator';
import { GatewayClient } from '../../../electron/core/gateway-client';
import { HistoryStore } from '../../../electron/core/history-store';
import { RelayClient } from '../../../electron/core/relay-client';
import { rejoinAnswerOutcomeOf, rejoinVerdictOf } from '../../../electron/core/rejoin-runner';
import { callsOfGoneWindow } from '../../../electron/core/service/call-commands';
import type { ModeMachine } from '../../../electron/core/service/mode';
import { WINDOW_GONE_REASON } from '../../../shared/api';
import { REJOIN_REFUSALS, REJOIN_WINDOW_MS, type CallState, type RestorableCall } from '../../../shared/call-state';
import type { RelayEnvelope, RelayEvent } from '../../../shared/events';
import { english, text } from '../../../shared/i18n/text';
import { configureLogging, createLogger } from '../../../shared/log';
import { errText, type ErrorCode } from '../../../shared/result';
import { ANSWER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { FakeClock } from '../../support/fake-clock';
import { LEG_OFFER_SDP, REJOIN_OFFER_SDP, startBridgeRelay, type BridgeRelay, type Reply } from './bridge-relay';
import { happyGateway, startFakeGateway, type FakeGateway } from './fake-gateway';

configureLogging({ sink: () => undefined });

const CUSTOMER = '442079460958';
const CALL = 'wacid.rejoin-1';
const LOCAL = `in:${CALL}`;
const REJOIN_PATH = `/calls/${CALL}/bridge/rejoin`;
const REJOIN_ANSWER_PATH = `/calls/${CALL}/bridge/rejoin/answer`;
const RELOADED = { code: 'media_failed', message: english(WINDOW_GONE_REASON.reloaded), text: WINDOW_GONE_REASON.reloaded };
/** The window's answer to the rejoin offer. */
const REJOIN_ANSWER_SDP = ANSWER_SDP.replace('o=- 3 4', 'o=- 33 44');

interface Desk {
  clock: FakeClock;
  relay: BridgeRelay;
  gateway: FakeGateway;
  bridge: BridgedCallControl;
  coordinator: CallCoordinator;
  dataDir: string;
  /** Every call the coordinator announced, in order. */
  pushes: CallState[];
  event(e: RelayEvent): Promise<void>;
  liveFile(): Promise<unknown>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Until `check` holds (real time: the requests are real). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** A desk with the team's bridge; `leftLive` is what live-calls.json holds before the coordinator starts (a crash left it). */
async function desk(options: { leftLive?: (gatewayUrl: string) => unknown; relayAnswers?: BridgeRelay['onRequest'] } = {}): Promise<Desk> {
  const clock = new FakeClock(1_760_000_000_000);
  const relay = await startBridgeRelay();
  if (options.relayAnswers !== undefined) relay.onRequest = options.relayAnswers;
  const gateway = await startFakeGateway(happyGateway);
  const dataDir = await mkdtemp(join(tmpdir(), 'softphone-rejoin-'));
  if (options.leftLive !== undefined) await writeFile(join(dataDir, 'live-calls.json'), JSON.stringify(options.leftLive(gateway.baseUrl)));
  const client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: 'test-api-key-123', product: 'chatapp', terminateBackoffMs: 5, timeoutMs: 2_000 });
  const relayClient = new RelayClient({ url: relay.url, token: relay.token });
  const history = await HistoryStore.open({ dataDir, now: clock.now });
  const bridge = new BridgedCallControl(client, relayClient, createLogger('bridged-calls'), { leaveRetryMs: [5], rejoinRetryMs: [5, 10], now: clock.now });
  const coordinator = new CallCoordinator({ gateway: bridge, claims: relayClient, transfers: bridge, rejoins: bridge, gatewayUrl: gateway.baseUrl, dataDir, history, now: clock.now, timers: clock });
  const pushes: CallState[] = [];
  coordinator.onCallChanged((call) => {
    bridge.callChanged(call);
    pushes.push(call);
  });
  await coordinator.start();
  cleanups.push(async () => {
    await coordinator.shutdown();
    await relayClient.close();
    await client.close();
    await gateway.close();
    await relay.close();
    await history.flush();
    await rm(dataDir, { recursive: true, force: true });
  });
  let seq = 0;
  const event = (e: RelayEvent) =>
    new Promise<void>((resolve) => {
      const envelope: RelayEnvelope = { id: `e-${++seq}`, receivedAt: clock.t, event: e };
      bridge.deliver(envelope, (passed) => {
        coordinator.applyRelayEvent(passed);
        resolve();
      });
    });
  return { clock, relay, gateway, bridge, coordinator, dataDir, pushes, event, liveFile: async () => JSON.parse(await readFile(join(dataDir, 'live-calls.json'), 'utf8')) as unknown };
}

/** A bridged call the customer made, answered here and connected; the relay's and the gateway's requests so far forgotten. */
async function onBridgedCall(d: Desk): Promise<void> {
  await d.event({ type: 'call.incoming', callId: CALL, from: CUSTOMER, name: 'Ada Lovelace', sdp: OFFER_SDP, timestamp: d.clock.t, bridged: true });
  expect(await d.coordinator.answerCall(LOCAL, ANSWER_SDP)).toEqual({ ok: true, value: null });
  d.clock.advance(1_000);
  expect(await d.coordinator.reportMedia({ localId: LOCAL, state: 'connected' })).toEqual({ ok: true, value: null });
  expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'active', bridged: true });
  expect(d.gateway.actions()).toEqual(['accept']);
  d.relay.requests.length = 0;
  d.gateway.requests.length = 0;
  d.pushes.length = 0;
}

/** The relay answers the rejoin (and, with `leave`, the leave) with `reply` instead of the contract's. */
const answering = (d: Desk, reply: Reply, o: { leave?: Reply } = {}): void => {
  d.relay.onRequest = (req) => (req.path === REJOIN_PATH ? reply : o.leave !== undefined && req.path.endsWith('/bridge/leave') ? o.leave : undefined);
};
const refusal = (status: number, code: string, message: string): Reply => ({ status, body: { error: { code, message } } });

describe('a bridged call whose window went rejoins', () => {
  it('asks the relay for a new leg, pushes its offer, takes the window’s answer to the relay and is connected again when its media is, the gateway told nothing', async () => {
    const d = await desk();
    await onBridgedCall(d);
    const since = d.clock.t;
    const connectedAt = (d.coordinator.call(LOCAL) as { connectedAt: number }).connectedAt;
    d.coordinator.windowGone(LOCAL, RELOADED);
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'active', rejoin: { since } });
    await d.coordinator.whenIdle();
    expect(d.relay.seen()).toEqual([`POST ${REJOIN_PATH}`]);
    const offered = d.pushes.at(-1);
    expect(offered).toMatchObject({ localId: LOCAL, phase: 'active', connectedAt, rejoin: { since, legId: 'leg-rejoin-1', offerSdp: REJOIN_OFFER_SDP } });
    expect(offered).not.toHaveProperty('open');

    // A second report of the same window changes nothing: the offer waits for the next window.
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    expect(d.relay.seen()).toEqual([`POST ${REJOIN_PATH}`]);

    expect(await d.coordinator.rejoinCall(LOCAL, 'leg-rejoin-1', REJOIN_ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(d.relay.requests.at(-1)).toEqual({ method: 'POST', path: REJOIN_ANSWER_PATH, body: { legId: 'leg-rejoin-1', sdp: REJOIN_ANSWER_SDP } });
    expect(d.coordinator.call(LOCAL)).toMatchObject({ rejoin: { since, legId: 'leg-rejoin-1', answered: true } });
    // Another window's answer to the same offer comes too late.
    const late = await d.coordinator.rejoinCall(LOCAL, 'leg-rejoin-1', REJOIN_ANSWER_SDP);
    expect(late).toEqual(errText('invalid_state', REJOIN_REFUSALS.offerClosed));

    d.clock.advance(2_000);
    expect(await d.coordinator.reportMedia({ localId: LOCAL, state: 'connected' })).toEqual({ ok: true, value: null });
    const back = d.coordinator.call(LOCAL);
    expect(back).toMatchObject({ phase: 'active', connectedAt });
    expect(back).not.toHaveProperty('rejoin');
    expect(d.pushes.at(-1)).not.toHaveProperty('rejoin');
    await d.coordinator.whenIdle();
    expect(d.gateway.requests).toEqual([]);
    expect(d.relay.seen()).toEqual([`POST ${REJOIN_PATH}`, `POST ${REJOIN_ANSWER_PATH}`]);
    // The call is the bridge's as before: hanging up leaves it, and the last one out terminates it.
    expect(d.bridge.isBridgedCall(CALL)).toBe(true);
    d.relay.leaveLast = true;
    expect(await d.coordinator.hangUp(LOCAL)).toEqual({ ok: true, value: null });
    await d.coordinator.whenIdle();
    expect(d.gateway.actions()).toEqual(['terminate']);
  });

  it('media connected before the window answered is the old leg’s: nothing changes, and it is no error', async () => {
    const d = await desk();
    await onBridgedCall(d);
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    expect(await d.coordinator.reportMedia({ localId: LOCAL, state: 'connected' })).toEqual({ ok: true, value: null });
    expect(d.coordinator.call(LOCAL)).toMatchObject({ rejoin: { legId: 'leg-rejoin-1' } });
  });

  it('an active bridged call whose media failed (a network change) rejoins the same way', async () => {
    const d = await desk();
    await onBridgedCall(d);
    expect(await d.coordinator.reportMedia({ localId: LOCAL, state: 'failed', reason: 'ICE failed' })).toEqual({ ok: true, value: null });
    await d.coordinator.whenIdle();
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'active', rejoin: { legId: 'leg-rejoin-1', offerSdp: REJOIN_OFFER_SDP } });
    expect(d.gateway.requests).toEqual([]);
  });

  it('the gone window’s calls are told one by one: the bridged one rejoins, a direct one ends with the reason and a terminate, as it always did', async () => {
    const d = await desk();
    await onBridgedCall(d);
    await d.event({ type: 'call.incoming', callId: 'wacid.direct-1', from: '442079460959', sdp: OFFER_SDP, timestamp: d.clock.t });
    const direct = 'in:wacid.direct-1';
    // One call in hand at a time: the bridged one goes on hold as the direct one is answered.
    expect(await d.coordinator.answerCall(direct, ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(await d.coordinator.reportMedia({ localId: direct, state: 'connected' })).toEqual({ ok: true, value: null });
    await d.coordinator.whenIdle();
    await until(() => d.relay.seen(/hold/).length === 1, 'the bridge hears the hold');
    d.gateway.requests.length = 0;
    d.relay.requests.length = 0;
    const mode = { current: () => ({ coordinator: d.coordinator }) } as unknown as ModeMachine;
    callsOfGoneWindow(mode, createLogger('calls'), 'all', WINDOW_GONE_REASON.reloaded);
    await d.coordinator.whenIdle();
    expect(d.coordinator.call(direct)).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'media_failed', message: RELOADED.message, text: WINDOW_GONE_REASON.reloaded } });
    expect(d.gateway.requests.map((r) => [r.path.split('/').pop(), (r.body as { call_id?: string }).call_id])).toEqual([['terminate', 'wacid.direct-1']]);
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'active', heldSince: expect.any(Number), rejoin: { legId: 'leg-rejoin-1' } });
    expect(d.relay.seen(/bridge\/rejoin/)).toEqual([`POST ${REJOIN_PATH}`]);
    // Held it was, held it stays: the bridge is told nothing of a hold it has already.
    expect(d.relay.seen(/hold/)).toEqual([]);
  });
});

describe('the relay’s refusals of a rejoin decide', () => {
  it('403: the call went on without this agent; it ends here, nothing owed to the gateway', async () => {
    const d = await desk();
    await onBridgedCall(d);
    answering(d, refusal(403, 'forbidden', 'not a member of the call'));
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    const said = text('calls.rejoinNotMember');
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'rejoin_not_member', message: english(said), text: said } });
    expect(d.relay.seen()).toEqual([`POST ${REJOIN_PATH}`]);
    expect(d.gateway.requests).toEqual([]);
  });

  it('410: the relay gave it up for this agent being away too long and ended it at the gateway itself; the leave says so, and nothing reaches the gateway from here', async () => {
    const d = await desk();
    await onBridgedCall(d);
    answering(d, refusal(410, 'call_ended', 'the agent did not come back'), { leave: refusal(410, 'call_ended', 'ended at the gateway by the relay') });
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    const said = text('calls.agentNotBack', { seconds: REJOIN_WINDOW_MS / 1000 });
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'agent_not_back', message: english(said), text: said } });
    expect(d.relay.seen()).toEqual([`POST ${REJOIN_PATH}`, `POST /calls/${CALL}/bridge/leave`]);
    expect(d.gateway.requests).toEqual([]);
  });

  it('410 from a relay without the key (it only let the customer go): the leave says this agent was the last, and the gateway hears terminate from here', async () => {
    const d = await desk();
    await onBridgedCall(d);
    answering(d, refusal(410, 'call_ended', 'the agent did not come back'));
    d.relay.leaveLast = true;
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'agent_not_back' } });
    expect(d.gateway.actions()).toEqual(['terminate']);
  });

  it('404: the relay does not know the call (it restarted); the call is let go and the gateway hears terminate', async () => {
    const d = await desk();
    await onBridgedCall(d);
    answering(d, refusal(404, 'not_found', 'no such call'), { leave: refusal(404, 'not_found', 'no such call') });
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    // An older relay, which knows no rejoin, says the same: its words are kept.
    const said = text('relay.notOffered', { what: 'bridge rejoin' });
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'not_available', message: english(said), text: said } });
    expect(d.relay.seen()).toEqual([`POST ${REJOIN_PATH}`, `POST /calls/${CALL}/bridge/leave`]);
    expect(d.gateway.actions()).toEqual(['terminate']);
  });

  it('503: the call’s node is gone; asked once, never again, and the gateway hears terminate', async () => {
    const d = await desk();
    await onBridgedCall(d);
    answering(d, refusal(503, 'node_gone', 'the call’s node is gone'));
    d.relay.leaveLast = true;
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    const said = text('calls.bridgeNodeGone');
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'media_failed', message: english(said), text: said } });
    expect(d.relay.seen(/bridge\/rejoin/)).toEqual([`POST ${REJOIN_PATH}`]);
    expect(d.gateway.actions()).toEqual(['terminate']);
  });

  it('a relay that cannot answer (5xx, unreachable) is asked again until it offers a leg', async () => {
    const d = await desk();
    await onBridgedCall(d);
    let failures = 0;
    d.relay.onRequest = (req) => (req.path === REJOIN_PATH && ++failures <= 3 ? refusal(502, 'bad_gateway', 'try again') : undefined);
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    expect(d.relay.seen()).toEqual([`POST ${REJOIN_PATH}`, `POST ${REJOIN_PATH}`, `POST ${REJOIN_PATH}`, `POST ${REJOIN_PATH}`]);
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'active', rejoin: { legId: 'leg-rejoin-1', offerSdp: REJOIN_OFFER_SDP } });
    expect(d.gateway.requests).toEqual([]);
  });

  it('… until the window is over: then this agent was not back in time, the call is let go, and the gateway hears terminate', async () => {
    const d = await desk();
    await onBridgedCall(d);
    answering(d, refusal(500, 'internal', 'down'), { leave: refusal(500, 'internal', 'down') });
    d.coordinator.windowGone(LOCAL, RELOADED);
    await until(() => d.relay.seen(/bridge\/rejoin/).length >= 3, 'the relay is asked again');
    d.clock.advance(REJOIN_WINDOW_MS);
    await d.coordinator.whenIdle();
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'agent_not_back' } });
    const asked = d.relay.seen(/bridge\/rejoin/).length;
    expect(d.gateway.actions()).toEqual(['terminate']);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(d.relay.seen(/bridge\/rejoin/)).toHaveLength(asked);
  });

  it('a call hung up while the relay is asked again stops being asked', async () => {
    const d = await desk();
    await onBridgedCall(d);
    answering(d, refusal(500, 'internal', 'down'));
    d.coordinator.windowGone(LOCAL, RELOADED);
    await until(() => d.relay.seen(/bridge\/rejoin/).length >= 2, 'the relay is asked again');
    d.relay.onRequest = () => undefined;
    d.relay.leaveLast = true;
    expect(await d.coordinator.hangUp(LOCAL)).toEqual({ ok: true, value: null });
    await d.coordinator.whenIdle();
    const asked = d.relay.seen(/bridge\/rejoin/).length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(d.relay.seen(/bridge\/rejoin/)).toHaveLength(asked);
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'ended', end: { kind: 'completed', by: 'agent' } });
    expect(d.gateway.actions()).toEqual(['terminate']);
  });
});

describe('the relay’s word on a window’s answer', () => {
  it('400 on the answer’s SDP: the command fails with it and a fresh leg is asked for, for the next window', async () => {
    const d = await desk();
    await onBridgedCall(d);
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    d.relay.onRequest = (req) => (req.path === REJOIN_ANSWER_PATH ? refusal(400, 'invalid_input', 'the node could not apply the answer') : undefined);
    const refused = await d.coordinator.rejoinCall(LOCAL, 'leg-rejoin-1', REJOIN_ANSWER_SDP);
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_input', httpStatus: 400 } });
    await d.coordinator.whenIdle();
    expect(d.relay.seen()).toEqual([`POST ${REJOIN_PATH}`, `POST ${REJOIN_ANSWER_PATH}`, `POST ${REJOIN_PATH}`]);
    expect(d.coordinator.call(LOCAL)).toMatchObject({ rejoin: { legId: 'leg-rejoin-2', offerSdp: REJOIN_OFFER_SDP } });
  });

  it('403 (not the leg offered last): the command fails, the call keeps waiting for the relay’s word', async () => {
    const d = await desk();
    await onBridgedCall(d);
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    d.relay.rejoinOffered.set(CALL, 'leg-rejoin-other');
    const refused = await d.coordinator.rejoinCall(LOCAL, 'leg-rejoin-1', REJOIN_ANSWER_SDP);
    expect(refused).toMatchObject({ ok: false, error: { code: 'unauthorized', httpStatus: 403 } });
    const call = d.coordinator.call(LOCAL);
    expect(call).toMatchObject({ phase: 'active', rejoin: { legId: 'leg-rejoin-1' } });
    expect(call).not.toHaveProperty('open');
    expect(call).not.toHaveProperty('rejoin.answered');
  });

  it('the verdicts and outcomes, as the relay’s answers say them', () => {
    const said = text('calls.failed');
    const at = (status: number | undefined, code: ErrorCode = 'gateway_unreachable') => ({
      code,
      message: english(said),
      ...(status !== undefined ? { httpStatus: status } : {}),
    });
    expect([403, 410, 404, 503, 500, undefined].map((s) => rejoinVerdictOf(at(s)))).toEqual(['not_member', 'ended', 'gone', 'gone', 'gone', 'gone']);
    expect(rejoinAnswerOutcomeOf(undefined)).toEqual({ kind: 'answered' });
    expect(rejoinAnswerOutcomeOf(at(400, 'invalid_input')).kind).toBe('sdp_refused');
    expect(rejoinAnswerOutcomeOf(at(undefined)).kind).toBe('sdp_refused');
    expect(rejoinAnswerOutcomeOf(at(undefined, 'timeout')).kind).toBe('sdp_refused');
    expect(rejoinAnswerOutcomeOf(at(502)).kind).toBe('sdp_refused');
    expect(rejoinAnswerOutcomeOf(at(403, 'unauthorized')).kind).toBe('refused');
    expect(rejoinAnswerOutcomeOf(at(409, 'invalid_state')).kind).toBe('refused');
  });
});

describe('a call a crash left live', () => {
  const T0 = 1_759_999_000_000;
  /** The held, bridged call as the window saw it when the app stopped. */
  const restore: RestorableCall = {
    localId: LOCAL,
    callId: CALL,
    peer: { number: CUSTOMER, name: 'Ada Lovelace' },
    createdAt: T0,
    bridged: true,
    direction: 'incoming',
    offerSdp: LEG_OFFER_SDP,
    phase: 'active',
    answeredAt: T0 + 1_000,
    connectedAt: T0 + 2_000,
    heldSince: T0 + 30_000,
    heldMs: 4_000,
  };

  it('keeps, in live-calls.json (version 1), the call to restore beside the terminate an older app would send', async () => {
    const d = await desk();
    await onBridgedCall(d);
    await d.coordinator.whenIdle();
    const saved = (await d.liveFile()) as { version: number; calls: Array<{ callId: string; action: string; restore?: CallState }> };
    expect(saved.version).toBe(1);
    expect(saved.calls).toEqual([{ callId: CALL, action: 'terminate', gatewayUrl: d.gateway.baseUrl, restore: d.coordinator.calls().find((c) => c.localId === LOCAL) }]);
    // It holds the customer's number and name and the call's SDP: readable by its owner only.
    expect((await stat(join(d.dataDir, 'live-calls.json'))).mode & 0o777).toBe(0o600);
    // An app before `restore` reads the same file as it always did, and terminates the call.
    const olderReader = z.object({ version: z.literal(1), calls: z.array(z.object({ callId: z.string().min(1), action: z.enum(['terminate', 'reject']), gatewayUrl: z.string() })) });
    expect(olderReader.parse(saved).calls).toEqual([{ callId: CALL, action: 'terminate', gatewayUrl: d.gateway.baseUrl }]);
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    // What is rejoining is not saved: the next run rejoins from its own moment.
    const rejoining = (await d.liveFile()) as { calls: Array<{ restore?: CallState }> };
    expect(rejoining.calls[0]?.restore).not.toHaveProperty('rejoin');
  });

  it('is taken up again as it was, held, and rejoins: shown, its leg made again, no hold request, no gateway request', async () => {
    const d = await desk({ leftLive });
    await d.coordinator.whenIdle();
    expect(d.relay.seen()).toEqual([`POST ${REJOIN_PATH}`]);
    const shown = d.coordinator.calls().find((c) => c.localId === LOCAL);
    expect(shown).toEqual({ ...restore, rejoin: { since: d.clock.t, legId: 'leg-rejoin-1', offerSdp: REJOIN_OFFER_SDP } });
    expect(d.bridge.isBridgedCall(CALL)).toBe(true);

    expect(await d.coordinator.rejoinCall(LOCAL, 'leg-rejoin-1', REJOIN_ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(await d.coordinator.reportMedia({ localId: LOCAL, state: 'connected' })).toEqual({ ok: true, value: null });
    expect(d.coordinator.call(LOCAL)).toEqual({ ...restore });
    await d.coordinator.whenIdle();
    expect(d.relay.seen()).toEqual([`POST ${REJOIN_PATH}`, `POST ${REJOIN_ANSWER_PATH}`]);
    expect(d.gateway.requests).toEqual([]);

    // Resumed, the bridge hears it: the leg is the call's again.
    expect(await d.coordinator.resumeCall(LOCAL)).toEqual({ ok: true, value: null });
    await until(() => d.relay.seen(/hold/).length === 1, 'the bridge hears the resume');
    expect(d.relay.requests.at(-1)).toEqual({ method: 'POST', path: `/calls/${CALL}/bridge/hold`, body: { held: false } });
  });

  it('muted, it is saved muted, and the next run takes it up muted: the call offered to the next window says it is muted', async () => {
    const d = await desk();
    await onBridgedCall(d);
    expect(await d.coordinator.setMuted(LOCAL, true)).toEqual({ ok: true, value: null });
    expect(d.pushes.at(-1)).toMatchObject({ localId: LOCAL, phase: 'active', muted: true });
    // The window went: the offer of the new leg is pushed with the mute, for the next window to follow.
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    expect(d.pushes.at(-1)).toMatchObject({ rejoin: { legId: 'leg-rejoin-1' }, muted: true });
    expect(d.gateway.requests).toEqual([]);
    const saved = (await d.liveFile()) as { version: 1; calls: Array<{ callId: string; action: string; restore?: CallState }> };
    expect(saved.calls[0]?.restore).toMatchObject({ localId: LOCAL, muted: true });
    // What the next run reads of it (the file's schema keeps the fields of a connected call only).
    const { ringsUntil: _rang, ...kept } = saved.calls[0]?.restore as CallState & { ringsUntil?: number };

    // The app crashed here; the next run reads the file as this one left it (on its own gateway's url).
    const after = await desk({ leftLive: (gatewayUrl) => ({ version: 1, calls: saved.calls.map((c) => ({ ...c, gatewayUrl })) }) });
    await after.coordinator.whenIdle();
    const shown = after.coordinator.calls().find((c) => c.localId === LOCAL);
    expect(shown).toEqual({ ...kept, rejoin: { since: after.clock.t, legId: 'leg-rejoin-1', offerSdp: REJOIN_OFFER_SDP } });
    expect(after.pushes.at(-1)).toMatchObject({ localId: LOCAL, muted: true });
    expect(await after.coordinator.rejoinCall(LOCAL, 'leg-rejoin-1', REJOIN_ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(await after.coordinator.reportMedia({ localId: LOCAL, state: 'connected' })).toEqual({ ok: true, value: null });
    expect(after.coordinator.call(LOCAL)).toEqual(kept);
    // Unmuted once back: saved so, for a crash after this.
    expect(await after.coordinator.setMuted(LOCAL, false)).toEqual({ ok: true, value: null });
    expect(after.pushes.at(-1)).not.toHaveProperty('muted');
    await after.coordinator.whenIdle();
    const unmuted = (await after.liveFile()) as { calls: Array<{ restore?: CallState }> };
    expect(unmuted.calls[0]?.restore).not.toHaveProperty('muted');
    expect(after.gateway.requests).toEqual([]);
  });

  const leftLive = (gatewayUrl: string) => ({ version: 1, calls: [{ callId: CALL, action: 'terminate', gatewayUrl, restore }] });

  it('one the relay no longer knows (404) is let go: the gateway hears terminate', async () => {
    const gone = refusal(404, 'not_found', 'no such call');
    const d = await desk({ leftLive, relayAnswers: (req) => (req.path === REJOIN_PATH || req.path.endsWith('/bridge/leave') ? gone : undefined) });
    await d.coordinator.whenIdle();
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'not_available' } });
    expect(d.gateway.actions()).toEqual(['terminate']);
  });

  it('one that went on without this agent (403) ends here, shown, nothing owed', async () => {
    const d = await desk({ leftLive, relayAnswers: (req) => (req.path === REJOIN_PATH ? refusal(403, 'forbidden', 'not a member') : undefined) });
    await d.coordinator.whenIdle();
    expect(d.coordinator.calls().find((c) => c.localId === LOCAL)).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'rejoin_not_member' } });
    expect(d.gateway.requests).toEqual([]);
    expect(await d.liveFile()).toEqual({ version: 1, calls: [] });
  });

  it('one this agent was consulted into keeps being a colleague’s: a hang-up the relay cannot answer ends nothing at the gateway', async () => {
    const { heldSince: _held, ...inHand } = restore;
    const consulted: RestorableCall = { ...inHand, localId: 'tr:xfer-1', transfer: { id: 'xfer-1', kind: 'consult', role: 'to', colleague: { agentId: 'bob', name: 'Bob Agent' }, state: 'consulting' } };
    const d = await desk({ leftLive: (gatewayUrl) => ({ version: 1, calls: [{ callId: CALL, action: 'terminate', gatewayUrl, restore: consulted }] }) });
    await d.coordinator.whenIdle();
    expect(d.coordinator.call('tr:xfer-1')).toMatchObject({ phase: 'active', transfer: { state: 'consulting' }, rejoin: { legId: 'leg-rejoin-1' } });
    answering(d, refusal(500, 'internal', 'down'), { leave: refusal(500, 'internal', 'down') });
    expect(await d.coordinator.hangUp('tr:xfer-1')).toEqual({ ok: true, value: null });
    await d.coordinator.whenIdle();
    expect(d.relay.seen(/leave/)).toEqual([`POST /calls/${CALL}/bridge/leave`, `POST /calls/${CALL}/bridge/leave`]);
    expect(d.gateway.requests).toEqual([]);
  });

  it('hung up before the relay offered its new leg, it is left on the relay first, as any bridged call: colleagues may be in it', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const d = await desk({
      leftLive,
      relayAnswers: (req) => (req.path === REJOIN_PATH ? held.then(() => refusal(500, 'internal', 'late')) : undefined),
    });
    await until(() => d.relay.seen(/bridge\/rejoin/).length === 1, 'the relay is asked for a leg');
    expect(await d.coordinator.hangUp(LOCAL)).toEqual({ ok: true, value: null });
    release();
    await d.coordinator.whenIdle();
    expect(d.relay.seen()).toEqual([`POST ${REJOIN_PATH}`, `POST /calls/${CALL}/bridge/leave`]);
    expect(d.gateway.requests).toEqual([]);
    expect(d.bridge.isBridgedCall(CALL)).toBe(false);
  });

  it('a record whose restore is not a call to take up again is ended as before (an older app reads none of it)', async () => {
    const d = await desk({ leftLive: (gatewayUrl) => ({ version: 1, calls: [{ callId: CALL, action: 'terminate', gatewayUrl, restore: { ...restore, bridged: undefined } }] }) });
    d.relay.leaveLast = true;
    await d.coordinator.whenIdle();
    expect(d.relay.seen(/bridge\/rejoin/)).toEqual([]);
    expect(d.coordinator.calls()).toEqual([]);
    await until(() => d.gateway.actions().includes('terminate'), 'the leftover is terminated');
  });
});

describe('the relay let this agent go for not being back (call.bridge_failed agent_not_back)', () => {
  it('with colleagues going on (goesOn): over here, in the relay’s own window’s words, and nothing owed', async () => {
    const d = await desk();
    await onBridgedCall(d);
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    await d.event({ type: 'call.bridge_failed', callId: CALL, reason: 'agent_not_back', goesOn: true, awaySec: 3, timestamp: d.clock.t });
    await d.coordinator.whenIdle();
    const said = text('calls.agentNotBack', { seconds: 3 });
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'agent_not_back', message: english(said), text: said } });
    expect(d.relay.seen()).toEqual([`POST ${REJOIN_PATH}`]);
    expect(d.gateway.requests).toEqual([]);
  });

  it('alone with the customer: let go, and the gateway hears terminate (the relay no longer bridging it)', async () => {
    const d = await desk();
    await onBridgedCall(d);
    d.coordinator.windowGone(LOCAL, RELOADED);
    await d.coordinator.whenIdle();
    answering(d, refusal(404, 'not_found', 'no such call'), { leave: refusal(404, 'not_found', 'no such call') });
    await d.event({ type: 'call.bridge_failed', callId: CALL, reason: 'agent_not_back', awaySec: 60, timestamp: d.clock.t });
    await d.coordinator.whenIdle();
    expect(d.coordinator.call(LOCAL)).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'agent_not_back', text: text('calls.agentNotBack', { seconds: 60 }) } });
    expect(d.gateway.actions()).toEqual(['terminate']);
  });
});
