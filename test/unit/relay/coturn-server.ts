// A real coturn TURN server for tests (style.md 10): Debian's `turnserver` on a free port of
// 127.0.0.1, in the shared-secret mode the relay's GET /turn-credentials is made for, with its
// configuration, database, log and pid file in a folder of its own; and `turnutils_uclient`, coturn's
// test client, to allocate relays on it. scripts/check-prereqs.ts makes sure both are on PATH.
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CoturnHandle {
  port: number;
  /** The server's log so far (verbose: one line per processed request, with the username). */
  log(): string;
  stop(): Promise<void>;
}

export interface UclientRun {
  code: number | null;
  output: string;
}

const START_TIMEOUT_MS = 10_000;

export async function startCoturn(secret: string): Promise<CoturnHandle> {
  const folder = mkdtempSync(join(tmpdir(), 'coturn-'));
  // An empty configuration file: /etc/turnserver.conf, whatever it says, must not change the test.
  writeFileSync(join(folder, 'turnserver.conf'), '');
  const logFile = join(folder, 'turn.log');
  let lastError: unknown;
  // The free port may be taken between asking for it and turnserver binding it: try again then.
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = await freePort();
    const child = spawn(
      'turnserver',
      [
        '-c', join(folder, 'turnserver.conf'),
        '--listening-port', String(port),
        '--listening-ip=127.0.0.1',
        '--relay-ip=127.0.0.1',
        '--use-auth-secret',
        `--static-auth-secret=${secret}`,
        '--realm=test',
        '--allow-loopback-peers',
        '--no-cli',
        '--no-tls',
        '--no-dtls',
        '--no-rfc5780',
        '--verbose',
        '--no-stdout-log',
        '--simple-log',
        `--log-file=${logFile}`,
        `--pidfile=${join(folder, 'turnserver.pid')}`,
        `--db=${join(folder, 'turndb')}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const stopOnExit = () => child.kill('SIGKILL');
    process.once('exit', stopOnExit);
    try {
      await waitForListener(port, child);
    } catch (error) {
      lastError = error;
      process.off('exit', stopOnExit);
      await stopChild(child);
      continue;
    }
    return {
      port,
      log: () => readText(logFile),
      stop: async () => {
        process.off('exit', stopOnExit);
        await stopChild(child);
        rmSync(folder, { recursive: true, force: true });
      },
    };
  }
  rmSync(folder, { recursive: true, force: true });
  throw new Error(`turnserver did not start: ${lastError instanceof Error ? lastError.message : String(lastError)}`);
}

/**
 * `turnutils_uclient` in client-to-client mode (-y): two allocations on the server, one message
 * relayed from each to the other through them (-n 1). Exit code 0 and every message received
 * back means the credentials allocated relays.
 */
export function runUclient(host: string, port: number, username: string, credential: string): Promise<UclientRun> {
  return new Promise((resolve) => {
    const child = spawn('turnutils_uclient', ['-y', '-n', '1', '-u', username, '-w', credential, '-p', String(port), host], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, output: `${output}${error.message}` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** A port free for both TCP and UDP on 127.0.0.1: turnserver listens on both. */
async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        const chosen = typeof address === 'object' && address ? address.port : 0;
        server.close(() => resolve(chosen));
      });
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const socket = createSocket('udp4');
      socket.once('error', () => resolve(false));
      socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
}

async function waitForListener(port: number, child: ChildProcess): Promise<void> {
  let exited = false;
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.once('exit', () => {
    exited = true;
  });
  child.once('error', (error) => {
    exited = true;
    stderr += error.message;
  });
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`turnserver exited: ${stderr.trim() || 'no output'}`);
    if (await accepts(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`turnserver on port ${port} did not listen within ${START_TIMEOUT_MS} ms`);
}

/** Whether something accepts TCP connections on the port (turnserver opens its UDP and TCP listeners together). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => finish(true));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 3_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
