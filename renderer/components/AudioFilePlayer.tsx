import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useRecordings } from '../app/controllers-context';
import { refusalText } from '../error-texts';
import type { Result } from '../../shared/result';

/** What the player says, in the window's language: its button, while fetching, a failure, and its `<audio>`'s name. */
export interface AudioFileWords {
  play: string;
  loading: string;
  failed: (reason: string) => string;
  audioLabel: string;
}

/** The player: nothing yet, the audio on its way, the audio (an object URL of this player's), or why it could not come. */
type Player = { kind: 'idle' } | { kind: 'loading' } | { kind: 'ready'; url: string } | { kind: 'failed'; reason: string };

/**
 * A file's play button and, under the line it sits in, its `<audio controls>` ("Play voicemail",
 * "Play recording"): the first press fetches the audio (`load`) and plays it from an object URL on
 * the calls' speaker, a later one plays it again from the start; a failure is said here, and
 * pressing again tries again. The object URL is revoked when the player goes (or gets another).
 * `children` lead the line: what the file is about. `idBase` + `kind` name the `<audio>`'s id.
 */
export function AudioFilePlayer({
  load,
  words,
  idBase,
  kind,
  children,
}: {
  load: () => Promise<Result<Blob>>;
  words: AudioFileWords;
  idBase: string;
  kind: string;
  children?: ReactNode;
}) {
  const actions = useRecordings();
  const [player, setPlayer] = useState<Player>({ kind: 'idle' });
  const audioRef = useRef<HTMLAudioElement>(null);
  const mounted = useRef(false);
  const url = player.kind === 'ready' ? player.url : undefined;
  const audioId = `${idBase}-${kind}`;

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
    const audio = await load();
    // A row that went meanwhile makes no URL nobody would revoke.
    if (!mounted.current) return;
    if (!audio.ok) setPlayer({ kind: 'failed', reason: refusalText(audio.error) });
    else setPlayer({ kind: 'ready', url: URL.createObjectURL(audio.value) });
  };

  return (
    <div className="audio-file">
      <div className="audio-file-line">
        {children}
        <button
          type="button"
          className="btn btn-quiet btn-play"
          aria-controls={url !== undefined ? audioId : undefined}
          aria-disabled={player.kind === 'loading' ? true : undefined}
          onClick={() => void press()}
        >
          <svg viewBox="0 0 24 24" aria-hidden="true" focusable="false" className="play-icon">
            <path d="M8 5v14l11-7z" />
          </svg>
          {words.play}
        </button>
      </div>
      {/* In the page before it speaks, so that its words are heard. */}
      <p role="status" className="audio-file-status">
        {player.kind === 'loading' ? words.loading : ''}
      </p>
      {player.kind === 'failed' && (
        <p role="alert" className="audio-file-error">
          {words.failed(player.reason)}
        </p>
      )}
      {url !== undefined && <audio ref={audioRef} id={audioId} className="audio-file-audio" controls preload="auto" src={url} aria-label={words.audioLabel} />}
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
