// The window's one i18next instance. English (the source, and every other language's fallback) is in
// the window's script; each other language is a chunk of its own, loaded once when it is first
// chosen (a few dozen KB from the app's own files, so it works offline), which keeps the script the
// window starts with small. Components read it with react-i18next's useTranslation(); the pure
// modules (call-display.ts, error-texts.ts, …) with `t` below, at the time they are called, so a
// re-render after a language change gives the new words.
import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import { directionOf, LANGUAGES, PSEUDO_LANGUAGE, type UiLanguage } from '../../shared/i18n/languages';
import en from '../../shared/i18n/locales/en/index';
import { pseudoResources } from './pseudo';

export const NAMESPACES = ['common', 'calls', 'settings', 'messages', 'errors', 'rules'] as const;

/** One language's strings, a tree per namespace (plural keys differ between languages). */
type Resources = Readonly<Record<(typeof NAMESPACES)[number], object>>;

/** Each language but English, as a chunk of its own (Vite splits a dynamic import). */
const LOADERS: Readonly<Record<Exclude<UiLanguage, 'en'>, () => Promise<Resources>>> = {
  es: () => import('../../shared/i18n/locales/es/index').then((m) => m.default),
  'pt-BR': () => import('../../shared/i18n/locales/pt-BR/index').then((m) => m.default),
  hi: () => import('../../shared/i18n/locales/hi/index').then((m) => m.default),
  id: () => import('../../shared/i18n/locales/id/index').then((m) => m.default),
  ar: () => import('../../shared/i18n/locales/ar/index').then((m) => m.default),
  [PSEUDO_LANGUAGE]: () => Promise.resolve(pseudoResources(en)),
};

export const i18n = i18next.createInstance();
void i18n.use(initReactI18next).init({
  resources: { en },
  lng: 'en',
  fallbackLng: 'en',
  supportedLngs: [...LANGUAGES, PSEUDO_LANGUAGE],
  ns: [...NAMESPACES],
  defaultNS: 'common',
  // React escapes what it renders; the texts never go into innerHTML.
  interpolation: { escapeValue: false },
  returnNull: false,
  // English is bundled: init is synchronous. Another language is loaded before it is switched to
  // (setUiLanguage), and the window awaits the first one before its first render.
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

const loading = new Map<UiLanguage, Promise<void>>();

/** A language's strings, loaded once (English is always there). */
export function loadLanguage(language: UiLanguage): Promise<void> {
  if (language === 'en' || i18n.hasResourceBundle(language, 'common')) return Promise.resolve();
  let load = loading.get(language);
  if (!load) {
    load = LOADERS[language]().then((resources) => {
      for (const ns of NAMESPACES) i18n.addResourceBundle(language, ns, resources[ns], true, true);
    });
    // A load that failed (a file missing from a broken install) is tried again next time.
    load.catch(() => loading.delete(language));
    loading.set(language, load);
  }
  return load;
}

/** The languages whose strings are loaded now (English always). */
export function loadedLanguages(): UiLanguage[] {
  const all: UiLanguage[] = [...LANGUAGES, PSEUDO_LANGUAGE];
  return all.filter((l) => l === 'en' || i18n.hasResourceBundle(l, 'common'));
}

let latestWish = 0;

/**
 * Switches the UI's language: its strings (loaded first), then the document's lang and dir (the
 * layout mirrors for Arabic). Of quick successive switches the last wins, whichever loads first.
 * A language that cannot be loaded leaves the UI as it was, and the promise rejects.
 */
export async function setUiLanguage(language: UiLanguage, doc: Document | undefined = globalThis.document): Promise<void> {
  const wish = ++latestWish;
  await loadLanguage(language);
  if (wish !== latestWish) return;
  if (i18n.language !== language) await i18n.changeLanguage(language);
  if (doc) {
    doc.documentElement.lang = language;
    doc.documentElement.dir = directionOf(language);
  }
}

