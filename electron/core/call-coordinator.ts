// The call coordinator: the one owner of the agent's calls in the main process. Relay events and
// agent commands go through the pure reducer (shared/call-state.ts); what the reducer cannot do —
// timers, gateway requests, history, crash safety — happens here.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import {
  applyCallEvent,
  DIAL_TIMEOUT_MS,
  emptyBook,
  isLive,
  liveCalls,
  pruneBook,
  type CallBook,
  type CallEvent,
  type CallState,
  type LocalError,
  type Peer,
} from '../../shared/call-state';
import type { RelayEnvelope } from '../../shared/events';
import { historyEntryFor, type HistoryEntry } from '../../shared/history';
import { createLogger, type Logger } from '../../shared/log';
import { normalisePhoneNumber } from '../../shared/phone';
import { assertNever, err, ok, type AppError, type Result, errorText } from '../../shared/result';
import type { CallControl } from './gateway-client';
import { CoalescingWriter, readJsonFile, setAsideCorruptFile, writeFileAtomic } from './json-file';
import { ANSWERED_ELSEWHERE_MESSAGE, type CallClaims } from './relay-client';

export interface CoordinatorTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: CoordinatorTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface CallCoordinatorOptions {
  gateway: CallControl;
  /**
   * First-claim-wins on the relay (relay/README.md): an incoming call is claimed before its accept,
   * an outgoing one right after initiate. Without it every call is this agent's.
   */
  claims?: CallClaims;
  /**
   * The gateway's base URL. Calls left over from a previous run are ended only on the gateway that
   * knows them (a run in sandbox mode leaves ids that an account's gateway has never seen).
   */
  gatewayUrl: string;
  /** Where live-calls.json is kept. */
  dataDir: string;
  history: { record(entry: HistoryEntry): void };
  /** For numbers typed without a country code. */
  defaultCountry?: string;
  /** The name this app knows for a number (earlier calls, conversations), shown on an outgoing call. */
  nameFor?: (number: string) => string | undefined;
  now?: () => number;
  timers?: CoordinatorTimers;
  newLocalId?: () => string;
  logger?: Logger;
  /** How often ended calls, tombstones and stale pending events are dropped. Default 60 s. */
  pruneIntervalMs?: number;
  /** The most shutdown() waits for the gateway. Default 3 s. */
  shutdownTimeoutMs?: number;
}

export type CallChangedListener = (call: CallState) => void;
type EndingAction = 'terminate' | 'reject';
/** How a claim came out: this agent's, another agent's, or not known (the relay could not be asked). */
type ClaimOutcome = 'won' | 'lost' | 'unknown';

const LIVE_CALLS_FILE = 'live-calls.json';
const liveCallsFileSchema = z.object({
  version: z.literal(1),
  calls: z.array(z.object({ callId: z.string().min(1), action: z.enum(['terminate', 'reject']), gatewayUrl: z.string() })),
});
type LiveCallRecord = z.infer<typeof liveCallsFileSchema>['calls'][number];

/** A dialing call whose offer never came: the renderer gave up or is gone. */
const NO_OFFER_ERROR: LocalError = { code: 'media_failed', message: 'The call could not start: the audio offer was not ready in time' };

/** The phases in which the agent is on (or placing) a call: only one such call at a time. */
const BUSY_PHASES = new Set<CallState['phase']>(['dialing', 'calling', 'remote_ringing', 'answering', 'connecting', 'active']);

const notFound = (localId: string): Result<never> => err('not_found', `There is no call ${localId}`);

/** The failure code kept on an ended call: the gateway's number when there is one (e.g. "138006"). */
const localErrorFrom = (error: AppError): LocalError => ({
  code: error.gatewayCode !== undefined ? String(error.gatewayCode) : error.code,
  message: error.message,
});

export class CallCoordinator {
  private book: CallBook = emptyBook();
  private readonly gateway: CallControl;
  private readonly claims: CallClaims | undefined;
  private readonly nameFor: ((number: string) => string | undefined) | undefined;
  private readonly gatewayUrl: string;
  private readonly history: { record(entry: HistoryEntry): void };
  private defaultCountry: string | undefined;
  private readonly now: () => number;
  private readonly timers: CoordinatorTimers;
  private readonly newLocalId: () => string;
  private readonly log: Logger;
  private readonly pruneIntervalMs: number;
  private readonly shutdownTimeoutMs: number;
  private readonly livePath: string;

  private readonly listeners = new Set<CallChangedListener>();
  private readonly deadlines = new Map<string, { at: number; handle: unknown }>();
  /** accept / initiate requests on their way, by localId: ending a call waits for them. */
  private readonly inflight = new Map<string, Promise<unknown>>();
  /** Claims of incoming calls being answered, by localId, started with the Answer click. */
  private readonly claimsByCall = new Map<string, { outcome: Promise<ClaimOutcome>; settled?: ClaimOutcome }>();
  /** Incoming calls whose acceptCall is waiting for the claim: a second acceptCall is refused. */
  private readonly awaitingClaim = new Set<string>();
  /** Calls whose terminate or reject has not been confirmed yet; kept in live-calls.json until it is. */
  private readonly ending = new Map<string, EndingAction>();
  /** Every gateway request under way, so that shutdown can wait for them. */
  private readonly work = new Set<Promise<unknown>>();
  private readonly liveWriter: CoalescingWriter;
  private liveFileText: string | undefined;
  private pruneTimer: unknown;
  private stopped = false;

  constructor(options: CallCoordinatorOptions) {
    this.gateway = options.gateway;
    this.claims = options.claims;
    this.gatewayUrl = options.gatewayUrl;
    this.history = options.history;
    this.defaultCountry = options.defaultCountry;
    this.nameFor = options.nameFor;
    this.now = options.now ?? Date.now;
    this.timers = options.timers ?? systemTimers;
    this.newLocalId = options.newLocalId ?? (() => `out:${randomUUID()}`);
    this.log = options.logger ?? createLogger('calls');
    this.pruneIntervalMs = options.pruneIntervalMs ?? 60_000;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? 3_000;
    this.livePath = join(options.dataDir, LIVE_CALLS_FILE);
    this.liveWriter = new CoalescingWriter(
      () => writeFileIfSet(this.livePath, this.liveFileText),
      (e) => this.log.error('could not save the live calls', { error: e }),
    );
  }

  /**
   * Ends the calls a previous run left live (it crashed or lost power: protocol.md says terminate
   * must still be sent) and starts housekeeping. The terminates run in the background.
   */
  async start(): Promise<void> {
    const read = await readJsonFile(this.livePath);
    let leftovers: LiveCallRecord[] = [];
    if (read.kind !== 'missing') {
      const parsed = read.kind === 'json' ? liveCallsFileSchema.safeParse(read.value) : undefined;
      if (parsed?.success) leftovers = parsed.data.calls;
      else this.log.warn('live calls file unreadable; kept aside', { keptAs: await setAsideCorruptFile(this.livePath, this.now()) });
    }
    for (const record of leftovers) {
      if (record.gatewayUrl !== this.gatewayUrl) {
        this.log.warn('a call left live by a previous run belongs to another gateway; it cannot be ended from here', { callId: record.callId });
        continue;
      }
      this.log.info('ending a call left live by a previous run', { callId: record.callId, action: record.action });
      this.ending.set(record.callId, record.action);
      if (this.claims) void this.track(undefined, this.endLeftoverInTeam(record));
      // One more try only: the gateway itself ends calls that carry no media for 20-30 s (protocol.md).
      else void this.endOnGateway(record.callId, record.action, undefined, { lastTry: true });
    }
    this.persistLive();
    this.schedulePrune();
  }

  /**
   * A call left live by a previous run, in a team: it may be a colleague's by now. A call that was
   * ringing here is rejected only if nobody else may still answer it (the relay's decline verdict);
   * a call in progress is terminated only if it is this agent's (claiming it again as its owner
   * succeeds; a colleague's claim answers 409). When the relay cannot say, the gateway is left to
   * end the call by itself rather than risk ending a colleague's.
   */
  private async endLeftoverInTeam(record: LiveCallRecord): Promise<void> {
    const claims = this.claims!;
    const { callId, action } = record;
    const mine =
      action === 'reject'
        ? await this.lastToDecline(callId)
        : await claims.claim(callId).then(
            (v) => (v.ok ? true : v.error.code === 'answered_elsewhere' ? false : undefined),
            () => undefined,
          );
    if (mine !== true) {
      this.log.info(mine === false ? 'a call left live by a previous run is a colleague\'s now; left alone' : 'the relay could not say whose a call left live by a previous run is; left to the gateway', {
        callId,
        action,
      });
      this.ending.delete(callId);
      this.persistLive();
      return;
    }
    await this.endOnGateway(callId, action, undefined, { lastTry: true });
  }

  /** For numbers typed without a country code from now on. */
  setDefaultCountry(country: string | undefined): void {
    this.defaultCountry = country;
  }

  onCallChanged(listener: CallChangedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** All calls this run knows, live and recently ended, oldest first. */
  calls(): CallState[] {
    return Object.values(this.book.calls).sort((a, b) => a.createdAt - b.createdAt);
  }

  call(localId: string): CallState | undefined {
    return this.book.calls[localId];
  }

  applyRelayEvent(envelope: RelayEnvelope): void {
    if (this.stopped) return;
    const ev = this.toCallEvent(envelope);
    if (ev) this.dispatch(ev);
    if (envelope.event.type === 'call.claimed') this.onClaimedElsewhere(envelope.event.callId, envelope.event.agentId);
  }

  /** Whether a call keeps the agent busy (placing, answering or on a call): presence is "on_call" then. */
  hasBusyCall(): boolean {
    return this.busyCall() !== undefined;
  }

  /** Opens a dialing call; the renderer then makes the offer and calls sendOffer. */
  async startCall(to: string): Promise<Result<{ localId: string; to: string }>> {
    if (this.stopped) return this.stoppedError();
    const number = normalisePhoneNumber(to, this.defaultCountry);
    if (!number.ok) return number;
    if (this.busyCall()) return err('invalid_state', 'Another call is in progress: hang up before dialing a new number');
    const localId = this.newLocalId();
    const name = this.nameFor?.(number.value);
    this.dispatch({ type: 'local.dial', at: this.now(), localId, peer: { number: number.value, ...(name !== undefined && name !== '' ? { name } : {}) } });
    return ok({ localId, to: number.value });
  }

  /** POSTs initiate with the complete local offer. Never retried: a retry would ring the customer twice. */
  async sendOffer(localId: string, sdp: string): Promise<Result<{ callId: string }>> {
    const call = this.book.calls[localId];
    if (!call) return notFound(localId);
    if (call.phase !== 'dialing') return err('invalid_state', `The call is ${call.phase}: an offer can only be sent while dialing`);
    if (this.inflight.has(localId)) return err('invalid_state', 'The offer for this call has already been sent');
    const to = call.peer.number;
    if (to === undefined) return err('internal', 'The dialing call has no number');
    const result = await this.track(localId, this.gateway.initiate(to, sdp));
    const at = this.now();
    if (!result.ok) {
      this.dispatch({ type: 'local.initiate_failed', at, localId, error: localErrorFrom(result.error) });
      return result;
    }
    const { callId } = result.value;
    this.dispatch({ type: 'local.initiate_ok', at, localId, callId });
    const after = this.book.calls[localId];
    if (after?.phase === 'ended' && after.callId === undefined) {
      // Hung up while the initiate was on its way: the customer's phone rings now, so end it there too.
      const { [callId]: _late, ...pending } = this.book.pending;
      this.book = { ...this.book, pending, tombstones: { ...this.book.tombstones, [callId]: at } };
      this.ending.set(callId, 'terminate');
      this.persistLive();
      await this.endOnGateway(callId, 'terminate');
      return err('invalid_state', 'The call was hung up before the gateway placed it; it has been ended');
    }
    // The relay sends a claimed call's later events to its owner only (relay/README.md "Routing").
    if (this.claims) void this.track(undefined, this.claimOutgoing(callId));
    return ok({ callId });
  }

  /**
   * The agent pressed Answer. The claim goes out at once; this resolves when it is decided: ok when
   * the call is this agent's (or the relay could not say: a customer must not wait on it),
   * answered_elsewhere when a colleague's claim won. The renderer's acceptCall may already be on the
   * way: it waits for the same claim, and the renderer adds the customer's candidates only once the
   * accept is through, so a losing agent never sends the customer a packet.
   */
  async answerCall(localId: string): Promise<Result<null>> {
    const answered = this.answer(localId);
    if (!answered.ok) return answered;
    const claim = this.claimsByCall.get(localId);
    const outcome = claim ? await claim.outcome : 'won';
    const call = this.book.calls[localId];
    // Lost, or announced as a colleague's by the relay while our own claim could not be made.
    if (outcome === 'lost' || (call?.phase === 'ended' && call.end.kind === 'answered_elsewhere')) return err('answered_elsewhere', ANSWERED_ELSEWHERE_MESSAGE);
    if (call?.phase === 'ended') return err('invalid_state', 'The call ended while it was being answered');
    return ok(null);
  }

  /**
   * POSTs accept with the complete local answer, once this agent's claim on the relay has won (or
   * could not be decided: a relay that is down must not keep a customer waiting). A lost claim ends
   * the call as answered elsewhere and sends nothing to the gateway: the call is a colleague's.
   * Never retried (protocol.md: one answer per call).
   */
  async acceptCall(localId: string, sdp: string): Promise<Result<null>> {
    const existing = this.book.calls[localId];
    if (existing?.phase === 'connecting' || existing?.phase === 'active') return err('invalid_state', 'The answer for this call has already been sent');
    if (existing?.phase === 'ended' && existing.end.kind === 'answered_elsewhere') return err('answered_elsewhere', ANSWERED_ELSEWHERE_MESSAGE);
    const answered = this.answer(localId);
    if (!answered.ok) return answered;
    if (this.inflight.has(localId) || this.awaitingClaim.has(localId)) return err('invalid_state', 'The answer for this call has already been sent');
    const claim = this.claimsByCall.get(localId);
    if (claim && claim.settled === undefined) {
      // The renderer sends its answer with the click, while the claim is still out.
      this.awaitingClaim.add(localId);
      try {
        await claim.outcome;
      } finally {
        this.awaitingClaim.delete(localId);
      }
    }
    // From here to the request, one synchronous step, so that a hang-up cannot slip in between.
    const call = this.book.calls[localId];
    if (call?.phase === 'ended' && call.end.kind === 'answered_elsewhere') return err('answered_elsewhere', ANSWERED_ELSEWHERE_MESSAGE);
    if (call?.phase !== 'answering') return err('invalid_state', 'The call is no longer being answered');
    if (this.inflight.has(localId)) return err('invalid_state', 'The answer for this call has already been sent');
    const callId = call.callId;
    const result = await this.track(localId, this.gateway.accept(callId, sdp));
    const at = this.now();
    if (result.ok) {
      this.dispatch({ type: 'local.accept_ok', at, localId });
      return result;
    }
    const before = this.book.calls[localId];
    if (before && isLive(before)) {
      // A refusal means the gateway still has the call ringing: reject it. After a timeout or a
      // network error the accept may have landed: terminate covers both.
      const action: EndingAction = result.error.code === 'timeout' || result.error.code === 'gateway_unreachable' ? 'terminate' : 'reject';
      this.ending.set(callId, action);
      this.dispatch({ type: 'local.accept_failed', at, localId, error: localErrorFrom(result.error) });
      await this.endOnGateway(callId, action);
    }
    return result;
  }

  async declineCall(localId: string): Promise<Result<null>> {
    const call = this.book.calls[localId];
    if (!call) return notFound(localId);
    if (call.phase !== 'ringing') return err('invalid_state', `The call is ${call.phase}: only a ringing call can be declined`);
    const { callId } = call;
    this.dispatch({ type: 'local.decline', at: this.now(), localId });
    // In a team the call rings on for colleagues: it stops here at once, and the gateway hears
    // "reject" only when the relay says nobody else may still answer it.
    if (this.claims && ((await this.lastToDecline(callId)) !== true || this.stopped)) return ok(null);
    this.ending.set(callId, 'reject');
    this.persistLive();
    await this.endOnGateway(callId, 'reject', localId);
    return ok(null);
  }

  /**
   * Tells the relay this agent declines the call: true when nobody else may still answer it (the
   * call is to be rejected), false when a colleague may or did, undefined when the relay cannot say.
   * Rejecting blind could take the call from a colleague about to answer it; unanswered, it ends at
   * the gateway's own timeout.
   */
  private async lastToDecline(callId: string): Promise<boolean | undefined> {
    const verdict = await this.claims!.decline(callId).catch((e: unknown) => err('internal', errorText(e)));
    if (!verdict.ok) {
      this.log.warn('the relay could not be asked about a decline; the call is left to ring for colleagues', { callId, code: verdict.error.code, reason: verdict.error.message });
      return undefined;
    }
    const { othersRinging, answeredBy } = verdict.value;
    if (othersRinging > 0 || answeredBy !== undefined) {
      this.log.info('declined here; the call rings on for colleagues', { callId, othersRinging, answeredBy });
      return false;
    }
    return true;
  }

  /** Ends any live call; an ended one is left as it is (hanging up twice is harmless). */
  async hangUp(localId: string): Promise<Result<null>> {
    const call = this.book.calls[localId];
    if (!call) return notFound(localId);
    if (call.phase === 'ended') return ok(null);
    const callId = call.callId;
    const undecided = this.undecidedClaim(call);
    if (undecided && callId !== undefined) {
      this.dispatch({ type: 'local.hangup', at: this.now(), localId });
      await this.endUnlessClaimLost(undecided, callId, localId);
      return ok(null);
    }
    // A ringing call was never accepted: it is rejected, not terminated.
    const action: EndingAction = call.phase === 'ringing' ? 'reject' : 'terminate';
    if (callId !== undefined) this.ending.set(callId, action);
    // Without a call id the call is still dialing; sendOffer ends it on the gateway once the id comes.
    this.dispatch({ type: 'local.hangup', at: this.now(), localId });
    if (callId !== undefined) await this.endOnGateway(callId, action, localId);
    return ok(null);
  }

  async reportMedia(report: { localId: string; state: 'connected' } | { localId: string; state: 'failed'; reason: string }): Promise<Result<null>> {
    const { localId } = report;
    const call = this.book.calls[localId];
    if (!call) return notFound(localId);
    if (call.phase === 'ended') return ok(null); // media news about a call already over
    if (report.state === 'connected') {
      if (call.phase === 'active') return ok(null);
      const changed = this.dispatch({ type: 'local.media_connected', at: this.now(), localId });
      return changed.length > 0 ? ok(null) : err('invalid_state', `The call is ${call.phase}: media cannot have connected yet`);
    }
    const error: LocalError = { code: 'media_failed', message: `Media failed: ${report.reason}` };
    if (call.phase !== 'answering' && call.phase !== 'connecting' && call.phase !== 'active') {
      // Media broke before the call was answered (e.g. no microphone while dialing): end it all the same.
      this.log.warn('media failed before the call was answered; hanging up', { localId, phase: call.phase, reason: report.reason });
      return this.hangUp(localId);
    }
    const callId = call.callId;
    if (callId === undefined) return err('internal', 'An answered call has no call id');
    const undecided = this.undecidedClaim(call);
    if (undecided) {
      this.dispatch({ type: 'local.media_failed', at: this.now(), localId, error });
      await this.endUnlessClaimLost(undecided, callId, localId);
      return ok(null);
    }
    this.ending.set(callId, 'terminate');
    this.dispatch({ type: 'local.media_failed', at: this.now(), localId, error });
    await this.endOnGateway(callId, 'terminate', localId);
    return ok(null);
  }

  /**
   * Ends every live call on the gateway (app quit, account switch), waiting at most
   * shutdownTimeoutMs. Calls whose terminate did not get through stay in live-calls.json, so the
   * next start tries again.
   */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.pruneTimer !== undefined) this.timers.clearTimeout(this.pruneTimer);
    for (const call of liveCalls(this.book)) void this.hangUp(call.localId);
    let bound: ReturnType<typeof setTimeout> | undefined;
    // A wall-clock bound on network work, not a call timer: the injected timers do not apply.
    const limit = new Promise<'timeout'>((resolve) => (bound = setTimeout(() => resolve('timeout'), this.shutdownTimeoutMs)));
    const outcome = await Promise.race([this.settle().then(() => 'done' as const), limit]);
    clearTimeout(bound);
    if (outcome === 'timeout') this.log.warn('the gateway did not confirm every terminate before shutdown', { unconfirmed: this.ending.size });
    for (const { handle } of this.deadlines.values()) this.timers.clearTimeout(handle);
    this.deadlines.clear();
    this.listeners.clear();
    await this.liveWriter.flush();
  }

  /** Resolves when no gateway request is under way and live-calls.json is written. */
  async whenIdle(): Promise<void> {
    await this.settle();
    await this.liveWriter.flush();
  }

  private async settle(): Promise<void> {
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
  }

  private answer(localId: string): Result<null> {
    const call = this.book.calls[localId];
    if (!call) return notFound(localId);
    if (call.phase === 'answering') return ok(null);
    if (call.phase !== 'ringing') return err('invalid_state', `The call is ${call.phase}: only a ringing call can be answered`);
    if (this.busyCall()) return err('invalid_state', 'Another call is in progress: hang up before answering this one');
    this.dispatch({ type: 'local.answer', at: this.now(), localId });
    // At once: the accept waits for it.
    if (this.claims) this.startClaim(localId, call.callId);
    return ok(null);
  }

  private startClaim(localId: string, callId: string): void {
    const claims = this.claims;
    if (!claims || this.claimsByCall.has(localId)) return;
    const entry: { outcome: Promise<ClaimOutcome>; settled?: ClaimOutcome } = {
      outcome: claims
        .claim(callId)
        .catch((e: unknown) => err('internal', errorText(e)))
        .then((result): ClaimOutcome => {
          if (result.ok) return 'won';
          if (result.error.code === 'answered_elsewhere') return 'lost';
          this.log.warn('the claim could not be made; answering anyway', { localId, callId, code: result.error.code, reason: result.error.message });
          return 'unknown';
        })
        .then((outcome) => {
          entry.settled = outcome;
          // At once, not at acceptCall: the renderer learns it and releases the media.
          if (outcome === 'lost' && !this.stopped) this.dispatch({ type: 'local.claim_lost', at: this.now(), localId });
          return outcome;
        }),
    };
    this.claimsByCall.set(localId, entry);
    void this.track(undefined, entry.outcome);
  }

  /**
   * The claim of a call this agent is answering, while it has not come back or came back lost: the
   * call may be a colleague's, and ending it here must not end it on the gateway unless it is ours.
   */
  private undecidedClaim(call: CallState): { outcome: Promise<ClaimOutcome> } | undefined {
    if (call.phase !== 'answering') return undefined;
    const claim = this.claimsByCall.get(call.localId);
    return claim && (claim.settled === undefined || claim.settled === 'lost') ? claim : undefined;
  }

  /** Terminates a call this agent ended while answering, once its claim shows the call is not a colleague's. */
  private async endUnlessClaimLost(claim: { outcome: Promise<ClaimOutcome> }, callId: string, localId: string): Promise<void> {
    if ((await claim.outcome) === 'lost') {
      this.log.info('ended here only: another agent has the call', { localId, callId });
      return;
    }
    this.ending.set(callId, 'terminate');
    this.persistLive();
    await this.endOnGateway(callId, 'terminate', localId);
  }

  private async claimOutgoing(callId: string): Promise<void> {
    const result = await this.claims!.claim(callId).catch((e: unknown) => err('internal', errorText(e)));
    // Unclaimed, the call's events still reach this agent (they go to everyone): only worth a warning.
    if (!result.ok) this.log.warn('the outgoing call could not be claimed', { callId, code: result.error.code, reason: result.error.message });
  }

  /**
   * Another agent's call.claimed. The reducer ends a ringing call with it; a call this agent is
   * answering ends too when its own claim has not won and its accept has not gone out — so that a
   * claim lost to a relay that answered too late (or not at all) still sends no second accept.
   * The event's agent is compared with this agent's id; while that id is unknown the claim's own
   * answer decides.
   */
  private onClaimedElsewhere(callId: string, agentId: string): void {
    const self = this.claims?.agentId;
    if (self === undefined || agentId === self) return;
    const localId = this.book.byCallId[callId];
    const call = localId !== undefined ? this.book.calls[localId] : undefined;
    if (!call || call.phase !== 'answering' || this.inflight.has(call.localId)) return;
    if (this.claimsByCall.get(call.localId)?.settled === 'won') return;
    this.dispatch({ type: 'local.claim_lost', at: this.now(), localId: call.localId });
  }

  private stoppedError(): Result<never> {
    return err('not_available', 'Calls are shutting down');
  }

  /** A call that keeps the agent busy (placing, answering or on a call), if any. */
  private busyCall(): CallState | undefined {
    return Object.values(this.book.calls).find((c) => BUSY_PHASES.has(c.phase));
  }

  private track<T>(localId: string | undefined, op: Promise<T>): Promise<T> {
    this.work.add(op);
    if (localId !== undefined) this.inflight.set(localId, op);
    op.finally(() => {
      this.work.delete(op);
      if (localId !== undefined && this.inflight.get(localId) === op) this.inflight.delete(localId);
    }).catch(() => undefined); // whoever awaits `op` sees its failure
    return op;
  }

  /**
   * Sends terminate or reject for a call already marked in `ending`, after any accept or initiate
   * for it has returned (so the gateway sees them in order), then forgets it.
   */
  private endOnGateway(callId: string, action: EndingAction, localId?: string, options: { lastTry?: boolean } = {}): Promise<void> {
    const before = localId !== undefined ? this.inflight.get(localId) : undefined;
    const op = (async () => {
      if (before) await before.catch(() => undefined);
      const result = await (action === 'terminate' ? this.gateway.terminate(callId) : this.gateway.reject(callId)).catch((e: unknown) =>
        err('internal', errorText(e)),
      );
      const unreached = !result.ok && (result.error.code === 'timeout' || (result.error.code === 'gateway_unreachable' && result.error.httpStatus === undefined));
      if (unreached && !options.lastTry) {
        // The gateway may still think the call is live: it stays in live-calls.json for the next start.
        this.log.warn(`${action} did not reach the gateway`, { callId, code: result.error.code, reason: result.error.message });
      } else {
        // Done, refused by a gateway that answered (e.g. the call had already ended there), or given up.
        if (!result.ok) this.log.info(`${action} refused by the gateway`, { callId, gatewayCode: result.error.gatewayCode, reason: result.error.message });
        this.ending.delete(callId);
      }
      this.persistLive();
    })();
    this.track(undefined, op);
    return op;
  }

  private toCallEvent(envelope: RelayEnvelope): CallEvent | undefined {
    const e = envelope.event;
    const at = this.now();
    switch (e.type) {
      case 'call.incoming': {
        const peer: Peer = {};
        if (e.from !== undefined) peer.number = e.from;
        if (e.fromUserId !== undefined) peer.userId = e.fromUserId;
        if (e.name !== undefined) peer.name = e.name;
        return {
          type: 'remote.incoming',
          at,
          callId: e.callId,
          peer,
          offerSdp: e.sdp,
          timestamp: e.timestamp,
          ...(e.ctaPayload !== undefined ? { ctaPayload: e.ctaPayload } : {}),
        };
      }
      case 'call.answered':
        return { type: 'remote.answered', at, callId: e.callId, answerSdp: e.sdp, timestamp: e.timestamp };
      case 'call.status':
        return { type: 'remote.status', at, callId: e.callId, status: e.status, timestamp: e.timestamp };
      case 'call.terminated':
        return {
          type: 'remote.terminated',
          at,
          callId: e.callId,
          status: e.status,
          timestamp: e.timestamp,
          ...(e.durationSec !== undefined ? { durationSec: e.durationSec } : {}),
          ...(e.errors !== undefined ? { errors: e.errors } : {}),
        };
      case 'call.claimed':
        return { type: 'remote.claimed', at, callId: e.callId };
      case 'message.inbound':
      case 'message.status':
        return undefined; // messaging is not the coordinator's business
      default:
        return assertNever(e, 'relay event');
    }
  }

  /** Runs one event through the reducer and follows up on every call it changed. */
  private dispatch(ev: CallEvent): CallState[] {
    const { book, changed } = applyCallEvent(this.book, ev);
    this.book = book;
    for (const call of changed) {
      this.log.info('call changed', { localId: call.localId, callId: call.callId, phase: call.phase, event: ev.type });
      this.syncDeadline(call);
      if (call.phase === 'ended') {
        this.history.record(historyEntryFor(call));
        this.claimsByCall.delete(call.localId);
      }
      for (const listener of this.listeners) {
        try {
          listener(call);
        } catch (e) {
          this.log.error('a call listener failed', { error: e });
        }
      }
    }
    if (changed.length > 0) this.persistLive();
    return changed;
  }

  /** The moment a call in this phase gives up waiting, if it waits for anything. */
  private deadlineOf(call: CallState): number | undefined {
    switch (call.phase) {
      case 'ringing':
        return call.ringsUntil;
      case 'calling':
      case 'remote_ringing':
        return call.dialsUntil;
      case 'dialing':
        return call.createdAt + DIAL_TIMEOUT_MS;
      case 'answering':
      case 'connecting':
      case 'active':
      case 'ended':
        return undefined;
      default:
        return assertNever(call, 'call');
    }
  }

  private syncDeadline(call: CallState): void {
    const at = this.deadlineOf(call);
    const current = this.deadlines.get(call.localId);
    if (current?.at === at) return;
    if (current) this.timers.clearTimeout(current.handle);
    this.deadlines.delete(call.localId);
    if (at === undefined || this.stopped) return;
    const handle = this.timers.setTimeout(() => this.onDeadline(call.localId), Math.max(0, at - this.now()));
    this.deadlines.set(call.localId, { at, handle });
  }

  private onDeadline(localId: string): void {
    this.deadlines.delete(localId);
    const call = this.book.calls[localId];
    if (!call || this.stopped) return;
    const at = this.now();
    switch (call.phase) {
      case 'ringing':
        // Nobody answered: the call is missed, and the gateway is told so the customer stops waiting.
        this.ending.set(call.callId, 'reject');
        this.dispatch({ type: 'local.ring_timeout', at, localId });
        void this.endOnGateway(call.callId, 'reject', localId);
        return;
      case 'calling':
      case 'remote_ringing':
        this.ending.set(call.callId, 'terminate');
        this.dispatch({ type: 'local.dial_timeout', at, localId });
        void this.endOnGateway(call.callId, 'terminate', localId);
        return;
      case 'dialing':
        // An initiate under way has its own timeout in the gateway client.
        if (!this.inflight.has(localId)) this.dispatch({ type: 'local.initiate_failed', at, localId, error: NO_OFFER_ERROR });
        return;
      default:
        return;
    }
  }

  private schedulePrune(): void {
    if (this.stopped) return;
    this.pruneTimer = this.timers.setTimeout(() => {
      this.book = pruneBook(this.book, this.now());
      this.schedulePrune();
    }, this.pruneIntervalMs);
  }

  /** Writes the calls the gateway may still consider live, whenever that set changes. */
  private persistLive(): void {
    const records = new Map<string, LiveCallRecord>();
    for (const call of liveCalls(this.book)) {
      if (call.callId === undefined) continue;
      records.set(call.callId, { callId: call.callId, action: call.phase === 'ringing' ? 'reject' : 'terminate', gatewayUrl: this.gatewayUrl });
    }
    for (const [callId, action] of this.ending) records.set(callId, { callId, action, gatewayUrl: this.gatewayUrl });
    const calls = [...records.values()].sort((a, b) => a.callId.localeCompare(b.callId));
    const text = `${JSON.stringify({ version: 1, calls }, null, 2)}\n`;
    if (text === this.liveFileText) return;
    this.liveFileText = text;
    this.liveWriter.request();
  }
}

async function writeFileIfSet(path: string, text: string | undefined): Promise<void> {
  if (text !== undefined) await writeFileAtomic(path, text);
}
