import { describe, expect, it } from 'vitest';
import { RelayStore, type RelayStoreOptions } from '../../../relay/event-store';
import type { RelayEvent } from '../../../shared/events';

function storeAt(start: number, options: Partial<RelayStoreOptions> = {}) {
  const clock = { now: start };
  const store = new RelayStore({ retentionMs: 10_000, dedupWindowMs: 60_000, maxEvents: 100, maxDedupKeys: 1_000, maxRetainedBytes: 1_000_000, now: () => clock.now, ...options });
  return { store, clock };
}
const message = (id: string, at: number): RelayEvent => ({ type: 'message.inbound', messageId: id, timestamp: at, messageType: 'text' });
const incoming = (id: string, at: number): RelayEvent => ({ type: 'call.incoming', callId: id, sdp: 'v=0', timestamp: at });

describe('RelayStore', () => {
  it('issues increasing cursors of its own epoch', () => {
    const { store } = storeAt(1_000_000);
    const a = store.accept(message('m1', 1), 1_000_000);
    const b = store.accept(message('m2', 1), 1_000_000);
    expect(a.stored && a.retained.envelope.id).toBe(`${store.epoch}-1`);
    expect(b.stored && b.retained.envelope.id).toBe(`${store.epoch}-2`);
    expect(store.lastCursor).toBe(`${store.epoch}-2`);
    expect(new RelayStore({ retentionMs: 1, dedupWindowMs: 1, maxEvents: 1, maxDedupKeys: 1, maxRetainedBytes: 1 }).epoch).not.toBe(store.epoch);
  });

  it('forgets events after the retention time and reports the gap to a resuming agent', () => {
    const { store, clock } = storeAt(1_000_000);
    store.accept(message('m1', 1), clock.now);
    clock.now += 6_000;
    store.accept(message('m2', 1), clock.now);
    clock.now += 6_000;
    const replay = store.replay(store.planReplay(`${store.epoch}-0`, 60_000));
    expect(replay.events.map((e) => e.seq)).toEqual([2]);
    expect(replay.gap).toBe(true);
    expect(store.replay(store.planReplay(`${store.epoch}-1`, 60_000)).gap).toBe(false);
  });

  it('keeps within the event and byte caps, oldest first', () => {
    const { store, clock } = storeAt(1_000_000, { maxEvents: 3 });
    for (let i = 1; i <= 5; i += 1) store.accept(message(`m${i}`, 1), clock.now);
    expect(store.replay({ kind: 'everything' }).events.map((e) => e.seq)).toEqual([3, 4, 5]);
    const small = storeAt(1_000_000, { maxRetainedBytes: 400 }).store;
    for (let i = 1; i <= 5; i += 1) small.accept(message(`m${i}`, 1), 1_000_000);
    const kept = small.replay({ kind: 'everything' }).events;
    expect(kept.length).toBeLessThan(5);
    expect(kept.at(-1)?.seq).toBe(5);
    expect(kept.reduce((n, e) => n + e.json.length, 0)).toBeLessThanOrEqual(400);
  });

  it('remembers duplicates for the de-duplication window, not forever', () => {
    const { store, clock } = storeAt(1_000_000);
    expect(store.accept(message('m1', 1), clock.now).stored).toBe(true);
    clock.now += 59_000;
    expect(store.accept(message('m1', 1), clock.now)).toEqual({ stored: false, reason: 'duplicate' });
    clock.now += 2_000;
    expect(store.accept(message('m1', 1), clock.now).stored).toBe(true);
  });

  it('drops stale and tombstoned connects', () => {
    const { store, clock } = storeAt(10_000_000);
    expect(store.accept(incoming('c1', clock.now - 61_000), clock.now)).toEqual({ stored: false, reason: 'stale' });
    store.accept({ type: 'call.terminated', callId: 'c2', status: 'COMPLETED', timestamp: clock.now }, clock.now);
    expect(store.accept(incoming('c2', clock.now), clock.now)).toEqual({ stored: false, reason: 'tombstoned' });
    expect(store.accept({ type: 'call.answered', callId: 'c2', sdp: 'v=0', timestamp: clock.now }, clock.now)).toEqual({ stored: false, reason: 'tombstoned' });
    expect(store.accept(incoming('c3', clock.now - 1_000), clock.now).stored).toBe(true);
  });

  it('plans replays: own cursor, foreign cursor, future cursor, none', () => {
    const { store, clock } = storeAt(1_000_000);
    store.accept(message('m1', 1), clock.now);
    expect(store.planReplay(`${store.epoch}-1`, 60_000)).toEqual({ kind: 'after', seq: 1 });
    expect(store.planReplay('0123456789ab-1', 60_000)).toEqual({ kind: 'everything' });
    expect(store.planReplay(`${store.epoch}-2`, 60_000)).toEqual({ kind: 'everything' });
    expect(store.planReplay(undefined, 60_000)).toEqual({ kind: 'recent', sinceMs: clock.now - 60_000 });
    expect(store.planReplay(undefined, 0)).toEqual({ kind: 'after', seq: 1 });
  });
});
