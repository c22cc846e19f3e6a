// One call's media, as its parts make it: the leg (call-leg.ts: the peer connection and where it
// stands), the audio (call-audio.ts: microphone, sender, remote element, devices, one reconcile) and
// the health (media-health.ts: "Reconnecting…", the grace, quality). It follows the call as the main
// process pushes it, and says what happened as facts, conditions and notices; it sends no command.
import { isHeld, type CallState } from '../../shared/call-state';
import type { WindowCallTimings } from '../../shared/diagnostics';
import type { IceConfig } from '../../shared/ice-servers';
import { createLogger } from '../../shared/log';
import { errorText, type Result } from '../../shared/result';
import { LevelMeter } from './audio-stats';
import { CallAudio, type CallAudioDeps, type SendingKind } from './call-audio';
import { CallLeg } from './call-leg';
import type { GatheringEnd, LegPhase, LegSetup } from './call-leg-types';
import { MediaHealth, type CallQualityRecord, type MediaCondition } from './media-health';
import { MediaSetupError, mediaFailure, mediaProblem, mediaText, setupProblem, type MediaOutcome, type MediaText } from './media-text';

const log = createLogger('media');

/** What the engine tells its owner about a call's media; the owner reports it to the main process. */
export type MediaFact = { localId: string; state: 'connected' } | { localId: string; state: 'failed'; reason: MediaText };

/** One call's media, for diagnostics (window.__softphoneMedia.sessions). */
export interface MediaSessionReport {
  localId: string;
  phase: LegPhase['kind'];
  connection?: RTCPeerConnectionState;
  ice?: RTCIceConnectionState;
  gathering?: RTCIceGatheringState;
  signaling?: RTCSignalingState;
  micLive?: boolean;
  micEnabled?: boolean;
  /** The customer's audio plays in the window (never while held). */
  playing: boolean;
  /** How the wait for our candidates ended (complete, settled on UDP, or the cap). */
  gatheringEnded?: GatheringEnd;
  /** The agent muted the call (kept across a hold; `micEnabled` is false while muted or held). */
  muted: boolean;
  /** On hold: the customer hears the hold music, and the agent does not hear the customer (`playing` false). */
  held: boolean;
  /** What the call's sender really carries now (once the call has one). */
  sending?: SendingKind;
}

export interface CallMediaDeps extends Omit<CallAudioDeps, 'localId' | 'notice'> {
  createPeerConnection: (config: RTCConfiguration) => RTCPeerConnection;
  /** The ICE servers and transport policy of a call starting now. */
  iceConfig: () => Promise<Result<IceConfig>>;
  gatherCapMs: number;
  disconnectGraceMs: number;
  /** The grace of a bridged call's media (media-health.ts BRIDGED_DISCONNECT_GRACE_MS). */
  bridgedDisconnectGraceMs: number;
  /** The devices the call starts with. */
  devices: { microphone: string; speaker: string };
  fact: (fact: MediaFact) => void;
  /** A moment of the call's set-up (only the first of each counts). */
  moment: (moment: keyof WindowCallTimings) => void;
  condition: (condition: MediaCondition) => void;
  notice: (localId: string, text: MediaText) => void;
}

type IceOutcome = { ok: true; value: IceConfig } | { ok: false; problem: MediaText };

export class CallMedia {
  readonly leg: CallLeg;
  readonly audio: CallAudio;
  readonly health: MediaHealth;
  readonly levels = new LevelMeter();
  /**
   * The main process has shown this call: only then may a snapshot without it close it. A call being
   * placed is unseen until its first push; a ringing call's media is made from the call itself.
   */
  seen = false;
  /** The call goes through the team's bridge (learnt at its first push): its media has the bridged grace. */
  private bridged = false;

  /**
   * `legId`: the bridge's new leg of a call rejoining (CallRejoin), whose offer this media answers;
   * undefined for the media a call started with.
   */
  constructor(
    readonly localId: string,
    private readonly deps: CallMediaDeps,
    readonly legId?: string,
  ) {
    this.audio = new CallAudio({ ...deps, localId, notice: (text) => deps.notice(localId, text) }, deps.devices);
    this.leg = new CallLeg(
      localId,
      { createPeerConnection: deps.createPeerConnection, gatherCapMs: deps.gatherCapMs },
      {
        remoteStream: (stream) => this.audio.playRemote(stream),
        senderReady: (sender) => this.audio.attach(sender),
        connected: () => {
          deps.fact({ localId, state: 'connected' });
          this.health.start();
        },
        moment: (moment) => deps.moment(moment),
        pathLost: () => this.health.pathLost(),
        failed: (reason) => this.fail(reason),
      },
    );
    this.health = new MediaHealth({
      localId,
      pc: () => this.leg.pc,
      micOpen: () => this.audio.micOpen,
      graceMs: deps.disconnectGraceMs,
      condition: deps.condition,
      lost: () => this.fail(mediaProblem('networkLost')),
    });
  }

  /**
   * Ringing: the microphone, the peer connection and the complete answer, made ahead of the click.
   * The peer connection takes the customer's offer while the microphone opens (the slowest step).
   */
  prepareIncoming(offerSdp: string): void {
    const microphone = this.audio.open();
    // Whatever becomes of the preparation, a microphone refused later is not an unhandled rejection.
    microphone.catch(() => undefined);
    const ice = this.askIce().then(async (outcome) => {
      if (outcome.ok) return outcome.value;
      // The microphone's own failure, if it has one, is the reason the agent reads first.
      const mic = await microphone;
      if (!this.leg.closed) this.audio.releaseMicrophone();
      if (!mic || this.leg.closed) return undefined;
      throw new MediaSetupError(outcome.problem);
    });
    this.leg.prepareAnswer(offerSdp, { ice, microphone });
    // A preparation that failed before its microphone opened (the offer refused, say) no longer
    // waits for it: given back as soon as it opens, it does not stay on while the call rings.
    void this.leg.settled().then(async () => {
      if (!this.failedUnreported) return;
      await microphone.catch(() => undefined);
      this.audio.releaseMicrophone();
    });
  }

  /** Dialing: the microphone, the peer connection and a complete offer. */
  async prepareOutgoing(): Promise<MediaOutcome<{ sdp: string }>> {
    try {
      await this.leg.prepareOffer(() => this.open());
    } catch (e) {
      return mediaFailure('media_failed', setupProblem(e, 'notSetUp', errorText(e)));
    }
    const phase = this.leg.phase;
    if (phase.kind !== 'ready') return mediaFailure('invalid_state', mediaProblem('endedBeforePlaced'));
    return { ok: true, value: { sdp: phase.sdp } };
  }

  /** A preparation that failed without a word to the main process: Answer may try it again. */
  get failedUnreported(): boolean {
    const phase = this.leg.phase;
    return phase.kind === 'failed' && !phase.reported;
  }

  /** The Answer click: the complete answer made while ringing, handed over once. */
  async answer(): Promise<MediaOutcome<{ sdp: string }>> {
    // The click is the user gesture that autoplay rules wait for: the customer's audio may start now.
    void this.audio.reconcile();
    await this.leg.settled();
    const sdp = this.leg.handOver();
    if (sdp !== undefined) return { ok: true, value: { sdp } };
    const phase = this.leg.phase;
    switch (phase.kind) {
      case 'failed':
        this.deps.notice(this.localId, phase.reason);
        return mediaFailure('media_failed', phase.reason);
      case 'closed':
        return mediaFailure('invalid_state', mediaProblem('endedBeforeAnswer'));
      default:
        return mediaFailure('invalid_state', mediaProblem('alreadyAnswering'));
    }
  }

  /**
   * The call as the main process pushed it: the hold follows `heldSince` and the mute `muted` (the
   * microphone sounds only when neither asks for silence); an incoming call pushed in
   * `connecting` (or later) had its accept go through, so the customer's candidates go to ICE now;
   * an outgoing one brings the customer's answer, applied once. A rejoined leg answered the bridge's
   * offer whatever the call's direction: its candidates go to ICE once the relay applied the answer
   * (`rejoin.answered`), and the customer's answer of an outgoing call, long applied to the leg
   * this one replaces, is never applied to it.
   */
  follow(call: CallState): void {
    if (call.phase === 'ended') return;
    if (call.bridged && !this.bridged) {
      this.bridged = true;
      this.health.useGrace(this.deps.bridgedDisconnectGraceMs);
    }
    void this.audio.reconcile({ held: isHeld(call), muted: call.muted === true });
    if (call.phase !== 'connecting' && call.phase !== 'active') return;
    if (this.legId !== undefined) {
      if (call.rejoin?.legId === this.legId && call.rejoin.answered) this.leg.connect();
      return;
    }
    if (call.direction === 'incoming') this.leg.connect();
    else if (call.answerSdp) void this.leg.applyAnswer(call.answerSdp);
  }

  /** The call's media failed: said on its panel and reported once to the main process. */
  fail(reason: MediaText): void {
    if (!this.leg.fail(reason, true)) return;
    this.health.stop();
    log.warn('media failed', { localId: this.localId, problem: mediaText(reason) });
    this.deps.notice(this.localId, reason);
    this.deps.fact({ localId: this.localId, state: 'failed', reason });
  }

  /** Closes everything; returns the quality record of a call whose statistics were read. */
  close(): CallQualityRecord | undefined {
    const record = this.health.close();
    this.leg.close();
    this.audio.close();
    return record;
  }

  describe(): MediaSessionReport {
    const pc = this.leg.pc;
    const { sending, ...audio } = this.audio.describe();
    return {
      localId: this.localId,
      phase: this.leg.phase.kind,
      ...(pc && { connection: pc.connectionState, ice: pc.iceConnectionState, gathering: pc.iceGatheringState, signaling: pc.signalingState }),
      ...audio,
      ...(this.leg.gathering ? { gatheringEnded: this.leg.gathering } : {}),
      // What a sender carries means something once the peer connection holds it.
      ...(pc && sending ? { sending } : {}),
    };
  }

  /** The ICE servers and policy of this call (normally at hand already: IceConfigSource fetches ahead). */
  private askIce(): Promise<IceOutcome> {
    return this.deps.iceConfig().then(
      (r): IceOutcome => (r.ok ? r : { ok: false, problem: r.error.text ?? r.error.message }),
      (e: unknown): IceOutcome => ({ ok: false, problem: mediaProblem('networkSettingsUnread', { problem: errorText(e) }) }),
    );
  }

  /**
   * The microphone, then the ICE configuration asked for meanwhile (normally at hand already:
   * IceConfigSource fetches ahead); undefined when the call closed first.
   */
  private async open(): Promise<LegSetup | undefined> {
    const asked = this.askIce();
    const mic = await this.audio.open();
    const ice = await asked;
    if (!mic || this.leg.closed || !ice.ok) {
      this.audio.releaseMicrophone();
      if (!ice.ok && !this.leg.closed) throw new MediaSetupError(ice.problem);
      return undefined;
    }
    return { ...mic, ice: ice.value };
  }
}
