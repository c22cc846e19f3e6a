// Transfers, consults and three-way calls of bridged calls (bridge/REFERENCE.md "Transfers",
// shared/transfer.ts). The customer's media ends on the node, so handing a call on is the relay's
// decision and the node's routes: the gateway keeps the one call it accepted and hears nothing of it.
// A colleague is rung with a leg of its own; whoever is told what (`call.transfer_update`) is said
// here, one event per agent, through the listeners the relay service stores them with.
//
// The requests of one call run one after another (`inTurn`): an answer, a decline, the ring's end
// and a cancel that arrive together each find the state the one before left, so the first answer
// to reach this instance wins and nothing is told twice.
import type { BridgeControl } from '../shared/bridge';
import type { TransferRingEvent, TransferUpdateEvent } from '../shared/events';
import type { Logger } from '../shared/log';
import type { Result } from '../shared/result';
import { ANYONE_AVAILABLE, type Colleague, type TransferMiss, type TransferRequest, type TransferUpdateState } from '../shared/transfer';
import { bridgeFailed, done, endedAtGatewayRefusal, joinCall, leaveCall, newId, nodeGoneRefusal, noCall, refuse, routesOf, type BridgedCall, type Outcome, type Transfer } from './bridged-call';
import { KeyedTaskQueue } from './keyed-task-queue';
import { isFree } from './routing';
import { colleagueName, teamPresenceOf, type TeamAgent } from './team';

export type TransferEvent = TransferRingEvent | TransferUpdateEvent;
/** Told once per event and agent: the relay service stores it for that agent alone. */
export type TransferListener = (event: TransferEvent, agentId: string) => void;

/** What the transfers need of BridgedCalls: its calls, their nodes, and the team. */
export interface TransferHost {
  call(callId: string): BridgedCall | undefined;
  control(call: BridgedCall): BridgeControl | undefined;
  /** A node's answer (one that never came back ends the node's calls). */
  asked<T>(nodeId: string, request: Promise<Result<T>>): Promise<Result<T>>;
  team(): readonly TeamAgent[];
  /** Whether the relay itself ended this call at the gateway (with its own key): nobody owes a terminate. */
  endedAtGateway(callId: string): Promise<boolean>;
}

export interface CallTransfersOptions {
  logger: Logger;
  now: () => number;
  /** How long a transfer rings (TRANSFER_RING_MS). */
  ringMs: number;
}

interface Held {
  call: BridgedCall;
  transfer: Transfer;
  control: BridgeControl;
}

export class CallTransfers {
  private readonly listeners = new Set<TransferListener>();
  private readonly turns = new KeyedTaskQueue();
  private readonly log: Logger;

  constructor(
    private readonly host: TransferHost,
    private readonly options: CallTransfersOptions,
  ) {
    this.log = options.logger;
  }

  onEvent(listener: TransferListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Runs `work` once every earlier request of the call has finished. */
  inTurn<T>(callId: string, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      void this.turns.run(callId, () => work().then(resolve, reject));
    });
  }

  /** The only agent in the call rings a named colleague, or every available one; the customer hears the music meanwhile. */
  start(callId: string, agentId: string, request: TransferRequest): Promise<Outcome<{ transferId: string }>> {
    return this.inTurn(callId, async () => {
      const call = this.host.call(callId);
      if (call === undefined) return noCall(callId);
      if (!call.members.has(agentId)) return refuse({ status: 403, code: 'forbidden', message: 'only an agent in the call transfers it' });
      if (call.transfer !== undefined) return refuse({ status: 409, code: 'invalid_state', message: 'a transfer of this call is under way: one at a time' });
      if (call.members.size > 1) return refuse({ status: 409, code: 'invalid_state', message: 'the call is a three-way call: it is not transferred (leave it, and the colleague stays with the customer)' });
      const targets = this.targetsOf(call, agentId, request.to);
      if (!targets.ok) return targets;
      const control = this.host.control(call);
      if (control === undefined) return nodeGoneRefusal(callId);

      const offered = await Promise.all(
        targets.value.map(async (target) => {
          const legId = newId('leg-');
          const offer = await this.host.asked(call.nodeId, control.offerAgentLeg(callId, legId));
          if (!offer.ok) this.log.warn('the bridge could not offer a colleague a leg: it is not rung', { callId, agentId: target.agentId, reason: offer.error.message });
          return { agentId: target.agentId, legId, offer };
        }),
      );
      const rung = offered.flatMap((o) => (o.offer.ok ? [{ agentId: o.agentId, legId: o.legId, sdp: o.offer.value.offer }] : []));
      if (this.host.call(callId) !== call) {
        await this.closeLegs(call, control, rung.map((r) => r.legId));
        return refuse({ status: 409, code: 'invalid_state', message: `call ${callId} ended` });
      }
      if (rung.length === 0) {
        const reason = offered.map((o) => (o.offer.ok ? '' : o.offer.error.message)).find((m) => m !== '') ?? 'no leg';
        return refuse({ status: 502, code: 'bridge_failed', message: `the bridge could not ring a colleague: ${reason}` });
      }

      const transferId = newId('xfer-');
      const transfer: Transfer = {
        transferId,
        kind: request.kind,
        by: agentId,
        named: request.to !== ANYONE_AVAILABLE,
        rung: new Map(rung.map((r) => [r.agentId, r.legId])),
        declined: new Set(),
        phase: { kind: 'ringing', timer: this.ringTimer(callId, transferId) },
      };
      call.transfer = transfer;
      call.transfers.set(transferId, transfer);
      for (const r of rung) call.everyone.add(r.agentId);
      await this.route(call, control);
      const by = this.colleague(agentId);
      for (const r of rung) {
        this.tell({ type: 'call.transfer_ring', callId, transferId, kind: transfer.kind, by, ...call.caller, legId: r.legId, sdp: r.sdp, timestamp: this.options.now() }, r.agentId);
      }
      this.update(call, transfer, agentId, 'ringing', this.namedColleague(transfer));
      this.log.info('a transfer rings', { callId, transferId, kind: transfer.kind, by: agentId, rung: rung.length });
      return done({ transferId });
    });
  }

  /** A rung colleague's window answers its leg: the first to reach this instance takes the transfer, the others stop ringing. */
  answer(callId: string, transferId: string, agentId: string, legId: string, sdp: string): Promise<Outcome<null>> {
    return this.inTurn(callId, async () => {
      const found = this.rungFor(callId, transferId, agentId);
      if (!found.ok) return found;
      const { call, transfer } = found.value;
      if (transfer.rung.get(agentId) !== legId) return refuse({ status: 403, code: 'forbidden', message: 'legId: not this agent’s leg of the transfer' });
      // The same answer again (a retried request): it was taken.
      if (transfer.answeredBy === agentId) return done(null);
      const over = this.noLongerRinging(transfer, agentId);
      if (over !== undefined) return over;
      const control = this.host.control(call);
      if (control === undefined) return nodeGoneRefusal(callId);
      const applied = await this.host.asked(call.nodeId, control.applyAgentAnswer(callId, legId, sdp));
      // A description the node refuses leaves the transfer ringing: the window may answer again.
      if (!applied.ok) return bridgeFailed(applied.error, 'sdp');
      if (this.host.call(callId) !== call) return refuse({ status: 409, code: 'invalid_state', message: `call ${callId} ended` });

      const others = this.stillRinging(transfer).filter((other) => other !== agentId);
      transfer.answeredBy = agentId;
      const { by } = transfer;
      if (transfer.kind === 'transfer') {
        const starterLeg = call.members.get(by);
        for (const member of [...call.members.keys()]) leaveCall(call, member);
        joinCall(call, agentId, legId);
        call.held = false;
        this.finish(call, transfer);
        await this.route(call, control);
        await this.closeLegs(call, control, [...others.map((other) => transfer.rung.get(other)), starterLeg]);
        for (const other of others) this.update(call, transfer, other, 'answered_elsewhere', agentId);
        this.update(call, transfer, by, 'transferred', agentId);
      } else {
        this.stopRinging(transfer);
        transfer.phase = { kind: 'consulting' };
        joinCall(call, agentId, legId);
        // The two agents talk: a call held before the consult is not held any more (the app too
        // takes it off hold here), so that a cancel brings the agent back talking to the customer.
        call.held = false;
        await this.route(call, control);
        await this.closeLegs(call, control, others.map((other) => transfer.rung.get(other)));
        for (const other of others) this.update(call, transfer, other, 'answered_elsewhere', agentId);
        this.update(call, transfer, by, 'consulting', agentId);
      }
      this.log.info('a transfer was answered', { callId, transferId, kind: transfer.kind, by, agentId });
      return done(null);
    });
  }

  /** A rung colleague declines: its leg closes; once every colleague rung declined, the agent who started it is back with the customer. */
  decline(callId: string, transferId: string, agentId: string): Promise<Outcome<null>> {
    return this.inTurn(callId, async () => {
      const found = this.rungFor(callId, transferId, agentId);
      if (!found.ok) return found;
      const { call, transfer } = found.value;
      if (transfer.declined.has(agentId)) return done(null);
      if (transfer.answeredBy === agentId) return refuse({ status: 409, code: 'invalid_state', message: 'this agent answered the transfer: it leaves the call instead' });
      const over = this.noLongerRinging(transfer, agentId);
      if (over !== undefined) return over;
      const control = this.host.control(call);
      if (control === undefined) return nodeGoneRefusal(callId);
      transfer.declined.add(agentId);
      await this.closeLegs(call, control, [transfer.rung.get(agentId)]);
      if (this.stillRinging(transfer).length > 0) return done(null);
      this.finish(call, transfer);
      await this.route(call, control);
      this.update(call, transfer, transfer.by, 'not_answered', this.namedColleague(transfer), 'declined');
      this.log.info('every colleague declined a transfer', { callId, transferId });
      return done(null);
    });
  }

  /** The agent who started it takes it back, ringing or consulting: back with the customer. */
  cancel(callId: string, transferId: string, agentId: string): Promise<Outcome<null>> {
    return this.inTurn(callId, async () => {
      const found = this.startedBy(callId, transferId, agentId, 'cancels');
      if (!found.ok) return found;
      const { call, transfer, control } = found.value;
      let colleague = this.namedColleague(transfer);
      if (transfer.phase.kind === 'ringing') {
        await this.cancelRinging(call, transfer, control);
      } else {
        colleague = transfer.answeredBy;
        const leg = colleague === undefined ? undefined : call.members.get(colleague);
        if (colleague !== undefined) leaveCall(call, colleague);
        this.finish(call, transfer);
        await this.route(call, control);
        await this.closeLegs(call, control, [leg]);
        if (colleague !== undefined) this.update(call, transfer, colleague, 'cancelled', agentId);
      }
      this.update(call, transfer, agentId, 'cancelled', colleague);
      this.log.info('a transfer was cancelled', { callId, transferId });
      return done(null);
    });
  }

  /** A consult becomes a transfer: the customer with the colleague, the agent who started it leaves. */
  complete(callId: string, transferId: string, agentId: string): Promise<Outcome<null>> {
    return this.inTurn(callId, async () => {
      const found = this.startedBy(callId, transferId, agentId, 'completes');
      if (!found.ok) return found;
      const { call, transfer, control } = found.value;
      const colleague = transfer.answeredBy;
      if (transfer.phase.kind !== 'consulting' || colleague === undefined) return refuse({ status: 409, code: 'invalid_state', message: 'only a consult the colleague answered is completed' });
      const leg = call.members.get(agentId);
      leaveCall(call, agentId);
      call.held = false;
      this.finish(call, transfer);
      await this.route(call, control);
      await this.closeLegs(call, control, [leg]);
      this.update(call, transfer, agentId, 'transferred', colleague);
      this.update(call, transfer, colleague, 'with_customer', agentId);
      this.log.info('a consult was completed', { callId, transferId, by: agentId, to: colleague });
      return done(null);
    });
  }

  /** A consult becomes a three-way call. */
  join(callId: string, transferId: string, agentId: string): Promise<Outcome<null>> {
    return this.inTurn(callId, async () => {
      const found = this.startedBy(callId, transferId, agentId, 'joins');
      if (!found.ok) return found;
      const { call, transfer, control } = found.value;
      const colleague = transfer.answeredBy;
      if (transfer.phase.kind !== 'consulting' || colleague === undefined) return refuse({ status: 409, code: 'invalid_state', message: 'only a consult the colleague answered becomes a three-way call' });
      call.held = false;
      this.finish(call, transfer);
      await this.route(call, control);
      this.update(call, transfer, agentId, 'joined', colleague);
      this.update(call, transfer, colleague, 'joined', agentId);
      this.log.info('a consult became a three-way call', { callId, transferId });
      return done(null);
    });
  }

  /**
   * An agent hangs up. With others in the call it leaves alone: its leg closes and the gateway hears
   * nothing (`last: false`). The only agent keeps its leg until the app ends the call at the gateway
   * (`last: true`); a transfer it had ringing stops ringing.
   */
  leave(callId: string, agentId: string): Promise<Outcome<{ last: boolean }>> {
    return this.inTurn(callId, async () => {
      const call = this.host.call(callId);
      if (call === undefined) return (await this.host.endedAtGateway(callId)) ? endedAtGatewayRefusal(callId) : noCall(callId);
      const leg = call.members.get(agentId);
      // An agent the call moved on from (it handed the customer over, or its consult was cancelled)
      // may hang up before it hears so: a colleague has the customer, so it is not the last.
      if (leg === undefined && call.everyone.has(agentId) && call.members.size > 0) return done({ last: false });
      if (leg === undefined) return refuse({ status: 403, code: 'forbidden', message: 'only an agent in the call leaves it' });
      const control = this.host.control(call);
      const { transfer } = call;
      if (call.members.size === 1) {
        if (transfer?.phase.kind === 'ringing' && transfer.by === agentId && control !== undefined) await this.cancelRinging(call, transfer, control, { route: false });
        this.log.info('the last agent leaves a bridged call', { callId, agentId });
        return done({ last: true });
      }
      if (control === undefined) return nodeGoneRefusal(callId);
      await this.removeMember(call, agentId, control);
      this.log.info('an agent left a bridged call', { callId, agentId, remaining: call.members.size });
      return done({ last: false });
    });
  }

  /**
   * A member goes while others stay (a hang-up, or a member not back in time): its leg closes, a
   * transfer under way ends, and the one left is told it is with the customer. Called in the call's turn.
   */
  async removeMember(call: BridgedCall, agentId: string, control: BridgeControl): Promise<void> {
    const leg = call.members.get(agentId);
    const { transfer } = call;
    leaveCall(call, agentId);
    call.held = false;
    // The transfer a consult or a three-way call came from names what the one left is told.
    let about = [...call.transfers.values()].at(-1);
    if (transfer !== undefined) {
      if (transfer.phase.kind === 'ringing') await this.cancelRinging(call, transfer, control, { route: false });
      else this.finish(call, transfer);
      about = transfer;
    }
    await this.route(call, control);
    await this.closeLegs(call, control, [leg]);
    const [remaining] = call.members.keys();
    if (call.members.size === 1 && remaining !== undefined && about !== undefined) this.update(call, about, remaining, 'with_customer', agentId);
  }

  /** The call is over: a ring under way stops counting. */
  ended(call: BridgedCall): void {
    if (call.transfer !== undefined) this.stopRinging(call.transfer);
  }

  private ringTimer(callId: string, transferId: string): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.inTurn(callId, () => this.ringOut(callId, transferId)).catch((error: unknown) => this.log.error('a transfer’s ring could not end', { callId, transferId, error }));
    }, this.options.ringMs);
    timer.unref();
    return timer;
  }

  /** Nobody answered within the ring: the colleagues stop ringing, the agent who started it is back with the customer. */
  private async ringOut(callId: string, transferId: string): Promise<void> {
    const call = this.host.call(callId);
    const transfer = call?.transfers.get(transferId);
    if (call === undefined || transfer === undefined || transfer.phase.kind !== 'ringing') return;
    const control = this.host.control(call);
    if (control === undefined) return;
    await this.cancelRinging(call, transfer, control);
    this.update(call, transfer, transfer.by, 'not_answered', this.namedColleague(transfer), 'no_answer');
    this.log.info('a transfer was not answered in time', { callId, transferId });
  }

  /** Every colleague still rung stops ringing (its leg closed, told `cancelled`); the routes follow unless the caller sets them. */
  private async cancelRinging(call: BridgedCall, transfer: Transfer, control: BridgeControl, { route = true } = {}): Promise<void> {
    const ringing = this.stillRinging(transfer);
    this.finish(call, transfer);
    if (route) await this.route(call, control);
    await this.closeLegs(call, control, ringing.map((agentId) => transfer.rung.get(agentId)));
    for (const agentId of ringing) this.update(call, transfer, agentId, 'cancelled', transfer.by);
  }

  private targetsOf(call: BridgedCall, by: string, to: string): Outcome<TeamAgent[]> {
    const team = this.host.team();
    if (to === ANYONE_AVAILABLE) {
      const free = team.filter((agent) => !call.members.has(agent.agentId) && isFree(agent));
      return free.length > 0 ? done(free) : refuse({ status: 409, code: 'invalid_state', message: 'no colleague is available' });
    }
    const named = team.find((agent) => agent.agentId === to);
    if (named === undefined) return refuse({ status: 404, code: 'not_found', message: `to: no agent ${to} in the team`, field: 'to' });
    if (to === by) return refuse({ status: 400, code: 'invalid_input', message: 'to: an agent does not transfer a call to itself', field: 'to' });
    if (call.members.has(to)) return refuse({ status: 400, code: 'invalid_input', message: `to: ${colleagueName(named.name)} is in the call already`, field: 'to' });
    if (teamPresenceOf(named) === 'offline') return refuse({ status: 409, code: 'invalid_state', message: `${colleagueName(named.name)} is offline` });
    return done([named]);
  }

  /** The call and a transfer that rang this agent. */
  private rungFor(callId: string, transferId: string, agentId: string): Outcome<{ call: BridgedCall; transfer: Transfer }> {
    const call = this.host.call(callId);
    if (call === undefined) return noCall(callId);
    const transfer = call.transfers.get(transferId);
    if (transfer === undefined || !transfer.rung.has(agentId)) return refuse({ status: 404, code: 'not_found', message: `no transfer ${transferId} rings this agent in call ${callId}` });
    return done({ call, transfer });
  }

  /** Why a rung colleague's answer or decline comes too late, if it does. */
  private noLongerRinging(transfer: Transfer, agentId: string): Outcome<never> | undefined {
    const { answeredBy } = transfer;
    if (answeredBy !== undefined && answeredBy !== agentId) return refuse({ status: 409, code: 'already_claimed', message: `${this.colleague(answeredBy).name} answered the transfer first` });
    if (transfer.phase.kind !== 'ringing') return refuse({ status: 409, code: 'invalid_state', message: 'the transfer is over: it was cancelled or not answered in time' });
    if (transfer.declined.has(agentId)) return refuse({ status: 409, code: 'invalid_state', message: 'this agent declined the transfer' });
    return undefined;
  }

  /** The call, its transfer under way, and its node, for the agent who started it. */
  private startedBy(callId: string, transferId: string, agentId: string, verb: string): Outcome<Held> {
    const call = this.host.call(callId);
    if (call === undefined) return noCall(callId);
    const transfer = call.transfers.get(transferId);
    if (transfer === undefined) return refuse({ status: 404, code: 'not_found', message: `no transfer ${transferId} in call ${callId}` });
    if (transfer.by !== agentId) return refuse({ status: 403, code: 'forbidden', message: `only the agent who started the transfer ${verb} it` });
    if (transfer.phase.kind === 'over') return refuse({ status: 409, code: 'invalid_state', message: 'the transfer is over' });
    const control = this.host.control(call);
    if (control === undefined) return nodeGoneRefusal(callId);
    return done({ call, transfer, control });
  }

  /** The colleagues the transfer still rings: neither declined nor the one who answered. */
  private stillRinging(transfer: Transfer): string[] {
    if (transfer.phase.kind !== 'ringing') return [];
    return [...transfer.rung.keys()].filter((agentId) => !transfer.declined.has(agentId) && agentId !== transfer.answeredBy);
  }

  private stopRinging(transfer: Transfer): void {
    if (transfer.phase.kind === 'ringing') clearTimeout(transfer.phase.timer);
  }

  /** The transfer is over; the call has none under way. */
  private finish(call: BridgedCall, transfer: Transfer): void {
    this.stopRinging(transfer);
    transfer.phase = { kind: 'over' };
    if (call.transfer === transfer) delete call.transfer;
  }

  /** The routes follow the call's state. A node that refuses them is logged: the state is the relay's, the next routes replace them whole. */
  private async route(call: BridgedCall, control: BridgeControl): Promise<void> {
    const routed = await this.host.asked(call.nodeId, control.setRoutes(call.callId, routesOf(call)));
    if (!routed.ok) this.log.warn('the bridge refused a call’s routes', { callId: call.callId, reason: routed.error.message });
  }

  private async closeLegs(call: BridgedCall, control: BridgeControl, legs: readonly (string | undefined)[]): Promise<void> {
    for (const legId of [...legs, ...call.strayLegs.splice(0)]) {
      if (legId === undefined) continue;
      const closed = await control.closeAgentLeg(call.callId, legId);
      if (!closed.ok) this.log.debug('a leg did not close', { callId: call.callId, legId, reason: closed.error.message });
    }
  }

  /** The colleague a transfer's words name for the agent who started it: the one named, none for "Anyone available". */
  private namedColleague(transfer: Transfer): string | undefined {
    return transfer.named ? [...transfer.rung.keys()][0] : undefined;
  }

  private colleague(agentId: string): Colleague {
    const agent = this.host.team().find((a) => a.agentId === agentId);
    return { agentId, name: colleagueName(agent?.name ?? agentId) };
  }

  private update(call: BridgedCall, transfer: Transfer, agentId: string, state: TransferUpdateState, colleague?: string, reason?: TransferMiss): void {
    this.tell(
      {
        type: 'call.transfer_update',
        callId: call.callId,
        transferId: transfer.transferId,
        kind: transfer.kind,
        agentId,
        state,
        ...(colleague !== undefined ? { colleague: this.colleague(colleague) } : {}),
        ...(reason !== undefined ? { reason } : {}),
        timestamp: this.options.now(),
      },
      agentId,
    );
  }

  private tell(event: TransferEvent, agentId: string): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event, agentId);
      } catch (error) {
        this.log.error('a transfer listener failed', { callId: event.callId, error });
      }
    }
  }
}
