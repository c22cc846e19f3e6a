// A ringtone made with WebAudio, so no audio file has to ship: the UK double ring (400 + 450 Hz,
// 0.4 s on, 0.2 s off, 0.4 s on, 2 s off), which reads as "phone" everywhere.
//
// While the agent is on another call, a ring is the call-waiting tone instead (setCallWaiting, decided
// by ring-alerts.ts): two short, quiet 440 Hz beeps every 10 s on the speaker the calls play on, so
// it is heard in the headset over the customer and never at a ringer's loudness. The same context
// plays it, moved to that output (AudioContext.setSinkId): the autoplay, unlock and watchdog rules
// below hold for both sounds alike.
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

/** A sound made of bursts of tones, repeated. */
export interface TonePattern {
  /** From one start of the pattern to the next, in seconds. */
  periodS: number;
  /** When each burst starts and ends, in seconds from the pattern's start. */
  bursts: readonly (readonly [start: number, end: number])[];
  frequencies: readonly number[];
  /** Each tone's gain. */
  volume: number;
}

export const RING_PATTERN: TonePattern = {
  periodS: 3,
  bursts: [
    [0, 0.4],
    [0.6, 1.0],
  ],
  frequencies: [400, 450],
  volume: 0.12,
};

/**
 * The call-waiting tone: ITU-T E.180's short tone bursts at the North American 440 Hz, 2 × 0.3 s,
 * every 10 s while the second call rings; about a fifth of the ring's level, since it plays into the
 * ear the customer's voice is in.
 */
export const CALL_WAITING_PATTERN: TonePattern = {
  periodS: 10,
  bursts: [
    [0, 0.3],
    [0.5, 0.8],
  ],
  frequencies: [440],
  volume: 0.05,
};
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
  /**
   * The output the calls play on ('' = the system default), where the call-waiting tone sounds:
   * MediaEngine.speakerId. Default: the system default.
   */
  speaker?: () => string;
}

function createAudioContext(sinkId: string): RingtoneAudioContext {
  // `sinkId` is not in TypeScript's DOM types yet; browsers without it ignore the member.
  const options: AudioContextOptions & { sinkId?: string } = sinkId === '' ? {} : { sinkId };
  return new AudioContext(options);
}

export class Ringtone {
  private readonly createContext: (sinkId: string) => RingtoneAudioContext;
  private readonly blockedAfterMs: number;
  private readonly speaker: () => string;
  private ctx: RingtoneAudioContext | null = null;
  /** The ringer's output ('' = the system default). */
  private sink = '';
  /** Another call is under way: a ring is the call-waiting tone on the speaker. */
  private waiting = false;
  /** The context is being moved to the other sound's output: nothing is scheduled until it is there. */
  private moving: Promise<void> | null = null;
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
    this.speaker = options.speaker ?? (() => '');
  }

  /** Which sound a ring is now: the ringtone, or the call-waiting tone (another call is under way). */
  get sound(): 'ring' | 'call-waiting' {
    return this.waiting ? 'call-waiting' : 'ring';
  }

  /** Asked to ring (start() and no stop() since): only then may a ring be recovered. */
  get wanted(): boolean {
    return this.asked;
  }

  /** The ringtone's own flag: its pattern is scheduled (it may still be silent: see contextState()). */
  get playing(): boolean {
    return this.timer !== undefined;
  }

  /** The output device the ringtone plays on ('' = system default); the call-waiting tone plays on the speaker. */
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
    if (this.moving) {
      // The first burst waits until the context plays where this sound belongs.
      void this.moving.then(() => this.recover());
      return;
    }
    const ctx = this.context();
    if (!ctx) {
      this.setState('blocked');
      return;
    }
    if (this.timer === undefined) {
      this.ring();
      this.timer = setInterval(() => this.ring(), this.pattern.periodS * 1000);
    }
    this.confirmRunning(ctx);
  }

  /**
   * Another call is under way (true) or not: a ring is the call-waiting tone on the calls' speaker,
   * or the ringtone on the ringer. A ring that sounds now switches at once.
   */
  setCallWaiting(waiting: boolean): void {
    if (waiting === this.waiting) return;
    this.waiting = waiting;
    // What is scheduled is the other sound's.
    this.clearPattern();
    this.moveTo(this.output());
    if (this.asked) this.start();
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
    this.clearPattern();
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
    // The call-waiting tone plays on the speaker: the ringer's device is only remembered meanwhile.
    if (!this.waiting && ctx && ctx.state !== 'closed' && ctx.setSinkId) await ctx.setSinkId(deviceId);
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

  /** Where the sound of the moment belongs: the ringer, or for the call-waiting tone the speaker. */
  private output(): string {
    return this.waiting ? this.speaker() : this.sink;
  }

  /** The pattern of the moment. */
  private get pattern(): TonePattern {
    return this.waiting ? CALL_WAITING_PATTERN : RING_PATTERN;
  }

  /**
   * Moves the context to `sinkId` (the other sound's output, or a speaker chosen meanwhile); a device
   * that is gone leaves it on the system default. Where setSinkId is missing everything plays on
   * the default output anyway.
   */
  private moveTo(sinkId: string): void {
    const ctx = this.ctx;
    if (!ctx || ctx.state === 'closed' || !ctx.setSinkId || this.contextSinkId() === sinkId) return;
    const moving = ctx
      .setSinkId(sinkId)
      .catch((e: unknown) => {
        log.debug('the audio output could not be chosen: using the default', { problem: errorText(e) });
        return sinkId === '' ? undefined : ctx.setSinkId?.('');
      })
      .catch(() => undefined)
      .finally(() => {
        if (this.moving === moving) this.moving = null;
      });
    this.moving = moving;
  }

  private makeContext(): RingtoneAudioContext | null {
    const output = this.output();
    try {
      return this.createContext(output);
    } catch (e) {
      log.debug('no audio context on the chosen output', { problem: errorText(e) });
    }
    if (output === '') return null;
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
    if (this.timer === undefined) this.timer = setInterval(() => this.ring(), this.pattern.periodS * 1000);
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

  /** Stops the pattern and what it scheduled. */
  private clearPattern(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.silenceNodes();
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
    // The agent may have chosen another speaker since the call-waiting tone began.
    if (this.waiting) this.moveTo(this.speaker());
    this.burst(ctx, this.pattern);
  }

  /** Schedules the pattern's bursts once, now; returns the seconds until they have ended. */
  private burst(ctx: RingtoneAudioContext, pattern: TonePattern = RING_PATTERN): number {
    const { bursts, frequencies, volume } = pattern;
    const t0 = ctx.currentTime + 0.02;
    const gain = ctx.createGain();
    gain.gain.setValueAtTime(0, t0);
    for (const [start, end] of bursts) {
      // Short ramps avoid clicks at the edges of each burst.
      gain.gain.setValueAtTime(0, t0 + start);
      gain.gain.linearRampToValueAtTime(volume, t0 + start + 0.02);
      gain.gain.setValueAtTime(volume, t0 + end - 0.02);
      gain.gain.linearRampToValueAtTime(0, t0 + end);
    }
    gain.connect(ctx.destination);
    const last = bursts[bursts.length - 1]?.[1] ?? 0;
    let playing = frequencies.length;
    for (const frequency of frequencies) {
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
