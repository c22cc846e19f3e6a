// One reader of rule messages for both processes (shared/i18n/rule-text-core.ts): the window
// (renderer/i18n/rule-text.ts) and the main process's own dialogs (electron/desktop/desktop-texts.ts)
// say every message of the catalogue in the same words; and the core needs no i18next, only a
// lookup in a language and the hooks for right-to-left text.
import { afterEach, describe, expect, test } from 'vitest';
import { desktopTexts } from '../../../electron/desktop/desktop-texts';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { translateRuleText } from '../../../renderer/i18n/rule-text';
import { numberFromDialLink } from '../../../shared/dial-link';
import { LANGUAGES } from '../../../shared/i18n/languages';
import english from '../../../shared/i18n/locales/en/rules.json';
import spanish from '../../../shared/i18n/locales/es/rules.json';
import { createRuleTranslator } from '../../../shared/i18n/rule-text-core';
import { rule, term, type RuleId } from '../../../shared/i18n/rules';

afterEach(async () => {
  await setUiLanguage('en', undefined);
});

const PLURAL_SUFFIX = /_(one|other)$/;
const variablesOf = (template: string): string[] => [...new Set([...template.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!))];

/** Every rule of the catalogue, made in English with sample values (a plural once per English form). */
function everyMessage(): string[] {
  const out: string[] = [];
  for (const [group, entries] of Object.entries(english)) {
    if (group === 'terms') continue;
    for (const [key, template] of Object.entries(entries as Record<string, string>)) {
      const plural = PLURAL_SUFFIX.exec(key);
      const values: Record<string, string | number> = {};
      for (const name of variablesOf(template)) values[name] = name === 'count' ? (plural?.[1] === 'one' ? 1 : 7) : name === 'digits' ? 42 : `v-${name}-9`;
      out.push(rule(`${group}.${key.replace(PLURAL_SUFFIX, '')}` as RuleId, values));
    }
  }
  return out;
}

const refusalOf = (link: string): string => {
  const result = numberFromDialLink(link);
  if (result.ok) throw new Error(`${link} was taken`);
  return result.error.message;
};

describe('the window and the main process', () => {
  const messages = [
    ...everyMessage(),
    refusalOf('http://example.com/call'),
    refusalOf('tel:not-a-number'),
    `shortcuts.mute (${term('mute')}): ${rule('shortcuts.takenElsewhere', { combo: 'Ctrl+Shift+M' })}`,
    `gatewayUrl: ${rule('settings.versionSegment', { example: 'https://x.example/restapi/v1' })}; turnUsername: ${rule('network.turnCredentialRequired', { what: term('turnUsername') })}`,
    'the gateway said no',
  ];

  test('say every rule of the catalogue in the same words, in every language', async () => {
    expect(messages.length).toBeGreaterThan(100);
    for (const language of LANGUAGES) {
      await setUiLanguage(language, undefined);
      const desktop = desktopTexts(language);
      for (const message of messages) expect(desktop.rule(message), `${language}: ${message}`).toBe(translateRuleText(message));
    }
  });

  test('a refused link in Spanish through either', async () => {
    const message = refusalOf('http://example.com/call');
    await setUiLanguage('es', undefined);
    const expected = `${spanish.terms.phoneNumber}: ${spanish.phone.linkScheme.replace('{{scheme}}', 'http')}`;
    expect(translateRuleText(message)).toBe(expected);
    expect(desktopTexts('es').rule(message)).toBe(expected);
  });
});

describe('the core alone', () => {
  /** A plain lookup in the Spanish catalogue: what an i18next `rules` namespace does, without it. */
  const lookUp = (key: string, values: Readonly<Record<string, string | number>> = {}): string => {
    const [group, name] = key.split('.') as [string, string];
    const entries = (spanish as unknown as Record<string, Record<string, string>>)[group]!;
    const count = values.count;
    const template = typeof count === 'number' ? (entries[`${name}_${new Intl.PluralRules('es').select(count)}`] ?? entries[`${name}_other`]) : entries[name];
    if (template === undefined) throw new Error(`no ${key}`);
    return template.replace(/\{\{(\w+)\}\}/g, (_, value: string) => String(values[value]));
  };

  test('says a message through the lookup it is given, plurals by their count', () => {
    const say = createRuleTranslator({ translate: lookUp, rtl: () => false, isolate: (text) => `[${text}]` });
    expect(say(refusalOf('http://example.com/call'))).toBe(`${spanish.terms.phoneNumber}: ${spanish.phone.linkScheme.replace('{{scheme}}', 'http')}`);
    expect(say(refusalOf(`tel:${'1'.repeat(600)}`))).toBe(`${spanish.terms.phoneNumber}: ${spanish.phone.linkTooLong_other.replace('{{count}}', '512')}`);
    expect(say(rule('common.atMostCharacters', { count: 1 }))).toBe(spanish.common.atMostCharacters_one.replace('{{count}}', '1'));
    expect(say('the gateway said no')).toBe('the gateway said no');
  });

  test('isolates values only while the language is right to left, asked for each message', () => {
    let rtl = true;
    const say = createRuleTranslator({ translate: lookUp, rtl: () => rtl, isolate: (text) => `[${text}]` });
    const message = refusalOf('http://example.com/call');
    expect(say(message)).toBe(`${spanish.terms.phoneNumber}: ${spanish.phone.linkScheme.replace('{{scheme}}', '[http]')}`);
    rtl = false;
    expect(say(message)).toBe(`${spanish.terms.phoneNumber}: ${spanish.phone.linkScheme.replace('{{scheme}}', 'http')}`);
  });
});
