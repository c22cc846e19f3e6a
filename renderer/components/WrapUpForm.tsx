import { useTranslation } from 'react-i18next';
import { WRAP_UP_NOTES_MAX } from '../../shared/team-settings';
import { useDeskActions } from '../app/controllers-context';
import { formatNumber } from '../i18n/format';
import { useAppStore } from '../store/store';
import { wrapUpFormOf, type WrapUpField } from '../store/wrap-up-form';

/**
 * A call's wrap-up: "Disposition" (the team's codes; "None" only when the team does not ask for
 * one), "Notes" and "Save wrap-up". The draft is the store's (store/wrap-up-form.ts), so it outlives
 * this form: closing it, a re-render or a refused save loses nothing. `idBase` keeps the ids of two
 * forms of the same call (after-call work, recent calls) apart.
 */
export function WrapUpForm({ localId, idBase }: { localId: string; idBase: string }) {
  const { t } = useTranslation('calls');
  const desk = useDeskActions();
  const wrapUp = useAppStore((s) => s.history.find((h) => h.localId === localId)?.wrapUp);
  const stored = useAppStore((s) => s.wrapUps[localId]);
  const dispositions = useAppStore((s) => s.team.settings.dispositions);
  const required = useAppStore((s) => s.team.settings.dispositionRequired);
  const form = wrapUpFormOf(stored, wrapUp);
  const { draft, errors } = form;
  const id = (field: WrapUpField | 'limit' | 'form') => `${idBase}-${field}`;
  // A disposition the team has since dropped stays listed while it is the one chosen: nothing chosen is lost.
  const options = draft.disposition !== '' && !dispositions.includes(draft.disposition) ? [...dispositions, draft.disposition] : dispositions;
  const describedBy = (field: WrapUpField, ...more: string[]) => [errors[field] ? `${id(field)}-error` : '', ...more].filter(Boolean).join(' ') || undefined;
  const over = draft.notes.length > WRAP_UP_NOTES_MAX;

  return (
    <form
      className="wrapup-form"
      aria-label={t('wrapUp.title')}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void desk.saveWrapUp(localId).then((field) => {
          if (field) document.getElementById(id(field))?.focus();
        });
      }}
    >
      <div className="field">
        <label htmlFor={id('disposition')} className="field-label">
          {t('wrapUp.disposition')}
        </label>
        <select
          id={id('disposition')}
          className="input"
          value={draft.disposition}
          aria-invalid={errors.disposition ? true : undefined}
          aria-describedby={describedBy('disposition')}
          onChange={(e) => desk.editWrapUp(localId, 'disposition', e.target.value)}
        >
          {/* Required and not chosen yet: a prompt, not a code the agent did not pick. */}
          {required && draft.disposition === '' && (
            <option value="" disabled>
              {t('wrapUp.choose')}
            </option>
          )}
          {!required && <option value="">{t('wrapUp.none')}</option>}
          {options.map((d) => (
            <option key={d} value={d}>
              {d}
            </option>
          ))}
        </select>
        {errors.disposition && (
          <p id={`${id('disposition')}-error`} role="alert" className="field-error">
            {t('wrapUp.fieldError', { label: t('wrapUp.disposition'), rule: errors.disposition })}
          </p>
        )}
      </div>
      <div className="field">
        <div className="label-row">
          <label htmlFor={id('notes')} className="field-label">
            {t('wrapUp.notes')}
          </label>
          <span className={`counter ${over ? 'is-over' : ''}`} aria-hidden="true">
            {`${formatNumber(draft.notes.length)}/${formatNumber(WRAP_UP_NOTES_MAX)}`}
          </span>
        </div>
        <textarea
          id={id('notes')}
          className="input"
          rows={3}
          value={draft.notes}
          aria-invalid={errors.notes || over ? true : undefined}
          aria-describedby={describedBy('notes', id('limit'))}
          onChange={(e) => desk.editWrapUp(localId, 'notes', e.target.value)}
        />
        <p id={id('limit')} className="visually-hidden">
          {t('wrapUp.notesLimit', { count: WRAP_UP_NOTES_MAX, max: formatNumber(WRAP_UP_NOTES_MAX) })}
        </p>
        {errors.notes && (
          <p id={`${id('notes')}-error`} role="alert" className="field-error">
            {t('wrapUp.fieldError', { label: t('wrapUp.notes'), rule: errors.notes })}
          </p>
        )}
      </div>
      {form.formError !== null && (
        <p role="alert" className="field-error form-error">
          {form.formError}
        </p>
      )}
      <div className="wrapup-actions">
        {/* Busy, it stays focusable (aria-disabled): the focus is not thrown to the page while the save goes. */}
        <button type="submit" className="btn btn-primary" aria-disabled={form.busy ? true : undefined}>
          {t('wrapUp.save')}
        </button>
        <p role="status" className="form-status">
          {form.saved ? t('wrapUp.saved') : ''}
        </p>
      </div>
    </form>
  );
}
