import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useShallow } from 'zustand/react/shallow';
import { useCallActions, useSandboxActions } from '../app/controllers-context';
import { useNow } from '../app/use-now';
import { decodeVoiceCallPayload } from '../../shared/voice-call-payload';
import { peerNumberText, peerTitle, secondsUntil } from '../call-display';
import { formatNumber } from '../i18n/format';
import { hasCallInHand, ringingCalls, type RingingCall } from '../store/call-list';
import { transferRingHeading } from '../transfer-display';
import { useAppStore } from '../store/store';
import { Ltr } from './Ltr';

export function IncomingCalls() {
  const calls = useAppStore(useShallow((s) => ringingCalls(s.calls)));
  if (calls.length === 0) return null;
  return (
    <>
      {calls.map((call) => (
        <IncomingCallCard key={call.localId} call={call} />
      ))}
    </>
  );
}

function IncomingCallCard({ call }: { call: RingingCall }) {
  const { t } = useTranslation('calls');
  const callActions = useCallActions();
  const sandboxActions = useSandboxActions();
  const now = useNow();
  const sandbox = useAppStore((s) => s.mode === 'sandbox');
  // On a call already: this one waits, and answering it puts the call in hand on hold.
  const waiting = useAppStore((s) => hasCallInHand(s.calls));
  const notice = useAppStore((s) => (s.callNotice?.localId === call.localId ? s.callNotice.text : null));
  const [pending, setPending] = useState<'answer' | 'decline' | null>(null);
  const seconds = secondsUntil(call.ringsUntil, now);
  const title = peerTitle(call.peer);
  const number = peerNumberText(call.peer);
  const titleId = `incoming-${call.localId}-title`;
  // A colleague's transfer or consult: who hands it on comes first, the customer under it.
  const transferHeading = transferRingHeading(call);
  const headingId = `incoming-${call.localId}-transfer`;

  return (
    <section
      role="dialog"
      aria-label={t('incoming.label')}
      aria-describedby={transferHeading !== undefined ? `${headingId} ${titleId}` : titleId}
      className={`card incoming ${waiting ? 'incoming-waiting' : ''} ${transferHeading !== undefined ? 'incoming-transfer' : ''}`}
    >
      <div className="incoming-pulse" aria-hidden="true" />
      {transferHeading === undefined ? (
        <p className="eyebrow">{waiting ? t('incoming.waitingHeading') : t('incoming.heading')}</p>
      ) : (
        <>
          {waiting && <p className="eyebrow">{t('incoming.waitingHeading')}</p>}
          <h2 id={headingId} className="transfer-heading">
            {transferHeading}
          </h2>
        </>
      )}
      <p className="peer-title" id={titleId}>
        {title === number ? <Ltr>{title}</Ltr> : <bdi>{title}</bdi>}
        {number && title !== number && (
          <span className="peer-number">
            <Ltr>{number}</Ltr>
          </span>
        )}
      </p>
      {call.ctaPayload !== undefined && <p className="hint cta-note">{decodeVoiceCallPayload(call.ctaPayload).kind === 'ours' ? t('incoming.fromOurButton') : t('incoming.fromButton')}</p>}
      {/* One sentence, one text node: the number is not set apart, so that translations may place it anywhere. */}
      <p className="countdown">{t('incoming.answerWithin', { count: seconds, seconds: formatNumber(seconds) })}</p>
      {notice && (
        <p role="alert" className="field-error">
          {notice}
        </p>
      )}
      <div className="actions">
        <button
          type="button"
          className="btn btn-answer"
          disabled={pending !== null}
          onClick={() => {
            setPending('answer');
            void callActions.answer(call.localId).finally(() => setPending(null));
          }}
        >
          {waiting ? t('incoming.answerAndHold') : t('incoming.answer')}
        </button>
        <button
          type="button"
          className="btn btn-danger"
          disabled={pending !== null}
          onClick={() => {
            setPending('decline');
            void callActions.decline(call.localId).finally(() => setPending(null));
          }}
        >
          {t('incoming.decline')}
        </button>
      </div>
      {sandbox && (
        <button type="button" className="btn btn-link" onClick={() => void sandboxActions.customerHangsUp(call.localId)}>
          {t('sandbox.customerHangsUp')}
        </button>
      )}
    </section>
  );
}
