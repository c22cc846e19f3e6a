// Opens each backend kind the same way, so one conformance suite runs against both.
import { MemoryBackend } from '../../../relay/backend/memory-backend';
import { RedisBackend } from '../../../relay/backend/redis-backend';
import type { RelayBackend } from '../../../relay/backend/types';
import { startRedis, uniquePrefix, type RedisHandle } from '../../support/redis-server';
import type { BackendHarness } from './backend-fixtures';

const DEFAULT_RETENTION_MS = 10 * 60_000;
const DEFAULT_DEDUP_MS = 24 * 60 * 60_000;

export function memoryHarness(): BackendHarness {
  let opened: RelayBackend[] = [];
  return {
    name: 'memory',
    setup: async () => {},
    teardown: async () => {},
    open: async ({ now, logger, retentionMs, dedupWindowMs, shareWith }) => {
      if (shareWith) throw new Error('memory backends cannot share state');
      const backend = new MemoryBackend({ now, logger, retentionMs: retentionMs ?? DEFAULT_RETENTION_MS, dedupWindowMs: dedupWindowMs ?? DEFAULT_DEDUP_MS });
      opened.push(backend);
      return backend;
    },
    closeAll: async () => {
      await Promise.all(opened.map((b) => b.close()));
      opened = [];
    },
  };
}

export function redisHarness(): BackendHarness & { redis(): RedisHandle; prefixOf(backend: RelayBackend): string } {
  let redis: RedisHandle | undefined;
  let opened: RelayBackend[] = [];
  const prefixes = new Map<RelayBackend, string>();
  const handle = () => {
    if (!redis) throw new Error('redis harness not set up');
    return redis;
  };
  return {
    name: 'redis',
    setup: async () => {
      redis = await startRedis();
    },
    teardown: async () => {
      await redis?.stop();
      redis = undefined;
    },
    open: async ({ now, logger, retentionMs, dedupWindowMs, shareWith }) => {
      const keyPrefix = shareWith ? prefixes.get(shareWith) : uniquePrefix('relay-backend');
      if (keyPrefix === undefined) throw new Error('shareWith must be a backend of this harness');
      const backend = await RedisBackend.open({
        url: handle().url,
        keyPrefix,
        now,
        logger,
        retentionMs: retentionMs ?? DEFAULT_RETENTION_MS,
        dedupWindowMs: dedupWindowMs ?? DEFAULT_DEDUP_MS,
      });
      opened.push(backend);
      prefixes.set(backend, keyPrefix);
      return backend;
    },
    closeAll: async () => {
      const closing = opened;
      opened = [];
      await Promise.all(closing.map((b) => b.close()));
      const used = new Set(closing.map((b) => prefixes.get(b)));
      for (const b of closing) prefixes.delete(b);
      for (const prefix of used) if (prefix !== undefined) await handle().removeKeys(prefix);
    },
    redis: handle,
    prefixOf: (backend) => {
      const prefix = prefixes.get(backend);
      if (prefix === undefined) throw new Error('unknown backend');
      return prefix;
    },
  };
}
