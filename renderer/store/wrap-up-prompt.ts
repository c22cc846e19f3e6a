// When a call the agent talked on ends, the window asks for its wrap-up at once ("Disposition",
// "Notes"), whatever the team's after-call work: in after-call work its panel asks, otherwise a card
// in the same place. One card, for the latest such call; a call that rings, is placed or goes on takes
// its place, and the card of the call before does not come back (its recent calls' "Wrap-up" does).
import type { AgentPresence } from '../../shared/api';
import { isLive, type CallState } from '../../shared/call-state';
import { historyEntryFor } from '../../shared/history';
import { wasAnswered } from './wrap-up-form';

/** Not asking; asking for one call's wrap-up; or its wrap-up just saved (said for a moment). */
export type WrapUpPrompt = { kind: 'none' } | { kind: 'asking'; localId: string } | { kind: 'saved'; localId: string; at: number };

export const NO_WRAP_UP_PROMPT: WrapUpPrompt = { kind: 'none' };

/** How long "Wrap-up saved" stays in the card's place. */
export const WRAP_UP_SAVED_SHOWN_MS = 5_000;

type Calls = Readonly<Record<string, CallState>>;

/**
 * The prompt once the calls or the presence changed: none while a call is live; the latest call the
 * agent talked on that has just ended (the same rule as recent calls' "answered", `wasAnswered`);
 * none once after-call work follows that call, since its panel asks instead.
 */
export function followWrapUpPrompt(prompt: WrapUpPrompt, calls: Calls, before: Calls, presence: AgentPresence | null): WrapUpPrompt {
  const all = Object.values(calls);
  if (all.some(isLive)) return prompt.kind === 'none' ? prompt : NO_WRAP_UP_PROMPT;
  let next = prompt;
  let latest = -Infinity;
  for (const call of all) {
    const was = before[call.localId];
    // Only an end this window saw happen: a call that was already over when it loaded is not asked about.
    if (call.phase !== 'ended' || was === undefined || was.phase === 'ended') continue;
    if (!wasAnswered(historyEntryFor(call)) || call.endedAt <= latest) continue;
    latest = call.endedAt;
    next = { kind: 'asking', localId: call.localId };
  }
  if (next.kind === 'asking' && presence?.afterCallWork?.localId === next.localId) return NO_WRAP_UP_PROMPT;
  return next;
}

/**
 * The call whose card shows, or null. The main process starts after-call work as a call ends and
 * says so in the presence it pushes right after the call: until that presence says the agent is off
 * the call, the card waits, so that it never shows for a moment before the after-call work panel.
 */
export function wrapUpCardCall(prompt: WrapUpPrompt, presence: AgentPresence | null): string | null {
  if (prompt.kind !== 'asking') return null;
  if (presence !== null && (presence.status === 'on_call' || presence.status === 'call_waiting' || presence.afterCallWork !== undefined)) return null;
  return prompt.localId;
}
