// Settings → "Recording and transcription": whether calls ask the service to record them and to
// transcribe them (accept and connect carry the request: shared/service-capture.ts), why ("Purpose",
// required when either is asked for, at most 250 characters) and the language of the notice the
// service plays to both sides first. Saved on its own, like the network.
import { useTranslation } from 'react-i18next';
import { useSettingsActions } from '../app/controllers-context';
import { formatNumber } from '../i18n/format';
import { announcementLanguageName, type CaptureField } from '../store/service-capture-form';
import { useAppStore } from '../store/store';
import { ANNOUNCEMENT_LANGUAGES, SERVICE_CAPTURE_PURPOSE_MAX, type AnnouncementLanguage } from '../../shared/service-capture';
import { SECTION_HEADING_ID } from './settings-sections';
import { SettingsFormFooter } from './SettingsFormFooter';

/** Each field's element id: focus goes to the first field with an error after a save. */
const fieldId = (field: CaptureField): string => `capture-${field}`;

const describedBy = (...ids: (string | false | undefined)[]): string | undefined => ids.filter(Boolean).join(' ') || undefined;

function FieldError({ field, text }: { field: CaptureField; text: string | undefined }) {
  if (!text) return null;
  return (
    <p id={`${fieldId(field)}-error`} role="alert" className="field-error">
      {text}
    </p>
  );
}

function Checkbox({ field, checked, error }: { field: 'record' | 'transcribe'; checked: boolean; error: string | undefined }) {
  const settingsActions = useSettingsActions();
  const { t } = useTranslation('settings');
  const id = fieldId(field);
  return (
    <div className="field checkbox-field">
      <label className="checkbox-label">
        <input
          id={id}
          type="checkbox"
          name={field}
          checked={checked}
          aria-invalid={error ? true : undefined}
          aria-describedby={describedBy(error && `${id}-error`, `${id}-hint`)}
          onChange={(e) => settingsActions.editCapture(field, e.target.checked)}
        />
        {t(`serviceCapture.${field}.label`)}
      </label>
      <FieldError field={field} text={error} />
      <p id={`${id}-hint`} className="hint">
        {t(`serviceCapture.${field}.hint`)}
      </p>
    </div>
  );
}

export function ServiceCaptureSettings() {
  const settingsActions = useSettingsActions();
  const { t } = useTranslation('settings');
  const form = useAppStore((s) => s.captureForm);
  const { errors, draft } = form;
  const purposeId = fieldId('purpose');
  const languageId = fieldId('language');
  const over = draft.purpose.trim().length > SERVICE_CAPTURE_PURPOSE_MAX;

  return (
    <section className="capture-settings settings-section" aria-labelledby={SECTION_HEADING_ID.capture}>
      <h3 id={SECTION_HEADING_ID.capture} className="settings-section-title" tabIndex={-1}>
        {t('serviceCapture.title')}
      </h3>
      <p className="hint capture-intro">{t('serviceCapture.intro')}</p>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void settingsActions.saveCapture().then((field) => {
            if (field) document.getElementById(fieldId(field))?.focus();
          });
        }}
      >
        <Checkbox field="record" checked={draft.record} error={errors.record} />
        <Checkbox field="transcribe" checked={draft.transcribe} error={errors.transcribe} />
        <div className="field">
          <div className="label-row">
            <label htmlFor={purposeId} className="field-label">
              {t('serviceCapture.purpose.label')}
            </label>
            {/* The limit is in the hint; the count is for the eye. */}
            <span className={`counter ${over ? 'is-over' : ''}`} aria-hidden="true">
              {`${formatNumber(draft.purpose.trim().length)}/${formatNumber(SERVICE_CAPTURE_PURPOSE_MAX)}`}
            </span>
          </div>
          <textarea
            id={purposeId}
            name="purpose"
            className="input"
            rows={2}
            value={draft.purpose}
            placeholder={t('serviceCapture.purpose.placeholder')}
            autoComplete="off"
            aria-required={draft.record || draft.transcribe ? true : undefined}
            aria-invalid={errors.purpose ? true : undefined}
            aria-describedby={describedBy(errors.purpose && `${purposeId}-error`, `${purposeId}-hint`)}
            onChange={(e) => settingsActions.editCapture('purpose', e.target.value)}
          />
          <FieldError field="purpose" text={errors.purpose} />
          <p id={`${purposeId}-hint`} className="hint">
            {t('serviceCapture.purpose.hint', { max: formatNumber(SERVICE_CAPTURE_PURPOSE_MAX) })}
          </p>
        </div>
        <div className="field">
          <label htmlFor={languageId} className="field-label">
            {t('serviceCapture.language.label')}
          </label>
          <select
            id={languageId}
            name="language"
            className="input"
            value={draft.language}
            aria-invalid={errors.language ? true : undefined}
            aria-describedby={describedBy(errors.language && `${languageId}-error`, `${languageId}-hint`)}
            onChange={(e) => settingsActions.editCapture('language', e.target.value as AnnouncementLanguage)}
          >
            {ANNOUNCEMENT_LANGUAGES.map((language) => (
              <option key={language} value={language}>
                {announcementLanguageName(language)}
              </option>
            ))}
          </select>
          <FieldError field="language" text={errors.language} />
          <p id={`${languageId}-hint`} className="hint">
            {t('serviceCapture.language.hint')}
          </p>
        </div>
        <SettingsFormFooter formError={form.formError} busy={form.busy} status={form.status} saveLabel={t('serviceCapture.save')} />
      </form>
    </section>
  );
}
