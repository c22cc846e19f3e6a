import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useRecordings } from '../app/controllers-context';
import type { TranscriptView } from '../app/recording-actions';
import { refusalText } from '../error-texts';
import { formatMinutesSeconds } from '../i18n/format';
import type { TranscriptSegment } from '../../shared/service-capture';
import { Ltr } from './Ltr';

/** The transcript as the dialog has it: asked for when it opens, and again by "Try again". */
type TranscriptLoad = { status: 'loading' } | { status: 'failed'; reason: string } | { status: 'loaded'; transcript: TranscriptView };

/** Who spoke a segment: channel 0 is the business (this agent), 1 the customer (protocol.md). */
export function speakerOf(segment: Pick<TranscriptSegment, 'channel'>, names: { agent: string; customer: string }): string {
  return segment.channel === 0 ? names.agent : names.customer;
}

/**
 * "Transcript": a modal dialog (the page behind it inert) that reads the service's transcript of a
 * recent call and lists each segment with its speaker — the relay's name for this agent ("You" when
 * the app does not know it) for channel 0, the customer's name or number for channel 1 — and its
 * time from the start (m:ss), then its words. Escape and "Close" close it, and the focus goes back
 * to "Transcript"; a failure is said here, with "Try again".
 */
export function TranscriptDialog({ localId, customer, idBase, onClose }: { localId: string; customer: string; idBase: string; onClose: () => void }) {
  const { t } = useTranslation('calls');
  const actions = useRecordings();
  const dialog = useRef<HTMLDialogElement>(null);
  const retry = useRef<HTMLButtonElement>(null);
  const [load, setLoad] = useState<TranscriptLoad>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const closeRef = useRef(onClose);
  useEffect(() => {
    closeRef.current = onClose;
  }, [onClose]);
  const titleId = `${idBase}-transcript-title`;
  const customerId = `${idBase}-transcript-customer`;

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    element.showModal();
    // The dialog itself first: its name is read out, then what it holds.
    element.focus();
    return () => {
      // Closing a modal dialog gives the focus back to its opener, by the platform's own rule.
      if (element.open) element.close();
    };
  }, []);

  useEffect(() => {
    let current = true;
    void actions.transcript(localId).then((result) => {
      if (current) setLoad(result.ok ? { status: 'loaded', transcript: result.value } : { status: 'failed', reason: refusalText(result.error) });
    });
    return () => {
      current = false;
    };
  }, [actions, localId, attempt]);

  // A failure puts the focus on "Try again", unless the agent put it elsewhere in the dialog.
  useEffect(() => {
    const element = dialog.current;
    if (load.status === 'failed' && element && document.activeElement === element) retry.current?.focus();
  }, [load.status]);

  return (
    <dialog ref={dialog} className="transfer-dialog transcript-dialog" aria-labelledby={titleId} aria-describedby={customerId} tabIndex={-1} onClose={() => closeRef.current()}>
      <h2 id={titleId} className="transfer-dialog-title">
        {t('transcript.title')}
      </h2>
      <p id={customerId} className="transfer-dialog-customer">
        {t('transcript.with', { name: customer })}
      </p>
      {load.status === 'loading' && (
        <p role="status" className="transfer-dialog-note">
          {t('transcript.loading')}
        </p>
      )}
      {load.status === 'failed' && (
        <div className="transfer-dialog-failed">
          <p role="alert" className="field-error">
            {t('transcript.failed', { reason: load.reason })}
          </p>
          <button
            ref={retry}
            type="button"
            className="btn btn-secondary btn-small"
            onClick={() => {
              setLoad({ status: 'loading' });
              setAttempt((n) => n + 1);
            }}
          >
            {t('transcript.tryAgain')}
          </button>
        </div>
      )}
      {load.status === 'loaded' && <Segments transcript={load.transcript} customer={customer} />}
      <div className="transfer-dialog-actions">
        <button type="button" className="btn btn-secondary" onClick={() => dialog.current?.close()}>
          {t('transcript.close')}
        </button>
      </div>
    </dialog>
  );
}

function Segments({ transcript, customer }: { transcript: TranscriptView; customer: string }) {
  const { t } = useTranslation('calls');
  if (transcript.segments.length === 0) return <p className="empty transfer-dialog-note">{t('transcript.empty')}</p>;
  const names = { agent: transcript.agentName?.trim() || t('transcript.you'), customer };
  // In the order they were said, whatever order the document lists them in.
  const segments = [...transcript.segments].sort((a, b) => a.start - b.start || a.channel - b.channel);
  return (
    <ol className="transcript-segments" aria-label={t('transcript.segments')}>
      {segments.map((segment, i) => (
        <li key={i} className={`transcript-segment transcript-channel-${segment.channel}`}>
          <span className="transcript-who">
            <bdi className="transcript-speaker">{speakerOf(segment, names)}</bdi>
            <span className="visually-hidden">{t('transcript.atLead')}</span>
            <time className="transcript-time" dateTime={`PT${Math.floor(segment.start)}S`}>
              <Ltr>{formatMinutesSeconds(segment.start)}</Ltr>
            </time>
          </span>
          <p className="transcript-text">{segment.text}</p>
        </li>
      ))}
    </ol>
  );
}
