// The claim races (relay/README.md "Routing and claims", protocol.md), as a deterministic
// simulation of what the CallCoordinator does with the reducer: one or two agents, each a book
// driven by applyCallEvent whose effects become requests in flight; a model relay (first claim
// wins; a decline is the last one when no colleague may still answer and nobody else claimed the
// call) and a model gateway (what it holds per call, and every request that reached it). fast-check
// chooses the interleaving: the customer, the agents' commands, media, deadlines, when each request
// reaches the relay or the gateway and when its answer comes back, deliveries late, twice and out
// of order, and crashes (a fresh book started from owedOnCrash, as the coordinator's start() does).
//
// Two simplifications, so that "reached the gateway" is well defined: a reject or terminate and its
// answer are one step (an answer lost after the request landed would make the next run send it
// again, which the gateway refuses); and after a crash the relay stream goes on after the last event
// the run handled, except that the calls the new run holds as leftovers get all their events again.
// (The relay replays the last 60 s to a session that presents no cursor; a run that no longer holds
// a call, because nothing was owed for it, would ring it again from such a replay.)
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyCallEvent,
  deadlineOf,
  emptyBook,
  incomingLocalId,
  isLive,
  owedEnd,
  owedOnCrash,
  publicCall,
  type CallBook,
  type CallEffect,
  type CallEvent,
  type CallRecord,
  type CallReply,
  type RemoteCallEvent,
} from '../../../shared/call-state';
import type { AppError, Result } from '../../../shared/result';

const T0 = 1_800_000_000_000;
const IN_ID = 'wacid.race-in';
const IN_LOCAL = incomingLocalId(IN_ID);
const OUT_ID = 'wacid.race-out';
const OUT_LOCAL = 'out:race';
const CUSTOMER = '447700900123';
const CALLEE = '12025550143';
const OFFER = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n';
const ANSWER = 'v=0\r\no=- 3 4 IN IP4 127.0.0.1\r\ns=-\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=setup:active\r\n';
const TALK_SEC = 30;

type Name = 'A' | 'B';
type Request = Extract<CallEffect, { kind: 'claim' | 'decline' | 'accept' | 'initiate' | 'end' }>;
type Ev<T extends CallEvent['type']> = Extract<CallEvent, { type: T }>;

/** The gateway call id a local id stands for (one incoming call, one outgoing call, their leftovers). */
function callIdOf(localId: string): string {
  if (localId === IN_LOCAL) return IN_ID;
  if (localId === OUT_LOCAL) return OUT_ID;
  if (localId.startsWith('left:')) return localId.slice('left:'.length);
  throw new Error(`unknown local id ${localId}`);
}

// ---------------------------------------------------------------------------------------------
// The world: agents, the relay, the gateway.
// ---------------------------------------------------------------------------------------------

interface InFlight {
  request: Request;
  /** Reached the relay or the gateway; its answer has not come back yet. */
  landed: boolean;
  answer?: CallEvent;
}

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
  accepts: number;
  /** A crash carried a reject owed for a call whose claim this agent held on the relay. */
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
  run: number;
  crashes: number;
  book: CallBook;
  inflight: InFlight[];
  /** Remote events sent to it and not yet handled, in any order. */
  inbox: RemoteCallEvent[];
  /** Handled this run (what a redelivery repeats), and in any run (what the relay replays for a leftover). */
  handled: RemoteCallEvent[];
  handledEver: RemoteCallEvent[];
  /** What the relay replayed to this run for its leftovers. */
  replayed: Set<RemoteCallEvent>;
  redeliveries: number;
  /** The deadline timer of each call, as the coordinator holds it. */
  armed: Map<string, number>;
  commands: Map<string, { run: number; kind: 'answer' | 'decline' | 'hangup' | 'dial' }>;
  replies: Map<string, Result<CallReply>[]>;
  commandSeq: number;
  /** This run: the calls it has shown ended, and the call ids whose terminate it has handled. */
  shownEnded: Set<string>;
  terminated: Set<string>;
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
  now: number;
  team: Name[];
  agents: Partial<Record<Name, Agent>>;
  gateway: Map<string, GatewayCall>;
  owner: Map<string, Name>;
  declined: Map<string, Set<Name>>;
  ledgers: Map<string, Ledger>;
  dialed: boolean;
  /** Accept requests emitted for a call, by every agent in every run. */
  acceptsFor: Map<string, number>;
  /** How the losers of claim races learned it while answering: the relay's claim event, or their own claim's answer. */
  lostBy: { claimEvent: number; claimResult: number };
  /** Broken rules found while running (checked at the end with the trace). */
  violations: string[];
  trace: string[];
}

function newAgent(name: Name, knowsOwnId: boolean): Agent {
  return {
    name,
    knowsOwnId,
    run: 1,
    crashes: 0,
    book: emptyBook(),
    inflight: [],
    inbox: [],
    handled: [],
    handledEver: [],
    replayed: new Set(),
    redeliveries: 0,
    armed: new Map(),
    commands: new Map(),
    replies: new Map(),
    commandSeq: 0,
    shownEnded: new Set(),
    terminated: new Set(),
  };
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

/** The relay's fan-out of one event for a call: a claimed call's events go to its owner; others to everyone it rang. */
function publish(w: World, callId: string, make: (at: number) => RemoteCallEvent): void {
  const owner = w.owner.get(callId);
  const audience = owner !== undefined ? [owner] : w.team;
  for (const name of audience) w.agents[name]!.inbox.push(make(w.now));
}

function announceClaim(w: World, callId: string, winner: Name): void {
  // Everyone an incoming call rang hears the claim; an outgoing call rang nobody: only its owner.
  const audience = w.gateway.get(callId)?.direction === 'incoming' ? w.team : [winner];
  for (const name of audience) {
    const a = w.agents[name]!;
    a.inbox.push({ type: 'remote.claimed', at: w.now, callId, ...(a.knowsOwnId ? { mine: name === winner } : {}) });
  }
}

function endCallAtGateway(w: World, callId: string, by: Name | 'customer'): void {
  const g = w.gateway.get(callId)!;
  const talked = g.state === 'accepted';
  g.state = 'ended';
  g.endedBy = by;
  publish(w, callId, (at) => ({ type: 'remote.terminated', at, callId, status: 'COMPLETED', timestamp: at, ...(talked ? { durationSec: TALK_SEC } : {}) }));
}

// ---------------------------------------------------------------------------------------------
// An agent's loop: dispatch an event, follow its effects, as the coordinator does.
// ---------------------------------------------------------------------------------------------

const LET_GO: ReadonlySet<CallEvent['type']> = new Set(['local.hangup', 'local.decline', 'local.deadline', 'local.media_failed', 'local.accept_failed']);

function dispatch(w: World, a: Agent, ev: CallEvent): void {
  w.trace.push(`${a.name}${a.run} ← ${ev.type}${describeEvent(ev)}`);
  // What it learns, before the reducer acts on it.
  if (ev.type === 'local.claim_result' && ev.outcome !== 'lost') ledger(w, a.name, callIdOf(ev.localId)).heardWon = true;
  if (ev.type === 'local.decline_result' && ev.last === true) ledger(w, a.name, callIdOf(ev.localId)).heardLast = true;
  if (ev.type === 'local.initiate_ok') ledger(w, a.name, ev.callId).heardId = true;
  if (ev.type === 'remote.terminated') {
    ledger(w, a.name, ev.callId).heardTerminate = true;
    a.terminated.add(ev.callId);
  }

  const before = a.book;
  const { book, changed, effects } = applyCallEvent(before, ev);
  a.book = book;
  for (const call of changed) observe(w, a, before.calls[call.localId], call, ev);
  for (const effect of effects) follow(w, a, effect);

  // The coordinator's timers follow the reducer's deadline effects: they must match every call's state.
  for (const call of Object.values(a.book.calls)) {
    if (a.armed.get(call.localId) !== deadlineOf(call)) w.violations.push(`${a.name}: timer ${a.armed.get(call.localId)} for ${call.localId} but its deadline is ${deadlineOf(call)}`);
  }
  for (const localId of a.armed.keys()) if (a.book.calls[localId] === undefined) w.violations.push(`${a.name}: a timer for ${localId}, which it does not hold`);
}

function describeEvent(ev: CallEvent): string {
  switch (ev.type) {
    case 'local.claim_result':
    case 'local.end_result':
      return ` ${ev.outcome} (${ev.localId})`;
    case 'local.decline_result':
      return ` last=${String(ev.last)} (${ev.localId})`;
    case 'remote.claimed':
      return ` mine=${String(ev.mine)} (${ev.callId})`;
    case 'remote.terminated':
      return ` ${ev.durationSec ?? '-'}s (${ev.callId})`;
    case 'remote.status':
      return ` ${ev.status}`;
    case 'local.accept_failed':
    case 'local.initiate_failed':
      return ` ${ev.error.code}`;
    case 'local.leftover':
      return ` ${ev.action} ${ev.callId}`;
    default:
      return 'localId' in ev ? ` (${ev.localId})` : ` (${ev.callId})`;
  }
}

/** What the agent shows, and the ledger: who ended each call and how. */
function observe(w: World, a: Agent, prev: CallRecord | undefined, call: CallRecord, ev: CallEvent): void {
  const callId = callIdOf(call.localId);
  if (call.localId.startsWith('left:')) {
    w.violations.push(`${a.name}: leftover ${call.localId} is a call`);
    return;
  }
  if (a.shownEnded.has(call.localId) && isLive(call)) w.violations.push(`${a.name}${a.run}: ${call.localId} went back to ${call.phase} after it ended`);
  if (a.terminated.has(callId) && isLive(call)) w.violations.push(`${a.name}${a.run}: ${call.localId} shown ${call.phase} after its terminate was handled`);
  if (!isLive(call)) a.shownEnded.add(call.localId);
  if (call.phase === 'answering') ledger(w, a.name, callId).answered = true;

  const wasLive = prev !== undefined && isLive(prev);
  if (!isLive(call) && (wasLive || prev === undefined)) {
    const l = ledger(w, a.name, callId);
    if (!l.letGo && !l.endedRemotely) {
      if (wasLive && LET_GO.has(ev.type)) l.letGo = true;
      else l.endedRemotely = true;
    }
  }
  // The loser of a claim race ends "answered elsewhere", whatever told it first.
  if (prev?.phase === 'answering' && call.phase === 'ended' && (ev.type === 'remote.claimed' || (ev.type === 'local.claim_result' && ev.outcome === 'lost'))) {
    if (call.end.kind !== 'answered_elsewhere') w.violations.push(`${a.name}: lost the claim but ended ${call.end.kind}`);
    w.lostBy[ev.type === 'remote.claimed' ? 'claimEvent' : 'claimResult']++;
  }
}

function follow(w: World, a: Agent, effect: CallEffect): void {
  switch (effect.kind) {
    case 'reply': {
      if (!a.commands.has(effect.requestId)) w.violations.push(`${a.name}: a reply to ${effect.requestId}, which nobody asked`);
      const list = a.replies.get(effect.requestId) ?? [];
      list.push(effect.result);
      a.replies.set(effect.requestId, list);
      return;
    }
    case 'deadline':
      if (effect.at === undefined) a.armed.delete(effect.localId);
      else a.armed.set(effect.localId, effect.at);
      return;
    case 'accept': {
      ledger(w, a.name, effect.callId).accepts++;
      w.acceptsFor.set(effect.callId, (w.acceptsFor.get(effect.callId) ?? 0) + 1);
      break;
    }
    case 'end':
      // The gateway ended it and this run knows: nothing may be sent any more.
      if (a.terminated.has(effect.callId)) w.violations.push(`${a.name}${a.run}: ${effect.action} for ${effect.callId} after its terminate was handled`);
      break;
    default:
      break;
  }
  a.inflight.push({ request: effect, landed: false });
}

function command(w: World, a: Agent, kind: 'answer' | 'decline' | 'hangup' | 'dial', localId: string): void {
  const requestId = `${a.name}${a.run}-${a.commandSeq++}`;
  a.commands.set(requestId, { run: a.run, kind });
  const at = w.now;
  switch (kind) {
    case 'answer':
      return dispatch(w, a, { type: 'local.answer', at, localId, answerSdp: ANSWER, requestId });
    case 'decline':
      return dispatch(w, a, { type: 'local.decline', at, localId, requestId });
    case 'hangup':
      return dispatch(w, a, { type: 'local.hangup', at, localId, requestId });
    case 'dial':
      return dispatch(w, a, { type: 'local.dial', at, localId, peer: { number: CALLEE }, offerSdp: OFFER, requestId });
  }
}

// ---------------------------------------------------------------------------------------------
// The relay and the gateway answer requests.
// ---------------------------------------------------------------------------------------------

const err = (code: AppError['code'], message: string, extra: Partial<AppError> = {}): AppError => ({ code, message, ...extra });

/** A claim or decline reaches the relay. `choice` picks a failure when the relay is flaky. */
function relayReceives(w: World, a: Agent, f: InFlight, choice: number): void {
  const { request } = f;
  const failure = w.scenario.flakyRelay ? choice % 4 : 0; // 2: not recorded, no answer; 3: recorded, answer lost
  const recorded = failure !== 2;
  const callId = request.kind === 'claim' || request.kind === 'decline' ? request.callId : '';
  if (request.kind === 'claim') {
    let won = false;
    if (recorded) {
      const owner = w.owner.get(callId);
      if (owner === undefined) {
        w.owner.set(callId, a.name);
        announceClaim(w, callId, a.name);
        won = true;
      } else won = owner === a.name; // claiming again as the winner still wins
    }
    f.answer = { type: 'local.claim_result', at: 0, localId: request.localId, outcome: failure >= 2 ? 'unknown' : won ? 'won' : 'lost' };
  } else if (request.kind === 'decline') {
    let last = false;
    if (recorded) {
      const owner = w.owner.get(callId);
      // A claimed call: a colleague's is not this agent's to reject; its own claim left nobody ringing.
      if (owner !== undefined) last = owner === a.name;
      else {
        const declined = w.declined.get(callId) ?? new Set<Name>();
        declined.add(a.name);
        w.declined.set(callId, declined);
        last = w.team.every((n) => n === a.name || declined.has(n));
      }
    }
    f.answer = { type: 'local.decline_result', at: 0, localId: request.localId, last: failure >= 2 ? undefined : last };
  }
  f.landed = true;
  w.trace.push(`   relay got ${a.name}'s ${request.kind}${failure >= 2 ? ' (fails)' : ''}`);
}

/** An accept or initiate lands at the gateway (its answer comes back later); a reject or terminate lands and is answered at once. */
function gatewayReceives(w: World, a: Agent, f: InFlight, choice: number): void {
  const { request } = f;
  switch (request.kind) {
    case 'accept': {
      const g = w.gateway.get(request.callId)!;
      const pick = choice % 6; // 0–2 ok, 3 refused, 4 timed out after landing, 5 not reached
      if (g.state !== 'ringing') {
        f.answer = { type: 'local.accept_failed', at: 0, localId: request.localId, error: err('gateway_error', 'The call is no longer ringing', { gatewayCode: 138002, httpStatus: 400 }) };
      } else if (pick === 3) {
        f.answer = { type: 'local.accept_failed', at: 0, localId: request.localId, error: err('gateway_error', 'Invalid parameter: session.sdp', { gatewayCode: 100, httpStatus: 400 }) };
      } else if (pick === 5) {
        f.answer = { type: 'local.accept_failed', at: 0, localId: request.localId, error: err('gateway_unreachable', 'ECONNRESET') };
      } else {
        g.state = 'accepted';
        g.answeredBy = a.name;
        f.answer = pick === 4 ? { type: 'local.accept_failed', at: 0, localId: request.localId, error: err('timeout', 'No answer in time') } : { type: 'local.accept_ok', at: 0, localId: request.localId };
      }
      f.landed = true;
      w.trace.push(`   gateway got ${a.name}'s accept: ${f.answer.type}`);
      return;
    }
    case 'initiate': {
      if (choice % 4 === 3) {
        f.answer = { type: 'local.initiate_failed', at: 0, localId: request.localId, error: err('no_call_permission', 'The customer has not allowed calls', { gatewayCode: 138006, httpStatus: 400 }) };
      } else {
        w.gateway.set(OUT_ID, { direction: 'outgoing', state: 'ringing' });
        f.answer = { type: 'local.initiate_ok', at: 0, localId: request.localId, callId: OUT_ID };
      }
      f.landed = true;
      w.trace.push(`   gateway got ${a.name}'s initiate: ${f.answer.type}`);
      return;
    }
    case 'end': {
      const g = w.gateway.get(request.callId);
      const l = ledger(w, a.name, request.callId);
      let outcome: 'done' | 'refused' | 'unreached';
      if (choice % 4 === 3) outcome = 'unreached';
      else if (g === undefined || g.state === 'ended') outcome = 'refused';
      else if (request.action === 'reject' && g.state === 'accepted') {
        // Never meant to happen: a reject for a call someone already answered.
        w.violations.push(`${a.name}: reject reached ${request.callId}, answered by ${String(g.answeredBy)}`);
        outcome = 'refused';
      } else {
        endCallAtGateway(w, request.callId, a.name);
        outcome = 'done';
      }
      if (outcome !== 'unreached') {
        l.endsReached++;
        l.reachedInRun = a.run;
      }
      l.lastEnd = outcome;
      l.lastEndRun = a.run;
      l.lastEndByLeftover = request.localId.startsWith('left:');
      w.trace.push(`   gateway got ${a.name}'s ${request.action}: ${outcome}`);
      removeInFlight(a, f);
      dispatch(w, a, { type: 'local.end_result', at: w.now, localId: request.localId, outcome });
      return;
    }
    default:
      throw new Error(`not a gateway request: ${request.kind}`);
  }
}

function removeInFlight(a: Agent, f: InFlight): void {
  a.inflight = a.inflight.filter((x) => x !== f);
}

function answerComesBack(w: World, a: Agent, f: InFlight): void {
  removeInFlight(a, f);
  dispatch(w, a, { ...f.answer!, at: w.now });
}

const isGatewayRequest = (r: Request): boolean => r.kind === 'accept' || r.kind === 'initiate' || r.kind === 'end';

/** The coordinator sends a call's gateway requests one after the other (inOrder): only the oldest of each call may move. */
function gatewayHeads(a: Agent): InFlight[] {
  const heads = new Map<string, InFlight>();
  for (const f of a.inflight) if (isGatewayRequest(f.request) && !heads.has(f.request.localId)) heads.set(f.request.localId, f);
  return [...heads.values()];
}

function crash(w: World, a: Agent): void {
  const owed = owedOnCrash(a.book);
  w.trace.push(`${a.name}${a.run} CRASHES; the crash file holds ${JSON.stringify(owed)}`);
  for (const call of Object.values(a.book.calls)) {
    if (!isLive(call)) continue;
    // A live call is still the gateway's business: the crash file must name it (an outgoing one has no id while dialing).
    if (call.callId !== undefined && !owed.some((o) => o.callId === call.callId)) w.violations.push(`${a.name}: crash file misses live ${call.localId}`);
    const l = ledger(w, a.name, callIdOf(call.localId));
    if (!l.letGo && !l.endedRemotely) l.letGo = true;
  }
  a.run++;
  a.crashes++;
  a.book = emptyBook();
  a.inflight = []; // what had not reached the relay or gateway never will; answers on their way are lost
  a.armed.clear();
  a.handled = [];
  a.redeliveries = 0;
  a.shownEnded = new Set();
  a.terminated = new Set();
  for (const { callId, action } of owed) dispatch(w, a, { type: 'local.leftover', at: w.now, localId: `left:${callId}`, callId, action });
  // A replay is for the run that holds the leftover: the next one starts after it, like after any other event.
  a.inbox = a.inbox.filter((e) => !a.replayed.has(e));
  a.replayed = new Set();
  for (const e of a.handledEver) {
    if (!owed.some((o) => o.callId === e.callId)) continue;
    a.inbox.push(e);
    a.replayed.add(e);
  }
}

// ---------------------------------------------------------------------------------------------
// Moves: everything that may happen next.
// ---------------------------------------------------------------------------------------------

interface Move {
  label: string;
  go: (choice: number) => void;
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
          publish(w, OUT_ID, (at) => ({ type: 'remote.status', at, callId: OUT_ID, status: 'RINGING', timestamp: at }));
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
          publish(w, OUT_ID, (at) => ({ type: 'remote.answered', at, callId: OUT_ID, answerSdp: ANSWER, timestamp: at }));
          publish(w, OUT_ID, (at) => ({ type: 'remote.status', at, callId: OUT_ID, status: 'ACCEPTED', timestamp: at }));
        },
      });
      moves.push({
        label: 'the callee rejects',
        settles: false,
        go: () => {
          publish(w, OUT_ID, (at) => ({ type: 'remote.status', at, callId: OUT_ID, status: 'REJECTED', timestamp: at }));
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
          const delivered = { ...e, at: w.now };
          a.handled.push(delivered);
          a.handledEver.push(delivered);
          dispatch(w, a, delivered);
        },
      });
    });
    if (a.handled.length > 0 && a.redeliveries < 4) {
      moves.push({
        label: `${a.name} gets an event again`,
        settles: false,
        go: (choice) => {
          a.redeliveries++;
          dispatch(w, a, { ...a.handled[choice % a.handled.length]!, at: w.now });
        },
      });
    }
    for (const f of a.inflight) {
      if (isGatewayRequest(f.request)) continue;
      moves.push(
        f.landed
          ? { label: `${a.name} hears the relay about its ${f.request.kind}`, settles: true, go: () => answerComesBack(w, a, f) }
          : { label: `${a.name}'s ${f.request.kind} reaches the relay`, settles: true, go: (choice) => relayReceives(w, a, f, choice) },
      );
    }
    for (const f of gatewayHeads(a)) {
      moves.push(
        f.landed
          ? { label: `${a.name} hears the gateway about its ${f.request.kind}`, settles: true, go: () => answerComesBack(w, a, f) }
          : { label: `${a.name}'s ${f.request.kind} reaches the gateway`, settles: true, go: (choice) => gatewayReceives(w, a, f, choice) },
      );
    }
    for (const [localId, at] of a.armed) {
      moves.push({
        label: `${a.name}'s deadline for ${localId}`,
        settles: true,
        go: () => {
          w.now = Math.max(w.now, at);
          a.armed.delete(localId);
          dispatch(w, a, { type: 'local.deadline', at: w.now, localId });
        },
      });
    }

    const inHere = a.book.calls[IN_LOCAL];
    if (inHere !== undefined) {
      moves.push({ label: `${a.name} answers`, settles: false, go: () => command(w, a, 'answer', IN_LOCAL) });
      moves.push({ label: `${a.name} declines`, settles: false, go: () => command(w, a, 'decline', IN_LOCAL) });
      moves.push({ label: `${a.name} hangs up`, settles: false, go: () => command(w, a, 'hangup', IN_LOCAL) });
      // Media connects only once the gateway has this agent's answer.
      if ((inHere.phase === 'answering' || inHere.phase === 'connecting') && inCall?.state === 'accepted' && inCall.answeredBy === a.name) {
        moves.push({ label: `${a.name}'s media connects`, settles: false, go: () => dispatch(w, a, { type: 'local.media_connected', at: w.now, localId: IN_LOCAL }) });
      }
      if (isLive(inHere)) moves.push({ label: `${a.name}'s media fails`, settles: false, go: () => dispatch(w, a, mediaFailed(w.now, IN_LOCAL)) });
    }
    const outHere = a.book.calls[OUT_LOCAL];
    if (outHere !== undefined) {
      moves.push({ label: `${a.name} hangs up the outgoing call`, settles: false, go: () => command(w, a, 'hangup', OUT_LOCAL) });
      if (outHere.phase === 'connecting') moves.push({ label: `${a.name}'s outgoing media connects`, settles: false, go: () => dispatch(w, a, { type: 'local.media_connected', at: w.now, localId: OUT_LOCAL }) });
      if (isLive(outHere)) moves.push({ label: `${a.name}'s outgoing media fails`, settles: false, go: () => dispatch(w, a, mediaFailed(w.now, OUT_LOCAL)) });
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

const mediaFailed = (at: number, localId: string): Ev<'local.media_failed'> => ({ type: 'local.media_failed', at, localId, error: { code: 'media_failed', message: 'Media failed: ice' } });

function newWorld(scenario: Scenario): World {
  const team: Name[] = scenario.team ? ['A', 'B'] : ['A'];
  const w: World = {
    scenario,
    now: T0 + 1_000,
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
  };
  team.forEach((n, i) => (w.agents[n] = newAgent(n, scenario.knowsOwnId[i] ?? false)));
  if (scenario.incoming) {
    w.gateway.set(IN_ID, { direction: 'incoming', state: 'ringing' });
    publish(w, IN_ID, (at) => ({ type: 'remote.incoming', at, callId: IN_ID, peer: { number: CUSTOMER }, offerSdp: OFFER, timestamp: T0 }));
  }
  return w;
}

/** Runs the first move whose label starts with `label`. */
function take(w: World, label: string, choice = 0): void {
  const m = movesOf(w).find((x) => x.label.startsWith(label));
  if (m === undefined) throw new Error(`no move "${label}" among ${movesOf(w).map((x) => x.label).join(', ')}`);
  w.trace.push(`* ${m.label}`);
  m.go(choice);
  w.now += 250;
}

/** Everything settles: every event delivered, every request answered (successfully), every timer run. */
function settle(w: World): void {
  for (let i = 0; ; i++) {
    if (i > 2_000) throw new Error('the simulation does not settle');
    const next = movesOf(w).find((m) => m.settles);
    if (next === undefined) return;
    w.trace.push(`~ ${next.label}`);
    next.go(0);
    w.now += 250;
  }
}

function simulate(scenario: Scenario, prelude: readonly string[] = []): World {
  const w = newWorld(scenario);
  for (const label of prelude) take(w, label);
  for (const { move, choice } of scenario.steps) {
    const moves = movesOf(w);
    if (moves.length === 0) break;
    const m = moves[move % moves.length]!;
    w.trace.push(`* ${m.label}`);
    m.go(choice);
    w.now += 250;
  }
  settle(w);
  return w;
}

// ---------------------------------------------------------------------------------------------
// What must hold at the end of every run.
// ---------------------------------------------------------------------------------------------

function report(w: World, message: string): string {
  return `${message}\n${w.trace.join('\n')}`;
}

function checkCommon(w: World): void {
  expect(w.violations, report(w, w.violations.join('; '))).toEqual([]);
  for (const a of agentsOf(w)) {
    // Every command is answered exactly once (a crash takes its run's unanswered ones with it).
    for (const [requestId, { run }] of a.commands) {
      const count = a.replies.get(requestId)?.length ?? 0;
      if (count > 1 || (run === a.run && count !== 1)) expect(count, report(w, `${a.name}: ${requestId} answered ${count} times`)).toBe(run === a.run ? 1 : 0);
    }
    // Once everything is delivered, nothing is left open; only an end the gateway did not get is still owed.
    for (const call of Object.values(a.book.calls)) {
      const l = ledger(w, a.name, callIdOf(call.localId));
      expect(['answering', 'dialing'], report(w, `${a.name}: ${call.localId} stuck`)).not.toContain(call.phase);
      const owed = owedEnd(call);
      if (owed !== undefined) expect(l.lastEnd, report(w, `${a.name}: ${call.localId} still owes ${owed}`)).toBe('unreached');
      else expect(call.open, report(w, `${a.name}: ${call.localId} still has something open`)).toBeUndefined();
    }
    // A leftover has had its one try once everything is delivered: nothing is open about it any more.
    for (const left of Object.values(a.book.leftovers)) expect(left.open, report(w, `${a.name}: ${left.localId} still has something open`)).toBeUndefined();
  }
  for (const [key, l] of w.ledgers) {
    const [name, callId] = key.split('|') as [Name, string];
    const a = w.agents[name]!;
    // An end that did not get through stays owed, so that a crash file would still hold it — unless it
    // was a leftover's last try, or the gateway has ended the call since.
    if (l.lastEnd === 'unreached' && l.lastEndRun === a.run && !l.lastEndByLeftover && !a.terminated.has(callId)) {
      expect(owedOnCrash(a.book).map((o) => o.callId), report(w, `${name}: the unreached end for ${callId} is no longer owed`)).toContain(callId);
    }
    // Never both: a crash may make the next run send the end instead, never as well.
    if (l.endsReached > 1 || l.accepts > 1) expect({ ends: l.endsReached, accepts: l.accepts }, report(w, 'sent twice')).toEqual({ ends: Math.min(1, l.endsReached), accepts: Math.min(1, l.accepts) });
  }
}

/** How often each reason for an owed end not reaching the gateway was used (every run of this file). */
const tally = { gatewayFirst: 0, notThrough: 0 };

/** With a relay that answers: the claim race has one winner, and the gateway gets exactly what it is owed. */
function checkWithRelay(w: World): void {
  checkCommon(w);
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

describe('claim races: a simulation of agents, relay and gateway', () => {
  it('two agents answer at once: at most one accept reaches the gateway; the loser ends answered elsewhere and sends nothing', () => {
    // Each run starts with the race itself, in one of these orders, then goes on at random.
    const preludes = [
      ['A gets remote.incoming', 'B gets remote.incoming', 'A answers', 'B answers'],
      ['B gets remote.incoming', 'A gets remote.incoming', 'B answers', 'A answers'],
      ['A gets remote.incoming', 'A answers', 'B gets remote.incoming', 'B answers'],
      ['B gets remote.incoming', 'B answers', "B's claim reaches the relay", 'A gets remote.incoming', 'A answers'],
      ['A gets remote.incoming', 'B gets remote.incoming', 'A answers', 'B declines'],
    ];
    const seen = { bothAnswered: 0, wonBy: { A: 0, B: 0 }, lostByClaimEvent: 0, lostByClaimResult: 0 };
    fc.assert(
      fc.property(scenarios({ team: true, incoming: true, outgoing: false, crashes: false }, 40), fc.nat({ max: preludes.length - 1 }), (scenario, p) => {
        const w = simulate(scenario, preludes[p]);
        checkWithRelay(w);
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
  });

  it('a crash during the race: the next run sends what the crashed one owed, once, and never for a colleague’s call', () => {
    const seen = { sentByNextRun: 0 };
    fc.assert(
      fc.property(scenarios({ team: true, incoming: true, outgoing: false, crashes: true }, 40), fc.boolean(), (scenario, bFirst) => {
        const prelude = bFirst
          ? ['B gets remote.incoming', 'A gets remote.incoming', 'B answers', 'A answers']
          : ['A gets remote.incoming', 'B gets remote.incoming', 'A answers', 'B answers'];
        const w = simulate(scenario, prelude);
        checkWithRelay(w);
        for (const l of w.ledgers.values()) if (l.reachedInRun !== undefined && l.reachedInRun > 1) seen.sentByNextRun++;
      }),
      { numRuns: 2_000 },
    );
    expect(seen.sentByNextRun).toBeGreaterThan(100);
  });

  it('the gateway gets each reject or terminate it is owed exactly once, across crashes, and nothing for calls it ended or a colleague took', () => {
    const seen = { sentByNextRun: 0, sentBeforeCrash: 0, rejects: 0, terminates: 0 };
    fc.assert(
      fc.property(scenarios({ crashes: true }, 50), (scenario) => {
        const w = simulate(scenario);
        checkWithRelay(w);
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
  });

  it('any mix of incoming and outgoing calls, commands and deadlines, without crashes: the same holds', () => {
    fc.assert(
      fc.property(scenarios({ crashes: false }, 50), (scenario) => checkWithRelay(simulate(scenario))),
      { numRuns: 2_000 },
    );
  });

  it('with a relay that fails to answer: nothing is sent twice, every command is answered once, nothing is left open or revived', () => {
    fc.assert(
      fc.property(scenarios({ flakyRelay: true }, 50), (scenario) => checkCommon(simulate(scenario))),
      {
        numRuns: 1_000,
        examples: [
          // A's claim is lost by the relay, A accepts anyway; B's claim wins, its accept is refused: B
          // must not reject the call A answered.
          [
            {
              team: true,
              incoming: true,
              outgoing: true,
              knowsOwnId: [false, false],
              crashes: false,
              flakyRelay: true,
              steps: [
                { move: 61, choice: 0 },
                { move: 174, choice: 0 },
                { move: 476, choice: 0 },
                { move: 156, choice: 278 },
                { move: 822, choice: 0 },
              ],
            },
          ],
        ],
      },
    );
  });

  it('has seen the gateway end a call first among the runs above', () => {
    // Runs after the properties above (same file, in order): the allowance was needed, it is not dead code.
    expect(tally.gatewayFirst).toBeGreaterThan(300);
  });

  it('an end that does not get through stays owed; the run after a crash sends it, once', () => {
    const w = newWorld({ team: true, incoming: true, outgoing: false, knowsOwnId: [true, true], crashes: true, flakyRelay: false, steps: [] });
    for (const label of ['A gets remote.incoming', 'B gets remote.incoming', 'A answers', "A's claim reaches the relay", 'A hears the relay about its claim']) take(w, label);
    take(w, "A's accept reaches the gateway");
    take(w, 'A hears the gateway about its accept');
    take(w, "A's media connects");
    take(w, 'A hangs up');
    take(w, "A's end reaches the gateway", 3); // not reached
    expect(ledger(w, 'A', IN_ID)).toMatchObject({ endsReached: 0, lastEnd: 'unreached' });
    expect(owedOnCrash(w.agents.A!.book)).toEqual([{ callId: IN_ID, action: 'terminate' }]);
    const before = tally.notThrough;
    checkWithRelay(w); // owed, not through: allowed while the book still owes it
    expect(tally.notThrough).toBe(before + 1);
    take(w, 'A crashes');
    settle(w);
    checkWithRelay(w);
    expect(ledger(w, 'A', IN_ID)).toMatchObject({ endsReached: 1, reachedInRun: 2, lastEnd: 'done' });
    expect(w.gateway.get(IN_ID)).toMatchObject({ state: 'ended', endedBy: 'A' });
  });

  it('a reject carried over a crash for a call this agent had claimed reaches the gateway in the next run', () => {
    // A wins the claim, hangs up before hearing so (the reject is owed, not sent), hears it, and crashes
    // while the reject is on its way. The next run asks the relay for a decline verdict: the call is A's
    // own claim, so nobody else rings (B stopped on A's claim) and A rejects it.
    const w = newWorld({ team: true, incoming: true, outgoing: false, knowsOwnId: [true, true], crashes: true, flakyRelay: false, steps: [] });
    for (const label of ['A gets remote.incoming', 'B gets remote.incoming', 'A answers', "A's claim reaches the relay", 'A hangs up', 'A hears the relay about its claim']) take(w, label);
    expect(w.agents.A!.inflight.map((f) => f.request)).toEqual([{ kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'reject' }]);
    take(w, 'A crashes');
    settle(w);
    expect(w.trace).toContain('A2 ← local.decline_result last=true (left:wacid.race-in)');
    expect(ledger(w, 'A', IN_ID)).toMatchObject({ heardWon: true, letGo: true, endsReached: 1 });
    expect(w.gateway.get(IN_ID)).toMatchObject({ state: 'ended', endedBy: 'A' });
    checkWithRelay(w);
  });

  it('plays a race by hand as the properties do: B hears its claim lost first, A accepts, B sent nothing', () => {
    const w = newWorld({ team: true, incoming: true, outgoing: false, knowsOwnId: [true, true], crashes: false, flakyRelay: false, steps: [] });
    take(w, 'A gets remote.incoming');
    take(w, 'B gets remote.incoming');
    take(w, 'A answers');
    take(w, 'B answers');
    take(w, "A's claim reaches the relay");
    take(w, "B's claim reaches the relay");
    take(w, 'B hears the relay about its claim');
    expect(w.agents.B!.book.calls[IN_LOCAL]).toMatchObject({ phase: 'ended', end: { kind: 'answered_elsewhere' } });
    expect(w.agents.B!.book.calls[IN_LOCAL]).not.toHaveProperty('open');
    expect(w.agents.B!.replies.get('B1-0')).toEqual([{ ok: false, error: { code: 'answered_elsewhere', message: 'Answered by another agent' } }]);
    take(w, 'A hears the relay about its claim');
    expect(w.agents.A!.inflight.map((f) => f.request.kind)).toEqual(['accept']);
    take(w, "A's accept reaches the gateway");
    take(w, 'A hears the gateway about its accept');
    expect(w.agents.A!.replies.get('A1-0')).toEqual([{ ok: true, value: { localId: IN_LOCAL, callId: IN_ID } }]);
    take(w, 'A hangs up');
    settle(w);
    checkWithRelay(w);
    expect(w.agents.B!.inflight).toEqual([]);
    expect(ledger(w, 'B', IN_ID)).toMatchObject({ accepts: 0, endsReached: 0, endedRemotely: true });
    expect(ledger(w, 'A', IN_ID)).toMatchObject({ accepts: 1, endsReached: 1, letGo: true, heardWon: true });
    expect(w.gateway.get(IN_ID)).toMatchObject({ state: 'ended', endedBy: 'A', answeredBy: 'A' });
  });

  it('would catch a gateway owed an end that never gets it', () => {
    const w = newWorld({ team: false, incoming: true, outgoing: false, knowsOwnId: [true, false], crashes: false, flakyRelay: false, steps: [] });
    take(w, 'A gets remote.incoming');
    take(w, 'A declines');
    take(w, "A's decline reaches the relay");
    take(w, 'A hears the relay about its decline');
    // The reject the last verdict asked for is dropped on the floor here, as a broken coordinator would.
    w.agents.A!.inflight = [];
    expect(() => checkWithRelay(w)).toThrow(/still owes reject/);
    // ... and, the book put right, the gateway's ledger still is not.
    w.agents.A!.book = emptyBook();
    w.agents.A!.armed.clear();
    expect(() => checkWithRelay(w)).toThrow(/A owed wacid.race-in an end and none reached the gateway/);
  });
});

// ---------------------------------------------------------------------------------------------
// Late, repeated and reordered: one agent's story around a claim, its remote events delivered in
// the gateway's order or in any order (each once or twice), the answers to its requests anywhere
// among them. Every order must end where the ordered delivery ends.
// ---------------------------------------------------------------------------------------------

interface Story {
  name: string;
  /** What the agent saw and did first, in order. */
  before: Array<(at: number) => CallEvent>;
  /** It crashes right after: the next run starts from owedOnCrash, and the relay replays the call's events. */
  crash?: boolean;
  /** The world's events that reach it late, in the gateway's order; `after`: only once a request of this kind went out. */
  late: Array<{ event: (at: number) => RemoteCallEvent; after?: Request['kind'] }>;
  /** The relay's and the gateway's answers. */
  claim?: 'won' | 'lost';
  lastToDecline?: boolean;
  /** Where every order must end: the calls as the agent holds them, and what reached the gateway (any of these). */
  calls: string[];
  gateway: string[][];
}

const inc = (at: number): RemoteCallEvent => ({ type: 'remote.incoming', at, callId: IN_ID, peer: { number: CUSTOMER }, offerSdp: OFFER, timestamp: T0 });
const claimedIn =
  (mine?: boolean) =>
  (at: number): RemoteCallEvent => ({ type: 'remote.claimed', at, callId: IN_ID, ...(mine !== undefined ? { mine } : {}) });
const ended =
  (callId: string, durationSec?: number) =>
  (at: number): RemoteCallEvent => ({ type: 'remote.terminated', at, callId, status: 'COMPLETED', timestamp: at, ...(durationSec !== undefined ? { durationSec } : {}) });
const outStatus =
  (status: 'RINGING' | 'ACCEPTED' | 'REJECTED') =>
  (at: number): RemoteCallEvent => ({ type: 'remote.status', at, callId: OUT_ID, status, timestamp: at });
const outAnswered = (at: number): RemoteCallEvent => ({ type: 'remote.answered', at, callId: OUT_ID, answerSdp: ANSWER, timestamp: at });
const local =
  (type: 'local.hangup' | 'local.decline' | 'local.deadline', localId = IN_LOCAL) =>
  (at: number): CallEvent => ({ type, at, localId });
const answerIn = (at: number): CallEvent => ({ type: 'local.answer', at, localId: IN_LOCAL, answerSdp: ANSWER, requestId: 'rq-answer' });
const dialOut = (at: number): CallEvent => ({ type: 'local.dial', at, localId: OUT_LOCAL, peer: { number: CALLEE }, offerSdp: OFFER, requestId: 'rq-dial' });

const STORIES: Story[] = [
  {
    name: "a colleague's claim wins while this agent answers",
    before: [inc, answerIn],
    late: [{ event: claimedIn(false) }, { event: ended(IN_ID, TALK_SEC) }],
    claim: 'lost',
    calls: ['in:wacid.race-in ended:answered_elsewhere 0s'],
    gateway: [[]],
  },
  {
    name: "a colleague's claim wins while this agent answers, its own id not known yet",
    before: [inc, answerIn],
    late: [{ event: claimedIn() }, { event: ended(IN_ID, TALK_SEC) }],
    claim: 'lost',
    calls: ['in:wacid.race-in ended:answered_elsewhere 0s'],
    gateway: [[]],
  },
  {
    name: "this agent's claim wins; its own claim event and the customer's hang-up come in any order",
    before: [inc, answerIn],
    late: [{ event: claimedIn(true) }, { event: ended(IN_ID, TALK_SEC), after: 'accept' }],
    claim: 'won',
    calls: ['in:wacid.race-in ended:completed/customer 30s'],
    gateway: [['accept']],
  },
  {
    name: 'declined while a colleague answers',
    before: [inc, local('local.decline')],
    late: [{ event: claimedIn(false) }, { event: ended(IN_ID, TALK_SEC) }],
    lastToDecline: false,
    calls: ['in:wacid.race-in ended:declined 0s'],
    gateway: [[]],
  },
  {
    name: 'rang out here while a colleague answers',
    before: [inc, local('local.deadline')],
    late: [{ event: claimedIn(false) }, { event: ended(IN_ID, TALK_SEC) }],
    lastToDecline: false,
    calls: ['in:wacid.race-in ended:missed 0s'],
    gateway: [[]],
  },
  {
    name: 'declined as the last of the team',
    before: [inc, local('local.decline')],
    late: [{ event: ended(IN_ID), after: 'end' }],
    lastToDecline: true,
    calls: ['in:wacid.race-in ended:declined 0s'],
    gateway: [['end:reject']],
  },
  {
    name: 'hung up while its claim was out, and the claim wins',
    before: [inc, answerIn, local('local.hangup')],
    late: [{ event: claimedIn(true) }, { event: ended(IN_ID), after: 'end' }],
    claim: 'won',
    calls: ['in:wacid.race-in ended:completed/agent 0s'],
    gateway: [['end:reject']],
  },
  {
    name: "hung up while its claim was out, and a colleague's claim wins",
    before: [inc, answerIn, local('local.hangup')],
    late: [{ event: claimedIn(false) }, { event: ended(IN_ID, TALK_SEC) }],
    claim: 'lost',
    calls: ['in:wacid.race-in ended:completed/agent 0s'],
    gateway: [[]],
  },
  {
    name: 'crashed while answering a call that was its own',
    before: [inc, answerIn],
    crash: true,
    late: [{ event: claimedIn(true) }, { event: ended(IN_ID), after: 'end' }],
    claim: 'won',
    calls: ['left:wacid.race-in (leftover)'],
    gateway: [['end:terminate']],
  },
  {
    name: "crashed while answering a call a colleague's claim won",
    before: [inc, answerIn],
    crash: true,
    late: [{ event: claimedIn(false) }, { event: ended(IN_ID, TALK_SEC) }],
    claim: 'lost',
    calls: ['left:wacid.race-in (leftover)'],
    gateway: [[]],
  },
  {
    name: 'crashed while it rang, the last of the team',
    before: [inc],
    crash: true,
    late: [{ event: ended(IN_ID), after: 'end' }],
    lastToDecline: true,
    calls: ['left:wacid.race-in (leftover)'],
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
    before: [dialOut, local('local.hangup', OUT_LOCAL)],
    late: [{ event: outStatus('RINGING') }, { event: ended(OUT_ID), after: 'end' }],
    calls: ['out:race ended:cancelled 0s'],
    gateway: [['end:terminate', 'initiate']],
  },
  {
    // Whether the terminate is sent depends on whether the rejection came before the initiate response.
    name: 'an outgoing call hung up while its initiate was on its way, and rejected meanwhile',
    before: [dialOut, local('local.hangup', OUT_LOCAL)],
    late: [{ event: outStatus('REJECTED') }, { event: ended(OUT_ID) }],
    calls: ['out:race ended:cancelled 0s'],
    gateway: [['initiate'], ['end:terminate', 'initiate']],
  },
];

function showCall(call: CallRecord): string {
  const c = publicCall(call);
  const what = c.phase !== 'ended' ? c.phase : c.end.kind === 'completed' ? `ended:completed/${c.end.by}` : c.end.kind === 'failed' ? `ended:failed/${c.end.code}` : `ended:${c.end.kind}`;
  return `${c.localId} ${what}${c.phase === 'ended' ? ` ${c.durationSec}s` : ''}`;
}

interface StoryRun {
  calls: string[];
  gateway: string[];
  owed: ReturnType<typeof owedOnCrash>;
}

/** Plays a story; `pick` chooses the next delivery among those that may come now (undefined: in order, answers first). */
function playStory(story: Story, copies: readonly number[], pick?: (n: number) => number): StoryRun {
  let book = emptyBook();
  let at = T0;
  const outstanding: Request[] = [];
  const sent = new Set<Request['kind']>();
  const gateway: string[] = [];
  const shownEnded = new Set<string>();
  const terminated = new Set<string>();
  const apply = (ev: CallEvent): void => {
    if (ev.type === 'remote.terminated') terminated.add(ev.callId);
    const r = applyCallEvent(book, { ...ev, at: (at += 100) });
    book = r.book;
    for (const call of r.changed) {
      const callId = call.callId ?? (call.localId === OUT_LOCAL ? OUT_ID : IN_ID);
      if (isLive(call) && (shownEnded.has(call.localId) || terminated.has(callId) || call.localId.startsWith('left:'))) throw new Error(`${story.name}: ${showCall(call)} is live again`);
      if (!isLive(call)) shownEnded.add(call.localId);
    }
    for (const e of r.effects) {
      if (e.kind === 'reply' || e.kind === 'deadline') continue;
      outstanding.push(e);
      sent.add(e.kind);
      if (e.kind === 'accept' || e.kind === 'initiate') gateway.push(e.kind);
      if (e.kind === 'end') gateway.push(`end:${e.action}`);
    }
  };
  const answerOf = (r: Request): CallEvent => {
    switch (r.kind) {
      case 'claim':
        return { type: 'local.claim_result', at, localId: r.localId, outcome: story.claim ?? 'won' };
      case 'decline':
        return { type: 'local.decline_result', at, localId: r.localId, last: story.lastToDecline ?? false };
      case 'accept':
        return { type: 'local.accept_ok', at, localId: r.localId };
      case 'initiate':
        return { type: 'local.initiate_ok', at, localId: r.localId, callId: OUT_ID };
      case 'end':
        return { type: 'local.end_result', at, localId: r.localId, outcome: 'done' };
    }
  };

  for (const make of story.before) apply(make(at));
  const late = story.late.flatMap((l, i) => Array.from({ length: copies[i % copies.length] ?? 1 }, () => l));
  if (story.crash) {
    const owed = owedOnCrash(book);
    book = emptyBook();
    outstanding.length = 0;
    shownEnded.clear();
    for (const { callId, action } of owed) apply({ type: 'local.leftover', at, localId: `left:${callId}`, callId, action });
    // The relay replays the call's connect to the new run.
    late.unshift({ event: inc });
  }
  for (;;) {
    const ready = late.filter((l) => l.after === undefined || sent.has(l.after));
    const choices = [...outstanding.map((r) => ({ r })), ...ready.map((l) => ({ l }))];
    if (choices.length === 0) break;
    const chosen = choices[pick === undefined ? 0 : pick(choices.length)]!;
    if ('r' in chosen) {
      outstanding.splice(outstanding.indexOf(chosen.r), 1);
      apply(answerOf(chosen.r));
    } else {
      late.splice(late.indexOf(chosen.l), 1);
      apply(chosen.l.event(at));
    }
  }
  const leftovers = Object.values(book.leftovers).map((l) => `${l.localId} (leftover${l.open !== undefined ? `, waiting for ${l.open.waiting}` : ''})`);
  return { calls: [...Object.values(book.calls).map(showCall), ...leftovers].sort(), gateway: gateway.sort(), owed: owedOnCrash(book) };
}

describe('late, repeated and reordered events around a claim', () => {
  it('every story ends as expected when delivered in order', () => {
    for (const story of STORIES) {
      const inOrder = playStory(story, [1]);
      expect({ story: story.name, calls: inOrder.calls, owed: inOrder.owed }).toEqual({ story: story.name, calls: story.calls, owed: [] });
      expect(story.gateway).toContainEqual(inOrder.gateway);
    }
  });

  it('in any order, each event once or twice, the answers anywhere among them: the same end, never a call ringing again', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: STORIES.length - 1 }),
        fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 4, maxLength: 4 }),
        fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
        (index, copies, seeds) => {
          const story = STORIES[index]!;
          let k = 0;
          const scrambled = playStory(story, copies, (n) => (seeds[k++ % seeds.length] ?? 0) % n);
          expect({ story: story.name, calls: scrambled.calls, owed: scrambled.owed }).toEqual({ story: story.name, calls: story.calls, owed: [] });
          expect(story.gateway).toContainEqual(scrambled.gateway);
        },
      ),
      { numRuns: 4_000 },
    );
  });
});
