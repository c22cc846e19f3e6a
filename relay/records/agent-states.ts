// An agent's states: each change an instance saw is a fact; the intervals are the facts in time
// order, consecutive facts of the same state and reason being one interval that ends where the next
// begins. Two instances that both saw a change (an agent's report on one, its expiry noticed on
// both) write two facts that make one interval, whatever the order they were written in. Facts of
// the same millisecond are taken in the order they arrived, and a state that lasted no time is no
// interval: the last of them is the state from that instant on.
//
// An expiry (offline, presence_expired) is one instance's reading of the team's presence, dated on
// its own clock. A report another instance took shortly before it says the agent was there, and
// the presence that report set was still alive: such an expiry came from a clock ahead of the
// other's, or from a presence read a moment before the report reached it, and is left out. The
// instance that took the report notices the lapse itself if the agent goes quiet.

/** A state change, as one instance saw it. `at` is unix ms; `reason` '' when there is none. */
export interface AgentStateFact {
  agentId: string;
  state: string;
  reason: string;
  at: number;
  /** The instance that wrote it, once written (the records read it back with the fact). */
  instanceId?: string;
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
 * How long after a report another instance took an expiry is contradicted by it. The app refreshes
 * its presence every 20 s and a presence lives longer than that (60 s: relay/REFERENCE.md
 * "Presence"), so an expiry this soon after a report cannot be right, whatever the clocks say; a
 * real one comes a presence lifetime after the last report.
 */
export const REPORT_OUTLIVES_MS = 20_000;

const isExpiry = (fact: AgentStateFact): boolean => fact.state === OFFLINE && fact.reason === PRESENCE_EXPIRED;

/**
 * The order facts are taken in: by time; facts of the same millisecond in the order they are given,
 * which is the order they arrived (the sort is stable).
 */
export function compareStateFacts(a: AgentStateFact, b: AgentStateFact): number {
  return a.at - b.at;
}

const sameState = (interval: AgentStateInterval, fact: AgentStateFact): boolean => interval.state === fact.state && (interval.reason ?? '') === fact.reason;

/**
 * Whether the expiry at `sorted[i]` is contradicted by a report another instance took up to
 * REPORT_OUTLIVES_MS before it (the facts before it in time order, looked at back to that).
 */
function contradicted(sorted: readonly AgentStateFact[], i: number): boolean {
  const expiry = sorted[i]!;
  if (expiry.instanceId === undefined) return false;
  for (let j = i - 1; j >= 0 && expiry.at - sorted[j]!.at < REPORT_OUTLIVES_MS; j -= 1) {
    const report = sorted[j]!;
    if (!isExpiry(report) && report.instanceId !== undefined && report.instanceId !== expiry.instanceId) return true;
  }
  return false;
}

/**
 * The intervals one agent's facts make, in order; the last is open. `facts` in the order they
 * arrived. With `from`, only the intervals from that instant on: the facts before it only say
 * which expiries stand.
 */
export function intervalsOf(facts: readonly AgentStateFact[], options: { from?: number } = {}): AgentStateInterval[] {
  const sorted = [...facts].sort(compareStateFacts);
  const standing = sorted.filter((fact, i) => (options.from === undefined || fact.at >= options.from) && !(isExpiry(fact) && contradicted(sorted, i)));
  const intervals: AgentStateInterval[] = [];
  for (const fact of standing) {
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
