// The relay feeding its records for real: signed webhooks, presence reports, claims and declines over
// HTTP to a relay started with `records`, then the calls and states read back from the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelayEnvelope } from '../../../shared/events';
import { CallRecords } from '../../../relay/records/call-records';
import { callById, stateIntervals } from '../../../relay/records/records-queries';
import { startRelay, type RelayServer } from '../../../relay/server';
import { claimCall, declineCall, putPresence, team } from '../relay/agent-fixtures';
import { APP_SECRET, callStatus, CUSTOMER, incomingCall, postWebhook, terminatedCall, unixSeconds } from '../relay/webhook-fixtures';
import { DATABASE_HARNESSES, type FreshDatabase } from './database-harness';
import { collect, recordingLogger } from './records-fixtures';

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('a relay that keeps call records on %s', (_name, make) => {
  const harness = make();
  const { agents, tokens } = team('alice', 'bob');
  let fresh: FreshDatabase;
  let records: CallRecords;
  let relay: RelayServer;
  const stored: RelayEnvelope[] = [];

  beforeAll(async () => {
    await harness.setup();
    fresh = await harness.fresh();
    records = new CallRecords({ database: () => fresh.connect(), logger: recordingLogger(), writer: { flushIntervalMs: 5 } });
    relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, records, logger: recordingLogger() });
    relay.onEvent((envelope) => stored.push(envelope));
  }, 60_000);
  afterAll(async () => {
    await relay?.close();
    await records?.close();
    await fresh?.drop();
    await harness.teardown();
  }, 60_000);

  /** Resolves once the relay has stored an event of this call of this type. */
  const storedEvent = async (callId: string, type: string) => {
    const deadline = Date.now() + 5_000;
    while (!stored.some((e) => e.event.type === type && 'callId' in e.event && e.event.callId === callId)) {
      if (Date.now() > deadline) throw new Error(`${type} of ${callId} was not stored`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  it('says how its records go in /healthz: the database, facts waiting in memory and in the journal, written, dropped', async () => {
    expect((await postWebhook(relay.url, incomingCall('wacid.relay-health'))).status).toBe(200);
    await storedEvent('wacid.relay-health', 'call.incoming');
    expect(await records.flush()).toBe(true);
    const health = await fetch(`${relay.url}/healthz`);
    expect(health.status).toBe(200);
    const body = (await health.json()) as { records?: unknown };
    expect(body).toMatchObject({ status: 'ok', records: { database: 'up', queued: 0, journaled: 0, written: expect.any(Number), dropped: 0 } });
    expect(body.records).toEqual(records.status());
    expect(records.status().written).toBeGreaterThan(0);
  });

  it('records calls, claims, declines and presence as the relay handles them, once however often the service retries', async () => {
    expect((await putPresence(relay.url, tokens.alice!, { status: 'available' })).status).toBe(200);
    expect((await putPresence(relay.url, tokens.bob!, { status: 'available' })).status).toBe(200);

    // Answered by alice after bob declined.
    const answeredAt = Date.now();
    expect((await postWebhook(relay.url, incomingCall('wacid.relay-1'))).status).toBe(200);
    await storedEvent('wacid.relay-1', 'call.incoming');
    expect((await declineCall(relay.url, tokens.bob!, 'wacid.relay-1')).body).toMatchObject({ othersRinging: 1 });
    expect((await claimCall(relay.url, tokens.alice!, 'wacid.relay-1')).status).toBe(200);
    const ended = terminatedCall('wacid.relay-1', { start_time: unixSeconds(answeredAt), end_time: unixSeconds(answeredAt + 42_000), duration: 42 });
    expect((await postWebhook(relay.url, ended)).status).toBe(200);
    expect((await postWebhook(relay.url, ended)).status).toBe(200);
    await storedEvent('wacid.relay-1', 'call.terminated');

    // The customer hangs up while it rings.
    expect((await postWebhook(relay.url, incomingCall('wacid.relay-2'))).status).toBe(200);
    await storedEvent('wacid.relay-2', 'call.incoming');
    expect((await postWebhook(relay.url, terminatedCall('wacid.relay-2'))).status).toBe(200);
    await storedEvent('wacid.relay-2', 'call.terminated');

    // alice dials out; the customer rejects it.
    expect((await putPresence(relay.url, tokens.alice!, { status: 'on_call' })).status).toBe(200);
    expect((await claimCall(relay.url, tokens.alice!, 'wacid.relay-3')).status).toBe(200);
    expect((await postWebhook(relay.url, callStatus('wacid.relay-3', 'RINGING'))).status).toBe(200);
    expect((await postWebhook(relay.url, callStatus('wacid.relay-3', 'REJECTED'))).status).toBe(200);
    expect((await postWebhook(relay.url, terminatedCall('wacid.relay-3', { direction: 'BUSINESS_INITIATED' }))).status).toBe(200);
    await storedEvent('wacid.relay-3', 'call.terminated');
    // The app's refresh of an unchanged presence is no change of state.
    expect((await putPresence(relay.url, tokens.alice!, { status: 'on_call' })).status).toBe(200);

    await relay.close();
    expect(await records.flush()).toBe(true);
    const db = await records.database();
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
