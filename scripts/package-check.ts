// Packages the Electron host offline and checks what came out: `electron-builder --linux dir` with a
// stand-in Electron (electronDist), since Electron's binary cannot be downloaded here. The stand-in
// is a small executable that carries the fuse wire where Electron's binary has it (the sentinel
// then version, length and one state byte per fuse), so electron-builder flips the same bytes it
// would flip in the real one. Then:
//   - app.asar holds what the app loads: the bundles, the renderer page and every file it names,
//     the icons, the sandbox's voice and media, package.json (whose `main` is there), and each
//     package the main bundle requires at run time with its entry file;
//   - nothing our code reads is outside the archive (asarUnpack is empty by decision) and no
//     source map, development tool or documentation image rides along;
//   - the fuses read back from the packaged binary are electron-builder.yml's;
//   - resources/app-update.yml names the generic provider (electron-updater's download cache needs it).
//
//   tsx scripts/package-check.ts [--no-build]   → builds (npm run build), packages into a temporary
//                                                 folder, prints what it found, exit 1 on any problem
// test/unit/packaging/package.test.ts runs the same inside `npm test` (after its build step).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { extractFile, listPackage, statFile } from '@electron/asar';
import { FuseV1Options, getCurrentFuseWire } from '@electron/fuses';
import { SANDBOX_MEDIA } from '../sandbox/media-library';
import { RECORD_NOTICE_DIR } from '../relay/record-notice';
import { RECORD_NOTICE_LANGUAGES } from '../shared/bridge-recording';

const run = promisify(execFile);
export const PROJECT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where Electron's binary keeps its fuse wire (@electron/fuses): this string, then the wire. */
export const FUSE_SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';

/** A fuse's byte in the wire: ASCII '0', '1', 'r' (removed from this Electron). */
export const FUSE_STATE = { disable: 0x30, enable: 0x31, removed: 0x72 } as const;

/** electron-builder.yml's electronFuses keys, by their place in the wire. */
export const FUSE_KEYS = {
  runAsNode: FuseV1Options.RunAsNode,
  enableCookieEncryption: FuseV1Options.EnableCookieEncryption,
  enableNodeOptionsEnvironmentVariable: FuseV1Options.EnableNodeOptionsEnvironmentVariable,
  enableNodeCliInspectArguments: FuseV1Options.EnableNodeCliInspectArguments,
  enableEmbeddedAsarIntegrityValidation: FuseV1Options.EnableEmbeddedAsarIntegrityValidation,
  onlyLoadAppFromAsar: FuseV1Options.OnlyLoadAppFromAsar,
  loadBrowserProcessSpecificV8Snapshot: FuseV1Options.LoadBrowserProcessSpecificV8Snapshot,
  grantFileProtocolExtraPrivileges: FuseV1Options.GrantFileProtocolExtraPrivileges,
} as const;
export type FuseKey = keyof typeof FUSE_KEYS;

/** The security posture the app ships with (issue 11): electron-builder.yml must say exactly this. */
export const REQUIRED_FUSES: Readonly<Partial<Record<FuseKey, boolean>>> = {
  runAsNode: false,
  enableCookieEncryption: true,
  enableNodeOptionsEnvironmentVariable: false,
  enableNodeCliInspectArguments: false,
  enableEmbeddedAsarIntegrityValidation: true,
  onlyLoadAppFromAsar: true,
  grantFileProtocolExtraPrivileges: false,
};

/** Electron's own defaults, as its binary ships: the stand-in starts from them so that every flip shows. */
const STOCK_WIRE: Readonly<Record<FuseKey, boolean>> = {
  runAsNode: true,
  enableCookieEncryption: false,
  enableNodeOptionsEnvironmentVariable: true,
  enableNodeCliInspectArguments: true,
  enableEmbeddedAsarIntegrityValidation: false,
  onlyLoadAppFromAsar: false,
  loadBrowserProcessSpecificV8Snapshot: false,
  grantFileProtocolExtraPrivileges: true,
};

/** Files our code reads by path outside the archive (child processes, native code): none. */
export const MUST_BE_UNPACKED: readonly string[] = [];

/** Never in the package: maps, tools of the npm scripts, documentation and test media. */
const MUST_NOT_SHIP = [/\.map$/, /^\/node_modules\/(tsx|esbuild|@esbuild)\//, /^\/assets\/(screenshots|test)\//, /^\/assets\/[^/]+\.png$/];

/**
 * An unpacked Electron distribution with nothing of Electron but the fuse wire: `electron` (a
 * shell script that carries the sentinel and the stock wire) and an empty resources/.
 */
export async function makeStandInElectron(dir: string): Promise<string> {
  await mkdir(join(dir, 'resources'), { recursive: true });
  const keys = Object.keys(FUSE_KEYS) as FuseKey[];
  const wire = Buffer.alloc(keys.length);
  for (const key of keys) wire[FUSE_KEYS[key]] = STOCK_WIRE[key] ? FUSE_STATE.enable : FUSE_STATE.disable;
  const script = Buffer.from('#!/bin/sh\necho "a stand-in for Electron: it packages, it does not run" >&2\nexit 1\n# ');
  const binary = Buffer.concat([script, Buffer.from(FUSE_SENTINEL, 'ascii'), Buffer.from([1, keys.length]), wire, Buffer.from('\n')]);
  await writeFile(join(dir, 'electron'), binary);
  await chmod(join(dir, 'electron'), 0o755);
  await writeFile(join(dir, 'LICENSE'), 'A stand-in for Electron’s LICENSE.\n');
  return dir;
}

export function installedElectronVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('electron/package.json') as { version: string }).version;
}

/** electron-builder.yml as electron-builder reads it (its own loader, so that `extends` and defaults agree). */
export async function builderConfig(): Promise<{ electronFuses?: Partial<Record<FuseKey, boolean>> | null; asarUnpack?: unknown }> {
  const { getConfig } = (await import('app-builder-lib/out/util/config/config.js')) as {
    getConfig: (projectDir: string, configPath: string | null, configFromOptions: null) => Promise<{ electronFuses?: Partial<Record<FuseKey, boolean>> | null; asarUnpack?: unknown }>;
  };
  return getConfig(PROJECT_DIR, null, null);
}

export interface PackageRun {
  /** The packaged app: <output>/linux-unpacked (or linux-<arch>-unpacked). */
  appOutDir: string;
  /** The packaged binary (productName's executable). */
  binary: string;
  log: string;
}

/** `electron-builder --linux dir` into `outputDir` with the stand-in; nothing is downloaded or published. */
export async function packageLinuxDir(options: { outputDir: string; electronDist: string; electronVersion: string }): Promise<PackageRun> {
  const cli = join(PROJECT_DIR, 'node_modules', 'electron-builder', 'cli.js');
  const args = [
    cli,
    '--linux',
    'dir',
    '--publish',
    'never',
    `-c.electronDist=${options.electronDist}`,
    `-c.electronVersion=${options.electronVersion}`,
    `-c.directories.output=${options.outputDir}`,
  ];
  const { stdout, stderr } = await run(process.execPath, args, {
    cwd: PROJECT_DIR,
    maxBuffer: 64 * 1024 * 1024,
    timeout: 5 * 60_000,
    // No code signing, no telemetry, no publishing: a CI with a tag must not try any of them.
    env: { ...process.env, CSC_IDENTITY_AUTO_DISCOVERY: 'false', ELECTRON_BUILDER_DISABLE_BUILD_CACHE: 'true' },
  });
  const unpacked = (await readdir(options.outputDir)).find((name) => /^linux(-[a-z0-9]+)?-unpacked$/.test(name));
  if (unpacked === undefined) throw new Error(`electron-builder made no linux-*-unpacked folder in ${options.outputDir}:\n${stdout}\n${stderr}`);
  const appOutDir = join(options.outputDir, unpacked);
  return { appOutDir, binary: join(appOutDir, 'softphone'), log: `${stdout}\n${stderr}` };
}

export interface PackageReport {
  problems: string[];
  /** Files in app.asar (archive paths, '/'-rooted). */
  asarFiles: string[];
  /** Files outside the archive, in app.asar.unpacked (archive paths). */
  unpackedFiles: string[];
  /** The fuse wire read back from the packaged binary, by electron-builder.yml key: true enabled, false disabled. */
  fuses: Partial<Record<FuseKey, boolean | 'removed' | 'inherit'>>;
  /** Packages the main bundle requires at run time (externals of scripts/build-electron.mjs). */
  runtimePackages: string[];
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** What the renderer page loads: the files its script and stylesheet tags name (relative URLs). */
export function pageAssets(html: string): string[] {
  const names = new Set<string>();
  for (const match of html.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"/g)) {
    const url = match[1]!;
    if (/^[a-z]+:/i.test(url) || url.startsWith('//')) continue;
    names.add(posix.normalize(posix.join('/dist/renderer', url)));
  }
  return [...names].sort();
}

/** Packages a CommonJS bundle requires by name (not Node's own, not electron). */
export function requiredPackages(bundle: string): string[] {
  const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
  const names = new Set<string>();
  for (const match of bundle.matchAll(/\brequire\("([^"./][^"]*)"\)/g)) {
    const request = match[1]!;
    if (builtins.has(request) || request.startsWith('node:') || request === 'electron') continue;
    names.add(request.startsWith('@') ? request.split('/').slice(0, 2).join('/') : request.split('/')[0]!);
  }
  return [...names].sort();
}

/** Compares the packaged fuse wire with the configured and the required fuses. */
export function checkFuses(wire: Record<number, number>, configured: Partial<Record<FuseKey, boolean>> | null | undefined): { problems: string[]; fuses: PackageReport['fuses'] } {
  const problems: string[] = [];
  const fuses: PackageReport['fuses'] = {};
  for (const key of Object.keys(FUSE_KEYS) as FuseKey[]) {
    const state = wire[FUSE_KEYS[key]];
    fuses[key] = state === FUSE_STATE.enable ? true : state === FUSE_STATE.disable ? false : state === FUSE_STATE.removed ? 'removed' : 'inherit';
  }
  for (const [key, required] of Object.entries(REQUIRED_FUSES) as Array<[FuseKey, boolean]>) {
    if (configured?.[key] !== required) problems.push(`electron-builder.yml electronFuses.${key} must be ${required} (it is ${String(configured?.[key])})`);
  }
  for (const [key, wanted] of Object.entries(configured ?? {}) as Array<[FuseKey, boolean | undefined]>) {
    if (!(key in FUSE_KEYS) || wanted === undefined) continue;
    if (fuses[key] !== wanted) problems.push(`the packaged binary's fuse ${key} is ${String(fuses[key])}, electron-builder.yml says ${wanted}`);
  }
  return { problems, fuses };
}

/** Checks a packaged app folder (resources/app.asar beside the binary). */
export async function checkPackage(run: Pick<PackageRun, 'appOutDir' | 'binary'>, options: { projectDir?: string; fuses?: Partial<Record<FuseKey, boolean>> | null } = {}): Promise<PackageReport> {
  const projectDir = options.projectDir ?? PROJECT_DIR;
  const resources = join(run.appOutDir, 'resources');
  const archive = join(resources, 'app.asar');
  const problems: string[] = [];
  const report: PackageReport = { problems, asarFiles: [], unpackedFiles: [], fuses: {}, runtimePackages: [] };
  if (!existsSync(archive)) {
    problems.push(`no app.asar in ${resources}`);
    return report;
  }
  const entries = listPackage(archive, { isPack: false });
  const files = entries.filter((entry) => {
    const node = statFile(archive, entry.slice(1), false);
    return 'size' in node || 'link' in node;
  });
  report.unpackedFiles = files.filter((entry) => statFile(archive, entry.slice(1), false).unpacked === true).sort();
  report.asarFiles = files.filter((entry) => !report.unpackedFiles.includes(entry)).sort();
  const packed = new Set(report.asarFiles);
  const inArchive = (file: string): boolean => packed.has(file) || report.unpackedFiles.includes(file);
  const read = (file: string): Buffer => extractFile(archive, file.slice(1));
  const need = (file: string, why: string): boolean => {
    if (inArchive(file)) return true;
    problems.push(`app.asar lacks ${file} (${why})`);
    return false;
  };

  // package.json, and the entry it names.
  if (need('/package.json', 'Electron reads it first')) {
    const manifest = JSON.parse(read('/package.json').toString('utf8')) as { main?: string };
    need(`/${posix.normalize(manifest.main ?? 'index.js')}`, 'package.json "main"');
  }
  // The bundles, and the packages the main bundle leaves to node_modules.
  need('/dist/electron/preload.cjs', 'the window’s preload');
  if (need('/dist/electron/main.cjs', 'the main process')) {
    report.runtimePackages = requiredPackages(read('/dist/electron/main.cjs').toString('utf8'));
    for (const name of report.runtimePackages) {
      const manifestPath = `/node_modules/${name}/package.json`;
      if (!need(manifestPath, `main.cjs requires ${name}`)) continue;
      const manifest = JSON.parse(read(manifestPath).toString('utf8')) as { main?: string };
      const main = posix.normalize(posix.join(`/node_modules/${name}`, manifest.main ?? 'index.js'));
      const candidates = [main, `${main}.js`, posix.join(main, 'index.js')];
      if (!candidates.some(inArchive)) problems.push(`app.asar lacks the entry of ${name} (${main})`);
    }
  }
  // The page, and every file it names.
  if (need('/dist/renderer/index.html', 'the window’s page (app://softphone/index.html)')) {
    const assets = pageAssets(read('/dist/renderer/index.html').toString('utf8'));
    if (assets.length === 0) problems.push('dist/renderer/index.html names no script or stylesheet');
    for (const asset of assets) need(asset, 'named by dist/renderer/index.html');
    // And the chunks it loads later: each language but English is one, imported when first chosen.
    const chunks = (await readdir(join(projectDir, 'dist', 'renderer', 'assets'))).filter((name) => name.endsWith('.js'));
    for (const chunk of chunks) need(`/dist/renderer/assets/${chunk}`, 'a script of the page (loaded at start or on demand)');
  }
  // Icons, the customers' voice, the media library, the embedded team's recording notices: each the same bytes as the project's.
  const iconsDir = join(projectDir, 'assets', 'icons');
  const ownFiles = [
    ...(await readdir(iconsDir)).map((name) => `/assets/icons/${name}`),
    '/assets/customer-voice.wav',
    '/assets/colleague-voice.wav',
    '/assets/service-notice.wav',
    ...RECORD_NOTICE_LANGUAGES.map((language) => `/assets/${RECORD_NOTICE_DIR}/${language}.wav`),
    ...SANDBOX_MEDIA.map((entry) => `/assets/sandbox-media/${entry.fileName}`),
  ];
  for (const file of ownFiles) {
    if (!need(file, 'loaded from app.getAppPath() by the app')) continue;
    const original = await readFile(join(projectDir, file.slice(1)));
    if (sha256(read(file)) !== sha256(original)) problems.push(`app.asar's ${file} differs from the project's`);
  }
  // What must be outside the archive is there, and nothing else.
  for (const file of MUST_BE_UNPACKED) {
    if (!report.unpackedFiles.includes(file) || !existsSync(join(resources, 'app.asar.unpacked', file.slice(1)))) problems.push(`${file} must be in app.asar.unpacked`);
  }
  for (const file of report.unpackedFiles) {
    if (!MUST_BE_UNPACKED.includes(file)) problems.push(`${file} is outside app.asar, unchecked by its integrity hash`);
  }
  for (const file of files) {
    if (MUST_NOT_SHIP.some((pattern) => pattern.test(file))) problems.push(`${file} is in the package but nothing in the app loads it`);
  }
  // The updater's configuration.
  const updateConfig = join(resources, 'app-update.yml');
  if (!existsSync(updateConfig)) problems.push('no resources/app-update.yml (electron-builder.yml `publish`)');
  else {
    const text = await readFile(updateConfig, 'utf8');
    if (!/^provider: generic$/m.test(text)) problems.push('resources/app-update.yml does not name the generic provider');
    if (!/^updaterCacheDirName: \S+/m.test(text)) problems.push('resources/app-update.yml has no updaterCacheDirName');
  }
  // The fuses, read back from the packaged binary.
  if (!existsSync(run.binary)) problems.push(`no packaged binary at ${run.binary}`);
  else {
    const wire = (await getCurrentFuseWire(run.binary)) as unknown as Record<number, number>;
    const fuses = checkFuses(wire, options.fuses);
    report.fuses = fuses.fuses;
    problems.push(...fuses.problems);
  }
  return report;
}

/** Builds (unless told not to), packages into a temporary folder and checks; the folder is removed unless `keep`. */
export async function packageAndCheck(options: { build: boolean; keep?: boolean }): Promise<PackageReport & { appOutDir: string; seconds: number }> {
  const started = Date.now();
  if (options.build) await run('npm', ['run', 'build', '--silent'], { cwd: PROJECT_DIR, maxBuffer: 64 * 1024 * 1024 });
  const work = await mkdtemp(join(tmpdir(), 'softphone-package-'));
  try {
    const electronDist = await makeStandInElectron(join(work, 'electron-dist'));
    const packaged = await packageLinuxDir({ outputDir: join(work, 'out'), electronDist, electronVersion: installedElectronVersion() });
    const config = await builderConfig();
    const report = await checkPackage(packaged, { fuses: config.electronFuses });
    if ((await stat(packaged.binary)).size === 0) report.problems.push('the packaged binary is empty');
    return { ...report, appOutDir: packaged.appOutDir, seconds: Math.round((Date.now() - started) / 1000) };
  } finally {
    if (!options.keep) await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const report = await packageAndCheck({ build: !process.argv.includes('--no-build') });
  console.log(`package-check: ${report.asarFiles.length} files in app.asar, ${report.unpackedFiles.length} unpacked, runtime packages ${report.runtimePackages.join(', ')}`);
  console.log(`package-check: fuses ${JSON.stringify(report.fuses)}`);
  for (const problem of report.problems) console.error(`package-check: ${problem}`);
  console.log(`package-check: ${report.problems.length === 0 ? 'ok' : `${report.problems.length} problem(s)`} in ${report.seconds} s`);
  process.exit(report.problems.length === 0 ? 0 : 1);
}
