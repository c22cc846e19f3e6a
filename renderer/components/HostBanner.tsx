import { useNow } from '../app/use-now';
import { useAppStore } from '../store/store';

/** Says plainly when this window cannot reach the softphone service, or the service cannot reach the relay. */
export function HostBanner() {
  const hostLink = useAppStore((s) => s.hostLink);
  const service = useAppStore((s) => s.service);
  const snapshotError = useAppStore((s) => s.snapshotError);
  const now = useNow(1000);

  let text: string | null = null;
  if (hostLink.status === 'unavailable') {
    text = `Cannot reach the softphone service. ${hostLink.message}`;
  } else if (hostLink.status === 'reconnecting') {
    const seconds = Math.max(0, Math.ceil((hostLink.retryAt - now) / 1000));
    text = `Cannot reach the softphone service. ${seconds > 0 ? `Retrying in ${seconds} s…` : 'Retrying…'}`;
  } else if (snapshotError) {
    text = `Could not load the current state. ${snapshotError}`;
  } else if (hostLink.status === 'open' && service?.status === 'reconnecting') {
    text = `Incoming calls cannot arrive right now: reconnecting to the call event relay (${service.lastError}).`;
  }
  if (!text) return null;
  return (
    <div role="alert" className="banner banner-warning">
      {text}
    </div>
  );
}
