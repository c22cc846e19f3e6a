// A bridged call's ringing legs over HTTP, through a real node (bridge/REFERENCE.md "The agent's
// side"): a real relay driving a BridgeNode in this process, the sandbox's customer ringing through
// the relay's webhook, and werift windows answering their legs while the call rings. Only a leg's own
// agent connects it; a declining agent's legs close at its decline while the call rings on for the
// others; a leg asked for as a colleague takes the call, or as its agent declines, does not stay on
// the node.
import { afterEach, describe, expect, it } from 'vitest';
import type { BridgeNode } from '../../../bridge/bridge-node';
import { LocalNodeEvents, localBridge } from '../../../relay/bridged-calls';
import { startRelay, type RelayServer } from '../../../relay/server';
import { BRIDGE_AGENT_PATHS, type BridgeControl } from '../../../shared/bridge';
import type { RelayEvent } from '../../../shared/events';
import type { Result } from '../../../shared/result';
import { AgentWindow } from '../bridge/agent-window';
import { eventually, HOST, ServiceCustomer, startNode, TONE_A, TONE_B } from '../bridge/bridge-harness';
import { claimCall, postAsAgent, team } from './agent-fixtures';
import { openSse } from './sse-test-client';
import { quietLogger } from './transfer-fixtures';
import { APP_SECRET, incomingCall, postWebhook } from './webhook-fixtures';

const { agents, tokens } = team('alice', 'bob');
const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

function track<T extends { close(): Promise<void> | void }>(peer: T): T {
  closing.push(() => peer.close());
  return peer;
}

const ask = (relay: RelayServer, agentId: string, path: string, body?: unknown) => postAsAgent(relay.url, tokens[agentId]!, path, body);

/** Leg offers held back: `asked` once the relay asked the node for one, `release` lets it be made. */
interface HeldOffers {
  asked: Promise<void>;
  release(): void;
}

/**
 * The node as the relay drives it, its leg offers held back while `hold()` is in force: a leg being
 * made as something else happens to the call, which is otherwise a matter of a few milliseconds.
 */
function heldOffers(node: BridgeNode): { control: BridgeControl; hold(): HeldOffers } {
  let gate: Promise<void> = Promise.resolve();
  let onAsked = (): void => undefined;
  const control = new Proxy(node, {
    get(target, prop) {
      if (prop === 'offerAgentLeg') {
        return async (callId: string, legId: string): Promise<Result<{ offer: string }>> => {
          onAsked();
          await gate;
          return target.offerAgentLeg(callId, legId);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    control,
    hold: () => {
      let release = (): void => undefined;
      gate = new Promise<void>((resolve) => (release = resolve));
      const asked = new Promise<void>((resolve) => (onAsked = resolve));
      return { asked, release };
    },
  };
}

interface Ringing {
  relay: RelayServer;
  node: BridgeNode;
  customer: ServiceCustomer;
  hold(): HeldOffers;
}

/** A real relay on a real node; the customer's call rings alice and bob. */
async function ringing(callId: string): Promise<Ringing> {
  const events = new LocalNodeEvents();
  const { node } = startNode({ publicAddress: HOST, onEvent: events.emit });
  track(node);
  const held = heldOffers(node);
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, logger: quietLogger, bridgeNodes: localBridge(held.control, 'local', events) });
  closing.push(() => relay.close());
  const streams = await Promise.all(['alice', 'bob'].map(async (agentId) => track(await openSse(relay.url, { token: tokens[agentId] }))));
  const customer = track(new ServiceCustomer());
  const offer = await customer.peer.makeOffer();
  if (!offer.ok) throw new Error(offer.error.message);
  expect((await postWebhook(relay.url, incomingCall(callId, { session: { sdp_type: 'offer', sdp: offer.value } }))).status).toBe(200);
  for (const s of streams) await s.waitFor((s) => s.envelopes.some((e: { event: RelayEvent }) => e.event.type === 'call.incoming' && e.event.callId === callId), 'the ring');
  return { relay, node, customer, hold: held.hold };
}

/** The agent's leg, answered by its window and connected to the node while the call rings. */
async function connectedAhead(r: Ringing, callId: string, agentId: string, toneHz: number): Promise<{ legId: string; window: AgentWindow; sdp: string }> {
  const leg = await ask(r.relay, agentId, BRIDGE_AGENT_PATHS.leg(callId));
  expect(leg.status).toBe(200);
  const legId = String(leg.body.legId);
  const window = track(new AgentWindow(toneHz));
  const sdp = await window.answer(String(leg.body.offer));
  expect(await ask(r.relay, agentId, BRIDGE_AGENT_PATHS.ringAnswer(callId), { legId, sdp })).toEqual({ status: 200, body: { ok: true } });
  await eventually(`${agentId}’s leg to connect`, async () => (await legsOn(r.node, callId))[legId] === 'connected');
  return { legId, window, sdp };
}

/** The agents' legs the node holds for the call, with their states. */
async function legsOn(node: BridgeNode, callId: string): Promise<Record<string, string>> {
  const report = await node.report(callId);
  if (!report.ok) throw new Error(report.error.message);
  return Object.fromEntries(Object.entries(report.value.agents).map(([legId, leg]) => [legId, leg.state]));
}

/** Alice takes the call with the leg her window connected ahead: claim, answer, the customer's answer, accept. */
async function aliceTakes(r: Ringing, callId: string, alice: { legId: string; sdp: string }): Promise<void> {
  expect((await claimCall(r.relay.url, tokens.alice!, callId)).status).toBe(200);
  const answered = await ask(r.relay, 'alice', BRIDGE_AGENT_PATHS.answer(callId), { legId: alice.legId, sdp: alice.sdp });
  expect(answered.status).toBe(200);
  expect(await r.customer.peer.applyAnswer(String(answered.body.sdp))).toEqual({ ok: true, value: undefined });
  expect((await ask(r.relay, 'alice', BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
}

describe('a bridged call’s ringing legs on the node', () => {
  it('only the agent a leg was made for connects it: another rung agent’s answer to it is refused and never reaches the node', { timeout: 40_000 }, async () => {
    const callId = 'wacid.ring-owner';
    const r = await ringing(callId);
    const leg = await ask(r.relay, 'alice', BRIDGE_AGENT_PATHS.leg(callId));
    expect(leg.status).toBe(200);
    const legId = String(leg.body.legId);
    // Bob's window answers alice's offer (its checks would reach her leg, so it closes once its answer is made).
    const bobsWindow = new AgentWindow(TONE_B);
    const bobsAnswer = await bobsWindow.answer(String(leg.body.offer));
    await bobsWindow.close();
    expect(await ask(r.relay, 'bob', BRIDGE_AGENT_PATHS.ringAnswer(callId), { legId, sdp: bobsAnswer })).toMatchObject({ status: 403, body: { error: { code: 'forbidden', message: 'legId: not a leg of this agent in this call' } } });
    // The leg still takes its own window's answer (a leg answered once would refuse another) and connects it.
    const alicesWindow = track(new AgentWindow(TONE_A));
    expect(await ask(r.relay, 'alice', BRIDGE_AGENT_PATHS.ringAnswer(callId), { legId, sdp: await alicesWindow.answer(String(leg.body.offer)) })).toEqual({ status: 200, body: { ok: true } });
    await eventually('alice’s leg to connect', async () => (await legsOn(r.node, callId))[legId] === 'connected');
  });

  it('a decline closes the decliner’s connected leg at once; it gets no other, and the call rings on for alice, who takes it', { timeout: 40_000 }, async () => {
    const callId = 'wacid.ring-decline';
    const r = await ringing(callId);
    const alice = await connectedAhead(r, callId, 'alice', TONE_A);
    const bob = await connectedAhead(r, callId, 'bob', TONE_B);

    expect(await ask(r.relay, 'bob', `/calls/${callId}/decline`)).toMatchObject({ status: 200, body: { othersRinging: 1 } });
    expect(await legsOn(r.node, callId)).toEqual({ [alice.legId]: 'connected' });
    expect(await ask(r.relay, 'bob', BRIDGE_AGENT_PATHS.leg(callId))).toMatchObject({ status: 409, body: { error: { code: 'invalid_state', message: 'the agent declined the call' } } });
    expect(await ask(r.relay, 'bob', BRIDGE_AGENT_PATHS.ringAnswer(callId), { legId: bob.legId, sdp: bob.sdp })).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect(await legsOn(r.node, callId)).toEqual({ [alice.legId]: 'connected' });

    await aliceTakes(r, callId, alice);
    await eventually('the customer to hear alice', () => r.customer.hears(TONE_A) > 0.3, 10_000);
    expect(Object.keys(await legsOn(r.node, callId))).toEqual([alice.legId]);
  });

  it('a leg asked for while a colleague takes the call is refused and closed, not left on the node', { timeout: 40_000 }, async () => {
    const callId = 'wacid.ring-taken';
    const r = await ringing(callId);
    const alice = await connectedAhead(r, callId, 'alice', TONE_A);

    // Bob's window asks for its leg; the node is still making it as alice answers and connects the call.
    const held = r.hold();
    const bobsLeg = ask(r.relay, 'bob', BRIDGE_AGENT_PATHS.leg(callId));
    await held.asked;
    await aliceTakes(r, callId, alice);
    held.release();
    expect(await bobsLeg).toMatchObject({ status: 403, body: { error: { code: 'forbidden', message: 'the call is another agent’s' } } });
    expect(await legsOn(r.node, callId)).toEqual({ [alice.legId]: 'connected' });
    // Asked after the call was taken, a leg is refused before the node is asked.
    expect(await ask(r.relay, 'bob', BRIDGE_AGENT_PATHS.leg(callId))).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect(Object.keys(await legsOn(r.node, callId))).toEqual([alice.legId]);
  });

  it('a decline that comes while its agent’s leg is being made closes that leg too', { timeout: 40_000 }, async () => {
    const callId = 'wacid.ring-decline-race';
    const r = await ringing(callId);
    const alice = await connectedAhead(r, callId, 'alice', TONE_A);

    const held = r.hold();
    const bobsLeg = ask(r.relay, 'bob', BRIDGE_AGENT_PATHS.leg(callId));
    await held.asked;
    const declined = ask(r.relay, 'bob', `/calls/${callId}/decline`);
    held.release();
    // The leg was asked for first: it is made, and the decline, in the call's turn after it, closes it.
    expect((await bobsLeg).status).toBe(200);
    expect(await declined).toMatchObject({ status: 200, body: { othersRinging: 1 } });
    expect(await legsOn(r.node, callId)).toEqual({ [alice.legId]: 'connected' });
  });
});
