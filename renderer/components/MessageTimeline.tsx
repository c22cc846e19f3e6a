import { useEffect, useRef } from 'react';
import type { TimelineMessage } from '../../shared/conversation';
import { useNow } from '../app/use-now';
import { formatMessageTime, STATUS_MARK, statusWord } from '../store/conversations';

/** The messages sent and received, oldest first, each with its delivery status in words. */
export function MessageTimeline({ messages }: { messages: readonly TimelineMessage[] }) {
  const now = useNow(60_000);
  const scroller = useRef<HTMLDivElement>(null);
  const last = messages[messages.length - 1];

  // The newest message in view when one arrives (or its status changes), as in any chat.
  useEffect(() => {
    const el = scroller.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [last?.id, last?.status]);

  if (messages.length === 0) return <p className="empty timeline-empty">No messages with this customer yet.</p>;
  return (
    <div className="timeline-scroll" ref={scroller}>
      {/* Nothing in a message takes the focus: the list does, so that the arrow keys scroll the history. */}
      <ol aria-label="Messages" className="timeline" tabIndex={0}>
        {messages.map((m) => (
          <MessageItem key={m.id} message={m} now={now} />
        ))}
      </ol>
    </div>
  );
}

function MessageItem({ message, now }: { message: TimelineMessage; now: number }) {
  const word = statusWord(message);
  const outbound = message.direction === 'outbound';
  return (
    <li className={`msg msg-${message.direction} ${word === 'failed' ? 'msg-failed' : ''}`}>
      <span className="visually-hidden">{outbound ? 'You: ' : 'Customer: '}</span>
      <p className="msg-text">{message.summary}</p>
      <p className="msg-meta">
        <time dateTime={new Date(message.at).toISOString()}>{formatMessageTime(message.at, now)}</time>
        {outbound && (
          <span className={`msg-status status-${word}`}>
            {STATUS_MARK[word] && <span aria-hidden="true">{STATUS_MARK[word]} </span>}
            {word}
            {word === 'failed' && message.failure ? `: ${message.failure.message}` : ''}
          </span>
        )}
      </p>
    </li>
  );
}
