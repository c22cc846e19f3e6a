import { useSyncExternalStore } from 'react';
import { useDeviceActions } from '../app/controllers-context';

/** "Headset disconnected: using …" — on every screen, so the agent reads it during a call too. */
export function DeviceNotice() {
  const devices = useDeviceActions();
  const view = useSyncExternalStore(devices.subscribe, devices.view);
  const notice = view.notice;
  // The live region stays mounted so that screen readers announce the text when it appears.
  return (
    <div role="status" aria-label="Audio devices" className={notice ? `device-notice device-notice-${notice.kind}` : 'device-notice-empty'}>
      {notice && (
        <>
          <span>{notice.text}</span>
          <button type="button" className="btn btn-quiet" onClick={() => devices.dismissNotice()}>
            Dismiss
          </button>
        </>
      )}
    </div>
  );
}
