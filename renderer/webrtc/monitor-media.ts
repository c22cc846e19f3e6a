// A supervisor's own leg of a team call it joined ("Listen", "Whisper", "Barge"; shared/supervision.ts):
// the bridge node offers it as it offers a rejoining call's leg, and it is answered the same way
// (CallLeg: the answer made with the offer's candidates held back, which reach ICE only once the
// relay took the answer), with the microphone and speaker calls use (CallAudio, following the
// devices chosen). In "Listen" the microphone's track is disabled: nobody hears the supervisor then,
// and a live microphone would be one more thing that could. One joined call at a time: answering
// another leg closes the one before. It sends no command; the monitor domain does
// (app/monitor-actions.ts), on what this reports.
import type { MonitorMode } from '../../shared/supervision';
import type { IceConfig } from '../../shared/ice-servers';
import { createLogger } from '../../shared/log';
import { errorText, type Result } from '../../shared/result';
import { CallAudio, type AudioRoute } from './call-audio';
import { CallLeg } from './call-leg';
import type { HoldMusicSource } from './hold-music';
import { MediaSetupError, mediaFailure, mediaProblem, mediaText, type MediaOutcome, type MediaText } from './media-text';

const log = createLogger('media');

/** What became of a joined call's leg. */
export type MonitorFact = { callId: string; legId: string; state: 'connected' } | { callId: string; legId: string; state: 'failed'; reason: MediaText };

/** A joined call's media, for diagnostics and the end-to-end tests (window.__softphoneMedia.monitor). */
export interface MonitorReport {
  callId: string;
  legId: string;
  phase: CallLeg['phase']['kind'];
  connection?: RTCPeerConnectionState;
  /** The microphone is open and sounds on the leg: whisper and barge, never listen. */
  micEnabled?: boolean;
  micLive?: boolean;
  /** The call's audio plays in the window. */
  playing: boolean;
}

export interface MonitorMediaDeps {
  getUserMedia: (constraints: MediaStreamConstraints) => Promise<MediaStream>;
  createPeerConnection: (config: RTCConfiguration) => RTCPeerConnection;
  iceConfig: () => Promise<Result<IceConfig>>;
  audioParent: () => HTMLElement;
  createAudioElement: () => HTMLAudioElement;
  /** Never played on this leg (a supervisor holds nobody); CallAudio asks for the source all the same. */
  holdMusic: () => HoldMusicSource;
  gatherCapMs: number;
  /** The devices calls use now ('' = the system default). */
  devices: () => { microphone: string; speaker: string };
  /** Settles once the device choice is known (or has been waited for long enough). */
  routingKnown: () => Promise<void>;
}

interface Joined {
  callId: string;
  legId: string;
  leg: CallLeg;
  audio: CallAudio;
}

export class MonitorMedia {
  private joined: Joined | undefined;
  private readonly listeners = new Set<(fact: MonitorFact) => void>();

  constructor(private readonly deps: MonitorMediaDeps) {}

  /** Connected, failed: for the monitor domain. */
  onFact(listener: (fact: MonitorFact) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The leg this window has media for, if any. */
  legOf(callId: string): string | undefined {
    return this.joined?.callId === callId ? this.joined.legId : undefined;
  }

  /**
   * The answer to the node's offer of leg `legId` of `callId`, made now with the microphone (disabled
   * in `listen`); whatever leg this window had before closes first. Nothing reaches the node until
   * `connect` (the relay took the answer).
   */
  async answer(callId: string, legId: string, offerSdp: string, mode: MonitorMode): Promise<MediaOutcome<{ sdp: string }>> {
    this.close();
    const joined = this.open(callId, legId);
    const { leg, audio } = joined;
    void audio.reconcile({ muted: mode === 'listen' });
    const microphone = audio.open();
    microphone.catch(() => undefined);
    const ice = this.deps.iceConfig().then(
      async (config) => {
        if (config.ok) return config.value;
        await microphone.catch(() => undefined);
        throw new MediaSetupError(config.error.text ?? config.error.message);
      },
      (e: unknown) => {
        throw new MediaSetupError(mediaProblem('networkSettingsUnread', { problem: errorText(e) }));
      },
    );
    leg.prepareAnswer(offerSdp, { ice, microphone });
    await leg.settled();
    const sdp = leg.handOver();
    if (sdp !== undefined) return { ok: true, value: { sdp } };
    const phase = leg.phase;
    if (this.joined === joined) this.close();
    if (phase.kind === 'failed') {
      log.warn('the joined call’s leg could not be prepared', { callId, problem: mediaText(phase.reason) });
      return mediaFailure('media_failed', phase.reason);
    }
    return mediaFailure('invalid_state', mediaProblem('endedBeforeAnswer'));
  }

  /** The relay took this window's answer for `legId`: the node's candidates go to ICE. */
  connect(legId: string): void {
    if (this.joined?.legId === legId) this.joined.leg.connect();
  }

  /** Listen: the microphone closed (silence on the leg); whisper and barge: open. */
  setMode(mode: MonitorMode): void {
    void this.joined?.audio.reconcile({ muted: mode === 'listen' });
  }

  /** The devices chosen now, for the joined call too. */
  useDevices(devices: { microphone: string; speaker: string }): Promise<void> {
    return this.joined?.audio.reconcile(devices) ?? Promise.resolve();
  }

  /** "Leave", the call's end, another call joined: the peer connection, the microphone and the audio go. Idempotent. */
  close(): void {
    const joined = this.joined;
    if (!joined) return;
    this.joined = undefined;
    joined.leg.close();
    joined.audio.close();
  }

  describe(): MonitorReport | undefined {
    const joined = this.joined;
    if (!joined) return undefined;
    const pc = joined.leg.pc;
    const { micEnabled, micLive, playing } = joined.audio.describe();
    return {
      callId: joined.callId,
      legId: joined.legId,
      phase: joined.leg.phase.kind,
      ...(pc && { connection: pc.connectionState }),
      ...(micEnabled !== undefined && { micEnabled }),
      ...(micLive !== undefined && { micLive }),
      playing,
    };
  }

  /** The microphone's track and the speaker of the joined call, for tests and diagnostics. */
  audioRoute(): AudioRoute | undefined {
    return this.joined?.audio.route();
  }

  private open(callId: string, legId: string): Joined {
    const id = `monitor:${callId}`;
    const audio = new CallAudio(
      {
        localId: id,
        getUserMedia: this.deps.getUserMedia,
        holdMusic: this.deps.holdMusic,
        createAudioElement: this.deps.createAudioElement,
        audioParent: this.deps.audioParent,
        routingKnown: this.deps.routingKnown,
        notice: (text) => log.warn('the joined call’s audio', { callId, problem: mediaText(text) }),
      },
      this.deps.devices(),
    );
    // A leg that was closed (left, replaced) says nothing more.
    const emit = (fact: MonitorFact): void => {
      if (this.joined?.leg !== leg) return;
      for (const listener of this.listeners) listener(fact);
    };
    const leg = new CallLeg(
      id,
      { createPeerConnection: this.deps.createPeerConnection, gatherCapMs: this.deps.gatherCapMs },
      {
        remoteStream: (stream) => audio.playRemote(stream),
        senderReady: (sender) => audio.attach(sender),
        connected: () => emit({ callId, legId, state: 'connected' }),
        moment: () => undefined,
        // No ICE restart on a bridge leg: the path comes back by itself, or the leg fails.
        pathLost: () => undefined,
        failed: (reason) => {
          if (!leg.fail(reason, true)) return;
          log.warn('the joined call’s leg failed', { callId, problem: mediaText(reason) });
          emit({ callId, legId, state: 'failed', reason });
        },
      },
    );
    const joined: Joined = { callId, legId, leg, audio };
    this.joined = joined;
    return joined;
  }
}
