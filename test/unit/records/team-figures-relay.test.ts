// GET /team/wallboard and GET /reports/*.csv through a real relay keeping records: the wallboard for
// any agent of the team, with everyone's state; the reports for supervisors only, with a wrap-up
// saved a moment before in their rows.
import { describe, expect, it } from 'vitest';
import { TeamSettingsSource } from '../../../relay/team-settings-source';
import { DEFAULT_TEAM_SETTINGS } from '../../../shared/team-settings';
import { wallboardSchema } from '../../../shared/wallboard';
import { claimCall, declineCall, putPresence, team } from '../relay/agent-fixtures';
import { incomingCall, postWebhook, terminatedCall, unixSeconds } from '../relay/webhook-fixtures';
import { DATABASE_HARNESSES } from './database-harness';
import { relayWithRecords } from './relay-with-records';

async function get(url: string, token: string | undefined, method = 'GET'): Promise<{ status: number; text: string; type: string | null }> {
  const res = await fetch(url, { method, headers: token !== undefined ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
}

const today = (): string => new Date().toISOString().slice(0, 10);

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('the team’s figures through a relay keeping records on %s', (_name, make) => {
  const base = team('alice', 'bob', 'sam');
  const agents = base.agents.map((agent) => (agent.id === 'sam' ? { ...agent, role: 'supervisor' as const } : agent));
  const { tokens } = base;
  const t = relayWithRecords(make, { agents, teamSettings: new TeamSettingsSource({ ...DEFAULT_TEAM_SETTINGS, breakReasons: ['Lunch'] }) });

  /** Alice answers after 3 s and talks 30 s; bob declines first. Ends now. */
  async function answered(callId: string): Promise<void> {
    const url = t.relay().url;
    expect((await postWebhook(url, incomingCall(callId))).status).toBe(200);
    await t.stored('call.incoming', callId);
    expect((await declineCall(url, tokens.bob!, callId)).status).toBe(200);
    expect((await claimCall(url, tokens.alice!, callId)).status).toBe(200);
    const now = Date.now();
    expect((await postWebhook(url, terminatedCall(callId, { timestamp: unixSeconds(now), start_time: unixSeconds(now - 30_000), end_time: unixSeconds(now), duration: 30 }))).status).toBe(200);
    await t.stored('call.terminated', callId);
  }

  it('shows any agent the calls of the day and every agent’s state with its reason and since', async () => {
    await t.records().database();
    const url = t.relay().url;
    expect((await putPresence(url, tokens.alice!, { status: 'available' })).status).toBe(200);
    expect((await putPresence(url, tokens.bob!, { status: 'break', reason: 'Lunch' })).status).toBe(200);
    await answered('wacid.fig-1');
    expect(await t.records().flush()).toBe(true);

    const answer = await get(`${url}/team/wallboard`, tokens.bob!);
    expect(answer.status).toBe(200);
    const board = wallboardSchema.parse(JSON.parse(answer.text));
    expect(board.records).toBe('ok');
    expect(board.timezone).toBe('UTC');
    expect(board.today).toMatchObject({ answered: 1, missed: 0, abandoned: 0, serviceLevel: { thresholdSec: 20, offered: 1 } });
    expect(board.waiting).toEqual({ calls: 0 });
    const byId = Object.fromEntries(board.agents.map((a) => [a.agentId, a]));
    expect(byId.bob).toMatchObject({ presence: 'break', reason: 'Lunch', self: true, since: expect.any(Number) });
    expect(byId.alice).toMatchObject({ presence: 'available' });
    expect(byId.sam).toMatchObject({ presence: 'offline' });

    expect((await get(`${url}/team/wallboard`, undefined)).status).toBe(401);
    expect((await get(`${url}/team/wallboard`, tokens.bob!, 'POST')).status).toBe(405);
  }, 30_000);

  it('gives a supervisor the calls report with the wrap-up in it, and refuses it to an agent', async () => {
    await t.records().database();
    const url = t.relay().url;
    await answered('wacid.fig-2');
    const saved = await fetch(`${url}/calls/wacid.fig-2/wrap-up`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${tokens.alice!}`, 'content-type': 'application/json' },
      body: JSON.stringify({ disposition: 'Sale', notes: 'Two seats, renews in May' }),
    });
    expect(saved.status).toBe(200);

    const report = await get(`${url}/reports/calls.csv?from=${today()}&to=${today()}`, tokens.sam!);
    expect(report.status).toBe(200);
    expect(report.type).toBe('text/csv; charset=utf-8');
    const rows = report.text.split('\r\n');
    expect(rows[0]).toBe('call_id,direction,customer,agent,ringing_at,answered_at,ended_at,wait_seconds,talk_seconds,hold_seconds,outcome,disposition,notes');
    const row = rows.find((r) => r.startsWith('wacid.fig-2,'));
    expect(row).toMatch(/^wacid\.fig-2,incoming,\d+,alice,[^,]+,[^,]+,[^,]+,[\d.]+,[\d.]+,,answered,Sale,"Two seats, renews in May"$/);

    const states = await get(`${url}/reports/states.csv?from=${today()}&to=${today()}`, tokens.sam!);
    expect(states.status).toBe(200);
    expect(states.text.split('\r\n')[0]).toBe('agent,state,reason,started_at,ended_at,seconds');

    for (const path of ['/reports/calls.csv', '/reports/states.csv']) {
      const refused = await get(`${url}${path}?from=${today()}&to=${today()}`, tokens.alice!);
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.text)).toEqual({ error: { code: 'forbidden', message: "only a supervisor reads the team's reports" } });
    }
    const bad = await get(`${url}/reports/calls.csv?from=yesterday&to=${today()}`, tokens.sam!);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toEqual({ error: { code: 'invalid_input', message: 'from: must be a day as YYYY-MM-DD (e.g. 2026-11-01)', field: 'from' } });
  }, 30_000);
});
