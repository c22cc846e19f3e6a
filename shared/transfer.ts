// Transfers, consults and three-way calls of bridged calls (bridge/REFERENCE.md "Transfers"). The
// customer's media ends on the team's bridge, so handing a call on is the relay's decision and the
// node's routing: nothing of it reaches the gateway, which keeps the one call it accepted. The relay
// rings the colleague with a leg of its own (`call.transfer_ring`), and tells every agent concerned
// what the transfer came to (`call.transfer_update`, one event per agent, worded for that agent).
import { z } from 'zod';
import { list } from './i18n/text';
import { requiredString, ruleMessage } from './validation';
import { legIdSchema } from './bridge';

/** A transfer or consult rings this long; then the agent who started it is back with the customer. */
export const TRANSFER_RING_MS = 30_000;

/** A cold transfer hands the customer on as soon as the colleague answers; a consult lets the two agents talk first. */
export const TRANSFER_KINDS = ['transfer', 'consult'] as const;
export type TransferKind = (typeof TRANSFER_KINDS)[number];

/** "Anyone available": every available colleague rings, the first to answer takes it. */
export const ANYONE_AVAILABLE = 'available' as const;

/** An agent as its colleagues see it. */
export interface Colleague {
  agentId: string;
  name: string;
}
export const colleagueSchema = z.object({ agentId: z.string().min(1).max(128), name: z.string().min(1).max(128) });

/**
 * What a transfer came to, as the agent it is told to sees it (`call.transfer_update`):
 * - `ringing` (to the agent who started it): the colleague (absent for "Anyone available") rings; the customer hears hold music.
 * - `consulting` (to the agent who started a consult): the colleague answered; the two talk, the customer still hears music.
 * - `joined` (to both agents): "Add to call": the three hear each other.
 * - `transferred` (to the agent who started it): the colleague has the customer; this agent's call is over, with no terminate.
 * - `with_customer` (to an agent still in the call): the other agent left, or completed the transfer
 *   (`colleague` says who): this agent alone is with the customer now.
 * - `not_answered` (to the agent who started it): declined by every colleague rung, or not answered
 *   within TRANSFER_RING_MS: back with the customer.
 * - `cancelled` (to a colleague): the transfer or consult was cancelled; its ring or consult ends here.
 * - `answered_elsewhere` (to a colleague rung with others): another colleague answered first.
 */
export const TRANSFER_STATES = ['ringing', 'consulting', 'joined', 'transferred', 'with_customer', 'not_answered', 'cancelled', 'answered_elsewhere'] as const;
export type TransferUpdateState = (typeof TRANSFER_STATES)[number];

/** Why a transfer was not answered (`not_answered`). */
export const TRANSFER_MISSES = ['declined', 'no_answer'] as const;
export type TransferMiss = (typeof TRANSFER_MISSES)[number];

/** The agent's endpoints for transfers (agent bearer token), beside BRIDGE_AGENT_PATHS. */
export const TRANSFER_PATHS = {
  /** GET → TeamReply: every agent of the team with its presence, this agent too (`self`). */
  team: '/team',
  /** POST TransferRequest → `{ transferId }`: only an agent in the call, one transfer at a time. */
  start: (callId: string) => `/calls/${encodeURIComponent(callId)}/bridge/transfer`,
  /** POST: the agent who started it takes it back (ringing or consulting): back with the customer. */
  cancel: (callId: string, transferId: string) => `/calls/${encodeURIComponent(callId)}/bridge/transfer/${encodeURIComponent(transferId)}/cancel`,
  /** POST: a consult becomes a transfer: the customer with the colleague, the agent who started it leaves. */
  complete: (callId: string, transferId: string) => `/calls/${encodeURIComponent(callId)}/bridge/transfer/${encodeURIComponent(transferId)}/complete`,
  /** POST: a consult becomes a three-way call. */
  join: (callId: string, transferId: string) => `/calls/${encodeURIComponent(callId)}/bridge/transfer/${encodeURIComponent(transferId)}/join`,
  /** POST `{ legId, sdp }` (the colleague's window's answer to its leg): 200; 409 `already_claimed` when another colleague answered first, `invalid_state` when it is over. */
  answer: (callId: string, transferId: string) => `/calls/${encodeURIComponent(callId)}/bridge/transfer/${encodeURIComponent(transferId)}/answer`,
  /** POST: a colleague declines its ring. */
  decline: (callId: string, transferId: string) => `/calls/${encodeURIComponent(callId)}/bridge/transfer/${encodeURIComponent(transferId)}/decline`,
  /**
   * POST → `{ last }`: this agent leaves the call (its hang-up). `last: false`: other agents stay with
   * the customer and the gateway hears nothing; `last: true`: nobody else is in it, the app terminates it.
   */
  leave: (callId: string) => `/calls/${encodeURIComponent(callId)}/bridge/leave`,
} as const;

export const transferRequestSchema = z.object(
  {
    /** A colleague's agent id, or ANYONE_AVAILABLE. */
    to: requiredString().min(1, ruleMessage('common.notEmpty')).max(128, ruleMessage('common.tooLongAtMost', { count: 128 })),
    kind: z.enum(TRANSFER_KINDS, { error: ruleMessage('common.oneOf', { values: list(TRANSFER_KINDS) }) }),
  },
  { error: ruleMessage('common.requiredObject') },
);
export type TransferRequest = z.infer<typeof transferRequestSchema>;
export const transferReplySchema = z.object({ transferId: legIdSchema });
export const leaveReplySchema = z.object({ last: z.boolean() });

/** An agent's presence as its colleagues see it: what it reported, or offline without an open stream. */
export const TEAM_PRESENCES = ['available', 'call_waiting', 'on_call', 'dnd', 'break', 'after_call_work', 'offline'] as const;
export type TeamPresence = (typeof TEAM_PRESENCES)[number];
export const teamMemberSchema = colleagueSchema.extend({
  presence: z.enum(TEAM_PRESENCES),
  /** A break's reason (one of the team's break reasons). */
  reason: z.string().max(200).optional(),
  /** Since when (unix ms) the agent is in this presence, when it reported one. */
  since: z.number().optional(),
  self: z.boolean().optional(),
});
export type TeamMember = z.infer<typeof teamMemberSchema>;
export const teamReplySchema = z.object({ agents: z.array(teamMemberSchema).max(10_000) });
export type TeamReply = z.infer<typeof teamReplySchema>;
