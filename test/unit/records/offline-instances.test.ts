// Two relay instances behind one URL share Redis and the records: an agent's presence read as
// lapsed on one instance while the agent reports on the other is not an offline agent. Each
// instance has a clock of its own (its backend's and its records'), the first one 3 s ahead, as
// hosts' clocks drift: its expiry is dated after the report the other instance took, and must not
// leave the agent offline while it reports.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisBackend } from '../../../relay/backend/redis-backend';
import { CallRecords } from '../../../relay/records/call-records';
import type { Database } from '../../../relay/records/database';
import { stateIntervals } from '../../../relay/records/records-queries';
import { startRelay, type RelayServer } from '../../../relay/server';
import { startRedis, uniquePrefix, type RedisHandle } from '../../support/redis-server';
import { putPresence, team } from '../relay/agent-fixtures';
import { APP_SECRET } from '../relay/webhook-fixtures';
import { DATABASE_HARNESSES, migrated, type FreshDatabase } from './database-harness';
import { collect, recordingLogger, T0 } from './records-fixtures';

const TTL_MS = 60_000;
const SKEW_MS = 3_000;

const until = async (check: () => Promise<boolean>, what: string) => {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('offline across relay instances on %s', (_name, make) => {
  const harness = make();
  const { agents, tokens } = team('alice');
  let redis: RedisHandle;
  let fresh: FreshDatabase;
  let db: Database;
  const closing: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    await harness.setup();
    redis = await startRedis();
  }, 60_000);
  afterAll(async () => {
    await redis?.stop();
    await harness.teardown();
  }, 60_000);
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
    await fresh?.drop();
  });

  /** One relay instance on the shared Redis and records, reading the time off `clock`. */
  async function instance(instanceId: string, clock: { now: number }, prefix: string): Promise<{ relay: RelayServer; records: CallRecords }> {
    const now = () => clock.now;
    const backend = await RedisBackend.open({ url: redis.url, keyPrefix: prefix, retentionMs: 60 * 60_000, dedupWindowMs: 60 * 60_000, now, logger: recordingLogger() });
    const records = new CallRecords({ database: () => fresh.connect(), logger: recordingLogger(), instanceId, now, presenceSweepMs: 10, writer: { flushIntervalMs: 5 } });
    const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, presenceTtlMs: TTL_MS, backend, records, logger: recordingLogger() });
    closing.push(async () => {
      await relay.close();
      await records.close();
      await backend.close();
    });
    await records.database();
    return { relay, records };
  }

  const intervals = async () =>
    (await collect(stateIntervals(db, { from: new Date(T0 - 1), to: new Date(T0 + 3_600_000), agentId: 'alice' }))).map((i) => ({
      state: i.state,
      from: (i.startedAt - T0) / 1000,
      to: i.endedAt === undefined ? undefined : (i.endedAt - T0) / 1000,
    }));
  const expiries = async () => (await db.query<{ instance_id: string }>("SELECT instance_id FROM agent_state_facts WHERE state = 'offline' ORDER BY seq")).map((r) => r.instance_id);

  it('a lapse one instance reads just before the agent reports on the other leaves the agent available, and the other notices when it goes quiet', async () => {
    fresh = await harness.fresh();
    db = await migrated(fresh);
    const prefix = uniquePrefix('records-offline');
    closing.push(() => redis.removeKeys(prefix));
    const clockA = { now: T0 + SKEW_MS };
    const clockB = { now: T0 };
    const a = await instance('relay-a', clockA, prefix);
    const b = await instance('relay-b', clockB, prefix);
    const advance = (ms: number) => {
      clockA.now += ms;
      clockB.now += ms;
    };

    expect((await putPresence(a.relay.url, tokens.alice!, { status: 'available' })).status).toBe(200);
    expect(await a.records.flush()).toBe(true);

    // alice's app is silent a moment longer than her presence lives, on either clock: relay-a
    // notices, and dates it on its own clock, ahead.
    advance(TTL_MS + SKEW_MS + 1_000);
    await until(async () => (await a.records.flush()) && (await expiries()).length === 1, 'relay-a notices the lapse');
    // Her next report reaches relay-b, which saw the lapse too, and counts it as a change.
    expect((await putPresence(b.relay.url, tokens.alice!, { status: 'available' })).status).toBe(200);
    expect(await b.records.flush()).toBe(true);
    expect(await intervals()).toEqual([{ state: 'available', from: SKEW_MS / 1000, to: undefined }]);

    // She goes on reporting to relay-b: still available, and relay-a says nothing more.
    for (let i = 0; i < 3; i += 1) {
      advance(20_000);
      expect((await putPresence(b.relay.url, tokens.alice!, { status: 'available' })).status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await a.records.flush()).toBe(true);
    expect(await b.records.flush()).toBe(true);
    expect(await intervals()).toEqual([{ state: 'available', from: SKEW_MS / 1000, to: undefined }]);
    expect(await expiries()).toEqual(['relay-a']);

    // She goes quiet: relay-b, which took her last reports, notices.
    advance(TTL_MS + 1_000);
    await until(async () => (await b.records.flush()) && (await intervals()).length === 2, 'relay-b notices the lapse');
    const lapsedAt = (clockB.now - T0) / 1000;
    expect(await intervals()).toEqual([
      { state: 'available', from: SKEW_MS / 1000, to: lapsedAt },
      { state: 'offline', from: lapsedAt, to: undefined },
    ]);
  }, 30_000);
});
