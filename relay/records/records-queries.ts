// The questions the wallboard, the reports and the agent states ask of the records, the same SQL on
// PostgreSQL and the embedded database. Each one is bounded by two instants and served by an index:
// calls by `calls_started` (started_at, call_id), states by their key (agent_id, started_at). The
// calls and the states are read a page at a time: a year of either never sits in memory.
import type { AgentStateInterval } from './agent-states';
import { compact } from '../../shared/compact';
import { CALL_OUTCOMES, TRANSFER_RESULTS, type CallOutcome, type CallRecord, type TransferRecord } from './call-record';
import type { SqlRunner } from './database';

/** Calls read per round trip while streaming. */
const DEFAULT_PAGE_SIZE = 500;

export interface CallsQuery {
  /** Calls that started at or after this instant… */
  from: Date;
  /** …and before this one. */
  to: Date;
  pageSize?: number;
}

/**
 * The calls that started between two instants, oldest first, a page at a time: a keyset cursor on
 * (started_at, call_id) rather than a server-side cursor, so that no transaction stays open while
 * the caller writes a year of calls out (the embedded database has one connection, which the
 * records' writer needs meanwhile). A call written meanwhile may be included if it sorts after the
 * page being read.
 */
export async function* callsBetween(db: SqlRunner, query: CallsQuery): AsyncGenerator<CallRecord> {
  const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
  let after: { startedAt: Date; callId: string } | undefined;
  for (;;) {
    const rows = await db.query<CallRow>(
      after === undefined
        ? `SELECT ${CALL_COLUMNS} FROM calls WHERE started_at >= $1 AND started_at < $2 ORDER BY started_at, call_id LIMIT $3`
        : `SELECT ${CALL_COLUMNS} FROM calls WHERE (started_at, call_id) > ($4, $5) AND started_at < $2 AND started_at >= $1 ORDER BY started_at, call_id LIMIT $3`,
      after === undefined ? [query.from, query.to, pageSize] : [query.from, query.to, pageSize, after.startedAt, after.callId],
    );
    for (const row of rows) yield recordOfRow(row);
    const last = rows.at(-1);
    if (rows.length < pageSize || last === undefined) return;
    after = { startedAt: last.started_at, callId: last.call_id };
  }
}

/** One call by its id. */
export async function callById(db: SqlRunner, callId: string): Promise<CallRecord | undefined> {
  const rows = await db.query<CallRow>(`SELECT ${CALL_COLUMNS} FROM calls WHERE call_id = $1`, [callId]);
  return rows[0] === undefined ? undefined : recordOfRow(rows[0]);
}

export interface SummaryQuery {
  from: Date;
  to: Date;
  /** Service level: the share of incoming calls answered within this many seconds. */
  serviceLevelSec: number;
}

export interface CallSummary {
  /** Calls that started in the window. */
  total: number;
  /** Those still going on (no outcome yet). */
  inProgress: number;
  byOutcome: Record<CallOutcome, number>;
  /** Average of talk and hold time over the answered calls, in ms; absent when none was answered. */
  averageHandleMs?: number;
  serviceLevel: {
    thresholdSec: number;
    /** Incoming calls answered within the threshold. */
    answeredWithin: number;
    /** Incoming calls that ended: answered, abandoned or missed. */
    offered: number;
    /** answeredWithin ÷ offered; absent when nothing was offered. */
    ratio?: number;
  };
}

/**
 * Counts by outcome, the average handle time and the service level of the calls that started
 * between two instants: read from `calls_started` alone, which carries every column it uses.
 */
export async function summary(db: SqlRunner, query: SummaryQuery): Promise<CallSummary> {
  const rows = await db.query<{
    total: number;
    in_progress: number;
    answered: number;
    abandoned: number;
    missed: number;
    no_answer: number;
    cancelled: number;
    failed: number;
    average_handle_ms: number | null;
    answered_within: number;
    offered: number;
  }>(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE outcome IS NULL)::int AS in_progress,
            ${CALL_OUTCOMES.map((o) => `count(*) FILTER (WHERE outcome = '${o}')::int AS ${o}`).join(',\n            ')},
            (avg(COALESCE(talk_ms, 0) + COALESCE(hold_ms, 0)) FILTER (WHERE outcome = 'answered'))::float8 AS average_handle_ms,
            count(*) FILTER (WHERE direction = 'incoming' AND outcome = 'answered' AND wait_ms <= $3)::int AS answered_within,
            count(*) FILTER (WHERE direction = 'incoming' AND outcome IN ('answered', 'abandoned', 'missed'))::int AS offered
       FROM calls
      WHERE started_at >= $1 AND started_at < $2`,
    [query.from, query.to, Math.round(query.serviceLevelSec * 1000)],
  );
  const row = rows[0]!;
  const byOutcome = Object.fromEntries(CALL_OUTCOMES.map((o) => [o, row[o]])) as Record<CallOutcome, number>;
  return {
    total: row.total,
    inProgress: row.in_progress,
    byOutcome,
    ...(row.average_handle_ms !== null ? { averageHandleMs: row.average_handle_ms } : {}),
    serviceLevel: {
      thresholdSec: query.serviceLevelSec,
      answeredWithin: row.answered_within,
      offered: row.offered,
      ...(row.offered > 0 ? { ratio: row.answered_within / row.offered } : {}),
    },
  };
}

/** The start and end of the calendar day that `now` falls in, in an IANA time zone (default this machine's). */
export function dayBounds(now: Date, timeZone?: string): { from: Date; to: Date } {
  const zone = timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', month: 'numeric', day: 'numeric' }).formatToParts(now);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const [year, month, day] = [part('year'), part('month'), part('day')];
  return { from: zonedDayStart(year, month, day, zone), to: zonedDayStart(year, month, day + 1, zone) };
}

/** The instant that is midnight of a date in a zone (Date.UTC carries an overflowing day into the next month: day 32 is the 1st of the next). */
export function zonedDayStart(year: number, month: number, day: number, zone: string): Date {
  const guess = Date.UTC(year, month - 1, day);
  // The zone's offset at the guess, then again at the corrected instant (a change of offset that day).
  let instant = guess - offsetMs(new Date(guess), zone);
  instant = guess - offsetMs(new Date(instant), zone);
  return new Date(instant);
}

function offsetMs(at: Date, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }).formatToParts(at);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
  return asUtc - Math.floor(at.getTime() / 1000) * 1000;
}

export interface StatesQuery {
  from: Date;
  to: Date;
  /** One agent's; absent: everyone's. */
  agentId?: string;
  pageSize?: number;
}

interface StateRow {
  agent_id: string;
  state: string;
  reason: string | null;
  started_at: Date;
  ended_at: Date | null;
}

const STATE_COLUMNS = 'agent_id, state, reason, started_at, ended_at';
/** One agent's first page ($1 the agent, $2–$3 the window, $4 the page size): from the interval the window opens in, the last to start by `from`. */
const FIRST_STATES_PAGE = `
  SELECT ${STATE_COLUMNS} FROM agent_states
   WHERE agent_id = $1
     AND started_at >= COALESCE((SELECT max(started_at) FROM agent_states WHERE agent_id = $1 AND started_at <= $2), $2)
     AND started_at < $3 AND (ended_at IS NULL OR ended_at > $2)
   ORDER BY started_at LIMIT $4`;
/** The page after the interval that started at $5. */
const NEXT_STATES_PAGE = `
  SELECT ${STATE_COLUMNS} FROM agent_states
   WHERE agent_id = $1 AND started_at > $5 AND started_at < $3 AND (ended_at IS NULL OR ended_at > $2)
   ORDER BY started_at LIMIT $4`;

/**
 * The state intervals that overlap two instants, by agent and start, each as it was, not cut to the
 * window (an interval still open has no `endedAt`); a page at a time, as `callsBetween`. One agent
 * after the other, each read on the key (agent_id, started_at) from the interval the window opens
 * in, so that neither a long history before the window nor a year inside it is read at once.
 */
export async function* stateIntervals(db: SqlRunner, query: StatesQuery): AsyncGenerator<AgentStateInterval> {
  const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
  let agentId = query.agentId ?? (await nextAgent(db, undefined));
  while (agentId !== undefined) {
    let after: Date | undefined;
    for (;;) {
      const rows = await db.query<StateRow>(
        after === undefined ? FIRST_STATES_PAGE : NEXT_STATES_PAGE,
        after === undefined ? [agentId, query.from, query.to, pageSize] : [agentId, query.from, query.to, pageSize, after],
      );
      for (const row of rows) yield intervalOfRow(row);
      const last = rows.at(-1);
      if (rows.length < pageSize || last === undefined) break;
      after = last.started_at;
    }
    agentId = query.agentId === undefined ? await nextAgent(db, agentId) : undefined;
  }
}

/** The first agent with intervals after `after` (the first of all when undefined), read off the key. */
async function nextAgent(db: SqlRunner, after: string | undefined): Promise<string | undefined> {
  const rows = await db.query<{ agent_id: string | null }>(
    after === undefined ? 'SELECT min(agent_id) AS agent_id FROM agent_states' : 'SELECT min(agent_id) AS agent_id FROM agent_states WHERE agent_id > $1',
    after === undefined ? [] : [after],
  );
  return rows[0]?.agent_id ?? undefined;
}

function intervalOfRow(row: StateRow): AgentStateInterval {
  return {
    agentId: row.agent_id,
    state: row.state,
    ...(row.reason !== null ? { reason: row.reason } : {}),
    startedAt: row.started_at.getTime(),
    ...(row.ended_at !== null ? { endedAt: row.ended_at.getTime() } : {}),
  };
}

const CALL_COLUMNS = [
  'call_id',
  'direction',
  'customer',
  'customer_user_id',
  'customer_name',
  'business_number',
  'started_at',
  'rang_at',
  'answered_at',
  'ended_at',
  'outcome',
  'agent_id',
  'rung_agents',
  'declined_agents',
  'transfers',
  'wait_ms',
  'talk_ms',
  'hold_ms',
  'end_status',
  'error_code',
  'error_message',
  'bridge_failure',
  'voicemail_at',
  'voicemail_media_id',
  'disposition',
  'notes',
].join(', ');

interface CallRow {
  call_id: string;
  direction: string;
  customer: string | null;
  customer_user_id: string | null;
  customer_name: string | null;
  business_number: string | null;
  started_at: Date;
  rang_at: Date | null;
  answered_at: Date | null;
  ended_at: Date | null;
  outcome: string | null;
  agent_id: string | null;
  rung_agents: string[];
  declined_agents: string[];
  transfers: unknown;
  wait_ms: number | null;
  talk_ms: number | null;
  hold_ms: number | null;
  end_status: string | null;
  error_code: number | null;
  error_message: string | null;
  bridge_failure: string | null;
  voicemail_at: Date | null;
  voicemail_media_id: string | null;
  disposition: string | null;
  notes: string | null;
}

const msOf = (date: Date | null): number | undefined => (date === null ? undefined : date.getTime());
const valueOf = <T>(value: T | null): T | undefined => (value === null ? undefined : value);

/**
 * A row as the record it holds. The table's CHECKs keep direction and outcome to their lists; the
 * transfers are the writer's JSON, read back member by member.
 */
function recordOfRow(row: CallRow): CallRecord {
  const outcome = CALL_OUTCOMES.find((o) => o === row.outcome);
  const endStatus = row.end_status === 'COMPLETED' || row.end_status === 'FAILED' ? row.end_status : undefined;
  return compact<CallRecord>({
    callId: row.call_id,
    direction: row.direction === 'outgoing' ? 'outgoing' : 'incoming',
    customer: valueOf(row.customer),
    customerUserId: valueOf(row.customer_user_id),
    customerName: valueOf(row.customer_name),
    businessNumber: valueOf(row.business_number),
    startedAt: row.started_at.getTime(),
    rangAt: msOf(row.rang_at),
    answeredAt: msOf(row.answered_at),
    endedAt: msOf(row.ended_at),
    outcome,
    agentId: valueOf(row.agent_id),
    rungAgents: row.rung_agents,
    declinedAgents: row.declined_agents,
    transfers: transfersOfJson(row.transfers),
    waitMs: valueOf(row.wait_ms),
    talkMs: valueOf(row.talk_ms),
    holdMs: valueOf(row.hold_ms),
    endStatus,
    errorCode: valueOf(row.error_code),
    errorMessage: valueOf(row.error_message),
    bridgeFailure: valueOf(row.bridge_failure),
    voicemailAt: msOf(row.voicemail_at),
    voicemailMediaId: valueOf(row.voicemail_media_id),
    disposition: valueOf(row.disposition),
    notes: valueOf(row.notes),
  });
}

function transfersOfJson(json: unknown): TransferRecord[] {
  if (!Array.isArray(json)) return [];
  return json.flatMap((item: unknown): TransferRecord[] => {
    if (typeof item !== 'object' || item === null) return [];
    const t = item as Record<string, unknown>;
    const result = TRANSFER_RESULTS.find((r) => r === t.result);
    if (typeof t.transferId !== 'string' || (t.kind !== 'transfer' && t.kind !== 'consult') || typeof t.at !== 'number' || result === undefined) return [];
    const rung = Array.isArray(t.rung) ? t.rung.filter((a): a is string => typeof a === 'string') : [];
    return [
      {
        transferId: t.transferId,
        kind: t.kind,
        at: t.at,
        rung,
        result,
        ...(typeof t.by === 'string' ? { by: t.by } : {}),
        ...(typeof t.answeredBy === 'string' ? { answeredBy: t.answeredBy } : {}),
        ...(t.reason === 'declined' || t.reason === 'no_answer' ? { reason: t.reason } : {}),
      },
    ];
  });
}
