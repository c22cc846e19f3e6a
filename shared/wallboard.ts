// The team's wallboard (relay/REFERENCE.md "Wallboard"): the calls waiting now and the longest wait,
// every agent with its state and how long it has been in it, and the day's figures, since midnight
// in the team's time zone. The relay answers GET /team/wallboard to any agent of the team; the
// figures come from the team's records, so every relay instance shows the same.
import { z } from 'zod';
import { callbackRequestSchema } from './callbacks';
import { teamMemberSchema } from './transfer';
import { teamVoicemailSchema, TEAM_VOICEMAILS_LIMIT } from './voicemail';

export const WALLBOARD_PATH = '/team/wallboard';
/** How often an open Team view asks again. */
export const WALLBOARD_REFRESH_MS = 3_000;

const count = z.number().int().min(0);

export const wallboardSchema = z.object({
  /** When the relay read it (unix ms): the window counts "time in state" and "longest wait" from its own clock, offset by this. */
  at: z.number(),
  timezone: z.string(),
  /** Midnight of today in the team's time zone (unix ms): where "today" starts. */
  dayStartedAt: z.number(),
  /**
   * Whether the figures could be read: `none` from a relay that keeps no records, `unavailable`
   * while its database does not answer. `waiting` and `today` are there only with `ok`.
   */
  records: z.enum(['ok', 'none', 'unavailable']),
  waiting: z.object({ calls: count, longestSince: z.number().optional() }).optional(),
  today: z
    .object({
      answered: count,
      missed: count,
      abandoned: count,
      /** Talk + hold + after-call work over the answered calls; absent when none was answered. */
      averageHandleMs: z.number().min(0).optional(),
      serviceLevel: z.object({ thresholdSec: z.number(), answeredWithin: count, offered: count, ratio: z.number().min(0).max(1).optional() }),
    })
    .optional(),
  agents: z.array(teamMemberSchema).max(10_000),
  /** "Callback requested": the team's callback requests (shared/callbacks.ts), the oldest first; from the relay's live state. */
  callbacks: z.array(callbackRequestSchema).max(10_000).default([]),
  /** The team's voicemails of the last VOICEMAIL_KEPT_MS, the newest first (with `records: 'ok'` only). */
  voicemails: z.array(teamVoicemailSchema).max(TEAM_VOICEMAILS_LIMIT).optional(),
});
export type Wallboard = z.infer<typeof wallboardSchema>;
