// The coordinator with a team relay: an incoming call is claimed before its accept, an outgoing one
// right after initiate (relay/README.md). Real servers: the gateway and the relay's contract.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CallCoordinator } from '../../../electron/core/call-coordinator';
import { GatewayClient } from '../../../electron/core/gateway-client';
import { HistoryStore } from '../../../electron/core/history-store';
import { RelayClient } from '../../../electron/core/relay-client';
import { ANSWERED_ELSEWHERE, type CallState } from '../../../shared/call-state';
import type { RelayEvent } from '../../../shared/events';
import { configureLogging } from '../../../shared/log';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { happyGateway, startFakeGateway, type FakeGateway } from './fake-gateway';
import { ALICE, BOB, startTeamRelay, type TeamRelay } from './team-relay';

configureLogging({ sink: () => undefined });

interface Team {
  relay: TeamRelay;
  dataDir: string;
  gateway: FakeGateway;
  claims: RelayClient;
  coordinator: CallCoordinator;
  history: HistoryStore;
  changes: CallState[];
  event(e: RelayEvent): void;
  ring(callId: string): string;
  /** What the relay and the gateway received, in one order. */
  timeline: string[];
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type LeftLive = { callId: string; action: 'reject' | 'terminate' };

async function team(options: { relayUrl?: string; claimTimeoutMs?: number; leftLive?: LeftLive[]; beforeStart?: (relay: TeamRelay) => void } = {}): Promise<Team> {
  const timeline: string[] = [];
  const relay = await startTeamRelay([ALICE, BOB]);
  const gateway = await startFakeGateway((req) => {
    timeline.push(`gateway ${req.path.split('/').pop()}`);
    return happyGateway(req);
  });
  const defaultClaim = relay.onClaim;
  relay.onClaim = (callId, agentId) => {
    timeline.push(`claim ${callId} by ${agentId}`);
    return defaultClaim(callId, agentId);
  };
  const dataDir = await mkdtemp(join(tmpdir(), 'softphone-claims-'));
  const client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: 'test-api-key-123', product: 'chatapp', terminateBackoffMs: 5, timeoutMs: 2_000 });
  const claims = new RelayClient({ url: options.relayUrl ?? relay.url, token: ALICE.token, claimTimeoutMs: options.claimTimeoutMs ?? 2_000 });
  const history = await HistoryStore.open({ dataDir });
  const coordinator = new CallCoordinator({ gateway: client, claims, gatewayUrl: gateway.baseUrl, dataDir, history, defaultCountry: 'GB' });
  const changes: CallState[] = [];
  coordinator.onCallChanged((c) => changes.push(c));
  if (options.leftLive) {
    // A previous run crashed with these calls live.
    const calls = options.leftLive.map((c) => ({ ...c, gatewayUrl: gateway.baseUrl }));
    await writeFile(join(dataDir, 'live-calls.json'), JSON.stringify({ version: 1, calls }));
  }
  options.beforeStart?.(relay);
  await coordinator.start();
  cleanups.push(async () => {
    await coordinator.shutdown();
    await claims.close();
    await client.close();
    await gateway.close();
    await relay.close();
    await history.flush();
    await rm(dataDir, { recursive: true, force: true });
  });
  let seq = 0;
  const event = (e: RelayEvent) => coordinator.applyRelayEvent({ id: `e-${++seq}`, receivedAt: Date.now(), event: e });
  return {
    relay,
    dataDir,
    gateway,
    claims,
    coordinator,
    history,
    changes,
    event,
    ring(callId) {
      event({ type: 'call.incoming', callId, from: '447400123456', name: 'Ada Lovelace', sdp: OFFER_SDP, timestamp: Date.now() });
      return `in:${callId}`;
    },
    timeline,
  };
}

async function until(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

const claimRequests = (t: Team) => t.relay.requests.filter((r) => r.path.endsWith('/claim')).map((r) => [r.path, r.agentId]);

describe('CallCoordinator with claims: incoming calls', () => {
  it('claims at Answer, before the accept, and accepts when the claim wins', async () => {
    const t = await team();
    const localId = t.ring('wacid.win');
    expect(await t.coordinator.answerCall(localId, ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(t.timeline).toEqual(['claim wacid.win by alice', 'gateway accept']);
    expect(t.gateway.requests[0]!.body).toMatchObject({ call_id: 'wacid.win', action: 'accept', session: { sdp_type: 'answer', sdp: ANSWER_SDP } });
    expect(t.relay.claims.get('wacid.win')).toBe('alice');
    expect(t.coordinator.call(localId)?.phase).toBe('connecting');
  });

  it('holds the answer while the claim is out, accepts once it wins, and only then answers the command', async () => {
    const t = await team();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    t.relay.onClaim = async (callId, agentId) => {
      await held;
      t.relay.claims.set(callId, agentId);
      return { status: 200, body: JSON.stringify({ callId, agentId }) };
    };
    const localId = t.ring('wacid.parallel');
    let answered: unknown = 'pending';
    const answering = t.coordinator.answerCall(localId, ANSWER_SDP).then((r) => (answered = r));
    expect(t.coordinator.call(localId)?.phase).toBe('answering');
    await until('the claim reaches the relay', () => claimRequests(t).length === 1);
    // The accept waits for the claim: nothing has gone to the gateway yet.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(t.gateway.requests).toEqual([]);
    expect((await t.coordinator.answerCall(localId, ANSWER_SDP)).ok).toBe(false); // a second Answer while waiting
    // The renderer holds the customer's candidates back until answerCall says the call is ours.
    expect(answered).toBe('pending');
    release();
    await answering;
    expect(answered).toEqual({ ok: true, value: null });
    expect(t.gateway.actions()).toEqual(['accept']);
  });

  it('ends the call as answered elsewhere when the claim answers 409, and sends no accept', async () => {
    const t = await team();
    t.relay.claims.set('wacid.lost', 'bob');
    const localId = t.ring('wacid.lost');
    expect(await t.coordinator.answerCall(localId, ANSWER_SDP)).toEqual({ ok: false, error: { code: 'answered_elsewhere', message: 'Answered by another agent', text: ANSWERED_ELSEWHERE } });
    // Answering again says the same.
    expect(await t.coordinator.answerCall(localId, ANSWER_SDP)).toEqual({ ok: false, error: { code: 'answered_elsewhere', message: 'Answered by another agent', text: ANSWERED_ELSEWHERE } });
    expect(t.coordinator.call(localId)).toMatchObject({ phase: 'ended', end: { kind: 'answered_elsewhere' }, durationSec: 0 });
    expect(t.changes.filter((c) => c.localId === localId).map((c) => c.phase)).toEqual(['ringing', 'answering', 'ended']);
    await t.coordinator.whenIdle();
    // Neither accept nor reject: the call is the colleague's now.
    expect(t.gateway.requests).toEqual([]);
    expect(t.history.entries()[0]).toMatchObject({ localId, outcome: 'answered_elsewhere' });
    // Hanging up afterwards is harmless and sends nothing either.
    expect((await t.coordinator.hangUp(localId)).ok).toBe(true);
    expect(t.gateway.requests).toEqual([]);
  });

  it.each([
    ['the relay is down', { relayUrl: 'http://127.0.0.1:9' }],
    ['the relay does not answer in time', { claimTimeoutMs: 100, hang: true }],
    ['the relay fails', { status: 503 }],
  ])('still accepts when the claim cannot be made: %s', async (_name, how: { relayUrl?: string; claimTimeoutMs?: number; hang?: boolean; status?: number }) => {
    const t = await team({ ...(how.relayUrl ? { relayUrl: how.relayUrl } : {}), ...(how.claimTimeoutMs ? { claimTimeoutMs: how.claimTimeoutMs } : {}) });
    if (how.hang) t.relay.onClaim = () => 'hang';
    if (how.status !== undefined) t.relay.onClaim = () => ({ status: how.status!, body: '{}' });
    const localId = t.ring('wacid.unknown');
    expect(await t.coordinator.answerCall(localId, ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(t.gateway.actions()).toEqual(['accept']);
    expect(t.coordinator.call(localId)?.phase).toBe('connecting');
  });

  it("stops ringing on another agent's call.claimed, without telling the gateway anything", async () => {
    const t = await team();
    const localId = t.ring('wacid.taken');
    t.event({ type: 'call.claimed', callId: 'wacid.taken', agentId: 'bob', timestamp: Date.now() });
    expect(t.coordinator.call(localId)).toMatchObject({ phase: 'ended', end: { kind: 'answered_elsewhere' } });
    await t.coordinator.whenIdle();
    expect(t.gateway.requests).toEqual([]);
    expect(claimRequests(t)).toEqual([]);
  });

  it("keeps answering when its own claim comes back as call.claimed, and sends the accept", async () => {
    const t = await team();
    await t.claims.me();
    const localId = t.ring('wacid.mine');
    const answering = t.coordinator.answerCall(localId, ANSWER_SDP);
    t.event({ type: 'call.claimed', callId: 'wacid.mine', agentId: 'alice', timestamp: Date.now() });
    expect(t.coordinator.call(localId)?.phase).toBe('answering');
    expect(await answering).toEqual({ ok: true, value: null });
    expect(t.gateway.actions()).toEqual(['accept']);
  });

  it("ends an answering call whose claim could not be made when another agent's claim is announced", async () => {
    const t = await team();
    await t.claims.me();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    t.relay.onClaim = async () => {
      await held;
      return { status: 503, body: '{}' };
    };
    const localId = t.ring('wacid.race');
    const answering = t.coordinator.answerCall(localId, ANSWER_SDP);
    await until('the claim reaches the relay', () => claimRequests(t).length === 1);
    t.event({ type: 'call.claimed', callId: 'wacid.race', agentId: 'bob', timestamp: Date.now() });
    expect(t.coordinator.call(localId)).toMatchObject({ phase: 'ended', end: { kind: 'answered_elsewhere' } });
    expect(await answering).toEqual({ ok: false, error: { code: 'answered_elsewhere', message: 'Answered by another agent', text: ANSWERED_ELSEWHERE } });
    release();
    await t.coordinator.whenIdle();
    expect(t.gateway.requests).toEqual([]);
  });

  it('hung up while the claim is out: rejects only if the claim shows the call is not a colleague’s', async () => {
    const t = await team();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    t.relay.onClaim = async (callId) => {
      await held;
      return callId === 'wacid.hang-lost'
        ? { status: 409, body: JSON.stringify({ error: { code: 'already_claimed', message: 'Answered by another agent', agentId: 'bob' } }) }
        : { status: 200, body: JSON.stringify({ callId, agentId: 'alice' }) };
    };
    const lost = t.ring('wacid.hang-lost');
    const answeringLost = t.coordinator.answerCall(lost, ANSWER_SDP);
    const won = t.ring('wacid.hang-won');
    await until('the claim reaches the relay', () => claimRequests(t).length === 1);
    expect(await t.coordinator.hangUp(lost)).toEqual({ ok: true, value: null });
    expect(t.coordinator.call(lost)).toMatchObject({ phase: 'ended', end: { kind: 'completed', by: 'agent' } });
    // Owed until the claim says whose the call is: a run after a crash would still end it.
    expect(t.coordinator.call(lost)).toMatchObject({ open: { waiting: 'claim', owed: 'reject' } });
    const answeringWon = t.coordinator.answerCall(won, ANSWER_SDP);
    await until('the second claim reaches the relay', () => claimRequests(t).length === 2);
    expect(await t.coordinator.hangUp(won)).toEqual({ ok: true, value: null });
    release();
    expect((await answeringLost).ok).toBe(false);
    expect((await answeringWon).ok).toBe(false);
    await t.coordinator.whenIdle();
    // No accept ever went out: the won call still rang at the gateway, so it is rejected; the lost one is the colleague's.
    expect(t.gateway.requests.map((r) => r.body)).toEqual([{ messaging_product: 'chatapp', call_id: 'wacid.hang-won', action: 'reject' }]);
    const live = JSON.parse(await readFile(join(t.dataDir, 'live-calls.json'), 'utf8')) as { calls: unknown[] };
    expect(live.calls).toEqual([]);
  });
});

describe('CallCoordinator with claims: declining in a team', () => {
  const declineRequests = (t: Team) => t.relay.requests.filter((r) => r.path.endsWith('/decline')).map((r) => [r.path, r.agentId]);

  it('declines here only while a colleague may still answer: the call stops ringing here, the gateway hears nothing', async () => {
    const t = await team();
    t.relay.presence.set('bob', 'available');
    const localId = t.ring('wacid.team-decline');
    expect(await t.coordinator.declineCall(localId)).toEqual({ ok: true, value: null });
    expect(t.coordinator.call(localId)).toMatchObject({ phase: 'ended', end: { kind: 'declined' } });
    await t.coordinator.whenIdle();
    expect(declineRequests(t)).toEqual([['/calls/wacid.team-decline/decline', 'alice']]);
    expect(t.gateway.requests).toEqual([]);
    expect(t.history.entries()[0]).toMatchObject({ localId, outcome: 'declined' });
  });

  it('rejects at the gateway when nobody else is left to answer', async () => {
    const t = await team();
    t.relay.presence.set('bob', 'dnd');
    const localId = t.ring('wacid.last-decline');
    expect(await t.coordinator.declineCall(localId)).toEqual({ ok: true, value: null });
    await t.coordinator.whenIdle();
    expect(t.gateway.requests.map((r) => r.body)).toEqual([{ messaging_product: 'chatapp', call_id: 'wacid.last-decline', action: 'reject' }]);
  });

  it('the last of the team to decline rejects it: the colleague who declined first did not', async () => {
    const t = await team();
    t.relay.presence.set('bob', 'available');
    t.relay.declines.set('wacid.both', new Set(['bob']));
    const localId = t.ring('wacid.both');
    await t.coordinator.declineCall(localId);
    await t.coordinator.whenIdle();
    expect(t.gateway.actions()).toEqual(['reject']);
  });

  it('sends nothing to the gateway when a colleague has already answered the call', async () => {
    const t = await team();
    t.relay.claims.set('wacid.taken-meanwhile', 'bob');
    const localId = t.ring('wacid.taken-meanwhile');
    await t.coordinator.declineCall(localId);
    await t.coordinator.whenIdle();
    expect(t.gateway.requests).toEqual([]);
  });

  it('leaves the call to ring for colleagues when the relay cannot be asked', async () => {
    const t = await team({ relayUrl: 'http://127.0.0.1:9' });
    const localId = t.ring('wacid.relay-down');
    expect(await t.coordinator.declineCall(localId)).toEqual({ ok: true, value: null });
    expect(t.coordinator.call(localId)).toMatchObject({ phase: 'ended', end: { kind: 'declined' } });
    await t.coordinator.whenIdle();
    expect(t.gateway.requests).toEqual([]);
  });
});

describe('CallCoordinator with claims: calls a crashed run left live', () => {
  it("ends only what is this agent's: rejects a ringing call nobody else may answer or one it won and let go, terminates its own call, leaves a colleague's alone", async () => {
    const t = await team({
      leftLive: [
        { callId: 'wacid.rang-alone', action: 'reject' },
        { callId: 'wacid.rang-team', action: 'reject' },
        { callId: 'wacid.mine', action: 'terminate' },
        { callId: 'wacid.theirs', action: 'terminate' },
        // Won, then let go before the accept went out: colleagues stopped ringing on the claim.
        { callId: 'wacid.won-let-go', action: 'reject' },
      ],
      beforeStart: (relay) => {
        relay.claims.set('wacid.mine', 'alice');
        relay.claims.set('wacid.won-let-go', 'alice');
        relay.claims.set('wacid.theirs', 'bob');
        // Bob is still there for the ringing call he has not declined.
        relay.presence.set('bob', 'available');
        relay.declines.set('wacid.rang-alone', new Set(['bob']));
      },
    });
    await t.coordinator.whenIdle();
    expect(t.gateway.requests.map((r) => r.body)).toEqual(
      expect.arrayContaining([
        { messaging_product: 'chatapp', call_id: 'wacid.rang-alone', action: 'reject' },
        { messaging_product: 'chatapp', call_id: 'wacid.mine', action: 'terminate' },
        { messaging_product: 'chatapp', call_id: 'wacid.won-let-go', action: 'reject' },
      ]),
    );
    expect(t.gateway.requests).toHaveLength(3);
    const live = JSON.parse(await readFile(join(t.dataDir, 'live-calls.json'), 'utf8')) as { calls: unknown[] };
    expect(live.calls).toEqual([]);
  });

  it('leaves the calls to the gateway when the relay cannot say whose they are', async () => {
    const t = await team({ relayUrl: 'http://127.0.0.1:9', leftLive: [{ callId: 'wacid.a', action: 'reject' }, { callId: 'wacid.b', action: 'terminate' }] });
    await t.coordinator.whenIdle();
    expect(t.gateway.requests).toEqual([]);
  });
});

describe('CallCoordinator with claims: outgoing calls', () => {
  it('claims the call right after initiate returns its id', async () => {
    const t = await team();
    const sent = await t.coordinator.startCall('+44 7400 123456', DIAL_OFFER_SDP);
    expect(sent.ok).toBe(true);
    if (!sent.ok) return;
    await t.coordinator.whenIdle();
    expect(t.timeline).toEqual(['gateway initiate', `claim ${sent.value.callId} by alice`]);
    expect(t.relay.claims.get(sent.value.callId)).toBe('alice');
  });

  it('goes on with the call when that claim fails', async () => {
    const t = await team({ relayUrl: 'http://127.0.0.1:9' });
    const sent = await t.coordinator.startCall('+44 7400 123456', DIAL_OFFER_SDP);
    await t.coordinator.whenIdle();
    expect(sent.ok).toBe(true);
    if (!sent.ok) return;
    // The claim only routes the call's events: its failure leaves nothing open and changes nothing.
    expect(t.coordinator.call(sent.value.localId)).toMatchObject({ phase: 'calling', callId: sent.value.callId });
    expect(t.coordinator.call(sent.value.localId)).not.toHaveProperty('open');
  });
});
