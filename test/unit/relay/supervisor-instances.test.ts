// The team's live calls on several relay instances sharing one Redis (relay/REFERENCE.md
// "Supervisors", "Several instances"): a bridged call held by one instance is listed the same by the
// other — its ring, its agent, its hold, its transfer, its supervisors, its end — a supervisor
// joined through the one is not rung through the other, and an end the other stores ends the call
// where it is held.
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { localBridge } from '../../../relay/bridged-calls';
import { startRelay, type RelayServer } from '../../../relay/server';
import { BRIDGE_AGENT_PATHS } from '../../../shared/bridge';
import type { RelayEvent } from '../../../shared/events';
import { liveCallsSchema, SUPERVISOR_PATHS, type LiveCall } from '../../../shared/supervision';
import { TRANSFER_PATHS } from '../../../shared/transfer';
import { startRedis, uniquePrefix, type RedisHandle } from '../../support/redis-server';
import { claimCall, putPresence, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { quietLogger, RecordingBridge } from './transfer-fixtures';
import { answeredCall, APP_SECRET, callStatus, incomingCall, postWebhook, terminatedCall } from './webhook-fixtures';

const base = team('alice', 'bob', 'sam');
const agents = base.agents.map((a) => (a.id === 'sam' ? { ...a, name: 'Sam Lead', role: 'supervisor' as const } : a));
const { tokens } = base;

let redis: RedisHandle;
let prefix: string;
const closing: Array<() => Promise<void> | void> = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});
beforeEach(() => {
  prefix = uniquePrefix('relay-supervisors');
});
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
  await redis.removeKeys(prefix);
});

async function instance(node = new RecordingBridge()): Promise<RelayServer> {
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, logger: quietLogger, redisUrl: redis.url, redisPrefix: prefix, bridgeNodes: localBridge(node) });
  closing.push(() => relay.close());
  return relay;
}

async function stream(relay: RelayServer, agentId: string): Promise<TestSseStream> {
  const opened = await openSse(relay.url, { token: tokens[agentId] });
  closing.push(() => opened.close());
  return opened;
}

async function ask(relay: RelayServer, agentId: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${relay.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${tokens[agentId]}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The list as a supervisor reads it from one instance, without what only the holding instance measures. */
async function listed(relay: RelayServer): Promise<Omit<LiveCall, 'quality'>[]> {
  const answer = await ask(relay, 'sam', 'GET', SUPERVISOR_PATHS.liveCalls);
  expect(answer.status).toBe(200);
  return liveCallsSchema.parse(answer.body).calls.map(({ quality: _quality, ...call }) => call);
}

/** Both instances list the same calls, once the backend's events reached both. */
async function sameOnBoth(a: RelayServer, b: RelayServer, check: (calls: Omit<LiveCall, 'quality'>[]) => boolean): Promise<Omit<LiveCall, 'quality'>[]> {
  let last: [Omit<LiveCall, 'quality'>[], Omit<LiveCall, 'quality'>[]] = [[], []];
  await expect
    .poll(async () => {
      last = [await listed(a), await listed(b)];
      return check(last[0]) && JSON.stringify(last[0]) === JSON.stringify(last[1]);
    })
    .toBe(true);
  return last[0];
}

const has = (predicate: (event: RelayEvent) => boolean) => (s: TestSseStream) => s.envelopes.some((e) => predicate(e.event));

it('a call held by one instance is listed alike by the other, from its ring to its end; a supervisor joined through one is not rung through the other', { timeout: 30_000 }, async () => {
  const node = new RecordingBridge();
  const [a, b] = [await instance(node), await instance()];
  const alice = await stream(a, 'alice');
  const [bob, sam] = [await stream(b, 'bob'), await stream(b, 'sam')];
  const callId = 'wacid.two';

  expect((await postWebhook(a.url, incomingCall(callId))).status).toBe(200);
  await alice.waitFor(has((e) => e.type === 'call.incoming'), 'the ring');
  const [ringing] = await sameOnBoth(a, b, (calls) => calls.length === 1);
  expect(ringing).toMatchObject({ callId, state: 'ringing', bridged: true, agents: [] });

  const leg = await ask(a, 'alice', 'POST', BRIDGE_AGENT_PATHS.leg(callId));
  expect((await claimCall(b.url, tokens.alice!, callId)).status).toBe(200);
  expect((await ask(a, 'alice', 'POST', BRIDGE_AGENT_PATHS.answer(callId), { legId: leg.body.legId, sdp: 'window-answer' })).status).toBe(200);
  expect((await ask(a, 'alice', 'POST', BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
  await sameOnBoth(a, b, ([call]) => call?.state === 'talking' && call.agents[0]?.id === 'alice');

  // The call's requests reach the instance that holds it; the other says so.
  expect(await ask(b, 'sam', 'POST', SUPERVISOR_PATHS.monitor(callId), { mode: 'listen' })).toEqual({ status: 404, body: { error: { code: 'not_found', message: `call ${callId} is held by another relay instance` } } });
  const joined = await ask(a, 'sam', 'POST', SUPERVISOR_PATHS.monitor(callId), { mode: 'whisper' });
  expect(joined.status).toBe(200);
  expect((await ask(a, 'sam', 'POST', SUPERVISOR_PATHS.monitorAnswer(callId), { legId: joined.body.legId, sdp: 'window-answer-sam' })).status).toBe(200);
  await sam.waitFor(has((e) => e.type === 'call.monitor' && e.mode === 'whisper'), 'sam told on the other instance');
  await sameOnBoth(a, b, ([call]) => call?.monitors[0]?.mode === 'whisper');

  // Sam's stream is on the other instance: that instance does not ring him while he is joined.
  expect((await postWebhook(b.url, incomingCall('wacid.next'))).status).toBe(200);
  await bob.waitFor(has((e) => e.type === 'call.incoming' && e.callId === 'wacid.next'), 'bob rung');
  await new Promise((resolve) => setTimeout(resolve, 150));
  expect(sam.envelopes.some((e) => e.event.type === 'call.incoming' && e.event.callId === 'wacid.next')).toBe(false);
  expect((await postWebhook(b.url, terminatedCall('wacid.next'))).status).toBe(200);

  expect((await ask(a, 'alice', 'POST', BRIDGE_AGENT_PATHS.hold(callId), { held: true })).status).toBe(200);
  await sameOnBoth(a, b, (calls) => calls.find((c) => c.callId === callId)?.state === 'on_hold');
  expect((await ask(a, 'alice', 'POST', BRIDGE_AGENT_PATHS.hold(callId), { held: false })).status).toBe(200);
  // Bob's stream is on the other instance: his reported presence tells this one he is there.
  expect((await putPresence(b.url, tokens.bob!, { status: 'available' })).status).toBe(200);
  const consult = await ask(a, 'alice', 'POST', TRANSFER_PATHS.start(callId), { to: 'bob', kind: 'consult' });
  expect(consult.status).toBe(200);
  await sameOnBoth(a, b, (calls) => calls.find((c) => c.callId === callId)?.state === 'transferring');
  expect((await ask(a, 'alice', 'POST', TRANSFER_PATHS.cancel(callId, String(consult.body.transferId)))).status).toBe(200);
  await sameOnBoth(a, b, (calls) => calls.find((c) => c.callId === callId)?.state === 'talking');

  // The service's terminate reaches the other instance: the one that holds the call ends it too.
  expect((await postWebhook(b.url, terminatedCall(callId))).status).toBe(200);
  await sam.waitFor(has((e) => e.type === 'call.monitor' && e.mode === 'left' && e.reason === 'call_ended'), 'sam told the call ended');
  await expect.poll(() => node.endedCalls).toEqual([callId]);
  await sameOnBoth(a, b, (calls) => calls.length === 0);
});

it('an outgoing bridged call dialled through one instance is listed bridged by the other, from the placements', { timeout: 30_000 }, async () => {
  const [a, b] = [await instance(), await instance()];
  const dial = await ask(a, 'bob', 'POST', BRIDGE_AGENT_PATHS.dial, { sdp: 'window-offer' });
  expect(dial.status).toBe(200);
  expect((await ask(a, 'bob', 'POST', BRIDGE_AGENT_PATHS.placed(String(dial.body.ref)), { callId: 'wacid.dialled' })).status).toBe(200);
  expect((await claimCall(b.url, tokens.bob!, 'wacid.dialled')).status).toBe(200);
  expect((await postWebhook(b.url, callStatus('wacid.dialled', 'RINGING'))).status).toBe(200);
  const [ringing] = await sameOnBoth(a, b, ([call]) => call?.customer.number !== undefined);
  expect(ringing).toMatchObject({ callId: 'wacid.dialled', direction: 'outgoing', state: 'ringing', bridged: true, agents: [{ id: 'bob', name: 'Bob Agent' }] });
  expect(await ask(a, 'sam', 'POST', SUPERVISOR_PATHS.monitor('wacid.dialled'), { mode: 'listen' })).toMatchObject({ status: 409, body: { error: { message: 'call wacid.dialled is not answered yet' } } });
  expect((await postWebhook(b.url, answeredCall('wacid.dialled'))).status).toBe(200);
  await sameOnBoth(a, b, ([call]) => call?.state === 'talking' && call.answeredAt !== undefined);
  expect((await ask(a, 'sam', 'POST', SUPERVISOR_PATHS.monitor('wacid.dialled'), { mode: 'listen' })).status).toBe(200);
});
