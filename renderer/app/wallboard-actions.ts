// The Team view's domain: while the view is open and the window shown, it reads the team's wallboard
// every WALLBOARD_REFRESH_MS, one read at a time, into the wallboard store. The clocks on screen tick
// in the components between reads. "Call back" on a callback request takes it for this agent
// (takeCallback), reads the board again and dials the customer as the dialer does.
import type { SoftphoneApi, Unsubscribe } from '../../shared/api';
import type { CallbackRequest } from '../../shared/callbacks';
import { WALLBOARD_REFRESH_MS } from '../../shared/wallboard';
import type { StoreApi } from 'zustand/vanilla';
import { parseWallboard } from '../bridge/payload-schemas';
import { errorMessage, refusalText } from '../error-texts';
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
  api: Pick<SoftphoneApi, 'getWallboard' | 'takeCallback'>;
  store: StoreApi<WallboardState>;
  /** Dials a customer's number (digits with country code) as the dialer does; nothing dials without it. */
  dial?: ((number: string) => Promise<void>) | undefined;
  /** The document by default; none where there is no window (always shown then). */
  visibility?: PageVisibility | undefined;
  now?: () => number;
}

/** One watch of the board: its timer and read, stopped for good by its unsubscribe; `again` asks for a read right after the one under way. */
type Watch = { stopped: boolean; reading: boolean; again: boolean; timer: ReturnType<typeof setTimeout> | undefined; readNow: () => void };

export class WallboardActions {
  private readonly api: WallboardActionsDeps['api'];
  private readonly store: StoreApi<WallboardState>;
  private readonly visibility: PageVisibility | undefined;
  private readonly now: () => number;
  private readonly dial: ((number: string) => Promise<void>) | undefined;
  /** The open view's watch, if any. */
  private watching: Watch | undefined;

  constructor(deps: WallboardActionsDeps) {
    this.api = deps.api;
    this.store = deps.store;
    this.dial = deps.dial;
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
    const watch: Watch = { stopped: false, reading: false, again: false, timer: undefined, readNow: () => undefined };
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
      watch.again = false;
      const startedAt = this.now();
      const result = await this.api.getWallboard({});
      watch.reading = false;
      if (watch.stopped) return;
      this.apply(result);
      schedule(watch.again ? 0 : Math.max(0, startedAt + WALLBOARD_REFRESH_MS - this.now()));
    };
    watch.readNow = () => {
      if (watch.reading) {
        watch.again = true;
        return;
      }
      clearTimeout(watch.timer);
      watch.timer = undefined;
      void read();
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
    this.watching = watch;
    void read();
    return () => {
      watch.stopped = true;
      if (this.watching === watch) this.watching = undefined;
      clearTimeout(watch.timer);
      this.visibility?.removeEventListener('visibilitychange', onVisibility);
      this.store.getState().reset();
    };
  }

  /** The board changed here (a take): the open view reads it again now, or right after the read under way. */
  refresh(): void {
    this.watching?.readNow();
  }

  /**
   * "Call back": takes the request for this agent (again, when it is already the agent's), reads the
   * board again and dials the customer as the dialer does. A refusal ("Taken by Maya Chen", gone) is
   * said in the request's item. One take of a request at a time.
   */
  async callBack(request: Pick<CallbackRequest, 'id' | 'number'>): Promise<void> {
    const state = this.store.getState();
    if (state.callbackNotes[request.id]?.kind === 'taking') return;
    state.setCallbackNote(request.id, { kind: 'taking' });
    const taken = await this.api.takeCallback({ id: request.id });
    this.store.getState().setCallbackNote(request.id, taken.ok ? null : { kind: 'refused', text: refusalText(taken.error) });
    this.refresh();
    if (taken.ok && request.number !== undefined && this.dial) await this.dial(request.number);
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
