// A call's audio: the microphone, what the call's one sender carries, the customer's <audio> element
// and the devices they use. Mute, hold and a device change only change the wish (`AudioWish`) and
// call `reconcile`, the one writer of all of it: the microphone track's `enabled`, the sender's track
// (replaceTrack), the remote element's mute and play, its output device (setSinkId) and the
// microphone device (captured again on a new choice or when its track ends).
//
// reconcile applies at once what is instant (the microphone's `enabled`, the customer heard or not),
// then the rest in one pass at a time, each pass reading the latest wish at its turn: quick changes
// end with the last one. A step that fails leaves what really is in place (the sender is read, never
// assumed) and the next reconcile tries again.
//
// protocol.md rules that shape it:
// - Mute keeps the track and sends silence (track.enabled = false), never removing it: the service
//   ends a call that stops sending (138022).
// - Hold: the gateway has no hold and no renegotiation, ends a call after 30 s without media, and the
//   customer's phone needs its RTP sequence numbers and timestamps to go on. So a held call's one
//   sender carries the hold music in the microphone's place (replaceTrack, the same sender), and the
//   microphone stays open, disabled, for an instant resume. Until the music plays, the closed
//   microphone stays on the sender: silence, still RTP. Mute and hold are independent.
import { createLogger } from '../../shared/log';
import { errorText } from '../../shared/result';
import type { HoldMusicPlayer, HoldMusicSource } from './hold-music';
import { MediaSetupError, mediaProblem, type MediaText } from './media-text';
import { captureMicrophone, microphoneProblem } from './microphone';

const log = createLogger('media');

/** What the agent and the main process want of a call's audio. */
export interface AudioWish {
  muted: boolean;
  /** The main process's word (CallState `heldSince`). */
  held: boolean;
  /** The microphone device ('' = the system default). */
  microphone: string;
  /** The speaker the customer plays on ('' = the system default). */
  speaker: string;
}

/** What a call's sender carries: the microphone, the hold music, or no track at all. */
export type SendingKind = 'microphone' | 'music' | 'nothing';

/** A call's microphone track and speaker (the test probe's audioRoute). */
export interface AudioRoute {
  micDeviceId: string;
  micLabel: string;
  micEnabled: boolean;
  micLive: boolean;
  sinkId: string;
}

export interface CallAudioDeps {
  localId: string;
  getUserMedia: (constraints: MediaStreamConstraints) => Promise<MediaStream>;
  holdMusic: () => HoldMusicSource;
  createAudioElement: () => HTMLAudioElement;
  audioParent: () => HTMLElement;
  /** Settles once the device choice is known (or has been waited for long enough). */
  routingKnown: () => Promise<void>;
  notice: (text: MediaText) => void;
}

type Music = { kind: 'none' } | { kind: 'unavailable' } | { kind: 'player'; player: HoldMusicPlayer; plays: boolean };

interface Microphone {
  stream: MediaStream;
  track: MediaStreamTrack;
  /** The device it was opened on ('' = the system default). */
  device: string;
}

export class CallAudio {
  private wish: AudioWish;
  private mic: Microphone | undefined;
  private sender: RTCRtpSender | undefined;
  private music: Music = { kind: 'none' };
  private remote: HTMLAudioElement | undefined;
  /** The output device last asked of the remote element. */
  private sinkAsked: string | undefined;
  /** A device whose capture failed: not tried again until it is asked for anew or the track ends. */
  private captureRefused: string | undefined;
  private passes: Promise<void> = Promise.resolve();
  private closed = false;
  private unwatch: () => void = () => undefined;

  constructor(
    private readonly deps: CallAudioDeps,
    wish: Pick<AudioWish, 'microphone' | 'speaker'>,
  ) {
    this.wish = { muted: false, held: false, ...wish };
  }

  /** The microphone may sound on the sender: neither muted nor held. */
  get micOpen(): boolean {
    return !this.wish.muted && !this.wish.held;
  }

  /**
   * The call's microphone, opened once the device choice is known; undefined when the call closed
   * meanwhile. Throws a MediaSetupError with the reason when it cannot be opened.
   */
  async open(): Promise<{ stream: MediaStream; track: MediaStreamTrack } | undefined> {
    await this.deps.routingKnown();
    const asked = this.wish.microphone;
    let captured: { stream: MediaStream; device: string };
    try {
      captured = await captureMicrophone(this.deps.getUserMedia, asked, () =>
        log.info('the chosen microphone is not here: using the default', { localId: this.deps.localId }),
      );
    } catch (e) {
      throw new MediaSetupError(microphoneProblem(e));
    }
    const { stream, device } = captured;
    // The default opened in its place: every reconcile would otherwise try the missing one again.
    if (device !== asked) this.captureRefused = asked;
    const track = stream.getAudioTracks()[0];
    if (this.closed || !track) {
      stream.getTracks().forEach((t) => t.stop());
      if (this.closed) return undefined;
      throw new MediaSetupError(mediaProblem('micNoTrack'));
    }
    this.mic = { stream, track, device };
    this.watch(track);
    this.applyNow();
    return { stream, track };
  }

  /** A preparation that stops before the peer connection exists gives the microphone back at once. */
  releaseMicrophone(): void {
    this.unwatch();
    this.mic?.stream.getTracks().forEach((t) => t.stop());
    this.mic = undefined;
  }

  /** The call's one audio sender, made with the peer connection around the microphone's track. */
  attach(sender: RTCRtpSender): void {
    this.sender = sender;
    // Held, or another microphone chosen, while the call's media was being made: it follows now.
    void this.reconcile();
  }

  /** The customer's audio, played in the window unless the call is held. */
  playRemote(stream: MediaStream): void {
    if (this.closed) return;
    const audio = this.remote ?? this.deps.createAudioElement();
    this.remote = audio;
    audio.autoplay = true;
    audio.dataset.call = this.deps.localId;
    if (audio.srcObject !== stream) audio.srcObject = stream;
    if (!audio.isConnected) this.deps.audioParent().append(audio);
    this.applyNow();
  }

  /**
   * The one way to change a call's audio: the wish is updated and applied. Resolves once a pass that
   * read this wish is over (a failed step is logged or noticed, never thrown).
   */
  reconcile(change: Partial<AudioWish> = {}): Promise<void> {
    if (change.microphone !== undefined) this.captureRefused = undefined;
    if (change.speaker !== undefined) this.sinkAsked = undefined;
    this.wish = { ...this.wish, ...change };
    this.applyNow();
    const pass = this.passes.then(() => this.converge());
    this.passes = pass.catch((e: unknown) => log.error('a change of the call audio failed', { localId: this.deps.localId, problem: errorText(e) }));
    return this.passes;
  }

  describe(): { micLive?: boolean; micEnabled?: boolean; playing: boolean; muted: boolean; held: boolean; sending?: SendingKind } {
    const track = this.mic?.track;
    const audio = this.remote;
    return {
      ...(track && { micLive: track.readyState === 'live', micEnabled: track.enabled }),
      playing: audio ? !audio.paused && !audio.muted : false,
      muted: this.wish.muted,
      held: this.wish.held,
      ...(this.sender ? { sending: this.sending(this.sender) } : {}),
    };
  }

  /** The microphone track and the speaker of the call, for tests and diagnostics. */
  route(): AudioRoute | undefined {
    const track = this.mic?.track;
    if (!track) return undefined;
    return {
      micDeviceId: track.getSettings().deviceId ?? '',
      micLabel: track.label,
      micEnabled: track.enabled,
      micLive: track.readyState === 'live',
      sinkId: this.remote?.sinkId ?? '',
    };
  }

  close(): void {
    this.closed = true;
    this.unwatch();
    if (this.music.kind === 'player') this.music.player.stop();
    this.music = { kind: 'none' };
    this.mic?.stream.getTracks().forEach((t) => t.stop());
    const audio = this.remote;
    if (audio) {
      audio.pause();
      audio.srcObject = null;
      audio.remove();
    }
  }

  /** What is instant: the microphone's `enabled`, the hold music asked for, the customer heard or not, the speaker. */
  private applyNow(): void {
    if (this.closed) return;
    const { held, speaker } = this.wish;
    this.enableMicrophone();
    if (held && this.music.kind === 'none') this.startMusic();
    if (!held && this.music.kind === 'unavailable') this.music = { kind: 'none' };
    const audio = this.remote;
    if (!audio) return;
    // A held customer is not heard; the resume lets the customer be heard again.
    audio.muted = held;
    if (held) audio.pause();
    // During ringing there is no user gesture yet and autoplay may refuse: the Answer click plays it again.
    else if (audio.paused) audio.play().catch((e: unknown) => log.debug('remote audio did not start yet', { localId: this.deps.localId, problem: errorText(e) }));
    if (typeof audio.setSinkId === 'function' && audio.sinkId !== speaker && this.sinkAsked !== speaker) {
      this.sinkAsked = speaker;
      audio.setSinkId(speaker).catch((e: unknown) => {
        // The speaker vanished between the choice and now: the default carries on.
        log.warn('the speaker could not be chosen', { localId: this.deps.localId, problem: errorText(e) });
        if (speaker !== '') audio.setSinkId('').catch(() => undefined);
      });
    }
  }

  /** The only writer of the microphone track's `enabled`: open unless muted or held. */
  private enableMicrophone(): void {
    if (this.mic) this.mic.track.enabled = this.micOpen;
  }

  private startMusic(): void {
    let player: HoldMusicPlayer;
    try {
      player = this.deps.holdMusic().play();
    } catch (e) {
      // The closed microphone still sends silence: never the agent, never nothing.
      log.error('no hold music: the held call sends silence', { localId: this.deps.localId, problem: errorText(e) });
      this.music = { kind: 'unavailable' };
      return;
    }
    const music: Music = { kind: 'player', player, plays: false };
    this.music = music;
    void player.ready.then((plays) => {
      // A resume, or the end of the call, came first: this music is not wanted any more.
      if (this.music !== music || this.closed) return;
      if (!plays) {
        log.warn('no hold music: the held call sends silence', { localId: this.deps.localId });
        return;
      }
      music.plays = true;
      void this.reconcile();
    });
  }

  /** One pass: the microphone device, then what the sender carries, then music nobody needs. */
  private async converge(): Promise<void> {
    const sender = this.sender;
    const mic = this.mic;
    if (this.closed || !sender || !mic) return;
    const { microphone } = this.wish;
    const lost = mic.track.readyState === 'ended';
    if ((mic.device !== microphone || lost) && this.captureRefused !== microphone) await this.switchMicrophone(sender, mic, microphone, lost);
    if (this.closed) return;
    const wanted = this.wanted();
    if (wanted && sender.track !== wanted) {
      const music = this.music.kind === 'player' && wanted === this.music.player.track;
      try {
        await sender.replaceTrack(wanted);
        if (music) log.info('the held customer hears the hold music', { localId: this.deps.localId });
      } catch (e) {
        // The sender keeps what it had: the closed microphone (silence) on a hold, the music on a resume.
        if (music) log.error('the hold music could not replace the microphone: the held call sends silence', { localId: this.deps.localId, problem: errorText(e) });
        else log.error('the microphone could not be put back on the call: what it sent goes on', { localId: this.deps.localId, problem: errorText(e) });
      }
    }
    // The music stops once the sender no longer carries it: a stopped track there would send nothing.
    if (!this.wish.held && this.music.kind === 'player' && sender.track !== this.music.player.track) {
      this.music.player.stop();
      this.music = { kind: 'none' };
    }
  }

  /** Held with the music playing: the music; else the microphone (closed while held: silence). */
  private wanted(): MediaStreamTrack | undefined {
    const music = this.music;
    if (this.wish.held && music.kind === 'player' && music.plays) return music.player.track;
    return this.mic?.track;
  }

  /**
   * A new microphone track in the old one's place: on the sender if the sender carries the
   * microphone, else only kept (a held call goes on with the music until the resume). A live old
   * track keeps sending what it can: a call never goes silent for a switch that failed.
   */
  private async switchMicrophone(sender: RTCRtpSender, old: Microphone, device: string, lost: boolean): Promise<void> {
    let captured: { stream: MediaStream; device: string };
    try {
      captured = await captureMicrophone(this.deps.getUserMedia, device);
    } catch (e) {
      this.captureRefused = device;
      this.deps.notice(mediaProblem(lost ? 'micLost' : 'micNotSwitched', { problem: microphoneProblem(e) }));
      return;
    }
    // The default opened in its place: not tried again until it is asked for anew or the track ends.
    if (captured.device !== device) this.captureRefused = device;
    const track = captured.stream.getAudioTracks()[0];
    if (!track || this.closed || this.mic !== old) {
      captured.stream.getTracks().forEach((t) => t.stop());
      return;
    }
    this.mic = { stream: captured.stream, track, device: captured.device };
    this.enableMicrophone();
    if (sender.track === old.track) {
      let failure: { e: unknown } | undefined;
      try {
        await sender.replaceTrack(track);
      } catch (e) {
        failure = { e };
      }
      // The call ended meanwhile: close() stopped only the new microphone, and neither may stay live.
      if (this.closed) {
        captured.stream.getTracks().forEach((t) => t.stop());
        old.stream.getTracks().forEach((t) => t.stop());
        return;
      }
      if (failure) {
        if (this.mic.track === track) this.mic = old;
        this.enableMicrophone();
        captured.stream.getTracks().forEach((t) => t.stop());
        this.deps.notice(mediaProblem('micSwitchFailed', { problem: errorText(failure.e) }));
        return;
      }
    }
    this.watch(track);
    old.stream.getTracks().forEach((t) => t.stop());
    old.track.stop();
  }

  /**
   * A track the browser ended (its device went away, the system default included, or the capture
   * failed) sends nothing more, and with the default chosen before and after, no device change would
   * ever notice: the track's own `ended` brings the capture back.
   */
  private watch(track: MediaStreamTrack): void {
    this.unwatch();
    const onEnded = (): void => {
      if (this.closed || this.mic?.track !== track) return;
      log.info('the microphone track ended: capturing again', { localId: this.deps.localId });
      this.captureRefused = undefined;
      void this.reconcile();
    };
    track.addEventListener('ended', onEnded);
    this.unwatch = () => track.removeEventListener('ended', onEnded);
  }

  /** What the sender carries, by the track it really has. */
  private sending(sender: RTCRtpSender): SendingKind {
    const track = sender.track;
    if (!track) return 'nothing';
    if (this.music.kind === 'player' && track === this.music.player.track) return 'music';
    return track === this.mic?.track ? 'microphone' : 'nothing';
  }
}
