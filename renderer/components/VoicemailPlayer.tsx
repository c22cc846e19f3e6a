import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { useVoicemail } from '../app/controllers-context';
import type { VoicemailRef } from '../app/voicemail-actions';
import { ltrInText, peerNumberText } from '../call-display';
import { refusalText } from '../error-texts';
import { i18n } from '../i18n/i18n';
import type { Peer } from '../../shared/call-state';

const translate = i18n.getFixedT(null, 'calls');

/** "Voicemail from Ada Lovelace": the customer as their row names them (the number, left to right, when there is no name). */
export function voicemailLabel(peer: Pick<Peer, 'name' | 'number' | 'userId'>): string {
  const name = peer.name?.trim();
  return translate('voicemail.from', { name: name || ltrInText(peerNumberText(peer)) || translate('peer.unknown') });
}

/** The player: nothing yet, the audio on its way, the audio (an object URL of this player's), or why it could not come. */
type Player = { kind: 'idle' } | { kind: 'loading' } | { kind: 'ready'; url: string } | { kind: 'failed'; reason: string };

/**
 * "Play voicemail" and, under the line it sits in, the voicemail's `<audio controls>`: the first press
 * fetches the audio (VoicemailActions) and plays it from an object URL, a later one plays it again
 * from the start; a failure is said here, and pressing again tries again. The object URL is revoked
 * when the player goes (or gets another). `children` lead the line: what the voicemail is about.
 */
export function VoicemailPlayer({ voicemail, peer, idBase, children }: { voicemail: VoicemailRef; peer: Pick<Peer, 'name' | 'number' | 'userId'>; idBase: string; children?: ReactNode }) {
  const { t } = useTranslation('calls');
  const actions = useVoicemail();
  const [player, setPlayer] = useState<Player>({ kind: 'idle' });
  const audioRef = useRef<HTMLAudioElement>(null);
  const mounted = useRef(false);
  const url = player.kind === 'ready' ? player.url : undefined;
  const audioId = `${idBase}-voicemail`;

  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  // The audio in hand: on the calls' speaker, playing at once; its URL revoked when it goes.
  useEffect(() => {
    if (url === undefined) return undefined;
    const audio = audioRef.current;
    if (audio) void playOn(audio, actions.speakerId());
    return () => URL.revokeObjectURL(url);
  }, [url, actions]);

  const press = async (): Promise<void> => {
    if (player.kind === 'loading') return;
    if (player.kind === 'ready') {
      const audio = audioRef.current;
      if (audio) {
        audio.currentTime = 0;
        void audio.play().catch(() => undefined);
      }
      return;
    }
    setPlayer({ kind: 'loading' });
    const audio = await actions.audio(voicemail);
    // A row that went meanwhile makes no URL nobody would revoke.
    if (!mounted.current) return;
    if (!audio.ok) setPlayer({ kind: 'failed', reason: refusalText(audio.error) });
    else setPlayer({ kind: 'ready', url: URL.createObjectURL(audio.value) });
  };

  return (
    <div className="voicemail">
      <div className="voicemail-line">
        {children}
        <button
          type="button"
          className="btn btn-quiet btn-voicemail"
          aria-controls={url !== undefined ? audioId : undefined}
          aria-disabled={player.kind === 'loading' ? true : undefined}
          onClick={() => void press()}
        >
          <svg viewBox="0 0 24 24" aria-hidden="true" focusable="false" className="voicemail-icon">
            <path d="M8 5v14l11-7z" />
          </svg>
          {t('voicemail.play')}
        </button>
      </div>
      {/* In the page before it speaks, so that its words are heard. */}
      <p role="status" className="voicemail-status">
        {player.kind === 'loading' ? t('voicemail.loading') : ''}
      </p>
      {player.kind === 'failed' && (
        <p role="alert" className="voicemail-error">
          {t('voicemail.failed', { reason: player.reason })}
        </p>
      )}
      {url !== undefined && <audio ref={audioRef} id={audioId} className="voicemail-audio" controls preload="auto" src={url} aria-label={voicemailLabel(peer)} />}
    </div>
  );
}

/** Moves the audio to the calls' speaker (the system default when that fails), then plays it; a refused play leaves the controls to the agent. */
async function playOn(audio: HTMLAudioElement, speaker: string): Promise<void> {
  if (speaker !== '' && typeof audio.setSinkId === 'function' && audio.sinkId !== speaker) {
    await audio.setSinkId(speaker).catch(() => undefined);
  }
  await audio.play().catch(() => undefined);
}
