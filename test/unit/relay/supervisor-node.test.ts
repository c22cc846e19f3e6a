// A supervisor joins, switches and leaves a bridged call through a real node (relay/REFERENCE.md
// "Supervisors"): a relay with a BridgeNode in its process (`--bridge`), the sandbox's customer facing
// it, and werift windows for the agent and the supervisor, each playing a tone of its own. What each
// hears follows the mode, on one leg of the supervisor's the whole time.
import { afterEach, expect, it } from 'vitest';
import { LocalNodeEvents, localBridge } from '../../../relay/bridged-calls';
import { startRelay, type RelayServer } from '../../../relay/server';
import { BRIDGE_AGENT_PATHS } from '../../../shared/bridge';
import { SUPERVISOR_PATHS } from '../../../shared/supervision';
import { AgentWindow } from '../bridge/agent-window';
import { eventually, HOST, quietLogger, ServiceCustomer, sleep, startNode, TONE_A } from '../bridge/bridge-harness';
import { claimCall, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { APP_SECRET, incomingCall, postWebhook } from './webhook-fixtures';

/** The supervisor's own pitch. */
const TONE_S = 1_200;

const base = team('alice', 'sam');
const agents = base.agents.map((a) => (a.id === 'sam' ? { ...a, name: 'Sam Lead', role: 'supervisor' as const } : a));
const { tokens } = base;

const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

function track<T extends { close(): Promise<void> | void }>(thing: T): T {
  closing.push(async () => void (await thing.close()));
  return thing;
}

async function ask(relay: RelayServer, agentId: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${relay.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${tokens[agentId]}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

it('listen, whisper, barge and leave on one leg: who hears the supervisor follows the mode, and the call goes on', { timeout: 60_000 }, async () => {
  const events = new LocalNodeEvents();
  const { node } = startNode({ publicAddress: HOST, onEvent: events.emit });
  track(node);
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, logger: quietLogger, bridgeNodes: localBridge(node, 'local', events) });
  track(relay);
  const sam: TestSseStream = track(await openSse(relay.url, { token: tokens.sam }));
  const callId = 'wacid.sup-node';

  // Alice answers the customer's call as the app does: her leg, the claim, her window's answer, the accept.
  const customer = track(new ServiceCustomer());
  const offer = await customer.peer.makeOffer();
  if (!offer.ok) throw new Error(offer.error.message);
  expect((await postWebhook(relay.url, incomingCall(callId, { session: { sdp_type: 'offer', sdp: offer.value } }))).status).toBe(200);
  const leg = await eventually('alice’s leg', async () => {
    const answer = await ask(relay, 'alice', 'POST', BRIDGE_AGENT_PATHS.leg(callId));
    return answer.status === 200 ? answer.body : undefined;
  });
  const alice = track(new AgentWindow(TONE_A));
  const aliceAnswer = await alice.answer(String(leg.offer));
  expect((await claimCall(relay.url, tokens.alice!, callId)).status).toBe(200);
  const handed = await ask(relay, 'alice', 'POST', BRIDGE_AGENT_PATHS.answer(callId), { legId: leg.legId, sdp: aliceAnswer });
  expect(handed.status).toBe(200);
  expect(await customer.peer.applyAnswer(String(handed.body.sdp))).toEqual({ ok: true, value: undefined });
  expect((await ask(relay, 'alice', 'POST', BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
  await eventually('the customer to hear alice', () => customer.hears(TONE_A) > 0.3, 10_000);

  // Sam listens: he hears alice (and the customer); nobody hears him.
  const joined = await ask(relay, 'sam', 'POST', SUPERVISOR_PATHS.monitor(callId), { mode: 'listen' });
  expect(joined.status).toBe(200);
  const samWindow = track(new AgentWindow(TONE_S));
  expect(await ask(relay, 'sam', 'POST', SUPERVISOR_PATHS.monitorAnswer(callId), { legId: joined.body.legId, sdp: await samWindow.answer(String(joined.body.offer)) })).toEqual({ status: 200, body: { ok: true } });
  await eventually('sam to hear alice', () => samWindow.hears(TONE_A).share > 0.1, 10_000);
  await sleep(700);
  expect(customer.hears(TONE_S)).toBeLessThan(0.05);
  expect(alice.hears(TONE_S).share).toBeLessThan(0.05);

  // Whisper: alice hears him, the customer still does not.
  expect(await ask(relay, 'sam', 'PUT', SUPERVISOR_PATHS.monitor(callId), { mode: 'whisper' })).toEqual({ status: 200, body: { mode: 'whisper' } });
  await eventually('alice to hear sam', () => alice.hears(TONE_S).share > 0.1, 10_000);
  await sleep(700);
  expect(customer.hears(TONE_S)).toBeLessThan(0.05);
  await eventually('the customer to hear alice still', () => customer.hears(TONE_A) > 0.3, 10_000);

  // Barge: the customer hears him too.
  expect(await ask(relay, 'sam', 'PUT', SUPERVISOR_PATHS.monitor(callId), { mode: 'barge' })).toEqual({ status: 200, body: { mode: 'barge' } });
  await eventually('the customer to hear sam and alice', () => customer.hears(TONE_S) > 0.1 && customer.hears(TONE_A) > 0.1, 10_000);

  // Back to listening: nobody hears him again.
  expect(await ask(relay, 'sam', 'PUT', SUPERVISOR_PATHS.monitor(callId), { mode: 'listen' })).toEqual({ status: 200, body: { mode: 'listen' } });
  await eventually('nobody to hear sam', () => customer.hears(TONE_S) < 0.05 && alice.hears(TONE_S).share < 0.05, 10_000);
  await eventually('sam to hear alice still', () => samWindow.hears(TONE_A).share > 0.1, 10_000);

  // One supervisor leg the whole time, answered once.
  const during = await node.report(callId);
  expect(during.ok && Object.keys(during.value.agents).sort()).toEqual([String(joined.body.legId), String(leg.legId)].sort());

  // Leave: his leg closes, the customer and alice go on.
  expect(await ask(relay, 'sam', 'DELETE', SUPERVISOR_PATHS.monitor(callId))).toEqual({ status: 200, body: { ok: true } });
  await eventually('sam’s leg to close', async () => {
    const report = await node.report(callId);
    return report.ok && !(String(joined.body.legId) in report.value.agents);
  });
  await eventually('the customer to hear alice after sam left', () => customer.hears(TONE_A) > 0.3, 10_000);
  await sam.waitFor((s) => s.envelopes.some((e) => e.event.type === 'call.monitor' && e.event.mode === 'left'), 'sam told he left');
  expect(sam.envelopes.flatMap((e) => (e.event.type === 'call.monitor' ? [e.event.mode] : []))).toEqual(['listen', 'whisper', 'barge', 'listen', 'left']);
});
