import { useTranslation } from 'react-i18next';
import { useNow } from '../app/use-now';
import { snapshotProblemText } from '../error-texts';
import { formatDuration } from '../i18n/format';
import { sayEither } from '../i18n/texts';
import { useAppStore } from '../store/store';

/** Says plainly when this window cannot reach the softphone service, or the service cannot reach the relay. */
export function HostBanner() {
  const { t } = useTranslation('common');
  const hostLink = useAppStore((s) => s.hostLink);
  const service = useAppStore((s) => s.service);
  const snapshotError = useAppStore((s) => s.snapshotError);
  const now = useNow(1000);

  let text: string | null = null;
  if (hostLink.status === 'unavailable') {
    text = t('hostBanner.unreachable', { reason: hostLink.message });
  } else if (hostLink.status === 'reconnecting') {
    const seconds = Math.max(0, Math.ceil((hostLink.retryAt - now) / 1000));
    text = seconds > 0 ? t('hostBanner.retryingIn', { duration: formatDuration(seconds) }) : t('hostBanner.retrying');
  } else if (snapshotError) {
    text = t('hostBanner.snapshotFailed', { reason: snapshotProblemText(snapshotError) });
  } else if (hostLink.status === 'open' && service?.status === 'reconnecting') {
    text = t('hostBanner.relayReconnecting', { reason: sayEither(service.lastErrorText, service.lastError) });
  }
  if (!text) return null;
  return (
    <div role="alert" className="banner banner-warning">
      {text}
    </div>
  );
}
