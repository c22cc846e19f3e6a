// The browser host against the real service (embedded relay and sandbox): what it serves, and the
// token, Origin and Host checks on its WebSocket.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { startBrowserHost, type BrowserHost } from '../../../electron/browser/browser-host';
import { parseBrowserHostArgs } from '../../../electron/browser/run-browser-host';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { startEmbeddedEnvironment } from '../../../electron/embedded';
import { configureLogging } from '../../../shared/log';
import type { WsServerFrame } from '../../../shared/api';
import { DIAL_OFFER_SDP } from '../../fixtures/sdp';

let host: BrowserHost;
let service: SoftphoneService;
let dataDir: string;
let staticDir: string;

beforeAll(async () => {
  configureLogging({ level: 'error' });
  dataDir = await mkdtemp(join(tmpdir(), 'softphone-host-'));
  staticDir = await mkdtemp(join(tmpdir(), 'softphone-static-'));
  const { writeFile } = await import('node:fs/promises');
  await writeFile(join(staticDir, 'index.html'), '<!doctype html><title>Softphone</title>');
  service = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), embedded: () => startEmbeddedEnvironment() });
  host = await startBrowserHost({ backend: service, staticDir });
});
afterAll(async () => {
  await host?.close();
  await service?.close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(staticDir, { recursive: true, force: true });
});

function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port: host.port, path, method, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

function connect(query: string, origin?: string): Promise<{ ws: WebSocket; frames: WsServerFrame[] } | { refused: number }> {
  return new Promise((done) => {
    const ws = new WebSocket(`ws://127.0.0.1:${host.port}/api${query}`, origin === undefined ? {} : { origin });
    const frames: WsServerFrame[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(d.toString()) as WsServerFrame));
    ws.on('open', () => done({ ws, frames }));
    ws.on('unexpected-response', (_req, res) => done({ refused: res.statusCode ?? 0 }));
    ws.on('error', () => done({ refused: -1 }));
  });
}

async function call(ws: WebSocket, frames: WsServerFrame[], id: number, command: string, params: unknown) {
  ws.send(JSON.stringify({ id, command, params }));
  for (let i = 0; i < 200; i++) {
    const found = frames.find((f) => f.kind === 'result' && f.id === id);
    if (found && found.kind === 'result') return found.result;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no result for ${command}`);
}

describe('HTTP', () => {
  test('listens on 127.0.0.1 only and prints a URL carrying the token', () => {
    expect(host.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(host.url).toBe(`${host.origin}/?token=${encodeURIComponent(host.token)}`);
    expect(host.token.length).toBeGreaterThanOrEqual(24);
  });

  test('serves the renderer with a strict CSP', async () => {
    const res = await get('/', { host: `127.0.0.1:${host.port}` });
    expect(res.status).toBe(200);
    expect(res.body).toContain('<title>Softphone</title>');
    expect(String(res.headers['content-security-policy'])).toContain("default-src 'none'");
    expect(String(res.headers['content-security-policy'])).toContain("object-src 'none'");
  });

  test('refuses everything else', async () => {
    const h = { host: `127.0.0.1:${host.port}` };
    expect((await get('/nothing-here.js', h)).status).toBe(404);
    expect((await get('/../../package.json', h)).status).toBe(404);
    expect((await get('/%2e%2e/%2e%2e/package.json', h)).status).toBe(404);
    expect((await get('/', h, 'POST')).status).toBe(405);
    expect((await get('/', { host: `evil.example:${host.port}` })).status).toBe(421);
  });
});

describe('WebSocket', () => {
  const origin = () => `http://127.0.0.1:${host.port}`;

  test('refuses a missing or wrong token, and a foreign or missing Origin', async () => {
    expect(await connect('', origin())).toEqual({ refused: 401 });
    expect(await connect('?token=wrong', origin())).toEqual({ refused: 401 });
    expect(await connect(`?token=${host.token}`, 'http://evil.example')).toEqual({ refused: 403 });
    expect(await connect(`?token=${host.token}`)).toEqual({ refused: 403 });
  });

  test('carries commands and pushes; validates frames and payloads, naming the field', async () => {
    const conn = await connect(`?token=${encodeURIComponent(host.token)}`, origin());
    if ('refused' in conn) throw new Error(`refused ${conn.refused}`);
    const { ws, frames } = conn;
    try {
      const snap = await call(ws, frames, 1, 'getSnapshot', {});
      expect(snap.ok).toBe(true);
      if (snap.ok) expect((snap.value as { mode: string }).mode).toBe('sandbox');

      const badParams = await call(ws, frames, 2, 'startCall', { localId: 'out:0123456789', to: 5, sdp: DIAL_OFFER_SDP });
      expect(badParams).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'to' } });

      const extra = await call(ws, frames, 3, 'hangUp', { localId: 'x', sneaky: true });
      expect(extra).toMatchObject({ ok: false, error: { code: 'invalid_input' } });

      const unknown = await call(ws, frames, 4, 'deleteEverything', {});
      expect(unknown).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'command' } });

      const badNumber = await call(ws, frames, 5, 'startCall', { localId: 'out:0123456789', to: '12', sdp: DIAL_OFFER_SDP });
      expect(badNumber).toMatchObject({ ok: false, error: { code: 'invalid_phone_number' } });

      const customers = snap.ok ? (snap.value as { sandboxCustomers: { number: string; behaviour: string }[] }).sandboxCustomers : [];
      const caller = customers.find((c) => c.behaviour === 'answers');
      expect(caller).toBeDefined();
      const started = await call(ws, frames, 6, 'simulateIncomingCall', { number: caller!.number });
      expect(started.ok).toBe(true);
      for (let i = 0; i < 200 && !frames.some((f) => f.kind === 'push' && f.push.name === 'callChanged'); i++) await new Promise((r) => setTimeout(r, 20));
      const push = frames.find((f) => f.kind === 'push' && f.push.name === 'callChanged');
      expect(push).toMatchObject({ kind: 'push', push: { name: 'callChanged', payload: { phase: 'ringing', direction: 'incoming' } } });
      const localId = push && push.kind === 'push' && push.push.name === 'callChanged' ? push.push.payload.localId : '';
      const declined = await call(ws, frames, 7, 'declineCall', { localId });
      expect(declined).toEqual({ ok: true, value: null });
    } finally {
      ws.close();
    }
  });
});

describe('start:browser flags', () => {
  test('no account flags: saved settings or the sandbox', () => {
    expect(parseBrowserHostArgs(['--port', '4000', '--data-dir', '/tmp/x'], {})).toEqual({ port: 4000, dataDir: '/tmp/x' });
  });

  test('a complete account from flags and environment', () => {
    const config = parseBrowserHostArgs(['--gateway-url', 'https://gw.example.com/restapi/v1', '--relay-url', 'https://relay.example.com'], {
      SOFTPHONE_API_KEY: 'key-123456789',
      SOFTPHONE_RELAY_TOKEN: 'token-123456789',
      SOFTPHONE_DATA_DIR: '/tmp/y',
    });
    expect(config.account).toEqual({
      gatewayUrl: 'https://gw.example.com/restapi/v1',
      apiKey: 'key-123456789',
      productSegment: 'chatapp',
      relayUrl: 'https://relay.example.com',
      agentToken: 'token-123456789',
    });
  });

  test('bad flags name the flag and the rule', () => {
    expect(() => parseBrowserHostArgs(['--port', 'eighty'], {})).toThrow(/--port: must be a whole number/);
    expect(() => parseBrowserHostArgs(['--gateway-url', 'https://gw.example.com/restapi/v1'], {})).toThrow(/--api-key: is required/);
    expect(() =>
      parseBrowserHostArgs(['--gateway-url', 'https://gw.example.com/restapi', '--api-key', 'k-123456789', '--relay-url', 'http://r', '--relay-token', 't-123456789'], {}),
    ).toThrow(/--gateway-url: must end in the version segment/);
    expect(() => parseBrowserHostArgs(['--bogus'], {})).toThrow(/bogus/);
  });

  const STUN = { urls: 'stun:stun.example.com:3478' };
  const TURN = { urls: ['turn:turn.example.com:443?transport=tcp', 'turns:turn.example.com:443'], username: 'agent-7', credential: 'flag-pw-0c1d2e3f' };

  test('--ice-servers and --ice-transport-policy stand in for the Network settings', () => {
    const config = parseBrowserHostArgs(['--data-dir', '/tmp/x', '--ice-servers', JSON.stringify([STUN, TURN]), '--ice-transport-policy', 'relay'], {});
    expect(config).toEqual({ port: 0, dataDir: '/tmp/x', network: { iceServers: [STUN, TURN], iceTransportPolicy: 'relay' } });
    expect(parseBrowserHostArgs(['--data-dir', '/tmp/x', '--ice-transport-policy', 'all'], {})).toEqual({ port: 0, dataDir: '/tmp/x', network: { iceTransportPolicy: 'all' } });
    expect(parseBrowserHostArgs(['--data-dir', '/tmp/x', '--ice-servers', '[]'], {})).toEqual({ port: 0, dataDir: '/tmp/x', network: { iceServers: [] } });
    expect(parseBrowserHostArgs(['--data-dir', '/tmp/x', '--ice-servers', ` [ {"urls": " stun:stun.example.com:3478 "} ] `], {}).network).toEqual({ iceServers: [STUN] });
  });

  test('the ICE flags come with an account from flags too', () => {
    const config = parseBrowserHostArgs(
      ['--gateway-url', 'https://gw.example.com/restapi/v1', '--api-key', 'key-123456789', '--relay-url', 'https://relay.example.com', '--relay-token', 'token-123456789', '--ice-servers', JSON.stringify([TURN])],
      { SOFTPHONE_ICE_TRANSPORT_POLICY: 'relay' },
    );
    expect(config.account).toMatchObject({ gatewayUrl: 'https://gw.example.com/restapi/v1', relayUrl: 'https://relay.example.com' });
    expect(config.network).toEqual({ iceServers: [TURN], iceTransportPolicy: 'relay' });
  });

  test('SOFTPHONE_ICE_SERVERS and SOFTPHONE_ICE_TRANSPORT_POLICY, and the flags win over them', () => {
    const env = { SOFTPHONE_ICE_SERVERS: JSON.stringify([TURN]), SOFTPHONE_ICE_TRANSPORT_POLICY: 'relay', SOFTPHONE_DATA_DIR: '/tmp/y' };
    expect(parseBrowserHostArgs([], env)).toEqual({ port: 0, dataDir: '/tmp/y', network: { iceServers: [TURN], iceTransportPolicy: 'relay' } });
    expect(parseBrowserHostArgs(['--ice-servers', JSON.stringify([STUN]), '--ice-transport-policy', 'all'], env).network).toEqual({ iceServers: [STUN], iceTransportPolicy: 'all' });
    expect(parseBrowserHostArgs([], { SOFTPHONE_ICE_TRANSPORT_POLICY: 'relay' }).network).toEqual({ iceTransportPolicy: 'relay' });
  });

  test.each([
    [['--ice-servers', '[{"urls":"stun:stun.example.com"'], '--ice-servers: must be a JSON array of ICE servers, e.g. \'[{"urls":"turn:turn.example.com:443?transport=tcp","username":"u","credential":"p"}]\''],
    [['--ice-servers', ''], '--ice-servers: must be a JSON array of ICE servers, e.g.'],
    [['--ice-servers', JSON.stringify(STUN)], '--ice-servers: (root): must be a JSON array of ICE servers ({ "urls": …, "username"?: …, "credential"?: … })'],
    [['--ice-servers', JSON.stringify([STUN, { urls: 'turn:turn.example.com' }])], '--ice-servers: [1].credential: a TURN server needs its username and credential'],
    [['--ice-servers', JSON.stringify([{ urls: 'turn:turn.example.com', username: 'agent-7' }])], '--ice-servers: [0].credential: a TURN server needs its username and credential'],
    [
      ['--ice-servers', JSON.stringify([{ urls: 'stun:stun.example.com?transport=udp' }])],
      '--ice-servers: [0].urls: must be stun:HOST[:PORT], turn:HOST[:PORT] or turns:HOST[:PORT], a TURN URL optionally followed by ?transport=udp or ?transport=tcp (got "stun:stun.example.com?transport=udp")',
    ],
    [['--ice-servers', JSON.stringify([{ urls: ['stun:a.example.com', 'https://turn.example.com'] }])], '--ice-servers: [0].urls[1]: must be stun:HOST[:PORT]'],
    [['--ice-servers', JSON.stringify([{ urls: 'stun:a.example.com', password: 'x' }])], '--ice-servers: [0]: Unrecognized key: "password"'],
    [['--ice-servers', JSON.stringify(Array.from({ length: 11 }, (_, i) => ({ urls: `stun:s${i}.example.com` })))], '--ice-servers: (root): must list at most 10 servers'],
    [['--ice-transport-policy', 'none'], '--ice-transport-policy: must be all or relay, got "none"'],
    [['--ice-transport-policy', 'Relay'], '--ice-transport-policy: must be all or relay, got "Relay"'],
    [['--ice-transport-policy', ''], '--ice-transport-policy: must be all or relay, got ""'],
  ])('refuses %j, naming the flag and the rule', (argv, message) => {
    expect(() => parseBrowserHostArgs(argv, {})).toThrow(message);
  });

  test('names the flag when the environment variable is bad, and quotes no password', () => {
    expect(() => parseBrowserHostArgs([], { SOFTPHONE_ICE_SERVERS: 'stun:stun.example.com' })).toThrow('--ice-servers: must be a JSON array of ICE servers');
    expect(() => parseBrowserHostArgs([], { SOFTPHONE_ICE_TRANSPORT_POLICY: 'x'.repeat(100) })).toThrow(`--ice-transport-policy: must be all or relay, got "${'x'.repeat(40)}"`);
    const withPassword = JSON.stringify([{ urls: 'turn:agent-7:hunter2@turn.example.com', username: 'agent-7', credential: 'hunter2' }]);
    let message = '';
    try {
      parseBrowserHostArgs(['--ice-servers', withPassword], {});
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('--ice-servers: [0].urls: ');
    expect(message).toContain('(got a URL with a user name or password in it)');
    expect(message).not.toContain('hunter2');
  });
});
