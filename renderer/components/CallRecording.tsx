import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useRecordings } from '../app/controllers-context';
import type { CallState } from '../../shared/call-state';
import { refusalText } from '../error-texts';
import { useAppStore } from '../store/store';

/**
 * "Recording": shown by every window in a call the team's bridge records now (`call.recording`,
 * whoever started it, whatever the team's mode), a status named so with a red dot.
 */
export function RecordingIndicator({ call }: { call: CallState }) {
  if (call.recording !== true || call.phase === 'ended') return null;
  return <RecordingStatus />;
}

/**
 * "Recording" with the red dot of a recorder: a polite status named so in the call the window is in
 * (an agent's call, a supervisor's joined one). `live={false}` where a list read again and again
 * shows it (the supervisors' live calls): the same words, announced by nobody.
 */
export function RecordingStatus({ live = true }: { live?: boolean }) {
  const { t } = useTranslation('calls');
  return (
    <span {...(live ? { role: 'status', 'aria-label': t('current.recording') } : {})} className="recording-indicator">
      <span className="recording-dot" aria-hidden="true" />
      {t('current.recording')}
    </span>
  );
}

/**
 * "Record" / "Stop recording" on a bridged call once it is connected, when the team records on
 * demand (`team.record`): the relay starts or stops it for everyone in the call, and every window
 * shows "Recording" as the relay tells it. One request at a time; a refusal is said under it.
 */
export function RecordButton({ call }: { call: CallState }) {
  const { t } = useTranslation('calls');
  const recordings = useRecordings();
  const onDemand = useAppStore((s) => s.team.record === 'on-demand');
  const [asking, setAsking] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const mounted = useRef(false);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  if (!onDemand || call.bridged !== true || call.phase !== 'active') return null;
  const recording = call.recording === true;

  const press = async (): Promise<void> => {
    if (asking) return;
    setAsking(true);
    setProblem(null);
    const wanted = !recording;
    const result = await recordings.setRecording(call.localId, wanted);
    if (!mounted.current) return;
    setAsking(false);
    if (!result.ok) setProblem(t(wanted ? 'current.recordFailed' : 'current.stopFailed', { reason: refusalText(result.error) }));
  };

  return (
    <>
      <button type="button" className={`btn btn-toggle btn-record${recording ? ' is-on' : ''}`} aria-disabled={asking ? true : undefined} onClick={() => void press()}>
        {recording ? t('current.stopRecording') : t('current.record')}
      </button>
      {problem !== null && (
        <p role="alert" className="field-error record-error">
          {problem}
        </p>
      )}
    </>
  );
}
