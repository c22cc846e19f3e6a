// Time a test moves by hand: `now` for what reads the clock, and timers (the CallCoordinator's
// `CoordinatorTimers`) that run only when the test advances the clock or fires one.
export interface FakeTimer {
  handle: number;
  /** When it is due (unix ms). */
  at: number;
}

export class FakeClock {
  private seq = 0;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();

  constructor(public t: number = Date.now()) {}

  readonly now = (): number => this.t;

  readonly setTimeout = (fn: () => void, ms: number): number => {
    const handle = ++this.seq;
    this.pending.set(handle, { at: this.t + ms, fn });
    return handle;
  };

  readonly clearTimeout = (handle: unknown): void => {
    if (typeof handle === 'number') this.pending.delete(handle);
  };

  /** The timers that have not run, soonest first. */
  timers(): FakeTimer[] {
    return [...this.pending.entries()].map(([handle, { at }]) => ({ handle, at })).sort((a, b) => a.at - b.at || a.handle - b.handle);
  }

  /** Runs one timer now, the clock moved on to its time (never back). */
  fire(handle: number): void {
    const timer = this.pending.get(handle);
    if (timer === undefined) throw new Error(`no timer ${handle}`);
    this.pending.delete(handle);
    this.t = Math.max(this.t, timer.at);
    timer.fn();
  }

  /** Moves the clock on by `ms`, running every timer that comes due on the way, in time order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers().find((timer) => timer.at <= end);
      if (due === undefined) break;
      this.fire(due.handle);
    }
    this.t = end;
  }
}
