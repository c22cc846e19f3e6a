// The update commands through the service both hosts wrap: with the Electron host's updater (the
// real update service, electron-updater's AppImageUpdater, a feed on 127.0.0.1), a ringing call
// holds "Restart to update" back until it has ended; with none (the browser host) every update
// command answers not_available and the status is `unsupported`.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import { UPDATES_UNSUPPORTED_REASON } from '../../../electron/core/update-control';
import { startUpdateService } from '../../../electron/desktop/update-service';
import type { PushMessage } from '../../../shared/api';
import type { RelayEnvelope, RelayEvent } from '../../../shared/events';
import { configureLogging } from '../../../shared/log';
import { text } from '../../../shared/i18n/text';
import type { UpdateStatus } from '../../../shared/updates';
import { appImageScript, feedUpdater, installElectronAutoUpdaterStandIn, publishRelease, startUpdateFeed, TestApp } from '../../support/update-feed';
import { OFFER_SDP } from '../../fixtures/sdp';
import { startFakeGateway } from './fake-gateway';

configureLogging({ sink: () => undefined });

beforeAll(() => {
  installElectronAutoUpdaterStandIn();
});

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The relay's agent-facing event stream and GET /me (relay/REFERENCE.md), nothing else. */
async function startEventRelay(): Promise<{ url: string; connected(): number; send(event: RelayEvent): void; close(): Promise<void> }> {
  const streams = new Set<ServerResponse>();
  let seq = 0;
  const server = createServer((req, res) => {
    if (req.url === '/me') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ agentId: 'agent-1' }));
    if (req.url?.startsWith('/calls/') && req.method === 'POST') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ claimed: true }));
    if (req.url !== '/events') return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.write(': connected\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connected: () => streams.size,
    send(event) {
      const envelope: RelayEnvelope = { id: `ev-${++seq}`, receivedAt: Date.now(), event };
      for (const res of streams) res.write(`id: ${envelope.id}\ndata: ${JSON.stringify(envelope)}\n\n`);
    },
    async close() {
      for (const res of streams) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

describe('the service with the desktop updater', () => {
  it('pushes the update’s progress, and restarts to update only once the ringing call has ended', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'softphone-service-updates-'));
    const feed = await startUpdateFeed();
    const gateway = await startFakeGateway();
    const relay = await startEventRelay();
    const savedAppImage = process.env.APPIMAGE;
    const savedMarker = process.env.SOFTPHONE_TEST_MARKER;
    cleanups.push(async () => {
      await Promise.all([feed.close(), gateway.close(), relay.close()]);
      await rm(dir, { recursive: true, force: true });
      if (savedAppImage === undefined) delete process.env.APPIMAGE;
      else process.env.APPIMAGE = savedAppImage;
      if (savedMarker === undefined) delete process.env.SOFTPHONE_TEST_MARKER;
      else process.env.SOFTPHONE_TEST_MARKER = savedMarker;
    });
    const app = new TestApp('1.0.0', dir);
    await app.writeUpdateConfig();
    await mkdir(join(dir, 'Applications'));
    process.env.APPIMAGE = join(dir, 'Applications', 'Softphone-1.0.0.AppImage');
    process.env.SOFTPHONE_TEST_MARKER = join(dir, 'installed.txt');
    await writeFile(process.env.APPIMAGE, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    publishRelease(feed, { channelFile: 'latest-linux.yml', version: '1.1.0', body: appImageScript('1.1.0') });

    const confirmed: string[] = [];
    const service: SoftphoneService = await createSoftphoneService({
      dataDir: join(dir, 'data'),
      secrets: new MemorySecretStore(),
      account: { gatewayUrl: gateway.baseUrl, apiKey: 'account-api-key-0002', productSegment: 'chatapp', relayUrl: relay.url, agentToken: 'account-agent-token-0002' },
      updates: (host) => startUpdateService({ dataDir: join(dir, 'data'), updater: feedUpdater(app), host, firstCheckDelayMs: 60_000, confirmFeedChange: (url) => Promise.resolve(confirmed.push(url) > 1) }),
    });
    cleanups.push(() => service.close());
    const pushes: PushMessage[] = [];
    service.subscribe((push) => pushes.push(push));
    const updatePushes = (): UpdateStatus[] => pushes.flatMap((p) => (p.name === 'updateStatus' ? [p.payload] : []));

    const snapshot = await service.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.updateStatus).toEqual({ kind: 'off' });
    expect(await service.handle('getUpdateSettings', {})).toEqual({ ok: true, value: { feedUrl: '', channel: 'stable' } });

    // The agent cancels the new feed's confirmation the first time: nothing changes; the second time they confirm.
    expect(await service.handle('setUpdateSettings', { settings: { feedUrl: feed.url, channel: 'stable' } })).toEqual({
      ok: false,
      error: { code: 'invalid_state', message: `The update feed was not changed: ${feed.url} was not confirmed`, text: { code: 'updates.feedNotConfirmed', values: { url: feed.url } } },
    });
    expect(await service.handle('getUpdateSettings', {})).toEqual({ ok: true, value: { feedUrl: '', channel: 'stable' } });
    expect(feed.requested).toEqual([]);
    expect(await service.handle('setUpdateSettings', { settings: { feedUrl: feed.url, channel: 'stable' } })).toEqual({ ok: true, value: { feedUrl: feed.url, channel: 'stable' } });
    expect(confirmed).toEqual([feed.url, feed.url]);
    await until(() => updatePushes().at(-1)?.kind === 'ready', 'the update is ready');
    expect(updatePushes().at(-1)).toEqual({ kind: 'ready', version: '1.1.0' });
    expect(updatePushes().map((s) => s.kind)).toEqual(expect.arrayContaining(['checking', 'available', 'ready']));
    const after = await service.handle('getSnapshot', {});
    expect(after.ok && after.value.updateStatus).toEqual({ kind: 'ready', version: '1.1.0' });

    // A customer calls: while it rings, the app does not restart.
    await until(() => relay.connected() === 1, 'the event stream connects');
    relay.send({ type: 'call.incoming', callId: 'wacid.in-1', from: '447400123456', name: 'Ada', sdp: OFFER_SDP, timestamp: Date.now() });
    await until(() => pushes.some((p) => p.name === 'callChanged' && p.payload.phase === 'ringing'), 'the call rings');
    const refused = await service.handle('restartToUpdate', {});
    expect(refused).toEqual({
      ok: false,
      error: {
        code: 'invalid_state',
        message: 'The softphone does not restart during a call (a call is ringing): restart to update once it has ended',
        text: { code: 'updates.restartDuringCall', values: { call: { term: 'callRinging' } } },
      },
    });
    expect(existsSync(process.env.SOFTPHONE_TEST_MARKER)).toBe(false);
    expect(app.quits).toBe(0);

    expect((await service.handle('declineCall', { localId: 'in:wacid.in-1' })).ok).toBe(true);
    await until(() => pushes.some((p) => p.name === 'callChanged' && p.payload.phase === 'ended'), 'the call ends');
    expect(await service.handle('restartToUpdate', {})).toEqual({ ok: true, value: null });
    expect(existsSync(join(dir, 'Applications', 'Softphone-1.1.0.AppImage'))).toBe(true);
    await until(() => app.quits === 1, 'the app quits to finish the update');
  });
});

/** A data folder, a gateway and a relay for one service, closed after the test. */
async function serviceParts() {
  const dir = await mkdtemp(join(tmpdir(), 'softphone-service-updates-'));
  const gateway = await startFakeGateway();
  const relay = await startEventRelay();
  cleanups.push(async () => {
    await Promise.all([gateway.close(), relay.close()]);
    await rm(dir, { recursive: true, force: true });
  });
  return { dir, gateway, relay };
}

describe('the service without an updater (the browser host)', () => {
  it('answers every update command not_available and reports updates as unsupported', async () => {
    const { dir, gateway, relay } = await serviceParts();
    const service = await createSoftphoneService({
      dataDir: dir,
      secrets: new MemorySecretStore(),
      account: { gatewayUrl: gateway.baseUrl, apiKey: 'account-api-key-0002', productSegment: 'chatapp', relayUrl: relay.url, agentToken: 'account-agent-token-0002' },
    });
    cleanups.push(() => service.close());

    const snapshot = await service.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.updateStatus).toEqual({ kind: 'unsupported', reason: UPDATES_UNSUPPORTED_REASON });
    const refusal = { ok: false, error: { code: 'not_available', message: UPDATES_UNSUPPORTED_REASON, text: text('service.updatesUnsupported') } };
    expect(await service.handle('getUpdateSettings', {})).toEqual(refusal);
    expect(await service.handle('setUpdateSettings', { settings: { feedUrl: 'https://updates.example.com/', channel: 'stable' } })).toEqual(refusal);
    expect(await service.handle('checkForUpdates', {})).toEqual(refusal);
    expect(await service.handle('restartToUpdate', {})).toEqual(refusal);
    expect(existsSync(join(dir, 'updates.json'))).toBe(false);
  });

  it('an updater that fails to start leaves updates unsupported with the reason, and the calls running', async () => {
    const { dir, gateway, relay } = await serviceParts();
    const service = await createSoftphoneService({
      dataDir: dir,
      secrets: new MemorySecretStore(),
      account: { gatewayUrl: gateway.baseUrl, apiKey: 'account-api-key-0002', productSegment: 'chatapp', relayUrl: relay.url, agentToken: 'account-agent-token-0002' },
      // electron-updater refuses an app version that is not semver: the service must start anyway.
      updates: (host) => startUpdateService({ dataDir: dir, updater: feedUpdater(new TestApp('one point oh', dir)), host }),
    });
    cleanups.push(() => service.close());
    const snapshot = await service.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.updateStatus).toMatchObject({ kind: 'unsupported', reason: expect.stringContaining('Updates could not start: App version is not a valid semver version') });
    await until(() => relay.connected() === 1, 'the event stream connects');
  });
});
