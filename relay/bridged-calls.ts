// The relay's side of bridged calls (bridge/REFERENCE.md): which node holds each call, which agent
// owns each leg, and who hears whom. A node carries media only; every decision about who may join a
// call and who hears whom is made here, from the claims the relay already keeps.
import { randomBytes } from 'node:crypto';
import { CUSTOMER, HOLD_MUSIC, type BridgeControl, type Routes } from '../shared/bridge';
import type { LegReport } from '../shared/bridge';
import type { Logger } from '../shared/log';
import { err, type AppError, type Result } from '../shared/result';

/** Where the relay's bridged calls go: the node in its own process, or the team's registered nodes. */
export interface BridgeNodeSource {
  /** The node a new call goes to (least loaded first); undefined when none is live. */
  pick(): Promise<{ nodeId: string; control: BridgeControl } | undefined>;
  /** The control of a node that holds calls; undefined once it is gone. */
  control(nodeId: string): BridgeControl | undefined;
}

/** Why an agent's bridge request was refused, as the HTTP status and relay code it is answered with. */
export type BridgeRefusal =
  | { status: 400; code: 'invalid_input'; message: string; field: string }
  | { status: 403; code: 'forbidden'; message: string }
  | { status: 404; code: 'not_found'; message: string }
  | { status: 409; code: 'invalid_state'; message: string }
  | { status: 502; code: 'bridge_failed'; message: string; field?: string }
  | { status: 503; code: 'unavailable'; message: string };

type Outcome<T> = { ok: true; value: T } | { ok: false; refusal: BridgeRefusal };
const refuse = <T>(refusal: BridgeRefusal): Outcome<T> => ({ ok: false, refusal });
const done = <T>(value: T): Outcome<T> => ({ ok: true, value });

interface BridgedCall {
  callId: string;
  nodeId: string;
  direction: 'incoming' | 'outgoing';
  /** The customer leg's answer (incoming) once the node made it. */
  customerSdp?: Promise<Result<{ answer: string }>>;
  /** Leg id → the agent it belongs to. */
  legs: Map<string, string>;
  /** The leg the customer talks with, once the call is accepted. */
  activeLeg?: string;
  held: boolean;
  createdAt: number;
}

interface PendingDial {
  ref: string;
  agentId: string;
  legId: string;
  nodeId: string;
  createdAt: number;
}

/** A dial the gateway never placed is forgotten after this long. */
const DIAL_TTL_MS = 2 * 60_000;
/** Ended calls are forgotten at once; calls whose end never came after this long. */
const CALL_TTL_MS = 12 * 60 * 60_000;

const newId = (prefix: string): string => `${prefix}${randomBytes(9).toString('base64url').replace(/[^A-Za-z0-9]/g, 'x')}`;

export interface BridgedCallsOptions {
  nodes: BridgeNodeSource;
  /** The agent who won a call's claim, if anyone did (first-claim-wins is the relay's). */
  ownerOf(callId: string): Promise<string | undefined>;
  logger: Logger;
  now?: () => number;
}

export class BridgedCalls {
  private readonly calls = new Map<string, BridgedCall>();
  private readonly dials = new Map<string, PendingDial>();
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(private readonly options: BridgedCallsOptions) {
    this.log = options.logger;
    this.now = options.now ?? Date.now;
  }

  /**
   * A call rang (its connect is stored): a node takes it and answers the service's offer at once,
   * so that the answer is ready when an agent clicks Answer. False when no node is live: the call
   * then goes on direct.
   */
  async takeIncoming(callId: string, offer: string): Promise<boolean> {
    if (this.calls.has(callId)) return true;
    const picked = await this.options.nodes.pick();
    if (picked === undefined) {
      this.log.warn('no bridge node is live: the call rings direct', { callId });
      return false;
    }
    const call: BridgedCall = { callId, nodeId: picked.nodeId, direction: 'incoming', legs: new Map(), held: false, createdAt: this.now() };
    call.customerSdp = picked.control.prepareIncoming(callId, offer).then((answer) => {
      if (!answer.ok) this.log.warn('the bridge could not answer the service’s offer', { callId, nodeId: picked.nodeId, reason: answer.error.message });
      return answer;
    });
    this.calls.set(callId, call);
    this.log.info('a bridged call rings', { callId, nodeId: picked.nodeId });
    return true;
  }

  isBridged(callId: string): boolean {
    return this.calls.has(callId);
  }

  /** An agent's own leg of a call that rings for it (or that it owns): the node's offer, which the window answers. */
  async legFor(callId: string, agentId: string): Promise<Outcome<{ legId: string; offer: string }>> {
    const call = this.calls.get(callId);
    if (call === undefined || call.direction !== 'incoming') return refuse({ status: 404, code: 'not_found', message: `no bridged incoming call ${callId}` });
    const owner = await this.options.ownerOf(callId);
    if (owner !== undefined && owner !== agentId) return refuse({ status: 403, code: 'forbidden', message: 'the call is another agent’s' });
    const control = this.controlOf(call);
    if (control === undefined) return this.nodeGone(call);
    const legId = newId('leg-');
    const offer = await control.offerAgentLeg(callId, legId);
    if (!offer.ok) return this.bridgeFailed(offer.error);
    call.legs.set(legId, agentId);
    return done({ legId, offer: offer.value.offer });
  }

  /** The claim's winner hands over its window's answer; the customer leg's answer comes back, for accept. */
  async answer(callId: string, agentId: string, legId: string, sdp: string): Promise<Outcome<{ sdp: string }>> {
    const mine = await this.ownedLeg(callId, agentId, legId);
    if (!mine.ok) return mine;
    const { call, control } = mine.value;
    const applied = await control.applyAgentAnswer(callId, legId, sdp);
    if (!applied.ok) return this.bridgeFailed(applied.error, 'sdp');
    const customer = await (call.customerSdp ?? Promise.resolve(err<{ answer: string }>('internal', 'the call was never prepared')));
    if (!customer.ok) return this.bridgeFailed(customer.error);
    call.activeLeg = legId;
    return done({ sdp: customer.value.answer });
  }

  /** The gateway took the accept: the customer's media starts, with this agent. Other agents' ringing legs close. */
  async accepted(callId: string, agentId: string): Promise<Outcome<null>> {
    const call = this.calls.get(callId);
    if (call === undefined) return refuse({ status: 404, code: 'not_found', message: `no bridged call ${callId}` });
    const owner = await this.options.ownerOf(callId);
    if (owner !== agentId || call.activeLeg === undefined || call.legs.get(call.activeLeg) !== agentId) {
      return refuse({ status: 403, code: 'forbidden', message: 'only the agent who answered the call connects it' });
    }
    const control = this.controlOf(call);
    if (control === undefined) return this.nodeGone(call);
    const routed = await control.setRoutes(callId, this.routesOf(call));
    if (!routed.ok) return this.bridgeFailed(routed.error);
    const connected = await control.connectCustomer(callId);
    if (!connected.ok) return this.bridgeFailed(connected.error);
    await this.closeOtherLegs(call, control);
    return done(null);
  }

  /** An outgoing call: a node answers the window's offer and makes the customer leg's offer, for initiate. */
  async dial(agentId: string, sdp: string): Promise<Outcome<{ ref: string; legId: string; offer: string; answer: string }>> {
    this.forgetStaleDials();
    const picked = await this.options.nodes.pick();
    if (picked === undefined) return refuse({ status: 503, code: 'unavailable', message: 'no bridge node is live' });
    const ref = newId('dial-');
    const legId = newId('leg-');
    const customer = await picked.control.prepareOutgoing(ref);
    if (!customer.ok) return this.bridgeFailed(customer.error);
    const leg = await picked.control.answerAgentLeg(ref, legId, sdp);
    if (!leg.ok) {
      void picked.control.endCall(ref);
      return this.bridgeFailed(leg.error, 'sdp');
    }
    this.dials.set(ref, { ref, agentId, legId, nodeId: picked.nodeId, createdAt: this.now() });
    return done({ ref, legId, offer: customer.value.offer, answer: leg.value.answer });
  }

  /** The gateway placed a dialled call: from now on it is known by the service's id. */
  async placed(ref: string, agentId: string, callId: string): Promise<Outcome<null>> {
    const dial = this.dials.get(ref);
    if (dial === undefined) return refuse({ status: 404, code: 'not_found', message: `no dial ${ref}` });
    if (dial.agentId !== agentId) return refuse({ status: 403, code: 'forbidden', message: 'the dial is another agent’s' });
    const control = this.options.nodes.control(dial.nodeId);
    if (control === undefined) return refuse({ status: 503, code: 'unavailable', message: 'the bridge node of this call is gone' });
    const bound = await control.bindOutgoing(ref, callId);
    if (!bound.ok) return this.bridgeFailed(bound.error);
    this.dials.delete(ref);
    const call: BridgedCall = { callId, nodeId: dial.nodeId, direction: 'outgoing', legs: new Map([[dial.legId, agentId]]), activeLeg: dial.legId, held: false, createdAt: this.now() };
    this.calls.set(callId, call);
    const routed = await control.setRoutes(callId, this.routesOf(call));
    if (!routed.ok) return this.bridgeFailed(routed.error);
    return done(null);
  }

  /** The customer answered an outgoing bridged call: the node applies the answer (the connect event). */
  async customerAnswered(callId: string, sdp: string): Promise<void> {
    const call = this.calls.get(callId);
    if (call === undefined || call.direction !== 'outgoing') return;
    const control = this.controlOf(call);
    if (control === undefined) return;
    const applied = await control.applyCustomerAnswer(callId, sdp);
    if (!applied.ok) this.log.warn('the bridge could not apply the customer’s answer', { callId, reason: applied.error.message });
  }

  /** Hold: the customer hears the bridge's music, the agent nothing; resume undoes it. */
  async hold(callId: string, agentId: string, held: boolean): Promise<Outcome<null>> {
    const call = this.calls.get(callId);
    if (call === undefined) return refuse({ status: 404, code: 'not_found', message: `no bridged call ${callId}` });
    if (call.activeLeg === undefined || call.legs.get(call.activeLeg) !== agentId) return refuse({ status: 403, code: 'forbidden', message: 'only the agent on the call holds it' });
    const control = this.controlOf(call);
    if (control === undefined) return this.nodeGone(call);
    call.held = held;
    const routed = await control.setRoutes(callId, this.routesOf(call));
    if (!routed.ok) return this.bridgeFailed(routed.error);
    return done(null);
  }

  /**
   * The customer's leg as the node measures it now (loss, jitter, round trip), for the agent on the
   * call: the window measures only its own leg, and only that agent's window judges this call.
   */
  async customerQuality(callId: string, agentId: string): Promise<Outcome<LegReport>> {
    const call = this.calls.get(callId);
    if (call === undefined) return refuse({ status: 404, code: 'not_found', message: `no bridged call ${callId}` });
    if (call.activeLeg === undefined || call.legs.get(call.activeLeg) !== agentId) return refuse({ status: 403, code: 'forbidden', message: 'only the agent on the call reads its quality' });
    const control = this.controlOf(call);
    if (control === undefined) return this.nodeGone(call);
    const report = await control.report(callId);
    if (!report.ok) return this.bridgeFailed(report.error);
    return done(report.value.customer);
  }

  /** The call ended at the service: every leg closes. */
  async ended(callId: string): Promise<void> {
    const call = this.calls.get(callId);
    if (call === undefined) return;
    this.calls.delete(callId);
    const control = this.controlOf(call);
    const closed = await control?.endCall(callId);
    if (closed !== undefined && !closed.ok) this.log.warn('the bridge could not end a call', { callId, reason: closed.error.message });
    this.log.info('a bridged call ended', { callId, nodeId: call.nodeId });
  }

  /** Ends every call (the relay closes). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.calls.keys()].map((callId) => this.ended(callId)));
    this.dials.clear();
  }

  /** Forgets calls whose end never came (the relay missed the terminate). */
  prune(): void {
    const now = this.now();
    for (const [callId, call] of this.calls) if (now - call.createdAt > CALL_TTL_MS) void this.ended(callId);
    this.forgetStaleDials();
  }

  private routesOf(call: BridgedCall): Routes {
    const leg = call.activeLeg;
    if (leg === undefined) return { [CUSTOMER]: [HOLD_MUSIC] };
    if (call.held) return { [CUSTOMER]: [HOLD_MUSIC], [leg]: [] };
    return { [CUSTOMER]: [leg], [leg]: [CUSTOMER] };
  }

  private async ownedLeg(callId: string, agentId: string, legId: string): Promise<Outcome<{ call: BridgedCall; control: BridgeControl }>> {
    const call = this.calls.get(callId);
    if (call === undefined) return refuse({ status: 404, code: 'not_found', message: `no bridged call ${callId}` });
    const owner = await this.options.ownerOf(callId);
    if (owner !== agentId) return refuse({ status: 403, code: 'forbidden', message: 'only the agent who claimed the call answers it' });
    if (call.legs.get(legId) !== agentId) return refuse({ status: 403, code: 'forbidden', message: `legId: not a leg of this agent in this call` });
    const control = this.controlOf(call);
    if (control === undefined) return this.nodeGone(call);
    return done({ call, control });
  }

  private async closeOtherLegs(call: BridgedCall, control: BridgeControl): Promise<void> {
    for (const legId of [...call.legs.keys()]) {
      if (legId === call.activeLeg) continue;
      call.legs.delete(legId);
      const closed = await control.closeAgentLeg(call.callId, legId);
      if (!closed.ok) this.log.debug('a ringing leg did not close', { callId: call.callId, legId, reason: closed.error.message });
    }
  }

  private controlOf(call: BridgedCall): BridgeControl | undefined {
    return this.options.nodes.control(call.nodeId);
  }

  private nodeGone<T>(call: BridgedCall): Outcome<T> {
    return refuse({ status: 503, code: 'unavailable', message: `the bridge node of call ${call.callId} is gone` });
  }

  /** The node refused: bad SDP from the window (`field` names it) is the window's to fix (400); anything else is the node's failure. */
  private bridgeFailed<T>(error: AppError, field?: string): Outcome<T> {
    if (field !== undefined && error.code === 'invalid_input') return refuse({ status: 400, code: 'invalid_input', message: error.message, field });
    return refuse({ status: 502, code: 'bridge_failed', message: error.message });
  }

  private forgetStaleDials(): void {
    const now = this.now();
    for (const [ref, dial] of this.dials) {
      if (now - dial.createdAt <= DIAL_TTL_MS) continue;
      this.dials.delete(ref);
      void this.options.nodes.control(dial.nodeId)?.endCall(ref);
    }
  }
}

/** The bridge in the relay's own process (`--bridge`): one node that takes every call. */
export function localBridge(control: BridgeControl, nodeId = 'local'): BridgeNodeSource {
  return {
    pick: () => Promise.resolve({ nodeId, control }),
    control: (id) => (id === nodeId ? control : undefined),
  };
}
