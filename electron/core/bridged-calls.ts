// The app's side of bridged calls (bridge/REFERENCE.md "The agent's side"). In a bridged team the
// customer's media ends on the team's bridge: the window answers (or offers) a leg of its own toward
// the bridge, and main still calls the gateway, with the bridge's description instead of the
// window's. All of that happens here, around the gateway's call control and the relay's events, so
// that the call reducer and the window's media engine work as they do for a direct call:
// - a ring the relay marks `bridged` reaches the coordinator carrying this agent's leg offer,
// - accept hands the window's answer to the bridge and accepts with the bridge's answer,
// - initiate gets the bridge's offer for the window's, and the customer's answer event reaches the
//   coordinator carrying the bridge's answer to the window,
// - hold and resume tell the bridge, which plays the hold music to the customer,
// - a colleague's transfer or consult rings with a leg of its own, whose answer goes to the relay,
// - a call whose leg went (its window, the app, its network) rejoins with a new leg the relay offers,
// - hanging up a bridged call leaves it first: the gateway hears terminate only when this agent
//   was the last one with the customer, and never for a call a colleague has,
// - and the agent's transfer commands (shared/transfer.ts TRANSFER_PATHS) go to the relay.
import { z } from 'zod';
import { BRIDGE_AGENT_PATHS, dialReplySchema, legReplySchema, rejoinAnswerReplySchema, rejoinReplySchema, sdpReplySchema } from '../../shared/bridge';
import { isHeld, REJOIN_WINDOW_MS, TRANSFER_REFUSALS, transferLocalId, type CallState, type RestorableCall } from '../../shared/call-state';
import type { RingAnswerReply } from '../../shared/api';
import type { RelayEnvelope, TransferRingEvent } from '../../shared/events';
import type { Logger } from '../../shared/log';
import { errText, ok, type AppError, type Result } from '../../shared/result';
import { leaveReplySchema, teamReplySchema, TRANSFER_PATHS, transferReplySchema, type TeamMember, type TransferKind } from '../../shared/transfer';
import type { CallControl } from './gateway-client';
import { pause } from './pause';
import { answerRingLeg, legAnswered, type RingingLeg } from './ring-legs';

/** What bridged calls need from the relay; RelayClient is the real one. */
export interface BridgeRelay {
  me(): Promise<Result<{ agentId: string; bridged: boolean }>>;
  bridgeRequest<S extends z.ZodType>(what: string, path: string, body: unknown, schema: S): Promise<Result<z.infer<S>>>;
  transferRequest<S extends z.ZodType>(what: string, method: 'GET' | 'POST', path: string, body: unknown, schema: S): Promise<Result<z.infer<S>>>;
}

/** What the call coordinator asks of the team's transfers, consults and three-way calls; BridgedCallControl is the real one. */
export interface CallTransfers {
  /** "Transfer" or "Consult": `to` an agent id or "available" (shared/transfer.ts ANYONE_AVAILABLE). */
  transfer(callId: string, to: string, kind: TransferKind): Promise<Result<{ transferId: string }>>;
  cancelTransfer(callId: string, transferId: string): Promise<Result<null>>;
  completeTransfer(callId: string, transferId: string): Promise<Result<null>>;
  addToCall(callId: string, transferId: string): Promise<Result<null>>;
  /** A colleague's transfer or consult is not taken here (declined, rang out, let go). */
  declineTransfer(callId: string, transferId: string): Promise<Result<null>>;
  /** Every agent of the team with its presence, this agent marked `self`. */
  team(): Promise<Result<TeamMember[]>>;
}

/** What the call coordinator asks of the relay for a bridged call whose leg went (shared/calls/rejoin.ts); BridgedCallControl is the real one. */
export interface CallRejoins {
  /**
   * A new leg for this agent in `call` (rejoining since `call.rejoin.since`): the relay's offer, or
   * its refusal (403 not a member, 410 ended, 404 unknown, 503 its node gone). Asked again while the
   * relay cannot answer, until REJOIN_WINDOW_MS after `since` or until `signal` aborts.
   */
  rejoin(call: RestorableCall, signal?: AbortSignal): Promise<Result<{ legId: string; offer: string }>>;
  /** The window's answer to the offer of `legId`, asked once: 400 on its SDP, 403 not the leg offered last. */
  rejoinAnswer(callId: string, legId: string, sdp: string): Promise<Result<null>>;
}

/** This agent's leg of one bridged call: `legOffer` a replayed ring carries again; `ringAnswers` ring-legs.ts's. */
interface Leg extends RingingLeg {
  /** An outgoing call's: the bridge's answer to the window's offer, delivered when the customer answers. */
  windowAnswer?: string;
  /** The call (its local id) the leg is this agent's leg of, once known: another call of the same id is not its. */
  localId?: string;
  /**
   * A colleague's transfer or consult this agent was rung with, before the customer became this
   * agent's (ringing, consulting, a three-way call): the call is the colleague's, whatever happens here.
   */
  colleagues?: true;
  /** This agent's own consult or three-way call brought a colleague in (as the call last said): the customer is not this agent's alone. */
  withColleague?: true;
  /** The call's transfer as last seen (its id and state): a hold that ends as it moves is the relay's doing. */
  transferSeen?: string;
  /** Whether the bridge plays the hold music to the customer now (as last told). */
  held: boolean;
}

export interface BridgedCallOptions {
  /**
   * The waits before each new try of a hang-up's leave when the relay could not answer it (5xx, a
   * timeout, unreachable); then the relay is taken as unable to say. Default 300 ms, 1 s, 2 s.
   */
  leaveRetryMs?: readonly number[];
  /**
   * The waits before each new try of a rejoin when the relay could not answer it, the last one
   * repeated until the rejoin's window is over. Default 1 s, 2 s, 4 s, 8 s.
   */
  rejoinRetryMs?: readonly number[];
  /** The clock a rejoin's window is counted on. */
  now?: () => number;
}

const okReply = z.object({}).passthrough();
/** Ended calls whose leg is kept for their terminate, which runs after the end is announced: the newest this many. */
const ENDED_LEGS_KEPT = 256;
/** Transfer rings whose leg waits for the call reducer to open their call: the newest this many (the others were not opened). */
const RING_LEGS_KEPT = 64;
const LEAVE_RETRY_MS: readonly number[] = [300, 1_000, 2_000];
const REJOIN_RETRY_MS: readonly number[] = [1_000, 2_000, 4_000, 8_000];

/** The relay did not answer a request, or failed on it: asked again, it may. */
const relayCouldNotAnswer = (error: AppError): boolean =>
  error.code === 'timeout' || (error.code === 'gateway_unreachable' && (error.httpStatus === undefined || error.httpStatus >= 500));

/** A rejoin the relay could not answer: its 503 is no such failure but its word (the call's node is gone). */
const rejoinMayBeAskedAgain = (error: AppError): boolean => relayCouldNotAnswer(error) && error.httpStatus !== 503;

const transferSeenOf = (call: CallState): string | undefined => (call.transfer === undefined ? undefined : `${call.transfer.id}:${call.transfer.state}`);

export class BridgedCallControl implements CallControl, CallTransfers, CallRejoins {
  private readonly legs = new Map<string, Leg>();
  /** The legs of bridged calls that ended here: their terminate, if any, leaves the call first. */
  private readonly endedLegs = new Map<string, Leg>();
  /**
   * By transfer id, the legs of colleagues' transfer rings not yet rung here: a ring is this agent's
   * call (and its leg the call's) only once the call reducer opens it; one it ignores (stale, a
   * replay of a ring over) leaves nothing behind.
   */
  private readonly ringLegs = new Map<string, { callId: string; leg: Leg }>();
  /**
   * Calls of a bridged team that go direct here (their leg could not be had, or no bridge node was
   * live to place one): the window's own media talks with the gateway, so their hang-up is the
   * gateway's terminate alone. The newest ENDED_LEGS_KEPT.
   */
  private readonly directCalls = new Set<string>();
  private readonly leaveRetryMs: readonly number[];
  private readonly rejoinRetryMs: readonly number[];
  private readonly now: () => number;
  /** Whether the relay says the team's calls are bridged; undefined until it has said. */
  private bridged: boolean | undefined;
  /** Per call, the events still being prepared, so that a call's events reach the coordinator in order. */
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    private readonly gateway: CallControl,
    private readonly relay: BridgeRelay,
    private readonly log: Logger,
    options: BridgedCallOptions = {},
  ) {
    this.leaveRetryMs = options.leaveRetryMs ?? LEAVE_RETRY_MS;
    this.rejoinRetryMs = options.rejoinRetryMs ?? REJOIN_RETRY_MS;
    this.now = options.now ?? Date.now;
  }

  /** What GET /me said (the runtime asks it on connect). */
  setBridged(bridged: boolean): void {
    if (this.bridged !== bridged) this.log.info(bridged ? 'the team’s calls go through its bridge' : 'calls are direct');
    this.bridged = bridged;
  }

  isBridgedCall(callId: string | undefined): boolean {
    return callId !== undefined && this.legs.has(callId);
  }

  /**
   * Hands each relay event on in its call's order, a bridged ring with this agent's leg offer in
   * place of the service's, and a bridged call's answer with the bridge's answer to the window.
   */
  deliver(envelope: RelayEnvelope, next: (envelope: RelayEnvelope) => void): void {
    const event = envelope.event;
    if (!('callId' in event)) return next(envelope);
    const { callId } = event;
    const previous = this.queues.get(callId);
    if (previous === undefined && !(event.type === 'call.incoming' && event.bridged === true)) return next(this.translatedNow(envelope));
    const run = (previous ?? Promise.resolve())
      .then(async () => next(await this.translated(envelope)))
      .catch((error: unknown) => this.log.error('a bridged call’s event could not be delivered', { callId, error }));
    this.queues.set(callId, run);
    void run.finally(() => {
      if (this.queues.get(callId) === run) this.queues.delete(callId);
    });
  }

  private async translated(envelope: RelayEnvelope): Promise<RelayEnvelope> {
    const event = envelope.event;
    if (event.type !== 'call.incoming' || event.bridged !== true) return this.translatedNow(envelope);
    const known = this.legs.get(event.callId)?.legOffer;
    if (known !== undefined) return { ...envelope, event: { ...event, sdp: known } };
    const leg = await this.relay.bridgeRequest('bridge leg', BRIDGE_AGENT_PATHS.leg(event.callId), {}, legReplySchema);
    if (!leg.ok) {
      // The call still rings: answered with the window's own answer, it goes direct, so it is no
      // bridged call here (it cannot be transferred).
      this.log.warn('no leg on the bridge for a ringing call; it is answered direct if answered here', { callId: event.callId, reason: leg.error.message });
      this.goesDirect(event.callId);
      const { bridged: _direct, ...direct } = event;
      return { ...envelope, event: direct };
    }
    this.legs.set(event.callId, { legId: leg.value.legId, legOffer: leg.value.offer, held: false });
    return { ...envelope, event: { ...event, sdp: leg.value.offer } };
  }

  /** What needs no request: a transfer's ring keeps its leg aside; a bridged call's answer carries the bridge's answer to the window. */
  private translatedNow(envelope: RelayEnvelope): RelayEnvelope {
    if (envelope.event.type === 'call.transfer_ring') this.keepRingLeg(envelope.event);
    return this.withWindowAnswer(envelope);
  }

  /** A transfer's ring brings this agent's leg with it: kept aside until the call reducer opens the ring (callChanged). */
  private keepRingLeg(event: TransferRingEvent): void {
    const leg: Leg = { legId: event.legId, legOffer: event.sdp, transferId: event.transferId, localId: transferLocalId(event.transferId), colleagues: true, held: false };
    this.ringLegs.delete(event.transferId);
    this.ringLegs.set(event.transferId, { callId: event.callId, leg });
    for (const oldest of this.ringLegs.keys()) {
      if (this.ringLegs.size <= RING_LEGS_KEPT) break;
      this.ringLegs.delete(oldest);
    }
  }

  /**
   * A colleague's transfer rings here (the call reducer opened it): its leg is the call's from now
   * on, in place of an ended call's — the reducer never rings one over a call live with that id.
   */
  private takeRingLeg(call: CallState): void {
    const { transfer, callId } = call;
    if (call.phase !== 'ringing' || callId === undefined || transfer?.role !== 'to' || call.localId !== transferLocalId(transfer.id)) return;
    const ring = this.ringLegs.get(transfer.id);
    if (ring === undefined || ring.callId !== callId) return;
    this.ringLegs.delete(transfer.id);
    // The same ring told again while it rings: the leg it has is that one.
    if (this.legs.get(callId)?.transferId === transfer.id) return;
    this.legs.set(callId, ring.leg);
  }

  private withWindowAnswer(envelope: RelayEnvelope): RelayEnvelope {
    const event = envelope.event;
    if (event.type !== 'call.answered') return envelope;
    const answer = this.legs.get(event.callId)?.windowAnswer;
    return answer === undefined ? envelope : { ...envelope, event: { ...event, sdp: answer } };
  }

  /** Whether Answer's `sdp` answers a leg of this call the relay can take (ring-legs.ts): asked before the claim, so that a refusal leaves the call ringing. */
  answerFits(callId: string, sdp: string): Result<null> {
    const leg = this.legs.get(callId);
    const answered = leg === undefined || leg.transferId !== undefined ? ok('') : legAnswered(leg, sdp);
    return answered.ok ? ok(null) : answered;
  }

  /** A window's answer to a leg of a call that rings here, before the click (ring-legs.ts). */
  ringAnswer(callId: string, sdp: string, legId?: string): Promise<Result<RingAnswerReply>> {
    return answerRingLeg(this.relay, this.log, callId, this.legs.get(callId), sdp, legId);
  }

  async accept(callId: string, sdp: string, opaque?: string): Promise<Result<null>> {
    const leg = this.legs.get(callId);
    if (leg === undefined) return this.gateway.accept(callId, sdp, opaque);

    if (leg.transferId !== undefined) {
      // A colleague's transfer or consult: the gateway's call is accepted already; the first answer the relay takes wins.
      const answered = await this.relay.transferRequest('transfer answer', 'POST', TRANSFER_PATHS.answer(callId, leg.transferId), { legId: leg.legId, sdp }, okReply);
      return answered.ok ? ok(null) : answered;
    }
    const answered = legAnswered(leg, sdp);
    if (!answered.ok) return answered;
    const bridgeAnswer = await this.relay.bridgeRequest('bridge answer', BRIDGE_AGENT_PATHS.answer(callId), { legId: answered.value, sdp }, sdpReplySchema);
    if (!bridgeAnswer.ok) return bridgeAnswer;
    leg.legId = answered.value; // the call's leg from now on: the relay closes the others at the accept
    delete leg.ringAnswers;
    const accepted = await this.gateway.accept(callId, bridgeAnswer.value.sdp, opaque);
    if (!accepted.ok) return accepted;
    const connected = await this.relay.bridgeRequest('bridge connect', BRIDGE_AGENT_PATHS.accepted(callId), {}, okReply);
    if (!connected.ok) {
      // Accepted at the gateway, but the bridge will not carry the media: the customer would hear nothing.
      this.log.warn('the bridge did not connect an accepted call; ending it', { callId, reason: connected.error.message });
      await this.gateway.terminate(callId);
      return connected;
    }
    return ok(null);
  }

  async initiate(to: string, sdp: string, opaque?: string): Promise<Result<{ callId: string; bridged?: true }>> {
    if (!(await this.teamIsBridged())) return this.gateway.initiate(to, sdp, opaque);
    const dial = await this.relay.bridgeRequest('bridge dial', BRIDGE_AGENT_PATHS.dial, { sdp }, dialReplySchema);
    if (!dial.ok) {
      if (dial.error.httpStatus !== 503) return dial;
      this.log.warn('no bridge node is live: the call goes direct', { reason: dial.error.message });
      const direct = await this.gateway.initiate(to, sdp, opaque);
      if (direct.ok) this.goesDirect(direct.value.callId);
      return direct;
    }
    const placed = await this.gateway.initiate(to, dial.value.offer, opaque);
    if (!placed.ok) return placed;
    const { callId } = placed.value;
    // Known before the customer can answer: the answer's event finds the window's answer waiting.
    this.legs.set(callId, { legId: dial.value.legId, windowAnswer: dial.value.answer, held: false });
    const bound = await this.relay.bridgeRequest('bridge placed', BRIDGE_AGENT_PATHS.placed(dial.value.ref), { callId }, okReply);
    if (!bound.ok) {
      this.log.warn('the bridge did not take a placed call; ending it', { callId, reason: bound.error.message });
      this.legs.delete(callId);
      await this.gateway.terminate(callId);
      return bound;
    }
    return ok({ callId, bridged: true });
  }

  reject(callId: string): Promise<Result<null>> {
    return this.gateway.reject(callId);
  }

  /**
   * Hanging up a bridged call leaves it on the relay first: colleagues may still be with the
   * customer (a consult, a three-way call), and then the gateway hears nothing. The gateway
   * terminates it when this agent was the last, or when the relay does not know the call as bridged
   * (404) and no colleague can be in it. A 403 says this agent is no longer in it: a colleague has
   * the customer, and nothing is ended. A 410 says the relay ended it at the gateway itself. When the relay cannot answer even after a few tries, the gateway terminates it only if
   * no colleague can be with the customer: not a colleague's call this agent was asked into, nor
   * one this agent's own consult or three-way call brought a colleague into.
   *
   * With the team's calls bridged, a call of no leg here that did not go direct (one left live by a
   * previous run) is left the same way: it may be a colleague's by now.
   */
  async terminate(callId: string): Promise<Result<null>> {
    const leg = this.legs.get(callId) ?? this.endedLegs.get(callId);
    this.endedLegs.delete(callId);
    const direct = this.directCalls.delete(callId);
    if (leg === undefined && (this.bridged !== true || direct)) return this.gateway.terminate(callId);
    const left = await this.leave(callId);
    if (left.ok) {
      if (left.value.last) return this.gateway.terminate(callId);
      this.log.info('left a bridged call; colleagues stay with the customer', { callId });
      return ok(null);
    }
    const reason = left.error.message;
    if (left.error.httpStatus === 410) return ok(null);
    const withColleague = leg?.colleagues === true || leg?.withColleague === true;
    // A relay that restarted forgets its calls while their node still carries them: a colleague may be with the customer.
    if (left.error.httpStatus === 404 && !withColleague) {
      this.log.info('the relay does not bridge the call; it is ended at the gateway', { callId, known: leg !== undefined });
      return this.gateway.terminate(callId);
    }
    if (left.error.httpStatus === 404) return ok(null);
    if (left.error.httpStatus === 403) {
      this.log.info('this agent is no longer in the bridged call: a colleague has the customer, and the gateway hears nothing', { callId, reason });
      return ok(null);
    }
    if (withColleague) {
      this.log.warn('the relay was not told this agent left a call a colleague is in; the call is left to them', { callId, reason });
      return left;
    }
    this.log.warn('the relay could not say whether others stay in a bridged call; it is ended at the gateway', { callId, reason });
    return this.gateway.terminate(callId);
  }

  private goesDirect(callId: string): void {
    this.directCalls.add(callId);
    for (const oldest of this.directCalls) {
      if (this.directCalls.size <= ENDED_LEGS_KEPT) break;
      this.directCalls.delete(oldest);
    }
  }

  /** POST TRANSFER_PATHS.leave, asked again after each wait while the relay cannot answer it. */
  private async leave(callId: string): Promise<Result<{ last: boolean }>> {
    let left = await this.relay.transferRequest('bridge leave', 'POST', TRANSFER_PATHS.leave(callId), {}, leaveReplySchema);
    for (const wait of this.leaveRetryMs) {
      if (left.ok || !relayCouldNotAnswer(left.error)) return left;
      this.log.info('the relay could not answer a leave; asking again', { callId, inMs: wait, reason: left.error.message });
      await new Promise<void>((resolve) => setTimeout(resolve, wait));
      left = await this.relay.transferRequest('bridge leave', 'POST', TRANSFER_PATHS.leave(callId), {}, leaveReplySchema);
    }
    return left;
  }

  /**
   * POST BRIDGE_AGENT_PATHS.rejoin: the relay's new leg for this agent, asked again after each wait
   * while it cannot answer (unreachable, a timeout, a 5xx other than 503), until the rejoin's window
   * is over. The call's leg becomes the new one; a call that lost its leg with the app's restart has
   * it again, held as the call is, so that hold, transfers and the customer leg's quality work and
   * no hold request goes out for the hold the bridge has already.
   */
  async rejoin(call: RestorableCall, signal?: AbortSignal): Promise<Result<{ legId: string; offer: string }>> {
    const { callId } = call;
    const until = (call.rejoin?.since ?? this.now()) + REJOIN_WINDOW_MS;
    const aborted = (): boolean => signal?.aborted === true;
    const ask = () => this.relay.bridgeRequest('bridge rejoin', BRIDGE_AGENT_PATHS.rejoin(callId), {}, rejoinReplySchema);
    let asked = await ask();
    for (let tries = 0; !asked.ok && rejoinMayBeAskedAgain(asked.error) && !aborted(); tries++) {
      const wait = Math.min(this.rejoinRetryMs[Math.min(tries, this.rejoinRetryMs.length - 1)] ?? 0, until - this.now());
      if (wait <= 0) break;
      this.log.info('the relay could not answer a rejoin; asking again', { callId, inMs: wait, reason: asked.error.message });
      await pause(wait, signal);
      if (!aborted()) asked = await ask();
    }
    if (!asked.ok || aborted()) return asked;
    const { legId, offer } = asked.value;
    const leg = this.legs.get(callId);
    if (leg !== undefined && (leg.localId === undefined || leg.localId === call.localId)) {
      leg.legId = legId;
      delete leg.legOffer;
      delete leg.windowAnswer;
    } else {
      this.legs.set(callId, this.restoredLeg(call, legId));
    }
    this.log.info('the relay offered a new leg of a bridged call', { callId, legId });
    return ok({ legId, offer });
  }

  /** The leg of a call this app took up again after a restart: as the call says it was. */
  private restoredLeg(call: RestorableCall, legId: string): Leg {
    const leg: Leg = { legId, localId: call.localId, held: isHeld(call) };
    const { transfer } = call;
    if (transfer?.role === 'to' && transfer.state !== 'done') leg.colleagues = true;
    if (transfer?.role === 'from' && (transfer.state === 'consulting' || transfer.state === 'joined')) leg.withColleague = true;
    const seen = transferSeenOf(call);
    if (seen !== undefined) leg.transferSeen = seen;
    return leg;
  }

  /** POST BRIDGE_AGENT_PATHS.rejoinAnswer, once: a refused answer is the reducer's to follow up. */
  async rejoinAnswer(callId: string, legId: string, sdp: string): Promise<Result<null>> {
    const answered = await this.relay.bridgeRequest('bridge rejoin answer', BRIDGE_AGENT_PATHS.rejoinAnswer(callId), { legId, sdp }, rejoinAnswerReplySchema);
    if (answered.ok) this.log.info('the relay took the window’s answer to a rejoin', { callId, legId });
    return answered.ok ? ok(null) : answered;
  }

  /** POST TRANSFER_PATHS.start: the relay rings the colleague (or everyone available) and names the transfer. */
  async transfer(callId: string, to: string, kind: TransferKind): Promise<Result<{ transferId: string }>> {
    const started = await this.relay.transferRequest(kind, 'POST', TRANSFER_PATHS.start(callId), { to, kind }, transferReplySchema);
    if (started.ok) this.log.info('a transfer of a bridged call rings', { callId, transferId: started.value.transferId, kind });
    return started;
  }

  cancelTransfer(callId: string, transferId: string): Promise<Result<null>> {
    return this.transferStep('transfer cancel', TRANSFER_PATHS.cancel(callId, transferId));
  }

  completeTransfer(callId: string, transferId: string): Promise<Result<null>> {
    return this.transferStep('transfer complete', TRANSFER_PATHS.complete(callId, transferId));
  }

  addToCall(callId: string, transferId: string): Promise<Result<null>> {
    return this.transferStep('add to call', TRANSFER_PATHS.join(callId, transferId));
  }

  declineTransfer(callId: string, transferId: string): Promise<Result<null>> {
    return this.transferStep('transfer decline', TRANSFER_PATHS.decline(callId, transferId));
  }

  /** GET TRANSFER_PATHS.team, as the relay lists it (the window leaves out `self`). */
  async team(): Promise<Result<TeamMember[]>> {
    if (!(await this.teamIsBridged())) return errText('invalid_state', TRANSFER_REFUSALS.notBridged);
    const team = await this.relay.transferRequest('team', 'GET', TRANSFER_PATHS.team, undefined, teamReplySchema);
    return team.ok ? ok(team.value.agents) : team;
  }

  private async transferStep(what: string, path: string): Promise<Result<null>> {
    const done = await this.relay.transferRequest(what, 'POST', path, {}, okReply);
    return done.ok ? ok(null) : done;
  }

  /**
   * A call changed: a colleague's transfer rung here takes its leg; hold and resume reach the
   * bridge; an ended call's leg is kept for its terminate only, knowing whether a colleague is in the call.
   */
  callChanged(call: CallState): void {
    this.takeRingLeg(call);
    const { callId } = call;
    const leg = callId === undefined ? undefined : this.legs.get(callId);
    // A bridged call with no leg here yet (taken up again after a restart) says the team's calls are
    // bridged before GET /me can: its hang-up leaves it first, for colleagues may be in it.
    if (leg === undefined && call.bridged === true && call.phase !== 'ended' && this.bridged === undefined) this.setBridged(true);
    if (callId === undefined || leg === undefined) return;
    // Another call of the same id (the one this agent had before a colleague's transfer rang here) is not this leg's.
    if (leg.localId !== undefined && leg.localId !== call.localId) return;
    const own = call.transfer?.role === 'from' ? call.transfer : undefined;
    if (own !== undefined && (own.state === 'consulting' || own.state === 'joined')) leg.withColleague = true;
    else delete leg.withColleague;
    const transferSeen = transferSeenOf(call);
    const transferMoved = transferSeen !== leg.transferSeen;
    if (transferSeen === undefined) delete leg.transferSeen;
    else leg.transferSeen = transferSeen;
    if (call.phase === 'ended') {
      this.legs.delete(callId);
      this.endedLegs.set(callId, leg);
      for (const oldest of this.endedLegs.keys()) {
        if (this.endedLegs.size <= ENDED_LEGS_KEPT) break;
        this.endedLegs.delete(oldest);
      }
      return;
    }
    leg.localId = call.localId;
    if (leg.transferId !== undefined && call.transfer?.role === 'to' && call.transfer.state === 'done') delete leg.colleagues;
    if (call.phase !== 'active' || isHeld(call) === leg.held) return;
    const held = isHeld(call);
    leg.held = held;
    // The relay itself takes the customer off hold as this agent's transfer moves on (a consult
    // answered, a three-way call, the colleague gone): the call follows it, with nothing to tell.
    if (!held && transferMoved && own !== undefined) return;
    void this.relay.bridgeRequest(held ? 'bridge hold' : 'bridge resume', BRIDGE_AGENT_PATHS.hold(callId), { held }, okReply).then((told) => {
      if (!told.ok) this.log.warn('the bridge was not told of a hold or resume', { callId, held, reason: told.error.message });
    });
  }

  private async teamIsBridged(): Promise<boolean> {
    if (this.bridged !== undefined) return this.bridged;
    const me = await this.relay.me();
    if (me.ok) this.setBridged(me.value.bridged);
    return this.bridged === true;
  }
}
