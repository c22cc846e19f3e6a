// BridgedCallControl's part of transfers, consults and three-way calls (electron/core/bridged-calls.ts,
// shared/transfer.ts), and the relay's transfer events as call events (relay-call-events.ts). Real
// parts: the app's RelayClient and GatewayClient against a relay peer speaking the agent's contract
// (bridge-relay.ts) and the fake gateway, both real HTTP servers on 127.0.0.1.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BridgedCallControl } from '../../../electron/core/bridged-calls';
import { GatewayClient } from '../../../electron/core/gateway-client';
import { callEventOf } from '../../../electron/core/relay-call-events';
import { RelayClient } from '../../../electron/core/relay-client';
import { TRANSFER_REFUSALS, type CallState, type CallTransfer } from '../../../shared/call-state';
import type { RelayEnvelope, RelayEvent } from '../../../shared/events';
import { english, text } from '../../../shared/i18n/text';
import { configureLogging, createLogger } from '../../../shared/log';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { AGENT_ID, BRIDGE_ANSWER_SDP, CUSTOMER_LEG_OFFER_SDP, LEG_OFFER_SDP, startBridgeRelay, type BridgeRelay, type Reply } from './bridge-relay';
import { happyGateway, startFakeGateway, type FakeGateway } from './fake-gateway';

configureLogging({ sink: () => undefined });

const CALL = 'wacid.transfer-1';
const TRANSFER = 'xfer-bob-1';
const BOB = { agentId: 'bob', name: 'Bob Agent' };
const CAROL = { agentId: 'carol', name: 'Carol Agent' };

interface Parts {
  relay: BridgeRelay;
  gateway: FakeGateway;
  bridge: BridgedCallControl;
  /** Hands a relay event to the bridge; resolves with what it passed on (in order). */
  deliver(event: RelayEvent): Promise<RelayEnvelope>;
  delivered: RelayEnvelope[];
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The waits between a leave's tries here: short, so that the tests do not wait the product's. */
const LEAVE_RETRY_MS = [5, 10, 20];

async function parts(options: { relayTimeoutMs?: number } = {}): Promise<Parts> {
  const relay = await startBridgeRelay();
  const gateway = await startFakeGateway(happyGateway);
  const client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: 'test-api-key-123', product: 'chatapp', terminateBackoffMs: 5, timeoutMs: 2_000 });
  const relayClient = new RelayClient({ url: relay.url, token: relay.token, ...(options.relayTimeoutMs !== undefined ? { claimTimeoutMs: options.relayTimeoutMs / 2 } : {}) });
  const bridge = new BridgedCallControl(client, relayClient, createLogger('bridged-calls'), { leaveRetryMs: LEAVE_RETRY_MS });
  cleanups.push(async () => {
    await relayClient.close();
    await client.close();
    await gateway.close();
    await relay.close();
  });
  let seq = 0;
  const delivered: RelayEnvelope[] = [];
  const deliver = (event: RelayEvent) =>
    new Promise<RelayEnvelope>((resolve) =>
      bridge.deliver({ id: `e-${++seq}`, receivedAt: Date.now(), event }, (envelope) => {
        delivered.push(envelope);
        resolve(envelope);
      }),
    );
  return { relay, gateway, bridge, deliver, delivered };
}

const ring = (o: Partial<Extract<RelayEvent, { type: 'call.transfer_ring' }>> = {}): Extract<RelayEvent, { type: 'call.transfer_ring' }> => ({
  type: 'call.transfer_ring',
  callId: CALL,
  transferId: TRANSFER,
  kind: 'consult',
  by: BOB,
  from: '442079460958',
  name: 'Ada Lovelace',
  legId: 'leg-transfer-1',
  sdp: LEG_OFFER_SDP,
  timestamp: Date.now(),
  ...o,
});

/** A call as the coordinator would announce it. */
const announced = (localId: string, phase: 'ringing' | 'active' | 'ended', o: Partial<CallState> = {}): CallState => {
  const base = { localId, callId: CALL, peer: {}, createdAt: 1, direction: 'incoming' as const, offerSdp: LEG_OFFER_SDP };
  if (phase === 'ringing') return { ...base, phase, ringsUntil: 2, ...o } as CallState;
  if (phase === 'active') return { ...base, phase, answeredAt: 2, connectedAt: 3, ...o } as CallState;
  return { ...base, phase, end: { kind: 'completed', by: 'agent' }, endedAt: 4, durationSec: 1, ...o } as CallState;
};

/** Bob's consult as the call it rang here holds it. */
const asked = (state: CallTransfer['state'], kind: 'transfer' | 'consult' = 'consult'): CallTransfer => ({ id: TRANSFER, kind, role: 'to', colleague: BOB, state });
/** This agent's own consult with Carol as its call holds it. */
const own = (state: CallTransfer['state']): CallTransfer => ({ id: 'xfer-own-1', kind: 'consult', role: 'from', colleague: CAROL, state });

describe('BridgedCallControl: a colleague’s transfer that rings this agent', () => {
  it('passes the ring on as it came, keeping its leg for the call it opens: the answer goes to the relay with that leg, never to the gateway', async () => {
    const p = await parts();
    const passed = await p.deliver(ring());
    expect(passed.event).toEqual(ring({ timestamp: (passed.event as { timestamp: number }).timestamp }));
    // The call reducer opened it: it rings here, and the leg is its call's.
    p.bridge.callChanged(announced(`tr:${TRANSFER}`, 'ringing', { bridged: true, transfer: asked('ringing') }));
    expect(p.bridge.isBridgedCall(CALL)).toBe(true);
    expect(await p.bridge.accept(CALL, ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(p.relay.requests).toEqual([{ method: 'POST', path: `/calls/${CALL}/bridge/transfer/${TRANSFER}/answer`, body: { legId: 'leg-transfer-1', sdp: ANSWER_SDP } }]);
    expect(p.gateway.requests).toEqual([]);
  });

  it('a colleague answered first (409 already_claimed or answered_elsewhere): answered_elsewhere; a transfer that is over: invalid_state', async () => {
    const p = await parts();
    await p.deliver(ring());
    p.bridge.callChanged(announced(`tr:${TRANSFER}`, 'ringing', { bridged: true, transfer: asked('ringing') }));
    for (const code of ['already_claimed', 'answered_elsewhere']) {
      p.relay.onRequest = () => ({ status: 409, body: { error: { code, message: 'Answered by another agent' } } });
      const lost = await p.bridge.accept(CALL, ANSWER_SDP);
      expect(lost).toMatchObject({ ok: false, error: { code: 'answered_elsewhere', message: 'Answered by another agent', httpStatus: 409 } });
    }
    p.relay.onRequest = () => ({ status: 409, body: { error: { code: 'invalid_state', message: 'the transfer is over' } } });
    expect(await p.bridge.accept(CALL, ANSWER_SDP)).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', message: 'The relay refused the transfer answer request (HTTP 409: the transfer is over)', httpStatus: 409 },
    });
    expect(p.gateway.requests).toEqual([]);
  });

  it('declines on the relay', async () => {
    const p = await parts();
    await p.deliver(ring());
    expect(await p.bridge.declineTransfer(CALL, TRANSFER)).toEqual({ ok: true, value: null });
    expect(p.relay.seen()).toEqual([`POST /calls/${CALL}/bridge/transfer/${TRANSFER}/decline`]);
  });

  it('keeps the call’s events in order: a ring after a bridged ring still waiting for its leg waits too', async () => {
    const p = await parts();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    p.relay.onRequest = async (req) => {
      if (req.path.endsWith('/bridge/leg')) await held;
      return undefined;
    };
    const first = p.deliver({ type: 'call.incoming', callId: CALL, from: '442079460958', sdp: OFFER_SDP, timestamp: Date.now(), bridged: true });
    const second = p.deliver(ring());
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(p.delivered).toEqual([]);
    release();
    await Promise.all([first, second]);
    expect(p.delivered.map((e) => e.event.type)).toEqual(['call.incoming', 'call.transfer_ring']);
    p.bridge.callChanged(announced(`tr:${TRANSFER}`, 'ringing', { bridged: true, transfer: asked('ringing') }));
    // The transfer's leg replaced the ring's: its answer goes to the transfer.
    await p.bridge.accept(CALL, ANSWER_SDP);
    expect(p.relay.seen().at(-1)).toBe(`POST /calls/${CALL}/bridge/transfer/${TRANSFER}/answer`);
  });

  it('takes the place of an ended call’s leg, but never of a live call’s; an older call of the same id ending does not drop it', async () => {
    const p = await parts();
    await p.deliver({ type: 'call.incoming', callId: CALL, from: '442079460958', sdp: OFFER_SDP, timestamp: Date.now(), bridged: true });
    p.bridge.callChanged(announced(`in:${CALL}`, 'ringing', { bridged: true }));
    // Live here: a ring of the same id (the reducer ignores it too) leaves the call's leg alone.
    await p.deliver(ring());
    await p.bridge.accept(CALL, ANSWER_SDP);
    expect(p.relay.seen(/answer$/)).toEqual([`POST /calls/${CALL}/bridge/answer`]);
    // Ended: the next transfer's ring brings the leg the call has now.
    p.bridge.callChanged(announced(`in:${CALL}`, 'ended', { bridged: true }));
    await p.deliver(ring({ transferId: 'xfer-bob-2', legId: 'leg-transfer-2' }));
    p.bridge.callChanged(announced('tr:xfer-bob-2', 'ringing', { bridged: true, transfer: { ...asked('ringing'), id: 'xfer-bob-2' } }));
    // The older call changes again (a late terminate's duration): not this leg's call.
    p.bridge.callChanged(announced(`in:${CALL}`, 'ended', { bridged: true, durationSec: 9 }));
    expect(p.bridge.isBridgedCall(CALL)).toBe(true);
    await p.bridge.accept(CALL, ANSWER_SDP);
    expect(p.relay.requests.at(-1)).toEqual({ method: 'POST', path: `/calls/${CALL}/bridge/transfer/xfer-bob-2/answer`, body: { legId: 'leg-transfer-2', sdp: ANSWER_SDP } });
  });

  it('a bridged ring whose leg the relay did not give rings as a direct call: it is no bridged call here', async () => {
    const p = await parts();
    p.relay.onRequest = (req) => (req.path.endsWith('/bridge/leg') ? { status: 503, body: { error: { code: 'unavailable', message: 'no node' } } } : undefined);
    const passed = await p.deliver({ type: 'call.incoming', callId: CALL, from: '442079460958', sdp: OFFER_SDP, timestamp: Date.now(), bridged: true });
    expect(passed.event).not.toHaveProperty('bridged');
    expect(passed.event).toMatchObject({ type: 'call.incoming', sdp: OFFER_SDP });
    expect(callEventOf(passed, 1, AGENT_ID)).not.toHaveProperty('bridged');
  });
});

describe('BridgedCallControl: this agent’s transfers', () => {
  it('starts one with the colleague and its kind, and names it as the relay does', async () => {
    const p = await parts();
    expect(await p.bridge.transfer(CALL, 'bob', 'consult')).toEqual({ ok: true, value: { transferId: 'xfer-1' } });
    expect(await p.bridge.transfer(CALL, 'available', 'transfer')).toEqual({ ok: true, value: { transferId: 'xfer-2' } });
    expect(p.relay.requests).toEqual([
      { method: 'POST', path: `/calls/${CALL}/bridge/transfer`, body: { to: 'bob', kind: 'consult' } },
      { method: 'POST', path: `/calls/${CALL}/bridge/transfer`, body: { to: 'available', kind: 'transfer' } },
    ]);
  });

  it('cancels, completes and joins it on its own paths (a 204 is done too)', async () => {
    const p = await parts();
    expect(await p.bridge.cancelTransfer(CALL, 'xfer-1')).toEqual({ ok: true, value: null });
    expect(await p.bridge.completeTransfer(CALL, 'xfer-2')).toEqual({ ok: true, value: null });
    p.relay.onRequest = () => ({ status: 204 });
    expect(await p.bridge.addToCall(CALL, 'xfer-3')).toEqual({ ok: true, value: null });
    expect(p.relay.seen()).toEqual([
      `POST /calls/${CALL}/bridge/transfer/xfer-1/cancel`,
      `POST /calls/${CALL}/bridge/transfer/xfer-2/complete`,
      `POST /calls/${CALL}/bridge/transfer/xfer-3/join`,
    ]);
  });

  it('passes the relay’s refusals on as errors: one transfer at a time (409), not in the call (403)', async () => {
    const p = await parts();
    p.relay.onRequest = () => ({ status: 409, body: { error: { code: 'invalid_state', message: 'a transfer is under way' } } });
    expect(await p.bridge.transfer(CALL, 'bob', 'transfer')).toMatchObject({ ok: false, error: { code: 'invalid_state', httpStatus: 409, detail: 'a transfer is under way' } });
    p.relay.onRequest = () => ({ status: 403, body: { error: { code: 'forbidden', message: 'not in the call' } } });
    expect(await p.bridge.cancelTransfer(CALL, 'xfer-1')).toMatchObject({ ok: false, error: { httpStatus: 403 } });
  });

  it('words a 403 as the relay refusing the request, in its own words; only a 401 is the token refused', async () => {
    const p = await parts();
    p.relay.onRequest = () => ({ status: 403, body: { error: { code: 'forbidden', message: 'only the agent who started the transfer cancels it' } } });
    expect(await p.bridge.cancelTransfer(CALL, 'xfer-1')).toEqual({
      ok: false,
      error: {
        code: 'unauthorized',
        message: 'The relay refused the transfer cancel request (HTTP 403: only the agent who started the transfer cancels it)',
        text: text('relay.refusedSaying', { what: 'transfer cancel', status: 403, reason: 'only the agent who started the transfer cancels it' }),
        httpStatus: 403,
        detail: 'only the agent who started the transfer cancels it',
      },
    });
    p.relay.onRequest = () => ({ status: 403 });
    expect(await p.bridge.addToCall(CALL, 'xfer-1')).toMatchObject({ ok: false, error: { message: 'The relay refused the add to call request (HTTP 403)', httpStatus: 403 } });
    p.relay.onRequest = (req) => (req.path.endsWith('/bridge/hold') ? { status: 403, body: { error: { code: 'forbidden', message: 'only the agent on the call holds it' } } } : undefined);
    const relayClient = new RelayClient({ url: p.relay.url, token: p.relay.token });
    cleanups.push(() => relayClient.close());
    expect(await relayClient.bridgeRequest('bridge hold', `/calls/${CALL}/bridge/hold`, { held: true }, z.object({}))).toMatchObject({
      ok: false,
      error: { message: 'The relay refused the bridge hold request (HTTP 403: only the agent on the call holds it)', httpStatus: 403 },
    });
    const stranger = new RelayClient({ url: p.relay.url, token: 'not-an-agent-token-42' });
    cleanups.push(() => stranger.close());
    expect(await stranger.transferRequest('transfer cancel', 'POST', `/calls/${CALL}/bridge/transfer/xfer-1/cancel`, {}, z.object({}))).toMatchObject({
      ok: false,
      error: { code: 'unauthorized', message: 'The relay refused the agent token: check it in Settings', httpStatus: 401 },
    });
  });

  it('lists the team as the relay does, this agent marked self; refuses when the team’s calls are not bridged', async () => {
    const p = await parts();
    expect(await p.bridge.team()).toEqual({ ok: true, value: p.relay.team });
    expect(p.relay.seen()).toEqual(['GET /me', 'GET /team']);
    const direct = await parts();
    direct.relay.bridged = false;
    expect(await direct.bridge.team()).toEqual({ ok: false, error: { code: 'invalid_state', message: english(TRANSFER_REFUSALS.notBridged), text: { code: 'calls.transfersNotBridged' } } });
    expect(direct.relay.seen()).toEqual(['GET /me']);
  });
});

describe('BridgedCallControl: hanging up a bridged call', () => {
  async function answeredBridged(p: Parts, transfer?: CallTransfer): Promise<void> {
    await p.deliver({ type: 'call.incoming', callId: CALL, from: '442079460958', sdp: OFFER_SDP, timestamp: Date.now(), bridged: true });
    p.bridge.callChanged(announced(`in:${CALL}`, 'ringing', { bridged: true }));
    expect(await p.bridge.accept(CALL, ANSWER_SDP)).toEqual({ ok: true, value: null });
    p.bridge.callChanged(announced(`in:${CALL}`, 'active', { bridged: true, ...(transfer !== undefined ? { transfer } : {}) }));
  }

  /** A colleague's consult rung here and answered: Bob's call, this agent in it. */
  async function inBobsConsult(p: Parts): Promise<void> {
    await p.deliver(ring());
    p.bridge.callChanged(announced(`tr:${TRANSFER}`, 'ringing', { bridged: true, transfer: asked('ringing') }));
    p.bridge.callChanged(announced(`tr:${TRANSFER}`, 'active', { bridged: true, transfer: asked('consulting') }));
  }

  /** The relay answers a leave so. */
  const leaveAnswers = (p: Parts, reply: Reply | (() => Reply | Promise<Reply>)) => {
    p.relay.onRequest = (req) => (req.path.endsWith('/bridge/leave') ? (typeof reply === 'function' ? reply() : reply) : undefined);
  };
  const SERVER_ERROR: Reply = { status: 500, body: { error: { code: 'internal', message: 'boom' } } };
  const UNAVAILABLE: Reply = { status: 503, body: { error: { code: 'unavailable', message: 'restarting' } } };
  const LEAVES = (n: number) => Array.from({ length: n }, () => `POST /calls/${CALL}/bridge/leave`);

  it('leaves it first: colleagues still with the customer keep the call, and the gateway hears nothing', async () => {
    const p = await parts();
    await answeredBridged(p);
    // The coordinator announces the end before its terminate runs.
    p.bridge.callChanged(announced(`in:${CALL}`, 'ended', { bridged: true }));
    expect(await p.bridge.terminate(CALL)).toEqual({ ok: true, value: null });
    expect(p.relay.seen().at(-1)).toBe(`POST /calls/${CALL}/bridge/leave`);
    expect(p.gateway.actions()).toEqual(['accept']);
  });

  it('each answer of the relay to the leave, and what reaches the gateway', async () => {
    const cases: Array<[string, Reply, 'ok' | 'error', string[], number]> = [
      ['others stay ({last:false})', { status: 200, body: { last: false } }, 'ok', ['accept'], 1],
      ['the last one ({last:true})', { status: 200, body: { last: true } }, 'ok', ['accept', 'terminate'], 1],
      ['not bridged on the relay (404)', { status: 404, body: { error: { code: 'not_found', message: 'no bridged call' } } }, 'ok', ['accept', 'terminate'], 1],
      ['no longer in it: a colleague has it (403)', { status: 403, body: { error: { code: 'forbidden', message: 'only an agent in the call leaves it' } } }, 'ok', ['accept'], 1],
      ['ended at the gateway by the relay (410)', { status: 410, body: { error: { code: 'call_ended', message: 'call was ended at the gateway by the relay' } } }, 'ok', ['accept'], 1],
      ['cannot say, every time (500)', SERVER_ERROR, 'ok', ['accept', 'terminate'], 4],
      ['cannot say, every time (503)', UNAVAILABLE, 'ok', ['accept', 'terminate'], 4],
    ];
    for (const [what, reply, outcome, gateway, leaves] of cases) {
      const p = await parts();
      await answeredBridged(p);
      p.bridge.callChanged(announced(`in:${CALL}`, 'ended', { bridged: true }));
      leaveAnswers(p, reply);
      const result = await p.bridge.terminate(CALL);
      expect(result.ok ? 'ok' : 'error', what).toBe(outcome);
      expect(p.relay.seen(/leave$/), what).toEqual(LEAVES(leaves));
      expect(p.gateway.actions(), what).toEqual(gateway);
    }
  });

  it('asks again while the relay cannot answer, and follows the answer that comes', async () => {
    const p = await parts();
    await answeredBridged(p);
    const replies: Reply[] = [SERVER_ERROR, UNAVAILABLE, { status: 200, body: { last: false } }];
    leaveAnswers(p, () => replies.shift() ?? SERVER_ERROR);
    expect(await p.bridge.terminate(CALL)).toEqual({ ok: true, value: null });
    expect(p.relay.seen(/leave$/)).toEqual(LEAVES(3));
    expect(p.gateway.actions()).toEqual(['accept']);
  });

  it('a relay that does not answer in time is asked again too, then the call is ended at the gateway', async () => {
    const p = await parts({ relayTimeoutMs: 100 });
    await answeredBridged(p);
    leaveAnswers(p, async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { status: 200, body: { last: false } };
    });
    expect(await p.bridge.terminate(CALL)).toEqual({ ok: true, value: null });
    expect(p.relay.seen(/leave$/)).toEqual(LEAVES(4));
    expect(p.gateway.actions()).toEqual(['accept', 'terminate']);
  });

  it('never ends a colleague’s call from here: a consult this agent was asked into is left to them when the relay cannot be told', async () => {
    const p = await parts();
    await inBobsConsult(p);
    leaveAnswers(p, UNAVAILABLE);
    p.bridge.callChanged(announced(`tr:${TRANSFER}`, 'ended', { bridged: true, transfer: asked('consulting') }));
    expect(await p.bridge.terminate(CALL)).toMatchObject({ ok: false, error: { httpStatus: 503 } });
    expect(p.relay.seen()).toEqual(LEAVES(4));
    expect(p.gateway.requests).toEqual([]);
  });

  it('a consult this agent was asked into and is no longer in (403): nothing more, and the hang-up is done', async () => {
    const p = await parts();
    await inBobsConsult(p);
    leaveAnswers(p, { status: 403, body: { error: { code: 'forbidden', message: 'only an agent in the call leaves it' } } });
    p.bridge.callChanged(announced(`tr:${TRANSFER}`, 'ended', { bridged: true, transfer: asked('consulting') }));
    expect(await p.bridge.terminate(CALL)).toEqual({ ok: true, value: null });
    expect(p.relay.seen()).toEqual(LEAVES(1));
    expect(p.gateway.requests).toEqual([]);
  });

  it('never ends the customer a colleague talks with in this agent’s own consult or three-way call when the relay cannot be told', async () => {
    for (const state of ['consulting', 'joined'] as const) {
      const p = await parts();
      await answeredBridged(p, own('ringing'));
      p.bridge.callChanged(announced(`in:${CALL}`, 'active', { bridged: true, transfer: own(state) }));
      p.bridge.callChanged(announced(`in:${CALL}`, 'ended', { bridged: true, transfer: own(state) }));
      leaveAnswers(p, SERVER_ERROR);
      expect(await p.bridge.terminate(CALL), state).toMatchObject({ ok: false, error: { httpStatus: 500 } });
      expect(p.relay.seen(/leave$/)).toEqual(LEAVES(4));
      expect(p.gateway.actions(), state).toEqual(['accept']);
    }
    // Its transfer still ringing, or over: no colleague is with the customer, who is ended at the gateway.
    for (const state of ['ringing', 'done', 'not_answered'] as const) {
      const p = await parts();
      await answeredBridged(p, own('consulting'));
      p.bridge.callChanged(announced(`in:${CALL}`, 'ended', { bridged: true, transfer: own(state) }));
      leaveAnswers(p, SERVER_ERROR);
      expect(await p.bridge.terminate(CALL), state).toEqual({ ok: true, value: null });
      expect(p.gateway.actions(), state).toEqual(['accept', 'terminate']);
    }
  });

  it('a relay that no longer knows the call (404: it restarted) never has a colleague’s customer ended from here', async () => {
    const NOT_FOUND: Reply = { status: 404, body: { error: { code: 'not_found', message: 'no bridged call' } } };
    const bobs = await parts();
    await inBobsConsult(bobs);
    leaveAnswers(bobs, NOT_FOUND);
    bobs.bridge.callChanged(announced(`tr:${TRANSFER}`, 'ended', { bridged: true, transfer: asked('consulting') }));
    expect(await bobs.bridge.terminate(CALL)).toEqual({ ok: true, value: null });
    expect(bobs.gateway.requests).toEqual([]);
    for (const state of ['consulting', 'joined'] as const) {
      const p = await parts();
      await answeredBridged(p, own('ringing'));
      p.bridge.callChanged(announced(`in:${CALL}`, 'active', { bridged: true, transfer: own(state) }));
      p.bridge.callChanged(announced(`in:${CALL}`, 'ended', { bridged: true, transfer: own(state) }));
      leaveAnswers(p, NOT_FOUND);
      expect(await p.bridge.terminate(CALL), state).toEqual({ ok: true, value: null });
      expect(p.gateway.actions(), state).toEqual(['accept']);
    }
  });

  it('a transfer taken here makes the customer this agent’s: its hang-up ends the call at the gateway when the relay cannot say', async () => {
    const p = await parts();
    await p.deliver(ring({ kind: 'transfer' }));
    p.bridge.callChanged(announced(`tr:${TRANSFER}`, 'ringing', { bridged: true, transfer: asked('ringing', 'transfer') }));
    p.bridge.callChanged(announced(`tr:${TRANSFER}`, 'active', { bridged: true, transfer: asked('done', 'transfer') }));
    leaveAnswers(p, UNAVAILABLE);
    expect(await p.bridge.terminate(CALL)).toEqual({ ok: true, value: null });
    expect(p.gateway.actions()).toEqual(['terminate']);
  });

  it('a call of no leg here in a bridged team (left live by a previous run) is left the same way first', async () => {
    const cases: Array<[string, Reply, string[], number]> = [
      ['others stay', { status: 200, body: { last: false } }, [], 1],
      ['the last one', { status: 200, body: { last: true } }, ['terminate'], 1],
      ['unknown to the relay (404)', { status: 404, body: { error: { code: 'not_found', message: 'no bridged call' } } }, ['terminate'], 1],
      ['a colleague’s (403)', { status: 403, body: { error: { code: 'forbidden', message: 'only an agent in the call leaves it' } } }, [], 1],
      ['the relay cannot say', SERVER_ERROR, ['terminate'], 4],
    ];
    for (const [what, reply, gateway, leaves] of cases) {
      const p = await parts();
      p.bridge.setBridged(true);
      leaveAnswers(p, reply);
      expect(await p.bridge.terminate(CALL), what).toEqual({ ok: true, value: null });
      expect(p.relay.seen(), what).toEqual(LEAVES(leaves));
      expect(p.gateway.actions(), what).toEqual(gateway);
    }
  });

  it('a call of a bridged team that went direct here (no leg to be had, no node live) is terminated at the gateway alone', async () => {
    const p = await parts();
    p.bridge.setBridged(true);
    p.relay.onRequest = (req) => (req.path.endsWith('/bridge/leg') || req.path === '/bridge/dial' ? { status: 503, body: { error: { code: 'unavailable', message: 'no node' } } } : undefined);
    await p.deliver({ type: 'call.incoming', callId: CALL, from: '442079460958', sdp: OFFER_SDP, timestamp: Date.now(), bridged: true });
    expect(await p.bridge.accept(CALL, ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(await p.bridge.terminate(CALL)).toEqual({ ok: true, value: null });
    const placed = await p.bridge.initiate('12025550143', DIAL_OFFER_SDP);
    if (!placed.ok) throw new Error(placed.error.message);
    expect(await p.bridge.terminate(placed.value.callId)).toEqual({ ok: true, value: null });
    expect(p.relay.seen(/leave$/)).toEqual([]);
    expect(p.gateway.actions()).toEqual(['accept', 'terminate', 'initiate', 'terminate']);
  });

  it('a direct call is terminated at the gateway alone', async () => {
    const p = await parts();
    expect(await p.bridge.terminate('wacid.direct-1')).toEqual({ ok: true, value: null });
    const direct = await parts();
    direct.bridge.setBridged(false);
    expect(await direct.bridge.terminate('wacid.direct-1')).toEqual({ ok: true, value: null });
    for (const q of [p, direct]) {
      expect(q.relay.requests).toEqual([]);
      expect(q.gateway.actions()).toEqual(['terminate']);
    }
  });
});

describe('BridgedCallControl: a transfer ring the call reducer does not open', () => {
  it('leaves no leg: the call of that id is no colleague’s here, and its hang-up may end it at the gateway', async () => {
    const p = await parts();
    p.bridge.setBridged(true);
    // A ring the reducer drops (its relay ring is over): no call opens, so nothing announces it.
    await p.deliver(ring({ timestamp: Date.now() - 60_000 }));
    expect(p.bridge.isBridgedCall(CALL)).toBe(false);
    p.relay.onRequest = (req) => (req.path.endsWith('/bridge/leave') ? { status: 503, body: { error: { code: 'unavailable', message: 'restarting' } } } : undefined);
    expect(await p.bridge.terminate(CALL)).toEqual({ ok: true, value: null });
    expect(p.gateway.actions()).toEqual(['terminate']);
  });

  it('keeps the legs of rings not yet opened for the newest 64 rings only', async () => {
    const p = await parts();
    for (let n = 0; n <= 64; n += 1) await p.deliver(ring({ transferId: `xfer-${n}`, legId: `leg-${n}` }));
    p.bridge.callChanged(announced('tr:xfer-0', 'ringing', { bridged: true, transfer: { ...asked('ringing'), id: 'xfer-0' } }));
    expect(p.bridge.isBridgedCall(CALL)).toBe(false);
    p.bridge.callChanged(announced('tr:xfer-1', 'ringing', { bridged: true, transfer: { ...asked('ringing'), id: 'xfer-1' } }));
    await p.bridge.accept(CALL, ANSWER_SDP);
    expect(p.relay.requests.at(-1)).toEqual({ method: 'POST', path: `/calls/${CALL}/bridge/transfer/xfer-1/answer`, body: { legId: 'leg-1', sdp: ANSWER_SDP } });
  });

  it('a ring of a call live here leaves the call’s own leg, and an older ring’s leg is not taken by a later announcement of another call', async () => {
    const p = await parts();
    await p.deliver({ type: 'call.incoming', callId: CALL, from: '442079460958', sdp: OFFER_SDP, timestamp: Date.now(), bridged: true });
    p.bridge.callChanged(announced(`in:${CALL}`, 'ringing', { bridged: true }));
    await p.deliver(ring());
    p.bridge.callChanged(announced(`in:${CALL}`, 'active', { bridged: true }));
    await p.bridge.accept(CALL, ANSWER_SDP);
    expect(p.relay.seen(/answer$/)).toEqual([`POST /calls/${CALL}/bridge/answer`]);
    // Ended and hung up: a leave, and the gateway when the relay cannot say (the ring dropped is no colleague's call).
    p.bridge.callChanged(announced(`in:${CALL}`, 'ended', { bridged: true }));
    p.relay.onRequest = (req) => (req.path.endsWith('/bridge/leave') ? { status: 500, body: { error: { code: 'internal', message: 'boom' } } } : undefined);
    expect(await p.bridge.terminate(CALL)).toEqual({ ok: true, value: null });
    expect(p.gateway.actions()).toEqual(['accept', 'terminate']);
  });
});

describe('BridgedCallControl: hold and this agent’s transfer', () => {
  it('a held call whose consult the colleague answers is taken off hold by the relay: the bridge is not told again', async () => {
    const p = await parts();
    await p.deliver({ type: 'call.incoming', callId: CALL, from: '442079460958', sdp: OFFER_SDP, timestamp: Date.now(), bridged: true });
    p.bridge.callChanged(announced(`in:${CALL}`, 'ringing', { bridged: true }));
    await p.bridge.accept(CALL, ANSWER_SDP);
    p.bridge.callChanged(announced(`in:${CALL}`, 'active', { bridged: true }));
    p.bridge.callChanged(announced(`in:${CALL}`, 'active', { bridged: true, heldSince: 10 }));
    p.bridge.callChanged(announced(`in:${CALL}`, 'active', { bridged: true, heldSince: 10, transfer: own('ringing') }));
    p.bridge.callChanged(announced(`in:${CALL}`, 'active', { bridged: true, heldMs: 5, transfer: own('consulting') }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(p.relay.requests.filter((r) => r.path.endsWith('/bridge/hold')).map((r) => r.body)).toEqual([{ held: true }]);
    // Back with the customer, the agent holds and resumes as before.
    p.bridge.callChanged(announced(`in:${CALL}`, 'active', { bridged: true, heldMs: 5, transfer: own('done') }));
    p.bridge.callChanged(announced(`in:${CALL}`, 'active', { bridged: true, heldMs: 5, heldSince: 20, transfer: own('done') }));
    p.bridge.callChanged(announced(`in:${CALL}`, 'active', { bridged: true, heldMs: 9, transfer: own('done') }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(p.relay.requests.filter((r) => r.path.endsWith('/bridge/hold')).map((r) => r.body)).toEqual([{ held: true }, { held: true }, { held: false }]);
  });
});

describe('BridgedCallControl: a dial through the bridge', () => {
  it('says the call it placed is bridged; a direct one is not', async () => {
    const p = await parts();
    const placed = await p.bridge.initiate('12025550143', DIAL_OFFER_SDP);
    expect(placed.ok && placed.value.bridged).toBe(true);
    expect(p.gateway.requests[0]?.body).toMatchObject({ session: { sdp: CUSTOMER_LEG_OFFER_SDP } });
    const direct = await parts();
    direct.relay.bridged = false;
    const placedDirect = await direct.bridge.initiate('12025550143', DIAL_OFFER_SDP);
    expect(placedDirect.ok).toBe(true);
    if (placedDirect.ok) expect(placedDirect.value).not.toHaveProperty('bridged');
  });
});

describe('callEventOf: the relay’s transfer events', () => {
  const envelope = (event: RelayEvent): RelayEnvelope => ({ id: 'e-1', receivedAt: 1, event });

  it('a bridged ring stays bridged; a transfer’s ring is a call event of its own with the customer, the leg’s offer and who asks', () => {
    expect(callEventOf(envelope({ type: 'call.incoming', callId: CALL, from: '442079460958', sdp: LEG_OFFER_SDP, timestamp: 5, bridged: true }), 9, AGENT_ID)).toEqual({
      type: 'remote.incoming',
      at: 9,
      callId: CALL,
      peer: { number: '442079460958' },
      offerSdp: LEG_OFFER_SDP,
      timestamp: 5,
      bridged: true,
    });
    expect(callEventOf(envelope(ring({ timestamp: 5, fromUserId: 'BSUID.1' })), 9, AGENT_ID)).toEqual({
      type: 'remote.transfer_ring',
      at: 9,
      callId: CALL,
      transferId: TRANSFER,
      kind: 'consult',
      by: BOB,
      peer: { number: '442079460958', userId: 'BSUID.1', name: 'Ada Lovelace' },
      offerSdp: LEG_OFFER_SDP,
      timestamp: 5,
    });
  });

  it('a transfer’s outcome is this agent’s only when told to it; while its own id is unknown it is taken as its own', () => {
    const update: RelayEvent = { type: 'call.transfer_update', callId: CALL, transferId: TRANSFER, kind: 'transfer', agentId: AGENT_ID, state: 'not_answered', colleague: CAROL, reason: 'no_answer', timestamp: 5 };
    const expected = { type: 'remote.transfer', at: 9, callId: CALL, transferId: TRANSFER, kind: 'transfer', state: 'not_answered', colleague: CAROL, reason: 'no_answer' };
    expect(callEventOf(envelope(update), 9, AGENT_ID)).toEqual(expected);
    expect(callEventOf(envelope(update), 9, undefined)).toEqual(expected);
    expect(callEventOf(envelope({ ...update, agentId: 'bob' }), 9, AGENT_ID)).toBeUndefined();
    const { colleague: _c, reason: _r, ...bare } = update;
    expect(callEventOf(envelope(bare), 9, AGENT_ID)).toEqual({ type: 'remote.transfer', at: 9, callId: CALL, transferId: TRANSFER, kind: 'transfer', state: 'not_answered' });
  });
});

// The bridge's answer for the gateway is the relay's, never the window's.
describe('BridgedCallControl: an incoming bridged call still accepts as before', () => {
  it('hands the window’s answer to the bridge and accepts with the bridge’s', async () => {
    const p = await parts();
    await p.deliver({ type: 'call.incoming', callId: CALL, from: '442079460958', sdp: OFFER_SDP, timestamp: Date.now(), bridged: true });
    expect(await p.bridge.accept(CALL, ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(p.relay.seen()).toEqual([`POST /calls/${CALL}/bridge/leg`, `POST /calls/${CALL}/bridge/answer`, `POST /calls/${CALL}/bridge/accepted`]);
    expect(p.gateway.requests[0]?.body).toMatchObject({ action: 'accept', session: { sdp: BRIDGE_ANSWER_SDP } });
  });
});
