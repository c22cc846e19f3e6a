// Account settings: `<dataDir>/settings.json` for the plain part (storedSettingsSchema), the API key
// and the agent token behind a SecretStore. Neither secret is ever written to settings.json or
// returned: callers outside the main process see PublicSettings.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger, type Logger } from '../../shared/log';
import { term, text } from '../../shared/i18n/text';
import { ok, type Result } from '../../shared/result';
import {
  accountSettingsInputSchema,
  storedSettingsSchema,
  type AccountConfig,
  type AccountSettingsInput,
  type AccountPublicSettings,
  type PublicSettings,
  type SecretStorageKind,
  type StoredSettings,
} from '../../shared/settings';
import { DEFAULT_PRODUCT } from '../../shared/gateway';
import { fieldError, parseWith } from '../../shared/validation';
import { readJsonFile, setAsideCorruptFile, writeJsonFileAtomic } from './json-file';
import type { SecretName, SecretStore } from './secret-store';

const SETTINGS_FILE = 'settings.json';

/** What the renderer may see of an account: everything but the secrets. */
export function publicSettingsFor(
  mode: PublicSettings['mode'],
  stored: StoredSettings | undefined,
  secrets: { hasApiKey: boolean; hasAgentToken: boolean; kind: SecretStorageKind },
): AccountPublicSettings {
  const settings: AccountPublicSettings = {
    mode,
    productSegment: stored?.productSegment ?? DEFAULT_PRODUCT,
    hasApiKey: secrets.hasApiKey,
    hasAgentToken: secrets.hasAgentToken,
    secretStorage: secrets.kind,
  };
  if (stored) {
    settings.gatewayUrl = stored.gatewayUrl;
    settings.relayUrl = stored.relayUrl;
    if (stored.defaultCountry !== undefined) settings.defaultCountry = stored.defaultCountry;
  }
  return settings;
}

export interface SettingsStoreOptions {
  dataDir: string;
  secrets: SecretStore;
  logger?: Logger;
}

export class SettingsStore {
  private readonly path: string;
  private readonly secrets: SecretStore;
  private readonly log: Logger;

  constructor(options: SettingsStoreOptions) {
    this.path = join(options.dataDir, SETTINGS_FILE);
    this.secrets = options.secrets;
    this.log = options.logger ?? createLogger('settings');
  }

  get secretStorage(): SecretStorageKind {
    return this.secrets.kind;
  }

  /** Validates, then stores. A blank secret keeps the stored one; a complete account needs both. */
  async save(input: AccountSettingsInput): Promise<Result<AccountPublicSettings>> {
    const parsed = parseWith(accountSettingsInputSchema, input);
    if (!parsed.ok) return parsed;
    const { apiKey, agentToken, defaultCountry, ...rest } = parsed.value;
    const given: Record<SecretName, string | undefined> = { apiKey: blankToUndefined(apiKey), agentToken: blankToUndefined(agentToken) };
    for (const name of ['apiKey', 'agentToken'] as const) {
      if (given[name] === undefined && (await this.secrets.get(name)) === undefined) {
        return fieldError('invalid_input', name, text('settings.secretRequired', { what: term(name) }));
      }
    }
    const stored: StoredSettings = { ...rest, ...(blankToUndefined(defaultCountry) ? { defaultCountry } : {}) };
    for (const name of ['apiKey', 'agentToken'] as const) {
      const value = given[name];
      if (value !== undefined) await this.secrets.set(name, value);
    }
    await writeJsonFileAtomic(this.path, stored);
    this.log.info('account settings saved', { gatewayUrl: stored.gatewayUrl, relayUrl: stored.relayUrl, productSegment: stored.productSegment });
    return ok(publicSettingsFor('account', stored, { hasApiKey: true, hasAgentToken: true, kind: this.secrets.kind }));
  }

  /** The complete saved account, or undefined when something is missing. */
  async load(): Promise<AccountConfig | undefined> {
    const stored = await this.readStored();
    if (!stored) return undefined;
    const [apiKey, agentToken] = await Promise.all([this.secrets.get('apiKey'), this.secrets.get('agentToken')]);
    if (apiKey === undefined || agentToken === undefined) return undefined;
    return { ...stored, apiKey, agentToken };
  }

  /** Forgets the account: the settings file and both secrets. */
  async clear(): Promise<void> {
    await rm(this.path, { force: true });
    await Promise.all([this.secrets.delete('apiKey'), this.secrets.delete('agentToken')]);
    this.log.info('account settings cleared');
  }

  /** The saved settings as the renderer may see them; mode 'account' when they are complete. */
  async publicSettings(): Promise<AccountPublicSettings> {
    const stored = await this.readStored();
    const [apiKey, agentToken] = await Promise.all([this.secrets.get('apiKey'), this.secrets.get('agentToken')]);
    const hasApiKey = apiKey !== undefined;
    const hasAgentToken = agentToken !== undefined;
    const mode = stored && hasApiKey && hasAgentToken ? 'account' : 'sandbox';
    return publicSettingsFor(mode, stored, { hasApiKey, hasAgentToken, kind: this.secrets.kind });
  }

  private async readStored(): Promise<StoredSettings | undefined> {
    const read = await readJsonFile(this.path);
    if (read.kind === 'missing') return undefined;
    if (read.kind === 'json') {
      const parsed = parseWith(storedSettingsSchema, read.value);
      if (parsed.ok) return parsed.value;
      this.log.warn('settings file invalid', { field: parsed.error.field, reason: parsed.error.message });
    }
    const aside = await setAsideCorruptFile(this.path);
    this.log.warn('settings unreadable; kept aside, continuing without an account', { keptAs: aside });
    return undefined;
  }
}

const blankToUndefined = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : value);
