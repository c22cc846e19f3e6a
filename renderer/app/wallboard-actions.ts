// The Team view's domain: while the view is open and the window shown, it reads the team's wallboard
// every WALLBOARD_REFRESH_MS, one read at a time, into the wallboard store. The clocks on screen tick
// in the components between reads; this only reads.
import type { SoftphoneApi, Unsubscribe } from '../../shared/api';
import { WALLBOARD_REFRESH_MS } from '../../shared/wallboard';
import type { StoreApi } from 'zustand/vanilla';
import { parseWallboard } from '../bridge/payload-schemas';
import { errorMessage } from '../error-texts';
import { i18n } from '../i18n/i18n';
import type { WallboardState } from '../store/wallboard';

const t = i18n.getFixedT(null, 'common');

/** Whether the window is shown (the document), and a word when that changes. */
export interface PageVisibility {
  readonly visibilityState: DocumentVisibilityState;
  addEventListener(type: 'visibilitychange', listener: () => void): void;
  removeEventListener(type: 'visibilitychange', listener: () => void): void;
}

export interface WallboardActionsDeps {
  api: Pick<SoftphoneApi, 'getWallboard'>;
  store: StoreApi<WallboardState>;
  /** The document by default; none where there is no window (always shown then). */
  visibility?: PageVisibility | undefined;
  now?: () => number;
}

/** One watch of the board: its timer and read, stopped for good by its unsubscribe. */
type Watch = { stopped: boolean; reading: boolean; timer: ReturnType<typeof setTimeout> | undefined };

export class WallboardActions {
  private readonly api: WallboardActionsDeps['api'];
  private readonly store: StoreApi<WallboardState>;
  private readonly visibility: PageVisibility | undefined;
  private readonly now: () => number;

  constructor(deps: WallboardActionsDeps) {
    this.api = deps.api;
    this.store = deps.store;
    this.visibility = deps.visibility ?? (typeof document === 'undefined' ? undefined : document);
    this.now = deps.now ?? Date.now;
  }

  private hidden(): boolean {
    return this.visibility?.visibilityState === 'hidden';
  }

  /**
   * The Team view is open: reads now, then every WALLBOARD_REFRESH_MS from the start of the read
   * before (at once after a read that took longer), never two at once; nothing while the window is
   * hidden, a read at once when it shows again. A failed read is told and the next tick tries again.
   * The returned function stops it and forgets the board, so a view opened later starts afresh.
   */
  watch(): Unsubscribe {
    const watch: Watch = { stopped: false, reading: false, timer: undefined };
    const schedule = (delay: number): void => {
      if (watch.stopped || this.hidden()) return;
      watch.timer = setTimeout(() => {
        watch.timer = undefined;
        void read();
      }, delay);
    };
    const read = async (): Promise<void> => {
      if (watch.stopped || watch.reading || this.hidden()) return;
      watch.reading = true;
      const startedAt = this.now();
      const result = await this.api.getWallboard({});
      watch.reading = false;
      if (watch.stopped) return;
      this.apply(result);
      schedule(Math.max(0, startedAt + WALLBOARD_REFRESH_MS - this.now()));
    };
    const onVisibility = (): void => {
      if (this.hidden()) {
        clearTimeout(watch.timer);
        watch.timer = undefined;
      } else if (watch.timer === undefined) {
        void read();
      }
    };
    this.visibility?.addEventListener('visibilitychange', onVisibility);
    void read();
    return () => {
      watch.stopped = true;
      clearTimeout(watch.timer);
      this.visibility?.removeEventListener('visibilitychange', onVisibility);
      this.store.getState().reset();
    };
  }

  private apply(result: Awaited<ReturnType<SoftphoneApi['getWallboard']>>): void {
    const state = this.store.getState();
    if (!result.ok) {
      state.setError(t('team.readFailed', { reason: errorMessage(result.error) }));
      return;
    }
    const board = parseWallboard(result.value);
    if (!board.ok) {
      state.setError(t('team.readFailed', { reason: errorMessage(board.error) }));
      return;
    }
    state.applyBoard(board.value, this.now());
  }
}
