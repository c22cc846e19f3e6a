// A consult and its join through a real node (bridge/REFERENCE.md "Transfers"): the relay's
// BridgedCalls driving a BridgeNode in this process, the sandbox's customer facing it, and two werift
// windows playing their own tones. The node's routes are what the relay decided, and the media
// follows them: the consulting agents hear each other, then all three hear each other.
import { afterEach, expect, it } from 'vitest';
import { MemoryBackend } from '../../../relay/backend/memory-backend';
import { BridgedCalls, localBridge, type TransferEvent } from '../../../relay/bridged-calls';
import { CUSTOMER, HOLD_MUSIC } from '../../../shared/bridge';
import { AgentWindow } from '../bridge/agent-window';
import { eventually, HOST, quietLogger, ServiceCustomer, startNode, TONE_A, TONE_B } from '../bridge/bridge-harness';
import { agent } from './transfer-fixtures';

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

it('routes a consult and then a three-way call on the node, and its media follows', { timeout: 30_000 }, async () => {
  const { node } = startNode({ publicAddress: HOST });
  closing.push(() => node.close());
  const told: { agentId: string; event: TransferEvent }[] = [];
  const calls = new BridgedCalls({
    nodes: localBridge(node),
    placements: new MemoryBackend({ retentionMs: 600_000, dedupWindowMs: 600_000 }),
    ownerOf: () => Promise.resolve('alice'),
    team: () => [agent('alice'), agent('bob')],
    logger: quietLogger,
  });
  closing.push(() => calls.close());
  calls.onTransferEvent((event, agentId) => told.push({ agentId, event }));
  const callId = 'wacid.node-consult';

  // Alice answers the customer's call as the app does: her leg, her window's answer, the accept.
  const customer = new ServiceCustomer();
  closing.push(() => customer.close());
  const offer = await customer.peer.makeOffer();
  if (!offer.ok) throw new Error(offer.error.message);
  expect(await calls.takeIncoming(callId, offer.value, { from: '447700900123' })).toBe('taken');
  const leg = await calls.legFor(callId, 'alice');
  if (!leg.ok) throw new Error(leg.refusal.message);
  const alice = new AgentWindow(TONE_A);
  closing.push(() => alice.close());
  const customerAnswer = await calls.answer(callId, 'alice', leg.value.legId, await alice.answer(leg.value.offer));
  if (!customerAnswer.ok) throw new Error(customerAnswer.refusal.message);
  expect(await customer.peer.applyAnswer(customerAnswer.value.sdp)).toEqual({ ok: true, value: undefined });
  expect(await calls.accepted(callId, 'alice')).toEqual({ ok: true, value: null });
  await eventually('the customer to hear alice', () => customer.hears(TONE_A) > 0.3, 10_000);

  // She consults bob: his window answers the leg his ring carries.
  const started = await calls.transfer(callId, 'alice', { to: 'bob', kind: 'consult' });
  if (!started.ok) throw new Error(started.refusal.message);
  const ring = told.find((t) => t.agentId === 'bob')?.event;
  if (ring?.type !== 'call.transfer_ring') throw new Error('bob was not rung');
  const bob = new AgentWindow(TONE_B);
  closing.push(() => bob.close());
  expect(await calls.answerTransfer(callId, started.value.transferId, 'bob', ring.legId, await bob.answer(ring.sdp))).toEqual({ ok: true, value: null });
  const [a, b] = [leg.value.legId, ring.legId];

  const consulting = await node.report(callId);
  expect(consulting.ok && consulting.value.routes).toEqual({ [CUSTOMER]: [HOLD_MUSIC], [a]: [b], [b]: [a] });
  await eventually('bob to hear alice', () => bob.hears(TONE_A).share > 0.3, 10_000);
  await eventually('alice to hear bob', () => alice.hears(TONE_B).share > 0.3, 10_000);
  expect(customer.hears(TONE_B)).toBeLessThan(0.05);

  // Add to call: the three hear each other.
  expect(await calls.joinTransfer(callId, started.value.transferId, 'alice')).toEqual({ ok: true, value: null });
  const joined = await node.report(callId);
  expect(joined.ok && joined.value.routes).toEqual({ [CUSTOMER]: [a, b], [a]: [CUSTOMER, b], [b]: [CUSTOMER, a] });
  await eventually('the customer to hear both agents', () => customer.hears(TONE_A) > 0.15 && customer.hears(TONE_B) > 0.15, 10_000);
  expect(told.filter((t) => t.event.type === 'call.transfer_update').map((t) => `${t.agentId}:${t.event.type === 'call.transfer_update' ? t.event.state : ''}`)).toEqual([
    'alice:ringing',
    'alice:consulting',
    'alice:joined',
    'bob:joined',
  ]);
});
