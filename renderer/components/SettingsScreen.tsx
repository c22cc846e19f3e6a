import { useRef, type HTMLInputTypeAttribute } from 'react';
import { useSettingsActions } from '../app/controllers-context';
import { SECRET_STORAGE_TEXT } from '../call-display';
import { AudioSettings } from './AudioSettings';
import { DeskSettings } from './DeskSettings';
import { DiagnosticsSettings } from './DiagnosticsSettings';
import { NetworkSettings } from './NetworkSettings';
import { SETTINGS_LABELS, type SettingsField } from '../store/settings-form';
import { useAppStore } from '../store/store';

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

  const fields: FieldSpec[] = [
    { name: 'gatewayUrl', type: 'url', hint: 'Ends in the version segment.', placeholder: 'https://gateway.example.com/restapi/v1', autoComplete: 'url' },
    {
      name: 'apiKey',
      type: 'password',
      hint: settings?.hasApiKey ? 'A key is stored. Leave blank to keep it.' : 'From the business account console.',
      autoComplete: 'off',
    },
    { name: 'productSegment', type: 'text', hint: 'The path segment of the calling API; usually "chatapp".', placeholder: 'chatapp', autoComplete: 'off' },
    { name: 'relayUrl', type: 'url', hint: 'Where this app receives call events.', placeholder: 'https://relay.example.com', autoComplete: 'url' },
    {
      name: 'agentToken',
      type: 'password',
      hint: settings?.hasAgentToken ? 'A token is stored. Leave blank to keep it.' : 'Identifies you to the relay.',
      autoComplete: 'off',
    },
    { name: 'defaultCountry', type: 'text', hint: 'Two letters, e.g. GB, for numbers dialled without a country code. Optional.', placeholder: 'GB', autoComplete: 'off', maxLength: 2 },
  ];
  const stored: Partial<Record<SettingsField, boolean>> = { apiKey: settings?.hasApiKey, agentToken: settings?.hasAgentToken };

  return (
    <section className="card settings" aria-labelledby="settings-title">
      <div className="settings-head">
        <h2 id="settings-title" className="card-title">
          Settings
        </h2>
        <button type="button" className="btn btn-quiet" onClick={() => setScreen('phone')}>
          Back
        </button>
      </div>
      <p className="mode-line">
        {settings?.mode === 'account' ? 'Using your account.' : 'Using the sandbox: simulated customers, no real calls. Save an account to call customers.'}
      </p>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void settingsActions.saveSettings().then((field) => {
            if (field) inputs.current[field]?.focus();
          });
        }}
      >
        {fields.map((f) => {
          const error = form.errors[f.name];
          const id = `setting-${f.name}`;
          const describedBy = [error ? `${id}-error` : null, `${id}-hint`].filter(Boolean).join(' ');
          return (
            <div className="field" key={f.name}>
              <div className="label-row">
                <label htmlFor={id} className="field-label">
                  {SETTINGS_LABELS[f.name]}
                </label>
                {stored[f.name] && <span className="badge badge-stored">stored</span>}
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
            Save
          </button>
          <button type="button" className="btn btn-secondary" disabled={form.busy} onClick={() => void settingsActions.useSandbox()}>
            Use sandbox
          </button>
        </div>
        <p role="status" className="form-status">
          {form.status}
        </p>
      </form>
      {settings && (
        <p className="secret-note">
          <svg viewBox="0 0 24 24" aria-hidden="true" focusable="false" className="note-icon">
            <path d="M12 2a5 5 0 0 0-5 5v3H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-8a2 2 0 0 0-2-2h-1V7a5 5 0 0 0-5-5zm-3 8V7a3 3 0 0 1 6 0v3z" />
          </svg>
          {SECRET_STORAGE_TEXT[settings.secretStorage]}
        </p>
      )}
      <NetworkSettings />
      <AudioSettings />
      <DeskSettings />
      <DiagnosticsSettings />
    </section>
  );
}
