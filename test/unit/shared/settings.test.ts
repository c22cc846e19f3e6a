import { describe, expect, it } from 'vitest';
import {
  accountSettingsInputSchema,
  countrySchema,
  gatewayUrlSchema,
  productSegmentSchema,
  storedSettingsSchema,
} from '../../../shared/settings';
import { parseWith } from '../../../shared/validation';

const BASE = { gatewayUrl: 'https://gateway.example.com/restapi/v1', relayUrl: 'https://relay.example.com' };

function refusal(input: unknown): { field: string | undefined; message: string } {
  const result = parseWith(accountSettingsInputSchema, input);
  if (result.ok) throw new Error(`expected a refusal of ${JSON.stringify(input)}`);
  expect(result.error.code).toBe('invalid_input');
  return { field: result.error.field, message: result.error.message };
}

describe('accountSettingsInputSchema', () => {
  it('accepts the smallest account and fills in the product word', () => {
    expect(parseWith(accountSettingsInputSchema, BASE)).toEqual({ ok: true, value: { ...BASE, productSegment: 'chatapp' } });
  });

  it('accepts a complete account and trims what was typed around the values', () => {
    const result = parseWith(accountSettingsInputSchema, {
      gatewayUrl: '  https://gateway.example.com/restapi/v1/ ',
      apiKey: '  k3y-0123456789abcdef ',
      productSegment: ' acme_chat ',
      relayUrl: ' http://127.0.0.1:8787 ',
      agentToken: 'agent-token-0123456789',
      defaultCountry: 'GB',
    });
    expect(result).toEqual({
      ok: true,
      value: {
        gatewayUrl: 'https://gateway.example.com/restapi/v1/',
        apiKey: 'k3y-0123456789abcdef',
        productSegment: 'acme_chat',
        relayUrl: 'http://127.0.0.1:8787',
        agentToken: 'agent-token-0123456789',
        defaultCountry: 'GB',
      },
    });
  });

  describe('gatewayUrl: http(s), ending in the version segment (gateway-spec.md: {base_url} ends in /restapi/v1)', () => {
    it.each([
      'https://gateway.example.com/restapi/v1',
      'https://gateway.example.com/restapi/v1/',
      'http://127.0.0.1:4010/restapi/v1',
      'HTTPS://GATEWAY.EXAMPLE.COM/restapi/v1',
      'https://gateway.example.com/restapi/v2',
      'https://gateway.example.com/restapi/v1?region=eu',
    ])('accepts %s', (gatewayUrl) => {
      expect(parseWith(accountSettingsInputSchema, { ...BASE, gatewayUrl }).ok).toBe(true);
    });

    it.each([
      ['https://gateway.example.com/restapi', 'must end in the version segment'],
      ['https://gateway.example.com/', 'must end in the version segment'],
      ['https://gateway.example.com', 'must end in the version segment'],
      ['https://gateway.example.com/restapi/v1/chatapp', 'must end in the version segment'],
      ['https://gateway.example.com/restapi/version1', 'must end in the version segment'],
      ['ftp://gateway.example.com/restapi/v1', 'must be an http:// or https:// URL (the gateway base URL)'],
      ['ws://gateway.example.com/restapi/v1', 'must be an http:// or https:// URL'],
      ['gateway.example.com/restapi/v1', 'must be an http:// or https:// URL'],
      ['not a url', 'must be an http:// or https:// URL'],
      ['https://', 'must be an http:// or https:// URL'],
      ['https:///restapi/v1', 'must be an http:// or https:// URL'],
      ['javascript:alert(1)//v1', 'must be an http:// or https:// URL'],
      ['', 'is required'],
      ['   ', 'is required'],
    ])('refuses %j: %s', (gatewayUrl, rule) => {
      const { field, message } = refusal({ ...BASE, gatewayUrl });
      expect(field).toBe('gatewayUrl');
      expect(message).toContain(`gatewayUrl: ${rule}`);
    });

    it('refuses a missing or non-string gateway URL', () => {
      expect(refusal({ relayUrl: BASE.relayUrl })).toMatchObject({ field: 'gatewayUrl', message: expect.stringContaining('is required') });
      expect(refusal({ ...BASE, gatewayUrl: 42 }).field).toBe('gatewayUrl');
    });

    it('never throws, whatever the string', () => {
      for (const v of ['::', 'http://[', 'http://a b/v1', '%', 'https://exa mple.com/restapi/v1', '\u0000']) {
        expect(() => gatewayUrlSchema.safeParse(v)).not.toThrow();
        expect(gatewayUrlSchema.safeParse(v).success).toBe(false);
      }
    });
  });

  describe('relayUrl: http(s)', () => {
    it.each(['https://relay.example.com', 'http://127.0.0.1:8787/', 'https://relay.example.com/team/42'])('accepts %s', (relayUrl) => {
      expect(parseWith(accountSettingsInputSchema, { ...BASE, relayUrl }).ok).toBe(true);
    });

    it.each(['wss://relay.example.com', 'relay.example.com', '', 'not a url'])('refuses %j', (relayUrl) => {
      const { field, message } = refusal({ ...BASE, relayUrl });
      expect(field).toBe('relayUrl');
      expect(message).toMatch(/relayUrl: (is required|must be an http:\/\/ or https:\/\/ URL \(the relay URL\))/);
    });
  });

  describe('productSegment: one path segment (protocol.md: a setting, "chatapp" by default)', () => {
    it.each(['chatapp', 'acme', 'acme-chat', 'acme_chat', 'Chat2', 'a', 'a'.repeat(32)])('accepts %j', (productSegment) => {
      const result = parseWith(accountSettingsInputSchema, { ...BASE, productSegment });
      expect(result.ok && result.value.productSegment).toBe(productSegment);
    });

    it.each(['', 'acme/chat', '../chat', 'acme chat', '-acme', '_acme', 'a'.repeat(33), 'chät', 'acme.chat'])('refuses %j', (productSegment) => {
      const { field, message } = refusal({ ...BASE, productSegment });
      expect(field).toBe('productSegment');
      expect(message).toContain('must be one path segment of letters, digits, "-" or "_"');
    });

    it('refuses a non-string product word', () => {
      expect(refusal({ ...BASE, productSegment: 7 }).field).toBe('productSegment');
      expect(productSegmentSchema.safeParse(null).success).toBe(false);
    });
  });

  describe.each([
    ['apiKey', 'the API key'],
    ['agentToken', 'the agent token'],
  ])('%s: a secret', (key, what) => {
    it('may be left blank or out, which keeps the stored one', () => {
      expect(parseWith(accountSettingsInputSchema, { ...BASE, [key]: '' })).toEqual({ ok: true, value: { ...BASE, productSegment: 'chatapp', [key]: '' } });
      const absent = parseWith(accountSettingsInputSchema, BASE);
      expect(absent.ok && key in absent.value).toBe(false);
    });

    it('accepts 8 characters and more, without spaces', () => {
      for (const v of ['12345678', 'sk_live_0123456789abcdefABCDEF', 'x'.repeat(4096), 'a.b-c_d~e+f/g=']) {
        const result = parseWith(accountSettingsInputSchema, { ...BASE, [key]: v });
        expect(result.ok, v.slice(0, 20)).toBe(true);
      }
    });

    it.each([
      ['1234567', 'must be at least 8 characters'],
      ['   ', 'must be at least 8 characters'],
      ['abcd efgh ijkl', 'must not contain spaces'],
      ['abcdefgh\tijkl', 'must not contain spaces'],
      ['abcdefgh\nijkl', 'must not contain spaces'],
      ['x'.repeat(4097), 'is too long'],
    ])('refuses %j: %s', (v, rule) => {
      const { field, message } = refusal({ ...BASE, [key]: v });
      expect(field).toBe(key);
      expect(message).toContain(`${key}: ${what} ${rule}`);
    });

    it('refuses a non-string secret', () => {
      expect(refusal({ ...BASE, [key]: 12345678 }).field).toBe(key);
      expect(refusal({ ...BASE, [key]: null }).field).toBe(key);
    });
  });

  describe('defaultCountry: two capital letters, or blank', () => {
    it.each(['GB', 'US', 'IN', ''])('accepts %j', (defaultCountry) => {
      expect(parseWith(accountSettingsInputSchema, { ...BASE, defaultCountry }).ok).toBe(true);
    });

    it.each(['gb', 'GBR', 'G', 'U.S.', '44', ' G'])('refuses %j', (defaultCountry) => {
      const { field, message } = refusal({ ...BASE, defaultCountry });
      expect(field).toBe('defaultCountry');
      expect(message).toContain('must be a two-letter country code such as GB or US');
    });
  });

  it('refuses members it does not know (the secrets have their own names)', () => {
    const { field, message } = refusal({ ...BASE, api_key: 'abcdefgh12345' });
    expect(field).toBe('(root)');
    expect(message).toContain('Unrecognized key: "api_key"');
  });

  it('refuses what is not an object', () => {
    for (const input of [null, 'https://gateway.example.com/restapi/v1', [], 1]) expect(refusal(input).field).toBe('(root)');
  });
});

describe('storedSettingsSchema', () => {
  const stored = { gatewayUrl: BASE.gatewayUrl, productSegment: 'chatapp', relayUrl: BASE.relayUrl, defaultCountry: 'US' };

  it('reads back what was stored', () => {
    expect(parseWith(storedSettingsSchema, stored)).toEqual({ ok: true, value: stored });
    const { defaultCountry: _omit, ...withoutCountry } = stored;
    expect(parseWith(storedSettingsSchema, withoutCountry)).toEqual({ ok: true, value: withoutCountry });
  });

  it('never reads secrets back from the settings file', () => {
    const result = parseWith(storedSettingsSchema, { ...stored, apiKey: 'k3y-0123456789', agentToken: 'agent-0123456789' });
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.value).not.toHaveProperty('apiKey');
      expect(result.value).not.toHaveProperty('agentToken');
    }
  });

  it.each([
    ['gatewayUrl', 'https://gateway.example.com/restapi'],
    ['gatewayUrl', 'garbage'],
    ['productSegment', undefined], // stored settings always carry it
    ['productSegment', 'a/b'],
    ['relayUrl', 'file:///etc/passwd'],
    ['defaultCountry', ''], // the settings screen's blank means "none": it is not stored
    ['defaultCountry', 'gb'],
  ])('refuses a file whose %s is %j', (key, value) => {
    const input: Record<string, unknown> = { ...stored, [key]: value };
    if (value === undefined) delete input[key];
    const result = parseWith(storedSettingsSchema, input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.field).toBe(key);
  });

  it('refuses a corrupt file', () => {
    for (const input of [null, '', '{"gatewayUrl":', 42, []]) expect(parseWith(storedSettingsSchema, input).ok).toBe(false);
  });
});

describe('countrySchema', () => {
  it('is what the phone helpers take as a default country', () => {
    expect(countrySchema.safeParse('GB').success).toBe(true);
    expect(countrySchema.safeParse('').success).toBe(false);
  });
});
