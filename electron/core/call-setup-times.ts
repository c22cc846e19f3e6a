// When each step of a call's set-up happened in the main process: the command received, an incoming
// call's claim on the relay sent and answered, the accept or initiate sent and answered. The window
// stamps its own steps the same way (unix ms with performance.now()'s fractions); both go with the
// call's diagnostics, where shared/diagnostics.ts callSetupSteps says where a slow answer spent its time.
import type { MainCallTimings } from '../../shared/diagnostics';

/** Recent calls only: diagnostics read a call's moments as its media closes. */
const KEPT = 50;

/** Unix ms with the fractions performance.now() keeps. */
export const wallClockNow = (): number => performance.timeOrigin + performance.now();

export class CallSetupTimes {
  private readonly times = new Map<string, MainCallTimings>();

  /** The first of each moment only: a repeat (a second Answer refused) says nothing of the set-up. */
  stamp(localId: string, moment: keyof MainCallTimings, at: number = wallClockNow()): void {
    const times = this.times.get(localId) ?? {};
    if (times[moment] !== undefined) return;
    this.times.set(localId, { ...times, [moment]: at });
    if (this.times.size > KEPT) this.times.delete(this.times.keys().next().value!);
  }

  has(localId: string, moment: keyof MainCallTimings): boolean {
    return this.times.get(localId)?.[moment] !== undefined;
  }

  of(localId: string): MainCallTimings {
    return { ...this.times.get(localId) };
  }

  /** Keeps the calls still known. */
  keepOnly(known: (localId: string) => boolean): void {
    for (const localId of this.times.keys()) if (!known(localId)) this.times.delete(localId);
  }
}
