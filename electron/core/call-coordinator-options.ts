// What a CallCoordinator is built from: the gateway's call control, the relay's claims (and, in a
// team with a bridge, its transfers), where its files go, and the clocks it runs on.
import type { HistoryEntry } from '../../shared/history';
import type { Logger } from '../../shared/log';
import type { CallRejoins, CallTransfers } from './bridged-calls';
import type { CallControl } from './gateway-client';
import type { CallClaims } from './relay-client';

export interface CoordinatorTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: CoordinatorTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface CallCoordinatorOptions {
  gateway: CallControl;
  /**
   * First-claim-wins (relay/README.md): an incoming call is claimed before its accept, an outgoing
   * one right after initiate, and a decline asks who may still answer. The relay's client in a
   * team; `LocalClaims` where there is no relay.
   */
  claims: CallClaims;
  /**
   * Transfers, consults and three-way calls of bridged calls (shared/transfer.ts): the relay's, through
   * BridgedCallControl. Without it, calls are not bridged and the transfer commands are refused.
   */
  transfers?: CallTransfers;
  /**
   * A bridged call whose leg went (its window, the app's restart, its network) rejoins through the
   * relay (shared/calls/rejoin.ts): BridgedCallControl. Without it such a call is let go.
   */
  rejoins?: CallRejoins;
  /**
   * The gateway's base URL. Calls left over from a previous run are ended only on the gateway that
   * knows them (a run in sandbox mode leaves ids that an account's gateway has never seen).
   */
  gatewayUrl: string;
  /** Where live-calls.json is kept. */
  dataDir: string;
  /** Where ended calls go; its entries also tell which numbers customers called from. */
  history: { record(entry: HistoryEntry): void; entries(): readonly HistoryEntry[] };
  /** For numbers typed without a country code. */
  defaultCountry?: string;
  /** The name this app knows for a number (earlier calls, conversations), shown on an outgoing call. */
  nameFor?: (number: string) => string | undefined;
  now?: () => number;
  timers?: CoordinatorTimers;
  newLocalId?: () => string;
  logger?: Logger;
  /** How often ended calls, tombstones and stale pending events are dropped. Default 60 s. */
  pruneIntervalMs?: number;
  /** The most shutdown() waits for the gateway. Default 3 s. */
  shutdownTimeoutMs?: number;
}
