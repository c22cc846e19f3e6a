import { useTranslation } from 'react-i18next';
import { useShallow } from 'zustand/react/shallow';
import { peerTitle } from '../call-display';
import { intlLocale } from '../i18n/i18n';
import { ringingCalls } from '../store/call-list';
import { useAppStore } from '../store/store';

/** Tells screen-reader users about a ringing call without moving their focus from what they are doing. */
export function Announcer() {
  const { t } = useTranslation('common');
  const callers = useAppStore(useShallow((s) => ringingCalls(s.calls).map((c) => peerTitle(c.peer))));
  return (
    <div className="visually-hidden" aria-live="assertive" aria-atomic="true">
      {callers.length > 0 ? t('announcer.incomingCall', { names: new Intl.ListFormat(intlLocale(), { type: 'conjunction' }).format(callers) }) : ''}
    </div>
  );
}
