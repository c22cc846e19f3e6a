// What the main process itself says to the agent — the tray, the notification of a ringing call,
// the missed-call overlay, its own dialogs — in the language the window speaks: the preference
// `language`, where 'auto' is the operating system's. Its own i18next instance, holding the
// `desktop` strings of the common namespace of every language (shared/i18n/locales/<lang>/common.json),
// the `rules` namespace (rules.json), from which a rule's code and values (shared/i18n/text.ts)
// are rendered in a dialog with the renderer the window uses too, and the window's `calls`
// namespace (calls.json), whose words the notification of a ringing call shares with the window's
// card ("Transfer from NAME") rather than keeping its own copy to translate twice.
// Not the pseudo-locale: it is made by the renderer, which this process does not import; en-XA
// gets English here.
import i18next from 'i18next';
import type { App } from 'electron';
import { renderText, type TextLookup, type TextValue } from '../../shared/i18n/text';
import { directionOf, LANGUAGES, PSEUDO_LANGUAGE, resolveLanguage, type Language, type LanguageSetting, type UiLanguage } from '../../shared/i18n/languages';
import en from '../../shared/i18n/locales/en/common.json';
import es from '../../shared/i18n/locales/es/common.json';
import ptBR from '../../shared/i18n/locales/pt-BR/common.json';
import hi from '../../shared/i18n/locales/hi/common.json';
import id from '../../shared/i18n/locales/id/common.json';
import ar from '../../shared/i18n/locales/ar/common.json';
import enRules from '../../shared/i18n/locales/en/rules.json';
import esRules from '../../shared/i18n/locales/es/rules.json';
import ptBRRules from '../../shared/i18n/locales/pt-BR/rules.json';
import hiRules from '../../shared/i18n/locales/hi/rules.json';
import idRules from '../../shared/i18n/locales/id/rules.json';
import arRules from '../../shared/i18n/locales/ar/rules.json';
import enCalls from '../../shared/i18n/locales/en/calls.json';
import esCalls from '../../shared/i18n/locales/es/calls.json';
import ptBRCalls from '../../shared/i18n/locales/pt-BR/calls.json';
import hiCalls from '../../shared/i18n/locales/hi/calls.json';
import idCalls from '../../shared/i18n/locales/id/calls.json';
import arCalls from '../../shared/i18n/locales/ar/calls.json';

type Leaves<T, Prefix extends string = ''> = {
  [K in keyof T & string]: T[K] extends string ? `${Prefix}${K}` : Leaves<T[K], `${Prefix}${K}.`>;
}[keyof T & string];
/** "missedCalls_one" and "missedCalls_other" are one key, "missedCalls", chosen by `count`. */
type WithoutPlural<K> = K extends `${infer Base}_${'one' | 'other'}` ? Base : K;

/** A string of the main process: "tray.show", "missedCalls" (a plural: give `count`). */
export type DesktopKey = WithoutPlural<Leaves<typeof en.desktop>>;
/** A string of the window's calls namespace that the main process says too: "incoming.transferFrom". */
export type DesktopCallKey = WithoutPlural<Leaves<typeof enCalls>>;
export type DesktopValues = Readonly<Record<string, string | number>>;

export interface DesktopTexts {
  readonly language: Language;
  t(key: DesktopKey, values?: DesktopValues): string;
  /** The window's own words for a call (calls.json), where the main process says the same. */
  call(key: DesktopCallKey, values?: DesktopValues): string;
  /**
   * Data that reads left to right (a phone number, a key combination) inside a sentence: isolated
   * in a right-to-left language, where "+44 20 7946 0958" or "Ctrl+Shift+D" would otherwise be
   * reordered around their punctuation. Unchanged elsewhere.
   */
  ltr(text: string): string;
  /**
   * A name (a colleague's, a caller's) inside a sentence: in a right-to-left language set apart
   * and read in its own direction (first-strong isolate), so that a Latin name neither turns an
   * Arabic title left to right nor is reordered around it, and an Arabic name stays right to left.
   * Unchanged elsewhere.
   */
  name(text: string): string;
  /**
   * A rule's code and values (shared/i18n/text.ts) in this language (`Phone number: the link has no
   * number`), its data isolated in Arabic as ltr does; a plain string is words of no catalogue and
   * comes as it is.
   */
  text(value: TextValue): string;
}

const i18n = i18next.createInstance();
void i18n.init({
  resources: {
    en: { common: en, rules: enRules, calls: enCalls },
    es: { common: es, rules: esRules, calls: esCalls },
    'pt-BR': { common: ptBR, rules: ptBRRules, calls: ptBRCalls },
    hi: { common: hi, rules: hiRules, calls: hiCalls },
    id: { common: id, rules: idRules, calls: idCalls },
    ar: { common: ar, rules: arRules, calls: arCalls },
  },
  lng: 'en',
  fallbackLng: 'en',
  supportedLngs: [...LANGUAGES],
  ns: ['common', 'rules', 'calls'],
  defaultNS: 'common',
  // Native menus, tooltips, notifications and dialogs show text as it is: nothing to escape.
  interpolation: { escapeValue: false },
  returnNull: false,
  // The resources are bundled: init is synchronous, so the first tray is already worded.
  initAsync: false,
});

// LEFT-TO-RIGHT ISOLATE / FIRST STRONG ISOLATE … POP DIRECTIONAL ISOLATE.
const LRI = '\u2066';
const FSI = '\u2068';
const PDI = '\u2069';
const isolate = (text: string): string => `${LRI}${text}${PDI}`;
const isolateName = (text: string): string => `${FSI}${text}${PDI}`;

const cache = new Map<Language, DesktopTexts>();

/** The texts in a language (the pseudo-locale gets English). */
export function desktopTexts(language: UiLanguage): DesktopTexts {
  const spoken: Language = language === PSEUDO_LANGUAGE ? 'en' : language;
  const known = cache.get(spoken);
  if (known) return known;
  // Typed by DesktopKey above, not by i18next's own key types (those are the window's: renderer/i18n).
  const fixed = i18n.getFixedT(spoken, 'common', 'desktop') as unknown as (key: string, options?: DesktopValues) => string;
  const calls = i18n.getFixedT(spoken, 'calls') as unknown as (key: string, options?: DesktopValues) => string;
  const rtl = directionOf(spoken) === 'rtl';
  const ltr = (text: string): string => (rtl ? isolate(text) : text);
  // The rules' keys are the codes of shared/'s texts, checked where they are made; here they are only looked up.
  const rules = i18n.getFixedT(spoken, 'rules') as unknown as TextLookup;
  const texts: DesktopTexts = {
    language: spoken,
    t: (key, values) => fixed(key, values),
    call: (key, values) => calls(key, values),
    ltr,
    name: (text) => (rtl ? isolateName(text) : text),
    text: (value) => renderText(value, rules, { isolate: rtl ? isolate : undefined }),
  };
  cache.set(spoken, texts);
  return texts;
}

/** Where the operating system's languages come from: Electron's app. */
export type SystemLanguages = Pick<App, 'getPreferredSystemLanguages' | 'getLocale'>;

/**
 * The operating system's languages, most preferred first. getPreferredSystemLanguages may be empty
 * (some Linux sessions set no language list); the locale Chromium runs in is then the best guess.
 */
export function systemLanguages(system: SystemLanguages): string[] {
  const preferred = system.getPreferredSystemLanguages();
  if (preferred.length > 0) return preferred;
  const locale = system.getLocale();
  return locale ? [locale] : [];
}

/** The texts for the preference `language`: 'auto' follows the operating system. */
export function desktopTextsFor(setting: LanguageSetting, system: SystemLanguages): DesktopTexts {
  return desktopTexts(resolveLanguage(setting, setting === 'auto' ? systemLanguages(system) : []));
}
