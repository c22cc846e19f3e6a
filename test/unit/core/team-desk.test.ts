// The team's desk in the main process: the team's settings as the relay tells them, breaks with the
// team's reasons, after-call work after a call, and wrap-ups kept at once and sent to the relay until
// it takes them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import type { PushMessage, TeamInfo } from '../../../shared/api';
import { configureLogging } from '../../../shared/log';
import type { AccountConfig } from '../../../shared/settings';
import { DEFAULT_TEAM_SETTINGS } from '../../../shared/team-settings';
import { ANSWER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { happyGateway, startFakeGateway } from './fake-gateway';
import { ALICE, startTeamRelay, type TeamRelay } from './team-relay';

configureLogging({ sink: () => undefined });

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(what: string, condition: () => boolean, ms = 3_000): Promise<void> {
  for (let waited = 0; waited < ms && !condition(); waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

const TEAM: TeamInfo = {
  role: 'supervisor',
  settings: { ...DEFAULT_TEAM_SETTINGS, breakReasons: ['Lunch', 'Coaching'], dispositions: ['Sale', 'No sale'], afterCallWorkSeconds: 45, timezone: 'Europe/London' },
};

async function desk(team: TeamInfo = TEAM) {
  const dataDir = await mkdtemp(join(tmpdir(), 'softphone-desk-'));
  const relay = await startTeamRelay([ALICE]);
  relay.team = team;
  const gateway = await startFakeGateway(happyGateway);
  const account: AccountConfig = { gatewayUrl: gateway.baseUrl, apiKey: 'account-api-key-0003', productSegment: 'chatapp', relayUrl: relay.url, agentToken: ALICE.token };
  const pushes: PushMessage[] = [];
  const open = async (): Promise<SoftphoneService> => {
    const app = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), account });
    cleanups.push(() => app.close());
    app.subscribe((p) => pushes.push(p));
    return app;
  };
  cleanups.push(async () => {
    await gateway.close();
    await relay.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const app = await open();
  await until('the stream connects', () => relay.connected('alice') === 1);
  return { app, relay, pushes, open };
}

/** A call the agent answers, talks on (its media connected) and hangs up. */
async function talk(app: SoftphoneService, relay: TeamRelay, pushes: PushMessage[], callId: string): Promise<string> {
  relay.send({ type: 'call.incoming', callId, from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() }, ['alice']);
  await until(`${callId} rings`, () => pushes.some((p) => p.name === 'callChanged' && p.payload.callId === callId && p.payload.phase === 'ringing'));
  const localId = `in:${callId}`;
  expect(await app.handle('answerCall', { localId, sdp: ANSWER_SDP })).toEqual({ ok: true, value: null });
  expect(await app.handle('reportMedia', { localId, state: 'connected' })).toEqual({ ok: true, value: null });
  expect(await app.handle('hangUp', { localId })).toEqual({ ok: true, value: null });
  return localId;
}

const snapshot = async (app: SoftphoneService) => {
  const answer = await app.handle('getSnapshot', {});
  if (!answer.ok) throw new Error(answer.error.message);
  return answer.value;
};
const lastPresence = (relay: TeamRelay) => relay.requests.filter((r) => r.path === '/presence').at(-1)?.body;

describe('the team as the relay tells it', () => {
  it('is the defaults until the relay says, then its settings; a `team` event brings a reload', async () => {
    const { app, relay, pushes } = await desk();
    await until('the team is told', () => pushes.some((p) => p.name === 'teamChanged'));
    expect((await snapshot(app)).team).toEqual(TEAM);
    const reloaded: TeamInfo = { role: 'agent', settings: { ...TEAM.settings, dispositionRequired: true } };
    relay.sendTeam(reloaded, ['alice']);
    await until('the reload is told', () => pushes.filter((p) => p.name === 'teamChanged').length === 2);
    expect(pushes.filter((p) => p.name === 'teamChanged').map((p) => p.payload)).toEqual([TEAM, reloaded]);
    expect((await snapshot(app)).team).toEqual(reloaded);
    // A team event this app cannot read changes nothing.
    relay.sendTeam({ role: 'owner', settings: TEAM.settings } as unknown as TeamInfo, ['alice']);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await snapshot(app)).team).toEqual(reloaded);
  });
});

describe('breaks', () => {
  it('take one of the team’s reasons, are told to the relay with it, and are kept across restarts', async () => {
    const { app, relay, pushes, open } = await desk();
    await until('the team is told', () => pushes.some((p) => p.name === 'teamChanged'));
    expect(await app.handle('setPresence', { status: 'break', reason: 'Coaching' })).toEqual({ ok: true, value: { choice: 'break', status: 'break', breakReason: 'Coaching' } });
    await until('the break is reported', () => relay.presence.get('alice') === 'break');
    expect(lastPresence(relay)).toEqual({ status: 'break', reason: 'Coaching' });

    const unknown = await app.handle('setPresence', { status: 'break', reason: 'Nap' });
    expect(unknown).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'reason', message: "reason: must be one of the team's break reasons: Lunch, Coaching" } });
    expect(await app.handle('setPresence', { status: 'break' })).toMatchObject({ ok: false, error: { field: 'reason', message: 'reason: is required' } });
    expect(await app.handle('setPresence', { status: 'dnd', reason: 'Lunch' })).toMatchObject({ ok: false, error: { field: 'reason', message: 'reason: is given with a break only' } });
    expect((await snapshot(app)).presence).toEqual({ choice: 'break', status: 'break', breakReason: 'Coaching' });

    await app.close();
    relay.presence.clear();
    const again = await open();
    await until('the restarted app reports its break', () => relay.presence.get('alice') === 'break');
    expect((await snapshot(again)).presence).toEqual({ choice: 'break', status: 'break', breakReason: 'Coaching' });
  });
});

describe('after-call work and the wrap-up', () => {
  it('follows a call the agent talked on; "Ready" ends it; a wrap-up is kept and reaches the relay', async () => {
    const { app, relay, pushes } = await desk();
    await until('the team is told', () => pushes.some((p) => p.name === 'teamChanged'));
    const localId = await talk(app, relay, pushes, 'wacid.d-1');
    await until('after-call work is reported', () => relay.presence.get('alice') === 'after_call_work');
    expect(lastPresence(relay)).toEqual({ status: 'after_call_work', callId: 'wacid.d-1' });
    const presence = (await snapshot(app)).presence;
    expect(presence).toMatchObject({ choice: 'available', status: 'after_call_work', afterCallWork: { localId, callId: 'wacid.d-1', waitingForWrapUp: false } });
    expect(presence!.afterCallWork!.endsAt - presence!.afterCallWork!.startedAt).toBe(45_000);

    const bad = await app.handle('saveWrapUp', { localId, disposition: 'Refund', notes: 'asked for a refund' });
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'disposition', message: "disposition: must be one of the team's dispositions: Sale, No sale" } });
    const saved = await app.handle('saveWrapUp', { localId, disposition: 'Sale', notes: 'Two licences' });
    expect(saved).toMatchObject({ ok: true, value: { localId, wrapUp: { disposition: 'Sale', notes: 'Two licences', synced: false } } });
    await until('the relay has it', () => relay.wrapUps.has('wacid.d-1 alice'));
    expect(relay.wrapUps.get('wacid.d-1 alice')).toEqual({ disposition: 'Sale', notes: 'Two licences' });
    await until('the entry says so', () => pushes.some((p) => p.name === 'historyChanged' && p.payload.find((e) => e.localId === localId)?.wrapUp?.synced === true));

    expect(await app.handle('endAfterCallWork', {})).toEqual({ ok: true, value: { choice: 'available', status: 'available' } });
    await until('available again', () => relay.presence.get('alice') === 'available');
  });

  it('sends a wrap-up again until the relay takes it, and keeps a refusal for good with the relay’s words', async () => {
    const { app, relay, pushes } = await desk();
    const localId = await talk(app, relay, pushes, 'wacid.d-2');
    let tries = 0;
    relay.onWrapUp = () => (++tries === 1 ? { status: 503, body: { error: { code: 'unavailable', message: 'the records database cannot answer now' } } } : 'default');
    await app.handle('saveWrapUp', { localId, disposition: null, notes: 'call back Friday' });
    const entry = (id: string) => (pushes.filter((p) => p.name === 'historyChanged').at(-1)?.payload as Array<{ localId: string; wrapUp?: unknown }>).find((e) => e.localId === id);
    await until('the reason is on the entry', () => JSON.stringify(entry(localId)).includes('the records database cannot answer now'));
    expect(entry(localId)).toMatchObject({ wrapUp: { synced: false, syncError: 'the records database cannot answer now' } });
    await until('the second try is taken', () => relay.wrapUps.has('wacid.d-2 alice'), 5_000);
    await until('the entry says so', () => (entry(localId) as { wrapUp?: { synced?: boolean } }).wrapUp?.synced === true);
    expect(entry(localId)).toEqual(expect.objectContaining({ wrapUp: { disposition: null, notes: 'call back Friday', savedAt: expect.any(Number), synced: true } }));

    relay.onWrapUp = () => ({ status: 409, body: { error: { code: 'too_late', message: 'a wrap-up can be changed for 24 hours after the call' } } });
    await app.handle('saveWrapUp', { localId, disposition: 'No sale', notes: 'call back Friday' });
    await until('the refusal is kept', () => (entry(localId) as { wrapUp?: { refused?: boolean } }).wrapUp?.refused === true);
    expect(entry(localId)).toMatchObject({ wrapUp: { disposition: 'No sale', synced: false, refused: true, syncError: 'a wrap-up can be changed for 24 hours after the call' } });
  });

  it('with a required disposition, waits for the wrap-up: "Ready" is refused until it has one', async () => {
    const { app, relay, pushes } = await desk({ role: 'agent', settings: { ...TEAM.settings, afterCallWorkSeconds: 0, dispositionRequired: true } });
    await until('the team is told', () => pushes.some((p) => p.name === 'teamChanged'));
    const localId = await talk(app, relay, pushes, 'wacid.d-3');
    await until('after-call work is reported', () => relay.presence.get('alice') === 'after_call_work');
    expect((await snapshot(app)).presence?.afterCallWork?.waitingForWrapUp).toBe(true);
    expect(await app.handle('endAfterCallWork', {})).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    expect(await app.handle('saveWrapUp', { localId, disposition: null, notes: 'no answer to give' })).toMatchObject({ ok: false, error: { field: 'disposition', message: 'disposition: is required: the team asks for a disposition on every call' } });
    expect(relay.presence.get('alice')).toBe('after_call_work');
    expect(await app.handle('saveWrapUp', { localId, disposition: 'No sale', notes: '' })).toMatchObject({ ok: true });
    await until('available once the wrap-up is saved', () => relay.presence.get('alice') === 'available');
    expect((await snapshot(app)).presence).toEqual({ choice: 'available', status: 'available' });
  });

  it('refuses a wrap-up of a call the agent did not talk on, or of none', async () => {
    const { app, relay, pushes } = await desk();
    relay.send({ type: 'call.incoming', callId: 'wacid.d-4', from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() }, ['alice']);
    await until('it rings', () => pushes.some((p) => p.name === 'callChanged' && p.payload.phase === 'ringing'));
    await app.handle('declineCall', { localId: 'in:wacid.d-4' });
    await until('it is in recent calls', () => pushes.some((p) => p.name === 'historyChanged'));
    expect(await app.handle('saveWrapUp', { localId: 'in:wacid.d-4', disposition: null, notes: '' })).toMatchObject({ ok: false, error: { code: 'invalid_state', message: 'Only a call you talked on has a wrap-up' } });
    expect(await app.handle('saveWrapUp', { localId: 'in:nothing', disposition: null, notes: '' })).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'localId' } });
    expect(relay.requests.some((r) => r.path.endsWith('/wrap-up'))).toBe(false);
  });
});
