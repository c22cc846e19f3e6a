// A ringtone made with WebAudio, so no audio file has to ship: the UK double ring (400 + 450 Hz,
// 0.4 s on, 0.2 s off, 0.4 s on, 2 s off), which reads as "phone" everywhere.
const PATTERN_S = 3;
const BURSTS: readonly [start: number, end: number][] = [
  [0, 0.4],
  [0.6, 1.0],
];
const FREQUENCIES = [400, 450];
const VOLUME = 0.12;

export class Ringtone {
  private ctx: AudioContext | null = null;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly nodes = new Set<AudioScheduledSourceNode>();

  get playing(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    if (this.timer !== undefined) return;
    try {
      this.ctx ??= new AudioContext();
    } catch {
      return; // no audio output: the card still shows the call
    }
    // Without a user gesture yet, autoplay rules may keep the context suspended; the visual card carries on.
    void this.ctx.resume().catch(() => undefined);
    this.ring();
    this.timer = setInterval(() => this.ring(), PATTERN_S * 1000);
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    for (const node of this.nodes) {
      try {
        node.stop();
      } catch {
        // already stopped
      }
    }
    this.nodes.clear();
    void this.ctx?.suspend().catch(() => undefined);
  }

  private ring(): void {
    const ctx = this.ctx;
    if (!ctx) return;
    const t0 = ctx.currentTime + 0.02;
    const gain = ctx.createGain();
    gain.gain.setValueAtTime(0, t0);
    for (const [start, end] of BURSTS) {
      // Short ramps avoid clicks at the edges of each burst.
      gain.gain.setValueAtTime(0, t0 + start);
      gain.gain.linearRampToValueAtTime(VOLUME, t0 + start + 0.02);
      gain.gain.setValueAtTime(VOLUME, t0 + end - 0.02);
      gain.gain.linearRampToValueAtTime(0, t0 + end);
    }
    gain.connect(ctx.destination);
    const last = BURSTS[BURSTS.length - 1]![1];
    let playing = FREQUENCIES.length;
    for (const frequency of FREQUENCIES) {
      const osc = ctx.createOscillator();
      osc.frequency.value = frequency;
      osc.connect(gain);
      osc.start(t0);
      osc.stop(t0 + last + 0.05);
      this.nodes.add(osc);
      osc.onended = () => {
        this.nodes.delete(osc);
        osc.disconnect();
        if (--playing === 0) gain.disconnect();
      };
    }
  }
}
