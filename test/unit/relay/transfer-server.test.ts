// The transfer endpoints over HTTP (relay/REFERENCE.md "Transfers"): a real relay, its agents'
// event streams, and a node that records what it is asked (transfer-fixtures.ts). Each endpoint's
// status codes and bodies, the team's presences, and that each agent's stream carries the words
// meant for it — and a transferred call's end for everyone in it, nobody else.
import { afterEach, describe, expect, it } from 'vitest';
import { localBridge } from '../../../relay/bridged-calls';
import { startRelay, type RelayServer } from '../../../relay/server';
import { BRIDGE_AGENT_PATHS } from '../../../shared/bridge';
import type { RelayEvent } from '../../../shared/events';
import { TRANSFER_PATHS } from '../../../shared/transfer';
import { claimCall, putPresence, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { quietLogger, RecordingBridge } from './transfer-fixtures';
import { APP_SECRET, incomingCall, postWebhook, terminatedCall } from './webhook-fixtures';

const { agents, tokens } = team('alice', 'bob', 'carol', 'dave');
const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

async function relayWith(options: { bridged: boolean }): Promise<RelayServer> {
  const relay = await startRelay({
    port: 0,
    appSecret: APP_SECRET,
    agents,
    heartbeatMs: 60_000,
    logger: quietLogger,
    ...(options.bridged ? { bridgeNodes: localBridge(new RecordingBridge()) } : {}),
  });
  closing.push(() => relay.close());
  return relay;
}

async function stream(relay: RelayServer, agentId: string): Promise<TestSseStream> {
  const opened = await openSse(relay.url, { token: tokens[agentId] });
  closing.push(() => opened.close());
  return opened;
}

async function ask(relay: RelayServer, agentId: string | undefined, path: string, body?: unknown, method = 'POST'): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${relay.url}${path}`, {
    method,
    headers: { ...(agentId !== undefined ? { authorization: `Bearer ${tokens[agentId]}` } : {}), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const has = (predicate: (event: RelayEvent) => boolean) => (s: TestSseStream) => s.envelopes.some((e) => predicate(e.event));
const update = (state: string) => (event: RelayEvent) => event.type === 'call.transfer_update' && event.state === state;
const updates = (s: TestSseStream) => s.envelopes.flatMap((e) => (e.event.type === 'call.transfer_update' ? [`${e.event.agentId}:${e.event.state}`] : []));

/** A bridged call rung for everyone, answered and accepted by alice as the app does it. */
async function answered(relay: RelayServer, alice: TestSseStream, callId: string): Promise<void> {
  expect((await postWebhook(relay.url, incomingCall(callId))).status).toBe(200);
  await alice.waitFor(has((e) => e.type === 'call.incoming' && e.callId === callId), 'the ring');
  const leg = await ask(relay, 'alice', BRIDGE_AGENT_PATHS.leg(callId));
  expect(leg.status).toBe(200);
  expect((await claimCall(relay.url, tokens.alice!, callId)).status).toBe(200);
  expect((await ask(relay, 'alice', BRIDGE_AGENT_PATHS.answer(callId), { legId: leg.body.legId, sdp: 'window-answer' })).status).toBe(200);
  expect((await ask(relay, 'alice', BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
}

describe('GET /team', () => {
  it('every agent by name with its presence: reported, else available with a stream, else offline; the asker is `self`', async () => {
    for (const bridged of [true, false]) {
      const relay = await relayWith({ bridged });
      await stream(relay, 'alice');
      await stream(relay, 'bob');
      await stream(relay, 'carol');
      expect((await putPresence(relay.url, tokens.bob!, { status: 'on_call' })).status).toBe(200);
      expect((await putPresence(relay.url, tokens.dave!, { status: 'dnd' })).status).toBe(200);
      expect(await ask(relay, 'carol', TRANSFER_PATHS.team, undefined, 'GET')).toEqual({
        status: 200,
        body: {
          agents: [
            { agentId: 'alice', name: 'Alice Agent', presence: 'available' },
            { agentId: 'bob', name: 'Bob Agent', presence: 'on_call', since: expect.any(Number) },
            { agentId: 'carol', name: 'Carol Agent', presence: 'available', self: true },
            { agentId: 'dave', name: 'Dave Agent', presence: 'dnd', since: expect.any(Number) },
          ],
        },
      });
      expect((await ask(relay, undefined, TRANSFER_PATHS.team, undefined, 'GET')).status).toBe(401);
      expect(await ask(relay, 'carol', TRANSFER_PATHS.team, {})).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });
    }
  });

  it('an agent never seen is offline', async () => {
    const relay = await relayWith({ bridged: false });
    const reply = await ask(relay, 'alice', TRANSFER_PATHS.team, undefined, 'GET');
    expect((reply.body.agents as { agentId: string; presence: string }[]).map((a) => `${a.agentId}:${a.presence}`)).toEqual(['alice:offline', 'bob:offline', 'carol:offline', 'dave:offline']);
  });
});

describe('the transfer endpoints', () => {
  it('a relay that does not bridge calls answers 404, after the token', async () => {
    const relay = await relayWith({ bridged: false });
    expect(await ask(relay, 'alice', TRANSFER_PATHS.start('wacid.x'), { to: 'bob', kind: 'transfer' })).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'calls are not bridged' } } });
    expect(await ask(relay, 'alice', TRANSFER_PATHS.leave('wacid.x'))).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'calls are not bridged' } } });
    expect((await ask(relay, undefined, TRANSFER_PATHS.join('wacid.x', 'xfer-1'))).status).toBe(401);
  });

  it('a consult joined into a three-way call, each agent told its part, the call’s end told to both and to nobody else', async () => {
    const relay = await relayWith({ bridged: true });
    const [alice, bob, carol] = [await stream(relay, 'alice'), await stream(relay, 'bob'), await stream(relay, 'carol')];
    const callId = 'wacid.h1';
    await answered(relay, alice, callId);

    // Refusals before anything rings.
    expect((await ask(relay, undefined, TRANSFER_PATHS.start(callId), { to: 'bob', kind: 'consult' })).status).toBe(401);
    expect(await ask(relay, 'alice', TRANSFER_PATHS.start(callId), undefined, 'GET')).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });
    expect(await ask(relay, 'alice', TRANSFER_PATHS.start(callId), {})).toMatchObject({ status: 400, body: { error: { code: 'invalid_input', field: 'to' } } });
    expect(await ask(relay, 'alice', TRANSFER_PATHS.start(callId), { to: 'bob', kind: 'forward' })).toMatchObject({ status: 400, body: { error: { code: 'invalid_input', field: 'kind' } } });
    expect(await ask(relay, 'bob', TRANSFER_PATHS.start(callId), { to: 'carol', kind: 'consult' })).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect(await ask(relay, 'alice', TRANSFER_PATHS.start('wacid.nope'), { to: 'bob', kind: 'consult' })).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect(await ask(relay, 'alice', TRANSFER_PATHS.start(callId), { to: 'zed', kind: 'consult' })).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'to: no agent zed in the team', field: 'to' } } });
    expect(await ask(relay, 'alice', TRANSFER_PATHS.start(callId), { to: 'alice', kind: 'consult' })).toMatchObject({ status: 400, body: { error: { field: 'to' } } });
    expect(await ask(relay, 'alice', TRANSFER_PATHS.start(callId), { to: 'dave', kind: 'consult' })).toEqual({ status: 409, body: { error: { code: 'invalid_state', message: 'Dave Agent is offline' } } });

    const started = await ask(relay, 'alice', TRANSFER_PATHS.start(callId), { to: 'bob', kind: 'consult' });
    expect(started.status).toBe(200);
    const transferId = String(started.body.transferId);
    await bob.waitFor(has((e) => e.type === 'call.transfer_ring'), 'bob’s ring');
    const ring = bob.envelopes.find((e) => e.event.type === 'call.transfer_ring')!.event;
    expect(ring).toMatchObject({ callId, transferId, kind: 'consult', by: { agentId: 'alice', name: 'Alice Agent' }, from: '447700900123', name: 'Ada Customer' });
    if (ring.type !== 'call.transfer_ring') throw new Error('not a ring');
    await alice.waitFor(has(update('ringing')), 'alice told it rings');

    expect(await ask(relay, 'bob', TRANSFER_PATHS.answer(callId, transferId), { sdp: 'window-answer' })).toMatchObject({ status: 400, body: { error: { field: 'legId' } } });
    expect(await ask(relay, 'carol', TRANSFER_PATHS.answer(callId, transferId), { legId: ring.legId, sdp: 'x' })).toMatchObject({ status: 404 });
    expect(await ask(relay, 'alice', TRANSFER_PATHS.join(callId, transferId))).toMatchObject({ status: 409, body: { error: { code: 'invalid_state' } } });
    expect(await ask(relay, 'bob', TRANSFER_PATHS.answer(callId, transferId), { legId: ring.legId, sdp: 'window-answer' })).toEqual({ status: 200, body: { ok: true } });
    await alice.waitFor(has(update('consulting')), 'alice told bob answered');
    expect(await ask(relay, 'bob', TRANSFER_PATHS.join(callId, transferId))).toMatchObject({ status: 403 });
    expect(await ask(relay, 'alice', TRANSFER_PATHS.join(callId, transferId))).toEqual({ status: 200, body: { ok: true } });
    await bob.waitFor(has(update('joined')), 'bob told of the three-way call');
    expect(await ask(relay, 'alice', TRANSFER_PATHS.complete(callId, transferId))).toMatchObject({ status: 409, body: { error: { code: 'invalid_state' } } });

    expect(await ask(relay, 'carol', TRANSFER_PATHS.leave(callId))).toMatchObject({ status: 403 });
    expect(await ask(relay, 'bob', TRANSFER_PATHS.leave(callId))).toEqual({ status: 200, body: { last: false } });
    await alice.waitFor(has(update('with_customer')), 'alice told she is alone with the customer');
    expect(await ask(relay, 'alice', TRANSFER_PATHS.leave(callId))).toEqual({ status: 200, body: { last: true } });

    expect((await postWebhook(relay.url, terminatedCall(callId))).status).toBe(200);
    const ended = has((e) => e.type === 'call.terminated' && e.callId === callId);
    await alice.waitFor(ended, 'alice told the call ended');
    await bob.waitFor(ended, 'bob told the call ended');
    expect(updates(alice)).toEqual(['alice:ringing', 'alice:consulting', 'alice:joined', 'alice:with_customer']);
    expect(updates(bob)).toEqual(['bob:joined']);
    expect(ended(carol)).toBe(false);
    expect(carol.envelopes.some((e) => e.event.type.startsWith('call.transfer'))).toBe(false);
  });

  it('"Anyone available": the first answer is taken, the second is 409 already_claimed and told so on its stream', async () => {
    const relay = await relayWith({ bridged: true });
    const [alice, bob, carol] = [await stream(relay, 'alice'), await stream(relay, 'bob'), await stream(relay, 'carol')];
    const callId = 'wacid.h2';
    await answered(relay, alice, callId);
    const started = await ask(relay, 'alice', TRANSFER_PATHS.start(callId), { to: 'available', kind: 'transfer' });
    expect(started.status).toBe(200);
    const transferId = String(started.body.transferId);
    const ringOf = async (s: TestSseStream) => {
      await s.waitFor(has((e) => e.type === 'call.transfer_ring'), 'a ring');
      const event = s.envelopes.find((e) => e.event.type === 'call.transfer_ring')!.event;
      return event.type === 'call.transfer_ring' ? event.legId : '';
    };
    const [bobLeg, carolLeg] = [await ringOf(bob), await ringOf(carol)];
    expect(await ask(relay, 'carol', TRANSFER_PATHS.answer(callId, transferId), { legId: carolLeg, sdp: 'window-answer' })).toEqual({ status: 200, body: { ok: true } });
    expect(await ask(relay, 'bob', TRANSFER_PATHS.answer(callId, transferId), { legId: bobLeg, sdp: 'window-answer' })).toEqual({
      status: 409,
      body: { error: { code: 'already_claimed', message: 'Carol Agent answered the transfer first' } },
    });
    await bob.waitFor(has(update('answered_elsewhere')), 'bob told carol answered');
    await alice.waitFor(has(update('transferred')), 'alice told the customer is carol’s');
    expect(await ask(relay, 'alice', BRIDGE_AGENT_PATHS.hold(callId), { held: true })).toMatchObject({ status: 403 });
    expect(await ask(relay, 'carol', BRIDGE_AGENT_PATHS.hold(callId), { held: true })).toEqual({ status: 200, body: { ok: true } });
    expect(await ask(relay, 'carol', TRANSFER_PATHS.decline(callId, transferId))).toMatchObject({ status: 409 });
    expect(await ask(relay, 'alice', TRANSFER_PATHS.cancel(callId, transferId))).toMatchObject({ status: 409 });
  });
});
