// Settings → "Updates": where new versions come from (the feed's address, empty for none), the
// channel, "Check for updates", and where updates stand. The browser host cannot update itself.
import { useEffect, useId } from 'react';
import { useTranslation } from 'react-i18next';
import { UPDATE_CHANNELS, type UpdateChannel, type UpdateStatus } from '../../shared/updates';
import { useUpdateActions } from '../app/controllers-context';
import { formatPercent, formatTime } from '../i18n/format';
import { i18n } from '../i18n/i18n';
import { sayText } from '../i18n/texts';
import { useUpdateStatusStore } from '../store/updates';
import { SECTION_HEADING_ID } from './settings-sections';

/** Where updates stand, in words. */
export function updateStatusText(status: UpdateStatus | undefined): string {
  const t = i18n.getFixedT(null, 'settings');
  switch (status?.kind) {
    case undefined:
    case 'off':
      return t('updates.status.off');
    case 'idle':
      return status.checkedAt === undefined ? t('updates.status.idle') : t('updates.status.upToDate', { time: formatTime(status.checkedAt) });
    case 'checking':
      return t('updates.status.checking');
    case 'available':
      return t('updates.status.available', { version: status.version });
    case 'downloading':
      return t('updates.status.downloading', { version: status.version, percent: formatPercent(status.percent) });
    case 'ready':
      return t('updates.status.ready', { version: status.version });
    case 'error':
      return t('updates.status.error', { message: status.text ? sayText(status.text) : status.message });
    case 'unsupported':
      return t('updates.status.unsupported');
  }
}

export function UpdateSettings() {
  const { t } = useTranslation('settings');
  const updates = useUpdateActions();
  const status = useUpdateStatusStore((s) => s.status);
  const form = useUpdateStatusStore((s) => s.form);
  const id = useId();
  useEffect(() => {
    void updates.load();
  }, [updates]);

  const unsupported = status === undefined || status.kind === 'unsupported';
  const busyChecking = status?.kind === 'checking' || status?.kind === 'downloading';
  const feedError = form.error?.field === 'feedUrl' ? form.error.text : null;
  const otherError = form.error && form.error.field !== 'feedUrl' ? form.error.text : null;
  return (
    <section className="settings-section" aria-labelledby={SECTION_HEADING_ID.updates}>
      <h3 id={SECTION_HEADING_ID.updates} className="settings-section-title" tabIndex={-1}>
        {t('updates.title')}
      </h3>
      {unsupported ? (
        <p className="hint">{t('updates.status.unsupported')}</p>
      ) : (
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void updates.save();
          }}
        >
          <div className="field">
            <label htmlFor={`${id}-feed`} className="field-label">
              {t('updates.feedUrl.label')}
            </label>
            <input
              id={`${id}-feed`}
              className="input"
              type="url"
              dir="ltr"
              spellCheck={false}
              autoComplete="url"
              value={form.draft.feedUrl}
              aria-invalid={feedError ? true : undefined}
              aria-describedby={feedError ? `${id}-feed-error ${id}-feed-hint` : `${id}-feed-hint`}
              onChange={(e) => updates.edit({ feedUrl: e.target.value })}
            />
            {feedError && (
              <p id={`${id}-feed-error`} role="alert" className="field-error">
                {feedError}
              </p>
            )}
            <p id={`${id}-feed-hint`} className="hint">
              {t('updates.feedUrl.hint')}
            </p>
          </div>
          <div className="field">
            <label htmlFor={`${id}-channel`} className="field-label">
              {t('updates.channel.label')}
            </label>
            <select id={`${id}-channel`} className="input" value={form.draft.channel} aria-describedby={`${id}-channel-hint`} onChange={(e) => updates.edit({ channel: e.target.value as UpdateChannel })}>
              {UPDATE_CHANNELS.map((channel) => (
                <option key={channel} value={channel}>
                  {t(`updates.channel.${channel}`)}
                </option>
              ))}
            </select>
            <p id={`${id}-channel-hint`} className="hint">
              {t('updates.channel.hint')}
            </p>
          </div>
          {otherError && (
            <p role="alert" className="field-error form-error">
              {otherError}
            </p>
          )}
          <div className="actions">
            <button type="submit" className="btn btn-secondary" disabled={form.busy}>
              {t('updates.save')}
            </button>
            <button type="button" className="btn btn-secondary" disabled={busyChecking || status?.kind === 'off'} onClick={() => void updates.check()}>
              {t('updates.check')}
            </button>
          </div>
          <p role="status" className="form-status">
            {form.saved ? `${t('updates.saved')} ` : ''}
            {updateStatusText(status)}
          </p>
        </form>
      )}
    </section>
  );
}
