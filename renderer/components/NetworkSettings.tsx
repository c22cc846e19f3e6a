// Settings → Network: the STUN and TURN servers a call's media may use, the TURN credentials (the
// password kept like the API key: never sent back to the window), and "Relay only".
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { useSettingsActions } from '../app/controllers-context';
import { relayOnlyWarning, relayTurnNote, type NetworkField } from '../store/network-form';
import { ltrInText } from '../store/settings-form';
import { useAppStore } from '../store/store';
import { SECTION_HEADING_ID } from './settings-sections';
import { SettingsFormFooter } from './SettingsFormFooter';

/** Each field's element id: focus goes to the first field with an error after Save. */
const fieldId = (field: NetworkField): string => `network-${field}`;

const describedBy = (...ids: (string | false | undefined)[]): string | undefined => ids.filter(Boolean).join(' ') || undefined;

function FieldError({ id, text }: { id: string; text: string | undefined }) {
  if (!text) return null;
  return (
    <p id={id} role="alert" className="field-error">
      {text}
    </p>
  );
}

type TextFieldName = Exclude<NetworkField, 'relayOnly'>;

/** One of the section's text fields: label (with "stored" for a kept password), input, its error and its hint. */
function TextField(props: { field: TextFieldName; value: string; error: string | undefined; hint: ReactNode; multiline?: boolean; password?: boolean; stored?: boolean; placeholder?: string }) {
  const settingsActions = useSettingsActions();
  const { t } = useTranslation('settings');
  const { field, error } = props;
  const id = fieldId(field);
  const common = {
    id,
    name: field,
    value: props.value,
    placeholder: props.placeholder,
    autoComplete: 'off',
    spellCheck: props.password ? undefined : false,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy(error && `${id}-error`, `${id}-hint`),
    onChange: (e: { target: { value: string } }) => settingsActions.editNetwork(field, e.target.value),
  };
  return (
    <div className="field">
      <div className="label-row">
        <label htmlFor={id} className="field-label">
          {t(`network.${field}.label`)}
        </label>
        {props.stored && <span className="badge badge-stored">{t('screen.stored')}</span>}
      </div>
      {props.multiline ? <textarea {...common} className="input input-mono" rows={4} /> : <input {...common} className="input" type={props.password ? 'password' : 'text'} />}
      <FieldError id={`${id}-error`} text={error} />
      <p id={`${id}-hint`} className="hint">
        {props.hint}
      </p>
    </div>
  );
}

export function NetworkSettings() {
  const settingsActions = useSettingsActions();
  const { t } = useTranslation('settings');
  const network = useAppStore((s) => s.settings?.network);
  const form = useAppStore((s) => s.networkForm);
  const { errors, draft } = form;
  const warning = relayOnlyWarning(draft, network?.relayTurn);
  const turnNote = relayTurnNote(network?.relayTurn);

  return (
    <section className="network-settings settings-section" aria-labelledby={SECTION_HEADING_ID.network}>
      <h3 id={SECTION_HEADING_ID.network} className="settings-section-title" tabIndex={-1}>
        {t('network.title')}
      </h3>
      {network?.fromCommandLine && <p className="hint network-note">{t('network.commandLine', { flag: ltrInText('--ice-servers') })}</p>}
      {turnNote && <p className={`hint network-note ${turnNote.tone === 'warning' ? 'field-warning' : ''}`}>{turnNote.text}</p>}
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void settingsActions.saveNetwork().then((field) => {
            if (field) document.getElementById(fieldId(field))?.focus();
          });
        }}
      >
        <TextField
          field="servers"
          value={draft.servers}
          error={errors.servers}
          multiline
          placeholder={t('network.servers.placeholder')}
          hint={t('network.servers.hint', {
            stun: ltrInText('stun:host:3478'),
            turn: ltrInText('turn:host:3478'),
            turns: ltrInText('turns:host:443'),
            tcp: ltrInText('?transport=tcp'),
          })}
        />
        <TextField field="turnUsername" value={draft.turnUsername} error={errors.turnUsername} hint={t('network.turnUsername.hint')} />
        <TextField
          field="turnPassword"
          value={draft.turnPassword}
          error={errors.turnPassword}
          password
          stored={network?.hasTurnPassword ?? false}
          hint={network?.hasTurnPassword ? t('network.turnPassword.hintStored') : t('network.turnPassword.hint')}
        />
        <div className="field checkbox-field">
          <label className="checkbox-label">
            <input
              id={fieldId('relayOnly')}
              type="checkbox"
              name="relayOnly"
              checked={draft.relayOnly}
              aria-invalid={errors.relayOnly ? true : undefined}
              aria-describedby={describedBy(errors.relayOnly && 'network-relayOnly-error', 'network-relayOnly-hint', warning !== null && 'network-relayOnly-warning')}
              onChange={(e) => settingsActions.editNetwork('relayOnly', e.target.checked)}
            />
            {t('network.relayOnly.label')}
          </label>
          <FieldError id="network-relayOnly-error" text={errors.relayOnly} />
          <p id="network-relayOnly-hint" className="hint">
            {t('network.relayOnly.hint')}
          </p>
          {/* A warning, not an error: the settings may still be saved. Always present, so that the text is announced when it appears. */}
          <p id="network-relayOnly-warning" className="hint field-warning" aria-live="polite">
            {warning}
          </p>
        </div>
        <SettingsFormFooter formError={form.formError} busy={form.busy} status={form.status} saveLabel={t('network.save')} />
      </form>
    </section>
  );
}
