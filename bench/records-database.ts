// The PostgreSQL that `npm run bench:relay` sends the relay's call records to, and the month of
// calls its report phase reads. The server comes from Debian's packages, as the records' tests start
// theirs (test/unit/records/postgres-server.ts): a temporary folder, a free port of 127.0.0.1, run
// as `postgres` when this process is root (PostgreSQL refuses to run as root). Unlike the tests'
// server it keeps PostgreSQL's own settings (fsync on, 128 MB of shared buffers): the benchmark
// measures the records as a team would run them.
import { execFile } from 'node:child_process';
import { chown, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { postgresBinDir, systemProbe } from '../scripts/check-prereqs';

const run = promisify(execFile);

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** What runs the server's programs: as `postgres` through runuser when this process is root. */
export function asPostgresUser(program: string, args: readonly string[]): { command: string; args: string[] } {
  return asRoot ? { command: 'runuser', args: ['-u', 'postgres', '--', program, ...args] } : { command: program, args: [...args] };
}

export interface PostgresCluster {
  /** The folder of the server's programs (initdb, postgres). */
  bin: string;
  /** The temporary folder: the data directory and the server's Unix socket. */
  dir: string;
  data: string;
}

/** The line to print when this machine has no PostgreSQL server to start; undefined when it has one. */
export function postgresMissingLine(): string | undefined {
  if (postgresBinDir(systemProbe()) !== undefined) return undefined;
  const chosen = process.env.POSTGRES_BIN_DIR;
  const what = chosen !== undefined && chosen !== '' ? `pg_ctl (POSTGRES_BIN_DIR=${chosen})` : '/usr/lib/postgresql/*/bin/pg_ctl';
  return `Missing: ${what} (install: apt-get install -y postgresql), or give a server in BENCH_RELAY_DATABASE_URL, or BENCH_RELAY_RECORDS=embedded`;
}

/** A fresh data directory in a temporary folder (owned by `postgres` when root). Remove `dir` after. */
export async function initCluster(): Promise<PostgresCluster> {
  const bin = postgresBinDir(systemProbe());
  if (bin === undefined) throw new Error(postgresMissingLine());
  const dir = await mkdtemp(join(tmpdir(), 'relay-bench-pg-'));
  if (asRoot) {
    const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout.trim());
    await chown(dir, await id('-u'), await id('-g'));
  }
  const data = join(dir, 'data');
  const initdb = asPostgresUser(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  await run(initdb.command, initdb.args, { timeout: 120_000 });
  return { bin, dir, data };
}

/** The server's command line: in the foreground, so that it is a child the benchmark stops with the others. */
export function serverCommand(cluster: PostgresCluster, port: number): { command: string; args: string[] } {
  return asPostgresUser(join(cluster.bin, 'postgres'), [
    '-D',
    cluster.data,
    '-p',
    String(port),
    '-k',
    cluster.dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'log_checkpoints=off',
  ]);
}

/** The server's log lines worth showing beside the benchmark's output: warnings and errors, not its LOG chatter nor the end of the connections of a database dropped. */
export function postgresLogWorthShowing(line: string): boolean {
  return /\b(WARNING|ERROR|FATAL|PANIC):/.test(line) && !/terminating connection due to administrator command/.test(line);
}

export const postgresUrl = (port: number, database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;

/** The URL of another database on the server `url` names. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Resolves once the server answers a query, or rejects after `timeoutMs`. */
export async function waitForServer(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not answer within ${timeoutMs / 1000} s: ${String(error)}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 250));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** Runs statements on one connection to `url`. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Makes a database of its own on the server `adminUrl` names; its URL. */
export async function createDatabase(adminUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  return withDatabase(adminUrl, name);
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/** The server's version line, for the report. */
export async function serverVersion(url: string): Promise<string> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ version: string; fsync: string; shared_buffers: string }>(
      "SELECT split_part(version(), ' on ', 1) AS version, current_setting('fsync') AS fsync, current_setting('shared_buffers') AS shared_buffers",
    );
    const row = rows[0]!;
    return `${row.version}, fsync ${row.fsync}, shared_buffers ${row.shared_buffers}`;
  });
}

export interface MonthOfCalls {
  /** The month's first instant and the next month's (UTC). */
  from: Date;
  to: Date;
  /** Its first and last day, as the reports take them (YYYY-MM-DD). */
  firstDay: string;
  lastDay: string;
  days: number;
}

/** The latest month before `now` that has `days` days, in UTC. */
export function pastMonth(now: Date, days = 30): MonthOfCalls {
  for (let back = 1; ; back++) {
    const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
    const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
    const length = Math.round((to.getTime() - from.getTime()) / 86_400_000);
    if (length !== days) continue;
    const day = (date: Date) => date.toISOString().slice(0, 10);
    return { from, to, firstDay: day(from), lastDay: day(new Date(to.getTime() - 86_400_000)), days: length };
  }
}

/**
 * Fills `calls` with `count` ended calls of a month, as a team's records would hold them: 60 %
 * incoming, each call on one of the month's days between 08:00 and 20:00; incoming answered 80 %,
 * abandoned 8 %, missed 9 %, failed 3 %; outgoing answered 65 %, no answer 20 %, cancelled 12 %,
 * failed 3 %; waits, talk (most calls a few minutes, a few long ones) and a hold on one answered call
 * in ten; agents among `agents` (ids `a0001`…, as the benchmark's agents file), dispositions on most
 * answered calls and notes on some, a few of them with a comma or a quote. One statement, seeded:
 * every run fills the same month.
 */
export async function fillMonthOfCalls(url: string, month: MonthOfCalls, count: number, agents: number): Promise<void> {
  await withClient(url, async (client) => {
    await client.query('BEGIN');
    await client.query('SELECT setseed(0.42)');
    await client.query(
      `WITH drawn AS (
         SELECT n, random() AS r_direction, random() AS r_outcome, random() AS r_wait, random() AS r_talk,
                random() AS r_hold, random() AS r_agent, random() AS r_time, random() AS r_wrap
           FROM generate_series(1, $1::int) AS n
       ), shaped AS (
         SELECT n, r_hold, r_wrap,
                CASE WHEN r_direction < 0.6 THEN 'incoming' ELSE 'outgoing' END AS direction,
                -- To the millisecond, as the relay writes every time (a JavaScript Date).
                date_trunc('milliseconds', $2::timestamptz + ((n - 1) * $4::int / $1::int) * interval '1 day' + interval '8 hours' + r_time * interval '12 hours') AS started_at,
                'a' || lpad(k::text, greatest(4, length(k::text)), '0') AS agent,
                'a' || lpad(k2::text, greatest(4, length(k2::text)), '0') AS colleague,
                CASE WHEN r_direction < 0.6
                     THEN CASE WHEN r_outcome < 0.80 THEN 'answered' WHEN r_outcome < 0.88 THEN 'abandoned' WHEN r_outcome < 0.97 THEN 'missed' ELSE 'failed' END
                     ELSE CASE WHEN r_outcome < 0.65 THEN 'answered' WHEN r_outcome < 0.85 THEN 'no_answer' WHEN r_outcome < 0.97 THEN 'cancelled' ELSE 'failed' END
                END AS outcome,
                r_wait, r_talk
           FROM drawn, LATERAL (SELECT 1 + floor(r_agent * $3::int)::int AS k, 1 + ((floor(r_agent * $3::int)::int + 1 + n % 7) % $3::int) AS k2) AS ks
       ), timed AS (
         SELECT *,
                CASE outcome
                  WHEN 'answered' THEN 2000 + floor(r_wait * 38000)
                  WHEN 'abandoned' THEN 3000 + floor(r_wait * 50000)
                  WHEN 'missed' THEN 55000 + floor(r_wait * 5000)
                  WHEN 'no_answer' THEN 20000 + floor(r_wait * 40000)
                  WHEN 'cancelled' THEN 2000 + floor(r_wait * 30000)
                  ELSE floor(r_wait * 3000)
                END::int AS wait_ms,
                CASE WHEN outcome = 'answered' THEN (20000 + floor(r_talk * r_talk * 1200000))::int END AS talk_ms,
                CASE WHEN outcome = 'answered' AND r_hold < 0.1 THEN (5000 + floor(r_hold * 1200000))::int END AS hold_ms
           FROM shaped
       )
       INSERT INTO calls (call_id, direction, customer, customer_name, business_number, started_at, rang_at, answered_at, ended_at,
                          outcome, agent_id, rung_agents, declined_agents, wait_ms, talk_ms, hold_ms, end_status, error_code, error_message,
                          disposition, notes)
       SELECT 'wacid.bench-month-' || n,
              direction,
              '4474' || lpad((10000000 + n % 90000000)::text, 8, '0'),
              CASE WHEN direction = 'incoming' THEN 'Customer ' || n END,
              '442079460000',
              started_at,
              started_at + CASE WHEN direction = 'outgoing' THEN interval '1 second' ELSE interval '0' END,
              CASE WHEN outcome = 'answered' THEN started_at + wait_ms * interval '1 millisecond' END,
              started_at + (wait_ms + COALESCE(talk_ms, 0) + COALESCE(hold_ms, 0)) * interval '1 millisecond',
              outcome,
              CASE WHEN outcome = 'answered' OR direction = 'outgoing' THEN agent END,
              CASE WHEN direction = 'incoming' THEN ARRAY[agent, colleague] ELSE '{}' END,
              CASE WHEN outcome = 'missed' AND r_wrap < 0.3 THEN ARRAY[agent, colleague] ELSE '{}' END,
              wait_ms, talk_ms, hold_ms,
              CASE WHEN outcome = 'failed' THEN 'FAILED' ELSE 'COMPLETED' END,
              CASE WHEN outcome = 'failed' THEN 138021 END,
              CASE WHEN outcome = 'failed' THEN 'Call media never started' END,
              CASE WHEN outcome = 'answered' AND r_wrap < 0.7 THEN (ARRAY['Resolved', 'Call back', 'Sale'])[1 + floor(r_wrap * 3 / 0.7)::int] END,
              CASE WHEN outcome = 'answered' AND r_wrap < 0.05 THEN 'Asked about invoice ' || n || ', "urgent", call back Monday'
                   WHEN outcome = 'answered' AND r_wrap < 0.2 THEN 'Wants the new plan; sent the link by message' END
         FROM timed`,
      [count, month.from, agents, month.days],
    );
    await client.query('COMMIT');
  });
}
