// Command-line and environment configuration of the standalone relay (relay/README.md).
// Flags win over environment variables. Every problem becomes one line naming the flag.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_PRODUCT } from '../shared/gateway';
import { RECORD_MODES, RECORD_NOTICE_LANGUAGES, RECORD_NOTICE_MAX_SECONDS, type RecordMode } from '../shared/bridge-recording';
import type { AnnouncementLanguage } from '../shared/service-capture';
import type { LogLevel } from '../shared/log';
import { err, ok, type Result, errorText } from '../shared/result';
import { AGENT_ID_PATTERN, AGENT_ID_RULE, agentTokenProblem } from './agent-directory';
import { parseMediaFlags } from '../bridge/cli-options';
import { BRIDGE_TOKEN_SHARED_RULE, bridgeTokenRule, isAgentToken } from './bridge-nodes';
import type { DatabaseConfig } from './records/database';
import { DEFAULT_MAX_STREAMS_PER_AGENT, isValidMaxStreamsPerAgent, MAX_STREAMS_PER_AGENT_LIMIT, MAX_STREAMS_PER_AGENT_RULE } from './agent-sessions';
import { DEFAULT_TURN_TTL_SEC, MAX_TURN_TTL_SEC, MIN_TURN_TTL_SEC, TURN_SECRET_RULE, TURN_TTL_RULE, TURN_URL_RULE, describeTurnUrl, isTurnUrl, type TurnConfig } from './turn-credentials';

export interface RelayCliConfig {
  port: number;
  host: string;
  appSecret: string;
  verifyToken?: string;
  /** Plain tokens (development, older set-ups): agents `agent-1`, `agent-2`, … */
  agentTokens: string[];
  /** --dev: plain agent tokens may be shorter than 32 characters. */
  dev: boolean;
  /** --trust-proxy: the client address is the last X-Forwarded-For entry. */
  trustProxy: boolean;
  /** --tell-agents-when-monitored: the agents in a call are told of a supervisor's listen too (relay/REFERENCE.md "Supervisors"). */
  tellAgentsWhenMonitored?: true;
  /** Open event streams per agent on this instance. */
  maxStreamsPerAgent: number;
  /** The agents file with hashed tokens (relay/REFERENCE.md "Agents"). */
  agentsPath?: string;
  /** The team's settings file (relay/REFERENCE.md "Team settings"); absent: the defaults. */
  teamConfigPath?: string;
  /** `redis://…`: the Redis backend; absent: memory. */
  redisUrl?: string;
  redisPrefix?: string;
  /** How long events stay available for an agent's resume. */
  retentionMs: number;
  logLevel: LogLevel;
  /** `GET /turn-credentials` (relay/REFERENCE.md "TURN credentials"); absent without --turn-secret and --turn-urls. */
  turn?: Required<TurnConfig>;
  /** The bridge nodes' token (relay/REFERENCE.md "Bridge nodes"); absent: the relay takes no bridge nodes. */
  bridgeToken?: string;
  /** --bridge: a bridge node in the relay's own process carries every call's media, with these media flags. */
  bridge?: { publicAddress?: string; rtpPorts?: { from: number; to: number } };
  /**
   * --gateway-url and --api-key (both or neither): the relay ends at the gateway the bridged calls no
   * agent can end any more (relay/REFERENCE.md "Rejoining"). Absent: their customers are let go and
   * the service ends them.
   */
  gateway?: { url: string; apiKey: string; product: string };
  /**
   * The team's call records (relay/REFERENCE.md "Records"): PostgreSQL with --database, else the
   * embedded database in `<data-dir>/records`; kept `retentionDays` (absent: forever). `dataDir`
   * keeps the journal of facts the database has not taken yet, with either database.
   */
  records: { database: DatabaseConfig; dataDir: string; retentionDays?: number };
  /**
   * The team's recordings of bridged calls (relay/REFERENCE.md "Recordings"), with a bridge only:
   * `--record`, `--recordings-dir` (default `<data-dir>/recordings`), `--recordings-retention-days`
   * (absent: kept for ever) and, to record, the notice: the team's own file or a bundled language.
   */
  recordings?: { mode: RecordMode; dir: string; retentionDays?: number; notice?: RecordNoticeSource };
}

/** The consent notice: the team's own WAV file (`--record-notice`) or a bundled one (`--record-notice-language`, default en_US). */
export type RecordNoticeSource = { file: string } | { language: AnnouncementLanguage };

/** `npm run relay -- add-agent …` */
export interface AddAgentCommand {
  agentsPath: string;
  id: string;
  name: string;
  /** --supervisor: written as `"role": "supervisor"`; absent, the agent has the default role. */
  role?: 'supervisor';
}

export const DEFAULT_RELAY_PORT = 8787;
/** Where the relay keeps what it keeps on disk (the embedded records), relative to the working directory. */
export const DEFAULT_DATA_DIR = 'relay-data';
export const MAX_RECORDS_RETENTION_DAYS = 36_500;
/** Where the recordings are kept by default, in the data directory. */
export const RECORDINGS_DIR_NAME = 'recordings';

export const RELAY_USAGE = `Usage: npm run relay -- --app-secret S (--agents FILE | --agent-token T …) [--redis URL] [--verify-token V] [--port P] [--host H]
                        [--turn-secret S --turn-urls URL[,URL]] [--bridge [--public-address A] [--rtp-ports FROM-TO]] [--bridge-token T] [--max-streams-per-agent N] [--trust-proxy] [--dev]
                        [--gateway-url URL --api-key K [--gateway-product P]]
                        [--database postgres://… | --data-dir DIR] [--records-retention-days N]
                        [--team-config FILE] [--tell-agents-when-monitored]
                        [--record never|on-demand|always [--record-notice-language L | --record-notice FILE]] [--recordings-dir DIR] [--recordings-retention-days N]
       npm run relay -- add-agent --agents FILE --id ID [--name NAME] [--supervisor]

  --port P            port to listen on (0 picks a free one; default ${DEFAULT_RELAY_PORT})      env RELAY_PORT
  --host H            address to listen on (default 127.0.0.1)                     env RELAY_HOST
  --app-secret S      the app secret that signs webhooks (X-Hub-Signature-256)     env RELAY_APP_SECRET
  --verify-token V    the token of the webhook subscription handshake              env RELAY_VERIFY_TOKEN
  --agents FILE       the agents file (ids, names, sha-256 of their tokens)        env RELAY_AGENTS
  --team-config FILE  the team's settings: break reasons, after-call work, dispositions,
                      service level, time zone (default: the built-in ones)      env RELAY_TEAM_CONFIG
  --tell-agents-when-monitored  the agents in a call are told when a supervisor listens to it,
                      as they always are of a whisper or a barge                   env RELAY_TELL_AGENTS_WHEN_MONITORED=1
  --agent-token T     a plain agent token (agent-1, agent-2, …), at least 32 characters; repeat for more
                                                                                   env RELAY_AGENT_TOKENS (comma-separated)
  --redis URL         redis://host:port: share state with other relay instances    env RELAY_REDIS_URL
  --redis-prefix P    prefix of the relay's Redis keys (default relay:)            env RELAY_REDIS_PREFIX
  --retention-minutes M  how long an agent can resume after a gap (1–1440; default 10)  env RELAY_RETENTION_MINUTES
  --turn-secret S     the TURN server's static-auth-secret (GET /turn-credentials) env RELAY_TURN_SECRET
  --turn-urls U[,U]   the TURN server's turn: or turns: URLs, comma-separated      env RELAY_TURN_URLS
  --turn-ttl-seconds T  how long handed-out TURN credentials last (${MIN_TURN_TTL_SEC}–${MAX_TURN_TTL_SEC}; default ${DEFAULT_TURN_TTL_SEC})  env RELAY_TURN_TTL_SECONDS
  --bridge            run a bridge node in this process: calls' media ends on it (one machine)   env RELAY_BRIDGE=1
  --public-address A  with --bridge: the IP address customers and agents reach its media at  env RELAY_PUBLIC_ADDRESS
  --rtp-ports F-T     with --bridge: the UDP ports of its media, 1024–65535 (default: any)   env RELAY_RTP_PORTS
  --bridge-token T    the token bridge nodes register with (at least 32 characters, no agent's)
                                                                                   env RELAY_BRIDGE_TOKEN
  --gateway-url URL   the gateway's base URL: with --api-key the relay ends bridged calls no agent can end
                      (an agent not back in time, a node gone); without, their customers are let go   env RELAY_GATEWAY_URL
  --api-key K         the team's gateway API key (never logged)                    env RELAY_API_KEY
  --gateway-product P the product word of the gateway's paths (default ${DEFAULT_PRODUCT})    env RELAY_GATEWAY_PRODUCT
  --database URL      postgres://user:password@host:port/db: the team's call records in PostgreSQL
                      (several instances share it); without it, an embedded database in --data-dir   env RELAY_DATABASE_URL
  --data-dir DIR      where the relay keeps its files: the embedded call records in DIR/records
                      (default ${DEFAULT_DATA_DIR} in the working directory)                env RELAY_DATA_DIR
  --records-retention-days N  keep call records N days, pruned daily (1–${MAX_RECORDS_RETENTION_DAYS}; default: forever)
                                                                                   env RELAY_RECORDS_RETENTION_DAYS
  --record M          with a bridge: never (default), on-demand ("Record" in the call) or always records bridged calls
                                                                                   env RELAY_RECORD
  --record-notice-language L  the bundled notice the customer hears as a recording starts: ${RECORD_NOTICE_LANGUAGES.join(', ')}
                      (default en_US)                                              env RELAY_RECORD_NOTICE_LANGUAGE
  --record-notice FILE  the team's own notice instead: a WAV file of 16-bit PCM, mono or stereo, 8000–48000 Hz, at most ${RECORD_NOTICE_MAX_SECONDS} s
                                                                                   env RELAY_RECORD_NOTICE
  --recordings-dir DIR  where the recordings are kept (default recordings/ in --data-dir)     env RELAY_RECORDINGS_DIR
  --recordings-retention-days N  keep recordings N days, swept hourly (1–${MAX_RECORDS_RETENTION_DAYS}; default: forever)
                                                                                   env RELAY_RECORDINGS_RETENTION_DAYS
  --max-streams-per-agent N  open event streams per agent (1–${MAX_STREAMS_PER_AGENT_LIMIT}; default ${DEFAULT_MAX_STREAMS_PER_AGENT}); one more closes the oldest
                                                                                   env RELAY_MAX_STREAMS_PER_AGENT
  --trust-proxy       the client address is the last X-Forwarded-For entry (only behind one reverse proxy)
                                                                                   env RELAY_TRUST_PROXY=1
  --dev               accept --agent-token values shorter than 32 characters (development only)
                                                                                   env RELAY_DEV=1
  --log-level L       debug, info, warn or error (default info)                    env RELAY_LOG_LEVEL

add-agent creates a random token for a new agent, prints it once and stores only its sha-256
in FILE (created with mode 0600 when missing); --supervisor makes it the team's supervisor.
SIGHUP makes a running relay re-read --agents and --team-config.`;

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** `help` when --help was asked for; otherwise the validated configuration or one error line. */
export function parseRelayCli(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Result<RelayCliConfig | 'help'> {
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'app-secret': { type: 'string' },
        'verify-token': { type: 'string' },
        'agent-token': { type: 'string', multiple: true },
        agents: { type: 'string' },
        'team-config': { type: 'string' },
        redis: { type: 'string' },
        'redis-prefix': { type: 'string' },
        'retention-minutes': { type: 'string' },
        'turn-secret': { type: 'string' },
        'turn-urls': { type: 'string' },
        'turn-ttl-seconds': { type: 'string' },
        'bridge-token': { type: 'string' },
        bridge: { type: 'boolean' },
        'public-address': { type: 'string' },
        'rtp-ports': { type: 'string' },
        'gateway-url': { type: 'string' },
        'api-key': { type: 'string' },
        'gateway-product': { type: 'string' },
        database: { type: 'string' },
        'data-dir': { type: 'string' },
        'records-retention-days': { type: 'string' },
        record: { type: 'string' },
        'record-notice-language': { type: 'string' },
        'record-notice': { type: 'string' },
        'recordings-dir': { type: 'string' },
        'recordings-retention-days': { type: 'string' },
        'log-level': { type: 'string' },
        'max-streams-per-agent': { type: 'string' },
        'trust-proxy': { type: 'boolean' },
        'tell-agents-when-monitored': { type: 'boolean' },
        dev: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    return err('invalid_input', describeParseError(e));
  }
  if (values.help === true) return ok('help');

  const dev = switchOf(values.dev, env.RELAY_DEV, '--dev', 'RELAY_DEV');
  if (!dev.ok) return dev;
  const trustProxy = switchOf(values['trust-proxy'], env.RELAY_TRUST_PROXY, '--trust-proxy', 'RELAY_TRUST_PROXY');
  if (!trustProxy.ok) return trustProxy;
  const tellAgentsWhenMonitored = switchOf(values['tell-agents-when-monitored'], env.RELAY_TELL_AGENTS_WHEN_MONITORED, '--tell-agents-when-monitored', 'RELAY_TELL_AGENTS_WHEN_MONITORED');
  if (!tellAgentsWhenMonitored.ok) return tellAgentsWhenMonitored;

  const flag = (name: string, envName: string): string | undefined => {
    const v = values[name];
    if (typeof v === 'string') return v === '' ? undefined : v;
    const fromEnv = env[envName];
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };

  const portText = flag('port', 'RELAY_PORT') ?? String(DEFAULT_RELAY_PORT);
  if (!/^\d{1,5}$/.test(portText.trim()) || Number(portText) > 65535) {
    return err('invalid_input', `--port must be a whole number from 0 to 65535 (got "${portText}")`, { field: '--port' });
  }

  const host = (flag('host', 'RELAY_HOST') ?? '127.0.0.1').trim();
  if (!/^[A-Za-z0-9.:[\]-]+$/.test(host)) return err('invalid_input', `--host must be an IP address or a host name (got "${host}")`, { field: '--host' });

  const appSecret = flag('app-secret', 'RELAY_APP_SECRET');
  if (appSecret === undefined) {
    return err('invalid_input', '--app-secret is required (or RELAY_APP_SECRET): without it anyone could post forged calls', { field: '--app-secret' });
  }
  if (/\s/.test(appSecret)) return err('invalid_input', '--app-secret must not contain spaces', { field: '--app-secret' });

  const verifyToken = flag('verify-token', 'RELAY_VERIFY_TOKEN');
  if (verifyToken !== undefined && /\s/.test(verifyToken)) return err('invalid_input', '--verify-token must not contain spaces', { field: '--verify-token' });

  const fromFlags = values['agent-token'];
  const tokensFromFlags = Array.isArray(fromFlags) && fromFlags.length > 0;
  const agentTokens = tokensFromFlags
    ? fromFlags
    : (env.RELAY_AGENT_TOKENS ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '');
  const agentsPath = flag('agents', 'RELAY_AGENTS');
  if (agentTokens.length === 0 && agentsPath === undefined) {
    return err('invalid_input', '--agents FILE or --agent-token is required (or RELAY_AGENTS / RELAY_AGENT_TOKENS): without agents nobody can connect', { field: '--agents' });
  }
  const tokenSource = tokensFromFlags ? '--agent-token' : 'RELAY_AGENT_TOKENS';
  for (const token of agentTokens) {
    const problem = agentTokenProblem(token, dev.value);
    if (problem !== undefined) {
      const hint = problem.kind === 'needs_dev' ? ' (use --dev for short development tokens)' : '';
      return err('invalid_input', `${tokenSource}: ${problem.message}${hint}`, { field: '--agent-token' });
    }
  }

  const teamConfigPath = flag('team-config', 'RELAY_TEAM_CONFIG')?.trim();
  if (teamConfigPath !== undefined && (teamConfigPath === '' || teamConfigPath.includes('\0'))) {
    return err('invalid_input', '--team-config must be a file path', { field: '--team-config' });
  }

  const logLevel = (flag('log-level', 'RELAY_LOG_LEVEL') ?? 'info').trim() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) return err('invalid_input', `--log-level must be one of ${LOG_LEVELS.join(', ')}`, { field: '--log-level' });

  const redisUrl = flag('redis', 'RELAY_REDIS_URL');
  if (redisUrl !== undefined && !isRedisUrl(redisUrl)) {
    // The URL may hold a password: it is not echoed.
    return err('invalid_input', '--redis must be a redis://host:port or rediss://host:port URL', { field: '--redis' });
  }
  const redisPrefix = flag('redis-prefix', 'RELAY_REDIS_PREFIX');
  if (redisPrefix !== undefined && !/^[A-Za-z0-9:_.{}-]{1,64}$/.test(redisPrefix)) {
    return err('invalid_input', `--redis-prefix must be 1 to 64 letters, digits or any of : _ . - { } (got "${redisPrefix}")`, { field: '--redis-prefix' });
  }

  const retentionText = (flag('retention-minutes', 'RELAY_RETENTION_MINUTES') ?? '10').trim();
  const retentionMinutes = Number(retentionText);
  if (!/^\d+$/.test(retentionText) || retentionMinutes < 1 || retentionMinutes > 1440) {
    return err('invalid_input', `--retention-minutes must be a whole number from 1 to 1440 (got "${retentionText}")`, { field: '--retention-minutes' });
  }

  const streamsText = (flag('max-streams-per-agent', 'RELAY_MAX_STREAMS_PER_AGENT') ?? String(DEFAULT_MAX_STREAMS_PER_AGENT)).trim();
  const maxStreamsPerAgent = Number(streamsText);
  if (!/^\d+$/.test(streamsText) || !isValidMaxStreamsPerAgent(maxStreamsPerAgent)) {
    return err('invalid_input', `--max-streams-per-agent ${MAX_STREAMS_PER_AGENT_RULE} (got "${streamsText}")`, { field: '--max-streams-per-agent' });
  }

  const turn = parseTurnFlags(flag);
  if (!turn.ok) return turn;

  // The agents file's tokens are hashes: the relay checks those against the bridge token once it has read the file.
  const bridgeTokenSource = typeof values['bridge-token'] === 'string' && values['bridge-token'] !== '' ? '--bridge-token' : 'RELAY_BRIDGE_TOKEN';
  const bridgeToken = flag('bridge-token', 'RELAY_BRIDGE_TOKEN');
  const bridgeRule = bridgeToken === undefined ? undefined : (bridgeTokenRule(bridgeToken) ?? (isAgentToken(bridgeToken, [], agentTokens) ? BRIDGE_TOKEN_SHARED_RULE : undefined));
  if (bridgeRule !== undefined) return err('invalid_input', `${bridgeTokenSource}: ${bridgeRule}`, { field: '--bridge-token' });

  const bridged = switchOf(values.bridge, env.RELAY_BRIDGE, '--bridge', 'RELAY_BRIDGE');
  if (!bridged.ok) return bridged;
  const publicAddressText = flag('public-address', 'RELAY_PUBLIC_ADDRESS');
  const rtpPortsText = flag('rtp-ports', 'RELAY_RTP_PORTS');
  if (!bridged.value && publicAddressText !== undefined) return err('invalid_input', '--public-address needs --bridge: it is the address of the bridge in this process', { field: '--public-address' });
  if (!bridged.value && rtpPortsText !== undefined) return err('invalid_input', '--rtp-ports needs --bridge: they are the ports of the bridge in this process', { field: '--rtp-ports' });
  const media = parseMediaFlags(publicAddressText, rtpPortsText);
  if (!media.ok) return media;

  const gateway = parseGatewayFlags(flag);
  if (!gateway.ok) return gateway;

  const records = parseRecordsFlags(flag);
  if (!records.ok) return records;

  const recordings = parseRecordingFlags(flag, bridged.value || bridgeToken !== undefined, records.value.dataDir);
  if (!recordings.ok) return recordings;

  return ok({
    port: Number(portText),
    retentionMs: retentionMinutes * 60_000,
    host,
    appSecret,
    verifyToken,
    agentTokens,
    dev: dev.value,
    trustProxy: trustProxy.value,
    maxStreamsPerAgent,
    logLevel,
    ...(agentsPath !== undefined ? { agentsPath } : {}),
    ...(teamConfigPath !== undefined ? { teamConfigPath } : {}),
    ...(redisUrl !== undefined ? { redisUrl } : {}),
    ...(redisPrefix !== undefined ? { redisPrefix } : {}),
    ...(turn.value !== undefined ? { turn: turn.value } : {}),
    ...(bridgeToken !== undefined ? { bridgeToken } : {}),
    ...(bridged.value ? { bridge: media.value } : {}),
    ...(tellAgentsWhenMonitored.value ? { tellAgentsWhenMonitored: true } : {}),
    ...(gateway.value !== undefined ? { gateway: gateway.value } : {}),
    records: records.value,
    ...(recordings.value !== undefined ? { recordings: recordings.value } : {}),
  });
}

/**
 * --record, its notice and where the recordings are kept: a bridge's, and the notice only for a
 * team that records. Without a bridge the relay keeps none, and none of these flags may be given.
 */
function parseRecordingFlags(flag: (name: string, envName: string) => string | undefined, bridged: boolean, dataDir: string): Result<RelayCliConfig['recordings']> {
  const modeText = flag('record', 'RELAY_RECORD')?.trim() ?? 'never';
  const mode = RECORD_MODES.find((m) => m === modeText);
  if (mode === undefined) return err('invalid_input', `--record must be one of ${RECORD_MODES.join(', ')} (got "${modeText}")`, { field: '--record' });
  if (mode !== 'never' && !bridged) {
    return err('invalid_input', `--record ${mode} needs a bridge (--bridge or --bridge-token): recordings are made on the team's bridge`, { field: '--record' });
  }
  const language = flag('record-notice-language', 'RELAY_RECORD_NOTICE_LANGUAGE')?.trim();
  const noticeFile = flag('record-notice', 'RELAY_RECORD_NOTICE')?.trim();
  if (mode === 'never' && language !== undefined) {
    return err('invalid_input', '--record-notice-language needs --record on-demand or --record always: it is the language of the notice played as a recording starts', { field: '--record-notice-language' });
  }
  if (mode === 'never' && noticeFile !== undefined) {
    return err('invalid_input', '--record-notice needs --record on-demand or --record always: it is the notice played as a recording starts', { field: '--record-notice' });
  }
  if (noticeFile !== undefined && language !== undefined) {
    return err('invalid_input', "--record-notice and --record-notice-language are two notices: give one (the team's own file, or the bundled notice of a language)", { field: '--record-notice' });
  }
  const noticeLanguage = RECORD_NOTICE_LANGUAGES.find((l) => l === (language ?? 'en_US'));
  if (noticeLanguage === undefined) {
    return err('invalid_input', `--record-notice-language must be one of ${RECORD_NOTICE_LANGUAGES.join(', ')} (got "${language ?? ''}")`, { field: '--record-notice-language' });
  }
  if (noticeFile !== undefined && (noticeFile === '' || noticeFile.includes('\0'))) return err('invalid_input', '--record-notice must be the path of a WAV file', { field: '--record-notice' });
  const dirText = flag('recordings-dir', 'RELAY_RECORDINGS_DIR')?.trim();
  const retentionText = flag('recordings-retention-days', 'RELAY_RECORDINGS_RETENTION_DAYS')?.trim();
  if (!bridged && dirText !== undefined) return err('invalid_input', "--recordings-dir needs a bridge (--bridge or --bridge-token): recordings are made on the team's bridge", { field: '--recordings-dir' });
  if (!bridged && retentionText !== undefined) {
    return err('invalid_input', "--recordings-retention-days needs a bridge (--bridge or --bridge-token): recordings are made on the team's bridge", { field: '--recordings-retention-days' });
  }
  if (dirText !== undefined && (dirText === '' || dirText.includes('\0'))) return err('invalid_input', '--recordings-dir must be a directory path', { field: '--recordings-dir' });
  const retentionDays = retentionText === undefined ? undefined : Number(retentionText);
  if (retentionText !== undefined && (!/^\d+$/.test(retentionText) || retentionDays === undefined || retentionDays < 1 || retentionDays > MAX_RECORDS_RETENTION_DAYS)) {
    return err('invalid_input', `--recordings-retention-days must be a whole number of days from 1 to ${MAX_RECORDS_RETENTION_DAYS} (got "${retentionText}")`, { field: '--recordings-retention-days' });
  }
  if (!bridged) return ok(undefined);
  return ok({
    mode,
    dir: dirText ?? join(dataDir, RECORDINGS_DIR_NAME),
    ...(retentionDays !== undefined ? { retentionDays } : {}),
    ...(mode !== 'never' ? { notice: noticeFile !== undefined ? { file: noticeFile } : { language: noticeLanguage } } : {}),
  });
}

/** --database, --data-dir and --records-retention-days. No error quotes the URL, which may hold a password. */
function parseRecordsFlags(flag: (name: string, envName: string) => string | undefined): Result<RelayCliConfig['records']> {
  const url = flag('database', 'RELAY_DATABASE_URL')?.trim();
  if (url !== undefined && !isPostgresUrl(url)) {
    return err('invalid_input', '--database must be a postgres://user:password@host:port/database URL (or postgresql://…)', { field: '--database' });
  }
  const dataDir = flag('data-dir', 'RELAY_DATA_DIR')?.trim() ?? DEFAULT_DATA_DIR;
  if (dataDir === '' || dataDir.includes('\0')) return err('invalid_input', '--data-dir must be a directory path', { field: '--data-dir' });
  const retentionText = flag('records-retention-days', 'RELAY_RECORDS_RETENTION_DAYS')?.trim();
  const retentionDays = retentionText === undefined ? undefined : Number(retentionText);
  if (retentionText !== undefined && (!/^\d+$/.test(retentionText) || retentionDays === undefined || retentionDays < 1 || retentionDays > MAX_RECORDS_RETENTION_DAYS)) {
    return err('invalid_input', `--records-retention-days must be a whole number of days from 1 to ${MAX_RECORDS_RETENTION_DAYS} (got "${retentionText}")`, { field: '--records-retention-days' });
  }
  return ok({
    database: url !== undefined ? { kind: 'postgres', url } : { kind: 'embedded', dataDir: join(dataDir, 'records') },
    dataDir,
    ...(retentionDays !== undefined ? { retentionDays } : {}),
  });
}

function isPostgresUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** --gateway-url, --api-key and --gateway-product: the first two both or neither. No error quotes the key. */
function parseGatewayFlags(flag: (name: string, envName: string) => string | undefined): Result<RelayCliConfig['gateway']> {
  const url = flag('gateway-url', 'RELAY_GATEWAY_URL')?.trim();
  const apiKey = flag('api-key', 'RELAY_API_KEY');
  const product = flag('gateway-product', 'RELAY_GATEWAY_PRODUCT')?.trim();
  if (url === undefined && apiKey === undefined) {
    if (product !== undefined) return err('invalid_input', '--gateway-product needs --gateway-url and --api-key (or RELAY_GATEWAY_URL / RELAY_API_KEY)', { field: '--gateway-product' });
    return ok(undefined);
  }
  if (url === undefined) return err('invalid_input', '--gateway-url is required with --api-key (or RELAY_GATEWAY_URL): the gateway the key is for', { field: '--gateway-url' });
  if (apiKey === undefined) return err('invalid_input', '--api-key is required with --gateway-url (or RELAY_API_KEY): the relay ends calls at the gateway with it', { field: '--api-key' });
  if (!isHttpUrl(url)) return err('invalid_input', `--gateway-url must be an http:// or https:// URL (got "${url}")`, { field: '--gateway-url' });
  if (/\s/.test(apiKey)) return err('invalid_input', '--api-key must not contain spaces', { field: '--api-key' });
  if (product !== undefined && !/^[a-z][a-z0-9_]{0,31}$/.test(product)) {
    return err('invalid_input', `--gateway-product must be 1 to 32 lower-case letters, digits or _, starting with a letter (got "${product}")`, { field: '--gateway-product' });
  }
  return ok({ url, apiKey, product: product ?? DEFAULT_PRODUCT });
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/** --turn-secret, --turn-urls and --turn-ttl-seconds: both of the first two or neither. No error quotes the secret. */
function parseTurnFlags(flag: (name: string, envName: string) => string | undefined): Result<Required<TurnConfig> | undefined> {
  const secret = flag('turn-secret', 'RELAY_TURN_SECRET');
  const urlsText = flag('turn-urls', 'RELAY_TURN_URLS');
  const ttlText = flag('turn-ttl-seconds', 'RELAY_TURN_TTL_SECONDS')?.trim();
  if (secret === undefined && urlsText === undefined) {
    if (ttlText !== undefined) return err('invalid_input', '--turn-ttl-seconds needs --turn-secret and --turn-urls (or RELAY_TURN_SECRET / RELAY_TURN_URLS)', { field: '--turn-ttl-seconds' });
    return ok(undefined);
  }
  if (secret === undefined) {
    return err('invalid_input', '--turn-secret is required with --turn-urls (or RELAY_TURN_SECRET): the TURN server\'s static-auth-secret that signs the credentials', { field: '--turn-secret' });
  }
  if (/\s/.test(secret)) return err('invalid_input', `--turn-secret ${TURN_SECRET_RULE}`, { field: '--turn-secret' });
  if (urlsText === undefined) {
    return err('invalid_input', '--turn-urls is required with --turn-secret (or RELAY_TURN_URLS): the comma-separated turn: or turns: URLs of the TURN server', { field: '--turn-urls' });
  }
  const urls = urlsText
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url !== '');
  if (urls.length === 0) return err('invalid_input', '--turn-urls must list at least one turn: or turns: URL', { field: '--turn-urls' });
  const bad = urls.find((url) => !isTurnUrl(url));
  if (bad !== undefined) return err('invalid_input', `--turn-urls: each URL ${TURN_URL_RULE} (got ${describeTurnUrl(bad)})`, { field: '--turn-urls' });
  const ttlSec = Number(ttlText ?? DEFAULT_TURN_TTL_SEC);
  if ((ttlText !== undefined && !/^\d+$/.test(ttlText)) || ttlSec < MIN_TURN_TTL_SEC || ttlSec > MAX_TURN_TTL_SEC) {
    return err('invalid_input', `--turn-ttl-seconds ${TURN_TTL_RULE} (got "${ttlText}")`, { field: '--turn-ttl-seconds' });
  }
  return ok({ secret, urls, ttlSec });
}

/** `add-agent` (the word itself already removed from `argv`). */
export function parseAddAgentCli(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Result<AddAgentCommand | 'help'> {
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: { agents: { type: 'string' }, id: { type: 'string' }, name: { type: 'string' }, supervisor: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (e) {
    return err('invalid_input', describeParseError(e));
  }
  if (values.help === true) return ok('help');
  const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
  const agentsPath = text(values.agents) ?? text(env.RELAY_AGENTS);
  if (agentsPath === undefined) return err('invalid_input', '--agents FILE is required: the agents file to add to (created when missing)', { field: '--agents' });
  const id = text(values.id);
  if (id === undefined) return err('invalid_input', '--id is required: the new agent\'s id, e.g. --id alice', { field: '--id' });
  if (!AGENT_ID_PATTERN.test(id)) return err('invalid_input', `--id ${AGENT_ID_RULE} (got "${id}")`, { field: '--id' });
  const name = text(values.name) ?? id;
  if (name.length > 200) return err('invalid_input', '--name must be at most 200 characters', { field: '--name' });
  return ok({ agentsPath, id, name, ...(values.supervisor === true ? { role: 'supervisor' as const } : {}) });
}

/** A boolean flag, or its environment variable (1/true/yes, 0/false/no); the flag wins. */
function switchOf(flagValue: string | boolean | string[] | undefined, envValue: string | undefined, flagName: string, envName: string): Result<boolean> {
  if (flagValue === true) return ok(true);
  const text = (envValue ?? '').trim().toLowerCase();
  if (text === '' || text === '0' || text === 'false' || text === 'no') return ok(false);
  if (text === '1' || text === 'true' || text === 'yes') return ok(true);
  return err('invalid_input', `${envName} must be 1 or 0 (the environment form of ${flagName}; got "${envValue ?? ''}")`, { field: flagName });
}

function isRedisUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '';
  } catch {
    return false;
  }
}

function describeParseError(e: unknown): string {
  const message = errorText(e);
  const unknown = /Unknown option '([^']+)'/.exec(message);
  if (unknown) return `${unknown[1]} is not a known flag (see --help)`;
  const option = /Option '(--[a-z-]+)/.exec(message)?.[1];
  if (option && /argument missing/.test(message)) return `${option} needs a value`;
  if (option && /does not take an argument/.test(message)) return `${option} takes no value`;
  // A secret or token may well start with "-": node:util then takes it for a flag.
  if (option && /ambiguous/.test(message)) return `${option}: the value looks like a flag; write ${option}=VALUE`;
  const positional = /Unexpected argument '([^']+)'/.exec(message);
  if (positional) return `unexpected argument "${positional[1]}": every setting is a --flag (see --help)`;
  return message.split('\n')[0] ?? message;
}
