import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import type { TimelineMessage } from '../../shared/conversation';
import { useNow } from '../app/use-now';
import { formatCallTime } from '../i18n/format';
import { messageFailureText } from '../error-texts';
import { STATUS_MARK, statusWord } from '../store/conversations';

/** The messages sent and received, oldest first, each with its delivery status in words. */
export function MessageTimeline({ messages }: { messages: readonly TimelineMessage[] }) {
  const { t } = useTranslation('messages');
  const now = useNow(60_000);
  const scroller = useRef<HTMLDivElement>(null);
  const last = messages[messages.length - 1];

  // The newest message in view when one arrives (or its status changes), as in any chat.
  useEffect(() => {
    const el = scroller.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [last?.id, last?.status]);

  if (messages.length === 0) return <p className="empty timeline-empty">{t('timeline.empty')}</p>;
  return (
    <div className="timeline-scroll" ref={scroller}>
      {/* Nothing in a message takes the focus: the list does, so that the arrow keys scroll the history. */}
      <ol aria-label={t('timeline.listLabel')} className="timeline" tabIndex={0}>
        {messages.map((m) => (
          <MessageItem key={m.id} message={m} now={now} />
        ))}
      </ol>
    </div>
  );
}

function MessageItem({ message, now }: { message: TimelineMessage; now: number }) {
  const { t } = useTranslation('messages');
  const word = statusWord(message);
  const outbound = message.direction === 'outbound';
  return (
    <li className={`msg msg-${message.direction} ${word === 'failed' ? 'msg-failed' : ''}`}>
      <span className="visually-hidden">{outbound ? t('timeline.fromYou') : t('timeline.fromCustomer')} </span>
      {/* What was written is shown as it came; a failure's reason in the UI's language, unless it is the gateway's own words. */}
      <p className="msg-text">{message.summary}</p>
      <p className="msg-meta">
        <time dateTime={new Date(message.at).toISOString()}>{formatCallTime(message.at, now)}</time>
        {outbound && (
          <span className={`msg-status status-${word}`}>
            {STATUS_MARK[word] && <span aria-hidden="true">{STATUS_MARK[word]} </span>}
            {word === 'failed' && message.failure ? t('timeline.failedWith', { reason: messageFailureText(message.failure) }) : t(`timeline.status.${word}`)}
          </span>
        )}
      </p>
    </li>
  );
}
