// The hold music as the media engine sends it: a held call's sender carries a track of this music
// in the microphone's place (the gateway has no hold and no renegotiation, and ends a call after
// 30 s without media: protocol.md "Media"). The file is assets/hold-music.wav, bundled by Vite
// (`new URL(…, import.meta.url)`: a file next to the page's scripts, loaded from app://softphone/ in the Electron host and
// from the browser host alike), fetched and decoded once; should that fail, the same music is
// rendered here from its code (shared/hold-music-render.ts).
//
// One AudioContext and one decoded buffer for the window; per held call its own looping source into
// its own MediaStreamAudioDestinationNode, i.e. its own track. A held customer hears the music from
// its start, and ending one hold (stopping its source and track) never touches another's. A source
// costs next to nothing; a shared source would play on while nobody is held, or need counting.
//
// A track is handed out at once, and `ready` says when the music really plays on it. Until then
// the track carries nothing at all (Chromium sends no RTP for a WebAudio track whose graph has no
// running source, nor for one on a suspended context), so the media engine keeps the closed
// microphone on the sender meanwhile: silence, still RTP.
import { renderHoldMusic } from '../../shared/hold-music-render';
import { createLogger } from '../../shared/log';
import { errorText } from '../../shared/result';

const log = createLogger('hold-music');

// Vite sees this pattern and bundles the file beside the page's scripts; Node (the benchmarks and
// tests that import the media engine) gets a file: URL it never fetches unless a call is held.
const holdMusicUrl = new URL('../../assets/hold-music.wav', import.meta.url).href;

// The parts of WebAudio the hold music uses, so that tests can hand it a fake (Node has no WebAudio).
export interface HoldMusicBuffer {
  readonly length: number;
  readonly sampleRate: number;
}
export interface HoldMusicSourceNode {
  buffer: HoldMusicBuffer | null;
  loop: boolean;
  connect(destination: unknown): unknown;
  start(): void;
  stop(): void;
  disconnect(): void;
}
export interface HoldMusicDestination {
  readonly stream: MediaStream;
}
export interface HoldMusicAudioContext {
  readonly state: AudioContextState;
  readonly sampleRate: number;
  resume(): Promise<void>;
  suspend(): Promise<void>;
  decodeAudioData(data: ArrayBuffer): Promise<HoldMusicBuffer>;
  createBuffer(channels: number, length: number, sampleRate: number): HoldMusicBuffer & { copyToChannel(source: Float32Array<ArrayBuffer>, channel: number): void };
  createBufferSource(): HoldMusicSourceNode;
  createMediaStreamDestination(): HoldMusicDestination;
}

/** One held call's music. */
export interface HoldMusicPlayer {
  /** The music, for the held call's sender once `ready`. */
  readonly track: MediaStreamTrack;
  /**
   * Resolves true once the music plays on the track (the buffer is there and the context runs);
   * false when it never will (no buffer, a context that refused to run, or stopped first). Stays
   * pending while the autoplay policy holds the context back.
   */
  readonly ready: Promise<boolean>;
  /** Ends this call's music and its track. Idempotent. */
  stop(): void;
}

/** What the media engine needs of the hold music. */
export interface HoldMusicSource {
  /** A new player, its track ready at once. Throws when the window cannot make audio at all. */
  play(): HoldMusicPlayer;
}

/** Where the music that plays comes from: the bundled file, or rendered here because the file could not be used. */
export type HoldMusicOrigin = 'file' | 'rendered';

export interface HoldMusicOptions {
  createContext?: () => HoldMusicAudioContext;
  /** The bundled file's bytes; by default fetched from the page's own assets. */
  loadFile?: () => Promise<ArrayBuffer>;
}

function createAudioContext(): HoldMusicAudioContext {
  // No output device: the music goes to calls only, never to the agent's speakers, and plays on a
  // computer with no output at all. `sinkId` is not in TypeScript's DOM types yet; browsers without
  // it ignore the member (and the context then plays nothing on its output: nothing is connected there).
  const options: AudioContextOptions & { sinkId?: { type: 'none' } } = { latencyHint: 'playback', sinkId: { type: 'none' } };
  return new AudioContext(options);
}

async function fetchFile(): Promise<ArrayBuffer> {
  const response = await fetch(holdMusicUrl);
  if (!response.ok) throw new Error(`${holdMusicUrl}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

export class HoldMusic implements HoldMusicSource {
  private readonly createContext: () => HoldMusicAudioContext;
  private readonly loadFile: () => Promise<ArrayBuffer>;
  private ctx: HoldMusicAudioContext | null = null;
  private buffer: Promise<HoldMusicBuffer | null> | null = null;
  private from: HoldMusicOrigin | undefined;
  private playing = 0;

  constructor(options: HoldMusicOptions = {}) {
    this.createContext = options.createContext ?? createAudioContext;
    this.loadFile = options.loadFile ?? fetchFile;
  }

  /** Where the music comes from, once it is ready (for diagnostics and tests). */
  origin(): HoldMusicOrigin | undefined {
    return this.from;
  }

  /** How many held calls hear the music now. */
  get players(): number {
    return this.playing;
  }

  play(): HoldMusicPlayer {
    const ctx = this.context();
    const destination = ctx.createMediaStreamDestination();
    const track = destination.stream.getAudioTracks()[0];
    if (!track) throw new Error('the hold music has no audio track');
    let source: HoldMusicSourceNode | null = null;
    let stopped = false;
    this.playing += 1;
    // Always asked, even when the context reads 'running': the last hold's stop may have a suspend
    // under way, and resume and suspend are carried out in the order they were asked.
    const running = ctx.resume();
    const ready = Promise.all([this.loaded(ctx), running]).then(
      ([buffer]) => {
        if (stopped || !buffer || ctx.state !== 'running') return false;
        source = ctx.createBufferSource();
        source.buffer = buffer;
        source.loop = true;
        source.connect(destination);
        source.start();
        return true;
      },
      (e: unknown) => {
        log.warn('the hold music could not start', { problem: errorText(e) });
        return false;
      },
    );
    return {
      track,
      ready,
      stop: () => {
        if (stopped) return;
        stopped = true;
        this.playing -= 1;
        if (source) {
          source.stop();
          source.disconnect();
        }
        track.stop();
        // An idle context costs the audio thread's time: it rests until the next hold.
        if (this.playing === 0 && ctx === this.ctx) ctx.suspend().catch(() => undefined);
      },
    };
  }

  private context(): HoldMusicAudioContext {
    if (this.ctx && this.ctx.state !== 'closed') return this.ctx;
    this.ctx = this.createContext();
    return this.ctx;
  }

  /** The decoded file, decoded once; or the music rendered here; null when neither could be had. */
  private loaded(ctx: HoldMusicAudioContext): Promise<HoldMusicBuffer | null> {
    this.buffer ??= this.decode(ctx).then(
      (buffer) => {
        this.from = 'file';
        return buffer;
      },
      (e: unknown) => {
        log.warn('the hold music file could not be used: rendering it instead', { problem: errorText(e) });
        try {
          const buffer = this.render(ctx);
          this.from = 'rendered';
          return buffer;
        } catch (rendering) {
          // The held customer hears silence (still RTP, so the call goes on), never the agent.
          log.error('no hold music: the held call sends silence', { problem: errorText(rendering) });
          this.buffer = null;
          return null;
        }
      },
    );
    return this.buffer;
  }

  private async decode(ctx: HoldMusicAudioContext): Promise<HoldMusicBuffer> {
    const bytes = await this.loadFile();
    return ctx.decodeAudioData(bytes);
  }

  private render(ctx: HoldMusicAudioContext): HoldMusicBuffer {
    const rate = Math.round(ctx.sampleRate);
    const samples = renderHoldMusic(rate);
    const buffer = ctx.createBuffer(1, samples.length, rate);
    buffer.copyToChannel(samples, 0);
    return buffer;
  }
}
