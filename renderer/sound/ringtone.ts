// A ringtone made with WebAudio, so no audio file has to ship: the UK double ring (400 + 450 Hz,
// 0.4 s on, 0.2 s off, 0.4 s on, 2 s off), which reads as "phone" everywhere.
//
// It says whether it is really heard: a browser's autoplay policy keeps an AudioContext suspended
// until the page has had a user gesture, and a suspended context is silent without any error. So
// after start() the context must be running within a short grace, or the ringtone reports 'blocked'
// (ring-alerts.ts then shows "Enable sound"), and unlock() resumes it from a gesture.
import type { Unsubscribe } from '../../shared/api';
import { createLogger } from '../../shared/log';
import { errorText } from '../../shared/result';
import { i18n } from '../i18n/i18n';

const log = createLogger('ringtone');

const PATTERN_S = 3;
const BURSTS: readonly [start: number, end: number][] = [
  [0, 0.4],
  [0.6, 1.0],
];
const FREQUENCIES = [400, 450];
const VOLUME = 0.12;
/** A context allowed to play is running within a few milliseconds; one still suspended after this is held back. */
const BLOCKED_AFTER_MS = 300;

/** 'blocked': asked to ring, but the audio context does not run (autoplay policy, no output): the ring is silent. */
export type RingtoneState = 'idle' | 'playing' | 'blocked';

// The parts of WebAudio the ringtone uses, so that tests can hand it a fake context (Node has no WebAudio).
export interface RingtoneAudioParam {
  setValueAtTime(value: number, at: number): unknown;
  linearRampToValueAtTime(value: number, at: number): unknown;
}
export interface RingtoneGainNode {
  readonly gain: RingtoneAudioParam;
  connect(destination: unknown): unknown;
  disconnect(): void;
}
export interface RingtoneOscillator {
  readonly frequency: { value: number };
  onended: ((event: Event) => void) | null;
  connect(destination: unknown): unknown;
  start(at: number): void;
  stop(at?: number): void;
  disconnect(): void;
}
export interface RingtoneAudioContext {
  readonly state: AudioContextState;
  readonly currentTime: number;
  readonly destination: unknown;
  onstatechange: ((event: Event) => void) | null;
  resume(): Promise<void>;
  suspend(): Promise<void>;
  createGain(): RingtoneGainNode;
  createOscillator(): RingtoneOscillator;
  /** Chromium 110+; absent elsewhere, where WebAudio always plays on the default output. */
  setSinkId?(sinkId: string): Promise<void>;
  /** Where the context plays now: a device id ('' = default), or an object for "none". */
  readonly sinkId?: string | object;
}

export interface RingtoneOptions {
  /** Makes a context on `sinkId` ('' = the system default). Default: a real AudioContext. */
  createContext?: (sinkId: string) => RingtoneAudioContext;
  blockedAfterMs?: number;
}

function createAudioContext(sinkId: string): RingtoneAudioContext {
  // `sinkId` is not in TypeScript's DOM types yet; browsers without it ignore the member.
  const options: AudioContextOptions & { sinkId?: string } = sinkId === '' ? {} : { sinkId };
  return new AudioContext(options);
}

export class Ringtone {
  private readonly createContext: (sinkId: string) => RingtoneAudioContext;
  private readonly blockedAfterMs: number;
  private ctx: RingtoneAudioContext | null = null;
  private sink = '';
  /** start() was called and stop() was not: a call rings. */
  private asked = false;
  /** "Test ringer" bursts playing now: the context must not be suspended under them. */
  private tests = 0;
  private current: RingtoneState = 'idle';
  private timer: ReturnType<typeof setInterval> | undefined;
  private grace: ReturnType<typeof setTimeout> | undefined;
  private readonly nodes = new Set<RingtoneOscillator>();
  private readonly listeners = new Set<(state: RingtoneState) => void>();

  constructor(options: RingtoneOptions = {}) {
    this.createContext = options.createContext ?? createAudioContext;
    this.blockedAfterMs = options.blockedAfterMs ?? BLOCKED_AFTER_MS;
  }

  /** Asked to ring (start() and no stop() since): only then may a ring be recovered. */
  get wanted(): boolean {
    return this.asked;
  }

  /** The ringtone's own flag: its pattern is scheduled (it may still be silent: see contextState()). */
  get playing(): boolean {
    return this.timer !== undefined;
  }

  /** The output device the ringtone plays on ('' = system default). */
  get sinkId(): string {
    return this.sink;
  }

  state(): RingtoneState {
    return this.current;
  }

  /** The device the context really plays on now ('' = default); undefined while there is no context. */
  contextSinkId(): string | undefined {
    if (!this.ctx) return undefined;
    return typeof this.ctx.sinkId === 'string' ? this.ctx.sinkId : '';
  }

  contextState(): AudioContextState | 'none' {
    return this.ctx?.state ?? 'none';
  }

  onStateChange(listener: (state: RingtoneState) => void): Unsubscribe {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Rings, or, when already asked to ring, recovers: a closed context is made again, a suspended one
   * is resumed and a stopped pattern restarted. Reports 'playing' or 'blocked'.
   */
  start(): void {
    this.asked = true;
    const ctx = this.context();
    if (!ctx) {
      this.setState('blocked');
      return;
    }
    if (this.timer === undefined) {
      this.ring();
      this.timer = setInterval(() => this.ring(), PATTERN_S * 1000);
    }
    this.confirmRunning(ctx);
  }

  /**
   * What a watchdog may do: recover a ring that is still wanted (as start() does), and nothing once
   * stop() was called, even if a call still rings (Answer stops the ring before the call moves on).
   */
  recover(): void {
    if (this.asked) this.start();
  }

  stop(): void {
    this.asked = false;
    this.clearGrace();
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.silenceNodes();
    void this.ctx?.suspend().catch(() => undefined);
    this.setState('idle');
  }

  /**
   * Call from a user gesture (the gesture is what lets the context run): makes or resumes the context.
   * Resolves true when it runs. When nothing rings it is suspended again, now allowed to resume later.
   */
  async unlock(): Promise<boolean> {
    const ctx = this.context();
    if (!ctx) {
      if (this.asked) this.setState('blocked');
      return false;
    }
    if (!isRunning(ctx)) {
      try {
        await ctx.resume();
      } catch (e) {
        log.debug('resuming the audio context failed', { problem: errorText(e) });
      }
    }
    const running = isRunning(ctx) && ctx === this.ctx;
    if (!this.asked) {
      this.rest(ctx);
      return running;
    }
    if (running) this.markRunning();
    else this.setState('blocked');
    return running;
  }

  /**
   * "Test ringer": one double burst on the ringtone's own context and output, the path a real ring
   * takes (an <audio> element's setSinkId would prove another path). Call it from a gesture: it may
   * have to make or resume the context. Resolves once the burst has played; the context is suspended
   * again afterwards unless a ring wants it. Rejects when the context cannot be made or does not run.
   */
  async playTest(): Promise<void> {
    // Counted before any await: an unlock() from the same click must not suspend the context under it.
    this.tests += 1;
    let ctx: RingtoneAudioContext | null = null;
    try {
      ctx = this.context();
      if (!ctx) throw new Error(i18n.t('soundCheck.noOutput', { ns: 'settings' }));
      if (!isRunning(ctx)) await this.resumeWithin(ctx);
      if (!isRunning(ctx) || ctx !== this.ctx) throw new Error(i18n.t('soundCheck.outputNotStarted', { ns: 'settings' }));
      const seconds = this.burst(ctx);
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    } finally {
      this.tests -= 1;
      if (ctx) this.rest(ctx);
    }
  }

  /**
   * Plays the ringtone on this output from now on ('' = system default); remembered for a context made
   * later. Rejects (and keeps the previous device) when the browser refuses the device.
   */
  async setSinkId(deviceId: string): Promise<void> {
    const ctx = this.ctx;
    if (ctx && ctx.state !== 'closed' && ctx.setSinkId) await ctx.setSinkId(deviceId);
    this.sink = deviceId;
  }

  // ---- internals ----

  /** The live context, made (again) when there is none or it was closed; null when none can be made. */
  private context(): RingtoneAudioContext | null {
    if (this.ctx && this.ctx.state !== 'closed') return this.ctx;
    this.ctx = null;
    this.nodes.clear();
    const ctx = this.makeContext();
    if (!ctx) return null;
    ctx.onstatechange = () => this.contextChanged(ctx);
    this.ctx = ctx;
    return ctx;
  }

  private makeContext(): RingtoneAudioContext | null {
    try {
      return this.createContext(this.sink);
    } catch (e) {
      log.debug('no audio context on the chosen output', { problem: errorText(e) });
    }
    if (this.sink === '') return null;
    // The chosen device is gone: ringing on the default output beats a silent ring.
    try {
      return this.createContext('');
    } catch (e) {
      log.debug('no audio context', { problem: errorText(e) });
      return null;
    }
  }

  /** Resumes, waiting no longer than the grace: a resume the autoplay policy holds back stays pending. */
  private async resumeWithin(ctx: RingtoneAudioContext): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const resumed = ctx.resume().then(
      () => this.rest(ctx),
      (e: unknown) => log.debug('resuming the audio context failed', { problem: errorText(e) }),
    );
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.blockedAfterMs)));
    try {
      await Promise.race([resumed, grace]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A context nothing needs (no ring wanted, no test playing) is suspended, as it was before. */
  private rest(ctx: RingtoneAudioContext): void {
    if (this.asked || this.tests > 0 || ctx !== this.ctx || !isRunning(ctx)) return;
    void ctx.suspend().catch(() => undefined);
  }

  private confirmRunning(ctx: RingtoneAudioContext): void {
    if (isRunning(ctx)) {
      this.markRunning();
      return;
    }
    this.clearGrace();
    this.grace = setTimeout(() => {
      this.grace = undefined;
      this.settle(ctx);
    }, this.blockedAfterMs);
    ctx.resume().then(
      () => this.settle(ctx),
      (e: unknown) => {
        log.debug('resuming the audio context failed', { problem: errorText(e) });
        this.clearGrace();
        this.settle(ctx);
      },
    );
  }

  /** Decides after a resume or its grace: running or held back. */
  private settle(ctx: RingtoneAudioContext): void {
    if (!this.asked || ctx !== this.ctx) return;
    if (isRunning(ctx)) this.markRunning();
    else if (this.grace === undefined) this.setState('blocked');
  }

  private contextChanged(ctx: RingtoneAudioContext): void {
    if (!this.asked || ctx !== this.ctx) return;
    if (isRunning(ctx)) this.markRunning();
    // Suspended or interrupted under a ring that was heard (the OS took the output, say): silent now.
    else if (this.grace === undefined) this.setState('blocked');
  }

  private markRunning(): void {
    this.clearGrace();
    if (this.timer === undefined) this.timer = setInterval(() => this.ring(), PATTERN_S * 1000);
    // Bursts are only scheduled on a running clock (see ring()), so a context that has just started rings at once.
    if (this.nodes.size === 0) this.ring();
    this.setState('playing');
  }

  private clearGrace(): void {
    if (this.grace !== undefined) clearTimeout(this.grace);
    this.grace = undefined;
  }

  private setState(state: RingtoneState): void {
    if (state === this.current) return;
    this.current = state;
    for (const listener of [...this.listeners]) listener(state);
  }

  private silenceNodes(): void {
    for (const node of this.nodes) {
      try {
        node.stop();
      } catch {
        // already stopped
      }
    }
    this.nodes.clear();
  }

  private ring(): void {
    const ctx = this.ctx;
    // A suspended clock stands still: bursts scheduled on it would all start together once it runs.
    if (!ctx || !isRunning(ctx)) return;
    this.burst(ctx);
  }

  /** Schedules one double burst now; returns the seconds until it has ended. */
  private burst(ctx: RingtoneAudioContext): number {
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
    return t0 - ctx.currentTime + last + 0.05;
  }
}

// A function, not a comparison in place: TypeScript would otherwise keep a narrowing across an await.
const isRunning = (ctx: RingtoneAudioContext): boolean => ctx.state === 'running';
