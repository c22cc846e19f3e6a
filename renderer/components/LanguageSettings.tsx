// Settings → "Language": Automatic (the system's) or one of the languages, each in its own name.
import { useId, useState } from 'react';
import { errorMessage } from '../error-texts';
import { useTranslation } from 'react-i18next';
import { LANGUAGE_NAMES, LANGUAGES, matchLanguage, type LanguageSetting } from '../../shared/i18n/languages';
import { useSettingsActions } from '../app/controllers-context';
import { useAppStore } from '../store/store';
import { SECTION_HEADING_ID } from './settings-sections';

export function LanguageSettings() {
  const { t } = useTranslation('common');
  const settingsActions = useSettingsActions();
  const setting = useAppStore((s) => s.preferences.language);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  const system = LANGUAGE_NAMES[matchLanguage(navigator.languages.length > 0 ? navigator.languages : [navigator.language])];
  return (
    <section className="settings-section language-settings" aria-labelledby={SECTION_HEADING_ID.language}>
      {/* The section's one field: its label is the heading, so that the word is said once and the select keeps its name. */}
      <h3 id={SECTION_HEADING_ID.language} className="settings-section-title" tabIndex={-1}>
        <label htmlFor={`${id}-select`}>{t('language.label')}</label>
      </h3>
      <div className="field">
        <select
          id={`${id}-select`}
          className="input"
          value={setting === 'en-XA' ? 'auto' : setting}
          aria-describedby={error ? `${id}-error ${id}-hint` : `${id}-hint`}
          aria-invalid={error ? true : undefined}
          onChange={(e) => {
            void settingsActions.savePreferences({ language: e.target.value as LanguageSetting }).then((r) => setError(r.ok ? null : errorMessage(r.error)));
          }}
        >
          <option value="auto">{t('language.auto', { language: system })}</option>
          {LANGUAGES.map((language) => (
            // Each name in its own language and direction, so that it reads right in any UI language.
            <option key={language} value={language} lang={language} dir={language === 'ar' ? 'rtl' : 'ltr'}>
              {LANGUAGE_NAMES[language]}
            </option>
          ))}
        </select>
        <p id={`${id}-hint`} className="hint">
          {t('language.hint')}
        </p>
        {error && (
          <p id={`${id}-error`} role="alert" className="field-error">
            {error}
          </p>
        )}
      </div>
    </section>
  );
}
