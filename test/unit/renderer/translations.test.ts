// Every language has every string English has, with every plural form its grammar needs and the same
// {{variables}}; the pseudo-locale brackets them all; the "Language" setting picks the right one.
import { afterEach, describe, expect, test } from 'vitest';
import { directionOf, LANGUAGES, matchLanguage, resolveLanguage, type Language } from '../../../shared/i18n/languages';
import { i18n, intlLocale, loadedLanguages, NAMESPACES, setUiLanguage, t } from '../../../renderer/i18n/i18n';
import { pseudoLocalize, pseudoResources } from '../../../renderer/i18n/pseudo';
import { startLanguageSync } from '../../../renderer/i18n/language-sync';
import type { LanguageSetting } from '../../../shared/i18n/languages';
import en from '../../../shared/i18n/locales/en/index';
import es from '../../../shared/i18n/locales/es/index';
import ptBR from '../../../shared/i18n/locales/pt-BR/index';
import hi from '../../../shared/i18n/locales/hi/index';
import id from '../../../shared/i18n/locales/id/index';
import ar from '../../../shared/i18n/locales/ar/index';

/** Every catalogue as it is on disk (the window loads all but English on demand). */
const RESOURCES: Readonly<Record<Language, unknown>> = { en, es, 'pt-BR': ptBR, hi, id, ar };

type Tree = { [key: string]: string | Tree };

/** "a.b.c" → text, for every string in a namespace. */
function flatten(tree: Tree, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(tree)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'string') out.set(path, value);
    else for (const [k, v] of flatten(value, path)) out.set(k, v);
  }
  return out;
}

const PLURAL_SUFFIX = /_(zero|one|two|few|many|other)$/;
const variables = (text: string): string[] => [...text.matchAll(/\{\{\s*([\w.]+)[^}]*\}\}/g)].map((m) => m[1] ?? '').sort();
const nestings = (text: string): string[] => [...text.matchAll(/\$t\(([^)]*)\)/g)].map((m) => m[1] ?? '').sort();

/** What a language must have for English's keys: plain keys as they are, plural keys in every category of the language. */
function expectedKeys(english: Map<string, string>, language: Language): Set<string> {
  const categories = new Intl.PluralRules(language).resolvedOptions().pluralCategories;
  const keys = new Set<string>();
  for (const key of english.keys()) {
    const plural = PLURAL_SUFFIX.exec(key);
    if (!plural) keys.add(key);
    else for (const c of categories) keys.add(key.slice(0, plural.index) + `_${c}`);
  }
  return keys;
}

const treeOf = (language: Language, ns: (typeof NAMESPACES)[number]): Tree => (RESOURCES[language] as unknown as Record<string, Tree>)[ns] ?? {};

afterEach(async () => {
  await setUiLanguage('en', undefined);
});

describe('every language has every string', () => {
  const english = new Map(NAMESPACES.map((ns) => [ns, flatten(treeOf('en', ns))]));

  test('English has strings in every namespace, and its plurals have one and other', () => {
    for (const ns of NAMESPACES) {
      const keys = [...english.get(ns)!.keys()];
      expect(keys.length, ns).toBeGreaterThan(0);
      for (const key of keys.filter((k) => PLURAL_SUFFIX.test(k))) {
        const base = key.replace(PLURAL_SUFFIX, '');
        expect(keys, `${ns}:${base}`).toEqual(expect.arrayContaining([`${base}_one`, `${base}_other`]));
      }
    }
  });

  for (const language of LANGUAGES.filter((l) => l !== 'en')) {
    test(`${language}: the same keys (with its own plural forms), the same variables, no empty string`, () => {
      for (const ns of NAMESPACES) {
        const en = english.get(ns)!;
        const translated = flatten(treeOf(language, ns));
        const expected = expectedKeys(en, language);
        const missing = [...expected].filter((k) => !translated.has(k));
        const extra = [...translated.keys()].filter((k) => !expected.has(k));
        expect(missing, `${language} ${ns}: missing`).toEqual([]);
        expect(extra, `${language} ${ns}: not in English`).toEqual([]);
        for (const [key, text] of translated) {
          expect(text.trim(), `${language} ${ns}:${key} is empty`).not.toBe('');
          const source = en.get(key) ?? en.get(key.replace(PLURAL_SUFFIX, '_other')) ?? '';
          // A plural form may leave the count out ("one call"), never add a variable English lacks.
          const wanted = variables(source).filter((v) => !(PLURAL_SUFFIX.test(key) && v === 'count'));
          const have = variables(text).filter((v) => !(PLURAL_SUFFIX.test(key) && v === 'count'));
          expect(have, `${language} ${ns}:${key} variables`).toEqual(wanted);
          expect(nestings(text), `${language} ${ns}:${key} nested keys`).toEqual(nestings(source));
        }
      }
    });
  }
});

describe('the pseudo-locale', () => {
  test('brackets and accents a string, keeping variables, nestings and Trans tags as written', () => {
    expect(pseudoLocalize('Answer within {{seconds}} s')).toBe('⟦Åñšŵéŕ ŵîţĥîñ {{seconds}} š⟧');
    expect(pseudoLocalize('See <1>the guide</1> and $t(common:x)')).toBe('⟦Šéé <1>ţĥé ĝûîđé</1> åñđ $t(common:x)⟧');
  });

  test('covers every English string', () => {
    for (const ns of NAMESPACES) {
      const en = flatten(treeOf('en', ns));
      const pseudo = flatten(pseudoResources(treeOf('en', ns)));
      expect([...pseudo.keys()]).toEqual([...en.keys()]);
      for (const text of pseudo.values()) expect(text).toMatch(/^⟦[\s\S]*⟧$/);
    }
  });

  test('is what t() gives once chosen', async () => {
    await setUiLanguage('en-XA', undefined);
    expect(t('language.label')).toBe('⟦Ļåñĝûåĝé⟧');
  });
});

describe('choosing the language', () => {
  test('the system languages are matched on their primary subtag; English when none is spoken here', () => {
    expect(matchLanguage(['es-MX', 'en-US'])).toBe('es');
    expect(matchLanguage(['pt-PT'])).toBe('pt-BR');
    expect(matchLanguage(['pt-BR'])).toBe('pt-BR');
    expect(matchLanguage(['in-ID'])).toBe('id');
    expect(matchLanguage(['fr-FR', 'hi-IN'])).toBe('hi');
    expect(matchLanguage(['ar-AE'])).toBe('ar');
    expect(matchLanguage(['fr-FR', 'de'])).toBe('en');
    expect(matchLanguage([])).toBe('en');
  });

  test('"auto" follows the system; a chosen language wins over it', () => {
    expect(resolveLanguage('auto', ['id-ID'])).toBe('id');
    expect(resolveLanguage('ar', ['id-ID'])).toBe('ar');
    expect(resolveLanguage('en-XA', ['id-ID'])).toBe('en-XA');
  });

  test('Arabic is right to left, with Latin digits for Intl; the others left to right', async () => {
    expect(LANGUAGES.filter((l) => directionOf(l) === 'rtl')).toEqual(['ar']);
    expect(new Intl.NumberFormat(intlLocale('ar')).format(1234)).toMatch(/^1.?234$/);
    await setUiLanguage('hi', undefined);
    expect(i18n.language).toBe('hi');
    expect(intlLocale()).toBe('hi');
  });
});

describe('languages on demand', () => {
  test('English is there from the start; another language is loaded when it is first chosen, then kept', async () => {
    expect(loadedLanguages()).toContain('en');
    expect(t('common:header.settings')).toBe('Settings');
    await setUiLanguage('id', undefined);
    expect(loadedLanguages()).toContain('id');
    expect(t('common:header.settings')).toBe((id.common.header as { settings: string }).settings);
  });

  test('of quick successive choices the last wins, whichever loads first', async () => {
    const first = setUiLanguage('ar', undefined);
    const second = setUiLanguage('pt-BR', undefined);
    const third = setUiLanguage('hi', undefined);
    await Promise.all([first, second, third]);
    expect(i18n.language).toBe('hi');
    // And back to one already loaded while another still loads.
    const slow = setUiLanguage('es', undefined);
    const back = setUiLanguage('ar', undefined);
    await Promise.all([slow, back]);
    expect(i18n.language).toBe('ar');
  });
});

describe('startLanguageSync', () => {
  test('applies the setting at once, follows its changes and, on "auto", the system\'s; sets lang and dir', async () => {
    let setting: LanguageSetting = 'auto';
    let preferred = ['es-MX'];
    const settingListeners = new Set<() => void>();
    const systemListeners = new Set<() => void>();
    const doc = { documentElement: { lang: '', dir: '' } } as unknown as Document;
    const sync = startLanguageSync(
      { setting: () => setting, onSettingChange: (l) => (settingListeners.add(l), () => settingListeners.delete(l)) },
      { preferred: () => preferred, onPreferredChange: (l) => (systemListeners.add(l), () => systemListeners.delete(l)), document: doc },
    );
    await expect.poll(() => i18n.language).toBe('es');
    expect(doc.documentElement).toMatchObject({ lang: 'es', dir: 'ltr' });

    setting = 'ar';
    settingListeners.forEach((l) => l());
    await expect.poll(() => doc.documentElement.dir).toBe('rtl');
    expect(i18n.language).toBe('ar');
    // A chosen language does not move when the system's does.
    preferred = ['hi-IN'];
    systemListeners.forEach((l) => l());
    await Promise.resolve();
    expect(i18n.language).toBe('ar');

    setting = 'auto';
    settingListeners.forEach((l) => l());
    await expect.poll(() => i18n.language).toBe('hi');
    expect(doc.documentElement).toMatchObject({ lang: 'hi', dir: 'ltr' });
    sync.stop();
    expect(settingListeners.size + systemListeners.size).toBe(0);
  });

  /** A promise settled from outside: a snapshot or a language chunk that arrives when the test says. */
  const deferred = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  };
  const isSettled = async (promise: Promise<unknown>): Promise<boolean> => {
    let settled = false;
    void promise.then(() => (settled = true));
    for (let i = 0; i < 10; i++) await Promise.resolve();
    return settled;
  };
  const system = (preferred: string[]) => ({ preferred: () => preferred, onPreferredChange: () => () => undefined });

  test('the first paint waits for the saved preference, then for its language, not for the default\'s', async () => {
    let setting: LanguageSetting = 'auto';
    const listeners = new Set<() => void>();
    const snapshot = deferred();
    const doc = { documentElement: { lang: '', dir: '' } } as unknown as Document;
    const sync = startLanguageSync(
      { setting: () => setting, onSettingChange: (l) => (listeners.add(l), () => listeners.delete(l)), known: snapshot.promise },
      { ...system(['es-MX']), document: doc },
      { waits: { settingMs: 60_000, languageMs: 60_000 } },
    );
    // The default ('auto') is followed meanwhile, but the window does not render in it.
    await expect.poll(() => i18n.language).toBe('es');
    expect(await isSettled(sync.ready)).toBe(false);

    // The first snapshot: the saved preference, then the store says the snapshot is in.
    setting = 'ar';
    listeners.forEach((l) => l());
    snapshot.resolve();
    await sync.ready;
    expect(i18n.language).toBe('ar');
    expect(doc.documentElement).toMatchObject({ lang: 'ar', dir: 'rtl' });
    sync.stop();
  });

  test('settles with the language of the latest wish, whichever chunk comes first', async () => {
    let setting: LanguageSetting = 'es';
    const listeners = new Set<() => void>();
    const chunks = new Map<string, ReturnType<typeof deferred>>();
    const switchLanguage = (language: string) => {
      const chunk = deferred();
      chunks.set(language, chunk);
      return chunk.promise;
    };
    const sync = startLanguageSync({ setting: () => setting, onSettingChange: (l) => (listeners.add(l), () => listeners.delete(l)) }, system(['en-US']), {
      switchLanguage,
      waits: { settingMs: 60_000, languageMs: 60_000 },
    });
    setting = 'hi';
    listeners.forEach((l) => l());
    expect([...chunks.keys()]).toEqual(['es', 'hi']);

    chunks.get('es')!.resolve();
    expect(await isSettled(sync.ready)).toBe(false);
    expect(await isSettled(sync.settled())).toBe(false);
    chunks.get('hi')!.resolve();
    expect(await isSettled(sync.ready)).toBe(true);
    expect(await isSettled(sync.settled())).toBe(true);

    // A wish made after the first paint: settled() follows it too.
    setting = 'id';
    listeners.forEach((l) => l());
    expect(await isSettled(sync.settled())).toBe(false);
    chunks.get('id')!.resolve();
    expect(await isSettled(sync.settled())).toBe(true);
    sync.stop();
  });

  test('a snapshot or a language chunk that never comes does not leave the window blank', async () => {
    const never = new Promise<void>(() => undefined);
    const chunk = deferred();
    const sync = startLanguageSync({ setting: () => 'pt-BR', onSettingChange: () => () => undefined, known: never }, system(['en-US']), {
      switchLanguage: () => chunk.promise,
      waits: { settingMs: 30, languageMs: 30 },
    });
    const started = Date.now();
    await sync.ready;
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    // The language follows when its chunk comes.
    expect(await isSettled(sync.settled())).toBe(false);
    chunk.resolve();
    expect(await isSettled(sync.settled())).toBe(true);
    sync.stop();
  });
});
