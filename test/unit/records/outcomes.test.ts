// Every outcome of a call, and what its record says, from the events the relay handles (shared/events.ts),
// the claims and the declines, written to a real PostgreSQL and to PGlite.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallRecords } from '../../../relay/records/call-records';
import type { CallRecord } from '../../../relay/records/call-record';
import { claimedFact } from '../../../relay/records/call-facts';
import { callById } from '../../../relay/records/records-queries';
import { RecordsWriter } from '../../../relay/records/records-writer';
import type { Database } from '../../../relay/records/database';
import { DATABASE_HARNESSES, type FreshDatabase } from './database-harness';
import { answered, claim, CUSTOMER, BUSINESS, decline, incoming, play, recordingLogger, status, T0, terminated, voicemail, type Step } from './records-fixtures';

const MIN = 60_000;

interface Scenario {
  name: string;
  steps: (callId: string, t: number) => Step[];
  expected: (t: number) => Partial<CallRecord>;
  /** Fields the record must not have. */
  absent?: (keyof CallRecord)[];
}

const bridgeFailed = (callId: string, at: number, agentId: string): Step => ({
  at,
  event: { type: 'call.bridge_failed', callId, reason: 'node_gone', timestamp: at },
  audience: { kind: 'agent', agentId },
});
const transferRing = (callId: string, at: number, transferId: string, to: string, by: string, kind: 'transfer' | 'consult' = 'transfer'): Step => ({
  at,
  event: { type: 'call.transfer_ring', callId, transferId, kind, by: { agentId: by, name: by }, from: CUSTOMER, legId: `leg-${to}`, sdp: 'v=0', timestamp: at },
  audience: { kind: 'agent', agentId: to },
});
const transferUpdate = (
  callId: string,
  at: number,
  transferId: string,
  agentId: string,
  state: 'ringing' | 'consulting' | 'transferred' | 'with_customer' | 'not_answered' | 'cancelled' | 'answered_elsewhere' | 'joined',
  options: { colleague?: string; reason?: 'declined' | 'no_answer'; kind?: 'transfer' | 'consult' } = {},
): Step => ({
  at,
  event: {
    type: 'call.transfer_update',
    callId,
    transferId,
    kind: options.kind ?? 'transfer',
    agentId,
    state,
    ...(options.colleague !== undefined ? { colleague: { agentId: options.colleague, name: options.colleague } } : {}),
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
    timestamp: at,
  },
  audience: { kind: 'agent', agentId },
});

const SCENARIOS: Scenario[] = [
  {
    name: 'answered: an agent answers a customer',
    steps: (c, t) => [incoming(c, t, ['alice', 'bob']), claim(c, 'alice', t + 4_000), terminated(c, t + 64_000, { answeredAt: t + 4_500 })],
    expected: (t) => ({
      direction: 'incoming',
      outcome: 'answered',
      agentId: 'alice',
      customer: CUSTOMER,
      customerName: 'Ada Customer',
      businessNumber: BUSINESS,
      rungAgents: ['alice', 'bob'],
      declinedAgents: [],
      startedAt: t,
      rangAt: t,
      answeredAt: t + 4_000,
      endedAt: t + 64_000,
      waitMs: 4_000,
      talkMs: 60_000,
      endStatus: 'COMPLETED',
    }),
    absent: ['holdMs', 'errorCode', 'voicemailAt', 'disposition', 'notes'],
  },
  {
    name: 'abandoned: the customer hangs up while it rings',
    steps: (c, t) => [incoming(c, t, ['alice']), terminated(c, t + 5_000)],
    expected: (t) => ({ outcome: 'abandoned', waitMs: 5_000, endedAt: t + 5_000, rungAgents: ['alice'] }),
    absent: ['answeredAt', 'talkMs', 'agentId'],
  },
  {
    name: 'abandoned: the customer hangs up after 40 s of ringing, well before the service would give up',
    steps: (c, t) => [incoming(c, t, ['alice']), terminated(c, t + 40_000)],
    expected: () => ({ outcome: 'abandoned', waitMs: 40_000 }),
  },
  {
    name: 'missed: nobody answers before the service gives up',
    steps: (c, t) => [incoming(c, t, ['alice', 'bob']), terminated(c, t + 60_000)],
    expected: () => ({ outcome: 'missed', waitMs: 60_000 }),
    absent: ['answeredAt', 'agentId'],
  },
  {
    name: 'missed: the service gives up on its own clock, a few seconds short of the app\'s ring timeout',
    steps: (c, t) => [incoming(c, t, ['alice']), terminated(c, t + 56_000)],
    expected: () => ({ outcome: 'missed' }),
  },
  {
    name: 'abandoned: a terminate the service retried late is timed on its own timestamp, not on its arrival',
    steps: (c, t) => [incoming(c, t, ['alice']), terminated(c, t + 58_000, { sentAt: t + 10_000 })],
    expected: () => ({ outcome: 'abandoned' }),
  },
  {
    name: 'abandoned: a terminate received on time and again as a late retry keeps its outcome and its end',
    steps: (c, t) => [incoming(c, t, ['alice']), terminated(c, t + 10_000), terminated(c, t + 57_000, { sentAt: t + 10_000 })],
    expected: (t) => ({ outcome: 'abandoned', endedAt: t + 10_000, waitMs: 10_000 }),
  },
  {
    name: 'missed: the customer left a voicemail, which the service offers only on a reject or a ring out',
    steps: (c, t) => [incoming(c, t, ['alice']), terminated(c, t + 20_000), voicemail(c, t + 45_000)],
    expected: (t) => ({ outcome: 'missed', voicemailAt: t + 45_000 }),
  },
  {
    name: 'missed: every agent rung declines',
    steps: (c, t) => [incoming(c, t, ['alice', 'bob']), decline(c, 'alice', t + 1_000, 1), decline(c, 'bob', t + 2_000, 0), terminated(c, t + 2_500)],
    expected: () => ({ outcome: 'missed', declinedAgents: ['alice', 'bob'], rungAgents: ['alice', 'bob'] }),
  },
  {
    name: 'abandoned, not missed: a decline while a colleague answers, then the customer hangs up',
    steps: (c, t) => [incoming(c, t, ['alice', 'bob']), claim(c, 'bob', t + 2_000), decline(c, 'alice', t + 2_100, 0, 'bob'), terminated(c, t + 3_000)],
    expected: () => ({ outcome: 'abandoned', declinedAgents: ['alice'], agentId: 'bob' }),
    absent: ['answeredAt'],
  },
  {
    name: 'answered: an outgoing call the customer answers',
    steps: (c, t) => [claim(c, 'alice', t), status(c, 'RINGING', t + 1_000), answered(c, t + 6_000), status(c, 'ACCEPTED', t + 6_500), terminated(c, t + 66_000, { answeredAt: t + 6_000 })],
    expected: (t) => ({ direction: 'outgoing', outcome: 'answered', agentId: 'alice', customer: CUSTOMER, startedAt: t, rangAt: t + 1_000, answeredAt: t + 6_000, waitMs: 6_000, talkMs: 60_000 }),
    absent: ['customerName', 'businessNumber'],
  },
  {
    name: 'no_answer: the customer rejects an outgoing call',
    steps: (c, t) => [claim(c, 'alice', t), status(c, 'RINGING', t + 1_000), status(c, 'REJECTED', t + 4_000), terminated(c, t + 4_200)],
    expected: () => ({ direction: 'outgoing', outcome: 'no_answer', waitMs: 4_200 }),
    absent: ['answeredAt', 'talkMs'],
  },
  {
    name: 'no_answer: the customer lets an outgoing call ring until the app gives up',
    steps: (c, t) => [claim(c, 'alice', t), status(c, 'RINGING', t + 1_000), terminated(c, t + 60_500)],
    expected: () => ({ direction: 'outgoing', outcome: 'no_answer' }),
  },
  {
    name: 'no_answer: an outgoing call that never rang the customer\'s phone until the app gave up',
    steps: (c, t) => [claim(c, 'alice', t), terminated(c, t + 60_000)],
    expected: () => ({ direction: 'outgoing', outcome: 'no_answer' }),
    absent: ['rangAt'],
  },
  {
    name: 'cancelled: the agent hangs up after 45 s of ringing, before the app would give up',
    steps: (c, t) => [claim(c, 'alice', t), status(c, 'RINGING', t + 1_000), terminated(c, t + 46_000)],
    expected: () => ({ direction: 'outgoing', outcome: 'cancelled' }),
  },
  {
    name: 'cancelled: an outgoing terminate the service retried late is timed on its own timestamp',
    steps: (c, t) => [claim(c, 'alice', t), status(c, 'RINGING', t + 1_000), terminated(c, t + 75_000, { sentAt: t + 8_000 })],
    expected: (t) => ({ direction: 'outgoing', outcome: 'cancelled', endedAt: t + 8_000 }),
  },
  {
    name: 'cancelled: the agent hangs up an outgoing call before the customer answers',
    steps: (c, t) => [claim(c, 'alice', t), status(c, 'RINGING', t + 1_000), terminated(c, t + 8_000)],
    expected: () => ({ direction: 'outgoing', outcome: 'cancelled', agentId: 'alice' }),
  },
  {
    name: 'failed: an outgoing call whose set-up fails',
    steps: (c, t) => [claim(c, 'alice', t), terminated(c, t + 20_000, { status: 'FAILED', errors: [{ code: 138021, message: 'Media receive timeout' }] })],
    expected: () => ({ direction: 'outgoing', outcome: 'failed', endStatus: 'FAILED', errorCode: 138021, errorMessage: 'Media receive timeout' }),
  },
  {
    name: 'failed: an incoming call whose accept the gateway refuses',
    steps: (c, t) => [incoming(c, t, ['alice']), claim(c, 'alice', t + 3_000), terminated(c, t + 4_000, { status: 'FAILED', errors: [{ code: 138019, message: 'Call setup failed' }] })],
    expected: () => ({ outcome: 'failed', agentId: 'alice', errorCode: 138019 }),
    absent: ['answeredAt', 'talkMs'],
  },
  {
    name: 'failed: an answered call whose media never started (138023), though the service gives it a start',
    steps: (c, t) => [incoming(c, t, ['alice']), claim(c, 'alice', t + 3_000), terminated(c, t + 25_000, { status: 'FAILED', answeredAt: t + 3_000, errors: [{ code: 138023, message: 'Accepted but no media' }] })],
    expected: () => ({ outcome: 'failed', agentId: 'alice', endStatus: 'FAILED', errorCode: 138023 }),
    absent: ['answeredAt', 'talkMs'],
  },
  {
    name: 'failed: an answered outgoing call that ended for no media at its start (138021)',
    steps: (c, t) => [claim(c, 'alice', t), status(c, 'RINGING', t + 1_000), answered(c, t + 5_000), terminated(c, t + 25_000, { status: 'FAILED', answeredAt: t + 5_000, errors: [{ code: 138021, message: 'Media receive timeout' }] })],
    expected: () => ({ direction: 'outgoing', outcome: 'failed', errorCode: 138021 }),
    absent: ['answeredAt', 'talkMs'],
  },
  {
    name: 'answered: a call that failed after the customer talked with the agent',
    steps: (c, t) => [incoming(c, t, ['alice']), claim(c, 'alice', t + 3_000), terminated(c, t + 33_000, { status: 'FAILED', answeredAt: t + 3_000, errors: [{ code: 138004, message: 'Connection error' }] })],
    expected: () => ({ outcome: 'answered', endStatus: 'FAILED', errorCode: 138004, talkMs: 30_000 }),
  },
  {
    name: 'in progress: answered, not ended yet',
    steps: (c, t) => [incoming(c, t, ['alice']), claim(c, 'alice', t + 2_000)],
    expected: (t) => ({ direction: 'incoming', agentId: 'alice', answeredAt: t + 2_000, waitMs: 2_000 }),
    absent: ['outcome', 'endedAt', 'talkMs'],
  },
  {
    name: 'a voicemail: the customer leaves a message after a missed call',
    steps: (c, t) => [incoming(c, t, ['alice']), terminated(c, t + 60_000), voicemail(c, t + 70_000, 'media-voicemail-1')],
    expected: (t) => ({ outcome: 'missed', voicemailAt: t + 70_000, voicemailMediaId: 'media-voicemail-1' }),
  },
  {
    name: "a voice_call head start: the colleagues held back never rang when the preferred agent answered in time",
    steps: (c, t) => [incoming(c, t, ['alice', 'bob', 'carol'], { kind: 'ringing', preferredAgentId: 'alice', releaseAt: t + 10_000 }), claim(c, 'alice', t + 4_000), terminated(c, t + 30_000, { answeredAt: t + 4_000 })],
    expected: () => ({ outcome: 'answered', rungAgents: ['alice'] }),
  },
  {
    name: 'a voice_call head start that ran out: everyone rang',
    steps: (c, t) => [incoming(c, t, ['alice', 'bob', 'carol'], { kind: 'ringing', preferredAgentId: 'alice', releaseAt: t + 10_000 }), claim(c, 'bob', t + 15_000), terminated(c, t + 40_000, { answeredAt: t + 15_000 })],
    expected: () => ({ outcome: 'answered', agentId: 'bob', rungAgents: ['alice', 'bob', 'carol'], waitMs: 15_000 }),
  },
  {
    name: 'a transfer: the agent hands the customer to a colleague',
    steps: (c, t) => [
      incoming(c, t, ['alice']),
      claim(c, 'alice', t + 2_000),
      transferRing(c, t + 20_000, 'tr-1', 'bob', 'alice'),
      transferUpdate(c, t + 20_001, 'tr-1', 'alice', 'ringing', { colleague: 'bob' }),
      transferUpdate(c, t + 25_000, 'tr-1', 'alice', 'transferred', { colleague: 'bob' }),
      terminated(c, t + 90_000, { answeredAt: t + 2_000 }),
    ],
    expected: (t) => ({
      outcome: 'answered',
      agentId: 'alice',
      rungAgents: ['alice', 'bob'],
      transfers: [{ transferId: 'tr-1', kind: 'transfer', by: 'alice', at: t + 20_000, rung: ['bob'], answeredBy: 'bob', result: 'transferred' }],
    }),
  },
  {
    name: 'a consult nobody took: both colleagues declined',
    steps: (c, t) => [
      incoming(c, t, ['alice']),
      claim(c, 'alice', t + 2_000),
      transferRing(c, t + 20_000, 'tr-2', 'bob', 'alice', 'consult'),
      transferRing(c, t + 20_000, 'tr-2', 'carol', 'alice', 'consult'),
      transferUpdate(c, t + 20_001, 'tr-2', 'alice', 'ringing', { kind: 'consult' }),
      transferUpdate(c, t + 24_000, 'tr-2', 'alice', 'not_answered', { kind: 'consult', reason: 'declined' }),
      terminated(c, t + 60_000, { answeredAt: t + 2_000 }),
    ],
    expected: (t) => ({ transfers: [{ transferId: 'tr-2', kind: 'consult', by: 'alice', at: t + 20_000, rung: ['bob', 'carol'], result: 'not_answered', reason: 'declined' }] }),
  },
  {
    name: 'the bridge lost the call: its reason is kept',
    steps: (c, t) => [incoming(c, t, ['alice']), claim(c, 'alice', t + 2_000), bridgeFailed(c, t + 30_000, 'alice'), terminated(c, t + 31_000, { status: 'FAILED', answeredAt: t + 2_000 })],
    expected: () => ({ outcome: 'answered', bridgeFailure: 'node_gone', endStatus: 'FAILED' }),
  },
  {
    name: 'a terminate before its connect (the connect then dropped as tombstoned): still the customer who hung up',
    steps: (c, t) => [terminated(c, t + 4_000), { ...incoming(c, t, ['alice']), stored: false }],
    expected: (t) => ({ direction: 'incoming', outcome: 'abandoned', rangAt: t, rungAgents: [] }),
  },
];

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('call outcomes on %s', (_name, make) => {
  const harness = make();
  const clock = { now: T0 };
  let fresh: FreshDatabase;
  let records: CallRecords;
  let db: Database;

  beforeAll(async () => {
    await harness.setup();
    fresh = await harness.fresh();
    records = new CallRecords({ database: () => fresh.connect(), logger: recordingLogger(), now: () => clock.now, writer: { flushIntervalMs: 5 } });
    db = await records.database();
  }, 60_000);
  afterAll(async () => {
    await records?.close();
    await fresh?.drop();
    await harness.teardown();
  }, 60_000);

  it.each(SCENARIOS.map((s, i) => [s.name, s, i] as const))('%s', async (_title, scenario, i) => {
    const callId = `wacid.outcome-${i}`;
    const t = T0 + i * 10 * MIN;
    for (const step of scenario.steps(callId, t)) play(records, clock, step);
    expect(await records.flush()).toBe(true);
    const record = await callById(db, callId);
    expect(record).toMatchObject({ callId, ...scenario.expected(t) });
    for (const field of scenario.absent ?? []) expect(record, field).not.toHaveProperty(field);
  });

  it("a NUL in what a webhook said is left out; a fact the database refuses costs only itself, and the log says so", async () => {
    const log = recordingLogger();
    const clock2 = { now: T0 };
    const own = new CallRecords({ database: () => fresh.connect(), logger: log, now: () => clock2.now, writer: { flushIntervalMs: 5 } });
    const named: Step = { ...incoming('wacid.nul-name', T0, ['alice']) };
    if ('event' in named && named.event.type === 'call.incoming') named.event = { ...named.event, name: 'Ada\u0000 Customer' };
    for (const step of [named, incoming('wacid.bad\u0000id', T0, ['alice']), incoming('wacid.good-neighbour', T0, ['alice'])]) play(own, clock2, step);
    expect(await own.flush()).toBe(true);
    expect(await callById(db, 'wacid.nul-name')).toMatchObject({ customerName: 'Ada Customer' });
    expect(await callById(db, 'wacid.good-neighbour')).toMatchObject({ direction: 'incoming', rungAgents: ['alice'] });
    expect(own.stats()).toMatchObject({ queued: 0, dropped: 2 });
    expect(log.lines.filter((l) => l.level === 'error' && l.msg === 'the records database refused a fact: it is dropped').map((l) => l.fields?.kind)).toEqual(['incoming', 'rung']);
    await own.close();
  });

  it('a ring is one fact however many agents it rang; a transfer rings each colleague with a fact of its own', async () => {
    const callId = 'wacid.one-ring-fact';
    const t = T0 + 500 * MIN;
    const steps = [
      incoming(callId, t, ['alice', 'bob', 'carol'], { kind: 'ringing', preferredAgentId: 'alice', releaseAt: t + 10_000 }),
      claim(callId, 'alice', t + 4_000),
      transferRing(callId, t + 20_000, 'tr-9', 'bob', 'alice', 'consult'),
      transferRing(callId, t + 20_000, 'tr-9', 'carol', 'alice', 'consult'),
    ];
    for (const step of steps) play(records, clock, step);
    expect(await records.flush()).toBe(true);
    const rows = await db.query<{ agent_id: string; ref: string; data: unknown }>("SELECT agent_id, ref, data FROM call_facts WHERE call_id = $1 AND kind = 'rung' ORDER BY agent_id, ref", [callId]);
    expect(rows).toEqual([
      { agent_id: '', ref: '', data: { agents: ['alice'], heldBack: { agents: ['bob', 'carol'], ringsAt: t + 10_000 } } },
      { agent_id: 'bob', ref: 'tr-9', data: { by: 'alice', transferKind: 'consult' } },
      { agent_id: 'carol', ref: 'tr-9', data: { by: 'alice', transferKind: 'consult' } },
    ]);
    expect(await callById(db, callId)).toMatchObject({ rungAgents: ['alice', 'bob', 'carol'], transfers: [{ transferId: 'tr-9', rung: ['bob', 'carol'] }] });
  });

  it('times a webhook gives that no date holds are no times: the receipt stands for the event, a start or a duration is left out', async () => {
    const callId = 'wacid.far-future';
    const t = T0 + 510 * MIN;
    const ended: Step = { at: t + 5_000, event: { type: 'call.terminated', callId, status: 'COMPLETED', timestamp: 1e20, startTime: 1e20, endTime: Number.NaN, durationSec: 1e12 } };
    for (const step of [incoming(callId, t, ['alice']), ended]) play(records, clock, step);
    expect(await records.flush()).toBe(true);
    expect(await callById(db, callId)).toMatchObject({ outcome: 'abandoned', endedAt: t + 5_000, waitMs: 5_000 });
  });

  it('a fact that JavaScript cannot turn into a row (a RangeError, not the database) costs only itself; the queue goes on', async () => {
    const log = recordingLogger();
    const writer = new RecordsWriter({ connect: () => fresh.connect(), instanceId: 'test', logger: log, flushIntervalMs: 5, retryMinMs: 20, retryMaxMs: 100 });
    const t = T0 + 520 * MIN;
    writer.push([
      { kind: 'call', fact: claimedFact('wacid.no-date', 'alice', Number.NaN) },
      { kind: 'call', fact: claimedFact('wacid.after-no-date', 'alice', t) },
    ]);
    expect(await writer.flush(10_000)).toBe(true);
    expect(writer.stats()).toMatchObject({ queued: 0, dropped: 1, connected: true });
    expect(await callById(db, 'wacid.after-no-date')).toMatchObject({ direction: 'outgoing', agentId: 'alice', startedAt: t });
    expect(log.lines.filter((l) => l.level === 'error').map((l) => [l.msg, l.fields?.callId])).toEqual([['the records database refused a fact: it is dropped', 'wacid.no-date']]);
    expect(log.said(/cannot be reached/)).toBe(0);
    await writer.close(1_000);
  });

  it('an audio message that names no call makes no call', async () => {
    play(records, clock, voicemail('wamid.just-a-voice-note', T0));
    expect(await records.flush()).toBe(true);
    expect(await callById(db, 'wamid.just-a-voice-note')).toBeUndefined();
    const facts = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM call_facts WHERE call_id = 'wamid.just-a-voice-note'");
    expect(facts[0]!.n).toBe(1);
  });
});
