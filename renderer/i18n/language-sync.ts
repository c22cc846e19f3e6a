// Keeps the UI's language on the "Language" preference: the language chosen, or with 'auto' the
// system's (navigator.languages: in Electron the operating system's, in a tab the browser's), which
// is followed when it changes too.
import { resolveLanguage, type LanguageSetting } from '../../shared/i18n/languages';
import { setUiLanguage } from './i18n';

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

export function startLanguageSync(source: LanguageSource, env: LanguageEnvironment): () => void {
  const apply = () => void setUiLanguage(resolveLanguage(source.setting(), env.preferred()), env.document);
  apply();
  const stops = [source.onSettingChange(apply), env.onPreferredChange(apply)];
  return () => stops.forEach((stop) => stop());
}
