// Settings → Network: the STUN and TURN servers a call's media may use, the TURN credentials (the
// password kept like the API key: never sent back to the window), and "Relay only".
import type { ReactNode } from 'react';
import { useSettingsActions } from '../app/controllers-context';
import { COMMAND_LINE_TEXT, NETWORK_LABELS, relayOnlyWarning, relayTurnNote, type NetworkField } from '../store/network-form';
import { useAppStore } from '../store/store';

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
          {NETWORK_LABELS[field]}
        </label>
        {props.stored && <span className="badge badge-stored">stored</span>}
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
  const network = useAppStore((s) => s.settings?.network);
  const form = useAppStore((s) => s.networkForm);
  const { errors, draft } = form;
  const warning = relayOnlyWarning(draft, network?.relayTurn);
  const turnNote = relayTurnNote(network?.relayTurn);

  return (
    <section className="network-settings" aria-labelledby="network-settings-title">
      <h3 id="network-settings-title" className="card-title">
        Network
      </h3>
      {network?.fromCommandLine && <p className="hint network-note">{COMMAND_LINE_TEXT}</p>}
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
          placeholder={'stun:stun.example.com:3478\nturns:turn.example.com:443'}
          hint={
            <>
              One per line: <code>stun:host:3478</code>, <code>turn:host:3478</code>, <code>turns:host:443</code> (TLS); add <code>?transport=tcp</code> to
              reach a TURN server over TCP. Behind a firewall that blocks UDP, calls need a TURN server over TCP or TLS on port 443.
            </>
          }
        />
        <TextField field="turnUsername" value={draft.turnUsername} error={errors.turnUsername} hint="For the turn: and turns: servers listed above." />
        <TextField
          field="turnPassword"
          value={draft.turnPassword}
          error={errors.turnPassword}
          password
          stored={network?.hasTurnPassword ?? false}
          hint={network?.hasTurnPassword ? 'A password is stored. Leave blank to keep it.' : 'Kept like the API key: never shown again.'}
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
            {NETWORK_LABELS.relayOnly}
          </label>
          <FieldError id="network-relayOnly-error" text={errors.relayOnly} />
          <p id="network-relayOnly-hint" className="hint">
            Every call goes through a TURN server: the customer never sees your address. Needs a TURN server.
          </p>
          {/* A warning, not an error: the settings may still be saved. Always present, so that the text is announced when it appears. */}
          <p id="network-relayOnly-warning" className="hint field-warning" aria-live="polite">
            {warning}
          </p>
        </div>
        {form.formError && (
          <p role="alert" className="field-error form-error">
            {form.formError}
          </p>
        )}
        <div className="actions">
          {/* Not "Save": the account form above has that button. */}
          <button type="submit" className="btn btn-secondary" disabled={form.busy}>
            Save network settings
          </button>
        </div>
        <p role="status" className="form-status">
          {form.status}
        </p>
      </form>
    </section>
  );
}
