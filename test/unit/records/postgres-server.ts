// A real PostgreSQL for the records' tests (style.md 10): the one CI provides in DATABASE_URL, or a
// private server from Debian's packages in a temporary folder, on a free port of 127.0.0.1, stopped
// and removed after. PostgreSQL refuses to run as root: as root, its programs run as `postgres`.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { postgresBinDir, systemProbe } from '../../../scripts/check-prereqs';
import { freeTcpPort } from '../../support/server-process';

export interface PostgresServer {
  /** The server's URL for a database on it (default the one it starts with). */
  url(database?: string): string;
  /** Whether this file started the server (and may stop it): false for CI's shared one. */
  own: boolean;
  /** Stops the server, keeping its data (an outage); start() brings it back on the same port (and does nothing while it runs). */
  pause(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  stop(): Promise<void>;
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** The server at DATABASE_URL, unless `own` or none is set: then one of this process's own. */
export async function startPostgres(options: { own?: boolean } = {}): Promise<PostgresServer> {
  const shared = process.env.DATABASE_URL;
  if (shared !== undefined && shared !== '' && options.own !== true) {
    return {
      url: (database) => (database === undefined ? shared : withDatabase(shared, database)),
      own: false,
      pause: () => Promise.reject(new Error('the shared PostgreSQL (DATABASE_URL) is not this test\'s to stop')),
      start: async () => undefined,
      stop: async () => undefined,
    };
  }
  const bin = postgresBinDir(systemProbe());
  if (bin === undefined) throw new Error('no PostgreSQL server to start: install the postgresql package, or set DATABASE_URL or POSTGRES_BIN_DIR');
  const dir = mkdtempSync(join(tmpdir(), 'records-pg-'));
  const run = (program: string, args: string[]) => {
    const argv = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, program), ...args]] as const : [join(bin, program), args] as const;
    const result = spawnSync(argv[0], [...argv[1]], { encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) throw new Error(`${program} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout}`);
  };
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freeTcpPort();
  // Durability is not what these tests are about: no fsync, and a small server.
  const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=16MB -c max_connections=60`;
  let running = false;
  const start = async () => {
    if (running) return;
    run('pg_ctl', ['-D', data, '-w', '-t', '60', '-l', join(dir, 'server.log'), '-o', serverOptions, 'start']);
    running = true;
  };
  const halt = (mode: 'fast' | 'immediate') => {
    running = false;
    spawnSync(asRoot ? 'runuser' : join(bin, 'pg_ctl'), asRoot ? ['-u', 'postgres', '--', join(bin, 'pg_ctl'), '-D', data, '-m', mode, '-w', 'stop'] : ['-D', data, '-m', mode, '-w', 'stop'], { timeout: 60_000 });
  };
  // A test process that dies leaves no server behind.
  const onExit = () => halt('immediate');
  process.once('exit', onExit);
  await start();
  const base = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url: (database) => (database === undefined ? base : withDatabase(base, database)),
    own: true,
    pause: async () => halt('fast'),
    start,
    stop: async () => {
      halt('fast');
      process.off('exit', onExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** A database of its own on the server (each test file, each test that needs a clean one); dropped by the returned function. */
export async function createDatabase(server: PostgresServer, prefix = 'records'): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await asAdmin(server, `CREATE DATABASE ${name}`);
  return { url: server.url(name), drop: () => asAdmin(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function asAdmin(server: PostgresServer, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: server.url() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
