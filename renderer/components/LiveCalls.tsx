import { useEffect, useId } from 'react';
import { useTranslation } from 'react-i18next';
import { useMonitor } from '../app/controllers-context';
import { useNow } from '../app/use-now';
import type { LiveCall } from '../../shared/supervision';
import { useSupervision } from '../store/supervision';
import { LiveCallItem } from './LiveCallItem';

/** The oldest call first; the same start by call id, so that the items never swap between reads. */
const byStart = (a: LiveCall, b: LiveCall): number => a.startedAt - b.startedAt || (a.callId < b.callId ? -1 : a.callId > b.callId ? 1 : 0);

/**
 * A supervisor's "Live calls" in the Team view: every live call of the team, read every
 * LIVE_CALLS_REFRESH_MS while it shows (app/monitor-actions.ts), each with its agents, customer,
 * direction, duration (ticking on the relay's clock, in no live region), state and quality, and for
 * a bridged call that was answered "Listen", "Whisper" and "Barge". Only a supervisor's view has it.
 */
/** `selfId`: this agent's id, when the team's board has said it: its own join is its panel's to say. */
export function LiveCalls({ selfId }: { selfId?: string | undefined }) {
  const { t } = useTranslation('common');
  const monitor = useMonitor();
  useEffect(() => monitor.watch(), [monitor]);
  const live = useSupervision((s) => s.live);
  const error = useSupervision((s) => s.error);
  const notice = useSupervision((s) => s.notice);
  const now = useNow(1000);
  const headingId = useId();
  const relayNow = now + (live.kind === 'list' ? live.offsetMs : 0);

  return (
    <section className="team-section live-calls" aria-labelledby={headingId}>
      <h3 id={headingId} className="team-section-title">
        {t('team.live.title')}
      </h3>
      {error !== null && (
        <p role="alert" className="banner banner-error team-error">
          {error}
        </p>
      )}
      {/* Said once by the window's own status (MonitorPanel); kept in sight here. */}
      {notice !== null && <p className="team-note monitor-notice">{notice}</p>}
      {live.kind === 'loading' ? (
        <p className="team-empty">{t('team.live.loading')}</p>
      ) : live.calls.length === 0 ? (
        <p className="team-empty">{t('team.live.empty')}</p>
      ) : (
        <ul className="live-call-list" aria-labelledby={headingId}>
          {[...live.calls].sort(byStart).map((call) => (
            <LiveCallItem key={call.callId} call={call} relayNow={relayNow} selfId={selfId} />
          ))}
        </ul>
      )}
    </section>
  );
}
