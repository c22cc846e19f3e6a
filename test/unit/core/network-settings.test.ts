// The network calls take (electron/core/network-settings.ts): Settings → Network kept in real files
// (network.json, the TURN password in the owner-only secrets file), the command line's servers
// until a save, and the relay's short-lived TURN credentials fetched from a real relay
// (relay/server.ts with a TURN secret): renewed before they expire, retried with back-off while the
// relay cannot be reached, rechecked when the relay offers none.
import { createHmac } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  mergeIceConfig,
  NetworkSettingsStore,
  RelayTurnCredentials,
  type NetworkFlags,
  type RelayTurnOptions,
  type TurnCredentialSource,
} from '../../../electron/core/network-settings';
import { RelayClient } from '../../../electron/core/relay-client';
import { FileSecretStore, MemorySecretStore } from '../../../electron/core/secret-store';
import { startRelay, type RelayServer } from '../../../relay/server';
import type { IceServer } from '../../../shared/ice-servers';
import { configureLogging } from '../../../shared/log';
import { fieldRule, term, text } from '../../../shared/i18n/text';

const logLines: string[] = [];
configureLogging({ level: 'debug', sink: (line) => logLines.push(line) });

const TURN_SECRET = 'turn-secret-network-4b1d9e';
const TURN_URLS = ['turn:127.0.0.1:3478?transport=udp', 'turn:127.0.0.1:443?transport=tcp'];
const AGENT_TOKEN = 'agent-token-network-0001-0123456789';
const TURN_PASSWORD = 'turn-pw-7f3a9c2e51';
const FLAG_PASSWORD = 'flag-pw-0c1d2e3f4a';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'softphone-network-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await wait(10);
  if (!condition()) throw new Error(`never happened within ${ms} ms: ${what}`);
}

/** What a TURN server holding the same secret computes for `username` (coturn --use-auth-secret). */
const credentialFor = (username: string) => createHmac('sha1', TURN_SECRET).update(username).digest('base64');

/** A real relay; with `turn` it hands out credentials for TURN_URLS. A given port brings a relay back where one was. */
async function relay(options: { turn?: boolean; ttlSec?: number; port?: number } = {}): Promise<RelayServer> {
  const server = await startRelay({
    port: options.port ?? 0,
    appSecret: 'app-secret-network-0001',
    agentTokens: [AGENT_TOKEN],
    heartbeatMs: 60_000,
    ...(options.turn === false ? {} : { turn: { secret: TURN_SECRET, urls: TURN_URLS, ttlSec: options.ttlSec ?? 600 } }),
  });
  let closed = false;
  const close = server.close.bind(server);
  server.close = async () => {
    if (closed) return;
    closed = true;
    await close();
  };
  cleanups.push(() => server.close());
  return server;
}

/** A port nothing listens on (a relay that is down). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function relayClient(url: string, token = AGENT_TOKEN, timeoutMs?: number): RelayClient {
  const client = new RelayClient({ url, token, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
  cleanups.push(() => client.close());
  return client;
}

/** The real relay client, with the moment of each request written down. */
class CountedSource implements TurnCredentialSource {
  readonly attempts: number[] = [];
  constructor(private readonly client: RelayClient) {}
  turnCredentials(): ReturnType<RelayClient['turnCredentials']> {
    this.attempts.push(performance.now());
    return this.client.turnCredentials();
  }
}

function keeper(url: string, options: RelayTurnOptions = {}, clientTimeoutMs?: number): { turn: RelayTurnCredentials; source: CountedSource } {
  const source = new CountedSource(relayClient(url, AGENT_TOKEN, clientTimeoutMs));
  const turn = new RelayTurnCredentials(source, options);
  cleanups.push(async () => turn.stop());
  return { turn, source };
}

/** A clock a test moves forward; the timers stay real. */
function clock(): { now: () => number; advance: (ms: number) => void } {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms) => (offset += ms) };
}

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

function expectRelayCredentials(servers: IceServer[] | undefined): string {
  expect(servers).toHaveLength(1);
  const server = servers![0]!;
  expect(server.urls).toEqual(TURN_URLS);
  expect(server.username).toMatch(/^\d+:agent-1$/);
  expect(server.credential).toBe(credentialFor(server.username!));
  return server.username!;
}

describe('NetworkSettingsStore', () => {
  const open = (dir: string, flags?: NetworkFlags) => new NetworkSettingsStore({ dataDir: dir, secrets: new FileSecretStore(join(dir, 'secrets.json')), ...(flags ? { flags } : {}) });

  it('starts with no servers and every path allowed, and writes nothing until a save', async () => {
    const dir = await dataDir();
    const store = open(dir);
    expect(await store.publicSettings('unknown')).toEqual({ servers: [], hasTurnPassword: false, relayOnly: false, fromCommandLine: false, relayTurn: 'unknown' });
    expect(await store.own()).toEqual({ iceServers: [], iceTransportPolicy: 'all' });
    expect(await readdir(dir)).toEqual([]);
  });

  it('keeps the servers in network.json and the TURN password in the secret store, across a restart', async () => {
    const dir = await dataDir();
    const saved = await open(dir).save({
      servers: [' stun:stun.example.com:3478', 'turn:turn.example.com:443?transport=tcp', 'turns:turn.example.com:5349', 'stun:stun.example.com:3478'],
      turnUsername: ' agent-7 ',
      turnPassword: TURN_PASSWORD,
      relayOnly: true,
    });
    expect(saved).toEqual({ ok: true, value: undefined });

    const onDisk = await readFile(join(dir, 'network.json'), 'utf8');
    expect(JSON.parse(onDisk)).toEqual({
      servers: ['stun:stun.example.com:3478', 'turn:turn.example.com:443?transport=tcp', 'turns:turn.example.com:5349'],
      turnUsername: 'agent-7',
      relayOnly: true,
    });
    expect(onDisk).not.toContain(TURN_PASSWORD);
    expect(JSON.parse(await readFile(join(dir, 'secrets.json'), 'utf8'))).toEqual({ turnPassword: TURN_PASSWORD });

    const reopened = open(dir);
    const settings = await reopened.publicSettings('available');
    expect(settings).toEqual({
      servers: ['stun:stun.example.com:3478', 'turn:turn.example.com:443?transport=tcp', 'turns:turn.example.com:5349'],
      turnUsername: 'agent-7',
      hasTurnPassword: true,
      relayOnly: true,
      fromCommandLine: false,
      relayTurn: 'available',
    });
    expect(JSON.stringify(settings)).not.toContain(TURN_PASSWORD);
    expect(await reopened.own()).toEqual({
      iceServers: [
        { urls: ['stun:stun.example.com:3478'] },
        { urls: ['turn:turn.example.com:443?transport=tcp', 'turns:turn.example.com:5349'], username: 'agent-7', credential: TURN_PASSWORD },
      ],
      iceTransportPolicy: 'relay',
    });
  });

  it('keeps the stored password when the field is left blank, and replaces it when a new one is typed', async () => {
    const dir = await dataDir();
    const store = open(dir);
    const turn = { servers: ['turn:turn.example.com'], turnUsername: 'agent-7', relayOnly: false };
    expect((await store.save({ ...turn, turnPassword: TURN_PASSWORD })).ok).toBe(true);
    expect((await store.save({ ...turn, turnPassword: '' })).ok).toBe(true);
    expect((await store.save({ ...turn, turnPassword: '   ' })).ok).toBe(true);
    expect((await store.save(turn)).ok).toBe(true);
    expect((await store.own()).iceServers).toEqual([{ urls: ['turn:turn.example.com'], username: 'agent-7', credential: TURN_PASSWORD }]);
    expect((await store.save({ ...turn, turnPassword: 'a-new-password-1' })).ok).toBe(true);
    expect((await open(dir).own()).iceServers).toEqual([{ urls: ['turn:turn.example.com'], username: 'agent-7', credential: 'a-new-password-1' }]);
  });

  it('forgets the TURN password once no TURN server is left to use it', async () => {
    const dir = await dataDir();
    const store = open(dir);
    expect((await store.save({ servers: ['turn:turn.example.com'], turnUsername: 'agent-7', turnPassword: TURN_PASSWORD, relayOnly: true })).ok).toBe(true);
    expect((await store.save({ servers: ['stun:stun.example.com'], relayOnly: false })).ok).toBe(true);
    expect(await store.publicSettings('unknown')).toMatchObject({ servers: ['stun:stun.example.com'], hasTurnPassword: false, relayOnly: false });
    expect(await readFile(join(dir, 'secrets.json'), 'utf8')).not.toContain(TURN_PASSWORD);
    // Putting the TURN server back needs the password again.
    expect(await store.save({ servers: ['turn:turn.example.com'], turnUsername: 'agent-7', relayOnly: true })).toMatchObject({ ok: false, error: { field: 'turnPassword' } });
  });

  it('refuses a TURN server without its username or password, and a bad URL, naming the field; nothing is written', async () => {
    const dir = await dataDir();
    const store = open(dir);
    expect(await store.save({ servers: ['turns:turn.example.com:443'], turnPassword: TURN_PASSWORD, relayOnly: false })).toEqual({
      ok: false,
      error: {
        code: 'invalid_input',
        message: 'turnUsername: the TURN username is required for a turn: or turns: server',
        field: 'turnUsername',
        text: fieldRule('turnUsername', text('network.turnCredentialRequired', { what: term('turnUsername') })),
        issues: [{ field: 'turnUsername', text: text('network.turnCredentialRequired', { what: term('turnUsername') }) }],
      },
    });
    expect(await store.save({ servers: ['turn:turn.example.com'], turnUsername: 'agent-7', turnPassword: ' ', relayOnly: false })).toEqual({
      ok: false,
      error: {
        code: 'invalid_input',
        message: 'turnPassword: the TURN password is required for a turn: or turns: server',
        field: 'turnPassword',
        text: fieldRule('turnPassword', text('network.turnCredentialRequired', { what: term('turnPassword') })),
        issues: [{ field: 'turnPassword', text: text('network.turnCredentialRequired', { what: term('turnPassword') }) }],
      },
    });
    const bad = await store.save({ servers: ['stun:stun.example.com', 'turn://turn.example.com'], relayOnly: false });
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'servers[1]', message: expect.stringContaining('must be stun:HOST[:PORT], turn:HOST[:PORT] or turns:HOST[:PORT]') as unknown } });
    const notBoolean = await store.save({ servers: [], relayOnly: 'yes' as unknown as boolean });
    expect(notBoolean).toMatchObject({ ok: false, error: { field: 'relayOnly', message: 'relayOnly: must be true or false' } });
    expect(await readdir(dir)).toEqual([]);
  });

  it('uses the command line until a save replaces it, showing its TURN username but never its credential', async () => {
    const dir = await dataDir();
    const flags: NetworkFlags = {
      iceServers: [{ urls: 'stun:stun.flags.example.com' }, { urls: ['turn:turn.flags.example.com:443?transport=tcp'], username: 'flag-user', credential: FLAG_PASSWORD }],
      iceTransportPolicy: 'relay',
    };
    // A saved section is there too: the flags stand in for it.
    expect((await open(dir).save({ servers: ['stun:stun.saved.example.com'], relayOnly: false })).ok).toBe(true);
    const store = open(dir, flags);
    const settings = await store.publicSettings('not_offered');
    expect(settings).toEqual({
      servers: ['stun:stun.flags.example.com', 'turn:turn.flags.example.com:443?transport=tcp'],
      turnUsername: 'flag-user',
      hasTurnPassword: true,
      relayOnly: true,
      fromCommandLine: true,
      relayTurn: 'not_offered',
    });
    expect(JSON.stringify(settings)).not.toContain(FLAG_PASSWORD);
    expect(await store.own()).toEqual({ iceServers: flags.iceServers, iceTransportPolicy: 'relay' });

    expect((await store.save({ servers: ['stun:stun.new.example.com'], relayOnly: false })).ok).toBe(true);
    expect(await store.publicSettings('unknown')).toMatchObject({ servers: ['stun:stun.new.example.com'], relayOnly: false, fromCommandLine: false });
    expect(await store.own()).toEqual({ iceServers: [{ urls: ['stun:stun.new.example.com'] }], iceTransportPolicy: 'all' });
    // The flags are never written down.
    for (const name of await readdir(dir)) expect(await readFile(join(dir, name), 'utf8')).not.toContain(FLAG_PASSWORD);
  });

  it('takes "relay only" from the command line alone, and ignores empty flags', async () => {
    const dir = await dataDir();
    expect(await open(dir, { iceTransportPolicy: 'relay' }).publicSettings('unknown')).toMatchObject({ relayOnly: true, fromCommandLine: true, hasTurnPassword: false });
    expect((await open(dir, { iceTransportPolicy: 'relay' }).own()).iceTransportPolicy).toBe('relay');
    expect(await open(dir, {}).publicSettings('unknown')).toMatchObject({ fromCommandLine: false, relayOnly: false });
    expect(await open(dir, { iceServers: [{ urls: 'stun:stun.example.com' }] }).own()).toEqual({ iceServers: [{ urls: 'stun:stun.example.com' }], iceTransportPolicy: 'all' });
  });

  it.each([
    ['not JSON', '{"servers": ['],
    ['a URL no browser takes', JSON.stringify({ servers: ['http://turn.example.com'], relayOnly: true })],
    ['no relayOnly', JSON.stringify({ servers: [] })],
  ])('sets aside a network.json holding %s and goes on with no servers', async (_what, content) => {
    const dir = await dataDir();
    await writeFile(join(dir, 'network.json'), content);
    logLines.length = 0;
    const store = open(dir);
    expect(await store.own()).toEqual({ iceServers: [], iceTransportPolicy: 'all' });
    const files = await readdir(dir);
    expect(files).not.toContain('network.json');
    const aside = files.find((f) => f.startsWith('network.json.corrupt-'));
    expect(aside).toBeDefined();
    expect(await readFile(join(dir, aside!), 'utf8')).toBe(content);
    expect(logLines.join('\n')).toContain('network settings unreadable');
    // A save writes a sound file again.
    expect((await store.save({ servers: ['stun:stun.example.com'], relayOnly: false })).ok).toBe(true);
    expect(await open(dir).publicSettings('unknown')).toMatchObject({ servers: ['stun:stun.example.com'] });
  });

  it('keeps the password in whatever secret store it is given, and never logs it', async () => {
    const dir = await dataDir();
    const secrets = new MemorySecretStore();
    logLines.length = 0;
    const store = new NetworkSettingsStore({ dataDir: dir, secrets });
    expect((await store.save({ servers: ['turn:turn.example.com'], turnUsername: 'agent-7', turnPassword: TURN_PASSWORD, relayOnly: false })).ok).toBe(true);
    expect(await secrets.get('turnPassword')).toBe(TURN_PASSWORD);
    expect(await readdir(dir)).toEqual(['network.json']);
    await store.own();
    expect(logLines.join('\n')).toContain('network settings saved');
    expect(logLines.join('\n')).not.toContain(TURN_PASSWORD);
  });
});

describe('RelayClient.turnCredentials against a real relay', () => {
  it("hands over the relay's TURN servers with this agent's short-lived credential", async () => {
    const server = await relay({ ttlSec: 120 });
    const answer = await relayClient(server.url).turnCredentials();
    expect(answer.ok).toBe(true);
    if (!answer.ok) return;
    expect(answer.value.ttlSec).toBe(120);
    const username = expectRelayCredentials(answer.value.iceServers);
    expect(Math.abs(Number(username.split(':')[0]) - (Math.floor(Date.now() / 1000) + 120))).toBeLessThanOrEqual(1);
  });

  it('says not_available when the relay was started without --turn-secret', async () => {
    const server = await relay({ turn: false });
    expect(await relayClient(server.url).turnCredentials()).toEqual({
      ok: false,
      error: { code: 'not_available', message: 'The relay hands out no TURN credentials (it was started without --turn-secret)', text: text('relay.noTurn'), httpStatus: 404 },
    });
  });

  it('says unauthorized for a token the relay does not know, without repeating it', async () => {
    const server = await relay();
    const answer = await relayClient(server.url, 'not-an-agent-token-99').turnCredentials();
    expect(answer).toMatchObject({ ok: false, error: { code: 'unauthorized', httpStatus: 401 } });
    expect(JSON.stringify(answer)).not.toContain('not-an-agent-token-99');
  });

  it('says gateway_unreachable when nothing listens', async () => {
    const answer = await relayClient(`http://127.0.0.1:${await closedPort()}`).turnCredentials();
    expect(answer).toEqual({
      ok: false,
      error: { code: 'gateway_unreachable', message: 'The relay could not be reached (connection refused: is it running?)', text: text('relay.unreachable', { reason: text('relay.connectionRefused') }) },
    });
  });

  it('refuses an answer that is no TURN credential: not JSON, no servers, a URL no browser takes, no TTL', async () => {
    const bodies = [
      '<html>welcome</html>',
      JSON.stringify({ iceServers: [], ttlSec: 600 }),
      JSON.stringify({ iceServers: [{ urls: ['http://turn.example.com'], username: 'u', credential: 'c' }], ttlSec: 600 }),
      JSON.stringify({ iceServers: [{ urls: ['turn:turn.example.com'] }], ttlSec: 600 }),
      JSON.stringify({ iceServers: [{ urls: ['turn:turn.example.com'], username: 'u', credential: 'c' }] }),
      JSON.stringify({ iceServers: [{ urls: ['turn:turn.example.com'], username: 'u', credential: 'c' }], ttlSec: 0 }),
    ];
    let next = 0;
    const server: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(bodies[next++]));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const client = relayClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    for (const body of bodies) {
      expect(await client.turnCredentials(), body).toEqual({
        ok: false,
        error: {
          code: 'gateway_unreachable',
          message: 'The relay answered the TURN credentials request with a body that is not a relay answer',
          text: text('relay.notAnAnswer', { what: 'TURN credentials' }),
          httpStatus: 200,
        },
      });
    }
  });
});

describe('RelayTurnCredentials against a real relay', () => {
  it('fetches at start; a call starting meanwhile waits for that fetch, later calls ask nothing', async () => {
    const server = await relay({ ttlSec: 600 });
    const { turn, source } = keeper(server.url);
    expect(turn.state).toBe('unknown');
    turn.start();
    const before = Date.now();
    const first = await turn.current();
    expect(turn.state).toBe('available');
    expectRelayCredentials(first?.iceServers);
    expect(first!.expiresAt).toBeGreaterThanOrEqual(before + 600_000 - 1_000);
    expect(first!.expiresAt).toBeLessThanOrEqual(Date.now() + 600_000);
    expect(await turn.current()).toEqual(first);
    expect(source.attempts).toHaveLength(1);
  });

  it('renews the credentials at the chosen part of their life, before they expire', async () => {
    const server = await relay({ ttlSec: 60 });
    // 2 % of 60 s: the renewal is due 1.2 s after the fetch.
    const { turn, source } = keeper(server.url, { renewFraction: 0.02 });
    turn.start();
    const first = await turn.current();
    const firstUser = expectRelayCredentials(first?.iceServers);
    await until(() => source.attempts.length >= 2, 'the renewal', 4_000);
    expect(gaps(source.attempts)[0]).toBeGreaterThanOrEqual(1_150);
    await until(() => turn.state === 'available' && source.attempts.length >= 2, 'the renewal is in');
    await wait(100);
    const second = await turn.current();
    const secondUser = expectRelayCredentials(second?.iceServers);
    expect(secondUser).not.toBe(firstUser);
    expect(second!.expiresAt).toBeGreaterThan(first!.expiresAt + 1_000);
    expect(source.attempts).toHaveLength(2);
  });

  it('keeps credentials still valid when a renewal fails, hands them to calls, and renews once the relay is back', async () => {
    const server = await relay({ ttlSec: 60 });
    const { turn, source } = keeper(server.url, { renewFraction: 0.02, retryMs: 1_000 });
    turn.start();
    const first = await turn.current();
    const firstUser = expectRelayCredentials(first?.iceServers);
    await server.close();

    await until(() => source.attempts.length >= 2, 'the renewal is tried', 4_000);
    await wait(100);
    expect(turn.state).toBe('available');
    const started = performance.now();
    expect(await turn.current()).toEqual(first);
    expect(performance.now() - started).toBeLessThan(100);

    await relay({ ttlSec: 60, port: server.port });
    let renewed = await turn.current();
    for (const end = Date.now() + 5_000; renewed?.iceServers[0]?.username === firstUser && Date.now() < end; renewed = await turn.current()) await wait(20);
    expect(expectRelayCredentials(renewed?.iceServers)).not.toBe(firstUser);
    expect(source.attempts.length).toBeGreaterThanOrEqual(3);
    expect(turn.state).toBe('available');
  });

  it('says not_offered at once for a relay without TURN, holds up no call, and asks again later', async () => {
    const plain = await relay({ turn: false });
    const { turn, source } = keeper(plain.url, { recheckMs: 1_000, retryMs: 1_000 });
    turn.start();
    await until(() => turn.state === 'not_offered', 'not_offered');
    const started = performance.now();
    expect(await turn.current()).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(100);
    expect(source.attempts).toHaveLength(1);

    // The relay is restarted with --turn-secret.
    await plain.close();
    await relay({ port: plain.port });
    await until(() => turn.state === 'available', 'the recheck finds credentials', 4_000);
    expectRelayCredentials((await turn.current())?.iceServers);
  });

  it('says unreachable while the relay is down, retries with a doubling wait, and recovers when it is back', async () => {
    const port = await closedPort();
    const { turn, source } = keeper(`http://127.0.0.1:${port}`, { retryMs: 1_000 });
    turn.start();
    await until(() => turn.state === 'unreachable', 'unreachable');
    await until(() => source.attempts.length >= 2, 'the first retry', 3_000);
    await wait(100);
    expect(turn.state).toBe('unreachable');
    await relay({ port });
    await until(() => turn.state === 'available', 'the second retry reaches the relay', 5_000);
    expect(source.attempts).toHaveLength(3);
    const [firstWait, secondWait] = gaps(source.attempts);
    expect(firstWait).toBeGreaterThanOrEqual(950);
    expect(firstWait).toBeLessThan(1_900);
    expect(secondWait).toBeGreaterThanOrEqual(1_950);
    expectRelayCredentials((await turn.current())?.iceServers);
  });

  it('asks the relay at once for a call when it had none, without waiting for the next retry', async () => {
    const port = await closedPort();
    const { turn, source } = keeper(`http://127.0.0.1:${port}`, { retryMs: 60_000 });
    turn.start();
    await until(() => turn.state === 'unreachable', 'unreachable');
    expect(await turn.current()).toBeUndefined();
    expect(source.attempts).toHaveLength(2);
    await relay({ port });
    expectRelayCredentials((await turn.current())?.iceServers);
    expect(turn.state).toBe('available');
  });

  it('holds a call up for about a second at most when the relay does not answer', async () => {
    const hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', () => resolve()));
    const { turn } = keeper(`http://127.0.0.1:${(hanging.address() as AddressInfo).port}`, {}, 2_500);
    // Closed before the client, which then has no request left to wait for.
    cleanups.push(async () => {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    });
    const started = performance.now();
    expect(await turn.current()).toBeUndefined();
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(900);
    expect(waited).toBeLessThan(2_000);
  });

  it('does not hand a new call credentials near their end: it fetches fresh ones, or gives none', async () => {
    const server = await relay({ ttlSec: 120 });
    const time = clock();
    const { turn, source } = keeper(server.url, { now: time.now });
    turn.start();
    const first = await turn.current();
    expect(first).toBeDefined();
    // 35 s of life left: still handed out.
    time.advance(85_000);
    expect(await turn.current()).toEqual(first);
    expect(source.attempts).toHaveLength(1);
    // 25 s left: a call could not set up its allocation with time to spare.
    time.advance(10_000);
    const fresh = await turn.current();
    expect(source.attempts).toHaveLength(2);
    expectRelayCredentials(fresh?.iceServers);
    expect(fresh!.expiresAt).toBeGreaterThan(first!.expiresAt + 90_000);
    expect(fresh!.expiresAt - time.now()).toBeGreaterThan(119_000);
    expect(fresh!.expiresAt - time.now()).toBeLessThanOrEqual(120_000);

    await server.close();
    time.advance(95_000);
    expect(await turn.current()).toBeUndefined();
    expect(turn.state).toBe('unreachable');
  });

  it('does not ask an unreachable relay every second once its credentials have run out', async () => {
    const server = await relay({ ttlSec: 60 });
    const time = clock();
    const { turn, source } = keeper(server.url, { now: time.now, retryMs: 5_000 });
    turn.start();
    expect(await turn.current()).toBeDefined();
    await server.close();
    time.advance(61_000);
    expect(await turn.current()).toBeUndefined();
    expect(turn.state).toBe('unreachable');
    expect(source.attempts).toHaveLength(2);
    // The first retry is due 5 s later, not at the one-second floor.
    await wait(2_200);
    expect(source.attempts).toHaveLength(2);
  });

  it('stops: no fetch after stop(), and no credentials for calls', async () => {
    const server = await relay({ ttlSec: 60 });
    const { turn, source } = keeper(server.url, { renewFraction: 0.02 });
    turn.start();
    expect(await turn.current()).toBeDefined();
    turn.stop();
    await wait(1_600);
    expect(source.attempts).toHaveLength(1);
    expect(await turn.current()).toBeUndefined();
    expect(source.attempts).toHaveLength(1);
  });

  it('never logs a credential it fetched', async () => {
    logLines.length = 0;
    const server = await relay({ ttlSec: 600 });
    const { turn } = keeper(server.url);
    turn.start();
    const got = await turn.current();
    const credential = got?.iceServers[0]?.credential;
    expect(credential).toBeDefined();
    const all = logLines.join('\n');
    expect(all).toContain('the relay hands out TURN credentials');
    expect(all).toContain(TURN_URLS[0]);
    expect(all).not.toContain(credential!);
    expect(all).not.toContain(TURN_SECRET);
    expect(all).not.toContain(AGENT_TOKEN);
  });
});

describe('mergeIceConfig', () => {
  const own = { iceServers: [{ urls: 'stun:stun.example.com' }, { urls: ['turns:own.example.com:443'], username: 'u', credential: 'p' }], iceTransportPolicy: 'relay' as const };
  const fromRelay = { iceServers: [{ urls: ['turn:relay.example.com:3478'], username: '1700000000:alice', credential: 'Yw==' }], expiresAt: 1_700_000_000_000 };

  it("puts the agent's own servers first, then the relay's, with the credentials' expiry", () => {
    expect(mergeIceConfig(own, fromRelay)).toEqual({ iceServers: [...own.iceServers, ...fromRelay.iceServers], iceTransportPolicy: 'relay', expiresAt: fromRelay.expiresAt });
  });

  it('has no expiry without relay credentials, and keeps the policy either way', () => {
    expect(mergeIceConfig(own, undefined)).toEqual({ iceServers: own.iceServers, iceTransportPolicy: 'relay' });
    expect(mergeIceConfig({ iceServers: [], iceTransportPolicy: 'all' }, fromRelay)).toEqual({ iceServers: fromRelay.iceServers, iceTransportPolicy: 'all', expiresAt: fromRelay.expiresAt });
  });
});
