// A direct call's holds, told to the relay (PUT /calls/{id}/hold) so that the team's records count
// its time on hold as they do a bridged call's (whose bridge tells the relay itself). The calls'
// changes drive it: an active direct call whose `heldSince` appears went on hold, one whose
// `heldSince` went came off it. Only the latest state of each call is sent, in order: a report
// that fails is tried again (2, 5, 15 s) unless a newer one replaced it; the relay refusing it (not
// this agent's call, a bridged one) is logged and not tried again. The relay times each report as
// it arrives, so a retried one counts from when it got there.
import type { CallState } from '../../shared/call-state';
import type { Logger } from '../../shared/log';
import type { Result } from '../../shared/result';

export interface HoldReportTarget {
  reportHold(callId: string, held: boolean): Promise<Result<null>>;
}

export interface DirectHoldsOptions {
  relay: HoldReportTarget;
  /** Whether the call's media goes through the bridge: its holds are the bridge's to tell. */
  isBridged(callId: string): boolean;
  logger: Logger;
  /** Waits between tries of one report. */
  retryDelaysMs?: readonly number[];
}

const RETRY_DELAYS_MS = [2_000, 5_000, 15_000];

interface Followed {
  callId: string;
  /** The state the relay has, as far as this app knows; undefined after a report whose fate is unknown (it may have arrived). */
  told: boolean | undefined;
  /** The state to tell next, once the report under way is answered. */
  wanted: boolean;
  sending: boolean;
  retry?: ReturnType<typeof setTimeout>;
}

export class DirectHolds {
  private readonly calls = new Map<string, Followed>();
  private readonly retryDelaysMs: readonly number[];
  private stopped = false;

  constructor(private readonly options: DirectHoldsOptions) {
    this.retryDelaysMs = options.retryDelaysMs ?? RETRY_DELAYS_MS;
  }

  callChanged(call: CallState): void {
    if (this.stopped) return;
    const { localId, callId } = call;
    const followed = this.calls.get(localId);
    if (call.phase === 'ended') {
      // The relay closes a hold still on at the call's end itself.
      if (followed?.retry !== undefined) clearTimeout(followed.retry);
      this.calls.delete(localId);
      return;
    }
    if (call.phase !== 'active' || callId === undefined || this.options.isBridged(callId)) return;
    const held = call.heldSince !== undefined;
    if (followed === undefined) {
      if (!held) return;
      const fresh: Followed = { callId, told: false, wanted: true, sending: false };
      this.calls.set(localId, fresh);
      this.send(fresh, 0);
      return;
    }
    if (followed.wanted === held) return;
    followed.wanted = held;
    if (followed.retry !== undefined) {
      clearTimeout(followed.retry);
      followed.retry = undefined;
    }
    if (!followed.sending) this.send(followed, 0);
  }

  stop(): void {
    this.stopped = true;
    for (const followed of this.calls.values()) if (followed.retry !== undefined) clearTimeout(followed.retry);
    this.calls.clear();
  }

  private send(followed: Followed, attempt: number): void {
    if (this.stopped || followed.told === followed.wanted) return;
    const held = followed.wanted;
    followed.sending = true;
    void this.options.relay.reportHold(followed.callId, held).then((told) => {
      followed.sending = false;
      if (this.stopped) return;
      if (told.ok) {
        followed.told = held;
        this.send(followed, 0);
        return;
      }
      const { callId } = followed;
      const refused = told.error.httpStatus !== undefined && told.error.httpStatus < 500 && told.error.httpStatus !== 429;
      const delay = this.retryDelaysMs[attempt];
      if (refused || delay === undefined) {
        this.options.logger.warn('the relay was not told a hold of a direct call: its hold time is missing from the team’s record', { callId, held, code: told.error.code, reason: told.error.message });
        // This report is given up; a change since, or a later one, is told afresh.
        followed.told = held;
        this.send(followed, 0);
        return;
      }
      followed.told = undefined;
      followed.retry = setTimeout(() => {
        followed.retry = undefined;
        this.send(followed, attempt + 1);
      }, delay);
      followed.retry.unref?.();
    });
  }
}
