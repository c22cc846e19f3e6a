// PUT /calls/{callId}/wrap-up through a real relay (relay/REFERENCE.md "Wrap-up"): the agent's
// token, the relay's body bound, the body's rules under the team's settings in force, and each
// answer's body as the app reads it; a wrap-up right after the terminate webhook is saved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callById } from '../../../relay/records/records-queries';
import { startRelay, type RelayServer } from '../../../relay/server';
import { DEFAULT_TEAM_SETTINGS, WRAP_UP_EDITABLE_MS, WRAP_UP_NOTES_MAX } from '../../../shared/team-settings';
import { TeamSettingsSource } from '../../../relay/team-settings-source';
import { claimCall, declineCall, putPresence, team } from '../relay/agent-fixtures';
import { incomingCall, postWebhook, terminatedCall, unixSeconds } from '../relay/webhook-fixtures';
import { DATABASE_HARNESSES } from './database-harness';
import { recordingLogger } from './records-fixtures';
import { relayWithRecords } from './relay-with-records';

async function putWrapUp(relayUrl: string, token: string | undefined, callId: string, body: unknown, method = 'PUT'): Promise<{ status: number; body: unknown; allow: string | null }> {
  const res = await fetch(`${relayUrl}/calls/${encodeURIComponent(callId)}/wrap-up`, {
    method,
    headers: { ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
    ...(method === 'GET' ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: kept as text.
  }
  return { status: res.status, body: parsed, allow: res.headers.get('allow') };
}

const invalid = (field: string, message: string) => ({ status: 400, body: { error: { code: 'invalid_input', message, field } } });

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('PUT /calls/{callId}/wrap-up on a relay keeping records on %s', (_name, make) => {
  const { agents, tokens } = team('alice', 'bob');
  const settings = new TeamSettingsSource();
  const t = relayWithRecords(make, { agents, teamSettings: settings });

  /** A call alice answers and that ends now (or `endedAt`, on the service's clock), bob declining it. */
  async function answeredByAlice(callId: string, endedAt = Date.now()): Promise<void> {
    // Until the database first answers, a wrap-up is told to come back (503).
    await t.records().database();
    const url = t.relay().url;
    expect((await putPresence(url, tokens.alice!, { status: 'available' })).status).toBe(200);
    expect((await putPresence(url, tokens.bob!, { status: 'available' })).status).toBe(200);
    expect((await postWebhook(url, incomingCall(callId))).status).toBe(200);
    await t.stored('call.incoming', callId);
    expect((await declineCall(url, tokens.bob!, callId)).status).toBe(200);
    expect((await claimCall(url, tokens.alice!, callId)).status).toBe(200);
    const started = Math.min(Date.now(), endedAt) - 30_000;
    expect((await postWebhook(url, terminatedCall(callId, { timestamp: unixSeconds(endedAt), start_time: unixSeconds(started), end_time: unixSeconds(endedAt), duration: 30 }))).status).toBe(200);
    await t.stored('call.terminated', callId);
  }

  it('saves it right after the hang-up: 200 with what was saved and when; the call row carries it', async () => {
    await answeredByAlice('wacid.wrap-1');
    const before = Date.now();
    const saved = await putWrapUp(t.relay().url, tokens.alice!, 'wacid.wrap-1', { disposition: 'Follow-up needed', notes: 'Call back on Monday.' });
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({ callId: 'wacid.wrap-1', agentId: 'alice', disposition: 'Follow-up needed', notes: 'Call back on Monday.', savedAt: expect.any(Number) });
    const { savedAt } = saved.body as { savedAt: number };
    expect(savedAt).toBeGreaterThanOrEqual(before);
    expect(savedAt).toBeLessThanOrEqual(Date.now());
    const db = await t.records().database();
    expect(await callById(db, 'wacid.wrap-1')).toMatchObject({ outcome: 'answered', agentId: 'alice', disposition: 'Follow-up needed', notes: 'Call back on Monday.' });

    // An edit: no disposition, other notes.
    const edited = await putWrapUp(t.relay().url, tokens.alice!, 'wacid.wrap-1', { disposition: null, notes: '' });
    expect(edited).toMatchObject({ status: 200, body: { callId: 'wacid.wrap-1', agentId: 'alice', disposition: null, notes: '' } });
    const row = await callById(db, 'wacid.wrap-1');
    expect(row?.disposition).toBeUndefined();
    expect(row?.notes).toBe('');
  }, 30_000);

  it('403 to an agent who did not talk with the customer, 404 for a call not in the records, 409 a day after the call', async () => {
    await answeredByAlice('wacid.wrap-2');
    const url = t.relay().url;
    expect(await putWrapUp(url, tokens.bob!, 'wacid.wrap-2', { disposition: 'Sale', notes: '' })).toMatchObject({
      status: 403,
      body: { error: { code: 'forbidden', message: 'only an agent who talked with the customer wraps the call up' } },
    });
    expect(await putWrapUp(url, tokens.alice!, 'wacid.nobody-knows', { disposition: 'Sale', notes: '' })).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found', message: "no call wacid.nobody-knows in the team's records" } },
    });
    await answeredByAlice('wacid.wrap-yesterday', Date.now() - WRAP_UP_EDITABLE_MS - 60_000);
    expect(await putWrapUp(url, tokens.alice!, 'wacid.wrap-yesterday', { disposition: 'Sale', notes: '' })).toMatchObject({
      status: 409,
      body: { error: { code: 'too_late', message: 'a wrap-up can be changed for 24 hours after the call' } },
    });
  }, 30_000);

  it('400 naming the field and the rule under the team settings in force', async () => {
    await answeredByAlice('wacid.wrap-3');
    const url = t.relay().url;
    const put = (body: unknown) => putWrapUp(url, tokens.alice!, 'wacid.wrap-3', body);
    const dispositions = "disposition: must be one of the team's dispositions: Resolved, Follow-up needed, Sale, No sale, Wrong number";
    expect(await put({ disposition: 'Upsell', notes: '' })).toMatchObject(invalid('disposition', dispositions));
    expect(await put({ disposition: 'sale', notes: '' })).toMatchObject(invalid('disposition', dispositions));
    expect(await put({ disposition: 3, notes: '' })).toMatchObject(invalid('disposition', dispositions));
    expect(await put({ notes: '' })).toMatchObject(invalid('disposition', 'disposition: is required'));
    expect(await put({ disposition: null })).toMatchObject(invalid('notes', 'notes: is required and must be a string'));
    expect(await put({ disposition: null, notes: 7 })).toMatchObject(invalid('notes', 'notes: is required and must be a string'));
    expect(await put({ disposition: null, notes: 'x'.repeat(WRAP_UP_NOTES_MAX + 1) })).toMatchObject(invalid('notes', 'notes: must be at most 2000 characters'));
    expect(await put({ disposition: null, notes: 'x'.repeat(WRAP_UP_NOTES_MAX) })).toMatchObject({ status: 200 });
    expect(await put('not json')).toMatchObject(invalid('body', 'body: is required and must be an object'));
    expect(await put([])).toMatchObject(invalid('body', 'body: is required and must be an object'));
    expect(await put({ disposition: 'Upsell', notes: 5 })).toMatchObject(
      invalid('disposition', `${dispositions}; notes: is required and must be a string`),
    );

    settings.replace({ ...DEFAULT_TEAM_SETTINGS, dispositions: ['Solved', 'Escalated'], dispositionRequired: true });
    try {
      expect(await put({ disposition: null, notes: 'n' })).toMatchObject(invalid('disposition', 'disposition: is required: the team asks for a disposition on every call'));
      expect(await put({ notes: 'n' })).toMatchObject(invalid('disposition', 'disposition: is required: the team asks for a disposition on every call'));
      expect(await put({ disposition: 'Sale', notes: 'n' })).toMatchObject(invalid('disposition', "disposition: must be one of the team's dispositions: Solved, Escalated"));
      expect(await put({ disposition: 'Escalated', notes: 'n' })).toMatchObject({ status: 200, body: { disposition: 'Escalated' } });
    } finally {
      settings.replace({ ...DEFAULT_TEAM_SETTINGS });
    }
  }, 30_000);

  it("the agent's token, the relay's 64 KiB body bound, PUT only, a call id the path can carry", async () => {
    const url = t.relay().url;
    expect(await putWrapUp(url, undefined, 'wacid.wrap-4', { disposition: null, notes: '' })).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
    expect(await putWrapUp(url, 'token-mallory-0123456789', 'wacid.wrap-4', { disposition: null, notes: '' })).toMatchObject({ status: 401 });
    expect(await putWrapUp(url, tokens.alice!, 'wacid.wrap-4', { disposition: null, notes: 'x'.repeat(64 * 1024) })).toMatchObject({
      status: 413,
      body: { error: { code: 'payload_too_large', limitBytes: 65536 } },
    });
    expect(await putWrapUp(url, tokens.alice!, 'wacid.wrap-4', undefined, 'GET')).toMatchObject({ status: 405, allow: 'PUT', body: { error: { code: 'method_not_allowed' } } });
    const badId = await fetch(`${url}/calls/%E0%A4%A/wrap-up`, { method: 'PUT', headers: { authorization: `Bearer ${tokens.alice!}` }, body: '{}' });
    expect(badId.status).toBe(400);
    expect(await badId.json()).toEqual({ error: { code: 'invalid_input', message: 'callId: must be a URL-encoded call id', field: 'callId' } });
    expect(await putWrapUp(url, tokens.alice!, 'x'.repeat(513), { disposition: null, notes: '' })).toMatchObject(invalid('callId', 'callId: must be 1 to 512 characters'));
  });
});

describe('PUT /calls/{callId}/wrap-up on a relay that keeps no records', () => {
  const { agents, tokens } = team('alice');
  let relay: RelayServer | undefined;
  beforeAll(async () => {
    relay = await startRelay({ port: 0, agents, heartbeatMs: 60_000, logger: recordingLogger() });
  });
  afterAll(async () => {
    await relay?.close();
  });

  it('503 unavailable, once the body passed its rules', async () => {
    expect(await putWrapUp(relay!.url, tokens.alice!, 'wacid.wrap-5', { disposition: 'Sale', notes: '' })).toEqual({
      status: 503,
      allow: null,
      body: { error: { code: 'unavailable', message: 'this relay keeps no call records: a wrap-up cannot be saved' } },
    });
    expect(await putWrapUp(relay!.url, tokens.alice!, 'wacid.wrap-5', { disposition: 'Upsell', notes: '' })).toMatchObject({ status: 400 });
  });
});
