import { useTranslation } from 'react-i18next';
import { useCallActions } from '../app/controllers-context';
import { ltrInText } from '../call-display';
import { hasBusyCall } from '../../shared/call-state';
import { useAppStore } from '../store/store';

/** A number anyone can read as an example: the UK's range kept for drama (Ofcom), never a subscriber's. */
const EXAMPLE_NUMBER = '+44 20 7946 0958';

export function Dialer() {
  const { t } = useTranslation('calls');
  const callActions = useCallActions();
  const value = useAppStore((s) => s.dialInput);
  const error = useAppStore((s) => s.dialError);
  const warning = useAppStore((s) => s.dialWarning);
  const busy = useAppStore((s) => s.dialBusy);
  const onCall = useAppStore((s) => hasBusyCall(Object.values(s.calls)));
  const defaultCountry = useAppStore((s) => s.settings?.defaultCountry);

  const hint = defaultCountry ? t('dialer.hintCountry', { country: defaultCountry }) : t('dialer.hint', { example: ltrInText(EXAMPLE_NUMBER) });
  const finishFirst = onCall ? t('dialer.finishCurrentCall') : undefined;

  return (
    <section className="card dialer" aria-label={t('dialer.region')}>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void callActions.dial();
        }}
      >
        <label htmlFor="dial-number" className="field-label">
          {t('dialer.phoneNumber')}
        </label>
        <div className="dial-row">
          {/* Phone numbers read left to right in every language. */}
          <input
            id="dial-number"
            className="input input-dial"
            type="tel"
            inputMode="tel"
            autoComplete="tel"
            dir="ltr"
            placeholder={EXAMPLE_NUMBER}
            value={value}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? 'dial-error' : warning ? 'dial-warning' : 'dial-hint'}
            onChange={(e) => callActions.setDialInput(e.target.value)}
          />
          <button type="submit" className="btn btn-call" disabled={busy || onCall} title={finishFirst}>
            <svg viewBox="0 0 24 24" aria-hidden="true" focusable="false" className="btn-icon">
              <path d="M6.6 10.8a15.1 15.1 0 0 0 6.6 6.6l2.2-2.2a1 1 0 0 1 1-.25 11.4 11.4 0 0 0 3.6.57 1 1 0 0 1 1 1V20a1 1 0 0 1-1 1A17 17 0 0 1 3 4a1 1 0 0 1 1-1h3.5a1 1 0 0 1 1 1c0 1.25.2 2.45.57 3.6a1 1 0 0 1-.25 1z" />
            </svg>
            {t('dialer.call')}
          </button>
        </div>
        {error ? (
          <p id="dial-error" role="alert" className="field-error">
            {error}
          </p>
        ) : warning ? (
          // Possible but not in the metadata: the agent decides, and the gateway judges the call.
          <div className="dial-warning">
            <p id="dial-warning" role="alert">
              {warning}
            </p>
            <button type="button" className="btn btn-secondary" disabled={busy || onCall} title={finishFirst} onClick={() => void callActions.dial({ anyway: true })}>
              {t('dialer.callAnyway')}
            </button>
          </div>
        ) : (
          <p id="dial-hint" className="hint">
            {hint}
          </p>
        )}
      </form>
    </section>
  );
}
