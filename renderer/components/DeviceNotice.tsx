import { useSyncExternalStore } from 'react';
import { useTranslation } from 'react-i18next';
import { useDeviceActions } from '../app/controllers-context';
import { noticeText } from '../app/device-actions';

/** "Headset disconnected: using …" — on every screen, so the agent reads it during a call too. */
export function DeviceNotice() {
  const devices = useDeviceActions();
  // Re-renders on a change of language: the notice is worded here.
  const { t } = useTranslation('settings');
  const view = useSyncExternalStore(devices.subscribe, devices.view, devices.view);
  const notice = view.notice;
  // The live region stays mounted so that screen readers announce the text when it appears.
  return (
    <div role="status" aria-label={t('devices.label')} className={notice ? `device-notice device-notice-${notice.kind}` : 'device-notice-empty'}>
      {notice && (
        <>
          <span>{noticeText(notice)}</span>
          <button type="button" className="btn btn-quiet" onClick={() => devices.dismissNotice()}>
            {t('devices.dismiss')}
          </button>
        </>
      )}
    </div>
  );
}
