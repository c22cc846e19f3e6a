// A PostgreSQL that does not answer — the network to it cut mid-statement, its host frozen — rather
// than one that refuses: the relay reaches it through a proxy that stops carrying anything. A
// shutdown still ends within its deadline and a few seconds, its facts kept in the journal for the
// next start; a statement not answered in time is an outage like any other.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CallRecords } from '../../../relay/records/call-records';
import { PostgresDatabase } from '../../../relay/records/postgres-database';
import { callById } from '../../../relay/records/records-queries';
import { createDatabase, startPostgres, type PostgresServer } from './postgres-server';
import { claim, incoming, play, recordingLogger, T0, terminated } from './records-fixtures';
import { startTcpProxy } from './tcp-proxy';

const FAST_RETRY = { flushIntervalMs: 5, retryMinMs: 20, retryMaxMs: 150 };
const NOT_WRITTEN = 'call records not written at shutdown: the database did not take them in time';

/** An answered call: 4 facts (the ring, the agent rung, the claim, the end). */
function playCall(records: CallRecords, clock: { now: number }, callId: string, t: number): void {
  for (const step of [incoming(callId, t, ['alice']), claim(callId, 'alice', t + 2_000), terminated(callId, t + 30_000, { answeredAt: t + 2_000 })]) play(records, clock, step);
}

const journalLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter((line) => line !== '');

describe('a PostgreSQL that does not answer', () => {
  let server: PostgresServer;
  let root: string;
  const cleanups: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    server = await startPostgres();
    root = mkdtempSync(join(tmpdir(), 'records-no-answer-'));
  }, 60_000);
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  }, 60_000);

  /** A database of its own, reached through a proxy that can go silent. */
  const silentDatabase = async () => {
    const { url, drop } = await createDatabase(server);
    cleanups.push(drop);
    const target = new URL(url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    cleanups.push(() => proxy.close());
    return { url, proxy };
  };

  it('a shutdown ends within its deadline and a few seconds, says how many facts were not written and that the journal keeps them; the next start writes them', async () => {
    const { url, proxy } = await silentDatabase();
    const dataDir = join(root, 'shutdown');
    const log = recordingLogger();
    const clock = { now: T0 };
    const records = new CallRecords({ database: { kind: 'postgres', url: proxy.via(url) }, dataDir, logger: log, now: () => clock.now, writer: FAST_RETRY });
    cleanups.push(() => records.close(100));
    playCall(records, clock, 'wacid.before-silence', T0);
    expect(await records.flush()).toBe(true);

    proxy.freeze();
    playCall(records, clock, 'wacid.silent-1', T0 + 60_000);
    playCall(records, clock, 'wacid.silent-2', T0 + 120_000);
    const started = Date.now();
    await records.close(1_000);
    expect(Date.now() - started).toBeLessThan(6_000);

    const journal = join(dataDir, 'records-journal.ndjson');
    expect(log.lines.filter((l) => l.msg === NOT_WRITTEN).map((l) => [l.level, l.fields])).toEqual([['error', { facts: 8, timeoutMs: 1_000, journal }]]);
    expect(statSync(journal).mode & 0o777).toBe(0o600);
    const kept = journalLines(journal).map((line) => JSON.parse(line) as { kind: string; fact: { callId: string; kind: string } });
    expect(kept.map((q) => `${q.fact.callId} ${q.fact.kind}`).sort()).toEqual(
      ['wacid.silent-1', 'wacid.silent-2'].flatMap((callId) => ['claimed', 'incoming', 'rung', 'terminated'].map((kind) => `${callId} ${kind}`)),
    );

    // The next start, the database answering (straight, not through the silent proxy).
    const nextLog = recordingLogger();
    const next = new CallRecords({ database: { kind: 'postgres', url }, dataDir, logger: nextLog, writer: FAST_RETRY });
    cleanups.push(() => next.close());
    expect(await next.flush(20_000)).toBe(true);
    const db = await next.database();
    expect(await callById(db, 'wacid.silent-1')).toMatchObject({ direction: 'incoming', outcome: 'answered', agentId: 'alice' });
    expect(await callById(db, 'wacid.silent-2')).toMatchObject({ direction: 'incoming', outcome: 'answered', agentId: 'alice' });
    expect(existsSync(journal)).toBe(false);
    expect(nextLog.lines.filter((l) => l.msg === 'the call records journal holds facts from an earlier run: they are written once the database answers').map((l) => l.fields)).toEqual([{ journal, facts: 8 }]);
    expect(nextLog.lines.filter((l) => l.msg === 'call records replayed from the journal').map((l) => l.fields)).toEqual([{ journal, facts: 8, calls: 2, states: 0, skippedLines: 0 }]);
    expect(next.stats()).toMatchObject({ queued: 0, journaled: 0, dropped: 0, written: 8 });
  }, 60_000);

  it('a statement not answered in time is an outage: said once each way, the facts journaled meanwhile, written once it answers', async () => {
    const { url, proxy } = await silentDatabase();
    const dataDir = join(root, 'answer-timeout');
    const log = recordingLogger();
    const clock = { now: T0 };
    const records = new CallRecords({ database: () => Promise.resolve(PostgresDatabase.open(proxy.via(url), { answerTimeoutMs: 500 })), dataDir, logger: log, now: () => clock.now, writer: FAST_RETRY });
    cleanups.push(() => records.close(100));
    await records.database();

    proxy.freeze();
    playCall(records, clock, 'wacid.unanswered', T0);
    const journal = join(dataDir, 'records-journal.ndjson');
    const deadline = Date.now() + 10_000;
    while (!(existsSync(journal) && journalLines(journal).length === 4 && records.stats().queued === 0)) {
      if (Date.now() > deadline) throw new Error(`the facts did not reach the journal: ${JSON.stringify(records.stats())}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(records.stats()).toMatchObject({ connected: false, queued: 0, journaled: 4, dropped: 0 });
    expect(records.status()).toMatchObject({ database: 'down', queued: 0, journaled: 4, dropped: 0, lastError: { message: 'the records database did not answer within 500 ms' } });
    expect(log.lines.filter((l) => /cannot be reached/.test(l.msg)).map((l) => [l.level, l.fields?.journal, String((l.fields?.error as Error).message)])).toEqual([
      ['warn', journal, 'the records database did not answer within 500 ms'],
    ]);

    proxy.thaw();
    expect(await records.flush(20_000)).toBe(true);
    expect(await callById(await records.database(), 'wacid.unanswered')).toMatchObject({ direction: 'incoming', outcome: 'answered' });
    expect(log.said(/answers again/)).toBe(1);
    expect(records.stats()).toMatchObject({ connected: true, queued: 0, journaled: 0, dropped: 0 });
    expect(records.status()).toMatchObject({ database: 'up', queued: 0, journaled: 0, dropped: 0 });
    expect(existsSync(journal)).toBe(false);
  }, 60_000);
});
