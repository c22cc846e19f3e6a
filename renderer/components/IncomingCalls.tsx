import { useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { useCallActions, useSandboxActions } from '../app/controllers-context';
import { useNow } from '../app/use-now';
import { decodeVoiceCallPayload } from '../../shared/voice-call-payload';
import { peerNumberText, peerTitle, secondsUntil } from '../call-display';
import { ringingCalls, type RingingCall } from '../store/call-list';
import { useAppStore } from '../store/store';

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
  const callActions = useCallActions();
  const sandboxActions = useSandboxActions();
  const now = useNow();
  const sandbox = useAppStore((s) => s.mode === 'sandbox');
  const notice = useAppStore((s) => (s.callNotice?.localId === call.localId ? s.callNotice.text : null));
  const [pending, setPending] = useState<'answer' | 'decline' | null>(null);
  const seconds = secondsUntil(call.ringsUntil, now);
  const title = peerTitle(call.peer);
  const number = peerNumberText(call.peer);
  const titleId = `incoming-${call.localId}-title`;

  return (
    <section role="dialog" aria-label="Incoming call" aria-describedby={titleId} className="card incoming">
      <div className="incoming-pulse" aria-hidden="true" />
      <p className="eyebrow">Incoming call</p>
      <p className="peer-title" id={titleId}>
        {title}
        {number && title !== number && <span className="peer-number">{number}</span>}
      </p>
      {call.ctaPayload !== undefined && <p className="hint cta-note">{decodeVoiceCallPayload(call.ctaPayload).kind === 'ours' ? 'Calling back from a call button you sent' : 'Calling from a call button'}</p>}
      <p className="countdown">
        Answer within <strong>{seconds}</strong> s
      </p>
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
          Answer
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
          Decline
        </button>
      </div>
      {sandbox && (
        <button type="button" className="btn btn-link" onClick={() => void sandboxActions.customerHangsUp(call.localId)}>
          Customer hangs up
        </button>
      )}
    </section>
  );
}
