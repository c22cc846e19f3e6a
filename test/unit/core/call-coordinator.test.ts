import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CallCoordinator } from '../../../electron/core/call-coordinator';
import { GatewayClient } from '../../../electron/core/gateway-client';
import { HistoryStore } from '../../../electron/core/history-store';
import { LocalClaims } from '../../../electron/core/local-claims';
import { DIAL_TIMEOUT_MS, RING_TIMEOUT_MS, type CallState } from '../../../shared/call-state';
import type { RelayEnvelope, RelayEvent } from '../../../shared/events';
import { configureLogging } from '../../../shared/log';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { FakeClock } from '../../support/fake-clock';
import { graphError, happyGateway, initiated, startFakeGateway, success, type FakeGateway, type GatewayHandler } from './fake-gateway';

configureLogging({ sink: () => undefined });

const CUSTOMER = '447400123456';

interface Harness {
  clock: FakeClock;
  gateway: FakeGateway;
  client: GatewayClient;
  history: HistoryStore;
  coordinator: CallCoordinator;
  dataDir: string;
  changes: CallState[];
  relay(event: RelayEvent): void;
  phases(localId: string): string[];
  liveFile(): Promise<unknown>;
  newCoordinator(gatewayUrl?: string): CallCoordinator;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harness(handler: GatewayHandler = happyGateway, options: { dataDir?: string; start?: boolean } = {}): Promise<Harness> {
  const clock = new FakeClock(1_760_000_000_000);
  const gateway = await startFakeGateway(handler);
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'softphone-coordinator-')));
  const client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: 'test-api-key-123', product: 'chatapp', terminateBackoffMs: 5, timeoutMs: 2_000 });
  const history = await HistoryStore.open({ dataDir, now: clock.now });
  const changes: CallState[] = [];
  let seq = 0;
  const newCoordinator = (gatewayUrl = gateway.baseUrl): CallCoordinator => {
    const coordinator = new CallCoordinator({ gateway: client, claims: new LocalClaims(), gatewayUrl, dataDir, history, now: clock.now, timers: clock, defaultCountry: 'GB' });
    coordinator.onCallChanged((call) => changes.push(call));
    cleanups.push(() => coordinator.shutdown());
    return coordinator;
  };
  // Cleanups run in reverse: coordinators shut down (and write their last files) before this runs.
  cleanups.push(async () => {
    await client.close();
    await gateway.close();
    await history.flush();
    await rm(dataDir, { recursive: true, force: true });
  });
  const coordinator = newCoordinator();
  if (options.start !== false) await coordinator.start();
  return {
    clock,
    gateway,
    client,
    history,
    coordinator,
    dataDir,
    changes,
    relay: (event) => coordinator.applyRelayEvent({ id: String(++seq), receivedAt: clock.t, event } satisfies RelayEnvelope),
    phases: (localId) => changes.filter((c) => c.localId === localId).map((c) => c.phase),
    liveFile: async () => JSON.parse(await readFile(join(dataDir, 'live-calls.json'), 'utf8')) as unknown,
    newCoordinator,
  };
}

const incoming = (h: Harness, callId: string): void =>
  h.relay({ type: 'call.incoming', callId, from: CUSTOMER, name: 'Ada Lovelace', sdp: OFFER_SDP, timestamp: h.clock.t });

describe('CallCoordinator: incoming calls', () => {
  it('rings, answers, accepts, connects, and sends terminate on hang-up', async () => {
    const h = await harness();
    incoming(h, 'wacid.in-1');
    const localId = 'in:wacid.in-1';
    expect(h.coordinator.call(localId)).toMatchObject({ phase: 'ringing', peer: { number: CUSTOMER, name: 'Ada Lovelace' }, offerSdp: OFFER_SDP });

    expect(await h.coordinator.answerCall(localId, ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(h.gateway.requests[0]!.body).toEqual({ messaging_product: 'chatapp', call_id: 'wacid.in-1', action: 'accept', session: { sdp_type: 'answer', sdp: ANSWER_SDP }, biz_opaque_callback_data: 'in:wacid.in-1' });

    expect(await h.coordinator.reportMedia({ localId, state: 'connected' })).toEqual({ ok: true, value: null });
    await h.coordinator.whenIdle();
    expect(await h.liveFile()).toEqual({ version: 1, calls: [{ callId: 'wacid.in-1', action: 'terminate', gatewayUrl: h.gateway.baseUrl }] });

    h.clock.advance(42_000);
    expect(await h.coordinator.hangUp(localId)).toEqual({ ok: true, value: null });
    await h.coordinator.whenIdle();
    expect(h.gateway.actions()).toEqual(['accept', 'terminate']);
    expect(h.gateway.requests[1]!.body).toEqual({ messaging_product: 'chatapp', call_id: 'wacid.in-1', action: 'terminate' });
    expect(h.phases(localId)).toEqual(['ringing', 'answering', 'connecting', 'active', 'ended']);
    expect(h.coordinator.call(localId)).toMatchObject({ phase: 'ended', end: { kind: 'completed', by: 'agent' }, durationSec: 42 });
    expect(h.history.entries()[0]).toMatchObject({ localId, callId: 'wacid.in-1', direction: 'incoming', outcome: 'completed', durationSec: 42, number: CUSTOMER });

    await h.coordinator.whenIdle();
    expect(await h.liveFile()).toEqual({ version: 1, calls: [] });
    // Hanging up again is harmless and sends nothing.
    expect((await h.coordinator.hangUp(localId)).ok).toBe(true);
    expect(h.gateway.requests).toHaveLength(2);
  });

  it('sends reject when the agent declines', async () => {
    const h = await harness();
    incoming(h, 'wacid.in-2');
    expect((await h.coordinator.declineCall('in:wacid.in-2')).ok).toBe(true);
    await h.coordinator.whenIdle();
    expect(h.gateway.requests.map((r) => r.body)).toEqual([{ messaging_product: 'chatapp', call_id: 'wacid.in-2', action: 'reject' }]);
    expect(h.history.entries()[0]).toMatchObject({ outcome: 'declined' });
    const again = await h.coordinator.declineCall('in:wacid.in-2');
    expect(again.ok).toBe(false);
    if (!again.ok) expect(again.error.code).toBe('invalid_state');
  });

  it('misses a call nobody answers in time and sends reject', async () => {
    const h = await harness();
    incoming(h, 'wacid.in-3');
    h.clock.advance(RING_TIMEOUT_MS - 1);
    expect(h.coordinator.call('in:wacid.in-3')?.phase).toBe('ringing');
    h.clock.advance(1);
    expect(h.coordinator.call('in:wacid.in-3')).toMatchObject({ phase: 'ended', end: { kind: 'missed' } });
    await h.coordinator.whenIdle();
    expect(h.gateway.actions()).toEqual(['reject']);
    expect(h.history.entries()[0]).toMatchObject({ localId: 'in:wacid.in-3', outcome: 'missed', durationSec: 0 });
  });

  it('ends a ringing call claimed by another agent without telling the gateway', async () => {
    const h = await harness();
    incoming(h, 'wacid.in-4');
    h.relay({ type: 'call.claimed', callId: 'wacid.in-4', agentId: 'agent-2', timestamp: h.clock.t });
    expect(h.coordinator.call('in:wacid.in-4')).toMatchObject({ phase: 'ended', end: { kind: 'answered_elsewhere' } });
    h.clock.advance(RING_TIMEOUT_MS * 2);
    await h.coordinator.whenIdle();
    expect(h.gateway.requests).toHaveLength(0);
  });

  it('fails the call and rejects it when the gateway refuses the answer', async () => {
    const h = await harness((req) =>
      req.path.endsWith('/accept') ? graphError(400, 100, 'Invalid parameter', { error_data: { details: 'bad fingerprint' } }) : success(),
    );
    incoming(h, 'wacid.in-5');
    const result = await h.coordinator.answerCall('in:wacid.in-5', ANSWER_SDP);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ code: 'gateway_error', gatewayCode: 100 });
    expect(h.coordinator.call('in:wacid.in-5')).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: '100' } });
    await h.coordinator.whenIdle();
    expect(h.gateway.actions()).toEqual(['accept', 'reject']);
  });

  it('says that another partner answers the number (138038): not a failed call, and nothing is sent to end it', async () => {
    const h = await harness((req) => (req.path.endsWith('/accept') ? graphError(400, 138038, 'Not the Call primary of this number') : success()));
    incoming(h, 'wacid.in-138038');
    const result = await h.coordinator.answerCall('in:wacid.in-138038', ANSWER_SDP);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ gatewayCode: 138038, message: expect.stringContaining('Another partner handles this number’s calls: only its Call primary can answer or place them') });
    expect(h.coordinator.call('in:wacid.in-138038')).toMatchObject({ phase: 'ended', end: { kind: 'other_partner' } });
    await h.coordinator.whenIdle();
    // The call rings on at the partner's: neither a reject nor a terminate goes.
    expect(h.gateway.actions()).toEqual(['accept']);
    expect(h.history.entries()[0]).toMatchObject({ outcome: 'other_partner' });
    expect(h.history.entries()[0]?.failureCode).toBeUndefined();
  });

  it('ends the call with the media failure and sends terminate', async () => {
    const h = await harness();
    incoming(h, 'wacid.in-6');
    await h.coordinator.answerCall('in:wacid.in-6', ANSWER_SDP);
    expect((await h.coordinator.reportMedia({ localId: 'in:wacid.in-6', state: 'failed', reason: 'ICE failed' })).ok).toBe(true);
    expect(h.coordinator.call('in:wacid.in-6')).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'media_failed', message: 'ICE failed' } });
    await h.coordinator.whenIdle();
    expect(h.gateway.actions()).toEqual(['accept', 'terminate']);
  });

  it('ends a call whose bridge node is gone as failed, with the reason in its history entry, and sends terminate; a ringing one is rejected', async () => {
    const h = await harness();
    incoming(h, 'wacid.in-b1');
    await h.coordinator.answerCall('in:wacid.in-b1', ANSWER_SDP);
    await h.coordinator.reportMedia({ localId: 'in:wacid.in-b1', state: 'connected' });
    h.clock.advance(12_000);
    h.relay({ type: 'call.bridge_failed', callId: 'wacid.in-b1', reason: 'node_gone', timestamp: h.clock.t });
    const gone = { code: 'calls.bridgeNodeGone' };
    expect(h.coordinator.call('in:wacid.in-b1')).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'media_failed', message: 'The team’s media server for this call stopped, and the call ended with it', text: gone } });
    await h.coordinator.whenIdle();
    expect(h.gateway.actions()).toEqual(['accept', 'terminate']);
    expect(h.history.entries()[0]).toMatchObject({ callId: 'wacid.in-b1', outcome: 'failed', failureCode: 'media_failed', failureText: gone, durationSec: 12 });

    incoming(h, 'wacid.in-b2');
    h.relay({ type: 'call.bridge_failed', callId: 'wacid.in-b2', reason: 'customer_leg_failed', timestamp: h.clock.t });
    expect(h.coordinator.call('in:wacid.in-b2')).toMatchObject({ phase: 'ended', end: { kind: 'failed', text: { code: 'calls.bridgeCustomerLegFailed' } } });
    await h.coordinator.whenIdle();
    expect(h.gateway.actions()).toEqual(['accept', 'terminate', 'reject']);
  });

  it('waits for an accept under way before terminating a call hung up meanwhile', async () => {
    let release: () => void = () => undefined;
    const acceptHeld = new Promise<void>((resolve) => (release = resolve));
    let acceptArrived: () => void = () => undefined;
    const acceptSeen = new Promise<void>((resolve) => (acceptArrived = resolve));
    const h = await harness(async (req) => {
      if (req.path.endsWith('/accept')) {
        acceptArrived();
        await acceptHeld;
      }
      return success();
    });
    incoming(h, 'wacid.in-7');
    const accepting = h.coordinator.answerCall('in:wacid.in-7', ANSWER_SDP);
    await acceptSeen;
    const hangingUp = h.coordinator.hangUp('in:wacid.in-7');
    expect(h.coordinator.call('in:wacid.in-7')?.phase).toBe('ended');
    release();
    await Promise.all([accepting, hangingUp]);
    await h.coordinator.whenIdle();
    expect(h.gateway.actions()).toEqual(['accept', 'terminate']);
    expect(await h.liveFile()).toEqual({ version: 1, calls: [] });
  });

  it('rejects a call hung up before its accept went out: the gateway still has it ringing', async () => {
    const h = await harness();
    incoming(h, 'wacid.in-8');
    const answering = h.coordinator.answerCall('in:wacid.in-8', ANSWER_SDP);
    // Before the claim has come back, so before any accept.
    expect((await h.coordinator.hangUp('in:wacid.in-8')).ok).toBe(true);
    const answered = await answering;
    expect(answered.ok).toBe(false);
    if (!answered.ok) expect(answered.error).toMatchObject({ code: 'invalid_state', message: 'The call ended while it was being answered' });
    await h.coordinator.whenIdle();
    expect(h.gateway.actions()).toEqual(['reject']);
    expect(h.coordinator.call('in:wacid.in-8')).toMatchObject({ phase: 'ended', end: { kind: 'completed', by: 'agent' } });
  });
});

describe('CallCoordinator: outgoing calls', () => {
  it('dials, initiates, rings, is answered and connects', async () => {
    const h = await harness(() => initiated('wacid.out-1'));
    const placing = h.coordinator.startCall('020 7946 0958', DIAL_OFFER_SDP, 'out:call-0001');
    // Dialing from the click, while the initiate is on its way.
    expect(h.coordinator.call('out:call-0001')?.phase).toBe('dialing');
    const started = await placing;
    expect(started).toEqual({ ok: true, value: { localId: 'out:call-0001', to: '442079460958', callId: 'wacid.out-1' } });
    if (!started.ok) return;
    const { localId } = started.value;
    expect(h.gateway.requests[0]!.body).toEqual({ messaging_product: 'chatapp', to: '442079460958', action: 'connect', session: { sdp_type: 'offer', sdp: DIAL_OFFER_SDP }, biz_opaque_callback_data: 'out:call-0001' });
    h.relay({ type: 'call.status', callId: 'wacid.out-1', status: 'RINGING', timestamp: h.clock.t });
    h.relay({ type: 'call.answered', callId: 'wacid.out-1', sdp: ANSWER_SDP, timestamp: h.clock.t });
    expect(h.coordinator.call(localId)).toMatchObject({ phase: 'connecting', answerSdp: ANSWER_SDP });
    expect((await h.coordinator.reportMedia({ localId, state: 'connected' })).ok).toBe(true);
    h.relay({ type: 'call.status', callId: 'wacid.out-1', status: 'ACCEPTED', timestamp: h.clock.t });
    expect(h.phases(localId)).toEqual(['dialing', 'calling', 'remote_ringing', 'connecting', 'active']);

    h.clock.advance(DIAL_TIMEOUT_MS * 2); // an answered call never times out as unanswered
    h.relay({ type: 'call.terminated', callId: 'wacid.out-1', status: 'COMPLETED', timestamp: h.clock.t, durationSec: 120 });
    expect(h.coordinator.call(localId)).toMatchObject({ phase: 'ended', end: { kind: 'completed', by: 'customer' }, durationSec: 120 });
    await h.coordinator.whenIdle();
    expect(h.gateway.actions()).toEqual(['initiate']);
    expect(h.history.entries()[0]).toMatchObject({ direction: 'outgoing', outcome: 'completed', number: '442079460958', durationSec: 120 });
  });

  it('gives up on an unanswered call at the dial timeout and sends terminate', async () => {
    const h = await harness((req) => (req.path.endsWith('/initiate') ? initiated('wacid.out-2') : success()));
    const started = await h.coordinator.startCall('+44 7400 123456', DIAL_OFFER_SDP);
    if (!started.ok) throw new Error(started.error.message);
    h.relay({ type: 'call.status', callId: 'wacid.out-2', status: 'RINGING', timestamp: h.clock.t });
    h.clock.advance(DIAL_TIMEOUT_MS);
    expect(h.coordinator.call(started.value.localId)).toMatchObject({ phase: 'ended', end: { kind: 'no_answer' } });
    await h.coordinator.whenIdle();
    expect(h.gateway.actions()).toEqual(['initiate', 'terminate']);
    expect(h.gateway.requests[1]!.body).toMatchObject({ call_id: 'wacid.out-2', action: 'terminate' });
  });

  it('ends as failed with code "138006" when the customer has not allowed calls', async () => {
    const h = await harness(() => graphError(400, 138006, 'No approved call permission from the recipient'));
    const sent = await h.coordinator.startCall('+447400123456', DIAL_OFFER_SDP, 'out:call-138006');
    expect(sent.ok).toBe(false);
    if (!sent.ok) expect(sent.error).toMatchObject({ code: 'no_call_permission', gatewayCode: 138006 });
    expect(h.coordinator.call('out:call-138006')).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: '138006' } });
    expect(h.history.entries()[0]).toMatchObject({ outcome: 'failed', failureCode: '138006' });
    // Never auto-redial (protocol.md): one initiate only.
    expect(h.gateway.actions()).toEqual(['initiate']);
  });

  it('says that another partner places the number’s calls (138038) rather than a failed call', async () => {
    const h = await harness(() => graphError(400, 138038, 'Not the Call primary of this number'));
    const sent = await h.coordinator.startCall('+447400123456', DIAL_OFFER_SDP, 'out:call-138038');
    expect(sent.ok).toBe(false);
    if (!sent.ok) expect(sent.error).toMatchObject({ gatewayCode: 138038 });
    expect(h.coordinator.call('out:call-138038')).toMatchObject({ phase: 'ended', end: { kind: 'other_partner' } });
    expect(h.history.entries()[0]).toMatchObject({ outcome: 'other_partner' });
    expect(h.gateway.actions()).toEqual(['initiate']);
  });

  it('terminates a call hung up while its initiate was on its way', async () => {
    let release: () => void = () => undefined;
    const initiateHeld = new Promise<void>((resolve) => (release = resolve));
    const h = await harness(async (req) => {
      if (!req.path.endsWith('/initiate')) return success();
      await initiateHeld;
      return initiated('wacid.out-3');
    });
    const localId = 'out:call-hungup';
    const sending = h.coordinator.startCall('+447400123456', DIAL_OFFER_SDP, localId);
    expect((await h.coordinator.hangUp(localId)).ok).toBe(true);
    expect(h.coordinator.call(localId)).toMatchObject({ phase: 'ended', end: { kind: 'cancelled' } });
    const sent = await sending;
    expect(sent.ok).toBe(false);
    if (!sent.ok) expect(sent.error).toMatchObject({ code: 'invalid_state', message: expect.stringContaining('hung up before the gateway placed it') });
    // The terminate is owed as soon as the initiate returns the call's id.
    release();
    await h.coordinator.whenIdle();
    expect(h.gateway.actions()).toEqual(['initiate', 'terminate']);
    expect(h.gateway.requests[1]!.body).toMatchObject({ call_id: 'wacid.out-3' });
    expect(await h.liveFile()).toEqual({ version: 1, calls: [] });
    // Late events for that call id change nothing.
    h.relay({ type: 'call.answered', callId: 'wacid.out-3', sdp: ANSWER_SDP, timestamp: h.clock.t });
    expect(h.coordinator.call(localId)?.phase).toBe('ended');
  });

  it('applies progress that overtook the initiate response', async () => {
    const whileInitiating: { run?: () => void } = {};
    const h = await harness((req) => {
      if (!req.path.endsWith('/initiate')) return success();
      whileInitiating.run?.();
      return initiated('wacid.out-4');
    });
    whileInitiating.run = () => h.relay({ type: 'call.status', callId: 'wacid.out-4', status: 'RINGING', timestamp: h.clock.t });
    const started = await h.coordinator.startCall('+447400123456', DIAL_OFFER_SDP);
    if (!started.ok) throw new Error(started.error.message);
    expect(h.coordinator.call(started.value.localId)?.phase).toBe('remote_ringing');
  });

  it('refuses a second call while one is in progress, and a bad number', async () => {
    const h = await harness();
    const first = await h.coordinator.startCall('+447400123456', DIAL_OFFER_SDP);
    expect(first.ok).toBe(true);
    const second = await h.coordinator.startCall('+447400123457', DIAL_OFFER_SDP);
    expect(second.ok).toBe(false);
    if (!second.ok) expect(second.error).toMatchObject({ code: 'invalid_state', message: expect.stringContaining('Another call is in progress') });
    const bad = await h.coordinator.startCall('12ab', DIAL_OFFER_SDP);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error).toMatchObject({ code: 'invalid_phone_number', field: 'to' });
    incoming(h, 'wacid.in-busy');
    const answer = await h.coordinator.answerCall('in:wacid.in-busy', ANSWER_SDP);
    expect(answer.ok).toBe(false);
    if (!answer.ok) expect(answer.error.code).toBe('invalid_state');
  });

  it('reports unknown calls as not_found', async () => {
    const h = await harness();
    for (const result of [await h.coordinator.hangUp('nope'), await h.coordinator.declineCall('nope'), await h.coordinator.answerCall('nope', ANSWER_SDP)]) {
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.code).toBe('not_found');
    }
  });
});

// London's 020 5 range is not allocated: the numbering-plan metadata knows its length, lists no number.
const UNLISTED = '442059460958';

describe('CallCoordinator: numbers the metadata does not list', () => {
  it('refuses one without the agent\'s "anyway", naming the number and that it can be called anyway; nothing is placed', async () => {
    const h = await harness(() => initiated('wacid.unlisted'));
    const refused = await h.coordinator.startCall('020 5946 0958', DIAL_OFFER_SDP, 'out:unlisted-1');
    expect(refused).toEqual({
      ok: false,
      error: {
        code: 'invalid_phone_number',
        field: 'to',
        message: 'Phone number: +44 20 5946 0958 is not listed as a valid number for its country. Check it, or call anyway.',
        // The same as codes and values, for the window to say in the agent's language.
        text: { code: 'common.fieldRule', values: { field: { term: 'phoneNumber' }, rule: { code: 'phone.unverified', values: { number: '+44 20 5946 0958' } } } },
        issues: [{ field: 'to', text: { code: 'phone.unverified', values: { number: '+44 20 5946 0958' } } }],
      },
    });
    expect(h.coordinator.call('out:unlisted-1')).toBeUndefined();
    expect(h.gateway.requests).toEqual([]);
    // "anyway" false is no consent either.
    expect((await h.coordinator.startCall('+44 20 5946 0958', DIAL_OFFER_SDP, 'out:unlisted-2', { anyway: false })).ok).toBe(false);
    expect(h.gateway.requests).toEqual([]);
  });

  it('places it with "anyway": the gateway judges it', async () => {
    const h = await harness(() => initiated('wacid.unlisted'));
    const placed = await h.coordinator.startCall('+44 20 5946 0958', DIAL_OFFER_SDP, 'out:unlisted-3', { anyway: true });
    expect(placed).toEqual({ ok: true, value: { localId: 'out:unlisted-3', to: UNLISTED, callId: 'wacid.unlisted' } });
    expect(h.gateway.requests[0]!.body).toEqual({ messaging_product: 'chatapp', to: UNLISTED, action: 'connect', session: { sdp_type: 'offer', sdp: DIAL_OFFER_SDP }, biz_opaque_callback_data: 'out:unlisted-3' });
  });

  it('shows the gateway\'s refusal (138001) of a number called anyway as a failed call', async () => {
    const h = await harness(() => graphError(400, 138001, '(#138001) Receiver is incapable of receiving this call'));
    const refused = await h.coordinator.startCall('+44 20 5946 0958', DIAL_OFFER_SDP, 'out:unlisted-4', { anyway: true });
    expect(refused).toMatchObject({ ok: false, error: { code: 'gateway_error', gatewayCode: 138001, message: 'This customer cannot be called' } });
    expect(h.history.entries()[0]).toMatchObject({ direction: 'outgoing', number: UNLISTED, outcome: 'failed', failureCode: '138001' });
    expect(h.gateway.actions()).toEqual(['initiate']);
  });

  it('calls back a number a customer called from, found in the history', async () => {
    const h = await harness(() => initiated('wacid.callback'));
    h.history.record({ localId: 'in:wacid.earlier', callId: 'wacid.earlier', direction: 'incoming', number: UNLISTED, outcome: 'missed', startedAt: h.clock.t - 60_000, endedAt: h.clock.t - 30_000, durationSec: 0 });
    expect(h.coordinator.calls()).toEqual([]);
    const placed = await h.coordinator.startCall('+44 20 5946 0958', DIAL_OFFER_SDP, 'out:callback-1');
    expect(placed).toMatchObject({ ok: true, value: { to: UNLISTED, callId: 'wacid.callback' } });
    expect(h.gateway.actions()).toEqual(['initiate']);
  });

  it('calls back a number a customer is calling from right now, before any history has it', async () => {
    const h = await harness(() => initiated('wacid.callback-live'));
    h.relay({ type: 'call.incoming', callId: 'wacid.in-unlisted', from: UNLISTED, sdp: OFFER_SDP, timestamp: h.clock.t });
    expect(h.coordinator.call('in:wacid.in-unlisted')?.phase).toBe('ringing');
    expect(h.history.entries()).toEqual([]);
    const placed = await h.coordinator.startCall('020 5946 0958', DIAL_OFFER_SDP, 'out:callback-2');
    expect(placed).toMatchObject({ ok: true, value: { to: UNLISTED, callId: 'wacid.callback-live' } });
  });

  it('does not count a number the agent only called out to', async () => {
    const h = await harness(() => initiated('wacid.x'));
    h.history.record({ localId: 'out:earlier', direction: 'outgoing', number: UNLISTED, outcome: 'no_answer', startedAt: h.clock.t - 60_000, endedAt: h.clock.t - 30_000, durationSec: 0 });
    const refused = await h.coordinator.startCall('+44 20 5946 0958', DIAL_OFFER_SDP);
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_phone_number', field: 'to', message: expect.stringContaining('not listed as a valid number') } });
    expect(h.gateway.requests).toEqual([]);
  });

  it('still refuses a number of the wrong length, "anyway" or not', async () => {
    const h = await harness();
    const refused = await h.coordinator.startCall('+44 20 5946', DIAL_OFFER_SDP, undefined, { anyway: true });
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_phone_number', field: 'to', message: 'Phone number: too short' } });
    expect(h.gateway.requests).toEqual([]);
  });
});

describe('CallCoordinator: crash and shutdown safety', () => {
  it('on start, ends the calls a previous run left live on this gateway and clears the list', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'softphone-recovery-'));
    const h = await harness(happyGateway, { dataDir, start: false });
    await writeFile(
      join(dataDir, 'live-calls.json'),
      JSON.stringify({
        version: 1,
        calls: [
          { callId: 'wacid.left-1', action: 'terminate', gatewayUrl: h.gateway.baseUrl },
          { callId: 'wacid.left-2', action: 'reject', gatewayUrl: h.gateway.baseUrl },
          { callId: 'wacid.elsewhere', action: 'terminate', gatewayUrl: 'https://other.example.com/restapi/v1' },
        ],
      }),
    );
    await h.coordinator.start();
    await h.coordinator.whenIdle();
    expect(h.gateway.requests.map((r) => r.body)).toEqual(
      expect.arrayContaining([
        { messaging_product: 'chatapp', call_id: 'wacid.left-1', action: 'terminate' },
        { messaging_product: 'chatapp', call_id: 'wacid.left-2', action: 'reject' },
      ]),
    );
    expect(h.gateway.requests).toHaveLength(2);
    expect(await h.liveFile()).toEqual({ version: 1, calls: [] });
  });

  it('keeps an unreadable live-calls file aside and starts clean', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'softphone-recovery-'));
    await writeFile(join(dataDir, 'live-calls.json'), '{"version":1,"calls":[{"callId":');
    const h = await harness(happyGateway, { dataDir });
    await h.coordinator.whenIdle();
    expect(await h.liveFile()).toEqual({ version: 1, calls: [] });
    expect(h.gateway.requests).toHaveLength(0);
    expect(await readFile(join(dataDir, `live-calls.json.corrupt-${h.clock.t}`), 'utf8')).toContain('"callId":');
  });

  it('lists a live call so that a run after a crash ends it', async () => {
    const h = await harness(() => initiated('wacid.out-crash'));
    const started = await h.coordinator.startCall('+447400123456', DIAL_OFFER_SDP);
    if (!started.ok) throw new Error(started.error.message);
    await h.coordinator.whenIdle();
    // The app dies here: no shutdown. The next run with the same data directory ends the call.
    h.gateway.handler = () => success();
    const next = h.newCoordinator();
    await next.start();
    await next.whenIdle();
    expect(h.gateway.actions()).toEqual(['initiate', 'terminate']);
    expect(h.gateway.requests[1]!.body).toMatchObject({ call_id: 'wacid.out-crash', action: 'terminate' });
  });

  it('shutdown ends every live call on the gateway and marks it ended', async () => {
    const h = await harness();
    incoming(h, 'wacid.active');
    await h.coordinator.answerCall('in:wacid.active', ANSWER_SDP);
    await h.coordinator.reportMedia({ localId: 'in:wacid.active', state: 'connected' });
    incoming(h, 'wacid.ringing');
    await h.coordinator.shutdown();
    expect(h.gateway.requests.slice(1).map((r) => r.body)).toEqual(
      expect.arrayContaining([
        { messaging_product: 'chatapp', call_id: 'wacid.active', action: 'terminate' },
        { messaging_product: 'chatapp', call_id: 'wacid.ringing', action: 'reject' },
      ]),
    );
    expect(h.coordinator.calls().every((c) => c.phase === 'ended')).toBe(true);
    expect(await h.liveFile()).toEqual({ version: 1, calls: [] });
    expect(h.history.entries().map((e) => e.localId).sort()).toEqual(['in:wacid.active', 'in:wacid.ringing']);
    const after = await h.coordinator.startCall('+447400123456', DIAL_OFFER_SDP);
    expect(after.ok).toBe(false);
  });

  it('keeps a call whose terminate did not reach the gateway listed for the next start', async () => {
    const h = await harness((req) => (req.path.endsWith('/terminate') ? 'hang' : success()));
    await h.client.close();
    const slow = new GatewayClient({ baseUrl: h.gateway.baseUrl, apiKey: 'k-12345678', product: 'chatapp', timeoutMs: 100 });
    cleanups.push(() => slow.close());
    const coordinator = new CallCoordinator({ gateway: slow, claims: new LocalClaims(), gatewayUrl: h.gateway.baseUrl, dataDir: h.dataDir, history: h.history, now: h.clock.now, timers: h.clock });
    await coordinator.start();
    coordinator.applyRelayEvent({ id: 'x', receivedAt: h.clock.t, event: { type: 'call.incoming', callId: 'wacid.stuck', from: CUSTOMER, sdp: OFFER_SDP, timestamp: h.clock.t } });
    await coordinator.answerCall('in:wacid.stuck', ANSWER_SDP);
    await coordinator.shutdown();
    expect(await h.liveFile()).toEqual({ version: 1, calls: [{ callId: 'wacid.stuck', action: 'terminate', gatewayUrl: h.gateway.baseUrl }] });
  });
});
