// Pure rules for the store's copy of the calls. The main process owns call state; the renderer
// mirrors snapshots and pushes. Those can cross (a snapshot fetched before a push can be answered
// after it), so a call never moves backwards here: an ended call stays ended, an active call does
// not fall back to connecting.
import { isBusy, isHeld, type CallPhase, type CallState } from '../../shared/call-state';

const PHASE_RANK: Readonly<Record<CallPhase, number>> = {
  ringing: 0,
  dialing: 0,
  answering: 1,
  calling: 1,
  remote_ringing: 2,
  connecting: 3,
  active: 4,
  ended: 5,
};

/** How long the outcome of a call stays on the call panel after it ends. */
export const OUTCOME_VISIBLE_MS = 6_000;

/** The newer of two versions of one call; ties go to the one that arrived last. */
export function mergeCall(existing: CallState | undefined, incoming: CallState): CallState {
  if (existing === undefined) return incoming;
  return PHASE_RANK[incoming.phase] >= PHASE_RANK[existing.phase] ? incoming : existing;
}

export function mergeCalls(current: Readonly<Record<string, CallState>>, incoming: CallState): Record<string, CallState> {
  const merged = mergeCall(current[incoming.localId], incoming);
  return merged === current[incoming.localId] ? (current as Record<string, CallState>) : { ...current, [incoming.localId]: merged };
}

/**
 * A snapshot is the whole truth about live calls: a live call missing from it no longer exists in
 * the main process (it restarted, or pruned it). Ended calls are kept for their outcome.
 */
export function mergeSnapshotCalls(current: Readonly<Record<string, CallState>>, snapshot: readonly CallState[]): Record<string, CallState> {
  const next: Record<string, CallState> = {};
  for (const [id, call] of Object.entries(current)) if (call.phase === 'ended') next[id] = call;
  for (const call of snapshot) next[call.localId] = mergeCall(current[call.localId], call);
  return next;
}

export type RingingCall = Extract<CallState, { phase: 'ringing' }>;

export function ringingCalls(calls: Readonly<Record<string, CallState>>): RingingCall[] {
  return Object.values(calls)
    .filter((c): c is RingingCall => c.phase === 'ringing')
    .sort((a, b) => a.createdAt - b.createdAt);
}

/**
 * The call the call panel shows: the newest live call in hand (not ringing, not on hold), else the
 * newest call on hold when none is in hand, else the newest call that ended moments ago (its outcome
 * is shown briefly).
 */
export function currentCall(calls: Readonly<Record<string, CallState>>, now: number): CallState | undefined {
  let live: CallState | undefined;
  let held: CallState | undefined;
  let ended: Extract<CallState, { phase: 'ended' }> | undefined;
  for (const call of Object.values(calls)) {
    if (call.phase === 'ringing') continue;
    if (call.phase === 'ended') {
      if (now - call.endedAt <= OUTCOME_VISIBLE_MS && (!ended || call.endedAt > ended.endedAt)) ended = call;
    } else if (isHeld(call)) {
      if (!held || call.createdAt > held.createdAt) held = call;
    } else if (!live || call.createdAt > live.createdAt) {
      live = call;
    }
  }
  return live ?? held ?? ended;
}

/** The calls on hold beside the one the call panel shows (`shownId`), oldest first. */
export function heldCalls(calls: Readonly<Record<string, CallState>>, shownId: string | undefined): CallState[] {
  return Object.values(calls)
    .filter((c) => isHeld(c) && c.localId !== shownId)
    .sort((a, b) => a.createdAt - b.createdAt);
}

/** Whether a call is in hand (busy and not on hold): a call that rings now is answered by holding it. */
export const hasCallInHand = (calls: Readonly<Record<string, CallState>>): boolean => Object.values(calls).some((c) => isBusy(c) && !isHeld(c));

/**
 * A call whose audio this window carries: answered, being placed or under way. Leaving the page
 * would end it (the page owns the media), so the browser host asks before the tab closes. A
 * ringing call loses nothing: the reloaded page rings again.
 */
export function hasCallWithAudio(calls: Readonly<Record<string, CallState>>): boolean {
  return Object.values(calls).some((c) => c.phase !== 'ended' && c.phase !== 'ringing');
}
