// scripts/check-prereqs.ts: the decision on a stand-in system, then the real script and the real
// npm scripts on this machine with a PATH that has no redis-server.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, IMAGEMAGICK_CONVERT_PATH, install, main, missingLine, missingPrerequisites, onPath, postgresBinDir, type Installer, type SystemProbe, type Task } from '../../../scripts/check-prereqs';

const REDIS_LINE = 'Missing: redis-server (install: apt-get install -y redis-server)';
const CHROMIUM_LINE = `Missing: ${CHROMIUM_PATH} (install: apt-get install -y chromium)`;
const BOTH_LINE = `Missing: ${CHROMIUM_PATH}, redis-server (install: apt-get install -y chromium redis-server)`;
const MEDIA_LINE = `Missing: ffmpeg, sox, ${IMAGEMAGICK_CONVERT_PATH}, ps2pdf (install: apt-get install -y ffmpeg sox imagemagick ghostscript)`;
const COTURN_LINE = 'Missing: turnserver, turnutils_uclient (install: apt-get install -y coturn)';
const POSTGRES_LINE = 'Missing: /usr/lib/postgresql/*/bin/pg_ctl (install: apt-get install -y postgresql)';
const ALL_LINE = `Missing: ${CHROMIUM_PATH}, redis-server, ffmpeg, sox, ${IMAGEMAGICK_CONVERT_PATH}, ps2pdf, turnserver, turnutils_uclient, /usr/lib/postgresql/*/bin/pg_ctl (install: apt-get install -y chromium redis-server ffmpeg sox imagemagick ghostscript coturn postgresql)`;

/** The folders in `dir` that lead to one of `files`. */
function subfoldersAmong(files: Iterable<string>, dir: string): string[] {
  const names = [...files].filter((file) => file.startsWith(`${dir}/`)).map((file) => file.slice(dir.length + 1).split('/'));
  return [...new Set(names.filter((parts) => parts.length > 1).map((parts) => parts[0]!))];
}

/** A system with these executable files and this environment. */
function system(executables: string[], env: Record<string, string | undefined> = {}): SystemProbe {
  const files = new Set(executables);
  return { env: { PATH: '/usr/local/bin:/usr/bin:/bin', ...env }, isExecutable: (file) => files.has(file), subfolders: (dir) => subfoldersAmong(files, dir) };
}
/** The programs the media corpus (test/fixtures/media-corpus.ts) is made with. */
const mediaTools = ['/usr/bin/ffmpeg', '/usr/bin/sox', IMAGEMAGICK_CONVERT_PATH, '/usr/bin/ps2pdf'];
/** coturn's server and test client, which the relay's TURN test runs. */
const coturnTools = ['/usr/bin/turnserver', '/usr/bin/turnutils_uclient'];
/** Debian's PostgreSQL 15 server programs, which the records' tests start. */
const postgresTools = ['/usr/lib/postgresql/15/bin/initdb', '/usr/lib/postgresql/15/bin/pg_ctl', '/usr/lib/postgresql/15/bin/postgres'];
/** What npm test needs besides Chromium and redis-server. */
const testTools = [...mediaTools, ...coturnTools, ...postgresTools];
const everything = ['/usr/bin/redis-server', CHROMIUM_PATH, ...testTools];
const lineFor = (task: Task, probe: SystemProbe) => missingLine(missingPrerequisites(task, probe));

describe('what each task needs', () => {
  it('npm test: Chromium at the harness\'s path and redis-server on PATH', () => {
    expect(lineFor('test', system(everything))).toBeUndefined();
    expect(lineFor('test', system([CHROMIUM_PATH, ...testTools]))).toBe(REDIS_LINE);
    expect(lineFor('test', system(['/usr/bin/redis-server', ...testTools]))).toBe(CHROMIUM_LINE);
    expect(lineFor('test', system(testTools))).toBe(BOTH_LINE);
    expect(lineFor('test', system([]))).toBe(ALL_LINE);
    // Chromium elsewhere on PATH is not where the harness looks.
    expect(lineFor('test', system(['/usr/bin/redis-server', '/usr/local/bin/chromium', ...testTools]))).toBe(CHROMIUM_LINE);
  });

  it('npm test: no redis-server needed when REDIS_URL names the server to use', () => {
    expect(lineFor('test', system([CHROMIUM_PATH, ...testTools], { REDIS_URL: 'redis://127.0.0.1:6390' }))).toBeUndefined();
    expect(lineFor('test', system(testTools, { REDIS_URL: 'redis://127.0.0.1:6390' }))).toBe(CHROMIUM_LINE);
    expect(lineFor('test', system([CHROMIUM_PATH, ...testTools], { REDIS_URL: '' }))).toBe(REDIS_LINE);
  });

  it('npm test: the media corpus\'s programs, ffmpeg, sox and ps2pdf on PATH and ImageMagick\'s convert at its Debian path', () => {
    const base = ['/usr/bin/redis-server', CHROMIUM_PATH, ...coturnTools, ...postgresTools];
    expect(lineFor('test', system(base))).toBe(MEDIA_LINE);
    expect(lineFor('test', system([...base, '/opt/media/ffmpeg', '/opt/media/sox', '/opt/media/ps2pdf', IMAGEMAGICK_CONVERT_PATH], { PATH: '/usr/bin:/opt/media' }))).toBeUndefined();
    expect(lineFor('test', system([...base, '/usr/bin/ffmpeg', '/usr/bin/sox', IMAGEMAGICK_CONVERT_PATH]))).toBe('Missing: ps2pdf (install: apt-get install -y ghostscript)');
    expect(lineFor('test', system([...base, '/usr/bin/sox', '/usr/bin/ps2pdf', IMAGEMAGICK_CONVERT_PATH]))).toBe('Missing: ffmpeg (install: apt-get install -y ffmpeg)');
    // Another `convert` on PATH is not ImageMagick's.
    expect(lineFor('test', system([...base, '/usr/bin/ffmpeg', '/usr/bin/sox', '/usr/bin/ps2pdf', '/usr/local/bin/convert']))).toBe(
      `Missing: ${IMAGEMAGICK_CONVERT_PATH} (install: apt-get install -y imagemagick)`,
    );
    // The benchmarks make no media files.
    expect(lineFor('bench', system([CHROMIUM_PATH]))).toBeUndefined();
    expect(lineFor('bench:relay', system(['/usr/bin/redis-server']))).toBeUndefined();
  });

  it('npm test: coturn\'s turnserver and turnutils_uclient on PATH, from the coturn package', () => {
    const base = ['/usr/bin/redis-server', CHROMIUM_PATH, ...mediaTools, ...postgresTools];
    expect(lineFor('test', system(base))).toBe(COTURN_LINE);
    expect(lineFor('test', system([...base, '/usr/bin/turnserver']))).toBe('Missing: turnutils_uclient (install: apt-get install -y coturn)');
    expect(lineFor('test', system([...base, '/usr/bin/turnutils_uclient']))).toBe('Missing: turnserver (install: apt-get install -y coturn)');
    expect(lineFor('test', system([...base, '/opt/coturn/bin/turnserver', '/opt/coturn/bin/turnutils_uclient'], { PATH: '/usr/bin:/opt/coturn/bin' }))).toBeUndefined();
    // Only the tests run a TURN server.
    expect(lineFor('bench', system([CHROMIUM_PATH]))).toBeUndefined();
    expect(lineFor('bench:relay', system(['/usr/bin/redis-server']))).toBeUndefined();
  });

  it("npm test: a PostgreSQL server's initdb, pg_ctl and postgres in the newest of Debian's version folders, or POSTGRES_BIN_DIR; none when DATABASE_URL names the server", () => {
    const base = ['/usr/bin/redis-server', CHROMIUM_PATH, ...mediaTools, ...coturnTools];
    expect(lineFor('test', system(base))).toBe(POSTGRES_LINE);
    expect(lineFor('test', system([...base, '/usr/lib/postgresql/15/bin/initdb', '/usr/lib/postgresql/15/bin/pg_ctl']))).toBe(POSTGRES_LINE);
    expect(lineFor('test', system([...base, ...postgresTools]))).toBeUndefined();
    expect(lineFor('test', system(base, { DATABASE_URL: 'postgres://postgres@127.0.0.1:5433/postgres' }))).toBeUndefined();
    const v17 = ['initdb', 'pg_ctl', 'postgres'].map((p) => `/usr/lib/postgresql/17/bin/${p}`);
    expect(postgresBinDir(system([...postgresTools, ...v17]))).toBe('/usr/lib/postgresql/17/bin');
    // A version folder with only the client programs is not a server.
    expect(postgresBinDir(system([...postgresTools, '/usr/lib/postgresql/17/bin/pg_ctl']))).toBe('/usr/lib/postgresql/15/bin');
    const own = ['initdb', 'pg_ctl', 'postgres'].map((p) => `/opt/pg/bin/${p}`);
    expect(lineFor('test', system([...base, ...own], { POSTGRES_BIN_DIR: '/opt/pg/bin' }))).toBeUndefined();
    expect(lineFor('test', system([...base, ...postgresTools], { POSTGRES_BIN_DIR: '/opt/pg/bin' }))).toBe('Missing: pg_ctl (POSTGRES_BIN_DIR=/opt/pg/bin) (install: apt-get install -y postgresql)');
    // The benchmarks start no PostgreSQL.
    expect(lineFor('bench', system([CHROMIUM_PATH]))).toBeUndefined();
    expect(lineFor('bench:relay', system(['/usr/bin/redis-server']))).toBeUndefined();
  });

  it('npm run bench: Chromium only', () => {
    expect(lineFor('bench', system([CHROMIUM_PATH]))).toBeUndefined();
    expect(lineFor('bench', system(['/usr/bin/redis-server']))).toBe(CHROMIUM_LINE);
  });

  it('npm run bench:relay: redis-server, even with REDIS_URL (it starts its own), unless only the memory backend runs', () => {
    expect(lineFor('bench:relay', system(['/usr/bin/redis-server']))).toBeUndefined();
    expect(lineFor('bench:relay', system([CHROMIUM_PATH]))).toBe(REDIS_LINE);
    expect(lineFor('bench:relay', system([], { REDIS_URL: 'redis://127.0.0.1:6390' }))).toBe(REDIS_LINE);
    expect(lineFor('bench:relay', system([], { BENCH_RELAY_BACKENDS: 'memory' }))).toBeUndefined();
    expect(lineFor('bench:relay', system([], { BENCH_RELAY_BACKENDS: 'redis' }))).toBe(REDIS_LINE);
  });

  it('looks redis-server up in every PATH folder, and takes REDIS_SERVER_BIN instead when set', () => {
    expect(onPath('redis-server', system(['/opt/redis/bin/redis-server'], { PATH: '/usr/bin::/opt/redis/bin' }))).toBe(true);
    expect(onPath('redis-server', system(['/opt/redis/bin/redis-server'], { PATH: '/usr/bin:/bin' }))).toBe(false);
    expect(onPath('redis-server', system(['/usr/bin/redis-server'], { PATH: undefined }))).toBe(false);
    expect(lineFor('bench:relay', system(['/opt/redis/redis-server'], { PATH: '/usr/bin', REDIS_SERVER_BIN: '/opt/redis/redis-server' }))).toBeUndefined();
    expect(lineFor('bench:relay', system(['/usr/bin/redis-server'], { REDIS_SERVER_BIN: '/opt/redis/redis-server' }))).toBe(
      'Missing: redis-server (REDIS_SERVER_BIN=/opt/redis/redis-server) (install: apt-get install -y redis-server)',
    );
  });

  it('prints one line and exits 1 when something is missing, nothing and 0 otherwise, 2 for an unknown task', () => {
    const printed: string[] = [];
    expect(main(['test'], system([]), (line) => printed.push(line))).toBe(1);
    expect(printed).toEqual([ALL_LINE]);
    expect(main(['test'], system(everything), (line) => printed.push(line))).toBe(0);
    expect(printed).toHaveLength(1);
    expect(main(['lint'], system(everything), (line) => printed.push(line))).toBe(2);
    expect(main([], system(everything), (line) => printed.push(line))).toBe(2);
    expect(printed.slice(1)).toEqual(['Usage: tsx scripts/check-prereqs.ts test|bench|bench:relay [--install]', 'Usage: tsx scripts/check-prereqs.ts test|bench|bench:relay [--install]']);
    expect(main(['test', '--now'], system(everything), (line) => printed.push(line))).toBe(2);
  });
});

describe('installing what is missing', () => {
  /** A stand-in for apt-get: records each command, and the install makes the programs appear. */
  function fakeInstaller(isRoot: boolean, files: Set<string>, arrive: string[], status = 0): Installer & { runs: string[][] } {
    const runs: string[][] = [];
    return {
      isRoot,
      runs,
      run(argv, env) {
        runs.push([...argv]);
        expect(env.DEBIAN_FRONTEND).toBe('noninteractive');
        if (argv.includes('install')) for (const file of arrive) files.add(file);
        return status;
      },
    };
  }
  const growing = (files: Set<string>, env: Record<string, string | undefined> = {}): SystemProbe => ({
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', ...env },
    isExecutable: (file) => files.has(file),
    subfolders: (dir) => subfoldersAmong(files, dir),
  });

  it('does nothing when nothing is missing', () => {
    const files = new Set(everything);
    const installer = fakeInstaller(true, files, []);
    const printed: string[] = [];
    expect(install('test', growing(files), installer, (line) => printed.push(line))).toBe(0);
    expect(installer.runs).toEqual([]);
    expect(printed).toEqual([]);
  });

  it('as root: says what it installs, runs apt-get update and install for exactly the missing packages, then checks again', () => {
    const files = new Set(['/usr/bin/redis-server', ...mediaTools, ...postgresTools]);
    const installer = fakeInstaller(true, files, [CHROMIUM_PATH, ...coturnTools]);
    const printed: string[] = [];
    expect(main(['test', '--install'], growing(files), (line) => printed.push(line), installer)).toBe(0);
    expect(installer.runs).toEqual([
      ['apt-get', 'update', '-qq'],
      ['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'chromium', 'coturn'],
    ]);
    expect(printed).toEqual(['Installing Debian packages for test: chromium coturn (apt-get install -y -qq --no-install-recommends chromium coturn)']);
  });

  it('not root: through sudo when this system has it, else the one line to run', () => {
    const files = new Set([...everything.filter((f) => f !== '/usr/bin/redis-server'), '/usr/bin/sudo']);
    const installer = fakeInstaller(false, files, ['/usr/bin/redis-server']);
    expect(install('test', growing(files), installer, () => undefined)).toBe(0);
    expect(installer.runs.map((argv) => argv.slice(0, 2))).toEqual([
      ['sudo', 'apt-get'],
      ['sudo', 'apt-get'],
    ]);

    const noSudo = new Set(everything.filter((f) => f !== '/usr/bin/redis-server'));
    const refused = fakeInstaller(false, noSudo, ['/usr/bin/redis-server']);
    const printed: string[] = [];
    expect(install('test', growing(noSudo), refused, (line) => printed.push(line))).toBe(1);
    expect(refused.runs).toEqual([]);
    expect(printed).toEqual([`${REDIS_LINE}: run it as root, or install sudo`]);
  });

  it('fails, naming the command, when apt-get fails; and when the install did not bring the program', () => {
    const files = new Set(everything.filter((f) => f !== CHROMIUM_PATH));
    const printed: string[] = [];
    expect(install('test', growing(files), fakeInstaller(true, files, [], 100), (line) => printed.push(line))).toBe(1);
    expect(printed[1]).toBe('apt-get update -qq failed (exit 100)');

    const quiet: string[] = [];
    expect(install('test', growing(files), fakeInstaller(true, files, []), (line) => quiet.push(line))).toBe(1);
    expect(quiet[1]).toBe(`Still missing after the install: ${CHROMIUM_LINE}`);
  });

  it('is what npm run test:fresh runs before npm test, and what .ci/run calls', () => {
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['test:fresh']).toBe('tsx scripts/check-prereqs.ts test --install && npm test');
    expect(readFileSync('.ci/run', 'utf8')).toMatch(/^npm run test:fresh$/m);
    expect(readFileSync('README.md', 'utf8')).toContain('npm run test:fresh');
  });
});

describe('the real script', () => {
  const folders: string[] = [];
  afterAll(() => {
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });
  /** A PATH folder holding only the given programs (node and sh, so that npm and tsx can run). */
  function pathWith(programs: Record<string, string>): string {
    const folder = mkdtempSync(join(tmpdir(), 'prereqs-path-'));
    folders.push(folder);
    for (const [name, target] of Object.entries(programs)) symlinkSync(target, join(folder, name));
    return folder;
  }
  /** This process's environment without the variables the check reads, plus `env`. */
  function environment(env: Record<string, string>): NodeJS.ProcessEnv {
    const base: NodeJS.ProcessEnv = { ...process.env };
    // DATABASE_URL and POSTGRES_BIN_DIR stay: they say where this machine's PostgreSQL is, which npm test needs here too.
    for (const key of ['REDIS_URL', 'REDIS_SERVER_BIN', 'BENCH_RELAY_BACKENDS']) delete base[key];
    return { ...base, ...env };
  }
  const runScript = (task: string, env: Record<string, string>, flags: string[] = []) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check-prereqs.ts', task, ...flags], { env: environment(env), encoding: 'utf8', timeout: 15_000 });

  it('stops bench:relay in one line naming redis-server when PATH has none', () => {
    const run = runScript('bench:relay', { PATH: pathWith({}) });
    expect(run.stderr).toBe(`${REDIS_LINE}\n`);
    expect(run.stdout).toBe('');
    expect(run.status).toBe(1);
  });

  it('finds a redis-server that PATH has, wherever it is', () => {
    const folder = mkdtempSync(join(tmpdir(), 'prereqs-redis-'));
    folders.push(folder);
    writeFileSync(join(folder, 'redis-server'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(folder, 'redis-server'), 0o755);
    const run = runScript('bench:relay', { PATH: folder });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('lets npm test through without redis-server on PATH when REDIS_URL is set', () => {
    // Chromium and ImageMagick are where the tests look on any machine that runs them (npm test checks it first).
    expect(existsSync(CHROMIUM_PATH)).toBe(true);
    expect(existsSync(IMAGEMAGICK_CONVERT_PATH)).toBe(true);
    const media = { ffmpeg: '/usr/bin/ffmpeg', sox: '/usr/bin/sox', ps2pdf: '/usr/bin/ps2pdf', turnserver: '/usr/bin/turnserver', turnutils_uclient: '/usr/bin/turnutils_uclient' };
    const without = runScript('test', { PATH: pathWith(media) });
    expect(without.stderr).toBe(`${REDIS_LINE}\n`);
    expect(without.status).toBe(1);
    const withUrl = runScript('test', { PATH: pathWith(media), REDIS_URL: 'redis://127.0.0.1:6390' });
    expect(withUrl.stderr).toBe('');
    expect(withUrl.status).toBe(0);
    // And without coturn it stops at the check, naming coturn's programs.
    const { turnserver: _server, turnutils_uclient: _client, ...withoutCoturn } = media;
    const noCoturn = runScript('test', { PATH: pathWith(withoutCoturn), REDIS_URL: 'redis://127.0.0.1:6390' });
    expect(noCoturn.stderr).toBe(`${COTURN_LINE}\n`);
    expect(noCoturn.status).toBe(1);
  });

  it('--install runs apt-get (through sudo when not root) for what is missing, then finds it', () => {
    // apt-get here is a stand-in that records its arguments and brings redis-server on install.
    const folder = pathWith({ sh: '/bin/sh', chmod: '/bin/chmod' });
    const log = join(folder, 'apt-get.log');
    writeFileSync(join(folder, 'apt-get'), `#!/bin/sh\necho "$DEBIAN_FRONTEND $*" >> ${log}\nif [ "$1" = install ]; then printf '#!/bin/sh\\nexit 0\\n' > ${folder}/redis-server; chmod 755 ${folder}/redis-server; fi\n`);
    writeFileSync(join(folder, 'sudo'), '#!/bin/sh\nexec "$@"\n');
    chmodSync(join(folder, 'apt-get'), 0o755);
    chmodSync(join(folder, 'sudo'), 0o755);
    const run = runScript('bench:relay', { PATH: folder }, ['--install']);
    expect(run.stderr).toBe('Installing Debian packages for bench:relay: redis-server (' + (process.getuid?.() === 0 ? '' : 'sudo ') + 'apt-get install -y -qq --no-install-recommends redis-server)\n');
    expect(run.status).toBe(0);
    expect(readFileSync(log, 'utf8')).toBe('noninteractive update -qq\nnoninteractive install -y -qq --no-install-recommends redis-server\n');
  });

  it('runs first in npm test, npm run bench and npm run bench:relay', () => {
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.test).toMatch(/^tsx scripts\/check-prereqs\.ts test && /);
    expect(scripts.bench).toMatch(/^tsx scripts\/check-prereqs\.ts bench && /);
    expect(scripts['bench:relay']).toMatch(/^tsx scripts\/check-prereqs\.ts bench:relay && /);

    // And for real: npm run bench:relay with no redis-server on PATH stops at the check, with its line.
    const npmCli = process.env.npm_execpath?.endsWith('npm-cli.js') ? process.env.npm_execpath : join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
    const run = spawnSync(process.execPath, [npmCli, 'run', '--silent', 'bench:relay'], { env: environment({ PATH: pathWith({ node: process.execPath, sh: '/bin/sh' }) }), encoding: 'utf8', timeout: 30_000 });
    expect(run.stderr.split('\n')).toContain(REDIS_LINE);
    expect(run.stdout).toBe('');
    expect(run.status).not.toBe(0);
  });
});
