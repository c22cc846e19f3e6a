// What the transfer tests share: a BridgeControl that records what the relay asked of it (the node
// itself is tested in test/unit/bridge; here it is the relay's decisions), a team, and BridgedCalls
// with every transfer event it told recorded.
import { expect } from 'vitest';
import { MemoryBackend } from '../../../relay/backend/memory-backend';
import { BridgedCalls, localBridge, type TransferEvent } from '../../../relay/bridged-calls';
import type { Presence } from '../../../relay/backend/types';
import type { TeamAgent } from '../../../relay/team';
import { CUSTOMER, HOLD_MUSIC, type BridgeControl, type BridgedCallReport, type Routes } from '../../../shared/bridge';
import type { TransferRingEvent, TransferUpdateEvent } from '../../../shared/events';
import type { MonitorEvent } from '../../../relay/monitors';
import type { Logger } from '../../../shared/log';
import { err, ok, type Result } from '../../../shared/result';

export const quietLogger: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** A description the recording node refuses, as a node refuses a window's bad answer. */
export const BAD_SDP = 'v=0 not a description';

/** A node that answers every command at once and records what it was asked. */
export class RecordingBridge implements BridgeControl {
  /** The routes in force per call: the last set. */
  readonly routes = new Map<string, Routes>();
  readonly offered: string[] = [];
  readonly answers = new Map<string, string>();
  readonly closed: string[] = [];
  readonly endedCalls: string[] = [];
  readonly released: string[] = [];
  /** How many of the next leg offers fail (the node cannot make the leg). */
  failOffers = 0;
  /** Each recording start and stop asked, in order: `start:<callId>:<notice samples>` or `stop:<callId>`. */
  readonly recordingAsks: string[] = [];
  /** What the next recording starts and stops answer instead of doing it, one each (a node not ready, a call it lost). */
  readonly recordingRefusals: { code: 'invalid_state' | 'not_found' | 'media_failed'; message: string }[] = [];

  prepareIncoming(callId: string): Promise<Result<{ answer: string }>> {
    return Promise.resolve(ok({ answer: `customer-answer-${callId}` }));
  }
  connectCustomer(): Promise<Result<null>> {
    return Promise.resolve(ok(null));
  }
  prepareOutgoing(ref: string): Promise<Result<{ offer: string }>> {
    return Promise.resolve(ok({ offer: `customer-offer-${ref}` }));
  }
  bindOutgoing(): Promise<Result<null>> {
    return Promise.resolve(ok(null));
  }
  applyCustomerAnswer(): Promise<Result<null>> {
    return Promise.resolve(ok(null));
  }
  offerAgentLeg(_callId: string, legId: string): Promise<Result<{ offer: string }>> {
    if (this.failOffers > 0) {
      this.failOffers -= 1;
      return Promise.resolve(err('media_failed', 'no port left for a leg'));
    }
    this.offered.push(legId);
    return Promise.resolve(ok({ offer: `offer-${legId}` }));
  }
  applyAgentAnswer(_callId: string, legId: string, answer: string): Promise<Result<null>> {
    if (answer === BAD_SDP) return Promise.resolve(err('invalid_input', 'sdp: the answer has no fingerprint', { field: 'sdp' }));
    this.answers.set(legId, answer);
    return Promise.resolve(ok(null));
  }
  answerAgentLeg(_callId: string, legId: string): Promise<Result<{ answer: string }>> {
    return Promise.resolve(ok({ answer: `answer-${legId}` }));
  }
  setRoutes(callId: string, routes: Routes): Promise<Result<null>> {
    this.routes.set(callId, structuredClone(routes));
    return Promise.resolve(ok(null));
  }
  closeAgentLeg(_callId: string, legId: string): Promise<Result<null>> {
    this.closed.push(legId);
    return Promise.resolve(ok(null));
  }
  endCall(callId: string): Promise<Result<null>> {
    this.endedCalls.push(callId);
    return Promise.resolve(ok(null));
  }
  releaseCustomer(callId: string): Promise<Result<null>> {
    this.released.push(callId);
    return Promise.resolve(ok(null));
  }
  report(callId: string): Promise<Result<BridgedCallReport>> {
    return Promise.resolve(ok({ callId, customer: { state: 'connected', packetsReceived: 10, packetsLost: 0 }, agents: {}, routes: this.routes.get(callId) ?? {} }));
  }
  startRecording(callId: string, notice?: Int16Array): Promise<Result<null>> {
    return this.recordingAsked(`start:${callId}:${notice?.length ?? 0}`);
  }
  stopRecording(callId: string): Promise<Result<null>> {
    return this.recordingAsked(`stop:${callId}`);
  }
  private recordingAsked(ask: string): Promise<Result<null>> {
    const refusal = this.recordingRefusals.shift();
    if (refusal !== undefined) return Promise.resolve(err(refusal.code, refusal.message));
    this.recordingAsks.push(ask);
    return Promise.resolve(ok(null));
  }
}

export function agent(agentId: string, options: { presence?: Presence; connected?: boolean } = {}): TeamAgent {
  return { agentId, name: `${agentId[0]!.toUpperCase()}${agentId.slice(1)} Agent`, presence: options.presence, connected: options.connected ?? true };
}

export interface Told {
  agentId: string;
  event: TransferEvent;
}

export const CALLER = { from: '447700900123', name: 'Ada Customer' };

/** BridgedCalls on a recording node, a team (alice, bob and carol available, dave offline), and what it told. */
export class TransferHarness {
  readonly control = new RecordingBridge();
  readonly team: TeamAgent[] = [agent('alice'), agent('bob'), agent('carol'), agent('dave', { connected: false })];
  readonly told: Told[] = [];
  /** Every supervisor's event told, with the agents it was told to. */
  readonly monitorTold: { event: MonitorEvent; agentIds: string[] }[] = [];
  readonly calls: BridgedCalls;
  /** Every leg the test knows → the agent it belongs to. */
  private readonly legOwners = new Map<string, string>();
  private readonly owners = new Map<string, string>();

  constructor(options: { ringMs?: number; tellAgentsWhenMonitored?: boolean } = {}) {
    this.calls = new BridgedCalls({
      nodes: localBridge(this.control),
      placements: new MemoryBackend({ retentionMs: 600_000, dedupWindowMs: 600_000 }),
      ownerOf: (callId) => Promise.resolve(this.owners.get(callId)),
      team: () => this.team,
      logger: quietLogger,
      ...(options.ringMs !== undefined ? { transferRingMs: options.ringMs } : {}),
      ...(options.tellAgentsWhenMonitored !== undefined ? { tellAgentsWhenMonitored: options.tellAgentsWhenMonitored } : {}),
    });
    this.calls.monitors.onEvent((event, agentIds) => this.monitorTold.push({ event, agentIds }));
    this.calls.onTransferEvent((event, agentId) => {
      this.told.push({ agentId, event });
      if (event.type === 'call.transfer_ring') this.legOwners.set(event.legId, agentId);
    });
  }

  /** An incoming call rung, claimed, answered and accepted by `agentId`: it alone is in it. */
  async answeredCall(callId: string, agentId: string): Promise<string> {
    expect(await this.calls.takeIncoming(callId, 'service-offer', CALLER)).toBe('taken');
    const leg = await this.calls.legFor(callId, agentId);
    if (!leg.ok) throw new Error(leg.refusal.message);
    this.owners.set(callId, agentId);
    const answered = await this.calls.answer(callId, agentId, leg.value.legId, `window-answer-${agentId}`);
    if (!answered.ok) throw new Error(answered.refusal.message);
    const accepted = await this.calls.accepted(callId, agentId);
    if (!accepted.ok) throw new Error(accepted.refusal.message);
    this.legOwners.set(leg.value.legId, agentId);
    return leg.value.legId;
  }

  /** `agentId` wins the call's claim. */
  claim(callId: string, agentId: string): void {
    this.owners.set(callId, agentId);
  }

  /** A call `agentId` dialled, placed by the gateway. */
  async dialledCall(callId: string, agentId: string): Promise<string> {
    const dial = await this.calls.dial(agentId, 'window-offer');
    if (!dial.ok) throw new Error(dial.refusal.message);
    const placed = await this.calls.placed(dial.value.ref, agentId, callId);
    if (!placed.ok) throw new Error(placed.refusal.message);
    this.owners.set(callId, agentId);
    this.legOwners.set(dial.value.legId, agentId);
    return dial.value.legId;
  }

  /** The routes in force on the node, each leg named by its agent. */
  routes(callId: string): Record<string, string[]> | undefined {
    const routes = this.control.routes.get(callId);
    if (routes === undefined) return undefined;
    const name = (p: string) => (p === CUSTOMER || p === HOLD_MUSIC ? p : (this.legOwners.get(p) ?? p));
    return Object.fromEntries(Object.entries(routes).map(([listener, heard]) => [name(listener), heard.map(name)]));
  }

  /** The leg the latest ring gave `agentId`. */
  ringOf(agentId: string): TransferRingEvent {
    const ring = this.told.filter((t) => t.agentId === agentId && t.event.type === 'call.transfer_ring').at(-1)?.event;
    if (ring?.type !== 'call.transfer_ring') throw new Error(`no ring for ${agentId}`);
    return ring;
  }

  /** The updates told to `agentId`, as `state` or `state:colleague` or `state:colleague:reason`. */
  updatesOf(agentId: string): string[] {
    return this.told.flatMap(({ agentId: to, event }) => (to === agentId && event.type === 'call.transfer_update' ? [wordsOf(event)] : []));
  }

  /** Names a leg the test was given otherwise (a supervisor's) after its owner, in routes() and closedLegs(). */
  nameLeg(legId: string, agentId: string): void {
    this.legOwners.set(legId, agentId);
  }

  legOwner(legId: string): string | undefined {
    return this.legOwners.get(legId);
  }

  /** Colleague `agentId` answers its ring with its window's answer. */
  answerRing(callId: string, transferId: string, agentId: string, sdp = `window-answer-${agentId}`) {
    return this.calls.answerTransfer(callId, transferId, agentId, this.ringOf(agentId).legId, sdp);
  }

  /** The legs closed, each named by its agent. */
  closedLegs(): string[] {
    return this.control.closed.map((legId) => this.legOwners.get(legId) ?? legId);
  }
}

export function wordsOf(event: TransferUpdateEvent): string {
  return [event.state, event.colleague?.agentId, event.reason].filter((w) => w !== undefined).join(':');
}
