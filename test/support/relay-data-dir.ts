// A data directory of its own for each relay a test starts as a process (`--data-dir`): never the
// checkout's relay-data/, never another relay's lock. Its embedded records are copied from a
// directory PGlite made and migrated once per run (initdb costs seconds of CPU each time), kept in
// the folder the unit project's global setup provides (relay-data-template.setup.ts); a process
// outside that run makes its own, removed as it exits.
import { mkdtempSync, rmSync } from 'node:fs';
import { access, cp, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { EmbeddedDatabase } from '../../relay/records/embedded-database';
import { migrate } from '../../relay/records/migrations';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the embedded records every started relay copies are made, once per run. */
    relayDataTemplateRoot: string;
  }
}

export interface RelayDataDir {
  dir: string;
  /** `--data-dir <dir>`, for the relay's command line (the tests' environment has no RELAY_*). */
  flags: string[];
  remove(): Promise<void>;
}

let template: Promise<string> | undefined;

/** A fresh data directory holding migrated embedded records; remove() it after. */
export async function relayDataDir(): Promise<RelayDataDir> {
  const records = await (template ??= makeTemplate());
  const dir = await mkdtemp(join(tmpdir(), 'relay-data-'));
  await cp(records, join(dir, 'records'), { recursive: true });
  return { dir, flags: ['--data-dir', dir], remove: () => rm(dir, { recursive: true, force: true, maxRetries: 5 }) };
}

/**
 * The template's `records` directory, made if no file of this run has made it yet. Files running at
 * once may each make one: each makes it aside and moves it in whole, the first to arrive wins.
 */
async function makeTemplate(): Promise<string> {
  const root = templateRoot();
  const made = join(root, 'records');
  if (await exists(join(made, 'PG_VERSION'))) return made;
  const staging = await mkdtemp(join(root, 'making-'));
  try {
    const db = await EmbeddedDatabase.open(join(staging, 'records'));
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    await rename(join(staging, 'records'), made).catch((error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return made;
}

function templateRoot(): string {
  const provided = inject('relayDataTemplateRoot') as string | undefined;
  if (provided !== undefined) return provided;
  const own = mkdtempSync(join(tmpdir(), 'relay-data-template-'));
  process.once('exit', () => rmSync(own, { recursive: true, force: true }));
  return own;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
