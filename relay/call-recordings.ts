// When the team's bridged calls record, the relay's side (relay/REFERENCE.md "Recordings",
// shared/bridge-recording.ts). A call's node records it and keeps the file until the call ends; the
// relay decides when recording starts and stops, tells everyone in the call (`call.recording`: its
// agents and the supervisors joined to it), and keeps who was in the call while it had a recording,
// which is who may hear it besides supervisors.
//
// It learns what it needs from the commands the relay sends the call's node (`observe`): the
// customer is connected when the node took `connectCustomer` (incoming) or `applyCustomerAnswer`
// (outgoing); who is in the call may have changed whenever new routes went to the node (every
// member who joins, leaves or rejoins, and every supervisor whose leg connects or goes, is routed:
// bridged-call.ts routesOf); the call is over when the
// node is told `endCall`, or the bridge lost it (BridgedCalls.onCallLost). So the transfers, the
// rejoins and whatever else moves agents in and out of a call need no word of recordings.
//
// `always`: the node starts recording when the customer is connected. `on-demand`: a member starts
// and stops it (`toggle`). Either way each start plays the team's notice to the customer first. The
// steps of one call run one after another, in the order they came.
import type { BridgeControl, BridgedCallReport, Routes } from '../shared/bridge';
import type { RecordMode } from '../shared/bridge-recording';
import type { RelayEvent } from '../shared/events';
import type { Logger } from '../shared/log';
import type { AppError, Result } from '../shared/result';
import { done, nodeGoneRefusal, noCall, refuse, type Outcome } from './bridged-call';
import type { BridgeNodeSource, LostCall } from './bridged-calls';
import { KeyedTaskQueue } from './keyed-task-queue';
import type { RecordingsStore } from './recordings-store';

export type RecordingEvent = Extract<RelayEvent, { type: 'call.recording' }>;
/** Told once per change: the relay stores the event for these agents (the call's members and supervisors, or one who joined). */
export type RecordingListener = (event: RecordingEvent, agentIds: readonly string[]) => void;

/** What the recordings read of the relay's bridged calls (BridgedCalls). */
export interface RecordedCalls {
  /** The agents in the call now, each with its leg; undefined for a call this instance does not hold. */
  membersOf(callId: string): ReadonlyMap<string, string> | undefined;
  /** The supervisors joined to the call whose legs are connected, each with its leg: they are in the call too, but never among its agents. */
  supervisorsOf(callId: string): ReadonlyMap<string, string> | undefined;
  onCallLost(listener: (lost: LostCall) => void): () => void;
}

export type CallRecordingsOptions = {
  logger: Logger;
  now?: () => number;
  /** How long `always` keeps asking a node that is not ready to record yet, and how often. Default 10 000 and 250. */
  startRetry?: { forMs: number; everyMs: number };
} & (
  | { mode: 'never' }
  | {
      mode: 'on-demand' | 'always';
      /** 48 kHz mono PCM played to the customer at each start (record-notice.ts). */
      notice: Int16Array;
      /** Where the agents of each recording are kept. */
      store: Pick<RecordingsStore, 'noteAgents'>;
    }
);

interface CallRecording {
  nodeId: string;
  recording: boolean;
  /** When the call first recorded; undefined while it never did. */
  startedAt?: number;
  /** Who started it, on demand: told to a member who joins while it records. */
  by?: string;
  /** Every agent who was a member while the call had a recording. */
  agents: Set<string>;
  /** Who was in the call as last seen, members and supervisors: agent → leg (one with another leg rejoined, or joined again). */
  seen: Map<string, string>;
  /** The last `call.recording` time: each change's is later, so that none is taken for another's repeat. */
  lastTimestamp: number;
}

const DEFAULT_START_RETRY = { forMs: 10_000, everyMs: 250 };

export class CallRecordings {
  readonly mode: RecordMode;
  private readonly states = new Map<string, CallRecording>();
  private readonly turns = new KeyedTaskQueue();
  private readonly listeners = new Set<RecordingListener>();
  private readonly log: Logger;
  private readonly now: () => number;
  private calls: RecordedCalls | undefined;
  private source: BridgeNodeSource | undefined;
  private stopFollowing: () => void = () => undefined;
  private closed = false;

  constructor(private readonly options: CallRecordingsOptions) {
    this.mode = options.mode;
    this.log = options.logger;
    this.now = options.now ?? Date.now;
  }

  /** What `/me` and the team's settings say of the team's recordings: absent when it never records. */
  get offered(): Exclude<RecordMode, 'never'> | undefined {
    return this.mode === 'never' ? undefined : this.mode;
  }

  /**
   * The node source BridgedCalls drives, watched: each node's control tells the recordings what it
   * was asked. A team that never records is handed its own source back.
   */
  observe(source: BridgeNodeSource): BridgeNodeSource {
    this.source = source;
    if (this.mode === 'never') return source;
    const controls = new WeakMap<BridgeControl, BridgeControl>();
    const watched = (nodeId: string, control: BridgeControl): BridgeControl => {
      let wrapped = controls.get(control);
      if (wrapped === undefined) {
        wrapped = new ObservedControl(control, nodeId, this);
        controls.set(control, wrapped);
      }
      return wrapped;
    };
    return {
      pick: async () => {
        const picked = await source.pick();
        return picked === undefined ? undefined : { nodeId: picked.nodeId, control: watched(picked.nodeId, picked.control) };
      },
      control: (nodeId) => {
        const control = source.control(nodeId);
        return control === undefined ? undefined : watched(nodeId, control);
      },
      ...(source.lost !== undefined ? { lost: source.lost.bind(source) } : {}),
      ...(source.onEvent !== undefined ? { onEvent: source.onEvent.bind(source) } : {}),
    };
  }

  /** The bridged calls whose members the recordings read; a call the bridge lost is over for them too. */
  attach(calls: RecordedCalls): void {
    this.calls = calls;
    this.stopFollowing = calls.onCallLost((lost) => this.ended(lost.callId));
  }

  /** Every `call.recording` to store, from now on. */
  onEvent(listener: RecordingListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether the call records now. */
  isRecording(callId: string): boolean {
    return this.states.get(callId)?.recording === true;
  }

  /**
   * POST RECORDING_AGENT_PATHS.toggle: "Record" / "Stop recording" of a member of the call. Repeating
   * the call's state changes nothing and is no error.
   */
  async toggle(callId: string, agentId: string, recording: boolean): Promise<Outcome<{ recording: boolean }>> {
    const members = this.calls?.membersOf(callId);
    if (members === undefined) return noCall(callId);
    if (!members.has(agentId)) return refuse({ status: 403, code: 'forbidden', message: 'only an agent in the call starts or stops its recording' });
    if (this.options.mode === 'never') return refuse({ status: 409, code: 'invalid_state', message: 'the team does not record calls (--record never)' });
    if (this.options.mode === 'always') return refuse({ status: 409, code: 'invalid_state', message: 'the team records every call (--record always): its recording is not started or stopped by hand' });
    const { notice } = this.options;
    return this.inTurn(callId, async () => {
      const state = this.states.get(callId);
      if (state === undefined) {
        return this.calls?.membersOf(callId) === undefined ? noCall(callId) : refuse({ status: 409, code: 'invalid_state', message: 'the customer is not connected yet: a call records once they are' });
      }
      if (state.recording === recording) return done({ recording });
      const control = this.source?.control(state.nodeId);
      if (control === undefined) return nodeGoneRefusal(callId);
      const asked = recording ? await control.startRecording(callId, notice) : await control.stopRecording(callId);
      if (!asked.ok) return refusalOf(callId, asked.error);
      // The call ended while the node was asked: nobody is left to tell.
      if (this.states.get(callId) !== state) return noCall(callId);
      await this.change(callId, state, recording, agentId);
      this.log.info(recording ? 'a call records' : 'a call no longer records', { callId, by: agentId });
      return done({ recording });
    });
  }

  /** The call's customer is connected on its node: with `always` it records from now on. */
  customerConnected(callId: string, nodeId: string): void {
    void this.inTurn(callId, async () => {
      if (this.closed || this.states.has(callId)) return;
      this.states.set(callId, { nodeId, recording: false, agents: new Set(), seen: this.inCall(callId), lastTimestamp: 0 });
    });
    if (this.options.mode === 'always') void this.startAlways(callId, this.options.notice);
  }

  /**
   * New routes went to the call's node: a member who joined (or rejoined) hears that it records, and
   * counts among its agents; a supervisor whose leg connected hears it too.
   */
  routed(callId: string): void {
    void this.inTurn(callId, async () => {
      const state = this.states.get(callId);
      const members = this.calls?.membersOf(callId);
      if (state === undefined || members === undefined) return;
      const inCall = this.inCall(callId);
      const joined = [...inCall].filter(([agentId, legId]) => state.seen.get(agentId) !== legId).map(([agentId]) => agentId);
      state.seen = inCall;
      if (state.startedAt !== undefined) await this.noteAgents(callId, state, members);
      if (state.recording && joined.length > 0) this.tell(callId, state, true, state.by, joined);
    });
  }

  /** The call is over (ended at its node, or lost): forgotten here; its node hands the file over. */
  ended(callId: string): void {
    void this.inTurn(callId, async () => {
      this.states.delete(callId);
    });
  }

  /** Stops following the bridge and forgets every call (the relay closes: its bridged calls end). */
  async close(): Promise<void> {
    this.closed = true;
    this.stopFollowing();
    await this.turns.idle();
    this.states.clear();
  }

  /** `always`: the node may not be ready to record the moment the customer connects; it is asked again a little later, for a while. */
  private async startAlways(callId: string, notice: Int16Array): Promise<void> {
    const retry = this.options.startRetry ?? DEFAULT_START_RETRY;
    const giveUpAt = this.now() + retry.forMs;
    for (;;) {
      const outcome = await this.inTurn(callId, async (): Promise<'done' | 'again'> => {
        const state = this.states.get(callId);
        if (this.closed || state === undefined || state.recording) return 'done';
        const control = this.source?.control(state.nodeId);
        if (control === undefined) return 'done';
        const started = await control.startRecording(callId, notice);
        if (started.ok) {
          if (this.states.get(callId) === state) await this.change(callId, state, true, undefined);
          this.log.info('a call records', { callId });
          return 'done';
        }
        if (started.error.code === 'invalid_state' && this.now() < giveUpAt) return 'again';
        this.log.warn('the bridge did not start recording a call: it goes unrecorded', { callId, nodeId: state.nodeId, reason: started.error.message });
        return 'done';
      });
      if (outcome === 'done') return;
      await new Promise<void>((resolve) => setTimeout(resolve, retry.everyMs).unref());
    }
  }

  /** The call records now, or no longer: everyone in it is told once the meta says who may hear it. */
  private async change(callId: string, state: CallRecording, recording: boolean, by: string | undefined): Promise<void> {
    state.recording = recording;
    if (by !== undefined) state.by = by;
    const members = this.calls?.membersOf(callId) ?? new Map<string, string>();
    if (recording) {
      state.startedAt ??= this.now();
      await this.noteAgents(callId, state, members);
    }
    state.seen = this.inCall(callId);
    this.tell(callId, state, recording, by, [...state.seen.keys()]);
  }

  /** Everyone in the call now, each with its leg: its members, then the supervisors joined to it. */
  private inCall(callId: string): Map<string, string> {
    return new Map([...(this.calls?.membersOf(callId) ?? []), ...(this.calls?.supervisorsOf(callId) ?? [])]);
  }

  /** The members join the recording's agents; the meta is written when that adds anyone (a failure is the store's to log). */
  private async noteAgents(callId: string, state: CallRecording, members: ReadonlyMap<string, string>): Promise<void> {
    if (this.options.mode === 'never' || state.startedAt === undefined) return;
    const before = state.agents.size;
    for (const agentId of members.keys()) state.agents.add(agentId);
    if (state.agents.size === before && before > 0) return;
    await this.options.store.noteAgents(callId, [...state.agents], state.startedAt);
  }

  private tell(callId: string, state: CallRecording, recording: boolean, by: string | undefined, agentIds: readonly string[]): void {
    if (agentIds.length === 0) return;
    const timestamp = Math.max(this.now(), state.lastTimestamp + 1);
    state.lastTimestamp = timestamp;
    const event: RecordingEvent = { type: 'call.recording', callId, recording, ...(by !== undefined ? { by } : {}), timestamp };
    for (const listener of [...this.listeners]) {
      try {
        listener(event, agentIds);
      } catch (error) {
        this.log.error('a recording listener failed', { callId, error });
      }
    }
  }

  private inTurn<T>(callId: string, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      void this.turns.run(callId, () => work().then(resolve, reject));
    });
  }
}

/** A node's refusal to start or stop, as the agent's answer. */
function refusalOf<T>(callId: string, error: AppError): Outcome<T> {
  if (error.code === 'invalid_state') return refuse({ status: 409, code: 'invalid_state', message: error.message });
  if (error.code === 'not_found') return noCall(callId);
  return refuse({ status: 502, code: 'bridge_failed', message: error.message });
}

/**
 * A node's control that tells the recordings what it was asked, once the node took it: the customer
 * connected, new routes, the call's end (told whatever the node answered: the relay is done with it).
 */
class ObservedControl implements BridgeControl {
  constructor(
    private readonly control: BridgeControl,
    private readonly nodeId: string,
    private readonly recordings: CallRecordings,
  ) {}

  prepareIncoming(callId: string, offer: string): Promise<Result<{ answer: string }>> {
    return this.control.prepareIncoming(callId, offer);
  }
  async connectCustomer(callId: string): Promise<Result<null>> {
    const connected = await this.control.connectCustomer(callId);
    if (connected.ok) this.recordings.customerConnected(callId, this.nodeId);
    return connected;
  }
  prepareOutgoing(ref: string): Promise<Result<{ offer: string }>> {
    return this.control.prepareOutgoing(ref);
  }
  bindOutgoing(ref: string, callId: string): Promise<Result<null>> {
    return this.control.bindOutgoing(ref, callId);
  }
  async applyCustomerAnswer(callId: string, answer: string): Promise<Result<null>> {
    const applied = await this.control.applyCustomerAnswer(callId, answer);
    if (applied.ok) this.recordings.customerConnected(callId, this.nodeId);
    return applied;
  }
  offerAgentLeg(callId: string, legId: string): Promise<Result<{ offer: string }>> {
    return this.control.offerAgentLeg(callId, legId);
  }
  applyAgentAnswer(callId: string, legId: string, answer: string): Promise<Result<null>> {
    return this.control.applyAgentAnswer(callId, legId, answer);
  }
  answerAgentLeg(callId: string, legId: string, offer: string): Promise<Result<{ answer: string }>> {
    return this.control.answerAgentLeg(callId, legId, offer);
  }
  async setRoutes(callId: string, routes: Routes): Promise<Result<null>> {
    const routed = await this.control.setRoutes(callId, routes);
    if (routed.ok) this.recordings.routed(callId);
    return routed;
  }
  closeAgentLeg(callId: string, legId: string): Promise<Result<null>> {
    return this.control.closeAgentLeg(callId, legId);
  }
  endCall(callId: string): Promise<Result<null>> {
    this.recordings.ended(callId);
    return this.control.endCall(callId);
  }
  releaseCustomer(callId: string): Promise<Result<null>> {
    return this.control.releaseCustomer(callId);
  }
  report(callId: string): Promise<Result<BridgedCallReport>> {
    return this.control.report(callId);
  }
  startRecording(callId: string, notice?: Int16Array): Promise<Result<null>> {
    return this.control.startRecording(callId, notice);
  }
  stopRecording(callId: string): Promise<Result<null>> {
    return this.control.stopRecording(callId);
  }
}


/** RelayOptions.recordings: whether the team's bridge records its calls, and where they are kept (relay/REFERENCE.md "Recordings"). */
export interface RelayRecordingOptions {
  mode: RecordMode;
  /** Where the files are kept and served from: needed to record; with `never`, what was kept is still served and swept. */
  store?: RecordingsStore;
  /** The notice played at each start, 48 kHz mono PCM (record-notice.ts): needed to record. */
  notice?: Int16Array;
}

/** The recordings of a relay that bridges calls; a mode that records without a store or a notice is refused. */
export function callRecordingsFor(options: RelayRecordingOptions | undefined, logger: Logger): CallRecordings {
  const mode = options?.mode ?? 'never';
  if (mode === 'never') return new CallRecordings({ mode, logger });
  if (options?.store === undefined) throw new RangeError(`recordings: record ${mode} needs a store: where the recordings are kept`);
  if (options.notice === undefined) throw new RangeError(`recordings: record ${mode} needs a notice: the customer hears it when a recording starts`);
  return new CallRecordings({ mode, logger, store: options.store, notice: options.notice });
}
