import { useTranslation } from 'react-i18next';
import { peerNumberText } from '../call-display';
import { formatCallTime } from '../i18n/format';
import type { TeamVoicemail } from '../../shared/voicemail';
import type { VoicemailsView } from '../store/wallboard';
import { Ltr } from './Ltr';
import { VoicemailPlayer } from './VoicemailPlayer';

/**
 * "Voicemails": the team's voicemails of the last days from its records, the newest first, each with
 * its customer, when it was left and "Play voicemail" (by the call and its media id: any agent can
 * play one, not only the windows it rang in). Records that cannot be read keep the list read before.
 */
export function TeamVoicemails({ view, relayNow }: { view: VoicemailsView; relayNow: number }) {
  const { t } = useTranslation('common');
  if (view.kind === 'loading') return null;
  const voicemails = view.kind === 'list' ? view.voicemails : view.kind === 'unavailable' ? view.kept : null;
  return (
    <section className="team-section team-voicemails" aria-labelledby="team-voicemails-title">
      <h3 id="team-voicemails-title" className="team-section-title">
        {t('team.voicemails')}
      </h3>
      {view.kind === 'none' && <p className="team-empty">{t('team.voicemailsNoRecords')}</p>}
      {view.kind === 'unavailable' && view.kept === null && <p className="team-empty">{t('team.voicemailsUnavailable')}</p>}
      {voicemails !== null && voicemails.length === 0 && <p className="team-empty">{t('team.voicemailsEmpty')}</p>}
      {voicemails !== null && voicemails.length > 0 && (
        <ul className="team-requests" aria-label={t('team.voicemails')}>
          {voicemails.map((voicemail) => (
            <VoicemailItem key={voicemail.callId} voicemail={voicemail} relayNow={relayNow} />
          ))}
        </ul>
      )}
    </section>
  );
}

function VoicemailItem({ voicemail, relayNow }: { voicemail: TeamVoicemail; relayNow: number }) {
  const { t } = useTranslation('calls');
  const number = peerNumberText(voicemail);
  const name = voicemail.name?.trim();
  return (
    <li className="team-request">
      <VoicemailPlayer voicemail={{ callId: voicemail.callId, mediaId: voicemail.mediaId }} peer={voicemail} idBase={`team-voicemail-${voicemail.callId}`}>
        <span className="team-request-who">
          {name ? <bdi className="team-request-name">{name}</bdi> : <span className="team-request-name">{number ? <Ltr>{number}</Ltr> : t('peer.unknown')}</span>}
          {name && number && (
            <span className="team-request-number">
              <Ltr>{number}</Ltr>
            </span>
          )}
        </span>
        <span className="team-request-left">
          <time dateTime={new Date(voicemail.at).toISOString()}>{t('voicemail.leftAt', { time: formatCallTime(voicemail.at, relayNow) })}</time>
        </span>
      </VoicemailPlayer>
    </li>
  );
}
