// shared/'s rule messages, made as codes and values, said in the window's language
// (renderer/i18n/texts.ts) and in the main process's dialogs (electron/desktop/desktop-texts.ts) in
// the same words; and the forms that show them: settings, network, the composer, shortcuts, the
// dialer's phone number.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { desktopTexts } from '../../../electron/desktop/desktop-texts';
import { NetworkSettingsStore } from '../../../electron/core/network-settings';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { accountSettingsInputSchema } from '../../../shared/settings';
import { numberFromDialLink } from '../../../shared/dial-link';
import { LANGUAGES } from '../../../shared/i18n/languages';
import english from '../../../shared/i18n/locales/en/rules.json';
import spanish from '../../../shared/i18n/locales/es/rules.json';
import type { RuleId } from '../../../shared/i18n/rules';
import { english as inEnglish, fieldRule, term, text, type RuleText, type TextValue } from '../../../shared/i18n/text';
import { checkPhoneNumber, unverifiedNumber } from '../../../shared/phone';
import { applyPreferencesPatch, DEFAULT_PREFERENCES, parseShortcut, shortcutRefused } from '../../../shared/preferences';
import type { AppError, Result } from '../../../shared/result';
import { parseTemplatePayload } from '../../../shared/templates';
import { fieldError, parseWith } from '../../../shared/validation';
import { errorMessage } from '../../../renderer/error-texts';
import { i18n, setUiLanguage } from '../../../renderer/i18n/i18n';
import { sayError, sayText } from '../../../renderer/i18n/texts';
import { checkContent, serverErrorsFrom, textContent } from '../../../renderer/store/composer';
import { networkErrorsFrom, validateNetworkDraft } from '../../../renderer/store/network-form';
import { settingsErrorsFrom, validateDraft } from '../../../renderer/store/settings-form';

afterEach(async () => {
  await setUiLanguage('en', undefined);
});

const PLURAL_SUFFIX = /_(one|other)$/;
const slotsOf = (template: string): string[] => [...new Set([...template.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!))];

/** Every rule of the catalogue with values for it: a plural once per English form (1, and 7). */
function everyRule(): { id: RuleId; values: Record<string, string | number> }[] {
  const out: { id: RuleId; values: Record<string, string | number> }[] = [];
  for (const [group, entries] of Object.entries(english)) {
    if (group === 'terms') continue;
    for (const [key, template] of Object.entries(entries as Record<string, string>)) {
      const plural = PLURAL_SUFFIX.exec(key);
      const id = `${group}.${key.replace(PLURAL_SUFFIX, '')}` as RuleId;
      const values: Record<string, string | number> = {};
      for (const name of slotsOf(template)) values[name] = name === 'count' ? (plural?.[1] === 'one' ? 1 : 7) : name === 'digits' ? 42 : `v-${name}-9`;
      out.push({ id, values });
    }
  }
  return out;
}

const refused = <T>(result: Result<T>): AppError => {
  if (result.ok) throw new Error('not refused');
  return result.error;
};
const textOf = <T>(result: Result<T>): RuleText => {
  const said = refused(result).text;
  if (said === undefined) throw new Error('no text');
  return said;
};

describe('the window and the main process', () => {
  const texts: TextValue[] = [
    ...everyRule().map(({ id, values }) => text(id, values)),
    textOf(numberFromDialLink('http://example.com/call')),
    textOf(numberFromDialLink('tel:not-a-number')),
    textOf(shortcutRefused('mute', text('shortcuts.takenElsewhere', { combo: 'Ctrl+Shift+M' }))),
    textOf(parseWith(accountSettingsInputSchema, { gatewayUrl: 'https://x.example/restapi', relayUrl: '' })),
    text('media.notFormat', { what: text('mediaFile.imageA', { format: 'GIF' }), expected: text('mediaFile.imageA', { format: 'PNG' }) }),
    'the gateway said no',
  ];

  test('say every rule of the catalogue in the same words, in every language', async () => {
    expect(texts.length).toBeGreaterThan(250);
    for (const language of LANGUAGES) {
      await setUiLanguage(language, undefined);
      const desktop = desktopTexts(language);
      for (const value of texts) expect(desktop.text(value), `${language}: ${inEnglish(value)}`).toBe(sayText(value));
    }
  });

  test('a refused link in Spanish through either', async () => {
    const said = textOf(numberFromDialLink('http://example.com/call'));
    await setUiLanguage('es', undefined);
    const expected = `${spanish.terms.phoneNumber}: ${spanish.phone.linkScheme.replace('{{scheme}}', 'http')}`;
    expect(sayText(said)).toBe(expected);
    expect(desktopTexts('es').text(said)).toBe(expected);
  });
});

describe('every rule of the catalogue in the window', () => {
  const rules = everyRule();

  test('is the English message in English', () => {
    for (const { id, values } of rules) expect(sayText(text(id, values)), id).toBe(inEnglish(text(id, values)));
  });

  test('is said with its own Spanish template, every value kept', async () => {
    await setUiLanguage('es', undefined);
    for (const { id, values } of rules) {
      const said = sayText(text(id, values));
      expect(said, id).toBe(i18n.t(`rules:${id}` as never, values));
      for (const [name, value] of Object.entries(values)) if (name !== 'count') expect(said, `${id} keeps ${value}`).toContain(String(value));
    }
  });

  test('picks the plural form of each language', async () => {
    await setUiLanguage('ar', undefined);
    expect(sayText(text('messages.atMostButtons', { count: 3 }))).toBe('يجب ألا يتجاوز 3 أزرار');
    expect(sayText(text('common.atMostCharacters', { count: 20 }))).toBe('يجب ألا يتجاوز 20 حرفًا');
    await setUiLanguage('es', undefined);
    expect(sayText(text('messages.atLeastMinutes', { count: 1 }))).toBe('debe ser al menos 1 minuto');
    expect(sayText(text('common.atMostCharacters', { count: 1000 }))).toBe(spanish.common.atMostCharacters_other.replace('{{count}}', '1000'));
  });
});

describe('what the catalogue did not make', () => {
  test('is left as it came, in any language', async () => {
    await setUiLanguage('es', undefined);
    for (const words of ['The gateway is down for maintenance', 'gatewayUrl: the gateway said no', 'must be purple', '', 'Phone number: call me maybe', 'must be at most 1,000 characters']) {
      expect(sayText(words)).toBe(words);
      expect(sayError({ message: words })).toBe(words);
    }
  });
});

describe('right to left', () => {
  test('in Arabic a number, a combination, an address or a field’s path keeps its order (an isolate); a translated word does not need one', async () => {
    await setUiLanguage('ar', undefined);
    const unverified = sayText(unverifiedNumber('442079460958'));
    expect(unverified).toContain('\u2066+44 20 7946 0958\u2069');
    expect(unverified.startsWith(i18n.t('rules:terms.phoneNumber'))).toBe(true);
    await setUiLanguage('es', undefined);
    expect(sayText(unverifiedNumber('442079460958'))).not.toContain('\u2066');
  });
});

describe('what the window and shared/ put around a rule', () => {
  test('a field’s rule starts a sentence beside it; several fields’ rules, and hints after a dash, in the language', async () => {
    await setUiLanguage('es', undefined);
    const example = 'https://gateway.example.com/restapi/v1';
    const checked = validateDraft({ gatewayUrl: 'https://gateway.example.com/restapi', apiKey: '', productSegment: 'chatapp', relayUrl: 'https://relay.example.com', agentToken: '', defaultCountry: '' });
    expect(!checked.ok && checked.errors.gatewayUrl).toBe(`Debe terminar en el segmento de versión, p. ej., ${example}`);
    const two = refused(parseWith(accountSettingsInputSchema, { gatewayUrl: example, productSegment: 'a b', relayUrl: 'relay' }));
    expect(two.message).toBe('productSegment: must be one path segment of letters, digits, "-" or "_" (default "chatapp"); relayUrl: must be an http:// or https:// URL (the relay URL)');
    expect(errorMessage(two)).toBe(
      `productSegment: ${spanish.settings.productSegment.replace('{{product}}', 'chatapp')}; relayUrl: debe ser una URL http:// o https:// (la URL del relay)`,
    );
    const pasted = refused(parseTemplatePayload('{"name": "a",, }'));
    expect(pasted.message).toMatch(/^The pasted text is not valid JSON at line 1, column \d+: .+ — a comma stands before a closing bracket$/);
    expect(errorMessage(pasted)).toMatch(/^El texto pegado no es un JSON válido en la línea 1, columna \d+: .+ — hay una coma antes de un corchete o llave de cierre$/);
  });

  test('a shortcut refusal names the action in the language; the words it takes are translated too', async () => {
    const reserved = refused(applyPreferencesPatch(DEFAULT_PREFERENCES, { shortcuts: { mute: 'Ctrl+Shift+I' } }));
    const taken = refused(applyPreferencesPatch(DEFAULT_PREFERENCES, { shortcuts: { mute: 'Ctrl+Shift+A' } }));
    const noKey = refused(parseShortcut('Ctrl+Shift'));
    // The Electron host's refusal of a global shortcut another application holds (electron/desktop/global-shortcuts.ts).
    const held = refused(shortcutRefused('answer', text('shortcuts.takenElsewhere', { combo: 'Ctrl+Shift+A' })));
    expect(taken.message).toBe('shortcuts.mute (Mute): Ctrl+Shift+A is already the shortcut for Answer');
    expect(held.message).toBe('shortcuts.answer (Answer): Ctrl+Shift+A is taken by another application; choose another for a global shortcut');
    expect(errorMessage(taken)).toBe('shortcuts.mute (Mute): Ctrl+Shift+A is already the shortcut for Answer');
    await setUiLanguage('es', undefined);
    expect(errorMessage(reserved)).toBe('shortcuts.mute (Silenciar): Ctrl+Shift+I está reservado para las herramientas para desarrolladores');
    expect(errorMessage(taken)).toBe('shortcuts.mute (Silenciar): Ctrl+Shift+A ya es el atajo de Contestar');
    expect(errorMessage(noKey)).toBe('no tiene tecla: agrega una letra, un dígito o F1–F24');
    expect(errorMessage(held)).toBe('shortcuts.answer (Contestar): Ctrl+Shift+A lo usa otra aplicación; elige otro para un atajo global');
  });

  test("a phone number's refusal keeps the field's name before it, in the language", async () => {
    const short = refused(checkPhoneNumber('+44 20'));
    expect(short.message).toBe('Phone number: too short');
    await setUiLanguage('hi', undefined);
    expect(errorMessage(short)).toBe('फ़ोन नंबर: बहुत छोटा है');
  });
});

describe("the main process's own refusals", () => {
  test("a TURN server saved without its username or password: the field's path stays, the rule and the credential's name are said in the language", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'texts-turn-'));
    try {
      const store = new NetworkSettingsStore({ dataDir, secrets: new MemorySecretStore() });
      const noUsername = refused(await store.save({ servers: ['turn:turn.example.com'], turnPassword: 'turn-pw-7f3a9c2e51', relayOnly: false }));
      const noPassword = refused(await store.save({ servers: ['turns:turn.example.com:443'], turnUsername: 'agent-7', relayOnly: false }));
      expect(noUsername.message).toBe('turnUsername: the TURN username is required for a turn: or turns: server');
      await setUiLanguage('es', undefined);
      expect(errorMessage(noUsername)).toBe('turnUsername: se necesita el usuario TURN para un servidor turn: o turns:');
      expect(errorMessage(noPassword)).toBe('turnPassword: se necesita la contraseña TURN para un servidor turn: o turns:');
      await setUiLanguage('ar', undefined);
      // The path is data: it keeps its order inside the right-to-left sentence.
      expect(errorMessage(noPassword)).toBe('\u2066turnPassword\u2069: يجب إدخال كلمة مرور TURN لخادم turn: أو turns:');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("the forms show the rules in the UI's language", () => {
  test('settings: live, and from the main process', async () => {
    await setUiLanguage('pt-BR', undefined);
    const checked = validateDraft({ gatewayUrl: 'https://gateway.example.com/restapi', apiKey: 'short', productSegment: 'chatapp', relayUrl: '', agentToken: '', defaultCountry: '' });
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.errors.gatewayUrl).toBe('Deve terminar no segmento de versão, por exemplo, https://gateway.example.com/restapi/v1');
    expect(checked.errors.apiKey).toBe('A chave de API deve ter pelo menos 8 caracteres');
    expect(checked.errors.relayUrl).toBe('É obrigatório');
    // The main process's refusal: each field's rule beside it, a rule of no settings field above the form.
    const saved = refused(parseWith(accountSettingsInputSchema, { gatewayUrl: '', relayUrl: 'https://relay.example.com', unknownField: 1 }));
    expect(settingsErrorsFrom(saved)).toEqual({ fields: { gatewayUrl: 'É obrigatório' }, form: '(root): Unrecognized key: "unknownField"' });
    // An error that names no rule stays above the form as it came.
    expect(settingsErrorsFrom({ message: 'the relay refused the token' })).toEqual({ fields: {}, form: 'the relay refused the token' });
  });

  test("network: a server's rule after its line, a field's as a sentence", async () => {
    await setUiLanguage('id', undefined);
    const checked = validateNetworkDraft({ servers: 'stun:ok.example.com\n\nhttps://x.example.com', turnUsername: '', turnPassword: '', relayOnly: false }, null);
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.errors.servers).toBe(`Baris 3: ${i18n.t('rules:network.iceUrlGot', { url: '"https://x.example.com"' })}`);
    const placed = networkErrorsFrom(refused(fieldError('invalid_input', 'turnUsername', text('network.credentialTooLong', { what: term('turnUsername'), count: 512 }))), [1]);
    expect(placed.fields.turnUsername).toBe('Nama pengguna TURN terlalu panjang (maksimal 512 karakter)');
  });

  test('composer: a live rule and one the main process placed', async () => {
    await setUiLanguage('ar', undefined);
    expect(checkContent(textContent(' ')).errors['text.body']).toBe('يجب ألا يكون فارغًا');
    const placed = refused(fieldError('invalid_input', 'content.image.link', text('common.httpAddress')));
    expect(placed.message).toBe('content.image.link: must be an http:// or https:// address');
    expect(serverErrorsFrom(placed)).toEqual({ 'image.link': 'يجب أن يكون عنوان http:// أو https://' });
  });

  test('the pseudo-locale brackets a rule and the words inside it', async () => {
    await setUiLanguage('en-XA', undefined);
    expect(sayText(text('settings.secretNoSpaces', { what: term('apiKey') }))).toBe('⟦⟦ţĥé ÅÞÎ ķéý⟧ ɱûšţ ñöţ çöñţåîñ šþåçéš⟧');
    expect(sayText(fieldRule('gatewayUrl', text('common.required')))).toBe('⟦gatewayUrl: ⟦îš ŕéǫûîŕéđ⟧⟧');
  });
});
