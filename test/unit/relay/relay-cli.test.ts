import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAddAgentCli, parseRelayCli } from '../../../relay/cli-options';

const root = resolve(import.meta.dirname, '../../..');
const good = ['--app-secret', 'app-secret-1', '--agent-token', 'agent-token-1'];

describe('relay command line', () => {
  it('reads flags, repeated agent tokens and defaults', () => {
    const parsed = parseRelayCli(['--port', '9100', ...good, '--agent-token', 'agent-token-2', '--verify-token', 'vt'], {});
    expect(parsed).toEqual({
      ok: true,
      value: { port: 9100, host: '127.0.0.1', appSecret: 'app-secret-1', verifyToken: 'vt', agentTokens: ['agent-token-1', 'agent-token-2'], retentionMs: 600_000, logLevel: 'info' },
    });
    expect(parseRelayCli(good, {})).toMatchObject({ ok: true, value: { port: 8787 } });
  });

  it('reads the environment, and flags win over it', () => {
    const env = { RELAY_PORT: '9200', RELAY_APP_SECRET: 'env-secret', RELAY_VERIFY_TOKEN: 'env-vt', RELAY_AGENT_TOKENS: 'env-token-1, env-token-2,' };
    expect(parseRelayCli([], env)).toMatchObject({ ok: true, value: { port: 9200, appSecret: 'env-secret', verifyToken: 'env-vt', agentTokens: ['env-token-1', 'env-token-2'] } });
    expect(parseRelayCli(['--port', '0', '--agent-token', 'flag-token-1'], env)).toMatchObject({ ok: true, value: { port: 0, agentTokens: ['flag-token-1'] } });
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
    [['--agent-token', 'agent-token-1'], '--app-secret'],
    [['--app-secret', 'x'], '--agent-token'],
    [['--app-secret', 'x', '--agent-token', 'short'], '--agent-token'],
    [[...good, '--log-level', 'loud'], '--log-level'],
    [[...good, '--colour'], '--colour'],
    [[...good, 'stray'], 'stray'],
  ])('names the flag in the error: %j', (argv, flag) => {
    const parsed = parseRelayCli(argv, {});
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.message).toContain(flag);
  });

  it('exits with code 2 and one error line on a bad flag', async () => {
    const run = await runCli(['--port', 'abc', ...good]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual(['relay: --port must be a whole number from 0 to 65535 (got "abc")']);
  });

  it('prints its URL, serves, and closes gracefully on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'relay/cli.ts', '--port', '0', ...good, '--log-level', 'error'], { cwd: root, env: cleanEnv() });
    let stdout = '';
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const url = await new Promise<string>((done, fail) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /relay listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
        if (match) done(match[1]!);
      });
      child.on('exit', () => fail(new Error(`the relay exited early: ${stdout}`)));
    });
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RELAY_')));
}

function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'relay/cli.ts', ...args], { cwd: root, env: cleanEnv() });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => done({ code, stderr }));
  });
}
