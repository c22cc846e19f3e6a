// GET /turn-credentials against a real relay over HTTP, and the flags that configure it: the
// credentials are checked here with node:crypto alone, the way a TURN server with the same secret
// checks them (turn-coturn.test.ts has a real coturn accept them).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configureLogging } from '../../../shared/log';
import { parseRelayCli, RELAY_USAGE } from '../../../relay/cli-options';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { DEFAULT_TURN_TTL_SEC, isTurnUrl } from '../../../relay/turn-credentials';
import { relayDataDir, type RelayDataDir } from '../../support/relay-data-dir';
import { team } from './agent-fixtures';
import { APP_SECRET } from './webhook-fixtures';

configureLogging({ level: 'error' });

const root = resolve(import.meta.dirname, '../../..');
const TURN_SECRET = 'turn-shared-secret-5f3a9c';
const TURN_URLS = ['turn:turn.example.com:3478?transport=udp', 'turns:turn.example.com:5349?transport=tcp'];
const { agents, tokens } = team('alice', 'bob');

interface TurnAnswer {
  iceServers: { urls: string[]; username: string; credential: string }[];
  ttlSec: number;
}

const relays: RelayServer[] = [];
const dataDirs: RelayDataDir[] = [];
afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.close()));
  await Promise.all(dataDirs.splice(0).map((data) => data.remove()));
});

async function relayWith(options: Partial<RelayOptions> = {}): Promise<RelayServer> {
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, turn: { secret: TURN_SECRET, urls: TURN_URLS }, ...options });
  relays.push(relay);
  return relay;
}

async function getTurn(relay: RelayServer, token: string | undefined, init: RequestInit = {}): Promise<{ res: Response; text: string }> {
  const res = await fetch(`${relay.url}/turn-credentials`, { ...init, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  return { res, text: await res.text() };
}

/** What a TURN server with `secret` computes for `username` (coturn --use-auth-secret). */
const expectedCredential = (secret: string, username: string) => createHmac('sha1', secret).update(username).digest('base64');

describe('GET /turn-credentials', () => {
  it('hands an agent a credential for its own id that expires after the TTL, signed with the secret', async () => {
    const relay = await relayWith();
    const before = Math.floor(Date.now() / 1000);
    const { res, text } = await getTurn(relay, tokens.alice);
    const after = Math.floor(Date.now() / 1000);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = JSON.parse(text) as TurnAnswer;
    expect(Object.keys(body).sort()).toEqual(['iceServers', 'ttlSec']);
    expect(body.ttlSec).toBe(DEFAULT_TURN_TTL_SEC);
    expect(body.iceServers).toHaveLength(1);
    const server = body.iceServers[0]!;
    expect(Object.keys(server).sort()).toEqual(['credential', 'urls', 'username']);
    expect(server.urls).toEqual(TURN_URLS);

    const match = /^(\d+):alice$/.exec(server.username);
    expect(match, server.username).not.toBeNull();
    const expiry = Number(match![1]);
    expect(expiry).toBeGreaterThanOrEqual(before + DEFAULT_TURN_TTL_SEC);
    expect(expiry).toBeLessThanOrEqual(after + DEFAULT_TURN_TTL_SEC);
    expect(server.credential).toBe(expectedCredential(TURN_SECRET, server.username));
    expect(Buffer.from(server.credential, 'base64')).toHaveLength(20);
    // Another secret would not accept it: the credential depends on the secret.
    expect(server.credential).not.toBe(expectedCredential(`${TURN_SECRET}x`, server.username));
    expect(text).not.toContain(TURN_SECRET);
  });

  it('gives each agent a username of its own and honours the configured TTL', async () => {
    const relay = await relayWith({ turn: { secret: TURN_SECRET, urls: ['turn:127.0.0.1:3478'], ttlSec: 120 } });
    const now = Math.floor(Date.now() / 1000);
    const bob = JSON.parse((await getTurn(relay, tokens.bob)).text) as TurnAnswer;
    expect(bob.ttlSec).toBe(120);
    const [expiry, id] = bob.iceServers[0]!.username.split(':');
    expect(id).toBe('bob');
    expect(Math.abs(Number(expiry) - (now + 120))).toBeLessThanOrEqual(1);
    expect(bob.iceServers[0]!.urls).toEqual(['turn:127.0.0.1:3478']);
    expect(bob.iceServers[0]!.credential).toBe(expectedCredential(TURN_SECRET, bob.iceServers[0]!.username));
  });

  it('names plain-token agents by their ids, agent-1 and on', async () => {
    const relay = await relayWith({ agents: [], agentTokens: ['plain-token-0001-0123456789abcdef'] });
    const body = JSON.parse((await getTurn(relay, 'plain-token-0001-0123456789abcdef')).text) as TurnAnswer;
    expect(body.iceServers[0]!.username).toMatch(/^\d+:agent-1$/);
  });

  it('answers 401 without a valid agent token, and says nothing about TURN', async () => {
    const relay = await relayWith();
    for (const token of [undefined, 'not-a-token-000', '']) {
      const { res, text } = await getTurn(relay, token);
      expect(res.status, String(token)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="relay"');
      expect(JSON.parse(text)).toEqual({ error: { code: 'unauthorized', message: 'a valid agent token is required (Authorization: Bearer <token>)' } });
    }
    const basic = await fetch(`${relay.url}/turn-credentials`, { headers: { authorization: `Basic ${Buffer.from(`alice:${tokens.alice}`).toString('base64')}` } });
    expect(basic.status).toBe(401);
  });

  it('answers 404 not_configured to an agent when the relay has no TURN secret, and 401 still comes first', async () => {
    const relay = await relayWith({ turn: undefined });
    const { res, text } = await getTurn(relay, tokens.alice);
    expect(res.status).toBe(404);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(JSON.parse(text)).toEqual({
      error: { code: 'not_configured', message: 'this relay hands out no TURN credentials: it runs without --turn-secret and --turn-urls' },
    });
    expect((await getTurn(relay, undefined)).res.status).toBe(401);
  });

  it('answers 405 with Allow: GET to other methods', async () => {
    const relay = await relayWith();
    const { res, text } = await getTurn(relay, tokens.alice, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(text).not.toContain(TURN_SECRET);
  });

  it('never logs the secret or a credential', async () => {
    const lines: string[] = [];
    configureLogging({ level: 'debug', sink: (line) => lines.push(line) });
    try {
      const relay = await relayWith();
      const body = JSON.parse((await getTurn(relay, tokens.alice)).text) as TurnAnswer;
      await getTurn(relay, 'not-a-token-000');
      await relay.close();
      expect(lines.length).toBeGreaterThan(1);
      const all = lines.join('\n');
      expect(all).toContain('turn:turn.example.com:3478');
      expect(all).not.toContain(TURN_SECRET);
      expect(all).not.toContain(body.iceServers[0]!.credential);
    } finally {
      configureLogging({ level: 'error', sink: (line, level) => (level === 'error' || level === 'warn' ? console.error(line) : console.log(line)) });
    }
  });

  it('refuses to start with a TURN configuration that no TURN server could use, without quoting the secret', async () => {
    const cases: [NonNullable<RelayOptions['turn']>, string][] = [
      [{ secret: '', urls: TURN_URLS }, 'turn.secret must not be empty or contain spaces'],
      [{ secret: 'has space', urls: TURN_URLS }, 'turn.secret must not be empty or contain spaces'],
      [{ secret: TURN_SECRET, urls: [] }, 'turn.urls must list at least one TURN URL'],
      [{ secret: TURN_SECRET, urls: ['stun:stun.example.com'] }, 'turn.urls: each URL must be turn:HOST[:PORT] or turns:HOST[:PORT], optionally followed by ?transport=udp or ?transport=tcp (got "stun:stun.example.com")'],
      [{ secret: TURN_SECRET, urls: TURN_URLS, ttlSec: 0 }, 'turn.ttlSec must be a whole number of seconds from 60 to 86400'],
      [{ secret: TURN_SECRET, urls: TURN_URLS, ttlSec: 90.5 }, 'turn.ttlSec must be a whole number of seconds from 60 to 86400'],
    ];
    for (const [turn, message] of cases) {
      const started = startRelay({ port: 0, appSecret: APP_SECRET, agents, turn });
      await expect(started).rejects.toThrow(message);
      await started.catch((e: unknown) => expect(String(e)).not.toContain(TURN_SECRET));
    }
  });
});

describe('TURN URLs (RFC 7065)', () => {
  it.each([
    'turn:turn.example.com',
    'turn:turn.example.com:3478',
    'turns:turn.example.com:5349',
    'turn:198.51.100.7:3478?transport=udp',
    'turn:198.51.100.7?transport=tcp',
    'turns:[2001:db8::1]:443?transport=tcp',
    'turn:localhost',
  ])('accepts %s', (url) => {
    expect(isTurnUrl(url)).toBe(true);
  });

  it.each([
    'stun:stun.example.com:3478',
    'turn://turn.example.com:3478',
    'TURN:turn.example.com',
    'turn:',
    'turn:turn.example.com:0',
    'turn:turn.example.com:65536',
    'turn:turn.example.com:port',
    'turn:turn.example.com:3478?transport=sctp',
    'turn:turn.example.com:3478?transport=',
    'turn:turn.example.com/path',
    'turn:user:pw@turn.example.com',
    'turn:[not-ipv6]:3478',
    'turn:-bad-.example.com',
    'turn:turn..example.com',
    'https://turn.example.com',
  ])('refuses %s', (url) => {
    expect(isTurnUrl(url)).toBe(false);
  });
});

describe('relay command line: TURN', () => {
  const good = ['--app-secret', 'app-secret-1', '--agent-token', 'agent-token-1-0123456789abcdef0123'];

  it('reads --turn-secret, --turn-urls and --turn-ttl-seconds, trimming the URLs, with a default TTL of an hour', () => {
    expect(parseRelayCli([...good, '--turn-secret', TURN_SECRET, '--turn-urls', ' turn:turn.example.com:3478 , turns:turn.example.com:5349?transport=tcp,'], {})).toMatchObject({
      ok: true,
      value: { turn: { secret: TURN_SECRET, urls: ['turn:turn.example.com:3478', 'turns:turn.example.com:5349?transport=tcp'], ttlSec: 3600 } },
    });
    expect(parseRelayCli([...good, '--turn-secret', TURN_SECRET, '--turn-urls', 'turn:127.0.0.1', '--turn-ttl-seconds', '600'], {})).toMatchObject({
      ok: true,
      value: { turn: { secret: TURN_SECRET, urls: ['turn:127.0.0.1'], ttlSec: 600 } },
    });
    const without = parseRelayCli(good, {});
    expect(without.ok).toBe(true);
    expect(without).not.toHaveProperty('value.turn');
  });

  it('reads RELAY_TURN_SECRET, RELAY_TURN_URLS and RELAY_TURN_TTL_SECONDS, and flags win', () => {
    const env = { RELAY_TURN_SECRET: 'env-turn-secret', RELAY_TURN_URLS: 'turn:env.example.com', RELAY_TURN_TTL_SECONDS: '900' };
    expect(parseRelayCli(good, env)).toMatchObject({ ok: true, value: { turn: { secret: 'env-turn-secret', urls: ['turn:env.example.com'], ttlSec: 900 } } });
    expect(parseRelayCli([...good, '--turn-secret', TURN_SECRET, '--turn-urls', 'turns:flag.example.com', '--turn-ttl-seconds', '60'], env)).toMatchObject({
      ok: true,
      value: { turn: { secret: TURN_SECRET, urls: ['turns:flag.example.com'], ttlSec: 60 } },
    });
  });

  it.each([
    [['--turn-secret', TURN_SECRET], '--turn-urls', '--turn-urls is required with --turn-secret (or RELAY_TURN_URLS): the comma-separated turn: or turns: URLs of the TURN server'],
    [['--turn-urls', 'turn:turn.example.com'], '--turn-secret', "--turn-secret is required with --turn-urls (or RELAY_TURN_SECRET): the TURN server's static-auth-secret that signs the credentials"],
    [['--turn-secret', `${TURN_SECRET} x`, '--turn-urls', 'turn:turn.example.com'], '--turn-secret', '--turn-secret must not be empty or contain spaces'],
    [['--turn-secret', TURN_SECRET, '--turn-urls', ' , '], '--turn-urls', '--turn-urls must list at least one turn: or turns: URL'],
    [
      ['--turn-secret', TURN_SECRET, '--turn-urls', 'turn:ok.example.com,stun:stun.example.com'],
      '--turn-urls',
      '--turn-urls: each URL must be turn:HOST[:PORT] or turns:HOST[:PORT], optionally followed by ?transport=udp or ?transport=tcp (got "stun:stun.example.com")',
    ],
    [
      ['--turn-secret', TURN_SECRET, '--turn-urls', 'turn:turn.example.com?transport=sctp'],
      '--turn-urls',
      '--turn-urls: each URL must be turn:HOST[:PORT] or turns:HOST[:PORT], optionally followed by ?transport=udp or ?transport=tcp (got "turn:turn.example.com?transport=sctp")',
    ],
    [
      ['--turn-secret', TURN_SECRET, '--turn-urls', 'turn:carol:hunter2@turn.example.com'],
      '--turn-urls',
      '--turn-urls: each URL must be turn:HOST[:PORT] or turns:HOST[:PORT], optionally followed by ?transport=udp or ?transport=tcp (got a URL with a user name or password in it)',
    ],
    [['--turn-secret', TURN_SECRET, '--turn-urls', 'turn:t.example.com', '--turn-ttl-seconds', '59'], '--turn-ttl-seconds', '--turn-ttl-seconds must be a whole number of seconds from 60 to 86400 (got "59")'],
    [['--turn-secret', TURN_SECRET, '--turn-urls', 'turn:t.example.com', '--turn-ttl-seconds', '86401'], '--turn-ttl-seconds', '--turn-ttl-seconds must be a whole number of seconds from 60 to 86400 (got "86401")'],
    [['--turn-secret', TURN_SECRET, '--turn-urls', 'turn:t.example.com', '--turn-ttl-seconds', '1h'], '--turn-ttl-seconds', '--turn-ttl-seconds must be a whole number of seconds from 60 to 86400 (got "1h")'],
    [['--turn-ttl-seconds', '600'], '--turn-ttl-seconds', '--turn-ttl-seconds needs --turn-secret and --turn-urls (or RELAY_TURN_SECRET / RELAY_TURN_URLS)'],
    [['--turn-secret'], '--turn-secret', '--turn-secret needs a value'],
  ])('refuses %j naming %s and the rule, never quoting the secret', (argv, field, message) => {
    const parsed = parseRelayCli([...good, ...argv], {});
    expect(parsed).toMatchObject({ ok: false, error: { code: 'invalid_input', message } });
    if (!parsed.ok) {
      expect(parsed.error.message).not.toContain(TURN_SECRET);
      expect(parsed.error.message).not.toContain('hunter2');
      if (parsed.error.field !== undefined) expect(parsed.error.field).toBe(field);
    }
  });

  it('refuses half a configuration from the environment too', () => {
    expect(parseRelayCli(good, { RELAY_TURN_SECRET: TURN_SECRET })).toMatchObject({ ok: false, error: { field: '--turn-urls' } });
    expect(parseRelayCli(good, { RELAY_TURN_URLS: 'turn:t.example.com' })).toMatchObject({ ok: false, error: { field: '--turn-secret' } });
  });

  it('lists the flags and their environment variables in --help', () => {
    for (const text of ['--turn-secret S', '--turn-urls U[,U]', '--turn-ttl-seconds T', 'RELAY_TURN_SECRET', 'RELAY_TURN_URLS', 'RELAY_TURN_TTL_SECONDS', 'default 3600']) {
      expect(RELAY_USAGE).toContain(text);
    }
  });

  it('npm run relay with --turn-secret and --turn-urls serves credentials, and prints nothing of the secret', async () => {
    const args = ['--port', '0', '--app-secret', 'app-secret-1', '--agent-token', 'agent-token-1-0123456789abcdef0123', '--turn-secret', TURN_SECRET, '--turn-urls', 'turn:127.0.0.1:3478', '--log-level', 'debug'];
    const child = await spawnCli(args);
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    try {
      const url = await new Promise<string>((done, fail) => {
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const match = /relay listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
          if (match) done(match[1]!);
        });
        child.on('exit', () => fail(new Error(`the relay exited early: ${output}`)));
      });
      const res = await fetch(`${url}/turn-credentials`, { headers: { authorization: 'Bearer agent-token-1-0123456789abcdef0123' } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as TurnAnswer;
      expect(body.iceServers[0]).toMatchObject({ urls: ['turn:127.0.0.1:3478'], username: expect.stringMatching(/^\d+:agent-1$/) as unknown });
      expect(body.iceServers[0]!.credential).toBe(expectedCredential(TURN_SECRET, body.iceServers[0]!.username));
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(output).toContain('relay listening');
    expect(output).not.toContain(TURN_SECRET);
  });

  it('exits with code 2 and one line naming the flag when only half of TURN is given', async () => {
    const child = await spawnCli(['--app-secret', 'app-secret-1', '--agent-token', 'agent-token-1-0123456789abcdef0123', '--turn-secret', TURN_SECRET]);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.on('exit', (c) => done(c)));
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toEqual([
      "relay: --turn-urls is required with --turn-secret (or RELAY_TURN_URLS): the comma-separated turn: or turns: URLs of the TURN server",
    ]);
  });
});

/** `npm run relay` in the checkout, its files in a data directory of its own. */
async function spawnCli(args: string[]): Promise<ChildProcessWithoutNullStreams> {
  const data = await relayDataDir();
  dataDirs.push(data);
  return spawn(process.execPath, ['--import', 'tsx', 'relay/cli.ts', ...args, ...data.flags], { cwd: root, env: cleanEnv() });
}

function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RELAY_')));
}
