// The call coordinator: the one owner of the agent's calls in the main process. It decides
// nothing: relay events and agent commands go through the pure reducer (shared/call-state.ts),
// and this runs the effects it returns — claims and declines on the relay, the gateway's accept,
// initiate, reject and terminate, deadlines, the replies of waiting commands, rejoins (rejoin-runner.ts)
// — feeding each outcome back as an event. Beside that it pushes changed calls, records history,
// and writes the crash-recovery file, which is derived from the calls it holds.
import { randomUUID } from 'node:crypto';
import { applyCallEvent, emptyBook, busyCalls, canTakeAnother, hasBusyCall, isRejoining, liveCalls, owedOnCrash, PHASE_TERM, pruneBook, publicCall, TRANSFER_REFUSALS } from '../../shared/call-state';
import type { CallBook, CallEffect, CallEvent, CallRecord, CallReply, CallState, Peer } from '../../shared/call-state';
import type { RelayEnvelope } from '../../shared/events';
import { historyEntryFor } from '../../shared/history';
import { createLogger, type Logger } from '../../shared/log';
import { checkPhoneNumber, isCallerNumber, unverifiedNumberError } from '../../shared/phone';
import type { MainCallTimings } from '../../shared/diagnostics';
import { term, text, type RuleText } from '../../shared/i18n/text';
import { assertNever, err, errorText, errText, ok, type Result } from '../../shared/result';
import type { CallTransfers } from './bridged-calls';
import { systemTimers, type CallCoordinatorOptions, type CoordinatorTimers } from './call-coordinator-options';
import type { CallControl } from './gateway-client';
import { CallSetupTimes, wallClockNow } from './call-setup-times';
import { LiveCallsFile } from './live-calls-file';
import { callEventOf } from './relay-call-events';
import type { CallClaims } from './relay-client';
import { RejoinRunner } from './rejoin-runner';

export { systemTimers, type CallCoordinatorOptions, type CoordinatorTimers } from './call-coordinator-options';

export type CallChangedListener = (call: CallState) => void;

export class CallCoordinator {
  private book: CallBook = emptyBook();
  private readonly gateway: CallControl;
  private readonly claims: CallClaims;
  private readonly transfers: CallTransfers | undefined;
  private readonly nameFor: ((number: string) => string | undefined) | undefined;
  private readonly history: CallCoordinatorOptions['history'];
  private defaultCountry: string | undefined;
  private readonly now: () => number;
  private readonly timers: CoordinatorTimers;
  private readonly newLocalId: () => string;
  private readonly log: Logger;
  private readonly pruneIntervalMs: number;
  private readonly shutdownTimeoutMs: number;

  private readonly listeners = new Set<CallChangedListener>();
  /** When each step of a call's set-up happened here: diagnostics say where a slow answer spent its time. */
  private readonly setupTimes = new CallSetupTimes();
  /** The timer of each call's one deadline (the reducer sets and cancels them). */
  private readonly deadlines = new Map<string, unknown>();
  /** Per call, the gateway requests in the order the reducer asked for them (an end after its accept or initiate). */
  private readonly gatewayQueues = new Map<string, Promise<void>>();
  /** Commands waiting for the reducer's reply, by request id. */
  private readonly replies = new Map<string, (result: Result<CallReply>) => void>();
  /** Every request under way, so that shutdown and whenIdle can wait for them. */
  private readonly work = new Set<Promise<unknown>>();
  private readonly liveFile: LiveCallsFile;
  private readonly rejoins: RejoinRunner;
  private pruneTimer: unknown;
  private stopped = false;

  constructor(options: CallCoordinatorOptions) {
    this.gateway = options.gateway;
    this.claims = options.claims;
    this.transfers = options.transfers;
    this.history = options.history;
    this.defaultCountry = options.defaultCountry;
    this.nameFor = options.nameFor;
    this.now = options.now ?? Date.now;
    this.timers = options.timers ?? systemTimers;
    this.newLocalId = options.newLocalId ?? (() => `out:${randomUUID()}`);
    this.log = options.logger ?? createLogger('calls');
    this.pruneIntervalMs = options.pruneIntervalMs ?? 60_000;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? 3_000;
    this.liveFile = new LiveCallsFile(options.dataDir, options.gatewayUrl, this.log);
    this.rejoins = new RejoinRunner(options.rejoins, { now: () => this.now(), call: (id) => this.book.calls[id], dispatch: (ev) => void this.dispatch(ev), log: this.log });
  }

  /**
   * Takes over the calls a previous run left live (it crashed or lost power: protocol.md says
   * terminate must still be sent) and starts housekeeping. Each is checked with the relay first —
   * in a team it may be a colleague's by now — and ended in the background; one to `restore` rejoins.
   */
  async start(): Promise<void> {
    for (const { callId, action, restore } of await this.liveFile.leftovers(this.now())) {
      this.log.info('a call left live by a previous run', { callId, action, restored: restore !== undefined });
      this.dispatch({ type: 'local.leftover', at: this.now(), localId: `left:${callId}`, callId, action, ...(restore !== undefined ? { restore } : {}) });
    }
    this.persistLive();
    this.schedulePrune();
  }

  /** For numbers typed without a country code from now on. */
  setDefaultCountry(country: string | undefined): void {
    this.defaultCountry = country;
  }

  onCallChanged(listener: CallChangedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** All calls this run shows, live and recently ended, oldest first (a call a previous run left live is none of them). */
  calls(): CallState[] {
    return Object.values(this.book.calls)
      .map(publicCall)
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  /** One call as the reducer holds it, with what is still open about it. */
  call(localId: string): CallRecord | undefined {
    return this.book.calls[localId];
  }

  /** The relay no longer knows this agent's transfer of the call (it answered its cancel 404): the transfer is over. */
  transferGone(localId: string, transferId: string): void {
    if (this.stopped) return;
    this.log.info('the relay no longer knows a transfer; it is over here too', { localId, transferId });
    this.dispatch({ type: 'local.transfer_gone', at: this.now(), localId, transferId });
  }

  applyRelayEvent(envelope: RelayEnvelope, joinedCallId?: string): void {
    if (this.stopped) return;
    const ev = callEventOf(envelope, this.now(), this.claims.agentId, joinedCallId);
    if (ev) this.dispatch(ev);
  }

  /** Whether a call keeps the agent busy (placing, answering or on a call): presence is "on_call" then. */
  hasBusyCall(): boolean {
    return hasBusyCall(Object.values(this.book.calls));
  }

  /** How many calls keep the agent busy: two at most (one on hold). */
  busyCallCount(): number {
    return busyCalls(Object.values(this.book.calls)).length;
  }

  /** Whether a further call could be answered now, the one in hand going on hold (shared/call-state.ts canTakeAnother). */
  canTakeAnother(): boolean {
    return canTakeAnother(Object.values(this.book.calls));
  }

  /**
   * The Call button: the number checked and normalised, then initiate with the complete local
   * offer. Resolves once the gateway has placed the call (or refused it). Never retried: a retry
   * would ring the customer twice. A number the metadata does not list as valid is placed only with
   * the agent's `anyway`, or when a customer called from it: the gateway is the judge of those.
   */
  async startCall(
    to: string,
    offerSdp: string,
    localId: string = this.newLocalId(),
    options: { anyway?: boolean | undefined } = {},
  ): Promise<Result<{ localId: string; to: string; callId: string }>> {
    if (this.stopped) return this.stoppedError();
    const commandAt = wallClockNow();
    const checked = checkPhoneNumber(to, this.defaultCountry);
    if (!checked.ok) return checked;
    if (!checked.value.verified && options.anyway !== true && !this.isCallerNumber(checked.value.digits)) {
      return unverifiedNumberError(checked.value.digits);
    }
    const number = checked.value.digits;
    const name = this.nameFor?.(number);
    const peer: Peer & { number: string } = { number, ...(name !== undefined && name !== '' ? { name } : {}) };
    this.setupTimes.stamp(localId, 'commandAt', commandAt);
    const placed = await this.command((requestId) => ({ type: 'local.dial', at: this.now(), localId, peer, offerSdp, requestId }));
    return placed.ok ? ok({ localId: placed.value.localId, to: number, callId: placed.value.callId }) : placed;
  }

  /** "A number a customer called from can always be called back": the history, and the calls of this run. */
  private isCallerNumber(digits: string): boolean {
    const live = Object.values(this.book.calls).map((c) => ({ direction: c.direction, number: c.peer.number }));
    return isCallerNumber(digits, live) || isCallerNumber(digits, this.history.entries());
  }

  /**
   * The Answer button, with the answer the renderer made while the call rang. Main claims the call
   * on the relay, accepts once the claim is won (or could not be decided: a relay that is down must
   * not keep a customer waiting), and resolves once the gateway has the answer: answered_elsewhere
   * when a colleague's claim won (no accept is sent), the gateway's error when it refused.
   */
  async answerCall(localId: string, answerSdp: string): Promise<Result<null>> {
    if (this.stopped) return this.stoppedError();
    const commandAt = wallClockNow();
    const ringing = this.book.calls[localId]?.phase === 'ringing';
    const reply = this.command((requestId) => ({ type: 'local.answer', at: this.now(), localId, answerSdp, requestId }));
    // Only the Answer that took the call starts its set-up: one refused (the call not ringing, or
    // another call not yet connected) says nothing of the Answer that follows.
    if (ringing && this.book.calls[localId]?.phase === 'answering') this.setupTimes.stamp(localId, 'commandAt', commandAt);
    const answered = await reply;
    return answered.ok ? ok(null) : answered;
  }

  /** Stops the call ringing here; the gateway hears reject only when no colleague may still answer it. */
  declineCall(localId: string): Promise<Result<null>> {
    return this.callCommand((at, requestId) => ({ type: 'local.decline', at, localId, requestId }));
  }

  /** Ends any live call; an ended one is left as it is (hanging up twice is harmless). */
  async hangUp(localId: string): Promise<Result<null>> {
    const ended = await this.command((requestId) => ({ type: 'local.hangup', at: this.now(), localId, requestId }));
    return ended.ok ? ok(null) : ended;
  }

  /** Puts an active call on hold (holding a held call is harmless). */
  holdCall(localId: string): Promise<Result<null>> {
    return this.callCommand((at, requestId) => ({ type: 'local.hold', at, localId, requestId }));
  }

  /** A window's answer to the relay's offer of a new leg for a rejoining call (shared/calls/rejoin.ts): the first window's answer takes it. */
  rejoinCall(localId: string, legId: string, sdp: string): Promise<Result<null>> {
    return this.callCommand((at, requestId) => ({ type: 'local.rejoin_answer', at, localId, legId, sdp, requestId }));
  }

  /** Takes a held call back into hand; a call in hand beside it goes on hold in the same step (Swap). */
  resumeCall(localId: string): Promise<Result<null>> {
    return this.callCommand((at, requestId) => ({ type: 'local.resume', at, localId, requestId }));
  }

  /** Mutes or unmutes the agent's microphone on a live call (shared/calls/mute.ts); every window follows the call's `muted`. */
  setMuted(localId: string, muted: boolean): Promise<Result<null>> {
    return this.callCommand((at, requestId) => ({ type: 'local.mute', at, localId, muted, requestId }));
  }

  /** The window that carried the call's audio went (`error`: how): a bridged call rejoins, any other ends as if its media failed. */
  windowGone(localId: string, error: { code: string; message: string; text?: RuleText }): void {
    if (this.stopped) return;
    this.dispatch({ type: 'local.window_gone', at: this.now(), localId, error });
  }

  /**
   * A media fact from the renderer: connected, or failed (the call is then over). A failure's reason
   * comes in English and, from a window of this version, as its code and values too (`reasonText`):
   * the ended call and its history entry keep both.
   */
  async reportMedia(report: { localId: string; state: 'connected' } | { localId: string; state: 'failed'; reason: string; reasonText?: RuleText | undefined }): Promise<Result<null>> {
    const { localId } = report;
    const call = this.book.calls[localId];
    if (!call) return errText('not_found', text('calls.noSuchCall', { localId }));
    if (call.phase === 'ended' || (report.state === 'connected' && call.phase === 'active' && !isRejoining(call))) return ok(null);
    if (report.state === 'connected') {
      // A rejoining call is connected again by its new leg's media; an earlier leg's word changes nothing.
      const changed = this.dispatch({ type: 'local.media_connected', at: this.now(), localId });
      return changed.length > 0 || isRejoining(call) ? ok(null) : errText('invalid_state', text('calls.mediaNotYet', { phase: term(PHASE_TERM[call.phase]) }));
    }
    this.log.warn('media failed', { localId, phase: call.phase, reason: report.reason });
    const error = { code: 'media_failed', message: report.reason, ...(report.reasonText !== undefined ? { text: report.reasonText } : {}) };
    this.dispatch({ type: 'local.media_failed', at: this.now(), localId, error });
    return ok(null);
  }

  /**
   * Ends every live call on the gateway (app quit, account switch), waiting at most
   * shutdownTimeoutMs. Calls whose end did not get through stay in live-calls.json, so the next
   * start tries again.
   */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    for (const call of liveCalls(this.book)) this.dispatch({ type: 'local.hangup', at: this.now(), localId: call.localId });
    this.stopped = true;
    this.rejoins.stop();
    if (this.pruneTimer !== undefined) this.timers.clearTimeout(this.pruneTimer);
    let bound: ReturnType<typeof setTimeout> | undefined;
    // A wall-clock bound on network work, not a call timer: the injected timers do not apply.
    const limit = new Promise<'timeout'>((resolve) => (bound = setTimeout(() => resolve('timeout'), this.shutdownTimeoutMs)));
    const outcome = await Promise.race([this.settle().then(() => 'done' as const), limit]);
    clearTimeout(bound);
    if (outcome === 'timeout') this.log.warn('the gateway did not confirm every end before shutdown', { unconfirmed: owedOnCrash(this.book).length });
    for (const handle of this.deadlines.values()) this.timers.clearTimeout(handle);
    this.deadlines.clear();
    for (const resolve of this.replies.values()) resolve(this.stoppedError());
    this.replies.clear();
    this.listeners.clear();
    await this.liveFile.flush();
  }

  /** Resolves when no request is under way and live-calls.json is written. */
  async whenIdle(): Promise<void> {
    await this.settle();
    await this.whenSaved();
  }

  /** Resolves when live-calls.json holds what the gateway is owed now, requests still under way or not. */
  whenSaved(): Promise<void> {
    return this.liveFile.flush();
  }

  private async settle(): Promise<void> {
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
  }

  /** A command on one call whose answer is only whether the reducer took it; refused once shut down. */
  private async callCommand(make: (at: number, requestId: string) => CallEvent): Promise<Result<null>> {
    if (this.stopped) return this.stoppedError();
    const done = await this.command((requestId) => make(this.now(), requestId));
    return done.ok ? ok(null) : done;
  }

  /** Dispatches a command and waits for the reducer's reply to it. */
  private command(make: (requestId: string) => CallEvent): Promise<Result<CallReply>> {
    const requestId = randomUUID();
    const reply = new Promise<Result<CallReply>>((resolve) => this.replies.set(requestId, resolve));
    this.dispatch(make(requestId));
    return reply;
  }

  private readonly stoppedError = (): Result<never> => errText('not_available', text('calls.shuttingDown'));

  /** Runs one event through the reducer, follows up on every call it changed, and runs its effects. */
  private dispatch(ev: CallEvent): CallRecord[] {
    const before = this.book;
    const { book, changed, effects } = applyCallEvent(before, ev);
    this.book = book;
    // Requests first: a claim or an accept on the answer path should not queue behind pushes and
    // presence reports (none of them waits for the other); the file last, it is for a crash only
    // (a leftover's change is in the book, not among the calls).
    for (const effect of effects) this.run(effect);
    for (const call of changed) this.announce(call, before.calls[call.localId], ev);
    if (book !== before) this.persistLive();
    return changed;
  }

  private announce(changed: CallRecord, previous: CallRecord | undefined, ev: CallEvent): void {
    this.rejoins.follow(changed);
    if (previous?.phase !== changed.phase) this.log.info('call changed', { localId: changed.localId, callId: changed.callId, phase: changed.phase, event: ev.type });
    // What is still open between main and the gateway or relay is nobody else's business.
    const call = publicCall(changed);
    if (previous !== undefined && JSON.stringify(publicCall(previous)) === JSON.stringify(call)) return;
    if (call.phase === 'ended') {
      const entry = historyEntryFor(call);
      if (previous?.phase !== 'ended' || JSON.stringify(historyEntryFor(previous)) !== JSON.stringify(entry)) this.history.record(entry);
    }
    for (const listener of this.listeners) {
      try {
        listener(call);
      } catch (e) {
        this.log.error('a call listener failed', { error: e });
      }
    }
  }

  private run(effect: CallEffect): void {
    switch (effect.kind) {
      case 'reply': {
        const resolve = this.replies.get(effect.requestId);
        this.replies.delete(effect.requestId);
        resolve?.(effect.result);
        return;
      }
      case 'deadline': {
        const current = this.deadlines.get(effect.localId);
        if (current !== undefined) this.timers.clearTimeout(current);
        this.deadlines.delete(effect.localId);
        if (effect.at === undefined || this.stopped) return;
        const { localId } = effect;
        const handle = this.timers.setTimeout(() => {
          this.deadlines.delete(localId);
          if (!this.stopped) this.dispatch({ type: 'local.deadline', at: this.now(), localId });
        }, Math.max(0, effect.at - this.now()));
        this.deadlines.set(localId, handle);
        return;
      }
      case 'claim':
        // An outgoing call's claim only routes its later events: it is no step of its set-up.
        if (this.book.calls[effect.localId]?.direction === 'incoming') this.setupTimes.stamp(effect.localId, 'claimSentAt');
        this.track(this.claim(effect.localId, effect.callId));
        return;
      case 'decline':
        this.track(this.decline(effect.localId, effect.callId));
        return;
      case 'transfer_decline':
        this.track(this.declineTransfer(effect.callId, effect.transferId));
        return;
      case 'accept':
        this.inOrder(effect.localId, async () => {
          this.setupTimes.stamp(effect.localId, 'gatewaySentAt');
          const result = await this.gateway.accept(effect.callId, effect.sdp, effect.localId).catch((e: unknown) => err('internal', errorText(e)));
          this.setupTimes.stamp(effect.localId, 'gatewayDoneAt');
          this.dispatch(result.ok ? { type: 'local.accept_ok', at: this.now(), localId: effect.localId } : { type: 'local.accept_failed', at: this.now(), localId: effect.localId, error: result.error });
        });
        return;
      case 'initiate':
        this.inOrder(effect.localId, async () => {
          this.setupTimes.stamp(effect.localId, 'gatewaySentAt');
          const result = await this.gateway.initiate(effect.to, effect.sdp, effect.localId).catch((e: unknown) => err<{ callId: string; bridged?: true }>('internal', errorText(e)));
          this.setupTimes.stamp(effect.localId, 'gatewayDoneAt');
          this.dispatch(
            result.ok
              ? { type: 'local.initiate_ok', at: this.now(), localId: effect.localId, callId: result.value.callId, ...(result.value.bridged === true ? { bridged: true } : {}) }
              : { type: 'local.initiate_failed', at: this.now(), localId: effect.localId, error: result.error },
          );
        });
        return;
      case 'end':
        this.inOrder(effect.localId, async () => {
          const { callId, action } = effect;
          const result = await (action === 'terminate' ? this.gateway.terminate(callId) : this.gateway.reject(callId)).catch((e: unknown) => err('internal', errorText(e)));
          let outcome: 'done' | 'refused' | 'unreached' = 'done';
          if (!result.ok) {
            const unreached = result.error.code === 'timeout' || (result.error.code === 'gateway_unreachable' && result.error.httpStatus === undefined);
            outcome = unreached ? 'unreached' : 'refused';
            this.log[unreached ? 'warn' : 'info'](unreached ? `${action} did not reach the gateway` : `${action} refused by the gateway`, {
              callId,
              gatewayCode: result.error.gatewayCode,
              reason: result.error.message,
            });
          }
          this.dispatch({ type: 'local.end_result', at: this.now(), localId: effect.localId, outcome });
        });
        return;
      case 'rejoin':
      case 'rejoin_answer':
        this.track(this.rejoins.run(effect));
        return;
      default:
        assertNever(effect, 'effect');
    }
  }

  private async claim(localId: string, callId: string): Promise<void> {
    const result = await this.claims.claim(callId).catch((e: unknown) => err<{ agentId: string }>('internal', errorText(e)));
    let outcome: 'won' | 'lost' | 'unknown' = 'won';
    if (!result.ok) {
      outcome = result.error.code === 'answered_elsewhere' ? 'lost' : 'unknown';
      if (outcome === 'unknown') this.log.warn('the claim could not be made', { localId, callId, code: result.error.code, reason: result.error.message });
    }
    if (this.setupTimes.has(localId, 'claimSentAt')) this.setupTimes.stamp(localId, 'claimDoneAt');
    this.dispatch({ type: 'local.claim_result', at: this.now(), localId, outcome });
  }

  private async decline(localId: string, callId: string): Promise<void> {
    const verdict = await this.claims.decline(callId).catch((e: unknown) => err<{ othersRinging: number; answeredBy?: string }>('internal', errorText(e)));
    let last: boolean | undefined;
    if (!verdict.ok) {
      this.log.warn('the relay could not be asked about a decline; the call is left to ring for colleagues', { callId, code: verdict.error.code, reason: verdict.error.message });
    } else {
      const { othersRinging, answeredBy } = verdict.value;
      last = othersRinging === 0 && answeredBy === undefined;
      if (!last) this.log.info('declined here; the call rings on for colleagues', { callId, othersRinging, answeredBy });
    }
    this.dispatch({ type: 'local.decline_result', at: this.now(), localId, last });
  }

  /** Nothing comes back: the colleague's transfer rings on elsewhere, or gives up by itself. */
  private async declineTransfer(callId: string, transferId: string): Promise<void> {
    const told = this.transfers !== undefined ? await this.transfers.declineTransfer(callId, transferId).catch((e: unknown) => err('internal', errorText(e))) : errText('invalid_state', TRANSFER_REFUSALS.notBridged);
    if (!told.ok) this.log.warn('the relay was not told a transfer is not taken here', { callId, transferId, code: told.error.code, reason: told.error.message });
  }

  /** Runs a gateway request after the ones already asked for this call, so the gateway sees them in order. */
  private inOrder(localId: string, request: () => Promise<void>): void {
    const previous = this.gatewayQueues.get(localId) ?? Promise.resolve();
    const next = previous.then(request).catch((e: unknown) => this.log.error('a gateway request failed unexpectedly', { localId, error: e }));
    this.gatewayQueues.set(localId, next);
    void next.finally(() => {
      if (this.gatewayQueues.get(localId) === next) this.gatewayQueues.delete(localId);
    });
    this.track(next);
  }

  private track(op: Promise<unknown>): void {
    this.work.add(op);
    void op.finally(() => this.work.delete(op)).catch(() => undefined);
  }

  private schedulePrune(): void {
    if (this.stopped) return;
    this.pruneTimer = this.timers.setTimeout(() => {
      this.book = pruneBook(this.book, this.now());
      this.setupTimes.keepOnly((localId) => this.book.calls[localId] !== undefined);
      this.schedulePrune();
    }, this.pruneIntervalMs);
  }

  /** When each step of a call's set-up happened in the main process (wall clock, fractions of a ms kept). */
  timingsOf(localId: string): MainCallTimings {
    return this.setupTimes.of(localId);
  }

  /** Writes what the gateway would still be owed after a crash, whenever it changes. */
  private persistLive(): void {
    this.liveFile.save(owedOnCrash(this.book));
  }
}
