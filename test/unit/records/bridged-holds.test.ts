// A bridged call's holds reach its record: the agent holds and resumes through the relay's endpoint
// (BRIDGE_AGENT_PATHS.hold), the bridge takes each, and the record's hold time is what the customer
// spent on the music; talk time is the service's duration less it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalNodeEvents, localBridge } from '../../../relay/bridged-calls';
import { CallRecords } from '../../../relay/records/call-records';
import { callById } from '../../../relay/records/records-queries';
import { startRelay, type RelayServer } from '../../../relay/server';
import { BRIDGE_AGENT_PATHS } from '../../../shared/bridge';
import { claimCall, team } from '../relay/agent-fixtures';
import { RecordingBridge } from '../relay/transfer-fixtures';
import { APP_SECRET, incomingCall, postWebhook, terminatedCall, unixSeconds } from '../relay/webhook-fixtures';
import { DATABASE_HARNESSES, type FreshDatabase } from './database-harness';
import { recordingLogger } from './records-fixtures';

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('a bridged call’s holds in the records on %s', (_name, make) => {
  const harness = make();
  const { agents, tokens } = team('alice');
  let fresh: FreshDatabase;
  let records: CallRecords;
  let relay: RelayServer;

  beforeAll(async () => {
    await harness.setup();
    fresh = await harness.fresh();
    records = new CallRecords({ database: () => fresh.connect(), logger: recordingLogger(), writer: { flushIntervalMs: 5 } });
    relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, records, logger: recordingLogger(), bridgeNodes: localBridge(new RecordingBridge(), 'local', new LocalNodeEvents()) });
  }, 60_000);
  afterAll(async () => {
    await relay?.close();
    await records?.close();
    await fresh?.drop();
    await harness.teardown();
  }, 60_000);

  const ask = async (path: string, body?: unknown) => {
    const res = await fetch(`${relay.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.alice!}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('counts each hold the bridge took until its resume, and a refused hold not at all', async () => {
    const callId = 'wacid.held-1';
    expect((await postWebhook(relay.url, incomingCall(callId))).status).toBe(200);
    const leg = await ask(BRIDGE_AGENT_PATHS.leg(callId));
    expect(leg.status).toBe(200);
    expect((await claimCall(relay.url, tokens.alice!, callId)).status).toBe(200);
    expect((await ask(BRIDGE_AGENT_PATHS.answer(callId), { legId: leg.body.legId, sdp: 'window-answer' })).status).toBe(200);
    expect((await ask(BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
    const answeredAt = Date.now();
    // A hold of another call is refused, and is no hold of this one.
    expect((await ask(BRIDGE_AGENT_PATHS.hold('wacid.none'), { held: true })).status).toBe(404);
    const heldAt = Date.now();
    expect((await ask(BRIDGE_AGENT_PATHS.hold(callId), { held: true })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await ask(BRIDGE_AGENT_PATHS.hold(callId), { held: false })).status).toBe(200);
    const resumedAt = Date.now();
    const ended = terminatedCall(callId, { start_time: unixSeconds(answeredAt), end_time: unixSeconds(answeredAt + 30_000), duration: 30 });
    expect((await postWebhook(relay.url, ended)).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await records.flush()).toBe(true);
    const call = await callById(await records.database(), callId);
    expect(call).toMatchObject({ outcome: 'answered', agentId: 'alice' });
    expect(call?.holdMs).toBeGreaterThanOrEqual(400);
    expect(call?.holdMs).toBeLessThanOrEqual(resumedAt - heldAt);
    expect(call?.talkMs).toBe(30_000 - call!.holdMs!);
  }, 30_000);
});
