import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { AfterCallWork as AfterCallWorkState } from '../../shared/api';
import { useDeskActions } from '../app/controllers-context';
import { useNow } from '../app/use-now';
import { peerNumberText, secondsUntil } from '../call-display';
import { formatMinutesSeconds } from '../i18n/format';
import { useAppStore } from '../store/store';
import { Ltr } from './Ltr';
import { WrapUpForm } from './WrapUpForm';

/** "0:27", "12:05": minutes, then two-digit seconds (an hour and more counts in minutes). */
export const countdownText = (seconds: number): string => formatMinutesSeconds(seconds);

type Phase = 'none' | 'counting' | 'overtime';

/**
 * After-call work: a countdown, "Ready", and the wrap-up of the call it follows. A polite live region
 * says when it starts, when its time is up while the wrap-up is still awaited, and when it ends: the
 * clock itself is not live, so a screen reader is not told every second.
 */
export function AfterCallWork() {
  const { t } = useTranslation('calls');
  const work = useAppStore((s) => s.presence?.afterCallWork);
  // A quarter-second step only while a countdown shows.
  const now = useNow(work ? 250 : 60_000);
  const phase: Phase = !work ? 'none' : work.waitingForWrapUp && now >= work.endsAt ? 'overtime' : 'counting';
  const key = work ? `${work.localId}@${work.startedAt}` : '';
  const [said, setSaid] = useState('');
  const last = useRef<{ key: string; phase: Phase }>({ key: '', phase: 'none' });

  useEffect(() => {
    const before = last.current;
    last.current = { key, phase };
    if (phase === 'none') {
      if (before.phase !== 'none') setSaid(t('afterCallWork.ended'));
    } else if (key !== before.key) {
      setSaid(phase === 'overtime' ? t('afterCallWork.overtime') : t('afterCallWork.started'));
    } else if (phase === 'overtime' && before.phase !== 'overtime') {
      setSaid(t('afterCallWork.overtime'));
    }
  }, [key, phase, t]);

  return (
    <>
      <div role="status" className="visually-hidden">
        {said}
      </div>
      {work && <AfterCallWorkPanel work={work} now={now} overtime={phase === 'overtime'} />}
    </>
  );
}

function AfterCallWorkPanel({ work, now, overtime }: { work: AfterCallWorkState; now: number; overtime: boolean }) {
  const { t } = useTranslation('calls');
  const desk = useDeskActions();
  const entry = useAppStore((s) => s.history.find((h) => h.localId === work.localId));
  const error = useAppStore((s) => s.afterCallWorkError);
  const waiting = work.waitingForWrapUp;
  const who = entry ? entry.name?.trim() || peerNumberText(entry) || t('peer.unknown') : undefined;

  return (
    <section className="card acw" aria-labelledby="acw-title">
      <div className="acw-head">
        <div className="acw-heading">
          <h2 id="acw-title" className="card-title">
            {t('afterCallWork.title')}
          </h2>
          {who !== undefined && (
            <p className="acw-call">
              <bdi>{t('afterCallWork.afterCall', { name: who })}</bdi>
            </p>
          )}
        </div>
        {!overtime && (
          <p className="acw-clock" role="timer">
            <span className="visually-hidden">{t('afterCallWork.timeLeft')} </span>
            <Ltr>{countdownText(secondsUntil(work.endsAt, now))}</Ltr>
          </p>
        )}
        <button
          type="button"
          className="btn btn-primary acw-ready"
          aria-disabled={waiting ? true : undefined}
          aria-describedby={waiting ? 'acw-ready-why' : undefined}
          onClick={() => {
            if (!waiting) void desk.endAfterCallWork();
          }}
        >
          {t('afterCallWork.ready')}
        </button>
      </div>
      {overtime && <p className="acw-overtime">{t('afterCallWork.overtime')}</p>}
      {waiting && (
        <p id="acw-ready-why" className="hint acw-why">
          {t('afterCallWork.saveFirst')}
        </p>
      )}
      {error !== null && (
        <p role="alert" className="field-error">
          {error}
        </p>
      )}
      <WrapUpForm localId={work.localId} idBase="acw-wrapup" />
    </section>
  );
}
