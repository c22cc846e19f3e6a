// Who hears whom while a member of a bridged call is away, and which node events count
// (relay/rejoins.ts), on a node that records what it is asked (transfer-fixtures.ts).
import { describe, expect, it } from 'vitest';
import { TransferHarness } from './transfer-fixtures';

async function consulting(h: TransferHarness, callId: string): Promise<{ alice: string; bob: string; transferId: string }> {
  const alice = await h.answeredCall(callId, 'alice');
  const started = await h.calls.transfer(callId, 'alice', { to: 'bob', kind: 'consult' });
  if (!started.ok) throw new Error(started.refusal.message);
  expect(await h.answerRing(callId, started.value.transferId, 'bob')).toEqual({ ok: true, value: null });
  return { alice, bob: h.ringOf('bob').legId, transferId: started.value.transferId };
}

describe('a member away', () => {
  it('alone: the customer hears the music at once; its own leg’s loss from another node, or another leg’s, counts for nothing', async () => {
    const h = new TransferHarness();
    const alice = await h.answeredCall('wacid.a1', 'alice');
    await h.calls.legLost('wacid.a1', 'elsewhere', alice, Date.now());
    await h.calls.legLost('wacid.a1', 'local', 'leg-unknown', Date.now());
    expect(h.routes('wacid.a1')).toEqual({ customer: ['alice'], alice: ['customer'] });
    await h.calls.legLost('wacid.a1', 'local', alice, Date.now());
    expect(h.routes('wacid.a1')).toEqual({ customer: ['music'] });
  });

  it('in a consult: the customer keeps the music and the colleague hears nobody', async () => {
    const h = new TransferHarness();
    const { alice } = await consulting(h, 'wacid.a2');
    expect(h.routes('wacid.a2')).toEqual({ customer: ['music'], alice: ['bob'], bob: ['alice'] });
    await h.calls.legLost('wacid.a2', 'local', alice, undefined);
    expect(h.routes('wacid.a2')).toEqual({ customer: ['music'], bob: [] });
  });

  it('a member who left after its leg went is not away when it is rung again', async () => {
    const h = new TransferHarness();
    const { alice, transferId } = await consulting(h, 'wacid.a3');
    expect(await h.calls.joinTransfer('wacid.a3', transferId, 'alice')).toEqual({ ok: true, value: null });
    await h.calls.legLost('wacid.a3', 'local', alice, Date.now());
    expect(h.routes('wacid.a3')).toEqual({ customer: ['bob'], bob: ['customer'] });
    expect(await h.calls.leave('wacid.a3', 'alice')).toEqual({ ok: true, value: { last: false } });
    const again = await h.calls.transfer('wacid.a3', 'bob', { to: 'alice', kind: 'consult' });
    if (!again.ok) throw new Error(again.refusal.message);
    expect(await h.answerRing('wacid.a3', again.value.transferId, 'alice')).toEqual({ ok: true, value: null });
    expect(h.routes('wacid.a3')).toEqual({ customer: ['music'], bob: ['alice'], alice: ['bob'] });
    // No window counts for her any more: a rejoin is hers again only as a member.
    expect(await h.calls.rejoin('wacid.a3', 'carol')).toMatchObject({ ok: false, refusal: { status: 403 } });
  });
});
