import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { useRecordings } from '../app/controllers-context';
import type { VoicemailRef } from '../app/recording-actions';
import { ltrInText, peerNumberText } from '../call-display';
import { i18n } from '../i18n/i18n';
import type { Peer } from '../../shared/call-state';
import { AudioFilePlayer } from './AudioFilePlayer';

const translate = i18n.getFixedT(null, 'calls');

/** "Voicemail from Ada Lovelace": the customer as their row names them (the number, left to right, when there is no name). */
export function voicemailLabel(peer: Pick<Peer, 'name' | 'number' | 'userId'>): string {
  const name = peer.name?.trim();
  return translate('voicemail.from', { name: name || ltrInText(peerNumberText(peer)) || translate('peer.unknown') });
}

/** "Play voicemail" and its player (AudioFilePlayer), in recent calls and the Team view: the file fetched by its call and media id. */
export function VoicemailPlayer({ voicemail, peer, idBase, children }: { voicemail: VoicemailRef; peer: Pick<Peer, 'name' | 'number' | 'userId'>; idBase: string; children?: ReactNode }) {
  const { t } = useTranslation('calls');
  const actions = useRecordings();
  return (
    <AudioFilePlayer
      load={() => actions.voicemail(voicemail)}
      words={{ play: t('voicemail.play'), loading: t('voicemail.loading'), failed: (reason) => t('voicemail.failed', { reason }), audioLabel: voicemailLabel(peer) }}
      idBase={idBase}
      kind="voicemail"
    >
      {children}
    </AudioFilePlayer>
  );
}
