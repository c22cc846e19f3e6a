// A real TURN relay for the bridge's tests: Debian's coturn (`turnserver`) on 127.0.0.1, a free
// port, one static user, relaying between loopback peers (which it refuses without
// --allow-loopback-peers). Started by a test and stopped after it; ready once it answers a STUN
// binding request.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RTCIceServer } from 'werift';

const HOST = '127.0.0.1';
const STUN_MAGIC_COOKIE = 0x2112a442;

/** A UDP port free on 127.0.0.1 a moment ago. */
async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, HOST, resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** Whether a STUN server answers a binding request on `port` within `waitMs`. */
async function answersStun(port: number, waitMs: number): Promise<boolean> {
  const socket = createSocket('udp4');
  try {
    return await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), waitMs);
      socket.on('message', (message) => {
        // A binding success response (0x0101) with our magic cookie.
        if (message.length >= 20 && message.readUInt16BE(0) === 0x0101 && message.readUInt32BE(4) === STUN_MAGIC_COOKIE) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      socket.on('error', () => undefined);
      const request = Buffer.alloc(20);
      request.writeUInt16BE(0x0001, 0);
      request.writeUInt32BE(STUN_MAGIC_COOKIE, 4);
      randomBytes(12).copy(request, 8);
      socket.send(request, port, HOST);
    });
  } finally {
    socket.close();
  }
}

export class TurnRelay {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly port: number,
    readonly username: string,
    readonly credential: string,
  ) {}

  /** Starts coturn; throws, with its log, if it does not answer within 10 s. */
  static async start(): Promise<TurnRelay> {
    const dir = mkdtempSync(join(tmpdir(), 'bridge-turn-'));
    const port = await freeUdpPort();
    const username = 'bridge-test';
    const credential = randomBytes(12).toString('hex');
    // Relay ports of their own, away from the ephemeral ones werift's sockets take.
    const minPort = randomInt(20_000, 29_000);
    const args = [
      '-n',
      `--listening-ip=${HOST}`,
      `--relay-ip=${HOST}`,
      `--listening-port=${port}`,
      `--min-port=${minPort}`,
      `--max-port=${minPort + 200}`,
      '--lt-cred-mech',
      `--user=${username}:${credential}`,
      '--realm=bridge.test',
      '--allow-loopback-peers',
      '--no-tls',
      '--no-dtls',
      '--no-cli',
      '--no-tcp-relay',
      '--no-rfc5780',
      '--simple-log',
      `--log-file=${join(dir, 'turn.log')}`,
      `--userdb=${join(dir, 'turndb')}`,
      `--pidfile=${join(dir, 'turn.pid')}`,
    ];
    const child = spawn('turnserver', args, { stdio: 'ignore' });
    const relay = new TurnRelay(child, dir, port, username, credential);
    const deadline = Date.now() + 10_000;
    while (!(await answersStun(port, 200))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        const log = relay.log();
        await relay.stop();
        throw new Error(`coturn did not start on ${HOST}:${port}\n${log}`);
      }
    }
    return relay;
  }

  /** The relay as a peer connection's ICE server. */
  get iceServer(): RTCIceServer {
    return { urls: `turn:${HOST}:${this.port}`, username: this.username, credential: this.credential };
  }

  /** What coturn logged. */
  log(): string {
    try {
      return readFileSync(join(this.dir, 'turn.log'), 'utf8');
    } catch {
      return '';
    }
  }

  async stop(): Promise<void> {
    const { child } = this;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
