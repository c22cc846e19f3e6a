import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_MEDIA, defaultMediaDir } from '../../../sandbox/media-library';
import { inspectMedia } from '../../../shared/media-inspect';
import { file, startMediaFileServer, type MediaFileServer } from '../../support/media-file-server';

const run = promisify(execFile);
const root = join(import.meta.dirname, '../../..');

/** The ESM-only packages the media check needs at run time (shared/media-inspect). */
const INLINED = ['file-type', 'music-metadata', 'mp4box'];

/**
 * Just enough of the `electron` module, in plain CommonJS, for dist/electron/main.cjs to start in
 * Node: the app is ready at once, its folder is STUB_APP_PATH, its data STUB_USER_DATA, and one
 * window whose page is ours; everything else is a do-nothing stand-in. Once the command handlers
 * are registered it runs the checkMediaLink command for each of STUB_CHECKS (a link's "{sandbox}"
 * is the embedded sandbox's address, read from its log line) as the window would, prints
 * "STUB_RESULTS <json>" and exits.
 */
const ELECTRON_STAND_IN = String.raw`
const Module = require('node:module');
const { join } = require('node:path');

function standIn(name, overrides = {}) {
  return new Proxy(function () {}, {
    get(_target, key) {
      if (key in overrides) return overrides[key];
      if (key === 'then' || key === Symbol.iterator) return undefined;
      if (key === Symbol.toPrimitive) return () => name;
      return standIn(name + '.' + String(key));
    },
    apply: () => standIn(name + '()'),
    construct: () => standIn('new ' + name),
  });
}

const appPath = process.env.STUB_APP_PATH;
const appUrl = 'app://softphone/index.html';
const handlers = new Map();
const webContents = standIn('webContents', { isDestroyed: () => false });
const window = standIn('window', { isDestroyed: () => false, webContents });
const electron = standIn('electron', {
  __esModule: false,
  app: standIn('app', {
    requestSingleInstanceLock: () => true,
    whenReady: () => Promise.resolve(),
    getAppPath: () => appPath,
    getPath: () => process.env.STUB_USER_DATA,
  }),
  ipcMain: standIn('ipcMain', { handle: (channel, handler) => handlers.set(channel, handler), removeHandler: (channel) => handlers.delete(channel) }),
  BrowserWindow: new Proxy(function () {}, { construct: () => window, get: (_t, key) => (key === 'getAllWindows' ? () => [window] : standIn('BrowserWindow.' + String(key))) }),
});
const load = Module._load;
Module._load = function (request, ...rest) {
  return request === 'electron' ? electron : load.call(this, request, ...rest);
};

let sandboxUrl;
const log = console.log;
console.log = (line, ...rest) => {
  try {
    const record = JSON.parse(line);
    if (record.msg === 'sandbox listening') sandboxUrl = record.url;
  } catch {}
  log(line, ...rest);
};

const checks = JSON.parse(process.env.STUB_CHECKS);
const started = Date.now();
const poll = setInterval(async () => {
  const handler = handlers.get('softphone:checkMediaLink');
  if (Date.now() - started > 30000) {
    log('STUB_RESULTS ' + JSON.stringify({ error: 'no checkMediaLink handler or sandbox within 30 s' }));
    process.exit(1);
  }
  if (!handler || !sandboxUrl) return;
  clearInterval(poll);
  const results = [];
  for (const check of checks) {
    const link = check.link.replace('{sandbox}', sandboxUrl);
    results.push(await handler({ sender: webContents, senderFrame: { url: appUrl } }, { type: check.type, link }));
  }
  log('STUB_RESULTS ' + JSON.stringify(results));
  process.exit(0);
}, 50);
`;

describe('scripts/build-electron.mjs', () => {
  let outdir: string;
  beforeAll(async () => {
    outdir = await mkdtemp(join(tmpdir(), 'softphone-build-'));
  });
  afterAll(async () => {
    await rm(outdir, { recursive: true, force: true });
  });

  it('bundles a preload that requires nothing but electron (a sandboxed preload can require little else)', async () => {
    await run(process.execPath, ['scripts/build-electron.mjs', '--only', 'preload', '--outdir', outdir], { cwd: root });
    const bundle = await readFile(join(outdir, 'preload.cjs'), 'utf8');
    const required = new Set([...bundle.matchAll(/require\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]));
    expect([...required]).toEqual(['electron']);
    expect(bundle).toContain('exposeInMainWorld');
    expect(bundle).toContain('softphone:push:');
  });

  it('refuses an unknown --only target', async () => {
    await expect(run(process.execPath, ['scripts/build-electron.mjs', '--only', 'renderer', '--outdir', outdir], { cwd: root })).rejects.toMatchObject({ code: 2 });
  });

  describe('the main bundle', () => {
    let files: MediaFileServer;
    beforeAll(async () => {
      await run(process.execPath, ['scripts/build-electron.mjs', '--only', 'main', '--outdir', outdir], { cwd: root });
      const mp3 = SANDBOX_MEDIA.find((m) => m.mimeType === 'audio/mpeg')!;
      // An MP3 dressed as an Ogg: only the bytes (file-type, music-metadata) tell it apart.
      files = await startMediaFileServer({ '/voice.ogg': file(new Uint8Array(await readFile(join(defaultMediaDir(), mp3.fileName))), { contentType: 'audio/ogg' }) });
    }, 60_000);
    afterAll(async () => {
      await files?.close();
    });

    it('inlines the ESM-only packages of the media check: the packaged app requires none of them', async () => {
      const bundle = await readFile(join(outdir, 'main.cjs'), 'utf8');
      const required = new Set([...bundle.matchAll(/require\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]!.split('/')[0]));
      const sources = (JSON.parse(await readFile(join(outdir, 'main.cjs.map'), 'utf8')) as { sources: string[] }).sources;
      for (const name of INLINED) {
        expect(required.has(name), `${name} is required at run time`).toBe(false);
        expect(
          sources.some((s) => s.includes(`node_modules/${name}/`)),
          `${name} is not in the bundle`,
        ).toBe(true);
      }
    });

    it("runs in Node from another folder: the embedded sandbox finds its media in the app's folder, and the bundled check judges real files", async () => {
      const cwd = join(outdir, 'elsewhere');
      await mkdir(join(cwd, 'user-data'), { recursive: true });
      await writeFile(join(outdir, 'electron-stand-in.cjs'), ELECTRON_STAND_IN);
      const byType = (type: string) => SANDBOX_MEDIA.find((m) => m.type === type)!;
      const checks = [
        { type: 'image', link: `{sandbox}/control/media/${byType('image').id}` },
        { type: 'audio', link: `{sandbox}/control/media/${byType('audio').id}` },
        { type: 'video', link: `{sandbox}/control/media/${byType('video').id}` },
        { type: 'audio', link: `${files.url}/voice.ogg` },
      ];
      const output = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ['-r', join(outdir, 'electron-stand-in.cjs'), join(outdir, 'main.cjs')], {
          cwd,
          // The externals (werift, opusscript, undici, ws) come from the project's node_modules, as
          // the packaged app's come from its own.
          env: { ...process.env, NODE_PATH: join(root, 'node_modules'), STUB_APP_PATH: root, STUB_USER_DATA: join(cwd, 'user-data'), STUB_CHECKS: JSON.stringify(checks) },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
        child.on('error', reject);
        child.on('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
      });
      const logs = `${output.stdout}\n${output.stderr}`;
      expect(output.code, logs).toBe(0);
      expect(logs).not.toContain('media library files unavailable');
      expect(logs).not.toContain('customer voice unavailable');
      const results = JSON.parse(/^STUB_RESULTS (.*)$/m.exec(output.stdout)?.[1] ?? 'null') as { ok: boolean; value?: { contentType: string }; error?: { message: string } }[];
      expect(results.slice(0, 3), logs).toMatchObject([
        { ok: true, value: { contentType: 'image/png' } },
        { ok: true, value: { contentType: 'audio/mpeg' } },
        { ok: true, value: { contentType: 'video/mp4' } },
      ]);
      // The same verdict, word for word, as the check from source gives.
      const mp3 = new Uint8Array(await readFile(join(defaultMediaDir(), byType('audio').fileName)));
      const fromSource = await inspectMedia('audio', { head: mp3, size: mp3.length }, { extension: '.ogg', mimeType: 'audio/ogg' });
      expect(fromSource.ok).toBe(false);
      if (!fromSource.ok) expect(results[3]).toMatchObject({ ok: false, error: { code: 'invalid_input', message: `link: ${fromSource.error.message}` } });
    }, 60_000);
  });
});
