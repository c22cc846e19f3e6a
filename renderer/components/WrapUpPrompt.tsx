import { useLayoutEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { useDeskActions } from '../app/controllers-context';
import { useNow } from '../app/use-now';
import { peerTitle } from '../call-display';
import { useAppStore } from '../store/store';
import { WRAP_UP_SAVED_SHOWN_MS, wrapUpCardCall } from '../store/wrap-up-prompt';
import { WrapUpForm } from './WrapUpForm';

/**
 * The wrap-up asked for as a call the agent talked on ends with no after-call work (that panel asks
 * otherwise): a card in the after-call work panel's place, and a polite status that says the wrap-up
 * was saved once the card has closed. The card appears without taking the focus.
 */
export function WrapUpPrompt() {
  const { t } = useTranslation('calls');
  const prompt = useAppStore((s) => s.wrapUpPrompt);
  const presence = useAppStore((s) => s.presence);
  const localId = wrapUpCardCall(prompt, presence);
  const savedAt = prompt.kind === 'saved' ? prompt.at : undefined;
  const now = useNow(savedAt === undefined ? 60_000 : 1000);
  const said = savedAt !== undefined && now - savedAt < WRAP_UP_SAVED_SHOWN_MS ? t('wrapUp.saved') : '';

  return (
    <>
      {localId !== null && <WrapUpCard localId={localId} />}
      {/* Always in the page, so that what it comes to say is read; seen only while it says it. */}
      <p role="status" className={said ? 'wrapup-card-status' : 'visually-hidden'}>
        {said}
      </p>
    </>
  );
}

function WrapUpCard({ localId }: { localId: string }) {
  const { t } = useTranslation('calls');
  const desk = useDeskActions();
  const entry = useAppStore((s) => s.history.find((h) => h.localId === localId));
  const peer = useAppStore((s) => s.calls[localId]?.peer);
  const card = useRef<HTMLElement>(null);
  const who = peerTitle(entry ?? peer ?? {});

  // The card goes with the focus it may hold ("Later", "Save wrap-up", a field): that focus goes on
  // to the phone number, as at a call's end, rather than to the top of the page. A layout effect's
  // clean-up runs while the card is still in the page, so where the focus is can still be asked.
  useLayoutEffect(() => {
    const element = card.current;
    return () => {
      if (element?.contains(document.activeElement)) document.getElementById('dial-number')?.focus();
    };
  }, []);

  return (
    <section ref={card} className="card wrapup-card" aria-labelledby="wrapup-card-title">
      <div className="acw-head">
        <div className="acw-heading">
          <h2 id="wrapup-card-title" className="card-title">
            {t('wrapUp.title')}
          </h2>
          <p className="acw-call">
            <bdi>{t('wrapUp.afterCall', { name: who })}</bdi>
          </p>
        </div>
        <button type="button" className="btn btn-quiet wrapup-later" onClick={() => desk.wrapUpLater()}>
          {t('wrapUp.later')}
        </button>
      </div>
      <WrapUpForm localId={localId} idBase="wrapup-card" />
    </section>
  );
}
