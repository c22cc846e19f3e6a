// The languages the app speaks, and which one an agent gets. Pure data and rules: the window's
// i18next instance (renderer/i18n) and the main process read the same list.

/** BCP 47 tags of the languages with a full translation, English first (the source language). */
export const LANGUAGES = ['en', 'es', 'pt-BR', 'hi', 'id', 'ar'] as const;
export type Language = (typeof LANGUAGES)[number];

/**
 * A pseudo-locale for checking translations: every string of English, accented and bracketed
 * (⟦Ĉåļļ⟧), so a string that bypasses translation shows as plain text. Chromium's own name for one.
 * Accepted as a setting, never offered in the list.
 */
export const PSEUDO_LANGUAGE = 'en-XA';
export type UiLanguage = Language | typeof PSEUDO_LANGUAGE;

/** The "Language" setting: a language, or 'auto' (the operating system's or browser's). */
export type LanguageSetting = 'auto' | UiLanguage;
export const LANGUAGE_SETTINGS: readonly LanguageSetting[] = ['auto', ...LANGUAGES, PSEUDO_LANGUAGE];

/** Each language's own name for itself: how an agent who cannot read the current one finds theirs. */
export const LANGUAGE_NAMES: Readonly<Record<Language, string>> = {
  en: 'English',
  es: 'Español',
  'pt-BR': 'Português (Brasil)',
  hi: 'हिन्दी',
  id: 'Bahasa Indonesia',
  ar: 'العربية',
};

const RIGHT_TO_LEFT: ReadonlySet<string> = new Set(['ar']);

export const directionOf = (language: UiLanguage): 'ltr' | 'rtl' => (RIGHT_TO_LEFT.has(language) ? 'rtl' : 'ltr');

export const isLanguageSetting = (value: unknown): value is LanguageSetting => typeof value === 'string' && (LANGUAGE_SETTINGS as readonly string[]).includes(value);

/**
 * The first of the agent's preferred languages (navigator.languages, most preferred first) that the
 * app speaks, matched on the primary subtag: es-MX and es-419 get Spanish, pt and pt-PT Brazilian
 * Portuguese (the only Portuguese), in (Indonesian's old code) Indonesian. English when none matches.
 */
export function matchLanguage(preferred: readonly string[]): Language {
  for (const tag of preferred) {
    const lower = tag.trim().toLowerCase();
    if (lower === PSEUDO_LANGUAGE.toLowerCase()) continue;
    const primary = lower.split(/[-_]/)[0] ?? '';
    const found = LANGUAGES.find((l) => l.toLowerCase() === lower) ?? LANGUAGES.find((l) => l.split('-')[0] === primary) ?? (primary === 'in' ? 'id' : undefined);
    if (found) return found;
  }
  return 'en';
}

/** The language the UI uses for a setting, given the system's preferred languages. */
export const resolveLanguage = (setting: LanguageSetting, preferred: readonly string[]): UiLanguage => (setting === 'auto' ? matchLanguage(preferred) : setting);
