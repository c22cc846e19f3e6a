// A real coturn TURN server for tests (style.md 10): Debian's `turnserver` on a free port of
// 127.0.0.1, in the shared-secret mode the relay's GET /turn-credentials is made for, with its
// configuration, database, log and pid file in a folder of its own; and `turnutils_uclient`, coturn's
// test client, to allocate relays on it. scripts/check-prereqs.ts makes sure both are on PATH.
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeTcpPort, startServerProcess } from './server-process';

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

export async function startCoturn(secret: string): Promise<CoturnHandle> {
  const folder = mkdtempSync(join(tmpdir(), 'coturn-'));
  // An empty configuration file: /etc/turnserver.conf, whatever it says, must not change the test.
  writeFileSync(join(folder, 'turnserver.conf'), '');
  const logFile = join(folder, 'turn.log');
  try {
    const server = await startServerProcess({
      name: 'turnserver',
      command: 'turnserver',
      args: (port) => [
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
      freePort: freeTcpAndUdpPort,
      answers: accepts,
      answering: 'listen',
      pollMs: 50,
    });
    return {
      port: server.port,
      log: () => readText(logFile),
      stop: async () => {
        await server.stop();
        rmSync(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
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
async function freeTcpAndUdpPort(): Promise<number> {
  for (;;) {
    const port = await freeTcpPort();
    const udpFree = await new Promise<boolean>((resolve) => {
      const socket = createSocket('udp4');
      socket.once('error', () => resolve(false));
      socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
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

