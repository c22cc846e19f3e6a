// Transfers, consults and three-way calls of bridged calls (bridge/REFERENCE.md "Transfers"): who
// is in the call, who hears whom in every state, what each agent is told, and every refusal. The
// node is a recording one (transfer-fixtures.ts): what is tested is the relay's decisions.
import { describe, expect, it } from 'vitest';
import { CUSTOMER, HOLD_MUSIC } from '../../../shared/bridge';
import { BAD_SDP, CALLER, TransferHarness } from './transfer-fixtures';

const CALL = 'wacid.transfer-1';
const music = HOLD_MUSIC;
const customer = CUSTOMER;

async function started(h: TransferHarness, to: string, kind: 'transfer' | 'consult', by = 'alice', callId = CALL): Promise<string> {
  const outcome = await h.calls.transfer(callId, by, { to, kind });
  if (!outcome.ok) throw new Error(outcome.refusal.message);
  return outcome.value.transferId;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('one agent in the call', () => {
  it('the customer and the agent hear each other; held, the customer hears the music and the agent nothing', async () => {
    const h = new TransferHarness();
    await h.answeredCall(CALL, 'alice');
    expect(h.routes(CALL)).toEqual({ customer: ['alice'], alice: [customer] });
    expect(await h.calls.hold(CALL, 'alice', true)).toEqual({ ok: true, value: null });
    expect(h.routes(CALL)).toEqual({ customer: [music], alice: [] });
    expect(await h.calls.hold(CALL, 'alice', false)).toEqual({ ok: true, value: null });
    expect(h.routes(CALL)).toEqual({ customer: ['alice'], alice: [customer] });
    expect(h.calls.participantsOf(CALL)).toBeUndefined();
  });

  it('between its answer and the accept, the agent whose leg answered reads the quality; nobody else', async () => {
    const h = new TransferHarness();
    await h.calls.takeIncoming(CALL, 'service-offer', CALLER);
    const leg = await h.calls.legFor(CALL, 'alice');
    if (!leg.ok) throw new Error(leg.refusal.message);
    await h.calls.legFor(CALL, 'bob');
    expect(await h.calls.customerQuality(CALL, 'alice')).toMatchObject({ ok: false, refusal: { status: 403 } });
    h.claim(CALL, 'alice');
    expect((await h.calls.answer(CALL, 'alice', leg.value.legId, 'window-answer')).ok).toBe(true);
    expect((await h.calls.customerQuality(CALL, 'alice')).ok).toBe(true);
    expect(await h.calls.customerQuality(CALL, 'bob')).toMatchObject({ ok: false, refusal: { status: 403 } });
    expect(await h.calls.transfer(CALL, 'alice', { to: 'bob', kind: 'transfer' })).toMatchObject({ ok: false, refusal: { status: 403 } });
  });

  it('a dialled call: the agent who dialled is in it, and a transfer’s ring carries the number its status named', async () => {
    const h = new TransferHarness();
    await h.dialledCall('wacid.out-1', 'alice');
    expect(h.routes('wacid.out-1')).toEqual({ customer: ['alice'], alice: [customer] });
    h.calls.customerNumber('wacid.out-1', '447700900999');
    await started(h, 'bob', 'transfer', 'alice', 'wacid.out-1');
    expect(h.ringOf('bob')).toMatchObject({ callId: 'wacid.out-1', from: '447700900999', by: { agentId: 'alice', name: 'Alice Agent' } });
    expect(h.ringOf('bob').name).toBeUndefined();
  });
});

describe('a cold transfer', () => {
  it('rings the colleague with its own leg while the customer hears the music; its answer hands the customer over and the agent leaves', async () => {
    const h = new TransferHarness();
    const aliceLeg = await h.answeredCall(CALL, 'alice');
    const transferId = await started(h, 'bob', 'transfer');
    expect(h.routes(CALL)).toEqual({ customer: [music], alice: [] });
    const ring = h.ringOf('bob');
    expect(ring).toEqual({
      type: 'call.transfer_ring',
      callId: CALL,
      transferId,
      kind: 'transfer',
      by: { agentId: 'alice', name: 'Alice Agent' },
      ...CALLER,
      legId: ring.legId,
      sdp: `offer-${ring.legId}`,
      timestamp: expect.any(Number),
    });
    expect(h.updatesOf('alice')).toEqual(['ringing:bob']);
    expect(h.told.filter((t) => t.agentId === 'carol')).toEqual([]);
    expect(h.calls.participantsOf(CALL)?.sort()).toEqual(['alice', 'bob']);

    expect(await h.answerRing(CALL, transferId, 'bob')).toEqual({ ok: true, value: null });
    expect(h.control.answers.get(ring.legId)).toBe('window-answer-bob');
    expect(h.routes(CALL)).toEqual({ customer: ['bob'], bob: [customer] });
    expect(h.control.closed).toEqual([aliceLeg]);
    expect(h.updatesOf('alice')).toEqual(['ringing:bob', 'transferred:bob']);
    expect(h.updatesOf('bob')).toEqual([]);

    // The call is bob's now: he holds it, reads its quality and transfers it; alice does none of it.
    expect(await h.calls.hold(CALL, 'alice', true)).toMatchObject({ ok: false, refusal: { status: 403, message: 'only the agent on the call holds it' } });
    expect(await h.calls.customerQuality(CALL, 'alice')).toMatchObject({ ok: false, refusal: { status: 403, message: 'only the agent on the call reads its quality' } });
    expect((await h.calls.customerQuality(CALL, 'bob')).ok).toBe(true);
    expect(await h.calls.hold(CALL, 'bob', true)).toEqual({ ok: true, value: null });
    expect(h.routes(CALL)).toEqual({ customer: [music], bob: [] });
    // Alice hangs up before she hears she handed the customer over: she is not the last, nothing changes.
    const routed = h.routes(CALL);
    expect(await h.calls.leave(CALL, 'alice')).toEqual({ ok: true, value: { last: false } });
    expect(h.routes(CALL)).toEqual(routed);
    expect(h.control.closed).toEqual([aliceLeg]);
    // The same answer again is taken; an accept repeated by the agent who left is refused.
    expect(await h.answerRing(CALL, transferId, 'bob')).toEqual({ ok: true, value: null });
    expect(await h.calls.accepted(CALL, 'alice')).toMatchObject({ ok: false, refusal: { status: 409, code: 'invalid_state' } });
    expect(h.calls.participantsOf(CALL)?.sort()).toEqual(['alice', 'bob']);
  });

  it('a held call stays held when the colleague declines, and its events keep going to everyone rung', async () => {
    const h = new TransferHarness();
    await h.answeredCall(CALL, 'alice');
    await h.calls.hold(CALL, 'alice', true);
    const transferId = await started(h, 'bob', 'transfer');
    expect(h.routes(CALL)).toEqual({ customer: [music], alice: [] });
    expect(await h.calls.declineTransfer(CALL, transferId, 'bob')).toEqual({ ok: true, value: null });
    expect(h.closedLegs()).toEqual(['bob']);
    expect(h.updatesOf('alice')).toEqual(['ringing:bob', 'not_answered:bob:declined']);
    expect(h.updatesOf('bob')).toEqual([]);
    expect(h.routes(CALL)).toEqual({ customer: [music], alice: [] });
    expect(h.calls.participantsOf(CALL)?.sort()).toEqual(['alice', 'bob']);
    // A decline repeated is taken; an answer after it is refused.
    expect(await h.calls.declineTransfer(CALL, transferId, 'bob')).toEqual({ ok: true, value: null });
    expect(await h.answerRing(CALL, transferId, 'bob')).toMatchObject({ ok: false, refusal: { status: 409, code: 'invalid_state' } });
    // Resumed, alice is with the customer again, and may transfer anew.
    await h.calls.hold(CALL, 'alice', false);
    expect(h.routes(CALL)).toEqual({ customer: ['alice'], alice: [customer] });
    expect((await h.calls.transfer(CALL, 'alice', { to: 'carol', kind: 'transfer' })).ok).toBe(true);
  });
});

describe('a consult', () => {
  async function consulting(): Promise<{ h: TransferHarness; transferId: string; aliceLeg: string }> {
    const h = new TransferHarness();
    const aliceLeg = await h.answeredCall(CALL, 'alice');
    const transferId = await started(h, 'bob', 'consult');
    expect(h.ringOf('bob').kind).toBe('consult');
    expect(h.routes(CALL)).toEqual({ customer: [music], alice: [] });
    expect(await h.answerRing(CALL, transferId, 'bob')).toEqual({ ok: true, value: null });
    expect(h.routes(CALL)).toEqual({ customer: [music], alice: ['bob'], bob: ['alice'] });
    expect(h.updatesOf('alice')).toEqual(['ringing:bob', 'consulting:bob']);
    expect(h.control.closed).toEqual([]);
    return { h, transferId, aliceLeg };
  }

  it('the two agents talk while the customer hears the music; complete hands the customer to the colleague', async () => {
    const { h, transferId, aliceLeg } = await consulting();
    // Both are in the call: either reads its quality; nobody holds it or starts another transfer.
    expect((await h.calls.customerQuality(CALL, 'bob')).ok).toBe(true);
    expect(await h.calls.hold(CALL, 'alice', true)).toMatchObject({ ok: false, refusal: { status: 409, code: 'invalid_state' } });
    expect(await h.calls.transfer(CALL, 'alice', { to: 'carol', kind: 'transfer' })).toMatchObject({ ok: false, refusal: { status: 409, code: 'invalid_state', message: 'a transfer of this call is under way: one at a time' } });
    expect(await h.calls.completeTransfer(CALL, transferId, 'bob')).toMatchObject({ ok: false, refusal: { status: 403, code: 'forbidden', message: 'only the agent who started the transfer completes it' } });

    expect(await h.calls.completeTransfer(CALL, transferId, 'alice')).toEqual({ ok: true, value: null });
    expect(h.routes(CALL)).toEqual({ customer: ['bob'], bob: [customer] });
    expect(h.control.closed).toEqual([aliceLeg]);
    expect(h.updatesOf('alice')).toEqual(['ringing:bob', 'consulting:bob', 'transferred:bob']);
    expect(h.updatesOf('bob')).toEqual(['with_customer:alice']);
    expect(await h.calls.completeTransfer(CALL, transferId, 'alice')).toMatchObject({ ok: false, refusal: { status: 409, code: 'invalid_state', message: 'the transfer is over' } });
  });

  it('join makes a three-way call: everyone hears everyone else; it is neither held nor transferred', async () => {
    const { h, transferId } = await consulting();
    expect(await h.calls.joinTransfer(CALL, transferId, 'alice')).toEqual({ ok: true, value: null });
    expect(h.routes(CALL)).toEqual({ customer: ['alice', 'bob'], alice: [customer, 'bob'], bob: [customer, 'alice'] });
    expect(h.updatesOf('alice')).toEqual(['ringing:bob', 'consulting:bob', 'joined:bob']);
    expect(h.updatesOf('bob')).toEqual(['joined:alice']);
    expect(await h.calls.hold(CALL, 'bob', true)).toMatchObject({ ok: false, refusal: { status: 409, code: 'invalid_state', message: 'a three-way call is not held' } });
    expect(await h.calls.transfer(CALL, 'bob', { to: 'carol', kind: 'consult' })).toMatchObject({ ok: false, refusal: { status: 409, code: 'invalid_state' } });
    expect(h.told.some((t) => t.agentId === 'carol')).toBe(false);
    expect(await h.calls.joinTransfer(CALL, transferId, 'alice')).toMatchObject({ ok: false, refusal: { status: 409 } });
  });

  it('cancel while consulting: the colleague’s leg closes and the agent is back with the customer', async () => {
    const { h, transferId } = await consulting();
    expect(await h.calls.cancelTransfer(CALL, transferId, 'bob')).toMatchObject({ ok: false, refusal: { status: 403, message: 'only the agent who started the transfer cancels it' } });
    expect(await h.calls.cancelTransfer(CALL, transferId, 'alice')).toEqual({ ok: true, value: null });
    expect(h.closedLegs()).toEqual(['bob']);
    expect(h.routes(CALL)).toEqual({ customer: ['alice'], alice: [customer] });
    expect(h.updatesOf('bob')).toEqual(['cancelled:alice']);
    expect(h.updatesOf('alice')).toEqual(['ringing:bob', 'consulting:bob', 'cancelled:bob']);
    // Bob hangs up before he hears of it: alice has the customer, so he is not the last, and nothing changes.
    expect(await h.calls.leave(CALL, 'bob')).toEqual({ ok: true, value: { last: false } });
    expect(h.routes(CALL)).toEqual({ customer: ['alice'], alice: [customer] });
  });

  it('a consult from a held call: once answered the call is not held, so a cancel brings the agent back talking', async () => {
    const h = new TransferHarness();
    await h.answeredCall(CALL, 'alice');
    await h.calls.hold(CALL, 'alice', true);
    const transferId = await started(h, 'bob', 'consult');
    expect(await h.answerRing(CALL, transferId, 'bob')).toEqual({ ok: true, value: null });
    expect(h.routes(CALL)).toEqual({ customer: [music], alice: ['bob'], bob: ['alice'] });
    expect(await h.calls.cancelTransfer(CALL, transferId, 'alice')).toEqual({ ok: true, value: null });
    expect(h.routes(CALL)).toEqual({ customer: ['alice'], alice: [customer] });
  });

  it('cancel while ringing: the colleague stops ringing; its late answer is refused as over', async () => {
    const h = new TransferHarness();
    await h.answeredCall(CALL, 'alice');
    const transferId = await started(h, 'bob', 'consult');
    expect(await h.calls.completeTransfer(CALL, transferId, 'alice')).toMatchObject({ ok: false, refusal: { status: 409, message: 'only a consult the colleague answered is completed' } });
    expect(await h.calls.joinTransfer(CALL, transferId, 'alice')).toMatchObject({ ok: false, refusal: { status: 409, message: 'only a consult the colleague answered becomes a three-way call' } });
    expect(await h.calls.cancelTransfer(CALL, transferId, 'alice')).toEqual({ ok: true, value: null });
    expect(h.closedLegs()).toEqual(['bob']);
    expect(h.routes(CALL)).toEqual({ customer: ['alice'], alice: [customer] });
    expect(h.updatesOf('bob')).toEqual(['cancelled:alice']);
    expect(h.updatesOf('alice')).toEqual(['ringing:bob', 'cancelled:bob']);
    expect(await h.answerRing(CALL, transferId, 'bob')).toEqual({
      ok: false,
      refusal: { status: 409, code: 'invalid_state', message: 'the transfer is over: it was cancelled or not answered in time' },
    });
    expect(await h.calls.cancelTransfer(CALL, transferId, 'alice')).toMatchObject({ ok: false, refusal: { status: 409, code: 'invalid_state' } });
  });
});

describe('"Anyone available"', () => {
  it('rings every free colleague but the agent; the first answer takes it, the other is told and refused', async () => {
    const h = new TransferHarness();
    h.team.push({ ...h.team[1]!, agentId: 'erin', name: 'Erin Agent', presence: 'on_call' });
    await h.answeredCall(CALL, 'alice');
    const transferId = await started(h, 'available', 'transfer');
    const rung = h.told.filter((t) => t.event.type === 'call.transfer_ring').map((t) => t.agentId);
    expect(rung.sort()).toEqual(['bob', 'carol']);
    expect(h.updatesOf('alice')).toEqual(['ringing']);

    const [bob, carol] = await Promise.all([h.answerRing(CALL, transferId, 'bob'), h.answerRing(CALL, transferId, 'carol')]);
    expect(bob).toEqual({ ok: true, value: null });
    expect(carol).toEqual({ ok: false, refusal: { status: 409, code: 'already_claimed', message: 'Bob Agent answered the transfer first' } });
    expect(h.routes(CALL)).toEqual({ customer: ['bob'], bob: [customer] });
    expect(h.closedLegs().sort()).toEqual(['alice', 'carol']);
    expect(h.updatesOf('carol')).toEqual(['answered_elsewhere:bob']);
    expect(h.updatesOf('alice')).toEqual(['ringing', 'transferred:bob']);
    expect(await h.calls.declineTransfer(CALL, transferId, 'carol')).toMatchObject({ ok: false, refusal: { status: 409, code: 'already_claimed' } });
    expect(h.calls.participantsOf(CALL)?.sort()).toEqual(['alice', 'bob', 'carol']);
  });

  it('one of two declines: the other still rings and answers; declined by both, the agent is told, once', async () => {
    const h = new TransferHarness();
    await h.answeredCall(CALL, 'alice');
    const first = await started(h, 'available', 'consult');
    expect(await h.calls.declineTransfer(CALL, first, 'bob')).toEqual({ ok: true, value: null });
    expect(h.updatesOf('alice')).toEqual(['ringing']);
    expect(h.routes(CALL)).toEqual({ customer: [music], alice: [] });
    expect(await h.answerRing(CALL, first, 'carol')).toEqual({ ok: true, value: null });
    expect(h.routes(CALL)).toEqual({ customer: [music], alice: ['carol'], carol: ['alice'] });
    expect(h.updatesOf('bob')).toEqual([]);
    expect(h.updatesOf('alice')).toEqual(['ringing', 'consulting:carol']);
    expect(await h.calls.cancelTransfer(CALL, first, 'alice')).toEqual({ ok: true, value: null });

    const second = await started(h, 'available', 'transfer');
    expect(await h.calls.declineTransfer(CALL, second, 'carol')).toEqual({ ok: true, value: null });
    expect(await h.calls.declineTransfer(CALL, second, 'bob')).toEqual({ ok: true, value: null });
    expect(h.updatesOf('alice').slice(3)).toEqual(['ringing', 'not_answered:declined']);
    expect(h.routes(CALL)).toEqual({ customer: ['alice'], alice: [customer] });
  });

  it('nobody free: 409 no colleague is available, and nothing rings', async () => {
    const h = new TransferHarness();
    h.team[1]!.presence = 'dnd';
    h.team[2]!.presence = 'on_call';
    await h.answeredCall(CALL, 'alice');
    expect(await h.calls.transfer(CALL, 'alice', { to: 'available', kind: 'transfer' })).toEqual({ ok: false, refusal: { status: 409, code: 'invalid_state', message: 'no colleague is available' } });
    expect(h.told).toEqual([]);
    expect(h.routes(CALL)).toEqual({ customer: ['alice'], alice: [customer] });
  });
});

describe('the ring’s end', () => {
  it('not answered in time: the colleague stops ringing, the agent is back with the customer', async () => {
    const h = new TransferHarness({ ringMs: 60 });
    await h.answeredCall(CALL, 'alice');
    const transferId = await started(h, 'bob', 'transfer');
    await expect.poll(() => h.updatesOf('alice')).toEqual(['ringing:bob', 'not_answered:bob:no_answer']);
    expect(h.updatesOf('bob')).toEqual(['cancelled:alice']);
    expect(h.closedLegs()).toEqual(['bob']);
    expect(h.routes(CALL)).toEqual({ customer: ['alice'], alice: [customer] });
    expect(await h.answerRing(CALL, transferId, 'bob')).toMatchObject({ ok: false, refusal: { status: 409, code: 'invalid_state' } });
  });

  it('an answer stops the clock; a call that ends stops it too', async () => {
    const h = new TransferHarness({ ringMs: 60 });
    await h.answeredCall(CALL, 'alice');
    const answered = await started(h, 'bob', 'consult');
    await h.answerRing(CALL, answered, 'bob');
    await h.answeredCall('wacid.transfer-2', 'carol');
    await started(h, 'alice', 'transfer', 'carol', 'wacid.transfer-2');
    await h.calls.ended('wacid.transfer-2');
    await sleep(150);
    expect(h.updatesOf('alice')).toEqual(['ringing:bob', 'consulting:bob']);
    expect(h.updatesOf('carol')).toEqual(['ringing:alice']);
    expect(h.routes(CALL)).toEqual({ customer: [music], alice: ['bob'], bob: ['alice'] });
  });
});

describe('leaving', () => {
  async function consult(h: TransferHarness): Promise<string> {
    await h.answeredCall(CALL, 'alice');
    const transferId = await started(h, 'bob', 'consult');
    await h.answerRing(CALL, transferId, 'bob');
    return transferId;
  }

  it('the agent who started a consult leaves: the colleague is alone with the customer', async () => {
    const h = new TransferHarness();
    const transferId = await consult(h);
    expect(await h.calls.leave(CALL, 'alice')).toEqual({ ok: true, value: { last: false } });
    expect(h.routes(CALL)).toEqual({ customer: ['bob'], bob: [customer] });
    expect(h.closedLegs()).toEqual(['alice']);
    expect(h.updatesOf('bob')).toEqual(['with_customer:alice']);
    expect(await h.calls.completeTransfer(CALL, transferId, 'alice')).toMatchObject({ ok: false, refusal: { status: 409 } });
    expect(await h.calls.leave(CALL, 'bob')).toEqual({ ok: true, value: { last: true } });
    expect(h.closedLegs()).toEqual(['alice']);
  });

  it('the consulted colleague leaves: the agent who started it is back with the customer', async () => {
    const h = new TransferHarness();
    await consult(h);
    expect(await h.calls.leave(CALL, 'bob')).toEqual({ ok: true, value: { last: false } });
    expect(h.routes(CALL)).toEqual({ customer: ['alice'], alice: [customer] });
    expect(h.closedLegs()).toEqual(['bob']);
    expect(h.updatesOf('alice')).toEqual(['ringing:bob', 'consulting:bob', 'with_customer:bob']);
    expect(h.updatesOf('bob')).toEqual([]);
  });

  it('one agent of a three-way call leaves: the other is alone with the customer', async () => {
    const h = new TransferHarness();
    const transferId = await consult(h);
    await h.calls.joinTransfer(CALL, transferId, 'alice');
    expect(await h.calls.leave(CALL, 'alice')).toEqual({ ok: true, value: { last: false } });
    expect(h.routes(CALL)).toEqual({ customer: ['bob'], bob: [customer] });
    expect(h.updatesOf('bob')).toEqual(['joined:alice', 'with_customer:alice']);
    const update = h.told.at(-1)!.event;
    expect(update).toMatchObject({ type: 'call.transfer_update', transferId, kind: 'consult', agentId: 'bob', colleague: { agentId: 'alice', name: 'Alice Agent' } });
    // Bob alone may hold it again and hand it on.
    expect(await h.calls.hold(CALL, 'bob', true)).toEqual({ ok: true, value: null });
    expect((await h.calls.transfer(CALL, 'bob', { to: 'carol', kind: 'transfer' })).ok).toBe(true);
  });

  it('the last agent leaves: a transfer it had ringing stops ringing, its own leg stays for the gateway’s end', async () => {
    const h = new TransferHarness();
    const aliceLeg = await h.answeredCall(CALL, 'alice');
    const transferId = await started(h, 'bob', 'transfer');
    expect(await h.calls.leave(CALL, 'alice')).toEqual({ ok: true, value: { last: true } });
    expect(h.closedLegs()).toEqual(['bob']);
    expect(h.control.closed).not.toContain(aliceLeg);
    expect(h.updatesOf('bob')).toEqual(['cancelled:alice']);
    expect(h.updatesOf('alice')).toEqual(['ringing:bob']);
    expect(await h.answerRing(CALL, transferId, 'bob')).toMatchObject({ ok: false, refusal: { status: 409, code: 'invalid_state' } });
    expect(await h.calls.leave(CALL, 'alice')).toEqual({ ok: true, value: { last: true } });
  });

  it('is for an agent in the call: 403 for another, 404 for an unknown call', async () => {
    const h = new TransferHarness();
    await h.answeredCall(CALL, 'alice');
    expect(await h.calls.leave(CALL, 'bob')).toEqual({ ok: false, refusal: { status: 403, code: 'forbidden', message: 'only an agent in the call leaves it' } });
    expect(await h.calls.leave('wacid.nope', 'alice')).toEqual({ ok: false, refusal: { status: 404, code: 'not_found', message: 'no bridged call wacid.nope' } });
  });
});

describe('refusals', () => {
  it('of a transfer: unknown call, not in the call, the colleague named wrongly or offline', async () => {
    const h = new TransferHarness();
    await h.answeredCall(CALL, 'alice');
    const refusal = async (callId: string, by: string, to: string) => {
      const outcome = await h.calls.transfer(callId, by, { to, kind: 'transfer' });
      return outcome.ok ? undefined : outcome.refusal;
    };
    expect(await refusal('wacid.nope', 'alice', 'bob')).toEqual({ status: 404, code: 'not_found', message: 'no bridged call wacid.nope' });
    expect(await refusal(CALL, 'bob', 'carol')).toEqual({ status: 403, code: 'forbidden', message: 'only an agent in the call transfers it' });
    expect(await refusal(CALL, 'alice', 'zed')).toEqual({ status: 404, code: 'not_found', message: 'to: no agent zed in the team', field: 'to' });
    expect(await refusal(CALL, 'alice', 'alice')).toEqual({ status: 400, code: 'invalid_input', message: 'to: an agent does not transfer a call to itself', field: 'to' });
    expect(await refusal(CALL, 'alice', 'dave')).toEqual({ status: 409, code: 'invalid_state', message: 'Dave Agent is offline' });
    // A colleague with a reported presence is not offline, whatever it is.
    h.team[3]!.presence = 'dnd';
    expect(await refusal(CALL, 'alice', 'dave')).toBeUndefined();
    expect(await refusal(CALL, 'alice', 'bob')).toEqual({ status: 409, code: 'invalid_state', message: 'a transfer of this call is under way: one at a time' });
    expect(h.control.offered).toHaveLength(2);
  });

  it('of a transfer whose legs the node cannot make: one colleague is skipped, all of them is 502', async () => {
    const h = new TransferHarness();
    await h.answeredCall(CALL, 'alice');
    h.control.failOffers = 1;
    await started(h, 'available', 'transfer');
    expect(h.told.filter((t) => t.event.type === 'call.transfer_ring')).toHaveLength(1);
    await h.answeredCall('wacid.transfer-2', 'bob');
    h.control.failOffers = 1;
    expect(await h.calls.transfer('wacid.transfer-2', 'bob', { to: 'carol', kind: 'consult' })).toEqual({
      ok: false,
      refusal: { status: 502, code: 'bridge_failed', message: 'the bridge could not ring a colleague: no port left for a leg' },
    });
    expect(h.routes('wacid.transfer-2')).toEqual({ customer: ['bob'], bob: [customer] });
    expect(h.updatesOf('bob')).toEqual([]);
  });

  it('of an answer: a description the node refuses is 400 sdp and the transfer rings on; another agent’s leg, a colleague not rung', async () => {
    const h = new TransferHarness();
    await h.answeredCall(CALL, 'alice');
    const transferId = await started(h, 'available', 'consult');
    expect(await h.answerRing(CALL, transferId, 'bob', BAD_SDP)).toEqual({ ok: false, refusal: { status: 400, code: 'invalid_input', message: 'sdp: the answer has no fingerprint', field: 'sdp' } });
    expect(h.routes(CALL)).toEqual({ customer: [music], alice: [] });
    expect(await h.calls.answerTransfer(CALL, transferId, 'bob', h.ringOf('carol').legId, 'sdp')).toEqual({
      ok: false,
      refusal: { status: 403, code: 'forbidden', message: 'legId: not this agent’s leg of the transfer' },
    });
    expect(await h.calls.answerTransfer(CALL, transferId, 'dave', h.ringOf('carol').legId, 'sdp')).toEqual({
      ok: false,
      refusal: { status: 404, code: 'not_found', message: `no transfer ${transferId} rings this agent in call ${CALL}` },
    });
    expect(await h.calls.answerTransfer(CALL, 'xfer-unknown', 'bob', h.ringOf('bob').legId, 'sdp')).toMatchObject({ ok: false, refusal: { status: 404 } });
    expect(await h.calls.declineTransfer(CALL, transferId, 'alice')).toMatchObject({ ok: false, refusal: { status: 404 } });
    expect(await h.calls.cancelTransfer(CALL, 'xfer-unknown', 'alice')).toEqual({ ok: false, refusal: { status: 404, code: 'not_found', message: `no transfer xfer-unknown in call ${CALL}` } });
    expect(await h.answerRing(CALL, transferId, 'bob')).toEqual({ ok: true, value: null });
    expect(await h.calls.declineTransfer(CALL, transferId, 'bob')).toMatchObject({ ok: false, refusal: { status: 409, code: 'invalid_state' } });
    expect(h.updatesOf('alice')).toEqual(['ringing', 'consulting:bob']);
  });

  it('of hold while a transfer rings', async () => {
    const h = new TransferHarness();
    await h.answeredCall(CALL, 'alice');
    await started(h, 'bob', 'transfer');
    expect(await h.calls.hold(CALL, 'alice', true)).toEqual({ ok: false, refusal: { status: 409, code: 'invalid_state', message: 'the call is not held while a transfer is under way' } });
    expect(await h.calls.hold(CALL, 'bob', true)).toMatchObject({ ok: false, refusal: { status: 403 } });
  });
});

describe('the agents a transferred call’s events go to', () => {
  it('none before a transfer; everyone in it or rung for it after; a call the bridge loses tells them all', async () => {
    const h = new TransferHarness();
    const lost: unknown[] = [];
    h.calls.onCallLost((call) => lost.push(call));
    await h.answeredCall(CALL, 'alice');
    expect(h.calls.participantsOf(CALL)).toBeUndefined();
    await started(h, 'available', 'transfer');
    expect(h.calls.participantsOf(CALL)?.sort()).toEqual(['alice', 'bob', 'carol']);
    await h.calls.nodeGone('local', 'left');
    expect(lost).toEqual([{ callId: CALL, nodeId: 'local', reason: 'node_gone', agents: expect.arrayContaining(['alice', 'bob', 'carol']) }]);
    expect(h.calls.participantsOf(CALL)).toBeUndefined();
  });
});
