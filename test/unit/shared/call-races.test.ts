// The claim races (relay/REFERENCE.md "Routing and claims", protocol.md), as a deterministic
// simulation around the real CallCoordinator: one or two agents, each a coordinator whose requests
// to the relay (CallClaims) and the gateway (CallControl) stay in flight until the simulation
// answers them; a model relay (first claim wins; a decline is the last one when no colleague may
// still answer and nobody else claimed the call) and a model gateway (what it holds per call, and
// every request that reached it). fast-check chooses the interleaving: the customer, the agents'
// commands, media, deadlines (the coordinators' own timers, on one fake clock), when each request
// reaches the relay or the gateway and when its answer comes back, deliveries late, twice and out
// of order, and crashes (a new coordinator on the same data directory, started from the
// live-calls.json the crashed one left, as the app does).
//
// Two simplifications, so that "reached the gateway" is well defined: a reject or terminate and its
// answer are one step (an answer lost after the request landed would make the next run send it
// again, which the gateway refuses); and after a crash the relay stream goes on after the last event
// the run handled, except that the calls the new run holds as leftovers get all their events again.
// (The relay replays the last 60 s to a session that presents no cursor; a run that no longer holds
// a call, because nothing was owed for it, would ring it again from such a replay.)
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallCoordinator, type CoordinatorTimers } from '../../../electron/core/call-coordinator';
import type { CallControl } from '../../../electron/core/gateway-client';
import type { CallClaims, DeclineOutcome } from '../../../electron/core/relay-client';
import { deadlineOf, incomingLocalId, isLive, owedEnd, type CallEvent, type CallRecord, type CallState, type GatewayEnd } from '../../../shared/call-state';
import { text } from '../../../shared/i18n/text';
import type { RelayEvent } from '../../../shared/events';
import type { Logger } from '../../../shared/log';
import { err, ok, type AppError, type Result } from '../../../shared/result';
import { FakeClock, type FakeTimer } from '../../support/fake-clock';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';

const T0 = 1_800_000_000_000;
const IN_ID = 'wacid.race-in';
const IN_LOCAL = incomingLocalId(IN_ID);
const OUT_ID = 'wacid.race-out';
const OUT_LOCAL = 'out:race';
const CUSTOMER = '447700900123';
const CALLEE = '12025550143';
const TALK_SEC = 30;
const GATEWAY_URL = 'https://gateway.test/v1';

type Name = 'A' | 'B';
type Command = 'answer' | 'decline' | 'hangup' | 'dial';
type Owed = Array<{ callId: string; action: GatewayEnd }>;

/** The gateway call id a local id stands for (one incoming call, one outgoing call, their leftovers). */
function callIdOf(localId: string): string {
  if (localId === IN_LOCAL) return IN_ID;
  if (localId === OUT_LOCAL) return OUT_ID;
  if (localId.startsWith('left:')) return localId.slice('left:'.length);
  throw new Error(`unknown local id ${localId}`);
}

const QUIET: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const NO_HISTORY = { record: () => undefined, entries: () => [] };
/** Everything the simulation sees a coordinator do: a request sent, a call shown, a command answered. */
let activity = 0;
const saw = (): void => {
  activity++;
};
/**
 * Lets the coordinators follow up on what a move started (an answer resolved, a command dispatched)
 * before the world moves on. Their follow-ups are promise chains a few microtasks deep, with neither
 * timers nor I/O between: drained here until nothing has happened for a good many microtasks. (Not
 * by yielding to the event loop: live-calls.json writes would then run between every two moves.)
 */
async function settleMicrotasks(): Promise<void> {
  for (let seen = activity, idle = 0; idle < 12; idle++) {
    await Promise.resolve();
    if (activity !== seen) {
      seen = activity;
      idle = 0;
    }
  }
}

let base = '';
let directories = 0;
/** A new data directory: every run of an agent in one world shares it, nothing else does. */
async function newDataDir(): Promise<string> {
  const dir = join(base, String(++directories));
  await mkdir(dir);
  return dir;
}
beforeAll(async () => {
  // Every coordinator writes its live-calls.json: in memory where the system has it.
  base = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'softphone-races-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** What live-calls.json holds: what the gateway would still be owed after a crash. */
async function owedInFile(dataDir: string): Promise<Owed> {
  const text = await readFile(join(dataDir, 'live-calls.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return [];
  const file = JSON.parse(text) as { calls: Array<{ callId: string; action: GatewayEnd }> };
  return file.calls.map(({ callId, action }) => ({ callId, action }));
}

/**
 * The timers one run's coordinator sets on the world's clock: the one it sets while starting is its
 * housekeeping (pruning), the others are its calls' deadlines.
 */
class RunTimers implements CoordinatorTimers {
  starting = true;
  private readonly all = new Set<number>();
  private readonly deadlineHandles = new Set<number>();

  constructor(private readonly clock: FakeClock) {}

  readonly setTimeout = (fn: () => void, ms: number): number => {
    const handle = this.clock.setTimeout(fn, ms);
    this.all.add(handle);
    if (!this.starting) this.deadlineHandles.add(handle);
    return handle;
  };

  readonly clearTimeout = (handle: unknown): void => this.clock.clearTimeout(handle);

  /** The deadlines set and not run yet, soonest first. */
  deadlines(): FakeTimer[] {
    return this.clock.timers().filter((t) => this.deadlineHandles.has(t.handle));
  }

  /** The run is over (it crashed): none of its timers will ever run. */
  stop(): void {
    for (const handle of this.all) this.clock.clearTimeout(handle);
  }
}

// ---------------------------------------------------------------------------------------------
// The world: agents, the relay, the gateway.
// ---------------------------------------------------------------------------------------------

/** A request a coordinator sent, waiting for the relay's or the gateway's answer. */
type Sent =
  | { kind: 'claim'; callId: string; resolve: (result: Result<{ agentId: string }>) => void }
  | { kind: 'decline'; callId: string; resolve: (result: Result<DeclineOutcome>) => void }
  | { kind: 'accept'; callId: string; resolve: (result: Result<null>) => void }
  | { kind: 'initiate'; resolve: (result: Result<{ callId: string }>) => void }
  | { kind: 'end'; callId: string; action: GatewayEnd; resolve: (result: Result<null>) => void };
type Request = { kind: 'claim' | 'decline' | 'accept'; callId: string } | { kind: 'initiate' } | { kind: 'end'; callId: string; action: GatewayEnd };

/** What the event the coordinator makes of an answer is, for the ledger and the observer. */
interface Cause {
  type: CallEvent['type'];
  lostClaim?: boolean;
}

type InFlight = Sent & {
  /** The move it was sent in. */
  sentAt: number;
  /** Reached the relay or the gateway; its answer has not come back yet. */
  landed: boolean;
  /** The answer decided when it landed: handing it over, and the event the coordinator makes of it. */
  answer?: { give: () => void; cause: Cause; says: string; learns: (l: Ledger) => void };
};

const requestOf = (f: InFlight): Request => {
  switch (f.kind) {
    case 'initiate':
      return { kind: 'initiate' };
    case 'end':
      return { kind: 'end', callId: f.callId, action: f.action };
    default:
      return { kind: f.kind, callId: f.callId };
  }
};

/** What one agent did about one call and what it learned, across runs: the gateway's ledger. */
interface Ledger {
  /** It ended the call itself (hang-up, decline, deadline, media failure, refused accept), or crashed while the call was live. */
  letGo: boolean;
  /** The call ended here on the gateway's or a colleague's word (terminate, claim, rejection, lost claim) before it let go. */
  endedRemotely: boolean;
  /** Its claim came back won (or undecided: accepted all the same). */
  heardWon: boolean;
  /** Its decline verdict came back "last". */
  heardLast: boolean;
  /** The gateway's id of its outgoing call came back. */
  heardId: boolean;
  /** A terminate from the gateway reached it. */
  heardTerminate: boolean;
  /** Reject or terminate that reached the gateway, and the last outcome of one. */
  endsReached: number;
  lastEnd?: 'done' | 'refused' | 'unreached';
  /** Accepts sent to the gateway. */
  accepts: number;
  /** The run whose request reached the gateway; the run and kind of call of the last one sent. */
  reachedInRun?: number;
  lastEndRun?: number;
  lastEndByLeftover?: boolean;
  /** It showed the call answering (it clicked Answer on a ringing call). */
  answered: boolean;
}

interface Agent {
  name: Name;
  knowsOwnId: boolean;
  dataDir: string;
  run: number;
  crashes: number;
  coordinator: CallCoordinator;
  timers: RunTimers;
  inflight: InFlight[];
  /** Relay events sent to it and not yet handled, in any order. */
  inbox: RelayEvent[];
  /** Handled this run (what a redelivery repeats), and in any run (what the relay replays for a leftover). */
  handled: RelayEvent[];
  handledEver: RelayEvent[];
  /** What the relay replayed to this run for its leftovers. */
  replayed: Set<RelayEvent>;
  redeliveries: number;
  commands: Map<string, { run: number; kind: Command }>;
  replies: Map<string, Array<Result<unknown>>>;
  commandSeq: number;
  /** This run: the calls as it last showed them, those it has shown ended, and the move in which it handled each call id's terminate. */
  shown: Map<string, CallState>;
  shownEnded: Set<string>;
  terminated: Map<string, number>;
  /** The call ids this run holds as leftovers: the crash file it started from. */
  leftovers: Set<string>;
  /** The event the coordinator is handling now. */
  cause: Cause | undefined;
  /** A gateway request answered in this move: the call it was for and the move it was sent in. */
  answeredNow: { callId: string; sentAt: number } | undefined;
}

interface GatewayCall {
  direction: 'incoming' | 'outgoing';
  state: 'ringing' | 'accepted' | 'ended';
  answeredBy?: Name | 'customer';
  endedBy?: Name | 'customer';
  rang?: boolean;
}

interface Scenario {
  team: boolean;
  incoming: boolean;
  outgoing: boolean;
  knowsOwnId: [boolean, boolean];
  crashes: boolean;
  /** The relay may fail to answer a claim or a decline (the app then accepts anyway, and rejects nothing). */
  flakyRelay: boolean;
  steps: Array<{ move: number; choice: number }>;
}

interface World {
  scenario: Scenario;
  clock: FakeClock;
  /** Moves played so far. */
  move: number;
  team: Name[];
  agents: Partial<Record<Name, Agent>>;
  gateway: Map<string, GatewayCall>;
  owner: Map<string, Name>;
  declined: Map<string, Set<Name>>;
  ledgers: Map<string, Ledger>;
  dialed: boolean;
  /** Accept requests sent for a call, by every agent in every run. */
  acceptsFor: Map<string, number>;
  /** How the losers of claim races learned it while answering: the relay's claim event, or their own claim's answer. */
  lostBy: { claimEvent: number; claimResult: number };
  /** Broken rules found while running (checked at the end with the trace). */
  violations: string[];
  trace: string[];
  events: number;
}

const agentsOf = (w: World): Agent[] => w.team.map((n) => w.agents[n]!);

function ledger(w: World, agent: Name, callId: string): Ledger {
  const key = `${agent}|${callId}`;
  let l = w.ledgers.get(key);
  if (l === undefined) {
    l = { letGo: false, endedRemotely: false, heardWon: false, heardLast: false, heardId: false, heardTerminate: false, endsReached: 0, accepts: 0, answered: false };
    w.ledgers.set(key, l);
  }
  return l;
}

/** The local id a call id has in this agent's run: a leftover's, or its call's. */
const localIdIn = (a: Agent, callId: string): string => (a.leftovers.has(callId) ? `left:${callId}` : callId === IN_ID ? IN_LOCAL : OUT_LOCAL);

/** The relay's fan-out of one event for a call: a claimed call's events go to its owner only; others to everyone it rang. */
function publish(w: World, callId: string, event: RelayEvent): void {
  const owner = w.owner.get(callId);
  const audience = owner !== undefined ? [owner] : w.team;
  for (const name of audience) w.agents[name]!.inbox.push(event);
}

function announceClaim(w: World, callId: string, winner: Name): void {
  // Everyone an incoming call rang hears the claim; an outgoing call rang nobody: only its owner.
  const audience = w.gateway.get(callId)?.direction === 'incoming' ? w.team : [winner];
  for (const name of audience) w.agents[name]!.inbox.push({ type: 'call.claimed', callId, agentId: winner, timestamp: w.clock.t });
}

function endCallAtGateway(w: World, callId: string, by: Name | 'customer'): void {
  const g = w.gateway.get(callId)!;
  const talked = g.state === 'accepted';
  g.state = 'ended';
  g.endedBy = by;
  publish(w, callId, { type: 'call.terminated', callId, status: 'COMPLETED', timestamp: w.clock.t, ...(talked ? { durationSec: TALK_SEC } : {}) });
}

// ---------------------------------------------------------------------------------------------
// An agent: a CallCoordinator per run, with what the simulation sees of it.
// ---------------------------------------------------------------------------------------------

/** The relay and the gateway as the coordinator of one run reaches them: each request waits in flight for the world. */
function fakesFor(w: World, agent: () => Agent, run: number, knowsOwnId: boolean, name: Name): { claims: CallClaims; gateway: CallControl } {
  const send = (sent: Sent): void => {
    const a = agent();
    if (run !== a.run) {
      w.violations.push(`${a.name}${run}: a ${sent.kind} sent after the run crashed`);
      return;
    }
    saw();
    a.inflight.push({ ...sent, sentAt: w.move, landed: false });
  };
  const end = (callId: string, action: GatewayEnd): Promise<Result<null>> => {
    // The gateway ended it and this run knew before it asked for the end: nothing may be sent any more.
    // It asked in this move, or, queued behind a request of the call answered now, after that one went out.
    const a = agent();
    const terminatedAt = a.terminated.get(callId);
    const askedAfter = a.answeredNow?.callId === callId ? a.answeredNow.sentAt : w.move;
    if (terminatedAt !== undefined && terminatedAt <= askedAfter) w.violations.push(`${a.name}${a.run}: ${action} for ${callId} after its terminate was handled`);
    return new Promise((resolve) => send({ kind: 'end', callId, action, resolve }));
  };
  return {
    claims: {
      agentId: knowsOwnId ? name : undefined,
      claim: (callId) => new Promise((resolve) => send({ kind: 'claim', callId, resolve })),
      decline: (callId) => new Promise((resolve) => send({ kind: 'decline', callId, resolve })),
    },
    gateway: {
      accept: (callId) => {
        ledger(w, name, callId).accepts++;
        w.acceptsFor.set(callId, (w.acceptsFor.get(callId) ?? 0) + 1);
        return new Promise((resolve) => send({ kind: 'accept', callId, resolve }));
      },
      initiate: () => new Promise((resolve) => send({ kind: 'initiate', resolve })),
      reject: (callId) => end(callId, 'reject'),
      terminate: (callId) => end(callId, 'terminate'),
    },
  };
}

/** A run of the agent: a coordinator on its data directory, its timers on the world's clock. */
function newRun(w: World, agent: () => Agent, run: number, name: Name, dataDir: string, knowsOwnId: boolean): { coordinator: CallCoordinator; timers: RunTimers } {
  const { claims, gateway } = fakesFor(w, agent, run, knowsOwnId, name);
  const timers = new RunTimers(w.clock);
  const coordinator = new CallCoordinator({ gateway, claims, gatewayUrl: GATEWAY_URL, dataDir, history: NO_HISTORY, now: w.clock.now, timers, logger: QUIET });
  coordinator.onCallChanged((call) => observe(w, agent(), call));
  return { coordinator, timers };
}

/** Starts the agent's run: its coordinator takes over what the crash file says a previous run left live. */
async function startRun(a: Agent): Promise<void> {
  a.cause = { type: 'local.leftover' };
  await a.coordinator.start();
  a.timers.starting = false;
}

async function newAgent(w: World, name: Name, knowsOwnId: boolean): Promise<Agent> {
  const dataDir = await newDataDir();
  const a: Agent = {
    name,
    knowsOwnId,
    dataDir,
    run: 1,
    crashes: 0,
    ...newRun(w, () => a, 1, name, dataDir, knowsOwnId),
    inflight: [],
    inbox: [],
    handled: [],
    handledEver: [],
    replayed: new Set(),
    redeliveries: 0,
    commands: new Map(),
    replies: new Map(),
    commandSeq: 0,
    shown: new Map(),
    shownEnded: new Set(),
    terminated: new Map(),
    leftovers: new Set(),
    cause: undefined,
    answeredNow: undefined,
  };
  await startRun(a);
  return a;
}

const LET_GO: ReadonlySet<CallEvent['type']> = new Set(['local.hangup', 'local.decline', 'local.deadline', 'local.media_failed', 'local.accept_failed']);

const callEventType = (e: RelayEvent): CallEvent['type'] => {
  switch (e.type) {
    case 'call.incoming':
      return 'remote.incoming';
    case 'call.answered':
      return 'remote.answered';
    case 'call.status':
      return 'remote.status';
    case 'call.terminated':
      return 'remote.terminated';
    case 'call.claimed':
      return 'remote.claimed';
    default:
      throw new Error(`not a call event: ${e.type}`);
  }
};

function describeRelayEvent(a: Agent, e: RelayEvent): string {
  switch (e.type) {
    case 'call.claimed':
      return ` mine=${String(a.knowsOwnId ? e.agentId === a.name : undefined)} (${e.callId})`;
    case 'call.terminated':
      return ` ${e.durationSec ?? '-'}s (${e.callId})`;
    case 'call.status':
      return ` ${e.status}`;
    case 'call.incoming':
    case 'call.answered':
      return ` (${e.callId})`;
    default:
      return '';
  }
}

/** The relay delivers an event to the agent's coordinator. */
function deliver(w: World, a: Agent, e: RelayEvent): void {
  if (!('callId' in e)) return;
  w.trace.push(`${a.name}${a.run} ← ${callEventType(e)}${describeRelayEvent(a, e)}`);
  // What it learns, before the reducer acts on it.
  if (e.type === 'call.terminated') {
    ledger(w, a.name, e.callId).heardTerminate = true;
    if (!a.terminated.has(e.callId)) a.terminated.set(e.callId, w.move);
  }
  a.cause = { type: callEventType(e) };
  a.coordinator.applyRelayEvent({ id: `e-${++w.events}`, receivedAt: w.clock.t, event: e });
}

/** What the agent shows, and the ledger: who ended each call and how. */
function observe(w: World, a: Agent, call: CallState): void {
  saw();
  const prev = a.shown.get(call.localId);
  a.shown.set(call.localId, call);
  if (call.localId.startsWith('left:')) {
    w.violations.push(`${a.name}: leftover ${call.localId} is shown`);
    return;
  }
  const callId = callIdOf(call.localId);
  const cause = a.cause;
  if (a.shownEnded.has(call.localId) && isLive(call)) w.violations.push(`${a.name}${a.run}: ${call.localId} went back to ${call.phase} after it ended`);
  if (a.terminated.has(callId) && isLive(call)) w.violations.push(`${a.name}${a.run}: ${call.localId} shown ${call.phase} after its terminate was handled`);
  if (!isLive(call)) a.shownEnded.add(call.localId);
  if (call.phase === 'answering') ledger(w, a.name, callId).answered = true;

  const wasLive = prev !== undefined && isLive(prev);
  if (!isLive(call) && (wasLive || prev === undefined)) {
    const l = ledger(w, a.name, callId);
    if (!l.letGo && !l.endedRemotely) {
      if (wasLive && cause !== undefined && LET_GO.has(cause.type)) l.letGo = true;
      else l.endedRemotely = true;
    }
  }
  // The loser of a claim race ends "answered elsewhere", whatever told it first.
  if (prev?.phase === 'answering' && call.phase === 'ended' && (cause?.type === 'remote.claimed' || cause?.lostClaim === true)) {
    if (call.end.kind !== 'answered_elsewhere') w.violations.push(`${a.name}: lost the claim but ended ${call.end.kind}`);
    w.lostBy[cause.type === 'remote.claimed' ? 'claimEvent' : 'claimResult']++;
  }
}

/** The agent clicks a button: the coordinator's command, its reply recorded when it comes. */
function command(w: World, a: Agent, kind: Command, localId: string): void {
  const requestId = `${a.name}${a.run}-${a.commandSeq++}`;
  a.commands.set(requestId, { run: a.run, kind });
  const type = ({ answer: 'local.answer', decline: 'local.decline', hangup: 'local.hangup', dial: 'local.dial' } as const)[kind];
  w.trace.push(`${a.name}${a.run} ← ${type} (${localId})`);
  a.cause = { type };
  const c = a.coordinator;
  const replied: Promise<Result<unknown>> =
    kind === 'answer'
      ? c.answerCall(localId, ANSWER_SDP)
      : kind === 'decline'
        ? c.declineCall(localId)
        : kind === 'hangup'
          ? c.hangUp(localId)
          : c.startCall(`+${CALLEE}`, DIAL_OFFER_SDP, localId, { anyway: true });
  void replied.then((result) => {
    saw();
    a.replies.set(requestId, [...(a.replies.get(requestId) ?? []), result]);
  });
}

function media(w: World, a: Agent, localId: string, state: 'connected' | 'failed'): void {
  const type = state === 'connected' ? 'local.media_connected' : 'local.media_failed';
  w.trace.push(`${a.name}${a.run} ← ${type} (${localId})`);
  a.cause = { type };
  void a.coordinator.reportMedia(state === 'connected' ? { localId, state } : { localId, state, reason: 'Media failed: ice' });
}

// ---------------------------------------------------------------------------------------------
// The relay and the gateway answer requests.
// ---------------------------------------------------------------------------------------------

const gatewayError = (code: AppError['code'], message: string, extra: Partial<AppError> = {}): Result<never> => err(code, message, extra);

/** A claim or decline reaches the relay. `choice` picks a failure when the relay is flaky. */
function relayReceives(w: World, a: Agent, f: InFlight, choice: number): void {
  const failure = w.scenario.flakyRelay ? choice % 4 : 0; // 2: not recorded, no answer; 3: recorded, answer lost
  const recorded = failure !== 2;
  if (f.kind === 'claim') {
    let won = false;
    if (recorded) {
      const owner = w.owner.get(f.callId);
      if (owner === undefined) {
        w.owner.set(f.callId, a.name);
        announceClaim(w, f.callId, a.name);
        won = true;
      } else won = owner === a.name; // claiming again as the winner still wins
    }
    const outcome = failure >= 2 ? 'unknown' : won ? 'won' : 'lost';
    const result =
      outcome === 'won'
        ? ok({ agentId: a.name })
        : outcome === 'lost'
          ? gatewayError('answered_elsewhere', 'Answered by another agent')
          : gatewayError('timeout', 'The relay did not answer in time');
    f.answer = {
      give: () => f.resolve(result),
      cause: { type: 'local.claim_result', lostClaim: outcome === 'lost' },
      says: `local.claim_result ${outcome} (${localIdIn(a, f.callId)})`,
      learns: (l) => {
        if (outcome !== 'lost') l.heardWon = true;
      },
    };
  } else if (f.kind === 'decline') {
    let last = false;
    let answer: DeclineOutcome = { othersRinging: 1 };
    if (recorded) {
      const owner = w.owner.get(f.callId);
      // A claimed call: a colleague's is not this agent's to reject; its own claim left nobody ringing.
      if (owner !== undefined) {
        last = owner === a.name;
        answer = last ? { othersRinging: 0 } : { othersRinging: 0, answeredBy: owner };
      } else {
        const declined = w.declined.get(f.callId) ?? new Set<Name>();
        declined.add(a.name);
        w.declined.set(f.callId, declined);
        const others = w.team.filter((n) => n !== a.name && !declined.has(n)).length;
        last = others === 0;
        answer = { othersRinging: others };
      }
    }
    const result = failure >= 2 ? gatewayError('timeout', 'The relay did not answer in time') : ok(answer);
    const heard = failure >= 2 ? undefined : last;
    f.answer = {
      give: () => f.resolve(result),
      cause: { type: 'local.decline_result' },
      says: `local.decline_result last=${String(heard)} (${localIdIn(a, f.callId)})`,
      learns: (l) => {
        if (heard === true) l.heardLast = true;
      },
    };
  } else {
    throw new Error(`not a relay request: ${f.kind}`);
  }
  f.landed = true;
  w.trace.push(`   relay got ${a.name}'s ${f.kind}${failure >= 2 ? ' (fails)' : ''}`);
}

/** An accept or initiate lands at the gateway (its answer comes back later); a reject or terminate lands and is answered at once. */
function gatewayReceives(w: World, a: Agent, f: InFlight, choice: number): void {
  switch (f.kind) {
    case 'accept': {
      const g = w.gateway.get(f.callId)!;
      const pick = choice % 6; // 0–2 ok, 3 refused, 4 timed out after landing, 5 not reached
      let result: Result<null>;
      if (g.state !== 'ringing') {
        result = gatewayError('gateway_error', 'The call is no longer ringing', { gatewayCode: 138002, httpStatus: 400 });
      } else if (pick === 3) {
        result = gatewayError('gateway_error', 'Invalid parameter: session.sdp', { gatewayCode: 100, httpStatus: 400 });
      } else if (pick === 5) {
        result = gatewayError('gateway_unreachable', 'ECONNRESET');
      } else {
        g.state = 'accepted';
        g.answeredBy = a.name;
        result = pick === 4 ? gatewayError('timeout', 'No answer in time') : ok(null);
      }
      const localId = localIdIn(a, f.callId);
      f.answer = {
        give: () => f.resolve(result),
        cause: { type: result.ok ? 'local.accept_ok' : 'local.accept_failed' },
        says: result.ok ? `local.accept_ok (${localId})` : `local.accept_failed ${result.error.code}`,
        learns: () => undefined,
      };
      f.landed = true;
      w.trace.push(`   gateway got ${a.name}'s accept: ${f.answer.cause.type}`);
      return;
    }
    case 'initiate': {
      let result: Result<{ callId: string }>;
      if (choice % 4 === 3) {
        result = gatewayError('no_call_permission', 'The customer has not allowed calls', { gatewayCode: 138006, httpStatus: 400 });
      } else {
        w.gateway.set(OUT_ID, { direction: 'outgoing', state: 'ringing' });
        result = ok({ callId: OUT_ID });
      }
      f.answer = {
        give: () => f.resolve(result),
        cause: { type: result.ok ? 'local.initiate_ok' : 'local.initiate_failed' },
        says: result.ok ? `local.initiate_ok (${OUT_LOCAL})` : `local.initiate_failed ${result.error.code}`,
        learns: (l) => {
          if (result.ok) l.heardId = true;
        },
      };
      f.landed = true;
      w.trace.push(`   gateway got ${a.name}'s initiate: ${f.answer.cause.type}`);
      return;
    }
    case 'end': {
      const g = w.gateway.get(f.callId);
      const l = ledger(w, a.name, f.callId);
      let outcome: 'done' | 'refused' | 'unreached';
      if (choice % 4 === 3) outcome = 'unreached';
      else if (g === undefined || g.state === 'ended') outcome = 'refused';
      else if (f.action === 'reject' && g.state === 'accepted') {
        // Never meant to happen: a reject for a call someone already answered.
        w.violations.push(`${a.name}: reject reached ${f.callId}, answered by ${String(g.answeredBy)}`);
        outcome = 'refused';
      } else {
        endCallAtGateway(w, f.callId, a.name);
        outcome = 'done';
      }
      if (outcome !== 'unreached') {
        l.endsReached++;
        l.reachedInRun = a.run;
      }
      l.lastEnd = outcome;
      l.lastEndRun = a.run;
      l.lastEndByLeftover = a.leftovers.has(f.callId);
      w.trace.push(`   gateway got ${a.name}'s ${f.action}: ${outcome}`);
      const result =
        outcome === 'done'
          ? ok(null)
          : outcome === 'refused'
            ? gatewayError('gateway_error', 'The call is not active', { gatewayCode: 138002, httpStatus: 400 })
            : gatewayError('gateway_unreachable', 'ECONNRESET');
      f.answer = { give: () => f.resolve(result), cause: { type: 'local.end_result' }, says: `local.end_result ${outcome} (${localIdIn(a, f.callId)})`, learns: () => undefined };
      answerComesBack(w, a, f);
      return;
    }
    default:
      throw new Error(`not a gateway request: ${f.kind}`);
  }
}

function answerComesBack(w: World, a: Agent, f: InFlight): void {
  a.inflight = a.inflight.filter((x) => x !== f);
  const answer = f.answer!;
  if (f.kind !== 'initiate') answer.learns(ledger(w, a.name, f.callId));
  else answer.learns(ledger(w, a.name, OUT_ID));
  // An end of the same call queued behind it goes out now (an initiate's call has no end queued behind it).
  if (f.kind === 'accept' || f.kind === 'end') a.answeredNow = { callId: f.callId, sentAt: f.sentAt };
  w.trace.push(`${a.name}${a.run} ← ${answer.says}`);
  a.cause = answer.cause;
  answer.give();
}

const isGatewayRequest = (f: InFlight): boolean => f.kind === 'accept' || f.kind === 'initiate' || f.kind === 'end';

async function crash(w: World, a: Agent): Promise<void> {
  await a.coordinator.whenSaved();
  const owed = await owedInFile(a.dataDir);
  w.trace.push(`${a.name}${a.run} CRASHES; the crash file holds ${JSON.stringify(owed)}`);
  for (const call of a.coordinator.calls()) {
    if (!isLive(call)) continue;
    // A live call is still the gateway's business: the crash file must name it (an outgoing one has no id while dialing).
    if (call.callId !== undefined && !owed.some((o) => o.callId === call.callId)) w.violations.push(`${a.name}: crash file misses live ${call.localId}`);
    const l = ledger(w, a.name, callIdOf(call.localId));
    if (!l.letGo && !l.endedRemotely) l.letGo = true;
  }
  a.timers.stop();
  a.run++;
  a.crashes++;
  a.inflight = []; // what had not reached the relay or gateway never will; answers on their way are lost
  a.handled = [];
  a.redeliveries = 0;
  a.shown = new Map();
  a.shownEnded = new Set();
  a.terminated = new Map();
  a.leftovers = new Set(owed.map((o) => o.callId));
  for (const { callId, action } of owed) w.trace.push(`${a.name}${a.run} ← local.leftover ${action} ${callId}`);
  Object.assign(a, newRun(w, () => a, a.run, a.name, a.dataDir, a.knowsOwnId));
  await startRun(a);
  // A replay is for the run that holds the leftover: the next one starts after it, like after any other event.
  a.inbox = a.inbox.filter((e) => !a.replayed.has(e));
  a.replayed = new Set();
  for (const e of a.handledEver) {
    if (!('callId' in e) || !owed.some((o) => o.callId === e.callId)) continue;
    a.inbox.push(e);
    a.replayed.add(e);
  }
}

/** Every run's timers follow its calls: one deadline per call that waits for one, at that call's deadline. */
function checkTimers(w: World): void {
  for (const a of agentsOf(w)) {
    const armed = a.timers
      .deadlines()
      .map((t) => t.at)
      .sort((x, y) => x - y);
    const due = a.coordinator
      .calls()
      .map((c) => deadlineOf(c))
      .filter((at): at is number => at !== undefined)
      .sort((x, y) => x - y);
    if (JSON.stringify(armed) !== JSON.stringify(due)) w.violations.push(`${a.name}: timers at ${armed.join(', ')} but its calls' deadlines are ${due.join(', ')}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Moves: everything that may happen next.
// ---------------------------------------------------------------------------------------------

interface Move {
  label: string;
  go: (choice: number) => void | Promise<void>;
  /** Part of the system settling by itself (deliveries, answers, timers), as opposed to people and crashes. */
  settles: boolean;
}

function movesOf(w: World): Move[] {
  const moves: Move[] = [];
  const inCall = w.gateway.get(IN_ID);
  if (inCall !== undefined && inCall.state !== 'ended') {
    moves.push({ label: 'the customer hangs up', settles: false, go: () => endCallAtGateway(w, IN_ID, 'customer') });
  }
  const outCall = w.gateway.get(OUT_ID);
  if (outCall !== undefined && outCall.state !== 'ended') {
    if (outCall.state === 'ringing' && !outCall.rang) {
      moves.push({
        label: 'the callee’s phone rings',
        settles: false,
        go: () => {
          outCall.rang = true;
          publish(w, OUT_ID, { type: 'call.status', callId: OUT_ID, status: 'RINGING', timestamp: w.clock.t });
        },
      });
    }
    if (outCall.state === 'ringing') {
      moves.push({
        label: 'the callee answers',
        settles: false,
        go: () => {
          outCall.state = 'accepted';
          outCall.answeredBy = 'customer';
          publish(w, OUT_ID, { type: 'call.answered', callId: OUT_ID, sdp: ANSWER_SDP, timestamp: w.clock.t });
          publish(w, OUT_ID, { type: 'call.status', callId: OUT_ID, status: 'ACCEPTED', timestamp: w.clock.t });
        },
      });
      moves.push({
        label: 'the callee rejects',
        settles: false,
        go: () => {
          publish(w, OUT_ID, { type: 'call.status', callId: OUT_ID, status: 'REJECTED', timestamp: w.clock.t });
          endCallAtGateway(w, OUT_ID, 'customer');
        },
      });
    }
    moves.push({ label: 'the callee hangs up', settles: false, go: () => endCallAtGateway(w, OUT_ID, 'customer') });
  }

  for (const a of agentsOf(w)) {
    a.inbox.forEach((e, i) => {
      moves.push({
        label: `${a.name} gets ${e.type}`,
        settles: true,
        go: () => {
          a.inbox.splice(i, 1);
          a.handled.push(e);
          a.handledEver.push(e);
          deliver(w, a, e);
        },
      });
    });
    if (a.handled.length > 0 && a.redeliveries < 4) {
      moves.push({
        label: `${a.name} gets an event again`,
        settles: false,
        go: (choice) => {
          a.redeliveries++;
          deliver(w, a, a.handled[choice % a.handled.length]!);
        },
      });
    }
    for (const f of a.inflight) {
      // A call's gateway requests go out one after the other (the coordinator's own order): what is here has been sent.
      const to = isGatewayRequest(f) ? 'gateway' : 'relay';
      moves.push(
        f.landed
          ? { label: `${a.name} hears the ${to} about its ${f.kind}`, settles: true, go: () => answerComesBack(w, a, f) }
          : { label: `${a.name}'s ${f.kind} reaches the ${to}`, settles: true, go: (choice) => (to === 'gateway' ? gatewayReceives(w, a, f, choice) : relayReceives(w, a, f, choice)) },
      );
    }
    for (const timer of a.timers.deadlines()) {
      moves.push({
        label: `${a.name}'s deadline at +${timer.at - T0} ms`,
        settles: true,
        go: () => {
          w.trace.push(`${a.name}${a.run} ← local.deadline at +${timer.at - T0} ms`);
          a.cause = { type: 'local.deadline' };
          w.clock.fire(timer.handle);
        },
      });
    }

    const inHere = a.coordinator.call(IN_LOCAL);
    if (inHere !== undefined) {
      moves.push({ label: `${a.name} answers`, settles: false, go: () => command(w, a, 'answer', IN_LOCAL) });
      moves.push({ label: `${a.name} declines`, settles: false, go: () => command(w, a, 'decline', IN_LOCAL) });
      moves.push({ label: `${a.name} hangs up`, settles: false, go: () => command(w, a, 'hangup', IN_LOCAL) });
      // Media connects only once the gateway has this agent's answer.
      if ((inHere.phase === 'answering' || inHere.phase === 'connecting') && inCall?.state === 'accepted' && inCall.answeredBy === a.name) {
        moves.push({ label: `${a.name}'s media connects`, settles: false, go: () => media(w, a, IN_LOCAL, 'connected') });
      }
      if (isLive(inHere)) moves.push({ label: `${a.name}'s media fails`, settles: false, go: () => media(w, a, IN_LOCAL, 'failed') });
    }
    const outHere = a.coordinator.call(OUT_LOCAL);
    if (outHere !== undefined) {
      moves.push({ label: `${a.name} hangs up the outgoing call`, settles: false, go: () => command(w, a, 'hangup', OUT_LOCAL) });
      if (outHere.phase === 'connecting') moves.push({ label: `${a.name}'s outgoing media connects`, settles: false, go: () => media(w, a, OUT_LOCAL, 'connected') });
      if (isLive(outHere)) moves.push({ label: `${a.name}'s outgoing media fails`, settles: false, go: () => media(w, a, OUT_LOCAL, 'failed') });
    }
    if (a.name === 'A' && w.scenario.outgoing && !w.dialed) {
      moves.push({
        label: 'A calls the callee',
        settles: false,
        go: () => {
          w.dialed = true;
          command(w, a, 'dial', OUT_LOCAL);
        },
      });
    }
    if (w.scenario.crashes && a.crashes < 2) moves.push({ label: `${a.name} crashes`, settles: false, go: () => crash(w, a) });
  }
  return moves;
}

async function newWorld(scenario: Scenario): Promise<World> {
  const team: Name[] = scenario.team ? ['A', 'B'] : ['A'];
  const w: World = {
    scenario,
    clock: new FakeClock(T0 + 1_000),
    move: 0,
    team,
    agents: {},
    gateway: new Map(),
    owner: new Map(),
    declined: new Map(),
    ledgers: new Map(),
    dialed: false,
    acceptsFor: new Map(),
    lostBy: { claimEvent: 0, claimResult: 0 },
    violations: [],
    trace: [],
    events: 0,
  };
  for (const [i, n] of team.entries()) w.agents[n] = await newAgent(w, n, scenario.knowsOwnId[i] ?? false);
  if (scenario.incoming) {
    w.gateway.set(IN_ID, { direction: 'incoming', state: 'ringing' });
    publish(w, IN_ID, { type: 'call.incoming', callId: IN_ID, from: CUSTOMER, sdp: OFFER_SDP, timestamp: T0 });
  }
  return w;
}

/** Plays one move: what it starts runs to the end (the coordinators' follow-ups included) before the clock moves on. */
async function play(w: World, m: Move, choice: number, mark: string): Promise<void> {
  w.trace.push(`${mark} ${m.label}`);
  w.move++;
  for (const a of agentsOf(w)) a.answeredNow = undefined;
  await m.go(choice);
  await settleMicrotasks();
  checkTimers(w);
  w.clock.t += 250;
}

/** Runs the first move whose label starts with `label`. */
async function take(w: World, label: string, choice = 0): Promise<void> {
  const m = movesOf(w).find((x) => x.label.startsWith(label));
  if (m === undefined) throw new Error(`no move "${label}" among ${movesOf(w).map((x) => x.label).join(', ')}`);
  await play(w, m, choice, '*');
}

/** Everything settles: every event delivered, every request answered (successfully), every timer run. */
async function settle(w: World): Promise<void> {
  for (let i = 0; ; i++) {
    if (i > 2_000) throw new Error('the simulation does not settle');
    const next = movesOf(w).find((m) => m.settles);
    if (next === undefined) return;
    await play(w, next, 0, '~');
  }
}

async function simulate(scenario: Scenario, prelude: readonly string[] = []): Promise<World> {
  const w = await newWorld(scenario);
  for (const label of prelude) await take(w, label);
  for (const { move, choice } of scenario.steps) {
    const moves = movesOf(w);
    if (moves.length === 0) break;
    await play(w, moves[move % moves.length]!, choice, '*');
  }
  await settle(w);
  return w;
}

// ---------------------------------------------------------------------------------------------
// What must hold at the end of every run.
// ---------------------------------------------------------------------------------------------

/** What each agent's current run holds at the end: its calls as the reducer holds them, and its crash file. */
type Holdings = Partial<Record<Name, { calls: CallRecord[]; owed: Owed }>>;

async function holdingsOf(w: World): Promise<Holdings> {
  const held: Holdings = {};
  for (const a of agentsOf(w)) {
    await a.coordinator.whenSaved();
    const calls = a.coordinator.calls().map((c) => a.coordinator.call(c.localId)!);
    held[a.name] = { calls, owed: await owedInFile(a.dataDir) };
  }
  return held;
}

function report(w: World, message: string): string {
  return `${message}\n${w.trace.join('\n')}`;
}

function checkCommon(w: World, held: Holdings): void {
  expect(w.violations, report(w, w.violations.join('; '))).toEqual([]);
  for (const a of agentsOf(w)) {
    const { calls, owed } = held[a.name]!;
    // Every command is answered exactly once (a crash takes its run's unanswered ones with it).
    for (const [requestId, { run }] of a.commands) {
      const count = a.replies.get(requestId)?.length ?? 0;
      if (count > 1 || (run === a.run && count !== 1)) expect(count, report(w, `${a.name}: ${requestId} answered ${count} times`)).toBe(run === a.run ? 1 : 0);
    }
    // Once everything is delivered, nothing is left open; only an end the gateway did not get is still owed.
    for (const call of calls) {
      const l = ledger(w, a.name, callIdOf(call.localId));
      expect(['answering', 'dialing'], report(w, `${a.name}: ${call.localId} stuck`)).not.toContain(call.phase);
      const end = owedEnd(call);
      if (end !== undefined) expect(l.lastEnd, report(w, `${a.name}: ${call.localId} still owes ${end}`)).toBe('unreached');
      else expect(call.open, report(w, `${a.name}: ${call.localId} still has something open`)).toBeUndefined();
    }
    // A leftover has had its one try once everything is delivered: the crash file no longer names it.
    for (const { callId } of owed) expect(a.leftovers.has(callId), report(w, `${a.name}: leftover ${callId} still owed`)).toBe(false);
  }
  for (const [key, l] of w.ledgers) {
    const [name, callId] = key.split('|') as [Name, string];
    const a = w.agents[name]!;
    // An end that did not get through stays owed, so that a crash file would still hold it — unless it
    // was a leftover's last try, or the gateway has ended the call since.
    if (l.lastEnd === 'unreached' && l.lastEndRun === a.run && !l.lastEndByLeftover && !a.terminated.has(callId)) {
      expect(held[name]!.owed.map((o) => o.callId), report(w, `${name}: the unreached end for ${callId} is no longer owed`)).toContain(callId);
    }
    // Never both: a crash may make the next run send the end instead, never as well.
    if (l.endsReached > 1 || l.accepts > 1) expect({ ends: l.endsReached, accepts: l.accepts }, report(w, 'sent twice')).toEqual({ ends: Math.min(1, l.endsReached), accepts: Math.min(1, l.accepts) });
  }
}

/** How often each reason for an owed end not reaching the gateway was used (every run of this file). */
const tally = { gatewayFirst: 0, notThrough: 0 };

/** With a relay that answers: the claim race has one winner, and the gateway gets exactly what it is owed. */
function checkWithRelay(w: World, held: Holdings): void {
  checkCommon(w, held);
  expect(w.acceptsFor.get(IN_ID) ?? 0, report(w, 'accepts for the incoming call')).toBeLessThanOrEqual(1);
  for (const [key, l] of w.ledgers) {
    const [name, callId] = key.split('|') as [Name, string];
    const owner = w.owner.get(callId);
    const g = w.gateway.get(callId);
    // A colleague's call: the loser sent the gateway nothing at all.
    if (owner !== undefined && owner !== name) expect({ accepts: l.accepts, ends: l.endsReached }, report(w, `${name} sent something for ${owner}'s call`)).toEqual({ accepts: 0, ends: 0 });
    const own = l.heardWon || l.heardLast || l.heardId;
    const owed = own && l.letGo;
    if (!owed) {
      expect(l.endsReached, report(w, `${name} ended ${callId} at the gateway without owing it`)).toBe(0);
      continue;
    }
    if (l.endsReached === 1) continue;
    // None reached: only because the gateway ended the call itself first, or the end did not get through.
    const gatewayFirst = l.heardTerminate && g?.state === 'ended' && g.endedBy !== name;
    const notThrough = l.lastEnd === 'unreached';
    expect({ gatewayFirst, notThrough }, report(w, `${name} owed ${callId} an end and none reached the gateway`)).not.toEqual({ gatewayFirst: false, notThrough: false });
    if (gatewayFirst) tally.gatewayFirst++;
    else tally.notThrough++;
  }
  // An Answer that succeeded is the claim's winner, and the gateway has its answer.
  for (const a of agentsOf(w)) {
    for (const [requestId, { kind }] of a.commands) {
      const result = a.replies.get(requestId)?.[0];
      if (kind !== 'answer' || result === undefined) continue;
      if (result.ok) {
        expect({ owner: w.owner.get(IN_ID), answeredBy: w.gateway.get(IN_ID)?.answeredBy }, report(w, `${a.name}'s Answer succeeded`)).toEqual({ owner: a.name, answeredBy: a.name });
      } else if (result.error.code === 'answered_elsewhere') {
        expect(w.owner.get(IN_ID), report(w, `${a.name}'s Answer said answered elsewhere`)).not.toBe(a.name);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The properties.
// ---------------------------------------------------------------------------------------------

const steps = (max: number) => fc.array(fc.record({ move: fc.nat({ max: 1_000 }), choice: fc.nat({ max: 1_000 }) }), { maxLength: max });

const scenarios = (o: { team?: boolean; incoming?: boolean; outgoing?: boolean; crashes?: boolean; flakyRelay?: boolean }, maxSteps: number): fc.Arbitrary<Scenario> =>
  fc.record({
    team: o.team !== undefined ? fc.constant(o.team) : fc.boolean(),
    incoming: o.incoming !== undefined ? fc.constant(o.incoming) : fc.boolean(),
    outgoing: o.outgoing !== undefined ? fc.constant(o.outgoing) : fc.boolean(),
    knowsOwnId: fc.tuple(fc.boolean(), fc.boolean()),
    crashes: o.crashes !== undefined ? fc.constant(o.crashes) : fc.boolean(),
    flakyRelay: fc.constant(o.flakyRelay ?? false),
    steps: steps(maxSteps),
  });

/** Thousands of worlds, each with real coordinators writing their live-calls.json: more than a unit test's usual time. */
const MANY_WORLDS_MS = 180_000;

const solo = (o: Partial<Scenario> = {}): Scenario => ({ team: true, incoming: true, outgoing: false, knowsOwnId: [true, true], crashes: false, flakyRelay: false, steps: [], ...o });

describe('claim races: a simulation of agents, relay and gateway', () => {
  it('two agents answer at once: at most one accept reaches the gateway; the loser ends answered elsewhere and sends nothing', async () => {
    // Each run starts with the race itself, in one of these orders, then goes on at random.
    const preludes = [
      ['A gets call.incoming', 'B gets call.incoming', 'A answers', 'B answers'],
      ['B gets call.incoming', 'A gets call.incoming', 'B answers', 'A answers'],
      ['A gets call.incoming', 'A answers', 'B gets call.incoming', 'B answers'],
      ['B gets call.incoming', 'B answers', "B's claim reaches the relay", 'A gets call.incoming', 'A answers'],
      ['A gets call.incoming', 'B gets call.incoming', 'A answers', 'B declines'],
    ];
    const seen = { bothAnswered: 0, wonBy: { A: 0, B: 0 }, lostByClaimEvent: 0, lostByClaimResult: 0 };
    await fc.assert(
      fc.asyncProperty(scenarios({ team: true, incoming: true, outgoing: false, crashes: false }, 40), fc.nat({ max: preludes.length - 1 }), async (scenario, p) => {
        const w = await simulate(scenario, preludes[p]);
        checkWithRelay(w, await holdingsOf(w));
        const owner = w.owner.get(IN_ID);
        if (ledger(w, 'A', IN_ID).answered && ledger(w, 'B', IN_ID).answered) seen.bothAnswered++;
        if (owner !== undefined) seen.wonBy[owner]++;
        seen.lostByClaimEvent += w.lostBy.claimEvent;
        seen.lostByClaimResult += w.lostBy.claimResult;
      }),
      { numRuns: 2_500 },
    );
    // The runs really race: both answer in most, each agent wins some, and a loser still answering learns
    // it both ways: from the relay's claim event, and from its own claim's answer.
    expect(seen.bothAnswered).toBeGreaterThan(1_500);
    expect(seen.wonBy.A).toBeGreaterThan(500);
    expect(seen.wonBy.B).toBeGreaterThan(500);
    expect(seen.lostByClaimEvent).toBeGreaterThan(200);
    expect(seen.lostByClaimResult).toBeGreaterThan(200);
  }, MANY_WORLDS_MS);

  it('a crash during the race: the next run sends what the crashed one owed, once, and never for a colleague’s call', async () => {
    const seen = { sentByNextRun: 0 };
    await fc.assert(
      fc.asyncProperty(scenarios({ team: true, incoming: true, outgoing: false, crashes: true }, 40), fc.boolean(), async (scenario, bFirst) => {
        const prelude = bFirst
          ? ['B gets call.incoming', 'A gets call.incoming', 'B answers', 'A answers']
          : ['A gets call.incoming', 'B gets call.incoming', 'A answers', 'B answers'];
        const w = await simulate(scenario, prelude);
        checkWithRelay(w, await holdingsOf(w));
        for (const l of w.ledgers.values()) if (l.reachedInRun !== undefined && l.reachedInRun > 1) seen.sentByNextRun++;
      }),
      { numRuns: 2_000 },
    );
    expect(seen.sentByNextRun).toBeGreaterThan(100);
  }, MANY_WORLDS_MS);

  it('the gateway gets each reject or terminate it is owed exactly once, across crashes, and nothing for calls it ended or a colleague took', async () => {
    const seen = { sentByNextRun: 0, sentBeforeCrash: 0, rejects: 0, terminates: 0 };
    await fc.assert(
      fc.asyncProperty(scenarios({ crashes: true }, 50), async (scenario) => {
        const w = await simulate(scenario);
        checkWithRelay(w, await holdingsOf(w));
        for (const l of w.ledgers.values()) {
          if (l.reachedInRun !== undefined && l.reachedInRun > 1) seen.sentByNextRun++;
          if (l.reachedInRun === 1 && agentsOf(w).some((a) => a.crashes > 0)) seen.sentBeforeCrash++;
        }
        if (w.trace.some((t) => t.includes("'s reject: done"))) seen.rejects++;
        if (w.trace.some((t) => t.includes("'s terminate: done"))) seen.terminates++;
      }),
      { numRuns: 3_000 },
    );
    expect(seen.sentByNextRun).toBeGreaterThan(40);
    expect(seen.sentBeforeCrash).toBeGreaterThan(50);
    expect(seen.rejects).toBeGreaterThan(300);
    expect(seen.terminates).toBeGreaterThan(300);
  }, MANY_WORLDS_MS);

  it('any mix of incoming and outgoing calls, commands and deadlines, without crashes: the same holds', async () => {
    await fc.assert(
      fc.asyncProperty(scenarios({ crashes: false }, 50), async (scenario) => {
        const w = await simulate(scenario);
        checkWithRelay(w, await holdingsOf(w));
      }),
      { numRuns: 2_000 },
    );
  }, MANY_WORLDS_MS);

  it('with a relay that fails to answer: nothing is sent twice, every command is answered once, nothing is left open or revived', async () => {
    await fc.assert(
      fc.asyncProperty(scenarios({ flakyRelay: true }, 50), async (scenario) => {
        const w = await simulate(scenario);
        checkCommon(w, await holdingsOf(w));
      }),
      { numRuns: 1_000 },
    );
  }, MANY_WORLDS_MS);

  it("with a relay that fails to answer: A's claim is lost, A accepts anyway; B's claim wins, its accept is refused, and B rejects nothing", async () => {
    const w = await newWorld({ team: true, incoming: true, outgoing: true, knowsOwnId: [false, false], crashes: false, flakyRelay: true, steps: [] });
    await take(w, 'A gets call.incoming');
    await take(w, 'B gets call.incoming');
    await take(w, 'A answers');
    await take(w, "A's claim reaches the relay", 2); // not recorded: no answer comes
    await take(w, 'A hears the relay about its claim');
    expect(w.agents.A!.inflight.map(requestOf)).toEqual([{ kind: 'accept', callId: IN_ID }]);
    await take(w, 'B answers');
    await take(w, "B's claim reaches the relay");
    await take(w, 'B hears the relay about its claim');
    await take(w, "A's accept reaches the gateway");
    await take(w, "B's accept reaches the gateway");
    await settle(w);
    checkCommon(w, await holdingsOf(w));
    expect(w.owner.get(IN_ID)).toBe('B');
    expect(w.gateway.get(IN_ID)).toMatchObject({ answeredBy: 'A' });
    // B must not reject the call A answered: the gateway's refusal named the call, not B's answer.
    expect(ledger(w, 'B', IN_ID)).toMatchObject({ accepts: 1, endsReached: 0 });
    expect(w.agents.B!.coordinator.call(IN_LOCAL)).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: '138002' } });
    expect(w.agents.B!.coordinator.call(IN_LOCAL)).not.toHaveProperty('open');
  });

  it("with a relay that fails to answer: B hangs up while its claim is out and the relay cannot say; A's call is never rejected by B", async () => {
    const w = await newWorld({ team: true, incoming: true, outgoing: false, knowsOwnId: [true, true], crashes: false, flakyRelay: true, steps: [] });
    await take(w, 'A gets call.incoming');
    await take(w, 'B gets call.incoming');
    await take(w, 'B answers');
    await take(w, "B's claim reaches the relay", 2); // not recorded: no answer comes
    await take(w, 'B hangs up');
    await take(w, 'B hears the relay about its claim');
    await take(w, 'A answers');
    await take(w, "A's claim reaches the relay");
    await take(w, 'A hears the relay about its claim');
    await settle(w);
    await take(w, "A's media connects");
    checkCommon(w, await holdingsOf(w));
    expect(w.gateway.get(IN_ID)).toMatchObject({ answeredBy: 'A' });
    expect(ledger(w, 'B', IN_ID)).toMatchObject({ accepts: 0, endsReached: 0 });
    expect(w.agents.B!.coordinator.call(IN_LOCAL)).not.toHaveProperty('open');
    expect(w.agents.A!.coordinator.call(IN_LOCAL)).toMatchObject({ phase: 'active' });
  });

  it('has seen the gateway end a call first among the runs above', () => {
    // Runs after the properties above (same file, in order): the allowance was needed, it is not dead code.
    expect(tally.gatewayFirst).toBeGreaterThan(300);
  });

  it('an end that does not get through stays owed; the run after a crash sends it, once', async () => {
    const w = await newWorld(solo({ crashes: true }));
    for (const label of ['A gets call.incoming', 'B gets call.incoming', 'A answers', "A's claim reaches the relay", 'A hears the relay about its claim']) await take(w, label);
    await take(w, "A's accept reaches the gateway");
    await take(w, 'A hears the gateway about its accept');
    await take(w, "A's media connects");
    await take(w, 'A hangs up');
    await take(w, "A's end reaches the gateway", 3); // not reached
    expect(ledger(w, 'A', IN_ID)).toMatchObject({ endsReached: 0, lastEnd: 'unreached' });
    expect((await holdingsOf(w)).A!.owed).toEqual([{ callId: IN_ID, action: 'terminate' }]);
    const before = tally.notThrough;
    checkWithRelay(w, await holdingsOf(w)); // owed, not through: allowed while the crash file still holds it
    expect(tally.notThrough).toBe(before + 1);
    await take(w, 'A crashes');
    await settle(w);
    checkWithRelay(w, await holdingsOf(w));
    expect(ledger(w, 'A', IN_ID)).toMatchObject({ endsReached: 1, reachedInRun: 2, lastEnd: 'done' });
    expect(w.gateway.get(IN_ID)).toMatchObject({ state: 'ended', endedBy: 'A' });
  });

  it('a reject carried over a crash for a call this agent had claimed reaches the gateway in the next run', async () => {
    // A wins the claim, hangs up before hearing so (the reject is owed, not sent), hears it, and crashes
    // while the reject is on its way. The next run asks the relay for a decline verdict: the call is A's
    // own claim, so nobody else rings (B stopped on A's claim) and A rejects it.
    const w = await newWorld(solo({ crashes: true }));
    for (const label of ['A gets call.incoming', 'B gets call.incoming', 'A answers', "A's claim reaches the relay", 'A hangs up', 'A hears the relay about its claim']) await take(w, label);
    expect(w.agents.A!.inflight.map(requestOf)).toEqual([{ kind: 'end', callId: IN_ID, action: 'reject' }]);
    await take(w, 'A crashes');
    await settle(w);
    expect(w.trace).toContain('A2 ← local.decline_result last=true (left:wacid.race-in)');
    expect(ledger(w, 'A', IN_ID)).toMatchObject({ heardWon: true, letGo: true, endsReached: 1 });
    expect(w.gateway.get(IN_ID)).toMatchObject({ state: 'ended', endedBy: 'A' });
    checkWithRelay(w, await holdingsOf(w));
  });

  it('plays a race by hand as the properties do: B hears its claim lost first, A accepts, B sent nothing', async () => {
    const w = await newWorld(solo());
    await take(w, 'A gets call.incoming');
    await take(w, 'B gets call.incoming');
    await take(w, 'A answers');
    await take(w, 'B answers');
    await take(w, "A's claim reaches the relay");
    await take(w, "B's claim reaches the relay");
    await take(w, 'B hears the relay about its claim');
    expect(w.agents.B!.coordinator.call(IN_LOCAL)).toMatchObject({ phase: 'ended', end: { kind: 'answered_elsewhere' } });
    expect(w.agents.B!.coordinator.call(IN_LOCAL)).not.toHaveProperty('open');
    expect(w.agents.B!.replies.get('B1-0')).toEqual([{ ok: false, error: { code: 'answered_elsewhere', message: 'Answered by another agent', text: text('calls.answeredElsewhere') } }]);
    await take(w, 'A hears the relay about its claim');
    expect(w.agents.A!.inflight.map((f) => f.kind)).toEqual(['accept']);
    await take(w, "A's accept reaches the gateway");
    await take(w, 'A hears the gateway about its accept');
    expect(w.agents.A!.replies.get('A1-0')).toEqual([{ ok: true, value: null }]);
    await take(w, 'A hangs up');
    await settle(w);
    checkWithRelay(w, await holdingsOf(w));
    expect(w.agents.B!.inflight).toEqual([]);
    expect(ledger(w, 'B', IN_ID)).toMatchObject({ accepts: 0, endsReached: 0, endedRemotely: true });
    expect(ledger(w, 'A', IN_ID)).toMatchObject({ accepts: 1, endsReached: 1, letGo: true, heardWon: true });
    expect(w.gateway.get(IN_ID)).toMatchObject({ state: 'ended', endedBy: 'A', answeredBy: 'A' });
  });

  it('would catch a gateway owed an end that never gets it', async () => {
    const w = await newWorld(solo({ team: false, knowsOwnId: [true, false] }));
    await take(w, 'A gets call.incoming');
    await take(w, 'A declines');
    await take(w, "A's decline reaches the relay");
    await take(w, 'A hears the relay about its decline');
    // The reject the last verdict asked for is dropped on the floor here, as a broken coordinator would.
    w.agents.A!.inflight = [];
    const held = await holdingsOf(w);
    expect(() => checkWithRelay(w, held)).toThrow(/still owes reject/);
    // ... and, the book put right, the gateway's ledger still is not.
    expect(() => checkWithRelay(w, { A: { calls: [], owed: [] } })).toThrow(/A owed wacid.race-in an end and none reached the gateway/);
  });
});

// ---------------------------------------------------------------------------------------------
// Late, repeated and reordered: one agent's story around a claim, its relay events delivered in
// the gateway's order or in any order (each once or twice), the answers to its requests anywhere
// among them. Every order must end where the ordered delivery ends.
// ---------------------------------------------------------------------------------------------

type RequestKind = Sent['kind'];
/** What the agent does, or the relay delivers, first. */
type Act = { kind: 'relay'; event: (at: number) => RelayEvent } | { kind: Command; localId: string } | { kind: 'deadline' };

interface Story {
  name: string;
  /** What the agent saw and did first, in order. */
  before: Act[];
  /** It crashes right after: the next run starts from its crash file, and the relay replays the call's events. */
  crash?: boolean;
  /** The world's events that reach it late, in the gateway's order; `after`: only once a request of this kind went out. */
  late: Array<{ event: (at: number) => RelayEvent; after?: RequestKind }>;
  /** This agent's own id is not known yet: the relay's claim events do not say whose claim it is. */
  ownIdUnknown?: true;
  /** The relay's and the gateway's answers. */
  claim?: 'won' | 'lost';
  lastToDecline?: boolean;
  /** Where every order must end: the calls as the agent shows them, and what reached the gateway (any of these). */
  calls: string[];
  gateway: string[][];
}

const inc = (at: number): RelayEvent => ({ type: 'call.incoming', callId: IN_ID, from: CUSTOMER, sdp: OFFER_SDP, timestamp: Math.min(at, T0) });
const claimedIn =
  (by: 'A' | 'B') =>
  (at: number): RelayEvent => ({ type: 'call.claimed', callId: IN_ID, agentId: by, timestamp: at });
const ended =
  (callId: string, durationSec?: number) =>
  (at: number): RelayEvent => ({ type: 'call.terminated', callId, status: 'COMPLETED', timestamp: at, ...(durationSec !== undefined ? { durationSec } : {}) });
const outStatus =
  (status: 'RINGING' | 'ACCEPTED' | 'REJECTED') =>
  (at: number): RelayEvent => ({ type: 'call.status', callId: OUT_ID, status, timestamp: at });
const outAnswered = (at: number): RelayEvent => ({ type: 'call.answered', callId: OUT_ID, sdp: ANSWER_SDP, timestamp: at });
const ringIn: Act = { kind: 'relay', event: inc };
const answerIn: Act = { kind: 'answer', localId: IN_LOCAL };
const dialOut: Act = { kind: 'dial', localId: OUT_LOCAL };

const STORIES: Story[] = [
  {
    name: "a colleague's claim wins while this agent answers",
    before: [ringIn, answerIn],
    late: [{ event: claimedIn('B') }, { event: ended(IN_ID, TALK_SEC) }],
    claim: 'lost',
    calls: ['in:wacid.race-in ended:answered_elsewhere 0s'],
    gateway: [[]],
  },
  {
    name: "a colleague's claim wins while this agent answers, its own id not known yet",
    before: [ringIn, answerIn],
    ownIdUnknown: true,
    late: [{ event: claimedIn('B') }, { event: ended(IN_ID, TALK_SEC) }],
    claim: 'lost',
    calls: ['in:wacid.race-in ended:answered_elsewhere 0s'],
    gateway: [[]],
  },
  {
    name: "this agent's claim wins; its own claim event and the customer's hang-up come in any order",
    before: [ringIn, answerIn],
    late: [{ event: claimedIn('A') }, { event: ended(IN_ID, TALK_SEC), after: 'accept' }],
    claim: 'won',
    calls: ['in:wacid.race-in ended:completed/customer 30s'],
    gateway: [['accept']],
  },
  {
    name: 'declined while a colleague answers',
    before: [ringIn, { kind: 'decline', localId: IN_LOCAL }],
    late: [{ event: claimedIn('B') }, { event: ended(IN_ID, TALK_SEC) }],
    lastToDecline: false,
    calls: ['in:wacid.race-in ended:declined 0s'],
    gateway: [[]],
  },
  {
    name: 'rang out here while a colleague answers',
    before: [ringIn, { kind: 'deadline' }],
    late: [{ event: claimedIn('B') }, { event: ended(IN_ID, TALK_SEC) }],
    lastToDecline: false,
    calls: ['in:wacid.race-in ended:missed 0s'],
    gateway: [[]],
  },
  {
    name: 'declined as the last of the team',
    before: [ringIn, { kind: 'decline', localId: IN_LOCAL }],
    late: [{ event: ended(IN_ID), after: 'end' }],
    lastToDecline: true,
    calls: ['in:wacid.race-in ended:declined 0s'],
    gateway: [['end:reject']],
  },
  {
    name: 'hung up while its claim was out, and the claim wins',
    before: [ringIn, answerIn, { kind: 'hangup', localId: IN_LOCAL }],
    late: [{ event: claimedIn('A') }, { event: ended(IN_ID), after: 'end' }],
    claim: 'won',
    calls: ['in:wacid.race-in ended:completed/agent 0s'],
    gateway: [['end:reject']],
  },
  {
    name: "hung up while its claim was out, and a colleague's claim wins",
    before: [ringIn, answerIn, { kind: 'hangup', localId: IN_LOCAL }],
    late: [{ event: claimedIn('B') }, { event: ended(IN_ID, TALK_SEC) }],
    claim: 'lost',
    calls: ['in:wacid.race-in ended:completed/agent 0s'],
    gateway: [[]],
  },
  // After a crash the call is a leftover: never shown, the replayed connect never rings.
  {
    name: 'crashed while answering a call that was its own',
    before: [ringIn, answerIn],
    crash: true,
    late: [{ event: claimedIn('A') }, { event: ended(IN_ID), after: 'end' }],
    claim: 'won',
    calls: [],
    gateway: [['end:terminate']],
  },
  {
    name: "crashed while answering a call a colleague's claim won",
    before: [ringIn, answerIn],
    crash: true,
    late: [{ event: claimedIn('B') }, { event: ended(IN_ID, TALK_SEC) }],
    claim: 'lost',
    calls: [],
    gateway: [[]],
  },
  {
    name: 'crashed while it rang, the last of the team',
    before: [ringIn],
    crash: true,
    late: [{ event: ended(IN_ID), after: 'end' }],
    lastToDecline: true,
    calls: [],
    gateway: [['end:reject']],
  },
  {
    name: 'an outgoing call: progress, answer and hang-up overtake the initiate response, twice',
    before: [dialOut],
    late: [{ event: outStatus('RINGING') }, { event: outAnswered }, { event: outStatus('ACCEPTED') }, { event: ended(OUT_ID, 41) }],
    claim: 'won',
    calls: ['out:race ended:completed/customer 41s'],
    gateway: [['initiate']],
  },
  {
    name: 'an outgoing call hung up while its initiate was on its way',
    before: [dialOut, { kind: 'hangup', localId: OUT_LOCAL }],
    late: [{ event: outStatus('RINGING') }, { event: ended(OUT_ID), after: 'end' }],
    calls: ['out:race ended:cancelled 0s'],
    gateway: [['end:terminate', 'initiate']],
  },
  {
    // Whether the terminate is sent depends on whether the gateway's own terminate came before the initiate response.
    name: 'an outgoing call hung up while its initiate was on its way, and rejected meanwhile',
    before: [dialOut, { kind: 'hangup', localId: OUT_LOCAL }],
    late: [{ event: outStatus('REJECTED') }, { event: ended(OUT_ID) }],
    calls: ['out:race ended:cancelled 0s'],
    gateway: [['initiate'], ['end:terminate', 'initiate']],
  },
];

function showCall(c: CallState): string {
  const what = c.phase !== 'ended' ? c.phase : c.end.kind === 'completed' ? `ended:completed/${c.end.by}` : c.end.kind === 'failed' ? `ended:failed/${c.end.code}` : `ended:${c.end.kind}`;
  return `${c.localId} ${what}${c.phase === 'ended' ? ` ${c.durationSec}s` : ''}`;
}

interface StoryRun {
  calls: string[];
  gateway: string[];
  owed: Owed;
  violations: string[];
}

/** Plays a story on a coordinator; `pick` chooses the next delivery among those that may come now (undefined: in order, answers first). */
async function playStory(story: Story, copies: readonly number[], pick?: (n: number) => number): Promise<StoryRun> {
  const clock = new FakeClock(T0);
  const dataDir = await newDataDir();
  const outstanding: Array<{ kind: RequestKind; answer: () => void }> = [];
  const sent = new Set<RequestKind>();
  const gateway: string[] = [];
  const shownEnded = new Set<string>();
  const terminated = new Set<string>();
  const violations: string[] = [];
  let run = 0;
  let events = 0;

  const open = async (): Promise<{ coordinator: CallCoordinator; timers: RunTimers }> => {
    const mine = ++run;
    const request = <T>(kind: RequestKind, answer: Result<T>, record?: string): Promise<Result<T>> =>
      new Promise((resolve) => {
        if (mine !== run) return;
        saw();
        sent.add(kind);
        if (record !== undefined) gateway.push(record);
        outstanding.push({ kind, answer: () => resolve(answer) });
      });
    const claims: CallClaims = {
      agentId: story.ownIdUnknown ? undefined : 'A',
      claim: () => request('claim', story.claim === 'lost' ? gatewayError('answered_elsewhere', 'Answered by another agent') : ok({ agentId: 'A' })),
      decline: () => request<DeclineOutcome>('decline', ok(story.lastToDecline === true ? { othersRinging: 0 } : { othersRinging: 1 })),
    };
    const control: CallControl = {
      accept: () => request('accept', ok(null), 'accept'),
      initiate: () => request('initiate', ok({ callId: OUT_ID }), 'initiate'),
      reject: () => request('end', ok(null), 'end:reject'),
      terminate: () => request('end', ok(null), 'end:terminate'),
    };
    const timers = new RunTimers(clock);
    const coordinator = new CallCoordinator({ gateway: control, claims, gatewayUrl: GATEWAY_URL, dataDir, history: NO_HISTORY, now: clock.now, timers, logger: QUIET });
    coordinator.onCallChanged((call) => {
      saw();
      if (call.localId.startsWith('left:')) violations.push(`${story.name}: leftover ${call.localId} is shown`);
      if (isLive(call) && (shownEnded.has(call.localId) || terminated.has(callIdOf(call.localId)))) violations.push(`${story.name}: ${showCall(call)} is live again`);
      if (!isLive(call)) shownEnded.add(call.localId);
    });
    await coordinator.start();
    timers.starting = false;
    return { coordinator, timers };
  };
  let { coordinator, timers } = await open();
  const relay = (event: RelayEvent): void => {
    if (event.type === 'call.terminated') terminated.add(event.callId);
    coordinator.applyRelayEvent({ id: `s-${++events}`, receivedAt: clock.t, event });
  };
  const act = (a: Act): void => {
    switch (a.kind) {
      case 'relay':
        relay(a.event(clock.t));
        break;
      case 'answer':
        void coordinator.answerCall(a.localId, ANSWER_SDP);
        break;
      case 'decline':
        void coordinator.declineCall(a.localId);
        break;
      case 'hangup':
        void coordinator.hangUp(a.localId);
        break;
      case 'dial':
        void coordinator.startCall(`+${CALLEE}`, DIAL_OFFER_SDP, a.localId, { anyway: true });
        break;
      case 'deadline':
        clock.fire(timers.deadlines()[0]!.handle);
        break;
    }
  };

  for (const a of story.before) {
    clock.t += 100;
    act(a);
    await settleMicrotasks();
  }
  const late = story.late.flatMap((l, i) => Array.from({ length: copies[i % copies.length] ?? 1 }, () => l));
  if (story.crash) {
    await coordinator.whenSaved();
    timers.stop();
    outstanding.length = 0;
    shownEnded.clear();
    ({ coordinator, timers } = await open());
    // The relay replays the call's connect to the new run.
    late.unshift({ event: inc });
  }
  for (;;) {
    const ready = late.filter((l) => l.after === undefined || sent.has(l.after));
    const choices = [...outstanding.map((r) => ({ r })), ...ready.map((l) => ({ l }))];
    if (choices.length === 0) break;
    const chosen = choices[pick === undefined ? 0 : pick(choices.length)]!;
    clock.t += 100;
    if ('r' in chosen) {
      outstanding.splice(outstanding.indexOf(chosen.r), 1);
      chosen.r.answer();
    } else {
      late.splice(late.indexOf(chosen.l), 1);
      relay(chosen.l.event(clock.t));
    }
    await settleMicrotasks();
  }
  await coordinator.whenSaved();
  return { calls: coordinator.calls().map(showCall).sort(), gateway: gateway.sort(), owed: await owedInFile(dataDir), violations };
}

describe('late, repeated and reordered events around a claim', () => {
  it('every story ends as expected when delivered in order', async () => {
    for (const story of STORIES) {
      const inOrder = await playStory(story, [1]);
      expect({ story: story.name, calls: inOrder.calls, owed: inOrder.owed, violations: inOrder.violations }).toEqual({ story: story.name, calls: story.calls, owed: [], violations: [] });
      expect(story.gateway).toContainEqual(inOrder.gateway);
    }
  });

  it('in any order, each event once or twice, the answers anywhere among them: the same end, never a call ringing again', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: STORIES.length - 1 }),
        fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 4, maxLength: 4 }),
        fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
        async (index, copies, seeds) => {
          const story = STORIES[index]!;
          let k = 0;
          const scrambled = await playStory(story, copies, (n) => (seeds[k++ % seeds.length] ?? 0) % n);
          expect({ story: story.name, calls: scrambled.calls, owed: scrambled.owed, violations: scrambled.violations }).toEqual({ story: story.name, calls: story.calls, owed: [], violations: [] });
          expect(story.gateway).toContainEqual(scrambled.gateway);
        },
      ),
      { numRuns: 4_000 },
    );
  }, MANY_WORLDS_MS);
});
