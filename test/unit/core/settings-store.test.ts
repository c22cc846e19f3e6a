import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSecretStore, MemorySecretStore } from '../../../electron/core/secret-store';
import { SettingsStore } from '../../../electron/core/settings-store';
import { configureLogging } from '../../../shared/log';
import type { AccountSettingsInput } from '../../../shared/settings';

configureLogging({ sink: () => undefined });

const API_KEY = 'gw_key_9d8c7b6a5f4e';
const AGENT_TOKEN = 'agent_token_1a2b3c4d5e';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'softphone-settings-'));
  dirs.push(dir);
  return dir;
}

const input = (extra: Partial<AccountSettingsInput> = {}): AccountSettingsInput => ({
  gatewayUrl: 'https://gateway.example.com/restapi/v1',
  apiKey: API_KEY,
  relayUrl: 'https://relay.example.com',
  agentToken: AGENT_TOKEN,
  defaultCountry: 'GB',
  ...extra,
});

const open = (dir: string) => new SettingsStore({ dataDir: dir, secrets: new FileSecretStore(join(dir, 'secrets.json')) });

describe('SettingsStore', () => {
  it('round-trips an account across instances, secrets only in the secret store', async () => {
    const dir = await dataDir();
    const saved = await open(dir).save(input());
    expect(saved).toEqual({
      ok: true,
      value: {
        mode: 'account',
        gatewayUrl: 'https://gateway.example.com/restapi/v1',
        productSegment: 'chatapp',
        relayUrl: 'https://relay.example.com',
        defaultCountry: 'GB',
        hasApiKey: true,
        hasAgentToken: true,
        secretStorage: 'owner-only-file',
      },
    });
    expect(JSON.stringify(saved)).not.toContain(API_KEY);

    const reopened = open(dir);
    expect(await reopened.load()).toEqual({
      gatewayUrl: 'https://gateway.example.com/restapi/v1',
      productSegment: 'chatapp',
      relayUrl: 'https://relay.example.com',
      defaultCountry: 'GB',
      apiKey: API_KEY,
      agentToken: AGENT_TOKEN,
    });
    const settingsFile = await readFile(join(dir, 'settings.json'), 'utf8');
    expect(settingsFile).not.toContain(API_KEY);
    expect(settingsFile).not.toContain(AGENT_TOKEN);
    expect(JSON.parse(await readFile(join(dir, 'secrets.json'), 'utf8'))).toEqual({ apiKey: API_KEY, agentToken: AGENT_TOKEN });
    const publicSettings = await reopened.publicSettings();
    expect(publicSettings).toMatchObject({ mode: 'account', hasApiKey: true, hasAgentToken: true });
    expect(JSON.stringify(publicSettings)).not.toContain(API_KEY);
    expect(JSON.stringify(publicSettings)).not.toContain(AGENT_TOKEN);
  });

  it('keeps the secrets file readable by its owner only', async () => {
    const dir = await dataDir();
    await open(dir).save(input());
    expect((await stat(join(dir, 'secrets.json'))).mode & 0o777).toBe(0o600);
  });

  it('names the field that broke a rule', async () => {
    const store = new SettingsStore({ dataDir: await dataDir(), secrets: new MemorySecretStore() });
    const cases: Array<[Partial<AccountSettingsInput>, string]> = [
      [{ gatewayUrl: 'https://gateway.example.com/restapi' }, 'gatewayUrl'],
      [{ relayUrl: 'ftp://relay' }, 'relayUrl'],
      [{ apiKey: 'short' }, 'apiKey'],
      [{ agentToken: 'has a space in it' }, 'agentToken'],
      [{ productSegment: 'two/segments' }, 'productSegment'],
      [{ defaultCountry: 'gbr' }, 'defaultCountry'],
    ];
    for (const [change, field] of cases) {
      const result = await store.save(input(change));
      expect(result.ok, field).toBe(false);
      if (!result.ok) {
        expect(result.error.code).toBe('invalid_input');
        expect(result.error.field).toBe(field);
        expect(result.error.message).toContain(field);
      }
    }
    const extra = await store.save({ ...input(), colour: 'blue' } as AccountSettingsInput);
    expect(extra.ok).toBe(false);
  });

  it('needs both secrets for a complete account, and a blank one keeps the stored one', async () => {
    const dir = await dataDir();
    const store = open(dir);
    const noKey = await store.save(input({ apiKey: '' }));
    expect(noKey.ok).toBe(false);
    if (!noKey.ok) expect(noKey.error).toMatchObject({ code: 'invalid_input', field: 'apiKey' });
    const noToken = await store.save(input({ agentToken: undefined }));
    expect(noToken.ok).toBe(false);
    if (!noToken.ok) expect(noToken.error).toMatchObject({ code: 'invalid_input', field: 'agentToken' });
    expect(await readdir(dir)).toEqual([]);

    expect((await store.save(input())).ok).toBe(true);
    const kept = await store.save(input({ apiKey: '', agentToken: '', relayUrl: 'https://relay2.example.com' }));
    expect(kept.ok).toBe(true);
    expect(await open(dir).load()).toMatchObject({ apiKey: API_KEY, agentToken: AGENT_TOKEN, relayUrl: 'https://relay2.example.com' });
    expect((await store.save(input({ apiKey: 'gw_key_replacement' }))).ok).toBe(true);
    expect((await open(dir).load())?.apiKey).toBe('gw_key_replacement');
  });

  it('drops a blank default country', async () => {
    const dir = await dataDir();
    await open(dir).save(input({ defaultCountry: '' }));
    const loaded = await open(dir).load();
    expect(loaded).toBeDefined();
    expect(loaded).not.toHaveProperty('defaultCountry');
  });

  it('has no account before saving and after clearing', async () => {
    const dir = await dataDir();
    const store = open(dir);
    expect(await store.load()).toBeUndefined();
    expect(await store.publicSettings()).toEqual({ mode: 'sandbox', productSegment: 'chatapp', hasApiKey: false, hasAgentToken: false, secretStorage: 'owner-only-file' });
    await store.save(input());
    await store.clear();
    expect(await open(dir).load()).toBeUndefined();
    expect(JSON.parse(await readFile(join(dir, 'secrets.json'), 'utf8'))).toEqual({});
  });

  it('keeps an unreadable settings file aside and continues without an account', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, 'settings.json'), '{"gatewayUrl": "https://gw.example.com/v1",');
    const store = open(dir);
    expect(await store.load()).toBeUndefined();
    const files = await readdir(dir);
    expect(files.some((f) => f.startsWith('settings.json.corrupt-'))).toBe(true);
    expect(files).not.toContain('settings.json');
  });

  it('treats saved settings that break a rule as unreadable', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, 'settings.json'), JSON.stringify({ gatewayUrl: 'not a url', productSegment: 'chatapp', relayUrl: 'https://r.example.com' }));
    expect(await open(dir).load()).toBeUndefined();
    expect((await readdir(dir)).some((f) => f.startsWith('settings.json.corrupt-'))).toBe(true);
  });
});

describe('FileSecretStore', () => {
  it('keeps concurrent writes and shares values between instances', async () => {
    const dir = await dataDir();
    const path = join(dir, 'secrets.json');
    const a = new FileSecretStore(path);
    await Promise.all([a.set('apiKey', 'k1-abcdefgh'), a.set('agentToken', 't1-abcdefgh'), a.set('other', 'x')]);
    await a.delete('other');
    const b = new FileSecretStore(path);
    expect(await b.get('apiKey')).toBe('k1-abcdefgh');
    expect(await b.get('agentToken')).toBe('t1-abcdefgh');
    expect(await b.get('other')).toBeUndefined();
    expect(b.kind).toBe('owner-only-file');
  });

  it('keeps an unreadable secrets file aside, owner-only, and starts empty', async () => {
    const dir = await dataDir();
    const path = join(dir, 'secrets.json');
    await writeFile(path, 'not json', { mode: 0o600 });
    const store = new FileSecretStore(path);
    expect(await store.get('apiKey')).toBeUndefined();
    const aside = (await readdir(dir)).find((f) => f.startsWith('secrets.json.corrupt-'));
    expect(aside).toBeDefined();
    expect((await stat(join(dir, aside!))).mode & 0o777).toBe(0o600);
  });
});

describe('MemorySecretStore', () => {
  it('gets, sets and deletes', async () => {
    const store = new MemorySecretStore();
    await store.set('apiKey', 'v');
    expect(await store.get('apiKey')).toBe('v');
    await store.delete('apiKey');
    expect(await store.get('apiKey')).toBeUndefined();
    expect(store.kind).toBe('memory');
  });
});
