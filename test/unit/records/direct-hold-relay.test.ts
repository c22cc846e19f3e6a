// PUT /calls/{callId}/hold through a real relay (relay/REFERENCE.md "Holds"): a direct call's agent
// tells its holds, and the team's record of the call counts the time on hold, from the relay's
// clock; only the call's owner may, for a call the relay knows; the body's one rule names its field.
import { describe, expect, it } from 'vitest';
import { callById } from '../../../relay/records/records-queries';
import { claimCall, putPresence, team } from '../relay/agent-fixtures';
import { incomingCall, postWebhook, terminatedCall, unixSeconds } from '../relay/webhook-fixtures';
import { DATABASE_HARNESSES } from './database-harness';
import { relayWithRecords } from './relay-with-records';

async function putHold(relayUrl: string, token: string, callId: string, body: unknown, method = 'PUT'): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${relayUrl}/calls/${encodeURIComponent(callId)}/hold`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('PUT /calls/{callId}/hold on a relay keeping records on %s', (_name, make) => {
  const { agents, tokens } = team('alice', 'bob');
  const t = relayWithRecords(make, { agents });

  async function answeredByAlice(callId: string): Promise<void> {
    await t.records().database();
    const url = t.relay().url;
    expect((await putPresence(url, tokens.alice!, { status: 'available' })).status).toBe(200);
    expect((await postWebhook(url, incomingCall(callId))).status).toBe(200);
    await t.stored('call.incoming', callId);
    expect((await claimCall(url, tokens.alice!, callId)).status).toBe(200);
  }

  it('counts the time between the owner’s hold and resume as the call’s hold time, not its talk time', async () => {
    await answeredByAlice('wacid.hold-1');
    const url = t.relay().url;
    const started = Date.now();
    expect(await putHold(url, tokens.alice!, 'wacid.hold-1', { held: true })).toEqual({ status: 200, body: { callId: 'wacid.hold-1', held: true, recorded: true } });
    await pause(400);
    expect((await putHold(url, tokens.alice!, 'wacid.hold-1', { held: false })).status).toBe(200);
    await pause(100);
    const ended = Date.now();
    const seconds = Math.max(2, Math.ceil((ended - started) / 1000) + 1);
    expect((await postWebhook(url, terminatedCall('wacid.hold-1', { timestamp: unixSeconds(ended), start_time: unixSeconds(ended - seconds * 1000), end_time: unixSeconds(ended), duration: seconds }))).status).toBe(200);
    await t.stored('call.terminated', 'wacid.hold-1');
    expect(await t.records().flush()).toBe(true);
    const row = await callById(await t.records().database(), 'wacid.hold-1');
    expect(row?.holdMs).toBeGreaterThanOrEqual(380);
    expect(row?.holdMs).toBeLessThan(2_000);
    expect(row?.talkMs).toBe(seconds * 1000 - row!.holdMs!);
  }, 30_000);

  it('a hold still on at the end lasts to the end', async () => {
    await answeredByAlice('wacid.hold-2');
    const url = t.relay().url;
    expect((await putHold(url, tokens.alice!, 'wacid.hold-2', { held: true })).status).toBe(200);
    await pause(300);
    const ended = Date.now();
    expect((await postWebhook(url, terminatedCall('wacid.hold-2', { timestamp: unixSeconds(ended), start_time: unixSeconds(ended - 5_000), end_time: unixSeconds(ended), duration: 5 }))).status).toBe(200);
    await t.stored('call.terminated', 'wacid.hold-2');
    expect(await t.records().flush()).toBe(true);
    expect((await callById(await t.records().database(), 'wacid.hold-2'))?.holdMs).toBeGreaterThanOrEqual(280);
  }, 30_000);

  it('403 to another agent, 404 for a call nobody claimed, 400 naming held, 405 for anything but PUT', async () => {
    await answeredByAlice('wacid.hold-3');
    const url = t.relay().url;
    expect(await putHold(url, tokens.bob!, 'wacid.hold-3', { held: true })).toEqual({ status: 403, body: { error: { code: 'forbidden', message: "call wacid.hold-3 is another agent's" } } });
    expect(await putHold(url, tokens.alice!, 'wacid.nobodys', { held: true })).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'no claimed call wacid.nobodys' } } });
    expect(await putHold(url, tokens.alice!, 'wacid.hold-3', { held: 'yes' })).toEqual({ status: 400, body: { error: { code: 'invalid_input', message: 'held: must be true or false', field: 'held' } } });
    expect(await putHold(url, tokens.alice!, 'wacid.hold-3', '[]')).toMatchObject({ status: 400, body: { error: { field: 'body' } } });
    expect((await putHold(url, tokens.alice!, 'wacid.hold-3', { held: true }, 'POST')).status).toBe(405);
    expect(await t.records().flush()).toBe(true);
  }, 30_000);
});
