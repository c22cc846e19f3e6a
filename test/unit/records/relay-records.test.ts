// The relay feeding its records for real: signed webhooks, presence reports, claims and declines over
// HTTP to a relay started with `records`, then the calls and states read back from the database.
import { describe, expect, it } from 'vitest';
import { callById, stateIntervals } from '../../../relay/records/records-queries';
import { claimCall, declineCall, putPresence, team } from '../relay/agent-fixtures';
import { callStatus, CUSTOMER, incomingCall, postWebhook, terminatedCall, unixSeconds } from '../relay/webhook-fixtures';
import { relayWithRecords } from './relay-with-records';
import { DATABASE_HARNESSES } from './database-harness';
import { collect } from './records-fixtures';

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('a relay that keeps call records on %s', (_name, make) => {
  const { agents, tokens } = team('alice', 'bob');
  const t = relayWithRecords(make, { agents });

  it('says how its records go in /healthz: the database, facts waiting in memory and in the journal, written, dropped', async () => {
    expect((await postWebhook(t.relay().url, incomingCall('wacid.relay-health'))).status).toBe(200);
    await t.stored('call.incoming', 'wacid.relay-health');
    expect(await t.records().flush()).toBe(true);
    const health = await fetch(`${t.relay().url}/healthz`);
    expect(health.status).toBe(200);
    const body = (await health.json()) as { records?: unknown };
    expect(body).toMatchObject({ status: 'ok', records: { database: 'up', queued: 0, journaled: 0, written: expect.any(Number), dropped: 0 } });
    expect(body.records).toEqual(t.records().status());
    expect(t.records().status().written).toBeGreaterThan(0);
  });

  it('records calls, claims, declines and presence as the relay handles them, once however often the service retries', async () => {
    expect((await putPresence(t.relay().url, tokens.alice!, { status: 'available' })).status).toBe(200);
    expect((await putPresence(t.relay().url, tokens.bob!, { status: 'available' })).status).toBe(200);

    // Answered by alice after bob declined.
    const answeredAt = Date.now();
    expect((await postWebhook(t.relay().url, incomingCall('wacid.relay-1'))).status).toBe(200);
    await t.stored('call.incoming', 'wacid.relay-1');
    expect((await declineCall(t.relay().url, tokens.bob!, 'wacid.relay-1')).body).toMatchObject({ othersRinging: 1 });
    expect((await claimCall(t.relay().url, tokens.alice!, 'wacid.relay-1')).status).toBe(200);
    const ended = terminatedCall('wacid.relay-1', { start_time: unixSeconds(answeredAt), end_time: unixSeconds(answeredAt + 42_000), duration: 42 });
    expect((await postWebhook(t.relay().url, ended)).status).toBe(200);
    expect((await postWebhook(t.relay().url, ended)).status).toBe(200);
    await t.stored('call.terminated', 'wacid.relay-1');

    // The customer hangs up while it rings.
    expect((await postWebhook(t.relay().url, incomingCall('wacid.relay-2'))).status).toBe(200);
    await t.stored('call.incoming', 'wacid.relay-2');
    expect((await postWebhook(t.relay().url, terminatedCall('wacid.relay-2'))).status).toBe(200);
    await t.stored('call.terminated', 'wacid.relay-2');

    // alice dials out; the customer rejects it.
    expect((await putPresence(t.relay().url, tokens.alice!, { status: 'on_call' })).status).toBe(200);
    expect((await claimCall(t.relay().url, tokens.alice!, 'wacid.relay-3')).status).toBe(200);
    expect((await postWebhook(t.relay().url, callStatus('wacid.relay-3', 'RINGING'))).status).toBe(200);
    expect((await postWebhook(t.relay().url, callStatus('wacid.relay-3', 'REJECTED'))).status).toBe(200);
    expect((await postWebhook(t.relay().url, terminatedCall('wacid.relay-3', { direction: 'BUSINESS_INITIATED' }))).status).toBe(200);
    await t.stored('call.terminated', 'wacid.relay-3');
    // The app's refresh of an unchanged presence is no change of state.
    expect((await putPresence(t.relay().url, tokens.alice!, { status: 'on_call' })).status).toBe(200);

    await t.relay().close();
    expect(await t.records().flush()).toBe(true);
    const db = await t.records().database();
    expect(await callById(db, 'wacid.relay-1')).toMatchObject({
      direction: 'incoming',
      outcome: 'answered',
      agentId: 'alice',
      customer: CUSTOMER,
      customerName: 'Ada Customer',
      rungAgents: ['alice', 'bob'],
      declinedAgents: ['bob'],
      talkMs: 42_000,
      endStatus: 'COMPLETED',
    });
    expect(await callById(db, 'wacid.relay-2')).toMatchObject({ direction: 'incoming', outcome: 'abandoned', rungAgents: ['alice', 'bob'], declinedAgents: [] });
    expect(await callById(db, 'wacid.relay-3')).toMatchObject({ direction: 'outgoing', outcome: 'no_answer', agentId: 'alice', customer: CUSTOMER, rungAgents: [] });
    const facts = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM call_facts WHERE call_id = 'wacid.relay-1' AND kind = 'terminated'");
    expect(facts[0]!.n).toBe(1);

    const states = await collect(stateIntervals(db, { from: new Date(answeredAt - 60_000), to: new Date(Date.now() + 60_000) }));
    expect(states.map((s) => [s.agentId, s.state, s.endedAt === undefined ? 'open' : 'ended'])).toEqual([
      ['alice', 'available', 'ended'],
      ['alice', 'on_call', 'open'],
      ['bob', 'available', 'open'],
    ]);
  }, 30_000);
});

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('a relay that records breaks and after-call work on %s', (_name, make) => {
  const { agents, tokens } = team('alice');
  const t = relayWithRecords(make, { agents });

  it('records a break with its reason and after-call work with its call: a refresh is no new state, another reason is', async () => {
    const from = Date.now();
    const report = async (body: unknown) => {
      expect((await putPresence(t.relay().url, tokens.alice!, body)).status).toBe(200);
      // Two reports in one millisecond would be one state (records "Agent states").
      await new Promise((resolve) => setTimeout(resolve, 5));
    };
    await report({ status: 'available' });
    await report({ status: 'break', reason: 'Lunch' });
    await report({ status: 'break', reason: 'Lunch' });
    await report({ status: 'break', reason: 'Meeting' });
    await report({ status: 'after_call_work', callId: 'wacid.acw-records' });
    await report({ status: 'after_call_work' });
    await report({ status: 'after_call_work', callId: 'wacid.acw-records' });
    await report({ status: 'available', callId: 'wacid.acw-records' });

    await t.relay().close();
    expect(await t.records().flush()).toBe(true);
    const db = await t.records().database();
    const states = await collect(stateIntervals(db, { from: new Date(from - 1), to: new Date(Date.now() + 60_000), agentId: 'alice' }));
    expect(states.map((s) => [s.state, s.reason ?? '', s.endedAt === undefined ? 'open' : 'ended'])).toEqual([
      ['available', '', 'ended'],
      ['break', 'Lunch', 'ended'],
      ['break', 'Meeting', 'ended'],
      ['after_call_work', 'wacid.acw-records', 'ended'],
      ['available', '', 'open'],
    ]);
  }, 30_000);
});
