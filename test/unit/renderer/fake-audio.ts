// A stand-in for WebAudio's AudioContext with a browser's autoplay policy: resume() runs the context
// only once the page has had a gesture (`policy.activated`); until then its promise stays pending, as
// Chromium's does. Node has no WebAudio, and the headless Chromium of the end-to-end tests does not
// enforce the autoplay policy, so the held-back paths are driven here.
//
// One context, the two parts of WebAudio the window uses: the ringtone's oscillators and gains on an
// output device (renderer/sound/ringtone.ts), and the hold music's decoded or rendered buffer looping
// into a MediaStream for the held call's sender (renderer/webrtc/hold-music.ts).
import type { RingtoneAudioContext, RingtoneGainNode, RingtoneOscillator } from '../../../renderer/sound/ringtone';
import type { HoldMusicAudioContext, HoldMusicBuffer, HoldMusicSourceNode } from '../../../renderer/webrtc/hold-music';
import { FakeStream, FakeTrack } from './fake-call-media';

export interface AudioPolicy {
  /** The page has had a user gesture: contexts may run. */
  activated: boolean;
  /** resume() rejects instead (no output device, say). */
  failResume: boolean;
}

class FakeParam {
  /** Every value scheduled, in order. */
  readonly values: number[] = [];
  setValueAtTime(value: number): this {
    this.values.push(value);
    return this;
  }
  linearRampToValueAtTime(value: number): this {
    this.values.push(value);
    return this;
  }
}

export class FakeGain implements RingtoneGainNode {
  readonly gain = new FakeParam();
  connected = false;
  connect(): void {
    this.connected = true;
  }
  disconnect(): void {
    this.connected = false;
  }
}

export class FakeOscillator implements RingtoneOscillator {
  readonly frequency = { value: 0 };
  /** The gain node it plays through (its burst's envelope). */
  output: unknown = null;
  onended: ((event: Event) => void) | null = null;
  startedAt: number | undefined;
  /** When the burst was scheduled to end. */
  endsAt: number | undefined;
  /** Cut off now (stop() without a time). */
  stopped = false;
  connect(destination: unknown): void {
    this.output = destination;
  }
  start(at: number): void {
    this.startedAt = at;
  }
  stop(at?: number): void {
    if (at === undefined) this.stopped = true;
    else this.endsAt = at;
  }
  disconnect(): void {}
}

/** Decoded (or rendered) samples; what was copied in is kept per channel. */
export class FakeAudioBuffer implements HoldMusicBuffer {
  readonly channels: Float32Array[] = [];
  constructor(
    readonly length: number,
    readonly sampleRate: number,
  ) {}
  copyToChannel(source: Float32Array<ArrayBuffer>, channel: number): void {
    this.channels[channel] = Float32Array.from(source);
  }
}

export class FakeBufferSource implements HoldMusicSourceNode {
  buffer: HoldMusicBuffer | null = null;
  loop = false;
  connectedTo: unknown = null;
  started = false;
  stopped = false;
  connect(destination: unknown): void {
    this.connectedTo = destination;
  }
  start(): void {
    this.started = true;
  }
  stop(): void {
    this.stopped = true;
  }
  disconnect(): void {
    this.connectedTo = null;
  }
}

export class FakeAudioContext implements RingtoneAudioContext, HoldMusicAudioContext {
  state: AudioContextState = 'suspended';
  currentTime = 0;
  readonly sampleRate = 48_000;
  readonly destination = {};
  onstatechange: ((event: Event) => void) | null = null;
  readonly oscillators: FakeOscillator[] = [];
  readonly sources: FakeBufferSource[] = [];
  /** Each MediaStream destination made, with its one track. */
  readonly destinations: { stream: MediaStream; track: FakeTrack }[] = [];
  readonly sinkCalls: string[] = [];
  suspendCalls = 0;
  /** decodeAudioData() calls. */
  decodes = 0;
  private held: Array<() => void> = [];

  constructor(
    public sinkId = '',
    private readonly policy: AudioPolicy = { activated: true, failResume: false },
  ) {}

  resume(): Promise<void> {
    if (this.policy.failResume) return Promise.reject(new Error('no audio output'));
    if (this.policy.activated) {
      this.setState('running');
      return Promise.resolve();
    }
    return new Promise((resolve) => this.held.push(resolve));
  }

  suspend(): Promise<void> {
    this.suspendCalls += 1;
    this.setState('suspended');
    return Promise.resolve();
  }

  createGain(): FakeGain {
    return new FakeGain();
  }

  createOscillator(): FakeOscillator {
    const osc = new FakeOscillator();
    this.oscillators.push(osc);
    return osc;
  }

  /** A 16-bit mono WAV (its rate at byte 24, its data's size at byte 40); anything not RIFF is refused, as Chromium's decoder refuses it. */
  async decodeAudioData(data: ArrayBuffer): Promise<FakeAudioBuffer> {
    this.decodes += 1;
    const bytes = new Uint8Array(data);
    if (String.fromCharCode(...bytes.subarray(0, 4)) !== 'RIFF') throw new Error('EncodingError: unable to decode audio data');
    const view = new DataView(data);
    return new FakeAudioBuffer(view.getUint32(40, true) / 2, view.getUint32(24, true));
  }

  createBuffer(_channels: number, length: number, sampleRate: number): FakeAudioBuffer {
    return new FakeAudioBuffer(length, sampleRate);
  }

  createBufferSource(): FakeBufferSource {
    const source = new FakeBufferSource();
    this.sources.push(source);
    return source;
  }

  createMediaStreamDestination(): { stream: MediaStream } {
    const track = new FakeTrack(`music-${this.destinations.length + 1}`);
    const destination = { stream: new FakeStream([track]) as unknown as MediaStream, track };
    this.destinations.push(destination);
    return destination;
  }

  setSinkId(sinkId: string): Promise<void> {
    this.sinkCalls.push(sinkId);
    if (sinkId === 'gone') return Promise.reject(new Error('NotFoundError'));
    this.sinkId = sinkId;
    return Promise.resolve();
  }

  /** The state moves on with a statechange event (the browser's own change, or the OS taking the output). */
  setState(state: AudioContextState): void {
    if (this.state === state) return;
    this.state = state;
    // Resumes that were held back complete once the context runs.
    if (state === 'running') for (const resolve of this.held.splice(0)) resolve();
    this.onstatechange?.(new Event('statechange'));
  }

  /** Bursts not yet stopped. */
  live(): FakeOscillator[] {
    return this.oscillators.filter((o) => !o.stopped);
  }

  /** The loudest level an oscillator's envelope reaches. */
  static peakOf(osc: FakeOscillator): number {
    return osc.output instanceof FakeGain ? Math.max(...osc.output.gain.values) : 0;
  }
}

/** The contexts a Ringtone made, under one autoplay policy. */
export function fakeAudio(policy: Partial<AudioPolicy> = {}) {
  const state: AudioPolicy = { activated: true, failResume: false, ...policy };
  const contexts: FakeAudioContext[] = [];
  const failSinks = new Set<string>();
  return {
    policy: state,
    contexts,
    /** Makes the context constructor throw for this sink ('*' for any). */
    failSinks,
    createContext: (sinkId: string): FakeAudioContext => {
      if (failSinks.has('*') || failSinks.has(sinkId)) throw new Error(`cannot open ${sinkId || 'default'} output`);
      const ctx = new FakeAudioContext(sinkId, state);
      contexts.push(ctx);
      return ctx;
    },
    last(): FakeAudioContext {
      const ctx = contexts[contexts.length - 1];
      if (!ctx) throw new Error('no audio context was made');
      return ctx;
    },
    /** The page had a user gesture: a resume() from now on runs the context (a gesture alone resumes nothing). */
    activate(): void {
      state.activated = true;
    },
  };
}
