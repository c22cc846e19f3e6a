// The team as colleagues see it (shared/transfer.ts): each agent's name and presence, for the list an
// agent picks a colleague from (GET /team) and for the colleagues a transfer rings.
import type { TeamPresence, TeamReply } from '../shared/transfer';
import type { AgentStanding } from './routing';

/** One agent of the team now: its standing for routing (routing.ts), its name, and its state's reason and start. */
export interface TeamAgent extends AgentStanding {
  name: string;
  /** A break's reason. */
  reason?: string;
  /** When the agent entered its reported state (unix ms). */
  since?: number;
}

/** The longest name an event or an answer carries (shared/transfer.ts `colleagueSchema`). */
const NAME_MAX = 128;

/** An agent's name cut to what a colleague's card carries (agents files allow longer ones), never half a character. */
export function colleagueName(name: string): string {
  if (name.length <= NAME_MAX) return name;
  const cut = name.slice(0, NAME_MAX);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/**
 * The presence colleagues see: what the agent reported, else `available` while it has an open
 * stream on this instance (as routing.ts counts an agent without a presence), else `offline`.
 */
export function teamPresenceOf(agent: AgentStanding): TeamPresence {
  if (agent.presence !== undefined) return agent.presence;
  return agent.connected ? 'available' : 'offline';
}

/** GET /team's answer for `selfId`: every agent, by name (then id, so that the order is stable). */
export function teamReplyOf(agents: readonly TeamAgent[], selfId: string): TeamReply {
  const sorted = [...agents].sort((a, b) => a.name.localeCompare(b.name, 'en') || (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0));
  return {
    agents: sorted.map((agent) => ({
      agentId: agent.agentId,
      name: colleagueName(agent.name),
      presence: teamPresenceOf(agent),
      ...(agent.presence === 'break' && agent.reason !== undefined ? { reason: agent.reason } : {}),
      ...(agent.presence !== undefined && agent.since !== undefined ? { since: agent.since } : {}),
      ...(agent.agentId === selfId ? { self: true } : {}),
    })),
  };
}
