import { describe, expect, it } from 'vitest';
import { draftFromSettings, draftToInput, settingsErrorsFrom, settingsFieldOf, validateDraft } from '../../../renderer/store/settings-form';
import { accountSettings } from './fixtures';
import { commandSchemas } from '../../../shared/api';
import { parseWith } from '../../../shared/validation';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { SettingsStore } from '../../../electron/core/settings-store';

describe('the settings form', () => {
  it('starts from defaults without settings', () => {
    expect(draftFromSettings(null)).toEqual({ gatewayUrl: '', apiKey: '', productSegment: 'chatapp', relayUrl: '', agentToken: '', defaultCountry: '' });
  });

  it('reports every broken field at once, as sentences', () => {
    const checked = validateDraft({ gatewayUrl: 'not a url', apiKey: 'short', productSegment: 'a/b', relayUrl: '', agentToken: '', defaultCountry: 'gbr' });
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(Object.keys(checked.errors).sort()).toEqual(['apiKey', 'defaultCountry', 'gatewayUrl', 'productSegment', 'relayUrl']);
    expect(checked.errors.gatewayUrl).toMatch(/^Must be an http:\/\/ or https:\/\/ URL/);
    expect(checked.errors.apiKey).toMatch(/at least 8 characters/);
    expect(checked.errors.defaultCountry).toMatch(/two-letter country code/);
  });

  it('accepts a complete account, blank secrets meaning "keep"', () => {
    const draft = { ...draftFromSettings(accountSettings), defaultCountry: 'gb' };
    const checked = validateDraft(draft);
    expect(checked).toEqual({ ok: true, input: { ...draftToInput(draft), defaultCountry: 'GB' } });
    expect(checked.ok && checked.input.apiKey).toBe('');
  });

  it('requires the gateway URL to end in the version segment', () => {
    const checked = validateDraft({ ...draftFromSettings(accountSettings), gatewayUrl: 'https://gateway.example.com/restapi' });
    expect(checked.ok ? null : checked.errors.gatewayUrl).toMatch(/version segment/);
  });

  it('finds the field of a main-process error, with or without the "settings." prefix', () => {
    expect(settingsFieldOf('settings.relayUrl')).toBe('relayUrl');
    expect(settingsFieldOf('gatewayUrl')).toBe('gatewayUrl');
    expect(settingsFieldOf('settings')).toBeUndefined();
    expect(settingsFieldOf(undefined)).toBeUndefined();
  });

  it('puts each field\u2019s rule of an invalid_input refusal next to its field', () => {
    // As a host refuses saveSettings: the command's payload checked with its schema.
    const refused = parseWith(commandSchemas.saveSettings, {
      settings: { gatewayUrl: 'https://gateway.example.com/restapi', relayUrl: 'https://relay.example.com', agentToken: 'two words here' },
    });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.error).toMatchObject({
      field: 'settings.gatewayUrl',
      message: 'settings.gatewayUrl: must end in the version segment, e.g. https://gateway.example.com/restapi/v1; settings.agentToken: the agent token must not contain spaces',
    });
    expect(settingsErrorsFrom(refused.error)).toEqual({
      fields: { gatewayUrl: 'Must end in the version segment, e.g. https://gateway.example.com/restapi/v1', agentToken: 'The agent token must not contain spaces' },
      form: null,
    });
  });

  it('says a missing secret main refuses as a sentence beside its field, its English message as it was', async () => {
    // No secret stored and none given: main refuses before writing anything, so no directory is touched.
    const store = new SettingsStore({ dataDir: '/nonexistent/softphone-settings', secrets: new MemorySecretStore() });
    const settings = { gatewayUrl: 'https://gateway.example.com/restapi/v1', relayUrl: 'https://relay.example.com' };
    const noKey = await store.save({ ...settings, agentToken: 'agent_token_1a2b3c4d5e' });
    const noToken = await store.save({ ...settings, apiKey: 'gw_key_9d8c7b6a5f4e' });
    if (noKey.ok || noToken.ok) throw new Error('saved without a secret');
    expect(noKey.error).toMatchObject({ field: 'apiKey', message: 'apiKey: the API key is required' });
    expect(noToken.error).toMatchObject({ field: 'agentToken', message: 'agentToken: the agent token is required' });
    expect(settingsErrorsFrom(noKey.error)).toEqual({ fields: { apiKey: 'The API key is required' }, form: null });
    expect(settingsErrorsFrom(noToken.error)).toEqual({ fields: { agentToken: 'The agent token is required' }, form: null });
  });

  it('puts an error that names no field above the form', () => {
    expect(settingsErrorsFrom({ message: 'The relay refused the agent token' })).toEqual({ fields: {}, form: 'The relay refused the agent token' });
    expect(settingsErrorsFrom({ field: 'settings.relayUrl', message: 'The relay did not answer' })).toEqual({
      fields: { relayUrl: 'The relay did not answer' },
      form: null,
    });
  });
});
