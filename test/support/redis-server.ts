// A real Redis for tests (style.md 10): the one CI provides in REDIS_URL, or else a private
// redis-server (Debian package) on a free port of 127.0.0.1, without persistence.
import { randomBytes } from 'node:crypto';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { Redis } from 'ioredis';
import { startServerProcess } from './server-process';

export interface RedisHandle {
  url: string;
  /** Deletes every key under `prefix` (tests on a shared server clean up after themselves). */
  removeKeys(prefix: string): Promise<void>;
  stop(): Promise<void>;
}

// The one on PATH, as scripts/check-prereqs.ts checks before `npm test` starts.
const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? 'redis-server';

/** A key prefix of its own for each test, so tests can share one server. */
export function uniquePrefix(name = 'test'): string {
  return `${name}:${randomBytes(6).toString('hex')}:`;
}

export async function startRedis(): Promise<RedisHandle> {
  const shared = process.env.REDIS_URL;
  if (shared) return { url: shared, removeKeys: (prefix) => removeKeys(shared, prefix), stop: async () => {} };

  const server = await startServerProcess({
    name: 'redis-server',
    command: REDIS_SERVER,
    args: (port) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir()],
    answers: ping,
    answering: 'answer PING',
    pollMs: 25,
  });
  const url = `redis://127.0.0.1:${server.port}`;
  return { url, removeKeys: (prefix) => removeKeys(url, prefix), stop: () => server.stop() };
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
