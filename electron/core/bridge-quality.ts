// The customer leg's quality on bridged calls (shared/bridged-quality.ts). On a bridged call the
// window measures only its own leg to the bridge; the customer's leg ends on the bridge, which
// measures it. For each bridged call the agent is on (active, held included), main asks the relay
// for that leg about once a second (GET /calls/{id}/bridge/quality) and hands each report to the
// window (the customerLegQuality push). The calls' changes start and stop it: nothing is asked for
// a direct call, a ringing one, or one that ended.
import type { CustomerLegQuality } from '../../shared/api';
import type { LegReport } from '../../shared/bridge';
import type { CallState } from '../../shared/call-state';
import type { Logger } from '../../shared/log';
import type { Result } from '../../shared/result';

/** Where the reports come from; RelayClient is the real one. */
export interface CustomerLegSource {
  bridgeQuality(callId: string): Promise<Result<LegReport>>;
}

export interface CustomerLegWatchOptions {
  relay: CustomerLegSource;
  /** Whether the call's media goes through the bridge (bridged-calls.ts knows this agent's legs). */
  isBridged(callId: string): boolean;
  /** A report for the window. */
  report(quality: CustomerLegQuality): void;
  logger: Logger;
  /** How often a call's leg is asked for; 1 s, as the window reads its own statistics. */
  intervalMs?: number;
  /** The longest pause after failures (the relay down or slow): asking every second would only fill the log. */
  maxBackoffMs?: number;
}

export const CUSTOMER_LEG_INTERVAL_MS = 1_000;
const MAX_BACKOFF_MS = 10_000;

/** One call being watched: its timer, and how many asks in a row failed. */
interface Watch {
  localId: string;
  callId: string;
  timer: ReturnType<typeof setTimeout> | undefined;
  failures: number;
  stopped: boolean;
}

export class CustomerLegWatch {
  private readonly watches = new Map<string, Watch>();
  private readonly intervalMs: number;
  private readonly maxBackoffMs: number;

  constructor(private readonly options: CustomerLegWatchOptions) {
    this.intervalMs = options.intervalMs ?? CUSTOMER_LEG_INTERVAL_MS;
    this.maxBackoffMs = options.maxBackoffMs ?? MAX_BACKOFF_MS;
  }

  /** A call changed: watched while it is active and bridged, let go otherwise. */
  callChanged(call: CallState): void {
    const { localId, callId } = call;
    const live = call.phase === 'active' && callId !== undefined && this.options.isBridged(callId);
    const watch = this.watches.get(localId);
    if (live && watch === undefined) this.watch(localId, callId);
    else if (!live && watch !== undefined) this.unwatch(watch);
  }

  /** Which calls are watched now (by localId). */
  watching(): string[] {
    return [...this.watches.keys()];
  }

  /** Lets every call go (the runtime stops). */
  stop(): void {
    for (const watch of [...this.watches.values()]) this.unwatch(watch);
  }

  private watch(localId: string, callId: string): void {
    const watch: Watch = { localId, callId, timer: undefined, failures: 0, stopped: false };
    this.watches.set(localId, watch);
    // At once: the window's first seconds are judged with the customer's leg beside them.
    void this.ask(watch);
  }

  private unwatch(watch: Watch): void {
    watch.stopped = true;
    if (watch.timer !== undefined) clearTimeout(watch.timer);
    watch.timer = undefined;
    if (this.watches.get(watch.localId) === watch) this.watches.delete(watch.localId);
  }

  /** One ask, then the next one an interval after it began (one at a time per call: a slow answer delays the next, never doubles it), or later after failures. */
  private async ask(watch: Watch): Promise<void> {
    const { localId, callId } = watch;
    const startedAt = Date.now();
    const answer = await this.options.relay.bridgeQuality(callId);
    if (watch.stopped) return;
    if (answer.ok) {
      if (watch.failures > 0) this.options.logger.info('the customer leg’s quality is read again', { callId });
      watch.failures = 0;
      this.options.report({ localId, callId, report: answer.value });
    } else {
      const status = answer.error.httpStatus;
      // The relay does not bridge this call for this agent (any more): asking again will not change that.
      if (status === 403 || status === 404) {
        this.options.logger.info('the relay gives no quality for this call; no longer asked', { callId, httpStatus: status });
        this.unwatch(watch);
        return;
      }
      if (watch.failures === 0) this.options.logger.warn('the customer leg’s quality could not be read', { callId, code: answer.error.code, reason: answer.error.message });
      watch.failures += 1;
    }
    const pause =
      watch.failures === 0 ? Math.max(0, this.intervalMs - (Date.now() - startedAt)) : Math.min(this.maxBackoffMs, this.intervalMs * 2 ** Math.min(watch.failures, 10));
    watch.timer = setTimeout(() => void this.ask(watch), pause);
    watch.timer.unref?.();
  }
}
