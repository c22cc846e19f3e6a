// A bridged call's holds reach its record: the agent holds and resumes through the relay's endpoint
// (BRIDGE_AGENT_PATHS.hold), the bridge takes each, and the record's hold time is what the customer
// spent on the music; talk time is the service's duration less it.
import { describe, expect, it } from 'vitest';
import { LocalNodeEvents, localBridge } from '../../../relay/bridged-calls';
import { callById } from '../../../relay/records/records-queries';
import { BRIDGE_AGENT_PATHS } from '../../../shared/bridge';
import { claimCall, postAsAgent, team } from '../relay/agent-fixtures';
import { RecordingBridge } from '../relay/transfer-fixtures';
import { incomingCall, postWebhook, terminatedCall, unixSeconds } from '../relay/webhook-fixtures';
import { relayWithRecords } from './relay-with-records';
import { DATABASE_HARNESSES } from './database-harness';

describe.each(DATABASE_HARNESSES.map((make) => [make().name, make] as const))('a bridged call’s holds in the records on %s', (_name, make) => {
  const { agents, tokens } = team('alice');
  const t = relayWithRecords(make, { agents, bridgeNodes: localBridge(new RecordingBridge(), 'local', new LocalNodeEvents()) });

  const ask = (path: string, body?: unknown) => postAsAgent(t.relay().url, tokens.alice!, path, body);


  it('counts each hold the bridge took until its resume, and a refused hold not at all', async () => {
    const callId = 'wacid.held-1';
    expect((await postWebhook(t.relay().url, incomingCall(callId))).status).toBe(200);
    const leg = await ask(BRIDGE_AGENT_PATHS.leg(callId));
    expect(leg.status).toBe(200);
    expect((await claimCall(t.relay().url, tokens.alice!, callId)).status).toBe(200);
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
    expect((await postWebhook(t.relay().url, ended)).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await t.records().flush()).toBe(true);
    const call = await callById(await t.records().database(), callId);
    expect(call).toMatchObject({ outcome: 'answered', agentId: 'alice' });
    expect(call?.holdMs).toBeGreaterThanOrEqual(400);
    expect(call?.holdMs).toBeLessThanOrEqual(resumedAt - heldAt);
    expect(call?.talkMs).toBe(30_000 - call!.holdMs!);
  }, 30_000);
});
