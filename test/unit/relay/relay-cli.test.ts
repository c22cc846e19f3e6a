import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hashAgentToken } from '../../../relay/agent-directory';
import { parseAddAgentCli, parseRelayCli, RELAY_USAGE } from '../../../relay/cli-options';
import { relayDataDir, type RelayDataDir } from '../../support/relay-data-dir';
import { openSse } from './sse-test-client';

const root = resolve(import.meta.dirname, '../../..');
/** Plain agent tokens of the length the relay asks for: 32 characters and more. */
const TOKEN_1 = 'agent-token-1-0123456789abcdef0123';
const TOKEN_2 = 'agent-token-2-0123456789abcdef0123';
const good = ['--app-secret', 'app-secret-1', '--agent-token', TOKEN_1];

const dataDirs: RelayDataDir[] = [];
afterEach(async () => {
  await Promise.all(dataDirs.splice(0).map((data) => data.remove()));
});

/** `npm run relay` in the checkout, its files in a data directory of its own. */
async function spawnCli(args: string[]): Promise<ChildProcessWithoutNullStreams> {
  const data = await relayDataDir();
  dataDirs.push(data);
  return spawn(process.execPath, ['--import', 'tsx', 'relay/cli.ts', ...args, ...data.flags], { cwd: root, env: cleanEnv() });
}

describe('relay command line', () => {
  it('reads flags, repeated agent tokens and defaults', () => {
    const parsed = parseRelayCli(['--port', '9100', ...good, '--agent-token', TOKEN_2, '--verify-token', 'vt'], {});
    expect(parsed).toEqual({
      ok: true,
      value: {
        port: 9100,
        host: '127.0.0.1',
        appSecret: 'app-secret-1',
        verifyToken: 'vt',
        agentTokens: [TOKEN_1, TOKEN_2],
        dev: false,
        trustProxy: false,
        maxStreamsPerAgent: 5,
        retentionMs: 600_000,
        logLevel: 'info',
        records: { database: { kind: 'embedded', dataDir: 'relay-data/records' }, dataDir: 'relay-data' },
      },
    });
    expect(parseRelayCli(good, {})).toMatchObject({ ok: true, value: { port: 8787 } });
  });

  it('reads the environment, and flags win over it', () => {
    const env = { RELAY_PORT: '9200', RELAY_APP_SECRET: 'env-secret', RELAY_VERIFY_TOKEN: 'env-vt', RELAY_AGENT_TOKENS: `${TOKEN_1}, ${TOKEN_2},` };
    expect(parseRelayCli([], env)).toMatchObject({ ok: true, value: { port: 9200, appSecret: 'env-secret', verifyToken: 'env-vt', agentTokens: [TOKEN_1, TOKEN_2] } });
    const flagToken = 'flag-token-1-0123456789abcdef01234';
    expect(parseRelayCli(['--port', '0', '--agent-token', flagToken], env)).toMatchObject({ ok: true, value: { port: 0, agentTokens: [flagToken] } });
  });

  it('reads the agents file, Redis and its prefix, from flags or the environment', () => {
    expect(parseRelayCli(['--app-secret', 's', '--agents', 'team.json', '--redis', 'redis://127.0.0.1:6390', '--redis-prefix', 'team-a:'], {})).toMatchObject({
      ok: true,
      value: { agentsPath: 'team.json', agentTokens: [], redisUrl: 'redis://127.0.0.1:6390', redisPrefix: 'team-a:' },
    });
    const env = { RELAY_APP_SECRET: 's', RELAY_AGENTS: 'env.json', RELAY_REDIS_URL: 'rediss://:pw@redis.internal:6380/2', RELAY_REDIS_PREFIX: 'env:' };
    expect(parseRelayCli([], env)).toMatchObject({ ok: true, value: { agentsPath: 'env.json', redisUrl: 'rediss://:pw@redis.internal:6380/2', redisPrefix: 'env:' } });
    // Memory is the default.
    const memory = parseRelayCli(good, {});
    expect(memory.ok).toBe(true);
    expect(memory).not.toHaveProperty('value.redisUrl');
    expect(memory).not.toHaveProperty('value.agentsPath');
  });

  it('reads the resume retention in minutes, and refuses what is out of range naming the flag', () => {
    expect(parseRelayCli([...good, '--retention-minutes', '30'], {})).toMatchObject({ ok: true, value: { retentionMs: 30 * 60_000 } });
    expect(parseRelayCli(good, { RELAY_RETENTION_MINUTES: '2' })).toMatchObject({ ok: true, value: { retentionMs: 2 * 60_000 } });
    for (const bad of ['0', '1441', '1.5', 'ten', '99999']) {
      expect(parseRelayCli([...good, '--retention-minutes', bad], {})).toMatchObject({ ok: false, error: { field: '--retention-minutes' } });
    }
  });

  it('never echoes a Redis URL, which may hold a password', () => {
    const parsed = parseRelayCli([...good, '--redis', 'http://user:hunter2@host'], {});
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.message).not.toContain('hunter2');
  });

  it('reads add-agent', () => {
    expect(parseAddAgentCli(['--agents', 'team.json', '--id', 'alice', '--name', 'Alice Agent'], {})).toEqual({ ok: true, value: { agentsPath: 'team.json', id: 'alice', name: 'Alice Agent' } });
    expect(parseAddAgentCli(['--id', 'bob'], { RELAY_AGENTS: 'env.json' })).toEqual({ ok: true, value: { agentsPath: 'env.json', id: 'bob', name: 'bob' } });
    expect(parseAddAgentCli(['--help'], {})).toEqual({ ok: true, value: 'help' });
    expect(parseAddAgentCli(['--agents', 'team.json', '--id', 'sam', '--supervisor'], {})).toEqual({ ok: true, value: { agentsPath: 'team.json', id: 'sam', name: 'sam', role: 'supervisor' } });
  });

  it('reads --team-config or RELAY_TEAM_CONFIG; without either, no file', () => {
    expect(parseRelayCli([...good, '--team-config', 'team.json'], {})).toMatchObject({ ok: true, value: { teamConfigPath: 'team.json' } });
    expect(parseRelayCli(good, { RELAY_TEAM_CONFIG: 'env-team.json' })).toMatchObject({ ok: true, value: { teamConfigPath: 'env-team.json' } });
    expect(parseRelayCli([...good, '--team-config', 'flag.json'], { RELAY_TEAM_CONFIG: 'env-team.json' })).toMatchObject({ ok: true, value: { teamConfigPath: 'flag.json' } });
    expect(parseRelayCli(good, {})).not.toHaveProperty('value.teamConfigPath');
    expect(parseRelayCli([...good, '--team-config'], {})).toMatchObject({ ok: false, error: { message: '--team-config needs a value' } });
    // A secret that starts with "-" (as base64url ones may) is told how to be written, and is taken when it is.
    expect(parseRelayCli(['--app-secret', '-Zx9secret', '--agent-token', TOKEN_1], {})).toMatchObject({
      ok: false,
      error: { message: '--app-secret: the value looks like a flag; write --app-secret=VALUE' },
    });
    expect(parseRelayCli(['--app-secret=-Zx9secret', '--agent-token', TOKEN_1], {})).toMatchObject({ ok: true, value: { appSecret: '-Zx9secret' } });
  });

  it('exits with code 2 when the team settings file breaks a rule, naming the file, the field and the rule', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'relay-cli-'));
    const teamPath = join(dir, 'team.json');
    try {
      await writeFile(teamPath, JSON.stringify({ breakReasons: [], afterCallWorkSeconds: 30 }));
      const empty = await runCli([...good, '--team-config', teamPath, '--port', '0']);
      expect(empty.code).toBe(2);
      expect(empty.stderr.trim().split('\n')).toEqual([`relay: --team-config: ${teamPath}: breakReasons: must list at least one`]);
      await writeFile(teamPath, JSON.stringify({ timezone: 'Mars/Olympus' }));
      const zone = await runCli([...good, '--team-config', teamPath, '--port', '0']);
      expect(zone.stderr.trim().split('\n')).toEqual([`relay: --team-config: ${teamPath}: timezone: must be a time zone name such as Europe/London or UTC`]);
      const missing = await runCli([...good, '--team-config', join(dir, 'none.json'), '--port', '0']);
      expect(missing.code).toBe(2);
      expect(missing.stderr.trim().split('\n')).toEqual([`relay: --team-config: cannot read ${join(dir, 'none.json')}: no such file`]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('re-reads the team settings and the agents file on SIGHUP: changes reach the streams; a broken file is logged naming field and rule, and the settings in force stay', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'relay-cli-'));
    const teamPath = join(dir, 'team.json');
    const agentsPath = join(dir, 'agents.json');
    const agentsFile = (role?: 'supervisor') => JSON.stringify({ agents: [{ id: 'alice', name: 'Alice', tokenSha256: hashAgentToken(TOKEN_1), ...(role !== undefined ? { role } : {}) }] });
    await writeFile(teamPath, JSON.stringify({ breakReasons: ['Lunch'] }));
    await writeFile(agentsPath, agentsFile());
    const child = await spawnCli(['--app-secret', 's', '--agents', agentsPath, '--team-config', teamPath, '--port', '0', '--log-level', 'error']);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    try {
      const url = await listeningUrl(child);
      const settingsOf = async () => ((await (await fetch(`${url}/team/settings`, { headers: { authorization: `Bearer ${TOKEN_1}` } })).json()) as { role: string; settings: { breakReasons: string[] } });
      expect(await settingsOf()).toMatchObject({ role: 'agent', settings: { breakReasons: ['Lunch'], afterCallWorkSeconds: 0 } });
      const stream = await openSse(url, { token: TOKEN_1 });
      try {
        await writeFile(teamPath, JSON.stringify({ breakReasons: ['Lunch', 'Coffee'], afterCallWorkSeconds: 10 }));
        await writeFile(agentsPath, agentsFile('supervisor'));
        child.kill('SIGHUP');
        await stream.waitFor((s) => s.named.some((n) => n.event === 'team' && n.data.includes('"supervisor"') && n.data.includes('Coffee')), 'the team event of both reloads');
        expect(stream.named.every((n) => n.event === 'team' && n.id === undefined)).toBe(true);
        expect(await settingsOf()).toMatchObject({ role: 'supervisor', settings: { breakReasons: ['Lunch', 'Coffee'], afterCallWorkSeconds: 10 } });

        await writeFile(teamPath, JSON.stringify({ breakReasons: ['Lunch'], afterCallWorkSeconds: -1 }));
        child.kill('SIGHUP');
        await vi.waitFor(() => expect(stderr).toContain('could not reload the team settings'), { timeout: 5_000 });
        expect(stderr).toContain(`${teamPath}: afterCallWorkSeconds: must be a whole number from 0 to 3600`);
        expect(await settingsOf()).toMatchObject({ settings: { breakReasons: ['Lunch', 'Coffee'], afterCallWorkSeconds: 10 } });
      } finally {
        stream.close();
      }
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    [['--redis', 'localhost:6379', ...good], '--redis'],
    [['--redis', 'redis://', ...good], '--redis'],
    [['--redis', 'redis://127.0.0.1:6379', '--redis-prefix', 'has space', ...good], '--redis-prefix'],
    [['--agents', ...good], '--agents'],
    [['--app-secret', 'x', '--redis', 'redis://127.0.0.1:6379'], '--agents'],
    [['--port', 'abc', ...good], '--port'],
    [['--port', '70000', ...good], '--port'],
    [['--port'], '--port'],
    [['--agent-token', TOKEN_1], '--app-secret'],
    [['--app-secret', 'x'], '--agent-token'],
    [['--app-secret', 'x', '--agent-token', 'short'], '--agent-token'],
    [['--app-secret', 'x', '--agent-token', 'short', '--dev'], '--agent-token'],
    [[...good, '--max-streams-per-agent', '0'], '--max-streams-per-agent'],
    [[...good, '--max-streams-per-agent', '101'], '--max-streams-per-agent'],
    [[...good, '--max-streams-per-agent', 'many'], '--max-streams-per-agent'],
    [[...good, '--log-level', 'loud'], '--log-level'],
    [[...good, '--colour'], '--colour'],
    [[...good, 'stray'], 'stray'],
  ])('names the flag in the error: %j', (argv, flag) => {
    const parsed = parseRelayCli(argv, {});
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.message).toContain(flag);
  });

  it('refuses agent tokens shorter than 32 characters unless --dev, naming where they came from', () => {
    const short = 'agent-token-31-characters-long!';
    expect(short).toHaveLength(31);
    expect(parseRelayCli(['--app-secret', 's', '--agent-token', short], {})).toEqual({
      ok: false,
      error: { code: 'invalid_input', message: '--agent-token: must be at least 32 characters (use --dev for short development tokens)', field: '--agent-token' },
    });
    expect(parseRelayCli(['--app-secret', 's'], { RELAY_AGENT_TOKENS: `${TOKEN_1},${short}` })).toMatchObject({
      ok: false,
      error: { message: 'RELAY_AGENT_TOKENS: must be at least 32 characters (use --dev for short development tokens)', field: '--agent-token' },
    });
    expect(parseRelayCli(['--app-secret', 's', '--agent-token', `${short}x`], {})).toMatchObject({ ok: true, value: { agentTokens: [`${short}x`], dev: false } });
    // --dev (or RELAY_DEV=1) lets short development tokens through, down to the app's own 8 characters.
    expect(parseRelayCli(['--app-secret', 's', '--agent-token', 'dev-token', '--dev'], {})).toMatchObject({ ok: true, value: { agentTokens: ['dev-token'], dev: true } });
    expect(parseRelayCli(['--app-secret', 's', '--agent-token', 'dev-token'], { RELAY_DEV: '1' })).toMatchObject({ ok: true, value: { dev: true } });
    expect(parseRelayCli(['--app-secret', 's', '--agent-token', 'dev-token'], { RELAY_DEV: '0' })).toMatchObject({ ok: false, error: { field: '--agent-token' } });
    expect(parseRelayCli(['--app-secret', 's', '--agent-token', 'dev', '--dev'], {})).toMatchObject({
      ok: false,
      error: { message: '--agent-token: must be at least 8 characters without spaces', field: '--agent-token' },
    });
    expect(parseRelayCli(good, { RELAY_DEV: 'maybe' })).toMatchObject({ ok: false, error: { field: '--dev', message: 'RELAY_DEV must be 1 or 0 (the environment form of --dev; got "maybe")' } });
    // The agents file holds hashes only: nothing to measure there.
    expect(parseRelayCli(['--app-secret', 's', '--agents', 'team.json'], {})).toMatchObject({ ok: true, value: { agentTokens: [], dev: false } });
  });

  it('reads --max-streams-per-agent and --trust-proxy, from flags or the environment', () => {
    expect(parseRelayCli([...good, '--max-streams-per-agent', '2', '--trust-proxy'], {})).toMatchObject({ ok: true, value: { maxStreamsPerAgent: 2, trustProxy: true } });
    expect(parseRelayCli(good, { RELAY_MAX_STREAMS_PER_AGENT: '9', RELAY_TRUST_PROXY: 'true' })).toMatchObject({ ok: true, value: { maxStreamsPerAgent: 9, trustProxy: true } });
    expect(parseRelayCli([...good, '--max-streams-per-agent', '3'], { RELAY_MAX_STREAMS_PER_AGENT: '9' })).toMatchObject({ ok: true, value: { maxStreamsPerAgent: 3 } });
    expect(parseRelayCli(good, {})).toMatchObject({ ok: true, value: { maxStreamsPerAgent: 5, trustProxy: false } });
    expect(parseRelayCli([...good, '--max-streams-per-agent', '0'], {})).toMatchObject({
      ok: false,
      error: { message: '--max-streams-per-agent must be a whole number from 1 to 100 (got "0")', field: '--max-streams-per-agent' },
    });
  });

  it('reads --tell-agents-when-monitored, a switch, from the flag or RELAY_TELL_AGENTS_WHEN_MONITORED', () => {
    expect(parseRelayCli([...good, '--tell-agents-when-monitored'], {})).toMatchObject({ ok: true, value: { tellAgentsWhenMonitored: true } });
    expect(parseRelayCli(good, { RELAY_TELL_AGENTS_WHEN_MONITORED: '1' })).toMatchObject({ ok: true, value: { tellAgentsWhenMonitored: true } });
    expect(parseRelayCli([...good, '--tell-agents-when-monitored'], { RELAY_TELL_AGENTS_WHEN_MONITORED: '0' })).toMatchObject({ ok: true, value: { tellAgentsWhenMonitored: true } });
    for (const env of [{}, { RELAY_TELL_AGENTS_WHEN_MONITORED: 'no' }]) {
      const parsed = parseRelayCli(good, env);
      expect(parsed.ok && parsed.value !== 'help' && 'tellAgentsWhenMonitored' in parsed.value).toBe(false);
    }
    expect(parseRelayCli(good, { RELAY_TELL_AGENTS_WHEN_MONITORED: 'sometimes' })).toEqual({
      ok: false,
      error: expect.objectContaining({
        field: '--tell-agents-when-monitored',
        message: 'RELAY_TELL_AGENTS_WHEN_MONITORED must be 1 or 0 (the environment form of --tell-agents-when-monitored; got "sometimes")',
      }) as unknown,
    });
    expect(parseRelayCli([...good, '--tell-agents-when-monitored=yes'], {})).toMatchObject({ ok: false, error: { message: '--tell-agents-when-monitored takes no value' } });
    const at = RELAY_USAGE.indexOf('  --tell-agents-when-monitored');
    expect(at).toBeGreaterThan(0);
    expect(RELAY_USAGE.slice(at, RELAY_USAGE.indexOf('\n  --', at + 3))).toContain('env RELAY_TELL_AGENTS_WHEN_MONITORED=1');
  });

  it('reads --bridge-token or RELAY_BRIDGE_TOKEN, and refuses one a node cannot use or an agent holds, naming where it came from', () => {
    const bridgeToken = 'bridge-token-0123456789abcdef-0123456789';
    expect(parseRelayCli([...good, '--bridge-token', bridgeToken], {})).toMatchObject({ ok: true, value: { bridgeToken } });
    expect(parseRelayCli(good, { RELAY_BRIDGE_TOKEN: bridgeToken })).toMatchObject({ ok: true, value: { bridgeToken } });
    expect(parseRelayCli([...good, '--bridge-token', bridgeToken], { RELAY_BRIDGE_TOKEN: 'env-bridge-token-0123456789abcdef-0123' })).toMatchObject({ ok: true, value: { bridgeToken } });
    const without = parseRelayCli(good, {});
    expect(without.ok).toBe(true);
    expect(without).not.toHaveProperty('value.bridgeToken');
    expect(parseRelayCli([...good, '--bridge-token', 'short-bridge-token'], {})).toEqual({
      ok: false,
      error: { code: 'invalid_input', message: '--bridge-token: must be at least 32 characters', field: '--bridge-token' },
    });
    expect(parseRelayCli(good, { RELAY_BRIDGE_TOKEN: 'short' })).toMatchObject({ ok: false, error: { message: 'RELAY_BRIDGE_TOKEN: must be at least 32 characters', field: '--bridge-token' } });
    expect(parseRelayCli([...good, '--bridge-token', 'bridge token with spaces 0123456789abcdef'], {})).toMatchObject({
      ok: false,
      error: { message: '--bridge-token: must not contain spaces', field: '--bridge-token' },
    });
    // Even --dev, which lets short agent tokens through, does not shorten the bridge token's rule.
    expect(parseRelayCli([...good, '--dev', '--bridge-token', 'short-bridge-token'], {})).toMatchObject({ ok: false, error: { field: '--bridge-token' } });
    expect(parseRelayCli([...good, '--bridge-token', TOKEN_1], {})).toMatchObject({
      ok: false,
      error: { message: '--bridge-token: must differ from every agent token', field: '--bridge-token' },
    });
  });

  it('exits with code 2 when the bridge token is an agent’s of the agents file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'relay-cli-'));
    const agentsPath = join(dir, 'agents.json');
    const shared = 'bridge-token-0123456789abcdef-0123456789';
    await writeFile(agentsPath, JSON.stringify({ agents: [{ id: 'alice', name: 'Alice', tokenSha256: hashAgentToken(shared) }] }));
    try {
      const refused = await runCli(['--app-secret', 's', '--agents', agentsPath, '--bridge-token', shared, '--port', '0']);
      expect(refused.code).toBe(2);
      expect(refused.stderr.trim().split('\n')).toEqual([`relay: --bridge-token: must differ from every agent token (an agent of ${agentsPath} has it)`]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exits with code 2 naming --agent-token when a token is too short, and starts with --dev', async () => {
    const refused = await runCli(['--port', '0', '--app-secret', 's', '--agent-token', 'short-dev-token']);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toEqual(['relay: --agent-token: must be at least 32 characters (use --dev for short development tokens)']);

    const child = await spawnCli(['--port', '0', '--app-secret', 's', '--agent-token', 'short-dev-token', '--dev', '--log-level', 'error']);
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    try {
      const url = await listeningUrl(child);
      const me = await fetch(`${url}/me`, { headers: { authorization: 'Bearer short-dev-token' } });
      expect(me.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it('reads --gateway-url and --api-key (both or neither) and --gateway-product, from flags or the environment, never quoting the key', () => {
    const key = 'team-gateway-key-0123456789';
    expect(parseRelayCli([...good, '--gateway-url', 'http://127.0.0.1:4000', '--api-key', key], {})).toMatchObject({
      ok: true,
      value: { gateway: { url: 'http://127.0.0.1:4000', apiKey: key, product: 'chatapp' } },
    });
    expect(parseRelayCli(good, { RELAY_GATEWAY_URL: 'https://gw.example.com/v1', RELAY_API_KEY: key, RELAY_GATEWAY_PRODUCT: 'whatsapp' })).toMatchObject({
      ok: true,
      value: { gateway: { url: 'https://gw.example.com/v1', apiKey: key, product: 'whatsapp' } },
    });
    expect(parseRelayCli(good, {})).not.toHaveProperty('value.gateway');
    expect(parseRelayCli([...good, '--api-key', key], {})).toEqual({
      ok: false,
      error: { code: 'invalid_input', message: '--gateway-url is required with --api-key (or RELAY_GATEWAY_URL): the gateway the key is for', field: '--gateway-url' },
    });
    expect(parseRelayCli([...good, '--gateway-url', 'http://127.0.0.1:4000'], {})).toEqual({
      ok: false,
      error: { code: 'invalid_input', message: '--api-key is required with --gateway-url (or RELAY_API_KEY): the relay ends calls at the gateway with it', field: '--api-key' },
    });
    expect(parseRelayCli([...good, '--gateway-product', 'chatapp'], {})).toMatchObject({ ok: false, error: { field: '--gateway-product' } });
    expect(parseRelayCli([...good, '--gateway-url', 'ftp://gw', '--api-key', key], {})).toMatchObject({ ok: false, error: { field: '--gateway-url' } });
    expect(parseRelayCli([...good, '--gateway-url', 'http://gw', '--api-key', key, '--gateway-product', 'Bad Word'], {})).toMatchObject({ ok: false, error: { field: '--gateway-product' } });
    const spaced = parseRelayCli([...good, '--gateway-url', 'http://gw', '--api-key', `${key} x`], {});
    expect(spaced).toMatchObject({ ok: false, error: { field: '--api-key' } });
    expect(JSON.stringify(spaced)).not.toContain(key);
  });

  it('exits with code 2 naming the flag when only one of --gateway-url and --api-key is given', async () => {
    const run = await runCli([...good, '--port', '0', '--api-key', 'team-gateway-key-0123456789']);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual(['relay: --gateway-url is required with --api-key (or RELAY_GATEWAY_URL): the gateway the key is for']);
  });

  it('exits with code 2 and one error line on a bad flag', async () => {
    const run = await runCli(['--port', 'abc', ...good]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual(['relay: --port must be a whole number from 0 to 65535 (got "abc")']);
  });

  it('reads --bridge with its media flags, from flags or the environment, and refuses media flags without it or out of rule', () => {
    expect(parseRelayCli([...good, '--bridge'], {})).toMatchObject({ ok: true, value: { bridge: {} } });
    expect(parseRelayCli(good, {})).not.toHaveProperty('value.bridge');
    expect(parseRelayCli([...good, '--bridge', '--public-address', '203.0.113.7', '--rtp-ports', '40000-40999'], {})).toMatchObject({
      ok: true,
      value: { bridge: { publicAddress: '203.0.113.7', rtpPorts: { from: 40_000, to: 40_999 } } },
    });
    expect(parseRelayCli(good, { RELAY_BRIDGE: '1', RELAY_PUBLIC_ADDRESS: '198.51.100.2', RELAY_RTP_PORTS: '50000-50100' })).toMatchObject({
      ok: true,
      value: { bridge: { publicAddress: '198.51.100.2', rtpPorts: { from: 50_000, to: 50_100 } } },
    });
    expect(parseRelayCli([...good, '--public-address', '203.0.113.7'], {})).toEqual({
      ok: false,
      error: { code: 'invalid_input', message: '--public-address needs --bridge: it is the address of the bridge in this process', field: '--public-address' },
    });
    expect(parseRelayCli([...good, '--rtp-ports', '40000-40999'], {})).toMatchObject({ ok: false, error: { field: '--rtp-ports' } });
    expect(parseRelayCli([...good, '--bridge', '--public-address', 'bridge.example.com'], {})).toMatchObject({
      ok: false,
      error: { message: '--public-address must be an IP address (got "bridge.example.com")', field: '--public-address' },
    });
    expect(parseRelayCli([...good, '--bridge', '--rtp-ports', '50000-40000'], {})).toMatchObject({
      ok: false,
      error: { message: '--rtp-ports must be FROM-TO, two whole numbers from 1024 to 65535, FROM not above TO (got "50000-40000")', field: '--rtp-ports' },
    });
  });

  it('with --bridge, tells its agents that calls are bridged, and closes the bridge with it on SIGTERM', async () => {
    const child = await spawnCli(['--port', '0', ...good, '--bridge', '--log-level', 'error']);
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const url = await listeningUrl(child);
    const me = await fetch(`${url}/me`, { headers: { authorization: `Bearer ${TOKEN_1}` } });
    expect(await me.json()).toMatchObject({ agentId: 'agent-1', bridged: true });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('prints its URL, serves, and closes gracefully on SIGTERM', async () => {
    const child = await spawnCli(['--port', '0', ...good, '--log-level', 'error']);
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const url = await listeningUrl(child);
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RELAY_')));
}

/** The URL a started relay prints; rejects when it exits first. */
function listeningUrl(child: ChildProcessWithoutNullStreams): Promise<string> {
  let stdout = '';
  return new Promise<string>((done, fail) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /relay listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match) done(match[1]!);
    });
    child.on('exit', () => fail(new Error(`the relay exited early: ${stdout}`)));
  });
}

async function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = await spawnCli(args);
  return new Promise((done) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => done({ code, stderr }));
  });
}
