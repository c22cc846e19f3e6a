// The team's callback list in the relay's backend (relay/REFERENCE.md "Callback requests"), one suite
// for both kinds: one request per customer (the same number, or the same user id), a request of an
// id already listed changes nothing, one that ran out is never listed, the first take wins, and a
// customer's requests leave together. With Redis, every instance sees the same list and the same take.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CALLBACKS_MAX } from '../../../relay/backend/callback-rules';
import type { RelayBackend } from '../../../relay/backend/types';
import { CALL_PERMISSION_MS, type CallbackRequest } from '../../../shared/callbacks';
import { FakeClock, RecordingLogger, type BackendHarness } from '../relay-backend/backend-fixtures';
import { memoryHarness, redisHarness } from '../relay-backend/backend-harnesses';

const ADA = '447700900123';
const BEN = '447700900456';
const HIDDEN = 'US.13491208655302741918';
const alice = { agentId: 'alice', name: 'Alice Agent' };
const bob = { agentId: 'bob', name: 'Bob Agent' };

const redis = redisHarness();
const harnesses: BackendHarness[] = [memoryHarness(), redis];

describe.each(harnesses)('the callback list on the $name backend', (harness) => {
  let clock: FakeClock;
  let backend: RelayBackend;

  beforeAll(() => harness.setup());
  afterAll(() => harness.teardown());
  afterEach(() => harness.closeAll());

  const open = async () => {
    clock = new FakeClock(Date.UTC(2026, 10, 2, 9));
    backend = await harness.open({ now: clock.now, logger: new RecordingLogger() });
    return backend;
  };

  /** A temporary request of `number`, made `agoMs` before now, with the service's 7 days. */
  const request = (id: string, customer: { number?: string; userId?: string; name?: string }, agoMs = 0): CallbackRequest => {
    const requestedAt = clock.now() - agoMs;
    return { id, ...customer, requestedAt, expiresAt: requestedAt + CALL_PERMISSION_MS, permanent: false };
  };

  it('lists the requests the oldest first, each as it was added', async () => {
    await open();
    const newer = request('wacid.cb-new', { number: BEN }, 60_000);
    const older = { ...request('wacid.cb-old', { number: ADA, userId: HIDDEN, name: 'Ada Customer' }, 120_000) };
    const permanent: CallbackRequest = { id: 'wacid.cb-perm', userId: 'US.2', requestedAt: clock.now() - 30_000, permanent: true };
    expect(await backend.callbacks()).toEqual([]);
    for (const r of [newer, permanent, older]) expect(await backend.addCallback(r)).toEqual({ added: true, replaced: [] });
    expect(await backend.callbacks()).toEqual([older, newer, permanent]);
  });

  it('keeps one request per customer: a newer one of the same number, or the same user id, takes the place of the older', async () => {
    await open();
    await backend.addCallback(request('wacid.ada-1', { number: ADA }, 60_000));
    await backend.addCallback(request('wacid.ben-1', { number: BEN }, 50_000));
    const second = request('wacid.ada-2', { number: ADA, name: 'Ada Customer' });
    expect(await backend.addCallback(second)).toEqual({ added: true, replaced: ['wacid.ada-1'] });
    expect((await backend.callbacks()).map((r) => r.id)).toEqual(['wacid.ben-1', 'wacid.ada-2']);

    // A customer who hides the number is known by the user id; one who later shows it too is still them.
    await backend.addCallback(request('wacid.hidden-1', { userId: HIDDEN }, 40_000));
    expect(await backend.addCallback(request('wacid.hidden-2', { userId: HIDDEN }, 30_000))).toEqual({ added: true, replaced: ['wacid.hidden-1'] });
    expect(await backend.addCallback(request('wacid.hidden-3', { number: '447700900789', userId: HIDDEN }, 20_000))).toEqual({ added: true, replaced: ['wacid.hidden-2'] });
    // One request can take the place of two: the one of its number and the one of its user id.
    expect(await backend.addCallback(request('wacid.both', { number: BEN, userId: HIDDEN }))).toEqual({ added: true, replaced: expect.arrayContaining(['wacid.ben-1', 'wacid.hidden-3']) as string[] });
    expect((await backend.callbacks()).map((r) => r.id)).toEqual(['wacid.ada-2', 'wacid.both']);
    // Another customer's user id is another customer.
    expect(await backend.addCallback(request('wacid.other', { userId: 'US.4' }))).toEqual({ added: true, replaced: [] });
  });

  it('changes nothing for a request of an id it holds: a taken one stays taken', async () => {
    await open();
    const first = request('wacid.dup', { number: ADA }, 60_000);
    await backend.addCallback(first);
    clock.t += 5_000;
    const taken = await backend.takeCallback('wacid.dup', alice);
    expect(taken).toEqual({ kind: 'taken', request: { ...first, takenBy: { ...alice, at: clock.now() } } });
    clock.t += 5_000;
    expect(await backend.addCallback({ ...first, name: 'Changed', requestedAt: clock.now() })).toEqual({ added: false, reason: 'duplicate' });
    expect(await backend.callbacks()).toEqual([{ ...first, takenBy: { ...alice, at: clock.now() - 5_000 } }]);
    // A new request of the same customer replaces the taken one, and nobody has taken it.
    const again = request('wacid.dup-2', { number: ADA });
    expect(await backend.addCallback(again)).toEqual({ added: true, replaced: ['wacid.dup'] });
    expect(await backend.callbacks()).toEqual([again]);
  });

  it('never lists a request whose permission ran out; a permanent one stays', async () => {
    await open();
    const ranOut = { ...request('wacid.gone', { number: ADA }), expiresAt: clock.now() };
    expect(await backend.addCallback(ranOut)).toEqual({ added: false, reason: 'expired' });
    const soon = { ...request('wacid.soon', { number: ADA }, 2_000), expiresAt: clock.now() + 60_000 };
    const later = request('wacid.later', { number: BEN }, 1_000);
    const permanent: CallbackRequest = { id: 'wacid.perm', number: '447700900789', requestedAt: clock.now(), permanent: true };
    for (const r of [soon, later, permanent]) await backend.addCallback(r);
    clock.t += 59_999;
    expect((await backend.callbacks()).map((r) => r.id)).toEqual(['wacid.soon', 'wacid.later', 'wacid.perm']);
    clock.t += 1;
    expect((await backend.callbacks()).map((r) => r.id)).toEqual(['wacid.later', 'wacid.perm']);
    expect(await backend.takeCallback('wacid.soon', alice)).toEqual({ kind: 'not_found' });
    // The customer's key went with it: a new request of theirs replaces nothing.
    expect(await backend.addCallback(request('wacid.soon-2', { number: ADA }))).toEqual({ added: true, replaced: [] });
    clock.t += CALL_PERMISSION_MS;
    expect((await backend.callbacks()).map((r) => r.id)).toEqual(['wacid.perm']);
  });

  it('takes a request for the first agent who asks; the taker asks again and still has it, a colleague is told who', async () => {
    await open();
    const listed = request('wacid.take', { number: ADA, name: 'Ada Customer' });
    await backend.addCallback(listed);
    const at = clock.now();
    expect(await backend.takeCallback('wacid.take', alice)).toEqual({ kind: 'taken', request: { ...listed, takenBy: { ...alice, at } } });
    clock.t += 1_000;
    expect(await backend.takeCallback('wacid.take', alice)).toEqual({ kind: 'taken', request: { ...listed, takenBy: { ...alice, at } } });
    expect(await backend.takeCallback('wacid.take', bob)).toEqual({ kind: 'taken_by_other', request: { ...listed, takenBy: { ...alice, at } } });
    expect(await backend.takeCallback('wacid.none', bob)).toEqual({ kind: 'not_found' });
    expect(await backend.callbacks()).toEqual([{ ...listed, takenBy: { ...alice, at } }]);
  });

  it('one take wins among many at once', async () => {
    await open();
    await backend.addCallback(request('wacid.race', { number: ADA }));
    const agents = Array.from({ length: 8 }, (_, i) => ({ agentId: `agent-${i}`, name: `Agent ${i}` }));
    const outcomes = await Promise.all(agents.map((agent) => backend.takeCallback('wacid.race', agent)));
    const winners = outcomes.filter((o) => o.kind === 'taken');
    expect(winners).toHaveLength(1);
    const winner = winners[0]!.kind === 'taken' ? winners[0]!.request.takenBy.agentId : undefined;
    for (const o of outcomes) expect(o).toMatchObject({ request: { takenBy: { agentId: winner } } });
  });

  it('drops a customer’s requests, taken or not, by number (with or without "+") or by user id', async () => {
    await open();
    await backend.addCallback(request('wacid.ada', { number: ADA }, 3_000));
    await backend.addCallback(request('wacid.ben', { number: BEN, userId: 'US.ben' }, 2_000));
    await backend.addCallback(request('wacid.hidden', { userId: HIDDEN }, 1_000));
    await backend.takeCallback('wacid.ada', alice);
    expect(await backend.dropCallbacksOf({ number: `+${ADA}` })).toEqual(['wacid.ada']);
    expect(await backend.dropCallbacksOf({ number: ADA })).toEqual([]);
    expect(await backend.dropCallbacksOf({ userId: 'US.ben' })).toEqual(['wacid.ben']);
    expect(await backend.dropCallbacksOf({})).toEqual([]);
    expect((await backend.callbacks()).map((r) => r.id)).toEqual(['wacid.hidden']);
    expect(await backend.dropCallbacksOf({ number: '447700900999', userId: HIDDEN })).toEqual(['wacid.hidden']);
    expect(await backend.callbacks()).toEqual([]);
    expect(await backend.takeCallback('wacid.ada', alice)).toEqual({ kind: 'not_found' });
  });

  it(`keeps ${CALLBACKS_MAX} requests at most: the one that runs out first leaves`, async () => {
    await open();
    const first = { ...request('wacid.cap-first', { number: '10' }), expiresAt: clock.now() + 60_000 };
    await backend.addCallback(first);
    await Promise.all(
      Array.from({ length: CALLBACKS_MAX }, (_, i) => backend.addCallback({ id: `wacid.cap-${i}`, number: String(1_000 + i), requestedAt: clock.now(), permanent: true })),
    );
    const list = await backend.callbacks();
    expect(list).toHaveLength(CALLBACKS_MAX);
    expect(list.some((r) => r.id === first.id)).toBe(false);
  }, 60_000);
});

describe('one callback list for every relay instance on one Redis', () => {
  beforeAll(() => redis.setup());
  afterAll(() => redis.teardown());
  afterEach(() => redis.closeAll());

  it('shows the same list on both; a take on one is seen, and held, on the other', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 2, 9));
    const a = await redis.open({ now: clock.now, logger: new RecordingLogger() });
    const b = await redis.open({ now: clock.now, logger: new RecordingLogger(), shareWith: a });
    const listed: CallbackRequest = { id: 'wacid.shared', number: ADA, name: 'Ada Customer', requestedAt: clock.now(), expiresAt: clock.now() + CALL_PERMISSION_MS, permanent: false };
    await a.addCallback(listed);
    expect(await b.callbacks()).toEqual([listed]);
    expect(await b.addCallback(listed)).toEqual({ added: false, reason: 'duplicate' });
    expect(await b.takeCallback('wacid.shared', bob)).toMatchObject({ kind: 'taken' });
    expect(await a.callbacks()).toEqual([{ ...listed, takenBy: { ...bob, at: clock.now() } }]);
    expect(await a.takeCallback('wacid.shared', alice)).toEqual({ kind: 'taken_by_other', request: { ...listed, takenBy: { ...bob, at: clock.now() } } });
    // Races between the instances: one winner.
    await a.addCallback({ ...listed, id: 'wacid.shared-2', requestedAt: clock.now() + 1 });
    const [fromA, fromB] = await Promise.all([a.takeCallback('wacid.shared-2', alice), b.takeCallback('wacid.shared-2', bob)]);
    expect([fromA.kind, fromB.kind].sort()).toEqual(['taken', 'taken_by_other']);
    expect(await b.dropCallbacksOf({ number: ADA })).toEqual(['wacid.shared-2']);
    expect(await a.callbacks()).toEqual([]);
  });

  it('reads a request whose record is not its own as nothing, and one whose taker is unreadable as not taken', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 2, 9));
    const logger = new RecordingLogger();
    const backend = await redis.open({ now: clock.now, logger });
    const prefix = redis.prefixOf(backend);
    const listed: CallbackRequest = { id: 'wacid.read', number: ADA, requestedAt: clock.now(), permanent: true };
    await backend.addCallback(listed);
    const { Redis } = await import('ioredis');
    const direct = new Redis(redis.redis().url, { protocol: 2 });
    try {
      await direct.hset(`${prefix}callbacks:taken`, 'wacid.read', 'not json');
      await direct.hset(`${prefix}callbacks`, 'wacid.broken', '{"id":7}');
      await direct.zadd(`${prefix}callbacks:expiry`, '+inf', 'wacid.broken');
    } finally {
      direct.disconnect();
    }
    expect(await backend.callbacks()).toEqual([listed]);
    expect(await backend.takeCallback('wacid.read', alice)).toEqual({ kind: 'taken', request: { ...listed, takenBy: { ...alice, at: clock.now() } } });
  });
});
