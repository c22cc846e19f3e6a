// What only the memory backend promises: synchronous delivery, its caps, and forgetting by its clock.
import { describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../../relay/backend/memory-backend';
import { createBackend } from '../../../relay/backend/index';
import { HOLD_TTL_MS } from '../../../relay/backend/types';
import { TOMBSTONE_TTL_MS } from '../../../shared/call-state';
import { FakeClock, RecordingLogger, inbound, incoming, input, store, terminated } from './backend-fixtures';

const all = { limit: 100_000, sinceMs: 60 * 60_000 };

function memory(clock: FakeClock, extra: Partial<ConstructorParameters<typeof MemoryBackend>[0]> = {}) {
  return new MemoryBackend({ retentionMs: 10 * 60_000, dedupWindowMs: 24 * 60 * 60_000, now: clock.now, logger: new RecordingLogger(), ...extra });
}

describe('MemoryBackend', () => {
  it('hands a stored event to listeners before append resolves', async () => {
    const clock = new FakeClock();
    const backend = memory(clock);
    const seen: string[] = [];
    backend.subscribe((e) => seen.push(e.cursor));
    const pending = backend.append(input(inbound('m1', clock.now()), clock.now()));
    // Delivery happened inside append, before any await.
    expect(seen).toHaveLength(1);
    const outcome = await pending;
    expect(outcome.stored && outcome.event.cursor).toBe(seen[0]);
  });

  it('treats cursors of another instance, or ones it never issued, as unknown', async () => {
    const clock = new FakeClock();
    const before = memory(clock);
    const old = await store(before, inbound('m1', clock.now()), clock.now());
    const after = memory(clock);
    const a = await store(after, inbound('m2', clock.now()), clock.now());
    const b = await store(after, inbound('m3', clock.now()), clock.now());
    expect(after.epoch).not.toBe(before.epoch);
    expect((await after.readAfter(old.cursor, all)).map((e) => e.cursor)).toEqual([a.cursor, b.cursor]);
    expect((await after.readAfter(`${after.epoch}-99`, all)).map((e) => e.cursor)).toEqual([a.cursor, b.cursor]);
    expect((await after.readAfter(a.cursor, all)).map((e) => e.cursor)).toEqual([b.cursor]);
  });

  it('keeps at most maxEvents, dropping the oldest', async () => {
    const clock = new FakeClock();
    const backend = memory(clock, { maxEvents: 3 });
    for (let i = 0; i < 5; i += 1) await store(backend, inbound(`m${i}`, clock.now()), clock.now());
    expect(backend.size).toBe(3);
    expect((await backend.readAfter(undefined, all)).map((e) => e.event.type === 'message.inbound' && e.event.messageId)).toEqual(['m2', 'm3', 'm4']);
  });

  it('keeps at most maxRetainedBytes, but always the newest event', async () => {
    const clock = new FakeClock();
    const backend = memory(clock, { maxRetainedBytes: 1 });
    await store(backend, incoming('c1', clock.now()), clock.now());
    await store(backend, incoming('c2', clock.now()), clock.now());
    expect(backend.size).toBe(1);
    const [only] = await backend.readAfter(undefined, all);
    expect(only?.event.type === 'call.incoming' && only.event.callId).toBe('c2');
  });

  it('forgets de-duplication keys after the window and tombstones after an hour', async () => {
    const clock = new FakeClock();
    const backend = memory(clock, { dedupWindowMs: 60_000 });
    await store(backend, inbound('m1', clock.now()), clock.now());
    await store(backend, terminated('c1', clock.now()), clock.now());
    clock.advance(60_001);
    expect((await backend.append(input(inbound('m1', clock.now()), clock.now()))).stored).toBe(true);
    expect(await backend.isTombstoned('c1')).toBe(true);
    clock.advance(TOMBSTONE_TTL_MS);
    expect(await backend.isTombstoned('c1')).toBe(false);
    expect((await backend.append(input(incoming('c1', clock.now()), clock.now()))).stored).toBe(true);
  });

  it('forgets claims after an hour', async () => {
    const clock = new FakeClock();
    const backend = memory(clock);
    await backend.claim('c1', 'alice');
    clock.advance(TOMBSTONE_TTL_MS + 1);
    expect(await backend.claimOwner('c1')).toBeUndefined();
    expect(await backend.claim('c1', 'bob')).toEqual({ won: true, agentId: 'bob' });
  });

  it('forgets a hold nobody took the call off after HOLD_TTL_MS (a call that ended on hold)', async () => {
    const clock = new FakeClock();
    const backend = memory(clock);
    await backend.setCallHeld('wacid.held', true);
    clock.advance(HOLD_TTL_MS - 1);
    await backend.setCallHeld('wacid.later', true);
    expect(await backend.heldCalls(['wacid.held', 'wacid.later'])).toEqual(new Set(['wacid.held', 'wacid.later']));
    clock.advance(1);
    expect(await backend.heldCalls(['wacid.held', 'wacid.later'])).toEqual(new Set(['wacid.later']));
  });

  it('is what createBackend makes without a Redis URL', async () => {
    const backend = await createBackend({ retentionMs: 60_000, dedupWindowMs: 60_000 });
    expect(backend).toBeInstanceOf(MemoryBackend);
    expect(backend.kind).toBe('memory');
    await backend.close();
  });
});
