// The node's one 20 ms schedule, shared by all its calls: the frames the bridge makes itself (the
// mix, the hold music, silence) and its sender reports go out on it. One timer for the process,
// not one per call: a hundred calls cost one wake-up every 10 ms.
//
// A wall-clock schedule, as the sandbox's customers keep (sandbox/customer-peer.ts): timers drift
// and bunch up, the RTP clock must not. Each wake-up runs every tick that fell due since the last;
// after a stall of more than a few frames the schedule starts afresh instead of bursting, and the
// listeners' streams carry on from the wall clock (outbound-stream.ts).
import { performance } from 'node:perf_hooks';
import { FRAME_MS } from './audio-format';

/** Ticks run at once to catch up after the event loop stalled; beyond this the schedule resyncs. */
const MAX_CATCH_UP_TICKS = 5;

export type Tick = (now: number) => void;

export class MediaClock {
  private readonly listeners = new Set<Tick>();
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private ticked = 0;

  /** `tick` runs every 20 ms from now on, with the monotonic time (performance.now(), ms); returns the way to stop. */
  subscribe(tick: Tick): () => void {
    this.listeners.add(tick);
    if (!this.timer) this.start();
    return () => {
      this.listeners.delete(tick);
      if (this.listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private start(): void {
    this.startedAt = performance.now();
    this.ticked = 0;
    this.timer = setInterval(() => this.wake(), FRAME_MS / 2);
    this.timer.unref?.();
  }

  private wake(): void {
    const now = performance.now();
    const due = Math.floor((now - this.startedAt) / FRAME_MS) + 1;
    if (due - this.ticked > MAX_CATCH_UP_TICKS) {
      this.startedAt = now;
      this.ticked = 0;
      this.runTick(now);
      this.ticked = 1;
      return;
    }
    while (this.ticked < due) {
      this.runTick(now);
      this.ticked++;
    }
  }

  private runTick(now: number): void {
    for (const tick of this.listeners) tick(now);
  }
}
