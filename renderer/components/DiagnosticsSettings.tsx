// Settings → Diagnostics: "Export diagnostics" (one file for support) and "Test my setup" (a line per
// check as it comes, then the verdict).
import { useSyncExternalStore } from 'react';
import { useDiagnostics } from '../app/controllers-context';
import type { ExportStatus, SetupCheckView } from '../app/diagnostics-actions';
import { SETUP_CHECK_IDS, type SetupCheckId, type SetupCheckResult, type SetupCheckStatus } from '../app/setup-check';

const PENDING_TEXT: Readonly<Record<SetupCheckId, string>> = {
  microphone: 'Measuring the microphone…',
  speaker: 'Playing a tone on the speaker…',
  ringer: 'Playing a tone on the ringer…',
  relay: 'Reaching the relay…',
  turn: 'Reaching the TURN server…',
  udp: 'Finding out whether UDP gets out…',
};

/** A sign beside each line; the line's words carry the meaning. */
const MARKS: Readonly<Record<SetupCheckStatus | 'pending', string>> = {
  passed: '✓',
  played: '♪',
  info: 'i',
  warning: '!',
  blocking: '✕',
  pending: '…',
};

const RUNNING_TEXT = 'Testing your setup: say something into your microphone, and listen for a tone on the speaker, then on the ringer.';

function exportText(status: ExportStatus): string {
  switch (status.kind) {
    case 'exporting':
      return 'Putting the diagnostics together…';
    case 'saved':
      return `Saved ${status.fileName}`;
    case 'idle':
    case 'failed':
      return '';
  }
}

function CheckLines({ setup }: { setup: SetupCheckView }) {
  if (setup.kind === 'idle') return null;
  const known = new Map<SetupCheckId, SetupCheckResult>((setup.kind === 'done' ? setup.report.results : setup.results).map((r) => [r.id, r]));
  return (
    <ul className="setup-check-list" aria-label="Setup check">
      {SETUP_CHECK_IDS.map((id) => {
        const result = known.get(id);
        const status = result?.status ?? 'pending';
        return (
          <li key={id} className={`setup-check-item setup-check-${status}`}>
            <span className="setup-check-mark" aria-hidden="true">
              {MARKS[status]}
            </span>
            <span>{result?.text ?? PENDING_TEXT[id]}</span>
          </li>
        );
      })}
    </ul>
  );
}

export function DiagnosticsSettings() {
  const diagnostics = useDiagnostics();
  const view = useSyncExternalStore(diagnostics.subscribe, diagnostics.view);
  const { exportStatus, setup } = view;
  const exporting = exportStatus.kind === 'exporting';
  const running = setup.kind === 'running';
  return (
    <section className="diagnostics-settings" aria-labelledby="diagnostics-settings-title">
      <h3 id="diagnostics-settings-title" className="card-title">
        Diagnostics
      </h3>
      <p className="hint">
        For support: one file with the recent logs and the last calls&rsquo; quality, without keys, tokens or full phone numbers. &ldquo;Test my setup&rdquo;
        checks your microphone, speaker, ringer and network in a few seconds.
      </p>
      <div className="actions">
        {/* aria-disabled rather than disabled: a button that is pressed keeps the focus while it works. */}
        <button type="button" className="btn btn-secondary" aria-disabled={exporting} onClick={() => void diagnostics.exportDiagnostics()}>
          Export diagnostics
        </button>
        <button type="button" className="btn btn-secondary" aria-disabled={running} onClick={() => void diagnostics.testSetup()}>
          Test my setup
        </button>
      </div>
      <p role="status" className="form-status">
        {exportText(exportStatus)}
      </p>
      {exportStatus.kind === 'failed' && (
        <p role="alert" className="field-error">
          {exportStatus.text}
        </p>
      )}
      <CheckLines setup={setup} />
      <p role="status" className={`form-status setup-verdict ${setup.kind === 'done' ? `setup-verdict-${setup.report.verdict.kind}` : ''}`}>
        {setup.kind === 'running' ? RUNNING_TEXT : setup.kind === 'done' ? setup.report.verdict.text : ''}
      </p>
    </section>
  );
}
