// `npm run sandbox`: flags and environment fallbacks, and the real process: its URL on one line,
// one clear line and exit code 2 for a bad flag, a clean exit on SIGINT.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseSandboxArgs } from '../../../sandbox/cli-args';
import { startWebhookReceiver, type WebhookReceiver } from './harness';

describe('parseSandboxArgs', () => {
  const base = ['--relay-url', 'http://127.0.0.1:9000', '--api-key', 'k'];

  test('reads every flag', () => {
    expect(parseSandboxArgs([...base, '--port', '8123', '--app-secret', 's', '--host', '127.0.0.1', '--product', 'otherapp', '--ring-ms', '250'], {})).toEqual({
      ok: true,
      value: { port: 8123, host: '127.0.0.1', relayUrl: 'http://127.0.0.1:9000', apiKey: 'k', appSecret: 's', product: 'otherapp', ringMs: 250 },
    });
  });

  test('falls back to the environment, and flags win over it', () => {
    const env = { SANDBOX_PORT: '8200', SANDBOX_RELAY_URL: 'http://127.0.0.1:9100', SANDBOX_APP_SECRET: 'env-secret', SANDBOX_API_KEY: 'env-key' };
    expect(parseSandboxArgs([], env)).toEqual({ ok: true, value: { port: 8200, host: '127.0.0.1', relayUrl: 'http://127.0.0.1:9100', apiKey: 'env-key', appSecret: 'env-secret' } });
    const mixed = parseSandboxArgs(['--port', '0', '--api-key', 'flag-key'], env);
    expect(mixed.ok && mixed.value !== 'help' && [mixed.value.port, mixed.value.apiKey]).toEqual([0, 'flag-key']);
  });

  test('--help asks for the usage', () => {
    expect(parseSandboxArgs(['--help'], {})).toEqual({ ok: true, value: 'help' });
  });

  test.each([
    [['--port', 'abc'], '--port'],
    [['--port', '70000'], '--port'],
    [['--port', '-1'], '--port'],
    [['--port=-1'], '--port'],
    [['--port'], '--port'],
    [['--ring-ms', 'soon'], '--ring-ms'],
    [['--product', 'Chat App'], '--product'],
    [['--app-secret', ''], '--app-secret'],
  ])('%j is refused naming %s', (extra, flag) => {
    const parsed = parseSandboxArgs([...base, ...extra], {});
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error.message.startsWith(`${flag}: `), JSON.stringify(parsed)).toBe(true);
  });

  test.each([
    [[], '--relay-url'],
    [['--relay-url', 'ftp://x'], '--relay-url'],
    [['--relay-url', 'http://127.0.0.1:9000'], '--api-key'],
  ])('missing or bad required flags %j are refused naming %s', (args, flag) => {
    const parsed = parseSandboxArgs(args, {});
    expect(!parsed.ok && parsed.error.message.startsWith(`${flag}: `)).toBe(true);
  });

  test('an unknown flag is refused naming it', () => {
    const parsed = parseSandboxArgs([...base, '--prot', '1'], {});
    expect(!parsed.ok && parsed.error.message).toBe('--prot: unknown flag');
  });
});

function runCli(args: string[]): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [resolve('node_modules/tsx/dist/cli.mjs'), resolve('sandbox/cli.ts'), ...args], {
    env: { PATH: process.env.PATH ?? '' },
  });
}

function exited(child: ChildProcessWithoutNullStreams): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
}

describe('the sandbox process', () => {
  let relay: WebhookReceiver;
  beforeAll(async () => {
    relay = await startWebhookReceiver();
  });
  afterAll(async () => {
    await relay?.close();
  });

  test('a bad flag: one line naming it on stderr, exit code 2', async () => {
    const result = await exited(runCli(['--port', 'eighty', '--relay-url', relay.url, '--api-key', 'k']));
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^sandbox: --port: /);
  });

  test('prints its URL on one line, serves the control API, and exits cleanly on SIGINT', async () => {
    const child = runCli(['--port', '0', '--relay-url', relay.url, '--api-key', 'k', '--app-secret', 's']);
    const done = exited(child);
    const url = await new Promise<string>((found, fail) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n').find((l) => /^http:\/\/127\.0\.0\.1:[0-9]+$/.test(l.trim()));
        if (line) found(line.trim());
      });
      child.on('close', () => fail(new Error(`exited before printing its URL: ${out}`)));
    });
    const customers = (await (await fetch(`${url}/control/customers`)).json()) as unknown[];
    expect(customers.length).toBeGreaterThanOrEqual(6);
    child.kill('SIGINT');
    const result = await done;
    expect(result.code).toBe(0);
  });
});
