import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SafeStorageSecretStore } from '../../../electron/desktop/safe-storage-secret-store';
import { resetFakeElectron, safeStorage } from './fake-electron';
import { recordingLogger } from './recording-logger';

vi.mock('electron', () => import('./fake-electron'));

const API_KEY = 'sk-live-0123456789abcdef';

describe('SafeStorageSecretStore', () => {
  let dir: string;
  let logger: ReturnType<typeof recordingLogger>;
  const file = () => join(dir, 'secrets.json');
  const store = (platform: NodeJS.Platform = 'linux') => new SafeStorageSecretStore({ userDataDir: dir, logger, platform });
  const warnings = () => logger.records.filter((r) => r.level === 'warn').map((r) => r.msg);

  beforeEach(async () => {
    resetFakeElectron();
    logger = recordingLogger();
    dir = await mkdtemp(join(tmpdir(), 'softphone-secrets-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('with an OS keychain', () => {
    it('round-trips through the keychain, in an owner-only file that holds no plain text', async () => {
      const secrets = store();
      expect(secrets.kind).toBe('os-keychain');
      await secrets.set('apiKey', API_KEY);
      await secrets.set('agentToken', 'agent-token-123');
      expect(await secrets.get('apiKey')).toBe(API_KEY);

      const text = await readFile(file(), 'utf8');
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(Buffer.from(API_KEY).toString('base64'));
      expect(JSON.parse(text)).toMatchObject({ version: 1, secrets: { apiKey: { encoding: 'safeStorage' } } });
      expect((await stat(file())).mode & 0o777).toBe(0o600);
      expect(safeStorage.encryptString).toHaveBeenCalledWith(API_KEY);

      // Another store on the same file (the next launch) reads the same values.
      expect(await store().get('agentToken')).toBe('agent-token-123');
      expect(warnings()).toEqual([]);
    });

    it('deletes a secret and answers undefined for one never stored', async () => {
      const secrets = store();
      await secrets.set('apiKey', API_KEY);
      await secrets.delete('apiKey');
      expect(await secrets.get('apiKey')).toBeUndefined();
      expect(await secrets.get('agentToken')).toBeUndefined();
      await secrets.delete('never-stored');
    });

    it('keeps both of two changes made at once', async () => {
      const secrets = store();
      await Promise.all([secrets.set('apiKey', API_KEY), secrets.set('agentToken', 'agent-token-123')]);
      expect(await store().get('apiKey')).toBe(API_KEY);
      expect(await store().get('agentToken')).toBe('agent-token-123');
    });

    it('answers undefined (with a warning) for a value the keychain cannot decrypt', async () => {
      await writeFile(file(), JSON.stringify({ version: 1, secrets: { apiKey: { encoding: 'safeStorage', value: Buffer.from('garbage').toString('base64') } } }), { mode: 0o600 });
      expect(await store().get('apiKey')).toBeUndefined();
      expect(warnings()).toEqual(['a stored secret could not be decrypted: enter it again']);
    });
  });

  describe('without an OS keychain', () => {
    it('falls back visibly: kind owner-only-file, one warning, values kept in an owner-only file', async () => {
      safeStorage.available = false;
      const secrets = store();
      expect(secrets.kind).toBe('owner-only-file');
      await secrets.set('apiKey', API_KEY);
      await secrets.set('agentToken', 'agent-token-123');
      expect(await secrets.get('apiKey')).toBe(API_KEY);
      expect(await secrets.get('agentToken')).toBe('agent-token-123');
      expect((await stat(file())).mode & 0o777).toBe(0o600);
      expect(JSON.parse(await readFile(file(), 'utf8'))).toMatchObject({ secrets: { apiKey: { encoding: 'plain' } } });
      expect(safeStorage.encryptString).not.toHaveBeenCalled();
      expect(warnings()).toEqual(['no OS keychain available: secrets are stored unencrypted in a file readable only by this user']);
      expect(JSON.stringify(logger.records)).not.toContain(API_KEY);
    });

    it("treats Linux's basic_text backend (a constant key) as no keychain", () => {
      safeStorage.backend = 'basic_text';
      expect(store('linux').kind).toBe('owner-only-file');
      expect(store('darwin').kind).toBe('os-keychain');
    });

    it('does not return a keychain-encrypted value once the keychain is gone', async () => {
      await store().set('apiKey', API_KEY);
      safeStorage.available = false;
      expect(await store().get('apiKey')).toBeUndefined();
      expect(warnings()).toContain('a secret was stored with the OS keychain, which is not available now: enter it again');
    });
  });

  it('reads the browser host’s plain owner-only file', async () => {
    await writeFile(file(), JSON.stringify({ apiKey: API_KEY }), { mode: 0o600 });
    expect(await store().get('apiKey')).toBe(API_KEY);
  });

  it('sets an unreadable file aside instead of overwriting it', async () => {
    await writeFile(file(), '{"version":1,"secrets":', { mode: 0o600 });
    const secrets = store();
    expect(await secrets.get('apiKey')).toBeUndefined();
    expect(warnings()).toEqual(['the secrets file is unreadable and was set aside: enter the secrets again']);
    const names = await readdir(dir);
    expect(names.some((name) => name.startsWith('secrets.json.corrupt-'))).toBe(true);
    await secrets.set('apiKey', API_KEY);
    expect(await store().get('apiKey')).toBe(API_KEY);
  });

  it('narrows a secrets file that others can read to its owner', async () => {
    await store().set('apiKey', API_KEY);
    const { chmod } = await import('node:fs/promises');
    await chmod(file(), 0o644);
    expect(await store().get('apiKey')).toBe(API_KEY);
    expect((await stat(file())).mode & 0o777).toBe(0o600);
    expect(warnings()).toContain('the secrets file was readable by others: restricting it to this user');
  });
});
