// Agent sessions: one per open `GET /events` stream (relay/REFERENCE.md "Event stream").
//
// Each session gets every event it concerns exactly once, in stored order: on connect it replays
// from its resume point while live events queue behind the replay, then it follows the live
// fan-out. Each session is written on its own; one that stops reading only fills its own buffer,
// and past `maxBufferBytes` it is disconnected and resumes by cursor — the others never wait.
import type { ServerResponse } from 'node:http';
import type { TeamInfo } from '../shared/api';
import type { Logger } from '../shared/log';
import type { Agent } from './agent-directory';
import { BoundedSet } from './bounded-set';
import { envelopeOf, type Presence, type RelayBackend, type StoredEvent } from './backend/types';
import type { HeadStarts, HeadStartWatcher } from './head-starts';
import type { RelayMetrics } from './metrics';
import { formatResumeToken, type ResumePoint } from './resume-token';
import { callIdOf, decideDelivery, hasHeadStart } from './routing';

export interface SessionHubOptions {
  backend: RelayBackend;
  headStarts: HeadStarts;
  metrics: RelayMetrics;
  logger: Logger;
  heartbeatMs: number;
  /** Bytes queued for one session beyond which it is disconnected. */
  maxBufferBytes: number;
  /** Open streams one agent may have on this instance; a new one beyond closes the agent's oldest. */
  maxStreamsPerAgent: number;
  /** What a session without a cursor gets replayed: events of this last window (0: live only). */
  freshReplayMs: number;
  /** Events per backend read during a replay. */
  replayPageSize?: number;
  /** The presence a ringing call goes by for an agent; default the presence it reported (the backend's). */
  presenceOf?: (agentId: string) => Presence | undefined;
  /** Live events a session may queue behind its replay before it is dropped as hopeless. */
  maxJoinBacklog?: number;
  now?: () => number;
}

export const SSE_HEARTBEAT = ': hb\n\n';
/** Open streams per agent on one instance, unless configured otherwise (relay/REFERENCE.md "Limits"). */
export const DEFAULT_MAX_STREAMS_PER_AGENT = 5;
export const MAX_STREAMS_PER_AGENT_LIMIT = 100;
export const MAX_STREAMS_PER_AGENT_RULE = `must be a whole number from 1 to ${MAX_STREAMS_PER_AGENT_LIMIT}`;

/** The one rule of `maxStreamsPerAgent`, for startRelay and `--max-streams-per-agent` alike. */
export function isValidMaxStreamsPerAgent(value: number): boolean {
  return Number.isInteger(value) && value >= 1 && value <= MAX_STREAMS_PER_AGENT_LIMIT;
}
/** How long a replay waits for an agent that reads nothing. */
const REPLAY_STALL_MS = 60_000;
/** How long a stream closed for a newer one gets to flush its close event. */
const CLOSE_FLUSH_MS = 5_000;

/** Why the relay ends a stream, told in its `close` event (relay/REFERENCE.md "Closing"). */
export type StreamCloseReason = 'too_many_streams';

/**
 * The named SSE events of the stream (`close`, `team`): envelopes have no `event:` field, so clients
 * that know nothing of one skip it. Neither has an `id:`: the resume point stays the last envelope's.
 */
function closeFrame(reason: StreamCloseReason, message: string): string {
  return `event: close\ndata: ${JSON.stringify({ reason, message })}\n\n`;
}

function teamFrame(info: TeamInfo): string {
  return `event: team\ndata: ${JSON.stringify(info)}\n\n`;
}

/** How many events' frames the hub keeps: more than one replay page of every session resuming at once needs. */
const FRAMES_KEPT = 2_048;

export class SessionHub {
  private readonly sessions = new Set<AgentSession>();
  private readonly perAgent = new Map<string, Set<AgentSession>>();
  /**
   * Each stored event is serialised once per instance, whatever the number of sessions it goes to:
   * a fan-out writes it to all of them at once, and sessions resuming together replay the same
   * events. A bounded map rather than a WeakMap keyed by every event ever fanned out: a weak map that
   * large is work for every garbage collection.
   */
  private readonly frames = new Map<StoredEvent, { json: string; frame: string }>();
  private readonly heartbeat: NodeJS.Timeout;
  /** Cursors fanned out lately: a replayed event not among them has yet to come through the live fan-out. */
  readonly recentlyFannedOut = new BoundedSet(4_096);
  readonly now: () => number;

  constructor(readonly options: SessionHubOptions) {
    this.now = options.now ?? Date.now;
    this.heartbeat = setInterval(() => {
      for (const session of this.sessions) session.writeComment(SSE_HEARTBEAT);
    }, options.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Open sessions on this instance (the `relay_connected_agents` gauge). */
  get connected(): number {
    return this.sessions.size;
  }

  hasSession(agentId: string): boolean {
    return this.perAgent.has(agentId);
  }

  /**
   * Starts the stream and its replay; resolves once the session follows the live fan-out (or ended).
   * An agent already at `maxStreamsPerAgent` loses its oldest streams first: a client that lost its
   * connection without the relay noticing comes back with a new one, and the newest is the live one.
   */
  open(res: ServerResponse, agent: Agent, resume: ResumePoint): { session: AgentSession; joined: Promise<void> } {
    const { maxStreamsPerAgent } = this.options;
    const existing = this.perAgent.get(agent.id);
    if (existing !== undefined && existing.size >= maxStreamsPerAgent) {
      // A Set iterates in insertion order: oldest first.
      const oldest = [...existing].slice(0, existing.size - maxStreamsPerAgent + 1);
      for (const old of oldest) {
        this.options.logger.info('closed the oldest stream of an agent for a newer one', { agentId: agent.id, maxStreamsPerAgent });
        void old.close('too_many_streams', `a newer stream of this agent took this one's place: at most ${maxStreamsPerAgent} streams per agent; do not reconnect this one`);
      }
    }
    const session = new AgentSession(this, res, agent, resume);
    this.sessions.add(session);
    const ofAgent = this.perAgent.get(agent.id);
    if (ofAgent) ofAgent.add(session);
    else this.perAgent.set(agent.id, new Set([session]));
    return { session, joined: session.join() };
  }

  /** One live event, from the backend subscription, to every session on this instance. */
  fanOut(stored: StoredEvent): void {
    this.recentlyFannedOut.add(stored.cursor);
    // Most traffic is a claimed call's events: only its owner's sessions need to look at them. The
    // others' positions stay behind, which only makes a later replay skip a few more events.
    for (const session of this.sessionsFor(stored.audience)) session.accept(stored);
  }

  private sessionsFor(audience: StoredEvent['audience']): Iterable<AgentSession> {
    switch (audience.kind) {
      case 'agent':
        return this.perAgent.get(audience.agentId) ?? [];
      case 'agents':
        return [...new Set(audience.agentIds)].flatMap((agentId) => [...(this.perAgent.get(agentId) ?? [])]);
      default:
        return this.sessions;
    }
  }

  /**
   * Tells every open stream (of `agentIds` only, when given) its agent's role and the team's settings
   * (`event: team`), after a reload changed them. `infoOf` undefined: an agent no longer in the team.
   */
  tellTeam(infoOf: (agentId: string) => TeamInfo | undefined, agentIds?: ReadonlySet<string>): void {
    for (const [agentId, sessions] of this.perAgent) {
      if (agentIds !== undefined && !agentIds.has(agentId)) continue;
      const info = infoOf(agentId);
      if (info === undefined) continue;
      const frame = teamFrame(info);
      for (const session of sessions) session.tell(frame);
    }
  }

  /** Ends every stream after what is queued for it has been written (shutdown); agents reconnect elsewhere. */
  async drain(timeoutMs: number): Promise<void> {
    clearInterval(this.heartbeat);
    const sessions = [...this.sessions];
    await Promise.all(sessions.map((s) => s.end(timeoutMs)));
  }

  close(): void {
    clearInterval(this.heartbeat);
    for (const session of [...this.sessions]) session.destroy();
  }

  /** @internal */
  removed(session: AgentSession): void {
    if (!this.sessions.delete(session)) return;
    const ofAgent = this.perAgent.get(session.agent.id);
    ofAgent?.delete(session);
    if (ofAgent?.size === 0) this.perAgent.delete(session.agent.id);
  }

  /** @internal */
  frameOf(stored: StoredEvent): { json: string; frame: string } {
    let cached = this.frames.get(stored);
    if (cached === undefined) {
      const json = JSON.stringify(envelopeOf(stored));
      cached = { json, frame: `id: ${stored.cursor}\ndata: ${json}\n\n` };
      this.frames.set(stored, cached);
      if (this.frames.size > FRAMES_KEPT) this.frames.delete(this.frames.keys().next().value!);
    }
    return cached;
  }
}

export class AgentSession implements HeadStartWatcher {
  private state: 'joining' | 'live' | 'ended' = 'joining';
  /** Live events that arrived while the replay was read; they follow it. */
  private backlog: StoredEvent[] = [];
  private backlogCursors = new Set<string>();
  /**
   * Replayed events the live fan-out has not brought yet (with Redis, the stream read lags the
   * write by a moment): when they come, they were already sent. Live events arrive in stored order,
   * so the first live event not in here is newer than the whole replay and the set can go.
   */
  private replayedAhead = new Set<string>();
  /** Where this session stands in the stored order (the cursor part of its resume token). */
  private position: string | undefined;
  /** Calls whose events wait for a colleague's voice_call head start to end, in stored order. */
  private readonly held = new Map<string, StoredEvent[]>();
  /** Calls held before the resume point, picked up where their first later event appears. */
  private readonly carried = new Set<string>();
  private readonly closed: Promise<void>;
  private removed = false;
  private corked = false;
  private readonly log: Logger;

  constructor(
    private readonly hub: SessionHub,
    private readonly res: ServerResponse,
    readonly agent: Agent,
    private readonly resume: ResumePoint,
  ) {
    this.log = hub.options.logger;
    this.position = resume.cursor;
    this.closed = new Promise((resolve) => res.once('close', resolve));
    res.once('close', () => this.onClose());
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-store, no-transform',
      Connection: 'keep-alive',
      // Proxies such as nginx would otherwise buffer the stream.
      'X-Accel-Buffering': 'no',
      'X-Content-Type-Options': 'nosniff',
    });
    res.socket?.setNoDelay(true);
    res.socket?.setKeepAlive(true);
    res.socket?.setTimeout(0);
    // A comment first, so the agent sees the stream open even when there is nothing to replay.
    this.writeComment(': connected\n\n');
  }

  /** A getter, so that checks after awaits and callbacks are not narrowed away by the compiler. */
  private get ended(): boolean {
    return this.state === 'ended';
  }

  /**
   * Replays from the resume point, then the live events that queued meanwhile, then goes live.
   * A replay can be large: it is written at the pace the agent reads (waiting for the socket to
   * drain), unlike live events, where a full buffer means the agent is too slow.
   */
  async join(): Promise<void> {
    const { backend, headStarts, freshReplayMs } = this.hub.options;
    const pageSize = this.hub.options.replayPageSize ?? 500;
    for (const callId of this.resume.heldCallIds) {
      if (headStarts.has(callId)) this.carried.add(callId);
      else this.log.warn('a resuming agent held a call this instance has no record of', { agentId: this.agent.id, callId });
    }
    const replayed = new Set<string>();
    let count = 0;
    try {
      let after = this.resume.cursor;
      // No cursor and no fresh window: live only, nothing to read.
      while (after !== undefined || freshReplayMs > 0) {
        const page = await backend.readAfter(after, { limit: pageSize, sinceMs: freshReplayMs });
        if (this.ended) return;
        for (const stored of page) {
          if (this.backlogCursors.has(stored.cursor)) replayed.add(stored.cursor);
          else if (!this.hub.recentlyFannedOut.has(stored.cursor)) this.replayedAhead.add(stored.cursor);
          this.process(stored, false);
          if (!(await this.paced())) return;
        }
        count += page.length;
        const last = page.at(-1);
        if (page.length < pageSize || last === undefined) break;
        after = last.cursor;
      }
    } catch (error) {
      this.log.warn('could not replay events to an agent; closing its stream so that it retries', { agentId: this.agent.id, error });
      this.destroy();
      return;
    }
    // Live events that queued meanwhile; more may queue while this waits for the agent to read.
    for (let next = 0; next < this.backlog.length; next += 1) {
      const stored = this.backlog[next]!;
      if (replayed.has(stored.cursor) || this.alreadyReplayed(stored)) continue;
      this.process(stored, true);
      if (!(await this.paced())) return;
    }
    this.backlog = [];
    this.backlogCursors = new Set();
    // Held calls that had no event after the resume point: everything the record holds came before it.
    for (const callId of [...this.carried]) this.pickUpCarried(callId, undefined);
    this.state = 'live';
    this.log.info('agent connected', { agentId: this.agent.id, replayed: count, sessions: this.hub.connected });
  }

  /**
   * False when the session ended. Waits while half the buffer limit is queued, so that the replay
   * never trips the limit meant for live delivery; an agent that reads nothing for a minute is let go.
   */
  private async paced(): Promise<boolean> {
    if (this.ended) return false;
    if (this.res.writableLength <= this.hub.options.maxBufferBytes / 2) return true;
    const drained = await new Promise<boolean>((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.res.off('drain', onDrain);
        this.res.off('close', onClose);
        resolve(value);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => done(false), REPLAY_STALL_MS);
      this.res.on('drain', onDrain);
      this.res.on('close', onClose);
    });
    if (!drained && !this.ended) {
      this.log.warn('disconnected an agent that stopped reading its replay', { agentId: this.agent.id });
      this.destroy();
    }
    return drained && !this.ended;
  }

  /** A live event from the fan-out. */
  accept(stored: StoredEvent): void {
    if (this.state === 'live') {
      if (!this.alreadyReplayed(stored)) this.process(stored, true);
      return;
    }
    if (this.ended) return;
    this.backlog.push(stored);
    this.backlogCursors.add(stored.cursor);
    if (this.backlog.length > (this.hub.options.maxJoinBacklog ?? 20_000)) {
      this.log.warn('dropped an agent whose replay could not keep up with live events', { agentId: this.agent.id });
      this.destroy();
    }
  }

  headStartEnded(callId: string, state: 'released' | 'dropped'): void {
    const queue = this.held.get(callId);
    this.held.delete(callId);
    if (queue === undefined || state === 'dropped' || this.state === 'ended') return;
    // Per call the order stays the stored one; across calls a released call comes in when released.
    for (const stored of queue) {
      if (decideDelivery(stored, this.agent.id, this.presence, 'released') === 'deliver') this.send(stored, false);
    }
  }

  writeComment(comment: string): void {
    this.write(comment);
  }

  /** A named event outside the stored order (no `id:`), written at once, during a replay too. */
  tell(frame: string): void {
    if (this.state !== 'ended') this.write(frame);
  }

  /** Ends the stream once its queued bytes are written; gives up after `timeoutMs` (a stuck agent). */
  async end(timeoutMs: number): Promise<void> {
    if (this.state !== 'ended') {
      this.state = 'ended';
      this.res.end();
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    await Promise.race([this.closed, new Promise<void>((resolve) => this.res.once('finish', resolve)), timedOut]);
    clearTimeout(timer);
    if (!this.res.writableFinished) this.destroy();
  }

  /** Tells the agent why the stream ends (a `close` event), then ends it as end() does. It stops counting as open at once. */
  async close(reason: StreamCloseReason, message: string): Promise<void> {
    if (this.state !== 'ended') this.write(closeFrame(reason, message));
    this.hub.removed(this);
    await this.end(CLOSE_FLUSH_MS);
  }

  destroy(): void {
    this.state = 'ended';
    this.res.destroy();
    this.onClose();
  }

  private alreadyReplayed(stored: StoredEvent): boolean {
    if (this.replayedAhead.size === 0) return false;
    if (this.replayedAhead.delete(stored.cursor)) return true;
    this.replayedAhead = new Set();
    return false;
  }

  private process(stored: StoredEvent, live: boolean): void {
    const callId = callIdOf(stored.event);
    if (callId !== undefined && this.carried.has(callId)) this.pickUpCarried(callId, stored.cursor);
    this.position = stored.cursor;
    this.route(stored, live);
  }

  private route(stored: StoredEvent, live: boolean): void {
    const callId = callIdOf(stored.event);
    const waitsForHeadStart = callId !== undefined && hasHeadStart(stored.audience) && stored.audience.preferredAgentId !== this.agent.id;
    // May end the head start right here (a claim or hang-up in the replay) and flush or drop what was held.
    const headStart = waitsForHeadStart ? this.hub.options.headStarts.stateFor(stored) : undefined;
    if (waitsForHeadStart && this.held.has(callId)) {
      this.held.get(callId)!.push(stored);
      return;
    }
    switch (decideDelivery(stored, this.agent.id, this.presence, headStart)) {
      case 'deliver':
        this.send(stored, live);
        return;
      case 'skip':
        return;
      case 'hold':
        this.held.set(callId!, [stored]);
        this.hub.options.headStarts.watch(callId!, this);
        return;
    }
  }

  /** Events of a call this session held when it last disconnected, stored before `beforeCursor`. */
  private pickUpCarried(callId: string, beforeCursor: string | undefined): void {
    this.carried.delete(callId);
    for (const stored of this.hub.options.headStarts.eventsBefore(callId, beforeCursor)) {
      if (hasHeadStart(stored.audience)) this.route(stored, false);
    }
  }

  /** Looked up only for a `call.incoming`: the other events do not depend on presence. */
  private readonly presence = () => {
    const { presenceOf, backend } = this.hub.options;
    return presenceOf !== undefined ? presenceOf(this.agent.id) : backend.presenceOf(this.agent.id);
  };

  private send(stored: StoredEvent, live: boolean): void {
    const { json, frame } = this.hub.frameOf(stored);
    const token = this.held.size === 0 && this.carried.size === 0 ? (this.position ?? '') : this.token();
    // Without a position there is nothing to resume from yet: no id, so the client keeps none.
    const text = token === stored.cursor ? frame : token === '' ? `data: ${json}\n\n` : `id: ${token}\ndata: ${json}\n\n`;
    if (!this.write(text)) return;
    const { metrics } = this.hub.options;
    metrics.countEventDelivered();
    if (live) metrics.observeLatency(this.hub.now() - stored.receivedAt);
  }

  private token(): string {
    return formatResumeToken(this.position ?? '', [...this.held.keys(), ...this.carried]);
  }

  /**
   * False when the stream is gone or was just dropped for being too slow. The check comes before
   * the write: a healthy agent may briefly queue one large event, a slow one queues many.
   */
  private write(chunk: string): boolean {
    const { res } = this;
    if (res.destroyed || res.writableEnded) return false;
    if (res.writableLength > this.hub.options.maxBufferBytes) {
      this.log.warn('disconnected a slow agent; it resumes from its cursor', { agentId: this.agent.id, bufferedBytes: res.writableLength });
      this.destroy();
      return false;
    }
    // Everything written to this session within one tick leaves in one system call (a Redis read
    // brings many events at once).
    if (!this.corked) {
      this.corked = true;
      res.cork();
      process.nextTick(this.uncork);
    }
    res.write(chunk);
    return true;
  }

  private readonly uncork = () => {
    this.corked = false;
    if (!this.res.destroyed) this.res.uncork();
  };

  private onClose(): void {
    this.state = 'ended';
    if (this.removed) return;
    this.removed = true;
    for (const callId of this.held.keys()) this.hub.options.headStarts.unwatch(callId, this);
    this.held.clear();
    this.hub.removed(this);
    this.log.debug('agent stream closed', { agentId: this.agent.id, sessions: this.hub.connected });
  }
}
