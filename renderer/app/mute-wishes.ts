// "Mute" / "Unmute" and the mute shortcut, for CallActions (README.md "A call's path", Mute). The
// mute is the call's `muted`, which changes only when main pushes the call; a press turns what the
// agent last asked for instead, so that two quick presses mute and unmute. That wish is shown at once
// (the store's `muteWishes`) and goes to main one setMuted per call at a time: a press while one is
// under way only changes the wish, and once it is answered the latest wish goes if it differs from
// what was sent. Main thus ends as the last press asked, and no two requests of a call cross. With
// everything answered the call's `muted` is shown again (CallCoordinator pushes a call before it
// answers); a refusal drops the wish, so the call shows main's word, and is said on the call. When
// the request may not have reached main (the link went, no answer came), the wish stands, its
// microphone quiet if it is a mute, until main's next word on the call: then it is done, or goes again.
import type { SoftphoneApi } from '../../shared/api';
import type { CallState } from '../../shared/call-state';
import type { StoreApi } from 'zustand/vanilla';
import { errorMessage } from '../error-texts';
import type { AppState } from '../store/store';
import type { MediaEngine } from '../webrtc/media-engine';

/** What "Mute"/"Unmute" shows: the agent's wish while main has not answered it, else the call's `muted`. */
export const mutedShown = (s: Pick<AppState, 'muteWishes'>, call: CallState): boolean => s.muteWishes[call.localId] ?? call.muted === true;

/** Answers after which main may or may not have taken the request: the link went, or no answer came in time. */
const OUTCOME_UNKNOWN: ReadonlySet<string> = new Set(['timeout', 'gateway_unreachable']);

export interface MuteWishesDeps {
  api: Pick<SoftphoneApi, 'setMuted'>;
  store: StoreApi<AppState>;
  engine: Pick<MediaEngine, 'onCall'>;
}

export class MuteWishes {
  /** The calls with a setMuted under way. */
  private readonly sending = new Set<string>();
  /** The calls whose microphone this window quieted for a wish, ahead of main's word. */
  private readonly quieted = new Set<string>();
  /** The calls whose last request may or may not have reached main: their wish waits for main's next word. */
  private readonly unsure = new Set<string>();

  constructor(private readonly deps: MuteWishesDeps) {}

  /**
   * The call as this window's microphone follows it: muted while the agent wishes it muted, whatever
   * main last pushed. Muting errs on the safe side; an unmute waits for main.
   */
  heard(call: CallState): CallState {
    const wished = this.deps.store.getState().muteWishes[call.localId];
    return wished === true && call.muted !== true ? { ...call, muted: true } : call;
  }

  /** One press: the opposite of the wish, or of the call's `muted` when there is none. */
  async toggle(localId: string): Promise<void> {
    const s = this.deps.store.getState();
    const call = s.calls[localId];
    if (!call || call.phase === 'ended') return;
    const muted = !mutedShown(s, call);
    s.setMuteWish(localId, muted);
    if (muted) {
      this.quieted.add(localId);
      this.deps.engine.onCall(this.heard(call));
    }
    // The request under way sends the new wish once it is answered.
    if (!this.sending.has(localId)) await this.send(localId);
  }

  /**
   * Main's word on a call (a push, or the call in a snapshot). A wish whose request may not have
   * reached main (the link went, no answer came) stood until now: it is done if main is where it
   * asks, else it goes again.
   */
  mainSaid(call: CallState): void {
    if (!this.unsure.delete(call.localId) || this.sending.has(call.localId)) return;
    const wish = this.deps.store.getState().muteWishes[call.localId];
    if (wish === undefined) return;
    if (call.phase === 'ended' || (call.muted === true) === wish) this.settle(call.localId);
    else this.send(call.localId).catch(() => undefined);
  }

  /** A snapshot: the wishes of calls it no longer has are done. */
  reloaded(calls: readonly CallState[]): void {
    const live = new Set(calls.map((call) => call.localId));
    for (const localId of [...this.unsure]) {
      if (live.has(localId)) continue;
      this.unsure.delete(localId);
      this.settle(localId);
    }
    for (const call of calls) this.mainSaid(call);
  }

  /** Sends the call's wish until main has answered the latest; the wish goes with the last answer. */
  private async send(localId: string): Promise<void> {
    const { api, store } = this.deps;
    this.sending.add(localId);
    let unsure = false;
    try {
      let sent: boolean | undefined;
      for (;;) {
        const { muteWishes, calls } = store.getState();
        const wish = muteWishes[localId];
        const call = calls[localId];
        if (wish === undefined || wish === sent || !call || call.phase === 'ended') break;
        sent = wish;
        const result = await api.setMuted({ localId, muted: wish });
        if (!result.ok) {
          store.getState().setCallNotice({ localId, text: errorMessage(result.error) });
          unsure = OUTCOME_UNKNOWN.has(result.error.code);
          break;
        }
      }
    } finally {
      this.sending.delete(localId);
      // Main may have it or not: the wish (and a microphone quieted for it) stands until main's next word.
      if (unsure && store.getState().calls[localId] !== undefined) this.unsure.add(localId);
      else this.settle(localId);
    }
  }

  /**
   * All answered, refused, a request that threw, or main's word after an unsure answer: the call
   * shows what main pushed, and a microphone quieted for a wish opens again if main has it unmuted.
   */
  private settle(localId: string): void {
    const { store, engine } = this.deps;
    store.getState().setMuteWish(localId, undefined);
    const now = store.getState().calls[localId];
    if (this.quieted.delete(localId) && now && now.muted !== true) engine.onCall(now);
  }
}
