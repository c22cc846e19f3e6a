import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import type { LiveCall } from '../../shared/supervision';
import { agentsParts, callDescription, customerParts, liveStateText, monitorText, qualityText } from '../live-call-display';
import { partiesOf, useSupervision } from '../store/supervision';
import { elapsedText } from '../wallboard-display';
import { RecordingStatus } from './CallRecording';
import { Ltr } from './Ltr';
import { MonitorModeButtons } from './MonitorModeButtons';

/**
 * One live call: who (the agents, or "Ringing for the team"; the customer's name and number, each
 * whole), how (direction, state, duration, quality as "Good", "Fair" or "Poor" with its MOS for
 * screen readers, "Recording" while the team's bridge records it), the supervisors in it, and what
 * this supervisor may do: "Listen", "Whisper", "Barge" on a bridged call once answered; a direct
 * call says it cannot be joined.
 */
export function LiveCallItem({ call, relayNow, selfId }: { call: LiveCall; relayNow: number; selfId?: string | undefined }) {
  const { t } = useTranslation('common');
  const { t: tCalls } = useTranslation('calls');
  const note = useSupervision((s) => s.notes[call.callId]);
  const joined = useSupervision((s) => (s.joined?.callId === call.callId ? s.joined : null));
  const descriptionId = useId();
  const parties = partiesOf(call);
  const { name, number } = customerParts(call.customer);
  const quality = call.quality && qualityText(call.quality.mos);
  const joinable = call.bridged && call.state !== 'ringing' && call.answeredAt !== undefined;
  // This supervisor's own join is said by its panel and its pressed button, never as "NAME is listening".
  const others = call.monitors.filter((m) => m.id !== selfId);
  const busy = note?.kind === 'joining' || (joined !== null && (joined.stage === 'joining' || joined.switching !== null));

  return (
    <li className={`live-call${joined ? ' is-joined' : ''}`} data-call-id={call.callId}>
      <div className="live-call-who">
        <span className="live-call-agents">
          {call.agents.length === 0 ? t('team.live.forTeam') : agentsParts(parties.agents).map((part, i) => (part.type === 'element' ? <bdi key={i}>{part.value}</bdi> : part.value))}
        </span>
        <span className="live-call-customer">
          <span className="live-call-sep" aria-hidden="true">
            ↔
          </span>
          {name !== undefined && <bdi className="live-call-name">{name}</bdi>}
          {number !== '' && (
            <span className="live-call-number">
              <Ltr>{number}</Ltr>
            </span>
          )}
          {name === undefined && number === '' && <span className="live-call-name">{tCalls('peer.unknown')}</span>}
        </span>
      </div>
      <p className="live-call-facts">
        <span className="live-call-direction">{call.direction === 'incoming' ? t('team.live.incoming') : t('team.live.outgoing')}</span>
        <span className={`live-state live-state-${call.state}`}>{liveStateText(call.state)}</span>
        <span className="live-call-duration">
          <span className="visually-hidden">{t('team.live.durationLead')}</span>
          <Ltr>{elapsedText(relayNow - (call.answeredAt ?? call.startedAt))}</Ltr>
        </span>
        {quality && (
          <span className={`live-quality live-quality-${quality.band}`} title={quality.full}>
            <span aria-hidden="true">{quality.word}</span>
            <span className="visually-hidden">{quality.full}</span>
          </span>
        )}
        {call.recording === true && <RecordingStatus live={false} />}
      </p>
      <span id={descriptionId} className="visually-hidden">
        {callDescription(parties)}
      </span>
      {joinable && <MonitorModeButtons callId={call.callId} parties={parties} describedBy={descriptionId} current={joined?.mode} busy={busy} />}
      {!call.bridged && <p className="live-call-direct">{t('team.live.direct')}</p>}
      {others.length > 0 && (
        <ul className="live-call-monitors">
          {others.map((m) => (
            <li key={m.id}>{monitorText(m)}</li>
          ))}
        </ul>
      )}
      {note?.kind === 'joining' && <p className="live-call-note">{t('team.live.joining')}</p>}
      {note?.kind === 'refused' && (
        <p role="alert" className="live-call-error">
          {t('team.live.joinFailed', { reason: note.text })}
        </p>
      )}
    </li>
  );
}
