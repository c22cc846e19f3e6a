// `npm run relay` and its call records: the flags and their environment variables, the rules named
// in one line, and the real relay writing its records (the embedded database in its data directory
// by default, PostgreSQL with --database), also what it took in just before SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRelayCli, RELAY_USAGE } from '../../../relay/cli-options';
import { EmbeddedDatabase } from '../../../relay/records/embedded-database';
import { PostgresDatabase } from '../../../relay/records/postgres-database';
import { callById } from '../../../relay/records/records-queries';
import type { Database } from '../../../relay/records/database';
import { APP_SECRET, incomingCall, postWebhook, terminatedCall } from '../relay/webhook-fixtures';
import { createDatabase, startPostgres, type PostgresServer } from './postgres-server';
import { startTcpProxy } from './tcp-proxy';

const root = resolve(import.meta.dirname, '../../..');
const TOKEN = 'agent-token-1-0123456789abcdef0123';
const good = ['--app-secret', APP_SECRET, '--agent-token', TOKEN];
const URL_WITH_PASSWORD = 'postgres://relay:hunter2@db.internal:5432/records';

describe('the records flags', () => {
  it('default to the embedded database in relay-data/records of the working directory, kept forever', () => {
    expect(parseRelayCli(good, {})).toMatchObject({ ok: true, value: { records: { database: { kind: 'embedded', dataDir: join('relay-data', 'records') }, dataDir: 'relay-data' } } });
    expect(parseRelayCli(good, {})).not.toHaveProperty('value.records.retentionDays');
  });

  it('read --database, --data-dir and --records-retention-days, or their environment variables; flags win', () => {
    expect(parseRelayCli([...good, '--database', URL_WITH_PASSWORD, '--records-retention-days', '90'], {})).toMatchObject({
      ok: true,
      value: { records: { database: { kind: 'postgres', url: URL_WITH_PASSWORD }, retentionDays: 90 } },
    });
    expect(parseRelayCli([...good, '--data-dir', '/var/lib/relay'], {})).toMatchObject({ ok: true, value: { records: { database: { kind: 'embedded', dataDir: '/var/lib/relay/records' }, dataDir: '/var/lib/relay' } } });
    // With PostgreSQL the data directory still keeps the journal of facts the database has not taken.
    expect(parseRelayCli([...good, '--database', URL_WITH_PASSWORD, '--data-dir', '/var/lib/relay'], {})).toMatchObject({ ok: true, value: { records: { database: { kind: 'postgres' }, dataDir: '/var/lib/relay' } } });
    const env = { RELAY_DATABASE_URL: 'postgresql://env@127.0.0.1/records', RELAY_DATA_DIR: 'env-data', RELAY_RECORDS_RETENTION_DAYS: '7' };
    expect(parseRelayCli(good, env)).toMatchObject({ ok: true, value: { records: { database: { kind: 'postgres', url: 'postgresql://env@127.0.0.1/records' }, retentionDays: 7 } } });
    expect(parseRelayCli(good, { RELAY_DATA_DIR: 'env-data' })).toMatchObject({ ok: true, value: { records: { database: { kind: 'embedded', dataDir: join('env-data', 'records') } } } });
    expect(parseRelayCli([...good, '--database', URL_WITH_PASSWORD, '--records-retention-days', '30'], env)).toMatchObject({
      ok: true,
      value: { records: { database: { url: URL_WITH_PASSWORD }, retentionDays: 30 } },
    });
  });

  it.each([
    [['--database', 'mysql://db.internal/records'], '--database', '--database must be a postgres://user:password@host:port/database URL (or postgresql://…)'],
    [['--database', 'postgres://relay:hunter2@/records'], '--database', '--database must be a postgres://user:password@host:port/database URL (or postgresql://…)'],
    [['--records-retention-days', '0'], '--records-retention-days', '--records-retention-days must be a whole number of days from 1 to 36500 (got "0")'],
    [['--records-retention-days', '36501'], '--records-retention-days', '--records-retention-days must be a whole number of days from 1 to 36500 (got "36501")'],
    [['--records-retention-days', '1.5'], '--records-retention-days', '--records-retention-days must be a whole number of days from 1 to 36500 (got "1.5")'],
    [['--records-retention-days', 'a week'], '--records-retention-days', '--records-retention-days must be a whole number of days from 1 to 36500 (got "a week")'],
    [['--data-dir', ' '], '--data-dir', '--data-dir must be a directory path'],
  ])('refuses %j naming %s and the rule, never quoting a password', (argv, field, message) => {
    const parsed = parseRelayCli([...good, ...argv], {});
    expect(parsed).toEqual({ ok: false, error: { code: 'invalid_input', message, field } });
    if (!parsed.ok) expect(parsed.error.message).not.toContain('hunter2');
  });

  it('are in the usage, each with its environment variable', () => {
    for (const [flag, env] of [
      ['--database URL', 'RELAY_DATABASE_URL'],
      ['--data-dir DIR', 'RELAY_DATA_DIR'],
      ['--records-retention-days N', 'RELAY_RECORDS_RETENTION_DAYS'],
    ]) {
      const at = RELAY_USAGE.indexOf(`  ${flag}`);
      expect(at, flag).toBeGreaterThan(0);
      expect(RELAY_USAGE.slice(at, RELAY_USAGE.indexOf('\n  --', at + 3)), flag).toContain(`env ${env}`);
    }
  });
});

/** The environment without the relay's own variables. */
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('RELAY_')));

/** tsx's loader by its path: the relay runs in another working directory, where `--import tsx` would not resolve. */
const TSX_LOADER = pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

/** Starts `npm run relay`'s program in `cwd`; resolves with its URL once it listens and its records are ready. `output()`: what it printed so far. */
async function startCli(cwd: string, args: string[]): Promise<{ url: string; child: ChildProcess; exited: Promise<number | null>; output: () => string }> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, join(root, 'relay', 'cli.ts'), '--port', '0', ...good, '--log-level', 'info', ...args], { cwd, env: cleanEnv() });
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((done, fail) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /relay listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match && stdout.includes('"msg":"call records ready"')) done(match[1]!);
    });
    void exited.then(() => fail(new Error(`the relay exited early: ${stdout}${stderr}`)));
  });
  return { url, child, exited, output: () => stdout + stderr };
}

/** The relay's JSON log lines with this message. */
function logLines(output: string, msg: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === msg);
}

/** Resolves once `ready()`, or fails saying `what` after `ms`. */
async function eventually(ready: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** A call the relay takes in, then SIGTERM at once: what it took in is written before it exits. */
async function oneCallThenStop(cwd: string, args: string[], callId: string): Promise<void> {
  const relay = await startCli(cwd, args);
  try {
    expect((await postWebhook(relay.url, incomingCall(callId))).status).toBe(200);
    expect((await postWebhook(relay.url, terminatedCall(callId))).status).toBe(200);
    // The webhooks are answered before they are stored: let the relay take them in.
    await new Promise((done) => setTimeout(done, 300));
  } finally {
    relay.child.kill('SIGTERM');
  }
  expect(await relay.exited).toBe(0);
}

describe('the relay writing its records', () => {
  let cwd: string;
  let server: PostgresServer;
  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'records-cli-'));
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    rmSync(cwd, { recursive: true, force: true });
    await server?.stop();
  }, 60_000);

  const readCall = async (db: Database, callId: string) => {
    try {
      return await callById(db, callId);
    } finally {
      await db.close();
    }
  };

  it('without --database: the embedded database in relay-data/records of its working directory', async () => {
    await oneCallThenStop(cwd, [], 'wacid.cli-embedded');
    expect(existsSync(join(cwd, 'relay-data', 'records', 'PG_VERSION'))).toBe(true);
    expect(existsSync(join(cwd, 'relay-data', 'records.sock'))).toBe(false);
    expect(await readCall(await EmbeddedDatabase.open(join(cwd, 'relay-data', 'records')), 'wacid.cli-embedded')).toMatchObject({ direction: 'incoming', outcome: 'abandoned' });
  }, 60_000);

  it('a second relay on the same data directory is refused its records, with an error naming the directory and the relay that holds it', async () => {
    const dataDir = join(cwd, 'shared-data');
    const first = await startCli(cwd, ['--data-dir', dataDir]);
    const second = spawn(process.execPath, ['--import', TSX_LOADER, join(root, 'relay', 'cli.ts'), '--port', '0', ...good, '--log-level', 'info', '--data-dir', dataDir], { cwd, env: cleanEnv() });
    const secondExited = new Promise<number | null>((done) => second.on('exit', (code) => done(code)));
    try {
      let output = '';
      const refusal = await new Promise<string>((done, fail) => {
        const read = (chunk: Buffer) => {
          output += chunk.toString();
          const line = output.split('\n').find((l) => l.includes('the records database cannot be reached'));
          if (line !== undefined) done(line);
        };
        second.stdout.on('data', read);
        second.stderr.on('data', read);
        void secondExited.then(() => fail(new Error(`the second relay exited: ${output}`)));
      });
      expect(refusal).toContain(`the records in ${join(dataDir, 'records')} are held by another relay (pid ${first.child.pid}): one relay per data directory`);
      const health = await fetch(`${first.url}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      second.kill('SIGTERM');
      first.child.kill('SIGTERM');
    }
    await secondExited;
    expect(await first.exited).toBe(0);
  }, 60_000);

  it('SIGTERM while PostgreSQL does not answer: the relay exits within its deadline and a few seconds, its facts in the journal of its data directory, which the next start writes', async () => {
    const { url, drop } = await createDatabase(server);
    const target = new URL(url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    const dataDir = join(cwd, 'silent-data');
    const journal = join(dataDir, 'records-journal.ndjson');
    try {
      const relay = await startCli(cwd, ['--database', proxy.via(url), '--data-dir', dataDir]);
      proxy.freeze();
      try {
        expect((await postWebhook(relay.url, incomingCall('wacid.cli-silent'))).status).toBe(200);
        expect((await postWebhook(relay.url, terminatedCall('wacid.cli-silent'))).status).toBe(200);
        await new Promise((done) => setTimeout(done, 300));
      } finally {
        relay.child.kill('SIGTERM');
      }
      const stopping = Date.now();
      expect(await relay.exited).toBe(0);
      // The records' 5 s to write, then a few seconds to let the database go.
      expect(Date.now() - stopping).toBeLessThan(12_000);
      expect(logLines(relay.output(), 'call records not written at shutdown: the database did not take them in time')).toEqual([
        expect.objectContaining({ level: 'error', facts: 2, timeoutMs: 5_000, journal }),
      ]);
      expect(statSync(journal).mode & 0o777).toBe(0o600);

      const next = await startCli(cwd, ['--database', url, '--data-dir', dataDir]);
      try {
        await eventually(() => logLines(next.output(), 'call records replayed from the journal').length === 1, 'the replay');
        expect(logLines(next.output(), 'call records replayed from the journal')).toEqual([expect.objectContaining({ journal, facts: 2, calls: 1, skippedLines: 0 })]);
        expect(existsSync(journal)).toBe(false);
      } finally {
        next.child.kill('SIGTERM');
      }
      expect(await next.exited).toBe(0);
      expect(await readCall(PostgresDatabase.open(url), 'wacid.cli-silent')).toMatchObject({ direction: 'incoming', outcome: 'abandoned' });
    } finally {
      await proxy.close();
      await drop();
    }
  }, 60_000);

  it('a relay killed while PostgreSQL is away loses nothing it took in: the facts are in its journal, and the next start writes them, a line the kill cut short skipped and said', async () => {
    const { url, drop } = await createDatabase(server);
    const target = new URL(url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    const dataDir = join(cwd, 'killed-data');
    const journal = join(dataDir, 'records-journal.ndjson');
    try {
      const relay = await startCli(cwd, ['--database', proxy.via(url), '--data-dir', dataDir]);
      try {
        // The database goes away: connections refused.
        await proxy.close();
        expect((await postWebhook(relay.url, incomingCall('wacid.cli-killed'))).status).toBe(200);
        expect((await postWebhook(relay.url, terminatedCall('wacid.cli-killed'))).status).toBe(200);
        await eventually(() => existsSync(journal) && readFileSync(journal, 'utf8').includes('"terminated"'), 'the journal taking the facts');
      } finally {
        relay.child.kill('SIGKILL');
      }
      await relay.exited;
      // What a kill in the middle of an append leaves: half a line.
      appendFileSync(journal, '{"kind":"call","fact":{"kind":"incom');

      const next = await startCli(cwd, ['--database', url, '--data-dir', dataDir]);
      try {
        await eventually(() => logLines(next.output(), 'call records replayed from the journal').length === 1, 'the replay');
        expect(logLines(next.output(), 'call records replayed from the journal')).toEqual([expect.objectContaining({ journal, facts: 2, calls: 1, skippedLines: 1 })]);
        expect(logLines(next.output(), 'lines of the call records journal that hold no whole fact were skipped: a relay stopped while writing them')).toEqual([
          expect.objectContaining({ level: 'warn', journal, lines: [3] }),
        ]);
        expect(existsSync(journal)).toBe(false);
      } finally {
        next.child.kill('SIGTERM');
      }
      expect(await next.exited).toBe(0);
      expect(await readCall(PostgresDatabase.open(url), 'wacid.cli-killed')).toMatchObject({ direction: 'incoming', outcome: 'abandoned' });
    } finally {
      await proxy.close().catch(() => undefined);
      await drop();
    }
  }, 60_000);

  it('with --database: PostgreSQL', async () => {
    const { url, drop } = await createDatabase(server);
    try {
      await oneCallThenStop(cwd, ['--database', url], 'wacid.cli-postgres');
      expect(await readCall(PostgresDatabase.open(url), 'wacid.cli-postgres')).toMatchObject({ direction: 'incoming', outcome: 'abandoned' });
    } finally {
      await drop();
    }
  }, 60_000);
});
