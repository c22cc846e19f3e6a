// Supervisors joined to bridged calls (relay/REFERENCE.md "Supervisors", shared/supervision.ts). A
// supervisor joins with a leg of its own, offered by the call's node as a rejoin's is, and listens,
// whispers or barges; a change of mode is a change of the node's routes alone (bridged-call.ts
// `routesOf`), never a new leg. Who is told what (`call.monitor`) is decided here, one event per
// audience, through the listeners the relay service stores them with:
// - the supervisor always hears of its own join, each change and its end (`left`, `call_ended` when
//   the call ended under it);
// - the agents in the call hear of a whisper and a barge, and of a listen only when the team tells
//   them (`--tell-agents-when-monitored`); a switch to a listen they are not told of is a `left` to
//   them, so that nothing they see says "whispering" once it is over.
//
// Its requests run in the call's turn with the transfers' and the rejoins' (`inTurn`).
import type { BridgeControl, LegReport } from '../shared/bridge';
import type { RelayEvent } from '../shared/events';
import type { Logger } from '../shared/log';
import type { Result } from '../shared/result';
import type { MonitorMode } from '../shared/supervision';
import type { NotBack } from './rejoins';
import type { TransferEvent } from './transfers';
import { bridgeFailed, done, newId, nodeGoneRefusal, noCall, refuse, routesOf, type BridgedCall, type Monitor, type Outcome } from './bridged-call';

export type MonitorEvent = Extract<RelayEvent, { type: 'call.monitor' }>;
/** Told once per event with the agents it is for: the relay service stores it for them alone. */
export type MonitorListener = (event: MonitorEvent, agentIds: string[]) => void;

/** What an agent of the call sees of a supervisor: its mode, or nothing (not joined, or a listen the team does not tell). */
type Seen = MonitorMode | undefined;

/** What the monitors need of BridgedCalls: its calls, their nodes and turns. */
export interface MonitorHost {
  call(callId: string): BridgedCall | undefined;
  calls(): Iterable<BridgedCall>;
  control(call: BridgedCall): BridgeControl | undefined;
  /** A node's answer (one that never came back ends the node's calls). */
  asked<T>(nodeId: string, request: Promise<Result<T>>): Promise<Result<T>>;
  inTurn<T>(callId: string, work: () => Promise<T>): Promise<T>;
}

export interface CallMonitorsOptions {
  logger: Logger;
  now: () => number;
  /** The agents in a call are told of a listen too (`--tell-agents-when-monitored`). */
  tellAgentsOfListen: boolean;
  /** How long an offered leg waits for the window's answer before it closes. */
  answerMs: number;
}

/** The supervisor asking: its id, and its name as the agents are told it. */
export interface Supervisor {
  id: string;
  name: string;
}

/** A bridged call as a supervisor's live list shows it (live-calls.ts), from the record of the instance that holds it. */
export interface BridgedCallView {
  direction: BridgedCall['direction'];
  /** The agents in the call, away ones too (their calls go on while they rejoin). */
  agents: string[];
  held: boolean;
  /** A transfer rings, or a consult's agents talk. */
  transferring: boolean;
  /** The supervisors whose legs are connected, and how. */
  monitors: { supervisorId: string; name: string; mode: MonitorMode }[];
}

/** An offered leg not answered within this closes: the window that asked went away. */
export const MONITOR_ANSWER_MS = 30_000;

export class CallMonitors {
  private readonly listeners = new Set<MonitorListener>();
  private readonly log: Logger;
  /** The last event's time: each event of a call has a time of its own, so that none is taken for a repeat. */
  private lastAt = 0;

  constructor(
    private readonly host: MonitorHost,
    private readonly options: CallMonitorsOptions,
  ) {
    this.log = options.logger;
  }

  onEvent(listener: MonitorListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The supervisor joins the call in `mode`: the node offers a leg of its own, which the window
   * answers (`answer`). Asked again while joined, the same leg's offer again, in `mode`. A supervisor
   * joined to another call leaves it first: one call at a time.
   */
  async join(callId: string, supervisor: Supervisor, mode: MonitorMode): Promise<Outcome<{ legId: string; offer: string; mode: MonitorMode }>> {
    for (const other of [...this.host.calls()]) {
      if (other.callId !== callId && other.monitors.has(supervisor.id)) await this.leave(other.callId, supervisor.id);
    }
    return this.host.inTurn(callId, async () => {
      const call = this.host.call(callId);
      if (call === undefined) return noCall(callId);
      if (call.released) return refuse({ status: 409, code: 'invalid_state', message: `call ${callId} is ending` });
      if (call.members.size === 0) return refuse({ status: 409, code: 'invalid_state', message: `call ${callId} is not answered yet` });
      if (call.members.has(supervisor.id) || ringsFor(call, supervisor.id)) return refuse({ status: 409, code: 'invalid_state', message: 'a supervisor in the call takes part in it: it does not join it too' });
      const control = this.host.control(call);
      if (control === undefined) return nodeGoneRefusal(callId);
      const joined = call.monitors.get(supervisor.id);
      if (joined !== undefined) {
        await this.change(call, control, supervisor.id, joined, mode);
        return done({ legId: joined.legId, offer: joined.leg.offer, mode });
      }
      const legId = newId('leg-');
      const offer = await this.host.asked(call.nodeId, control.offerAgentLeg(callId, legId));
      if (!offer.ok) return bridgeFailed(offer.error);
      if (this.host.call(callId) !== call) {
        await this.closeLeg(call, control, legId);
        return refuse({ status: 409, code: 'invalid_state', message: `call ${callId} ended while its leg was made` });
      }
      call.monitors.set(supervisor.id, { legId, mode, name: supervisor.name, leg: { kind: 'offered', offer: offer.value.offer, timer: this.answerTimer(callId, supervisor.id, legId) } });
      this.log.info('a supervisor joins a bridged call', { callId, supervisorId: supervisor.id, mode, legId });
      return done({ legId, offer: offer.value.offer, mode });
    });
  }

  /**
   * The window answered the supervisor's leg: it connects, hears the call and is heard as its mode
   * says, and the supervisor (and the agents, as they are told) hears that it is in.
   */
  answer(callId: string, supervisorId: string, legId: string, sdp: string): Promise<Outcome<null>> {
    return this.host.inTurn(callId, async () => {
      const call = this.host.call(callId);
      if (call === undefined) return noCall(callId);
      const monitor = call.monitors.get(supervisorId);
      if (monitor === undefined) return notJoined(callId);
      if (monitor.legId !== legId) return refuse({ status: 403, code: 'forbidden', message: 'legId: not the leg this supervisor was offered in this call' });
      // The same answer again (a retried request): it connected.
      if (monitor.leg.kind === 'connected') return done(null);
      const control = this.host.control(call);
      if (control === undefined) return nodeGoneRefusal(callId);
      const applied = await this.host.asked(call.nodeId, control.applyAgentAnswer(callId, legId, sdp));
      // An answer the node refuses leaves the offer answerable: the window may answer again.
      if (!applied.ok) return bridgeFailed(applied.error, 'sdp');
      if (this.host.call(callId) !== call || call.monitors.get(supervisorId) !== monitor) return refuse({ status: 409, code: 'invalid_state', message: `call ${callId} moved on while the answer was applied` });
      clearTimeout(monitor.leg.timer);
      monitor.leg = { kind: 'connected', offer: monitor.leg.offer };
      await this.route(call, control);
      this.tell(call, supervisorId, monitor.name, undefined, monitor.mode);
      this.log.info('a supervisor is in a bridged call', { callId, supervisorId, mode: monitor.mode });
      return done(null);
    });
  }

  /** "Listen", "Whisper", "Barge" once joined: the routes change, the leg stays. */
  switchMode(callId: string, supervisorId: string, mode: MonitorMode): Promise<Outcome<{ mode: MonitorMode }>> {
    return this.host.inTurn(callId, async () => {
      const call = this.host.call(callId);
      if (call === undefined) return noCall(callId);
      const monitor = call.monitors.get(supervisorId);
      if (monitor === undefined) return notJoined(callId);
      const control = this.host.control(call);
      if (control === undefined) return nodeGoneRefusal(callId);
      await this.change(call, control, supervisorId, monitor, mode);
      return done({ mode });
    });
  }

  /** "Leave": the supervisor's leg closes, the call goes on. Leaving a call it is not in (any more) is no error. */
  leave(callId: string, supervisorId: string): Promise<Outcome<{ ok: true }>> {
    return this.host.inTurn(callId, async () => {
      const call = this.host.call(callId);
      const monitor = call?.monitors.get(supervisorId);
      if (call !== undefined && monitor !== undefined) await this.remove(call, supervisorId, monitor, 'left', { closeLeg: true });
      return done({ ok: true as const });
    });
  }

  /**
   * The call is over (the service ended it, the bridge lost it, or the relay gave it up): each
   * supervisor is told `call_ended`. Their legs close with the call's.
   */
  ended(call: BridgedCall): void {
    for (const [supervisorId, monitor] of [...call.monitors]) {
      if (monitor.leg.kind === 'offered') clearTimeout(monitor.leg.timer);
      call.monitors.delete(supervisorId);
      this.emit({ ...this.eventOf(call.callId, supervisorId, monitor.name, 'left'), reason: 'call_ended' }, [supervisorId]);
    }
  }

  /**
   * The call's last member was not back in time: the relay gives the call up (ends it at the gateway,
   * or lets its customer go), so for its supervisors it ended.
   */
  givenUp(notBack: NotBack): void {
    if (notBack.goesOn) return;
    const call = this.host.call(notBack.callId);
    if (call !== undefined) this.ended(call);
  }

  /** A node says a leg failed or closed: a supervisor's leg takes its supervisor out of the call. */
  legLost(callId: string, nodeId: string, legId: string): Promise<void> {
    return this.host.inTurn(callId, async () => {
      const call = this.host.call(callId);
      if (call === undefined || call.nodeId !== nodeId) return;
      const found = [...call.monitors].find(([, monitor]) => monitor.legId === legId);
      if (found === undefined) return;
      const [supervisorId, monitor] = found;
      this.log.info('a supervisor’s leg of a bridged call went: it is out of the call', { callId, supervisorId, legId });
      // A customer let go closes every leg: for the supervisor, the call ended.
      await this.remove(call, supervisorId, monitor, call.released === true ? 'call_ended' : 'left', { closeLeg: false });
    });
  }

  /**
   * What a transfer came to: a colleague who answered it is in the call now and is told of the
   * whispers and barges under way (and the listens the team tells of); a supervisor who answered it
   * takes part in the call, so it is no longer joined to it.
   */
  transferred(event: TransferEvent): void {
    if (event.type !== 'call.transfer_update' || (event.state !== 'consulting' && event.state !== 'transferred')) return;
    const colleague = event.colleague?.agentId;
    if (colleague === undefined) return;
    const { callId } = event;
    this.host
      .inTurn(callId, async () => {
        const call = this.host.call(callId);
        if (call === undefined || !call.members.has(colleague)) return;
        const monitor = call.monitors.get(colleague);
        const control = this.host.control(call);
        if (monitor !== undefined && control !== undefined) await this.remove(call, colleague, monitor, 'left', { closeLeg: true });
        for (const [supervisorId, other] of call.monitors) {
          const seen = this.seen(other);
          if (seen !== undefined) this.emit(this.eventOf(callId, supervisorId, other.name, seen), [colleague]);
        }
      })
      .catch((error: unknown) => this.log.error('the supervisors of a transferred call could not be told', { callId, error }));
  }

  /** The call as a supervisor's live list shows it, if this instance holds it. */
  view(callId: string): BridgedCallView | undefined {
    const call = this.host.call(callId);
    if (call === undefined) return undefined;
    return {
      direction: call.direction,
      agents: [...call.members.keys()],
      held: call.held,
      transferring: call.transfer !== undefined && call.transfer.phase.kind !== 'over',
      monitors: [...call.monitors].flatMap(([supervisorId, monitor]) => (monitor.leg.kind === 'connected' ? [{ supervisorId, name: monitor.name, mode: monitor.mode }] : [])),
    };
  }

  /** The customer's leg as the call's node measures it now, for the live list's quality. */
  async customerReport(callId: string): Promise<LegReport | undefined> {
    const call = this.host.call(callId);
    const control = call === undefined ? undefined : this.host.control(call);
    if (call === undefined || control === undefined) return undefined;
    const report = await control.report(callId);
    return report.ok ? report.value.customer : undefined;
  }

  /** The supervisors whose legs are connected to the call, each with its leg (the recordings tell them too); undefined for a call not held here. */
  connectedTo(callId: string): ReadonlyMap<string, string> | undefined {
    const call = this.host.call(callId);
    if (call === undefined) return undefined;
    return new Map([...call.monitors].flatMap(([supervisorId, monitor]) => (monitor.leg.kind === 'connected' ? [[supervisorId, monitor.legId] as const] : [])));
  }

  /** The supervisor's call on this instance, if it is joined to one. */
  joinedCall(supervisorId: string): string | undefined {
    for (const call of this.host.calls()) if (call.monitors.has(supervisorId)) return call.callId;
    return undefined;
  }

  /** A joined supervisor changes mode (in turn): the routes follow once its leg is connected, and whoever is told hears it. */
  private async change(call: BridgedCall, control: BridgeControl, supervisorId: string, monitor: Monitor, mode: MonitorMode): Promise<void> {
    const before = monitor.mode;
    if (before === mode) return;
    monitor.mode = mode;
    if (monitor.leg.kind !== 'connected') return;
    await this.route(call, control);
    this.tell(call, supervisorId, monitor.name, before, mode);
    this.log.info('a supervisor changed how it is in a bridged call', { callId: call.callId, supervisorId, from: before, to: mode });
  }

  /** The supervisor is out of the call (in turn): the routes follow, its leg closes, and whoever is told hears it. */
  private async remove(call: BridgedCall, supervisorId: string, monitor: Monitor, reason: 'left' | 'call_ended', { closeLeg }: { closeLeg: boolean }): Promise<void> {
    call.monitors.delete(supervisorId);
    const control = this.host.control(call);
    if (monitor.leg.kind === 'offered') clearTimeout(monitor.leg.timer);
    else if (control !== undefined) await this.route(call, control);
    if (closeLeg && control !== undefined) await this.closeLeg(call, control, monitor.legId);
    this.tell(call, supervisorId, monitor.name, monitor.leg.kind === 'connected' ? monitor.mode : undefined, 'left', reason);
    this.log.info('a supervisor left a bridged call', { callId: call.callId, supervisorId, reason });
  }

  /**
   * The supervisor's change from `before` (undefined: not in the call yet) to `after`: the
   * supervisor hears it as it is; the call's agents hear what they see of it change, if it does.
   * Said once when both hear the same.
   */
  private tell(call: BridgedCall, supervisorId: string, name: string, before: MonitorMode | undefined, after: MonitorMode | 'left', reason?: 'left' | 'call_ended'): void {
    const agents = [...call.members.keys()].filter((agentId) => agentId !== supervisorId);
    const seenBefore = before === undefined ? undefined : this.seenOf(before);
    const seenAfter = after === 'left' ? undefined : this.seenOf(after);
    const own = (): MonitorEvent => ({ ...this.eventOf(call.callId, supervisorId, name, after), ...(after === 'left' && reason !== undefined ? { reason } : {}) });
    if (seenAfter === seenBefore || agents.length === 0) return this.emit(own(), [supervisorId]);
    const theirs = seenAfter ?? 'left';
    if (theirs === after) return this.emit(own(), [...agents, supervisorId]);
    this.emit({ ...this.eventOf(call.callId, supervisorId, name, theirs), reason: 'left' }, agents);
    this.emit(own(), [supervisorId]);
  }

  /** What the call's agents see of a joined supervisor now: nothing until its leg is connected. */
  private seen(monitor: Monitor): Seen {
    return monitor.leg.kind === 'connected' ? this.seenOf(monitor.mode) : undefined;
  }

  private seenOf(mode: MonitorMode): Seen {
    return mode === 'listen' && !this.options.tellAgentsOfListen ? undefined : mode;
  }

  private eventOf(callId: string, supervisorId: string, name: string, mode: MonitorMode | 'left'): MonitorEvent {
    this.lastAt = Math.max(this.options.now(), this.lastAt + 1);
    return { type: 'call.monitor', callId, supervisorId, name, mode, timestamp: this.lastAt };
  }

  private emit(event: MonitorEvent, agentIds: string[]): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event, agentIds);
      } catch (error) {
        this.log.error('a monitor listener failed', { callId: event.callId, error });
      }
    }
  }

  private answerTimer(callId: string, supervisorId: string, legId: string): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.host
        .inTurn(callId, async () => {
          const call = this.host.call(callId);
          const monitor = call?.monitors.get(supervisorId);
          if (call === undefined || monitor?.legId !== legId || monitor.leg.kind !== 'offered') return;
          this.log.info('a supervisor’s leg was not answered in time: it closes', { callId, supervisorId, legId });
          await this.remove(call, supervisorId, monitor, 'left', { closeLeg: true });
        })
        .catch((error: unknown) => this.log.error('an unanswered supervisor’s leg could not close', { callId, supervisorId, error }));
    }, this.options.answerMs);
    timer.unref();
    return timer;
  }

  /** The routes follow the call's state. A node that refuses them is logged: the next routes replace them whole. */
  private async route(call: BridgedCall, control: BridgeControl): Promise<void> {
    const routed = await this.host.asked(call.nodeId, control.setRoutes(call.callId, routesOf(call)));
    if (!routed.ok) this.log.warn('the bridge refused a call’s routes', { callId: call.callId, reason: routed.error.message });
  }

  private async closeLeg(call: BridgedCall, control: BridgeControl, legId: string): Promise<void> {
    const closed = await control.closeAgentLeg(call.callId, legId);
    if (!closed.ok) this.log.debug('a supervisor’s leg did not close', { callId: call.callId, legId, reason: closed.error.message });
  }
}

/** A transfer of the call rings the agent now: it is about to take part in it. */
function ringsFor(call: BridgedCall, agentId: string): boolean {
  const transfer = call.transfer;
  return transfer?.phase.kind === 'ringing' && transfer.rung.has(agentId) && !transfer.declined.has(agentId);
}

/** A supervisor's request about a call it is not joined to. */
export function notJoined<T>(callId: string): Outcome<T> {
  return refuse({ status: 404, code: 'not_found', message: `this supervisor is not in call ${callId}` });
}
