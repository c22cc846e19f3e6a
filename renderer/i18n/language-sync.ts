// Keeps the UI's language on the "Language" preference: the language chosen, or with 'auto' the
// system's (navigator.languages: in Electron the operating system's, in a tab the browser's), which
// is followed when it changes too.
import { resolveLanguage, type LanguageSetting } from '../../shared/i18n/languages';
import { createLogger } from '../../shared/log';
import { errorText } from '../../shared/result';
import { setUiLanguage } from './i18n';

const log = createLogger('i18n');

export interface LanguageSource {
  /** The preference now, and a way to hear of its changes (returns the unsubscribe). */
  setting(): LanguageSetting;
  onSettingChange(listener: () => void): () => void;
}

export interface LanguageEnvironment {
  preferred(): readonly string[];
  onPreferredChange(listener: () => void): () => void;
  document?: Document;
}

export const browserLanguageEnvironment = (win: Window): LanguageEnvironment => ({
  preferred: () => (win.navigator.languages.length > 0 ? win.navigator.languages : [win.navigator.language]),
  onPreferredChange: (listener) => {
    win.addEventListener('languagechange', listener);
    return () => win.removeEventListener('languagechange', listener);
  },
  document: win.document,
});

export interface LanguageSync {
  /** Settles once the language of the start is in place (the window renders after it). */
  ready: Promise<void>;
  stop(): void;
}

export function startLanguageSync(source: LanguageSource, env: LanguageEnvironment): LanguageSync {
  const apply = (): Promise<void> => {
    const language = resolveLanguage(source.setting(), env.preferred());
    return setUiLanguage(language, env.document).catch((e: unknown) => {
      // The window goes on in the language it has; the next change tries again.
      log.error('a language could not be loaded', { language, problem: errorText(e) });
    });
  };
  const ready = apply();
  const stops = [source.onSettingChange(() => void apply()), env.onPreferredChange(() => void apply())];
  return { ready, stop: () => stops.forEach((stop) => stop()) };
}
