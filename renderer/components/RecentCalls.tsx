import { useMemo } from 'react';
import { useCallActions, useMessaging } from '../app/controllers-context';
import { useNow } from '../app/use-now';
import { formatCallTime, formatTalkTime, peerNumberText } from '../call-display';
import { historyOutcomeText } from '../error-texts';
import { useAppStore } from '../store/store';
import type { HistoryEntry } from '../../shared/history';

const SHOWN = 50;
const UNHAPPY = new Set(['missed', 'failed', 'no_answer', 'rejected']);

export function RecentCalls() {
  const history = useAppStore((s) => s.history);
  const now = useNow(60_000);
  const entries = useMemo(() => [...history].sort((a, b) => b.endedAt - a.endedAt).slice(0, SHOWN), [history]);

  return (
    <section className="card recent" aria-labelledby="recent-title">
      <h2 id="recent-title" className="card-title">
        Recent calls
      </h2>
      {entries.length === 0 ? (
        <p className="empty">No calls yet.</p>
      ) : (
        <ul aria-label="Recent calls" className="history">
          {entries.map((entry) => (
            <RecentCall key={entry.localId} entry={entry} now={now} />
          ))}
        </ul>
      )}
    </section>
  );
}

function RecentCall({ entry, now }: { entry: HistoryEntry; now: number }) {
  const callActions = useCallActions();
  const messaging = useMessaging();
  const number = peerNumberText(entry);
  const title = entry.name || number || 'Unknown caller';
  const outcome = historyOutcomeText(entry);
  const incoming = entry.direction === 'incoming';
  const dialable = entry.number !== undefined;

  return (
    <li>
      <button
        type="button"
        className="history-item"
        disabled={!dialable}
        title={dialable ? 'Show this customer’s messages and put the number in the dialer' : 'No phone number is known for this caller'}
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
        <span className="visually-hidden">{incoming ? 'Incoming' : 'Outgoing'}, </span>
        <span className="history-main">
          <span className="history-title">{title}</span>
          {number && number !== title && <span className="history-number">{number}</span>}
        </span>
        <span className="history-meta">
          <span className={`history-outcome ${UNHAPPY.has(entry.outcome) ? 'is-unhappy' : ''}`} title={outcome}>
            {outcome}
          </span>
          <span className="history-when">
            <span className="visually-hidden">, at </span>
            <time dateTime={new Date(entry.startedAt).toISOString()}>{formatCallTime(entry.startedAt, now)}</time>
            <span aria-hidden="true"> · </span>
            <span className="visually-hidden">, duration </span>
            {formatTalkTime(entry.durationSec)}
          </span>
        </span>
      </button>
    </li>
  );
}
