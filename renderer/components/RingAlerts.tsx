import { createContext, useContext } from 'react';
import { useTranslation } from 'react-i18next';
import type { RingAlerts as RingAlertsDomain } from '../app/ring-alerts';
import { useAlertsStore } from '../store/alerts';

/** The ring-alerts domain, given by main.tsx (it lives apart from the other domains: it only reads the app store). */
export const RingAlertsContext = createContext<RingAlertsDomain | null>(null);

/** "Enable sound" while the browser holds sound back (with an alert while a call rings unheard), and "Enable notifications". */
export function RingAlerts() {
  const { t } = useTranslation('calls');
  const domain = useContext(RingAlertsContext);
  const sound = useAlertsStore((s) => s.sound);
  const notifications = useAlertsStore((s) => s.notifications);
  if (!domain) throw new Error('RingAlerts was rendered outside RingAlertsContext');
  if (sound === 'ok' && notifications !== 'default') return null;
  return (
    <div className="ring-alerts">
      {sound === 'silent_ring' && (
        <div role="alert" className="banner banner-error ring-alerts-silent">
          {t('ringAlerts.silent', { button: t('ringAlerts.enableSound') })}
        </div>
      )}
      <div className="ring-alerts-actions">
        {sound !== 'ok' && (
          <>
            {/* The click itself is the gesture the browser waits for: the unlock must start inside it. */}
            <button type="button" className="btn btn-primary btn-small" onClick={() => void domain.enableSound()}>
              {t('ringAlerts.enableSound')}
            </button>
            {sound === 'locked' && <span className="hint-inline">{t('ringAlerts.locked')}</span>}
          </>
        )}
        {notifications === 'default' && (
          <button type="button" className="btn btn-secondary btn-small" onClick={() => void domain.enableNotifications()}>
            {t('ringAlerts.enableNotifications')}
          </button>
        )}
      </div>
    </div>
  );
}
