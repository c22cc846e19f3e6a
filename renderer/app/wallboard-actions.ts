// The Team view's domain: while the view is open and the window shown, it reads the team's wallboard
// every WALLBOARD_REFRESH_MS, one read at a time, into the wallboard store. The clocks on screen tick
// in the components between reads. "Call back" on a callback request takes it for this agent
// (takeCallback), reads the board again and dials the customer as the dialer does.
import type { SoftphoneApi, Unsubscribe } from '../../shared/api';
import type { CallbackRequest } from '../../shared/callbacks';
import { WALLBOARD_REFRESH_MS } from '../../shared/wallboard';
import type { StoreApi } from 'zustand/vanilla';
import { parseWallboard } from '../bridge/payload-schemas';
import { documentVisibility, pollWhileShown, type PageVisibility, type Poll } from './poll-while-shown';
import { errorMessage, refusalText } from '../error-texts';
import { i18n } from '../i18n/i18n';
import type { WallboardState } from '../store/wallboard';

const t = i18n.getFixedT(null, 'common');

export interface WallboardActionsDeps {
  api: Pick<SoftphoneApi, 'getWallboard' | 'takeCallback'>;
  store: StoreApi<WallboardState>;
  /** Dials a customer's number (digits with country code) as the dialer does; nothing dials without it. */
  dial?: ((number: string) => Promise<void>) | undefined;
  /** The document by default; none where there is no window (always shown then). */
  visibility?: PageVisibility | undefined;
  now?: () => number;
}

export class WallboardActions {
  private readonly api: WallboardActionsDeps['api'];
  private readonly store: StoreApi<WallboardState>;
  private readonly visibility: PageVisibility | undefined;
  private readonly now: () => number;
  private readonly dial: ((number: string) => Promise<void>) | undefined;
  /** The open view's reads, if any. */
  private watching: Poll | undefined;

  constructor(deps: WallboardActionsDeps) {
    this.api = deps.api;
    this.store = deps.store;
    this.dial = deps.dial;
    this.visibility = deps.visibility ?? documentVisibility();
    this.now = deps.now ?? Date.now;
  }

  /**
   * The Team view is open: reads now, then every WALLBOARD_REFRESH_MS from the start of the read
   * before (at once after a read that took longer), never two at once; nothing while the window is
   * hidden, a read at once when it shows again. A failed read is told and the next tick tries again.
   * The returned function stops it and forgets the board, so a view opened later starts afresh.
   */
  watch(): Unsubscribe {
    const poll = pollWhileShown({
      read: async (live) => {
        const result = await this.api.getWallboard({});
        if (live()) this.apply(result);
      },
      intervalMs: WALLBOARD_REFRESH_MS,
      visibility: this.visibility,
      now: this.now,
    });
    this.watching = poll;
    return () => {
      poll.stop();
      if (this.watching === poll) this.watching = undefined;
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
