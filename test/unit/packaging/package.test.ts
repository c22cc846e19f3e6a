// CI packages the app offline (`electron-builder --linux dir` with a stand-in Electron, see
// scripts/package-check.ts) and checks what came out: app.asar holds what the app loads, nothing is
// outside it, and the packaged binary's fuses are electron-builder.yml's. `npm test` builds dist/
// first; run alone, this file builds it when it is missing. About 15–40 s, mostly electron-builder.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createPackage } from '@electron/asar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkFuses,
  checkPackage,
  FUSE_STATE,
  makeStandInElectron,
  MUST_BE_UNPACKED,
  packageAndCheck,
  pageAssets,
  PROJECT_DIR,
  REQUIRED_FUSES,
  requiredPackages,
  type PackageReport,
} from '../../../scripts/package-check';

const run = promisify(execFile);
const PACKAGING_MS = 5 * 60_000;

describe('the packaged app (electron-builder --linux dir, offline)', () => {
  let report: PackageReport & { appOutDir: string; seconds: number };

  beforeAll(async () => {
    const built = ['dist/electron/main.cjs', 'dist/electron/preload.cjs', 'dist/renderer/index.html'].every((file) => existsSync(join(PROJECT_DIR, file)));
    if (!built) await run('npm', ['run', 'build', '--silent'], { cwd: PROJECT_DIR, maxBuffer: 64 * 1024 * 1024 });
    report = await packageAndCheck({ build: false, keep: true });
  }, PACKAGING_MS);
  afterAll(async () => {
    if (report) await rm(join(report.appOutDir, '..', '..'), { recursive: true, force: true });
  });

  it('has no problem', () => {
    expect(report.problems).toEqual([]);
  });

  it('holds in app.asar what the app loads', () => {
    expect(report.asarFiles).toEqual(
      expect.arrayContaining([
        '/package.json',
        '/dist/electron/main.cjs',
        '/dist/electron/preload.cjs',
        '/dist/renderer/index.html',
        '/assets/icons/tray-icon.png',
        '/assets/icons/tray-available@2x.png',
        '/assets/customer-voice.wav',
        '/assets/record-notice/en_US.wav',
        '/assets/sandbox-media/clip.mp4',
        '/node_modules/werift/package.json',
      ]),
    );
    expect(report.asarFiles.some((file) => /^\/dist\/renderer\/assets\/index-[^/]+\.js$/.test(file))).toBe(true);
    // The hold music, bundled by Vite next to the page's scripts (renderer/webrtc/hold-music.ts).
    expect(report.asarFiles.some((file) => /^\/dist\/renderer\/assets\/hold-music-[^/]+\.wav$/.test(file))).toBe(true);
    expect(report.runtimePackages).toEqual(expect.arrayContaining(['opusscript', 'undici', 'werift']));
    expect(report.asarFiles.filter((file) => file.endsWith('.map'))).toEqual([]);
  });

  it('leaves outside the archive exactly what must be read by path (nothing)', () => {
    expect(report.unpackedFiles).toEqual([...MUST_BE_UNPACKED]);
    expect(existsSync(join(report.appOutDir, 'resources', 'app.asar.unpacked'))).toBe(MUST_BE_UNPACKED.length > 0);
  });

  it('flips the fuses electron-builder.yml asks for in the packaged binary', () => {
    expect(report.fuses).toEqual({ ...REQUIRED_FUSES, loadBrowserProcessSpecificV8Snapshot: false });
  });
});

describe('the package checks', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'softphone-package-check-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('find what a bad package lacks or carries, and unflipped fuses', async () => {
    const app = join(dir, 'app');
    await mkdir(join(app, 'dist', 'renderer', 'assets'), { recursive: true });
    await mkdir(join(app, 'assets', 'screenshots'), { recursive: true });
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'softphone', main: 'dist/electron/main.cjs' }));
    await writeFile(join(app, 'dist', 'renderer', 'index.html'), '<script type="module" src="./assets/index-1.js"></script><link rel="stylesheet" href="./assets/index-1.css">');
    await writeFile(join(app, 'dist', 'renderer', 'assets', 'index-1.js'), '');
    await writeFile(join(app, 'dist', 'renderer', 'assets', 'index-1.js.map'), '{}');
    await writeFile(join(app, 'assets', 'screenshots', 'incoming-call.png'), '');
    const out = join(dir, 'linux-unpacked');
    await makeStandInElectron(out);
    const { rename } = await import('node:fs/promises');
    await rename(join(out, 'electron'), join(out, 'softphone'));
    await createPackage(app, join(out, 'resources', 'app.asar'));

    const found = await checkPackage({ appOutDir: out, binary: join(out, 'softphone') }, { fuses: { ...REQUIRED_FUSES } });
    expect(found.problems).toEqual(
      expect.arrayContaining([
        'app.asar lacks /dist/electron/main.cjs (package.json "main")',
        'app.asar lacks /dist/electron/preload.cjs (the window’s preload)',
        'app.asar lacks /dist/renderer/assets/index-1.css (named by dist/renderer/index.html)',
        'app.asar lacks /assets/customer-voice.wav (loaded from app.getAppPath() by the app)',
        'app.asar lacks /assets/icons/tray-icon.png (loaded from app.getAppPath() by the app)',
        '/dist/renderer/assets/index-1.js.map is in the package but nothing in the app loads it',
        '/assets/screenshots/incoming-call.png is in the package but nothing in the app loads it',
        'no resources/app-update.yml (electron-builder.yml `publish`)',
        "the packaged binary's fuse runAsNode is true, electron-builder.yml says false",
        "the packaged binary's fuse grantFileProtocolExtraPrivileges is true, electron-builder.yml says false",
        "the packaged binary's fuse onlyLoadAppFromAsar is false, electron-builder.yml says true",
      ]),
    );
  });

  it('refuse a configuration that drops a required fuse', () => {
    const wire: Record<number, number> = { 0: FUSE_STATE.enable };
    const { problems } = checkFuses(wire, { ...REQUIRED_FUSES, runAsNode: true });
    expect(problems).toContain('electron-builder.yml electronFuses.runAsNode must be false (it is true)');
    expect(checkFuses(wire, { onlyLoadAppFromAsar: true }).problems).toContain('electron-builder.yml electronFuses.grantFileProtocolExtraPrivileges must be false (it is undefined)');
  });

  it('read the page’s files and the bundle’s packages', () => {
    expect(pageAssets('<script type="module" crossorigin src="./assets/index-a.js"></script><link rel="icon" href="data:,"><link rel="stylesheet" crossorigin href="./assets/index-b.css">')).toEqual([
      '/dist/renderer/assets/index-a.js',
      '/dist/renderer/assets/index-b.css',
    ]);
    expect(requiredPackages('require("node:fs");require("fs");require("electron");require("werift");require("@scope/pkg/sub");require("undici");require("./local")')).toEqual(['@scope/pkg', 'undici', 'werift']);
  });
});
