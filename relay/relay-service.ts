// The relay's work behind its HTTP endpoints (relay/README.md): stores each normalised event once
// through the backend with the audience routing.ts decides, fans every stored event out to this
// instance's agent sessions, and takes claims, declines and presence. It holds the state; routing.ts
// makes the decisions; server.ts speaks HTTP.
import type { ServerResponse } from 'node:http';
import type { TeamInfo } from '../shared/api';
import { STALE_CONNECT_MS } from '../shared/call-state';
import type { CallbackRequest } from '../shared/callbacks';
import type { RelayEnvelope, RelayEvent } from '../shared/events';
import type { Logger } from '../shared/log';
import type { TeamReply } from '../shared/transfer';
import { normaliseWebhookDetailed } from '../shared/webhook';
import { AgentDirectory, legacyAgents, type Agent, type AgentConfig } from './agent-directory';
import { BridgeNodeRegistry } from './bridge-nodes';
import { SessionHub } from './agent-sessions';
import {
  envelopeOf,
  type Audience,
  type ClaimOutcome,
  type Presence,
  type PresenceState,
  type RelayBackend,
  type ReportedPresence,
  type StoredEvent,
  type TakeCallbackOutcome,
  type TakenCallback,
} from './backend/types';
import type { BridgedCalls, LostCall, NotBack, TransferEvent } from './bridged-calls';
import type { CallRecordings, RecordingEvent } from './call-recordings';
import { CallbackHints, callbackChangeOf, type CallbackChange } from './callback-requests';
import { HeadStarts } from './head-starts';
import { KeyedTaskQueue } from './keyed-task-queue';
import { LiveCallsSource, LiveCallsTracker } from './live-calls';
import type { MonitorEvent } from './monitors';
import { RelayMetrics } from './metrics';
import type { ResumePoint } from './resume-token';
import {
  audienceFor,
  callIdOf,
  claimedAudienceFor,
  declineOfAnsweredCall,
  declineVerdict,
  isReachable,
  KnownCalls,
  NO_CALL_FACTS,
  orderingKeyOf,
  presenceForRinging,
  type AgentStanding,
  type CallFacts,
  type DeclineVerdict,
  type RingingContext,
} from './routing';
import type { HoldReport } from './hold-endpoint';
import type { RelayRecords } from './records/relay-records';
import { Supervision } from './supervision';
import { colleagueName, teamReplyOf, type TeamAgent } from './team';
import type { TeamSettingsSource } from './team-settings-source';

export interface RelayStats {
  /** Webhooks accepted (answered 200). */
  webhooksReceived: number;
  /** Webhooks refused: bad signature, malformed JSON, too large. */
  webhooksRejected: number;
  /** Events written to agent sessions, counted once per session. */
  eventsDelivered: number;
  /** Open agent sessions on this instance. */
  connectedAgents: number;
  /** Events that passed the delivery rules and were stored by this instance. */
  eventsStored: number;
  /** Events dropped as duplicates, as connects for ended calls, or as stale connects. */
  eventsDropped: number;
  /** Requests whose work close() waits for: webhooks being received, claims, presence reports (events queued behind them are drained apart). */
  inFlight: number;
  /** Agent requests refused for a missing or unknown token (401). */
  authFailures: number;
  /** Agent requests refused while their address was limited (429). */
  rateLimited: number;
  /** Events the memory backend retains for replay (absent for Redis). */
  retainedEvents?: number;
}

export interface RelayServiceOptions {
  backend: RelayBackend;
  /** Whether close() closes the backend too (the relay created it rather than being handed it). */
  ownsBackend: boolean;
  agents: readonly AgentConfig[];
  /** Plain tokens (development): agents `agent-1`, `agent-2`, … */
  agentTokens: readonly string[];
  logger: Logger;
  /** The voice_call head start; 0 turns head starts off. */
  releaseMs: number;
  presenceTtlMs: number;
  heartbeatMs: number;
  maxBufferBytes: number;
  maxStreamsPerAgent: number;
  freshReplayMs: number;
  /** Bridge nodes register with this relay (it has a bridge token), reporting their load every `heartbeatMs`. */
  bridgeNodes?: { heartbeatMs: number };
  /** Bridged calls (`--bridge`, or the team's nodes): absent, every call is direct. */
  bridge?: BridgedCalls;
  /** The team's call records (relay/records/): told each event, claim, decline and presence this instance handles. */
  records?: RelayRecords;
  /** When bridged calls record: each change is told to the call's agents and supervisors (`call.recording`). */
  recordings?: CallRecordings;
  /** The team's settings in force; each change is told to every open stream. */
  teamSettings: TeamSettingsSource;
}

/** The queue key of the callback list's changes: not a call's or a message's (routing.ts orderingKeyOf). */
const CALLBACK_CHANGES = 'callbacks';

/** How long close() waits for this instance's own stored events to reach its streams (through Redis that takes a moment). */
const FLUSH_TIMEOUT_MS = 2_000;

export class RelayService {
  readonly metrics = new RelayMetrics({ connectedAgents: () => this.hub.connected, bridgeNodes: () => this.liveBridgeNodes() });
  /** The team's bridge nodes; absent when this relay takes none. */
  readonly nodeRegistry: BridgeNodeRegistry | undefined;
  private readonly backend: RelayBackend;
  private readonly directory: AgentDirectory;
  private readonly knownCalls = new KnownCalls();
  private readonly headStarts: HeadStarts;
  private readonly hub: SessionHub;
  private readonly listeners = new Set<(envelope: RelayEnvelope) => void>();
  /** The events of one call (or one message) are stored in the order their webhooks came. */
  private readonly queue = new KeyedTaskQueue();
  private readonly callbackHints = new CallbackHints();
  /** The team's live calls as the stored events tell them (live-calls.ts). */
  private readonly liveCalls = new LiveCallsTracker();
  /** GET /team/calls and joining a call (relay/REFERENCE.md "Supervisors"). */
  readonly supervision: Supervision;
  private readonly log: Logger;
  private unsubscribe: () => void = () => undefined;

  /** Subscribes to the backend and reads the recent calls; the service is ready when this resolves. */
  static async start(options: RelayServiceOptions): Promise<RelayService> {
    const service = new RelayService(options);
    const stopStored = options.backend.subscribe(service.onStored);
    const stopSettings = options.teamSettings.onChange(() => service.hub.tellTeam(service.teamInfoOf));
    service.unsubscribe = () => {
      stopStored();
      stopSettings();
    };
    service.followBridge();
    await options.backend.callbacks().then(
      (requests) => service.callbackHints.loaded(requests),
      (error: unknown) => options.logger.warn('could not read the callback list at start-up: every answered call asks for it', { error }),
    );
    // Calls that rang shortly before this instance started: their later events and head starts need them.
    await service.warmUp(options.releaseMs + STALE_CONNECT_MS).catch((error: unknown) => options.logger.warn('could not read recent events at start-up', { error }));
    return service;
  }

  private constructor(private readonly options: RelayServiceOptions) {
    this.backend = options.backend;
    this.log = options.logger;
    this.directory = new AgentDirectory([...options.agents, ...legacyAgents(options.agentTokens)]);
    this.headStarts = new HeadStarts({ backend: this.backend, logger: this.log });
    this.nodeRegistry = options.bridgeNodes === undefined ? undefined : new BridgeNodeRegistry(this.backend, options.bridgeNodes.heartbeatMs, this.log);
    this.hub = new SessionHub({
      backend: this.backend,
      headStarts: this.headStarts,
      metrics: this.metrics,
      logger: this.log,
      heartbeatMs: options.heartbeatMs,
      maxBufferBytes: options.maxBufferBytes,
      maxStreamsPerAgent: options.maxStreamsPerAgent,
      freshReplayMs: options.freshReplayMs,
      presenceOf: (agentId) => this.ringingPresenceOf(agentId),
    });
    const { bridge, recordings } = options;
    this.supervision = new Supervision({
      tracker: this.liveCalls,
      ...(bridge !== undefined ? { monitors: bridge.monitors } : {}),
      liveCalls: new LiveCallsSource({
        tracker: this.liveCalls,
        nameOf: (agentId) => colleagueName(this.directory.get(agentId)?.name ?? agentId),
        ...(bridge !== undefined
          ? {
              bridgedView: (callId: string) => bridge.monitors.view(callId),
              customerReport: (callId: string) => bridge.monitors.customerReport(callId),
              ...(recordings !== undefined ? { isRecording: (callId: string) => recordings.isRecording(callId) } : {}),
              placedOnNode: async (callId: string) => (await this.backend.callNode(callId)) !== undefined,
            }
          : {}),
        heldCalls: (callIds) => this.backend.heldCalls(callIds),
      }),
    });
  }

  get agentCount(): number {
    return this.directory.size;
  }

  get connectedAgents(): number {
    return this.hub.connected;
  }

  /** The agent a request's `Authorization` header names, if it names one of the team. */
  authenticate(authorization: string | undefined): Agent | undefined {
    return this.directory.authenticate(authorization);
  }

  /**
   * Replaces the agents (a reloaded agents file); open sessions of removed agents keep running until
   * they reconnect. The streams of an agent whose role changed hear of it (`event: team`).
   */
  setAgents(agents: readonly AgentConfig[], agentTokens: readonly string[]): void {
    const rolesBefore = new Map(this.directory.ids().map((agentId) => [agentId, this.directory.get(agentId)?.role]));
    this.directory.replace([...agents, ...legacyAgents(agentTokens)]);
    const changed = new Set(this.directory.ids().filter((agentId) => rolesBefore.has(agentId) && rolesBefore.get(agentId) !== this.directory.get(agentId)?.role));
    if (changed.size > 0) this.hub.tellTeam(this.teamInfoOf, changed);
  }

  /** GET /team/settings and the streams' `team` event: the agent's role and the team's settings; undefined for an agent not in the team. */
  readonly teamInfoOf = (agentId: string): TeamInfo | undefined => {
    const agent = this.directory.get(agentId);
    const record = this.options.recordings?.offered;
    return agent === undefined ? undefined : { agentId: agent.id, role: agent.role, settings: this.options.teamSettings.current(), ...(record !== undefined ? { record } : {}) };
  };

  /** A webhook's body, answered already: its events are stored in the background, per call in order. */
  ingest(body: unknown, receivedAt: number): void {
    const { events, skipped } = normaliseWebhookDetailed(body);
    if (skipped.length > 0) this.log.warn('skipped malformed webhook items', { count: skipped.length, first: skipped.slice(0, 3) });
    for (const event of events) {
      void this.queue.run(orderingKeyOf(event), () =>
        this.store(event, receivedAt).then(
          () => undefined,
          (error: unknown) => this.log.error('storing an event failed', { type: event.type, error }),
        ),
      );
    }
  }

  /** An agent's event stream: replay from `resume`, then live. Resolves once it follows the live fan-out (or ended). */
  openStream(res: ServerResponse, agent: Agent, resume: ResumePoint): Promise<void> {
    return this.hub.open(res, agent, resume).joined;
  }

  /**
   * First claim wins, across instances. A win is answered at once, and `call.claimed`, which stops
   * the others ringing, is stored right behind it in the call's order (the drain waits for it); a
   * repeated claim by the winner is a duplicate and stores nothing.
   */
  async claim(callId: string, agentId: string): Promise<ClaimOutcome> {
    const outcome = await this.backend.claim(callId, agentId);
    if (!outcome.won) {
      this.log.info('a claim lost', { callId, agentId, owner: outcome.agentId });
      return outcome;
    }
    this.knownCalls.claimed(callId, agentId);
    this.options.records?.claimed(callId, agentId);
    const claimed: RelayEvent = { type: 'call.claimed', callId, agentId, timestamp: Date.now() };
    // The winner's accept waits on this answer, the customer on the accept: the event that stops
    // colleagues ringing is stored and fanned out behind it (in the call's order, and drained on close).
    void this.queue.run(orderingKeyOf(claimed), () =>
      this.store(claimed, Date.now(), claimedAudienceFor(this.knownCalls.ringingAudienceOf(callId), agentId)).then(
        () => undefined,
        (error: unknown) => this.log.error('storing a claim event failed', { callId, error }),
      ),
    );
    this.log.info('a call was claimed', { callId, agentId });
    return outcome;
  }

  /**
   * An agent declined a ringing call: it stops ringing for that agent only. A head start of that
   * agent ends at once here, so that colleagues connected to this instance ring now.
   */
  async decline(callId: string, agentId: string): Promise<DeclineVerdict> {
    const verdict = declineOfAnsweredCall(await this.ownerOf(callId), agentId) ?? (await this.declineRinging(callId, agentId));
    this.options.records?.declined(callId, agentId, verdict);
    return verdict;
  }

  private async declineRinging(callId: string, agentId: string): Promise<DeclineVerdict> {
    const declined = await this.backend.decline(callId, agentId);
    this.headStarts.declinedBy(callId, agentId);
    // A bridged call's legs of this agent close on its node now; the call rings on for the others.
    await this.options.bridge?.declined(callId, agentId).catch((error: unknown) => this.log.error('a declining agent’s ringing legs could not close', { callId, agentId, error }));
    const verdict = declineVerdict(agentId, declined, this.directory.ids().map(this.standingOf));
    this.log.info('a call was declined', { callId, agentId, othersRinging: verdict.othersRinging });
    return verdict;
  }

  /**
   * A direct call's hold as its agent's app tells it (PUT /calls/{id}/hold): recorded at the
   * relay's time for the call's owner only. A bridged call's holds come from its bridge.
   */
  async reportHold(callId: string, agentId: string, held: boolean): Promise<HoldReport> {
    if (this.options.bridge?.isBridged(callId) === true) return 'bridged';
    const owner = await this.ownerOf(callId);
    if (owner === undefined) return 'unknown';
    if (owner !== agentId) return 'not_owner';
    this.options.records?.held(callId, agentId, held);
    await this.shareHold(callId, held);
    return 'recorded';
  }

  /** The team's live calls show the hold on every instance; one the backend did not take is logged (the call goes on). */
  private async shareHold(callId: string, held: boolean): Promise<void> {
    await this.backend.setCallHeld(callId, held).catch((error: unknown) => this.log.warn('could not share a call’s hold with the team', { callId, held, error }));
  }

  /** Every agent of the team now, with its name and standing (the colleagues a transfer may ring). */
  teamAgents(): TeamAgent[] {
    return this.directory.ids().flatMap((agentId) => {
      const agent = this.directory.get(agentId);
      if (agent === undefined) return [];
      const state = this.backend.presenceStateOf(agentId);
      return [
        {
          agentId,
          presence: state?.presence,
          connected: this.hub.hasSession(agentId),
          name: agent.name,
          ...(state?.reason !== undefined ? { reason: state.reason } : {}),
          ...(state?.since !== undefined ? { since: state.since } : {}),
        },
      ];
    });
  }

  /**
   * The colleagues a transfer may ring: the team as `teamAgents` has it, a supervisor joined to a call
   * on a call (busy, so "Anyone available" passes it over), as for a call that rings.
   */
  transferColleagues(): TeamAgent[] {
    return this.teamAgents().map((agent) => ({ ...agent, presence: this.ringingPresenceOf(agent.agentId) }));
  }

  /** GET /team: every agent with its presence as colleagues see it, by name. */
  team(selfId: string): TeamReply {
    return teamReplyOf(this.teamAgents(), selfId);
  }

  /**
   * Stores the agent's presence for the team and tells the records; resolves with the state stored
   * and since when the agent is in it. After-call work reported again without its call keeps the
   * call it was reported with (a refresh, not a new state).
   */
  async setPresence(agentId: string, reported: ReportedPresence): Promise<PresenceState & { since: number }> {
    const before = this.backend.presenceStateOf(agentId);
    const state: ReportedPresence =
      reported.presence === 'after_call_work' && reported.reason === undefined && before?.presence === 'after_call_work' && before.reason !== undefined
        ? { presence: reported.presence, reason: before.reason }
        : reported;
    const stored = await this.backend.setPresence(agentId, state, this.options.presenceTtlMs);
    this.options.records?.presenceReported(agentId, state, before);
    this.log.debug('presence', { agentId, status: stored.presence, ...(stored.presence === 'break' ? { reason: stored.reason } : {}) });
    return stored;
  }

  /** The team's callback requests, the oldest first, each taker by the name the team knows them by now. */
  async callbacks(): Promise<CallbackRequest[]> {
    return (await this.backend.callbacks()).map((request) => (request.takenBy === undefined ? request : this.withTakerName({ ...request, takenBy: request.takenBy })));
  }

  /**
   * "Call back": takes the request for the agent, first take wins across instances; the taker's
   * name (or a colleague's who has it) is the one the team knows them by now.
   */
  async takeCallback(id: string, agent: Agent): Promise<TakeCallbackOutcome> {
    const outcome = await this.backend.takeCallback(id, { agentId: agent.id, name: colleagueName(agent.name) });
    if (outcome.kind === 'not_found') return outcome;
    const request = this.withTakerName(outcome.request);
    this.log.info(outcome.kind === 'taken' ? 'a callback request was taken' : 'a callback request was taken already', { id, agentId: agent.id, takenBy: request.takenBy.agentId });
    return { kind: outcome.kind, request };
  }

  private withTakerName(request: TakenCallback): TakenCallback {
    const current = this.directory.get(request.takenBy.agentId)?.name;
    return current === undefined ? request : { ...request, takenBy: { ...request.takenBy, name: colleagueName(current) } };
  }

  /**
   * What an event this instance stored does to the team's callback list, applied off the event's
   * path (its delivery never waits for it), one change after another in the order the events came
   * (a customer may be named by number in one and by user id in the next; the changes are few); a
   * failure is logged.
   */
  private followCallbacks(event: RelayEvent): void {
    const change = callbackChangeOf(event, (callId) => this.knownCalls.customerOf(callId));
    if (change === undefined) return;
    if (change.kind === 'add') this.callbackHints.note(change.request);
    else if (change.why === 'answered' && !this.callbackHints.mayHave(change.customer)) return;
    void this.queue.run(CALLBACK_CHANGES, () =>
      this.applyCallbackChange(change).catch((error: unknown) => this.log.error('updating the callback list failed', { change: change.kind, error })),
    );
  }

  private async applyCallbackChange(change: CallbackChange): Promise<void> {
    if (change.kind === 'add') {
      const { request } = change;
      const outcome = await this.backend.addCallback(request);
      if (outcome.added) this.log.info('a customer asked to be called back', { id: request.id, permanent: request.permanent, replaced: outcome.replaced });
      else this.log.debug('a callback request changed nothing', { id: request.id, reason: outcome.reason });
      return;
    }
    const dropped = await this.backend.dropCallbacksOf(change.customer);
    this.callbackHints.forget(change.customer);
    if (dropped.length > 0) this.log.info('callback requests left the list', { ids: dropped, why: change.why });
  }

  /** Every stored event this instance fans out (embedded mode, benchmarks). */
  onEvent(listener: (envelope: RelayEnvelope) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stats(): Omit<RelayStats, 'inFlight'> {
    const { metrics } = this;
    return {
      webhooksReceived: metrics.webhooksReceived,
      webhooksRejected: metrics.webhooksRejectedTotal,
      eventsDelivered: metrics.eventsDelivered,
      connectedAgents: this.hub.connected,
      eventsStored: metrics.eventsStored,
      eventsDropped: metrics.eventsDroppedTotal,
      authFailures: metrics.authFailuresTotal,
      rateLimited: metrics.rateLimitedTotal,
      ...this.backend.stats(),
    };
  }

  renderMetrics(): Promise<string> {
    return this.metrics.render();
  }

  /** For the gauge at each scrape; undefined (the last value stays) when the backend cannot say. */
  private async liveBridgeNodes(): Promise<number | undefined> {
    if (this.nodeRegistry === undefined) return 0;
    try {
      return await this.nodeRegistry.liveCount();
    } catch (error) {
      this.log.warn('could not count the live bridge nodes', { error });
      return undefined;
    }
  }

  /**
   * The drain, once no new work comes in: what is queued is stored, reaches this instance's streams,
   * and every stream is flushed and ended (agents reconnect to another instance with their cursor).
   * Each step waits `timeoutMs` at most (a backend that hangs, an agent that reads nothing).
   */
  async drain(timeoutMs: number): Promise<void> {
    await withDeadline(this.queue.idle(), timeoutMs);
    await withDeadline(this.backend.flush(), FLUSH_TIMEOUT_MS);
    await this.hub.drain(timeoutMs);
    this.stopFanOut();
  }

  /** Ends every stream at once, without flushing (start-up failed, or the drain did). */
  abort(): void {
    this.hub.close();
    this.stopFanOut();
  }

  /** Closes the backend if the service owns it. */
  async close(): Promise<void> {
    if (this.options.ownsBackend) await this.backend.close();
  }

  private stopFanOut(): void {
    this.unsubscribe();
    this.stopFollowingBridge();
    this.headStarts.close();
  }

  /**
   * What happens to bridged calls outside the agents' requests: a node that is no longer live takes
   * its calls with it, a node's failed customer leg ends its call, and either way the call's agents
   * are told (`call.bridge_failed`); a member's failed or closed leg starts its rejoin window, and a
   * member not back in time is told too.
   */
  private followBridge(): void {
    const { bridge } = this.options;
    const registry = this.nodeRegistry;
    if (bridge === undefined) return;
    const stops = [
      bridge.onCallLost((lost) => this.tellBridgeFailure(lost)),
      bridge.onTransferEvent((event, agentId) => this.tellTransfer(event, agentId)),
      bridge.onAgentNotBack((notBack) => this.tellNotBack(notBack)),
      bridge.onHold(({ callId, agentId, held }) => {
        this.options.records?.held(callId, agentId, held);
        void this.shareHold(callId, held);
      }),
      bridge.monitors.onEvent((event, agentIds) => this.tellMonitor(event, agentIds)),
      bridge.followNodeEvents(),
      this.options.recordings?.onEvent((event, agentIds) => this.tellRecording(event, agentIds)) ?? (() => undefined),
    ];
    if (registry !== undefined) {
      stops.push(
        registry.onNodeGone(({ nodeId, why }) => {
          void bridge.nodeGone(nodeId, why).catch((error: unknown) => this.log.error('could not end the calls of a bridge node that is gone', { nodeId, error }));
        }),
        registry.onEvent(({ nodeId, event }) => bridge.nodeEvent(nodeId, event)),
      );
      registry.watch();
      stops.push(() => registry.stopWatching());
    }
    stops.push(() => bridge.stopWaiting());
    this.stopFollowingBridge = () => {
      for (const stop of stops.splice(0)) stop();
    };
  }

  private stopFollowingBridge: () => void = () => undefined;

  /**
   * The call's agents hear that the bridge let it go: its owner, or everyone it rings while nobody
   * has claimed it, or everyone in it or rung for it once it had a transfer.
   */
  private tellBridgeFailure({ callId, nodeId, reason, agents }: LostCall): void {
    const event: RelayEvent = { type: 'call.bridge_failed', callId, reason, timestamp: Date.now() };
    void this.queue.run(orderingKeyOf(event), async () => {
      try {
        const stored = await this.store(event, Date.now(), agents !== undefined ? { kind: 'agents', agentIds: agents } : undefined);
        if (stored === undefined) return;
        this.metrics.countBridgeFailure(reason);
        this.log.info('the agents of a call the bridge lost are told', { callId, nodeId, reason, audience: stored.audience.kind });
      } catch (error) {
        this.log.error('storing a bridge failure failed', { callId, error });
      }
    });
  }

  /**
   * A member not back in time hears it (`agent_not_back`, `goesOn` when colleagues keep the call), in
   * the call's order: resolves once stored, so that the relay's own terminate comes after it.
   */
  private tellNotBack({ callId, agentId, goesOn, awaySec }: NotBack): Promise<void> {
    const event: RelayEvent = { type: 'call.bridge_failed', callId, reason: 'agent_not_back', ...(goesOn ? { goesOn: true } : {}), awaySec, timestamp: Date.now() };
    return this.queue.run(orderingKeyOf(event), async () => {
      try {
        const stored = await this.store(event, Date.now(), { kind: 'agent', agentId });
        if (stored === undefined) return;
        this.metrics.countBridgeFailure('agent_not_back');
        this.log.info('an agent not back in time is told', { callId, agentId, goesOn, awaySec });
      } catch (error) {
        this.log.error('storing a bridge failure failed', { callId, error });
      }
    });
  }

  /** A call's recording started or stopped, for everyone in it (or one who joined), in the call's order. */
  private tellRecording(event: RecordingEvent, agentIds: readonly string[]): void {
    void this.queue.run(orderingKeyOf(event), async () => {
      try {
        await this.store(event, Date.now(), { kind: 'agents', agentIds: [...agentIds] });
      } catch (error) {
        this.log.error('storing a recording event failed', { callId: event.callId, error });
      }
    });
  }

  /** A transfer's ring or outcome, for the one agent it is told to, in the call's order. */
  private tellTransfer(event: TransferEvent, agentId: string): void {
    void this.queue.run(orderingKeyOf(event), async () => {
      try {
        await this.store(event, Date.now(), { kind: 'agent', agentId });
      } catch (error) {
        this.log.error('storing a transfer event failed', { callId: event.callId, type: event.type, error });
      }
    });
  }

  /** A supervisor's join, change or end, for the agents it is told to (monitors.ts), in the call's order. */
  private tellMonitor(event: MonitorEvent, agentIds: string[]): void {
    void this.queue.run(orderingKeyOf(event), async () => {
      try {
        await this.store(event, Date.now(), { kind: 'agents', agentIds });
      } catch (error) {
        this.log.error('storing a supervisor’s event failed', { callId: event.callId, error });
      }
    });
  }

  /** The backend's subscription: every event stored by any instance, in stored order. */
  private readonly onStored = (stored: StoredEvent): void => {
    try {
      this.knownCalls.observe(stored);
      this.liveCalls.observe(stored);
      this.headStarts.observe(stored);
      this.endBridgedCallEndedElsewhere(stored.event);
      // A request stored by any instance: an answer to its customer, here too, takes it off the list.
      if (stored.event.type === 'message.inbound' && stored.event.permissionReply !== undefined) {
        const change = callbackChangeOf(stored.event, () => undefined);
        if (change?.kind === 'add') this.callbackHints.note(change.request);
      }
      this.hub.fanOut(stored);
      if (this.listeners.size > 0) {
        const envelope = envelopeOf(stored);
        for (const listener of this.listeners) listener(envelope);
      }
    } catch (error) {
      // The subscription feeds every session: one failure must not stop the next event.
      this.log.error('fanning out an event failed', { cursor: stored.cursor, error });
    }
  };

  /**
   * A bridged call this instance holds whose terminate another instance stored (the service's
   * webhook reached that one): its legs close and its supervisors hear that it ended, as if the
   * terminate had come here. The instance that stored it ends it in `followBridged`, and again here
   * at no cost. (The bridge's own losses are ended where they are decided: a call given up for an
   * agent not back stays until the service ends it.)
   */
  private endBridgedCallEndedElsewhere(event: RelayEvent): void {
    const { bridge } = this.options;
    if (bridge === undefined || event.type !== 'call.terminated' || !bridge.isBridged(event.callId)) return;
    void bridge.ended(event.callId).catch((error: unknown) => this.log.error('could not end a bridged call another instance ended', { callId: event.callId, error }));
  }

  /** Whether calls go through a bridge (the app asks GET /me). */
  get bridged(): boolean {
    return this.options.bridge !== undefined;
  }

  private async store(received: RelayEvent, receivedAt: number, audience?: Audience): Promise<StoredEvent | undefined> {
    const { bridge } = this.options;
    let event = received;
    // A node answers the service's offer while the call rings: the ring says the call is bridged,
    // so every agent's app asks for a leg of its own instead of answering the service's offer.
    let tookCall = false;
    if (bridge !== undefined && event.type === 'call.incoming') {
      const { from, fromUserId, name } = event;
      const caller = { ...(from !== undefined ? { from } : {}), ...(fromUserId !== undefined ? { fromUserId } : {}), ...(name !== undefined ? { name } : {}) };
      const taking = await bridge.takeIncoming(event.callId, event.sdp, caller);
      tookCall = taking === 'taken';
      if (taking !== 'direct') event = { ...event, bridged: true };
    }
    const decided = audience ?? (await this.audienceFor(event, receivedAt));
    const outcome = await this.backend.append({ event, receivedAt, audience: decided });
    this.options.records?.eventSeen({ event, receivedAt, audience: decided, stored: outcome.stored, reachable: this.reachableAgents });
    if (!outcome.stored) {
      this.metrics.countEventDropped(outcome.reason);
      this.log.debug('dropped an event', { type: event.type, reason: outcome.reason });
      // A stale or ended call's connect: the node let go of what it prepared for it. A duplicate that
      // another instance stored at the same moment rings as bridged on the node placed here first.
      if (tookCall && event.type === 'call.incoming' && outcome.reason !== 'duplicate') void bridge?.ended(event.callId);
      return undefined;
    }
    if (bridge !== undefined) this.followBridged(bridge, event);
    this.metrics.countEventStored();
    // The subscription may bring it later (Redis): the call's next event, queued right behind this
    // one, must already find its audience and owner.
    this.knownCalls.observe(outcome.event);
    // Once per event across instances: the instance that stored it.
    this.followCallbacks(event);
    return outcome.event;
  }

  /** What the service says of a bridged call reaches its node: the customer's answer, the end; and who the customer of an outgoing call is. */
  private followBridged(bridge: BridgedCalls, event: RelayEvent): void {
    if (event.type === 'call.answered') void bridge.customerAnswered(event.callId, event.sdp);
    else if (event.type === 'call.terminated') void bridge.ended(event.callId);
    else if (event.type === 'call.status' && event.recipientId !== undefined) bridge.customerNumber(event.callId, event.recipientId);
  }

  private async audienceFor(event: RelayEvent, receivedAt: number): Promise<Audience> {
    const decision = audienceFor(event, await this.callFacts(event), this.ringingContext(receivedAt));
    if (decision.passedOver !== undefined) {
      this.log.debug('a voice_call agent is not free; ringing everyone at once', { callId: callIdOf(event), agentId: decision.passedOver });
    }
    return decision.audience;
  }

  private async callFacts(event: RelayEvent): Promise<CallFacts> {
    const callId = callIdOf(event);
    if (callId === undefined) return NO_CALL_FACTS;
    const owner = await this.ownerOf(callId);
    const participants = this.options.bridge?.participantsOf(callId) ?? this.knownCalls.participantsOf(callId);
    return { owner, rang: this.knownCalls.ringingAudienceOf(callId), ...(participants !== undefined ? { participants } : {}) };
  }

  /** A claim is final: a remembered owner needs no round trip to the backend. */
  private async ownerOf(callId: string): Promise<string | undefined> {
    return this.knownCalls.ownerOf(callId) ?? (await this.backend.claimOwner(callId));
  }

  private ringingContext(receivedAt: number): RingingContext {
    return { receivedAt, releaseMs: this.options.releaseMs, standingOf: this.standingInTeamOf };
  }

  /** Made once, not per event: each closure made in the webhook path is work on every webhook. */
  private readonly standingInTeamOf = (agentId: string): AgentStanding | undefined => (this.directory.get(agentId) === undefined ? undefined : this.standingOf(agentId));

  /** The agents a call coming in now rings (relay/REFERENCE.md "Routing and claims"). */
  private readonly reachableAgents = (): string[] => this.directory.ids().filter((agentId) => isReachable(this.standingOf(agentId)));

  private readonly standingOf = (agentId: string): AgentStanding => ({
    agentId,
    presence: this.ringingPresenceOf(agentId),
    connected: this.hub.hasSession(agentId),
  });

  /** The presence a call that rings goes by: a supervisor joined to a call is on a call. */
  private ringingPresenceOf(agentId: string): Presence | undefined {
    return presenceForRinging(this.backend.presenceOf(agentId), this.liveCalls.joinedCall(agentId) !== undefined);
  }

  /** Reads the events of the last `windowMs` (start-up), a page at a time. */
  private async warmUp(windowMs: number): Promise<void> {
    const pageSize = 1_000;
    let after: string | undefined;
    // A cap, whatever the traffic: the records only matter for calls of the last minute or so.
    for (let pages = 0; pages < 100; pages += 1) {
      const page = await this.backend.readAfter(after, { limit: pageSize, sinceMs: windowMs });
      for (const stored of page) {
        this.knownCalls.observe(stored);
        this.liveCalls.observe(stored);
        this.headStarts.observe(stored);
      }
      const last = page.at(-1);
      if (page.length < pageSize || last === undefined) return;
      after = last.cursor;
    }
  }
}

export async function withDeadline(work: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}
