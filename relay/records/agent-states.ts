// An agent's states: each change an instance saw is a fact; the intervals are the facts in time
// order, consecutive facts of the same state and reason being one interval that ends where the next
// begins. Two instances that both saw a change (an agent's report on one, its expiry noticed on
// both) write two facts that make one interval, whatever the order they were written in. Facts of
// the same millisecond are taken in the order they arrived, and a state that lasted no time is no
// interval: the last of them is the state from that instant on.

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

/**
 * The order facts are taken in: by time; facts of the same millisecond in the order they are given,
 * which is the order they arrived (the sort is stable).
 */
export function compareStateFacts(a: AgentStateFact, b: AgentStateFact): number {
  return a.at - b.at;
}

const sameState = (interval: AgentStateInterval, fact: AgentStateFact): boolean => interval.state === fact.state && (interval.reason ?? '') === fact.reason;

/** The intervals one agent's facts make, in order; the last is open. `facts` in the order they arrived. */
export function intervalsOf(facts: readonly AgentStateFact[]): AgentStateInterval[] {
  const intervals: AgentStateInterval[] = [];
  for (const fact of [...facts].sort(compareStateFacts)) {
    const last = intervals.at(-1);
    if (last !== undefined && sameState(last, fact)) continue;
    if (last !== undefined && last.startedAt === fact.at) {
      // The state `last` opened lasted no time: this fact's state is the one from that instant,
      // and the interval before goes on if it is this same state.
      intervals.pop();
      const before = intervals.at(-1);
      if (before !== undefined && sameState(before, fact)) {
        delete before.endedAt;
        continue;
      }
    } else if (last !== undefined) {
      last.endedAt = fact.at;
    }
    intervals.push({ agentId: fact.agentId, state: fact.state, ...(fact.reason !== '' ? { reason: fact.reason } : {}), startedAt: fact.at });
  }
  return intervals;
}
