// The window's one i18next instance. Every language is bundled (a few dozen KB of text): a switch
// is instant and works offline. Components read it with react-i18next's useTranslation(); the pure
// modules (call-display.ts, error-texts.ts, …) with `t` below, at the time they are called, so a
// re-render after a language change gives the new words.
import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import { directionOf, LANGUAGES, PSEUDO_LANGUAGE, type UiLanguage } from '../../shared/i18n/languages';
import en from '../../shared/i18n/locales/en/index';
import es from '../../shared/i18n/locales/es/index';
import ptBR from '../../shared/i18n/locales/pt-BR/index';
import hi from '../../shared/i18n/locales/hi/index';
import id from '../../shared/i18n/locales/id/index';
import ar from '../../shared/i18n/locales/ar/index';
import { pseudoResources } from './pseudo';

export const NAMESPACES = ['common', 'calls', 'settings', 'messages', 'errors', 'rules'] as const;

export const RESOURCES = { en, es, 'pt-BR': ptBR, hi, id, ar, [PSEUDO_LANGUAGE]: pseudoResources(en) } as const;

export const i18n = i18next.createInstance();
void i18n.use(initReactI18next).init({
  resources: RESOURCES,
  lng: 'en',
  fallbackLng: 'en',
  supportedLngs: [...LANGUAGES, PSEUDO_LANGUAGE],
  ns: [...NAMESPACES],
  defaultNS: 'common',
  // React escapes what it renders; the texts never go into innerHTML.
  interpolation: { escapeValue: false },
  returnNull: false,
  // Resources are bundled: init is synchronous, so the first render is already translated.
  initAsync: false,
  react: { useSuspense: false },
});

/** The current t, for code outside components. */
export const t: typeof i18n.t = i18n.t.bind(i18n);

export const currentLanguage = (): UiLanguage => i18n.language as UiLanguage;

/**
 * The locale Intl formats with. Arabic keeps Latin digits: the numbers an agent reads all day
 * (phone numbers, call times) are written with them, and one panel should not mix two digit shapes.
 */
export function intlLocale(language: UiLanguage = currentLanguage()): string {
  // A 24-hour clock: "AM" would be English that no translation could reach.
  if (language === PSEUDO_LANGUAGE) return 'en-GB';
  if (language === 'ar') return 'ar-u-nu-latn';
  return language;
}

/** Switches the UI's language: the strings, and the document's lang and dir (the layout mirrors for Arabic). */
export async function setUiLanguage(language: UiLanguage, doc: Document | undefined = globalThis.document): Promise<void> {
  if (i18n.language !== language) await i18n.changeLanguage(language);
  if (doc) {
    doc.documentElement.lang = language;
    doc.documentElement.dir = directionOf(language);
  }
}
