// The journal of facts the database has not taken (`<data-dir>/records-journal.ndjson`): what a relay
// left in it is written at the next start, a line a crash cut short skipped and said, the file then
// removed; one relay keeps a data directory's journal at a time.
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallRecords } from '../../../relay/records/call-records';
import { callById, stateIntervals } from '../../../relay/records/records-queries';
import { DATABASE_HARNESSES, type FreshDatabase } from './database-harness';
import { claim, collect, incoming, play, recordingLogger, T0, terminated } from './records-fixtures';

const UNREACHABLE = new Error('connect ECONNREFUSED 127.0.0.1:1');
const FAST = { flushIntervalMs: 5, retryMinMs: 20, retryMaxMs: 100 };

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('the records journal on %s', (name, make) => {
  const harness = make();
  let fresh: FreshDatabase;
  let root: string;
  beforeAll(async () => {
    await harness.setup();
    fresh = await harness.fresh();
    root = mkdtempSync(join(tmpdir(), 'records-journal-'));
  }, 60_000);
  afterAll(async () => {
    await fresh?.drop();
    await harness.teardown();
    rmSync(root, { recursive: true, force: true });
  }, 60_000);

  /** A relay whose database never answered: what it was told is in its journal once it closes. */
  const journaledBy = async (dataDir: string, callIds: string[]) => {
    const log = recordingLogger();
    const clock = { now: T0 };
    const records = new CallRecords({ database: () => Promise.reject(UNREACHABLE), dataDir, logger: log, now: () => clock.now, writer: FAST });
    callIds.forEach((callId, n) => {
      const t = T0 + n * 60_000;
      for (const step of [incoming(callId, t, ['alice']), claim(callId, 'alice', t + 2_000), terminated(callId, t + 30_000, { answeredAt: t + 2_000 })]) play(records, clock, step);
    });
    records.presenceReported('alice', { presence: 'available' }, undefined);
    await records.close(200);
    return log;
  };

  it('what a relay left in it is written at the next start, a last line cut short skipped and said; the file is then removed', async () => {
    const dataDir = join(root, `torn-${name}`);
    await journaledBy(dataDir, ['wacid.journal-1', 'wacid.journal-2']);
    const journal = join(dataDir, 'records-journal.ndjson');
    const lines = readFileSync(journal, 'utf8').split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(9);
    // A relay killed while it appended: half a line, no newline.
    appendFileSync(journal, lines[0]!.slice(0, 25));

    const log = recordingLogger();
    const records = new CallRecords({ database: () => fresh.connect(), dataDir, logger: log, writer: FAST });
    try {
      expect(await records.flush(20_000)).toBe(true);
      const db = await records.database();
      expect(await callById(db, 'wacid.journal-1')).toMatchObject({ direction: 'incoming', outcome: 'answered', agentId: 'alice' });
      expect(await callById(db, 'wacid.journal-2')).toMatchObject({ direction: 'incoming', outcome: 'answered', agentId: 'alice' });
      expect((await collect(stateIntervals(db, { from: new Date(0), to: new Date(T0 + 3_600_000), agentId: 'alice' }))).map((s) => s.state)).toEqual(['available']);
      expect(existsSync(journal)).toBe(false);
      expect(log.lines.filter((l) => /journal/.test(l.msg)).map((l) => [l.level, l.msg, l.fields])).toEqual([
        ['info', 'the call records journal holds facts from an earlier run: they are written once the database answers', { journal, facts: 10 }],
        ['warn', 'lines of the call records journal that hold no whole fact were skipped: a relay stopped while writing them', { journal, lines: [10] }],
        ['info', 'call records replayed from the journal', { journal, facts: 9, calls: 2, states: 1, skippedLines: 1 }],
      ]);
      expect(records.stats()).toMatchObject({ queued: 0, journaled: 0, written: 9, dropped: 0 });
    } finally {
      await records.close();
    }
  }, 30_000);

  it('a relay that appends after a line cut short starts a line of its own: only the cut one is lost', async () => {
    const dataDir = join(root, `appended-${name}`);
    await journaledBy(dataDir, ['wacid.journal-before-cut']);
    const journal = join(dataDir, 'records-journal.ndjson');
    appendFileSync(journal, '{"kind":"call","fact":{"kind":"termin');
    await journaledBy(dataDir, ['wacid.journal-after-cut']);

    const log = recordingLogger();
    const records = new CallRecords({ database: () => fresh.connect(), dataDir, logger: log, writer: FAST });
    try {
      expect(await records.flush(20_000)).toBe(true);
      const db = await records.database();
      expect(await callById(db, 'wacid.journal-before-cut')).toMatchObject({ outcome: 'answered' });
      expect(await callById(db, 'wacid.journal-after-cut')).toMatchObject({ outcome: 'answered' });
      expect(log.lines.find((l) => l.msg === 'call records replayed from the journal')?.fields).toMatchObject({ facts: 10, calls: 2, skippedLines: 1 });
      expect(log.lines.find((l) => /were skipped/.test(l.msg))?.fields).toMatchObject({ lines: [6] });
    } finally {
      await records.close();
    }
  }, 30_000);

  it('one relay keeps a data directory\'s journal: another keeps its waiting facts in memory, and says so', async () => {
    const dataDir = join(root, `shared-${name}`);
    const first = new CallRecords({ database: () => fresh.connect(), dataDir, logger: recordingLogger(), writer: FAST });
    // Its journal open before the second comes.
    expect(await first.flush(10_000)).toBe(true);
    const log = recordingLogger();
    const second = new CallRecords({ database: () => fresh.connect(), dataDir, logger: log, writer: FAST });
    try {
      const clock = { now: T0 };
      play(second, clock, incoming('wacid.journal-second', T0, ['alice']));
      expect(await second.flush(20_000)).toBe(true);
      expect(await callById(await second.database(), 'wacid.journal-second')).toMatchObject({ direction: 'incoming' });
      expect(log.lines.filter((l) => /journal/.test(l.msg)).map((l) => [l.level, l.msg, l.fields])).toEqual([
        ['warn', 'the call records journal is kept by another relay: facts that wait are kept in memory only', { journal: join(dataDir, 'records-journal.ndjson'), pid: process.pid }],
      ]);
    } finally {
      await second.close();
      await first.close();
    }
  }, 30_000);

  it('a data directory that cannot be made: the facts wait in memory, and the log says why', async () => {
    const blocker = join(root, `a-file-${name}`);
    writeFileSync(blocker, '');
    const log = recordingLogger();
    const records = new CallRecords({ database: () => fresh.connect(), dataDir: join(blocker, 'relay-data'), logger: log, writer: FAST });
    try {
      const clock = { now: T0 };
      play(records, clock, incoming('wacid.journal-nowhere', T0, ['alice']));
      expect(await records.flush(20_000)).toBe(true);
      expect(await callById(await records.database(), 'wacid.journal-nowhere')).toMatchObject({ direction: 'incoming' });
      expect(log.lines.filter((l) => /journal/.test(l.msg)).map((l) => [l.level, l.msg, String((l.fields?.error as Error).message)])).toEqual([
        ['error', 'the call records journal cannot be opened: facts that wait are kept in memory only', expect.stringContaining('ENOTDIR')],
      ]);
      expect(records.status()).toMatchObject({ database: 'up', lastError: { message: expect.stringContaining('ENOTDIR') } });
    } finally {
      await records.close();
    }
  }, 30_000);
});
