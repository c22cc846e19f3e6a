// What only the Redis backend promises: several relay instances on one Redis behave as one relay,
// and an instance that dies or loses its connection loses no event.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../../relay/backend/index';
import { APPEND_BATCH_MAX, RedisBackend } from '../../../relay/backend/redis-backend';
import { HOLD_TTL_MS, type RelayBackend, type StoredEvent } from '../../../relay/backend/types';
import { errorText } from '../../../shared/result';
import { startRedisProxy, type RedisProxy } from '../../support/redis-proxy';
import { startRedis, uniquePrefix, type RedisHandle } from '../../support/redis-server';
import { FakeClock, RecordingLogger, eventually, inbound, incoming, input, recorder, store, terminated } from './backend-fixtures';

const all = { limit: 10_000, sinceMs: 60 * 60_000 };
const cursorsOf = (events: StoredEvent[]) => events.map((e) => e.cursor);

describe('RedisBackend', () => {
  let redis: RedisHandle;
  let admin: Redis;
  let opened: RelayBackend[] = [];
  let prefixes: string[] = [];
  let proxies: RedisProxy[] = [];
  let logger = new RecordingLogger();

  beforeAll(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url, { protocol: 2 });
  });
  afterAll(async () => {
    await admin.quit();
    await redis.stop();
  });
  afterEach(async () => {
    await Promise.all(opened.map((b) => b.close()));
    await Promise.all(proxies.map((p) => p.close()));
    for (const prefix of prefixes) await redis.removeKeys(prefix);
    opened = [];
    prefixes = [];
    proxies = [];
    logger = new RecordingLogger();
  });

  const open = async (keyPrefix: string, clock = new FakeClock(), url = redis.url) => {
    if (!prefixes.includes(keyPrefix)) prefixes.push(keyPrefix);
    const backend = await RedisBackend.open({ url, keyPrefix, retentionMs: 10 * 60_000, dedupWindowMs: 24 * 60 * 60_000, now: clock.now, logger });
    opened.push(backend);
    return backend;
  };
  /** An instance whose connections pass through a proxy that can hold back their replies. */
  const openBehindProxy = async (keyPrefix: string) => {
    const proxy = await startRedisProxy(redis.url);
    proxies.push(proxy);
    const backend = await open(keyPrefix, new FakeClock(), proxy.url);
    const holdBack = (...roles: Array<'stream' | 'commands'>) => proxy.hold((name) => roles.some((role) => name === `relay-${backend.instanceId}-${role}`));
    return { backend, holdBack, release: () => proxy.release() };
  };
  /** Puts `around` between an instance's script calls and Redis: it gets each call's arguments and the real call. */
  const aroundScriptCalls = (backend: RelayBackend, around: (send: () => Promise<unknown>) => Promise<unknown>) => {
    const command = (backend as unknown as { command: { evalsha: (...args: unknown[]) => Promise<unknown> } }).command;
    const evalsha = command.evalsha.bind(command);
    command.evalsha = (...args) => around(() => evalsha(...args));
  };
  const pair = async () => {
    const prefix = uniquePrefix('relay-pair');
    return [await open(prefix), await open(prefix)] as const;
  };
  /** Drops one of the backends' connections the way a network failure would (only theirs: the server may be shared). */
  const killConnection = async (backends: readonly RelayBackend[], role: 'stream' | 'presence' | 'commands') => {
    const names = backends.map((b) => (b instanceof RedisBackend ? `name=relay-${b.instanceId}-${role} ` : 'none'));
    const clients = String(await admin.call('CLIENT', 'LIST', 'TYPE', role === 'presence' ? 'pubsub' : 'normal'));
    const ids = clients
      .split('\n')
      .filter((line) => names.some((name) => line.includes(name)))
      .map((line) => /id=(\d+)/.exec(line)?.[1])
      .filter((id): id is string => id !== undefined);
    expect(ids).toHaveLength(backends.length);
    for (const id of ids) await admin.call('CLIENT', 'KILL', 'ID', id);
  };

  it('delivers an event stored by one instance to the subscribers of the other', async () => {
    const [a, b] = await pair();
    const atA = recorder(a);
    const atB = recorder(b);
    const first = await store(a, inbound('m1', Date.now()), Date.now());
    const second = await store(b, inbound('m2', Date.now()), Date.now());
    await eventually(() => atA.events.length === 2 && atB.events.length === 2, 'delivery on both instances');
    expect(cursorsOf(atA.events)).toEqual([first.cursor, second.cursor]);
    expect(atB.events).toEqual(atA.events);
  });

  it('hands its own events on as it appended them, without reading them back; another instance reads them from the stream', async () => {
    const [a, b] = await pair();
    const atA = recorder(a);
    const atB = recorder(b);
    const mine: StoredEvent[] = [];
    for (let i = 0; i < 20; i++) mine.push(await store(a, inbound(`own-${i}`, Date.now()), Date.now()));
    await eventually(() => atA.events.length === 20 && atB.events.length === 20, 'delivery on both instances');
    expect(atA.events).toEqual(mine);
    expect(atB.events).toEqual(mine);
    // The appended event itself, not a copy parsed from the stream; the other instance parsed its own.
    expect(atA.events.every((stored, i) => stored.event === mine[i]!.event)).toBe(true);
    expect(atB.events.some((stored, i) => stored.event === mine[i]!.event)).toBe(false);
  });

  it('hands its own events to its listeners by the time append resolves, without waiting for its reader', async () => {
    const prefix = uniquePrefix('relay-now');
    const { backend: a, holdBack, release } = await openBehindProxy(prefix);
    const atA = recorder(a);
    holdBack('stream');
    const first = await store(a, inbound('m1', Date.now()), Date.now());
    expect(atA.events).toEqual([first]);
    // Two appends in flight at once: each is delivered when its reply comes, in the stream's order.
    const deliveredOnReply: boolean[] = [];
    const both = await Promise.all(
      ['m2', 'm3'].map(async (messageId) => {
        const stored = await store(a, inbound(messageId, Date.now()), Date.now());
        deliveredOnReply.push(cursorsOf(atA.events).includes(stored.cursor));
        return stored;
      }),
    );
    expect(deliveredOnReply).toEqual([true, true]);
    expect(atA.events).toEqual([first, ...both]);
    await a.flush();
    // The reader's XREAD, issued before, brings them back: they are not delivered again.
    release();
    const b = await open(prefix);
    const theirs = await store(b, inbound('m4', Date.now()), Date.now());
    await eventually(() => atA.events.length >= 4, 'the other instance’s event');
    expect(cursorsOf(atA.events)).toEqual(cursorsOf([first, ...both, theirs]));
  });

  it('leaves its own event to the reader when another instance’s entry came before it, in the stream’s order', async () => {
    const prefix = uniquePrefix('relay-between');
    const { backend: a, holdBack, release } = await openBehindProxy(prefix);
    const b = await open(prefix);
    const atA = recorder(a);
    holdBack('stream');
    const theirs = await store(b, inbound('m1', Date.now()), Date.now());
    const mine = await store(a, inbound('m2', Date.now()), Date.now());
    expect(atA.events).toEqual([]);
    const flushed = a.flush();
    release();
    await flushed;
    expect(cursorsOf(atA.events)).toEqual([theirs.cursor, mine.cursor]);
    // Kept for the reader, which hands on the appended event itself.
    expect(atA.events[1]!.event).toBe(mine.event);
    // Caught up again: the next own event is delivered at once.
    const next = await store(a, inbound('m3', Date.now()), Date.now());
    expect(cursorsOf(atA.events)).toEqual([theirs.cursor, mine.cursor, next.cursor]);
  });

  it('delivers its own event once when the reader hands it on before the append script’s reply arrives', async () => {
    const { backend: a, holdBack, release } = await openBehindProxy(uniquePrefix('relay-reader-first'));
    const atA = recorder(a);
    holdBack('commands');
    const appending = store(a, inbound('m1', Date.now()), Date.now());
    await eventually(() => atA.events.length === 1, 'the reader delivering the entry');
    release();
    const mine = await appending;
    expect(atA.events).toEqual([mine]);
    const next = await store(a, inbound('m2', Date.now()), Date.now());
    expect(cursorsOf(atA.events)).toEqual([mine.cursor, next.cursor]);
  });

  it('leaves an append whose reply has no usable previous id to the reader', async () => {
    const { backend: a, holdBack, release } = await openBehindProxy(uniquePrefix('relay-no-previous'));
    const atA = recorder(a);
    // Redis's real reply, with each event's previous id blanked out.
    aroundScriptCalls(a, async (send) => {
      const reply = await send();
      return Array.isArray(reply) ? reply.map((value, i) => (i % 3 === 2 ? '' : value)) : reply;
    });
    holdBack('stream');
    const mine = await store(a, inbound('m1', Date.now()), Date.now());
    expect(atA.events).toEqual([]);
    const flushed = a.flush();
    release();
    await flushed;
    expect(atA.events).toEqual([mine]);
  });

  it('delivers nothing after close, not even an append whose reply comes after it; another instance gets it', async () => {
    const prefix = uniquePrefix('relay-close');
    const { backend: a, holdBack, release } = await openBehindProxy(prefix);
    const b = await open(prefix);
    const atA = recorder(a);
    const atB = recorder(b);
    holdBack('commands', 'stream');
    const appending = a.append(input(inbound('m1', Date.now()), Date.now()));
    await eventually(() => atB.events.length === 1, 'the entry in the stream');
    const closing = a.close();
    release();
    await closing;
    const outcome = await appending;
    if (!outcome.stored) throw new Error(`expected the event to be stored, got ${outcome.reason}`);
    expect(atB.events[0]!.cursor).toBe(outcome.event.cursor);
    expect(atA.events).toEqual([]);
  });

  it('shows the listeners of two instances appending at once every event once, in the stream’s order', async () => {
    const [a, b] = await pair();
    const atA = recorder(a);
    const atB = recorder(b);
    const appendMany = async (backend: RelayBackend, name: string) => {
      const appends: Array<Promise<StoredEvent>> = [];
      for (let i = 0; i < 300; i += 1) {
        appends.push(store(backend, inbound(`${name}-${i}`, Date.now()), Date.now()));
        // Some go out together, some a turn apart: the two instances' entries interleave.
        if (i % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      return Promise.all(appends);
    };
    const stored = (await Promise.all([appendMany(a, 'a'), appendMany(b, 'b')])).flat();
    const entries = (await admin.xrange(`${prefixes.at(-1)}events`, '-', '+')) as Array<[string, string[]]>;
    const inStream = entries.map(([id]) => id);
    expect(inStream).toHaveLength(600);
    expect(new Set(cursorsOf(stored))).toEqual(new Set(inStream));
    await eventually(() => atA.events.length >= 600 && atB.events.length >= 600, 'delivery on both instances');
    expect(cursorsOf(atA.events)).toEqual(inStream);
    expect(cursorsOf(atB.events)).toEqual(inStream);
  });

  /** Counts the script calls of an instance's command connection, each still sent to Redis. */
  const countScriptCalls = (backend: RelayBackend) => {
    const counted = { calls: 0 };
    aroundScriptCalls(backend, (send) => {
      counted.calls++;
      return send();
    });
    return counted;
  };

  it('stores the appends begun in one turn with one script call, each as if alone, in the order they were begun', async () => {
    const [a, b] = await pair();
    const atA = recorder(a);
    const atB = recorder(b);
    const scripts = countScriptCalls(a);
    const t = Date.now();
    const outcomes = await Promise.all([
      a.append(input(incoming('c1', t), t)),
      a.append(input(inbound('m1', t), t)),
      a.append(input(incoming('c1', t), t)),
      a.append(input(terminated('c2', t), t)),
      a.append(input(incoming('c2', t), t)),
      a.append(input(inbound('m2', t), t)),
    ]);
    expect(scripts.calls).toBe(1);
    // The second connect of c1 is a duplicate of the first; c2's connect comes after its terminate.
    expect(outcomes.map((o) => (o.stored ? 'stored' : o.reason))).toEqual(['stored', 'stored', 'duplicate', 'stored', 'tombstoned', 'stored']);
    const stored = outcomes.flatMap((o) => (o.stored ? [o.event] : []));
    expect(cursorsOf(await b.readAfter('0-0', all))).toEqual(cursorsOf(stored));
    expect(atA.events).toEqual(stored);
    await eventually(() => atB.events.length === stored.length, 'the other instance reads them');
    expect(cursorsOf(atB.events)).toEqual(cursorsOf(stored));
  });

  it('splits a turn of more appends than one script call takes, and keeps their order', async () => {
    const [a, b] = await pair();
    const atA = recorder(a);
    const scripts = countScriptCalls(a);
    const count = 2 * APPEND_BATCH_MAX + 7;
    const t = Date.now();
    const outcomes = await Promise.all(Array.from({ length: count }, (_, i) => a.append(input(inbound(`many-${i}`, t), t))));
    expect(scripts.calls).toBe(3);
    const stored = outcomes.map((o) => {
      if (!o.stored) throw new Error(`expected every event to be stored, got ${o.reason}`);
      return o.event;
    });
    expect(stored.map((e) => (e.event as { messageId?: string }).messageId)).toEqual(Array.from({ length: count }, (_, i) => `many-${i}`));
    expect(cursorsOf(await b.readAfter('0-0', { ...all, limit: 2 * count }))).toEqual(cursorsOf(stored));
    expect(atA.events).toEqual(stored);
  });

  it('rejects every append of a batch whose script call failed, and stores the next ones', async () => {
    const [a, b] = await pair();
    const atB = recorder(b);
    let failNext = true;
    aroundScriptCalls(a, (send) => {
      if (!failNext) return send();
      failNext = false;
      return Promise.reject(new Error('Connection is closed.'));
    });
    const t = Date.now();
    const settled = await Promise.allSettled(['m1', 'm2', 'm3'].map((id) => a.append(input(inbound(id, t), t))));
    expect(settled.map((s) => (s.status === 'rejected' ? errorText(s.reason) : 'fulfilled'))).toEqual(Array(3).fill('Connection is closed.'));
    // Nothing of the failed call reached Redis; the same events are stored when sent again.
    const again = await Promise.all(['m1', 'm2', 'm3'].map((id) => store(a, inbound(id, t), t)));
    await eventually(() => atB.events.length === 3, 'the other instance reads them');
    expect(cursorsOf(atB.events)).toEqual(cursorsOf(again));
  });

  it('fails alone an append Redis refuses, and still decides the others of its batch', async () => {
    const prefix = uniquePrefix('relay-refused');
    const a = await open(prefix);
    // A stream key that is not a stream: every XADD is refused, while a tombstone is still read.
    await admin.set(`${prefix}events`, 'not a stream');
    await admin.set(`${prefix}tombstone:c9`, '1');
    const t = Date.now();
    const settled = await Promise.allSettled([a.append(input(inbound('m1', t), t)), a.append(input(incoming('c9', t), t))]);
    expect(settled[0]!.status).toBe('rejected');
    expect(errorText((settled[0] as PromiseRejectedResult).reason)).toMatch(/^Redis refused the append: .*WRONGTYPE/);
    expect(settled[1]).toEqual({ status: 'fulfilled', value: { stored: false, reason: 'tombstoned' } });
  });

  it('hands on at once an own event that follows duplicates in its batch', async () => {
    const { backend: a, holdBack } = await openBehindProxy(uniquePrefix('relay-after-duplicates'));
    const atA = recorder(a);
    const t = Date.now();
    const first = await store(a, incoming('c1', t), t);
    holdBack('stream');
    const outcomes = await Promise.all([a.append(input(incoming('c1', t), t)), a.append(input(incoming('c1', t), t)), a.append(input(inbound('m1', t), t))]);
    expect(outcomes.map((o) => (o.stored ? 'stored' : o.reason))).toEqual(['duplicate', 'duplicate', 'stored']);
    const mine = outcomes[2]!;
    if (!mine.stored) throw new Error('expected the message to be stored');
    expect(atA.events).toEqual([first, mine.event]);
  });

  it('stores an append begun in the same turn as close before it quits', async () => {
    const prefix = uniquePrefix('relay-close-turn');
    const a = await open(prefix);
    const b = await open(prefix);
    const atB = recorder(b);
    const appending = store(a, inbound('last-words', Date.now()), Date.now());
    const closing = a.close();
    const stored = await appending;
    await closing;
    await eventually(() => atB.events.length === 1, 'the other instance reads it');
    expect(atB.events[0]!.cursor).toBe(stored.cursor);
  });

  it('refuses on one instance a duplicate stored by the other, and a connect tombstoned there', async () => {
    const [a, b] = await pair();
    const t = Date.now();
    await store(a, incoming('c1', t), t);
    expect(await b.append(input(incoming('c1', t), t))).toEqual({ stored: false, reason: 'duplicate' });
    await store(a, { type: 'call.terminated', callId: 'c2', status: 'COMPLETED', timestamp: t }, t);
    expect(await b.isTombstoned('c2')).toBe(true);
    expect(await b.append(input(incoming('c2', t), t))).toEqual({ stored: false, reason: 'tombstoned' });
  });

  it('shows both instances the same holds, and each key expires by itself in Redis', async () => {
    const [a, b] = await pair();
    await a.setCallHeld('wacid.shared', true);
    expect(await b.heldCalls(['wacid.shared', 'wacid.other'])).toEqual(new Set(['wacid.shared']));
    const ttl = await admin.pttl(`${prefixes.at(-1)}held:wacid.shared`);
    expect(ttl).toBeGreaterThan(HOLD_TTL_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(HOLD_TTL_MS);
    await b.setCallHeld('wacid.shared', false);
    expect(await a.heldCalls(['wacid.shared'])).toEqual(new Set());
  });

  it('lets one agent win a call claimed concurrently through both instances', async () => {
    const [a, b] = await pair();
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).claim('c-race', `agent-${i}`)));
    const winners = outcomes.filter((o) => o.won);
    expect(winners).toHaveLength(1);
    expect(new Set(outcomes.map((o) => o.agentId)).size).toBe(1);
    expect(await a.claimOwner('c-race')).toBe(winners[0]!.agentId);
    expect(await b.claimOwner('c-race')).toBe(winners[0]!.agentId);
  });

  it('mirrors presence set on one instance in the other, and in instances opened later', async () => {
    const prefix = uniquePrefix('relay-presence');
    const a = await open(prefix);
    const b = await open(prefix);
    await a.setPresence('alice', { presence: 'on_call' }, 60_000);
    await eventually(() => b.presenceOf('alice') === 'on_call', 'presence on the other instance');
    await b.setPresence('alice', { presence: 'dnd' }, 60_000);
    await eventually(() => a.presenceOf('alice') === 'dnd', 'the change back on the first instance');
    const late = await open(prefix);
    expect(late.presenceOf('alice')).toBe('dnd');
  });

  it('mirrors call_waiting in the other instance and in instances opened later', async () => {
    const prefix = uniquePrefix('relay-presence-cw');
    const a = await open(prefix);
    const b = await open(prefix);
    await a.setPresence('alice', { presence: 'call_waiting' }, 60_000);
    await eventually(() => b.presenceOf('alice') === 'call_waiting', 'call_waiting on the other instance');
    await b.setPresence('alice', { presence: 'on_call' }, 60_000);
    await eventually(() => a.presenceOf('alice') === 'on_call', 'on_call back on the first instance');
    await a.setPresence('alice', { presence: 'call_waiting' }, 60_000);
    await eventually(() => b.presenceOf('alice') === 'call_waiting', 'call_waiting again on the other instance');
    const late = await open(prefix);
    expect(late.presenceOf('alice')).toBe('call_waiting');
  });

  it('reads presence records as they are written in Redis, older ones included, and skips a status it does not know', async () => {
    const prefix = uniquePrefix('relay-presence-records');
    const clock = new FakeClock();
    const expiresAt = clock.now() + 60_000;
    // "<version> <json>", as the presence script writes it; records from before call_waiting look the same.
    const record = (version: number, agentId: string, presence: string) => `${version} ${JSON.stringify({ agentId, presence, expiresAt })}`;
    await admin.hset(`${prefix}presence`, {
      alice: record(1, 'alice', 'available'),
      bob: record(2, 'bob', 'on_call'),
      carol: record(3, 'carol', 'dnd'),
      dave: record(4, 'dave', 'call_waiting'),
      erin: record(5, 'erin', 'away'),
    });
    const backend = await open(prefix, clock);
    expect(['alice', 'bob', 'carol', 'dave', 'erin'].map((id) => backend.presenceOf(id))).toEqual(['available', 'on_call', 'dnd', 'call_waiting', undefined]);
    // The same records on the channel, as another instance publishes them.
    await admin.publish(`${prefix}presence`, record(10, 'alice', 'call_waiting'));
    await admin.publish(`${prefix}presence`, record(11, 'dave', 'away'));
    await admin.publish(`${prefix}presence`, record(12, 'bob', 'available'));
    await eventually(() => backend.presenceOf('bob') === 'available', 'the last published update');
    expect(backend.presenceOf('alice')).toBe('call_waiting');
    // An unknown status is skipped: the agent keeps the presence it had.
    expect(backend.presenceOf('dave')).toBe('call_waiting');
    expect(logger.messages('warn')).toContain('skipped an unreadable presence update');
  });

  it('keeps a state’s since across instances: a refresh at either keeps it, a change at either starts it again', async () => {
    const prefix = uniquePrefix('relay-presence-since');
    const clock = new FakeClock();
    const a = await open(prefix, clock);
    const b = await open(prefix, clock);
    const t0 = clock.now();
    expect(await a.setPresence('alice', { presence: 'break', reason: 'Short break' }, 60_000)).toEqual({ presence: 'break', reason: 'Short break', since: t0 });
    await eventually(() => b.presenceStateOf('alice')?.since === t0, 'the break on the other instance');
    expect(b.presenceStateOf('alice')).toEqual({ presence: 'break', reason: 'Short break', since: t0 });
    clock.advance(20_000);
    // The refresh reaches the other instance: the script, not the mirror, keeps the since.
    expect(await b.setPresence('alice', { presence: 'break', reason: 'Short break' }, 60_000)).toEqual({ presence: 'break', reason: 'Short break', since: t0 });
    clock.advance(1_000);
    expect(await a.setPresence('alice', { presence: 'after_call_work', reason: 'wacid.1' }, 60_000)).toEqual({ presence: 'after_call_work', reason: 'wacid.1', since: t0 + 21_000 });
    await eventually(() => b.presenceOf('alice') === 'after_call_work', 'the after-call work on the other instance');
    expect(b.presenceStateOf('alice')).toEqual({ presence: 'after_call_work', reason: 'wacid.1', since: t0 + 21_000 });
    const late = await open(prefix, clock);
    expect(late.presenceStateOf('alice')).toEqual({ presence: 'after_call_work', reason: 'wacid.1', since: t0 + 21_000 });
  });

  it('takes a record an older relay wrote, without reason or since, as a state that starts at the next report', async () => {
    const prefix = uniquePrefix('relay-presence-older');
    const clock = new FakeClock();
    const expiresAt = clock.now() + 60_000;
    await admin.hset(`${prefix}presence`, { alice: `1 ${JSON.stringify({ agentId: 'alice', presence: 'dnd', expiresAt })}` });
    const backend = await open(prefix, clock);
    expect(backend.presenceStateOf('alice')).toEqual({ presence: 'dnd' });
    clock.advance(1_000);
    expect(await backend.setPresence('alice', { presence: 'dnd' }, 60_000)).toEqual({ presence: 'dnd', since: clock.now() });
  });

  it('keeps serving when one instance dies; the other replays everything after its last cursor', async () => {
    const [a, b] = await pair();
    const atA = recorder(a);
    for (let i = 0; i < 5; i += 1) await store(i % 2 === 0 ? a : b, inbound(`before-${i}`, Date.now()), Date.now());
    await eventually(() => atA.events.length === 5, 'delivery before the crash');
    const lastSeenByA = atA.events.at(-1)!.cursor;
    await a.close();
    const after: StoredEvent[] = [];
    for (let i = 0; i < 5; i += 1) after.push(await store(b, inbound(`after-${i}`, Date.now()), Date.now()));
    expect(cursorsOf(await b.readAfter(lastSeenByA, all))).toEqual(cursorsOf(after));
    expect(await b.claim('c1', 'bob')).toEqual({ won: true, agentId: 'bob' });
  });

  it('resumes its stream after a dropped connection without losing an event', async () => {
    const [a, b] = await pair();
    const atB = recorder(b);
    await store(a, inbound('m0', Date.now()), Date.now());
    await eventually(() => atB.events.length === 1, 'first delivery');
    await killConnection([a, b], 'stream');
    const stored: StoredEvent[] = [];
    for (let i = 1; i <= 20; i += 1) stored.push(await store(a, inbound(`m${i}`, Date.now()), Date.now()));
    await eventually(() => atB.events.length === 21, 'delivery after the reconnect');
    expect(cursorsOf(atB.events.slice(1))).toEqual(cursorsOf(stored));
  });

  it('keeps storing after its command connection dropped', async () => {
    const [a, b] = await pair();
    const atB = recorder(b);
    await killConnection([a], 'commands');
    const stored = await store(a, inbound('m1', Date.now()), Date.now());
    expect(await a.claim('c1', 'alice')).toEqual({ won: true, agentId: 'alice' });
    await eventually(() => atB.events.length === 1, 'delivery of the event stored after the reconnect');
    expect(atB.events[0]!.cursor).toBe(stored.cursor);
  });

  it('reloads presence after its subscriber reconnects', async () => {
    const [a, b] = await pair();
    await killConnection([a, b], 'presence');
    // Published while the subscribers were away: only the reload can bring it.
    await a.setPresence('carol', { presence: 'dnd' }, 60_000);
    await eventually(() => b.presenceOf('carol') === 'dnd', 'presence after the reconnect');
  });

  it('runs its scripts again after Redis forgot them', async () => {
    const backend = await open(uniquePrefix('relay-flush'));
    await admin.call('SCRIPT', 'FLUSH');
    expect((await backend.append(input(inbound('m1', Date.now()), Date.now()))).stored).toBe(true);
    expect(await backend.claim('c1', 'alice')).toEqual({ won: true, agentId: 'alice' });
    await backend.setPresence('alice', { presence: 'available' }, 60_000);
    expect(backend.presenceOf('alice')).toBe('available');
  });

  it('skips a stream entry it cannot read and keeps delivering', async () => {
    const prefix = uniquePrefix('relay-bad-entry');
    const backend = await open(prefix);
    const seen = recorder(backend);
    await admin.xadd(`${prefix}events`, '*', 'e', '{"receivedAt":"soon"}');
    await admin.xadd(`${prefix}events`, '*', 'other', 'field');
    const good = await store(backend, inbound('m1', Date.now()), Date.now());
    await eventually(() => seen.events.length === 1, 'the good event');
    expect(seen.events[0]!.cursor).toBe(good.cursor);
    expect(cursorsOf(await backend.readAfter(undefined, all))).toEqual([good.cursor]);
    expect(logger.messages('warn')).toContain('skipped an unreadable stream entry');
  });

  it('uses the same stream id for a clock that lags behind another instance', async () => {
    const prefix = uniquePrefix('relay-skew');
    const ahead = await open(prefix, new FakeClock(Date.now() + 5_000));
    const behind = await open(prefix, new FakeClock(Date.now()));
    const first = await store(ahead, inbound('m1', Date.now()), Date.now());
    const second = await store(behind, inbound('m2', Date.now()), Date.now());
    expect(cursorsOf(await behind.readAfter(first.cursor, all))).toEqual([second.cursor]);
  });

  it('is what createBackend makes with a Redis URL, under the given prefix', async () => {
    const prefix = uniquePrefix('relay-factory');
    prefixes.push(prefix);
    const backend = await createBackend({ redisUrl: redis.url, keyPrefix: prefix, retentionMs: 60_000, dedupWindowMs: 60_000, logger });
    opened.push(backend);
    expect(backend).toBeInstanceOf(RedisBackend);
    expect(backend.kind).toBe('redis');
    await store(backend, inbound('m1', Date.now()), Date.now());
    expect(await admin.xlen(`${prefix}events`)).toBe(1);
  });

  it('refuses to start when Redis cannot be reached, and never shows the password', async () => {
    const dead = 'redis://user:hunter2@127.0.0.1:1';
    const attempt = createBackend({ redisUrl: dead, retentionMs: 60_000, dedupWindowMs: 60_000, logger });
    await expect(attempt).rejects.toThrow(/Cannot use Redis at 127\.0\.0\.1:1/);
    await expect(attempt).rejects.not.toThrow(/hunter2/);
    expect(JSON.stringify(logger.lines)).not.toContain('hunter2');
  });
});
