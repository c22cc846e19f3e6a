// Mute is the call's, in the main process (shared/calls/mute.ts): the window's setMuted command sets
// the call's `muted`, pushed to every window with the call and in the snapshot a reloaded or second
// window reads; the gateway and the relay hear nothing of it. A direct call, through the whole
// service, against a team relay and the fake gateway on 127.0.0.1. (A bridged call kept muted
// across a crash: rejoin.test.ts.)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import type { PushMessage } from '../../../shared/api';
import type { CallState } from '../../../shared/call-state';
import { english, text } from '../../../shared/i18n/text';
import { configureLogging } from '../../../shared/log';
import type { AccountConfig } from '../../../shared/settings';
import { ANSWER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { happyGateway, startFakeGateway } from './fake-gateway';
import { ALICE, startTeamRelay } from './team-relay';

configureLogging({ sink: () => undefined });

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

const CALL = 'wacid.mute-1';
const LOCAL = `in:${CALL}`;

/** An agent's service on a direct call, answered and connected; two windows subscribed to its pushes. */
async function onDirectCall(): Promise<{ app: SoftphoneService; windows: PushMessage[][]; gateway: Awaited<ReturnType<typeof startFakeGateway>>; relay: Awaited<ReturnType<typeof startTeamRelay>> }> {
  const relay = await startTeamRelay([ALICE]);
  const gateway = await startFakeGateway(happyGateway);
  const dataDir = await mkdtemp(join(tmpdir(), 'softphone-mute-'));
  cleanups.push(async () => {
    await gateway.close();
    await relay.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const account: AccountConfig = { gatewayUrl: gateway.baseUrl, apiKey: 'account-api-key-0002', productSegment: 'chatapp', relayUrl: relay.url, agentToken: ALICE.token };
  const app = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), account });
  cleanups.push(() => app.close());
  const windows: PushMessage[][] = [[], []];
  for (const pushes of windows) app.subscribe((p) => pushes.push(p));
  await until('the stream connects', () => relay.connected('alice') === 1);
  relay.send({ type: 'call.incoming', callId: CALL, from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() }, ['alice']);
  await until('the call rings', () => windows[0]!.some((p) => p.name === 'callChanged' && p.payload.localId === LOCAL));
  expect(await app.handle('answerCall', { localId: LOCAL, sdp: ANSWER_SDP })).toEqual({ ok: true, value: null });
  expect(await app.handle('reportMedia', { localId: LOCAL, state: 'connected' })).toEqual({ ok: true, value: null });
  return { app, windows, gateway, relay };
}

/** The last call each window was pushed. */
const lastCall = (pushes: PushMessage[]): CallState | undefined => pushes.filter((p) => p.name === 'callChanged').at(-1)?.payload as CallState | undefined;

async function snapshotCall(app: SoftphoneService): Promise<CallState | undefined> {
  const snapshot = await app.handle('getSnapshot', {});
  return snapshot.ok ? snapshot.value.calls.find((c) => c.localId === LOCAL) : undefined;
}

describe('setMuted', () => {
  it('mutes the call: every window is pushed the call muted, and a window that reads the snapshot (a reload, a second window) sees it so', async () => {
    const { app, windows, gateway, relay } = await onDirectCall();
    const requestsBefore = relay.requests.length;
    expect(await app.handle('setMuted', { localId: LOCAL, muted: true })).toEqual({ ok: true, value: null });
    for (const pushes of windows) expect(lastCall(pushes)).toMatchObject({ localId: LOCAL, phase: 'active', muted: true });
    expect(await snapshotCall(app)).toMatchObject({ phase: 'active', muted: true });

    // Muted again (another window's click that crossed the push): nothing new is pushed.
    const pushed = windows[0]!.length;
    expect(await app.handle('setMuted', { localId: LOCAL, muted: true })).toEqual({ ok: true, value: null });
    expect(windows[0]!.length).toBe(pushed);

    expect(await app.handle('setMuted', { localId: LOCAL, muted: false })).toEqual({ ok: true, value: null });
    for (const pushes of windows) {
      expect(lastCall(pushes)).toMatchObject({ localId: LOCAL, phase: 'active' });
      expect(lastCall(pushes)).not.toHaveProperty('muted');
    }
    expect(await snapshotCall(app)).not.toHaveProperty('muted');
    // The agent's own: the gateway heard only the accept, the relay nothing of the mute.
    expect(gateway.actions()).toEqual(['accept']);
    expect(relay.requests.slice(requestsBefore).filter((r) => r.path.startsWith('/calls/'))).toEqual([]);
  });

  it('a held call stays held, muted or not; the mute outlives the hold', async () => {
    const { app, windows } = await onDirectCall();
    expect(await app.handle('setMuted', { localId: LOCAL, muted: true })).toEqual({ ok: true, value: null });
    expect(await app.handle('holdCall', { localId: LOCAL })).toEqual({ ok: true, value: null });
    expect(lastCall(windows[1]!)).toMatchObject({ muted: true, heldSince: expect.any(Number) as number });
    expect(await app.handle('resumeCall', { localId: LOCAL })).toEqual({ ok: true, value: null });
    const resumed = lastCall(windows[1]!);
    expect(resumed).toMatchObject({ phase: 'active', muted: true });
    expect(resumed).not.toHaveProperty('heldSince');
  });

  it('refuses a call it does not know, and one that has ended; the ended call is pushed without a mute', async () => {
    const { app, windows } = await onDirectCall();
    const unknown = await app.handle('setMuted', { localId: 'in:wacid.nobody', muted: true });
    expect(unknown).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await app.handle('setMuted', { localId: LOCAL, muted: true })).toEqual({ ok: true, value: null });
    expect(await app.handle('hangUp', { localId: LOCAL })).toEqual({ ok: true, value: null });
    const ended = lastCall(windows[0]!);
    expect(ended?.phase).toBe('ended');
    expect(ended).not.toHaveProperty('muted');
    expect(await app.handle('setMuted', { localId: LOCAL, muted: false })).toEqual({
      ok: false,
      error: { code: 'invalid_state', message: english(text('calls.endedNotMuted')), text: text('calls.endedNotMuted') },
    });
  });
});
