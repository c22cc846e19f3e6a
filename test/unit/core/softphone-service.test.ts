import { createHmac } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedEnvironment } from '../../../electron/core/embedded-environment';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import { startRelay } from '../../../relay/server';
import { WINDOW_GONE_REASON, type PushMessage } from '../../../shared/api';
import type { PublicNetworkSettings } from '../../../shared/ice-servers';
import type { RelayEnvelope, RelayEvent } from '../../../shared/events';
import { configureLogging } from '../../../shared/log';
import type { AccountConfig } from '../../../shared/settings';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { initiated, json, startFakeGateway, success, type FakeGateway, type GatewayHandler } from './fake-gateway';

configureLogging({ sink: () => undefined });

const SANDBOX_KEY = 'sandbox-api-key-0001';
const SANDBOX_TOKEN = 'sandbox-agent-token-0001';
const ACCOUNT_KEY = 'account-api-key-0002';
const ACCOUNT_TOKEN = 'account-agent-token-0002';
const CUSTOMERS = [{ number: '447400123456', name: 'Ada Lovelace', behaviour: 'answers' }];

/** A relay stand-in: the agent-facing SSE endpoint of relay/README.md, nothing else. */
interface FakeRelay {
  url: string;
  tokens: string[];
  connected(): number;
  send(event: RelayEvent): void;
  close(): Promise<void>;
}

async function startFakeRelay(): Promise<FakeRelay> {
  const streams = new Set<ServerResponse>();
  const tokens: string[] = [];
  let seq = 0;
  const server = createServer((req, res) => {
    if (req.url === '/me') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ agentId: 'agent-1' }));
      return;
    }
    if (req.url !== '/events') {
      res.writeHead(404).end();
      return;
    }
    tokens.push(String(req.headers.authorization ?? ''));
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.write(': connected\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokens,
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

/** The sandbox serves the gateway endpoints and its control API on one origin, as the real one does. */
const sandboxHandler: GatewayHandler = (req) => {
  if (req.path === '/control/customers') return json(200, CUSTOMERS);
  if (req.path === '/control/incoming') return json(200, { callId: 'wacid.simulated-1' });
  if (req.path === '/control/hangup') return json(200, {});
  if (req.path.endsWith('/initiate')) return initiated('wacid.out-1');
  return success();
};

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  service: SoftphoneService;
  pushes: PushMessage[];
  sandboxGateway: FakeGateway;
  sandboxRelay: FakeRelay;
  accountGateway: FakeGateway;
  accountRelay: FakeRelay;
  account: AccountConfig;
  dataDir: string;
  embeddedStarts: () => number;
}

async function setup(options: { flags?: boolean } = {}): Promise<Setup> {
  const dataDir = await mkdtemp(join(tmpdir(), 'softphone-service-'));
  const sandboxGateway = await startFakeGateway(sandboxHandler);
  const sandboxRelay = await startFakeRelay();
  const accountGateway = await startFakeGateway((req) => (req.path.endsWith('/initiate') ? initiated('wacid.acc-1') : success()));
  const accountRelay = await startFakeRelay();
  cleanups.push(async () => {
    await Promise.all([sandboxGateway.close(), sandboxRelay.close(), accountGateway.close(), accountRelay.close()]);
    await rm(dataDir, { recursive: true, force: true });
  });
  let starts = 0;
  const embedded = async (): Promise<EmbeddedEnvironment> => {
    starts++;
    return {
      account: { gatewayUrl: sandboxGateway.baseUrl, apiKey: SANDBOX_KEY, productSegment: 'chatapp', relayUrl: sandboxRelay.url, agentToken: SANDBOX_TOKEN },
      sandboxControlUrl: sandboxGateway.baseUrl.replace(/\/restapi\/v1$/, ''),
      close: async () => undefined,
    };
  };
  const account: AccountConfig = {
    gatewayUrl: accountGateway.baseUrl,
    apiKey: ACCOUNT_KEY,
    productSegment: 'chatapp',
    relayUrl: accountRelay.url,
    agentToken: ACCOUNT_TOKEN,
    defaultCountry: 'GB',
  };
  const service = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), embedded, ...(options.flags ? { account } : {}) });
  cleanups.push(() => service.close());
  const pushes: PushMessage[] = [];
  service.subscribe((push) => pushes.push(push));
  return { service, pushes, sandboxGateway, sandboxRelay, accountGateway, accountRelay, account, dataDir, embeddedStarts: () => starts };
}

const callPushes = (pushes: PushMessage[], localId: string): string[] =>
  pushes.flatMap((p) => (p.name === 'callChanged' && p.payload.localId === localId ? [p.payload.phase] : []));

describe('SoftphoneService in sandbox mode', () => {
  it('connects to the embedded relay and runs an incoming call through to history', async () => {
    const s = await setup();
    await until(() => s.sandboxRelay.connected() === 1, 'the stream connects');
    expect(s.sandboxRelay.tokens).toEqual([`Bearer ${SANDBOX_TOKEN}`]);
    const snapshot = await s.service.handle('getSnapshot', {});
    expect(snapshot.ok).toBe(true);
    if (!snapshot.ok) return;
    expect(snapshot.value).toMatchObject({ mode: 'sandbox', calls: [], history: [], sandboxCustomers: CUSTOMERS, settings: { mode: 'sandbox', hasApiKey: false } });

    s.sandboxRelay.send({ type: 'call.incoming', callId: 'wacid.in-1', from: '447400123456', name: 'Ada', sdp: OFFER_SDP, timestamp: Date.now() });
    await until(() => callPushes(s.pushes, 'in:wacid.in-1').includes('ringing'), 'the call rings');
    expect((await s.service.handle('answerCall', { localId: 'in:wacid.in-1', sdp: ANSWER_SDP })).ok).toBe(true);
    expect((await s.service.handle('reportMedia', { localId: 'in:wacid.in-1', state: 'connected' })).ok).toBe(true);
    expect((await s.service.handle('hangUp', { localId: 'in:wacid.in-1' })).ok).toBe(true);
    expect(callPushes(s.pushes, 'in:wacid.in-1')).toEqual(['ringing', 'answering', 'connecting', 'active', 'ended']);
    await until(() => s.sandboxGateway.requests.some((r) => r.path.endsWith('/terminate')), 'the terminate reaches the gateway');
    expect(s.sandboxGateway.requests.filter((r) => r.path.includes('/calls/')).map((r) => [r.path.split('/').pop(), r.headers['api-key']])).toEqual([
      ['accept', SANDBOX_KEY],
      ['terminate', SANDBOX_KEY],
    ]);
    const history = s.pushes.filter((p) => p.name === 'historyChanged').at(-1);
    expect(history?.payload).toEqual([expect.objectContaining({ localId: 'in:wacid.in-1', outcome: 'completed' })]);

    // Calling the customer back: the outgoing call carries the name this app knows for the number.
    const dialed = await s.service.handle('startCall', { localId: 'out:callback-1', to: '+44 7400 123456', sdp: DIAL_OFFER_SDP });
    expect(dialed).toEqual({ ok: true, value: { localId: 'out:callback-1', to: '447400123456', callId: expect.any(String) } });
    if (!dialed.ok) return;
    const dialing = s.pushes.find((p) => p.name === 'callChanged' && (p.payload as { localId: string }).localId === dialed.value.localId);
    expect(dialing?.payload).toMatchObject({ phase: 'dialing', peer: { number: '447400123456', name: 'Ada' } });
    expect((await s.service.handle('hangUp', { localId: dialed.value.localId })).ok).toBe(true);
  });

  it('drives simulated customers through the sandbox control API', async () => {
    const s = await setup();
    const simulated = await s.service.handle('simulateIncomingCall', { number: '447400123456' });
    expect(simulated).toEqual({ ok: true, value: { callId: 'wacid.simulated-1' } });
    const control = s.sandboxGateway.requests.filter((r) => r.path.startsWith('/control/incoming'));
    expect(control.map((r) => r.body)).toEqual([{ number: '447400123456' }]);

    await until(() => s.sandboxRelay.connected() === 1, 'the stream connects');
    s.sandboxRelay.send({ type: 'call.incoming', callId: 'wacid.simulated-1', from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() });
    await until(() => callPushes(s.pushes, 'in:wacid.simulated-1').length > 0, 'the call rings');
    expect((await s.service.handle('simulateCustomerHangUp', { localId: 'in:wacid.simulated-1' })).ok).toBe(true);
    expect(s.sandboxGateway.requests.filter((r) => r.path === '/control/hangup').map((r) => r.body)).toEqual([{ callId: 'wacid.simulated-1' }]);
    const unknown = await s.service.handle('simulateCustomerHangUp', { localId: 'in:nothing' });
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) expect(unknown.error.code).toBe('not_found');
  });
});

describe('SoftphoneService settings and modes', () => {
  it('refuses invalid settings naming the field, and stays in sandbox mode', async () => {
    const s = await setup();
    const result = await s.service.handle('saveSettings', {
      settings: { gatewayUrl: 'https://gw.example.com/restapi', relayUrl: s.account.relayUrl, productSegment: 'chatapp', apiKey: ACCOUNT_KEY, agentToken: ACCOUNT_TOKEN },
    });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ code: 'invalid_input', field: 'gatewayUrl' });
    const missing = await s.service.handle('saveSettings', {
      settings: { gatewayUrl: s.account.gatewayUrl, relayUrl: s.account.relayUrl, productSegment: 'chatapp', apiKey: ACCOUNT_KEY },
    });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.error).toMatchObject({ code: 'invalid_input', field: 'agentToken' });
    const snapshot = await s.service.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.mode).toBe('sandbox');
  });

  it('switches to the saved account live, ending calls first, and back to the sandbox on clear', async () => {
    const s = await setup();
    await until(() => s.sandboxRelay.connected() === 1, 'the sandbox stream connects');
    s.sandboxRelay.send({ type: 'call.incoming', callId: 'wacid.in-live', from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() });
    await until(() => callPushes(s.pushes, 'in:wacid.in-live').length > 0, 'the call rings');
    expect(await s.service.handle('answerCall', { localId: 'in:wacid.in-live', sdp: ANSWER_SDP })).toEqual({ ok: true, value: null });

    const saved = await s.service.handle('saveSettings', {
      settings: {
        gatewayUrl: s.account.gatewayUrl,
        relayUrl: s.account.relayUrl,
        productSegment: 'chatapp',
        apiKey: ACCOUNT_KEY,
        agentToken: ACCOUNT_TOKEN,
        defaultCountry: 'GB',
      },
    });
    expect(saved).toEqual({
      ok: true,
      value: expect.objectContaining({ mode: 'account', gatewayUrl: s.account.gatewayUrl, hasApiKey: true, hasAgentToken: true, secretStorage: 'memory' }),
    });
    // The sandbox call was ended on the sandbox's gateway before the switch.
    expect(s.sandboxGateway.requests.filter((r) => r.path.endsWith('/terminate')).map((r) => r.body)).toEqual([
      { messaging_product: 'chatapp', call_id: 'wacid.in-live', action: 'terminate' },
    ]);
    expect(callPushes(s.pushes, 'in:wacid.in-live').at(-1)).toBe('ended');
    await until(() => s.accountRelay.connected() === 1 && s.sandboxRelay.connected() === 0, 'the stream moves to the account relay');
    expect(s.accountRelay.tokens).toEqual([`Bearer ${ACCOUNT_TOKEN}`]);
    expect(s.pushes.some((p) => p.name === 'settingsChanged' && p.payload.mode === 'account')).toBe(true);

    const snapshot = await s.service.handle('getSnapshot', {});
    expect(snapshot.ok).toBe(true);
    if (!snapshot.ok) return;
    expect(snapshot.value.mode).toBe('account');
    expect(snapshot.value.sandboxCustomers).toBeUndefined();
    expect(snapshot.value.calls).toEqual([]);

    // Calls now go to the account's gateway; the default country applies to typed numbers.
    const started = await s.service.handle('startCall', { localId: 'out:account-1', to: '07400 123456', sdp: DIAL_OFFER_SDP });
    expect(started).toEqual({ ok: true, value: { localId: 'out:account-1', to: '447400123456', callId: 'wacid.acc-1' } });
    expect(s.accountGateway.requests.map((r) => r.headers['api-key'])).toEqual([ACCOUNT_KEY]);
    const notHere = await s.service.handle('simulateIncomingCall', { number: '447400123456' });
    expect(notHere.ok).toBe(false);
    if (!notHere.ok) expect(notHere.error.code).toBe('not_available');

    const cleared = await s.service.handle('clearSettings', {});
    expect(cleared).toEqual({ ok: true, value: expect.objectContaining({ mode: 'sandbox', hasApiKey: false, hasAgentToken: false }) });
    expect(s.accountGateway.actions()).toEqual(['initiate', 'terminate']);
    await until(() => s.sandboxRelay.connected() === 1 && s.accountRelay.connected() === 0, 'the stream returns to the sandbox relay');
    expect(s.embeddedStarts()).toBe(1);

    // Nothing that left the service carries a secret.
    const everything = JSON.stringify([s.pushes, saved, cleared, snapshot]);
    for (const secret of [ACCOUNT_KEY, ACCOUNT_TOKEN, SANDBOX_KEY, SANDBOX_TOKEN]) expect(everything).not.toContain(secret);
  });

  it('uses an account from the command line without starting the sandbox or saving it', async () => {
    const s = await setup({ flags: true });
    await until(() => s.accountRelay.connected() === 1, 'the stream connects to the account relay');
    const snapshot = await s.service.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.mode).toBe('account');
    expect(snapshot.ok && snapshot.value.settings).toMatchObject({ mode: 'account', gatewayUrl: s.account.gatewayUrl, hasApiKey: true });
    expect(s.embeddedStarts()).toBe(0);
    expect(await readdir(s.dataDir)).not.toContain('settings.json');
  });

  it('ends live calls on close', async () => {
    const s = await setup({ flags: true });
    await until(() => s.accountRelay.connected() === 1, 'the stream connects');
    s.accountRelay.send({ type: 'call.incoming', callId: 'wacid.in-quit', from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() });
    await until(() => callPushes(s.pushes, 'in:wacid.in-quit').length > 0, 'the call rings');
    expect(await s.service.handle('answerCall', { localId: 'in:wacid.in-quit', sdp: ANSWER_SDP })).toEqual({ ok: true, value: null });
    await s.service.close();
    expect(s.accountGateway.actions()).toEqual(['accept', 'terminate']);
    const after = await s.service.handle('getSnapshot', {});
    expect(after.ok).toBe(false);
  });
});

describe('SoftphoneService desk preferences and dial links', () => {
  it('keeps the preferences across a restart, pushes each change, and refuses a bad one naming the field', async () => {
    const s = await setup({ flags: true });
    const snapshot = await s.service.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.preferences?.shortcuts.answer).toBe('Ctrl+Shift+A');

    const changed = await s.service.handle('setPreferences', { preferences: { audio: { ringer: { id: 'dev-3', label: 'Desk speaker' } }, dialLinksAtOnce: true } });
    expect(changed.ok && changed.value.audio.ringer).toEqual({ id: 'dev-3', label: 'Desk speaker' });
    expect(s.pushes.filter((p) => p.name === 'preferencesChanged').map((p) => p.payload)).toEqual([changed.ok && changed.value]);

    const refused = await s.service.handle('setPreferences', { preferences: { shortcuts: { mute: 'Ctrl+Shift+A' } } });
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'shortcuts.mute' } });
    expect(s.service.preferences().shortcuts.mute).toBe('Ctrl+Shift+M');
    expect(s.pushes.filter((p) => p.name === 'preferencesChanged')).toHaveLength(1);

    await s.service.close();
    const again = await createSoftphoneService({ dataDir: s.dataDir, secrets: new MemorySecretStore(), account: s.account });
    cleanups.push(() => again.close());
    expect(again.preferences()).toMatchObject({ audio: { ringer: { id: 'dev-3', label: 'Desk speaker' }, microphone: null }, dialLinksAtOnce: true });
  });

  it('hands a dial link to the windows, dialling at once only when chosen; a bad number pushes nothing', async () => {
    const s = await setup({ flags: true });
    expect(s.service.requestDial('tel:020%207946%200958')).toEqual({ ok: true, value: { number: '442079460958', dial: false } });
    await s.service.handle('setPreferences', { preferences: { dialLinksAtOnce: true } });
    expect(s.service.requestDial('callto://+12025550101')).toEqual({ ok: true, value: { number: '12025550101', dial: true } });
    // A number the numbering plan does not list is never dialled at once: the dialer offers "Call anyway".
    expect(s.service.requestDial('tel:+442059460958')).toEqual({ ok: true, value: { number: '442059460958', dial: false } });
    const bad = s.service.requestDial('tel:+4412');
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_phone_number', message: expect.stringContaining('too short') } });
    expect(s.pushes.filter((p) => p.name === 'dialRequested').map((p) => p.payload)).toEqual([
      { number: '442079460958', dial: false },
      { number: '12025550101', dial: true },
      { number: '442059460958', dial: false },
    ]);
  });

  it('never dials a link at once on top of a call in progress, nor when the caller asks only to fill the dialer', async () => {
    const s = await setup({ flags: true });
    await s.service.handle('setPreferences', { preferences: { dialLinksAtOnce: true } });
    expect(s.service.requestDial('tel:+12025550101', { dialAtOnce: false })).toEqual({ ok: true, value: { number: '12025550101', dial: false } });
    expect(s.service.requestDial('tel:+12025550101', { dialAtOnce: true })).toEqual({ ok: true, value: { number: '12025550101', dial: true } });

    const started = await s.service.handle('startCall', { localId: 'out:busy-1', to: '+44 7400 123456', sdp: DIAL_OFFER_SDP });
    expect(started.ok).toBe(true);
    // Every window gets the push: with dial false none of them places a second call.
    expect(s.service.requestDial('callto://+12025550101')).toEqual({ ok: true, value: { number: '12025550101', dial: false } });

    expect(await s.service.handle('hangUp', { localId: 'out:busy-1' })).toEqual({ ok: true, value: null });
    expect(s.service.requestDial('callto://+12025550101')).toEqual({ ok: true, value: { number: '12025550101', dial: true } });
    expect(s.pushes.filter((p) => p.name === 'dialRequested').map((p) => p.payload)).toEqual([
      { number: '12025550101', dial: false },
      { number: '12025550101', dial: true },
      { number: '12025550101', dial: false },
      { number: '12025550101', dial: true },
    ]);
  });

  it('places one call when two windows dial the same link at the same moment; the other is refused', async () => {
    const s = await setup({ flags: true });
    const [first, second] = await Promise.all([
      s.service.handle('startCall', { localId: 'out:tab-1', to: '+1 202 555 0101', sdp: DIAL_OFFER_SDP }),
      s.service.handle('startCall', { localId: 'out:tab-2', to: '+1 202 555 0101', sdp: DIAL_OFFER_SDP }),
    ]);
    expect(first).toEqual({ ok: true, value: { localId: 'out:tab-1', to: '12025550101', callId: 'wacid.acc-1' } });
    expect(second).toMatchObject({ ok: false, error: { code: 'invalid_state', message: expect.stringContaining('Another call is in progress and cannot be held until it is connected: hang up') } });
    expect(s.accountGateway.actions()).toEqual(['initiate']);
  });
});

describe('SoftphoneService network settings', () => {
  const TURN_PASSWORD = 'turn-pw-service-5e6f7a8b';
  const FLAG_PASSWORD = 'flag-pw-service-1a2b3c4d';
  const TURN_SECRET = 'turn-secret-service-9c8d';
  const TURN_URLS = ['turn:127.0.0.1:3478?transport=udp', 'turn:127.0.0.1:443?transport=tcp'];
  const RELAY_TOKEN = 'relay-agent-token-0003-0123456789ab';

  const networkOf = async (service: SoftphoneService): Promise<PublicNetworkSettings | undefined> => {
    const snapshot = await service.handle('getSnapshot', {});
    return snapshot.ok ? snapshot.value.settings.network : undefined;
  };

  async function untilNetwork(service: SoftphoneService, condition: (network: PublicNetworkSettings | undefined) => boolean, what: string): Promise<void> {
    for (let i = 0; i < 300; i++) {
      if (condition(await networkOf(service))) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`never happened: ${what}`);
  }

  it('saves the Network section, pushes the settings without the TURN password, and builds calls with it', async () => {
    const s = await setup();
    // The sandbox's relay offers no TURN credentials.
    await untilNetwork(s.service, (n) => n?.relayTurn === 'not_offered', 'the relay is asked for TURN credentials');
    expect(await networkOf(s.service)).toEqual({ servers: [], hasTurnPassword: false, relayOnly: false, fromCommandLine: false, relayTurn: 'not_offered' });
    expect(await s.service.handle('getIceConfig', {})).toEqual({ ok: true, value: { iceServers: [], iceTransportPolicy: 'all' } });
    // Learning that the relay offers none was pushed too, so that windows ask again for the next call.
    await until(() => s.pushes.some((p) => p.name === 'settingsChanged' && p.payload.network.relayTurn === 'not_offered'), 'the relay\'s TURN status is pushed');
    s.pushes.splice(0);

    const saved = await s.service.handle('saveNetworkSettings', {
      network: { servers: ['stun:stun.example.com:3478', 'turn:turn.example.com:443?transport=tcp'], turnUsername: 'agent-7', turnPassword: TURN_PASSWORD, relayOnly: true },
    });
    const network: PublicNetworkSettings = {
      servers: ['stun:stun.example.com:3478', 'turn:turn.example.com:443?transport=tcp'],
      turnUsername: 'agent-7',
      hasTurnPassword: true,
      relayOnly: true,
      fromCommandLine: false,
      relayTurn: 'not_offered',
    };
    expect(saved).toEqual({ ok: true, value: expect.objectContaining({ mode: 'sandbox', network }) });
    const pushed = s.pushes.filter((p) => p.name === 'settingsChanged');
    expect(pushed.map((p) => p.payload)).toEqual([saved.ok && saved.value]);
    expect(await networkOf(s.service)).toEqual(network);

    expect(await s.service.handle('getIceConfig', {})).toEqual({
      ok: true,
      value: {
        iceServers: [{ urls: ['stun:stun.example.com:3478'] }, { urls: ['turn:turn.example.com:443?transport=tcp'], username: 'agent-7', credential: TURN_PASSWORD }],
        iceTransportPolicy: 'relay',
      },
    });

    // The account's settings carry the Network section along; it survives a switch of account.
    const account = await s.service.handle('saveSettings', {
      settings: { gatewayUrl: s.account.gatewayUrl, relayUrl: s.account.relayUrl, productSegment: 'chatapp', apiKey: ACCOUNT_KEY, agentToken: ACCOUNT_TOKEN },
    });
    expect(account.ok && account.value.network).toMatchObject({ servers: network.servers, hasTurnPassword: true, relayOnly: true });
    expect(await s.service.handle('getIceConfig', {})).toMatchObject({ ok: true, value: { iceTransportPolicy: 'relay' } });

    // Only getIceConfig's answer carries the password: no push, snapshot or settings answer does.
    const snapshot = await s.service.handle('getSnapshot', {});
    expect(JSON.stringify([s.pushes, saved, account, snapshot])).not.toContain(TURN_PASSWORD);
  });

  it('refuses a bad Network section naming the field, and changes nothing', async () => {
    const s = await setup();
    const noUser = await s.service.handle('saveNetworkSettings', { network: { servers: ['turns:turn.example.com:443'], turnPassword: TURN_PASSWORD, relayOnly: true } });
    expect(noUser).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'turnUsername', message: expect.stringContaining('the TURN username is required') } });
    const badUrl = await s.service.handle('saveNetworkSettings', { network: { servers: ['stun:stun.example.com', 'turn:turn.example.com?transport=quic'], relayOnly: false } });
    expect(badUrl).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'servers[1]' } });
    expect(JSON.stringify([noUser, badUrl])).not.toContain(TURN_PASSWORD);
    expect(s.pushes.filter((p) => p.name === 'settingsChanged')).toEqual([]);
    expect(await networkOf(s.service)).toMatchObject({ servers: [], hasTurnPassword: false, relayOnly: false });
    expect(await readdir(s.dataDir)).not.toContain('network.json');
  });

  it("merges the relay's short-lived TURN credentials with the command line's servers, until a save replaces them", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'softphone-service-'));
    const gateway = await startFakeGateway(() => success());
    const relay = await startRelay({
      port: 0,
      appSecret: 'app-secret-service-0003',
      agentTokens: [RELAY_TOKEN],
      heartbeatMs: 60_000,
      turn: { secret: TURN_SECRET, urls: TURN_URLS, ttlSec: 900 },
    });
    cleanups.push(async () => {
      await Promise.all([gateway.close(), relay.close()]);
      await rm(dataDir, { recursive: true, force: true });
    });
    const flagServers = [{ urls: 'stun:stun.flags.example.com' }, { urls: ['turns:turn.flags.example.com:443'], username: 'flag-user', credential: FLAG_PASSWORD }];
    const service = await createSoftphoneService({
      dataDir,
      secrets: new MemorySecretStore(),
      account: { gatewayUrl: gateway.baseUrl, apiKey: ACCOUNT_KEY, productSegment: 'chatapp', relayUrl: relay.url, agentToken: RELAY_TOKEN },
      network: { iceServers: flagServers, iceTransportPolicy: 'relay' },
    });
    cleanups.push(() => service.close());
    const pushes: PushMessage[] = [];
    service.subscribe((push) => pushes.push(push));

    await untilNetwork(service, (n) => n?.relayTurn === 'available', 'the TURN credentials arrive');
    expect(await networkOf(service)).toEqual({
      servers: ['stun:stun.flags.example.com', 'turns:turn.flags.example.com:443'],
      turnUsername: 'flag-user',
      hasTurnPassword: true,
      relayOnly: true,
      fromCommandLine: true,
      relayTurn: 'available',
    });

    const before = Date.now();
    const config = await service.handle('getIceConfig', {});
    expect(config.ok).toBe(true);
    if (!config.ok) return;
    expect(config.value.iceTransportPolicy).toBe('relay');
    expect(config.value.iceServers.slice(0, 2)).toEqual(flagServers);
    const fromRelay = config.value.iceServers.slice(2);
    expect(fromRelay).toHaveLength(1);
    expect(fromRelay[0]).toEqual({ urls: TURN_URLS, username: expect.stringMatching(/^\d+:agent-1$/), credential: expect.any(String) });
    const username = fromRelay[0]!.username!;
    // What coturn with the same static-auth-secret checks.
    expect(fromRelay[0]!.credential).toBe(createHmac('sha1', TURN_SECRET).update(username).digest('base64'));
    expect(config.value.expiresAt).toBeGreaterThan(before + 890_000);
    expect(config.value.expiresAt).toBeLessThanOrEqual(Date.now() + 900_000);

    // A save replaces the command line's servers; the relay's credentials stay.
    const saved = await service.handle('saveNetworkSettings', { network: { servers: ['stun:stun.saved.example.com'], relayOnly: false } });
    expect(saved.ok && saved.value.network).toEqual({ servers: ['stun:stun.saved.example.com'], hasTurnPassword: false, relayOnly: false, fromCommandLine: false, relayTurn: 'available' });
    const after = await service.handle('getIceConfig', {});
    expect(after).toEqual({
      ok: true,
      value: { iceServers: [{ urls: ['stun:stun.saved.example.com'] }, { urls: TURN_URLS, username, credential: fromRelay[0]!.credential }], iceTransportPolicy: 'all', expiresAt: config.value.expiresAt },
    });

    const snapshot = await service.handle('getSnapshot', {});
    const outside = JSON.stringify([pushes, saved, snapshot]);
    for (const secret of [FLAG_PASSWORD, fromRelay[0]!.credential!, TURN_SECRET, RELAY_TOKEN, ACCOUNT_KEY]) expect(outside).not.toContain(secret);
  });
});

describe('SoftphoneService when a window goes, and what it keeps for support', () => {
  async function activeCall(s: Setup, callId: string): Promise<string> {
    await until(() => s.sandboxRelay.connected() === 1, 'the stream connects');
    s.sandboxRelay.send({ type: 'call.incoming', callId, from: '447400123456', name: 'Ada', sdp: OFFER_SDP, timestamp: Date.now() });
    const localId = `in:${callId}`;
    await until(() => callPushes(s.pushes, localId).includes('ringing'), 'the call rings');
    expect((await s.service.handle('answerCall', { localId, sdp: ANSWER_SDP })).ok).toBe(true);
    expect((await s.service.handle('reportMedia', { localId, state: 'connected' })).ok).toBe(true);
    return localId;
  }

  it('ends the calls whose window went, with the reason and a terminate; a ringing call and other windows\' calls stay', async () => {
    const s = await setup();
    const localId = await activeCall(s, 'wacid.gone-1');
    s.sandboxRelay.send({ type: 'call.incoming', callId: 'wacid.ring-1', from: '447400123457', sdp: OFFER_SDP, timestamp: Date.now() });
    await until(() => callPushes(s.pushes, 'in:wacid.ring-1').includes('ringing'), 'the second call rings');
    await s.service.windowGone(['in:some-other-call'], WINDOW_GONE_REASON.reloaded);
    expect(callPushes(s.pushes, localId).at(-1)).toBe('active');
    await s.service.windowGone([localId, 'in:wacid.ring-1'], WINDOW_GONE_REASON.reloaded);
    await until(() => s.sandboxGateway.requests.some((r) => r.path.endsWith('/terminate')), 'the terminate reaches the gateway');
    const snapshot = await s.service.handle('getSnapshot', {});
    const calls = snapshot.ok ? snapshot.value.calls : [];
    const reloaded = 'The window was reloaded or closed during the call, and its audio ended with it';
    expect(calls.find((c) => c.localId === localId)).toMatchObject({ phase: 'ended', end: { kind: 'failed', code: 'media_failed', message: reloaded, text: WINDOW_GONE_REASON.reloaded } });
    // The history keeps the reason as its code and values too: each window says it in its language.
    const history = snapshot.ok ? snapshot.value.history : [];
    expect(history.find((e) => e.localId === localId)).toMatchObject({ outcome: 'failed', failureCode: 'media_failed', failureMessage: reloaded, failureText: WINDOW_GONE_REASON.reloaded });
    expect(calls.find((c) => c.localId === 'in:wacid.ring-1')?.phase).toBe('ringing');
  });

  it('keeps a call\'s quality in its history entry and its samples for the export, which holds no key, token or full number', async () => {
    const s = await setup();
    const localId = await activeCall(s, 'wacid.q-1');
    expect((await s.service.handle('hangUp', { localId })).ok).toBe(true);
    const summary = { samples: 2, avgMos: 4.2, worstMos: 4.1, worstLossPercent: 1.5, warningsSeen: ['high-packet-loss' as const] };
    const samples = [{ at: 1, rttMs: 40, jitterMs: 3, inboundLoss: 0.02, micMuted: false, packetsReceived: 50, bytesReceived: 4000, connected: true }];
    expect(await s.service.handle('reportQuality', { localId, summary, samples, path: { localType: 'host', remoteType: 'host' } })).toEqual({ ok: true, value: null });
    const snapshot = await s.service.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.history.find((e) => e.localId === localId)?.quality).toEqual(summary);

    expect((await s.service.handle('writeLogs', { records: [{ t: 'now', level: 'warn', logger: 'media', msg: 'media stopped', fields: { apiKey: SANDBOX_KEY } }] })).ok).toBe(true);
    const exported = await s.service.handle('exportDiagnostics', { window: { userAgent: 'Chromium', language: 'en-GB', hostKind: 'browser' } });
    expect(exported.ok).toBe(true);
    if (!exported.ok) return;
    expect(exported.value.fileName).toMatch(/^softphone-diagnostics-\d{4}-\d\d-\d\dT[\d-]+Z\.json$/);
    const file = JSON.parse(exported.value.content) as { calls: { summary: unknown; samples: unknown[] }[]; settings: { mode: string; serviceCapture: unknown }; relayConnection: { status: string }[]; window: unknown };
    expect(file.calls).toEqual([expect.objectContaining({ summary, samples, direction: 'incoming' })]);
    expect(file.settings.mode).toBe('sandbox');
    expect(file.settings.serviceCapture).toEqual({ record: false, transcribe: false, language: 'en_US' });
    expect(file.relayConnection.map((c) => c.status)).toContain('connected');
    expect(file.window).toEqual({ userAgent: 'Chromium', language: 'en-GB', hostKind: 'browser' });
    for (const secret of [SANDBOX_KEY, SANDBOX_TOKEN, '447400123456']) expect(exported.value.content).not.toContain(secret);
  });

  it('says whether the relay is reachable and hands out TURN credentials', async () => {
    const s = await setup();
    await until(() => s.sandboxRelay.connected() === 1, 'the stream connects');
    const check = await s.service.handle('checkRelay', {});
    expect(check.ok && check.value.reachable).toBe(true);
    await s.sandboxRelay.close();
    const down = await s.service.handle('checkRelay', {});
    expect(down.ok && down.value).toMatchObject({ reachable: false, problem: expect.stringMatching(/relay could not be reached/) });
  });
});
