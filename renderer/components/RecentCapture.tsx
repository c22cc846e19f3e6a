import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useRecordings } from '../app/controllers-context';
import { ltrInText, peerNumberText } from '../call-display';
import type { HistoryEntry } from '../../shared/history';
import type { CapturedMedia } from '../../shared/service-capture';
import { AudioFilePlayer } from './AudioFilePlayer';
import { TranscriptDialog } from './TranscriptDialog';

/** Not kept here yet: said quietly, with the last fetch's failure when there was one. Kept: nothing to say. */
function notFetched(media: CapturedMedia, plain: string, because: (reason: string) => string): string | undefined {
  if (media.saved) return undefined;
  const reason = media.fetchError?.trim();
  return reason ? because(reason) : plain;
}

/**
 * Under a recent call, its recordings and what the service captured of it: the team's own recording
 * of a bridged call ("Play recording", the file the relay keeps, from getRecording), the service's
 * ("Play recording", or "Play the service's recording" when the team's is there too; the file from
 * getServiceRecording), each with the voicemail's player, and "Transcript" (a dialog). While the
 * service's file is not kept here yet that is said quietly beside its button, which fetches it on
 * demand all the same.
 */
export function RecentCapture({ entry, idBase }: { entry: HistoryEntry; idBase: string }) {
  const { t } = useTranslation('calls');
  const actions = useRecordings();
  const [transcriptOpen, setTranscriptOpen] = useState(false);
  const { serviceRecording: recording, transcript, teamRecording } = entry;
  if (!recording && !transcript && !teamRecording) return null;
  // The customer as the row names them: channel 1 of the transcript, and the recording's name.
  const customer = entry.name?.trim() || ltrInText(peerNumberText(entry)) || t('peer.unknown');
  const recordingNote = recording && notFetched(recording, t('recording.notFetched'), (reason) => t('recording.notFetchedBecause', { reason }));
  const transcriptNote = transcript && notFetched(transcript, t('transcript.notFetched'), (reason) => t('transcript.notFetchedBecause', { reason }));

  return (
    <div className="history-capture">
      {teamRecording && (
        <AudioFilePlayer
          load={() => actions.teamRecording(entry.localId)}
          words={{
            play: t('recording.play'),
            loading: t('recording.loading'),
            failed: (reason) => t('recording.failed', { reason }),
            audioLabel: t('recording.of', { name: customer }),
          }}
          idBase={idBase}
          kind="team-recording"
        />
      )}
      {recording && (
        <AudioFilePlayer
          load={() => actions.serviceRecording(entry.localId)}
          words={{
            play: teamRecording ? t('recording.playService') : t('recording.play'),
            loading: t('recording.loading'),
            failed: (reason) => t('recording.failed', { reason }),
            audioLabel: teamRecording ? t('recording.serviceOf', { name: customer }) : t('recording.of', { name: customer }),
          }}
          idBase={idBase}
          kind="recording"
        >
          {recordingNote && <span className="capture-note">{recordingNote}</span>}
        </AudioFilePlayer>
      )}
      {transcript && (
        <div className="capture-line">
          {transcriptNote && <span className="capture-note">{transcriptNote}</span>}
          <button type="button" className="btn btn-quiet btn-transcript" aria-haspopup="dialog" onClick={() => setTranscriptOpen(true)}>
            {t('transcript.open')}
          </button>
        </div>
      )}
      {transcriptOpen && <TranscriptDialog localId={entry.localId} customer={customer} idBase={idBase} onClose={() => setTranscriptOpen(false)} />}
    </div>
  );
}
