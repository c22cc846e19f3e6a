// Where the API key and the agent token are kept (style.md 8). The Electron host supplies a store
// backed by the OS keychain (safeStorage); where there is none, the fallback is this visible policy:
// a JSON file only the owner can read ('owner-only-file'). Tests use the in-memory one.
import { chmod } from 'node:fs/promises';
import { z } from 'zod';
import type { SecretStorageKind } from '../../shared/settings';
import { createLogger, type Logger } from '../../shared/log';
import { readJsonFile, setAsideCorruptFile, writeJsonFileAtomic } from './json-file';

/** The secrets the app keeps. */
export const SECRET_NAMES = ['apiKey', 'agentToken'] as const;
export type SecretName = (typeof SECRET_NAMES)[number];

export interface SecretStore {
  readonly kind: SecretStorageKind;
  get(name: string): Promise<string | undefined>;
  set(name: string, value: string): Promise<void>;
  delete(name: string): Promise<void>;
}

export class MemorySecretStore implements SecretStore {
  readonly kind = 'memory' as const;
  private readonly values = new Map<string, string>();

  async get(name: string): Promise<string | undefined> {
    return this.values.get(name);
  }
  async set(name: string, value: string): Promise<void> {
    this.values.set(name, value);
  }
  async delete(name: string): Promise<void> {
    this.values.delete(name);
  }
}

const OWNER_ONLY = 0o600;
const secretsFileSchema = z.record(z.string(), z.string());

/** Secrets in a JSON file with mode 0600. Reads go to the file each time, so two instances agree. */
export class FileSecretStore implements SecretStore {
  readonly kind = 'owner-only-file' as const;
  private readonly log: Logger;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly path: string,
    options: { logger?: Logger } = {},
  ) {
    this.log = options.logger ?? createLogger('secrets');
  }

  async get(name: string): Promise<string | undefined> {
    await this.queue;
    return (await this.readAll())[name];
  }

  set(name: string, value: string): Promise<void> {
    return this.update((all) => ({ ...all, [name]: value }));
  }

  delete(name: string): Promise<void> {
    return this.update(({ [name]: _gone, ...rest }) => rest);
  }

  /** Read-modify-write steps run one at a time so that concurrent sets do not lose each other. */
  private update(change: (all: Record<string, string>) => Record<string, string>): Promise<void> {
    const step = this.queue.then(async () => {
      const next = change(await this.readAll());
      await writeJsonFileAtomic(this.path, next, OWNER_ONLY);
    });
    this.queue = step.catch(() => undefined);
    return step;
  }

  private async readAll(): Promise<Record<string, string>> {
    const read = await readJsonFile(this.path);
    if (read.kind === 'missing') return {};
    const parsed = read.kind === 'json' ? secretsFileSchema.safeParse(read.value) : undefined;
    if (parsed?.success) return parsed.data;
    // Keep the unreadable file (owner-only, like the original) rather than overwrite it.
    const aside = await setAsideCorruptFile(this.path);
    await chmod(aside, OWNER_ONLY).catch(() => undefined);
    this.log.warn('secrets file unreadable; treating it as empty', { keptAs: aside });
    return {};
  }
}
