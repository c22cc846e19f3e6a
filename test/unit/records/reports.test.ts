// The team's reports as CSV: the calls and the agent states between two days of the team's calendar,
// header first, fields quoted as RFC 4180 has it, typed texts kept from passing for formulas, and
// bad days refused naming the field. Served by a real HTTP server on each database.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../../relay/records/call-record';
import { callRow, csvField, dayRange, lastAgentOf, REPORT_PATHS, sendReport, type ReportKind, type ReportOptions } from '../../../relay/reports';
import { DEFAULT_TEAM_SETTINGS, type TeamSettings } from '../../../shared/team-settings';
import { DATABASE_HARNESSES } from './database-harness';
import { playedRecords } from './relay-with-records';
import { answeredCall, claim, CUSTOMER, incoming, play, T0, terminated, type Step, teamStates } from './records-fixtures';

const MIN = 60_000;
const HOUR = 60 * MIN;

/** T0 is Monday 2026-11-02 09:00 UTC. In New York (UTC-5 then) 03:00 UTC is still Sunday the 1st. */
function calls(): Step[] {
  return [
    ...answeredCall('wacid.r-01', T0),
    incoming('wacid.r-02', T0 + 10 * MIN, ['alice']),
    terminated('wacid.r-02', T0 + 10 * MIN + 8_000),
    ...answeredCall('wacid.r-sunday-ny', T0 - 6 * HOUR),
    ...answeredCall('wacid.r-tuesday', T0 + 24 * HOUR),
    incoming('wacid.r-wednesday', T0 + 48 * HOUR, ['alice']),
    claim('wacid.r-wednesday', 'bob', T0 + 48 * HOUR + 3_000),
  ];
}

async function serve(options: ReportOptions): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const kind = (Object.keys(REPORT_PATHS) as ReportKind[]).find((k) => REPORT_PATHS[k] === path);
    if (kind === undefined) return void res.writeHead(404).end();
    void sendReport(req, res, kind, options);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const lines = (body: string): string[] => body.split('\r\n').filter((line) => line !== '');

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('reports on %s', (_name, make) => {
  const played = playedRecords(make, (records, clock) => {
    for (const step of calls()) play(records, clock, step);
    const state = teamStates(records, clock);
    state('alice', 'available', T0 - HOUR);
    state('alice', 'on_call', T0 + 2_000);
    state('alice', 'available', T0 + 62_000);
  });
  let settings: TeamSettings = { ...DEFAULT_TEAM_SETTINGS };
  let url: string;
  let server: Server;
  beforeAll(async () => {
    const db = played.db();
    // The agent's wrap-up, as the calls row keeps it.
    await db.query(`UPDATE calls SET disposition = $2, notes = $3 WHERE call_id = $1`, ['wacid.r-01', 'Sale', 'Asked for "two" licences,\nthen =SUM(A1)']);
    ({ url, server } = await serve({ database: () => Promise.resolve(db), settings: () => settings, now: () => T0 + 2 * HOUR }));
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it('gives one row per call of the days asked, header first, oldest first, in UTC', async () => {
    settings = { ...DEFAULT_TEAM_SETTINGS };
    const res = await fetch(`${url}/reports/calls.csv?from=2026-11-02&to=2026-11-02`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="calls-2026-11-02-to-2026-11-02.csv"');
    const rows = lines(await res.text());
    expect(rows[0]).toBe('call_id,direction,customer,agent,ringing_at,answered_at,ended_at,wait_seconds,talk_seconds,hold_seconds,outcome,disposition,notes');
    expect(rows.slice(1).map((row) => row.split(',')[0])).toEqual(['wacid.r-sunday-ny', 'wacid.r-01', 'wacid.r-02']);
    expect(rows[2]).toBe(
      `wacid.r-01,incoming,${CUSTOMER},alice,2026-11-02T09:00:00.000Z,2026-11-02T09:00:02.000Z,2026-11-02T09:01:02.000Z,2,60,,answered,Sale,"Asked for ""two"" licences,\nthen =SUM(A1)"`,
    );
    // Rang and nobody answered: the customer gave up within the ring.
    expect(rows[3]).toBe(`wacid.r-02,incoming,${CUSTOMER},,2026-11-02T09:10:00.000Z,,2026-11-02T09:10:08.000Z,8,,,abandoned,,`);
  });

  it('counts the days in the team’s time zone, both inclusive', async () => {
    settings = { ...DEFAULT_TEAM_SETTINGS, timezone: 'America/New_York' };
    const sunday = lines(await (await fetch(`${url}/reports/calls.csv?from=2026-11-01&to=2026-11-01`)).text());
    expect(sunday.slice(1).map((row) => row.split(',')[0])).toEqual(['wacid.r-sunday-ny']);
    const week = lines(await (await fetch(`${url}/reports/calls.csv?from=2026-11-02&to=2026-11-04`)).text());
    expect(week.slice(1).map((row) => row.split(',')[0])).toEqual(['wacid.r-01', 'wacid.r-02', 'wacid.r-tuesday', 'wacid.r-wednesday']);
  });

  it('gives the agents’ states, an open one running to now', async () => {
    settings = { ...DEFAULT_TEAM_SETTINGS };
    const rows = lines(await (await fetch(`${url}/reports/states.csv?from=2026-11-02&to=2026-11-02`)).text());
    expect(rows).toEqual([
      'agent,state,reason,started_at,ended_at,seconds',
      'alice,available,,2026-11-02T08:00:00.000Z,2026-11-02T09:00:02.000Z,3602',
      'alice,on_call,,2026-11-02T09:00:02.000Z,2026-11-02T09:01:02.000Z,60',
      'alice,available,,2026-11-02T09:01:02.000Z,,7138',
    ]);
  });

  it('refuses a bad day naming the field, and answers 503 when it keeps no records', async () => {
    for (const [query, field, message] of [
      ['from=2026-11-31&to=2026-12-01', 'from', 'from: must be a day as YYYY-MM-DD (e.g. 2026-11-01)'],
      ['to=2026-12-01', 'from', 'from: must be a day as YYYY-MM-DD (e.g. 2026-11-01)'],
      ['from=2026-11-02&to=2/11/2026', 'to', 'to: must be a day as YYYY-MM-DD (e.g. 2026-11-30)'],
      ['from=2026-11-03&to=2026-11-02', 'to', 'to: must not be before from'],
    ] as const) {
      const res = await fetch(`${url}/reports/calls.csv?${query}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { code: 'invalid_input', message, field } });
    }
    const none = await serve({ database: undefined, settings: () => settings });
    try {
      const res = await fetch(`${none.url}/reports/states.csv?from=2026-11-02&to=2026-11-02`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ error: { code: 'unavailable', message: 'this relay keeps no call records' } });
    } finally {
      await new Promise((resolve) => none.server.close(resolve));
    }
  });
});

describe('report rows', () => {
  it('quote what needs quoting and keep typed text from passing for a formula', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField(undefined)).toBe('');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('=1+1', true)).toBe("'=1+1");
    expect(csvField('-5 off', true)).toBe("'-5 off");
    expect(csvField('@here', true)).toBe("'@here");
    // A number the service gives is no typed text: it stays as it is.
    expect(csvField('+447700900123')).toBe('+447700900123');
  });

  it('name the agent who had the customer last: the colleague a transfer handed it to', () => {
    const call: CallRecord = { callId: 'c', direction: 'incoming', startedAt: T0, agentId: 'alice', rungAgents: [], declinedAgents: [], transfers: [] };
    expect(lastAgentOf(call)).toBe('alice');
    const handed: CallRecord = {
      ...call,
      transfers: [
        { transferId: 't2', kind: 'transfer', by: 'bob', at: T0 + 2, rung: ['carol'], answeredBy: 'carol', result: 'transferred' },
        { transferId: 't1', kind: 'transfer', by: 'alice', at: T0 + 1, rung: ['bob'], answeredBy: 'bob', result: 'transferred' },
        { transferId: 't3', kind: 'transfer', by: 'carol', at: T0 + 3, rung: ['dave'], result: 'not_answered' },
      ],
    };
    expect(lastAgentOf(handed)).toBe('carol');
    expect(callRow({ callId: 'c', direction: 'outgoing', startedAt: T0, rungAgents: [], declinedAgents: [], transfers: [], outcome: 'failed' })).toBe('c,outgoing,,,2026-11-02T09:00:00.000Z,,,,,,failed,,');
  });

  it('bound the days asked as instants of the team’s calendar', () => {
    const range = dayRange(new URLSearchParams('from=2026-03-29&to=2026-03-29'), 'Europe/London');
    // The day the clocks go forward is 23 hours long.
    expect(range).toEqual({ ok: true, from: new Date('2026-03-29T00:00:00Z'), to: new Date('2026-03-29T23:00:00Z') });
  });
});
