import { useShallow } from 'zustand/react/shallow';
import { peerTitle } from '../call-display';
import { ringingCalls } from '../store/call-list';
import { useAppStore } from '../store/store';

/** Tells screen-reader users about a ringing call without moving their focus from what they are doing. */
export function Announcer() {
  const callers = useAppStore(useShallow((s) => ringingCalls(s.calls).map((c) => peerTitle(c.peer))));
  return (
    <div className="visually-hidden" aria-live="assertive" aria-atomic="true">
      {callers.length > 0 ? `Incoming call from ${callers.join(' and ')}` : ''}
    </div>
  );
}
