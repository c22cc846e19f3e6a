// A member of a bridged call rejoins it (relay/rejoins.ts): the relay's BridgedCalls driving a real
// BridgeNode in this process, the sandbox's customer facing it and werift windows playing tones. The
// new leg takes the old one's place, the customer hears the music meanwhile, and a member not back in
// time is removed, or, the last one, told first and then the call ended at the gateway or its
// customer let go.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../../relay/backend/memory-backend';
import { BridgedCalls, LocalNodeEvents, localBridge, type NotBack } from '../../../relay/bridged-calls';
import { GatewayTerminator } from '../../../relay/gateway-terminator';
import type { BridgeNode } from '../../../bridge/bridge-node';
import { CUSTOMER, HOLD_MUSIC } from '../../../shared/bridge';
import { AgentWindow } from '../bridge/agent-window';
import { eventually, HOST, quietLogger, ServiceCustomer, sleep, startNode, TONE_A, TONE_B } from '../bridge/bridge-harness';
import { agent } from './transfer-fixtures';

const closing: Array<() => Promise<void>> = [];
const closed = new WeakSet<object>();
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});
/** Closed after the test, unless the test closed it itself (`gone`): a window is closed once. */
function track<T extends { close(): Promise<void> }>(peer: T): T {
  closing.push(() => (closed.has(peer) ? Promise.resolve() : peer.close()));
  return peer;
}
/** The window goes (a reload, a crash): its peer connection closes. */
async function gone(window: AgentWindow): Promise<void> {
  closed.add(window);
  await window.close();
}

interface Stack {
  node: BridgeNode;
  calls: BridgedCalls;
  notBack: Array<NotBack & { at: number }>;
  owners: Map<string, string>;
}

/** BridgedCalls on a real node whose events it follows, as `--bridge` runs them. */
function stack(options: { windowMs?: number; mediaTimeoutMs?: number; terminator?: GatewayTerminator; storeMs?: number; followEvents?: boolean } = {}): Stack {
  const events = new LocalNodeEvents();
  const { node } = startNode({ publicAddress: HOST, onEvent: events.emit, ...(options.mediaTimeoutMs !== undefined ? { mediaTimeoutMs: options.mediaTimeoutMs } : {}) });
  track(node);
  const owners = new Map<string, string>();
  const calls = new BridgedCalls({
    nodes: localBridge(node, 'local', events),
    placements: new MemoryBackend({ retentionMs: 600_000, dedupWindowMs: 600_000 }),
    ownerOf: (callId) => Promise.resolve(owners.get(callId)),
    team: () => [agent('alice'), agent('bob')],
    logger: quietLogger,
    rejoinWindowMs: options.windowMs ?? 60_000,
    ...(options.terminator !== undefined ? { terminator: options.terminator } : {}),
  });
  closing.push(() => calls.close());
  if (options.followEvents !== false) {
    const stop = calls.followNodeEvents();
    closing.push(() => Promise.resolve(stop()));
  }
  const notBack: Stack['notBack'] = [];
  // The relay service stores the agent's event; storing takes a moment.
  calls.onAgentNotBack(async (told) => {
    await sleep(options.storeMs ?? 0);
    notBack.push({ ...told, at: Date.now() });
  });
  return { node, calls, notBack, owners };
}

/** An incoming call alice answered and accepted, the customer hearing her tone. */
async function answeredCall(s: Stack, callId: string): Promise<{ customer: ServiceCustomer; window: AgentWindow; legId: string }> {
  const customer = track(new ServiceCustomer());
  const offer = await customer.peer.makeOffer();
  if (!offer.ok) throw new Error(offer.error.message);
  expect(await s.calls.takeIncoming(callId, offer.value)).toBe('taken');
  s.owners.set(callId, 'alice');
  const leg = await s.calls.legFor(callId, 'alice');
  if (!leg.ok) throw new Error(leg.refusal.message);
  const window = track(new AgentWindow(TONE_A));
  const answered = await s.calls.answer(callId, 'alice', leg.value.legId, await window.answer(leg.value.offer));
  if (!answered.ok) throw new Error(answered.refusal.message);
  expect(await customer.peer.applyAnswer(answered.value.sdp)).toEqual({ ok: true, value: undefined });
  expect(await s.calls.accepted(callId, 'alice')).toEqual({ ok: true, value: null });
  await eventually('the customer to hear alice', () => customer.hears(TONE_A) > 0.3, 10_000);
  return { customer, window, legId: leg.value.legId };
}

async function routesOn(node: BridgeNode, callId: string) {
  const report = await node.report(callId);
  if (!report.ok) throw new Error(report.error.message);
  return report.value.routes;
}

/** A fake gateway: every terminate it takes, with when it came. */
async function fakeGateway(status = 200, delayMs = 0): Promise<{ url: string; seen: Array<{ url: string; apiKey: string | undefined; body: unknown; at: number }> }> {
  const seen: Array<{ url: string; apiKey: string | undefined; body: unknown; at: number }> = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const key = req.headers['api-key'];
      seen.push({ url: req.url ?? '', apiKey: typeof key === 'string' ? key : undefined, body: JSON.parse(raw) as unknown, at: Date.now() });
      setTimeout(() => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(status === 200 ? { messaging_product: 'chatapp', success: true } : { error: { message: 'down', code: 1 } }));
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  closing.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://${HOST}:${(server.address() as AddressInfo).port}`, seen };
}

describe('rejoining a bridged call through a real node', () => {
  it('swaps the new leg in for the old one: music while away, the new window heard once it answers, the old leg closed', { timeout: 30_000 }, async () => {
    const s = stack();
    const callId = 'wacid.rejoin-1';
    const { customer, window, legId } = await answeredCall(s, callId);

    // The window reloads: its app asks for a new leg; the old window is gone.
    await gone(window);
    const rejoin = await s.calls.rejoin(callId, 'alice');
    if (!rejoin.ok) throw new Error(rejoin.refusal.message);
    expect(rejoin.value.legId).not.toBe(legId);
    expect(await routesOn(s.node, callId)).toEqual({ [CUSTOMER]: [HOLD_MUSIC] });
    await eventually('the customer to hear the music', () => customer.peer.media().heardNow === 'music', 5_000);

    // Asked again before answering (a second reload): the earlier offer closes, a new one is made.
    const again = await s.calls.rejoin(callId, 'alice');
    if (!again.ok) throw new Error(again.refusal.message);
    expect(await s.calls.rejoinAnswer(callId, 'alice', rejoin.value.legId, 'v=0')).toMatchObject({ ok: false, refusal: { status: 403, code: 'forbidden' } });
    // bob is no member.
    expect(await s.calls.rejoin(callId, 'bob')).toMatchObject({ ok: false, refusal: { status: 403, code: 'forbidden' } });
    // A description the node refuses: 400 naming sdp, and the offer stays answerable.
    expect(await s.calls.rejoinAnswer(callId, 'alice', again.value.legId, 'v=0 not a description')).toMatchObject({ ok: false, refusal: { status: 400, field: 'sdp' } });

    const reloaded = track(new AgentWindow(TONE_B));
    expect(await s.calls.rejoinAnswer(callId, 'alice', again.value.legId, await reloaded.answer(again.value.offer))).toEqual({ ok: true, value: null });
    const newLeg = again.value.legId;
    expect(await routesOn(s.node, callId)).toEqual({ [CUSTOMER]: [newLeg], [newLeg]: [CUSTOMER] });
    await eventually('the customer to hear the rejoined window', () => customer.hears(TONE_B) > 0.3, 10_000);
    await eventually('the rejoined window to hear the customer', () => reloaded.hears(TONE_B).rms > 0.02, 10_000);
    const report = await s.node.report(callId);
    expect(report.ok && Object.keys(report.value.agents)).toEqual([newLeg]);
    expect(customer.peer.media().rtp).toMatchObject({ ssrcs: 1, sequenceGaps: 0 });
    // The call goes on as before: she holds it and ends it.
    expect(await s.calls.hold(callId, 'alice', true)).toEqual({ ok: true, value: null });
    expect(await s.calls.leave(callId, 'alice')).toEqual({ ok: true, value: { last: true } });
  });

  it('a held call stays held while its member is away and after it is back', { timeout: 30_000 }, async () => {
    const s = stack();
    const callId = 'wacid.rejoin-held';
    const { customer, window } = await answeredCall(s, callId);
    expect(await s.calls.hold(callId, 'alice', true)).toEqual({ ok: true, value: null });
    await eventually('the customer to hear the music', () => customer.peer.media().heardNow === 'music', 5_000);
    await gone(window);
    const rejoin = await s.calls.rejoin(callId, 'alice');
    if (!rejoin.ok) throw new Error(rejoin.refusal.message);
    expect(await routesOn(s.node, callId)).toEqual({ [CUSTOMER]: [HOLD_MUSIC] });
    const reloaded = track(new AgentWindow(TONE_B));
    expect(await s.calls.rejoinAnswer(callId, 'alice', rejoin.value.legId, await reloaded.answer(rejoin.value.offer))).toEqual({ ok: true, value: null });
    expect(await routesOn(s.node, callId)).toEqual({ [CUSTOMER]: [HOLD_MUSIC], [rejoin.value.legId]: [] });
    await sleep(600);
    expect(customer.peer.media().heardNow).toBe('music');
    expect(await s.calls.hold(callId, 'alice', false)).toEqual({ ok: true, value: null });
    await eventually('the customer to hear her again', () => customer.hears(TONE_B) > 0.3, 10_000);
  });

  it('a three-way call goes on with the colleague while one member is away, and takes it back on return', { timeout: 40_000 }, async () => {
    const s = stack();
    const callId = 'wacid.rejoin-3way';
    const { customer, window, legId: a } = await answeredCall(s, callId);
    const told: Array<{ agentId: string; type: string; legId?: string; sdp?: string }> = [];
    s.calls.onTransferEvent((event, agentId) => told.push({ agentId, type: event.type, ...(event.type === 'call.transfer_ring' ? { legId: event.legId, sdp: event.sdp } : {}) }));
    const consult = await s.calls.transfer(callId, 'alice', { to: 'bob', kind: 'consult' });
    if (!consult.ok) throw new Error(consult.refusal.message);
    const ring = told.find((t) => t.agentId === 'bob' && t.type === 'call.transfer_ring');
    if (ring?.legId === undefined || ring.sdp === undefined) throw new Error('bob was not rung');
    const bob = track(new AgentWindow(TONE_B));
    expect(await s.calls.answerTransfer(callId, consult.value.transferId, 'bob', ring.legId, await bob.answer(ring.sdp))).toEqual({ ok: true, value: null });
    const b = ring.legId;

    // Away during the consult: the customer keeps the music, bob hears nobody.
    await gone(window);
    const during = await s.calls.rejoin(callId, 'alice');
    if (!during.ok) throw new Error(during.refusal.message);
    expect(await routesOn(s.node, callId)).toEqual({ [CUSTOMER]: [HOLD_MUSIC], [b]: [] });
    const back = track(new AgentWindow(TONE_A));
    expect(await s.calls.rejoinAnswer(callId, 'alice', during.value.legId, await back.answer(during.value.offer))).toEqual({ ok: true, value: null });
    const a2 = during.value.legId;
    expect(a2).not.toBe(a);
    expect(await routesOn(s.node, callId)).toEqual({ [CUSTOMER]: [HOLD_MUSIC], [a2]: [b], [b]: [a2] });

    // The three-way call: away, bob and the customer go on talking.
    expect(await s.calls.joinTransfer(callId, consult.value.transferId, 'alice')).toEqual({ ok: true, value: null });
    await gone(back);
    const away = await s.calls.rejoin(callId, 'alice');
    if (!away.ok) throw new Error(away.refusal.message);
    expect(await routesOn(s.node, callId)).toEqual({ [CUSTOMER]: [b], [b]: [CUSTOMER] });
    await eventually('the customer to hear bob alone', () => customer.hears(TONE_B) > 0.3, 10_000);
    const third = track(new AgentWindow(TONE_A));
    expect(await s.calls.rejoinAnswer(callId, 'alice', away.value.legId, await third.answer(away.value.offer))).toEqual({ ok: true, value: null });
    const a3 = away.value.legId;
    // She keeps her place in the call: her new leg where her old one was.
    expect(await routesOn(s.node, callId)).toEqual({ [CUSTOMER]: [a3, b], [a3]: [CUSTOMER, b], [b]: [CUSTOMER, a3] });
    await eventually('the customer to hear both again', () => customer.hears(TONE_A) > 0.15 && customer.hears(TONE_B) > 0.15, 10_000);
  });

  it('a member away in a three-way call who hangs up before answering its new leg: that leg closes with the old one, bob keeps the customer', { timeout: 40_000 }, async () => {
    const s = stack();
    const callId = 'wacid.rejoin-stray';
    const { window } = await answeredCall(s, callId);
    let ring: { legId: string; sdp: string } | undefined;
    s.calls.onTransferEvent((event, agentId) => {
      if (agentId === 'bob' && event.type === 'call.transfer_ring') ring = { legId: event.legId, sdp: event.sdp };
    });
    const consult = await s.calls.transfer(callId, 'alice', { to: 'bob', kind: 'consult' });
    if (!consult.ok || ring === undefined) throw new Error('bob was not rung');
    const bob = track(new AgentWindow(TONE_B));
    expect(await s.calls.answerTransfer(callId, consult.value.transferId, 'bob', ring.legId, await bob.answer(ring.sdp))).toEqual({ ok: true, value: null });
    expect(await s.calls.joinTransfer(callId, consult.value.transferId, 'alice')).toEqual({ ok: true, value: null });
    await gone(window);
    const away = await s.calls.rejoin(callId, 'alice');
    if (!away.ok) throw new Error(away.refusal.message);
    const offered = await s.node.report(callId);
    if (!offered.ok) throw new Error(offered.error.message);
    expect(Object.keys(offered.value.agents)).toContain(away.value.legId);

    expect(await s.calls.leave(callId, 'alice')).toEqual({ ok: true, value: { last: false } });
    const report = await s.node.report(callId);
    if (!report.ok) throw new Error(report.error.message);
    expect(Object.keys(report.value.agents)).toEqual([ring.legId]);
  });

  it('answers 404 for a call it does not know', async () => {
    const s = stack();
    expect(await s.calls.rejoin('wacid.none', 'alice')).toMatchObject({ ok: false, refusal: { status: 404, code: 'not_found' } });
    expect(await s.calls.rejoinAnswer('wacid.none', 'alice', 'leg-x', 'v=0')).toMatchObject({ ok: false, refusal: { status: 404 } });
  });
});

describe('the rejoin window', () => {
  it('counts from the node’s leg_failed, backdated to the leg’s last packet; the app’s later rejoin keeps that start', { timeout: 30_000 }, async () => {
    const s = stack({ windowMs: 4_000, mediaTimeoutMs: 1_000 });
    const callId = 'wacid.rejoin-failed';
    const { customer, window, legId } = await answeredCall(s, callId);
    const goneAt = Date.now();
    await gone(window);
    // The node fails the leg after its media timeout (1 s): the window then counts from the last packet.
    await eventually('the leg to fail', async () => {
      const report = await s.node.report(callId);
      return report.ok && report.value.agents[legId]?.state === 'failed';
    }, 5_000);
    expect(await routesOn(s.node, callId)).toEqual({ [CUSTOMER]: [HOLD_MUSIC] });
    await eventually('the customer to hear the music', () => customer.peer.media().heardNow === 'music', 3_000);
    const rejoinAt = Date.now();
    expect((await s.calls.rejoin(callId, 'alice')).ok).toBe(true);
    await eventually('alice to be told she was not back', () => s.notBack.length > 0, 8_000);
    // 4 s from the last packet, not from the rejoin that came well after it.
    expect(s.notBack[0]!.at - goneAt).toBeLessThan(4_700);
    expect(s.notBack[0]!.at - rejoinAt).toBeLessThan(4_000);
    expect(s.notBack[0]).toMatchObject({ callId, agentId: 'alice', goesOn: false, awaySec: 4 });
  });

  it('an answered leg that never connects does not bring the member back: its window runs out, and the call is given up', { timeout: 30_000 }, async () => {
    const s = stack({ windowMs: 2_500 });
    const callId = 'wacid.rejoin-never-connects';
    const { window } = await answeredCall(s, callId);
    await gone(window);
    const rejoin = await s.calls.rejoin(callId, 'alice');
    if (!rejoin.ok) throw new Error(rejoin.refusal.message);
    // The reloaded window answers, then goes before its leg connects (a crash, a network gone again).
    const brief = new AgentWindow(TONE_B);
    const sdp = await brief.answer(rejoin.value.offer);
    await brief.close();
    expect(await s.calls.rejoinAnswer(callId, 'alice', rejoin.value.legId, sdp)).toEqual({ ok: true, value: null });
    // Routed at its answer, so that media would flow as soon as it connected.
    expect(await routesOn(s.node, callId)).toEqual({ [CUSTOMER]: [rejoin.value.legId], [rejoin.value.legId]: [CUSTOMER] });
    await eventually('alice to be told she was not back', () => s.notBack.length > 0, 8_000);
    expect(s.notBack).toEqual([{ callId, agentId: 'alice', goesOn: false, awaySec: 3, at: expect.any(Number) as number }]);
    expect(await s.calls.rejoin(callId, 'alice')).toMatchObject({ ok: false, refusal: { status: 410, code: 'call_ended' } });
  });

  /** Alice's window goes, a new one answers her new leg and the customer hears it; then a 5 s rejoin window passes. */
  async function rejoinedPastTheWindow(s: Stack, callId: string): Promise<{ legId: string }> {
    const { customer, window } = await answeredCall(s, callId);
    await gone(window);
    const rejoinAt = Date.now();
    const rejoin = await s.calls.rejoin(callId, 'alice');
    if (!rejoin.ok) throw new Error(rejoin.refusal.message);
    const reloaded = track(new AgentWindow(TONE_B));
    expect(await s.calls.rejoinAnswer(callId, 'alice', rejoin.value.legId, await reloaded.answer(rejoin.value.offer))).toEqual({ ok: true, value: null });
    await eventually('the customer to hear the rejoined window', () => customer.hears(TONE_B) > 0.3, 10_000);
    await sleep(Math.max(0, rejoinAt + 5_500 - Date.now()));
    return { legId: rejoin.value.legId };
  }

  it('a member whose new leg connects is back: its window counts no more', { timeout: 30_000 }, async () => {
    const s = stack({ windowMs: 5_000 });
    const callId = 'wacid.rejoin-connects';
    await rejoinedPastTheWindow(s, callId);
    expect(s.notBack).toEqual([]);
    expect(await s.calls.hold(callId, 'alice', true)).toEqual({ ok: true, value: null });
  });

  it('a leg_connected lost on its way: the node’s report at the window’s end says the leg is connected, and the member stays', { timeout: 30_000 }, async () => {
    const s = stack({ windowMs: 5_000, followEvents: false });
    const callId = 'wacid.rejoin-word-lost';
    const { legId } = await rejoinedPastTheWindow(s, callId);
    expect(s.notBack).toEqual([]);
    expect(await routesOn(s.node, callId)).toEqual({ [CUSTOMER]: [legId], [legId]: [CUSTOMER] });
  });

  it('with the key: the agent is told first, then the relay ends the call at the gateway and the node lets it go; a late rejoin is 410', { timeout: 30_000 }, async () => {
    const gateway = await fakeGateway();
    const terminator = track(new GatewayTerminator({ target: () => ({ url: gateway.url, apiKey: 'team-key-0123456789' }), logger: quietLogger }));
    const s = stack({ windowMs: 800, terminator, storeMs: 150 });
    const callId = 'wacid.rejoin-gone';
    const { window } = await answeredCall(s, callId);
    await gone(window);
    expect((await s.calls.rejoin(callId, 'alice')).ok).toBe(true);
    await eventually('the gateway to be asked to end the call', () => gateway.seen.length > 0, 5_000);
    expect(gateway.seen).toEqual([{ url: '/chatapp/calls/terminate', apiKey: 'team-key-0123456789', body: { messaging_product: 'chatapp', call_id: callId, action: 'terminate' }, at: expect.any(Number) as number }]);
    expect(s.notBack).toEqual([{ callId, agentId: 'alice', goesOn: false, awaySec: 1, at: expect.any(Number) as number }]);
    expect(s.notBack[0]!.at).toBeLessThanOrEqual(gateway.seen[0]!.at);
    await eventually('the node to end the call', async () => !(await s.node.report(callId)).ok);
    expect(s.calls.isBridged(callId)).toBe(false);
    expect(await s.calls.rejoin(callId, 'alice')).toMatchObject({ ok: false, refusal: { status: 410, code: 'call_ended' } });
    // The app's hang-up after the news leaves through the relay, which says the gateway needs nothing more.
    expect(await s.calls.leave(callId, 'alice')).toMatchObject({ ok: false, refusal: { status: 410, code: 'call_ended' } });
    expect(gateway.seen).toHaveLength(1);
  });

  it('an agent that hangs up as the relay ends the call at the gateway waits for that terminate, and is told 410', { timeout: 30_000 }, async () => {
    const gateway = await fakeGateway(200, 300);
    const terminator = track(new GatewayTerminator({ target: () => ({ url: gateway.url, apiKey: 'team-key-0123456789' }), logger: quietLogger }));
    const s = stack({ windowMs: 800, terminator });
    const callId = 'wacid.rejoin-leave-race';
    const { window } = await answeredCall(s, callId);
    await gone(window);
    expect((await s.calls.rejoin(callId, 'alice')).ok).toBe(true);
    await eventually('alice to be told', () => s.notBack.length > 0, 5_000);
    expect(await s.calls.leave(callId, 'alice')).toMatchObject({ ok: false, refusal: { status: 410, code: 'call_ended' } });
    expect(gateway.seen).toHaveLength(1);
    // A terminate that fails leaves the hang-up to the agent: the relay no longer knows the call.
    const failing = await fakeGateway(400);
    const refused = track(new GatewayTerminator({ target: () => ({ url: failing.url, apiKey: 'team-key-0123456789' }), logger: quietLogger }));
    expect((await refused.terminate('wacid.over')).ok).toBe(false);
    expect(await refused.endedAtGateway('wacid.over')).toBe(false);
    expect(await terminator.endedAtGateway(callId)).toBe(true);
  });

  it('without the key: the customer is let go, hearing nothing, the call kept (410) until the service ends it', { timeout: 30_000 }, async () => {
    const s = stack({ windowMs: 800 });
    const callId = 'wacid.rejoin-keyless';
    const { customer, window } = await answeredCall(s, callId);
    await gone(window);
    expect((await s.calls.rejoin(callId, 'alice')).ok).toBe(true);
    await eventually('alice to be told', () => s.notBack.length > 0, 5_000);
    await sleep(300);
    const count = customer.packets.length;
    await sleep(1_200);
    expect(customer.packets.length).toBe(count);
    const report = await s.node.report(callId);
    expect(report).toMatchObject({ ok: true, value: { customer: { state: 'connected' }, agents: {} } });
    expect(s.calls.isBridged(callId)).toBe(true);
    expect(await s.calls.rejoin(callId, 'alice')).toMatchObject({ ok: false, refusal: { status: 410, code: 'call_ended' } });
    await s.calls.ended(callId);
    expect((await s.node.report(callId)).ok).toBe(false);
  });

  it('a gateway that cannot end the call: the customer is let go instead', { timeout: 30_000 }, async () => {
    const gateway = await fakeGateway(503);
    const terminator = track(new GatewayTerminator({ target: () => ({ url: gateway.url, apiKey: 'team-key-0123456789' }), logger: quietLogger, firstPauseMs: 10 }));
    const s = stack({ windowMs: 600, terminator });
    const callId = 'wacid.rejoin-unreached';
    const { customer, window } = await answeredCall(s, callId);
    await gone(window);
    expect((await s.calls.rejoin(callId, 'alice')).ok).toBe(true);
    await eventually('the gateway to be tried four times', () => gateway.seen.length === 4, 5_000);
    await eventually('the node to let the customer go', async () => {
      const report = await s.node.report(callId);
      return report.ok && Object.keys(report.value.agents).length === 0;
    });
    await sleep(300);
    const count = customer.packets.length;
    await sleep(800);
    expect(customer.packets.length).toBe(count);
  });

  it('in a three-way call the member not back is removed and told goesOn; bob keeps the customer', { timeout: 40_000 }, async () => {
    const gateway = await fakeGateway();
    const terminator = track(new GatewayTerminator({ target: () => ({ url: gateway.url, apiKey: 'team-key-0123456789' }), logger: quietLogger }));
    const s = stack({ windowMs: 1_000, terminator });
    const callId = 'wacid.rejoin-goes-on';
    const { customer, window } = await answeredCall(s, callId);
    const updates: string[] = [];
    let ring: { legId: string; sdp: string } | undefined;
    s.calls.onTransferEvent((event, agentId) => {
      if (event.type === 'call.transfer_ring') ring = { legId: event.legId, sdp: event.sdp };
      else updates.push(`${agentId}:${event.state}`);
    });
    const consult = await s.calls.transfer(callId, 'alice', { to: 'bob', kind: 'consult' });
    if (!consult.ok || ring === undefined) throw new Error('bob was not rung');
    const bob = track(new AgentWindow(TONE_B));
    expect(await s.calls.answerTransfer(callId, consult.value.transferId, 'bob', ring.legId, await bob.answer(ring.sdp))).toEqual({ ok: true, value: null });
    expect(await s.calls.joinTransfer(callId, consult.value.transferId, 'alice')).toEqual({ ok: true, value: null });
    await gone(window);
    expect((await s.calls.rejoin(callId, 'alice')).ok).toBe(true);
    await eventually('alice to be told', () => s.notBack.length > 0, 5_000);
    expect(s.notBack).toEqual([{ callId, agentId: 'alice', goesOn: true, awaySec: 1, at: expect.any(Number) as number }]);
    expect(updates.at(-1)).toBe('bob:with_customer');
    expect(await routesOn(s.node, callId)).toEqual({ [CUSTOMER]: [ring.legId], [ring.legId]: [CUSTOMER] });
    await eventually('the customer to hear bob', () => customer.hears(TONE_B) > 0.3, 10_000);
    expect(gateway.seen).toEqual([]);
    expect(await s.calls.rejoin(callId, 'alice')).toMatchObject({ ok: false, refusal: { status: 403 } });
    expect(await s.calls.leave(callId, 'bob')).toEqual({ ok: true, value: { last: true } });
  });
});
