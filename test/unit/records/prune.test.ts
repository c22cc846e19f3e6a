// `--records-retention-days`: what is older goes at start-up and then daily; what is newer stays, and
// an agent's current state stays however old, so that its next change still ends it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallRecords } from '../../../relay/records/call-records';
import type { Database } from '../../../relay/records/database';
import { callById, stateIntervals } from '../../../relay/records/records-queries';
import { DATABASE_HARNESSES, migrated, type FreshDatabase } from './database-harness';
import { answeredCall, collect, play, recordingLogger, T0, teamStates, voicemail } from './records-fixtures';

const DAY = 24 * 60 * 60_000;

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('retention on %s', (_name, make) => {
  const harness = make();
  let fresh: FreshDatabase;
  let db: Database;
  beforeAll(async () => {
    await harness.setup();
    fresh = await harness.fresh();
    db = await migrated(fresh);
  }, 60_000);
  afterAll(async () => {
    await fresh?.drop();
    await harness.teardown();
  }, 60_000);

  const count = async (table: string) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;

  it('prunes calls, their facts, stray facts and ended states older than the retention; keeps the rest and each agent\'s current state', async () => {
    const clock = { now: T0 };
    const writer = new CallRecords({ database: () => fresh.connect(), logger: recordingLogger(), now: () => clock.now, writer: { flushIntervalMs: 5 } });
    for (const step of [...answeredCall('wacid.old', T0), ...answeredCall('wacid.recent', T0 + 95 * DAY), voicemail('wamid.old-voice-note', T0 + 1_000)]) play(writer, clock, step);
    const state = teamStates(writer, clock);
    // erin: long gone, her last state (dnd) is still her current one; frank: changed recently.
    state('erin', 'available', T0);
    state('erin', 'dnd', T0 + 2 * DAY);
    state('frank', 'available', T0);
    state('frank', 'on_call', T0 + 10 * DAY);
    state('frank', 'available', T0 + 96 * DAY);
    expect(await writer.flush()).toBe(true);
    await writer.close();
    expect(await count('calls')).toBe(2);

    // A relay started 100 days on with a 30-day retention prunes at once.
    clock.now = T0 + 100 * DAY;
    const log = recordingLogger();
    const pruning = new CallRecords({ database: () => fresh.connect(), logger: log, now: () => clock.now, retentionDays: 30 });
    await pruning.database();
    const deadline = Date.now() + 10_000;
    while (log.said('call records pruned') === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(log.lines.find((l) => l.msg === 'call records pruned')?.fields).toEqual({
      before: new Date(T0 + 70 * DAY).toISOString(),
      calls: 1,
      callFacts: 5,
      agentStates: 2,
      agentStateFacts: 2,
    });
    expect(await callById(db, 'wacid.old')).toBeUndefined();
    expect(await callById(db, 'wacid.recent')).toMatchObject({ outcome: 'answered' });
    expect(await count("call_facts WHERE call_id = 'wacid.recent'")).toBe(4);
    expect(await count('call_facts')).toBe(4);
    const everything = { from: new Date(0), to: new Date(T0 + 200 * DAY) };
    expect((await collect(stateIntervals(db, everything))).map((i) => [i.agentId, i.state, i.endedAt === undefined ? 'open' : (i.endedAt - T0) / DAY])).toEqual([
      ['erin', 'dnd', 'open'],
      ['frank', 'on_call', 96],
      ['frank', 'available', 'open'],
    ]);

    // erin's next change still ends the state she has been in all along.
    clock.now = T0 + 101 * DAY;
    pruning.presenceReported('erin', { presence: 'available' }, { presence: 'dnd' });
    expect(await pruning.flush()).toBe(true);
    expect((await collect(stateIntervals(db, { ...everything, agentId: 'erin' }))).map((i) => [i.state, (i.startedAt - T0) / DAY, i.endedAt === undefined ? 'open' : (i.endedAt - T0) / DAY])).toEqual([
      ['dnd', 2, 101],
      ['available', 101, 'open'],
    ]);
    await pruning.close();
  });
});
