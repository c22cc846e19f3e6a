// The relay's side of bridged calls (bridge/REFERENCE.md): which node holds each call, which agent
// owns each leg, and who hears whom. A node carries media only; every decision about who may join a
// call and who hears whom is made here, from the claims the relay already keeps. Which node holds a
// call is the team's record (the backend's placements, first wins across instances), so that the
// next pick counts it and a node that dies takes exactly its calls with it. Handing a call on between
// agents (transfers, consults, three-way calls) is transfers.ts's, and a member whose leg went taking
// a new one (rejoining, and what becomes of a member not back in time) is rejoins.ts's, on the same records.
import type { BridgeControl, LegReport } from '../shared/bridge';
import type { BridgeNodeEventBody as BridgeNodeEvent } from '../shared/bridge-nodes';
import type { BridgeFailure } from '../shared/events';
import type { Logger } from '../shared/log';
import { REJOIN_WINDOW_MS } from '../shared/call-state';
import { err, type AppError, type Result } from '../shared/result';
import { TRANSFER_RING_MS, type TransferRequest } from '../shared/transfer';
import type { CallNodeOutcome, RelayBackend } from './backend/types';
import { bridgeFailed, done, isOnCall, joinCall, newId, nodeGoneRefusal, noCall, refuse, routesOf, type BridgedCall, type BridgeRefusal, type Caller, type Outcome } from './bridged-call';
import type { GatewayTerminator } from './gateway-terminator';
import { CallMonitors, MONITOR_ANSWER_MS } from './monitors';
import { CallRejoins, type NotBackListener } from './rejoins';
import type { TeamAgent } from './team';
import { CallTransfers, type TransferListener } from './transfers';

export type { BridgeRefusal } from './bridged-call';
export type { TransferEvent, TransferListener } from './transfers';
export type { NotBack, NotBackListener } from './rejoins';

/** Where the relay's bridged calls go: the node in its own process, or the team's registered nodes. */
export interface BridgeNodeSource {
  /** The node a new call goes to (least loaded first); undefined when none is live. */
  pick(): Promise<{ nodeId: string; control: BridgeControl } | undefined>;
  /** The control of a node that holds calls; undefined once it is gone. */
  control(nodeId: string): BridgeControl | undefined;
  /**
   * A node whose control API could not be reached: no new call goes to it. A node that is still
   * alive finds out at its next heartbeat and registers again.
   */
  lost?(nodeId: string): Promise<void>;
  /**
   * What the nodes say of their calls' legs, for a source whose nodes tell it directly (the node in
   * the relay's own process); registered nodes post theirs to the relay (BridgeNodeRegistry.onEvent).
   */
  onEvent?(listener: (nodeId: string, event: BridgeNodeEvent) => void): () => void;
}

/** The team's record of which node holds each call (the backend's placements). */
export type CallPlacements = Pick<RelayBackend, 'setCallNode' | 'callNode' | 'dropCallNode' | 'callsOnNode'>;

/** How a node went: it missed its heartbeats, it left, or its control API could not be reached. */
export type NodeGone = 'expired' | 'left' | 'unreachable';

/** Why the bridge loses a call by itself: its node, or the customer's leg (an agent away too long is no loss of the bridge's). */
export type BridgeLoss = Exclude<BridgeFailure, 'agent_not_back'>;

/** A call the bridge can no longer carry: the relay tells its agents (`call.bridge_failed`). */
export interface LostCall {
  callId: string;
  nodeId: string;
  reason: BridgeLoss;
  /** Every agent who was in it or rung for it, once it had a transfer (participantsOf). */
  agents?: string[];
}

/** Whether a ringing call goes to a node: placed on one by this instance now, already on one, or direct. */
export type Taking = 'taken' | 'held' | 'direct';

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
/**
 * How long a customer leg's failure waits for the service's own end of the call: a customer who hangs
 * up closes the leg as the terminate webhook is on its way, and that call ended, it did not fail.
 */
export const DEFAULT_CUSTOMER_FAILURE_GRACE_MS = 3_000;

/** A ringing agent's request of a call a colleague took (its claim, or its leg in the call). */
const takenRefusal: BridgeRefusal = { status: 403, code: 'forbidden', message: 'the call is another agent’s' };

const DIAL_PREFIX = 'dial-';
/** A dial's reference, placed on its node until the gateway names the call (the relay makes them: its own prefix). */
const isDialRef = (id: string): boolean => id.startsWith(DIAL_PREFIX);
/** A refused or reset connection, or a host that cannot be found: no answer came back at all. */
const isUnreachable = (error: AppError): boolean => error.code === 'gateway_unreachable' && error.httpStatus === undefined;

export interface BridgedCallsOptions {
  nodes: BridgeNodeSource;
  /** Which node holds each call, across instances. */
  placements: CallPlacements;
  /** The agent who won a call's claim, if anyone did (first-claim-wins is the relay's). */
  ownerOf(callId: string): Promise<string | undefined>;
  /** Every agent of the team now, with its name and standing: the colleagues a transfer may ring. */
  team: () => readonly TeamAgent[];
  logger: Logger;
  now?: () => number;
  /** Default DEFAULT_CUSTOMER_FAILURE_GRACE_MS. */
  customerFailureGraceMs?: number;
  /** How long a transfer rings; default TRANSFER_RING_MS. */
  transferRingMs?: number;
  /** How long a member whose leg went has to rejoin; default REJOIN_WINDOW_MS. */
  rejoinWindowMs?: number;
  /**
   * The relay's own terminate at the gateway (`--gateway-url`, `--api-key`): it ends the calls no
   * agent can end any more. Without it such a call's customer is let go (releaseCustomer) and the
   * service ends the call itself.
   */
  terminator?: GatewayTerminator;
  /** The agents in a call are told of a supervisor's listen too (`--tell-agents-when-monitored`; relay/REFERENCE.md "Supervisors"). */
  tellAgentsWhenMonitored?: boolean;
}

/** A new call's record: nobody in it yet. */
function newCall(callId: string, nodeId: string, direction: BridgedCall['direction'], createdAt: number, caller: Caller = {}): BridgedCall {
  return { callId, nodeId, direction, legs: new Map(), declined: new Set(), members: new Map(), held: false, transfers: new Map(), everyone: new Set(), away: new Map(), strayLegs: [], monitors: new Map(), caller, createdAt };
}

export class BridgedCalls {
  private readonly calls = new Map<string, BridgedCall>();
  private readonly dials = new Map<string, PendingDial>();
  private readonly lostListeners = new Set<(lost: LostCall) => void>();
  private readonly holdListeners = new Set<(hold: { callId: string; agentId: string; held: boolean }) => void>();
  /** The customer legs' failures waiting out their grace. */
  private readonly graces = new Set<NodeJS.Timeout>();
  private readonly placements: CallPlacements;
  /** The last pick under way: the next waits for it (placeOnNode). */
  private picking: Promise<unknown> = Promise.resolve();
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly transfers: CallTransfers;
  private readonly rejoins: CallRejoins;
  /** The supervisors joined to the calls (monitors.ts). */
  readonly monitors: CallMonitors;

  constructor(private readonly options: BridgedCallsOptions) {
    this.placements = options.placements;
    this.log = options.logger;
    this.now = options.now ?? Date.now;
    this.transfers = new CallTransfers(
      {
        call: (callId) => this.calls.get(callId),
        control: (call) => this.controlOf(call),
        asked: (nodeId, request) => this.asked(nodeId, request),
        team: () => options.team(),
        endedAtGateway: async (callId) => (await options.terminator?.endedAtGateway(callId)) === true,
      },
      { logger: this.log, now: this.now, ringMs: options.transferRingMs ?? TRANSFER_RING_MS },
    );
    this.rejoins = new CallRejoins(
      {
        call: (callId) => this.calls.get(callId),
        control: (call) => this.controlOf(call),
        asked: (nodeId, request) => this.asked(nodeId, request),
        inTurn: (callId, work) => this.transfers.inTurn(callId, work),
        removeMember: (call, agentId, control) => this.transfers.removeMember(call, agentId, control),
        stopTransfers: (call) => this.transfers.ended(call),
        forget: (call) => this.forget(call),
      },
      { logger: this.log, now: this.now, windowMs: options.rejoinWindowMs ?? REJOIN_WINDOW_MS, ...(options.terminator !== undefined ? { terminator: options.terminator } : {}) },
    );
    this.monitors = new CallMonitors(
      {
        call: (callId) => this.calls.get(callId),
        calls: () => this.calls.values(),
        control: (call) => this.controlOf(call),
        asked: (nodeId, request) => this.asked(nodeId, request),
        inTurn: (callId, work) => this.transfers.inTurn(callId, work),
      },
      { logger: this.log, now: this.now, tellAgentsOfListen: options.tellAgentsWhenMonitored === true, answerMs: MONITOR_ANSWER_MS },
    );
    this.transfers.onEvent((event) => this.monitors.transferred(event));
    this.rejoins.onNotBack((notBack) => Promise.resolve(this.monitors.givenUp(notBack)));
  }

  /** Every member not back in time, from now on: the relay stores the agent's event before the call is ended. */
  onAgentNotBack(listener: NotBackListener): () => void {
    return this.rejoins.onNotBack(listener);
  }

  /** POST BRIDGE_AGENT_PATHS.rejoin: a member whose leg went takes a new one (rejoins.ts). */
  rejoin(callId: string, agentId: string): Promise<Outcome<{ legId: string; offer: string }>> {
    return this.rejoins.rejoin(callId, agentId);
  }

  /** POST BRIDGE_AGENT_PATHS.rejoinAnswer: the window's answer to the rejoin offer. */
  rejoinAnswer(callId: string, agentId: string, legId: string, sdp: string): Promise<Outcome<null>> {
    return this.rejoins.answer(callId, agentId, legId, sdp);
  }

  /**
   * What a node says of a call's legs: a failed customer leg ends its call (after a grace), a
   * member's failed or closed leg starts its rejoin window, and a rejoining member's answered leg
   * that connected brings it back.
   */
  nodeEvent(nodeId: string, event: BridgeNodeEvent): void {
    if (event.kind === 'customer_failed') this.customerFailed(event.callId, nodeId);
    else if (event.kind === 'leg_connected') {
      void this.rejoins.legConnected(event.callId, nodeId, event.legId).catch((error: unknown) => this.log.error('a connected leg could not be followed', { callId: event.callId, nodeId, error }));
    } else if (event.kind === 'leg_failed' || event.kind === 'leg_closed') {
      void this.legLost(event.callId, nodeId, event.legId, event.lastPacketAt).catch((error: unknown) => this.log.error('a lost leg could not be followed', { callId: event.callId, nodeId, error }));
    }
  }

  /** Follows the events of nodes that tell the source directly (the node in the relay's own process); returns the stop. */
  followNodeEvents(): () => void {
    return this.options.nodes.onEvent?.((nodeId, event) => this.nodeEvent(nodeId, event)) ?? (() => undefined);
  }

  /** A node says an agent leg failed or closed: a member's own leg starts its rejoin window; a supervisor's takes it out of the call. */
  async legLost(callId: string, nodeId: string, legId: string, lastPacketAt?: number): Promise<void> {
    await Promise.all([this.rejoins.legLost(callId, nodeId, legId, lastPacketAt), this.monitors.legLost(callId, nodeId, legId)]);
  }

  /** Every hold and resume the bridge took, from now on: the call records count the hold time. */
  onHold(listener: (hold: { callId: string; agentId: string; held: boolean }) => void): () => void {
    this.holdListeners.add(listener);
    return () => this.holdListeners.delete(listener);
  }

  /** Every call the bridge can no longer carry, from now on: the relay tells its agents. */
  onCallLost(listener: (lost: LostCall) => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /** Every transfer's ring and outcome, one event per agent told: the relay stores each for that agent. */
  onTransferEvent(listener: TransferListener): () => void {
    return this.transfers.onEvent(listener);
  }

  /**
   * A call rang (its connect is about to be stored): a node takes it and answers the service's offer
   * at once, so that the answer is ready when an agent clicks Answer. The first placement wins across
   * instances: a call another instance placed already is bridged there ('held'). 'direct' when no
   * node is live: the call then goes on direct. `caller` is the customer as the ring names them, for a
   * transfer's ring later.
   */
  async takeIncoming(callId: string, offer: string, caller: Caller = {}): Promise<Taking> {
    if (this.calls.has(callId)) return 'held';
    this.prune();
    const placing = await this.placeOnNode(callId);
    if (placing === undefined) {
      this.log.warn('no bridge node is live: the call rings direct', { callId });
      return 'direct';
    }
    const { picked, placed } = placing;
    if (!placed.placed) {
      this.log.info('a ringing call is on a bridge node already', { callId, nodeId: placed.nodeId });
      return 'held';
    }
    const call = newCall(callId, picked.nodeId, 'incoming', this.now(), caller);
    call.customerSdp = this.asked(picked.nodeId, picked.control.prepareIncoming(callId, offer)).then((answer) => {
      if (!answer.ok) this.log.warn('the bridge could not answer the service’s offer', { callId, nodeId: picked.nodeId, reason: answer.error.message });
      return answer;
    });
    this.calls.set(callId, call);
    this.log.info('a bridged call rings', { callId, nodeId: picked.nodeId });
    return 'taken';
  }

  isBridged(callId: string): boolean {
    return this.calls.has(callId);
  }

  /** The agents in a call now, each with its leg (call-recordings.ts); undefined for a call not held here. */
  membersOf(callId: string): ReadonlyMap<string, string> | undefined {
    return this.calls.get(callId)?.members;
  }

  /** The supervisors joined to a call whose legs are connected, each with its leg (call-recordings.ts); undefined for a call not held here. */
  supervisorsOf(callId: string): ReadonlyMap<string, string> | undefined {
    return this.monitors.connectedTo(callId);
  }

  /**
   * An agent's own leg of a call that rings for it (or that it owns): the node's offer, which the
   * window answers. In the call's turn, so that a decline finds every leg its agent was given; a leg
   * made while a colleague took the call (the claim and the accept do not wait for the turn) closes
   * again, refused, rather than staying on the node unanswered until the call ends.
   */
  legFor(callId: string, agentId: string): Promise<Outcome<{ legId: string; offer: string }>> {
    return this.transfers.inTurn(callId, async () => {
      const ringing = await this.ringingFor(callId, agentId);
      if (!ringing.ok) return ringing;
      const { call, control } = ringing.value;
      const before = this.stillRingingFor(call, agentId);
      if (before !== undefined) return refuse(before);
      const legId = newId('leg-');
      const offer = await this.asked(call.nodeId, control.offerAgentLeg(callId, legId));
      if (!offer.ok) return bridgeFailed(offer.error);
      const owner = await this.options.ownerOf(callId);
      // From here to the leg's record nothing waits: an accept's closing of the other legs comes after it.
      const gone: BridgeRefusal | undefined = this.calls.get(callId) !== call ? { status: 404, code: 'not_found', message: `no bridged incoming call ${callId}` } : undefined;
      const after = gone ?? (owner !== undefined && owner !== agentId ? takenRefusal : this.stillRingingFor(call, agentId));
      if (after !== undefined) {
        const closed = await control.closeAgentLeg(callId, legId);
        if (!closed.ok) this.log.debug('a leg made as its call moved on did not close', { callId, legId, reason: closed.error.message });
        return refuse(after);
      }
      call.legs.set(legId, agentId);
      return done({ legId, offer: offer.value.offer });
    });
  }

  /**
   * An agent declined a call that rings (relay-service.ts `decline`): its legs close on the node now,
   * rather than at the accept or the call's end, and it is given no other; the call rings on for the
   * others. In the call's turn, so that a leg being made as it declines is closed too.
   */
  declined(callId: string, agentId: string): Promise<void> {
    return this.transfers.inTurn(callId, async () => {
      const call = this.calls.get(callId);
      if (call === undefined || call.direction !== 'incoming') return;
      call.declined.add(agentId);
      const control = this.controlOf(call);
      const mine = [...call.legs].filter(([legId, owner]) => owner === agentId && legId !== call.activeLeg).map(([legId]) => legId);
      for (const legId of mine) {
        call.legs.delete(legId);
        const closed = await control?.closeAgentLeg(callId, legId);
        if (closed !== undefined && !closed.ok) this.log.debug('a declined ringing leg did not close', { callId, legId, reason: closed.error.message });
      }
      if (mine.length > 0) this.log.info('a declining agent’s ringing legs closed', { callId, agentId, legs: mine.length });
    });
  }

  /**
   * A ringing agent's window answered its leg ahead of the click (BRIDGE_AGENT_PATHS.ringAnswer):
   * the leg connects to the node now, so that Answer finds it up. It carries nothing until the
   * accept: the customer's leg connects only then, after the relay routed it to the answering leg
   * alone (accepted), and the legs that rang are closed.
   */
  ringAnswer(callId: string, agentId: string, legId: string, sdp: string): Promise<Outcome<null>> {
    // In the call's turn: a decline under way closes the leg before or after, never during.
    return this.transfers.inTurn(callId, async () => {
      const ringing = await this.ringingFor(callId, agentId);
      if (!ringing.ok) return ringing;
      const { call, control } = ringing.value;
      if (call.legs.get(legId) !== agentId) return refuse({ status: 403, code: 'forbidden', message: 'legId: not a leg of this agent in this call' });
      if (call.members.size > 0 || call.activeLeg !== undefined) return refuse({ status: 409, code: 'invalid_state', message: 'the call is being answered: its leg connects with the answer' });
      const applied = await this.asked(call.nodeId, control.applyAgentAnswer(callId, legId, sdp));
      if (!applied.ok) return bridgeFailed(applied.error, 'sdp');
      return done(null);
    });
  }

  /** The claim's winner hands over its window's answer; the customer leg's answer comes back, for accept. */
  async answer(callId: string, agentId: string, legId: string, sdp: string): Promise<Outcome<{ sdp: string }>> {
    const mine = await this.ownedLeg(callId, agentId, legId);
    if (!mine.ok) return mine;
    const { call, control } = mine.value;
    const applied = await this.asked(call.nodeId, control.applyAgentAnswer(callId, legId, sdp));
    if (!applied.ok) return bridgeFailed(applied.error, 'sdp');
    const customer = await (call.customerSdp ?? Promise.resolve(err<{ answer: string }>('internal', 'the call was never prepared')));
    if (!customer.ok) return bridgeFailed(customer.error);
    call.activeLeg = legId;
    return done({ sdp: customer.value.answer });
  }

  /** The gateway took the accept: the customer's media starts, with this agent, the call's first member. Other agents' ringing legs close. */
  async accepted(callId: string, agentId: string): Promise<Outcome<null>> {
    const call = this.calls.get(callId);
    if (call === undefined) return noCall(callId);
    const owner = await this.options.ownerOf(callId);
    const leg = call.activeLeg;
    if (owner !== agentId || leg === undefined || call.legs.get(leg) !== agentId) {
      return refuse({ status: 403, code: 'forbidden', message: 'only the agent who answered the call connects it' });
    }
    // Repeating the accept is harmless; after a transfer the call is its new agents'.
    if (call.members.size > 0 && call.members.get(agentId) !== leg) return refuse({ status: 409, code: 'invalid_state', message: 'the call was handed on: its agents are others now' });
    const control = this.controlOf(call);
    if (control === undefined) return nodeGoneRefusal(call.callId);
    joinCall(call, agentId, leg);
    call.everyone.add(agentId);
    const routed = await this.asked(call.nodeId, control.setRoutes(callId, routesOf(call)));
    if (!routed.ok) return bridgeFailed(routed.error);
    const connected = await this.asked(call.nodeId, control.connectCustomer(callId));
    if (!connected.ok) return bridgeFailed(connected.error);
    await this.closeOtherLegs(call, control);
    return done(null);
  }

  /**
   * An outgoing call: a node answers the window's offer and makes the customer leg's offer, for
   * initiate. The dial is placed on its node under its reference until the gateway names the call,
   * so that a burst of dials spreads over the nodes too.
   */
  async dial(agentId: string, sdp: string): Promise<Outcome<{ ref: string; legId: string; offer: string; answer: string }>> {
    this.prune();
    const ref = newId(DIAL_PREFIX);
    const placing = await this.placeOnNode(ref);
    if (placing === undefined) return refuse({ status: 503, code: 'unavailable', message: 'no bridge node is live' });
    const { picked } = placing;
    const legId = newId('leg-');
    const customer = await this.asked(picked.nodeId, picked.control.prepareOutgoing(ref));
    if (!customer.ok) {
      await this.placements.dropCallNode(ref);
      return bridgeFailed(customer.error);
    }
    const leg = await this.asked(picked.nodeId, picked.control.answerAgentLeg(ref, legId, sdp));
    if (!leg.ok) {
      await this.placements.dropCallNode(ref);
      void picked.control.endCall(ref);
      return bridgeFailed(leg.error, 'sdp');
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
    const bound = await this.asked(dial.nodeId, control.bindOutgoing(ref, callId));
    if (!bound.ok) return bridgeFailed(bound.error);
    this.dials.delete(ref);
    const placement = await this.placements.setCallNode(callId, dial.nodeId);
    await this.placements.dropCallNode(ref);
    if (!placement.placed) this.log.warn('a dialled call was placed on another bridge node already', { callId, nodeId: dial.nodeId, holder: placement.nodeId });
    const call = newCall(callId, dial.nodeId, 'outgoing', this.now());
    joinCall(call, agentId, dial.legId);
    call.everyone.add(agentId);
    this.calls.set(callId, call);
    const routed = await this.asked(dial.nodeId, control.setRoutes(callId, routesOf(call)));
    if (!routed.ok) return bridgeFailed(routed.error);
    return done(null);
  }

  /** The customer answered an outgoing bridged call: the node applies the answer (the connect event). */
  async customerAnswered(callId: string, sdp: string): Promise<void> {
    const call = this.calls.get(callId);
    if (call === undefined || call.direction !== 'outgoing') return;
    const control = this.controlOf(call);
    if (control === undefined) return;
    const applied = await this.asked(call.nodeId, control.applyCustomerAnswer(callId, sdp));
    if (!applied.ok) this.log.warn('the bridge could not apply the customer’s answer', { callId, reason: applied.error.message });
  }

  /** The customer of an outgoing call, as its status events name them (`recipientId`): a transfer's ring carries the number. */
  customerNumber(callId: string, number: string): void {
    const call = this.calls.get(callId);
    if (call?.direction === 'outgoing' && call.caller.from === undefined) call.caller.from = number;
  }

  /**
   * Hold: the customer hears the bridge's music, the agent nothing; resume undoes it. Only the one
   * agent of a call holds it: not a three-way call, nor while a transfer is under way (the customer
   * hears the music already).
   */
  hold(callId: string, agentId: string, held: boolean): Promise<Outcome<null>> {
    return this.transfers.inTurn(callId, async () => {
      const call = this.calls.get(callId);
      if (call === undefined) return noCall(callId);
      if (!isOnCall(call, agentId)) return refuse({ status: 403, code: 'forbidden', message: 'only the agent on the call holds it' });
      if (call.members.size > 1) return refuse({ status: 409, code: 'invalid_state', message: 'a three-way call is not held' });
      if (call.transfer !== undefined) return refuse({ status: 409, code: 'invalid_state', message: 'the call is not held while a transfer is under way' });
      const control = this.controlOf(call);
      if (control === undefined) return nodeGoneRefusal(call.callId);
      call.held = held;
      const routed = await this.asked(call.nodeId, control.setRoutes(callId, routesOf(call)));
      if (!routed.ok) return bridgeFailed(routed.error);
      for (const listener of [...this.holdListeners]) {
        try {
          listener({ callId, agentId, held });
        } catch (error) {
          this.log.error('a hold listener failed', { callId, error });
        }
      }
      return done(null);
    });
  }

  /** POST TRANSFER_PATHS.start: the only agent in the call rings a colleague, or every available one. */
  transfer(callId: string, agentId: string, request: TransferRequest): Promise<Outcome<{ transferId: string }>> {
    return this.transfers.start(callId, agentId, request);
  }

  /** POST TRANSFER_PATHS.answer: a rung colleague's window answers its leg; the first answer takes the transfer. */
  answerTransfer(callId: string, transferId: string, agentId: string, legId: string, sdp: string): Promise<Outcome<null>> {
    return this.transfers.answer(callId, transferId, agentId, legId, sdp);
  }

  /** POST TRANSFER_PATHS.decline. */
  declineTransfer(callId: string, transferId: string, agentId: string): Promise<Outcome<null>> {
    return this.transfers.decline(callId, transferId, agentId);
  }

  /** POST TRANSFER_PATHS.cancel: the agent who started it takes it back. */
  cancelTransfer(callId: string, transferId: string, agentId: string): Promise<Outcome<null>> {
    return this.transfers.cancel(callId, transferId, agentId);
  }

  /** POST TRANSFER_PATHS.complete: a consult becomes a transfer. */
  completeTransfer(callId: string, transferId: string, agentId: string): Promise<Outcome<null>> {
    return this.transfers.complete(callId, transferId, agentId);
  }

  /** POST TRANSFER_PATHS.join: a consult becomes a three-way call. */
  joinTransfer(callId: string, transferId: string, agentId: string): Promise<Outcome<null>> {
    return this.transfers.join(callId, transferId, agentId);
  }

  /** POST TRANSFER_PATHS.leave: an agent hangs up; `last` when nobody else is in the call (the app then ends it at the gateway). */
  leave(callId: string, agentId: string): Promise<Outcome<{ last: boolean }>> {
    return this.transfers.leave(callId, agentId);
  }

  /**
   * The agents a call's own events go to once it had a transfer: everyone who was in it or rung for
   * it. Undefined for a call without one (its events go to its owner, as always) or not held here.
   */
  participantsOf(callId: string): string[] | undefined {
    const call = this.calls.get(callId);
    return call !== undefined && call.transfers.size > 0 ? [...call.everyone] : undefined;
  }

  /**
   * The customer's leg as the node measures it now (loss, jitter, round trip), for the agent on the
   * call (any of its agents): the window measures only its own leg, and only the windows of the
   * call's agents judge it.
   */
  async customerQuality(callId: string, agentId: string): Promise<Outcome<LegReport>> {
    const call = this.calls.get(callId);
    if (call === undefined) return noCall(callId);
    if (!isOnCall(call, agentId)) return refuse({ status: 403, code: 'forbidden', message: 'only the agent on the call reads its quality' });
    const control = this.controlOf(call);
    if (control === undefined) return nodeGoneRefusal(call.callId);
    const report = await control.report(callId);
    if (!report.ok) return bridgeFailed(report.error);
    return done(report.value.customer);
  }

  /** The call ended at the service: every leg closes, and its node holds it no more (whichever instance placed it). */
  async ended(callId: string): Promise<void> {
    const call = this.calls.get(callId);
    this.calls.delete(callId);
    await this.placements.dropCallNode(callId).catch((error: unknown) => this.log.warn('could not drop a call’s bridge node', { callId, error }));
    if (call === undefined) return;
    this.transfers.ended(call);
    this.rejoins.stopCounting(call);
    this.monitors.ended(call);
    const control = this.controlOf(call);
    const closed = await control?.endCall(callId);
    if (closed !== undefined && !closed.ok) this.log.warn('the bridge could not end a call', { callId, reason: closed.error.message });
    this.log.info('a bridged call ended', { callId, nodeId: call.nodeId });
  }

  /**
   * A node is gone (it missed its heartbeats, it left, or its control API could not be reached):
   * every call placed on it is over, whichever instance placed it, and its agents are told. Every
   * instance that sees the node go may do this; the placements go once, and the backend stores the
   * agents' event once. Resolves with the calls it ended.
   */
  async nodeGone(nodeId: string, why: NodeGone): Promise<string[]> {
    if (why === 'unreachable') await this.options.nodes.lost?.(nodeId).catch((error: unknown) => this.log.warn('could not take an unreachable bridge node out', { nodeId, error }));
    const placed = await this.placements.callsOnNode(nodeId);
    if (placed.length === 0) return [];
    const calls = placed.filter((id) => !isDialRef(id));
    this.log.warn('a bridge node is gone: its calls end', { nodeId, why, calls, dials: placed.length - calls.length });
    for (const id of placed) {
      await this.placements.dropCallNode(id);
      if (isDialRef(id)) {
        // Its agent hears of it when it asks to bind the placed call (503): no call id to tell yet.
        this.dials.delete(id);
        continue;
      }
      this.lose(id, nodeId, 'node_gone');
      // A node that missed its heartbeats may still run: its calls end there too, if it can be reached.
      if (why === 'expired') void this.options.nodes.control(nodeId)?.endCall(id);
    }
    return calls;
  }

  /**
   * A node says a call's customer leg failed. Unless the service ends the call meanwhile (a hang-up
   * closes the leg as its terminate is on the way), the call is over once the grace has passed.
   */
  customerFailed(callId: string, nodeId: string): void {
    const timer = setTimeout(() => {
      this.graces.delete(timer);
      void this.customerGone(callId, nodeId).catch((error: unknown) => this.log.error('a failed customer leg could not end its call', { callId, nodeId, error }));
    }, this.options.customerFailureGraceMs ?? DEFAULT_CUSTOMER_FAILURE_GRACE_MS);
    timer.unref();
    this.graces.add(timer);
  }

  /** Stops waiting out customer legs' failures (this instance stops serving; the others still watch). */
  stopWaiting(): void {
    for (const timer of this.graces) clearTimeout(timer);
    this.graces.clear();
  }

  /** Ends every call (the relay closes). */
  async close(): Promise<void> {
    this.stopWaiting();
    await Promise.allSettled([...this.calls.keys()].map((callId) => this.ended(callId)));
    this.dials.clear();
  }

  /** Ends calls whose end never came (the relay missed the terminate) and dials never placed; each new call looks first. */
  prune(): void {
    const now = this.now();
    for (const [callId, call] of this.calls) if (now - call.createdAt > CALL_TTL_MS) void this.ended(callId);
    this.forgetStaleDials();
  }

  private async customerGone(callId: string, nodeId: string): Promise<void> {
    // Ended at the service meanwhile (its placement dropped), or never on this node: nothing to end.
    if ((await this.placements.callNode(callId)) !== nodeId) return;
    this.log.warn('a bridged call’s customer leg failed: the call ends', { callId, nodeId });
    await this.placements.dropCallNode(callId);
    const control = this.options.nodes.control(nodeId);
    this.lose(callId, nodeId, 'customer_leg_failed');
    // The node is alive: the agents' legs close now rather than at their media timeout.
    const closed = await control?.endCall(callId);
    if (closed !== undefined && !closed.ok) this.log.debug('the bridge did not end a failed call', { callId, nodeId, reason: closed.error.message });
  }

  /** A call ended at the gateway by the relay: its node lets it go and it is forgotten here (its webhook then finds nothing). */
  private async forget(call: BridgedCall): Promise<void> {
    this.calls.delete(call.callId);
    this.transfers.ended(call);
    this.rejoins.stopCounting(call);
    this.monitors.ended(call);
    await this.placements.dropCallNode(call.callId).catch((error: unknown) => this.log.warn('could not drop a call’s bridge node', { callId: call.callId, error }));
    const closed = await this.controlOf(call)?.endCall(call.callId);
    if (closed !== undefined && !closed.ok) this.log.warn('the bridge could not end a call', { callId: call.callId, reason: closed.error.message });
  }

  /** A call the bridge cannot carry any more: forgotten here, its agents told, and ended at the gateway when the relay can. */
  private lose(callId: string, nodeId: string, reason: BridgeLoss): void {
    const agents = this.participantsOf(callId);
    const call = this.calls.get(callId);
    if (call !== undefined) {
      this.transfers.ended(call);
      this.rejoins.stopCounting(call);
      this.monitors.ended(call);
    }
    this.calls.delete(callId);
    const { terminator } = this.options;
    if (call !== undefined && terminator?.configured === true) void terminator.terminate(callId);
    for (const listener of [...this.lostListeners]) {
      try {
        listener({ callId, nodeId, reason, ...(agents !== undefined ? { agents } : {}) });
      } catch (error) {
        this.log.error('a lost call listener failed', { callId, error });
      }
    }
  }

  /**
   * The least-loaded node takes the call and the team records it there. One pick at a time on this
   * instance: calls that ring together must each see the ones placed before them, or they would all
   * land on the same node.
   */
  private placeOnNode(id: string): Promise<{ picked: { nodeId: string; control: BridgeControl }; placed: CallNodeOutcome } | undefined> {
    const placing = this.picking.then(async () => {
      const picked = await this.options.nodes.pick();
      if (picked === undefined) return undefined;
      return { picked, placed: await this.placements.setCallNode(id, picked.nodeId) };
    });
    this.picking = placing.catch(() => undefined);
    return placing;
  }

  /** A node's answer; one that never came back (its control API cannot be reached) ends every call on that node. */
  private async asked<T>(nodeId: string, request: Promise<Result<T>>): Promise<Result<T>> {
    const answer = await request;
    if (!answer.ok && isUnreachable(answer.error)) await this.nodeGone(nodeId, 'unreachable').catch((error: unknown) => this.log.error('could not end the calls of an unreachable bridge node', { nodeId, error }));
    return answer;
  }

  /** A bridged incoming call that may ring for this agent (nobody's yet, or its own), with its node's control. */
  private async ringingFor(callId: string, agentId: string): Promise<Outcome<{ call: BridgedCall; control: BridgeControl }>> {
    const call = this.calls.get(callId);
    if (call === undefined || call.direction !== 'incoming') return refuse({ status: 404, code: 'not_found', message: `no bridged incoming call ${callId}` });
    const owner = await this.options.ownerOf(callId);
    if (owner !== undefined && owner !== agentId) return refuse(takenRefusal);
    const control = this.controlOf(call);
    return control === undefined ? nodeGoneRefusal(call.callId) : done({ call, control });
  }

  /** Why the call rings for this agent no more (it declined it, or a colleague is in it), if so. */
  private stillRingingFor(call: BridgedCall, agentId: string): BridgeRefusal | undefined {
    if (call.declined.has(agentId)) return { status: 409, code: 'invalid_state', message: 'the agent declined the call' };
    if (call.members.size > 0 && !call.members.has(agentId)) return takenRefusal;
    return undefined;
  }

  private async ownedLeg(callId: string, agentId: string, legId: string): Promise<Outcome<{ call: BridgedCall; control: BridgeControl }>> {
    const call = this.calls.get(callId);
    if (call === undefined) return noCall(callId);
    const owner = await this.options.ownerOf(callId);
    if (owner !== agentId) return refuse({ status: 403, code: 'forbidden', message: 'only the agent who claimed the call answers it' });
    if (call.legs.get(legId) !== agentId) return refuse({ status: 403, code: 'forbidden', message: `legId: not a leg of this agent in this call` });
    const control = this.controlOf(call);
    if (control === undefined) return nodeGoneRefusal(call.callId);
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

  private forgetStaleDials(): void {
    const now = this.now();
    for (const [ref, dial] of this.dials) {
      if (now - dial.createdAt <= DIAL_TTL_MS) continue;
      this.dials.delete(ref);
      void this.placements.dropCallNode(ref).catch((error: unknown) => this.log.warn('could not drop a stale dial’s bridge node', { ref, error }));
      void this.options.nodes.control(dial.nodeId)?.endCall(ref);
    }
  }
}

/** The events of a node in the relay's own process, for `localBridge`: build the node with `onEvent: events.emit`. */
export class LocalNodeEvents {
  private readonly listeners = new Set<(event: BridgeNodeEvent) => void>();

  readonly emit = (event: BridgeNodeEvent): void => {
    for (const listener of [...this.listeners]) listener(event);
  };

  listen(listener: (event: BridgeNodeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** The bridge in the relay's own process (`--bridge`): one node that takes every call, its events told through `events`. */
export function localBridge(control: BridgeControl, nodeId = 'local', events?: LocalNodeEvents): BridgeNodeSource {
  return {
    pick: () => Promise.resolve({ nodeId, control }),
    control: (id) => (id === nodeId ? control : undefined),
    ...(events !== undefined ? { onEvent: (listener: (id: string, event: BridgeNodeEvent) => void) => events.listen((event) => listener(nodeId, event)) } : {}),
  };
}
