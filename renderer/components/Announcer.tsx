import { useTranslation } from 'react-i18next';
import { useShallow } from 'zustand/react/shallow';
import { peerTitle } from '../call-display';
import { intlLocale } from '../i18n/i18n';
import { ringingCalls } from '../store/call-list';
import { useAppStore } from '../store/store';

/** Tells screen-reader users about a ringing call without moving their focus from what they are doing. */
export function Announcer() {
  const { t } = useTranslation(['common', 'calls']);
  const callers = useAppStore(useShallow((s) => ringingCalls(s.calls).flatMap((c) => (c.transfer?.role === 'to' ? [] : [peerTitle(c.peer)]))));
  // A colleague's transfer or consult says who hands it on, then whose call it is.
  const handedOn = useAppStore(
    useShallow((s) =>
      ringingCalls(s.calls).flatMap((c) => {
        const transfer = c.transfer?.role === 'to' ? c.transfer : undefined;
        if (!transfer) return [];
        const words = { colleague: transfer.colleague?.name ?? t('calls:transfer.aColleague'), customer: peerTitle(c.peer) };
        return [transfer.kind === 'consult' ? t('announcer.consultFrom', words) : t('announcer.transferFrom', words)];
      }),
    ),
  );
  const sentences = [...(callers.length > 0 ? [t('announcer.incomingCall', { names: new Intl.ListFormat(intlLocale(), { type: 'conjunction' }).format(callers) })] : []), ...handedOn];
  return (
    <div className="visually-hidden" aria-live="assertive" aria-atomic="true">
      {sentences.join(' ')}
    </div>
  );
}
