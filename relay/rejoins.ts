// A member of a bridged call whose leg went (its window reloaded, its app crashed, its network
// changed) takes a new leg in the old one's place (relay/REFERENCE.md "Rejoining"). The customer
// hears the hold music meanwhile, colleagues of a three-way call go on talking, and the relay counts
// the member's window (`rejoinWindowMs`, REJOIN_WINDOW_MS) from the moment its media went: the app's
// rejoin, or the node's word that the member's leg failed or closed, whichever comes first, until
// the node says the new leg connected (an answer alone is no return). A member not back in time is
// removed, or, the last one, the call is given up (bridged-calls.ts `giveUp`).
//
// Its requests run in the call's turn with the transfers' (`inTurn`): a rejoin, its answer, a
// transfer's step and the window's end each find the state the one before left.
import type { BridgeControl } from '../shared/bridge';
import type { Logger } from '../shared/log';
import type { Result } from '../shared/result';
import { BoundedSet } from './bounded-set';
import type { GatewayTerminator } from './gateway-terminator';
import { bridgeFailed, done, newId, nodeGoneRefusal, noCall, refuse, routesOf, type Away, type BridgedCall, type Outcome } from './bridged-call';

/** What the rejoins need of BridgedCalls: its calls, their nodes and turns, and what becomes of a member not back. */
export interface RejoinHost {
  call(callId: string): BridgedCall | undefined;
  control(call: BridgedCall): BridgeControl | undefined;
  /** A node's answer (one that never came back ends the node's calls). */
  asked<T>(nodeId: string, request: Promise<Result<T>>): Promise<Result<T>>;
  inTurn<T>(callId: string, work: () => Promise<T>): Promise<T>;
  /** A member not back while others remain leaves as a hang-up would (its leg closed, the one left told `with_customer`). Called in turn. */
  removeMember(call: BridgedCall, agentId: string, control: BridgeControl): Promise<void>;
  /** A transfer's ring under way stops counting. */
  stopTransfers(call: BridgedCall): void;
  /** The call was ended at the gateway: its node ends it and it is forgotten. */
  forget(call: BridgedCall): Promise<void>;
}

/** A member of a call did not come back within the rejoin window: it is told (`call.bridge_failed`, `agent_not_back`). */
export interface NotBack {
  callId: string;
  agentId: string;
  /** Others remain in the call: it goes on without this agent. */
  goesOn: boolean;
  /** The rejoin window, in seconds. */
  awaySec: number;
}
/** Resolves once the agent's event is stored: the call is ended at the gateway only after that. */
export type NotBackListener = (notBack: NotBack) => Promise<void>;

export interface CallRejoinsOptions {
  logger: Logger;
  now: () => number;
  /** How long a member has, from the moment its media went, to answer a new leg. */
  windowMs: number;
  /** The relay's own terminate (`--gateway-url`, `--api-key`); without it a given-up call's customer is let go. */
  terminator?: GatewayTerminator;
}

/** A node reports an agent leg silent this long at most after its last packet (its media timeout, and some). */
const NODE_REPORTS_SILENCE_WITHIN_MS = 20_000;

/** Calls given up for a member not back are remembered this long a list: a late rejoin is told 410, not 404. */
const NOT_BACK_KEPT = 10_000;

export class CallRejoins {
  /** Calls ended because their last member was not back: a rejoin for one is answered 410. */
  private readonly ended = new BoundedSet(NOT_BACK_KEPT);
  private readonly listeners = new Set<NotBackListener>();
  private readonly log: Logger;

  constructor(
    private readonly host: RejoinHost,
    private readonly options: CallRejoinsOptions,
  ) {
    this.log = options.logger;
  }

  /** Every member not back in time, from now on: the relay stores the agent's event before the call is ended. */
  onNotBack(listener: NotBackListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The rejoin window in whole seconds, as the agent is told it. */
  get awaySec(): number {
    return Math.round(this.options.windowMs / 1000);
  }

  /**
   * POST BRIDGE_AGENT_PATHS.rejoin: a new leg for a member of the call, the old one's place kept
   * until it is answered. Asked again, an unanswered earlier offer closes and a new one is made.
   */
  rejoin(callId: string, agentId: string): Promise<Outcome<{ legId: string; offer: string }>> {
    return this.host.inTurn(callId, async () => {
      const call = this.host.call(callId);
      if (call === undefined) return this.ended.has(callId) ? this.endedRefusal(callId) : noCall(callId);
      if (call.released) return this.endedRefusal(callId);
      if (!call.members.has(agentId)) return refuse({ status: 403, code: 'forbidden', message: 'only a member of the call rejoins it' });
      const control = this.host.control(call);
      if (control === undefined) return nodeGoneRefusal(callId);
      const away = this.markAway(call, agentId, this.options.now());
      const earlier = away.leg;
      delete away.leg;
      // An answered leg that never connected is the member's leg in the call still: the next answer's swap closes it.
      if (earlier?.kind === 'offered') await this.closeLeg(call, control, earlier.legId);
      const legId = newId('leg-');
      const offer = await this.host.asked(call.nodeId, control.offerAgentLeg(callId, legId));
      if (!offer.ok) {
        await this.route(call, control);
        return bridgeFailed(offer.error);
      }
      if (this.host.call(callId) !== call || call.away.get(agentId) !== away) {
        await this.closeLeg(call, control, legId);
        return call.released || this.ended.has(callId) ? this.endedRefusal(callId) : refuse({ status: 409, code: 'invalid_state', message: `call ${callId} moved on while its leg was made` });
      }
      away.leg = { kind: 'offered', legId };
      await this.route(call, control);
      this.log.info('a member rejoins a bridged call', { callId, agentId, legId, awayMs: this.options.now() - away.since });
      return done({ legId, offer: offer.value.offer });
    });
  }

  /**
   * POST BRIDGE_AGENT_PATHS.rejoinAnswer: the window answered the leg last offered; it takes the old
   * leg's place, routed as the call's state says (held, consult…) so that the member hears and is
   * heard as soon as it connects. The member is back only once the node says it connected
   * (`legConnected`): an answered leg that never connects does not stop its window.
   */
  answer(callId: string, agentId: string, legId: string, sdp: string): Promise<Outcome<null>> {
    return this.host.inTurn(callId, async () => {
      const call = this.host.call(callId);
      if (call === undefined) return this.ended.has(callId) ? this.endedRefusal(callId) : noCall(callId);
      if (call.released) return this.endedRefusal(callId);
      const away = call.away.get(agentId);
      if (away?.leg?.kind !== 'offered' || away.leg.legId !== legId || !call.members.has(agentId)) return refuse({ status: 403, code: 'forbidden', message: 'legId: not the leg last offered to this agent for rejoining' });
      const control = this.host.control(call);
      if (control === undefined) return nodeGoneRefusal(callId);
      const applied = await this.host.asked(call.nodeId, control.applyAgentAnswer(callId, legId, sdp));
      // An answer the node refuses leaves the offer answerable: the window may answer again.
      if (!applied.ok) return bridgeFailed(applied.error, 'sdp');
      if (this.host.call(callId) !== call || call.away.get(agentId) !== away) return refuse({ status: 409, code: 'invalid_state', message: `call ${callId} moved on while the answer was applied` });
      const oldLeg = call.members.get(agentId);
      call.members.set(agentId, legId);
      away.leg = { kind: 'answered', legId };
      await this.route(call, control);
      if (oldLeg !== undefined && oldLeg !== legId) await this.closeLeg(call, control, oldLeg);
      this.log.info('a member answered its new leg of a bridged call', { callId, agentId, legId, awayMs: this.options.now() - away.since });
      return done(null);
    });
  }

  /** A node says a leg connected: a rejoining member's answered leg brings it back, its window stopped. */
  legConnected(callId: string, nodeId: string, legId: string): Promise<void> {
    return this.host.inTurn(callId, () => {
      const call = this.host.call(callId);
      if (call === undefined || call.nodeId !== nodeId || call.released) return Promise.resolve();
      const back = [...call.away].find(([, away]) => away.leg?.kind === 'answered' && away.leg.legId === legId)?.[0];
      if (back !== undefined) this.back(call, back);
      return Promise.resolve();
    });
  }

  /**
   * A node says a leg failed or closed. A member's current leg starts its window from the leg's last
   * packet (`lastPacketAt`), an earlier start kept; any other leg (one the relay closed, a ring's) is
   * nothing to do with rejoining.
   */
  legLost(callId: string, nodeId: string, legId: string, lastPacketAt: number | undefined): Promise<void> {
    return this.host.inTurn(callId, async () => {
      const call = this.host.call(callId);
      if (call === undefined || call.nodeId !== nodeId || call.released) return;
      const member = [...call.members].find(([, leg]) => leg === legId)?.[0];
      if (member === undefined) return;
      const now = this.options.now();
      const wasAway = call.away.has(member);
      // The node's clock, not this one: a node that runs behind must not cut an agent's window short.
      // A node tells of a silent leg after its media timeout (15 s), so an earlier last packet than
      // that says the clocks disagree, not that the agent went earlier.
      const since = Math.max(Math.min(lastPacketAt ?? now, now), now - NODE_REPORTS_SILENCE_WITHIN_MS);
      this.markAway(call, member, since);
      if (wasAway) return;
      const control = this.host.control(call);
      if (control !== undefined) await this.route(call, control);
      this.log.info('a member’s leg of a bridged call went: its rejoin window counts', { callId, agentId: member, legId });
    });
  }

  /** The call is over here: no window counts for it any more. */
  stopCounting(call: BridgedCall): void {
    for (const away of call.away.values()) clearTimeout(away.timer);
    call.away.clear();
  }

  /** The member is away from `since` on (an earlier start kept); its window's end is set from it. */
  private markAway(call: BridgedCall, agentId: string, since: number): Away {
    const existing = call.away.get(agentId);
    if (existing !== undefined && existing.since <= since) return existing;
    if (existing !== undefined) clearTimeout(existing.timer);
    const away: Away = { ...existing, since, timer: this.windowTimer(call.callId, agentId, since) };
    call.away.set(agentId, away);
    return away;
  }

  private windowTimer(callId: string, agentId: string, since: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.host.inTurn(callId, () => this.expire(callId, agentId, timer)).catch((error: unknown) => this.log.error('a member’s rejoin window could not end', { callId, agentId, error }));
    }, Math.max(0, since + this.options.windowMs - this.options.now()));
    timer.unref();
    return timer;
  }

  /** The member answered a new leg and the node says it connected: its window stops (in turn). */
  private back(call: BridgedCall, agentId: string): void {
    const away = call.away.get(agentId);
    if (away === undefined) return;
    clearTimeout(away.timer);
    call.away.delete(agentId);
    this.log.info('a member is back in a bridged call', { callId: call.callId, agentId, legId: call.members.get(agentId), awayMs: this.options.now() - away.since });
  }

  /** Whether the node has the leg connected now (its word that it connected may have been lost on the way). */
  private async isConnected(call: BridgedCall, control: BridgeControl, legId: string): Promise<boolean> {
    const report = await control.report(call.callId);
    return report.ok && report.value.agents[legId]?.state === 'connected';
  }

  /** The member's window is over and it is not back (in turn). */
  private async expire(callId: string, agentId: string, timer: NodeJS.Timeout): Promise<void> {
    const call = this.host.call(callId);
    const away = call?.away.get(agentId);
    if (call === undefined || away?.timer !== timer || !call.members.has(agentId)) return;
    const control = this.host.control(call);
    if (away.leg?.kind === 'answered' && control !== undefined) {
      const connected = await this.isConnected(call, control, away.leg.legId);
      if (this.host.call(callId) !== call || call.away.get(agentId) !== away) return;
      if (connected) return this.back(call, agentId);
    }
    call.away.delete(agentId);
    if (away.leg?.kind === 'offered' && control !== undefined) await this.closeLeg(call, control, away.leg.legId);
    const others = [...call.members.keys()].filter((member) => member !== agentId);
    this.log.warn('a member did not come back to a bridged call in time', { callId, agentId, others: others.length, awaySec: this.awaySec });
    if (others.length > 0 && control !== undefined) {
      await this.host.removeMember(call, agentId, control);
      await this.tell({ callId, agentId, goesOn: true, awaySec: this.awaySec });
      return;
    }
    await this.giveUp(call, agentId, control);
  }

  /**
   * The last member is not back (in the call's turn). Its agent's event is stored first, so that it
   * precedes the end the gateway's webhook brings; then the relay ends the call at the gateway
   * itself, or, with no gateway or the gateway not ending it (unreached, or a refusal: a wrong key,
   * the call over there already), its customer is let go and the service ends the call for lack of
   * media. The record stays until the service's end comes (`released`); a rejoin is 410 either way.
   */
  private async giveUp(call: BridgedCall, agentId: string, control: BridgeControl | undefined): Promise<void> {
    const { callId } = call;
    this.ended.add(callId);
    await this.tell({ callId, agentId, goesOn: false, awaySec: this.awaySec });
    const { terminator } = this.options;
    if (terminator?.configured === true && (await terminator.terminate(callId)).ok) {
      await this.host.forget(call);
      return;
    }
    call.released = true;
    this.host.stopTransfers(call);
    this.stopCounting(call);
    const released = control === undefined ? undefined : await this.host.asked(call.nodeId, control.releaseCustomer(callId));
    if (released !== undefined && !released.ok) this.log.warn('the bridge could not let a customer go', { callId, reason: released.error.message });
    else this.log.info('a customer no agent came back to is let go: the service ends the call', { callId });
  }

  private async tell(notBack: NotBack): Promise<void> {
    await Promise.all(
      [...this.listeners].map(async (listener) => {
        try {
          await listener(notBack);
        } catch (error) {
          this.log.error('a not-back listener failed', { callId: notBack.callId, error });
        }
      }),
    );
  }

  private endedRefusal<T>(callId: string): Outcome<T> {
    return refuse({ status: 410, code: 'call_ended', message: `call ${callId} was ended: its agent did not come back in time` });
  }

  private async route(call: BridgedCall, control: BridgeControl): Promise<void> {
    const routed = await this.host.asked(call.nodeId, control.setRoutes(call.callId, routesOf(call)));
    if (!routed.ok) this.log.warn('the bridge refused a call’s routes', { callId: call.callId, reason: routed.error.message });
  }

  private async closeLeg(call: BridgedCall, control: BridgeControl, legId: string): Promise<void> {
    const closed = await control.closeAgentLeg(call.callId, legId);
    if (!closed.ok) this.log.debug('a leg did not close', { callId: call.callId, legId, reason: closed.error.message });
  }
}
