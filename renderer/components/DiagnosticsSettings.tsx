// Settings → Diagnostics: "Export diagnostics" (one file for support) and "Test my setup" (a line per
// check as it comes, then the verdict).
import type { TFunction } from 'i18next';
import { useSyncExternalStore } from 'react';
import { useTranslation } from 'react-i18next';
import { useDiagnostics } from '../app/controllers-context';
import type { ExportStatus, SetupCheckView } from '../app/diagnostics-actions';
import { SETUP_CHECK_IDS, verdictText, type SetupCheckId, type SetupCheckResult, type SetupCheckStatus } from '../app/setup-check';
import { ltrInText, settingsText } from '../store/settings-form';
import { SECTION_HEADING_ID } from './settings-sections';

/** A sign beside each line; the line's words carry the meaning. The info sign is a letter: settings.json has it. */
const MARKS: Readonly<Record<Exclude<SetupCheckStatus, 'info'> | 'pending', string>> = {
  passed: '✓',
  played: '♪',
  warning: '!',
  blocking: '✕',
  pending: '…',
};

function exportText(status: ExportStatus, t: TFunction<'settings'>): string {
  switch (status.kind) {
    case 'exporting':
      return t('diagnostics.exporting');
    case 'saved':
      return t('diagnostics.saved', { fileName: ltrInText(status.fileName) });
    case 'idle':
    case 'failed':
      return '';
  }
}

function CheckLines({ setup }: { setup: SetupCheckView }) {
  const { t } = useTranslation('settings');
  if (setup.kind === 'idle') return null;
  const known = new Map<SetupCheckId, SetupCheckResult>((setup.kind === 'done' ? setup.report.results : setup.results).map((r) => [r.id, r]));
  return (
    <ul className="setup-check-list" aria-label={t('diagnostics.list')}>
      {SETUP_CHECK_IDS.map((id) => {
        const result = known.get(id);
        const status = result?.status ?? 'pending';
        return (
          <li key={id} className={`setup-check-item setup-check-${status}`}>
            <span className="setup-check-mark" aria-hidden="true">
              {status === 'info' ? t('diagnostics.infoMark') : MARKS[status]}
            </span>
            <span>{result ? settingsText(result.text) : t(`diagnostics.pending.${id}`)}</span>
          </li>
        );
      })}
    </ul>
  );
}

export function DiagnosticsSettings() {
  const diagnostics = useDiagnostics();
  const { t } = useTranslation('settings');
  const view = useSyncExternalStore(diagnostics.subscribe, diagnostics.view, diagnostics.view);
  const { exportStatus, setup } = view;
  const exporting = exportStatus.kind === 'exporting';
  const running = setup.kind === 'running';
  return (
    <section className="diagnostics-settings settings-section" aria-labelledby={SECTION_HEADING_ID.diagnostics}>
      <h3 id={SECTION_HEADING_ID.diagnostics} className="settings-section-title" tabIndex={-1}>
        {t('diagnostics.title')}
      </h3>
      <p className="hint">{t('diagnostics.intro')}</p>
      <div className="actions">
        {/* aria-disabled rather than disabled: a button that is pressed keeps the focus while it works. */}
        <button type="button" className="btn btn-secondary" aria-disabled={exporting} onClick={() => void diagnostics.exportDiagnostics()}>
          {t('diagnostics.export')}
        </button>
        <button type="button" className="btn btn-secondary" aria-disabled={running} onClick={() => void diagnostics.testSetup()}>
          {t('diagnostics.testSetup')}
        </button>
      </div>
      <p role="status" className="form-status">
        {exportText(exportStatus, t)}
      </p>
      {exportStatus.kind === 'failed' && (
        <p role="alert" className="field-error">
          {settingsText(exportStatus.text)}
        </p>
      )}
      <CheckLines setup={setup} />
      <p role="status" className={`form-status setup-verdict ${setup.kind === 'done' ? `setup-verdict-${setup.report.verdict.kind}` : ''}`}>
        {setup.kind === 'running' ? t('diagnostics.running') : setup.kind === 'done' ? verdictText(setup.report.verdict) : ''}
      </p>
    </section>
  );
}
