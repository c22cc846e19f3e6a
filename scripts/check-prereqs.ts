// The system programs `npm test`, `npm run bench` and `npm run bench:relay` need, checked before
// anything else runs: a machine without them is told in one line what is missing and how to install
// it, instead of failing minutes later with `spawn /usr/bin/redis-server ENOENT` or a stack trace.
//
//   tsx scripts/check-prereqs.ts test|bench|bench:relay   → nothing and exit 0, or one line and exit 1
//   tsx scripts/check-prereqs.ts test --install           → installs the Debian packages that are missing
//                                                           (apt-get as root, else through sudo), then checks again
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const TASKS = ['test', 'bench', 'bench:relay'] as const;
export type Task = (typeof TASKS)[number];

/** Where the end-to-end harness (test/e2e/harness.ts) and the call benchmark launch Chromium. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** ImageMagick's convert, by its Debian path: another `convert` may come first on PATH. */
export const IMAGEMAGICK_CONVERT_PATH = '/usr/bin/convert';

/** What the checks may look at: the environment and the file system, so that tests can stand in for both. */
export interface SystemProbe {
  env: Readonly<Record<string, string | undefined>>;
  /** A file (not a folder) that this user may execute. */
  isExecutable(file: string): boolean;
  /** The names of the folders in `dir` (none when it does not exist). */
  subfolders(dir: string): string[];
}

export interface MissingPrerequisite {
  /** What the line names: a path, or a command looked up on PATH. */
  what: string;
  /** The Debian package that provides it. */
  aptPackage: string;
}

/** Whether `command` is an executable file in one of PATH's folders. */
export function onPath(command: string, probe: SystemProbe): boolean {
  return (probe.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '')
    .some((dir) => probe.isExecutable(join(dir, command)));
}

/**
 * The Redis tests and the relay benchmark start redis-server themselves (REDIS_SERVER_BIN when set,
 * else the one on PATH). The tests use the server at REDIS_URL instead when it is set; the benchmark
 * needs none when BENCH_RELAY_BACKENDS leaves redis out.
 */
function redisServerMissing(task: Task, probe: SystemProbe): MissingPrerequisite | undefined {
  if (task === 'bench') return undefined;
  if (task === 'test' && (probe.env.REDIS_URL ?? '') !== '') return undefined;
  if (task === 'bench:relay' && !(probe.env.BENCH_RELAY_BACKENDS ?? 'memory,redis').split(',').includes('redis')) return undefined;
  const chosen = probe.env.REDIS_SERVER_BIN;
  if (chosen !== undefined) return probe.isExecutable(chosen) ? undefined : { what: `redis-server (REDIS_SERVER_BIN=${chosen})`, aptPackage: 'redis-server' };
  return onPath('redis-server', probe) ? undefined : { what: 'redis-server', aptPackage: 'redis-server' };
}

/** Where Debian's PostgreSQL packages put each major version's programs: `<dir>/<major>/bin`. */
export const POSTGRES_LIB_DIR = '/usr/lib/postgresql';
const POSTGRES_PROGRAMS = ['initdb', 'pg_ctl', 'postgres'] as const;

/**
 * The folder of the PostgreSQL server the records' tests start (test/unit/records): POSTGRES_BIN_DIR
 * when set, else the newest of Debian's versions that has initdb, pg_ctl and postgres.
 */
export function postgresBinDir(probe: SystemProbe): string | undefined {
  const hasServer = (dir: string) => POSTGRES_PROGRAMS.every((program) => probe.isExecutable(join(dir, program)));
  const chosen = probe.env.POSTGRES_BIN_DIR;
  if (chosen !== undefined && chosen !== '') return hasServer(chosen) ? chosen : undefined;
  return probe
    .subfolders(POSTGRES_LIB_DIR)
    .filter((version) => /^\d+$/.test(version))
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => join(POSTGRES_LIB_DIR, version, 'bin'))
    .find(hasServer);
}

/** The records' tests use the server at DATABASE_URL when it is set, as the Redis tests do REDIS_URL; else they start their own. */
function postgresMissing(task: Task, probe: SystemProbe): MissingPrerequisite | undefined {
  if (task !== 'test' || (probe.env.DATABASE_URL ?? '') !== '' || postgresBinDir(probe) !== undefined) return undefined;
  const chosen = probe.env.POSTGRES_BIN_DIR;
  return { what: chosen !== undefined && chosen !== '' ? `pg_ctl (POSTGRES_BIN_DIR=${chosen})` : `${POSTGRES_LIB_DIR}/*/bin/pg_ctl`, aptPackage: 'postgresql' };
}

function chromiumMissing(task: Task, probe: SystemProbe): MissingPrerequisite | undefined {
  if (task === 'bench:relay') return undefined;
  return probe.isExecutable(CHROMIUM_PATH) ? undefined : { what: CHROMIUM_PATH, aptPackage: 'chromium' };
}

/** The programs the media corpus (test/fixtures/media-corpus.ts) makes the tests' media files with. */
const MEDIA_TOOLS: readonly (({ command: string } | { path: string }) & { aptPackage: string })[] = [
  { command: 'ffmpeg', aptPackage: 'ffmpeg' },
  { command: 'sox', aptPackage: 'sox' },
  { path: IMAGEMAGICK_CONVERT_PATH, aptPackage: 'imagemagick' },
  { command: 'ps2pdf', aptPackage: 'ghostscript' },
];

/** Those of the media corpus's programs that this system lacks. */
export function mediaToolsMissing(probe: SystemProbe): MissingPrerequisite[] {
  return MEDIA_TOOLS.filter((tool) => ('path' in tool ? !probe.isExecutable(tool.path) : !onPath(tool.command, probe))).map((tool) => ({
    what: 'path' in tool ? tool.path : tool.command,
    aptPackage: tool.aptPackage,
  }));
}

/** The relay's TURN credentials are tested against a real coturn (test/unit/relay/turn-coturn.test.ts): its server and its test client. */
const COTURN_TOOLS: readonly { command: string; aptPackage: string }[] = [
  { command: 'turnserver', aptPackage: 'coturn' },
  { command: 'turnutils_uclient', aptPackage: 'coturn' },
];

/** Those of coturn's programs that this system lacks. */
export function coturnMissing(probe: SystemProbe): MissingPrerequisite[] {
  return COTURN_TOOLS.filter((tool) => !onPath(tool.command, probe)).map((tool) => ({ what: tool.command, aptPackage: tool.aptPackage }));
}

export function missingPrerequisites(task: Task, probe: SystemProbe): MissingPrerequisite[] {
  const media = task === 'test' ? mediaToolsMissing(probe) : [];
  const coturn = task === 'test' ? coturnMissing(probe) : [];
  return [chromiumMissing(task, probe), redisServerMissing(task, probe), ...media, ...coturn, postgresMissing(task, probe)].filter((m): m is MissingPrerequisite => m !== undefined);
}

/** The one line for what is missing, with the command that installs all of it; undefined when nothing is. */
export function missingLine(missing: readonly MissingPrerequisite[]): string | undefined {
  if (missing.length === 0) return undefined;
  const packages = [...new Set(missing.map((m) => m.aptPackage))];
  return `Missing: ${missing.map((m) => m.what).join(', ')} (install: apt-get install -y ${packages.join(' ')})`;
}

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function subfoldersOf(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}

export const systemProbe = (env: NodeJS.ProcessEnv = process.env): SystemProbe => ({ env, isExecutable: isExecutableFile, subfolders: subfoldersOf });

const isTask = (value: string | undefined): value is Task => (TASKS as readonly string[]).includes(value ?? '');

/** How packages get installed here: the commands run (each an argv), and whether this user is root. */
export interface Installer {
  isRoot: boolean;
  /** Runs a command with the terminal's input and output; its exit status (null when it could not start). */
  run(argv: readonly string[], env: Readonly<Record<string, string>>): number | null;
}

/** The apt-get commands that install these packages: as root directly, else through sudo when this system has it. */
export function installCommands(packages: readonly string[], installer: Pick<Installer, 'isRoot'>, probe: SystemProbe): string[][] | undefined {
  const asRoot = installer.isRoot ? [] : onPath('sudo', probe) ? ['sudo'] : undefined;
  if (asRoot === undefined) return undefined;
  return [
    [...asRoot, 'apt-get', 'update', '-qq'],
    [...asRoot, 'apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...packages],
  ];
}

/**
 * Installs what the task lacks, saying first which packages and how, then checks again. A user who
 * is not root and has no sudo is told the one line to run instead.
 */
export function install(task: Task, probe: SystemProbe, installer: Installer, print: (line: string) => void): number {
  const missing = missingPrerequisites(task, probe);
  if (missing.length === 0) return 0;
  const packages = [...new Set(missing.map((m) => m.aptPackage))];
  const commands = installCommands(packages, installer, probe);
  if (commands === undefined) {
    print(`${missingLine(missing)}: run it as root, or install sudo`);
    return 1;
  }
  print(`Installing Debian packages for ${task}: ${packages.join(' ')} (${commands[1]!.join(' ')})`);
  for (const argv of commands) {
    const status = installer.run(argv, { DEBIAN_FRONTEND: 'noninteractive' });
    if (status !== 0) {
      print(`${argv.join(' ')} failed (exit ${status ?? 'not started'})`);
      return 1;
    }
  }
  const still = missingLine(missingPrerequisites(task, probe));
  if (still === undefined) return 0;
  print(`Still missing after the install: ${still}`);
  return 1;
}

export const systemInstaller: Installer = {
  isRoot: typeof process.getuid === 'function' && process.getuid() === 0,
  run: (argv, env) => spawnSync(argv[0]!, argv.slice(1), { stdio: 'inherit', env: { ...process.env, ...env } }).status,
};

/** The command line: the exit code it should end with, after printing at most one line (two with --install). */
export function main(args: readonly string[], probe: SystemProbe, print: (line: string) => void, installer: Installer = systemInstaller): number {
  const task = args[0];
  const installing = args[1] === '--install';
  if (!isTask(task) || args.length > (installing ? 2 : 1)) {
    print(`Usage: tsx scripts/check-prereqs.ts ${TASKS.join('|')} [--install]`);
    return 2;
  }
  if (installing) return install(task, probe, installer, print);
  const line = missingLine(missingPrerequisites(task, probe));
  if (line === undefined) return 0;
  print(line);
  return 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(process.argv.slice(2), systemProbe(), (line) => console.error(line));
}
