// A day's summary (counts by outcome, average handle time, service level) is read from an index
// alone: on a month of calls, with statistics as a live database keeps them, each planner picks an
// index-only scan of calls_started and fetches no row from the table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../relay/records/database';
import { dayBounds, summary } from '../../../relay/records/records-queries';
import { DATABASE_HARNESSES, migrated, type FreshDatabase } from './database-harness';
import { T0 , recordingRunner } from './records-fixtures';

const CALLS = 60_000;
/** A month: a call every 43 s, from 15 days before T0. */
const EVERY_SEC = 43;
const FIRST = T0 - 15 * 24 * 3600_000;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Heap Fetches'?: number;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];


describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('the daily summary on %s', (_name, make) => {
  const harness = make();
  let fresh: FreshDatabase;
  let db: Database;
  beforeAll(async () => {
    await harness.setup();
    fresh = await harness.fresh();
    db = await migrated(fresh);
    // Committed as a live database commits (the test server's synchronous_commit is off, and a
    // commit not yet flushed leaves its rows unmarked for a moment, so that VACUUM cannot yet mark
    // their pages all-visible).
    await db.transaction(async (tx) => {
      await tx.query('SET LOCAL synchronous_commit = on');
      await tx.query(
        `INSERT INTO calls (call_id, direction, started_at, outcome, wait_ms, talk_ms, hold_ms, rung_agents)
         SELECT 'wacid.month-' || g,
                CASE WHEN g % 3 = 0 THEN 'outgoing' ELSE 'incoming' END,
                $1::timestamptz + g * interval '${EVERY_SEC} seconds',
                (ARRAY['answered', 'answered', 'abandoned', 'missed', 'no_answer', 'cancelled', 'failed'])[1 + g % 7],
                (g % 60) * 1000, (g % 300) * 1000, CASE WHEN g % 5 = 0 THEN 7000 END, ARRAY['alice', 'bob']
           FROM generate_series(1, ${CALLS}) AS g`,
        [new Date(FIRST)],
      );
    });
    // What autovacuum does on a live database: the planner's statistics and the visibility map.
    await db.query('VACUUM ANALYZE calls');
  }, 120_000);
  afterAll(async () => {
    await fresh?.drop();
    await harness.teardown();
  }, 60_000);

  it("is served by calls_started alone: an index-only scan that fetches no row", async () => {
    const { from, to } = dayBounds(new Date(T0), 'UTC');
    const runner = recordingRunner(db);
    const day = await summary(runner, { from, to, serviceLevelSec: 20 });
    const startTimes = Array.from({ length: CALLS }, (_, i) => FIRST + (i + 1) * EVERY_SEC * 1000);
    expect(day.total).toBe(startTimes.filter((t) => t >= from.getTime() && t < to.getTime()).length);
    const { sql, params } = runner.statements[0]!;
    const rows = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
    const nodes = nodesOf(rows[0]!['QUERY PLAN'][0].Plan);
    const scans = nodes.filter((n) => n['Relation Name'] === 'calls');
    expect(scans.map((n) => [n['Node Type'], n['Index Name']])).toEqual([['Index Only Scan', 'calls_started']]);
    expect(scans[0]!['Heap Fetches']).toBe(0);
  });
});
