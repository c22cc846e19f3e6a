// An agent's states: each change an instance saw is a fact; the intervals are the facts in time
// order, consecutive facts of the same state and reason being one interval that ends where the next
// begins. Two instances that both saw a change (an agent's report on one, its expiry noticed on
// both) write two facts that make one interval, whatever the order they were written in.

/** A state change, as one instance saw it. `at` is unix ms; `reason` '' when there is none. */
export interface AgentStateFact {
  agentId: string;
  state: string;
  reason: string;
  at: number;
}

/** A state the agent was in from `startedAt` until `endedAt` (absent: it still is). */
export interface AgentStateInterval {
  agentId: string;
  state: string;
  reason?: string;
  startedAt: number;
  endedAt?: number;
}

/** The state an agent is in once its presence has lapsed: it stopped reporting (the app quit, the network went). */
export const OFFLINE = 'offline';
/** Why an agent went offline: its presence expired without a new report. */
export const PRESENCE_EXPIRED = 'presence_expired';

/** The order facts are taken in: by time, then by state and reason, so that a tie comes out the same everywhere. */
export function compareStateFacts(a: AgentStateFact, b: AgentStateFact): number {
  return a.at - b.at || (a.state < b.state ? -1 : a.state > b.state ? 1 : 0) || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0);
}

/** The intervals one agent's facts make, in order; the last is open. */
export function intervalsOf(facts: readonly AgentStateFact[]): AgentStateInterval[] {
  const intervals: AgentStateInterval[] = [];
  for (const fact of [...facts].sort(compareStateFacts)) {
    const last = intervals.at(-1);
    if (last !== undefined && last.state === fact.state && (last.reason ?? '') === fact.reason) continue;
    if (last !== undefined) last.endedAt = fact.at;
    intervals.push({ agentId: fact.agentId, state: fact.state, ...(fact.reason !== '' ? { reason: fact.reason } : {}), startedAt: fact.at });
  }
  return intervals;
}
