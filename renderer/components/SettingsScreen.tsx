import { useLayoutEffect, useRef, type HTMLInputTypeAttribute } from 'react';
import { useTranslation } from 'react-i18next';
import { useSettingsActions } from '../app/controllers-context';
import { SECRET_STORAGE_TEXT } from '../call-display';
import { AudioSettings } from './AudioSettings';
import { DeskSettings } from './DeskSettings';
import { DiagnosticsSettings } from './DiagnosticsSettings';
import { LanguageSettings } from './LanguageSettings';
import { UpdateSettings } from './UpdateSettings';
import { NetworkSettings } from './NetworkSettings';
import { ServiceCaptureSettings } from './ServiceCaptureSettings';
import { SettingsNav } from './SettingsNav';
import type { SettingsField } from '../store/settings-form';
import { useAppStore } from '../store/store';
import { SECTION_HEADING_ID } from './settings-sections';

interface FieldSpec {
  name: SettingsField;
  type: HTMLInputTypeAttribute;
  hint: string;
  placeholder?: string;
  autoComplete?: string;
  maxLength?: number;
}

export function SettingsScreen() {
  const settingsActions = useSettingsActions();
  const settings = useAppStore((s) => s.settings);
  const form = useAppStore((s) => s.settingsForm);
  const setScreen = useAppStore((s) => s.setScreen);
  const inputs = useRef<Partial<Record<SettingsField, HTMLInputElement | null>>>({});
  const screen = useRef<HTMLElement>(null);
  const sections = useRef<HTMLDivElement>(null);
  const { t } = useTranslation('settings');

  // The screen opens at its top, its first section the one read, wherever the phone screen was scrolled to
  // (the header's "Settings" stays in sight down to the recent calls).
  useLayoutEffect(() => {
    window.scrollTo({ top: 0, behavior: 'instant' });
  }, []);

  const fields: FieldSpec[] = [
    { name: 'gatewayUrl', type: 'url', hint: t('account.gatewayUrl.hint'), placeholder: t('account.gatewayUrl.placeholder'), autoComplete: 'url' },
    {
      name: 'apiKey',
      type: 'password',
      hint: settings?.hasApiKey ? t('account.apiKey.hintStored') : t('account.apiKey.hint'),
      autoComplete: 'off',
    },
    { name: 'productSegment', type: 'text', hint: t('account.productSegment.hint'), placeholder: t('account.productSegment.placeholder'), autoComplete: 'off' },
    { name: 'relayUrl', type: 'url', hint: t('account.relayUrl.hint'), placeholder: t('account.relayUrl.placeholder'), autoComplete: 'url' },
    {
      name: 'agentToken',
      type: 'password',
      hint: settings?.hasAgentToken ? t('account.agentToken.hintStored') : t('account.agentToken.hint'),
      autoComplete: 'off',
    },
    { name: 'defaultCountry', type: 'text', hint: t('account.defaultCountry.hint'), placeholder: t('account.defaultCountry.placeholder'), autoComplete: 'off', maxLength: 2 },
  ];
  const stored: Partial<Record<SettingsField, boolean>> = { apiKey: settings?.hasApiKey, agentToken: settings?.hasAgentToken };

  // Every section stays in the page, in one column the list beside (or above) it moves through: other
  // software finds the fields by their names anywhere on this screen.
  return (
    <section ref={screen} className="card settings-screen" aria-labelledby="settings-title">
      <div className="settings-head">
        <h2 id="settings-title" className="card-title">
          {t('screen.title')}
        </h2>
        <button type="button" className="btn btn-quiet" onClick={() => setScreen('phone')}>
          {t('screen.back')}
        </button>
      </div>
      <p className="mode-line">
        {settings?.mode === 'account' ? t('screen.modeAccount') : t('screen.modeSandbox')}
      </p>
      <div className="settings-body">
        <SettingsNav screen={screen} sections={sections} />
        <div ref={sections} className="settings">
          <LanguageSettings />
          <form
            noValidate
            className="settings-section"
            aria-labelledby={SECTION_HEADING_ID.account}
            onSubmit={(e) => {
              e.preventDefault();
              void settingsActions.saveSettings().then((field) => {
                if (field) inputs.current[field]?.focus();
              });
            }}
          >
            <h3 id={SECTION_HEADING_ID.account} className="settings-section-title" tabIndex={-1}>
              {t('account.title')}
            </h3>
            {fields.map((f) => {
              const error = form.errors[f.name];
              const id = `setting-${f.name}`;
              const describedBy = [error ? `${id}-error` : null, `${id}-hint`].filter(Boolean).join(' ');
              return (
                <div className="field" key={f.name}>
                  <div className="label-row">
                    <label htmlFor={id} className="field-label">
                      {t(`account.${f.name}.label`)}
                    </label>
                    {stored[f.name] && <span className="badge badge-stored">{t('screen.stored')}</span>}
                  </div>
                  <input
                    id={id}
                    ref={(el) => {
                      inputs.current[f.name] = el;
                    }}
                    className="input"
                    name={f.name}
                    type={f.type}
                    value={form.draft[f.name]}
                    placeholder={f.placeholder}
                    autoComplete={f.autoComplete}
                    maxLength={f.maxLength}
                    spellCheck={false}
                    aria-invalid={error ? true : undefined}
                    aria-describedby={describedBy}
                    onChange={(e) => settingsActions.editSettings(f.name, e.target.value)}
                  />
                  {error && (
                    <p id={`${id}-error`} role="alert" className="field-error">
                      {error}
                    </p>
                  )}
                  <p id={`${id}-hint`} className="hint">
                    {f.hint}
                  </p>
                </div>
              );
            })}
            {form.formError && (
              <p role="alert" className="field-error form-error">
                {form.formError}
              </p>
            )}
            <div className="actions">
              <button type="submit" className="btn btn-primary" disabled={form.busy}>
                {t('screen.save')}
              </button>
              <button type="button" className="btn btn-secondary" disabled={form.busy} onClick={() => void settingsActions.useSandbox()}>
                {t('screen.useSandbox')}
              </button>
            </div>
            <p role="status" className="form-status">
              {form.status}
            </p>
            {settings && (
              <p className="secret-note">
                <svg viewBox="0 0 24 24" aria-hidden="true" focusable="false" className="note-icon">
                  <path d="M12 2a5 5 0 0 0-5 5v3H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-8a2 2 0 0 0-2-2h-1V7a5 5 0 0 0-5-5zm-3 8V7a3 3 0 0 1 6 0v3z" />
                </svg>
                {SECRET_STORAGE_TEXT[settings.secretStorage]}
              </p>
            )}
          </form>
          <NetworkSettings />
          <AudioSettings />
          <DeskSettings />
          <ServiceCaptureSettings />
          <DiagnosticsSettings />
          <UpdateSettings />
        </div>
      </div>
    </section>
  );
}
