// The end of a Settings section that saves on its own (Network, Recording and transcription): the
// refusal of its last save, its save button, and what the save said. Each section's button has its
// own name: "Save" is the account form's.

interface SettingsFormFooterProps {
  formError: string | null;
  busy: boolean;
  status: string | null;
  saveLabel: string;
}

export function SettingsFormFooter({ formError, busy, status, saveLabel }: SettingsFormFooterProps) {
  return (
    <>
      {formError && (
        <p role="alert" className="field-error form-error">
          {formError}
        </p>
      )}
      <div className="actions">
        <button type="submit" className="btn btn-secondary" disabled={busy}>
          {saveLabel}
        </button>
      </div>
      <p role="status" className="form-status">
        {status}
      </p>
    </>
  );
}
