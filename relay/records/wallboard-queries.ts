// What the team's wallboard reads from the records (relay/REFERENCE.md "Wallboard"): the calls that
// ring now and the longest of their waits, the day's figures, and the team's recent voicemails.
// Every relay instance writes its facts here, so every instance reads the same picture, a flush
// (200 ms) behind at most.
import { TEAM_VOICEMAILS_LIMIT, VOICEMAIL_KEPT_MS, type TeamVoicemail } from '../../shared/voicemail';
import type { SqlRunner } from './database';
import { summary, type CallSummary } from './records-queries';

/**
 * A call that rang longer than this without a word of its end is taken as lost (a webhook that
 * never came), not as waiting: the service stops ringing well within it.
 */
export const WAITING_AT_MOST_MS = 5 * 60_000;

export interface DayFigures {
  /** Incoming calls an agent answered. */
  answered: number;
  /** Incoming calls nobody answered before the service gave up, or that every agent declined. */
  missed: number;
  /** Incoming calls whose customer hung up while they rang. */
  abandoned: number;
  /** Talk, hold and after-call work, over the answered calls (incoming and outgoing), in ms; absent when none. */
  averageHandleMs?: number;
  serviceLevel: CallSummary['serviceLevel'];
}

export interface Waiting {
  /** Incoming calls ringing now, nobody has answered. */
  calls: number;
  /** When the longest-waiting of them started ringing (unix ms). */
  longestSince?: number;
}

/** The incoming calls that ring now: open, unanswered, started within WAITING_AT_MOST_MS (`calls_open`). */
export async function waitingCalls(db: SqlRunner, now: number): Promise<Waiting> {
  const rows = await db.query<{ calls: number; longest: Date | null }>(
    `SELECT count(*)::int AS calls, min(started_at) AS longest
       FROM calls
      WHERE outcome IS NULL AND started_at >= $1 AND direction = 'incoming' AND answered_at IS NULL`,
    [new Date(now - WAITING_AT_MOST_MS)],
  );
  const row = rows[0]!;
  return { calls: row.calls, ...(row.longest !== null ? { longestSince: row.longest.getTime() } : {}) };
}

/**
 * The figures of the calls that started between two instants. The after-call work added to the
 * handle time is the work that started in the same window (an interval still open counts to `now`).
 */
export async function dayFigures(db: SqlRunner, query: { from: Date; to: Date; serviceLevelSec: number; now: number }): Promise<DayFigures> {
  const day = await summary(db, query);
  const work = await db.query<{ total_ms: number }>(
    `SELECT COALESCE(sum(EXTRACT(EPOCH FROM (COALESCE(ended_at, $3) - started_at)) * 1000), 0)::float8 AS total_ms
       FROM agent_states
      WHERE state = 'after_call_work' AND started_at >= $1 AND started_at < $2`,
    [query.from, query.to, new Date(query.now)],
  );
  const answeredAll = day.byOutcome.answered;
  const handled = day.averageHandleMs === undefined ? undefined : day.averageHandleMs * answeredAll + work[0]!.total_ms;
  const { abandoned, missed } = day.byOutcome;
  return {
    // Every incoming call that was offered and ended is answered, abandoned or missed.
    answered: day.serviceLevel.offered - abandoned - missed,
    missed,
    abandoned,
    ...(handled !== undefined && answeredAll > 0 ? { averageHandleMs: handled / answeredAll } : {}),
    serviceLevel: day.serviceLevel,
  };
}

/**
 * The calls whose customer left a voicemail within VOICEMAIL_KEPT_MS of `now` (the service keeps the
 * media that long), the newest voicemail first, TEAM_VOICEMAILS_LIMIT at most (`calls_voicemail`).
 * A voicemail whose media id the service did not give cannot be played, so it is not listed. The
 * ringing time is when the call rang, as the reports have it.
 */
export async function recentVoicemails(db: SqlRunner, now: number): Promise<TeamVoicemail[]> {
  const rows = await db.query<{
    call_id: string;
    voicemail_media_id: string;
    voicemail_at: Date;
    rang_at: Date | null;
    started_at: Date;
    customer: string | null;
    customer_user_id: string | null;
    customer_name: string | null;
  }>(
    `SELECT call_id, voicemail_media_id, voicemail_at, rang_at, started_at, customer, customer_user_id, customer_name
       FROM calls
      WHERE voicemail_media_id IS NOT NULL AND voicemail_at > $1
      ORDER BY voicemail_at DESC, call_id DESC
      LIMIT $2`,
    [new Date(now - VOICEMAIL_KEPT_MS), TEAM_VOICEMAILS_LIMIT],
  );
  return rows.map((row) => ({
    callId: row.call_id,
    mediaId: row.voicemail_media_id,
    at: row.voicemail_at.getTime(),
    ringingAt: (row.rang_at ?? row.started_at).getTime(),
    ...(row.customer !== null ? { number: row.customer } : {}),
    ...(row.customer_user_id !== null ? { userId: row.customer_user_id } : {}),
    ...(row.customer_name !== null ? { name: row.customer_name } : {}),
  }));
}
