// A real Redis for tests (style.md 10): the one CI provides in REDIS_URL, or else a private
// redis-server (Debian package) on a free port of 127.0.0.1, without persistence.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { Redis } from 'ioredis';
import { errorText } from '../../shared/result';

export interface RedisHandle {
  url: string;
  /** Deletes every key under `prefix` (tests on a shared server clean up after themselves). */
  removeKeys(prefix: string): Promise<void>;
  stop(): Promise<void>;
}

// The one on PATH, as scripts/check-prereqs.ts checks before `npm test` starts.
const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const START_TIMEOUT_MS = 10_000;

/** A key prefix of its own for each test, so tests can share one server. */
export function uniquePrefix(name = 'test'): string {
  return `${name}:${randomBytes(6).toString('hex')}:`;
}

export async function startRedis(): Promise<RedisHandle> {
  const shared = process.env.REDIS_URL;
  if (shared) return { url: shared, removeKeys: (prefix) => removeKeys(shared, prefix), stop: async () => {} };

  let lastError: unknown;
  // The free port may be taken between asking for it and redis-server binding it: try again then.
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = await freePort();
    const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir()], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const stopOnExit = () => child.kill('SIGKILL');
    process.once('exit', stopOnExit);
    try {
      await waitForPong(port, child);
    } catch (error) {
      lastError = error;
      process.off('exit', stopOnExit);
      await stopChild(child);
      continue;
    }
    const url = `redis://127.0.0.1:${port}`;
    return {
      url,
      removeKeys: (prefix) => removeKeys(url, prefix),
      stop: async () => {
        process.off('exit', stopOnExit);
        await stopChild(child);
      },
    };
  }
  throw new Error(`redis-server did not start: ${errorText(lastError)}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPong(port: number, child: ChildProcess): Promise<void> {
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
    if (exited) throw new Error(`redis-server exited: ${stderr.trim() || 'no output'}`);
    if (await ping(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${START_TIMEOUT_MS} ms`);
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (answer.includes('\r\n')) finish(answer.startsWith('+PONG'));
    });
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

async function removeKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { protocol: 2, lazyConnect: true });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
