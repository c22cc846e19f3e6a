// An outgoing call is placed with its record id (its local id) as biz_opaque_callback_data, and the
// service echoes it on the call's statuses and terminate: an event that overtakes the initiate's
// answer names the call by it at once, instead of waiting for that answer.
import { describe, expect, it } from 'vitest';
import { applyCallEvent, emptyBook, type CallBook } from '../../../shared/calls/book';
import type { CallEvent } from '../../../shared/calls/types';
import { normaliseWebhook } from '../../../shared/webhook';

const LOCAL = 'out:0b4e5c1d-2f3a-4b5c-8d9e-0123456789ab';
const T = 1_760_000_000_000;

function run(events: CallEvent[], book: CallBook = emptyBook()) {
  const effects = [];
  for (const ev of events) {
    const change = applyCallEvent(book, ev);
    book = change.book;
    effects.push(...change.effects);
  }
  return { book, effects, call: book.calls[LOCAL] };
}

const dial: CallEvent = { type: 'local.dial', at: T, localId: LOCAL, peer: { number: '447700900123' }, offerSdp: 'v=0', requestId: 'rq-1' };

describe('a call named by its record id', () => {
  it('takes its id from a status that echoes its record id, before the initiate’s answer: claimed and answered at once', () => {
    const { call, effects, book } = run([dial, { type: 'remote.status', at: T + 5, callId: 'wacid.rec-1', status: 'RINGING', timestamp: T + 5, opaque: LOCAL }]);
    expect(call).toMatchObject({ phase: 'remote_ringing', callId: 'wacid.rec-1' });
    expect(effects).toContainEqual({ kind: 'claim', localId: LOCAL, callId: 'wacid.rec-1' });
    expect(effects).toContainEqual({ kind: 'reply', requestId: 'rq-1', result: { ok: true, value: { localId: LOCAL, callId: 'wacid.rec-1' } } });
    // The answer, when it comes, changes nothing but whether the call is bridged.
    const later = run([{ type: 'local.initiate_ok', at: T + 9, localId: LOCAL, callId: 'wacid.rec-1', bridged: true }], book);
    expect(later.call).toMatchObject({ phase: 'remote_ringing', callId: 'wacid.rec-1', bridged: true });
    expect(later.effects.filter((e) => e.kind === 'claim' || e.kind === 'reply')).toEqual([]);
  });

  it('ends at once on a terminate that echoes it; without the record id the terminate waits for the answer', () => {
    const named = run([dial, { type: 'remote.terminated', at: T + 5, callId: 'wacid.rec-2', status: 'FAILED', timestamp: T + 5, opaque: LOCAL, errors: [{ code: 138007, message: 'Timeout' }] }]);
    expect(named.call).toMatchObject({ phase: 'ended', callId: 'wacid.rec-2' });
    const waiting = run([dial, { type: 'remote.terminated', at: T + 5, callId: 'wacid.rec-2', status: 'FAILED', timestamp: T + 5 }]);
    expect(waiting.call).toMatchObject({ phase: 'dialing' });
    expect(waiting.book.pending['wacid.rec-2']).toHaveLength(1);
  });

  it('names no call it is not: another call’s record id, or an incoming call’s', () => {
    const other = run([dial, { type: 'remote.status', at: T + 5, callId: 'wacid.rec-3', status: 'RINGING', timestamp: T + 5, opaque: 'out:someone-else' }]);
    expect(other.call).toMatchObject({ phase: 'dialing' });
    const incoming = run([
      { type: 'remote.incoming', at: T, callId: 'wacid.in-1', peer: { number: '447700900123' }, offerSdp: 'v=0', timestamp: T },
      { type: 'remote.status', at: T + 5, callId: 'wacid.rec-4', status: 'RINGING', timestamp: T + 5, opaque: 'in:wacid.in-1' },
    ]);
    expect(incoming.book.calls['in:wacid.in-1']).toMatchObject({ phase: 'ringing', callId: 'wacid.in-1' });
    expect(incoming.book.pending['wacid.rec-4']).toHaveLength(1);
  });
});

describe('the record id in the service’s webhooks', () => {
  it('is read from a call status and a terminate, and left out when it is not a string of at most 512 characters', () => {
    const webhook = (value: unknown) => ({ object: 'whatsapp_business_account', entry: [{ id: 'waba', changes: [{ field: 'calls', value }] }] });
    const statuses = normaliseWebhook(
      webhook({
        messaging_product: 'whatsapp',
        statuses: [
          { id: 'wacid.s-1', type: 'call', status: 'RINGING', timestamp: '1760000000', recipient_id: '447700900123', biz_opaque_callback_data: LOCAL },
          { id: 'wacid.s-2', type: 'call', status: 'RINGING', timestamp: '1760000000', biz_opaque_callback_data: 'x'.repeat(513) },
        ],
        calls: [{ id: 'wacid.s-1', event: 'terminate', status: 'COMPLETED', timestamp: '1760000009', biz_opaque_callback_data: LOCAL }],
      }),
    );
    expect(statuses).toEqual([
      expect.objectContaining({ type: 'call.terminated', callId: 'wacid.s-1', opaque: LOCAL }),
      expect.objectContaining({ type: 'call.status', callId: 'wacid.s-1', opaque: LOCAL }),
      expect.not.objectContaining({ opaque: expect.anything() }),
    ]);
  });
});
