// The relay's record of one bridged call (bridged-calls.ts, transfers.ts, monitors.ts): its legs, the
// agents in it, its transfer, the supervisors joined to it, and who hears whom as a pure function of
// them (bridge/REFERENCE.md "Transfers", relay/REFERENCE.md "Supervisors"). Also the answers an
// agent's bridge request gets, shared by all.
import { randomBytes } from 'node:crypto';
import { CUSTOMER, HOLD_MUSIC, type Routes } from '../shared/bridge';
import type { AppError, Result } from '../shared/result';
import type { MonitorMode } from '../shared/supervision';
import type { TransferKind } from '../shared/transfer';

/** Why an agent's bridge request was refused, as the HTTP status and relay code it is answered with. */
export type BridgeRefusal =
  | { status: 400; code: 'invalid_input'; message: string; field: string }
  | { status: 403; code: 'forbidden'; message: string }
  | { status: 404; code: 'not_found'; message: string; field?: string }
  | { status: 410; code: 'call_ended'; message: string }
  | { status: 409; code: 'invalid_state' | 'already_claimed'; message: string }
  | { status: 502; code: 'bridge_failed'; message: string; field?: string }
  | { status: 503; code: 'unavailable'; message: string };

export type Outcome<T> = { ok: true; value: T } | { ok: false; refusal: BridgeRefusal };
export const refuse = <T>(refusal: BridgeRefusal): Outcome<T> => ({ ok: false, refusal });
export const done = <T>(value: T): Outcome<T> => ({ ok: true, value });

export const newId = (prefix: string): string => `${prefix}${randomBytes(9).toString('base64url').replace(/[^A-Za-z0-9]/g, 'x')}`;

/** The node refused: bad SDP from the window (`field` names it) is the window's to fix (400); anything else is the node's failure. */
export function bridgeFailed<T>(error: AppError, field?: string): Outcome<T> {
  if (field !== undefined && error.code === 'invalid_input') return refuse({ status: 400, code: 'invalid_input', message: error.message, field });
  return refuse({ status: 502, code: 'bridge_failed', message: error.message });
}

export function nodeGoneRefusal<T>(callId: string): Outcome<T> {
  return refuse({ status: 503, code: 'unavailable', message: `the bridge node of call ${callId} is gone` });
}

export function noCall<T>(callId: string): Outcome<T> {
  return refuse({ status: 404, code: 'not_found', message: `no bridged call ${callId}` });
}

/** The relay ended the call at the gateway itself (a node gone, its agent not back): nothing is owed there. */
export function endedAtGatewayRefusal<T>(callId: string): Outcome<T> {
  return refuse({ status: 410, code: 'call_ended', message: `call ${callId} was ended at the gateway by the relay` });
}

/** The customer as the call's ring named them (`call.incoming`), carried on to a transfer's ring. */
export interface Caller {
  from?: string;
  fromUserId?: string;
  name?: string;
}

/**
 * Where a transfer stands: its colleagues ring (until answered, declined by all, cancelled or
 * TRANSFER_RING_MS), a consult's two agents talk, or it is over (answered as a transfer, completed,
 * joined, cancelled or not answered).
 */
export type TransferPhase = { kind: 'ringing'; timer: NodeJS.Timeout } | { kind: 'consulting' } | { kind: 'over' };

export interface Transfer {
  transferId: string;
  kind: TransferKind;
  /** The agent who started it. */
  by: string;
  /** A colleague the agent named (told back in `ringing`), rather than everyone available. */
  named: boolean;
  /** Every colleague rung → its leg. */
  rung: Map<string, string>;
  /** The colleagues who declined. */
  declined: Set<string>;
  /** The colleague who answered first. */
  answeredBy?: string;
  phase: TransferPhase;
}

/**
 * A rejoining member's new leg: offered by the node and waiting for the window's answer, or answered
 * (the member's leg in the call from then on, routed) and waiting for its connection, which alone
 * brings the member back.
 */
export type RejoinLeg = { kind: 'offered'; legId: string } | { kind: 'answered'; legId: string };

/**
 * A member whose leg went (a reload, a crash, a network change) and who has until `since` plus the
 * rejoin window to connect a new leg (rejoins.ts); its colleagues and the customer go on without it.
 */
export interface Away {
  /** When its media went (unix ms): the window counts from here, however often it asks again. */
  since: number;
  timer: NodeJS.Timeout;
  /** The new leg last offered, or answered and not connected yet. */
  leg?: RejoinLeg;
}

/**
 * A supervisor's leg of the call (monitors.ts): offered by the node and waiting for the window's
 * answer (heard by nobody, hearing nothing), or connected and routed as its mode says.
 */
export type MonitorLeg = { kind: 'offered'; offer: string; timer: NodeJS.Timeout } | { kind: 'connected'; offer: string };

/** A supervisor joined to the call: "Listen", "Whisper" or "Barge" (shared/supervision.ts). */
export interface Monitor {
  legId: string;
  mode: MonitorMode;
  /** The supervisor's name as it joined, for what the agents are told. */
  name: string;
  leg: MonitorLeg;
}

export interface BridgedCall {
  callId: string;
  nodeId: string;
  direction: 'incoming' | 'outgoing';
  /** The customer leg's answer (incoming) once the node made it. */
  customerSdp?: Promise<Result<{ answer: string }>>;
  /** The agents' legs of an incoming call while it rings: leg id → the agent it belongs to. */
  legs: Map<string, string>;
  /** The agents who declined the call while it rang (incoming): their legs closed, and they get no other. */
  declined: Set<string>;
  /** The leg that answered the customer (incoming), before the accept connects it. */
  activeLeg?: string;
  /** The agents in the call (a connected leg each, set at the accept or the placing): agent id → leg id. */
  members: Map<string, string>;
  /** The customer hears the hold music (only with one agent in the call and no transfer). */
  held: boolean;
  /** The transfer under way (ringing or consulting). */
  transfer?: Transfer;
  /** Every transfer of the call by id, over ones too: a late answer is told what became of it. */
  transfers: Map<string, Transfer>;
  /** Every agent ever in the call or rung for it by a transfer. */
  everyone: Set<string>;
  /** The members whose leg went, until they rejoin or their window is over: agent id → away. */
  away: Map<string, Away>;
  /** Legs offered for a rejoin that the call moved on from unanswered: closed with the next legs closed. */
  strayLegs: string[];
  /**
   * The customer was let go (releaseCustomer): no agent came back and the relay could not end the
   * call at the gateway. Kept until the service ends it; a rejoin is refused (410).
   */
  released?: true;
  /** The supervisors joined to the call: supervisor id → its leg and mode. Never members. */
  monitors: Map<string, Monitor>;
  caller: Caller;
  createdAt: number;
}

/** The agent is in the call with this leg; whatever kept it away is over. */
export function joinCall(call: BridgedCall, agentId: string, legId: string): void {
  call.members.set(agentId, legId);
  notAway(call, agentId);
}

/** The agent is no longer in the call (it left, handed it on, or was not back in time): no window counts for it. */
export function leaveCall(call: BridgedCall, agentId: string): void {
  call.members.delete(agentId);
  notAway(call, agentId);
}

function notAway(call: BridgedCall, agentId: string): void {
  const away = call.away.get(agentId);
  if (away === undefined) return;
  clearTimeout(away.timer);
  call.away.delete(agentId);
  if (away.leg?.kind === 'offered') call.strayLegs.push(away.leg.legId);
}

/**
 * Whether the agent is on the call: one of its members, or, between its answer and the accept that
 * connects it, the agent whose leg answered it (its window is connected already).
 */
export function isOnCall(call: BridgedCall, agentId: string): boolean {
  if (call.members.size > 0) return call.members.has(agentId);
  return call.activeLeg !== undefined && call.legs.get(call.activeLeg) === agentId;
}

/**
 * Who hears whom (bridge/REFERENCE.md "Transfers"): nobody in the call yet (or every member away), or colleagues ringing,
 * the customer hears the music; a consult's agents hear each other while the customer hears the
 * music; one agent hears the customer (or nothing while the customer is held); two or more agents
 * and no transfer — a three-way call — everyone hears everyone else.
 *
 * Supervisors whose legs are connected (relay/REFERENCE.md "Supervisors") add to that whatever the
 * phase: each hears the customer, the hold music when the customer hears it, every agent in the call
 * and the other barging supervisors, never a whisper; a listening one is heard by nobody, a
 * whispering one by every agent and never by the customer (so never in a recording, whose customer
 * channel is what the customer hears), a barging one by the customer and every agent. A change of
 * mode is a change of routes alone.
 */
export function routesOf(call: BridgedCall): Routes {
  // A member away is heard by nobody and hears nothing until its new leg is answered (routed then,
  // so that media flows as soon as it connects).
  const legs = [...call.members].filter(([agentId]) => isRouted(call, agentId)).map(([, legId]) => legId);
  const agents = agentRoutesOf(call, legs);
  const monitors = [...call.monitors.values()].filter((monitor) => monitor.leg.kind === 'connected');
  if (monitors.length === 0) return agents;
  const whispering = monitors.filter((monitor) => monitor.mode !== 'listen').map((monitor) => monitor.legId);
  const barging = monitors.filter((monitor) => monitor.mode === 'barge').map((monitor) => monitor.legId);
  const customerHears = agents[CUSTOMER] ?? [];
  const music = customerHears.includes(HOLD_MUSIC) ? [HOLD_MUSIC] : [];
  const routes: Routes = { [CUSTOMER]: [...customerHears, ...barging] };
  for (const leg of legs) routes[leg] = [...(agents[leg] ?? []), ...whispering];
  for (const { legId } of monitors) routes[legId] = [CUSTOMER, ...music, ...legs, ...barging.filter((other) => other !== legId)];
  return routes;
}

function isRouted(call: BridgedCall, agentId: string): boolean {
  const away = call.away.get(agentId);
  return away === undefined || away.leg?.kind === 'answered';
}

/** Who hears whom among the customer and the call's agents (legs not away). */
function agentRoutesOf(call: BridgedCall, legs: readonly string[]): Routes {
  const phase = call.transfer?.phase.kind;
  const first = legs[0];
  if (first === undefined) return { [CUSTOMER]: [HOLD_MUSIC] };
  if (phase === 'ringing') return { [CUSTOMER]: [HOLD_MUSIC], ...Object.fromEntries(legs.map((leg) => [leg, []])) };
  if (phase === 'consulting') return { [CUSTOMER]: [HOLD_MUSIC], ...Object.fromEntries(legs.map((leg) => [leg, legs.filter((other) => other !== leg)])) };
  if (legs.length === 1) return call.held ? { [CUSTOMER]: [HOLD_MUSIC], [first]: [] } : { [CUSTOMER]: [first], [first]: [CUSTOMER] };
  return { [CUSTOMER]: [...legs], ...Object.fromEntries(legs.map((leg) => [leg, [CUSTOMER, ...legs.filter((other) => other !== leg)]])) };
}
