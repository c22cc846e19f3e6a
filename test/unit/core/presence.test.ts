// Presence: the agent's choice, "on_call" while a call keeps the agent busy, reported to the relay on
// every change and every refresh, and kept across restarts.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentPresence, loadPresenceChoice, PresenceReporter, savePresenceChoice } from '../../../electron/core/presence';
import { RelayClient } from '../../../electron/core/relay-client';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import type { PushMessage } from '../../../shared/api';
import { configureLogging } from '../../../shared/log';
import type { AccountConfig } from '../../../shared/settings';
import { ANSWER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { happyGateway, startFakeGateway } from './fake-gateway';
import { ALICE, BOB, startTeamRelay, type TeamRelay } from './team-relay';

configureLogging({ sink: () => undefined });

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

const presenceBodies = (relay: TeamRelay, agentId: string) =>
  relay.requests.filter((r) => r.path === '/presence' && r.agentId === agentId).map((r) => (r.body as { status: string }).status);

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'softphone-presence-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('PresenceReporter', () => {
  async function reporter(refreshMs = 60_000) {
    const relay = await startTeamRelay([ALICE]);
    const client = new RelayClient({ url: relay.url, token: ALICE.token });
    const presence = new PresenceReporter({ relay: client, refreshMs });
    cleanups.push(async () => {
      await presence.stop();
      await client.close();
      await relay.close();
    });
    return { relay, presence };
  }

  it('reports on change only, and only the latest of a burst', async () => {
    const { relay, presence } = await reporter();
    presence.update({ status: 'available' });
    presence.update({ status: 'available' });
    await presence.whenIdle();
    expect(presenceBodies(relay, 'alice')).toEqual(['available']);
    presence.update({ status: 'on_call' });
    presence.update({ status: 'dnd' });
    presence.update({ status: 'on_call' });
    await presence.whenIdle();
    // The first change goes out at once; the rest collapse into one report of the last.
    expect(presenceBodies(relay, 'alice')).toEqual(['available', 'on_call', 'on_call']);
    expect(relay.presence.get('alice')).toBe('on_call');
  });

  it('refreshes the status so that the relay does not forget it', async () => {
    const { relay, presence } = await reporter(30);
    presence.update({ status: 'dnd' });
    await until('two refreshes', () => presenceBodies(relay, 'alice').length >= 3);
    expect(new Set(presenceBodies(relay, 'alice'))).toEqual(new Set(['dnd']));
    await presence.stop();
    const sent = presenceBodies(relay, 'alice').length;
    presence.update({ status: 'available' });
    presence.report();
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(presenceBodies(relay, 'alice')).toHaveLength(sent);
  });

  it('keeps trying through an outage', async () => {
    const { relay, presence } = await reporter(30);
    await relay.close();
    presence.update({ status: 'dnd' });
    await presence.whenIdle();
    const back = await restartedRelay(relay);
    await until('the refresh reaches the relay once it is back', () => back.presence.get('alice') === 'dnd');
  });
});

describe('agentPresence', () => {
  const calls = (busy: number, canTakeAnother: boolean) => ({ busyCallCount: () => busy, canTakeAnother: () => canTakeAnother });

  it('is the choice with no call, on_call while busy, call_waiting only on one call that can take another, available and asked to ring', () => {
    expect(agentPresence({ choice: 'available' }, undefined, true)).toEqual({ choice: 'available', status: 'available' });
    expect(agentPresence({ choice: 'dnd' }, calls(0, true), true)).toEqual({ choice: 'dnd', status: 'dnd' });
    expect(agentPresence({ choice: 'available' }, calls(1, false), false)).toEqual({ choice: 'available', status: 'on_call' });
    expect(agentPresence({ choice: 'available' }, calls(1, true), true)).toEqual({ choice: 'available', status: 'call_waiting' });
    expect(agentPresence({ choice: 'available' }, calls(1, false), true)).toEqual({ choice: 'available', status: 'on_call' });
    expect(agentPresence({ choice: 'dnd' }, calls(1, true), true)).toEqual({ choice: 'dnd', status: 'on_call' });
    expect(agentPresence({ choice: 'available' }, calls(2, true), true)).toEqual({ choice: 'available', status: 'on_call' });
  });
});

describe('the presence choice on disk', () => {
  it('is "available" until chosen, then kept', async () => {
    const dir = await tempDir();
    expect(await loadPresenceChoice(dir)).toEqual({ choice: 'available' });
    await savePresenceChoice(dir, { choice: 'dnd' });
    expect(JSON.parse(await readFile(join(dir, 'presence.json'), 'utf8'))).toEqual({ version: 1, choice: 'dnd' });
    expect(await loadPresenceChoice(dir)).toEqual({ choice: 'dnd' });
    await savePresenceChoice(dir, { choice: 'break', reason: 'Lunch' });
    expect(JSON.parse(await readFile(join(dir, 'presence.json'), 'utf8'))).toEqual({ version: 1, choice: 'break', reason: 'Lunch' });
    expect(await loadPresenceChoice(dir)).toEqual({ choice: 'break', reason: 'Lunch' });
  });

  it('sets an unreadable file aside and starts available', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'presence.json'), '{"version":1,"choice":"away"}');
    expect(await loadPresenceChoice(dir)).toEqual({ choice: 'available' });
    // A break must say why.
    await writeFile(join(dir, 'presence.json'), '{"version":1,"choice":"break"}');
    expect(await loadPresenceChoice(dir)).toEqual({ choice: 'available' });
    await writeFile(join(dir, 'presence.json'), 'not json');
    expect(await loadPresenceChoice(dir)).toEqual({ choice: 'available' });
  });
});

describe('SoftphoneService presence', () => {
  async function setup() {
    const relay = await startTeamRelay([ALICE, BOB]);
    const gateway = await startFakeGateway(happyGateway);
    cleanups.push(async () => {
      await gateway.close();
      await relay.close();
    });
    const account: AccountConfig = { gatewayUrl: gateway.baseUrl, apiKey: 'account-api-key-0002', productSegment: 'chatapp', relayUrl: relay.url, agentToken: ALICE.token };
    return { relay, gateway, account };
  }

  async function service(dataDir: string, account: AccountConfig): Promise<{ service: SoftphoneService; pushes: PushMessage[] }> {
    const s = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), account });
    cleanups.push(() => s.close());
    const pushes: PushMessage[] = [];
    s.subscribe((p) => pushes.push(p));
    return { service: s, pushes };
  }

  it('reports the choice, "on_call" during a call, and keeps the choice across restarts', async () => {
    const dataDir = await tempDir();
    const { relay, gateway, account } = await setup();
    const first = await service(dataDir, account);
    await until('the stream connects', () => relay.connected('alice') === 1);
    await until('presence is reported', () => relay.presence.get('alice') === 'available');
    const snapshot = await first.service.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.presence).toEqual({ choice: 'available', status: 'available' });

    expect(await first.service.handle('setPresence', { status: 'dnd' })).toEqual({ ok: true, value: { choice: 'dnd', status: 'dnd' } });
    await until('dnd is reported', () => relay.presence.get('alice') === 'dnd');
    expect(first.pushes.filter((p) => p.name === 'presenceChanged').map((p) => p.payload)).toEqual([{ choice: 'dnd', status: 'dnd' }]);

    // A call (here one that was ringing before the agent chose dnd) makes the agent busy: on_call.
    relay.send({ type: 'call.incoming', callId: 'wacid.p-1', from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() }, ['alice']);
    await until('the call rings', () => first.pushes.some((p) => p.name === 'callChanged' && p.payload.phase === 'ringing'));
    expect(relay.presence.get('alice')).toBe('dnd'); // ringing does not make an agent busy
    expect(await first.service.handle('answerCall', { localId: 'in:wacid.p-1', sdp: ANSWER_SDP })).toEqual({ ok: true, value: null });
    await until('on_call is reported', () => relay.presence.get('alice') === 'on_call');
    expect(relay.requests.filter((r) => r.path.endsWith('/claim')).map((r) => [r.path, r.agentId])).toEqual([['/calls/wacid.p-1/claim', 'alice']]);
    expect(gateway.actions()).toEqual(['accept']);
    await first.service.handle('hangUp', { localId: 'in:wacid.p-1' });
    await until('the choice is reported again', () => relay.presence.get('alice') === 'dnd');
    expect(first.pushes.filter((p) => p.name === 'presenceChanged').map((p) => p.payload)).toEqual([
      { choice: 'dnd', status: 'dnd' },
      { choice: 'dnd', status: 'on_call' },
      { choice: 'dnd', status: 'dnd' },
    ]);
    await first.service.close();

    relay.presence.clear();
    const second = await service(dataDir, account);
    await until('the restarted app reports its saved choice', () => relay.presence.get('alice') === 'dnd');
    const again = await second.service.handle('getSnapshot', {});
    expect(again.ok && again.value.presence).toEqual({ choice: 'dnd', status: 'dnd' });
    expect(await second.service.handle('setPresence', { status: 'available' })).toEqual({ ok: true, value: { choice: 'available', status: 'available' } });
    await until('available is reported', () => relay.presence.get('alice') === 'available');
  });

  it('reports "call_waiting" on one call when "Ring me during a call" is on, "on_call" with two calls or with it off', async () => {
    const dataDir = await tempDir();
    const { relay, gateway, account } = await setup();
    const { service: app, pushes } = await service(dataDir, account);
    await until('presence is reported', () => relay.presence.get('alice') === 'available');
    // A call sent before the stream is open would reach nobody.
    await until('the stream connects', () => relay.connected('alice') === 1);
    const status = async () => {
      const snapshot = await app.handle('getSnapshot', {});
      return snapshot.ok ? snapshot.value.presence?.status : undefined;
    };
    const ring = async (callId: string) => {
      relay.send({ type: 'call.incoming', callId, from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() }, ['alice']);
      await until(`${callId} rings`, () => pushes.some((p) => p.name === 'callChanged' && p.payload.callId === callId && p.payload.phase === 'ringing'));
    };
    const take = async (callId: string) => {
      expect(await app.handle('answerCall', { localId: `in:${callId}`, sdp: ANSWER_SDP })).toEqual({ ok: true, value: null });
      expect(await app.handle('reportMedia', { localId: `in:${callId}`, state: 'connected' })).toEqual({ ok: true, value: null });
    };

    // The setting is off: one call makes the agent on_call.
    await ring('wacid.w-1');
    await take('wacid.w-1');
    await until('on_call is reported', () => relay.presence.get('alice') === 'on_call');
    // Turned on during the call: the relay hears at once that a second call may ring here.
    expect(await app.handle('setPreferences', { preferences: { ringDuringCall: true } })).toMatchObject({ ok: true });
    await until('call_waiting is reported', () => relay.presence.get('alice') === 'call_waiting');
    expect(await status()).toBe('call_waiting');

    // The second call: answering it holds the first; with two calls nobody rings this agent.
    await ring('wacid.w-2');
    await take('wacid.w-2');
    await until('on_call is reported for two calls', () => relay.presence.get('alice') === 'on_call');
    const calls = async () => {
      const snapshot = await app.handle('getSnapshot', {});
      return snapshot.ok ? Object.fromEntries(snapshot.value.calls.map((c) => [c.callId, c.phase === 'active' && c.heldSince !== undefined ? 'held' : c.phase])) : {};
    };
    expect(await calls()).toEqual({ 'wacid.w-1': 'held', 'wacid.w-2': 'active' });
    // A snapshot asked for just before a swap answers with the state after it: the window keeps what
    // arrived last, so an older state must never arrive after the swap's pushes.
    const asked = app.handle('getSnapshot', {});
    const swapped = app.handle('resumeCall', { localId: 'in:wacid.w-1' });
    const early = await asked;
    await swapped;
    const heldIn = (snapshot: typeof early) => (snapshot.ok ? snapshot.value.calls.filter((c) => c.phase === 'active' && c.heldSince !== undefined).map((c) => c.callId) : []);
    expect(heldIn(early)).toEqual(['wacid.w-2']);
    // Swap, then hold both: hold and resume are the agent's own, the gateway hears nothing of them.
    expect(await app.handle('resumeCall', { localId: 'in:wacid.w-1' })).toEqual({ ok: true, value: null });
    expect(await calls()).toEqual({ 'wacid.w-1': 'active', 'wacid.w-2': 'held' });
    expect(await app.handle('holdCall', { localId: 'in:wacid.w-1' })).toEqual({ ok: true, value: null });
    expect(await calls()).toEqual({ 'wacid.w-1': 'held', 'wacid.w-2': 'held' });
    expect(gateway.actions()).toEqual(['accept', 'accept']);
    // A third call cannot be answered.
    await ring('wacid.w-3');
    const third = await app.handle('answerCall', { localId: 'in:wacid.w-3', sdp: ANSWER_SDP });
    expect(third).toMatchObject({ ok: false, error: { code: 'invalid_state', message: 'Two calls are in progress: hang up one before answering this one' } });

    // One call left: waiting again; none: the agent's choice.
    await app.handle('hangUp', { localId: 'in:wacid.w-2' });
    await until('call_waiting again', () => relay.presence.get('alice') === 'call_waiting');
    // In Do not disturb nothing more rings, call waiting or not.
    await app.handle('setPresence', { status: 'dnd' });
    await until('on_call while in dnd', () => relay.presence.get('alice') === 'on_call');
    // The last call ends: the agent's choice again (the team asks for no after-call work).
    await app.handle('hangUp', { localId: 'in:wacid.w-1' });
    await until('dnd after the last call', () => relay.presence.get('alice') === 'dnd');
    expect(relay.requests.filter((r) => r.path === '/presence' && (r.body as { status: string }).status === 'after_call_work')).toEqual([]);

    // A call still connecting cannot go on hold yet: the agent is on_call until its media is up.
    await app.handle('setPresence', { status: 'available' });
    await ring('wacid.w-5');
    expect(await app.handle('answerCall', { localId: 'in:wacid.w-5', sdp: ANSWER_SDP })).toEqual({ ok: true, value: null });
    await until('on_call while connecting', () => relay.presence.get('alice') === 'on_call');
    expect(await app.handle('reportMedia', { localId: 'in:wacid.w-5', state: 'connected' })).toEqual({ ok: true, value: null });
    await until('call_waiting once connected', () => relay.presence.get('alice') === 'call_waiting');
  });

  it('reports presence again when the stream reconnects (a restarted relay forgot it)', async () => {
    const dataDir = await tempDir();
    const { relay, account } = await setup();
    await service(dataDir, account);
    await until('presence is reported', () => presenceBodies(relay, 'alice').length >= 1);
    await until('the stream connects', () => relay.connected('alice') === 1);
    // The relay restarts: its memory is gone, and the app's stream reconnects to the new one.
    await relay.close();
    const revived = await restartedRelay(relay);
    await until('the stream reconnects', () => revived.connected('alice') === 1);
    // Long before the 20 s refresh: the reconnect itself reports it.
    await until('presence is reported to the new relay', () => revived.presence.get('alice') === 'available');
    expect(revived.requests.filter((r) => r.path === '/presence').length).toBeGreaterThanOrEqual(1);
  });
});

/** A fresh relay on the port of one that was closed (the port may take a moment to be free). */
async function restartedRelay(old: TeamRelay): Promise<TeamRelay> {
  const port = Number(new URL(old.url).port);
  for (let i = 0; i < 50; i++) {
    try {
      const fresh = await startTeamRelay(old.agents, port);
      cleanups.push(() => fresh.close());
      return fresh;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  throw new Error(`port ${port} did not become free`);
}
