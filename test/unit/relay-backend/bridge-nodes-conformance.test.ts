// One suite, both backends: the bridge nodes' registry (register, load as heartbeat, expiry, the
// least-loaded pick) and which node holds which call behave the same in memory and in Redis
// (relay/REFERENCE.md "Bridge nodes").
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CALL_NODE_TTL_MS } from '../../../relay/backend/node-rules';
import type { RelayBackend } from '../../../relay/backend/types';
import type { BridgeNodeRegistration } from '../../../shared/bridge-nodes';
import { FakeClock, RecordingLogger, type BackendHarness } from './backend-fixtures';
import { memoryHarness, redisHarness } from './backend-harnesses';

const TTL_MS = 15_000;

const node = (nodeId: string, extra: Partial<BridgeNodeRegistration> = {}): BridgeNodeRegistration => ({
  nodeId,
  controlUrl: `http://10.0.0.${nodeId.length}:8790`,
  publicAddress: '203.0.113.7',
  ...extra,
});

const redis = redisHarness();
const harnesses: BackendHarness[] = [memoryHarness(), redis];

describe.each(harnesses)('$name backend: bridge nodes', (harness) => {
  let clock: FakeClock;
  let backend: RelayBackend;

  beforeAll(() => harness.setup());
  afterAll(() => harness.teardown());
  afterEach(() => harness.closeAll());

  const open = async () => {
    clock = new FakeClock(1_760_000_000_000);
    backend = await harness.open({ now: clock.now, logger: new RecordingLogger() });
    return backend;
  };
  const ids = async () => (await backend.nodes()).map((n) => n.nodeId);

  it('registers a node with no calls, alive for the ttl, and lists the live nodes by id', async () => {
    await open();
    const registered = await backend.registerNode(node('node-b', { capacity: 40 }), TTL_MS);
    expect(registered).toEqual({
      nodeId: 'node-b',
      controlUrl: 'http://10.0.0.6:8790',
      publicAddress: '203.0.113.7',
      capacity: 40,
      calls: 0,
      registeredAt: clock.t,
      lastSeenAt: clock.t,
      expiresAt: clock.t + TTL_MS,
    });
    await backend.registerNode(node('node-a'), TTL_MS);
    expect(await backend.nodes()).toEqual([
      { nodeId: 'node-a', controlUrl: 'http://10.0.0.6:8790', publicAddress: '203.0.113.7', calls: 0, registeredAt: clock.t, lastSeenAt: clock.t, expiresAt: clock.t + TTL_MS },
      registered,
    ]);
  });

  it('replaces a node that registers again under its id (a restarted node has no calls)', async () => {
    await open();
    await backend.registerNode(node('node-a', { capacity: 10 }), TTL_MS);
    await backend.reportNodeLoad('node-a', { calls: 7 }, TTL_MS);
    clock.advance(1_000);
    await backend.registerNode(node('node-a', { controlUrl: 'http://10.0.0.9:9000' }), TTL_MS);
    const [again] = await backend.nodes();
    expect(again).toEqual({ nodeId: 'node-a', controlUrl: 'http://10.0.0.9:9000', publicAddress: '203.0.113.7', calls: 0, registeredAt: clock.t, lastSeenAt: clock.t, expiresAt: clock.t + TTL_MS });
  });

  it('takes a load report as a heartbeat: the load replaces the last one, the node lives a ttl longer', async () => {
    await open();
    await backend.registerNode(node('node-a'), TTL_MS);
    const registeredAt = clock.t;
    clock.advance(10_000);
    expect(await backend.reportNodeLoad('node-a', { calls: 3, cpuPercent: 41.5 }, TTL_MS)).toMatchObject({ calls: 3, cpuPercent: 41.5, registeredAt, lastSeenAt: clock.t, expiresAt: clock.t + TTL_MS });
    clock.advance(10_000);
    // Past the first ttl, alive thanks to the report; a report without cpuPercent leaves it unknown.
    const next = await backend.reportNodeLoad('node-a', { calls: 2 }, TTL_MS);
    expect(next).toMatchObject({ calls: 2, lastSeenAt: clock.t, expiresAt: clock.t + TTL_MS });
    expect(next).not.toHaveProperty('cpuPercent');
    expect(await backend.nodes()).toEqual([next]);
  });

  it('forgets a node that missed its heartbeats: gone from the list, and its report is refused so that it registers again', async () => {
    await open();
    await backend.registerNode(node('node-a'), TTL_MS);
    await backend.registerNode(node('node-b'), TTL_MS);
    clock.advance(TTL_MS - 1);
    await backend.reportNodeLoad('node-b', { calls: 0 }, TTL_MS);
    expect(await ids()).toEqual(['node-a', 'node-b']);
    clock.advance(1);
    expect(await ids()).toEqual(['node-b']);
    expect(await backend.reportNodeLoad('node-a', { calls: 1 }, TTL_MS)).toBeUndefined();
    expect(await backend.reportNodeLoad('never-registered', { calls: 1 }, TTL_MS)).toBeUndefined();
    expect(await ids()).toEqual(['node-b']);
    await backend.registerNode(node('node-a'), TTL_MS);
    expect(await backend.reportNodeLoad('node-a', { calls: 1 }, TTL_MS)).toMatchObject({ nodeId: 'node-a', calls: 1 });
    clock.advance(TTL_MS);
    expect(await backend.nodes()).toEqual([]);
    expect(await backend.pickNode()).toBeUndefined();
  });

  it('removes a node that leaves; removing an unknown one is no error', async () => {
    await open();
    await backend.registerNode(node('node-a'), TTL_MS);
    await backend.registerNode(node('node-b'), TTL_MS);
    await backend.removeNode('node-a');
    await backend.removeNode('node-a');
    await backend.removeNode('nobody');
    expect(await ids()).toEqual(['node-b']);
    expect(await backend.reportNodeLoad('node-a', { calls: 0 }, TTL_MS)).toBeUndefined();
  });

  describe('pickNode', () => {
    it('picks the node with the fewest calls, then the lowest share of its capacity, then the lowest id', async () => {
      await open();
      expect(await backend.pickNode()).toBeUndefined();
      for (const id of ['node-c', 'node-a', 'node-b']) await backend.registerNode(node(id, id === 'node-b' ? { capacity: 100 } : id === 'node-c' ? { capacity: 10 } : {}), TTL_MS);
      await backend.reportNodeLoad('node-a', { calls: 5 }, TTL_MS);
      await backend.reportNodeLoad('node-b', { calls: 2 }, TTL_MS);
      await backend.reportNodeLoad('node-c', { calls: 3 }, TTL_MS);
      expect((await backend.pickNode())?.nodeId).toBe('node-b');
      // Equal calls: 2 of 10 is a larger share than 2 of 100; no capacity counts as no share.
      await backend.reportNodeLoad('node-c', { calls: 2 }, TTL_MS);
      expect((await backend.pickNode())?.nodeId).toBe('node-b');
      await backend.reportNodeLoad('node-a', { calls: 2 }, TTL_MS);
      expect((await backend.pickNode())?.nodeId).toBe('node-a');
      await backend.reportNodeLoad('node-b', { calls: 0 }, TTL_MS);
      await backend.reportNodeLoad('node-c', { calls: 0 }, TTL_MS);
      await backend.reportNodeLoad('node-a', { calls: 0 }, TTL_MS);
      expect((await backend.pickNode())?.nodeId).toBe('node-a');
    });

    it('passes over a node that is full, and finds none when every node is', async () => {
      await open();
      await backend.registerNode(node('node-a', { capacity: 2 }), TTL_MS);
      await backend.registerNode(node('node-b', { capacity: 8 }), TTL_MS);
      await backend.reportNodeLoad('node-a', { calls: 2 }, TTL_MS);
      await backend.reportNodeLoad('node-b', { calls: 5 }, TTL_MS);
      expect((await backend.pickNode())?.nodeId).toBe('node-b');
      await backend.reportNodeLoad('node-b', { calls: 8 }, TTL_MS);
      expect(await backend.pickNode()).toBeUndefined();
    });

    it('counts the calls placed on a node since its last report, so that a burst is spread', async () => {
      await open();
      await backend.registerNode(node('node-a'), TTL_MS);
      await backend.registerNode(node('node-b'), TTL_MS);
      const picks: string[] = [];
      for (let i = 0; i < 6; i += 1) {
        const picked = await backend.pickNode();
        if (picked === undefined) throw new Error('no node picked');
        picks.push(picked.nodeId);
        expect(await backend.setCallNode(`call-${i}`, picked.nodeId)).toEqual({ placed: true, nodeId: picked.nodeId });
      }
      expect(picks).toEqual(['node-a', 'node-b', 'node-a', 'node-b', 'node-a', 'node-b']);
      // A report above what was placed wins: the node knows calls the relay does not.
      await backend.reportNodeLoad('node-a', { calls: 9 }, TTL_MS);
      expect((await backend.pickNode())?.nodeId).toBe('node-b');
      // A dropped call no longer counts.
      await backend.reportNodeLoad('node-a', { calls: 0 }, TTL_MS);
      await backend.dropCallNode('call-1');
      expect((await backend.pickNode())?.nodeId).toBe('node-b');
    });
  });

  describe('which node holds which call', () => {
    it('places a call on the first node asked, refuses another, and keeps it for the same one', async () => {
      await open();
      expect(await backend.callNode('wacid.1')).toBeUndefined();
      expect(await backend.setCallNode('wacid.1', 'node-a')).toEqual({ placed: true, nodeId: 'node-a' });
      expect(await backend.setCallNode('wacid.1', 'node-b')).toEqual({ placed: false, nodeId: 'node-a' });
      expect(await backend.setCallNode('wacid.1', 'node-a')).toEqual({ placed: true, nodeId: 'node-a' });
      expect(await backend.callNode('wacid.1')).toBe('node-a');
      await backend.setCallNode('wacid.3', 'node-a');
      await backend.setCallNode('wacid.2', 'node-a');
      await backend.setCallNode('wacid.4', 'node-b');
      expect(await backend.callsOnNode('node-a')).toEqual(['wacid.1', 'wacid.2', 'wacid.3']);
      expect(await backend.callsOnNode('node-b')).toEqual(['wacid.4']);
      expect(await backend.callsOnNode('node-c')).toEqual([]);
    });

    it('drops a call, after which another node may take it; dropping an unplaced call is no error', async () => {
      await open();
      await backend.setCallNode('wacid.1', 'node-a');
      await backend.dropCallNode('wacid.1');
      await backend.dropCallNode('wacid.1');
      await backend.dropCallNode('never-placed');
      expect(await backend.callNode('wacid.1')).toBeUndefined();
      expect(await backend.callsOnNode('node-a')).toEqual([]);
      expect(await backend.setCallNode('wacid.1', 'node-b')).toEqual({ placed: true, nodeId: 'node-b' });
      expect(await backend.callsOnNode('node-b')).toEqual(['wacid.1']);
    });

    it('forgets a placement an hour after it was last made, as a claim', async () => {
      await open();
      expect(CALL_NODE_TTL_MS).toBe(60 * 60_000);
      await backend.setCallNode('wacid.once', 'node-a');
      await backend.setCallNode('wacid.again', 'node-a');
      clock.advance(CALL_NODE_TTL_MS / 2);
      await backend.setCallNode('wacid.again', 'node-a');
      clock.advance(CALL_NODE_TTL_MS / 2 - 1);
      expect(await backend.callsOnNode('node-a')).toEqual(['wacid.again', 'wacid.once']);
      clock.advance(1);
      expect(await backend.callsOnNode('node-a')).toEqual(['wacid.again']);
      expect(await backend.callNode('wacid.once')).toBeUndefined();
      expect(await backend.callNode('wacid.again')).toBe('node-a');
      expect(await backend.setCallNode('wacid.once', 'node-b')).toEqual({ placed: true, nodeId: 'node-b' });
      clock.advance(CALL_NODE_TTL_MS / 2);
      expect(await backend.callsOnNode('node-a')).toEqual([]);
      expect(await backend.callsOnNode('node-b')).toEqual(['wacid.once']);
    });

    it('keeps a node’s calls after the node is gone, so that they can be ended or moved', async () => {
      await open();
      await backend.registerNode(node('node-a'), TTL_MS);
      await backend.setCallNode('wacid.1', 'node-a');
      await backend.removeNode('node-a');
      clock.advance(TTL_MS);
      expect(await backend.callsOnNode('node-a')).toEqual(['wacid.1']);
      expect(await backend.callNode('wacid.1')).toBe('node-a');
    });

    it('has exactly one holder among concurrent placements of one call', async () => {
      await open();
      const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => backend.setCallNode('wacid.race', `node-${i}`)));
      const winners = outcomes.filter((o) => o.placed);
      expect(winners).toHaveLength(1);
      const holder = winners[0]!.nodeId;
      expect(outcomes.every((o) => o.nodeId === holder)).toBe(true);
      expect(await backend.callNode('wacid.race')).toBe(holder);
    });
  });
});

describe('redis backend: bridge nodes across instances', () => {
  beforeAll(() => redis.setup());
  afterAll(() => redis.teardown());
  afterEach(() => redis.closeAll());

  it('shows every instance the same nodes, loads, picks and placements', async () => {
    const clock = new FakeClock(1_760_000_000_000);
    const a = await redis.open({ now: clock.now, logger: new RecordingLogger() });
    const b = await redis.open({ now: clock.now, logger: new RecordingLogger(), shareWith: a });
    await a.registerNode(node('node-a'), TTL_MS);
    await b.registerNode(node('node-b'), TTL_MS);
    await a.reportNodeLoad('node-b', { calls: 4 }, TTL_MS);
    await b.reportNodeLoad('node-a', { calls: 1 }, TTL_MS);
    expect(await a.nodes()).toEqual(await b.nodes());
    expect((await b.nodes()).map((n) => [n.nodeId, n.calls])).toEqual([
      ['node-a', 1],
      ['node-b', 4],
    ]);
    expect((await a.pickNode())?.nodeId).toBe('node-a');
    expect(await a.setCallNode('wacid.1', 'node-a')).toEqual({ placed: true, nodeId: 'node-a' });
    expect(await b.setCallNode('wacid.1', 'node-b')).toEqual({ placed: false, nodeId: 'node-a' });
    expect(await b.callsOnNode('node-a')).toEqual(['wacid.1']);
    await b.removeNode('node-a');
    expect((await a.nodes()).map((n) => n.nodeId)).toEqual(['node-b']);
  });

  it('skips a record it cannot read, and says so, rather than failing every pick', async () => {
    const clock = new FakeClock(1_760_000_000_000);
    const logger = new RecordingLogger();
    const backend = await redis.open({ now: clock.now, logger });
    await backend.registerNode(node('node-a'), TTL_MS);
    await backend.registerNode(node('node-b'), TTL_MS);
    const raw = new Redis(redis.redis().url, { protocol: 2 });
    try {
      await raw.hset(`${redis.prefixOf(backend)}bridge:nodes`, 'node-a', '{"not":"a node"}');
    } finally {
      raw.disconnect();
    }
    expect((await backend.nodes()).map((n) => n.nodeId)).toEqual(['node-b']);
    expect((await backend.pickNode())?.nodeId).toBe('node-b');
    expect(logger.messages('warn')).toContain('skipped an unreadable bridge node record');
    // A heartbeat for it finds nothing it can use: the node registers again and is whole.
    expect(await backend.reportNodeLoad('node-a', { calls: 0 }, TTL_MS)).toBeUndefined();
    await backend.registerNode(node('node-a'), TTL_MS);
    expect((await backend.nodes()).map((n) => n.nodeId)).toEqual(['node-a', 'node-b']);
  });
});
