// After-call work: the moment after each answered call for the agent to finish what the call left
// (a note, a follow-up) before the next one rings. It starts when a call the agent talked on ends and
// leaves no other call live, and lasts the team's afterCallWorkSeconds; "Ready" ends it early. With
// the team's dispositionRequired it goes on, past the countdown too, until that call's wrap-up has a
// disposition: "Ready" waits for it. A call the agent takes meanwhile ends it (its own comes after).
// Kept in memory: a restart of the app ends it, as the relay forgets a presence nobody refreshes.
import type { AfterCallWork } from '../../shared/api';
import type { EndedCall } from '../../shared/calls/types';
import { text } from '../../shared/i18n/text';
import { errText, ok, type Result } from '../../shared/result';
import type { TeamSettings } from '../../shared/team-settings';

/** Whether the agent talked with the customer on this call: its media connected. */
export const talkedOn = (call: EndedCall): boolean => call.connectedAt !== undefined && call.end.kind !== 'consult_ended';

export interface AfterCallWorkOptions {
  now: () => number;
  /** Called whenever after-call work starts, ends, or stops waiting for the wrap-up. */
  onChange: () => void;
  setTimer?: (run: () => void, ms: number) => ReturnType<typeof setTimeout>;
  clearTimer?: (timer: ReturnType<typeof setTimeout>) => void;
}

export class AfterCallWorkClock {
  private work: AfterCallWork | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly setTimer: NonNullable<AfterCallWorkOptions['setTimer']>;
  private readonly clearTimer: NonNullable<AfterCallWorkOptions['clearTimer']>;

  constructor(private readonly o: AfterCallWorkOptions) {
    this.setTimer = o.setTimer ?? ((run, ms) => setTimeout(run, ms));
    this.clearTimer = o.clearTimer ?? ((timer) => clearTimeout(timer));
  }

  current(): AfterCallWork | undefined {
    return this.work;
  }

  /**
   * A call ended. After-call work follows it when the agent talked on it, no other call keeps the
   * agent busy, and the team asks for some (a countdown, or a disposition). `hasDisposition`: its
   * wrap-up already names one (saved during the call).
   */
  callEnded(call: EndedCall, othersBusy: boolean, settings: TeamSettings, hasDisposition: boolean): void {
    if (!talkedOn(call) || othersBusy) return;
    const waitingForWrapUp = settings.dispositionRequired && !hasDisposition;
    if (settings.afterCallWorkSeconds === 0 && !waitingForWrapUp) return;
    const startedAt = this.o.now();
    this.begin({
      localId: call.localId,
      ...(call.callId !== undefined ? { callId: call.callId } : {}),
      startedAt,
      endsAt: startedAt + settings.afterCallWorkSeconds * 1000,
      waitingForWrapUp,
    });
  }

  /** A call keeps the agent busy again: the work before it is over. */
  callTaken(): void {
    if (this.work !== undefined) this.end();
  }

  /** A wrap-up was saved: with a disposition, after-call work for its call stops waiting for one. */
  wrapUpSaved(localId: string, hasDisposition: boolean): void {
    const work = this.work;
    if (work === undefined || work.localId !== localId || !work.waitingForWrapUp || !hasDisposition) return;
    if (this.o.now() >= work.endsAt) {
      this.end();
      return;
    }
    this.work = { ...work, waitingForWrapUp: false };
    this.o.onChange();
  }

  /** "Ready": refused while the team's required disposition is not saved. */
  ready(): Result<null> {
    const work = this.work;
    if (work === undefined) return ok(null);
    if (work.waitingForWrapUp) return errText('invalid_state', text('team.wrapUpFirst'));
    this.end();
    return ok(null);
  }

  stop(): void {
    if (this.timer !== undefined) this.clearTimer(this.timer);
    this.timer = undefined;
    this.work = undefined;
  }

  private begin(work: AfterCallWork): void {
    if (this.timer !== undefined) this.clearTimer(this.timer);
    this.work = work;
    this.timer = this.setTimer(() => this.countdownOver(), Math.max(0, work.endsAt - this.o.now()));
    this.o.onChange();
  }

  /** The countdown reached zero: the work ends, unless it waits for the wrap-up (then the save ends it). */
  private countdownOver(): void {
    this.timer = undefined;
    if (this.work === undefined || this.work.waitingForWrapUp) return;
    this.end();
  }

  private end(): void {
    if (this.timer !== undefined) this.clearTimer(this.timer);
    this.timer = undefined;
    this.work = undefined;
    this.o.onChange();
  }
}
