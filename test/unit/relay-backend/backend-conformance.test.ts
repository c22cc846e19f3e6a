// One suite, both backends: a team served by one memory relay or by Redis-backed relays must see
// the same delivery rules (protocol.md "Delivery rules"), the same resume semantics and the same claims.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RelayBackend, StoredEvent } from '../../../relay/backend/types';
import { STALE_CONNECT_MS } from '../../../shared/call-state';
import type { RelayEvent } from '../../../shared/events';
import {
  FakeClock,
  RecordingLogger,
  answered,
  callStatus,
  claimed,
  eventually,
  inbound,
  input,
  incoming,
  messageStatus,
  recorder,
  store,
  terminated,
  type BackendHarness,
} from './backend-fixtures';
import { memoryHarness, redisHarness } from './backend-harnesses';

const harnesses: BackendHarness[] = [memoryHarness(), redisHarness()];

describe.each(harnesses)('$name backend', (harness) => {
  let clock: FakeClock;
  let logger: RecordingLogger;
  let backend: RelayBackend;

  beforeAll(() => harness.setup());
  afterAll(() => harness.teardown());
  afterEach(() => harness.closeAll());

  const open = async (options: { retentionMs?: number } = {}) => {
    clock = new FakeClock();
    logger = new RecordingLogger();
    backend = await harness.open({ now: clock.now, logger, ...options });
    return backend;
  };
  const append = (event: RelayEvent) => backend.append(input(event, clock.now()));
  const cursorsOf = (events: StoredEvent[]) => events.map((e) => e.cursor);
  const all = { limit: 10_000, sinceMs: 60 * 60_000 };

  it('is the kind it says', async () => {
    await open();
    expect(backend.kind).toBe(harness.name);
  });

  describe('de-duplication', () => {
    const kinds: Array<[string, (t: number) => RelayEvent, (t: number) => RelayEvent]> = [
      ['call.incoming', (t) => incoming('c-in', t), (t) => incoming('c-in', t + 5)],
      ['call.answered', (t) => answered('c-ans', t), (t) => answered('c-ans', t + 5)],
      ['call.status', (t) => callStatus('c-st', 'RINGING', t), (t) => callStatus('c-st', 'RINGING', t + 5)],
      ['call.terminated (whatever its status)', (t) => terminated('c-end', t, 'COMPLETED'), (t) => terminated('c-end', t + 5, 'FAILED')],
      ['call.claimed', (t) => claimed('c-cl', 'alice', t), (t) => claimed('c-cl', 'bob', t + 5)],
      ['message.inbound', (t) => inbound('m-in', t), (t) => inbound('m-in', t + 5)],
      ['message.status', (t) => messageStatus('m-st', 'delivered', t), (t) => messageStatus('m-st', 'delivered', t + 5)],
    ];
    it.each(kinds)('stores %s once', async (_kind, first, again) => {
      await open();
      const t = clock.now();
      expect((await append(first(t))).stored).toBe(true);
      expect(await append(again(t))).toEqual({ stored: false, reason: 'duplicate' });
      expect(await append(first(t))).toEqual({ stored: false, reason: 'duplicate' });
      expect(await backend.readAfter(undefined, all)).toHaveLength(1);
    });

    it('tells statuses, kinds, calls and messages apart', async () => {
      await open();
      const t = clock.now();
      const distinct: RelayEvent[] = [
        incoming('c1', t),
        incoming('c2', t),
        answered('c1', t),
        callStatus('c1', 'RINGING', t),
        callStatus('c1', 'ACCEPTED', t),
        callStatus('c1', 'REJECTED', t),
        claimed('c1', 'alice', t),
        inbound('m1', t),
        inbound('m2', t),
        messageStatus('m1', 'sent', t),
        messageStatus('m1', 'delivered', t),
        messageStatus('m1', 'read', t),
        messageStatus('m1', 'failed', t),
        terminated('c1', t),
      ];
      for (const event of distinct) expect((await append(event)).stored, event.type).toBe(true);
      expect(await backend.readAfter(undefined, all)).toHaveLength(distinct.length);
    });

    it('keeps duplicates out under concurrent appends', async () => {
      await open();
      const t = clock.now();
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => append(incoming('c-race', t))));
      expect(outcomes.filter((o) => o.stored)).toHaveLength(1);
      expect(outcomes.filter((o) => !o.stored && o.reason === 'duplicate')).toHaveLength(19);
    });
  });

  describe('tombstones', () => {
    it('drop a connect that arrives after the terminate', async () => {
      await open();
      const t = clock.now();
      expect(await backend.isTombstoned('c1')).toBe(false);
      await store(backend, terminated('c1', t), t);
      expect(await backend.isTombstoned('c1')).toBe(true);
      expect(await append(incoming('c1', t - 1_000))).toEqual({ stored: false, reason: 'tombstoned' });
      expect(await append(answered('c1', t - 1_000))).toEqual({ stored: false, reason: 'tombstoned' });
      // Only connects are blocked: a late status is still part of the call's history.
      expect((await append(callStatus('c1', 'RINGING', t - 500))).stored).toBe(true);
      expect(await backend.isTombstoned('c2')).toBe(false);
    });

    it('are left by a call the bridge lost too: no connect rings it again, its own repeat is a duplicate, and its terminate still comes', async () => {
      await open();
      const t = clock.now();
      await store(backend, incoming('c1', t), t);
      const lost: RelayEvent = { type: 'call.bridge_failed', callId: 'c1', reason: 'node_gone', timestamp: t + 10 };
      expect((await append(lost)).stored).toBe(true);
      expect(await backend.isTombstoned('c1')).toBe(true);
      expect(await append({ ...lost, reason: 'customer_leg_failed' })).toEqual({ stored: false, reason: 'duplicate' });
      expect(await append(incoming('c1', t))).toEqual({ stored: false, reason: 'tombstoned' });
      expect((await append(terminated('c1', t + 20))).stored).toBe(true);
      expect((await backend.readAfter(undefined, all)).map((e) => e.event.type)).toEqual(['call.incoming', 'call.bridge_failed', 'call.terminated']);
    });

    it('let a terminate follow its connect, and then block the connect', async () => {
      await open();
      const t = clock.now();
      await store(backend, incoming('c1', t), t);
      await store(backend, terminated('c1', t + 10), t);
      expect(await append(incoming('c1', t))).toEqual({ stored: false, reason: 'tombstoned' });
      expect((await backend.readAfter(undefined, all)).map((e) => e.event.type)).toEqual(['call.incoming', 'call.terminated']);
    });
  });

  describe('stale connects', () => {
    it('drops connects older than 60 s and keeps younger ones', async () => {
      await open();
      const t = clock.now();
      expect(await append(incoming('old', t - STALE_CONNECT_MS - 1))).toEqual({ stored: false, reason: 'stale' });
      expect(await append(answered('old-out', t - STALE_CONNECT_MS - 1))).toEqual({ stored: false, reason: 'stale' });
      expect((await append(incoming('young', t - STALE_CONNECT_MS + 1_000))).stored).toBe(true);
      // Age matters for connects only.
      expect((await append(terminated('old', t - 10 * STALE_CONNECT_MS))).stored).toBe(true);
    });

    it('judges age by the clock at append time and leaves no de-duplication key behind', async () => {
      await open();
      const t = clock.now();
      clock.advance(STALE_CONNECT_MS + 1);
      expect(await append(incoming('c1', t))).toEqual({ stored: false, reason: 'stale' });
      expect((await append(incoming('c1', clock.now()))).stored).toBe(true);
    });
  });

  describe('cursors and readAfter', () => {
    let messages = 0;
    const fill = async (count: number) => {
      const stored: StoredEvent[] = [];
      for (let i = 0; i < count; i += 1) {
        messages += 1;
        stored.push(await store(backend, inbound(`m${messages}`, clock.now()), clock.now()));
      }
      return stored;
    };

    it('issues distinct cursors in storage order; readAfter is exclusive and pages by limit', async () => {
      await open();
      const stored = await fill(30);
      expect(new Set(cursorsOf(stored)).size).toBe(30);
      expect(cursorsOf(await backend.readAfter(undefined, all))).toEqual(cursorsOf(stored));
      for (const i of [0, 7, 28]) {
        expect(cursorsOf(await backend.readAfter(stored[i]!.cursor, all))).toEqual(cursorsOf(stored.slice(i + 1)));
      }
      expect(await backend.readAfter(stored[29]!.cursor, all)).toEqual([]);
      const page = await backend.readAfter(stored[3]!.cursor, { ...all, limit: 5 });
      expect(cursorsOf(page)).toEqual(cursorsOf(stored.slice(4, 9)));
      expect(await backend.readAfter(stored[3]!.cursor, { ...all, limit: 0 })).toEqual([]);
      expect(cursorsOf(await backend.readAfter(stored[3]!.cursor, { ...all, limit: Infinity }))).toEqual(cursorsOf(stored.slice(4)));
    });

    it('returns what was stored', async () => {
      await open();
      const event = incoming('c1', clock.now());
      const audience = { kind: 'ringing' as const, preferredAgentId: 'alice', releaseAt: clock.now() + 10_000 };
      const outcome = await backend.append({ event, receivedAt: clock.now() - 3, audience });
      expect(outcome.stored).toBe(true);
      const [read] = await backend.readAfter(undefined, all);
      expect(read).toEqual({ cursor: expect.any(String), receivedAt: clock.now() - 3, event, audience });
      expect(outcome.stored && outcome.event).toEqual(read);
    });

    it('serves everything retained for a cursor it does not know', async () => {
      await open();
      const stored = await fill(5);
      const foreign = ['garbage', 'm000000000000-3', 'mffffffffffff-1', '99999999999999-0', '1-0-0', '18446744073709551616-0', '18446744073709551615-18446744073709551615', '-1'];
      for (const cursor of foreign) {
        expect(cursorsOf(await backend.readAfter(cursor, all)), cursor).toEqual(cursorsOf(stored));
      }
    });

    it('serves events of the last sinceMs when there is no cursor', async () => {
      await open();
      const [early] = await fill(1);
      clock.advance(30_000);
      const [late] = await fill(1);
      expect(cursorsOf(await backend.readAfter(undefined, { limit: 100, sinceMs: 10_000 }))).toEqual([late!.cursor]);
      expect(cursorsOf(await backend.readAfter(undefined, { limit: 100, sinceMs: 60_000 }))).toEqual([early!.cursor, late!.cursor]);
      // An empty Last-Event-ID is no cursor, not a foreign one.
      expect(cursorsOf(await backend.readAfter('', { limit: 100, sinceMs: 10_000 }))).toEqual([late!.cursor]);
    });

    it('forgets events after the retention time', async () => {
      await open({ retentionMs: 60_000 });
      const [old] = await fill(1);
      clock.advance(45_000);
      const [kept] = await fill(1);
      clock.advance(20_000);
      expect(cursorsOf(await backend.readAfter(undefined, all))).toEqual([kept!.cursor]);
      expect(cursorsOf(await backend.readAfter('garbage', all))).toEqual([kept!.cursor]);
      // A cursor older than the retention: its holder gets what is left.
      expect(cursorsOf(await backend.readAfter(old!.cursor, all))).toEqual([kept!.cursor]);
    });
  });

  describe('subscribe', () => {
    it('delivers every stored event once, in cursor order, and not the dropped ones', async () => {
      await open();
      const seen = recorder(backend);
      const t = clock.now();
      const outcomes = await Promise.all(
        Array.from({ length: 60 }, (_, i) => append(i % 3 === 0 ? incoming(`c${i % 9}`, t) : messageStatus(`m${i}`, 'read', t))),
      );
      const stored = outcomes.flatMap((o) => (o.stored ? [o.event] : []));
      expect(stored.length).toBeLessThan(60);
      await eventually(() => seen.events.length >= stored.length, 'delivery');
      const inOrder = await backend.readAfter(undefined, all);
      expect(cursorsOf(seen.events)).toEqual(cursorsOf(inOrder));
      expect(new Set(cursorsOf(seen.events))).toEqual(new Set(cursorsOf(stored)));
    });

    it('stops delivering after unsubscribe and survives a throwing listener', async () => {
      await open();
      const stopped = recorder(backend);
      backend.subscribe(() => {
        throw new Error('listener bug');
      });
      const kept = recorder(backend);
      await store(backend, inbound('m1', clock.now()), clock.now());
      await eventually(() => kept.events.length === 1 && stopped.events.length === 1, 'first delivery');
      stopped.stop();
      await store(backend, inbound('m2', clock.now()), clock.now());
      await eventually(() => kept.events.length === 2, 'second delivery');
      expect(stopped.events).toHaveLength(1);
      expect(logger.messages('error')).toEqual(['event listener failed', 'event listener failed']);
    });
  });

  describe('flush', () => {
    it('resolves once every event this instance appended has reached its listeners', async () => {
      await open();
      const seen = recorder(backend);
      const t = clock.now();
      const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => append(inbound(`m-flush${i}`, t))));
      await backend.flush();
      // No waiting here: whatever the backend's fan-out moment, flush is the promise that it happened.
      expect(seen.events).toHaveLength(30);
      expect(new Set(cursorsOf(seen.events))).toEqual(new Set(outcomes.flatMap((o) => (o.stored ? [o.event.cursor] : []))));
    });

    it('resolves with nothing appended, and once closed', async () => {
      await open();
      await backend.flush();
      await store(backend, inbound('m1', clock.now()), clock.now());
      await backend.close();
      await backend.flush();
    });
  });

  it('names its cursor epoch where the cursors are its own, and counts what it retains in this process', async () => {
    await open();
    const first = await store(backend, inbound('m1', clock.now()), clock.now());
    await store(backend, inbound('m2', clock.now()), clock.now());
    if (harness.name === 'memory') {
      expect(backend.epoch).toMatch(/^m[0-9a-f]{12}$/);
      expect(first.cursor.startsWith(`${backend.epoch}-`)).toBe(true);
      expect(backend.stats()).toEqual({ retainedEvents: 2 });
    } else {
      // Stream ids are shared by every instance; the events live in Redis.
      expect(backend.epoch).toBeUndefined();
      expect(backend.stats()).toEqual({});
    }
  });

  describe('claims', () => {
    it('lets the first agent win and tells the others who did', async () => {
      await open();
      expect(await backend.claimOwner('c1')).toBeUndefined();
      expect(await backend.claim('c1', 'alice')).toEqual({ won: true, agentId: 'alice' });
      expect(await backend.claim('c1', 'bob')).toEqual({ won: false, agentId: 'alice' });
      expect(await backend.claim('c1', 'alice')).toEqual({ won: true, agentId: 'alice' });
      expect(await backend.claimOwner('c1')).toBe('alice');
      expect(await backend.claim('c2', 'bob')).toEqual({ won: true, agentId: 'bob' });
    });

    it('has exactly one winner among 20 concurrent claims', async () => {
      await open();
      const agents = Array.from({ length: 20 }, (_, i) => `agent-${i}`);
      const outcomes = await Promise.all(agents.map((agent) => backend.claim('c-race', agent)));
      const winners = outcomes.filter((o) => o.won);
      expect(winners).toHaveLength(1);
      expect(new Set(outcomes.map((o) => o.agentId))).toEqual(new Set([winners[0]!.agentId]));
      expect(await backend.claimOwner('c-race')).toBe(winners[0]!.agentId);
    });
  });

  describe('declines', () => {
    it('collects every agent who declined a call, once each, per call', async () => {
      await open();
      expect(await backend.decline('c-d', 'alice')).toEqual(['alice']);
      expect((await backend.decline('c-d', 'bob')).sort()).toEqual(['alice', 'bob']);
      expect((await backend.decline('c-d', 'alice')).sort()).toEqual(['alice', 'bob']);
      expect(await backend.decline('c-other', 'carol')).toEqual(['carol']);
      const together = await Promise.all(['d1', 'd2', 'd3'].map((agent) => backend.decline('c-many', agent)));
      expect(together.map((agents) => agents.length).sort()).toEqual([1, 2, 3]);
    });
  });

  describe('presence', () => {
    it('is set, changed and mirrored locally', async () => {
      await open();
      expect(backend.presenceOf('alice')).toBeUndefined();
      await backend.setPresence('alice', { presence: 'available' }, 60_000);
      expect(backend.presenceOf('alice')).toBe('available');
      await backend.setPresence('alice', { presence: 'on_call' }, 60_000);
      await backend.setPresence('bob', { presence: 'dnd' }, 60_000);
      expect(backend.presenceOf('alice')).toBe('on_call');
      expect(backend.presenceOf('bob')).toBe('dnd');
    });

    it('keeps call_waiting apart from on_call, and changes between them', async () => {
      await open();
      await backend.setPresence('alice', { presence: 'call_waiting' }, 60_000);
      await backend.setPresence('bob', { presence: 'on_call' }, 60_000);
      expect(backend.presenceOf('alice')).toBe('call_waiting');
      expect(backend.presenceOf('bob')).toBe('on_call');
      await backend.setPresence('alice', { presence: 'on_call' }, 60_000);
      await backend.setPresence('bob', { presence: 'call_waiting' }, 60_000);
      expect(backend.presenceOf('alice')).toBe('on_call');
      expect(backend.presenceOf('bob')).toBe('call_waiting');
      clock.advance(60_001);
      expect(backend.presenceOf('bob')).toBeUndefined();
    });

    it('expires unless refreshed', async () => {
      await open();
      await backend.setPresence('alice', { presence: 'dnd' }, 60_000);
      await backend.setPresence('bob', { presence: 'available' }, 60_000);
      clock.advance(40_000);
      await backend.setPresence('bob', { presence: 'available' }, 60_000);
      clock.advance(20_001);
      expect(backend.presenceOf('alice')).toBeUndefined();
      expect(backend.presenceOf('bob')).toBe('available');
      clock.advance(40_000);
      expect(backend.presenceOf('bob')).toBeUndefined();
    });

    it('keeps a break with its reason, and since when: a refresh keeps it, another state or reason starts it again', async () => {
      await open();
      const t0 = clock.now();
      expect(await backend.setPresence('alice', { presence: 'break', reason: 'Lunch' }, 60_000)).toEqual({ presence: 'break', reason: 'Lunch', since: t0 });
      clock.advance(20_000);
      expect(await backend.setPresence('alice', { presence: 'break', reason: 'Lunch' }, 60_000)).toEqual({ presence: 'break', reason: 'Lunch', since: t0 });
      expect(backend.presenceStateOf('alice')).toEqual({ presence: 'break', reason: 'Lunch', since: t0 });
      expect(backend.presenceOf('alice')).toBe('break');
      // Another reason is another state.
      clock.advance(1_000);
      expect(await backend.setPresence('alice', { presence: 'break', reason: 'Meeting' }, 60_000)).toEqual({ presence: 'break', reason: 'Meeting', since: t0 + 21_000 });
      clock.advance(1_000);
      expect(await backend.setPresence('alice', { presence: 'available' }, 60_000)).toEqual({ presence: 'available', since: t0 + 22_000 });
      expect(backend.presenceStateOf('alice')).toEqual({ presence: 'available', since: t0 + 22_000 });
      clock.advance(5_000);
      expect((await backend.setPresence('alice', { presence: 'available' }, 60_000)).since).toBe(t0 + 22_000);
      // After-call work for a call, the call as its reason.
      expect(await backend.setPresence('bob', { presence: 'after_call_work', reason: 'wacid.1' }, 60_000)).toEqual({ presence: 'after_call_work', reason: 'wacid.1', since: t0 + 27_000 });
      expect(backend.presenceStateOf('bob')).toEqual({ presence: 'after_call_work', reason: 'wacid.1', since: t0 + 27_000 });
      expect(backend.presenceStateOf('carol')).toBeUndefined();
    });

    it('starts since again once the presence expired, even for the same state', async () => {
      await open();
      const t0 = clock.now();
      await backend.setPresence('alice', { presence: 'dnd' }, 60_000);
      clock.advance(60_001);
      expect(backend.presenceStateOf('alice')).toBeUndefined();
      expect(await backend.setPresence('alice', { presence: 'dnd' }, 60_000)).toEqual({ presence: 'dnd', since: t0 + 60_001 });
    });
  });

  describe('holds', () => {
    it('says which of the calls asked about are on hold, until each is taken off it', async () => {
      await open();
      expect(await backend.heldCalls([])).toEqual(new Set());
      expect(await backend.heldCalls(['wacid.h1', 'wacid.h2'])).toEqual(new Set());
      await backend.setCallHeld('wacid.h1', true);
      await backend.setCallHeld('wacid.h2', true);
      await backend.setCallHeld('wacid.h2', true);
      expect(await backend.heldCalls(['wacid.h1', 'wacid.h2', 'wacid.h3'])).toEqual(new Set(['wacid.h1', 'wacid.h2']));
      expect(await backend.heldCalls(['wacid.h2'])).toEqual(new Set(['wacid.h2']));
      await backend.setCallHeld('wacid.h1', false);
      await backend.setCallHeld('wacid.never', false);
      expect(await backend.heldCalls(['wacid.h1', 'wacid.h2', 'wacid.never'])).toEqual(new Set(['wacid.h2']));
    });
  });

  it('closes cleanly, and twice', async () => {
    await open();
    await store(backend, inbound('m1', clock.now()), clock.now());
    await backend.close();
    await backend.close();
    await expect(append(inbound('m2', clock.now()))).rejects.toThrow(/closed/);
  });
});
