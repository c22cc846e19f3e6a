// The supervisors' endpoints over HTTP (relay/REFERENCE.md "Supervisors", shared/supervision.ts): a
// real relay, its agents' event streams, and (for bridged calls) a node that records what it is asked
// (transfer-fixtures.ts). 403 before anything else for agents who are not supervisors; the live calls
// ringing, talking, on hold and transferring; joining, switching and leaving, each told to whom it
// concerns, with and without the team telling of listens; a joined supervisor not rung.
import { afterEach, describe, expect, it } from 'vitest';
import { LocalNodeEvents, localBridge } from '../../../relay/bridged-calls';
import { NOT_A_SUPERVISOR } from '../../../relay/monitor-endpoints';
import { startRelay, type RelayServer } from '../../../relay/server';
import { BRIDGE_AGENT_PATHS } from '../../../shared/bridge';
import type { RelayEvent } from '../../../shared/events';
import { liveCallsSchema, SUPERVISOR_PATHS, type LiveCall } from '../../../shared/supervision';
import { TRANSFER_PATHS } from '../../../shared/transfer';
import { claimCall, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { quietLogger, RecordingBridge } from './transfer-fixtures';
import { APP_SECRET, callStatus, CUSTOMER, incomingCall, postWebhook, terminatedCall } from './webhook-fixtures';

const base = team('alice', 'bob', 'sam', 'sue');
const agents = base.agents.map((a) => (a.id === 'sam' || a.id === 'sue' ? { ...a, name: a.id === 'sam' ? 'Sam Lead' : 'Sue Lead', role: 'supervisor' as const } : a));
const { tokens } = base;

const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

async function relayWith(options: { bridged: boolean; tell?: boolean; rejoinWindowMs?: number }): Promise<{ relay: RelayServer; node: RecordingBridge; events: LocalNodeEvents }> {
  const node = new RecordingBridge();
  const events = new LocalNodeEvents();
  const relay = await startRelay({
    port: 0,
    appSecret: APP_SECRET,
    agents,
    heartbeatMs: 60_000,
    logger: quietLogger,
    ...(options.bridged ? { bridgeNodes: localBridge(node, 'local', events) } : {}),
    ...(options.tell === true ? { tellAgentsWhenMonitored: true } : {}),
    ...(options.rejoinWindowMs !== undefined ? { rejoinWindowMs: options.rejoinWindowMs } : {}),
  });
  closing.push(() => relay.close());
  return { relay, node, events };
}

async function stream(relay: RelayServer, agentId: string): Promise<TestSseStream> {
  const opened = await openSse(relay.url, { token: tokens[agentId] });
  closing.push(() => opened.close());
  return opened;
}

async function ask(relay: RelayServer, agentId: string | undefined, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${relay.url}${path}`, {
    method,
    headers: { ...(agentId !== undefined ? { authorization: `Bearer ${tokens[agentId]}` } : {}), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function liveCalls(relay: RelayServer, agentId = 'sam'): Promise<LiveCall[]> {
  const answer = await ask(relay, agentId, 'GET', SUPERVISOR_PATHS.liveCalls);
  expect(answer.status).toBe(200);
  return liveCallsSchema.parse(answer.body).calls;
}

const has = (predicate: (event: RelayEvent) => boolean) => (s: TestSseStream) => s.envelopes.some((e) => predicate(e.event));
/** The supervisors' events a stream got, as `supervisor:mode[:reason]`. */
const monitorWords = (s: TestSseStream) => s.envelopes.flatMap((e) => (e.event.type === 'call.monitor' ? [`${e.event.supervisorId}:${e.event.mode}${e.event.reason !== undefined ? `:${e.event.reason}` : ''}`] : []));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A bridged call rung for everyone, answered and accepted by `agentId` as the app does it. */
async function answeredBridged(relay: RelayServer, agentStream: TestSseStream, callId: string, agentId = 'alice'): Promise<void> {
  expect((await postWebhook(relay.url, incomingCall(callId))).status).toBe(200);
  await agentStream.waitFor(has((e) => e.type === 'call.incoming' && e.callId === callId), 'the ring');
  const leg = await ask(relay, agentId, 'POST', BRIDGE_AGENT_PATHS.leg(callId));
  expect(leg.status).toBe(200);
  expect((await claimCall(relay.url, tokens[agentId]!, callId)).status).toBe(200);
  expect((await ask(relay, agentId, 'POST', BRIDGE_AGENT_PATHS.answer(callId), { legId: leg.body.legId, sdp: `window-answer-${agentId}` })).status).toBe(200);
  expect((await ask(relay, agentId, 'POST', BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
}

/** Sam joins the call in `mode` and his window answers its leg. */
async function join(relay: RelayServer, callId: string, mode: string, supervisor = 'sam'): Promise<string> {
  const joined = await ask(relay, supervisor, 'POST', SUPERVISOR_PATHS.monitor(callId), { mode });
  expect(joined).toMatchObject({ status: 200, body: { legId: expect.stringMatching(/^leg-/) as string, offer: expect.any(String) as string, mode } });
  const legId = String(joined.body.legId);
  expect(await ask(relay, supervisor, 'POST', SUPERVISOR_PATHS.monitorAnswer(callId), { legId, sdp: `window-answer-${supervisor}` })).toEqual({ status: 200, body: { ok: true } });
  return legId;
}

describe('who may ask', () => {
  it('an agent who is not a supervisor gets 403 from every endpoint and method, before its body, its call or its method are looked at', async () => {
    for (const bridged of [true, false]) {
      const { relay } = await relayWith({ bridged });
      await stream(relay, 'alice');
      await answeredBridgedOrDirect(relay, bridged);
      const requests: Array<[string, string, unknown?]> = [
        ['GET', SUPERVISOR_PATHS.liveCalls],
        ['POST', SUPERVISOR_PATHS.liveCalls, { mode: 'listen' }],
        ['POST', SUPERVISOR_PATHS.monitor('wacid.live'), { mode: 'listen' }],
        ['POST', SUPERVISOR_PATHS.monitor('wacid.live'), {}],
        ['POST', SUPERVISOR_PATHS.monitor('wacid.live'), 'not json'],
        ['POST', SUPERVISOR_PATHS.monitor('wacid.nope'), { mode: 'barge' }],
        ['POST', '/team/calls/%E0%A4%A/monitor', { mode: 'barge' }],
        ['PUT', SUPERVISOR_PATHS.monitor('wacid.live'), { mode: 'whisper' }],
        ['PUT', SUPERVISOR_PATHS.monitor('wacid.live'), { mode: 'shout' }],
        ['DELETE', SUPERVISOR_PATHS.monitor('wacid.live')],
        ['PATCH', SUPERVISOR_PATHS.monitor('wacid.live'), { mode: 'listen' }],
        ['POST', SUPERVISOR_PATHS.monitorAnswer('wacid.live'), { legId: 'leg-x', sdp: 'v=0' }],
        ['POST', SUPERVISOR_PATHS.monitorAnswer('wacid.live'), {}],
        ['GET', SUPERVISOR_PATHS.monitorAnswer('wacid.live')],
      ];
      for (const [method, path, body] of requests) {
        expect({ method, path, answer: await ask(relay, 'alice', method, path, body) }).toEqual({ method, path, answer: { status: 403, body: { error: { code: 'forbidden', message: NOT_A_SUPERVISOR } } } });
        expect((await ask(relay, undefined, method, path, body)).status).toBe(401);
        // A supervisor asking the same is answered on its merits: never 403.
        expect((await ask(relay, 'sam', method, path, body)).status).not.toBe(403);
      }
    }
  });
});

/** A live call 'wacid.live': bridged and answered by alice, or direct and claimed by her. */
async function answeredBridgedOrDirect(relay: RelayServer, bridged: boolean): Promise<void> {
  const alice = await stream(relay, 'alice');
  if (bridged) return answeredBridged(relay, alice, 'wacid.live');
  expect((await postWebhook(relay.url, incomingCall('wacid.live'))).status).toBe(200);
  await alice.waitFor(has((e) => e.type === 'call.incoming'), 'the ring');
  expect((await claimCall(relay.url, tokens.alice!, 'wacid.live')).status).toBe(200);
}

describe('GET /team/calls', () => {
  it('direct calls: ringing, talking, on hold as the app reports it, an outgoing one from its statuses, each gone at its end; none can be joined', async () => {
    const { relay } = await relayWith({ bridged: false });
    const alice = await stream(relay, 'alice');
    await stream(relay, 'sam');
    expect(await ask(relay, 'sam', 'GET', SUPERVISOR_PATHS.liveCalls)).toEqual({ status: 200, body: { at: expect.any(Number) as number, calls: [] } });

    expect((await postWebhook(relay.url, incomingCall('wacid.d1'))).status).toBe(200);
    await alice.waitFor(has((e) => e.type === 'call.incoming'), 'the ring');
    const [ringing] = await liveCalls(relay);
    expect(ringing).toEqual({ callId: 'wacid.d1', direction: 'incoming', customer: { number: CUSTOMER, name: 'Ada Customer' }, agents: [], state: 'ringing', startedAt: expect.any(Number) as number, bridged: false, monitors: [] });
    expect(await ask(relay, 'sam', 'POST', SUPERVISOR_PATHS.monitor('wacid.d1'), { mode: 'listen' })).toMatchObject({ status: 409, body: { error: { code: 'invalid_state' } } });

    expect((await claimCall(relay.url, tokens.alice!, 'wacid.d1')).status).toBe(200);
    const [talking] = await liveCalls(relay);
    expect(talking).toMatchObject({ callId: 'wacid.d1', agents: [{ id: 'alice', name: 'Alice Agent' }], state: 'talking', answeredAt: expect.any(Number) as number, bridged: false });
    expect(talking!.answeredAt!).toBeGreaterThanOrEqual(talking!.startedAt);
    expect(talking!.quality).toBeUndefined();

    expect((await ask(relay, 'alice', 'PUT', '/calls/wacid.d1/hold', { held: true })).status).toBe(200);
    expect((await liveCalls(relay))[0]!.state).toBe('on_hold');
    expect((await ask(relay, 'alice', 'PUT', '/calls/wacid.d1/hold', { held: false })).status).toBe(200);
    expect((await liveCalls(relay))[0]!.state).toBe('talking');

    // Bob's outgoing call: rings the customer until the service says it was accepted.
    expect((await claimCall(relay.url, tokens.bob!, 'wacid.out1')).status).toBe(200);
    expect((await postWebhook(relay.url, callStatus('wacid.out1', 'RINGING'))).status).toBe(200);
    await expect.poll(async () => (await liveCalls(relay)).find((c) => c.callId === 'wacid.out1')?.customer).toEqual({ number: CUSTOMER });
    expect((await liveCalls(relay)).find((c) => c.callId === 'wacid.out1')).toMatchObject({ direction: 'outgoing', agents: [{ id: 'bob', name: 'Bob Agent' }], state: 'ringing', bridged: false });
    expect(await ask(relay, 'sam', 'POST', SUPERVISOR_PATHS.monitor('wacid.out1'), { mode: 'listen' })).toEqual({
      status: 409,
      body: { error: { code: 'invalid_state', message: "call wacid.out1 is a direct call: only a call through the team's bridge can be joined" } },
    });
    expect((await postWebhook(relay.url, callStatus('wacid.out1', 'ACCEPTED'))).status).toBe(200);
    await expect.poll(async () => (await liveCalls(relay)).find((c) => c.callId === 'wacid.out1')?.state).toBe('talking');
    expect((await liveCalls(relay)).map((c) => c.callId)).toEqual(['wacid.d1', 'wacid.out1']);

    // Neither can be joined; an unknown call is 404, a switch 404, a leave no error.
    expect(await ask(relay, 'sam', 'POST', SUPERVISOR_PATHS.monitor('wacid.d1'), { mode: 'barge' })).toMatchObject({ status: 409, body: { error: { code: 'invalid_state' } } });
    expect(await ask(relay, 'sam', 'POST', SUPERVISOR_PATHS.monitor('wacid.gone'), { mode: 'barge' })).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'no live call wacid.gone' } } });
    expect(await ask(relay, 'sam', 'PUT', SUPERVISOR_PATHS.monitor('wacid.d1'), { mode: 'barge' })).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect(await ask(relay, 'sam', 'POST', SUPERVISOR_PATHS.monitorAnswer('wacid.d1'), { legId: 'leg-x', sdp: 'v=0' })).toMatchObject({ status: 404 });
    expect(await ask(relay, 'sam', 'DELETE', SUPERVISOR_PATHS.monitor('wacid.d1'))).toEqual({ status: 200, body: { ok: true } });

    for (const callId of ['wacid.d1', 'wacid.out1']) expect((await postWebhook(relay.url, terminatedCall(callId))).status).toBe(200);
    await expect.poll(async () => (await liveCalls(relay)).length).toBe(0);
  });

  it('answers only GET on the list, and POST, PUT and DELETE on a call’s monitor; bodies are checked naming their field', async () => {
    const { relay } = await relayWith({ bridged: true });
    expect(await ask(relay, 'sam', 'POST', SUPERVISOR_PATHS.liveCalls)).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });
    const res = await fetch(`${relay.url}${SUPERVISOR_PATHS.monitor('wacid.x')}`, { method: 'GET', headers: { authorization: `Bearer ${tokens.sam}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST, PUT, DELETE');
    expect(await ask(relay, 'sam', 'POST', SUPERVISOR_PATHS.monitor('wacid.x'), {})).toMatchObject({ status: 400, body: { error: { code: 'invalid_input', field: 'mode' } } });
    expect(await ask(relay, 'sam', 'PUT', SUPERVISOR_PATHS.monitor('wacid.x'), { mode: 'shout' })).toMatchObject({ status: 400, body: { error: { code: 'invalid_input', field: 'mode' } } });
    expect(await ask(relay, 'sam', 'POST', SUPERVISOR_PATHS.monitorAnswer('wacid.x'), { legId: 'leg-x' })).toMatchObject({ status: 400, body: { error: { code: 'invalid_input', field: 'sdp' } } });
    expect(await ask(relay, 'sam', 'POST', '/team/calls/%E0%A4%A/monitor', { mode: 'listen' })).toMatchObject({ status: 400, body: { error: { code: 'invalid_input', field: 'callId' } } });
  });
});

describe('joining a bridged call', () => {
  it('ringing, talking with its quality, joined, on hold, transferring; each change told to whom it concerns; a joined supervisor is not rung', async () => {
    const { relay, node } = await relayWith({ bridged: true });
    const [alice, bob, sam] = [await stream(relay, 'alice'), await stream(relay, 'bob'), await stream(relay, 'sam')];
    const callId = 'wacid.b1';

    expect((await postWebhook(relay.url, incomingCall(callId))).status).toBe(200);
    await alice.waitFor(has((e) => e.type === 'call.incoming'), 'the ring');
    expect(await liveCalls(relay)).toEqual([{ callId, direction: 'incoming', customer: { number: CUSTOMER, name: 'Ada Customer' }, agents: [], state: 'ringing', startedAt: expect.any(Number) as number, bridged: true, monitors: [] }]);
    expect(await ask(relay, 'sam', 'POST', SUPERVISOR_PATHS.monitor(callId), { mode: 'listen' })).toEqual({ status: 409, body: { error: { code: 'invalid_state', message: `call ${callId} is not answered yet` } } });

    const leg = await ask(relay, 'alice', 'POST', BRIDGE_AGENT_PATHS.leg(callId));
    expect((await claimCall(relay.url, tokens.alice!, callId)).status).toBe(200);
    expect((await ask(relay, 'alice', 'POST', BRIDGE_AGENT_PATHS.answer(callId), { legId: leg.body.legId, sdp: 'window-answer-alice' })).status).toBe(200);
    expect((await ask(relay, 'alice', 'POST', BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
    // The recording node's customer leg: 10 packets, none lost, no jitter or round trip measured yet.
    expect(await liveCalls(relay)).toEqual([
      { callId, direction: 'incoming', customer: { number: CUSTOMER, name: 'Ada Customer' }, agents: [{ id: 'alice', name: 'Alice Agent' }], state: 'talking', startedAt: expect.any(Number) as number, answeredAt: expect.any(Number) as number, bridged: true, quality: { mos: 4.4, lossPercent: 0 }, monitors: [] },
    ]);
    expect(await ask(relay, 'alice', 'POST', SUPERVISOR_PATHS.monitor(callId), { mode: 'listen' })).toMatchObject({ status: 403 });

    const samLeg = await join(relay, callId, 'listen');
    expect(node.routes.get(callId)?.[samLeg]).toEqual(['customer', String(leg.body.legId)]);
    await sam.waitFor(has((e) => e.type === 'call.monitor' && e.mode === 'listen'), 'sam told of his listen');
    expect(sam.envelopes.find((e) => e.event.type === 'call.monitor')!.event).toEqual({ type: 'call.monitor', callId, supervisorId: 'sam', name: 'Sam Lead', mode: 'listen', timestamp: expect.any(Number) as number });
    expect((await liveCalls(relay))[0]!.monitors).toEqual([{ id: 'sam', name: 'Sam Lead', mode: 'listen' }]);
    // A supervisor asks the list too while joined; an agent still may not.
    expect((await liveCalls(relay, 'sue')).length).toBe(1);

    // Joined, sam is busy: the next call rings bob, not him.
    expect((await postWebhook(relay.url, incomingCall('wacid.b2'))).status).toBe(200);
    await bob.waitFor(has((e) => e.type === 'call.incoming' && e.callId === 'wacid.b2'), 'bob rung');
    await sleep(100);
    expect(sam.envelopes.some((e) => e.event.type === 'call.incoming' && e.event.callId === 'wacid.b2')).toBe(false);
    expect((await ask(relay, 'bob', 'POST', '/calls/wacid.b2/decline')).body).toMatchObject({ othersRinging: 1 });
    expect((await postWebhook(relay.url, terminatedCall('wacid.b2'))).status).toBe(200);

    expect(await ask(relay, 'sam', 'PUT', SUPERVISOR_PATHS.monitor(callId), { mode: 'whisper' })).toEqual({ status: 200, body: { mode: 'whisper' } });
    await alice.waitFor(has((e) => e.type === 'call.monitor' && e.mode === 'whisper'), 'alice told of the whisper');
    expect(node.routes.get(callId)?.[String(leg.body.legId)]).toEqual(['customer', samLeg]);

    expect((await ask(relay, 'alice', 'POST', BRIDGE_AGENT_PATHS.hold(callId), { held: true })).status).toBe(200);
    expect((await liveCalls(relay))[0]).toMatchObject({ state: 'on_hold', monitors: [{ id: 'sam', mode: 'whisper' }] });
    expect((await ask(relay, 'alice', 'POST', BRIDGE_AGENT_PATHS.hold(callId), { held: false })).status).toBe(200);

    // "Anyone available" passes the joined supervisor over too.
    const anyone = await ask(relay, 'alice', 'POST', TRANSFER_PATHS.start(callId), { to: 'available', kind: 'transfer' });
    expect(anyone.status).toBe(200);
    await bob.waitFor(has((e) => e.type === 'call.transfer_ring'), 'bob rung for the transfer');
    await sleep(100);
    expect(sam.envelopes.some((e) => e.event.type === 'call.transfer_ring')).toBe(false);
    expect((await ask(relay, 'alice', 'POST', TRANSFER_PATHS.cancel(callId, String(anyone.body.transferId)))).status).toBe(200);

    const consult = await ask(relay, 'alice', 'POST', TRANSFER_PATHS.start(callId), { to: 'bob', kind: 'consult' });
    expect(consult.status).toBe(200);
    expect((await liveCalls(relay))[0]!.state).toBe('transferring');
    expect((await ask(relay, 'alice', 'POST', TRANSFER_PATHS.cancel(callId, String(consult.body.transferId)))).status).toBe(200);
    expect((await liveCalls(relay))[0]!.state).toBe('talking');

    expect(await ask(relay, 'sam', 'DELETE', SUPERVISOR_PATHS.monitor(callId))).toEqual({ status: 200, body: { ok: true } });
    expect(await ask(relay, 'sam', 'DELETE', SUPERVISOR_PATHS.monitor(callId))).toEqual({ status: 200, body: { ok: true } });
    expect(node.closed).toContain(samLeg);
    await alice.waitFor(has((e) => e.type === 'call.monitor' && e.mode === 'left'), 'alice told sam left');
    await sam.waitFor(has((e) => e.type === 'call.monitor' && e.mode === 'left'), 'sam told he left');
    expect(monitorWords(alice)).toEqual(['sam:whisper', 'sam:left:left']);
    expect(monitorWords(sam)).toEqual(['sam:listen', 'sam:whisper', 'sam:left:left']);
    expect(monitorWords(bob)).toEqual([]);
    expect((await liveCalls(relay))[0]!.monitors).toEqual([]);

    // Out of the call, sam rings again.
    expect((await postWebhook(relay.url, incomingCall('wacid.b3'))).status).toBe(200);
    await sam.waitFor(has((e) => e.type === 'call.incoming' && e.callId === 'wacid.b3'), 'sam rung again');
  });

  it('with the team telling of listens, the agents hear of the listen; the call’s end tells the supervisor `call_ended` and the list forgets it', async () => {
    const { relay } = await relayWith({ bridged: true, tell: true });
    const [alice, sam] = [await stream(relay, 'alice'), await stream(relay, 'sam')];
    await answeredBridged(relay, alice, 'wacid.b4');
    await join(relay, 'wacid.b4', 'listen');
    await alice.waitFor(has((e) => e.type === 'call.monitor' && e.mode === 'listen'), 'alice told of the listen');
    expect((await postWebhook(relay.url, terminatedCall('wacid.b4'))).status).toBe(200);
    await sam.waitFor(has((e) => e.type === 'call.monitor' && e.mode === 'left'), 'sam told the call ended');
    expect(monitorWords(sam)).toEqual(['sam:listen', 'sam:left:call_ended']);
    expect(monitorWords(alice)).toEqual(['sam:listen']);
    await expect.poll(async () => (await liveCalls(relay)).length).toBe(0);
    expect(await ask(relay, 'sam', 'PUT', SUPERVISOR_PATHS.monitor('wacid.b4'), { mode: 'barge' })).toMatchObject({ status: 404 });
  });

  it('a call given up for its agent not back ends for its supervisor too: `call_ended` as its customer is let go', async () => {
    const { relay, node, events } = await relayWith({ bridged: true, rejoinWindowMs: 300 });
    const [alice, sam] = [await stream(relay, 'alice'), await stream(relay, 'sam')];
    await answeredBridged(relay, alice, 'wacid.b6');
    await join(relay, 'wacid.b6', 'whisper');
    const aliceLeg = Object.keys(node.routes.get('wacid.b6')!).find((p) => p !== 'customer' && node.answers.get(p) === 'window-answer-alice')!;
    events.emit({ kind: 'leg_failed', callId: 'wacid.b6', legId: aliceLeg, lastPacketAt: Date.now() });
    await sam.waitFor(has((e) => e.type === 'call.monitor' && e.mode === 'left'), 'sam told the call ended');
    expect(monitorWords(sam)).toEqual(['sam:whisper', 'sam:left:call_ended']);
    await expect.poll(() => node.released).toEqual(['wacid.b6']);
    expect(await ask(relay, 'sam', 'PUT', SUPERVISOR_PATHS.monitor('wacid.b6'), { mode: 'barge' })).toMatchObject({ status: 404 });
  });

  it('an agent of the call who is a supervisor cannot join it; a second supervisor joins alongside', async () => {
    const { relay } = await relayWith({ bridged: true });
    const [sam, sue] = [await stream(relay, 'sam'), await stream(relay, 'sue')];
    await answeredBridged(relay, sam, 'wacid.b5', 'sam');
    expect(await ask(relay, 'sam', 'POST', SUPERVISOR_PATHS.monitor('wacid.b5'), { mode: 'barge' })).toMatchObject({ status: 409, body: { error: { code: 'invalid_state' } } });
    await join(relay, 'wacid.b5', 'barge', 'sue');
    await sam.waitFor(has((e) => e.type === 'call.monitor' && e.supervisorId === 'sue' && e.mode === 'barge'), 'sam told sue barged in');
    await sue.waitFor(has((e) => e.type === 'call.monitor' && e.supervisorId === 'sue'), 'sue told');
    expect((await liveCalls(relay, 'sue'))[0]).toMatchObject({ agents: [{ id: 'sam', name: 'Sam Lead' }], monitors: [{ id: 'sue', name: 'Sue Lead', mode: 'barge' }] });
  });
});
