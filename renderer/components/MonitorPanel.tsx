import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { useMonitor } from '../app/controllers-context';
import { callDescription, joinedText } from '../live-call-display';
import { useSupervision, type JoinedCall } from '../store/supervision';
import { RecordingStatus } from './CallRecording';
import { MonitorModeButtons } from './MonitorModeButtons';

/**
 * The call a supervisor joined, on every screen (the phone, Settings, the Team view), so that it can
 * switch modes or leave from anywhere: "Listening to AGENT and CUSTOMER", "Whispering to AGENT" or
 * "In the call with AGENT and CUSTOMER" (a polite status: a switch is heard), "Recording" while the
 * team's bridge records it (as every window in the call shows it), "Listen", "Whisper", "Barge" (the
 * current one pressed) and "Leave". Why the window is no longer in it (the call ended, its audio
 * failed) is said by a polite status of its own, there before the words come.
 */
export function MonitorPanel() {
  const joined = useSupervision((s) => s.joined);
  const notice = useSupervision((s) => s.notice);
  return (
    <>
      <p role="status" className="visually-hidden">
        {notice ?? ''}
      </p>
      {joined && <JoinedCallPanel joined={joined} />}
    </>
  );
}

function JoinedCallPanel({ joined }: { joined: JoinedCall }) {
  const { t } = useTranslation('common');
  const monitor = useMonitor();
  const descriptionId = useId();
  const stage = joined.stage === 'joining' ? t('monitor.joining') : joined.stage === 'connecting' ? t('monitor.connecting') : null;

  const leave = (): void => {
    const { callId } = joined;
    void monitor.leave();
    // The panel goes with its buttons: the call's own item takes the focus, else the dialer.
    const item = document.querySelector<HTMLElement>(`.live-call[data-call-id="${CSS.escape(callId)}"] button`);
    (item ?? document.getElementById('dial-number'))?.focus();
  };

  return (
    <section aria-label={t('monitor.label')} className="card monitor-panel">
      <p className="eyebrow">{t('monitor.label')}</p>
      <p role="status" className="monitor-sentence">
        {joinedText(joined.mode, joined.parties)}
      </p>
      {joined.recording && (
        <div className="monitor-recording">
          <RecordingStatus />
        </div>
      )}
      {stage !== null && <p className="monitor-stage">{stage}</p>}
      {joined.problem !== null && (
        <p role="alert" className="field-error">
          {joined.problem}
        </p>
      )}
      <span id={descriptionId} className="visually-hidden">
        {callDescription(joined.parties)}
      </span>
      <div className="monitor-controls">
        <div role="group" aria-label={t('monitor.modes')}>
          <MonitorModeButtons
            callId={joined.callId}
            parties={joined.parties}
            describedBy={descriptionId}
            current={joined.mode}
            busy={joined.stage === 'joining' || joined.switching !== null}
          />
        </div>
        <button type="button" className="btn btn-danger btn-leave" aria-describedby={descriptionId} onClick={leave}>
          {t('monitor.leave')}
        </button>
      </div>
    </section>
  );
}
