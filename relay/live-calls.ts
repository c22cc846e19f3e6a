// GET /team/calls (relay/REFERENCE.md "Supervisors", shared/supervision.ts): every live call of the
// team as a supervisor sees it. The picture is read off the events the team's backend stores, which
// every instance's subscription hands it in the same order: a call rings (`call.incoming`), is
// claimed, answered, handed on (`call.transfer_update`), joined by supervisors (`call.monitor`, as
// the supervisor itself is told it), recorded (`call.recording`) and ended, whichever instance took
// the webhook or held the call.
// Holds are no events: the backend keeps which calls are on hold (a direct call's as its agent's app
// reports it, PUT /calls/{id}/hold; a bridged call's as its bridge took it), so that every instance
// shows them too. The instance that holds a bridged call adds what only it knows exactly (its
// members, its hold, its transfer, whether it records, the customer leg's quality from its node).
import type { LegReport } from '../shared/bridge';
import { customerLegSample, type CustomerLegReading } from '../shared/bridged-quality';
import { mos, sampleFigures } from '../shared/call-quality';
import type { RelayEvent } from '../shared/events';
import type { LiveCall, LiveCalls, LiveCallState, MonitorMode } from '../shared/supervision';
import type { Audience, StoredEvent } from './backend/types';
import { BoundedSet } from './bounded-set';
import type { BridgedCallView } from './monitors';

/** A call nobody answered is lost rather than ringing after this long (the service gives up after a minute). */
export const UNANSWERED_KEPT_MS = 5 * 60_000;
/** A call whose end never came is forgotten after this long (the relay missed its terminate). */
export const CALL_KEPT_MS = 12 * 60 * 60_000;
/** The live calls followed at most (LiveCalls' bound). */
const MAX_CALLS = 10_000;
/** How long an outgoing call found on no bridge node is taken as direct before the backend is asked again. */
const NOT_PLACED_KEPT_MS = 5_000;
/** Ended calls remembered, so that a late status does not bring one back. */
const ENDED_KEPT = 20_000;

interface TrackedCall {
  callId: string;
  direction: 'incoming' | 'outgoing';
  customer: { number?: string; name?: string };
  startedAt: number;
  answeredAt?: number;
  /** The agents in the call, as its claim and its transfers' outcomes say. */
  agents: string[];
  /** Transfers under way: transfer id → the agent who started it. */
  transfers: Map<string, string>;
  /** Its media goes through the team's bridge, as far as the events say (an incoming call's ring does). */
  bridged: boolean;
  /** The supervisors joined to it, as each is told its own join: supervisor id → its name and mode. */
  monitors: Map<string, { name: string; mode: MonitorMode }>;
  /** The team's bridge records it now, as its last `call.recording` said. */
  recording: boolean;
}

/** What the events say of the team's live calls; one per instance, fed every stored event in stored order. */
export class LiveCallsTracker {
  private readonly calls = new Map<string, TrackedCall>();
  private readonly ended = new BoundedSet(ENDED_KEPT);
  /** Each joined supervisor's call: a supervisor in a call is busy for the calls that ring. */
  private readonly joined = new Map<string, string>();

  observe(stored: StoredEvent): void {
    const { event, receivedAt, audience } = stored;
    if (!('callId' in event) || this.ended.has(event.callId)) return;
    switch (event.type) {
      case 'call.incoming': {
        if (this.calls.has(event.callId)) return;
        this.track({
          callId: event.callId,
          direction: 'incoming',
          customer: { ...(event.from !== undefined ? { number: event.from } : {}), ...(event.name !== undefined ? { name: event.name } : {}) },
          startedAt: receivedAt,
          agents: [],
          transfers: new Map(),
          bridged: event.bridged === true,
          monitors: new Map(),
          recording: false,
        });
        return;
      }
      case 'call.claimed': {
        const call = this.callOf(event.callId, receivedAt);
        if (call.agents.length === 0) call.agents = [event.agentId];
        // An incoming call is answered by its claim: the accept follows at once.
        if (call.direction === 'incoming') call.answeredAt ??= receivedAt;
        return;
      }
      case 'call.status': {
        if (event.status === 'REJECTED') return;
        const call = this.callOf(event.callId, receivedAt);
        if (event.recipientId !== undefined) call.customer.number ??= event.recipientId;
        if (event.status === 'ACCEPTED') call.answeredAt ??= receivedAt;
        return;
      }
      case 'call.answered':
        this.callOf(event.callId, receivedAt).answeredAt ??= receivedAt;
        return;
      case 'call.terminated':
        return this.end(event.callId);
      case 'call.bridge_failed': {
        if (event.goesOn !== true) return this.end(event.callId);
        // One agent not back while colleagues keep the call: that agent is out of it.
        const call = this.calls.get(event.callId);
        if (call !== undefined && audience.kind === 'agent') call.agents = call.agents.filter((agentId) => agentId !== audience.agentId);
        return;
      }
      case 'call.transfer_update':
        return this.transferred(event);
      case 'call.monitor':
        return this.monitored(event, audience);
      case 'call.recording': {
        // Each change is told to everyone in the call, and again to one who joins: any of them says how it stands.
        const call = this.calls.get(event.callId);
        if (call !== undefined) call.recording = event.recording;
        return;
      }
      case 'call.transfer_ring':
      case 'call.capture_available':
        return;
    }
  }

  /** The call, if it is live. */
  get(callId: string): Readonly<TrackedCall> | undefined {
    return this.calls.get(callId);
  }

  /** Marks what the relay learnt otherwise: the call's media goes through the bridge. */
  markBridged(callId: string): void {
    const call = this.calls.get(callId);
    if (call !== undefined) call.bridged = true;
  }

  /** The call a supervisor is joined to, if any. */
  joinedCall(supervisorId: string): string | undefined {
    return this.joined.get(supervisorId);
  }

  /** The live calls now, the longest-running first; calls lost without word of their end are forgotten. */
  live(now: number): Readonly<TrackedCall>[] {
    for (const call of [...this.calls.values()]) {
      const answered = call.answeredAt !== undefined || call.agents.length > 0;
      if (now - call.startedAt > CALL_KEPT_MS || (!answered && now - call.startedAt > UNANSWERED_KEPT_MS)) this.forget(call.callId);
    }
    return [...this.calls.values()].sort((a, b) => a.startedAt - b.startedAt || (a.callId < b.callId ? -1 : 1));
  }

  private callOf(callId: string, at: number): TrackedCall {
    const known = this.calls.get(callId);
    if (known !== undefined) return known;
    // A call this instance never saw ring: the app's own outgoing call (claimed right after it is placed).
    const call: TrackedCall = { callId, direction: 'outgoing', customer: {}, startedAt: at, agents: [], transfers: new Map(), bridged: false, monitors: new Map(), recording: false };
    this.track(call);
    return call;
  }

  private track(call: TrackedCall): void {
    this.calls.set(call.callId, call);
    if (this.calls.size <= MAX_CALLS) return;
    const oldest = this.calls.keys().next();
    if (!oldest.done) this.forget(oldest.value);
  }

  private end(callId: string): void {
    this.ended.add(callId);
    this.forget(callId);
  }

  private forget(callId: string): void {
    const call = this.calls.get(callId);
    this.calls.delete(callId);
    if (call === undefined) return;
    for (const supervisorId of call.monitors.keys()) if (this.joined.get(supervisorId) === callId) this.joined.delete(supervisorId);
  }

  /** Who is in the call after a transfer's step, from the words told to the agents concerned. */
  private transferred(event: Extract<RelayEvent, { type: 'call.transfer_update' }>): void {
    const call = this.calls.get(event.callId);
    if (call === undefined) return;
    const colleague = event.colleague?.agentId;
    const starter = call.transfers.get(event.transferId);
    switch (event.state) {
      case 'ringing':
        call.transfers.set(event.transferId, event.agentId);
        return;
      case 'consulting':
        if (colleague !== undefined && !call.agents.includes(colleague)) call.agents = [...call.agents, colleague];
        return;
      case 'transferred':
        if (colleague !== undefined) call.agents = [colleague];
        call.transfers.delete(event.transferId);
        return;
      case 'joined':
        call.agents = [...new Set([...call.agents, event.agentId, ...(colleague !== undefined ? [colleague] : [])])];
        call.transfers.delete(event.transferId);
        return;
      case 'with_customer':
        call.agents = [event.agentId];
        call.transfers.delete(event.transferId);
        return;
      case 'not_answered':
        call.transfers.delete(event.transferId);
        return;
      case 'cancelled':
        // The agent who started it is back with the customer; a colleague told is out of it.
        if (starter === event.agentId) {
          call.agents = [event.agentId];
          call.transfers.delete(event.transferId);
        } else {
          call.agents = call.agents.filter((agentId) => agentId !== event.agentId);
        }
        return;
      case 'answered_elsewhere':
        return;
    }
  }

  /** A supervisor's own word of its join (the agents' may leave a listen out): the truth of who is in the call. */
  private monitored(event: Extract<RelayEvent, { type: 'call.monitor' }>, audience: Audience): void {
    if (!isFor(audience, event.supervisorId)) return;
    const call = this.calls.get(event.callId);
    if (event.mode === 'left') {
      call?.monitors.delete(event.supervisorId);
      if (this.joined.get(event.supervisorId) === event.callId) this.joined.delete(event.supervisorId);
      return;
    }
    if (call === undefined) return;
    call.monitors.set(event.supervisorId, { name: event.name, mode: event.mode });
    this.joined.set(event.supervisorId, event.callId);
  }
}

function isFor(audience: Audience, agentId: string): boolean {
  if (audience.kind === 'agent') return audience.agentId === agentId;
  if (audience.kind === 'agents') return audience.agentIds.includes(agentId);
  return false;
}

export interface LiveCallsOptions {
  tracker: LiveCallsTracker;
  /** An agent's name as the team knows it now. */
  nameOf(agentId: string): string;
  /** The bridged call as the instance that holds it knows it; undefined when it does not hold it. */
  bridgedView?(callId: string): BridgedCallView | undefined;
  /** Whether the team's bridge records the call now, for a call this instance holds (CallRecordings). */
  isRecording?(callId: string): boolean;
  /** The customer leg's report from the call's node, when this instance holds the call. */
  customerReport?(callId: string): Promise<LegReport | undefined>;
  /** Which of these calls are on hold now (the backend's, across instances). */
  heldCalls?(callIds: readonly string[]): Promise<Set<string>>;
  /** Whether the call was placed on a bridge node (the backend's placements, across instances). */
  placedOnNode?(callId: string): Promise<boolean>;
  now?: () => number;
  /** How long one reading of a call's customer leg serves. Default 1 s. */
  reportCacheMs?: number;
  /** A node that does not answer within this leaves the call's quality out of this answer. Default 1 s. */
  reportTimeoutMs?: number;
}

interface QualityReading {
  /** When it was asked for. */
  at: number;
  reading?: CustomerLegReading;
  previous?: CustomerLegReading;
}

/** The answer of GET /team/calls, from the tracker, this instance's bridged calls and their nodes. */
export class LiveCallsSource {
  private readonly now: () => number;
  private readonly readings = new Map<string, QualityReading>();
  private readonly asking = new Map<string, Promise<QualityReading>>();
  /** Outgoing calls found on no node, and until when that answer serves (a dial is bound to its call just after it is placed). */
  private readonly notPlaced = new Map<string, number>();

  constructor(private readonly o: LiveCallsOptions) {
    this.now = o.now ?? Date.now;
  }

  async liveCalls(): Promise<LiveCalls> {
    const at = this.now();
    const tracked = this.o.tracker.live(at);
    for (const callId of this.readings.keys()) if (this.o.tracker.get(callId) === undefined) this.readings.delete(callId);
    for (const [callId, until] of this.notPlaced) if (until <= at || this.o.tracker.get(callId) === undefined) this.notPlaced.delete(callId);
    const held = (await this.o.heldCalls?.(tracked.map((call) => call.callId)).catch(() => undefined)) ?? new Set<string>();
    const calls = await Promise.all(tracked.map((call) => this.liveCall(call, held.has(call.callId))));
    return { at, calls };
  }

  private async liveCall(call: Readonly<TrackedCall>, onHold: boolean): Promise<LiveCall> {
    const view = this.o.bridgedView?.(call.callId);
    const bridged = call.bridged || view !== undefined || (call.direction === 'outgoing' && (await this.placed(call.callId)));
    const agents = view?.agents ?? call.agents;
    const answered = call.direction === 'incoming' ? agents.length > 0 : call.answeredAt !== undefined;
    const transferring = view?.transferring ?? call.transfers.size > 0;
    const held = view?.held ?? onHold;
    const state: LiveCallState = !answered ? 'ringing' : transferring ? 'transferring' : held ? 'on_hold' : 'talking';
    const monitors = view?.monitors ?? [...call.monitors].map(([supervisorId, { name, mode }]) => ({ supervisorId, name, mode }));
    const recording = view !== undefined && this.o.isRecording !== undefined ? this.o.isRecording(call.callId) : call.recording;
    const quality = bridged && answered && view !== undefined ? await this.quality(call.callId) : undefined;
    return {
      callId: call.callId,
      direction: call.direction,
      customer: { ...call.customer },
      agents: agents.map((agentId) => ({ id: agentId, name: this.o.nameOf(agentId) })),
      state,
      startedAt: call.startedAt,
      ...(answered && call.answeredAt !== undefined ? { answeredAt: call.answeredAt } : {}),
      bridged,
      ...(quality !== undefined ? { quality } : {}),
      ...(recording ? { recording: true } : {}),
      monitors: monitors.map(({ supervisorId, name, mode }) => ({ id: supervisorId, name, mode })),
    };
  }

  /**
   * An outgoing call of another instance's: its placement says whether it is bridged; once it is, it
   * stays so, and a call on no node is asked again only after NOT_PLACED_KEPT_MS.
   */
  private async placed(callId: string): Promise<boolean> {
    if (this.o.placedOnNode === undefined || this.notPlaced.has(callId)) return false;
    const placed = await this.o.placedOnNode(callId).catch(() => false);
    if (placed) this.o.tracker.markBridged(callId);
    else this.notPlaced.set(callId, this.now() + NOT_PLACED_KEPT_MS);
    return placed;
  }

  /** The customer leg's quality, from a reading at most `reportCacheMs` old however many supervisors ask; one reading at a time per call. */
  private async quality(callId: string): Promise<LiveCall['quality']> {
    const now = this.now();
    const last = this.readings.get(callId);
    const fresh = last !== undefined && now - last.at < (this.o.reportCacheMs ?? 1_000) ? last : await this.read(callId, last, now);
    return fresh.reading === undefined ? undefined : qualityOf(fresh.reading, fresh.previous);
  }

  private read(callId: string, last: QualityReading | undefined, now: number): Promise<QualityReading> {
    const asking = this.asking.get(callId);
    if (asking !== undefined) return asking;
    const reading = (async (): Promise<QualityReading> => {
      const report = await withTimeout(this.o.customerReport?.(callId) ?? Promise.resolve(undefined), this.o.reportTimeoutMs ?? 1_000);
      const next: QualityReading = report === undefined ? { at: now } : { at: now, reading: { at: now, report }, ...(last?.reading !== undefined ? { previous: last.reading } : {}) };
      // A reading that failed keeps the last good one for the next interval's loss.
      this.readings.set(callId, report === undefined && last !== undefined ? { ...last, at: now } : next);
      return next;
    })().finally(() => this.asking.delete(callId));
    this.asking.set(callId, reading);
    return reading;
  }
}

/**
 * The customer leg's quality over the interval since the reading before (from the leg's start for
 * the first): its loss, its jitter, and the E-model's MOS of them and the round trip
 * (shared/call-quality.ts `mos`); a figure the node has not measured yet counts as none. Undefined
 * until the leg is connected and has carried packets.
 */
export function qualityOf(reading: CustomerLegReading, previous: CustomerLegReading | undefined): LiveCall['quality'] {
  if (reading.report.state !== 'connected') return undefined;
  const { rttMs, jitterMs, lossPercent } = sampleFigures(customerLegSample(reading, previous));
  if (jitterMs === undefined && lossPercent === undefined) return undefined;
  const score = mos(rttMs ?? 0, jitterMs ?? 0, lossPercent ?? 0);
  if (Number.isNaN(score)) return undefined;
  return {
    mos: Math.round(score * 10) / 10,
    ...(lossPercent !== undefined ? { lossPercent: Math.round(lossPercent * 10) / 10 } : {}),
    ...(jitterMs !== undefined ? { jitterMs: Math.round(jitterMs) } : {}),
  };
}

async function withTimeout<T>(work: Promise<T | undefined>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work.catch(() => undefined), new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
