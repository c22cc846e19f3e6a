// The calls domain: the one owner of call commands in the renderer (style.md 14). The dialer, the
// incoming-call card and the current-call panel call these; the ringtone follows ringing calls and
// the level meters are polled from the media engine while a call has media.
import type { CustomerLegQuality, SoftphoneApi, Unsubscribe } from '../../shared/api';
import { hasBusyCall, type CallState } from '../../shared/call-state';
import { createLogger } from '../../shared/log';
import { checkPhoneNumber, formatPhoneNumber, isCallerNumber, unverifiedNumber } from '../../shared/phone';
import { errorText, type Result } from '../../shared/result';
import type { TeamMember, TransferKind } from '../../shared/transfer';
import type { StoreApi } from 'zustand/vanilla';
import { parseTeam } from '../bridge/payload-schemas';
import { warningFigure } from '../call-display';
import { errorMessage } from '../error-texts';
import { sayText } from '../i18n/texts';
import { currentCall } from '../store/call-list';
import type { AppState } from '../store/store';
import type { MediaFact } from '../webrtc/call-media';
import { wallClockNow, type MediaEngine } from '../webrtc/media-engine';
import type { CallQualityRecord } from '../webrtc/media-health';
import { mediaText, reportedReason } from '../webrtc/media-text';
import { MuteWishes } from './mute-wishes';
import { callQualityStore, type CallQualityState } from '../store/call-quality';

const log = createLogger('calls');

const LEVEL_POLL_MS = 200;

export interface RingtonePlayer {
  start(): void;
  stop(): void;
}

/** The part of the media engine the calls domain drives. */
export type MediaControls = Pick<
  MediaEngine,
  | 'onCall'
  | 'reconcile'
  | 'answerFor'
  | 'rejoinAnswerFor'
  | 'closeRejoinLeg'
  | 'ringLegOf'
  | 'answerRingLegAgain'
  | 'warmRingLeg'
  | 'prepareOutgoing'
  | 'onFact'
  | 'onCondition'
  | 'onCallQuality'
  | 'onNotice'
  | 'noteTiming'
  | 'close'
  | 'closeAll'
  | 'sendDtmf'
  | 'has'
  | 'levels'
  | 'customerLegQuality'
>;

export interface CallActionsDeps {
  api: Pick<
    SoftphoneApi,
    | 'startCall'
    | 'answerCall'
    | 'rejoinCall'
    | 'ringAnswer'
    | 'declineCall'
    | 'hangUp'
    | 'holdCall'
    | 'resumeCall'
    | 'setMuted'
    | 'transferCall'
    | 'cancelTransfer'
    | 'completeTransfer'
    | 'addToCall'
    | 'getTeam'
    | 'reportMedia'
    | 'reportQuality'
  >;
  store: StoreApi<AppState>;
  /** Where each call's "Reconnecting…", MOS and warnings go (store/call-quality.ts). */
  quality?: StoreApi<CallQualityState> | undefined;
  engine: MediaControls;
  ringtone?: RingtonePlayer | undefined;
  /**
   * Runs work that follows a ring once the current task is over, i.e. after the store's subscribers
   * have rendered the ringing card. Default: a zero-delay timer.
   */
  afterRender?: ((work: () => void) => void) | undefined;
}

/** A bridged call ringing here (not a colleague's transfer): its leg may connect ahead of the click. */
const isBridgedRing = (call: CallState): call is Extract<CallState, { direction: 'incoming' }> =>
  call.phase === 'ringing' && call.direction === 'incoming' && call.bridged === true && call.transfer === undefined;

export class CallActions {
  private readonly api: CallActionsDeps['api'];
  private readonly store: StoreApi<AppState>;
  private readonly engine: MediaControls;
  private readonly ringtone: RingtonePlayer | undefined;
  private readonly quality: StoreApi<CallQualityState>;
  private readonly afterRender: (work: () => void) => void;
  private started = false;
  /** What waits for the render: the ringing calls to prepare, and whether a ring should start. */
  private readonly toPrepare = new Set<string>();
  private ringAfterRender = false;
  private renderQueued = false;
  /** The calls seen rejoining, and the leg each last sent a rejoinCall for: one per leg. */
  private readonly rejoins = new Map<string, { answeredLeg?: string }>();
  /** The bridged rings whose leg this window set out to connect ahead of the click (once by itself; Answer tries again). */
  private readonly warmTried = new Set<string>();
  /** The connection of a bridged ring's leg under way: Answer waits for it. */
  private readonly warmRuns = new Map<string, Promise<void>>();
  private readonly mute: MuteWishes;

  constructor(deps: CallActionsDeps) {
    this.api = deps.api;
    this.store = deps.store;
    this.engine = deps.engine;
    this.ringtone = deps.ringtone;
    this.quality = deps.quality ?? callQualityStore;
    this.afterRender = deps.afterRender ?? ((work) => void setTimeout(work, 0));
    this.mute = new MuteWishes({ api: deps.api, store: deps.store, engine: deps.engine });
  }

  private get state(): AppState {
    return this.store.getState();
  }

  /** Rings while a call rings, polls the levels and reports media facts; stopping also releases all media. */
  start(): Unsubscribe {
    this.started = true;
    const stops: Unsubscribe[] = [];
    stops.push(this.engine.onFact((fact) => void this.reportMedia(fact)));
    // The engine's problems are values: worded here, as they reach the call's panel.
    stops.push(this.engine.onNotice(({ localId, text }) => this.state.setCallNotice({ localId, text: mediaText(text) })));
    stops.push(
      this.engine.onCondition(({ localId, reconnecting, mos, warnings }) => {
        const quality = this.quality.getState();
        // The last word of a call whose media has closed: nothing of it is shown any more.
        if (!this.engine.has(localId)) quality.forget(localId);
        else {
          // Kind and figure, worded by the call panel in the UI's language; the figure rounded as shown.
          const shown = warnings?.map(({ kind, value, leg }) => ({ kind, ...(value !== undefined ? { value: warningFigure(kind, value) } : {}), ...(leg !== undefined ? { leg } : {}) }));
          quality.update(localId, { reconnecting, ...(mos !== undefined ? { mos } : {}), warnings: shown ?? quality.byCall[localId]?.warnings ?? [] });
        }
      }),
    );
    stops.push(this.engine.onCallQuality((record) => void this.reportQuality(record)));
    stops.push(this.store.subscribe((s, before) => this.followRinging(s.calls, before.calls)));
    this.followRinging(this.state.calls, {});

    const poll = setInterval(() => void this.pollLevels(), LEVEL_POLL_MS);
    stops.push(() => clearInterval(poll));

    return () => {
      this.started = false;
      for (const stop of stops.splice(0)) stop();
      this.ringtone?.stop();
      this.engine.closeAll();
    };
  }

  /**
   * A call as the store now holds it: the media engine follows it. A ring is shown first: opening the
   * microphone and making the answer (a few milliseconds of the page's time) start right after the
   * card is rendered, if the call still rings then. Answer prepares on its own if it comes first.
   */
  callChanged(call: CallState): void {
    this.mute.mainSaid(call);
    if (call.phase !== 'ringing') {
      this.warmTried.delete(call.localId);
      const heard = this.mute.heard(call);
      this.engine.onCall(heard);
      this.followRejoin(heard);
      return;
    }
    this.toPrepare.add(call.localId);
    this.queueAfterRender();
  }

  /** All calls after a snapshot: the media engine drops what is gone and follows the rest. */
  callsReloaded(calls: readonly CallState[]): void {
    this.mute.reloaded(calls);
    const heard = calls.map((call) => this.mute.heard(call));
    this.engine.reconcile(heard);
    for (const call of heard) {
      this.followRejoin(call);
      if (isBridgedRing(call)) this.warmOnce(call);
    }
  }

  /** A bridged call's customer leg as the bridge measures it: the call's media judges it beside its own leg. */
  customerLegQuality(quality: CustomerLegQuality): void {
    this.engine.customerLegQuality(quality.localId, quality.report);
  }

  // ---- dialer ----

  /**
   * A tel:/callto: link handed over by the host: the number fills the dialer (the link is the
   * agent's latest wish), and is dialled at once when the agent chose so and no call is in progress.
   */
  async dialRequested(request: { number: string; dial: boolean }): Promise<void> {
    const s = this.state;
    this.state.setScreen('phone');
    this.state.setDialInput(`+${request.number}`);
    this.state.setDialError(null);
    if (request.dial && !s.dialBusy && !hasBusyCall(Object.values(s.calls))) await this.dial();
  }

  setDialInput(value: string): void {
    this.state.setDialInput(value);
    if (this.state.dialError) this.state.setDialError(null);
  }

  /**
   * The Call button: the number is checked here first (nothing opens the microphone for a number
   * that cannot be called), the media engine makes the complete offer, and one startCall places it.
   * A number of the right length that the numbering-plan metadata does not list gets a warning
   * instead, and is placed only by "Call anyway" (`anyway`) — or at once when a customer called
   * from it, since such a number can always be called back. The gateway judges it then.
   */
  async dial(options: { anyway?: boolean } = {}): Promise<void> {
    const clickedAt = wallClockNow();
    const s = this.state;
    if (s.dialBusy || hasBusyCall(Object.values(s.calls))) return;
    const typed = checkPhoneNumber(s.dialInput, s.settings?.defaultCountry);
    if (!typed.ok) {
      s.setDialWarning(null);
      s.setDialError(errorMessage(typed.error));
      return;
    }
    const { digits, verified } = typed.value;
    const anyway = options.anyway === true;
    if (!verified && !anyway && !this.isCallerNumber(digits)) {
      s.setDialError(null);
      s.setDialWarning(sayText(unverifiedNumber(digits)));
      return;
    }
    s.setDialBusy(true);
    s.setDialError(null);
    s.setDialWarning(null);
    s.setCallNotice(null);
    const localId = `out:${crypto.randomUUID()}`;
    try {
      this.engine.noteTiming(localId, { clickedAt });
      const offer = await this.engine.prepareOutgoing(localId);
      if (!offer.ok) {
        this.state.setDialError(mediaText(offer.error.problem));
        return;
      }
      this.engine.noteTiming(localId, { sdpReadyAt: wallClockNow() });
      const started = await this.api.startCall({ localId, to: s.dialInput, sdp: offer.value.sdp, ...(anyway ? { anyway: true } : {}) });
      if (!started.ok) {
        this.engine.close(localId);
        // Main may not know the caller this window knew of: its refusal of an unlisted number is the
        // same warning, with "Call anyway", as long as the number is still the one typed.
        const unlisted = !verified && !anyway && started.error.code === 'invalid_phone_number' && this.state.dialInput === s.dialInput;
        if (unlisted) this.state.setDialWarning(errorMessage(started.error));
        else this.state.setDialError(errorMessage(started.error));
      }
      // The customer's answer comes with the call's push; the engine applies it.
    } finally {
      this.state.setDialBusy(false);
    }
  }

  /** A recent call: its number goes into the dialer, formatted as people type it. */
  useNumber(number: string): void {
    this.setDialInput(formatPhoneNumber(number));
  }

  // ---- calls ----

  /**
   * The Answer button: one command carrying the answer made while the call rang. Main claims the
   * call, then accepts; the call it then pushes in `connecting` is what lets the media engine start
   * ICE (callChanged), not this reply. Resolves once the command is answered (the card re-enables
   * its buttons if the call is still ringing).
   */
  async answer(localId: string): Promise<void> {
    const call = this.state.calls[localId];
    if (!call || call.direction !== 'incoming' || call.phase !== 'ringing') return;
    this.state.setCallNotice(null);
    this.ringtone?.stop();
    this.engine.noteTiming(localId, { clickedAt: wallClockNow() });
    // A bridged ring's leg: connected ahead already, or now (the answer handed over must be the one its leg took).
    if (isBridgedRing(call)) await this.warmRing(call, true);
    const prepared = await this.engine.answerFor(call);
    // No answer, no command: the call goes on ringing here (and for colleagues), with the reason shown,
    // and audibly again.
    if (!prepared.ok) {
      this.ringAgainIfRinging(localId);
      return;
    }
    this.engine.noteTiming(localId, { sdpReadyAt: wallClockNow() });
    const answered = await this.api.answerCall({ localId, sdp: prepared.value.sdp });
    if (answered.ok) return;
    // Nothing reached the customer: the call was never pushed in `connecting`, so its candidates were
    // never added. The media is released now (the call may ring on here). A colleague's call says it
    // all through its outcome ("Answered by another agent"); anything else is shown.
    this.engine.close(localId);
    if (answered.error.code !== 'answered_elsewhere') this.state.setCallNotice({ localId, text: errorMessage(answered.error) });
    this.ringAgainIfRinging(localId);
  }

  /** Answer silenced the ring at the click; an answer that did not happen gives it back. */
  private ringAgainIfRinging(localId: string): void {
    if (this.started && this.state.calls[localId]?.phase === 'ringing') this.ringtone?.start();
  }

  async decline(localId: string): Promise<void> {
    const result = await this.api.declineCall({ localId });
    if (!result.ok) this.state.setCallNotice({ localId, text: errorMessage(result.error) });
  }

  async hangUp(localId: string): Promise<void> {
    const request = this.api.hangUp({ localId });
    // The agent wants silence now, whatever the gateway says.
    this.engine.close(localId);
    const result = await request;
    if (!result.ok && result.error.code !== 'not_found') this.state.setCallNotice({ localId, text: errorMessage(result.error) });
  }

  /**
   * Hold: the main process marks the call held and the media engine, following the call, sends the
   * hold music instead of the microphone and mutes the customer. Resume takes it back into hand (and
   * holds the other call, if one is in hand: Swap).
   */
  async hold(localId: string): Promise<void> {
    const result = await this.api.holdCall({ localId });
    if (!result.ok) this.state.setCallNotice({ localId, text: errorMessage(result.error) });
  }

  async resume(localId: string): Promise<void> {
    const result = await this.api.resumeCall({ localId });
    if (!result.ok) this.state.setCallNotice({ localId, text: errorMessage(result.error) });
  }

  // ---- transfers (bridged calls, shared/transfer.ts) ----

  /**
   * "Transfer to" / "Consult with": the team with each agent's presence, checked as it arrives. The
   * dialog shows a refusal with "Try again".
   */
  async team(): Promise<Result<TeamMember[]>> {
    const team = await this.api.getTeam({});
    return team.ok ? parseTeam(team.value) : team;
  }

  /**
   * A colleague chosen in the dialog (`to`: an agent id, or ANYONE_AVAILABLE). The answer goes back
   * to the dialog, which shows a refusal where the choice was made; how the transfer goes on reaches
   * the call as its `transfer` (ringing, consulting, not answered…).
   */
  async transfer(localId: string, to: string, kind: TransferKind): Promise<Result<{ transferId: string }>> {
    this.clearNotice(localId);
    return this.api.transferCall({ localId, to, kind });
  }

  /** "Cancel transfer" / "Cancel consult": back with the customer. */
  async cancelTransfer(localId: string): Promise<void> {
    this.clearNotice(localId);
    const result = await this.api.cancelTransfer({ localId });
    if (!result.ok) this.state.setCallNotice({ localId, text: errorMessage(result.error) });
  }

  /** "Complete transfer": the consulted colleague takes the customer; this agent's call ends. */
  async completeTransfer(localId: string): Promise<void> {
    this.clearNotice(localId);
    const result = await this.api.completeTransfer({ localId });
    if (!result.ok) this.state.setCallNotice({ localId, text: errorMessage(result.error) });
  }

  /** "Add to call": the consult becomes a three-way call. */
  async addToCall(localId: string): Promise<void> {
    this.clearNotice(localId);
    const result = await this.api.addToCall({ localId });
    if (!result.ok) this.state.setCallNotice({ localId, text: errorMessage(result.error) });
  }

  /**
   * "Mute" / "Unmute" (and the mute shortcut), asked of the main process. The mute is the call's
   * (`muted`): every window of the agent, this one included, follows it with its microphone once main
   * pushes the call. Each press turns what the agent last asked for, shown at once and sent in order
   * (mute-wishes.ts). Muting errs on the safe side: this window's microphone goes quiet at once,
   * before main's word, and opens again only if main refuses.
   */
  toggleMute(localId: string): Promise<void> {
    return this.mute.toggle(localId);
  }

  sendDtmf(localId: string, tone: string): boolean {
    return this.engine.sendDtmf(localId, tone);
  }

  // ---- internals ----

  /**
   * A bridged call rejoining (its `rejoin`): "Rejoining…" is the news, so the failed leg's notice
   * ("The network connection was lost") goes as it appears. Each new leg the relay offers, which
   * the media engine prepared an answer for, is answered with one rejoinCall; the call is connected
   * again once the relay applied it (the engine starts ICE on that push).
   */
  private followRejoin(call: CallState): void {
    const { localId } = call;
    const rejoin = call.phase === 'connecting' || call.phase === 'active' ? call.rejoin : undefined;
    if (rejoin === undefined) {
      this.rejoins.delete(localId);
      return;
    }
    let seen = this.rejoins.get(localId);
    if (seen === undefined) {
      seen = {};
      this.rejoins.set(localId, seen);
      this.clearNotice(localId);
    }
    const { legId } = rejoin;
    if (legId === undefined || rejoin.offerSdp === undefined || rejoin.answered || seen.answeredLeg === legId) return;
    seen.answeredLeg = legId;
    void this.rejoin(call, legId);
  }

  /**
   * "Try again" on a rejoining call whose new leg could not open the microphone: the microphone,
   * and the answer to the same leg (the relay keeps offering it until the rejoin window is over).
   */
  retryRejoin(localId: string): void {
    const call = this.state.calls[localId];
    const legId = offeredLegOf(call);
    if (call === undefined || legId === undefined) return;
    this.clearNotice(localId);
    void this.rejoin(this.mute.heard(call), legId, true);
  }

  /**
   * The answer to the relay's offer of `legId`, made by the media engine as the offer came (`again`:
   * made anew). Its new media starts as the agent left the call: muted if it was. Refused (another
   * window answered first, or a newer leg replaced this one), it closes without a word: the call goes
   * on without it.
   */
  private async rejoin(call: CallState, legId: string, again = false): Promise<void> {
    const { localId } = call;
    const prepared = await this.engine.rejoinAnswerFor(call, again);
    // No answer: the engine has no media of this leg, or said why on the call's panel (a microphone
    // refused), where "Try again" is offered while the call still waits for that leg.
    if (!prepared.ok) {
      if (prepared.error.code === 'media_failed' && this.stillOffered(localId, legId)) this.state.setCallNotice({ localId, text: mediaText(prepared.error.problem), retry: 'rejoin' });
      return;
    }
    const sent = await this.api.rejoinCall({ localId, legId, sdp: prepared.value.sdp });
    if (sent.ok) return;
    log.info('the rejoin answer was not taken', { localId, legId, code: sent.error.code });
    this.engine.closeRejoinLeg(localId, legId);
  }

  private warmOnce(call: Extract<CallState, { direction: 'incoming' }>): void {
    if (this.warmTried.has(call.localId)) return;
    this.warmTried.add(call.localId);
    void this.warmRing(call);
  }

  /**
   * Connects a bridged ring's leg ahead of the click (connectRingLeg), one run at a time: a second
   * asker waits for the first. `afresh` (Answer): a leg that failed while it rang is answered again.
   */
  private async warmRing(call: Extract<CallState, { direction: 'incoming' }>, afresh = false): Promise<void> {
    const { localId } = call;
    const running = this.warmRuns.get(localId);
    if (running) await running;
    if (running && !afresh) return;
    const run = this.connectRingLeg(call, afresh).finally(() => {
      if (this.warmRuns.get(localId) === run) this.warmRuns.delete(localId);
    });
    this.warmRuns.set(localId, run);
    return run;
  }

  /**
   * A bridged call ringing here: the answer made while it rings goes to the team's bridge now, so
   * that the leg is connected when the agent clicks Answer (click → two-way audio then waits for the
   * customer's leg alone). The bridge routes the leg to nobody until the accept. When another
   * window's answer took the ring's leg, this window answers a leg of its own; a leg whose ICE
   * failed while it rang is answered afresh. Whatever fails here only leaves the leg to connect at
   * Answer, as it always could.
   */
  private async connectRingLeg(call: Extract<CallState, { direction: 'incoming' }>, afresh: boolean): Promise<void> {
    const { localId } = call;
    const ringing = () => this.state.calls[localId]?.phase === 'ringing';
    let leg = await this.engine.ringLegOf(localId);
    if (afresh && leg === undefined && ringing() && this.engine.answerRingLegAgain(call)) leg = await this.engine.ringLegOf(localId);
    for (let tries = 0; tries < 3; tries++) {
      if (leg === undefined || leg.warm || !ringing()) return;
      const { sdp } = leg;
      const sent = await this.api.ringAnswer({ localId, sdp, ...(leg.legId !== undefined ? { legId: leg.legId } : {}) });
      if (!sent.ok) {
        log.info('the ringing leg did not connect ahead of the click', { localId, code: sent.error.code });
        return;
      }
      if (sent.value.connected) {
        this.engine.warmRingLeg(localId, sdp);
        return;
      }
      const still = this.state.calls[localId];
      if (still?.phase !== 'ringing' || !this.engine.answerRingLegAgain(still, { legId: sent.value.legId, offerSdp: sent.value.offer })) return;
      leg = await this.engine.ringLegOf(localId);
    }
  }

  /** A new step of a call makes an old problem of that call stale. */
  /** Whether the call still waits for the window's answer to `legId`. */
  private stillOffered(localId: string, legId: string): boolean {
    return offeredLegOf(this.state.calls[localId]) === legId;
  }

  private clearNotice(localId: string): void {
    if (this.state.callNotice?.localId === localId) this.state.setCallNotice(null);
  }

  /** Whether a customer called from this number, as far as this window knows (the history and the calls). */
  private isCallerNumber(digits: string): boolean {
    const s = this.state;
    const calls = Object.values(s.calls).map((c) => ({ direction: c.direction, number: c.peer.number }));
    return isCallerNumber(digits, calls) || isCallerNumber(digits, s.history);
  }

  /** The call's media closed: its quality goes to the call history; its live view goes. */
  private async reportQuality(record: CallQualityRecord): Promise<void> {
    this.quality.getState().forget(record.localId);
    const result = await this.api.reportQuality(record);
    if (!result.ok) log.warn('the call quality could not be reported', { localId: record.localId, code: result.error.code, problem: result.error.message });
  }

  /**
   * A media fact from the engine, for the main process (media failed ends the call there): a failure's
   * reason goes in English and as its code and values, which the ended call keeps for every window to say.
   */
  private async reportMedia(fact: MediaFact): Promise<void> {
    const reported = fact.state === 'failed' ? { localId: fact.localId, state: fact.state, ...reportedReason(fact.reason) } : fact;
    const result = await this.api.reportMedia(reported);
    if (!result.ok && result.error.code !== 'not_found') log.warn('a media fact was not taken', { localId: fact.localId, code: result.error.code });
  }

  /** The ringtone starts, like the media, once the ringing card is rendered; it stops at once. */
  private followRinging(calls: AppState['calls'], before: AppState['calls']): void {
    if (calls === before || !this.ringtone) return;
    if (!anyRinging(calls)) {
      this.ringtone.stop();
      return;
    }
    this.ringAfterRender = true;
    this.queueAfterRender();
  }

  /**
   * One task after the render for all that follows a ring, in this order: the microphone opens and
   * the answer is made first (the agent may click Answer at once), then the ringtone starts (its
   * audio output does not hold up the capture). Each only if the call still rings then.
   */
  private queueAfterRender(): void {
    if (this.renderQueued) return;
    this.renderQueued = true;
    this.afterRender(() => {
      this.renderQueued = false;
      const prepare = [...this.toPrepare];
      const ring = this.ringAfterRender;
      this.toPrepare.clear();
      this.ringAfterRender = false;
      if (!this.started) return;
      for (const localId of prepare) {
        const now = this.state.calls[localId];
        if (now?.phase !== 'ringing') continue;
        this.engine.onCall(now);
        if (isBridgedRing(now)) this.warmOnce(now);
      }
      if (ring && anyRinging(this.state.calls)) this.ringtone?.start();
    });
  }

  private async pollLevels(): Promise<void> {
    const call = currentCall(this.state.calls, Date.now());
    if (!call || call.phase === 'ended' || !this.engine.has(call.localId)) {
      this.state.setLevels({ mic: 0, customer: 0 });
      return;
    }
    try {
      const levels = await this.engine.levels(call.localId);
      this.state.setLevels({ mic: round2(levels.mic), customer: round2(levels.customer) });
    } catch (e) {
      log.debug('reading levels failed', { problem: errorText(e) });
    }
  }
}

const anyRinging = (calls: AppState['calls']): boolean => Object.values(calls).some((c) => c.phase === 'ringing');

const round2 = (v: number): number => Math.round(v * 100) / 100;

/** The new leg a rejoining call waits for this window's answer to, if it does. */
function offeredLegOf(call: CallState | undefined): string | undefined {
  const rejoin = call?.phase === 'connecting' || call?.phase === 'active' ? call.rejoin : undefined;
  return rejoin?.offerSdp !== undefined && rejoin.answered !== true ? rejoin.legId : undefined;
}
