// `npm run bridge` flags (bridge/cli-options.ts): flags or the environment, every bad one refused in
// one line naming the flag and its rule.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultNodeId, parseBridgeCli } from '../../../bridge/cli-options';
import { MemoryBackend } from '../../../relay/backend/memory-backend';
import { startRelay, type RelayServer } from '../../../relay/server';
import { configureLogging } from '../../../shared/log';
import { APP_SECRET } from '../relay/webhook-fixtures';

configureLogging({ level: 'error' });

const root = resolve(import.meta.dirname, '../../..');
const relays: RelayServer[] = [];
const children: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all(relays.splice(0).map((r) => r.close()));
});

const TOKEN = 'bridge-token-0123456789abcdef-0123456789';
const good = ['--relay-url', 'https://relay.example.com', '--bridge-token', TOKEN];

describe('bridge command line', () => {
  it('reads the flags, with their defaults', () => {
    expect(parseBridgeCli(good, {})).toEqual({
      ok: true,
      value: { relayUrl: 'https://relay.example.com', bridgeToken: TOKEN, controlPort: 8790, controlAddress: '127.0.0.1', logLevel: 'info' },
    });
    expect(
      parseBridgeCli(
        [...good, '--public-address', '203.0.113.7', '--rtp-ports', '40000-40999', '--control-port', '0', '--control-address', '0.0.0.0', '--node-id', 'media-1', '--capacity', '200', '--log-level', 'debug'],
        {},
      ),
    ).toEqual({
      ok: true,
      value: {
        relayUrl: 'https://relay.example.com',
        bridgeToken: TOKEN,
        publicAddress: '203.0.113.7',
        rtpPorts: { from: 40000, to: 40999 },
        controlPort: 0,
        controlAddress: '0.0.0.0',
        nodeId: 'media-1',
        capacity: 200,
        logLevel: 'debug',
      },
    });
    expect(parseBridgeCli(['--help'], {})).toEqual({ ok: true, value: 'help' });
  });

  it('reads the environment, RELAY_BRIDGE_TOKEN for the token, and flags win over it', () => {
    const env = {
      BRIDGE_RELAY_URL: 'http://10.0.0.5:8787',
      RELAY_BRIDGE_TOKEN: TOKEN,
      BRIDGE_PUBLIC_ADDRESS: '2001:db8::7',
      BRIDGE_RTP_PORTS: '50000-50010',
      BRIDGE_CONTROL_PORT: '9001',
      BRIDGE_CONTROL_ADDRESS: '10.0.0.6',
      BRIDGE_NODE_ID: 'env-node',
      BRIDGE_CAPACITY: '5',
      BRIDGE_LOG_LEVEL: 'warn',
    };
    expect(parseBridgeCli([], env)).toEqual({
      ok: true,
      value: {
        relayUrl: 'http://10.0.0.5:8787',
        bridgeToken: TOKEN,
        publicAddress: '2001:db8::7',
        rtpPorts: { from: 50000, to: 50010 },
        controlPort: 9001,
        controlAddress: '10.0.0.6',
        nodeId: 'env-node',
        capacity: 5,
        logLevel: 'warn',
      },
    });
    const flagToken = 'flag-bridge-token-0123456789abcdef-0123';
    expect(parseBridgeCli(['--bridge-token', flagToken, '--node-id', 'flag-node'], env)).toMatchObject({ ok: true, value: { bridgeToken: flagToken, nodeId: 'flag-node' } });
  });

  it('refuses every bad flag in one line naming it and its rule', () => {
    const refusals: Array<[string[], Record<string, string>, string, string]> = [
      [['--bridge-token', TOKEN], {}, '--relay-url', '--relay-url is required (or BRIDGE_RELAY_URL): the relay the node registers with'],
      [['--relay-url', 'ftp://relay', '--bridge-token', TOKEN], {}, '--relay-url', '--relay-url must be an http:// or https:// URL'],
      [['--relay-url', 'http://relay'], {}, '--bridge-token', "--bridge-token is required (or RELAY_BRIDGE_TOKEN): the relay's --bridge-token"],
      [['--relay-url', 'http://relay', '--bridge-token', 'short-token'], {}, '--bridge-token', '--bridge-token: must be at least 32 characters'],
      [['--relay-url', 'http://relay'], { RELAY_BRIDGE_TOKEN: 'short' }, '--bridge-token', 'RELAY_BRIDGE_TOKEN: must be at least 32 characters'],
      [['--relay-url', 'http://relay', '--bridge-token', 'a bridge token with spaces 0123456789abc'], {}, '--bridge-token', '--bridge-token: must not contain spaces'],
      [[...good, '--public-address', 'media.example.com'], {}, '--public-address', '--public-address must be an IP address (got "media.example.com")'],
      [[...good, '--rtp-ports', '40000'], {}, '--rtp-ports', '--rtp-ports must be FROM-TO, two whole numbers from 1024 to 65535, FROM not above TO (got "40000")'],
      [[...good, '--rtp-ports', '500-600'], {}, '--rtp-ports', '--rtp-ports must be FROM-TO, two whole numbers from 1024 to 65535, FROM not above TO (got "500-600")'],
      [[...good, '--rtp-ports', '41000-40000'], {}, '--rtp-ports', '--rtp-ports must be FROM-TO, two whole numbers from 1024 to 65535, FROM not above TO (got "41000-40000")'],
      [[...good, '--rtp-ports', '60000-70000'], {}, '--rtp-ports', '--rtp-ports must be FROM-TO, two whole numbers from 1024 to 65535, FROM not above TO (got "60000-70000")'],
      [[...good, '--control-port', '70000'], {}, '--control-port', '--control-port must be a whole number from 0 to 65535 (got "70000")'],
      [[...good, '--control-port', 'http'], {}, '--control-port', '--control-port must be a whole number from 0 to 65535 (got "http")'],
      [[...good, '--control-address', 'localhost'], {}, '--control-address', '--control-address must be an IP address such as 127.0.0.1 or 0.0.0.0 (got "localhost")'],
      [[...good, '--node-id=-node'], {}, '--node-id', '--node-id must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit (got "-node")'],
      [[...good, '--capacity', '0'], {}, '--capacity', '--capacity must be a whole number from 1 to 100000 (got "0")'],
      [[...good, '--capacity', '100001'], {}, '--capacity', '--capacity must be a whole number from 1 to 100000 (got "100001")'],
      [[...good, '--capacity', '2.5'], {}, '--capacity', '--capacity must be a whole number from 1 to 100000 (got "2.5")'],
      [[...good, '--log-level', 'loud'], {}, '--log-level', '--log-level must be one of debug, info, warn, error'],
    ];
    for (const [argv, env, field, message] of refusals) expect(parseBridgeCli(argv, env)).toEqual({ ok: false, error: { code: 'invalid_input', message, field } });
    expect(parseBridgeCli([...good, '--prot', '1'], {})).toMatchObject({ ok: false, error: { message: '--prot is not a known flag (see --help)' } });
    expect(parseBridgeCli([...good, '--capacity'], {})).toMatchObject({ ok: false, error: { message: '--capacity needs a value', field: '--capacity' } });
    expect(parseBridgeCli([...good, '--node-id', '-node'], {})).toMatchObject({ ok: false, error: { message: '--node-id: the value looks like a flag; write --node-id=VALUE', field: '--node-id' } });
    expect(parseBridgeCli([...good, 'extra'], {})).toMatchObject({ ok: false, error: { message: 'unexpected argument "extra": every setting is a --flag (see --help)' } });
  });

  it('never echoes the relay URL, which may hold a password, nor the token', () => {
    const refused = parseBridgeCli(['--relay-url', 'ftp://user:secret@relay', '--bridge-token', 'short secret token'], {});
    expect(JSON.stringify(refused)).not.toContain('secret');
    const token = parseBridgeCli(['--relay-url', 'http://relay', '--bridge-token', 'short-secret-token'], {});
    expect(JSON.stringify(token)).not.toContain('short-secret-token');
  });

  it('names a node after its host and control port, within the id rule', () => {
    expect(defaultNodeId('media-1.example.com', 8790)).toBe('media-1-8790');
    expect(defaultNodeId('büro_box', 9000)).toBe('b-ro_box-9000');
    expect(defaultNodeId('--', 1)).toBe('bridge-1');
    const long = defaultNodeId('x'.repeat(100), 65535);
    expect(long).toHaveLength(64);
    expect(long.endsWith('-65535')).toBe(true);
  });
});

describe('npm run bridge', () => {
  it('registers with the relay, keeps reporting, and on SIGTERM leaves it and exits 0', async () => {
    const backend = new MemoryBackend({ retentionMs: 600_000, dedupWindowMs: 60_000 });
    const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agentTokens: ['agent-token-0001-0123456789abcdef-0123'], heartbeatMs: 60_000, bridgeToken: TOKEN, bridgeHeartbeatMs: 200, backend });
    relays.push(relay);
    const child = run(['--relay-url', relay.url, '--control-port', '0', '--node-id', 'cli-node', '--capacity', '3', '--rtp-ports', '41000-41100', '--log-level', 'error'], { RELAY_BRIDGE_TOKEN: TOKEN });
    const exited = exitOf(child);
    const line = await printed(child, /bridge node cli-node listening on (http:\/\/127\.0\.0\.1:\d+), registering with (\S+)/);
    expect(line[2]).toBe(relay.url);
    await expect.poll(async () => (await backend.nodes()).map((n) => [n.nodeId, n.controlUrl, n.publicAddress, n.capacity]), { timeout: 10_000 }).toEqual([['cli-node', line[1], '127.0.0.1', 3]]);
    // Its control API answers the bridge token only.
    expect((await fetch(`${line[1]}/calls/wacid.1`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    expect((await fetch(`${line[1]}/calls/wacid.1`)).status).toBe(401);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(await backend.nodes()).toEqual([]);
  });

  it('keeps running while the relay cannot be reached, and still stops cleanly', async () => {
    const child = run(['--relay-url', 'http://127.0.0.1:9', '--bridge-token', TOKEN, '--control-port', '0', '--log-level', 'warn'], {});
    const exited = exitOf(child);
    await printed(child, /listening on/);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await expect.poll(() => stderr, { timeout: 10_000 }).toContain('could not register with the relay; trying again');
    expect(stderr).not.toContain(TOKEN);
    expect(child.exitCode).toBeNull();
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('exits with code 2 and one line naming a bad flag', async () => {
    const child = run(['--relay-url', 'http://127.0.0.1:8787', '--bridge-token', TOKEN, '--capacity', 'lots'], {});
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await exitOf(child)).toBe(2);
    expect(stderr.trim().split('\n')).toEqual(['bridge: --capacity must be a whole number from 1 to 100000 (got "lots")']);
  });
});

function run(args: string[], env: Record<string, string>): ChildProcessWithoutNullStreams {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('BRIDGE_') && k !== 'RELAY_BRIDGE_TOKEN'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'bridge/cli.ts', ...args], { cwd: root, env: { ...clean, ...env } });
  children.push(child);
  return child;
}

function exitOf(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((done) => child.on('exit', (code) => done(code)));
}

/** The first stdout match of `pattern`; rejects when the process exits first. */
function printed(child: ChildProcessWithoutNullStreams, pattern: RegExp): Promise<RegExpExecArray> {
  let stdout = '';
  return new Promise((done, fail) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = pattern.exec(stdout);
      if (match) done(match);
    });
    child.on('exit', () => fail(new Error(`the node exited early: ${stdout}`)));
  });
}

