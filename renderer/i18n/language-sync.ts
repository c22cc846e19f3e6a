// Keeps the UI's language on the "Language" preference: the language chosen, or with 'auto' the
// system's (navigator.languages: in Electron the operating system's, in a tab the browser's), which
// is followed when it changes too.
//
// The first paint waits for the saved preference (it comes with the window's first snapshot; until
// then the store holds the default, 'auto') and then for that language's strings, each wait capped:
// a snapshot or a chunk that is late must not leave the window blank. It then starts in the language
// it has, and the saved one follows when it comes.
import { resolveLanguage, type LanguageSetting, type UiLanguage } from '../../shared/i18n/languages';
import { createLogger } from '../../shared/log';
import { errorText } from '../../shared/result';
import { setUiLanguage } from './i18n';

const log = createLogger('i18n');

export interface LanguageSource {
  /** The preference now, and a way to hear of its changes (returns the unsubscribe). */
  setting(): LanguageSetting;
  onSettingChange(listener: () => void): () => void;
  /**
   * Settles once `setting()` is the agent's saved preference rather than the default (the first
   * snapshot is in, or could not be had). Absent: the setting is known from the start.
   */
  known?: Promise<void>;
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

/** How long the first paint waits, at most, for the saved preference and then for its language's strings. */
export interface FirstPaintWaits {
  settingMs: number;
  languageMs: number;
}

export const FIRST_PAINT_WAITS: FirstPaintWaits = { settingMs: 1_500, languageMs: 3_000 };

export interface LanguageSyncOptions {
  waits?: Partial<FirstPaintWaits>;
  /** What puts a language in place (its strings, then the document's lang and dir). */
  switchLanguage?: (language: UiLanguage, doc: Document | undefined) => Promise<void>;
}

export interface LanguageSync {
  /**
   * Settles when the window may render: the saved preference known and its language in place, or
   * either wait's cap passed. Never rejects.
   */
  ready: Promise<void>;
  /** Settles once the language of the latest wish is in place (or could not be loaded). */
  settled(): Promise<void>;
  stop(): void;
}

export function startLanguageSync(source: LanguageSource, env: LanguageEnvironment, options: LanguageSyncOptions = {}): LanguageSync {
  const waits: FirstPaintWaits = { ...FIRST_PAINT_WAITS, ...options.waits };
  const switchLanguage = options.switchLanguage ?? setUiLanguage;
  let latest: Promise<void> = Promise.resolve();
  const apply = (): void => {
    const language = resolveLanguage(source.setting(), env.preferred());
    latest = switchLanguage(language, env.document).catch((e: unknown) => {
      // The window goes on in the language it has; the next change tries again.
      log.error('a language could not be loaded', { language, problem: errorText(e) });
    });
  };
  // An earlier wish settles when its own strings are loaded, which may be before or after a later
  // one's: only the latest wish's language is the one in place.
  const settled = async (): Promise<void> => {
    let awaited: Promise<void>;
    do {
      awaited = latest;
      await awaited;
    } while (awaited !== latest);
  };
  apply();
  const stops = [source.onSettingChange(apply), env.onPreferredChange(apply)];
  const ready = (async () => {
    if (source.known && !(await within(source.known, waits.settingMs))) {
      log.warn('the saved language was not known in time; the window starts without it', { waitedMs: waits.settingMs });
    }
    if (!(await within(settled(), waits.languageMs))) {
      log.warn('the language was not in place in time; the window starts in the one it has', { waitedMs: waits.languageMs });
    }
  })();
  return { ready, settled, stop: () => stops.forEach((stop) => stop()) };
}

/** Whether `promise` settled (either way) within `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
