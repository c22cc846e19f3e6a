// Secrets (the API key, the agent token) kept with Electron's safeStorage, i.e. the OS keychain
// (style.md 8). Where no keychain exists the fallback is explicit and visible: the store reports
// kind 'owner-only-file' (the settings screen shows it) and logs one warning; values are then kept
// unencrypted in a file only the owner can read.
import { chmod, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { safeStorage as electronSafeStorage, type SafeStorage } from 'electron';
import { z } from 'zod';
import { createLogger, type Logger } from '../../shared/log';
import type { SecretStorageKind } from '../../shared/settings';
import { readJsonFile, setAsideCorruptFile, writeJsonFileAtomic } from '../core/json-file';
import type { SecretStore } from '../core/secret-store';

export const SECRETS_FILE_NAME = 'secrets.json';
const OWNER_ONLY = 0o600;

export type SafeStorageApi = Pick<SafeStorage, 'isEncryptionAvailable' | 'encryptString' | 'decryptString' | 'getSelectedStorageBackend'>;

export interface SafeStorageSecretStoreOptions {
  /** app.getPath('userData'); the file is `<userDataDir>/secrets.json`. */
  userDataDir: string;
  safeStorage?: SafeStorageApi;
  platform?: NodeJS.Platform;
  logger?: Logger;
}

const storedSecretSchema = z.strictObject({
  /** 'safeStorage': base64 of the keychain-encrypted bytes; 'plain': base64 of the UTF-8 text. */
  encoding: z.enum(['safeStorage', 'plain']),
  value: z.base64(),
});
type StoredSecret = z.infer<typeof storedSecretSchema>;

const secretsFileSchema = z.strictObject({
  version: z.literal(1),
  secrets: z.record(z.string().min(1).max(200), storedSecretSchema),
});
type SecretsFile = z.infer<typeof secretsFileSchema>;

/** The browser host's owner-only file (electron/core/secret-store.ts FileSecretStore): name → plain value. */
const plainSecretsFileSchema = z.record(z.string(), z.string());

/**
 * True when safeStorage really encrypts. On Linux without a keyring Chromium falls back to the
 * 'basic_text' backend, whose key is a constant in its source: that protects nothing, so it counts
 * as no encryption and takes the visible fallback.
 */
function keychainUsable(safeStorage: SafeStorageApi, platform: NodeJS.Platform): boolean {
  if (!safeStorage.isEncryptionAvailable()) return false;
  return platform !== 'linux' || safeStorage.getSelectedStorageBackend() !== 'basic_text';
}

export class SafeStorageSecretStore implements SecretStore {
  readonly kind: SecretStorageKind;
  readonly filePath: string;
  private readonly encrypting: boolean;
  private readonly safeStorage: SafeStorageApi;
  private readonly platform: NodeJS.Platform;
  private readonly logger: Logger;
  /** Read-modify-write steps run one at a time so that two quick changes cannot lose each other. */
  private queue: Promise<unknown> = Promise.resolve();

  /** Call after app 'ready': before it, safeStorage cannot tell whether a keychain exists. */
  constructor(options: SafeStorageSecretStoreOptions) {
    this.filePath = join(options.userDataDir, SECRETS_FILE_NAME);
    this.safeStorage = options.safeStorage ?? electronSafeStorage;
    this.platform = options.platform ?? process.platform;
    this.logger = options.logger ?? createLogger('secret-store');
    this.encrypting = keychainUsable(this.safeStorage, this.platform);
    this.kind = this.encrypting ? 'os-keychain' : 'owner-only-file';
    if (!this.encrypting) {
      this.logger.warn('no OS keychain available: secrets are stored unencrypted in a file readable only by this user', { file: this.filePath });
    }
  }

  async get(name: string): Promise<string | undefined> {
    await this.queue;
    const entry = (await this.readAll()).get(name);
    if (entry === undefined) return undefined;
    const bytes = Buffer.from(entry.value, 'base64');
    if (entry.encoding === 'plain') return bytes.toString('utf8');
    if (!this.encrypting) {
      this.logger.warn('a secret was stored with the OS keychain, which is not available now: enter it again', { name });
      return undefined;
    }
    try {
      return this.safeStorage.decryptString(bytes);
    } catch (e) {
      this.logger.warn('a stored secret could not be decrypted: enter it again', { name, error: e });
      return undefined;
    }
  }

  set(name: string, value: string): Promise<void> {
    return this.update((secrets) => {
      secrets.set(
        name,
        this.encrypting
          ? { encoding: 'safeStorage', value: this.safeStorage.encryptString(value).toString('base64') }
          : { encoding: 'plain', value: Buffer.from(value, 'utf8').toString('base64') },
      );
      return true;
    });
  }

  delete(name: string): Promise<void> {
    return this.update((secrets) => secrets.delete(name));
  }

  private update(change: (secrets: Map<string, StoredSecret>) => boolean): Promise<void> {
    const step = this.queue.then(async () => {
      const secrets = await this.readAll();
      if (!change(secrets)) return;
      const file: SecretsFile = { version: 1, secrets: Object.fromEntries(secrets) };
      await writeJsonFileAtomic(this.filePath, file, OWNER_ONLY);
    });
    this.queue = step.catch(() => undefined);
    return step;
  }

  private async readAll(): Promise<Map<string, StoredSecret>> {
    const read = await readJsonFile(this.filePath);
    if (read.kind === 'missing') return new Map();
    await this.tightenMode();
    if (read.kind === 'json') {
      const ours = secretsFileSchema.safeParse(read.value);
      if (ours.success) return new Map(Object.entries(ours.data.secrets));
      // Written by the browser host on this machine: take its values over (as plain, like there).
      const plain = plainSecretsFileSchema.safeParse(read.value);
      if (plain.success) {
        return new Map(Object.entries(plain.data).map(([name, value]) => [name, { encoding: 'plain', value: Buffer.from(value, 'utf8').toString('base64') }]));
      }
    }
    // Kept aside (never overwritten) so nothing is lost; the agent enters the secrets again.
    const aside = await setAsideCorruptFile(this.filePath);
    await chmod(aside, OWNER_ONLY).catch(() => undefined);
    this.logger.warn('the secrets file is unreadable and was set aside: enter the secrets again', { keptAs: aside });
    return new Map();
  }

  /** A file that others can read (copied in, or made by hand) is narrowed to the owner. */
  private async tightenMode(): Promise<void> {
    if (this.platform === 'win32') return;
    const { mode } = await stat(this.filePath);
    if ((mode & 0o077) !== 0) {
      this.logger.warn('the secrets file was readable by others: restricting it to this user', { file: this.filePath });
      await chmod(this.filePath, OWNER_ONLY);
    }
  }
}

export function createSafeStorageSecretStore(options: SafeStorageSecretStoreOptions): SafeStorageSecretStore {
  return new SafeStorageSecretStore(options);
}
