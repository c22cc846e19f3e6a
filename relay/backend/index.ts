// Chooses the relay's backend: memory for one relay process (the default), Redis when several
// relay instances serve one team behind one URL (`--redis redis://…`).
import type { Logger } from '../../shared/log';
import { MemoryBackend } from './memory-backend';
import type { RelayBackend } from './types';

export type { AppendInput, AppendOutcome, Audience, BackendStats, BridgeNode, CallNodeOutcome, ClaimOutcome, Presence, RelayBackend, StoredEvent } from './types';
export { envelopeOf } from './types';
export { MemoryBackend } from './memory-backend';

export interface BackendOptions {
  /** `redis://host:port[/db]`; absent → the memory backend. */
  redisUrl?: string;
  /** Prefix of every Redis key and channel (default `relay:`), so deployments and tests can share a server. */
  keyPrefix?: string;
  retentionMs: number;
  dedupWindowMs: number;
  now?: () => number;
  logger?: Logger;
}

/**
 * The backend the options ask for, ready to use. Rejects when Redis cannot be reached at start-up
 * (a relay that cannot reach its shared state must not pretend to serve the team).
 */
export async function createBackend(options: BackendOptions): Promise<RelayBackend> {
  const { redisUrl, keyPrefix, ...common } = options;
  if (redisUrl === undefined || redisUrl === '') return new MemoryBackend(common);
  // Loaded only when asked for, so a memory relay never loads the Redis client.
  const { RedisBackend } = await import('./redis-backend');
  return RedisBackend.open({ ...common, url: redisUrl, ...(keyPrefix !== undefined ? { keyPrefix } : {}) });
}
