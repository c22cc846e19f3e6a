import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = join(import.meta.dirname, '../../..');

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
});
