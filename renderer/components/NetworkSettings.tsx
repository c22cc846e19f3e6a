// Settings → Network: the STUN and TURN servers a call's media may use, the TURN credentials (the
// password kept like the API key: never sent back to the window), and "Relay only".
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
        <div className="field">
          <label htmlFor={fieldId('servers')} className="field-label">
            {NETWORK_LABELS.servers}
          </label>
          <textarea
            id={fieldId('servers')}
            className="input input-mono"
            name="servers"
            rows={4}
            value={draft.servers}
            placeholder={'stun:stun.example.com:3478\nturns:turn.example.com:443'}
            autoComplete="off"
            spellCheck={false}
            aria-invalid={errors.servers ? true : undefined}
            aria-describedby={describedBy(errors.servers && 'network-servers-error', 'network-servers-hint')}
            onChange={(e) => settingsActions.editNetwork('servers', e.target.value)}
          />
          <FieldError id="network-servers-error" text={errors.servers} />
          <p id="network-servers-hint" className="hint">
            One per line: <code>stun:host:3478</code>, <code>turn:host:3478</code>, <code>turns:host:443</code> (TLS); add <code>?transport=tcp</code> to
            reach a TURN server over TCP. Behind a firewall that blocks UDP, calls need a TURN server over TCP or TLS on port 443.
          </p>
        </div>
        <div className="field">
          <label htmlFor={fieldId('turnUsername')} className="field-label">
            {NETWORK_LABELS.turnUsername}
          </label>
          <input
            id={fieldId('turnUsername')}
            className="input"
            name="turnUsername"
            type="text"
            value={draft.turnUsername}
            autoComplete="off"
            spellCheck={false}
            aria-invalid={errors.turnUsername ? true : undefined}
            aria-describedby={describedBy(errors.turnUsername && 'network-turnUsername-error', 'network-turnUsername-hint')}
            onChange={(e) => settingsActions.editNetwork('turnUsername', e.target.value)}
          />
          <FieldError id="network-turnUsername-error" text={errors.turnUsername} />
          <p id="network-turnUsername-hint" className="hint">
            For the turn: and turns: servers listed above.
          </p>
        </div>
        <div className="field">
          <div className="label-row">
            <label htmlFor={fieldId('turnPassword')} className="field-label">
              {NETWORK_LABELS.turnPassword}
            </label>
            {network?.hasTurnPassword && <span className="badge badge-stored">stored</span>}
          </div>
          <input
            id={fieldId('turnPassword')}
            className="input"
            name="turnPassword"
            type="password"
            value={draft.turnPassword}
            autoComplete="off"
            aria-invalid={errors.turnPassword ? true : undefined}
            aria-describedby={describedBy(errors.turnPassword && 'network-turnPassword-error', 'network-turnPassword-hint')}
            onChange={(e) => settingsActions.editNetwork('turnPassword', e.target.value)}
          />
          <FieldError id="network-turnPassword-error" text={errors.turnPassword} />
          <p id="network-turnPassword-hint" className="hint">
            {network?.hasTurnPassword ? 'A password is stored. Leave blank to keep it.' : 'Kept like the API key: never shown again.'}
          </p>
        </div>
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
