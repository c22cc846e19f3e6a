// The database goes away and comes back: this file's own PostgreSQL (even when CI shares one in
// DATABASE_URL, which is not a test's to stop) is stopped mid-run and started again. Nothing handed
// to the records is lost, the outage is said once as it starts and once as it ends; what waits goes
// to the journal of the data directory at once, and past the queue's bound with no journal whole
// calls give way, never a part of one.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CallRecords } from '../../../relay/records/call-records';
import { PostgresDatabase } from '../../../relay/records/postgres-database';
import { callById } from '../../../relay/records/records-queries';
import { createDatabase, startPostgres, type PostgresServer } from './postgres-server';
import { claim, incoming, play, recordingLogger, T0, terminated } from './records-fixtures';

const REPLAYED = 'call records replayed from the journal';

const UNREACHABLE = 'the records database cannot be reached: facts wait in memory and are written once it answers';
const BACK = 'the records database answers again: the facts that waited are written';
const FAST_RETRY = { flushIntervalMs: 5, retryMinMs: 20, retryMaxMs: 150 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An answered call, each with its own id and minute: 4 facts (the ring, the agent rung, the claim, the end). */
function playCall(records: CallRecords, clock: { now: number }, n: number): void {
  const callId = `wacid.outage-${n}`;
  const t = T0 + n * 60_000;
  for (const step of [incoming(callId, t, ['alice']), claim(callId, 'alice', t + 2_000), terminated(callId, t + 30_000, { answeredAt: t + 2_000 })]) play(records, clock, step);
}

const journalLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter((line) => line !== '');

/** Resolves once `ready()`, or fails saying `what` after 10 s. */
async function eventually(ready: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen`);
    await sleep(20);
  }
}

async function callCount(url: string): Promise<number> {
  const db = PostgresDatabase.open(url);
  try {
    return (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM calls'))[0]!.n;
  } finally {
    await db.close();
  }
}

describe('a PostgreSQL outage', () => {
  let server: PostgresServer;
  let records: CallRecords | undefined;
  let root: string;
  const drops: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    server = await startPostgres({ own: true });
    root = mkdtempSync(join(tmpdir(), 'records-outage-'));
  }, 60_000);
  afterEach(async () => {
    await records?.close(1_000);
    records = undefined;
    await server.start();
  }, 60_000);
  afterAll(async () => {
    for (const drop of drops) await drop().catch(() => undefined);
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  }, 60_000);

  it('facts handed in while the server is down are all written once it is back; the outage is said once as it starts and once as it ends', async () => {
    const { url, drop } = await createDatabase(server);
    drops.push(drop);
    const log = recordingLogger();
    const clock = { now: T0 };
    records = new CallRecords({ database: { kind: 'postgres', url }, logger: log, now: () => clock.now, writer: FAST_RETRY });
    for (let n = 0; n < 10; n += 1) playCall(records, clock, n);
    expect(await records.flush()).toBe(true);

    await server.pause();
    for (let n = 10; n < 60; n += 1) playCall(records, clock, n);
    await sleep(1_500);
    expect(await records.flush(300)).toBe(false);
    expect(records.stats()).toMatchObject({ connected: false, dropped: 0 });
    expect(records.stats().queued).toBeGreaterThanOrEqual(150);
    expect(records.status()).toMatchObject({ database: 'down', journaled: 0, dropped: 0, lastError: { message: expect.stringMatching(/ECONNREFUSED|terminat|shut/), at: expect.any(String) } });

    await server.start();
    expect(await records.flush(20_000)).toBe(true);
    expect(records.stats()).toMatchObject({ queued: 0, dropped: 0, connected: true });
    expect(records.status()).toMatchObject({ database: 'up', queued: 0, journaled: 0, written: 240, dropped: 0 });
    expect(await callCount(url)).toBe(60);
    const db = await records.database();
    expect(await callById(db, 'wacid.outage-42')).toMatchObject({ outcome: 'answered', agentId: 'alice', waitMs: 2_000 });
    expect(log.said(UNREACHABLE)).toBe(1);
    expect(log.said(BACK)).toBe(1);
    expect(log.lines.filter((l) => l.level === 'debug' && /still cannot be reached/.test(l.msg)).length).toBeGreaterThan(2);
    expect(log.lines.find((l) => l.msg === BACK)?.fields).toMatchObject({ downMs: expect.any(Number) });
  }, 30_000);

  it('a relay that starts while the database is down: its facts wait, and the schema is made once it answers', async () => {
    const { url, drop } = await createDatabase(server);
    drops.push(drop);
    await server.pause();
    const log = recordingLogger();
    const clock = { now: T0 };
    records = new CallRecords({ database: { kind: 'postgres', url }, logger: log, now: () => clock.now, writer: FAST_RETRY });
    for (let n = 0; n < 5; n += 1) playCall(records, clock, n);
    await sleep(800);
    expect(log.said(UNREACHABLE)).toBe(1);
    await server.start();
    expect(await records.flush(20_000)).toBe(true);
    expect(await callCount(url)).toBe(5);
    expect(log.said('call records ready')).toBe(1);
    expect(log.said(BACK)).toBe(1);
  }, 30_000);

  it('past its bound the queue lets the oldest facts go, says so once, and says how many once back under', async () => {
    const { url, drop } = await createDatabase(server);
    drops.push(drop);
    const log = recordingLogger();
    const clock = { now: T0 };
    records = new CallRecords({ database: { kind: 'postgres', url }, logger: log, now: () => clock.now, writer: { ...FAST_RETRY, maxQueued: 40 } });
    expect(await records.flush()).toBe(true);
    await records.database();
    await server.pause();
    // 20 calls of 4 facts: the 40 newest stay, the calls 10 to 19.
    for (let n = 0; n < 20; n += 1) playCall(records, clock, n);
    expect(records.stats()).toMatchObject({ queued: 40, dropped: 40 });
    expect(log.lines.filter((l) => l.level === 'error' && /over its bound/.test(l.msg))).toHaveLength(1);
    await server.start();
    expect(await records.flush(20_000)).toBe(true);
    expect(await callCount(url)).toBe(10);
    const db = await records.database();
    expect(await callById(db, 'wacid.outage-19')).toMatchObject({ outcome: 'answered' });
    expect(await callById(db, 'wacid.outage-9')).toBeUndefined();
    expect(log.lines.filter((l) => /back under its bound/.test(l.msg)).map((l) => l.fields)).toEqual([{ dropped: 40, calls: 10 }]);
  }, 30_000);

  it('facts that wait while the database cannot be reached go to the journal at once (mode 0600), and are written from it once it answers; the journal is then removed', async () => {
    const { url, drop } = await createDatabase(server);
    drops.push(drop);
    const dataDir = join(root, 'outage-journal');
    const journal = join(dataDir, 'records-journal.ndjson');
    const log = recordingLogger();
    const clock = { now: T0 };
    records = new CallRecords({ database: { kind: 'postgres', url }, dataDir, logger: log, now: () => clock.now, writer: FAST_RETRY });
    await records.database();
    await server.pause();
    for (let n = 0; n < 5; n += 1) playCall(records, clock, n);
    // On disk while the relay runs: a relay that dies now loses none of them.
    await eventually(() => existsSync(journal) && journalLines(journal).length === 20 && records!.stats().queued === 0, 'the journal taking 20 facts');
    expect(statSync(journal).mode & 0o777).toBe(0o600);
    expect(records.stats()).toMatchObject({ connected: false, queued: 0, journaled: 20, dropped: 0 });
    expect(records.status()).toMatchObject({ database: 'down', queued: 0, journaled: 20, dropped: 0 });
    expect(log.lines.filter((l) => l.msg === UNREACHABLE).map((l) => l.fields?.journal)).toEqual([journal]);

    await server.start();
    expect(await records.flush(20_000)).toBe(true);
    expect(await callCount(url)).toBe(5);
    expect(existsSync(journal)).toBe(false);
    expect(log.lines.filter((l) => l.msg === REPLAYED).map((l) => l.fields)).toEqual([{ journal, facts: 20, calls: 5, states: 0, skippedLines: 0 }]);
    expect(log.said(BACK)).toBe(1);
    expect(records.stats()).toMatchObject({ connected: true, queued: 0, journaled: 0, dropped: 0 });
    expect(records.status()).toMatchObject({ database: 'up', queued: 0, journaled: 0, dropped: 0 });
  }, 30_000);

  it('past its bound with a journal: the facts go to it, none is dropped, and every call is written whole', async () => {
    const { url, drop } = await createDatabase(server);
    drops.push(drop);
    const dataDir = join(root, 'bound-journal');
    const log = recordingLogger();
    const clock = { now: T0 };
    records = new CallRecords({ database: { kind: 'postgres', url }, dataDir, logger: log, now: () => clock.now, writer: { ...FAST_RETRY, maxQueued: 40 } });
    await records.database();
    await server.pause();
    for (let n = 0; n < 20; n += 1) playCall(records, clock, n);
    expect(records.stats().dropped).toBe(0);
    await eventually(() => records!.stats().queued === 0 && records!.stats().journaled === 80, 'the journal taking 80 facts');
    expect(log.lines.filter((l) => /over its bound/.test(l.msg)).map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'call records queue over its bound: the oldest facts go to the journal until the database takes them'],
    ]);

    await server.start();
    expect(await records.flush(20_000)).toBe(true);
    expect(await callCount(url)).toBe(20);
    const db = await records.database();
    for (const n of [0, 9, 19]) expect(await callById(db, `wacid.outage-${n}`)).toMatchObject({ direction: 'incoming', outcome: 'answered', agentId: 'alice' });
    expect(records.stats()).toMatchObject({ queued: 0, journaled: 0, dropped: 0 });
    expect(log.lines.find((l) => l.msg === REPLAYED)?.fields).toMatchObject({ facts: 80, calls: 20 });
  }, 30_000);

  it('past its bound with no journal to take them: whole calls give way, oldest first, never a part of one, so none passes for an outgoing call', async () => {
    const { url, drop } = await createDatabase(server);
    drops.push(drop);
    // A data directory that cannot be made: a file stands where it would be.
    const blocker = join(root, 'not-a-directory');
    writeFileSync(blocker, '');
    const log = recordingLogger();
    const clock = { now: T0 };
    records = new CallRecords({ database: { kind: 'postgres', url }, dataDir: join(blocker, 'relay-data'), logger: log, now: () => clock.now, writer: { ...FAST_RETRY, maxQueued: 40 } });
    await records.database();
    await server.pause();
    // A busy moment: the 20 calls all ring before any is answered, then each is answered, then each ends.
    const callId = (n: number) => `wacid.overlap-${n}`;
    const t = (n: number) => T0 + n * 1_000;
    for (let n = 0; n < 20; n += 1) play(records, clock, incoming(callId(n), t(n), ['alice']));
    for (let n = 0; n < 20; n += 1) play(records, clock, claim(callId(n), 'alice', t(n) + 30_000));
    for (let n = 0; n < 20; n += 1) play(records, clock, terminated(callId(n), t(n) + 60_000, { answeredAt: t(n) + 30_000 }));
    const { dropped } = records.stats();
    expect(dropped).toBeGreaterThan(0);
    expect(log.lines.filter((l) => l.level === 'error' && /over its bound/.test(l.msg)).map((l) => l.msg)).toEqual([
      'call records queue over its bound: the oldest facts are dropped until the database takes them',
    ]);

    await server.start();
    expect(await records.flush(20_000)).toBe(true);
    const db = await records.database();
    const rows = await db.query<{ call_id: string; direction: string; outcome: string; agent_id: string }>('SELECT call_id, direction, outcome, agent_id FROM calls ORDER BY call_id');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThan(20);
    for (const row of rows) expect(row, row.call_id).toMatchObject({ direction: 'incoming', outcome: 'answered', agent_id: 'alice' });
    // The newest calls are the ones kept, each with all 4 of its facts; the others lost whole.
    expect(rows.map((r) => r.call_id).sort()).toEqual(Array.from({ length: rows.length }, (_, i) => callId(20 - rows.length + i)).sort());
    expect(dropped).toBe(80 - 4 * rows.length);
    expect(log.lines.filter((l) => /back under its bound/.test(l.msg)).map((l) => l.fields)).toEqual([{ dropped, calls: 20 - rows.length }]);
    expect(log.lines.filter((l) => /journal cannot be opened/.test(l.msg))).toHaveLength(1);
  }, 30_000);

  it('shutting down while the database is away says how many facts were not written', async () => {
    const { url, drop } = await createDatabase(server);
    drops.push(drop);
    const log = recordingLogger();
    const clock = { now: T0 };
    const closing = new CallRecords({ database: { kind: 'postgres', url }, logger: log, now: () => clock.now, writer: FAST_RETRY });
    await closing.database();
    await server.pause();
    playCall(closing, clock, 1);
    await closing.close(300);
    expect(log.lines.filter((l) => l.level === 'error' && /not written at shutdown/.test(l.msg)).map((l) => l.fields)).toEqual([{ facts: 4, timeoutMs: 300, lost: 4 }]);
  }, 30_000);
});
