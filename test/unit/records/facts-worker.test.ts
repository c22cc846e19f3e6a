// PostgreSQL's batches written in the records' writer thread (facts-worker.ts), on a real server:
// the same rows as writeBatch on the relay's thread, refused data told apart from a thread or a
// server that is away, a thread that dies started again by the next write, close() ending it, and
// the relay's event loop free of the write.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { constants, getPriority } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentStateFact } from '../../../relay/records/agent-states';
import { claimedFact, type CallFact } from '../../../relay/records/call-facts';
import type { Database } from '../../../relay/records/database';
import { FactsThreadStoppedError, FactsWorker } from '../../../relay/records/facts-worker';
import { migrate } from '../../../relay/records/migrations';
import { PostgresDatabase } from '../../../relay/records/postgres-database';
import { callById } from '../../../relay/records/records-queries';
import { writeBatch, type FactBatch } from '../../../relay/records/records-store';
import { RecordsWriter } from '../../../relay/records/records-writer';
import pg from 'pg';
import { createDatabase, startPostgres, type PostgresServer } from './postgres-server';
import { answeredCall, decline, factsOfStep, incoming, recordingLogger, T0, terminated, type Step } from './records-fixtures';

const MIN = 60_000;
/** The writer thread, ended a moment into any write of the instance 'dies-mid-write'. */
const DYING_THREAD = new URL('./facts-thread-that-dies.mjs', import.meta.url);
const callFacts = (steps: readonly Step[]): CallFact[] => steps.flatMap(factsOfStep);
const state = (agentId: string, stateName: string, reason: string, at: number): AgentStateFact => ({ agentId, state: stateName, reason, at });

/** Several calls and agents, in one batch: rows derived from facts of many kinds. */
function mixedBatch(t: number): FactBatch {
  return {
    calls: callFacts([
      ...answeredCall('wacid.fw-answered', t),
      incoming('wacid.fw-missed', t + MIN, ['alice', 'bob']),
      decline('wacid.fw-missed', 'bob', t + MIN + 3_000, 1),
      terminated('wacid.fw-missed', t + MIN + 20_000),
    ]),
    states: [state('alice', 'available', '', t), state('alice', 'busy', 'call', t + 2_000), state('bob', 'away', 'lunch', t + 5_000), state('alice', 'available', '', t + 62_000)],
  };
}

/** Everything the writes leave, but the instants of the writing itself. */
async function tablesOf(db: PostgresDatabase): Promise<{ calls: unknown[]; callFacts: unknown[]; agentStates: unknown[]; agentStateFacts: unknown[] }> {
  const rows = async (sql: string) => (await db.query<{ row: unknown }>(sql)).map((r) => r.row);
  return {
    calls: await rows("SELECT to_jsonb(c) - 'updated_at' AS row FROM calls c ORDER BY call_id"),
    callFacts: await rows("SELECT to_jsonb(f) - 'recorded_at' AS row FROM call_facts f ORDER BY call_id, kind, agent_id, ref"),
    agentStates: await rows('SELECT to_jsonb(s) AS row FROM agent_states s ORDER BY agent_id, started_at'),
    agentStateFacts: await rows("SELECT to_jsonb(f) - 'seq' - 'recorded_at' AS row FROM agent_state_facts f ORDER BY agent_id, at, seq"),
  };
}

/** How many calls of this id the server holds, asked by another process: an answer that does not need this thread's event loop. */
function storedElsewhere(url: string, callId: string): number {
  const probe = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "import pg from 'pg'; const c = new pg.Client(process.argv[1]); await c.connect(); const r = await c.query('SELECT count(*)::int AS n FROM calls WHERE call_id = $1', [process.argv[2]]); console.log(r.rows[0].n); await c.end();",
      url,
      callId,
    ],
    { encoding: 'utf8', cwd: process.cwd(), timeout: 10_000 },
  );
  if (probe.status !== 0) throw new Error(`the probe failed: ${probe.stderr}`);
  return Number(probe.stdout.trim());
}

describe("the records' writer thread (PostgreSQL)", () => {
  let server: PostgresServer;
  const cleanups: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
  }, 60_000);

  /** A migrated database of its own, closed and dropped after the test. */
  const migratedDatabase = async () => {
    const { url, drop } = await createDatabase(server, 'facts');
    cleanups.push(drop);
    const db = PostgresDatabase.open(url);
    cleanups.push(() => db.close());
    await migrate(db);
    return { url, db };
  };

  /** Holds a call's lock from a connection of the test's own, so that a write of that call waits; `release` lets it go. */
  const holdCallLock = async (url: string, callId: string): Promise<() => Promise<unknown>> => {
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    cleanups.push(() => holder.end());
    await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [callId]);
    return () => holder.query('SELECT pg_advisory_unlock_all()');
  };

  it('a batch written in the thread leaves the very rows writeBatch leaves on the relay’s thread', async () => {
    const inThread = await migratedDatabase();
    const here = await migratedDatabase();
    const batch = mixedBatch(T0);
    await inThread.db.writeFacts(batch, 'instance-a');
    await here.db.transaction((tx) => writeBatch(tx, batch, 'instance-a'));
    const written = await tablesOf(inThread.db);
    expect(written.calls.map((row) => (row as { call_id: string }).call_id)).toEqual(['wacid.fw-answered', 'wacid.fw-missed']);
    expect(written.agentStates.length).toBeGreaterThan(0);
    expect(written).toEqual(await tablesOf(here.db));
    expect(await callById(inThread.db, 'wacid.fw-answered')).toMatchObject({ outcome: 'answered', agentId: 'alice' });
  });

  it('refused data reaches the caller as it was refused: its SQLSTATE from the server, its RangeError from JavaScript', async () => {
    const { db } = await migratedDatabase();
    const nul = await db.writeFacts({ calls: [claimedFact('wacid.bad\u0000id', 'alice', T0)], states: [] }, 'instance-a').catch((error: unknown) => error);
    expect(nul).toBeInstanceOf(Error);
    expect(nul).toMatchObject({ code: '22021', syscall: undefined });
    const noDate = await db.writeFacts({ calls: [claimedFact('wacid.no-date', 'alice', Number.NaN)], states: [] }, 'instance-a').catch((error: unknown) => error);
    expect(noDate).toMatchObject({ name: 'RangeError', message: 'Invalid time value', code: undefined });
  });

  /** A records writer over `db` that flushes and retries quickly, and what it logs. */
  function writerOn(db: PostgresDatabase) {
    const log = recordingLogger();
    const writer = new RecordsWriter({ connect: async () => db, instanceId: 'instance-a', logger: log, flushIntervalMs: 5, retryMinMs: 20, retryMaxMs: 100 });
    cleanups.push(() => writer.close(1_000));
    return { writer, log };
  }

  it('the writer drops only the fact the thread’s database refused, and writes its neighbours', async () => {
    const { db } = await migratedDatabase();
    const { writer, log } = writerOn(db);
    writer.push([
      { kind: 'call', fact: claimedFact('wacid.bad\u0000id', 'alice', T0) },
      { kind: 'call', fact: claimedFact('wacid.good-neighbour', 'bob', T0 + 1_000) },
    ]);
    expect(await writer.flush(10_000)).toBe(true);
    expect(writer.stats()).toMatchObject({ queued: 0, dropped: 1, connected: true });
    expect(await callById(db, 'wacid.good-neighbour')).toMatchObject({ direction: 'outgoing', agentId: 'bob' });
    const refused = log.lines.filter((l) => l.level === 'error').map((l) => [l.msg, l.fields?.kind, (l.fields?.error as { code?: string }).code]);
    expect(refused).toEqual([['the records database refused a fact: it is dropped', 'claimed', '22021']]);
    expect(log.said(/cannot be reached/)).toBe(0);
  });

  it('a fact that cannot be handed to the thread is refused data: dropped alone, its neighbours written, the thread kept', async () => {
    const { db } = await migratedDatabase();
    const { writer, log } = writerOn(db);
    const uncloneable = claimedFact('wacid.uncloneable', 'alice', T0);
    // A function has no structured clone: postMessage throws DataCloneError before the thread sees anything.
    (uncloneable as unknown as { data: Record<string, unknown> }).data = { ...uncloneable.data, later: () => undefined };
    writer.push([
      { kind: 'call', fact: uncloneable },
      { kind: 'call', fact: claimedFact('wacid.clone-neighbour', 'bob', T0 + 1_000) },
    ]);
    expect(await writer.flush(10_000)).toBe(true);
    expect(writer.stats()).toMatchObject({ queued: 0, dropped: 1, connected: true });
    expect(await callById(db, 'wacid.clone-neighbour')).toMatchObject({ direction: 'outgoing', agentId: 'bob' });
    const refused = log.lines.filter((l) => l.level === 'error').map((l) => [l.msg, (l.fields?.error as { name?: string }).name]);
    expect(refused).toEqual([['the records database refused a fact: it is dropped', 'DataCloneError']]);
    expect(log.said(/cannot be reached/)).toBe(0);
  });

  it('a thread that dies mid-write fails that write as no refusal of the data, and nothing of it is stored; the next write starts another thread', async () => {
    const { url, db } = await migratedDatabase();
    const facts = new FactsWorker({ url, answerTimeoutMs: 10_000, entry: DYING_THREAD });
    cleanups.push(() => facts.close());
    // The write waits on the call's lock, held here, until its thread is gone.
    const release = await holdCallLock(url, 'wacid.cut-off');

    const crash = await facts.write({ calls: callFacts(answeredCall('wacid.cut-off', T0)), states: [] }, 'dies-mid-write').catch((error: unknown) => error);
    expect(crash).toBeInstanceOf(FactsThreadStoppedError);
    expect((crash as Error).message).toBe("the records' writer thread stopped (exit 1)");
    expect(crash).not.toHaveProperty('code');
    await release();
    expect(await db.query('SELECT call_id FROM call_facts')).toEqual([]);

    await facts.write({ calls: callFacts(answeredCall('wacid.cut-off', T0)), states: [] }, 'instance-a');
    expect(await callById(db, 'wacid.cut-off')).toMatchObject({ outcome: 'answered', agentId: 'alice' });
  });

  it('a thread that does not answer a write in time is given up as one that died; the next write starts another', async () => {
    const { url, db } = await migratedDatabase();
    // Long enough for a thread's start under load (tsx's loader and the modules), which the next write waits for.
    const facts = new FactsWorker({ url, answerTimeoutMs: 30_000, threadAnswerMs: 4_000 });
    cleanups.push(() => facts.close());
    const release = await holdCallLock(url, 'wacid.unanswered');

    const given = await facts.write({ calls: callFacts(answeredCall('wacid.unanswered', T0)), states: [] }, 'instance-a').catch((error: unknown) => error);
    expect(given).toBeInstanceOf(FactsThreadStoppedError);
    expect((given as Error).message).toBe("the records' writer thread did not answer within 4000 ms");
    expect(given).not.toHaveProperty('code');
    await release();

    await facts.write({ calls: callFacts(answeredCall('wacid.unanswered', T0)), states: [] }, 'instance-a');
    expect(await callById(db, 'wacid.unanswered')).toMatchObject({ outcome: 'answered', agentId: 'alice' });
  });

  it('the writer takes a thread that dies for an outage: its facts wait, none dropped, and are written once a thread lives', async () => {
    const { url, db } = await migratedDatabase();
    const facts = new FactsWorker({ url, answerTimeoutMs: 10_000, entry: DYING_THREAD });
    cleanups.push(() => facts.close());
    let instanceId = 'dies-mid-write';
    const dying: Database = {
      kind: db.kind,
      where: db.where,
      query: (sql, params) => db.query(sql, params),
      script: (sql) => db.script(sql),
      transaction: (work) => db.transaction(work),
      writeFacts: (batch) => facts.write(batch, instanceId),
      close: async () => undefined,
    };
    // Each write waits on the call's lock, held here, until its thread is gone.
    const release = await holdCallLock(url, 'wacid.waits');
    const log = recordingLogger();
    const writer = new RecordsWriter({ connect: async () => dying, instanceId: 'unused', logger: log, flushIntervalMs: 5, retryMinMs: 20, retryMaxMs: 100 });
    cleanups.push(() => writer.close(1_000));
    const waiting = callFacts(answeredCall('wacid.waits', T0));
    writer.push(waiting.map((fact) => ({ kind: 'call' as const, fact })));
    const deadline = Date.now() + 15_000;
    while (log.said(/cannot be reached/) === 0) {
      if (Date.now() > deadline) throw new Error(`the writer did not take the stopped thread for an outage: ${JSON.stringify(writer.stats())}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(writer.stats()).toMatchObject({ database: 'down', dropped: 0, queued: waiting.length });

    instanceId = 'instance-a';
    await release();
    expect(await writer.flush(15_000)).toBe(true);
    expect(writer.stats()).toMatchObject({ database: 'up', dropped: 0, queued: 0, written: waiting.length });
    expect(await callById(db, 'wacid.waits')).toMatchObject({ outcome: 'answered', agentId: 'alice' });
  }, 30_000);

  it('close() ends the thread’s connections, once however often asked; a write after it fails, saying the database is closed', async () => {
    const { url, db } = await migratedDatabase();
    const admin = PostgresDatabase.open(server.url());
    cleanups.push(() => admin.close());
    const writerConnections = async () =>
      (await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'softphone-relay-records-writer'", [new URL(url).pathname.slice(1)]))[0]!.n;
    expect(await writerConnections()).toBe(0);
    await db.writeFacts({ calls: callFacts(answeredCall('wacid.before-close', T0)), states: [] }, 'instance-a');
    expect(await writerConnections()).toBe(1);

    await Promise.all([db.close(), db.close()]);
    await db.close();
    // The server lets a connection's backend go a moment after its client said goodbye.
    const deadline = Date.now() + 10_000;
    while ((await writerConnections()) !== 0) {
      if (Date.now() > deadline) throw new Error('the writer thread’s connection outlived close()');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await expect(db.writeFacts({ calls: callFacts(answeredCall('wacid.after-close', T0)), states: [] }, 'instance-a')).rejects.toThrow('the records database is closed');
  });

  it.runIf(process.platform === 'linux')('the thread gives way to the relay’s event loop: it runs at nice 10, the relay’s own thread as it was', async () => {
    const niceOf = (tid: string): number => getPriority(Number(tid));
    const before = new Map(readdirSync('/proc/self/task').map((tid) => [tid, niceOf(tid)]));
    const { db } = await migratedDatabase();
    await db.writeFacts({ calls: callFacts(answeredCall('wacid.priority', T0)), states: [] }, 'instance-a');
    const started = readdirSync('/proc/self/task').filter((tid) => !before.has(tid));
    expect(started.map(niceOf)).toContain(constants.priority.PRIORITY_BELOW_NORMAL);
    expect(niceOf(String(process.pid))).toBe(before.get(String(process.pid)));
    expect(await callById(db, 'wacid.priority')).toMatchObject({ outcome: 'answered' });
  });

  it('the batch is written while the relay’s event loop is held: the write runs on the thread’s', async () => {
    const { url, db } = await migratedDatabase();
    const writing = db.writeFacts({ calls: callFacts(answeredCall('wacid.loop-held', T0)), states: [] }, 'instance-a');
    // From here until the row is stored, this thread runs nothing else: no timer, no socket, no promise.
    const deadline = Date.now() + 20_000;
    while (storedElsewhere(url, 'wacid.loop-held') === 0) {
      if (Date.now() > deadline) throw new Error('the call was not written while the relay’s event loop was held');
    }
    await writing;
    expect(await callById(db, 'wacid.loop-held')).toMatchObject({ outcome: 'answered' });
  }, 30_000);
});
