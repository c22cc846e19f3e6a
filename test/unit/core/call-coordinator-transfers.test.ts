// The coordinator and the agent's transfer commands with the team's bridge (shared/transfer.ts):
// a colleague's transfer or consult rings, is answered through the relay and declined there; this
// agent's own is started, moved by the relay's word, completed, joined, cancelled; the service
// answers the commands. Real parts: RelayClient, GatewayClient, BridgedCallControl, CallCoordinator,
// TransferCommands, the history store and the live-calls file, against a relay peer speaking the
// agent's contract (bridge-relay.ts) and the fake gateway.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BridgedCallControl } from '../../../electron/core/bridged-calls';
import { CallCoordinator } from '../../../electron/core/call-coordinator';
import { GatewayClient } from '../../../electron/core/gateway-client';
import { HistoryStore } from '../../../electron/core/history-store';
import { RelayClient } from '../../../electron/core/relay-client';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { createSoftphoneService } from '../../../electron/core/softphone-service';
import { TransferCommands } from '../../../electron/core/transfer-commands';
import { TRANSFER_REFUSALS } from '../../../shared/call-state';
import type { RelayEnvelope, RelayEvent } from '../../../shared/events';
import { english, type RuleText } from '../../../shared/i18n/text';
import { configureLogging } from '../../../shared/log';
import type { AccountConfig } from '../../../shared/settings';
import { TRANSFER_RING_MS, type TransferUpdateState } from '../../../shared/transfer';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { FakeClock } from '../../support/fake-clock';
import { AGENT_ID, LEG_OFFER_SDP, startBridgeRelay, type BridgeRelay } from './bridge-relay';
import { happyGateway, startFakeGateway, type FakeGateway } from './fake-gateway';
import { ALICE, startTeamRelay } from './team-relay';

/** What the main process logged, each record with its fields. */
const logged: Array<Record<string, unknown>> = [];
configureLogging({ sink: (line) => void logged.push(JSON.parse(line) as Record<string, unknown>) });

const CUSTOMER = '442079460958';
const CALL = 'wacid.consult-1';
const BOB = { agentId: 'bob', name: 'Bob Agent' };
const CAROL = { agentId: 'carol', name: 'Carol Agent' };

interface Desk {
  clock: FakeClock;
  relay: BridgeRelay;
  gateway: FakeGateway;
  coordinator: CallCoordinator;
  commands: TransferCommands;
  history: HistoryStore;
  dataDir: string;
  /** A relay event through the bridge to the coordinator, as the runtime hands it on; resolves once applied. */
  event(e: RelayEvent): Promise<void>;
  /** The relay's word on a transfer, told to this agent. */
  update(transferId: string, state: TransferUpdateState, colleague?: { agentId: string; name: string }): Promise<void>;
  liveFile(): Promise<unknown>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  logged.length = 0;
});

async function desk(options: { bridge?: boolean } = {}): Promise<Desk> {
  const clock = new FakeClock(1_760_000_000_000);
  const relay = await startBridgeRelay();
  const gateway = await startFakeGateway(happyGateway);
  const dataDir = await mkdtemp(join(tmpdir(), 'softphone-transfers-'));
  const client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: 'test-api-key-123', product: 'chatapp', terminateBackoffMs: 5, timeoutMs: 2_000 });
  const relayClient = new RelayClient({ url: relay.url, token: relay.token });
  const history = await HistoryStore.open({ dataDir, now: clock.now });
  const bridge = new BridgedCallControl(client, relayClient, { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined });
  const withBridge = options.bridge !== false;
  const coordinator = new CallCoordinator({
    gateway: withBridge ? bridge : client,
    claims: relayClient,
    ...(withBridge ? { transfers: bridge } : {}),
    gatewayUrl: gateway.baseUrl,
    dataDir,
    history,
    now: clock.now,
    timers: clock,
  });
  coordinator.onCallChanged((call) => bridge.callChanged(call));
  await coordinator.start();
  const commands = new TransferCommands(coordinator, withBridge ? bridge : undefined);
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
      if (!withBridge) {
        coordinator.applyRelayEvent(envelope);
        resolve();
        return;
      }
      bridge.deliver(envelope, (passed) => {
        coordinator.applyRelayEvent(passed);
        resolve();
      });
    });
  return {
    clock,
    relay,
    gateway,
    coordinator,
    commands,
    history,
    dataDir,
    event,
    update: (transferId, state, colleague) =>
      event({ type: 'call.transfer_update', callId: CALL, transferId, kind: 'consult', agentId: AGENT_ID, state, ...(colleague !== undefined ? { colleague } : {}), timestamp: clock.t }),
    liveFile: async () => JSON.parse(await readFile(join(dataDir, 'live-calls.json'), 'utf8')) as unknown,
  };
}

const ring = (d: Desk, transferId: string, kind: 'transfer' | 'consult' = 'consult'): Promise<void> =>
  d.event({ type: 'call.transfer_ring', callId: CALL, transferId, kind, by: BOB, from: CUSTOMER, name: 'Ada Lovelace', legId: `leg-${transferId}`, sdp: LEG_OFFER_SDP, timestamp: d.clock.t });

/** A bridged call the customer made, answered here and connected: this agent's call. */
async function onBridgedCall(d: Desk): Promise<string> {
  await d.event({ type: 'call.incoming', callId: CALL, from: CUSTOMER, name: 'Ada Lovelace', sdp: OFFER_SDP, timestamp: d.clock.t, bridged: true });
  const localId = `in:${CALL}`;
  expect(await d.coordinator.answerCall(localId, ANSWER_SDP)).toEqual({ ok: true, value: null });
  expect(await d.coordinator.reportMedia({ localId, state: 'connected' })).toEqual({ ok: true, value: null });
  expect(d.coordinator.call(localId)).toMatchObject({ phase: 'active', bridged: true });
  d.relay.requests.length = 0;
  return localId;
}

/** A transfer command's refusal: an invalid_state, its English beside its text. */
const refused = (said: RuleText) => ({ ok: false, error: { code: 'invalid_state', message: english(said), text: said } });

describe('a colleague’s transfer or consult, rung here', () => {
  it('is answered through the relay, without a claim and without the gateway, and ends consult_ended when the colleague takes it back', async () => {
    const d = await desk();
    await ring(d, 'xfer-9');
    const localId = 'tr:xfer-9';
    expect(d.coordinator.call(localId)).toMatchObject({ phase: 'ringing', bridged: true, callId: CALL, transfer: { role: 'to', colleague: BOB, state: 'ringing' } });
    // Nothing is owed to the gateway for it, ringing or not.
    await d.coordinator.whenIdle();
    expect(await d.liveFile()).toEqual({ version: 1, calls: [] });

    expect(await d.coordinator.answerCall(localId, ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(d.relay.requests).toEqual([{ method: 'POST', path: `/calls/${CALL}/bridge/transfer/xfer-9/answer`, body: { legId: 'leg-xfer-9', sdp: ANSWER_SDP } }]);
    expect(d.coordinator.call(localId)).toMatchObject({ phase: 'connecting', transfer: { state: 'consulting' } });
    await d.coordinator.reportMedia({ localId, state: 'connected' });
    d.clock.advance(12_000);

    await d.update('xfer-9', 'cancelled');
    expect(d.coordinator.call(localId)).toMatchObject({ phase: 'ended', end: { kind: 'consult_ended' }, durationSec: 12 });
    await d.coordinator.whenIdle();
    expect(d.gateway.requests).toEqual([]);
    expect(d.relay.requests).toHaveLength(1);
    expect(d.history.entries()[0]).toMatchObject({ localId, callId: CALL, outcome: 'consult_ended', durationSec: 12, number: CUSTOMER });
    expect(await d.liveFile()).toEqual({ version: 1, calls: [] });
  });

  it('a colleague answered first: the Answer says answered_elsewhere, nothing goes to the gateway', async () => {
    const d = await desk();
    await ring(d, 'xfer-9');
    d.relay.onRequest = () => ({ status: 409, body: { error: { code: 'already_claimed', message: 'Answered by another agent' } } });
    const answered = await d.coordinator.answerCall('tr:xfer-9', ANSWER_SDP);
    expect(answered).toMatchObject({ ok: false, error: { code: 'answered_elsewhere' } });
    expect(d.coordinator.call('tr:xfer-9')).toMatchObject({ phase: 'ended', end: { kind: 'answered_elsewhere' } });
    await d.coordinator.whenIdle();
    expect(d.gateway.requests).toEqual([]);
    expect(await d.liveFile()).toEqual({ version: 1, calls: [] });
  });

  it('declined, or rung out: the relay hears the decline, the gateway nothing; a decline the relay refuses is only logged', async () => {
    const d = await desk();
    await ring(d, 'xfer-1');
    expect(await d.coordinator.declineCall('tr:xfer-1')).toEqual({ ok: true, value: null });
    await d.coordinator.whenIdle();
    expect(d.relay.seen()).toEqual([`POST /calls/${CALL}/bridge/transfer/xfer-1/decline`]);

    await ring(d, 'xfer-2');
    d.clock.advance(TRANSFER_RING_MS + 5_000 - 1);
    expect(d.coordinator.call('tr:xfer-2')?.phase).toBe('ringing');
    d.clock.advance(1);
    expect(d.coordinator.call('tr:xfer-2')).toMatchObject({ phase: 'ended', end: { kind: 'missed' } });
    await d.coordinator.whenIdle();
    expect(d.relay.seen().at(-1)).toBe(`POST /calls/${CALL}/bridge/transfer/xfer-2/decline`);

    d.relay.onRequest = () => ({ status: 500, body: { error: { code: 'internal', message: 'boom' } } });
    await ring(d, 'xfer-3');
    expect(await d.coordinator.declineCall('tr:xfer-3')).toEqual({ ok: true, value: null });
    await d.coordinator.whenIdle();
    expect(d.relay.seen()).toHaveLength(3);
    expect(d.gateway.requests).toEqual([]);
    expect(logged.some((r) => r.msg === 'the relay was not told a transfer is not taken here' && r.transferId === 'xfer-3')).toBe(true);
    expect(d.history.entries().map((e) => e.outcome)).toEqual(['declined', 'missed', 'declined']);
  });
});

describe('this agent’s own transfer or consult', () => {
  it('checks the call, asks the relay, follows the relay’s word, and once completed ends transferred with no terminate', async () => {
    const d = await desk();
    const localId = await onBridgedCall(d);
    expect(await d.commands.transferCall(localId, 'carol', 'consult')).toEqual({ ok: true, value: { transferId: 'xfer-1' } });
    expect(d.relay.requests).toEqual([{ method: 'POST', path: `/calls/${CALL}/bridge/transfer`, body: { to: 'carol', kind: 'consult' } }]);

    await d.update('xfer-1', 'ringing', CAROL);
    expect(d.coordinator.call(localId)?.transfer).toEqual({ id: 'xfer-1', kind: 'consult', role: 'from', colleague: CAROL, state: 'ringing', ringsUntil: d.clock.t + TRANSFER_RING_MS + 10_000 });
    expect(await d.commands.transferCall(localId, 'bob', 'transfer')).toEqual(refused(TRANSFER_REFUSALS.underWay));
    expect(await d.commands.completeTransfer(localId)).toEqual(refused(TRANSFER_REFUSALS.complete));
    expect(await d.commands.addToCall(localId)).toEqual(refused(TRANSFER_REFUSALS.join));
    const held = await d.coordinator.holdCall(localId);
    expect(held).toEqual(refused(TRANSFER_REFUSALS.hold));
    // Said from the catalogue, so that the window says it in the agent's language.
    expect(held).toMatchObject({ error: { message: 'The call cannot be held during a transfer, consult or three-way call', text: { code: 'calls.noHoldDuringTransfer' } } });

    await d.update('xfer-1', 'consulting', CAROL);
    expect(await d.commands.completeTransfer(localId)).toEqual({ ok: true, value: null });
    expect(d.relay.seen().at(-1)).toBe(`POST /calls/${CALL}/bridge/transfer/xfer-1/complete`);
    d.clock.advance(30_000);
    await d.update('xfer-1', 'transferred', CAROL);
    expect(d.coordinator.call(localId)).toMatchObject({ phase: 'ended', end: { kind: 'transferred', to: 'Carol Agent' }, durationSec: 30 });
    await d.coordinator.whenIdle();
    // The gateway accepted the call once and hears nothing more: the customer is with Carol.
    expect(d.gateway.actions()).toEqual(['accept']);
    expect(d.relay.seen(/leave$/)).toEqual([]);
    expect(await d.liveFile()).toEqual({ version: 1, calls: [] });
    expect(d.history.entries()[0]).toMatchObject({ localId, outcome: 'transferred', transferredTo: 'Carol Agent', durationSec: 30 });
  });

  it('adds the colleague to the call, cancels only what can be cancelled, and a hang-up leaves the call to the colleague', async () => {
    const d = await desk();
    const localId = await onBridgedCall(d);
    const first = (await d.commands.transferCall(localId, 'bob', 'consult')) as { ok: true; value: { transferId: string } };
    const { transferId } = first.value;
    await d.update(transferId, 'ringing', BOB);
    expect(await d.commands.cancelTransfer(localId)).toEqual({ ok: true, value: null });
    await d.update(transferId, 'cancelled');
    expect(d.coordinator.call(localId)?.transfer).toEqual({ id: transferId, kind: 'consult', role: 'from', colleague: BOB, state: 'done' });
    const noneRefused = await d.commands.cancelTransfer(localId);
    expect(noneRefused).toEqual(refused(TRANSFER_REFUSALS.none));
    expect(noneRefused).toMatchObject({ error: { text: { code: 'calls.noTransfer' } } });

    const again = (await d.commands.transferCall(localId, 'bob', 'consult')) as { ok: true; value: { transferId: string } };
    await d.update(again.value.transferId, 'ringing', BOB);
    await d.update(again.value.transferId, 'consulting', BOB);
    expect(await d.commands.addToCall(localId)).toEqual({ ok: true, value: null });
    await d.update(again.value.transferId, 'joined', BOB);
    const cancelRefused = await d.commands.cancelTransfer(localId);
    expect(cancelRefused).toEqual(refused(TRANSFER_REFUSALS.cancel));
    expect(cancelRefused).toMatchObject({ error: { text: { code: 'calls.transferNotCancellable' } } });
    expect(d.relay.seen()).toEqual([
      `POST /calls/${CALL}/bridge/transfer`,
      `POST /calls/${CALL}/bridge/transfer/${transferId}/cancel`,
      `POST /calls/${CALL}/bridge/transfer`,
      `POST /calls/${CALL}/bridge/transfer/${again.value.transferId}/join`,
    ]);

    // The three talk; this agent hangs up: it leaves, Bob stays with the customer, the gateway hears nothing.
    expect(await d.coordinator.hangUp(localId)).toEqual({ ok: true, value: null });
    await d.coordinator.whenIdle();
    expect(d.relay.seen().at(-1)).toBe(`POST /calls/${CALL}/bridge/leave`);
    expect(d.gateway.actions()).toEqual(['accept']);
    expect(await d.liveFile()).toEqual({ version: 1, calls: [] });
  });

  it('a ring the relay never says the end of is not answered after the relay’s ring and 10 s; a cancel the relay answers 404 ends the transfer here', async () => {
    const d = await desk();
    const localId = await onBridgedCall(d);
    await d.commands.transferCall(localId, 'carol', 'consult');
    await d.update('xfer-1', 'ringing', CAROL);
    d.clock.advance(TRANSFER_RING_MS + 10_000 - 1);
    expect(d.coordinator.call(localId)?.transfer?.state).toBe('ringing');
    d.clock.advance(1);
    expect(d.coordinator.call(localId)).toMatchObject({ phase: 'active', transfer: { id: 'xfer-1', state: 'not_answered' } });
    // The relay's own word, late: nothing more.
    await d.update('xfer-1', 'not_answered', CAROL);
    expect(d.coordinator.call(localId)?.transfer?.state).toBe('not_answered');

    // The relay restarted while the next one rang: it knows nothing of it.
    await d.commands.transferCall(localId, 'carol', 'consult');
    await d.update('xfer-2', 'ringing', CAROL);
    d.relay.onRequest = (req) => (req.path.endsWith('/cancel') ? { status: 404, body: { error: { code: 'not_found', message: 'no transfer xfer-2 in call' } } } : undefined);
    expect(await d.commands.cancelTransfer(localId)).toEqual({ ok: true, value: null });
    expect(d.relay.seen().at(-1)).toBe(`POST /calls/${CALL}/bridge/transfer/xfer-2/cancel`);
    expect(d.coordinator.call(localId)).toMatchObject({ phase: 'active', transfer: { id: 'xfer-2', state: 'done' } });
    // Its deadline went with it: nothing moves the call later.
    const after = d.coordinator.call(localId);
    d.clock.advance(TRANSFER_RING_MS + 10_000);
    expect(d.coordinator.call(localId)).toBe(after);
    // Any other refusal of a cancel is the command's answer, and the transfer stays as it is.
    await d.commands.transferCall(localId, 'carol', 'consult');
    await d.update('xfer-3', 'ringing', CAROL);
    d.relay.onRequest = (req) => (req.path.endsWith('/cancel') ? { status: 409, body: { error: { code: 'invalid_state', message: 'the transfer was answered' } } } : undefined);
    expect(await d.commands.cancelTransfer(localId)).toMatchObject({ ok: false, error: { code: 'invalid_state', httpStatus: 409 } });
    expect(d.coordinator.call(localId)?.transfer).toMatchObject({ id: 'xfer-3', state: 'ringing' });
  });

  it('refuses clearly: no such call, a call still ringing, a direct call', async () => {
    const d = await desk();
    expect(await d.commands.transferCall('in:nobody', 'bob', 'transfer')).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await d.commands.addToCall('in:nobody')).toMatchObject({ ok: false, error: { code: 'not_found' } });
    await d.event({ type: 'call.incoming', callId: 'wacid.direct-1', from: CUSTOMER, sdp: OFFER_SDP, timestamp: d.clock.t });
    const direct = await d.commands.transferCall('in:wacid.direct-1', 'bob', 'transfer');
    expect(direct).toEqual(refused(TRANSFER_REFUSALS.callNotBridged));
    expect(direct).toMatchObject({ error: { text: { code: 'calls.callNotBridged' } } });
    await d.event({ type: 'call.incoming', callId: 'wacid.bridged-1', from: CUSTOMER, sdp: OFFER_SDP, timestamp: d.clock.t, bridged: true });
    expect(await d.commands.transferCall('in:wacid.bridged-1', 'bob', 'transfer')).toEqual({
      ok: false,
      error: { code: 'invalid_state', message: 'The call is ringing: only an active call can be transferred', text: { code: 'calls.onlyActiveTransferred', values: { phase: { term: 'phaseRinging' } } } },
    });
    expect(d.relay.seen(/transfer/)).toEqual([]);
  });

  it('lists the team as the relay does, this agent included', async () => {
    const d = await desk();
    expect(await d.commands.team()).toEqual({ ok: true, value: d.relay.team });
  });

  it('a dial the bridge placed is a bridged call, so it can be transferred once answered', async () => {
    const d = await desk();
    const placed = await d.coordinator.startCall('+1 202 555 0143', DIAL_OFFER_SDP, 'out:7f3a9c2e-0001', { anyway: true });
    expect(placed.ok).toBe(true);
    expect(d.coordinator.call('out:7f3a9c2e-0001')).toMatchObject({ phase: 'calling', bridged: true });
  });
});

describe('without the team’s bridge', () => {
  it('every transfer command says calls are not bridged; a transfer’s decline is only logged', async () => {
    const d = await desk({ bridge: false });
    const notBridged = { ok: false, error: { code: 'invalid_state', message: english(TRANSFER_REFUSALS.notBridged), text: { code: 'calls.transfersNotBridged' } } };
    expect(await d.commands.transferCall('in:any', 'bob', 'consult')).toEqual(notBridged);
    expect(await d.commands.cancelTransfer('in:any')).toEqual(notBridged);
    expect(await d.commands.completeTransfer('in:any')).toEqual(notBridged);
    expect(await d.commands.addToCall('in:any')).toEqual(notBridged);
    expect(await d.commands.team()).toEqual(notBridged);
    await ring(d, 'xfer-5');
    expect(await d.coordinator.declineCall('tr:xfer-5')).toEqual({ ok: true, value: null });
    await d.coordinator.whenIdle();
    expect(d.relay.requests).toEqual([]);
    expect(d.gateway.requests).toEqual([]);
    expect(logged.some((r) => r.msg === 'the relay was not told a transfer is not taken here')).toBe(true);
  });

  it('the service answers the commands through the running mode: a direct team lists no team and transfers nothing', async () => {
    const relay = await startTeamRelay([ALICE]);
    const gateway = await startFakeGateway(happyGateway);
    const dataDir = await mkdtemp(join(tmpdir(), 'softphone-transfers-service-'));
    const account: AccountConfig = { gatewayUrl: gateway.baseUrl, apiKey: 'account-api-key-0002', productSegment: 'chatapp', relayUrl: relay.url, agentToken: ALICE.token };
    const service = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), account });
    cleanups.push(async () => {
      await service.close();
      await gateway.close();
      await relay.close();
      await rm(dataDir, { recursive: true, force: true });
    });
    expect(await service.handle('getTeam', {})).toEqual(refused(TRANSFER_REFUSALS.notBridged));
    expect(await service.handle('transferCall', { localId: 'in:nobody', to: 'bob', kind: 'transfer' })).toMatchObject({ ok: false, error: { code: 'not_found' } });
    for (const command of ['cancelTransfer', 'completeTransfer', 'addToCall'] as const) {
      expect(await service.handle(command, { localId: 'in:nobody' })).toMatchObject({ ok: false, error: { code: 'not_found' } });
    }
  });
});
