// The records' writes: a batch of facts in one transaction, each call's row and each agent's
// intervals derived again from all of their facts, and the retention prune. Several instances
// write to one PostgreSQL at once: each locks the calls and agents of its batch first (transaction
// advisory locks, taken in one order everywhere), so that the second to derive a call's row sees
// the first one's facts and the last row written is the one that took every fact in.
import { intervalsOf, REPORT_OUTLIVES_MS, type AgentStateFact } from './agent-states';
import { factKey, factOfRow, LATER_REPLACES, replaces, type CallFact, type CallFactRow } from './call-facts';
import { callRecordOf, type CallRecord } from './call-record';
import type { SqlRunner } from './database';
import { MIGRATION_LOCK } from './migrations';

export interface FactBatch {
  calls: readonly CallFact[];
  states: readonly AgentStateFact[];
}

/** The key space of agents' locks (two-key form); calls take the one-key form, migrations their own pair. */
const AGENT_LOCK_CLASS = MIGRATION_LOCK.classId + 1;
/** How many rows one prune statement deletes: a long prune never holds one long transaction. */
const PRUNE_CHUNK = 5_000;

/**
 * Rows as the JSON the statements unpack. PostgreSQL's text holds no NUL character: one in what a
 * webhook said (a name) is left out rather than cost the whole fact.
 */
function jsonOf(rows: unknown): string {
  const plain = JSON.stringify(rows);
  // JSON writes a NUL as the escape \u0000: without one, the strings had none to leave out.
  return plain.includes('\\u0000') ? JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'string' ? value.replaceAll('\u0000', '') : value)) : plain;
}

/** Writes a batch in the transaction given; the same batch written again changes nothing. */
export async function writeBatch(tx: SqlRunner, batch: FactBatch, instanceId: string): Promise<void> {
  if (batch.calls.length > 0) await writeCallFacts(tx, batch.calls, instanceId);
  if (batch.states.length > 0) await writeStateFacts(tx, batch.states, instanceId);
}

async function writeCallFacts(tx: SqlRunner, facts: readonly CallFact[], instanceId: string): Promise<void> {
  const callIds = [...new Set(facts.map((f) => f.callId))];
  await lockCalls(tx, callIds);
  await insertCallFacts(tx, facts, instanceId);
  await deriveCalls(tx, callIds);
}

/**
 * Takes the calls' locks for the rest of the transaction, in one order everywhere: whoever derives
 * a call's row next sees every fact of it committed before.
 */
export async function lockCalls(tx: SqlRunner, callIds: readonly string[]): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(h) FROM (SELECT DISTINCT hashtextextended(id, 0) AS h FROM unnest($1::text[]) AS id ORDER BY 1) AS locks', [callIds]);
}

/**
 * Adds facts under their calls' locks (lockCalls): a fact whose key is stored already replaces it
 * only as `replaces` says — the earlier sighting, the later edit.
 */
export async function insertCallFacts(tx: SqlRunner, facts: readonly CallFact[], instanceId: string): Promise<void> {
  // One row per key (an INSERT … ON CONFLICT may not touch a row twice): the one that stands.
  const standing = new Map<string, CallFact>();
  for (const fact of facts) {
    const key = factKey(fact);
    const known = standing.get(key);
    if (known === undefined || replaces(fact, known)) standing.set(key, fact);
  }
  const rows = [...standing.values()].map((f) => ({ call_id: f.callId, kind: f.kind, agent_id: f.agentId, ref: f.ref, at: new Date(f.at).toISOString(), data: f.data }));
  await tx.query(
    `INSERT INTO call_facts (call_id, kind, agent_id, ref, at, data, instance_id)
     SELECT f.call_id, f.kind, f.agent_id, f.ref, f.at, f.data, $2
       FROM jsonb_to_recordset($1::jsonb) AS f(call_id text, kind text, agent_id text, ref text, at timestamptz, data jsonb)
     ON CONFLICT (call_id, kind, agent_id, ref) DO UPDATE
       SET at = EXCLUDED.at, data = EXCLUDED.data, instance_id = EXCLUDED.instance_id, recorded_at = now()
       WHERE CASE WHEN call_facts.kind = ANY($3::text[]) THEN EXCLUDED.at >= call_facts.at ELSE EXCLUDED.at < call_facts.at END`,
    [jsonOf(rows), instanceId, LATER_REPLACES],
  );
}

/** Every stored fact of these calls (kinds this relay does not know left out). */
export async function callFactsOf(tx: SqlRunner, callIds: readonly string[]): Promise<CallFact[]> {
  const stored = await tx.query<CallFactRow>('SELECT call_id, kind, agent_id, ref, at, data FROM call_facts WHERE call_id = ANY($1::text[])', [callIds]);
  return stored.flatMap((row) => {
    const fact = factOfRow(row);
    return fact === undefined ? [] : [fact];
  });
}

/** Derives the calls' rows again from all of their facts, under their locks. */
export async function deriveCalls(tx: SqlRunner, callIds: readonly string[]): Promise<void> {
  const byCall = new Map<string, CallFact[]>();
  for (const fact of await callFactsOf(tx, callIds)) {
    const list = byCall.get(fact.callId);
    if (list === undefined) byCall.set(fact.callId, [fact]);
    else list.push(fact);
  }
  const records = [...byCall.values()].flatMap((callFacts) => {
    const record = callRecordOf(callFacts);
    return record === undefined ? [] : [record];
  });
  if (records.length > 0) await upsertCalls(tx, records);
}

/** The columns derived from facts: every one but the key and `updated_at`. */
const DERIVED_COLUMNS = [
  ['direction', 'text'],
  ['customer', 'text'],
  ['customer_user_id', 'text'],
  ['customer_name', 'text'],
  ['business_number', 'text'],
  ['started_at', 'timestamptz'],
  ['rang_at', 'timestamptz'],
  ['answered_at', 'timestamptz'],
  ['ended_at', 'timestamptz'],
  ['outcome', 'text'],
  ['agent_id', 'text'],
  ['rung_agents', 'text[]'],
  ['declined_agents', 'text[]'],
  ['transfers', 'jsonb'],
  ['wait_ms', 'integer'],
  ['talk_ms', 'integer'],
  ['hold_ms', 'integer'],
  ['end_status', 'text'],
  ['error_code', 'integer'],
  ['error_message', 'text'],
  ['bridge_failure', 'text'],
  ['voicemail_at', 'timestamptz'],
  ['voicemail_media_id', 'text'],
  ['disposition', 'text'],
  ['notes', 'text'],
] as const;

type DerivedColumn = (typeof DERIVED_COLUMNS)[number][0];

const UPSERT_CALLS = `
  INSERT INTO calls (call_id, ${DERIVED_COLUMNS.map(([name]) => name).join(', ')}, updated_at)
  SELECT r.call_id, ${DERIVED_COLUMNS.map(([name]) => `r.${name}`).join(', ')}, now()
    FROM jsonb_to_recordset($1::jsonb) AS r(call_id text, ${DERIVED_COLUMNS.map(([name, type]) => `${name} ${type}`).join(', ')})
  ON CONFLICT (call_id) DO UPDATE SET ${DERIVED_COLUMNS.map(([name]) => `${name} = EXCLUDED.${name}`).join(', ')}, updated_at = now()`;

async function upsertCalls(tx: SqlRunner, records: readonly CallRecord[]): Promise<void> {
  await tx.query(UPSERT_CALLS, [jsonOf(records.map(rowOfRecord))]);
}

const isoOrNull = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

function rowOfRecord(r: CallRecord): { call_id: string } & Record<DerivedColumn, unknown> {
  return {
    call_id: r.callId,
    direction: r.direction,
    customer: r.customer ?? null,
    customer_user_id: r.customerUserId ?? null,
    customer_name: r.customerName ?? null,
    business_number: r.businessNumber ?? null,
    started_at: isoOrNull(r.startedAt),
    rang_at: isoOrNull(r.rangAt),
    answered_at: isoOrNull(r.answeredAt),
    ended_at: isoOrNull(r.endedAt),
    outcome: r.outcome ?? null,
    agent_id: r.agentId ?? null,
    rung_agents: r.rungAgents,
    declined_agents: r.declinedAgents,
    transfers: r.transfers,
    wait_ms: r.waitMs ?? null,
    talk_ms: r.talkMs ?? null,
    hold_ms: r.holdMs ?? null,
    end_status: r.endStatus ?? null,
    error_code: r.errorCode ?? null,
    error_message: r.errorMessage ?? null,
    bridge_failure: r.bridgeFailure ?? null,
    voicemail_at: isoOrNull(r.voicemailAt),
    voicemail_media_id: r.voicemailMediaId ?? null,
    disposition: r.disposition ?? null,
    notes: r.notes ?? null,
  };
}

interface StateFactRow {
  at: Date;
  state: string;
  reason: string;
  instance_id: string;
}

async function writeStateFacts(tx: SqlRunner, facts: readonly AgentStateFact[], instanceId: string): Promise<void> {
  const agents = [...new Set(facts.map((f) => f.agentId))];
  await tx.query('SELECT pg_advisory_xact_lock($1, h) FROM (SELECT DISTINCT hashtext(a) AS h FROM unnest($2::text[]) AS a ORDER BY 1) AS locks', [AGENT_LOCK_CLASS, agents]);
  // In the order they came, which seq keeps for facts of the same millisecond.
  await tx.query(
    `INSERT INTO agent_state_facts (agent_id, at, state, reason, instance_id)
     SELECT f.agent_id, f.at, f.state, f.reason, $2
       FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (agent_id text, at timestamptz, state text, reason text)) WITH ORDINALITY AS f(agent_id, at, state, reason, n)
      ORDER BY f.n
     ON CONFLICT DO NOTHING`,
    [jsonOf(facts.map((f) => ({ agent_id: f.agentId, at: new Date(f.at).toISOString(), state: f.state, reason: f.reason }))), instanceId],
  );
  const earliest = new Map<string, number>();
  for (const fact of facts) earliest.set(fact.agentId, Math.min(earliest.get(fact.agentId) ?? Infinity, fact.at));
  await rebuildIntervals(tx, earliest);
}

const isoOf = (ms: number): string => new Date(ms).toISOString();

/**
 * Derives each agent's intervals again from a little before its `since` on: from the start of the
 * interval before the one `since` falls in, so that a fact written late joins or splits the
 * intervals around it exactly as if it had come in order. The facts of REPORT_OUTLIVES_MS before
 * that are read too: they say whether an expiry after it stands. Every agent of the batch at once,
 * in a fixed number of statements.
 */
async function rebuildIntervals(tx: SqlRunner, sinceByAgent: ReadonlyMap<string, number>): Promise<void> {
  const agents = [...sinceByAgent.keys()];
  // The start of the interval before the one `since` falls in: the older of the two latest starts up to it.
  const before = await tx.query<{ agent_id: string; started_at: Date | null }>(
    `SELECT a.agent_id, (SELECT min(b.started_at) FROM (SELECT s.started_at FROM agent_states s WHERE s.agent_id = a.agent_id AND s.started_at <= a.since ORDER BY s.started_at DESC LIMIT 2) AS b) AS started_at
       FROM unnest($1::text[], $2::timestamptz[]) AS a(agent_id, since)`,
    [agents, agents.map((agentId) => isoOf(sinceByAgent.get(agentId)!))],
  );
  const fromByAgent = new Map<string, number>();
  for (const row of before) fromByAgent.set(row.agent_id, row.started_at?.getTime() ?? sinceByAgent.get(row.agent_id)!);
  const froms = agents.map((agentId) => isoOf(fromByAgent.get(agentId)!));
  const rows = await tx.query<StateFactRow & { agent_id: string }>(
    `SELECT f.agent_id, f.at, f.state, f.reason, f.instance_id
       FROM unnest($1::text[], $2::timestamptz[]) AS a(agent_id, lower)
       JOIN agent_state_facts f ON f.agent_id = a.agent_id AND f.at >= a.lower
      ORDER BY f.agent_id, f.at, f.seq`,
    [agents, agents.map((agentId) => isoOf(fromByAgent.get(agentId)! - REPORT_OUTLIVES_MS))],
  );
  const factsByAgent = new Map<string, AgentStateFact[]>();
  for (const row of rows) {
    const fact = { agentId: row.agent_id, state: row.state, reason: row.reason, at: row.at.getTime(), instanceId: row.instance_id };
    const list = factsByAgent.get(row.agent_id);
    if (list === undefined) factsByAgent.set(row.agent_id, [fact]);
    else list.push(fact);
  }
  const intervals: { agent_id: string; started_at: string; state: string; reason: string | null; ended_at: string | null }[] = [];
  // The interval before each agent's `from` ends where the first rebuilt one starts.
  const joins: { agent_id: string; from: string; ended_at: string }[] = [];
  for (const [i, agentId] of agents.entries()) {
    const agentIntervals = intervalsOf(factsByAgent.get(agentId) ?? [], { from: fromByAgent.get(agentId)! });
    for (const interval of agentIntervals) {
      intervals.push({ agent_id: agentId, started_at: isoOf(interval.startedAt), state: interval.state, reason: interval.reason ?? null, ended_at: isoOrNull(interval.endedAt) });
    }
    if (agentIntervals.length > 0) joins.push({ agent_id: agentId, from: froms[i]!, ended_at: isoOf(agentIntervals[0]!.startedAt) });
  }
  await tx.query('DELETE FROM agent_states s USING unnest($1::text[], $2::timestamptz[]) AS a(agent_id, since) WHERE s.agent_id = a.agent_id AND s.started_at >= a.since', [agents, froms]);
  if (intervals.length === 0) return;
  await tx.query(
    `INSERT INTO agent_states (agent_id, started_at, state, reason, ended_at)
     SELECT i.agent_id, i.started_at, i.state, i.reason, i.ended_at
       FROM jsonb_to_recordset($1::jsonb) AS i(agent_id text, started_at timestamptz, state text, reason text, ended_at timestamptz)`,
    [jsonOf(intervals)],
  );
  await tx.query(
    `UPDATE agent_states s SET ended_at = j.ended_at
       FROM jsonb_to_recordset($1::jsonb) AS j(agent_id text, "from" timestamptz, ended_at timestamptz)
      WHERE s.agent_id = j.agent_id AND s.started_at = (SELECT max(t.started_at) FROM agent_states t WHERE t.agent_id = j.agent_id AND t.started_at < j."from")`,
    [jsonOf(joins)],
  );
}

export interface PruneReport {
  calls: number;
  callFacts: number;
  agentStates: number;
  agentStateFacts: number;
}

/**
 * Deletes what is older than `before`: calls that started before it with their facts, facts that
 * make no call (audio messages that named none), state intervals that ended before it, and the
 * state facts no interval still needs. Chunked, each chunk its own statement.
 */
export async function prune(db: SqlRunner, before: Date): Promise<PruneReport> {
  const report: PruneReport = { calls: 0, callFacts: 0, agentStates: 0, agentStateFacts: 0 };
  for (;;) {
    const gone = await db.query<{ call_id: string }>(
      `DELETE FROM calls WHERE call_id IN (SELECT call_id FROM calls WHERE started_at < $1 ORDER BY started_at LIMIT ${PRUNE_CHUNK}) RETURNING call_id`,
      [before],
    );
    if (gone.length === 0) break;
    report.calls += gone.length;
    const facts = await db.query<{ n: number }>('WITH d AS (DELETE FROM call_facts WHERE call_id = ANY($1::text[]) RETURNING 1) SELECT count(*)::int AS n FROM d', [gone.map((g) => g.call_id)]);
    report.callFacts += facts[0]?.n ?? 0;
    if (gone.length < PRUNE_CHUNK) break;
  }
  const orphans = await db.query<{ n: number }>(
    `WITH d AS (DELETE FROM call_facts f WHERE f.at < $1 AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.call_id = f.call_id) RETURNING 1) SELECT count(*)::int AS n FROM d`,
    [before],
  );
  report.callFacts += orphans[0]?.n ?? 0;
  // A state fact is needed as long as the interval it belongs to is kept: keep everything from the
  // start of the agent's earliest interval that is kept.
  const stateFacts = await db.query<{ n: number }>(
    `WITH d AS (
       DELETE FROM agent_state_facts f
        WHERE f.at < $1
          AND f.at < COALESCE((SELECT min(s.started_at) FROM agent_states s WHERE s.agent_id = f.agent_id AND (s.ended_at IS NULL OR s.ended_at >= $1)), $1)
        RETURNING 1)
     SELECT count(*)::int AS n FROM d`,
    [before],
  );
  report.agentStateFacts = stateFacts[0]?.n ?? 0;
  const states = await db.query<{ n: number }>('WITH d AS (DELETE FROM agent_states WHERE ended_at < $1 RETURNING 1) SELECT count(*)::int AS n FROM d', [before]);
  report.agentStates = states[0]?.n ?? 0;
  return report;
}

/** The agents whose latest interval is a state other than offline: at start-up, whose presence to watch. */
export async function agentsNotOffline(db: SqlRunner, offline: string): Promise<string[]> {
  const rows = await db.query<{ agent_id: string }>('SELECT agent_id FROM agent_states WHERE ended_at IS NULL AND state <> $1', [offline]);
  return rows.map((row) => row.agent_id);
}
