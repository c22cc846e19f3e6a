// The team's voicemails on the wallboard, from the records on each database: the calls whose customer
// left one within the last 7 days (as long as the service keeps the media), the newest first, at
// most TEAM_VOICEMAILS_LIMIT, with the customer and the ringing time as the call's row has them;
// absent unless the records could be read. On a month of calls the list is read from its index.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../relay/records/database';
import { recentVoicemails } from '../../../relay/records/wallboard-queries';
import { WallboardSource } from '../../../relay/wallboard';
import { DEFAULT_TEAM_SETTINGS } from '../../../shared/team-settings';
import { TEAM_VOICEMAILS_LIMIT, VOICEMAIL_KEPT_MS, teamVoicemailSchema } from '../../../shared/voicemail';
import { DATABASE_HARNESSES, migrated, type FreshDatabase } from './database-harness';
import { playedRecords } from './relay-with-records';
import { answeredCall, CUSTOMER, decline, incoming, play, recordingRunner, T0, terminated, voicemail, type Step } from './records-fixtures';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
/** The moment the wallboard is read: 11:00 UTC on T0's day. */
const NOW = T0 + 2 * 60 * MIN;
const HIDDEN = 'US.13491208655302741918';

/** A call every agent declined, whose customer then left a voicemail `mediaId` a few seconds later. */
const declinedWithVoicemail = (callId: string, at: number, mediaId: string | undefined): Step[] => [
  incoming(callId, at, ['alice']),
  decline(callId, 'alice', at + 3_000, 0),
  terminated(callId, at + 4_000),
  voicemail(callId, at + 20_000, mediaId),
];

function calls(): Step[] {
  return [
    ...declinedWithVoicemail('wacid.vm-recent', NOW - 10 * MIN, 'media-recent'),
    ...declinedWithVoicemail('wacid.vm-yesterday', NOW - DAY, 'media-yesterday'),
    // Six days and 23 hours ago: still kept by the service.
    ...declinedWithVoicemail('wacid.vm-almost-week', NOW - VOICEMAIL_KEPT_MS + 60 * MIN, 'media-almost-week'),
    // Left exactly 7 days ago, and longer: the service has let the media go.
    ...declinedWithVoicemail('wacid.vm-week', NOW - VOICEMAIL_KEPT_MS - 20_000, 'media-week'),
    ...declinedWithVoicemail('wacid.vm-old', NOW - 8 * DAY, 'media-old'),
    // A voicemail whose media id the service did not give cannot be played.
    ...declinedWithVoicemail('wacid.vm-no-media', NOW - 5 * MIN, undefined),
    // A voicemail of a call the records never saw makes no call, and so no voicemail here.
    voicemail('wacid.vm-unknown-call', NOW - 4 * MIN, 'media-unknown'),
    // A customer who hides the number: their user id.
    {
      at: NOW - 30 * MIN,
      event: { type: 'call.incoming', callId: 'wacid.vm-hidden', fromUserId: HIDDEN, sdp: 'v=0\r\n', timestamp: NOW - 30 * MIN },
      audience: { kind: 'ringing' },
      reachable: ['alice'],
    },
    terminated('wacid.vm-hidden', NOW - 30 * MIN + 55_000),
    voicemail('wacid.vm-hidden', NOW - 30 * MIN + 70_000, 'media-hidden'),
    // Answered calls have none.
    ...answeredCall('wacid.vm-answered', NOW - 20 * MIN),
  ];
}

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('the team’s voicemails on %s', (_name, make) => {
  const played = playedRecords(make, (records, clock) => {
    for (const step of calls()) play(records, clock, step);
  });

  it('lists the voicemails of the last 7 days, the newest first, with the customer and when the call rang', async () => {
    const list = await recentVoicemails(played.db(), NOW);
    for (const item of list) expect(teamVoicemailSchema.parse(item)).toEqual(item);
    expect(list).toEqual([
      { callId: 'wacid.vm-recent', mediaId: 'media-recent', at: NOW - 10 * MIN + 20_000, ringingAt: NOW - 10 * MIN, number: CUSTOMER, name: 'Ada Customer' },
      { callId: 'wacid.vm-hidden', mediaId: 'media-hidden', at: NOW - 30 * MIN + 70_000, ringingAt: NOW - 30 * MIN, userId: HIDDEN },
      { callId: 'wacid.vm-yesterday', mediaId: 'media-yesterday', at: NOW - DAY + 20_000, ringingAt: NOW - DAY, number: CUSTOMER, name: 'Ada Customer' },
      {
        callId: 'wacid.vm-almost-week',
        mediaId: 'media-almost-week',
        at: NOW - VOICEMAIL_KEPT_MS + 60 * MIN + 20_000,
        ringingAt: NOW - VOICEMAIL_KEPT_MS + 60 * MIN,
        number: CUSTOMER,
        name: 'Ada Customer',
      },
    ]);
  });

  it('keeps one that is not yet 7 days old, and lets it go once it is', async () => {
    const voicemailAt = NOW - VOICEMAIL_KEPT_MS + 60 * MIN + 20_000;
    const justBefore = (await recentVoicemails(played.db(), voicemailAt + VOICEMAIL_KEPT_MS - 1)).map((item) => item.callId);
    expect(justBefore).toContain('wacid.vm-almost-week');
    const atAWeek = (await recentVoicemails(played.db(), voicemailAt + VOICEMAIL_KEPT_MS)).map((item) => item.callId);
    expect(atAWeek).not.toContain('wacid.vm-almost-week');
  });

  it('are on the wallboard with the records’ reading, and absent without it', async () => {
    const source = new WallboardSource({ database: () => Promise.resolve(played.db()), settings: () => DEFAULT_TEAM_SETTINGS, callbacks: () => Promise.resolve([]), now: () => NOW });
    const board = await source.wallboard([]);
    expect(board.records).toBe('ok');
    expect(board.voicemails).toEqual(await recentVoicemails(played.db(), NOW));
    const down = await new WallboardSource({ database: () => Promise.reject(new Error('connection refused')), settings: () => DEFAULT_TEAM_SETTINGS, callbacks: () => Promise.resolve([]), now: () => NOW }).wallboard([]);
    expect(down.records).toBe('unavailable');
    expect(down).not.toHaveProperty('voicemails');
  });
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('the team’s voicemails among a month of calls on %s', (_name, make) => {
  const CALLS = 60_000;
  const harness = make();
  let fresh: FreshDatabase;
  let db: Database;
  beforeAll(async () => {
    await harness.setup();
    fresh = await harness.fresh();
    db = await migrated(fresh);
    // A call every 43 s for a month up to NOW; one in 100 left a voicemail.
    await db.query(
      `INSERT INTO calls (call_id, direction, started_at, rang_at, outcome, customer, voicemail_at, voicemail_media_id)
       SELECT 'wacid.month-' || g, 'incoming', $1::timestamptz - g * interval '43 seconds', $1::timestamptz - g * interval '43 seconds',
              CASE WHEN g % 100 = 0 THEN 'missed' ELSE 'answered' END, '447700900123',
              CASE WHEN g % 100 = 0 THEN $1::timestamptz - g * interval '43 seconds' + interval '30 seconds' END,
              CASE WHEN g % 100 = 0 THEN 'media-' || g END
         FROM generate_series(1, ${CALLS}) AS g`,
      [new Date(NOW)],
    );
    await db.query('ANALYZE calls');
  }, 120_000);
  afterAll(async () => {
    await fresh?.drop();
    await harness.teardown();
  }, 60_000);

  it(`reads the newest ${TEAM_VOICEMAILS_LIMIT} from calls_voicemail, not from every call`, async () => {
    const runner = recordingRunner(db);
    const list = await recentVoicemails(runner, NOW);
    // 7 days of calls every 43 s, one in 100: more than the wallboard lists.
    expect(Math.floor(VOICEMAIL_KEPT_MS / 43_000 / 100)).toBeGreaterThan(TEAM_VOICEMAILS_LIMIT);
    expect(list.map((item) => item.callId)).toEqual(Array.from({ length: TEAM_VOICEMAILS_LIMIT }, (_, i) => `wacid.month-${(i + 1) * 100}`));
    const { sql, params } = runner.statements[0]!;
    const rows = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
    const scans = nodesOf(rows[0]!['QUERY PLAN'][0].Plan).filter((n) => n['Relation Name'] === 'calls');
    expect(scans.map((n) => [n['Node Type'], n['Index Name']])).toEqual([['Index Scan', 'calls_voicemail']]);
  });
});
