// The embedded records on disk (PGlite in `<data-dir>/records`): kept across restarts, one relay per
// data directory (the socket it listens on beside it), a socket left by a process that is gone taken
// over, and a relay that finds the directory held waits as for a database that is down.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallRecords } from '../../../relay/records/call-records';
import { DataDirInUseError, EmbeddedDatabase, EmbeddedDatabaseStoppedError } from '../../../relay/records/embedded-database';
import { migrate, MIGRATIONS } from '../../../relay/records/migrations';
import { callById } from '../../../relay/records/records-queries';
import { claim, incoming, play, recordingLogger, T0, terminated } from './records-fixtures';

describe('the embedded records on disk', () => {
  let root: string;
  /** A data directory PGlite has set up once: each test copies it rather than wait for initdb again. */
  let template: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'records-embedded-'));
    template = join(root, 'template', 'records');
    const db = await EmbeddedDatabase.open(template);
    await db.close();
  }, 60_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** What a process that connects to `<dir>.sock` is told: the holder's pid. */
  const holderOf = (dir: string) =>
    new Promise<string>((done, fail) => {
      let said = '';
      const socket = connect(`${dir}.sock`);
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (said += chunk));
      socket.on('end', () => done(said));
      socket.on('error', fail);
    });

  /** A node process that listens on `path` until killed; resolves once it listens. */
  const listener = async (path: string): Promise<ChildProcess> => {
    const child = spawn(process.execPath, ['-e', "require('node:net').createServer((s) => s.end(String(process.pid))).listen(process.argv[1], () => console.log('listening'))", path], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((done, fail) => {
      child.stdout!.once('data', () => done());
      child.once('exit', () => fail(new Error('the holder exited before it listened')));
    });
    return child;
  };

  let copies = 0;
  const dataDir = () => {
    const dir = join(root, `relay-data-${copies++}`, 'records');
    cpSync(template, dir, { recursive: true });
    return dir;
  };

  it('creates the database in a data directory that has none, held by a socket beside it, and lets the socket go on close', async () => {
    const dir = join(root, 'new-data-dir', 'records');
    const db = await EmbeddedDatabase.open(dir);
    expect(db).toMatchObject({ kind: 'embedded', where: dir });
    expect(statSync(`${dir}.sock`).isSocket()).toBe(true);
    expect(await holderOf(dir)).toBe(String(process.pid));
    expect(await migrate(db)).toMatchObject({ applied: MIGRATIONS.map((m) => m.version) });
    await db.close();
    expect(existsSync(`${dir}.sock`)).toBe(false);
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);
  }, 30_000);

  it('a first start cut short leaves no half-made database: the next start makes it again', async () => {
    const dir = join(root, 'cut-short', 'records');
    // What a relay stopped during its first start leaves: the database it was making beside the data directory.
    cpSync(template, `${dir}.init`, { recursive: true });
    rmSync(join(`${dir}.init`, 'global'), { recursive: true });
    const db = await EmbeddedDatabase.open(dir);
    expect(await migrate(db)).toMatchObject({ applied: MIGRATIONS.map((m) => m.version) });
    await db.close();
    expect(existsSync(`${dir}.init`)).toBe(false);
  }, 30_000);

  it('keeps the records across a restart', async () => {
    const dir = dataDir();
    const clock = { now: T0 };
    const first = new CallRecords({ database: { kind: 'embedded', dataDir: dir }, logger: recordingLogger(), now: () => clock.now, writer: { flushIntervalMs: 5 } });
    for (const step of [incoming('wacid.kept', T0, ['alice']), claim('wacid.kept', 'alice', T0 + 2_000), terminated('wacid.kept', T0 + 62_000, { answeredAt: T0 + 2_000 })]) play(first, clock, step);
    expect(await first.flush()).toBe(true);
    await first.close();

    const again = await EmbeddedDatabase.open(dir);
    expect(await migrate(again)).toEqual({ applied: [], unknown: [] });
    expect(await callById(again, 'wacid.kept')).toMatchObject({ outcome: 'answered', agentId: 'alice', talkMs: 60_000 });
    await again.close();
  }, 30_000);

  it('one relay per data directory: a second is refused while the first holds it, and gets it once the first closes', async () => {
    const dir = dataDir();
    const first = await EmbeddedDatabase.open(dir);
    const refused = await EmbeddedDatabase.open(dir).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataDirInUseError);
    expect((refused as Error).message).toBe(`the records in ${dir} are held by another relay (pid ${process.pid}): one relay per data directory`);
    await first.close();
    const second = await EmbeddedDatabase.open(dir);
    await second.close();
  }, 30_000);

  it('takes over the socket of a relay that was killed (SIGKILL leaves its file behind)', async () => {
    const dir = dataDir();
    const killed = spawnSync(process.execPath, ['-e', "require('node:net').createServer().listen(process.argv[1], () => process.kill(process.pid, 'SIGKILL'))", `${dir}.sock`]);
    expect(killed.signal).toBe('SIGKILL');
    expect(statSync(`${dir}.sock`).isSocket()).toBe(true);
    const db = await EmbeddedDatabase.open(dir);
    expect(await holderOf(dir)).toBe(String(process.pid));
    await db.close();
  }, 30_000);

  it('refuses a data directory whose socket a live process holds, whatever its pid, naming the directory', async () => {
    const dir = dataDir();
    const holder = await listener(`${dir}.sock`);
    try {
      const refused = await EmbeddedDatabase.open(dir).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(DataDirInUseError);
      expect((refused as Error).message).toBe(`the records in ${dir} are held by another relay (pid ${holder.pid}): one relay per data directory`);
    } finally {
      holder.kill('SIGKILL');
    }
  }, 30_000);

  it('a worker that dies (its heap exhausted by a report) is started again, said once each way: the facts that waited are written after, on the same database', async () => {
    const dir = dataDir();
    const log = recordingLogger();
    const clock = { now: T0 };
    // A heap small enough for one query to exhaust, as a month's report might a real one.
    const open = () => EmbeddedDatabase.open(dir, { logger: log, maxHeapMb: 48, restartMinMs: 50 });
    const records = new CallRecords({ database: open, logger: log, now: () => clock.now, writer: { flushIntervalMs: 5, retryMinMs: 20, retryMaxMs: 100 } });
    try {
      const answeredCall = (callId: string, t: number) => {
        for (const step of [incoming(callId, t, ['alice']), claim(callId, 'alice', t + 2_000), terminated(callId, t + 30_000, { answeredAt: t + 2_000 })]) play(records, clock, step);
      };
      answeredCall('wacid.before-crash', T0);
      expect(await records.flush()).toBe(true);
      const db = await records.database();

      const crash = await db.query("SELECT repeat('x', 4000000) || g AS s FROM generate_series(1, 40) g").catch((error: unknown) => error);
      expect(crash).toBeInstanceOf(EmbeddedDatabaseStoppedError);
      expect((crash as Error).message).toMatch(/^the embedded records database stopped: .*memory/);
      answeredCall('wacid.while-down', T0 + 60_000);
      expect(await records.flush(20_000)).toBe(true);

      expect(await callById(db, 'wacid.before-crash')).toMatchObject({ outcome: 'answered', agentId: 'alice' });
      expect(await callById(db, 'wacid.while-down')).toMatchObject({ outcome: 'answered', agentId: 'alice', waitMs: 2_000 });
      expect(log.said('the embedded records database stopped: it is started again')).toBe(1);
      expect(log.said('the embedded records database is started again')).toBe(1);
      expect(log.said('the records database cannot be reached: facts wait in memory and are written once it answers')).toBe(1);
      expect(log.said('the records database answers again: the facts that waited are written')).toBe(1);
      expect(records.stats()).toMatchObject({ queued: 0, dropped: 0, connected: true });
    } finally {
      await records.close();
    }
  }, 30_000);

  it('a relay whose data directory another live relay holds keeps its facts and writes them once it is let go, saying so once each way', async () => {
    const dir = dataDir();
    const holder = await listener(`${dir}.sock`);
    try {
      const log = recordingLogger();
      const clock = { now: T0 };
      const records = new CallRecords({ database: { kind: 'embedded', dataDir: dir }, logger: log, now: () => clock.now, writer: { flushIntervalMs: 5, retryMinMs: 20, retryMaxMs: 100 } });
      for (const step of [incoming('wacid.held', T0, ['alice']), terminated('wacid.held', T0 + 5_000)]) play(records, clock, step);
      expect(await records.flush(600)).toBe(false);
      const unreachable = log.lines.filter((l) => l.level === 'warn' && /cannot be reached/.test(l.msg));
      expect(unreachable).toHaveLength(1);
      expect(String((unreachable[0]!.fields?.error as Error).message)).toBe(`the records in ${dir} are held by another relay (pid ${holder.pid}): one relay per data directory`);

      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
      expect(await records.flush(20_000)).toBe(true);
      expect(await callById(await records.database(), 'wacid.held')).toMatchObject({ outcome: 'abandoned' });
      expect(log.said(/answers again/)).toBe(1);
      await records.close();
    } finally {
      holder.kill('SIGKILL');
    }
  }, 30_000);
});
