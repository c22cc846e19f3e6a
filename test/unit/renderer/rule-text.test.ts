// shared/'s rule messages, written in English from the catalogue (shared/i18n/rules.ts), are found
// again in the window and said in its language, values kept; anything else is left as it came.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { NetworkSettingsStore } from '../../../electron/core/network-settings';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import english from '../../../shared/i18n/locales/en/rules.json';
import { rule, term, type RuleId } from '../../../shared/i18n/rules';
import { parseShortcut, applyPreferencesPatch, DEFAULT_PREFERENCES } from '../../../shared/preferences';
import { checkPhoneNumber } from '../../../shared/phone';
import { parseTemplatePayload } from '../../../shared/templates';
import { i18n, setUiLanguage } from '../../../renderer/i18n/i18n';
import { translateRuleText } from '../../../renderer/i18n/rule-text';
import { errorMessage } from '../../../renderer/error-texts';
import { networkErrorsFrom, validateNetworkDraft } from '../../../renderer/store/network-form';
import { settingsErrorsFrom, validateDraft } from '../../../renderer/store/settings-form';
import { checkContent, serverErrorsFrom, textContent } from '../../../renderer/store/composer';

afterEach(async () => {
  await setUiLanguage('en', undefined);
});

const PLURAL_SUFFIX = /_(one|other)$/;
const variablesOf = (template: string): string[] => [...new Set([...template.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!))];

/** Every rule of the catalogue with values for it: a plural once per English form (1, and 7); `digits` are digits (rule-text.ts VALUE_SHAPES). */
function everyRule(): { id: RuleId; values: Record<string, string | number> }[] {
  const out: { id: RuleId; values: Record<string, string | number> }[] = [];
  for (const [group, entries] of Object.entries(english)) {
    if (group === 'terms') continue;
    for (const [key, template] of Object.entries(entries as Record<string, string>)) {
      const plural = PLURAL_SUFFIX.exec(key);
      const id = `${group}.${key.replace(PLURAL_SUFFIX, '')}` as RuleId;
      const values: Record<string, string | number> = {};
      for (const name of variablesOf(template)) values[name] = name === 'count' ? (plural?.[1] === 'one' ? 1 : 7) : name === 'digits' ? 42 : `v-${name}-9`;
      out.push({ id, values });
    }
  }
  return out;
}

describe('every rule of the catalogue', () => {
  const rules = everyRule();

  test('is made in English from its template, its values filled in', () => {
    expect(rule('settings.versionSegment', { example: 'https://gateway.example.com/restapi/v1' })).toBe(
      'must end in the version segment, e.g. https://gateway.example.com/restapi/v1',
    );
    expect(rule('common.atMostCharacters', { count: 1 })).toBe('must be at most 1 character');
    expect(rule('common.atMostCharacters', { count: 20 })).toBe('must be at most 20 characters');
    expect(rules.length).toBeGreaterThan(100);
  });

  test('comes back as the same English in English', () => {
    for (const { id, values } of rules) {
      const message = rule(id, values);
      expect(translateRuleText(message), id).toBe(message);
    }
  });

  test('is said with its own Spanish template, every value kept', async () => {
    await setUiLanguage('es', undefined);
    for (const { id, values } of rules) {
      const message = rule(id, values);
      const spanish = translateRuleText(message);
      expect(spanish, id).toBe(i18n.t(`rules:${id}` as never, values));
      expect(spanish, id).not.toBe(message);
      for (const value of Object.values(values)) expect(spanish, `${id} keeps ${value}`).toContain(String(value));
    }
  });

  test('picks the plural form of each language', async () => {
    await setUiLanguage('ar', undefined);
    expect(translateRuleText(rule('messages.atMostButtons', { count: 3 }))).toBe('يجب ألا يتجاوز 3 أزرار');
    expect(translateRuleText(rule('common.atMostCharacters', { count: 20 }))).toBe('يجب ألا يتجاوز 20 حرفًا');
    await setUiLanguage('es', undefined);
    expect(translateRuleText(rule('messages.atLeastMinutes', { count: 1 }))).toBe('debe ser al menos 1 minuto');
  });
});

describe('what the catalogue did not make', () => {
  test('is left as it came', async () => {
    await setUiLanguage('es', undefined);
    for (const message of ['The gateway is down for maintenance', 'gatewayUrl: the gateway said no', 'must be purple', '', 'Phone number: call me maybe']) {
      expect(translateRuleText(message)).toBe(message);
    }
  });

  test('a plural template does not take text whose count is not a number', async () => {
    await setUiLanguage('es', undefined);
    expect(translateRuleText('must be at most 1,000 characters')).toBe('must be at most 1,000 characters');
    expect(translateRuleText('must be at most many characters')).toBe('must be at most many characters');
    expect(translateRuleText(rule('common.atMostCharacters', { count: 1000 }))).not.toBe(rule('common.atMostCharacters', { count: 1000 }));
  });
});

describe('right to left', () => {
  test('in Arabic a number, a combination or an address keeps its order (an isolate); a translated word does not need one', async () => {
    await setUiLanguage('ar', undefined);
    const said = translateRuleText(rule('phone.unverified', { number: '+44 20 7946 0958' }));
    expect(said).toContain('\u2066+44 20 7946 0958\u2069');
    await setUiLanguage('es', undefined);
    expect(translateRuleText(rule('phone.unverified', { number: '+44 20 7946 0958' }))).not.toContain('\u2066');
  });
});

describe('what the window puts around a rule', () => {
  test('a capital at the start stays a capital; a field path, several rules and hints after a dash are kept', async () => {
    await setUiLanguage('es', undefined);
    const example = 'https://gateway.example.com/restapi/v1';
    expect(translateRuleText(`M${rule('settings.versionSegment', { example }).slice(1)}`)).toBe(`Debe terminar en el segmento de versión, p. ej., ${example}`);
    expect(translateRuleText(`gatewayUrl: ${rule('common.required')}; relayUrl: ${rule('settings.httpUrl', { what: term('relayUrl') })}`)).toBe(
      'gatewayUrl: es obligatorio; relayUrl: debe ser una URL http:// o https:// (la URL del relay)',
    );
    const pasted = parseTemplatePayload('{"name": "a",, }');
    expect(pasted.ok).toBe(false);
    if (!pasted.ok) {
      expect(pasted.error.message).toMatch(/^The pasted text is not valid JSON at line 1, column \d+: .+ — a comma stands before a closing bracket$/);
      expect(errorMessage(pasted.error)).toMatch(/^El texto pegado no es un JSON válido en la línea 1, columna \d+: .+ — hay una coma antes de un corchete o llave de cierre$/);
    }
  });

  test('a shortcut refusal names the action in the language; the words it takes are translated too', async () => {
    const reserved = applyPreferencesPatch(DEFAULT_PREFERENCES, { shortcuts: { mute: 'Ctrl+Shift+I' } });
    const taken = applyPreferencesPatch(DEFAULT_PREFERENCES, { shortcuts: { mute: 'Ctrl+Shift+A' } });
    const noKey = parseShortcut('Ctrl+Shift');
    expect(reserved.ok || taken.ok || noKey.ok).toBe(false);
    if (reserved.ok || taken.ok || noKey.ok) return;
    expect(errorMessage(taken.error)).toBe('shortcuts.mute (Mute): Ctrl+Shift+A is already the shortcut for Answer');
    await setUiLanguage('es', undefined);
    expect(errorMessage(reserved.error)).toBe('shortcuts.mute (Silenciar): Ctrl+Shift+I está reservado para las herramientas para desarrolladores');
    expect(errorMessage(taken.error)).toBe('shortcuts.mute (Silenciar): Ctrl+Shift+A ya es el atajo de Contestar');
    expect(errorMessage(noKey.error)).toBe('no tiene tecla: agrega una letra, un dígito o F1–F24');
    // The Electron host's refusal of a global shortcut another application holds.
    const held = { code: 'invalid_input' as const, message: 'shortcuts.answer (Answer): Ctrl+Shift+A is taken by another application; choose another for a global shortcut' };
    expect(errorMessage(held)).toBe('shortcuts.answer (Contestar): Ctrl+Shift+A lo usa otra aplicación; elige otro para un atajo global');
  });

  test('a phone number\'s refusal keeps the field\'s name before it, in the language', async () => {
    const short = checkPhoneNumber('+44 20');
    expect(short.ok).toBe(false);
    if (short.ok) return;
    await setUiLanguage('hi', undefined);
    expect(errorMessage(short.error)).toBe('फ़ोन नंबर: बहुत छोटा है');
  });
});

describe('the main process\'s own refusals', () => {
  test('a TURN server saved without its username or password: the field\'s path stays, the rule and the credential\'s name are said in the language', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'rule-text-turn-'));
    try {
      const store = new NetworkSettingsStore({ dataDir, secrets: new MemorySecretStore() });
      const noUsername = await store.save({ servers: ['turn:turn.example.com'], turnPassword: 'turn-pw-7f3a9c2e51', relayOnly: false });
      const noPassword = await store.save({ servers: ['turns:turn.example.com:443'], turnUsername: 'agent-7', relayOnly: false });
      expect(noUsername.ok || noPassword.ok).toBe(false);
      if (noUsername.ok || noPassword.ok) return;
      expect(noUsername.error.message).toBe('turnUsername: the TURN username is required for a turn: or turns: server');
      await setUiLanguage('es', undefined);
      expect(errorMessage(noUsername.error)).toBe('turnUsername: se necesita el usuario TURN para un servidor turn: o turns:');
      expect(errorMessage(noPassword.error)).toBe('turnPassword: se necesita la contraseña TURN para un servidor turn: o turns:');
      await setUiLanguage('ar', undefined);
      expect(errorMessage(noPassword.error)).toBe('turnPassword: يجب إدخال كلمة مرور TURN لخادم turn: أو turns:');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the forms show the rules in the UI\'s language', () => {
  test('settings: live, and from the main process', async () => {
    await setUiLanguage('pt-BR', undefined);
    const checked = validateDraft({ gatewayUrl: 'https://gateway.example.com/restapi', apiKey: 'short', productSegment: 'chatapp', relayUrl: '', agentToken: '', defaultCountry: '' });
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.errors.gatewayUrl).toBe('Deve terminar no segmento de versão, por exemplo, https://gateway.example.com/restapi/v1');
    expect(checked.errors.apiKey).toBe('A chave de API deve ter pelo menos 8 caracteres');
    expect(checked.errors.relayUrl).toBe('É obrigatório');
    const placed = settingsErrorsFrom({ field: 'gatewayUrl', message: `gatewayUrl: ${rule('common.required')}; the relay refused the token` });
    expect(placed).toEqual({ fields: { gatewayUrl: 'É obrigatório' }, form: 'the relay refused the token' });
  });

  test('network: a server\'s rule after its line, a field\'s as a sentence', async () => {
    await setUiLanguage('id', undefined);
    const checked = validateNetworkDraft({ servers: 'stun:ok.example.com\n\nhttps://x.example.com', turnUsername: '', turnPassword: '', relayOnly: false }, null);
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.errors.servers).toBe(`Baris 3: ${i18n.t('rules:network.iceUrlGot', { url: '"https://x.example.com"' })}`);
    const placed = networkErrorsFrom({ field: 'turnUsername', message: `turnUsername: ${rule('network.credentialTooLong', { what: term('turnUsername'), count: 512 })}` }, [1]);
    expect(placed.fields.turnUsername).toBe('Nama pengguna TURN terlalu panjang (maksimal 512 karakter)');
  });

  test('composer: a live rule and one the main process placed', async () => {
    await setUiLanguage('ar', undefined);
    expect(checkContent(textContent(' ')).errors['text.body']).toBe('يجب ألا يكون فارغًا');
    expect(serverErrorsFrom({ field: 'content.image.link', message: `content.image.link: ${rule('common.httpAddress')}` })).toEqual({
      'image.link': 'يجب أن يكون عنوان http:// أو https://',
    });
  });

  test('the pseudo-locale brackets a rule and the words inside it', async () => {
    await setUiLanguage('en-XA', undefined);
    expect(translateRuleText(rule('settings.secretNoSpaces', { what: term('apiKey') }))).toBe('⟦⟦ţĥé ÅÞÎ ķéý⟧ ɱûšţ ñöţ çöñţåîñ šþåçéš⟧');
  });
});
