// All calls of one agent, and the delivery of an event to the one it concerns: remote events are
// addressed by the gateway's call id, local ones by the app's local id. What makes delivery order
// not matter lives here: events for an id nobody holds yet wait for it (an outgoing call's events
// can overtake its initiate response), a terminate for an id nobody holds leaves a tombstone, and a
// call that learns its id takes what waited for it.
import { handlers } from './handlers';
import { deadlineOf, owedEnd, type CallRecord, type Leftover } from './record';
import { restorable } from './rejoin';
import type { Handler, On } from './steps';
import { isLive, PENDING_TTL_MS, TOMBSTONE_TTL_MS, transferLocalId, type CallEffect, type CallEvent, type GatewayEnd, type RemoteCallEvent, type RestorableCall } from './types';

export interface CallBook {
  calls: Readonly<Record<string, CallRecord>>;
  /** gateway call id → localId */
  byCallId: Readonly<Record<string, string>>;
  /** gateway call id → when it ended, for calls this agent never saw begin (terminate before connect). */
  tombstones: Readonly<Record<string, number>>;
  /** Events for call ids not known yet: an outgoing call's events can overtake its initiate response. */
  pending: Readonly<Record<string, readonly RemoteCallEvent[]>>;
  /** Calls a previous run left live, by gateway call id: never shown, kept while the gateway is owed their end. */
  leftovers: Readonly<Record<string, Leftover>>;
}

export const emptyBook = (): CallBook => ({ calls: {}, byCallId: {}, tombstones: {}, pending: {}, leftovers: {} });

export interface BookChange {
  book: CallBook;
  /** The calls whose state changed, each once as the delivery left it, oldest change first. */
  changed: CallRecord[];
  /** What must happen, in order. */
  effects: CallEffect[];
}

/** One call's step, as if it were the agent's only call: `undefined` means "no such call". */
export interface CallStep {
  state: CallRecord | undefined;
  effects: CallEffect[];
}

/**
 * Delivers one event: the book after it, the calls it changed and what must happen. The same book
 * object comes back when the event changes nothing.
 */
export function applyCallEvent(book: CallBook, ev: CallEvent): BookChange {
  const delivered = deliver(book, ev);
  // Each call is reported once, as the whole delivery leaves it (a call opened and ended by one
  // delivery is reported ended, never ringing), and its deadline follows that state only.
  const last = new Map<string, CallRecord>();
  for (const call of delivered.changed) {
    last.delete(call.localId);
    last.set(call.localId, call);
  }
  const deadlines: CallEffect[] = [];
  for (const call of last.values()) {
    const at = deadlineOf(call);
    if (at !== deadlineOf(book.calls[call.localId])) deadlines.push({ kind: 'deadline', localId: call.localId, at });
  }
  return { book: delivered.book, changed: [...last.values()], effects: [...delivered.effects, ...deadlines] };
}

/**
 * The step of one call, alone in a book: its next state (the very same object when the event changes
 * nothing) and what must happen. Events for another call id than its own wait, as in any book.
 */
export function reduceCall(call: CallRecord | undefined, ev: CallEvent): CallStep {
  const alone: CallBook =
    call === undefined ? emptyBook() : { ...emptyBook(), calls: { [call.localId]: call }, byCallId: call.callId !== undefined ? { [call.callId]: call.localId } : {} };
  const change = applyCallEvent(alone, ev);
  return { state: call !== undefined ? change.book.calls[call.localId] : change.changed[0], effects: change.effects };
}

interface Delivery {
  book: CallBook;
  changed: CallRecord[];
  effects: CallEffect[];
}

function deliver(book: CallBook, ev: CallEvent): Delivery {
  const named = namedByRecordId(book, ev);
  if (named !== undefined) {
    const first = deliver(book, named);
    const then = deliver(first.book, ev);
    return { book: then.book, changed: [...first.changed, ...then.changed], effects: [...first.effects, ...then.effects] };
  }
  const on = find(book, ev);
  if (on === undefined) return { book: waitForId(book, ev as RemoteCallEvent), changed: [], effects: [] };
  // One handler per event type; TypeScript cannot tie the table's entry to the event's type here.
  const step = (handlers[ev.type] as Handler<CallEvent>)(ev, on);

  const effects: CallEffect[] = [];
  if (step.reply !== undefined && 'requestId' in ev && ev.requestId !== undefined) effects.push({ kind: 'reply', requestId: ev.requestId, result: step.reply });
  effects.push(...(step.effects ?? []));
  const changed = [...(step.held ?? []), ...(step.call !== undefined && step.call !== on.call ? [step.call] : [])];
  let next = book;
  if (changed.length > 0) {
    const calls = { ...book.calls };
    let byCallId = book.byCallId;
    for (const call of changed) {
      calls[call.localId] = call;
      // A call id names the call that opened with it last: a transfer that rings this agent takes
      // it from the ended call this agent had of it before, which stays as it was.
      const holder = call.callId !== undefined ? byCallId[call.callId] : undefined;
      if (call.callId !== undefined && holder !== call.localId && (holder === undefined || book.calls[call.localId] === undefined)) byCallId = { ...byCallId, [call.callId]: call.localId };
    }
    next = { ...next, calls, byCallId };
  }
  if (step.leftover !== undefined && step.leftover !== on.leftover) next = { ...next, leftovers: { ...next.leftovers, [step.leftover.callId]: step.leftover } };
  const delivered: Delivery = { book: next, changed, effects };

  // A call that has just learned its id (a connect opened it, an initiate response named it) takes
  // what waited for that id, in order, as if it came now: a claim can overtake the connect it claims,
  // an outgoing call's progress its initiate response (order is not guaranteed, protocol.md).
  const learned = step.call?.callId;
  if (step.call === undefined || learned === undefined || book.byCallId[learned] === step.call.localId) return delivered;
  return replay(delivered, learned, ev.at);
}

/**
 * An outgoing call's status or terminate that overtakes its initiate's answer (order is not
 * guaranteed, protocol.md) names the call by the record id it was placed with — its local id, which
 * the service echoes as `biz_opaque_callback_data`: the call learns its id from it, as from that
 * answer, instead of the event waiting for the answer.
 */
function namedByRecordId(book: CallBook, ev: CallEvent): CallEvent | undefined {
  if ((ev.type !== 'remote.status' && ev.type !== 'remote.terminated') || ev.opaque === undefined || book.byCallId[ev.callId] !== undefined) return undefined;
  const call = book.calls[ev.opaque];
  if (call?.phase !== 'dialing' || call.direction !== 'outgoing') return undefined;
  return { type: 'local.initiate_ok', at: ev.at, localId: call.localId, callId: ev.callId };
}

/** The call or leftover an event concerns; undefined for a remote event whose id nobody holds yet (it waits). */
function find(book: CallBook, ev: CallEvent): On | undefined {
  // A transfer's ring is a call of its own, whatever this agent had of the call before.
  if (ev.type === 'remote.transfer_ring') {
    const call = book.calls[transferLocalId(ev.transferId)];
    return call !== undefined ? { call, book } : { book };
  }
  if (isRemote(ev)) {
    const localId = book.byCallId[ev.callId];
    if (localId !== undefined) return { call: book.calls[localId], book };
    const leftover = book.leftovers[ev.callId];
    if (leftover !== undefined) return { leftover, book };
    // Nobody holds this id yet: a connect opens its call; anything else waits for it.
    return ev.type === 'remote.incoming' ? { book } : undefined;
  }
  const call = book.calls[ev.localId];
  if (call !== undefined) return { call, book };
  const leftover = Object.values(book.leftovers).find((l) => l.localId === ev.localId);
  return leftover !== undefined ? { leftover, book } : { book };
}

/** An event for an id nobody holds waits for it. A tombstone drops what follows a terminate, except while that terminate itself still waits. */
function waitForId(book: CallBook, ev: RemoteCallEvent): CallBook {
  const queued = book.pending[ev.callId];
  if (book.tombstones[ev.callId] !== undefined && queued === undefined) return book;
  if (queued?.some((q) => sameDelivery(q, ev))) return book;
  const pending = { ...book.pending, [ev.callId]: [...(queued ?? []), ev] };
  const tombstones = ev.type === 'remote.terminated' ? { ...book.tombstones, [ev.callId]: ev.at } : book.tombstones;
  return { ...book, pending, tombstones };
}

function replay(first: Delivery, callId: string, at: number): Delivery {
  const waiting = first.book.pending[callId] ?? [];
  const { [callId]: _replayed, ...pending } = first.book.pending;
  const { [callId]: _tomb, ...tombstones } = first.book.tombstones;
  let acc: Delivery = { ...first, book: { ...first.book, pending, tombstones } };
  for (const queued of waiting) {
    const then = deliver(acc.book, { ...queued, at });
    acc = { book: then.book, changed: [...acc.changed, ...then.changed], effects: [...acc.effects, ...then.effects] };
  }
  return acc;
}

const isRemote = (ev: CallEvent): ev is RemoteCallEvent => ev.type.startsWith('remote.');

/** The same delivery twice (retries, several subscribers): equal in everything but when it was applied. */
const sameDelivery = (a: RemoteCallEvent, b: RemoteCallEvent): boolean => JSON.stringify({ ...a, at: 0 }) === JSON.stringify({ ...b, at: 0 });

/**
 * Drops ended calls, tombstones and pending events past their time, and settled leftovers at once
 * (keeping their tombstones); a call the gateway is still owed an end for stays.
 */
export function pruneBook(book: CallBook, now: number): CallBook {
  const calls: Record<string, CallRecord> = {};
  const byCallId: Record<string, string> = {};
  const tombstones: Record<string, number> = {};
  for (const [id, call] of Object.entries(book.calls)) {
    if (call.phase === 'ended' && owedEnd(call) === undefined && now - call.endedAt > TOMBSTONE_TTL_MS) {
      if (call.callId !== undefined) tombstones[call.callId] = Math.max(tombstones[call.callId] ?? 0, call.endedAt);
      continue;
    }
    calls[id] = call;
  }
  // The call an id names stays named by it while it is kept; else the latest call of that id kept.
  for (const [id, call] of Object.entries(calls)) {
    if (call.callId === undefined) continue;
    const named = book.byCallId[call.callId];
    const latest = byCallId[call.callId];
    if (named !== undefined && calls[named] !== undefined) byCallId[call.callId] = named;
    else if (latest === undefined || (calls[latest]?.createdAt ?? 0) <= call.createdAt) byCallId[call.callId] = id;
  }
  const leftovers: Record<string, Leftover> = {};
  for (const [callId, left] of Object.entries(book.leftovers)) {
    if (owedEnd(left) !== undefined) leftovers[callId] = left;
    else tombstones[callId] = left.since;
  }
  for (const [id, at] of Object.entries(book.tombstones)) if (now - at <= TOMBSTONE_TTL_MS && tombstones[id] === undefined) tombstones[id] = at;
  const pending: Record<string, RemoteCallEvent[]> = {};
  for (const [id, events] of Object.entries(book.pending)) {
    const fresh = events.filter((e) => now - e.at <= PENDING_TTL_MS);
    if (fresh.length > 0) pending[id] = fresh;
  }
  return { calls, byCallId, tombstones, pending, leftovers };
}

export const liveCalls = (book: CallBook): CallRecord[] => Object.values(book.calls).filter(isLive);

/**
 * One call the gateway would still be owed an end for if this run stopped now. `restore`: a bridged
 * call this agent is in, as the window sees it, which the next run takes up again (rejoining, as
 * `local.leftover` with it) rather than ending; an older app that cannot ends it with `action`.
 */
export interface OwedOnCrash {
  callId: string;
  action: GatewayEnd;
  restore?: RestorableCall;
}

/**
 * What the gateway would still be owed if this run stopped now, per call id: a live call's reject
 * (ringing) or terminate, and every end not yet confirmed, leftovers' included. The crash-recovery
 * file is exactly this.
 */
export function owedOnCrash(book: CallBook): OwedOnCrash[] {
  const owed = new Map<string, OwedOnCrash>();
  // A live call decides for its id: a colleague's transfer that rings here owes nothing, whatever an
  // earlier call of that id, ended here, still waits for (the call is a colleague's by now).
  const decided = new Set<string>();
  for (const call of Object.values(book.calls)) {
    if (call.callId === undefined || decided.has(call.callId)) continue;
    const action = isLive(call) ? owedWhileLive(call) : owedEnd(call);
    if (isLive(call)) {
      decided.add(call.callId);
      owed.delete(call.callId);
    }
    if (action === undefined) continue;
    const restore = restorable(call);
    owed.set(call.callId, { callId: call.callId, action, ...(restore !== undefined ? { restore } : {}) });
  }
  for (const left of Object.values(book.leftovers)) {
    const action = owedEnd(left);
    if (action !== undefined) owed.set(left.callId, { callId: left.callId, action });
  }
  return [...owed.values()].sort((a, b) => a.callId.localeCompare(b.callId));
}

/**
 * A live call's end, if this run stopped now: reject while it rings, else terminate. A colleague's
 * transfer that rings here is owed nothing: the gateway's call is accepted and goes on without it.
 */
function owedWhileLive(call: CallRecord): GatewayEnd | undefined {
  if (call.phase !== 'ringing') return 'terminate';
  return call.transfer?.role === 'to' ? undefined : 'reject';
}
