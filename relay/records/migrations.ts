// The records' schema, as numbered migrations run at start-up: each once, in its own transaction,
// recorded in `records_migrations`. Relay instances starting together against one PostgreSQL take
// a transaction-scoped advisory lock first, so one applies a migration and the others find it done.
// A migration is never edited once released: a change of schema is a new number.
import type { Database } from './database';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The advisory lock of the migrations, in the two-key form: (a constant for the records, 1).
 * records-store.ts locks calls and agents in other key spaces, so they never wait on it.
 */
export const MIGRATION_LOCK = { classId: 0x5245_4344, objectId: 1 } as const;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'call facts, calls, agent state facts and agent states',
    sql: `
      -- What one relay instance saw of a call: a webhook, a claim, a decline, a transfer. Append-only;
      -- the same fact seen twice (a retried webhook, two instances) is one row, the earliest seen.
      CREATE TABLE call_facts (
        call_id     text        NOT NULL,
        kind        text        NOT NULL,
        agent_id    text        NOT NULL DEFAULT '',
        ref         text        NOT NULL DEFAULT '',
        at          timestamptz NOT NULL,
        data        jsonb       NOT NULL DEFAULT '{}'::jsonb,
        instance_id text        NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (call_id, kind, agent_id, ref)
      );
      CREATE INDEX call_facts_at ON call_facts (at);

      -- One row per call, derived from all of its facts whenever one is added.
      CREATE TABLE calls (
        call_id            text        PRIMARY KEY,
        direction          text        NOT NULL CHECK (direction IN ('incoming', 'outgoing')),
        customer           text,
        customer_user_id   text,
        customer_name      text,
        business_number    text,
        started_at         timestamptz NOT NULL,
        rang_at            timestamptz,
        answered_at        timestamptz,
        ended_at           timestamptz,
        outcome            text CHECK (outcome IN ('answered', 'abandoned', 'missed', 'no_answer', 'cancelled', 'failed')),
        agent_id           text,
        rung_agents        text[]      NOT NULL DEFAULT '{}',
        declined_agents    text[]      NOT NULL DEFAULT '{}',
        transfers          jsonb       NOT NULL DEFAULT '[]'::jsonb,
        wait_ms            integer,
        talk_ms            integer,
        hold_ms            integer,
        end_status         text,
        error_code         integer,
        error_message      text,
        bridge_failure     text,
        voicemail_at       timestamptz,
        voicemail_media_id text,
        disposition        text,
        notes              text,
        updated_at         timestamptz NOT NULL DEFAULT now()
      );
      -- A window of calls in order (callsBetween's keyset), and a day's summary read from the index
      -- alone: the columns it counts and sums ride along.
      CREATE INDEX calls_started ON calls (started_at, call_id) INCLUDE (direction, outcome, wait_ms, talk_ms, hold_ms);
      CREATE INDEX calls_agent_started ON calls (agent_id, started_at) WHERE agent_id IS NOT NULL;
      CREATE INDEX calls_open ON calls (started_at) WHERE outcome IS NULL;

      -- Each state an agent reported, as the instance that took the report saw it change. seq
      -- numbers the facts as they arrived (an agent's are written under its lock, so in order):
      -- two in the same millisecond are taken in that order. The same fact twice (a retried write,
      -- an expiry two instances noticed at once) is one row, the first.
      CREATE TABLE agent_state_facts (
        seq         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        agent_id    text        NOT NULL,
        at          timestamptz NOT NULL,
        state       text        NOT NULL,
        reason      text        NOT NULL DEFAULT '',
        instance_id text        NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (agent_id, at, state, reason)
      );
      CREATE INDEX agent_state_facts_at ON agent_state_facts (at);

      -- An agent's states as intervals: consecutive facts of the same state are one interval, which
      -- ends where the next one starts (open while it is the agent's current state). A state that
      -- lasted no time (two facts in one millisecond) is no interval, so each starts at an instant
      -- of its own.
      CREATE TABLE agent_states (
        agent_id   text        NOT NULL,
        started_at timestamptz NOT NULL,
        state      text        NOT NULL,
        reason     text,
        ended_at   timestamptz,
        PRIMARY KEY (agent_id, started_at)
      );
      -- The key serves the queries (one agent's intervals in order, from an instant); ended_at the
      -- current states and the prune.
      CREATE INDEX agent_states_ended ON agent_states (ended_at);
    `,
  },
  {
    version: 2,
    name: 'after-call work by its start',
    sql: `
      -- The wallboard's average handle time adds the day's after-call work: its intervals by start,
      -- with their end beside, read from the index alone.
      CREATE INDEX agent_states_after_call_work ON agent_states (started_at) INCLUDE (ended_at) WHERE state = 'after_call_work';
    `,
  },
  {
    version: 3,
    name: 'voicemails by their time',
    sql: `
      -- The wallboard lists the team's latest voicemails every few seconds: the few calls that have
      -- one, newest first, without reading the others.
      CREATE INDEX calls_voicemail ON calls (voicemail_at DESC, call_id DESC) WHERE voicemail_media_id IS NOT NULL;
    `,
  },
];

export interface MigrationReport {
  /** The versions this run applied, in order (none when another instance or an earlier start had). */
  applied: number[];
  /** Versions the database has that this relay does not know: a newer relay ran on it. */
  unknown: number[];
}

/** Brings the schema up to date; safe to run from several instances at once. */
export async function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationReport> {
  const applied: number[] = [];
  let known: number[] = [];
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    const ran = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [MIGRATION_LOCK.classId, MIGRATION_LOCK.objectId]);
      // Under the lock: another instance may have created the table or applied this version meanwhile.
      await tx.query(`CREATE TABLE IF NOT EXISTS records_migrations (
        version    integer     PRIMARY KEY,
        name       text        NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const rows = await tx.query<{ version: number }>('SELECT version FROM records_migrations ORDER BY version');
      known = rows.map((row) => row.version);
      if (known.includes(migration.version)) return false;
      await tx.script(migration.sql);
      await tx.query('INSERT INTO records_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      return true;
    });
    if (ran) applied.push(migration.version);
  }
  const mine = new Set(migrations.map((m) => m.version));
  return { applied, unknown: known.filter((version) => !mine.has(version)) };
}
