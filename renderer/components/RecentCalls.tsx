import { useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useCallActions, useMessaging, useSettingsActions } from '../app/controllers-context';
import { useNow } from '../app/use-now';
import { formatCallTime, formatTalkTime, ltrInText, peerNumberText, qualitySummaryText } from '../call-display';
import { i18n } from '../i18n/i18n';
import { historyOutcomeText } from '../error-texts';
import { useAppStore } from '../store/store';
import type { HistoryEntry } from '../../shared/history';
import { missedCalls } from '../../shared/preferences';
import { formatPhoneNumber } from '../../shared/phone';
import { wrapUpEditable } from '../store/wrap-up-form';
import { Ltr } from './Ltr';
import { RecentCapture } from './RecentCapture';
import { VoicemailPlayer } from './VoicemailPlayer';
import { WrapUpForm } from './WrapUpForm';
import { WrapUpSummary } from './WrapUpSummary';

const SHOWN = 50;
const translate = i18n.getFixedT(null, 'calls');
const UNHAPPY = new Set(['missed', 'failed', 'no_answer', 'rejected']);
const RECENT_CALLS_ID = 'recent-calls';

/**
 * Marks these missed calls seen: up to the newest one's end, in the main process's own time (this
 * window's clock may differ, and a later missed call must still count).
 */
export function seenPatchFor(missed: readonly HistoryEntry[]): { missedSeenAt: number } | undefined {
  if (missed.length === 0) return undefined;
  return { missedSeenAt: Math.max(...missed.map((m) => m.endedAt)) };
}

/** "Call back Ada Lovelace", or the number when there is no name; undefined for a caller without a number. */
export function callBackLabel(entry: Pick<HistoryEntry, 'name' | 'number'>): string | undefined {
  if (entry.number === undefined) return undefined;
  const name = entry.name?.trim();
  return translate('recent.callBack', { name: name || ltrInText(formatPhoneNumber(entry.number)) });
}

/** Brings the recent calls into view and gives them the focus, once the phone screen is rendered. */
export function showRecentCalls(): void {
  setTimeout(() => {
    const region = document.getElementById(RECENT_CALLS_ID);
    if (!region) return;
    region.scrollIntoView({ block: 'nearest' });
    region.focus({ preventScroll: true });
  }, 0);
}

export function RecentCalls() {
  const { t } = useTranslation('calls');
  const settingsActions = useSettingsActions();
  const history = useAppStore((s) => s.history);
  const seenAt = useAppStore((s) => s.preferences.missedSeenAt);
  const now = useNow(60_000);
  const entries = useMemo(() => [...history].sort((a, b) => b.endedAt - a.endedAt).slice(0, SHOWN), [history]);
  // A press is followed by the focus: one request for both.
  const requested = useRef(0);

  // The list is on screen whenever the phone screen is, so being shown cannot count as being looked
  // at (the count would never appear). The focus arriving inside it (a click, Tab, the header's
  // button) or a pointer pressed on it is the agent turning to it, as a mail client clears its
  // unread count when the inbox is opened rather than when it is merely visible.
  const markSeen = () => {
    const patch = seenPatchFor(missedCalls(history, seenAt));
    if (!patch || patch.missedSeenAt <= requested.current) return;
    requested.current = patch.missedSeenAt;
    void settingsActions.savePreferences(patch).then((saved) => {
      // Refused or not delivered: the next look tries again.
      if (!saved.ok) requested.current = 0;
    });
  };

  return (
    <section id={RECENT_CALLS_ID} tabIndex={-1} className="card recent" aria-labelledby="recent-title" onFocus={markSeen} onPointerDown={markSeen}>
      <h2 id="recent-title" className="card-title">
        {t('recent.title')}
      </h2>
      {entries.length === 0 ? (
        <p className="empty">{t('recent.empty')}</p>
      ) : (
        <ul aria-label={t('recent.list')} className="history">
          {entries.map((entry) => (
            <RecentCall key={entry.localId} entry={entry} now={now} />
          ))}
        </ul>
      )}
    </section>
  );
}

function RecentCall({ entry, now }: { entry: HistoryEntry; now: number }) {
  const { t } = useTranslation('calls');
  const callActions = useCallActions();
  const messaging = useMessaging();
  const number = peerNumberText(entry);
  const title = entry.name || number || t('peer.unknown');
  const outcome = historyOutcomeText(entry);
  const incoming = entry.direction === 'incoming';
  const dialable = entry.number !== undefined;
  const callBack = callBackLabel(entry);
  const quality = entry.quality ? qualitySummaryText(entry.quality) : undefined;
  // The wrap-up can be written or changed for 24 hours after an answered call; a saved one shows after that too.
  const editable = wrapUpEditable(entry, now);
  const [wrapUpOpen, setWrapUpOpen] = useState(false);
  const idBase = `recent-${entry.localId}`;
  const formId = `${idBase}-wrapup`;

  return (
    <li className="history-row">
      <div className="history-line">
        <button
          type="button"
          className="history-item"
          disabled={!dialable}
          title={dialable ? t('recent.show') : t('recent.noNumber')}
          onClick={() => {
            if (!entry.number) return;
            messaging.selectContact(entry.number);
            callActions.useNumber(entry.number);
            // Straight on to the dialer, where Enter calls.
            document.getElementById('dial-number')?.focus();
          }}
        >
          <span className={`direction direction-${entry.direction} ${UNHAPPY.has(entry.outcome) ? 'direction-unhappy' : ''}`} aria-hidden="true">
            {incoming ? '↙' : '↗'}
          </span>
          <span className="visually-hidden">{incoming ? t('recent.incoming') : t('recent.outgoing')}</span>
          <span className="history-main">
            <span className="history-title">{title === number ? <Ltr>{title}</Ltr> : <bdi>{title}</bdi>}</span>
            {number && number !== title && (
              <span className="history-number">
                <Ltr>{number}</Ltr>
              </span>
            )}
            {quality && (
              <span className="history-quality">
                <span className="visually-hidden">{t('recent.qualityLead')}</span>
                {quality}
              </span>
            )}
          </span>
          <span className="history-meta">
            <span className={`history-outcome ${UNHAPPY.has(entry.outcome) ? 'is-unhappy' : ''}`} title={outcome}>
              {outcome}
            </span>
            <span className="history-when">
              <span className="visually-hidden">{t('recent.atLead')}</span>
              <time dateTime={new Date(entry.startedAt).toISOString()}>{formatCallTime(entry.startedAt, now)}</time>
              <span aria-hidden="true"> · </span>
              <span className="visually-hidden">{t('recent.durationLead')}</span>
              <Ltr>{formatTalkTime(entry.durationSec)}</Ltr>
              {entry.heldSec !== undefined && entry.heldSec > 0 && (
                <>
                  <span aria-hidden="true"> · </span>
                  <span className="history-held">{t('recent.heldFor', { duration: ltrInText(formatTalkTime(entry.heldSec)) })}</span>
                </>
              )}
            </span>

          </span>
        </button>
        {callBack && (
          <button
            type="button"
            className="btn btn-quiet btn-callback"
            aria-label={callBack}
            title={callBack}
            onClick={() => {
              if (!entry.number) return;
              // The contact panel follows: for a customer whose 24-hour window is closed it offers a template.
              messaging.selectContact(entry.number);
              void callActions.dialRequested({ number: entry.number, dial: true });
            }}
          >
            <svg viewBox="0 0 24 24" aria-hidden="true" focusable="false" className="callback-icon">
              <path d="M6.6 10.8a15.1 15.1 0 0 0 6.6 6.6l2.2-2.2a1 1 0 0 1 1-.25 11.4 11.4 0 0 0 3.6.57 1 1 0 0 1 1 1V20a1 1 0 0 1-1 1A17 17 0 0 1 3 4a1 1 0 0 1 1-1h3.5a1 1 0 0 1 1 1c0 1.25.2 2.45.57 3.6a1 1 0 0 1-.25 1z" />
            </svg>
            <span className="callback-text">{t('recent.callBackShort')}</span>
          </button>
        )}
      </div>
      {entry.voicemail && <RecentVoicemail entry={entry} voicemail={entry.voicemail} idBase={idBase} />}
      <RecentCapture entry={entry} idBase={idBase} />
      {(entry.wrapUp || editable) && (
        <div className="history-extra">
          {entry.wrapUp && <WrapUpSummary wrapUp={entry.wrapUp} idBase={idBase} />}
          {editable && (
            <button type="button" className="btn btn-quiet btn-wrapup" aria-expanded={wrapUpOpen} aria-controls={wrapUpOpen ? formId : undefined} onClick={() => setWrapUpOpen(!wrapUpOpen)}>
              {entry.wrapUp ? t('wrapUp.edit') : t('wrapUp.open')}
            </button>
          )}
        </div>
      )}
      {editable && wrapUpOpen && (
        <div id={formId} className="history-wrapup">
          <WrapUpForm localId={entry.localId} idBase={formId} />
        </div>
      )}
    </li>
  );
}

/**
 * The call's voicemail: the "Voicemail" mark and "Play voicemail" (the player under the line). While
 * its file is not kept here yet and the last fetch failed, that is said quietly: the button fetches
 * it again on demand.
 */
function RecentVoicemail({ entry, voicemail, idBase }: { entry: HistoryEntry; voicemail: NonNullable<HistoryEntry['voicemail']>; idBase: string }) {
  const { t } = useTranslation('calls');
  const reason = voicemail.saved ? undefined : voicemail.fetchError?.trim();
  const lead = (
    <>
      <span className="voicemail-mark">{t('voicemail.mark')}</span>
      {reason && <span className="voicemail-note">{t('voicemail.notFetched', { reason })}</span>}
    </>
  );
  return (
    <div className="history-voicemail">
      {entry.callId === undefined ? (
        <div className="audio-file-line">{lead}</div>
      ) : (
        <VoicemailPlayer voicemail={{ callId: entry.callId, mediaId: voicemail.mediaId }} peer={entry} idBase={idBase}>
          {lead}
        </VoicemailPlayer>
      )}
    </div>
  );
}
