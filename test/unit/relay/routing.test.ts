import { afterEach, describe, expect, it } from 'vitest';
import { configureLogging } from '../../../shared/log';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { claimCall, declineCall, eventKeys, hasEvent, hasMessage, putPresence, team } from './agent-fixtures';
import { openSse, type SseOpenOptions, type TestSseStream } from './sse-test-client';
import { APP_SECRET, answeredCall, callStatus, inboundText, incomingCall, postWebhook, terminatedCall } from './webhook-fixtures';

configureLogging({ level: 'error' });

const { agents, tokens } = team('alice', 'bob', 'carol', 'dave');
const relays: RelayServer[] = [];
const streams: TestSseStream[] = [];

afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await Promise.all(relays.splice(0).map((r) => r.close()));
});

async function relayWith(options: Partial<RelayOptions> = {}): Promise<RelayServer> {
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, ...options });
  relays.push(relay);
  return relay;
}

async function connect(relay: RelayServer, agentId: string, options: Omit<SseOpenOptions, 'token'> = {}): Promise<TestSseStream> {
  const stream = await openSse(relay.url, { token: tokens[agentId], ...options });
  expect(stream.status).toBe(200);
  streams.push(stream);
  return stream;
}

let markers = 0;
/** Posts a message and waits until every stream has it: whatever was posted before has been routed by then. */
async function settle(relay: RelayServer, ...on: TestSseStream[]): Promise<string> {
  markers += 1;
  const id = `wamid.marker-${markers}`;
  expect((await postWebhook(relay.url, inboundText(id, 'marker'))).status).toBe(200);
  await Promise.all(on.map((s) => s.waitFor(hasMessage(id), `marker ${id}`)));
  return `message.inbound:${id}`;
}

const voiceCallPayload = (agentId: string) => JSON.stringify({ v: 1, agentId });

describe('relay: claims', () => {
  it('lets the first claim win; the loser gets 409 and the answered-elsewhere event; later events reach only the owner', async () => {
    const relay = await relayWith();
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    await postWebhook(relay.url, incomingCall('wacid.claim1'));
    await alice.waitFor(hasEvent('call.incoming:wacid.claim1'), 'alice rings');
    await bob.waitFor(hasEvent('call.incoming:wacid.claim1'), 'bob rings');

    expect(await claimCall(relay.url, tokens.alice!, 'wacid.claim1')).toEqual({ status: 200, body: { callId: 'wacid.claim1', agentId: 'alice' } });
    expect(await claimCall(relay.url, tokens.bob!, 'wacid.claim1')).toEqual({
      status: 409,
      body: { error: { code: 'already_claimed', message: 'Answered by another agent', agentId: 'alice' } },
    });
    // The winner claiming again (a retry) still wins, and stores nothing new.
    expect((await claimCall(relay.url, tokens.alice!, 'wacid.claim1')).status).toBe(200);

    await bob.waitFor(hasEvent('call.claimed:wacid.claim1'), 'the answered-elsewhere event at the loser');
    const claimed = bob.envelopes.find((e) => e.event.type === 'call.claimed')!.event;
    expect(claimed).toMatchObject({ type: 'call.claimed', callId: 'wacid.claim1', agentId: 'alice' });

    await postWebhook(relay.url, terminatedCall('wacid.claim1'));
    const marker = await settle(relay, alice, bob);
    expect(eventKeys(alice)).toEqual(['call.incoming:wacid.claim1', 'call.claimed:wacid.claim1', 'call.terminated:wacid.claim1:COMPLETED', marker]);
    expect(eventKeys(bob)).toEqual(['call.incoming:wacid.claim1', 'call.claimed:wacid.claim1', marker]);
  });

  it('has exactly one winner among simultaneous claims', async () => {
    const relay = await relayWith();
    await postWebhook(relay.url, incomingCall('wacid.race'));
    const answers = await Promise.all(['alice', 'bob', 'carol', 'dave'].map((id) => claimCall(relay.url, tokens[id]!, 'wacid.race')));
    const winners = answers.filter((a) => a.status === 200);
    expect(winners).toHaveLength(1);
    const winner = (winners[0]!.body as { agentId: string }).agentId;
    for (const loser of answers.filter((a) => a.status !== 200)) {
      expect(loser).toEqual({ status: 409, body: { error: { code: 'already_claimed', message: 'Answered by another agent', agentId: winner } } });
    }
  });

  it("routes an outgoing call's answer only to the agent who claimed it", async () => {
    const relay = await relayWith();
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    // The app claims its own outgoing call as soon as initiate returns the call id.
    expect((await claimCall(relay.url, tokens.alice!, 'wacid.out1')).status).toBe(200);
    await postWebhook(relay.url, callStatus('wacid.out1', 'RINGING'));
    await postWebhook(relay.url, answeredCall('wacid.out1'));
    const marker = await settle(relay, alice, bob);
    expect(eventKeys(alice)).toEqual(['call.claimed:wacid.out1', 'call.status:wacid.out1:RINGING', 'call.answered:wacid.out1', marker]);
    // Nobody rang for it: nobody else hears of the claim either.
    expect(eventKeys(bob)).toEqual([marker]);
  });

  it('sends the events of an unclaimed outgoing call to everyone', async () => {
    const relay = await relayWith();
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    await postWebhook(relay.url, callStatus('wacid.out2', 'RINGING'));
    const marker = await settle(relay, alice, bob);
    expect(eventKeys(alice)).toEqual(['call.status:wacid.out2:RINGING', marker]);
    expect(eventKeys(bob)).toEqual(eventKeys(alice));
  });

  it('refuses claims without a valid token, with a bad call id, or with another method', async () => {
    const relay = await relayWith();
    expect((await claimCall(relay.url, 'not-a-token-at-all', 'wacid.x')).status).toBe(401);
    expect((await fetch(`${relay.url}/calls/wacid.x/claim`, { method: 'POST' })).status).toBe(401);
    const badEscape = await fetch(`${relay.url}/calls/%E0%A4%A/claim`, { method: 'POST', headers: { authorization: `Bearer ${tokens.alice}` } });
    expect(badEscape.status).toBe(400);
    expect(await badEscape.json()).toMatchObject({ error: { code: 'invalid_input', field: 'callId' } });
    const get = await fetch(`${relay.url}/calls/wacid.x/claim`, { headers: { authorization: `Bearer ${tokens.alice}` } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});

describe('relay: declines', () => {
  it('counts the colleagues who may still answer: available or connected, and not declined; the last one to decline is told none are left', async () => {
    const relay = await relayWith();
    await connect(relay, 'alice');
    await connect(relay, 'bob');
    // Carol is available (reported, not connected here); Dave reported do-not-disturb.
    expect((await putPresence(relay.url, tokens.carol!, { status: 'available' })).status).toBe(200);
    expect((await putPresence(relay.url, tokens.dave!, { status: 'dnd' })).status).toBe(200);
    await postWebhook(relay.url, incomingCall('wacid.decline1'));

    expect(await declineCall(relay.url, tokens.alice!, 'wacid.decline1')).toEqual({ status: 200, body: { callId: 'wacid.decline1', agentId: 'alice', othersRinging: 2 } });
    expect(await declineCall(relay.url, tokens.bob!, 'wacid.decline1')).toEqual({ status: 200, body: { callId: 'wacid.decline1', agentId: 'bob', othersRinging: 1 } });
    // Declining twice changes nothing.
    expect((await declineCall(relay.url, tokens.bob!, 'wacid.decline1')).body).toMatchObject({ othersRinging: 1 });
    expect(await declineCall(relay.url, tokens.carol!, 'wacid.decline1')).toEqual({ status: 200, body: { callId: 'wacid.decline1', agentId: 'carol', othersRinging: 0 } });
  });

  it('says who answered a call that a colleague has claimed, so that nobody rejects it', async () => {
    const relay = await relayWith();
    await postWebhook(relay.url, incomingCall('wacid.decline2'));
    expect((await claimCall(relay.url, tokens.bob!, 'wacid.decline2')).status).toBe(200);
    expect(await declineCall(relay.url, tokens.alice!, 'wacid.decline2')).toEqual({
      status: 200,
      body: { callId: 'wacid.decline2', agentId: 'alice', othersRinging: 0, answeredBy: 'bob' },
    });
  });

  it('refuses declines without a valid token, with a bad call id, or with another method', async () => {
    const relay = await relayWith();
    expect((await declineCall(relay.url, 'not-a-token', 'wacid.x')).status).toBe(401);
    expect(await declineCall(relay.url, tokens.alice!, 'x'.repeat(513))).toMatchObject({ status: 400, body: { error: { code: 'invalid_input', field: 'callId' } } });
    expect((await fetch(`${relay.url}/calls/wacid.x/decline`, { headers: { authorization: `Bearer ${tokens.alice!}` } })).status).toBe(405);
  });
});

describe('relay: presence', () => {
  it('answers 200 with the presence, and 400 naming the rule for anything else', async () => {
    const relay = await relayWith();
    for (const status of ['available', 'on_call', 'call_waiting', 'dnd', 'after_call_work']) {
      expect(await putPresence(relay.url, tokens.alice!, { status })).toEqual({ status: 200, body: { agentId: 'alice', status, since: expect.any(Number) } });
    }
    expect(await putPresence(relay.url, tokens.alice!, { status: 'break', reason: 'Lunch' })).toEqual({ status: 200, body: { agentId: 'alice', status: 'break', reason: 'Lunch', since: expect.any(Number) } });
    const invalid = {
      status: 400,
      body: { error: { code: 'invalid_input', message: 'status: must be one of available, on_call, call_waiting, dnd, break, after_call_work', field: 'status' } },
    };
    expect(await putPresence(relay.url, tokens.alice!, { status: 'away' })).toEqual(invalid);
    // Near misses of the new status are refused too.
    expect(await putPresence(relay.url, tokens.alice!, { status: 'call-waiting' })).toEqual(invalid);
    expect(await putPresence(relay.url, tokens.alice!, { status: 'CALL_WAITING' })).toEqual(invalid);
    expect(await putPresence(relay.url, tokens.alice!, {})).toEqual(invalid);
    expect(await putPresence(relay.url, tokens.alice!, 'not json')).toEqual(invalid);
    expect(await putPresence(relay.url, tokens.alice!, [1])).toEqual(invalid);
    expect((await putPresence(relay.url, 'wrong-token-123', { status: 'available' })).status).toBe(401);
    expect((await fetch(`${relay.url}/presence`, { method: 'POST' })).status).toBe(405);
  });

  it('rings available agents and agents without a reported presence, never agents on a call or on do-not-disturb', async () => {
    const relay = await relayWith();
    await putPresence(relay.url, tokens.alice!, { status: 'available' });
    await putPresence(relay.url, tokens.bob!, { status: 'dnd' });
    await putPresence(relay.url, tokens.carol!, { status: 'on_call' });
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    const carol = await connect(relay, 'carol');
    const dave = await connect(relay, 'dave');
    await postWebhook(relay.url, incomingCall('wacid.p1'));
    const marker = await settle(relay, alice, bob, carol, dave);
    expect(eventKeys(alice)).toEqual(['call.incoming:wacid.p1', marker]);
    expect(eventKeys(dave)).toEqual(['call.incoming:wacid.p1', marker]);
    expect(eventKeys(bob)).toEqual([marker]);
    expect(eventKeys(carol)).toEqual([marker]);

    // Back from do-not-disturb: the next call rings.
    await putPresence(relay.url, tokens.bob!, { status: 'available' });
    await postWebhook(relay.url, incomingCall('wacid.p2'));
    const second = await settle(relay, bob, carol);
    expect(eventKeys(bob)).toEqual([marker, 'call.incoming:wacid.p2', second]);
    expect(eventKeys(carol)).toEqual([marker, second]);
  });

  it('rings an agent on one call who asked for call waiting, never one on a call without it', async () => {
    const relay = await relayWith();
    await putPresence(relay.url, tokens.alice!, { status: 'call_waiting' });
    await putPresence(relay.url, tokens.bob!, { status: 'on_call' });
    await putPresence(relay.url, tokens.carol!, { status: 'available' });
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    const carol = await connect(relay, 'carol');
    await postWebhook(relay.url, incomingCall('wacid.cw1'));
    const marker = await settle(relay, alice, bob, carol);
    expect(eventKeys(alice)).toEqual(['call.incoming:wacid.cw1', marker]);
    expect(eventKeys(carol)).toEqual(['call.incoming:wacid.cw1', marker]);
    expect(eventKeys(bob)).toEqual([marker]);

    // Alice took a second call (or turned the setting off): the next call no longer rings her.
    await putPresence(relay.url, tokens.alice!, { status: 'on_call' });
    await postWebhook(relay.url, incomingCall('wacid.cw2'));
    const second = await settle(relay, alice, carol);
    expect(eventKeys(alice)).toEqual(['call.incoming:wacid.cw1', marker, second]);
    expect(eventKeys(carol)).toEqual(['call.incoming:wacid.cw1', marker, 'call.incoming:wacid.cw2', second]);
  });

  it('rings a call_waiting agent and an available one together; when the available one claims, the other is told it was answered', async () => {
    const relay = await relayWith();
    await putPresence(relay.url, tokens.alice!, { status: 'call_waiting' });
    await putPresence(relay.url, tokens.bob!, { status: 'available' });
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    await postWebhook(relay.url, incomingCall('wacid.cw3'));
    await alice.waitFor(hasEvent('call.incoming:wacid.cw3'), 'alice rings during her call');
    await bob.waitFor(hasEvent('call.incoming:wacid.cw3'), 'bob rings');

    expect(await claimCall(relay.url, tokens.bob!, 'wacid.cw3')).toEqual({ status: 200, body: { callId: 'wacid.cw3', agentId: 'bob' } });
    await alice.waitFor(hasEvent('call.claimed:wacid.cw3'), 'the answered-elsewhere event at alice');
    expect(alice.envelopes.find((e) => e.event.type === 'call.claimed')!.event).toMatchObject({ callId: 'wacid.cw3', agentId: 'bob' });
    expect(await claimCall(relay.url, tokens.alice!, 'wacid.cw3')).toEqual({
      status: 409,
      body: { error: { code: 'already_claimed', message: 'Answered by another agent', agentId: 'bob' } },
    });
    // The claimed call stays bob's: its later events do not reach alice.
    await postWebhook(relay.url, terminatedCall('wacid.cw3'));
    const marker = await settle(relay, alice, bob);
    expect(eventKeys(alice)).toEqual(['call.incoming:wacid.cw3', 'call.claimed:wacid.cw3', marker]);
    expect(eventKeys(bob)).toEqual(['call.incoming:wacid.cw3', 'call.claimed:wacid.cw3', 'call.terminated:wacid.cw3:COMPLETED', marker]);
  });

  it('forgets a presence that is not refreshed', async () => {
    const relay = await relayWith({ presenceTtlMs: 1 });
    await putPresence(relay.url, tokens.bob!, { status: 'dnd' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const bob = await connect(relay, 'bob');
    await postWebhook(relay.url, incomingCall('wacid.ttl'));
    await bob.waitFor(hasEvent('call.incoming:wacid.ttl'), 'the call, once do-not-disturb has expired');
  });
});

describe('relay: voice_call routing', () => {
  it('rings the agent who sent the button at once and the others when its head start ends, with the held events in order', async () => {
    // Long enough for the marker to overtake the release on any machine; the order is what is checked.
    const relay = await relayWith({ preferredAgentReleaseMs: 1_500 });
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    await postWebhook(relay.url, incomingCall('wacid.v1', { cta_payload: voiceCallPayload('alice') }));
    await postWebhook(relay.url, callStatus('wacid.v1', 'RINGING'));
    const marker = await settle(relay, alice, bob);
    expect(eventKeys(alice)).toEqual(['call.incoming:wacid.v1', 'call.status:wacid.v1:RINGING', marker]);
    expect(eventKeys(bob)).toEqual([marker]);

    await bob.waitFor(hasEvent('call.status:wacid.v1:RINGING'), 'the released call at bob');
    expect(eventKeys(bob)).toEqual([marker, 'call.incoming:wacid.v1', 'call.status:wacid.v1:RINGING']);
    // Once released, the call's events reach everyone it rang, without holding.
    await postWebhook(relay.url, terminatedCall('wacid.v1'));
    const after = await settle(relay, alice, bob);
    expect(eventKeys(bob).slice(-2)).toEqual(['call.terminated:wacid.v1:COMPLETED', after]);
  });

  it('ends the head start at once when the agent who has it declines; nobody else can end it that way', async () => {
    // A head start far longer than this test: only the decline can release the call in time.
    const relay = await relayWith({ preferredAgentReleaseMs: 120_000 });
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    await postWebhook(relay.url, incomingCall('wacid.vd', { cta_payload: voiceCallPayload('alice') }));
    await alice.waitFor(hasEvent('call.incoming:wacid.vd'), 'alice rings');
    expect((await declineCall(relay.url, tokens.carol!, 'wacid.vd')).status).toBe(200);
    const marker = await settle(relay, alice, bob);
    expect(eventKeys(bob)).toEqual([marker]);

    expect((await declineCall(relay.url, tokens.alice!, 'wacid.vd')).body).toMatchObject({ othersRinging: 1 });
    await bob.waitFor(hasEvent('call.incoming:wacid.vd'), 'the released call at bob');
    expect(eventKeys(bob)).toEqual([marker, 'call.incoming:wacid.vd']);
  });

  it('never rings the others when the agent claims the call during its head start', async () => {
    const relay = await relayWith({ preferredAgentReleaseMs: 300 });
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    await postWebhook(relay.url, incomingCall('wacid.v2', { cta_payload: voiceCallPayload('alice') }));
    await alice.waitFor(hasEvent('call.incoming:wacid.v2'), 'alice rings');
    expect((await claimCall(relay.url, tokens.alice!, 'wacid.v2')).status).toBe(200);
    await alice.waitFor(hasEvent('call.claimed:wacid.v2'), 'alice sees her claim');
    // A later call with a later release: once bob has it, the first call's release has been decided.
    await postWebhook(relay.url, incomingCall('wacid.v3', { cta_payload: voiceCallPayload('alice') }));
    await bob.waitFor(hasEvent('call.incoming:wacid.v3'), 'the control call at bob');
    expect(eventKeys(bob)).toEqual(['call.incoming:wacid.v3']);
  });

  it('never rings the others when the call ends during the head start', async () => {
    const relay = await relayWith({ preferredAgentReleaseMs: 300 });
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    await postWebhook(relay.url, incomingCall('wacid.v4', { cta_payload: voiceCallPayload('alice') }));
    await postWebhook(relay.url, terminatedCall('wacid.v4'));
    await alice.waitFor(hasEvent('call.terminated:wacid.v4:COMPLETED'), 'alice hears the hang-up');
    await postWebhook(relay.url, incomingCall('wacid.v5', { cta_payload: voiceCallPayload('alice') }));
    await bob.waitFor(hasEvent('call.incoming:wacid.v5'), 'the control call at bob');
    expect(eventKeys(bob)).toEqual(['call.incoming:wacid.v5']);
  });

  it('rings everyone at once when the agent is not connected, not available, unknown, or the payload is not ours', async () => {
    const relay = await relayWith({ preferredAgentReleaseMs: 60_000 });
    const bob = await connect(relay, 'bob');
    await putPresence(relay.url, tokens.dave!, { status: 'dnd' });
    await connect(relay, 'dave');
    const payloads = [voiceCallPayload('carol'), voiceCallPayload('dave'), voiceCallPayload('mallory'), 'plain text', '{"agentId":7}', '[]'];
    for (const [i, cta_payload] of payloads.entries()) await postWebhook(relay.url, incomingCall(`wacid.e${i}`, { cta_payload }));
    const marker = await settle(relay, bob);
    expect(eventKeys(bob)).toEqual([...payloads.map((_, i) => `call.incoming:wacid.e${i}`), marker]);
  });

  it('gives no head start to an agent on a call with call waiting: it rings at once together with the team', async () => {
    // A head start far longer than this test: a call held for it would reach bob after the marker.
    const relay = await relayWith({ preferredAgentReleaseMs: 120_000 });
    await putPresence(relay.url, tokens.alice!, { status: 'call_waiting' });
    await putPresence(relay.url, tokens.carol!, { status: 'on_call' });
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    const carol = await connect(relay, 'carol');
    await postWebhook(relay.url, incomingCall('wacid.cwv1', { cta_payload: voiceCallPayload('alice') }));
    // An agent on a call without call waiting holds nothing back either, and is not rung.
    await postWebhook(relay.url, incomingCall('wacid.cwv2', { cta_payload: voiceCallPayload('carol') }));
    const marker = await settle(relay, alice, bob, carol);
    expect(eventKeys(alice)).toEqual(['call.incoming:wacid.cwv1', 'call.incoming:wacid.cwv2', marker]);
    expect(eventKeys(bob)).toEqual(['call.incoming:wacid.cwv1', 'call.incoming:wacid.cwv2', marker]);
    expect(eventKeys(carol)).toEqual([marker]);
    expect(bob.ids.at(-1)).not.toMatch(/~held~/);

    // Whoever claims first answers it; the other is told.
    expect((await claimCall(relay.url, tokens.bob!, 'wacid.cwv1')).status).toBe(200);
    await alice.waitFor(hasEvent('call.claimed:wacid.cwv1'), 'the answered-elsewhere event at alice');
  });

  it('rings a colleague on a call with call waiting when a head start ends, not one on a call without it', async () => {
    const relay = await relayWith({ preferredAgentReleaseMs: 300 });
    await putPresence(relay.url, tokens.bob!, { status: 'call_waiting' });
    await putPresence(relay.url, tokens.carol!, { status: 'on_call' });
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    const carol = await connect(relay, 'carol');
    await postWebhook(relay.url, incomingCall('wacid.cwv3', { cta_payload: voiceCallPayload('alice') }));
    await alice.waitFor(hasEvent('call.incoming:wacid.cwv3'), 'alice rings first');
    await bob.waitFor(hasEvent('call.incoming:wacid.cwv3'), 'the released call at bob');
    const marker = await settle(relay, alice, bob, carol);
    expect(eventKeys(bob)).toEqual(['call.incoming:wacid.cwv3', marker]);
    expect(eventKeys(carol)).toEqual([marker]);
  });

  it('routes no call by a payload the app did not write: unversioned, another version, or over 512 characters', async () => {
    const relay = await relayWith({ preferredAgentReleaseMs: 60_000 });
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    // bob is connected and available: the app's own payload would hold the call for him.
    const payloads = ['{"agentId":"bob"}', JSON.stringify({ v: 2, agentId: 'bob' }), JSON.stringify({ v: 1, agentId: 'bob', pad: 'x'.repeat(600) })];
    for (const [i, cta_payload] of payloads.entries()) await postWebhook(relay.url, incomingCall(`wacid.u${i}`, { cta_payload }));
    await postWebhook(relay.url, incomingCall('wacid.ours', { cta_payload: voiceCallPayload('bob') }));
    const marker = await settle(relay, alice, bob);
    expect(eventKeys(alice)).toEqual([...payloads.map((_, i) => `call.incoming:wacid.u${i}`), marker]);
    expect(eventKeys(bob)).toEqual([...payloads.map((_, i) => `call.incoming:wacid.u${i}`), 'call.incoming:wacid.ours', marker]);
  });

  it('keeps held events across a reconnect: the resumed session gets the released call exactly once', async () => {
    const relay = await relayWith({ preferredAgentReleaseMs: 1_000 });
    await connect(relay, 'alice');
    const carol = await connect(relay, 'carol');
    const bob = await connect(relay, 'bob');
    await postWebhook(relay.url, incomingCall('wacid.v6', { cta_payload: voiceCallPayload('alice') }));
    const marker = await settle(relay, bob, carol);
    // The id says the call is still held, so that a resume does not skip it.
    expect(bob.ids.at(-1)).toMatch(/~held~/);
    bob.close();

    const resumed = await connect(relay, 'bob', { lastEventId: bob.ids.at(-1) });
    await resumed.waitFor(hasEvent('call.incoming:wacid.v6'), 'the released call after the reconnect');
    const after = await settle(relay, resumed, carol);
    expect(eventKeys(bob)).toEqual([marker]);
    expect(eventKeys(resumed)).toEqual(['call.incoming:wacid.v6', after]);
    expect(resumed.ids.at(-1)).not.toMatch(/~held~/);
  });

  it('hands a held call to a session that resumes after the release', async () => {
    const relay = await relayWith({ preferredAgentReleaseMs: 300 });
    await connect(relay, 'alice');
    const carol = await connect(relay, 'carol');
    const bob = await connect(relay, 'bob');
    await postWebhook(relay.url, incomingCall('wacid.v7', { cta_payload: voiceCallPayload('alice') }));
    await postWebhook(relay.url, callStatus('wacid.v7', 'RINGING'));
    await settle(relay, bob, carol);
    const token = bob.ids.at(-1);
    bob.close();
    // Carol, connected all along, rings when the head start ends: bob was away then.
    await carol.waitFor(hasEvent('call.status:wacid.v7:RINGING'), 'the release at carol');
    const resumed = await connect(relay, 'bob', { lastEventId: token });
    await resumed.waitFor(hasEvent('call.status:wacid.v7:RINGING'), 'the held events at bob');
    const after = await settle(relay, resumed);
    expect(eventKeys(resumed)).toEqual(['call.incoming:wacid.v7', 'call.status:wacid.v7:RINGING', after]);
  });
});
