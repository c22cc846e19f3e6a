import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { useShallow } from 'zustand/react/shallow';
import { useCallActions, useSandboxActions } from '../app/controllers-context';
import { mutedShown } from '../app/mute-wishes';
import { useNow } from '../app/use-now';
import { formatClock, legWarningWords, mosText, peerNumberText, peerTitle, phaseText } from '../call-display';
import { endReasonText } from '../error-texts';
import { currentCall, heldCalls } from '../store/call-list';
import { heldMsOf, isHeld, isRejoining, type CallState } from '../../shared/call-state';
import { useCallQuality } from '../store/call-quality';
import { formatNumber } from '../i18n/format';
import { useAppStore } from '../store/store';
import { offersHold, offersTransfer, transferStep, transferUnderWay } from '../transfer-display';
import { CallMonitors } from './CallMonitors';
import { RecordButton, RecordingIndicator } from './CallRecording';
import { Keypad } from './Keypad';
import { LevelMeter } from './LevelMeter';
import { Ltr } from './Ltr';
import { TransferButtons, TransferStatus } from './TransferControls';

export function CurrentCallPanel() {
  const { t } = useTranslation('calls');
  const now = useNow();
  const call = useAppStore((s) => currentCall(s.calls, now));
  const callActions = useCallActions();
  const sandboxActions = useSandboxActions();
  const mic = useAppStore((s) => s.levels.mic);
  const customer = useAppStore((s) => s.levels.customer);
  const keypadOpen = useAppStore((s) => s.keypadOpen);
  const setKeypadOpen = useAppStore((s) => s.setKeypadOpen);
  const sandbox = useAppStore((s) => s.mode === 'sandbox');
  const notice = useAppStore((s) => (call && s.callNotice?.localId === call.localId ? s.callNotice.text : null));
  const retry = useAppStore((s) => (call && s.callNotice?.localId === call.localId ? s.callNotice.retry : undefined));
  const quality = useCallQuality((s) => (call ? s.byCall[call.localId] : undefined));
  // The call's own mute as main pushed it (the same in every window of the agent), or what this
  // window last asked while main has not answered.
  const muted = useAppStore((s) => call !== undefined && mutedShown(s, call));
  const rejoining = call !== undefined && isRejoining(call);
  // A leg being replaced is "Rejoining…", not the old leg's "Reconnecting…".
  const reconnecting = (quality?.reconnecting ?? false) && !rejoining;
  const hangUpButton = useRef<HTMLButtonElement>(null);
  const transferAction = useRef<HTMLButtonElement>(null);
  const localId = call?.localId;
  const ended = call?.phase === 'ended';
  const step = call && !ended ? transferStep(call) : ({ step: 'none' } as const);

  // Answering removes the focused Answer button and ending removes Hang up; keyboard users land
  // on the next useful control instead of the top of the page. Focus left on a control the call
  // disabled (the dialer's Call button) is as lost: Enter and Space do nothing there. A transfer's
  // step takes its buttons away too ("Cancel transfer" once answered, the dialog once chosen): the
  // new step's first button, else Hang up.
  useEffect(() => {
    const active = document.activeElement;
    const lost = active === null || active === document.body || active.matches(':disabled');
    if (!lost || localId === undefined) return;
    if (ended) document.getElementById('dial-number')?.focus();
    else (transferAction.current ?? hangUpButton.current)?.focus();
  }, [localId, ended, step.step]);

  if (!call) return null;
  const title = peerTitle(call.peer);
  const number = peerNumberText(call.peer);
  const active = call.phase === 'active';
  const held = isHeld(call);
  // The customer hears the bridge's music while a transfer rings or a consult goes on: that is the
  // transfer's own wait, said in its words, not this agent's hold. A held call rejoining is still
  // held (Resume waits for the new leg): "On hold" beside "Rejoining…".
  const holdShown = held && !transferUnderWay(step);
  const phaseKind = rejoining ? 'rejoining' : reconnecting && active ? 'reconnecting' : call.phase;

  return (
    <section aria-label={t('current.label')} className={`card current ${ended ? 'current-ended' : ''} ${active ? 'current-active' : ''}`}>
      <div className="current-head">
        <div className="current-peer">
          <p className="eyebrow">{call.direction === 'incoming' ? t('current.incoming') : t('current.outgoing')}</p>
          <p className="peer-title">
            {title === number ? <Ltr>{title}</Ltr> : <bdi>{title}</bdi>}
            {number && title !== number && (
              <span className="peer-number">
                <Ltr>{number}</Ltr>
              </span>
            )}
          </p>
        </div>
        <div className="current-state">
          {!ended && (!holdShown || reconnecting || rejoining) && <span className={`phase phase-${phaseKind}`}>{phaseText(call, reconnecting)}</span>}
          {holdShown && <HoldTime call={call} now={now} />}
          {active && (
            <span role="timer" aria-label={t('current.duration')} className="call-timer">
              <Ltr>{formatClock((now - call.connectedAt) / 1000)}</Ltr>
            </span>
          )}
          <RecordingIndicator call={call} />
        </div>
      </div>

      {ended && (
        <p role="status" className={`outcome outcome-${call.end.kind}`}>
          {endReasonText(call.end)}
        </p>
      )}
      {!ended && <TransferStatus key={`${call.localId}-${step.step}`} localId={call.localId} step={step} firstAction={transferAction} />}
      {notice && (
        <p role="alert" className="field-error">
          {notice}
        </p>
      )}
      {/* The new leg's microphone could not be opened: the call waits in "Rejoining…" for this window's answer. */}
      {notice && retry === 'rejoin' && rejoining && (
        <button type="button" className="btn btn-secondary" onClick={() => callActions.retryRejoin(call.localId)}>
          {t('current.tryAgain')}
        </button>
      )}

      {!ended && active && (
        // Polite: a warning is read out when it appears, without cutting the agent or the customer off.
        <div role="status" aria-label={t('current.quality')} className="call-quality">
          {reconnecting && <p className="quality-warning quality-reconnecting">{t('current.reconnecting')}</p>}
          {quality?.warnings.map((w) => (
            <p key={`${w.leg ?? 'call'}-${w.kind}`} className="quality-warning">
              {legWarningWords(w)}
            </p>
          ))}
        </div>
      )}
      {!ended && <CallMonitors call={call} />}
      {!ended && active && quality?.mos !== undefined && (
        <p className="quality-score" title={t('current.scoreTitle', { low: formatNumber(1), high: formatNumber(4.5) })}>
          {t('current.score', { mos: mosText(quality.mos) })}
        </p>
      )}

      {!ended && (
        <>
          <div className="meters">
            <LevelMeter label={t('current.microphoneLevel')} value={muted ? 0 : mic} />
            <LevelMeter label={t('current.customerLevel')} value={customer} />
          </div>
          <div className="call-controls">
            <button type="button" className={`btn btn-toggle ${muted ? 'is-on' : ''}`} aria-pressed={muted} onClick={() => void callActions.toggleMute(call.localId)}>
              {muted ? t('current.unmute') : t('current.mute')}
            </button>
            {offersHold(call) && (
              <button type="button" className={`btn btn-toggle ${held ? 'is-on' : ''}`} onClick={() => void (held ? callActions.resume(call.localId) : callActions.hold(call.localId))}>
                {held ? t('current.resume') : t('current.hold')}
              </button>
            )}
            <button type="button" className="btn btn-toggle" aria-expanded={keypadOpen} onClick={() => setKeypadOpen(!keypadOpen)}>
              {t('current.keypad')}
            </button>
            {offersTransfer(call) && <TransferButtons key={call.localId} localId={call.localId} customer={title} />}
            <RecordButton key={`record-${call.localId}`} call={call} />
            <button ref={hangUpButton} type="button" className="btn btn-danger btn-hangup" onClick={() => void callActions.hangUp(call.localId)}>
              {t('current.hangUp')}
            </button>
          </div>
          {keypadOpen && <Keypad localId={call.localId} enabled={active && !held && !rejoining} />}
          {sandbox && call.callId !== undefined && (
            <button type="button" className="btn btn-link" onClick={() => void sandboxActions.customerHangsUp(call.localId)}>
              {t('sandbox.customerHangsUp')}
            </button>
          )}
        </>
      )}
      <HeldCalls now={now} shownId={call.localId} />
    </section>
  );
}

/** "On hold" and for how long: the hold time of this hold and the ones before it. */
function HoldTime({ call, now }: { call: CallState; now: number }) {
  const { t } = useTranslation('calls');
  return (
    <>
      <span className="phase phase-held">{t('current.onHold')}</span>
      <span role="timer" aria-label={t('current.holdTime')} className="call-timer hold-timer">
        <Ltr>{formatClock(heldMsOf(call, now) / 1000)}</Ltr>
      </span>
    </>
  );
}

/** The other call, on hold while the agent talks on this one: who, for how long, and Swap. */
function HeldCalls({ now, shownId }: { now: number; shownId: string }) {
  const { t } = useTranslation('calls');
  const callActions = useCallActions();
  const held = useAppStore(useShallow((s) => heldCalls(s.calls, shownId)));
  if (held.length === 0) return null;
  return (
    <>
      {held.map((call) => {
        const title = peerTitle(call.peer);
        return (
          <div key={call.localId} role="group" aria-label={t('held.label')} className="held-call">
            <p className="held-peer">{title === peerNumberText(call.peer) ? <Ltr>{title}</Ltr> : <bdi>{title}</bdi>}</p>
            {isRejoining(call) && <span className="phase phase-rejoining">{phaseText(call)}</span>}
            <HoldTime call={call} now={now} />
            {/* Resumed only once its new leg is connected: main would refuse it meanwhile. */}
            {!isRejoining(call) && (
              <button type="button" className="btn btn-secondary" onClick={() => void callActions.resume(call.localId)}>
                {t('held.swap')}
              </button>
            )}
          </div>
        );
      })}
    </>
  );
}
