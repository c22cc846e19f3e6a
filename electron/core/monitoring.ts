// A supervisor's join of a colleague's bridged call (shared/supervision.ts, relay/REFERENCE.md
// "Supervisors"): "Listen", "Whisper", "Barge" and "Leave". Joining gets a leg of the supervisor's own
// on the call's node, offered by the relay; the window answers it (answerMonitor) and carries its
// audio; switching modes keeps that leg. One joined call at a time: joining another leaves the
// first. A supervisor on a call of its own joins none (its window carries that call's audio), and
// one who answers or places a call while joined leaves the joined call first.
//
// The join as main knows it is one fact with one writer (`set`): every change of it, whether a
// command made it or the relay told it (`call.monitor` about this agent itself: the call ended under
// it, or its leg went; `call.recording` of the joined call: it records now, or no longer), reaches
// the windows as the `monitorChanged` push, and a `left` closes the window's leg. The relay's word
// on a join this app does not know (it restarted meanwhile) is left to the relay, which drops a
// monitor whose leg is gone. A join that ended here (a leave) or that the relay was found to have
// dropped (a switch it answered 404) still has the relay's `left` on its way, and that word comes
// before any word on a join of the same call made afterwards: it is the old join's, never the new
// one's end.
import { z } from 'zod';
import type { MonitorChange } from '../../shared/api';
import type { RelayEnvelope } from '../../shared/events';
import { text } from '../../shared/i18n/text';
import type { Logger } from '../../shared/log';
import { errText, ok, type Result } from '../../shared/result';
import { liveCallsSchema, monitorJoinReplySchema, monitorModeReplySchema, SUPERVISOR_PATHS, type LiveCalls, type MonitorMode } from '../../shared/supervision';
import { LIST_READ_LIMIT, type RelayClient } from './relay-client';

/** What the supervisor's requests need of the relay; RelayClient is the real one. */
export type MonitorRelay = Pick<RelayClient, 'agentRequest' | 'me' | 'agentId'>;

/** A join as startMonitor answers it: the leg to answer when it is new, the mode alone when it switched. */
export interface MonitorStart {
  callId: string;
  mode: MonitorMode;
  legId?: string;
  offer?: string;
}

interface Joined {
  callId: string;
  mode: MonitorMode;
  legId: string;
  /** The call records now, as its last `call.recording` said; undefined until one came for this join. */
  recording?: boolean;
}

export interface MonitoringOptions {
  relay: MonitorRelay;
  /** Whether a call of this agent's own keeps it busy (placing, answering, on it). */
  busy: () => boolean;
  /** The monitorChanged push. */
  push: (change: MonitorChange) => void;
  log: Logger;
  /** How long a stop waits for the relay to hear the leave. Default 2 s. */
  stopWaitMs?: number;
}

const okReplySchema = z.object({}).passthrough();
/** The ended joins whose `left` is awaited: the newest this many (a relay that restarted never sends it). */
const OWED_LEFT_LIMIT = 50;

export class Monitoring {
  private joined: Joined | undefined;
  /**
   * The call a join is on its way for, and the relay's `left` for it if one came meanwhile (its
   * events and its answers travel apart: the call may end before the join's answer arrives).
   */
  private joining: { callId: string; left?: 'left' | 'call_ended' } | undefined;
  /** Calls whose join ended while the relay's `left` for it may still be on its way: its words until then are about that join. */
  private readonly owedLeft = new Set<string>();
  /** The commands one after another: a join, a switch and a leave never cross on the relay. */
  private queue: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(private readonly o: MonitoringOptions) {}

  /** The colleague's call this agent is joined to, if any: its events are the join's, not a call of this agent's. */
  get joinedCall(): string | undefined {
    return this.joined?.callId;
  }

  /** The Team view's list: every live call of the team (supervisors only; the relay refuses others 403). */
  liveCalls(): Promise<Result<LiveCalls>> {
    return this.o.relay.agentRequest('live calls', 'GET', SUPERVISOR_PATHS.liveCalls, undefined, liveCallsSchema, LIST_READ_LIMIT);
  }

  /** "Listen", "Whisper", "Barge": joins `callId` in `mode`, or, joined to it already, switches to `mode` on the same leg. */
  start(callId: string, mode: MonitorMode): Promise<Result<MonitorStart>> {
    return this.inTurn(async () => {
      if (this.stopped) return errText('not_available', text('calls.shuttingDown'));
      if (this.o.busy()) return errText('invalid_state', text('supervision.onCall'));
      const joined = this.joined;
      if (joined?.callId === callId) {
        const switched = await this.o.relay.agentRequest('monitor', 'PUT', SUPERVISOR_PATHS.monitor(callId), { mode }, monitorModeReplySchema);
        if (switched.ok) {
          this.set({ ...joined, mode: switched.value.mode });
          return ok({ callId, mode: switched.value.mode });
        }
        // The relay no longer has this join (its leg went, the relay restarted): joined afresh below.
        if (switched.error.code !== 'not_found') return switched;
        this.o.log.info('the relay no longer had the joined call’s monitor; joining it again', { callId });
        this.owe(callId);
        this.set(undefined, 'left');
      } else if (joined !== undefined) {
        await this.leaveNow(joined.callId);
      }
      // Its own events are told apart by this agent's id: known before the relay can send one.
      if (this.o.relay.agentId === undefined) await this.o.relay.me();
      this.joining = { callId };
      const join = await this.o.relay.agentRequest('monitor', 'POST', SUPERVISOR_PATHS.monitor(callId), { mode }, monitorJoinReplySchema);
      const leftMeanwhile = this.joining.left;
      this.joining = undefined;
      if (!join.ok) return join;
      this.o.log.info('joined a colleague’s call', { callId, mode: join.value.mode });
      this.set({ callId, mode: join.value.mode, legId: join.value.legId });
      // Ended already: the windows hear it right after the join, and close the leg they answer.
      if (leftMeanwhile !== undefined) this.set(undefined, leftMeanwhile);
      return ok({ callId, mode: join.value.mode, legId: join.value.legId, offer: join.value.offer });
    });
  }

  /** The window's answer to the joined call's leg. */
  answer(callId: string, legId: string, sdp: string): Promise<Result<null>> {
    return this.inTurn(async () => {
      if (this.joined?.callId !== callId || this.joined.legId !== legId) return errText('invalid_state', text('supervision.notJoined', { callId }));
      const answered = await this.o.relay.agentRequest('monitor answer', 'POST', SUPERVISOR_PATHS.monitorAnswer(callId), { legId, sdp }, okReplySchema);
      return answered.ok ? ok(null) : answered;
    });
  }

  /** "Leave": leaving a call not joined (twice, or after it ended) is no error. */
  leave(callId: string): Promise<Result<null>> {
    return this.inTurn(() => this.leaveNow(callId));
  }

  /** The relay's events: its word on this agent's own join, and whether the joined call records. */
  relayEvent(envelope: RelayEnvelope): void {
    const e = envelope.event;
    if (e.type === 'call.recording') {
      const joined = this.joined;
      if (joined?.callId === e.callId) this.set({ ...joined, recording: e.recording });
      return;
    }
    if (e.type !== 'call.monitor' || this.o.relay.agentId === undefined || e.supervisorId !== this.o.relay.agentId) return;
    if (this.owedLeft.has(e.callId) && e.reason !== 'call_ended') {
      // A word on a join that ended already, up to its `left`: a join made since is not concerned.
      if (e.mode === 'left') this.owedLeft.delete(e.callId);
      return;
    }
    this.owedLeft.delete(e.callId);
    const joined = this.joined;
    if (e.mode === 'left' && this.joining?.callId === e.callId) this.joining.left = e.reason ?? 'left';
    // The relay's word on a join this app has left already (its own leave, told back) changes nothing.
    if (joined?.callId !== e.callId) return;
    if (e.mode === 'left') {
      this.o.log.info('the relay ended this agent’s join of a call', { callId: e.callId, reason: e.reason });
      this.set(undefined, e.reason ?? 'left');
    } else {
      this.set({ ...joined, mode: e.mode });
    }
  }

  /** A call of this agent's own changed: one that keeps it busy takes the window's audio, so the joined call is left. */
  callsChanged(): void {
    const joined = this.joined;
    if (joined === undefined || this.stopped || !this.o.busy()) return;
    this.o.log.info('a call of this agent’s own began: leaving the joined call', { callId: joined.callId });
    void this.leave(joined.callId);
  }

  /** The window that carried the joined call's audio is gone: its leg went with it, and so does the join. */
  windowGone(): void {
    const joined = this.joined;
    if (joined !== undefined) void this.leave(joined.callId);
  }

  /** The runtime stops (a mode switch, quit): the relay hears the leave, for a short while at most. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    const joined = this.joined;
    const leaving = joined !== undefined ? this.leave(joined.callId) : Promise.resolve(ok(null));
    this.stopped = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.o.stopWaitMs ?? 2_000)));
    await Promise.race([leaving.then(() => undefined), bound]);
    clearTimeout(timer);
  }

  private async leaveNow(callId: string): Promise<Result<null>> {
    const left = await this.o.relay.agentRequest('leave monitor', 'DELETE', SUPERVISOR_PATHS.monitor(callId), undefined, okReplySchema);
    // Left here whatever the relay said: the window closes the leg, and a leg that closes ends the join there too.
    if (this.joined?.callId === callId) {
      this.owe(callId);
      this.set(undefined, 'left');
    }
    if (left.ok || left.error.code === 'not_found') return ok(null);
    this.o.log.warn('the relay did not take a leave; the closed leg ends the join', { callId, code: left.error.code, reason: left.error.message });
    return left;
  }

  /** The relay's `left` for the join of `callId` that ended is on its way. */
  private owe(callId: string): void {
    this.owedLeft.delete(callId);
    this.owedLeft.add(callId);
    if (this.owedLeft.size > OWED_LEFT_LIMIT) this.owedLeft.delete(this.owedLeft.values().next().value!);
  }

  /** The one writer of the join: the windows hear of each change. */
  private set(next: Joined | undefined, reason: 'left' | 'call_ended' = 'left'): void {
    const before = this.joined;
    if (next === undefined) {
      if (before === undefined) return;
      this.joined = undefined;
      this.o.push({ callId: before.callId, mode: 'left', reason });
      return;
    }
    this.joined = next;
    if (before?.callId === next.callId && before.mode === next.mode && before.legId === next.legId && before.recording === next.recording) return;
    // Another call's join gave way to this one: its leg closes first.
    if (before !== undefined && before.callId !== next.callId) this.o.push({ callId: before.callId, mode: 'left', reason: 'left' });
    this.o.push({ callId: next.callId, mode: next.mode, ...(next.recording !== undefined ? { recording: next.recording } : {}) });
  }

  private inTurn<T>(run: () => Promise<T>): Promise<T> {
    const next = this.queue.then(run);
    this.queue = next.catch(() => undefined);
    return next;
  }
}
