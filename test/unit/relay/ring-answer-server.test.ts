// POST /calls/{id}/bridge/leg/answer over HTTP (bridge/REFERENCE.md "The agent's side"): a ringing
// agent's window answers its leg before the click, so that the leg is up when Answer comes. A real
// relay with two agents rung, and a node that records what it is asked.
import { afterEach, describe, expect, it } from 'vitest';
import { LocalNodeEvents, localBridge } from '../../../relay/bridged-calls';
import { startRelay, type RelayServer } from '../../../relay/server';
import { BRIDGE_AGENT_PATHS, type Routes } from '../../../shared/bridge';
import type { Result } from '../../../shared/result';
import type { RelayEvent } from '../../../shared/events';
import { claimCall, postAsAgent, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { quietLogger, RecordingBridge } from './transfer-fixtures';
import { APP_SECRET, incomingCall, postWebhook } from './webhook-fixtures';

const { agents, tokens } = team('alice', 'bob');
const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const ask = (relay: RelayServer, agentId: string, path: string, body?: unknown) => postAsAgent(relay.url, tokens[agentId]!, path, body);

/** A node that also keeps the order of what routes and connects the customer. */
class OrderedBridge extends RecordingBridge {
  readonly steps: string[] = [];
  override setRoutes(callId: string, routes: Routes): Promise<Result<null>> {
    this.steps.push(`routes ${JSON.stringify(routes)}`);
    return super.setRoutes(callId, routes);
  }
  override connectCustomer(): Promise<Result<null>> {
    this.steps.push('connectCustomer');
    return super.connectCustomer();
  }
}

async function ringing(callId: string): Promise<{ relay: RelayServer; node: OrderedBridge; legs: Record<string, string> }> {
  const node = new OrderedBridge();
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, logger: quietLogger, bridgeNodes: localBridge(node, 'local', new LocalNodeEvents()) });
  closing.push(() => relay.close());
  const streams: TestSseStream[] = [];
  for (const agentId of ['alice', 'bob']) {
    const opened = await openSse(relay.url, { token: tokens[agentId] });
    closing.push(() => opened.close());
    streams.push(opened);
  }
  expect((await postWebhook(relay.url, incomingCall(callId))).status).toBe(200);
  for (const s of streams) await s.waitFor((s) => s.envelopes.some((e: { event: RelayEvent }) => e.event.type === 'call.incoming' && e.event.callId === callId), 'the ring');
  const legs: Record<string, string> = {};
  for (const agentId of ['alice', 'bob']) {
    const leg = await ask(relay, agentId, BRIDGE_AGENT_PATHS.leg(callId));
    expect(leg.status).toBe(200);
    legs[agentId] = String(leg.body.legId);
  }
  return { relay, node, legs };
}

describe('POST /calls/{id}/bridge/leg/answer', () => {
  it('applies a ringing agent’s answer to its own leg, routes nothing, and is refused once the call is being answered', async () => {
    const callId = 'wacid.ring-ahead';
    const { relay, node, legs } = await ringing(callId);
    const path = BRIDGE_AGENT_PATHS.ringAnswer(callId);
    expect(await ask(relay, 'alice', path, { legId: legs.alice, sdp: 'alice-answer' })).toEqual({ status: 200, body: { ok: true } });
    expect(await ask(relay, 'bob', path, { legId: legs.bob, sdp: 'bob-answer' })).toEqual({ status: 200, body: { ok: true } });
    expect(node.answers.get(legs.alice!)).toBe('alice-answer');
    expect(node.answers.get(legs.bob!)).toBe('bob-answer');
    // While it rings, the relay routes nothing: the customer's leg connects only at the accept.
    expect(node.steps).toEqual([]);

    expect((await claimCall(relay.url, tokens.alice!, callId)).status).toBe(200);
    expect((await ask(relay, 'alice', BRIDGE_AGENT_PATHS.answer(callId), { legId: legs.alice, sdp: 'alice-answer' })).status).toBe(200);
    expect(await ask(relay, 'alice', path, { legId: legs.alice, sdp: 'alice-answer' })).toMatchObject({ status: 409, body: { error: { code: 'invalid_state' } } });
    expect(await ask(relay, 'bob', path, { legId: legs.bob, sdp: 'bob-answer' })).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect((await ask(relay, 'alice', BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
    // The routes pair the customer with the answering leg alone before the customer's leg connects:
    // the legs that rang (bob's, connected first or not) never hear the customer.
    expect(node.steps).toEqual([`routes ${JSON.stringify({ customer: [legs.alice], [legs.alice!]: ['customer'] })}`, 'connectCustomer']);
    expect(node.closed).toContain(legs.bob);
  });

  it('refuses another agent’s leg, a bad body naming its field, and an unknown call', async () => {
    const callId = 'wacid.ring-refusals';
    const { relay, node, legs } = await ringing(callId);
    const path = BRIDGE_AGENT_PATHS.ringAnswer(callId);
    expect(await ask(relay, 'bob', path, { legId: legs.alice, sdp: 'bob-answer' })).toMatchObject({ status: 403, body: { error: { code: 'forbidden', message: 'legId: not a leg of this agent in this call' } } });
    expect(await ask(relay, 'alice', path, { legId: legs.alice, sdp: '' })).toMatchObject({ status: 400, body: { error: { code: 'invalid_input', field: 'sdp' } } });
    expect(await ask(relay, 'alice', path, { sdp: 'x' })).toMatchObject({ status: 400, body: { error: { code: 'invalid_input', field: 'legId' } } });
    expect(await ask(relay, 'alice', BRIDGE_AGENT_PATHS.ringAnswer('wacid.none'), { legId: legs.alice, sdp: 'x' })).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect(node.answers.size).toBe(0);
  });
});
