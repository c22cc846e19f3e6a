// The relay's shared state in Redis, for several relay instances behind one URL. Every decision that
// must be made once for the whole team (de-duplication, tombstones, order, claims) is made inside
// Redis by one Lua script call; each instance then fans out what it reads from the shared stream.
//
// Layout (all keys and the channel under `keyPrefix`):
//   events              stream; one entry per stored event, field `e` = {receivedAt, event, audience};
//                       the entry id is the resume cursor, the same on every instance
//   dedup:<key>         de-duplication keys (delivery-rules.ts), expiring after the de-dup window
//   tombstone:<callId>  ended calls (1 h)
//   claim:<callId>      the agent who won the call (1 h)
//   presence            hash agentId → "<version> <json>"; the channel `presence` carries the same text
//   presence:version    counter that orders presence updates
//   bridge:nodes        hash nodeId → the bridge node's registration, JSON
//   bridge:load         hash nodeId → "<expiresAt> <json>": its last load, and when it is gone
//   bridge:call:<callId>        "<expiresAt> <nodeId>": the node that holds the call (1 h)
//   bridge:node-calls:<nodeId>  sorted set callId → expiresAt: the calls placed on the node
//   callbacks           hash id → the callback request, JSON (without its taker)
//   callbacks:taken     hash id → the agent who took it, JSON {agentId, name, at}
//   callbacks:expiry    sorted set id → when it runs out (ms; +inf when permanent)
//   callbacks:customers hash n:<number> / u:<userId> → the id of that customer's request
//   held:<callId>       a call on hold (12 h at most)
import { createHash, randomBytes } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { z } from 'zod';
import { TOMBSTONE_TTL_MS } from '../../shared/call-state';
import type { BridgeNodeLoad, BridgeNodeRegistration } from '../../shared/bridge-nodes';
import { callbackRequestSchema, type CallbackRequest } from '../../shared/callbacks';
import { relayEventSchema } from '../../shared/events';
import { createLogger, type Logger } from '../../shared/log';
import type { Colleague } from '../../shared/transfer';
import { parseWith } from '../../shared/validation';
import { byRequestedAt, CALLBACKS_MAX, customerKeysOf, isLiveCallback, type CallbackCustomer } from './callback-rules';
import { CLAIM_TTL_MS, dedupKeyOf, isConnect, isStaleConnect, leavesTombstone } from './delivery-rules';
import { byNodeId, CALL_NODE_TTL_MS, leastLoaded, NODE_KEYS_TTL_MS, registeredNode, withLoad } from './node-rules';
import {
  HOLD_TTL_MS,
  PRESENCES,
  type AddCallbackOutcome,
  type AppendInput,
  type AppendOutcome,
  type BackendStats,
  type BridgeNode,
  type CallNodeOutcome,
  type ClaimOutcome,
  type Presence,
  type PresenceState,
  type ReportedPresence,
  type RelayBackend,
  type StoredEvent,
  type TakeCallbackOutcome,
  type TakenCallback,
} from './types';
import { errorText } from '../../shared/result';

export interface RedisBackendOptions {
  /** `redis://[:password@]host:port[/db]` */
  url: string;
  /** Default `relay:`. */
  keyPrefix?: string;
  retentionMs: number;
  dedupWindowMs: number;
  /** Approximate cap on the stream's length, whatever the retention says (Redis trims whole nodes). */
  maxEvents?: number;
  /** How long start-up may wait for Redis before giving up. */
  connectTimeoutMs?: number;
  now?: () => number;
  logger?: Logger;
}

export const REDIS_DEFAULTS = {
  keyPrefix: 'relay:',
  maxEvents: 100_000,
  connectTimeoutMs: 10_000,
} as const;

/** Own appends kept for the reader: more than a busy second's worth of one instance's. */
const OWN_PAYLOADS_KEPT = 16_384;
/** Entries per XREAD: bounds the work done between two looks at the event loop. */
const READ_BATCH = 500;
const READ_BLOCK_MS = 1_000;
const RETRY_DELAY_MS = 250;
const QUIT_TIMEOUT_MS = 2_000;
/** Appends per script call at most: bounds how long one call holds Redis. */
export const APPEND_BATCH_MAX = 256;

interface AppendWaiting {
  input: AppendInput;
  /** The event's dedup key and tombstone key, and its ARGV: is connect, ends the call, now ms, payload. */
  keys: readonly [string, string];
  args: readonly [number, number, number, string];
  resolve: (result: { outcome: AppendOutcome; previousId?: string }) => void;
  reject: (error: unknown) => void;
}

/**
 * Appends a batch of events in order, each as if by a call of its own: the batch is what one
 * instance's webhooks of one turn of its event loop stored, and one script call instead of one
 * each spares both the relay and Redis most of the work per command.
 * KEYS: stream, then for each event its dedup key and its tombstone key. ARGV: dedup window ms,
 * tombstone ttl ms, max length, min id kept, then for each event: is connect, ends the call, now
 * ms, payload.
 * Returns three values per event: 'tombstoned' or 'duplicate' (and two empty strings), or
 * 'stored', its id and the id of the entry just before it (`0-0` when there was none), whichever
 * instance appended that one, so the instance can tell whether its reader has delivered
 * everything before its own entry; or 'error' and Redis's message, when a command failed for that
 * event alone (the others are decided as ever).
 * Checks in the memory backend's order (stale is decided before, in JS): tombstoned, duplicate.
 * The entry id takes the instance's clock (`<now>-*`) so that "the last sinceMs" and retention mean
 * the same on every backend; when that would go backwards (clock skew between instances), Redis
 * picks the id (`*`), which is never smaller than the last one.
 */
const APPEND_BATCH_LUA = `
local prev = nil
local function append(i)
  local dedup, tombstone, a = KEYS[2 * i], KEYS[2 * i + 1], 4 * i
  if ARGV[a + 1] == '1' and redis.call('EXISTS', tombstone) == 1 then return 'tombstoned', '', '' end
  if not redis.call('SET', dedup, '1', 'NX', 'PX', ARGV[1]) then return 'duplicate', '', '' end
  if ARGV[a + 2] == '1' then redis.call('SET', tombstone, '1', 'PX', ARGV[2]) end
  if prev == nil then
    local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
    prev = '0-0'
    if last[1] then prev = last[1][1] end
  end
  local id = redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], ARGV[a + 3] .. '-*', 'e', ARGV[a + 4])
  if type(id) == 'table' and id.err then
    id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'e', ARGV[a + 4])
  end
  local before = prev
  prev = id
  return 'stored', id, before
end
local reply = {}
for i = 1, (#KEYS - 1) / 2 do
  local ok, status, id, before = pcall(append, i)
  if not ok then
    status, id, before = 'error', type(status) == 'table' and status.err or tostring(status), ''
  end
  reply[#reply + 1] = status; reply[#reply + 1] = id; reply[#reply + 1] = before
end
if prev ~= nil then redis.call('XTRIM', KEYS[1], 'MINID', '~', ARGV[4]) end
return reply
`;

/** KEYS: claim key. ARGV: agent id, ttl ms. Returns the owner after the attempt. */
const CLAIM_LUA = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return ARGV[1] end
return redis.call('GET', KEYS[1])
`;

/** KEYS: declined set. ARGV: agent id, ttl ms. Returns every agent who declined the call. */
const DECLINE_LUA = `
redis.call('SADD', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return redis.call('SMEMBERS', KEYS[1])
`;

/**
 * KEYS: presence hash, version counter. ARGV: agent id, presence, reason ('' for none), now ms, the
 * record's json up to its since (\`{…,"since":\`), channel. The agent's live record of the same
 * presence and reason keeps its since (a refresh); anything else starts it now. Returns the version
 * and the since (as text: a Lua number would print as a float).
 */
const PRESENCE_LUA = `
local since = ARGV[4]
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local ok, old = pcall(cjson.decode, string.match(current, '^%d+ (.*)$') or '')
  if ok and type(old) == 'table' and old.presence == ARGV[2] and type(old.since) == 'number' and type(old.expiresAt) == 'number'
    and old.expiresAt > tonumber(ARGV[4]) then
    local reason = old.reason
    if type(reason) ~= 'string' then reason = '' end
    if reason == ARGV[3] then since = string.format('%.0f', old.since) end
  end
end
local version = redis.call('INCR', KEYS[2])
local text = version .. ' ' .. ARGV[5] .. since .. '}'
redis.call('HSET', KEYS[1], ARGV[1], text)
redis.call('PUBLISH', ARGV[6], text)
return {version, since}
`;

/**
 * KEYS: nodes hash, load hash. ARGV: node id, registration json, load text, keys ttl ms. Both hashes
 * live at least the keys ttl after the last write, so a deployment whose nodes are all gone leaves nothing.
 */
const REGISTER_NODE_LUA = `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
for i = 1, 2 do
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
end
return 1
`;

/**
 * KEYS: nodes hash, load hash. ARGV: node id, now ms, load text, keys ttl ms. Returns the node's
 * registration, or nil when no live node has that id (an expired one is removed).
 */
const REPORT_NODE_LOAD_LUA = `
local registration = redis.call('HGET', KEYS[1], ARGV[1])
local current = redis.call('HGET', KEYS[2], ARGV[1])
local expiresAt = current and tonumber(string.match(current, '^(%d+) '))
if not registration or not expiresAt or expiresAt <= tonumber(ARGV[2]) then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  return false
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
for i = 1, 2 do
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
end
return registration
`;

/**
 * KEYS: nodes hash, load hash. ARGV: now ms. Returns id, registration, load text of every live node,
 * one after another, and removes the nodes that missed their heartbeats.
 */
const LIVE_NODES_LUA = `
local live = {}
for _, id in ipairs(redis.call('HKEYS', KEYS[1])) do
  local registration = redis.call('HGET', KEYS[1], id)
  local load = redis.call('HGET', KEYS[2], id)
  local expiresAt = load and tonumber(string.match(load, '^(%d+) '))
  if registration and expiresAt and expiresAt > tonumber(ARGV[1]) then
    live[#live + 1] = id
    live[#live + 1] = registration
    live[#live + 1] = load
  else
    redis.call('HDEL', KEYS[1], id)
    redis.call('HDEL', KEYS[2], id)
  end
end
return live
`;

/**
 * KEYS: the call's key, the node's calls. ARGV: call id, node id, now ms, expires at ms, ttl ms.
 * Returns {1, node} when the call is now on that node, {0, holder} when another node holds it. The
 * expiry is kept in the value too, so that every instance judges it by the same clock as the nodes'.
 */
const SET_CALL_NODE_LUA = `
local current = redis.call('GET', KEYS[1])
if current then
  local space = string.find(current, ' ', 1, true)
  if space then
    local expiresAt = tonumber(string.sub(current, 1, space - 1))
    local holder = string.sub(current, space + 1)
    if expiresAt and expiresAt > tonumber(ARGV[3]) and holder ~= ARGV[2] then return {0, holder} end
  end
end
redis.call('SET', KEYS[1], ARGV[4] .. ' ' .. ARGV[2], 'PX', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[5]) then redis.call('PEXPIRE', KEYS[2], ARGV[5]) end
return {1, ARGV[2]}
`;

/** KEYS: the call's key, its holder's calls. ARGV: call id, the call's value as read. 1 when dropped, 0 when it changed meanwhile. */
const DROP_CALL_NODE_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
`;

/**
 * The callback list's scripts share KEYS (requests hash, taken hash, expiry set, customers hash)
 * and these helpers: `remove` takes a request out of all four (a customer's key only while it still
 * names that request), `prune` removes every request that ran out by `now`.
 */
const CALLBACK_HELPERS_LUA = `
local function remove(id)
  local json = redis.call('HGET', KEYS[1], id)
  if json then
    local ok, request = pcall(cjson.decode, json)
    if ok and type(request) == 'table' then
      local keys = {}
      if type(request.number) == 'string' then keys[#keys + 1] = 'n:' .. string.gsub(request.number, '^%+', '') end
      if type(request.userId) == 'string' then keys[#keys + 1] = 'u:' .. request.userId end
      for _, key in ipairs(keys) do
        if redis.call('HGET', KEYS[4], key) == id then redis.call('HDEL', KEYS[4], key) end
      end
    end
  end
  redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
end
local function prune(now)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do remove(id) end
end
`;

/**
 * ARGV: id, request json, expiry score, now ms, most kept, then the customer's keys. Returns
 * {'duplicate'}, or {'added', replaced ids…}.
 */
const ADD_CALLBACK_LUA = `${CALLBACK_HELPERS_LUA}
prune(ARGV[4])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return {'duplicate'} end
local reply = {'added'}
for i = 6, #ARGV do
  local other = redis.call('HGET', KEYS[4], ARGV[i])
  if other then
    if redis.call('HEXISTS', KEYS[1], other) == 1 then reply[#reply + 1] = other end
    remove(other)
    redis.call('HDEL', KEYS[4], ARGV[i])
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
for i = 6, #ARGV do redis.call('HSET', KEYS[4], ARGV[i], ARGV[1]) end
local over = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[5])
if over > 0 then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, over - 1)) do remove(id) end
end
return reply
`;

/**
 * ARGV: id, agent id, the taker's json, now ms. Returns {'not_found'}, or {'taken' | 'taken_by_other',
 * request json, taker json}: the first taker stays.
 */
const TAKE_CALLBACK_LUA = `${CALLBACK_HELPERS_LUA}
prune(ARGV[4])
local json = redis.call('HGET', KEYS[1], ARGV[1])
if not json then return {'not_found'} end
local current = redis.call('HGET', KEYS[2], ARGV[1])
if current then
  local ok, taker = pcall(cjson.decode, current)
  if ok and type(taker) == 'table' and type(taker.agentId) == 'string' then
    if taker.agentId == ARGV[2] then return {'taken', json, current} end
    return {'taken_by_other', json, current}
  end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return {'taken', json, ARGV[3]}
`;

/** ARGV: now ms, then the customer's keys. Returns the ids removed. */
const DROP_CALLBACKS_LUA = `${CALLBACK_HELPERS_LUA}
prune(ARGV[1])
local dropped = {}
for i = 2, #ARGV do
  local id = redis.call('HGET', KEYS[4], ARGV[i])
  if id then
    if redis.call('HEXISTS', KEYS[1], id) == 1 then dropped[#dropped + 1] = id end
    remove(id)
    redis.call('HDEL', KEYS[4], ARGV[i])
  end
end
return dropped
`;

/** ARGV: now ms. Returns each live request's json and its taker's ('' when none), one after another. */
const LIST_CALLBACKS_LUA = `${CALLBACK_HELPERS_LUA}
prune(ARGV[1])
local all = redis.call('HGETALL', KEYS[1])
local reply = {}
for i = 1, #all, 2 do
  reply[#reply + 1] = all[i + 1]
  reply[#reply + 1] = redis.call('HGET', KEYS[2], all[i]) or ''
end
return reply
`;

interface LuaScript {
  lua: string;
  sha: string;
}
const script = (lua: string): LuaScript => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });
const APPEND_BATCH = script(APPEND_BATCH_LUA);
const CLAIM = script(CLAIM_LUA);
const DECLINE = script(DECLINE_LUA);
const SET_PRESENCE = script(PRESENCE_LUA);
const REGISTER_NODE = script(REGISTER_NODE_LUA);
const REPORT_NODE_LOAD = script(REPORT_NODE_LOAD_LUA);
const LIVE_NODES = script(LIVE_NODES_LUA);
const SET_CALL_NODE = script(SET_CALL_NODE_LUA);
const DROP_CALL_NODE = script(DROP_CALL_NODE_LUA);
const ADD_CALLBACK = script(ADD_CALLBACK_LUA);
const TAKE_CALLBACK = script(TAKE_CALLBACK_LUA);
const DROP_CALLBACKS = script(DROP_CALLBACKS_LUA);
const LIST_CALLBACKS = script(LIST_CALLBACKS_LUA);

const audienceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('everyone') }),
  z.object({ kind: z.literal('ringing'), preferredAgentId: z.string().optional(), releaseAt: z.number().optional() }),
  z.object({ kind: z.literal('agent'), agentId: z.string() }),
  z.object({ kind: z.literal('agents'), agentIds: z.array(z.string()) }),
]);
const storedRecordSchema = z.object({ receivedAt: z.number(), event: relayEventSchema, audience: audienceSchema });

const presenceRecordSchema = z.object({
  agentId: z.string(),
  // The presence is a plain string in the JSON: records written before a value was added still
  // parse. An instance older than a value skips records that carry it (there the agent keeps the
  // last presence that instance could read, until it expires), so upgrade every instance together.
  presence: z.enum(PRESENCES),
  // Absent from the records of relays older than breaks: they still parse, without a since.
  reason: z.string().optional(),
  since: z.number().optional(),
  expiresAt: z.number(),
});
interface PresenceEntry extends PresenceState {
  expiresAt: number;
  version: number;
}
type PresenceUpdate = PresenceEntry & { agentId: string };

/** The records of a bridge node, outside data too: another relay version may have written them. */
const nodeRegistrationRecordSchema = z.object({
  nodeId: z.string(),
  controlUrl: z.string(),
  publicAddress: z.string(),
  capacity: z.number().optional(),
  registeredAt: z.number(),
});
const nodeLoadRecordSchema = z.object({ calls: z.number(), cpuPercent: z.number().optional(), lastSeenAt: z.number() });

/** A callback request's records, outside data too. */
const callbackRecordSchema = callbackRequestSchema.omit({ takenBy: true });
const callbackTakerSchema = callbackRequestSchema.shape.takenBy.unwrap();

/** A stream id as Redis writes it: `<ms>-<seq>`, each an unsigned 64-bit integer. */
const STREAM_ID = /^(\d{1,20})-(\d{1,20})$/;
const U64_MAX = (1n << 64n) - 1n;
const MAX_COUNT = 1_000_000_000;

function parseStreamId(text: string): [bigint, bigint] | undefined {
  const match = STREAM_ID.exec(text);
  if (!match) return undefined;
  const ms = BigInt(match[1]!);
  const seq = BigInt(match[2]!);
  return ms > U64_MAX || seq > U64_MAX ? undefined : [ms, seq];
}

function compareStreamIds(a: [bigint, bigint], b: [bigint, bigint]): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] === b[1] ? 0 : a[1] < b[1] ? -1 : 1;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** host:port for logs and errors: the URL may carry a password. */
function describeTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return '(unparseable Redis URL)';
  }
}

/**
 * Redis-backed `RelayBackend`. Three connections per instance: commands, a blocking reader of the
 * event stream, and a subscriber for presence. Open it with `RedisBackend.open`.
 */
export class RedisBackend implements RelayBackend {
  readonly kind = 'redis' as const;
  /** Stream ids are the same on every instance: no epoch of their own. */
  readonly epoch = undefined;

  private listeners: ReadonlyArray<(event: StoredEvent) => void> = [];
  /** The largest id this instance appended: `flush` waits until it is delivered. */
  private lastAppendedId: [bigint, bigint] | undefined;
  /**
   * What this instance is appending, or appended and the reader has yet to bring back (it was not
   * delivered at once), by the exact text it wrote: the reader hands these on as they are, without
   * parsing its own JSON again.
   * Bounded; an entry not found here is read like any other instance's.
   */
  private readonly ownPayloads = new Map<string, Omit<StoredEvent, 'cursor'>>();
  /** Appends waiting for this turn's batch (`sendAppends`). */
  private appendsWaiting: AppendWaiting[] = [];
  /** Scripts sent and not answered yet: close lets them finish before QUIT. */
  private scriptsRunning = 0;
  private allScriptsSettled: (() => void) | undefined;
  /** `flush` calls waiting for delivery, each with the id it must pass. */
  private flushes: Array<{ until: [bigint, bigint]; resolve: () => void }> = [];
  private mirror = new Map<string, PresenceEntry>();
  /** Presence updates seen while the mirror is being reloaded, re-applied on top of the reload. */
  private presenceDuringReload: PresenceUpdate[] | undefined;
  private closed = false;
  private readLoop: Promise<void> = Promise.resolve();
  /**
   * Settles on close. The reader's pending XREAD is raced against it: a connection that is between
   * two reconnect attempts when it is disconnected never settles its queued commands.
   */
  private readonly stopped: Promise<'stopped'>;
  private stop: () => void = () => {};

  private readonly streamKey: string;
  private readonly presenceKey: string;
  private readonly presenceVersionKey: string;
  private readonly presenceChannel: string;
  private readonly nodesKey: string;
  private readonly nodeLoadKey: string;
  /** The callback list's keys, in the order its scripts take them. */
  private readonly callbackKeys: string[];
  private readonly maxEvents: number;

  private constructor(
    /** Names this instance's connections (`relay-<instanceId>-<role>` in CLIENT LIST). */
    readonly instanceId: string,
    private readonly options: RedisBackendOptions,
    private readonly prefix: string,
    private readonly command: Redis,
    private readonly reader: Redis,
    private readonly presenceSubscriber: Redis,
    /**
     * The last stream id handed to listeners, by the reader or at append time: the reader resumes
     * after it, also after a reconnect. Every entry up to it has been delivered (or skipped as
     * unreadable), in stream order.
     */
    private lastDeliveredId: string,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {
    this.streamKey = `${prefix}events`;
    this.presenceKey = `${prefix}presence`;
    this.presenceVersionKey = `${prefix}presence:version`;
    this.presenceChannel = `${prefix}presence`;
    this.nodesKey = `${prefix}bridge:nodes`;
    this.nodeLoadKey = `${prefix}bridge:load`;
    this.callbackKeys = [`${prefix}callbacks`, `${prefix}callbacks:taken`, `${prefix}callbacks:expiry`, `${prefix}callbacks:customers`];
    this.maxEvents = Math.max(1, options.maxEvents ?? REDIS_DEFAULTS.maxEvents);
    this.stopped = new Promise((resolve) => (this.stop = () => resolve('stopped')));
  }

  /** Connects, loads the presence mirror and starts reading the stream from its current end. */
  static async open(options: RedisBackendOptions): Promise<RedisBackend> {
    const prefix = options.keyPrefix ?? REDIS_DEFAULTS.keyPrefix;
    const log = options.logger ?? createLogger('relay-backend');
    const target = describeTarget(options.url);
    const instance = randomBytes(4).toString('hex');
    const connect = (role: string, extra: RedisOptions = {}): Redis => {
      const connection = new Redis(options.url, {
        // RESP2: the stream replies have the shapes of the Redis documentation (RESP3 maps would be
        // flattened differently by the client).
        protocol: 2,
        lazyConnect: true,
        connectionName: `relay-${instance}-${role}`,
        ...extra,
      });
      connection.on('error', (error: unknown) => log.warn('redis connection error', { role, target, error }));
      return connection;
    };
    // Each command is written as it is made. The appends of one turn of the event loop are one
    // script call already (sendAppends), sent as that turn ends; ioredis's auto-pipelining would
    // hold it for the next turn's end, and keep a second batch back until the first is answered.
    const command = connect('commands');
    // The reader waits for Redis to come back instead of failing its XREAD: it then resumes from
    // the last id it delivered, so no event is lost across a reconnect.
    const reader = connect('stream', { maxRetriesPerRequest: null });
    const presenceSubscriber = connect('presence', { autoResubscribe: false, maxRetriesPerRequest: null });
    const connections = [command, reader, presenceSubscriber];

    const timeoutMs = options.connectTimeoutMs ?? REDIS_DEFAULTS.connectTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis at ${target} did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    const withinTimeout = <T>(step: Promise<T>): Promise<T> => {
      // A step that loses the race fails later, when its connection is dropped: nobody waits for it.
      step.catch(() => undefined);
      return Promise.race([step, timeout]);
    };
    try {
      await withinTimeout(Promise.all(connections.map((c) => c.connect())));
      const lastId = await withinTimeout(lastStreamId(command, `${prefix}events`));
      const backend = new RedisBackend(instance, options, prefix, command, reader, presenceSubscriber, lastId, options.now ?? Date.now, log);
      await withinTimeout(backend.startPresence());
      backend.readLoop = backend.runReadLoop();
      log.info('redis backend ready', { target, prefix });
      return backend;
    } catch (error) {
      for (const connection of connections) connection.disconnect();
      const reason = errorText(error);
      throw new Error(`Cannot use Redis at ${target}: ${reason}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  async append(input: AppendInput): Promise<AppendOutcome> {
    if (this.closed) throw new Error('The relay backend is closed');
    const { event } = input;
    const now = this.now();
    // Decided here, not in the script: it depends only on the event and this instance's clock.
    if (isStaleConnect(event, now)) return { stored: false, reason: 'stale' };
    const record = { receivedAt: input.receivedAt, event, audience: input.audience };
    const payload = JSON.stringify(record);
    this.ownPayloads.set(payload, record);
    if (this.ownPayloads.size > OWN_PAYLOADS_KEPT) this.ownPayloads.delete(this.ownPayloads.keys().next().value!);
    let keep = false;
    try {
      const { outcome, previousId } = await this.appendPayload(input, payload, now);
      if (outcome.stored) this.deliverOwn(outcome.event, previousId);
      // Stored and neither delivered nor read back yet: the reader takes it from here.
      keep = outcome.stored && !this.closed && !this.readPast(parseStreamId(outcome.event.cursor) ?? [0n, 0n]);
      return outcome;
    } finally {
      if (!keep) this.ownPayloads.delete(payload);
    }
  }

  /**
   * Hands an own event to the listeners as soon as its script replied, when the entry before it in
   * the stream is the last one delivered: the order stays the stream's, without waiting for the
   * reader to read the entry back (its XREAD, issued earlier, brings it again and skips it). When
   * another instance's entry lies between, or the reader has already passed it, the reader delivers.
   */
  private deliverOwn(stored: StoredEvent, previousId: string | undefined): void {
    const previous = previousId === undefined ? undefined : parseStreamId(previousId);
    const delivered = parseStreamId(this.lastDeliveredId);
    if (this.closed || !previous || !delivered || !parseStreamId(stored.cursor) || compareStreamIds(previous, delivered) !== 0) return;
    this.lastDeliveredId = stored.cursor;
    this.notify(stored);
    this.settleFlushes();
  }

  /** The script's outcome for one event, and the id of the entry before the stored one. */
  private appendPayload(input: AppendInput, payload: string, now: number): Promise<{ outcome: AppendOutcome; previousId?: string }> {
    return new Promise((resolve, reject) => {
      // Worked out here, where a throw rejects this append alone, not its whole batch.
      const { event } = input;
      const dedupKey = `${this.prefix}dedup:${dedupKeyOf(event, input.audience)}`;
      // Message events have no call: their tombstone key is never read or written by the script.
      const tombstoneKey = 'callId' in event ? this.tombstoneKey(event.callId) : dedupKey;
      const args = [isConnect(event) ? 1 : 0, leavesTombstone(event) ? 1 : 0, Math.max(0, Math.floor(now)), payload] as const;
      this.appendsWaiting.push({ input, keys: [dedupKey, tombstoneKey], args, resolve, reject });
      if (this.appendsWaiting.length >= APPEND_BATCH_MAX) this.sendAppends();
      else if (this.appendsWaiting.length === 1) setImmediate(this.sendAppends);
    });
  }

  /**
   * Sends the appends waiting as one script call. Called once the event loop has run this turn's
   * I/O callbacks (the webhooks read in it), when a batch is full, and by close.
   */
  private readonly sendAppends = (): void => {
    if (this.appendsWaiting.length === 0) return;
    const batch = this.appendsWaiting;
    this.appendsWaiting = [];
    const latest = batch.reduce((max, waiting) => Math.max(max, waiting.args[2]), 0);
    const keys = [this.streamKey];
    const args: Array<string | number> = [this.options.dedupWindowMs, TOMBSTONE_TTL_MS, this.maxEvents, `${Math.max(0, latest - this.options.retentionMs)}-0`];
    for (const waiting of batch) {
      keys.push(...waiting.keys);
      args.push(...waiting.args);
    }
    this.runScript(APPEND_BATCH, keys, args).then(
      (reply) => {
        if (!Array.isArray(reply) || reply.length !== 3 * batch.length) {
          const error = new Error('Unexpected reply from the append script');
          for (const waiting of batch) waiting.reject(error);
          return;
        }
        batch.forEach((waiting, i) => {
          try {
            waiting.resolve(this.appendOutcome(waiting.input, reply[3 * i], reply[3 * i + 1], reply[3 * i + 2]));
          } catch (error) {
            waiting.reject(error);
          }
        });
      },
      (error: unknown) => {
        for (const waiting of batch) waiting.reject(error);
      },
    );
  };

  private appendOutcome(input: AppendInput, status: unknown, id: unknown, previousId: unknown): { outcome: AppendOutcome; previousId?: string } {
    if (status === 'tombstoned' || status === 'duplicate') return { outcome: { stored: false, reason: status } };
    if (status === 'error') throw new Error(`Redis refused the append: ${typeof id === 'string' ? id : 'no reason given'}`);
    if (status !== 'stored' || typeof id !== 'string') throw new Error('Unexpected reply from the append script');
    const appended = parseStreamId(id);
    if (appended && (this.lastAppendedId === undefined || compareStreamIds(appended, this.lastAppendedId) > 0)) this.lastAppendedId = appended;
    const outcome: AppendOutcome = { stored: true, event: { cursor: id, receivedAt: input.receivedAt, event: input.event, audience: input.audience } };
    return typeof previousId === 'string' ? { outcome, previousId } : { outcome };
  }

  flush(): Promise<void> {
    const until = this.lastAppendedId;
    if (this.closed || until === undefined || this.readPast(until)) return Promise.resolve();
    return new Promise((resolve) => this.flushes.push({ until, resolve }));
  }

  stats(): BackendStats {
    // The retained events are Redis's, shared by every instance; this one holds none of them.
    return {};
  }

  async readAfter(cursor: string | undefined, options: { limit: number; sinceMs: number }): Promise<StoredEvent[]> {
    // XRANGE's COUNT must be an integer; "no limit" (Infinity) becomes a very large one.
    const count = Math.min(Math.max(0, Math.floor(options.limit)), MAX_COUNT);
    if (!(count > 0)) return [];
    const now = this.now();
    // Entries older than the retention may still sit in a node Redis has not trimmed yet.
    const oldestKept = `${Math.max(0, Math.floor(now - this.options.retentionMs))}-0`;
    const trimmed = cursor?.trim() ?? '';
    // An empty Last-Event-ID is no cursor at all, not a foreign one.
    if (trimmed === '') {
      const since = Math.max(0, Math.floor(now - Math.min(options.sinceMs, this.options.retentionMs)));
      return this.range(`${since}-0`, count);
    }
    const position = parseStreamId(trimmed);
    // Nothing can follow the largest id (and Redis refuses an interval that starts after it).
    if (!position || (position[0] === U64_MAX && position[1] === U64_MAX)) return this.range(oldestKept, count);
    const oldest = parseStreamId(oldestKept)!;
    const start = compareStreamIds(position, oldest) < 0 ? oldestKept : `(${trimmed}`;
    const [events, newest] = await Promise.all([this.range(start, count), lastStreamId(this.command, this.streamKey)]);
    // A cursor beyond anything this stream issued (another deployment, a flushed Redis) cannot mean
    // "up to date": its holder gets everything retained.
    const newestId = parseStreamId(newest);
    if (events.length === 0 && newestId && newest !== '0-0' && compareStreamIds(position, newestId) > 0) return this.range(oldestKept, count);
    return events;
  }

  subscribe(listener: (event: StoredEvent) => void): () => void {
    if (this.closed) return () => {};
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  async claim(callId: string, agentId: string): Promise<ClaimOutcome> {
    const owner = await this.runScript(CLAIM, [this.claimKey(callId)], [agentId, CLAIM_TTL_MS]);
    if (typeof owner !== 'string') throw new Error('Unexpected reply from the claim script');
    return { won: owner === agentId, agentId: owner };
  }

  async claimOwner(callId: string): Promise<string | undefined> {
    const owner = await this.command.get(this.claimKey(callId));
    return owner ?? undefined;
  }

  async decline(callId: string, agentId: string): Promise<string[]> {
    const agents = await this.runScript(DECLINE, [`${this.prefix}declined:${callId}`], [agentId, CLAIM_TTL_MS]);
    if (!Array.isArray(agents) || !agents.every((a) => typeof a === 'string')) throw new Error('Unexpected reply from the decline script');
    return agents as string[];
  }

  async isTombstoned(callId: string): Promise<boolean> {
    return (await this.command.exists(this.tombstoneKey(callId))) === 1;
  }

  async setPresence(agentId: string, reported: ReportedPresence, ttlMs: number): Promise<PresenceState & { since: number }> {
    const now = this.now();
    const expiresAt = now + ttlMs;
    const { presence, reason } = reported;
    const head = JSON.stringify({ agentId, presence, ...(reason !== undefined ? { reason } : {}), expiresAt }).slice(0, -1);
    const reply = await this.runScript(
      SET_PRESENCE,
      [this.presenceKey, this.presenceVersionKey],
      [agentId, presence, reason ?? '', String(Math.floor(now)), `${head},"since":`, this.presenceChannel],
    );
    const version = Array.isArray(reply) ? reply[0] : undefined;
    const since = Array.isArray(reply) ? Number(reply[1]) : NaN;
    if (typeof version !== 'number' || !Number.isSafeInteger(since)) throw new Error('Unexpected reply from the presence script');
    const state = { presence, ...(reason !== undefined ? { reason } : {}), since };
    // Mirrored at once, so this instance never reads its own update as missing.
    this.applyPresence({ agentId, ...state, expiresAt, version });
    return state;
  }

  presenceOf(agentId: string): Presence | undefined {
    return this.presenceStateOf(agentId)?.presence;
  }

  presenceStateOf(agentId: string): PresenceState | undefined {
    const entry = this.mirror.get(agentId);
    if (entry === undefined || entry.expiresAt <= this.now()) return undefined;
    const { presence, reason, since } = entry;
    return { presence, ...(reason !== undefined ? { reason } : {}), ...(since !== undefined ? { since } : {}) };
  }

  async registerNode(registration: BridgeNodeRegistration, ttlMs: number): Promise<BridgeNode> {
    const node = registeredNode(registration, Math.floor(this.now()), Math.ceil(ttlMs));
    const { nodeId, controlUrl, publicAddress, capacity, registeredAt } = node;
    const record = JSON.stringify({ nodeId, controlUrl, publicAddress, capacity, registeredAt });
    await this.runScript(REGISTER_NODE, [this.nodesKey, this.nodeLoadKey], [nodeId, record, loadText(node), this.nodeKeysTtl(ttlMs)]);
    return node;
  }

  async reportNodeLoad(nodeId: string, load: BridgeNodeLoad, ttlMs: number): Promise<BridgeNode | undefined> {
    const now = Math.floor(this.now());
    const ttl = Math.ceil(ttlMs);
    const text = loadText({ ...load, lastSeenAt: now, expiresAt: now + ttl });
    const registration = await this.runScript(REPORT_NODE_LOAD, [this.nodesKey, this.nodeLoadKey], [nodeId, now, text, this.nodeKeysTtl(ttlMs)]);
    if (registration === null) return undefined;
    if (typeof registration !== 'string') throw new Error('Unexpected reply from the node load script');
    const node = this.registeredNodeOf(nodeId, registration);
    return node === undefined ? undefined : withLoad(node, load, now, ttl);
  }

  async removeNode(nodeId: string): Promise<void> {
    await this.command.multi().hdel(this.nodesKey, nodeId).hdel(this.nodeLoadKey, nodeId).exec();
  }

  async nodes(): Promise<BridgeNode[]> {
    const reply = await this.runScript(LIVE_NODES, [this.nodesKey, this.nodeLoadKey], [Math.floor(this.now())]);
    if (!Array.isArray(reply)) throw new Error('Unexpected reply from the live nodes script');
    const nodes: BridgeNode[] = [];
    for (let i = 0; i + 2 < reply.length; i += 3) {
      const [nodeId, registration, load] = reply.slice(i, i + 3) as unknown[];
      if (typeof nodeId !== 'string' || typeof registration !== 'string' || typeof load !== 'string') continue;
      const node = this.nodeOf(nodeId, registration, load);
      if (node !== undefined) nodes.push(node);
    }
    return nodes.sort(byNodeId);
  }

  async pickNode(): Promise<BridgeNode | undefined> {
    const nodes = await this.nodes();
    if (nodes.length === 0) return undefined;
    const now = Math.floor(this.now());
    const pipeline = this.command.pipeline();
    for (const { nodeId } of nodes) pipeline.zcount(this.nodeCallsKey(nodeId), `(${now}`, '+inf');
    const counts = (await pipeline.exec()) ?? [];
    const placed = new Map<string, number>();
    nodes.forEach(({ nodeId }, i) => {
      const [error, count] = counts[i] ?? [null, 0];
      if (error === null && typeof count === 'number') placed.set(nodeId, count);
    });
    return leastLoaded(nodes, (nodeId) => placed.get(nodeId) ?? 0);
  }

  async setCallNode(callId: string, nodeId: string): Promise<CallNodeOutcome> {
    const now = Math.floor(this.now());
    const reply = await this.runScript(SET_CALL_NODE, [this.callNodeKey(callId), this.nodeCallsKey(nodeId)], [callId, nodeId, now, now + CALL_NODE_TTL_MS, CALL_NODE_TTL_MS]);
    if (!Array.isArray(reply)) throw new Error('Unexpected reply from the call node script');
    const [placed, holder] = reply as unknown[];
    if ((placed !== 0 && placed !== 1) || typeof holder !== 'string') throw new Error('Unexpected reply from the call node script');
    return placed === 1 ? { placed: true, nodeId: holder } : { placed: false, nodeId: holder };
  }

  async callNode(callId: string): Promise<string | undefined> {
    const placement = parseCallNode(await this.command.get(this.callNodeKey(callId)));
    return placement !== undefined && placement.expiresAt > this.now() ? placement.nodeId : undefined;
  }

  async dropCallNode(callId: string): Promise<void> {
    const key = this.callNodeKey(callId);
    // The holder's set is a key of its own: read the holder, then drop both unless the call moved meanwhile.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const value = await this.command.get(key);
      if (value === null) return;
      const placement = parseCallNode(value);
      if (placement === undefined) {
        await this.command.del(key);
        return;
      }
      if ((await this.runScript(DROP_CALL_NODE, [key, this.nodeCallsKey(placement.nodeId)], [callId, value])) === 1) return;
    }
    throw new Error(`The call ${callId} kept moving between nodes while it was being dropped`);
  }

  async callsOnNode(nodeId: string): Promise<string[]> {
    const calls = await this.command.zrangebyscore(this.nodeCallsKey(nodeId), `(${Math.floor(this.now())}`, '+inf');
    return calls.sort();
  }

  async setCallHeld(callId: string, held: boolean): Promise<void> {
    if (held) await this.command.set(this.heldKey(callId), '1', 'PX', HOLD_TTL_MS);
    else await this.command.del(this.heldKey(callId));
  }

  async heldCalls(callIds: readonly string[]): Promise<Set<string>> {
    if (callIds.length === 0) return new Set();
    const held = await this.command.mget(...callIds.map((callId) => this.heldKey(callId)));
    return new Set(callIds.filter((_, i) => held[i] !== null));
  }

  async addCallback(request: CallbackRequest): Promise<AddCallbackOutcome> {
    const now = Math.floor(this.now());
    if (!isLiveCallback(request, now)) return { added: false, reason: 'expired' };
    const { id, number, userId, name, requestedAt, expiresAt, permanent } = request;
    const record = JSON.stringify({ id, number, userId, name, requestedAt, expiresAt, permanent });
    const score = permanent || expiresAt === undefined ? '+inf' : String(Math.floor(expiresAt));
    const reply = await this.runScript(ADD_CALLBACK, this.callbackKeys, [id, record, score, now, CALLBACKS_MAX, ...customerKeysOf(request)]);
    if (!Array.isArray(reply) || !reply.every((r) => typeof r === 'string')) throw new Error('Unexpected reply from the add callback script');
    const [status, ...replaced] = reply as string[];
    if (status === 'duplicate') return { added: false, reason: 'duplicate' };
    if (status !== 'added') throw new Error('Unexpected reply from the add callback script');
    return { added: true, replaced };
  }

  async takeCallback(id: string, agent: Colleague): Promise<TakeCallbackOutcome> {
    const now = Math.floor(this.now());
    const taker = JSON.stringify({ agentId: agent.agentId, name: agent.name, at: now });
    const reply = await this.runScript(TAKE_CALLBACK, this.callbackKeys, [id, agent.agentId, taker, now]);
    if (!Array.isArray(reply) || !reply.every((r) => typeof r === 'string')) throw new Error('Unexpected reply from the take callback script');
    const [status, record, takerRecord] = reply as string[];
    if (status === 'not_found') return { kind: 'not_found' };
    if ((status !== 'taken' && status !== 'taken_by_other') || record === undefined || takerRecord === undefined) throw new Error('Unexpected reply from the take callback script');
    const request = this.callbackOf(record, takerRecord);
    if (request?.takenBy === undefined) throw new Error(`The callback request ${id} cannot be read`);
    return { kind: status, request: request as TakenCallback };
  }

  async dropCallbacksOf(customer: CallbackCustomer): Promise<string[]> {
    const keys = customerKeysOf(customer);
    if (keys.length === 0) return [];
    const reply = await this.runScript(DROP_CALLBACKS, this.callbackKeys, [Math.floor(this.now()), ...keys]);
    if (!Array.isArray(reply) || !reply.every((r) => typeof r === 'string')) throw new Error('Unexpected reply from the drop callbacks script');
    return reply as string[];
  }

  async callbacks(): Promise<CallbackRequest[]> {
    const reply = await this.runScript(LIST_CALLBACKS, this.callbackKeys, [Math.floor(this.now())]);
    if (!Array.isArray(reply)) throw new Error('Unexpected reply from the list callbacks script');
    const requests: CallbackRequest[] = [];
    for (let i = 0; i + 1 < reply.length; i += 2) {
      const [record, taker] = reply.slice(i, i + 2) as unknown[];
      if (typeof record !== 'string' || typeof taker !== 'string') continue;
      const request = this.callbackOf(record, taker);
      if (request !== undefined) requests.push(request);
    }
    return requests.sort(byRequestedAt);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Appends begun before close go out now, and close waits for their answers below.
    this.sendAppends();
    this.listeners = [];
    this.settleFlushes();
    this.stop();
    this.reader.disconnect();
    this.presenceSubscriber.disconnect();
    await this.readLoop;
    if (this.command.status === 'ready') {
      // Lets in-flight commands finish, but not for ever: the process must be able to exit. QUIT
      // must not overtake a script still on its way: one Redis did not know yet is sent again as
      // EVAL after its reply.
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, QUIT_TIMEOUT_MS)));
      if (this.scriptsRunning > 0) await Promise.race([new Promise<void>((resolve) => (this.allScriptsSettled = resolve)), deadline]);
      const quitting = this.command.quit().catch(() => undefined);
      await Promise.race([quitting, deadline]);
      clearTimeout(timer);
    }
    this.command.disconnect();
  }

  private nodeKeysTtl(ttlMs: number): number {
    return Math.max(NODE_KEYS_TTL_MS, Math.ceil(2 * ttlMs));
  }

  /** A node as its registration record says, with no load yet: undefined when the record cannot be read. */
  private registeredNodeOf(nodeId: string, text: string): BridgeNode | undefined {
    const record = parseWith(nodeRegistrationRecordSchema, parseJson(text));
    if (!record.ok || record.value.nodeId !== nodeId) {
      this.log.warn('skipped an unreadable bridge node record', { nodeId });
      return undefined;
    }
    const { capacity, registeredAt, ...where } = record.value;
    return { ...where, ...(capacity !== undefined ? { capacity } : {}), calls: 0, registeredAt, lastSeenAt: registeredAt, expiresAt: 0 };
  }

  /** A live node from its two records (`<expiresAt> <json>` for its load). */
  private nodeOf(nodeId: string, registration: string, load: string): BridgeNode | undefined {
    const node = this.registeredNodeOf(nodeId, registration);
    const space = load.indexOf(' ');
    const expiresAt = Number(load.slice(0, space));
    const record = parseWith(nodeLoadRecordSchema, parseJson(load.slice(space + 1)));
    if (node === undefined || space <= 0 || !Number.isSafeInteger(expiresAt) || !record.ok) {
      if (node !== undefined) this.log.warn('skipped an unreadable bridge node load', { nodeId });
      return undefined;
    }
    const { cpuPercent, ...seen } = record.value;
    return { ...node, ...seen, ...(cpuPercent !== undefined ? { cpuPercent } : {}), expiresAt };
  }

  /** A request from its record and its taker's ('' when none); undefined when the record cannot be read. */
  private callbackOf(record: string, taker: string): CallbackRequest | undefined {
    const request = parseWith(callbackRecordSchema, parseJson(record));
    if (!request.ok) {
      this.log.warn('skipped an unreadable callback request');
      return undefined;
    }
    if (taker === '') return request.value;
    const takenBy = parseWith(callbackTakerSchema, parseJson(taker));
    if (!takenBy.ok) this.log.warn('read a callback request whose taker cannot be read as not taken', { id: request.value.id });
    return takenBy.ok ? { ...request.value, takenBy: takenBy.value } : request.value;
  }

  private heldKey(callId: string): string {
    return `${this.prefix}held:${callId}`;
  }

  private callNodeKey(callId: string): string {
    return `${this.prefix}bridge:call:${callId}`;
  }

  private nodeCallsKey(nodeId: string): string {
    return `${this.prefix}bridge:node-calls:${nodeId}`;
  }

  private tombstoneKey(callId: string): string {
    return `${this.prefix}tombstone:${callId}`;
  }

  private claimKey(callId: string): string {
    return `${this.prefix}claim:${callId}`;
  }

  /** One round trip: EVALSHA, and EVAL only when Redis does not have the script (restart, SCRIPT FLUSH). Close waits for it. */
  private runScript(script: LuaScript, keys: string[], args: Array<string | number>): Promise<unknown> {
    this.scriptsRunning++;
    const running = this.evalScript(script, keys, args);
    running.then(this.scriptSettled, this.scriptSettled);
    return running;
  }

  private readonly scriptSettled = (): void => {
    this.scriptsRunning--;
    if (this.scriptsRunning === 0) this.allScriptsSettled?.();
  };

  private async evalScript(script: LuaScript, keys: string[], args: Array<string | number>): Promise<unknown> {
    try {
      return await this.command.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return this.command.eval(script.lua, keys.length, ...keys, ...args);
    }
  }

  private async range(start: string, count: number): Promise<StoredEvent[]> {
    const reply = await this.command.call('XRANGE', this.streamKey, start, '+', 'COUNT', String(count));
    return this.parseEntries(reply);
  }

  private parseEntries(entries: unknown): StoredEvent[] {
    if (!Array.isArray(entries)) return [];
    const events: StoredEvent[] = [];
    for (const entry of entries as unknown[]) {
      const parsed = this.parseEntry(entry);
      if (parsed) events.push(parsed);
    }
    return events;
  }

  /** An entry this instance appended, as it appended it: its text is exactly what was written. */
  private ownEntry(cursor: string, fields: unknown): StoredEvent | undefined {
    if (this.ownPayloads.size === 0 || !Array.isArray(fields) || fields[0] !== 'e' || typeof fields[1] !== 'string') return undefined;
    const record = this.ownPayloads.get(fields[1]);
    if (record === undefined) return undefined;
    this.ownPayloads.delete(fields[1]);
    return { cursor, ...record };
  }

  /** Stream entries are outside data too (another relay version may have written them). */
  private parseEntry(entry: unknown): StoredEvent | undefined {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !Array.isArray(entry[1])) return undefined;
    const cursor = entry[0];
    const fields = entry[1] as unknown[];
    const index = fields.findIndex((f, i) => i % 2 === 0 && f === 'e');
    const text = index >= 0 ? fields[index + 1] : undefined;
    let data: unknown;
    try {
      data = typeof text === 'string' ? JSON.parse(text) : undefined;
    } catch {
      data = undefined;
    }
    const record = parseWith(storedRecordSchema, data);
    if (!record.ok) {
      this.log.warn('skipped an unreadable stream entry', { cursor, error: record.error.message });
      return undefined;
    }
    return { cursor, ...record.value };
  }

  private async runReadLoop(): Promise<void> {
    while (!this.closed) {
      let reply: unknown;
      try {
        const reading = this.reader.call('XREAD', 'COUNT', String(READ_BATCH), 'BLOCK', String(READ_BLOCK_MS), 'STREAMS', this.streamKey, this.lastDeliveredId);
        // Once stopped, nobody waits for it any more; its late failure is expected.
        reading.catch(() => undefined);
        reply = await Promise.race([reading, this.stopped]);
      } catch (error) {
        if (this.closed) return;
        this.log.warn('reading the event stream failed; retrying', { error });
        await Promise.race([delay(RETRY_DELAY_MS), this.stopped]);
        continue;
      }
      if (this.closed) return;
      this.deliver(reply);
    }
  }

  /** Whether every entry up to `id` has been handed to the listeners (by the reader or at append time). */
  private readPast(id: [bigint, bigint]): boolean {
    const delivered = parseStreamId(this.lastDeliveredId);
    return delivered !== undefined && compareStreamIds(delivered, id) >= 0;
  }

  /** Resolves the `flush` calls whose ids have been delivered (all of them once closed). */
  private settleFlushes(): void {
    if (this.flushes.length === 0) return;
    const waiting = this.flushes;
    this.flushes = [];
    for (const flush of waiting) {
      if (this.closed || this.readPast(flush.until)) flush.resolve();
      else this.flushes.push(flush);
    }
  }

  /** XREAD's reply: [[streamKey, [[id, fields], …]]], or null when the block timed out. */
  private deliver(reply: unknown): void {
    this.deliverEntries(reply);
    this.settleFlushes();
  }

  private deliverEntries(reply: unknown): void {
    if (!Array.isArray(reply)) return;
    for (const stream of reply as unknown[]) {
      if (!Array.isArray(stream) || !Array.isArray(stream[1])) continue;
      for (const entry of stream[1] as unknown[]) {
        if (!Array.isArray(entry) || typeof entry[0] !== 'string') continue;
        // Delivered already when it was appended here: this XREAD was issued before.
        const id = parseStreamId(entry[0]);
        if (id && this.readPast(id)) continue;
        this.lastDeliveredId = entry[0];
        const event = this.ownEntry(entry[0], entry[1]) ?? this.parseEntry(entry);
        if (event) this.notify(event);
      }
    }
  }

  private notify(event: StoredEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.log.error('event listener failed', { error, cursor: event.cursor });
      }
    }
  }

  private async startPresence(): Promise<void> {
    this.presenceSubscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.presenceChannel) return;
      const update = parsePresence(text);
      if (update) this.applyPresence(update);
      else this.log.warn('skipped an unreadable presence update');
    });
    // Updates published while the subscriber was away are lost: reload after every reconnect.
    this.presenceSubscriber.on('ready', () => {
      if (this.closed) return;
      this.subscribeAndReload().catch((error: unknown) => {
        if (!this.closed) this.log.warn('reloading presence failed', { error });
      });
    });
    await this.subscribeAndReload();
  }

  /** Subscribes first, then loads the hash, so no update falls between the two. */
  private async subscribeAndReload(): Promise<void> {
    await this.presenceSubscriber.subscribe(this.presenceChannel);
    const during: PresenceUpdate[] = [];
    this.presenceDuringReload = during;
    try {
      const all = await this.command.hgetall(this.presenceKey);
      // Replaced rather than merged: after a Redis restart the versions start again from 1.
      const fresh = new Map<string, PresenceEntry>();
      for (const [agentId, text] of Object.entries(all)) {
        const update = parsePresence(text);
        if (update && update.agentId === agentId) putPresence(fresh, update);
      }
      for (const update of during) putPresence(fresh, update);
      this.mirror = fresh;
    } finally {
      if (this.presenceDuringReload === during) this.presenceDuringReload = undefined;
    }
  }

  private applyPresence(update: PresenceUpdate): void {
    putPresence(this.mirror, update);
    this.presenceDuringReload?.push(update);
  }
}

function putPresence(mirror: Map<string, PresenceEntry>, update: PresenceUpdate): void {
  const current = mirror.get(update.agentId);
  // Messages on the channel and the reload race each other; the version orders them.
  if (current && current.version >= update.version) return;
  const { agentId: _agentId, ...entry } = update;
  mirror.set(update.agentId, entry);
}

/** `<expiresAt> <nodeId>` as the call node script stores a placement. */
function parseCallNode(text: string | null): { expiresAt: number; nodeId: string } | undefined {
  if (text === null) return undefined;
  const space = text.indexOf(' ');
  const expiresAt = Number(text.slice(0, space));
  const nodeId = text.slice(space + 1);
  return space > 0 && Number.isSafeInteger(expiresAt) && nodeId !== '' ? { expiresAt, nodeId } : undefined;
}

/** `<expiresAt> <json>` as the node scripts store a node's load. */
function loadText(node: BridgeNodeLoad & { lastSeenAt: number; expiresAt: number }): string {
  const { calls, cpuPercent, lastSeenAt, expiresAt } = node;
  return `${expiresAt} ${JSON.stringify({ calls, cpuPercent, lastSeenAt })}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `<version> <json>` as the presence script writes it. */
function parsePresence(text: string): PresenceUpdate | undefined {
  const space = text.indexOf(' ');
  const version = Number(text.slice(0, space));
  if (space <= 0 || !Number.isSafeInteger(version)) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text.slice(space + 1));
  } catch {
    return undefined;
  }
  const record = parseWith(presenceRecordSchema, data);
  return record.ok ? { ...record.value, version } : undefined;
}

/** The id of the newest entry, or `0-0` when the stream is empty or missing. */
async function lastStreamId(redis: Redis, streamKey: string): Promise<string> {
  const reply = await redis.call('XREVRANGE', streamKey, '+', '-', 'COUNT', '1');
  if (Array.isArray(reply) && Array.isArray(reply[0]) && typeof reply[0][0] === 'string') return reply[0][0];
  return '0-0';
}
