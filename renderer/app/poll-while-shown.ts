// A read repeated while a view is open and the window shown: the Team view's wallboard and, for
// supervisors, the team's live calls. One read at a time, each interval counted from the start of the
// read before (a read that took longer is followed at once), none while the window is hidden and one
// at once when it shows again.
import type { Unsubscribe } from '../../shared/api';

/** Whether the window is shown (the document), and a word when that changes. */
export interface PageVisibility {
  readonly visibilityState: DocumentVisibilityState;
  addEventListener(type: 'visibilitychange', listener: () => void): void;
  removeEventListener(type: 'visibilitychange', listener: () => void): void;
}

/** The document, or none where there is no window (always shown then). */
export const documentVisibility = (): PageVisibility | undefined => (typeof document === 'undefined' ? undefined : document);

export interface PollOptions {
  /** One read; the poll waits for it before it schedules the next. `live()` turns false once stopped: what answers then is dropped. */
  read: (live: () => boolean) => Promise<void>;
  intervalMs: number;
  visibility: PageVisibility | undefined;
  now: () => number;
}

/** A running poll: `readNow` asks for a read at once (or right after the one under way); `stop` ends it for good. */
export interface Poll {
  readNow(): void;
  stop: Unsubscribe;
}

/** Reads now, then every `intervalMs` while shown, until stopped. */
export function pollWhileShown({ read, intervalMs, visibility, now }: PollOptions): Poll {
  let stopped = false;
  let reading = false;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hidden = (): boolean => visibility?.visibilityState === 'hidden';
  const live = (): boolean => !stopped;
  const schedule = (delay: number): void => {
    if (stopped || hidden()) return;
    timer = setTimeout(() => {
      timer = undefined;
      void once();
    }, delay);
  };
  const once = async (): Promise<void> => {
    if (stopped || reading || hidden()) return;
    reading = true;
    again = false;
    const startedAt = now();
    try {
      await read(live);
    } finally {
      reading = false;
    }
    schedule(again ? 0 : Math.max(0, startedAt + intervalMs - now()));
  };
  const onVisibility = (): void => {
    if (hidden()) {
      clearTimeout(timer);
      timer = undefined;
    } else if (timer === undefined) {
      void once();
    }
  };
  visibility?.addEventListener('visibilitychange', onVisibility);
  void once();
  return {
    readNow() {
      if (reading) {
        again = true;
        return;
      }
      clearTimeout(timer);
      timer = undefined;
      void once();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      visibility?.removeEventListener('visibilitychange', onVisibility);
    },
  };
}
