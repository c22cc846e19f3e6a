// The network calls take (shared/ice-servers.ts): the Network section's servers in
// `<dataDir>/network.json`, the TURN password behind the SecretStore like the API key, the command
// line's `--ice-servers` / `--ice-transport-policy` (used until a save replaces them), and the
// relay's short-lived TURN credentials, fetched and renewed before they expire. Calls get all of it
// merged through `iceConfig()`.
import { join } from 'node:path';
import {
  iceServersFromSettings,
  iceServerUrls,
  isTurnUrl,
  networkSettingsInputSchema,
  storedNetworkSchema,
  type IceConfig,
  type IceServer,
  type IceTransportPolicy,
  type NetworkSettingsInput,
  type PublicNetworkSettings,
  type RelayTurnStatus,
  type StoredNetwork,
} from '../../shared/ice-servers';
import { term, text } from '../../shared/i18n/text';
import { createLogger, type Logger } from '../../shared/log';
import { ok, type Result } from '../../shared/result';
import { fieldError, parseWith } from '../../shared/validation';
import { readJsonFile, setAsideCorruptFile, writeJsonFileAtomic } from './json-file';
import type { SecretStore } from './secret-store';

const NETWORK_FILE = 'network.json';
const TURN_PASSWORD = 'turnPassword';

/** From `--ice-servers` and `--ice-transport-policy` (or their environment variables). */
export interface NetworkFlags {
  iceServers?: IceServer[];
  iceTransportPolicy?: IceTransportPolicy;
}

const EMPTY: StoredNetwork = { servers: [], relayOnly: false };

export class NetworkSettingsStore {
  private readonly path: string;
  private readonly secrets: SecretStore;
  private readonly log: Logger;
  /** The command line's choice, until a save or a reset replaces it. */
  private flags: NetworkFlags | undefined;

  constructor(options: { dataDir: string; secrets: SecretStore; flags?: NetworkFlags; logger?: Logger }) {
    this.path = join(options.dataDir, NETWORK_FILE);
    this.secrets = options.secrets;
    this.log = options.logger ?? createLogger('network');
    const flags = options.flags;
    if (flags && (flags.iceServers !== undefined || flags.iceTransportPolicy !== undefined)) this.flags = flags;
  }

  /** Validates, then stores. A blank password keeps the stored one; TURN servers need a username and a password. */
  async save(input: NetworkSettingsInput): Promise<Result<void>> {
    const parsed = parseWith(networkSettingsInputSchema, input);
    if (!parsed.ok) return parsed;
    const { servers, relayOnly } = parsed.value;
    const turnUsername = blankToUndefined(parsed.value.turnUsername)?.trim();
    // A password is kept exactly as typed; a blank one keeps the stored one (or the command line's).
    const turnPassword = blankToUndefined(parsed.value.turnPassword) ?? this.flags?.iceServers?.find((s) => s.credential !== undefined)?.credential;
    const unique = [...new Set(servers)];
    if (unique.some(isTurnUrl)) {
      if (turnUsername === undefined) {
        return fieldError('invalid_input', 'turnUsername', text('network.turnCredentialRequired', { what: term('turnUsername') }));
      }
      if (turnPassword === undefined && (await this.secrets.get(TURN_PASSWORD)) === undefined) {
        return fieldError('invalid_input', 'turnPassword', text('network.turnCredentialRequired', { what: term('turnPassword') }));
      }
    }
    const stored: StoredNetwork = { servers: unique, relayOnly, ...(turnUsername !== undefined ? { turnUsername } : {}) };
    if (turnPassword !== undefined) await this.secrets.set(TURN_PASSWORD, turnPassword);
    // A password with no TURN server left to use it is not kept.
    if (!unique.some(isTurnUrl)) await this.secrets.delete(TURN_PASSWORD);
    await writeJsonFileAtomic(this.path, stored);
    this.flags = undefined;
    this.log.info('network settings saved', { servers: unique, relayOnly });
    return ok(undefined);
  }

  async publicSettings(relayTurn: RelayTurnStatus): Promise<PublicNetworkSettings> {
    const stored = await this.readStored();
    const flags = this.flags;
    const relayOnly = flags?.iceTransportPolicy !== undefined ? flags.iceTransportPolicy === 'relay' : stored.relayOnly;
    if (flags?.iceServers !== undefined) {
      const withCredential = flags.iceServers.find((s) => s.username !== undefined);
      return {
        servers: flags.iceServers.flatMap(iceServerUrls),
        ...(withCredential?.username !== undefined ? { turnUsername: withCredential.username } : {}),
        hasTurnPassword: withCredential?.credential !== undefined,
        relayOnly,
        fromCommandLine: true,
        relayTurn,
      };
    }
    return {
      servers: stored.servers,
      ...(stored.turnUsername !== undefined ? { turnUsername: stored.turnUsername } : {}),
      hasTurnPassword: (await this.secrets.get(TURN_PASSWORD)) !== undefined,
      relayOnly,
      fromCommandLine: flags !== undefined,
      relayTurn,
    };
  }

  /**
   * The agent's own servers (with their credentials) and policy. A command-line flag stands in for
   * its own part only: `--ice-transport-policy relay` alone keeps the saved servers.
   */
  async own(): Promise<{ iceServers: IceServer[]; iceTransportPolicy: IceTransportPolicy }> {
    const stored = await this.readStored();
    const policy: IceTransportPolicy = this.flags?.iceTransportPolicy ?? (stored.relayOnly ? 'relay' : 'all');
    if (this.flags?.iceServers !== undefined) return { iceServers: this.flags.iceServers, iceTransportPolicy: policy };
    const password = stored.servers.some(isTurnUrl) ? await this.secrets.get(TURN_PASSWORD) : undefined;
    return { iceServers: iceServersFromSettings(stored, password), iceTransportPolicy: policy };
  }

  private async readStored(): Promise<StoredNetwork> {
    const read = await readJsonFile(this.path);
    if (read.kind === 'missing') return EMPTY;
    if (read.kind === 'json') {
      const parsed = parseWith(storedNetworkSchema, read.value);
      if (parsed.ok) return parsed.value;
      this.log.warn('network settings file invalid', { field: parsed.error.field, reason: parsed.error.message });
    }
    const aside = await setAsideCorruptFile(this.path);
    this.log.warn('network settings unreadable; kept aside, continuing with no servers', { keptAs: aside });
    return EMPTY;
  }
}

/** What the keeper needs from the relay client. */
export interface TurnCredentialSource {
  turnCredentials(): Promise<Result<{ iceServers: IceServer[]; ttlSec: number }>>;
}

export interface RelayTurnOptions {
  now?: () => number;
  logger?: Logger;
  /** A relay that offers none is asked again after this long (it may be restarted with --turn-secret). Default 10 min. */
  recheckMs?: number;
  /** After a failed fetch, the first retry; it doubles up to 5 min. Default 5 s. */
  retryMs?: number;
  /** The part of the credentials' life after which they are renewed, from 0 to 1. Default 4/5. */
  renewFraction?: number;
}

interface HeldCredentials {
  iceServers: IceServer[];
  expiresAt: number;
  /** When the renewal is due: by default four fifths of the way through the credentials' life. */
  renewAt: number;
}

const MAX_RETRY_MS = 5 * 60_000;
/** Credentials with less life left than this are not handed to a new call: a call may outlast them, but its allocation must start with time to spare. */
const MIN_LIFE_LEFT_MS = 30_000;
/** How long a call's setup waits for credentials being fetched before it goes without them. */
const CALL_WAIT_MS = 1_000;

/**
 * The relay's TURN credentials for one relay connection: fetched at start, renewed before they
 * expire, retried with back-off when the relay cannot be reached. `stop()` ends every timer.
 */
export class RelayTurnCredentials {
  private held: HeldCredentials | undefined;
  private status: RelayTurnStatus = 'unknown';
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: Promise<void> | undefined;
  private failures = 0;
  private stopped = false;
  private changeListener: ((status: RelayTurnStatus) => void) | undefined;
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly recheckMs: number;
  private readonly retryMs: number;
  private readonly renewFraction: number;

  constructor(
    private readonly source: TurnCredentialSource,
    options: RelayTurnOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.log = options.logger ?? createLogger('turn-credentials');
    this.recheckMs = options.recheckMs ?? 10 * 60_000;
    this.retryMs = options.retryMs ?? 5_000;
    this.renewFraction = options.renewFraction ?? 0.8;
  }

  start(): void {
    void this.fetch();
  }

  get state(): RelayTurnStatus {
    return this.status;
  }

  /** Valid credentials for a call starting now; waits briefly for a fetch under way or a renewal that is due. */
  async current(): Promise<{ iceServers: IceServer[]; expiresAt: number } | undefined> {
    if (this.stopped) return undefined;
    if (!this.usable() && this.status !== 'not_offered') {
      const fetching = this.inFlight ?? this.fetch();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([fetching, new Promise((resolve) => (timer = setTimeout(resolve, CALL_WAIT_MS)))]);
      clearTimeout(timer);
    }
    const held = this.held;
    return held && this.usable() ? { iceServers: held.iceServers, expiresAt: held.expiresAt } : undefined;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private usable(): boolean {
    return this.held !== undefined && this.held.expiresAt - this.now() > MIN_LIFE_LEFT_MS;
  }

  private fetch(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    const run = this.fetchOnce().finally(() => {
      this.inFlight = undefined;
    });
    this.inFlight = run;
    return run;
  }

  /**
   * Called when the status changes: credentials arrived, stopped being offered, or could not be
   * renewed. The window keeps an ICE configuration until told that something changed.
   */
  onChange(listener: (status: RelayTurnStatus) => void): void {
    this.changeListener = listener;
  }

  private async fetchOnce(): Promise<void> {
    const before = this.status;
    await this.fetchAndSchedule();
    if (this.status !== before && !this.stopped) this.changeListener?.(this.status);
  }

  private async fetchAndSchedule(): Promise<void> {
    const answer = await this.source.turnCredentials();
    if (this.stopped) return;
    if (answer.ok) {
      const lifeMs = answer.value.ttlSec * 1000;
      const fetchedAt = this.now();
      this.held = { iceServers: answer.value.iceServers, expiresAt: fetchedAt + lifeMs, renewAt: fetchedAt + Math.floor(lifeMs * this.renewFraction) };
      if (this.status !== 'available') this.log.info('the relay hands out TURN credentials', { servers: answer.value.iceServers.flatMap(iceServerUrls), ttlSec: answer.value.ttlSec });
      this.status = 'available';
      this.failures = 0;
      this.schedule(this.held.renewAt - fetchedAt);
      return;
    }
    if (answer.error.code === 'not_available') {
      this.held = undefined;
      this.status = 'not_offered';
      this.schedule(this.recheckMs);
      return;
    }
    this.failures++;
    const wait = Math.min(MAX_RETRY_MS, this.retryMs * 2 ** Math.min(this.failures - 1, 10));
    // Credentials still valid are kept: they may outlive the relay's hiccup, and the retry comes no
    // later than their last usable moment. Spent ones set no deadline: the back-off alone does.
    const held = this.usable() ? this.held : undefined;
    if (!held) this.status = 'unreachable';
    const retryInMs = held ? Math.min(wait, held.expiresAt - MIN_LIFE_LEFT_MS - this.now()) : wait;
    this.log.warn('the relay\'s TURN credentials could not be fetched', { code: answer.error.code, reason: answer.error.message, retryInMs });
    this.schedule(retryInMs);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.fetch();
    }, Math.max(1_000, ms));
    this.timer.unref?.();
  }
}

/** The call's configuration: the agent's own servers first, then the relay's TURN servers. */
export function mergeIceConfig(
  own: { iceServers: IceServer[]; iceTransportPolicy: IceTransportPolicy },
  relay: { iceServers: IceServer[]; expiresAt: number } | undefined,
): IceConfig {
  return {
    iceServers: [...own.iceServers, ...(relay?.iceServers ?? [])],
    iceTransportPolicy: own.iceTransportPolicy,
    ...(relay ? { expiresAt: relay.expiresAt } : {}),
  };
}

const blankToUndefined = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' ? undefined : value);
