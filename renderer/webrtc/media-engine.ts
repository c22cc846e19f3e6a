// The media engine: the only owner of RTCPeerConnection, MediaStream and the remote <audio>
// elements (style.md 6; the store only ever sees plain data). One CallMedia per call, keyed by the
// call's localId, whose state is one union (preparing → ready → answering → connecting → connected,
// or failed; closed calls leave the map). It owns media and reports media facts; it sends no call
// command (call commands belong to renderer/app/call-actions.ts).
//
// protocol.md rules that shape this file:
// - Nothing may reach the customer before this agent has the call. While ringing, the offer is
//   applied without its candidates, and the answer is made, applied and gathered: with no remote
//   candidate there is nobody to check, so nothing is sent to the customer. The customer's
//   candidates, without which no ICE check (and so no DTLS) can start, are added only once the
//   call is this agent's and the accept is through (the Answer command's success). An agent who
//   loses the claim has sent the customer nothing.
// - Once answered, audio must start at once: the complete answer is ready before the click, so the
//   Answer click costs one command (main claims, then accepts), nothing more.
// - Non-trickle: complete local descriptions only, line ends normalised to CRLF and nothing else.
// - No renegotiation and no ICE restart on this leg: a lost path ends the call, and we say why.
// - Mute keeps the track and sends silence (track.enabled = false).
// - Hold: the gateway has no hold and no renegotiation, ends a call after 30 s without media, and
//   the customer's phone needs its RTP sequence numbers and timestamps to go on. So a held call's
//   one sender carries the hold music in the microphone's place (replaceTrack), and the microphone
//   stays open, disabled, for an instant resume. Mute and hold are independent.
import { isHeld, type CallState } from '../../shared/call-state';
import { QualityMonitor, type QualitySample, type QualitySummary, type QualityWarningKind } from '../../shared/call-quality';
import { QUALITY_SAMPLES_KEPT, type CallQualityReport } from '../../shared/diagnostics';
import type { IceConfig } from '../../shared/ice-servers';
import { createLogger } from '../../shared/log';
import { err, ok, type Result, errorText } from '../../shared/result';
import { checkAnswerSdp, checkOfferSdp, describeOffer, holdBackCandidates, normaliseSdp, type HeldCandidate, type OfferSummary } from '../../shared/sdp';
import { HoldMusic, type HoldMusicPlayer, type HoldMusicSource } from './hold-music';
import { watchIceGathering } from './ice-gathering';
import { readQualitySample, type QualityCounters, type SelectedCandidatePair } from './quality-stats';
import { i18n } from '../i18n/i18n';

const log = createLogger('media');
/** Texts for the agent, worded when they are made, in the UI's language of that moment. */
const t = i18n.getFixedT(null, 'calls');

export const MIC_CONSTRAINTS: MediaStreamConstraints = {
  audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true },
  video: false,
};

/** The devices calls use; '' is the system default. */
export interface AudioRouting {
  microphone: string;
  speaker: string;
}

/** How long a call's capture waits for the device choice to be known before it takes the default. */
const ROUTING_WAIT_MS = 1_000;

function microphoneConstraints(deviceId: string): MediaStreamConstraints {
  if (deviceId === '') return MIC_CONSTRAINTS;
  return { ...MIC_CONSTRAINTS, audio: { ...(MIC_CONSTRAINTS.audio as MediaTrackConstraints), deviceId: { exact: deviceId } } };
}

/** The device a chosen microphone was opened on is gone (or never was): the default will do. */
const isMissingDevice = (e: unknown): boolean =>
  typeof e === 'object' && e !== null && 'name' in e && (e.name === 'OverconstrainedError' || e.name === 'NotFoundError');

/**
 * With no STUN/TURN server: the service's side is ice-lite with public candidates in its offer, we
 * are the controlling full agent, and it learns our address from our checks (peer-reflexive). A
 * firewall that blocks outbound UDP needs a TURN server over TCP or TLS, which Settings → Network
 * and the relay's short-lived credentials add (IceConfig). The pool pre-gathers during ringing
 * without sending anything to anyone.
 */
export const PEER_CONFIG: RTCConfiguration = { iceServers: [], iceCandidatePoolSize: 1, bundlePolicy: 'max-bundle' };

const NO_SERVERS: IceConfig = { iceServers: [], iceTransportPolicy: 'all' };

export const GATHER_CAP_MS = 1_500;
/** If the cap finds no candidate at all, how much longer to wait for the first (see ice-gathering.ts). */
export const FIRST_CANDIDATE_GRACE_MS = 8_500;
/**
 * How long media may stay away (ICE disconnected, or no RTP from the customer) before the call is
 * given up: under the service's own cut-offs (20 s without media at the start, 30 s mid-call,
 * protocol.md 138021/138022), so that the agent hears it from us first, with the reason.
 */
export const DISCONNECT_GRACE_MS = 15_000;
/** How often a connected call's statistics are read: media checks and call quality. */
export const MONITOR_INTERVAL_MS = 1_000;
/** A call given up because its media did not come back: the English words (calls:media.networkLost). */
export const NETWORK_LOST_REASON = 'The network connection was lost';

/** What the engine tells its owner about a call's media; the owner reports it to the main process. */
export type MediaFact = { localId: string; state: 'connected' } | { localId: string; state: 'failed'; reason: string };

/** How a connected call's media is doing, once a second and whenever it changes. */
export interface MediaCondition {
  localId: string;
  /** Media stopped (ICE disconnected, or nothing from the customer): "Reconnecting…" until it returns or the call is given up. */
  reconnecting: boolean;
  /** When media stopped (ms on the page's clock), while reconnecting. */
  since?: number;
  /** The last second's MOS estimate (E-model), when it had the figures. */
  mos?: number;
  /**
   * The quality warnings in force, most pressing first: the kind, its figure (ms, %, MOS) and the
   * English words for logs ("Poor connection: 6 % packet loss"); the window words them itself.
   */
  warnings?: { kind: QualityWarningKind; value?: number; text: string }[];
}

/** What a call's media leaves behind when it closes (reportQuality): for the call history and diagnostics. */
export type CallQualityRecord = CallQualityReport;

export interface MediaEngineOptions {
  /** A problem the agent should read on this call's panel. */
  onNotice?: (localId: string, text: string) => void;
  getUserMedia?: (constraints: MediaStreamConstraints) => Promise<MediaStream>;
  createPeerConnection?: (config: RTCConfiguration) => RTCPeerConnection;
  /** The ICE servers and transport policy of a call starting now (renderer/webrtc/ice-config.ts); none by default. */
  iceConfig?: () => Promise<Result<IceConfig>>;
  /** Where remote <audio> elements go; document.body by default. */
  audioParent?: () => HTMLElement;
  /** Makes a call's remote <audio> element; document.createElement('audio') by default. */
  createAudioElement?: () => HTMLAudioElement;
  gatherCapMs?: number;
  disconnectGraceMs?: number;
  /** The music a held customer hears (renderer/webrtc/hold-music.ts); made when first needed by default. */
  holdMusic?: HoldMusicSource;
}

export interface CallLevels {
  /** Our microphone, 0..1 (media-source audioLevel). */
  mic: number;
  /** What we hear from the customer, 0..1 (inbound-rtp audioLevel, or from totalAudioEnergy). */
  customer: number;
}

export interface CallStats {
  inboundEnergy: number;
  inboundLevel: number;
  outboundPackets: number;
  inboundPackets: number;
}

export interface CandidatePath {
  local: string;
  remote: string;
  /** A relay candidate's way to its TURN server: 'udp', 'tcp' or 'tls'. */
  relayProtocol?: string;
}

export interface CallTimings {
  answerToAcceptMs?: number;
  offerToSendMs?: number;
}

/** A failure whose text is meant for the agent (and for the media fact's reason). */
class MediaSetupError extends Error {}

/** Human text for a getUserMedia failure. */
export function microphoneErrorText(e: unknown): string {
  const name = e instanceof Error || (typeof e === 'object' && e !== null && 'name' in e) ? String((e as { name: unknown }).name) : '';
  switch (name) {
    case 'NotAllowedError':
    case 'SecurityError':
      return t('media.micDenied');
    case 'NotFoundError':
    case 'OverconstrainedError':
      return t('media.micNotFound');
    case 'NotReadableError':
    case 'AbortError':
      return t('media.micBusy');
    default:
      return t('media.micUnavailable', { problem: errorText(e) });
  }
}

/** The microphone, its track and the peer connection, once a call has them. */
interface MediaParts {
  pc: RTCPeerConnection;
  mic: MediaStream;
  track: MediaStreamTrack;
  /** The call's one audio sender, made with the peer connection: the microphone's, or the hold music's while held. */
  sender: RTCRtpSender;
  /** The call was built with no STUN or TURN server: host candidates are all it gathers. */
  hostOnly: boolean;
  /** "Relay only": every path goes through a TURN server. */
  relayOnly: boolean;
}

/**
 * Where a call's media stands. `ready` holds the complete local description (the answer while
 * ringing, the offer while dialing) and, for an incoming call, the customer's candidates kept out
 * of ICE until the call is this agent's.
 */
type MediaPhase =
  | { kind: 'preparing'; done: Promise<void>; parts?: MediaParts }
  | { kind: 'ready'; parts: MediaParts; sdp: string; held: HeldCandidate[] }
  | { kind: 'answering'; parts: MediaParts; held: HeldCandidate[] }
  | { kind: 'connecting'; parts: MediaParts }
  | { kind: 'connected'; parts: MediaParts }
  | { kind: 'failed'; parts: MediaParts | undefined; reason: string; reported: boolean }
  | { kind: 'ended' };

/** What a call's sender carries: the microphone, the hold music, or no track at all. */
export type SendingKind = 'microphone' | 'music' | 'nothing';

/** Whether a call is on hold, and the music its customer hears meanwhile. */
type HoldState = { kind: 'none' } | { kind: 'held'; music: HoldMusicPlayer | undefined; musicPlays: boolean };

/** One call's media, for diagnostics (window.__softphoneMedia.sessions). */
export interface MediaSessionReport {
  localId: string;
  phase: MediaPhase['kind'];
  connection?: RTCPeerConnectionState;
  ice?: RTCIceConnectionState;
  gathering?: RTCIceGatheringState;
  signaling?: RTCSignalingState;
  micLive?: boolean;
  micEnabled?: boolean;
  /** The customer's audio plays in the window (never while held). */
  playing: boolean;
  /** How the wait for our candidates ended (complete, settled on UDP, or the cap). */
  gatheringEnded?: 'complete' | 'settled' | 'capped';
  /** The agent muted the call (kept across a hold; `micEnabled` is false while muted or held). */
  muted: boolean;
  /** On hold: the customer hears the hold music, and the agent does not hear the customer (`playing` false). */
  held: boolean;
  /** What the call's sender carries now (once the call has one). */
  sending?: SendingKind;
}

class CallMedia {
  /** Replaced at once by the preparation's own promise. */
  phase: MediaPhase = { kind: 'preparing', done: Promise.resolve() };
  audio: HTMLAudioElement | null = null;
  /** The customer's answer to our offer has been applied (it comes with every later push of the call). */
  answerApplied = false;
  disconnectTimer: ReturnType<typeof setTimeout> | undefined;
  /** The once-a-second statistics read of a connected call. */
  monitor: ReturnType<typeof setInterval> | undefined;
  /** Inbound RTP has arrived at least once: only then can media "stop". */
  mediaSeen = false;
  /** A statistics read is under way. */
  reading = false;
  /** Set while media is away (performance.now() when it went). */
  reconnectingSince: number | undefined;
  readonly quality = new QualityMonitor();
  qualityCounters: QualityCounters | undefined;
  qualitySamples: QualitySample[] = [];
  /** Every how many seconds a sample is kept (doubles as the call grows). */
  sampleStride = 1;
  secondsSampled = 0;
  path: SelectedCandidatePair | undefined;
  /** The last second's reading, for diagnostics and the quality bench. */
  lastQuality: { sample: QualitySample; mos?: number; warnings: QualityWarningKind[] } | undefined;
  muted = false;
  hold: HoldState = { kind: 'none' };
  /** Sender changes (hold, resume, a new microphone) run one after another: each puts what is wanted at its turn. */
  senderChanges: Promise<void> = Promise.resolve();
  /** The microphone device the track was asked for ('' = the system default). */
  micDevice = '';
  /** Device switches run one after another, so two quick choices cannot race on the sender. */
  switching: Promise<void> = Promise.resolve();
  /** Stops listening for the current microphone track's `ended`. */
  unwatchMicrophone: () => void = () => undefined;
  /** How the wait for our candidates ended: gathering complete, settled on UDP, or the cap. */
  gathering: 'complete' | 'settled' | 'capped' | undefined;
  /** Set once the store has shown this call: only then may a snapshot without it close it. */
  seen = false;
  lastEnergy: { energy: number; duration: number } | null = null;

  constructor(readonly localId: string) {}

  get parts(): MediaParts | undefined {
    const p = this.phase;
    return p.kind === 'ended' ? undefined : p.parts;
  }

  get ended(): boolean {
    return this.phase.kind === 'ended';
  }

  get held(): boolean {
    return this.hold.kind === 'held';
  }

  /** The microphone may sound on the sender: neither muted nor held. */
  get micOpen(): boolean {
    return !this.muted && !this.held;
  }
}

export class MediaEngine {
  private readonly sessions = new Map<string, CallMedia>();
  private readonly timings = new Map<string, CallTimings>();
  private readonly factListeners = new Set<(fact: MediaFact) => void>();
  private readonly conditionListeners = new Set<(condition: MediaCondition) => void>();
  private readonly qualityListeners = new Set<(record: CallQualityRecord) => void>();
  private readonly onNotice: (localId: string, text: string) => void;
  private readonly getUserMedia: (constraints: MediaStreamConstraints) => Promise<MediaStream>;
  private readonly createPeerConnection: (config: RTCConfiguration) => RTCPeerConnection;
  private readonly iceConfig: () => Promise<Result<IceConfig>>;
  private readonly audioParent: () => HTMLElement;
  private readonly createAudioElement: () => HTMLAudioElement;
  private readonly gatherCapMs: number;
  private readonly disconnectGraceMs: number;
  private holdMusicSource: HoldMusicSource | undefined;
  private routing: AudioRouting = { microphone: '', speaker: '' };
  /** Settles once the latest routing handed to useDevices() is known. */
  private routingKnown: Promise<void> = Promise.resolve();
  private routingSeq = 0;

  constructor(options: MediaEngineOptions = {}) {
    this.onNotice = options.onNotice ?? (() => undefined);
    this.getUserMedia = options.getUserMedia ?? ((c) => navigator.mediaDevices.getUserMedia(c));
    this.createPeerConnection = options.createPeerConnection ?? ((c) => new RTCPeerConnection(c));
    this.iceConfig = options.iceConfig ?? (() => Promise.resolve(ok(NO_SERVERS)));
    this.audioParent = options.audioParent ?? (() => document.body);
    this.createAudioElement = options.createAudioElement ?? (() => document.createElement('audio'));
    this.gatherCapMs = options.gatherCapMs ?? GATHER_CAP_MS;
    this.disconnectGraceMs = options.disconnectGraceMs ?? DISCONNECT_GRACE_MS;
    this.holdMusicSource = options.holdMusic;
  }

  /** Media facts (connected, failed), for the calls domain to report to the main process. */
  onFact(listener: (fact: MediaFact) => void): () => void {
    this.factListeners.add(listener);
    return () => this.factListeners.delete(listener);
  }

  /** Media stopping and coming back on connected calls ("Reconnecting…"). */
  onCondition(listener: (condition: MediaCondition) => void): () => void {
    this.conditionListeners.add(listener);
    return () => this.conditionListeners.delete(listener);
  }

  /** A call's quality summary and samples, once its media closes (only calls that connected). */
  onCallQuality(listener: (record: CallQualityRecord) => void): () => void {
    this.qualityListeners.add(listener);
    return () => this.qualityListeners.delete(listener);
  }

  has(localId: string): boolean {
    return this.sessions.has(localId);
  }

  /** Follows the main process's view of a call. Safe to call with every push, in any order. */
  onCall(call: CallState): void {
    const session = this.sessions.get(call.localId);
    if (session) session.seen = true;
    if (session && call.phase !== 'ended') this.followHold(session, call);
    switch (call.phase) {
      case 'ringing':
        if (call.direction === 'incoming') this.prepareIncoming(call.localId, call.offerSdp);
        return;
      case 'connecting':
      case 'active':
        if (call.direction === 'outgoing' && 'answerSdp' in call && call.answerSdp) void this.applyAnswer(call.localId, call.answerSdp);
        return;
      case 'ended':
        this.close(call.localId);
        return;
      case 'answering':
      case 'dialing':
      case 'calling':
      case 'remote_ringing':
        return;
    }
  }

  /** After a snapshot: media for calls the main process no longer has live is closed. */
  reconcile(calls: readonly CallState[]): void {
    const live = new Set(calls.filter((c) => c.phase !== 'ended').map((c) => c.localId));
    for (const [localId, session] of this.sessions) if (session.seen && !live.has(localId)) this.close(localId);
    for (const call of calls) this.onCall(call);
  }

  /**
   * Ringing: open the microphone, apply the customer's offer without its candidates, make and apply
   * the answer, and gather. Nothing is sent to the customer: with no remote candidate there is
   * nobody to check.
   */
  prepareIncoming(localId: string, offerSdp: string): void {
    if (this.sessions.has(localId)) return;
    const session = new CallMedia(localId);
    this.sessions.set(localId, session);
    const done = this.setUpIncoming(session, offerSdp).catch((e: unknown) => {
      const reason = e instanceof MediaSetupError ? e.message : t('media.notPrepared', { problem: errorText(e) });
      if (session.ended) return;
      log.warn('could not prepare an incoming call', { localId, problem: reason });
      session.phase = { kind: 'failed', parts: session.parts, reason, reported: false };
    });
    session.phase = { kind: 'preparing', done };
  }

  /**
   * The Answer click, media side: the complete answer, made while the call rang. A preparation
   * that failed (e.g. the microphone was refused) is tried once more, now that the agent is here to
   * see a permission prompt. Nothing reaches the customer until connect().
   */
  async answerFor(call: Extract<CallState, { direction: 'incoming' }>): Promise<Result<{ sdp: string }>> {
    const { localId } = call;
    let session = this.sessions.get(localId);
    if (session?.phase.kind === 'failed' && !session.phase.reported) {
      this.close(localId);
      session = undefined;
    }
    if (!session) {
      this.prepareIncoming(localId, call.offerSdp);
      session = this.sessions.get(localId)!;
    }
    // The click is the user gesture that autoplay rules wait for.
    session.audio?.play().catch(() => undefined);
    if (session.phase.kind === 'preparing') await session.phase.done;
    const phase = session.phase as MediaPhase;
    switch (phase.kind) {
      case 'ready':
        session.phase = { kind: 'answering', parts: phase.parts, held: phase.held };
        return ok({ sdp: phase.sdp });
      case 'failed':
        this.onNotice(localId, phase.reason);
        this.close(localId);
        return err('media_failed', phase.reason);
      case 'ended':
        return err('invalid_state', t('media.endedBeforeAnswer'));
      default:
        return err('invalid_state', t('media.alreadyAnswering'));
    }
  }

  /**
   * The call is this agent's and the service has our answer: now, and not before, the customer's
   * address is known to ICE. Checks that arrived before the service knew our answer would go
   * unanswered or start DTLS against a peer not ready for it, and the retransmission back-off would
   * clip the start of the call (protocol.md).
   */
  connect(localId: string): void {
    const session = this.sessions.get(localId);
    if (session?.phase.kind !== 'answering') return;
    const { parts, held } = session.phase;
    session.phase = { kind: 'connecting', parts };
    // The peer connection queues them in order; a refused one is logged, and ICE goes on with the rest.
    for (const c of held) {
      parts.pc.addIceCandidate(c).catch((e: unknown) => {
        log.warn('a candidate in the customer\'s offer was refused', { localId, candidate: c.candidate, problem: errorText(e) });
      });
    }
    // Then no more will come (the offer's a=end-of-candidates).
    const last = held[held.length - 1];
    if (last) parts.pc.addIceCandidate({ candidate: '', sdpMid: last.sdpMid, sdpMLineIndex: last.sdpMLineIndex }).catch(() => undefined);
    this.onConnectionState(session, parts.pc);
  }

  /**
   * A call being placed: microphone, one audio track, a complete offer. The calls domain sends it
   * with startCall; the customer's answer comes with the call's push.
   */
  async prepareOutgoing(localId: string): Promise<Result<{ sdp: string }>> {
    if (this.sessions.has(localId)) return err('invalid_state', t('media.alreadyHasMedia'));
    const started = performance.now();
    const session = new CallMedia(localId);
    this.sessions.set(localId, session);
    const done = (async () => {
      const parts = await this.peerWithMicrophone(session);
      if (!parts) return;
      const { pc } = parts;
      // The service's media relays are reached over UDP (protocol.md; TCP only through TURN), and an
      // ice-lite peer never dials our TCP host candidates: with host candidates only, settle on UDP
      // rather than wait ~120 ms for Chromium's TCP phase. With STUN/TURN servers, wait for them
      // (their answers come later than host candidates), never longer than the cap.
      const gathering = watchIceGathering(pc, { capMs: this.gatherCapMs, settleOnUdp: parts.hostOnly, firstCandidateGraceMs: graceFor(parts) });
      await pc.setLocalDescription(await pc.createOffer());
      session.gathering = await gathering.done;
      const sdp = normaliseSdp(pc.localDescription?.sdp ?? '');
      requireRelayCandidate(parts, sdp);
      const checked = checkOfferSdp(sdp);
      if (!checked.ok) throw new MediaSetupError(t('media.offerUnsendable', { problem: checked.error.message }));
      if (!session.ended) session.phase = { kind: 'ready', parts, sdp, held: [] };
    })();
    session.phase = { kind: 'preparing', done };
    try {
      await done;
    } catch (e) {
      this.close(localId);
      return err('media_failed', e instanceof MediaSetupError ? e.message : t('media.notSetUp', { problem: errorText(e) }));
    }
    const phase = session.phase as MediaPhase;
    if (phase.kind !== 'ready') return err('invalid_state', t('media.endedBeforePlaced'));
    this.noteTiming(localId, { offerToSendMs: Math.round(performance.now() - started) });
    return ok({ sdp: phase.sdp });
  }

  /** The customer's answer to our offer (outgoing call reached 'connecting'). Applied once. */
  private async applyAnswer(localId: string, answerSdp: string): Promise<void> {
    const session = this.sessions.get(localId);
    if (!session || session.answerApplied) return;
    session.answerApplied = true;
    try {
      if (session.phase.kind === 'preparing') await session.phase.done;
      const phase = session.phase as MediaPhase;
      if (phase.kind !== 'ready') return;
      session.phase = { kind: 'connecting', parts: phase.parts };
      await phase.parts.pc.setRemoteDescription({ type: 'answer', sdp: answerSdp });
    } catch (e) {
      if (session.ended) return;
      const reason = t('media.answerUnusable', { problem: errorText(e) });
      this.onNotice(localId, reason);
      this.reportFailed(session, reason);
    }
  }

  setMuted(localId: string, muted: boolean): void {
    const session = this.sessions.get(localId);
    if (!session) return;
    session.muted = muted;
    // Never remove the track: the service ends a call that stops sending (protocol.md, 138022).
    // A held call keeps its microphone closed: the mute is applied when it is resumed.
    const track = session.parts?.track;
    if (track) track.enabled = session.micOpen;
  }

  /**
   * The speaker calls play on ('' = the system default): the device handed to useDevices(). The
   * call-waiting tone plays there, beside the call the agent is on.
   */
  speakerId(): string {
    return this.routing.speaker;
  }

  /** Where the hold music comes from once it has played: the bundled file, or rendered in the window. */
  holdMusicOrigin(): 'file' | 'rendered' | undefined {
    return this.holdMusicSource instanceof HoldMusic ? this.holdMusicSource.origin() : undefined;
  }

  /** RFC 4733 tones through the audio sender (telephone-event/8000, protocol.md). */
  sendDtmf(localId: string, tones: string): boolean {
    const dtmf = this.sessions.get(localId)?.parts?.sender.dtmf;
    if (!dtmf || !dtmf.canInsertDTMF) return false;
    // insertDTMF replaces the tones still waiting (WebRTC 1.0 RTCDTMFSender): keys pressed while
    // a tone plays would be lost, so they join the queue instead.
    dtmf.insertDTMF(dtmf.toneBuffer + tones, 100, 70);
    return true;
  }

  /** Closes the call's media: peer connection, microphone, remote audio. Idempotent. */
  close(localId: string): void {
    const session = this.sessions.get(localId);
    if (!session) return;
    this.sessions.delete(localId);
    const parts = session.parts;
    session.phase = { kind: 'ended' };
    if (session.disconnectTimer !== undefined) clearTimeout(session.disconnectTimer);
    if (session.monitor !== undefined) clearInterval(session.monitor);
    if (session.reconnectingSince !== undefined) this.emitCondition({ localId, reconnecting: false });
    if (session.secondsSampled > 0) this.emitQuality(session, parts?.pc);
    session.unwatchMicrophone();
    if (session.hold.kind === 'held') session.hold.music?.stop();
    session.hold = { kind: 'none' };
    try {
      parts?.pc.close();
    } catch (e) {
      log.warn('closing a peer connection failed', { localId, problem: errorText(e) });
    }
    parts?.mic.getTracks().forEach((t) => t.stop());
    if (session.audio) {
      session.audio.pause();
      session.audio.srcObject = null;
      session.audio.remove();
    }
  }

  closeAll(): void {
    for (const localId of [...this.sessions.keys()]) this.close(localId);
  }

  /**
   * The devices calls use from now on, and at once for the calls under way: a new microphone track
   * through replaceTrack (no renegotiation: the service has none), the remote audio through
   * setSinkId. A routing still being worked out (a promise) holds new captures back for at most
   * ROUTING_WAIT_MS, so a call placed right after start-up opens the chosen microphone.
   */
  useDevices(routing: AudioRouting | Promise<AudioRouting>): Promise<void> {
    const seq = ++this.routingSeq;
    const applied = Promise.resolve(routing).then(
      async (next) => {
        if (seq !== this.routingSeq) return;
        this.routing = { ...next };
        await Promise.all([...this.sessions.values()].map((session) => this.routeLive(session, next)));
      },
      (e: unknown) => log.warn('the audio devices could not be worked out', { problem: errorText(e) }),
    );
    this.routingKnown = applied;
    return applied;
  }

  /** The microphone track and the speaker of a call (the newest one without a localId), for tests and diagnostics. */
  audioRouteOf(localId?: string): { micDeviceId: string; micLabel: string; micEnabled: boolean; micLive: boolean; sinkId: string } | undefined {
    const session = localId !== undefined ? this.sessions.get(localId) : [...this.sessions.values()].pop();
    const track = session?.parts?.track;
    if (!session || !track) return undefined;
    return {
      micDeviceId: track.getSettings().deviceId ?? '',
      micLabel: track.label,
      micEnabled: track.enabled,
      micLive: track.readyState === 'live',
      sinkId: session.audio?.sinkId ?? '',
    };
  }

  // ---- hold ----

  /** The main process's word on the hold (CallState `heldSince`): hold or resume when it changes. */
  private followHold(session: CallMedia, call: CallState): void {
    const held = isHeld(call);
    if (held === session.held) return;
    if (held) this.hold(session);
    else this.resume(session);
  }

  /**
   * Hold: the microphone is closed at once (it goes on sending silence, and stays open underneath
   * for the resume), the agent no longer hears the customer, and once the music plays it takes the
   * microphone's place on the same sender (no new sender, no renegotiation: the RTP stream goes on).
   */
  private hold(session: CallMedia): void {
    let music: HoldMusicPlayer | undefined;
    try {
      music = this.holdMusic().play();
    } catch (e) {
      // The closed microphone still sends silence: never the agent, never nothing.
      log.error('no hold music: the held call sends silence', { localId: session.localId, problem: errorText(e) });
    }
    const hold: HoldState = { kind: 'held', music, musicPlays: false };
    session.hold = hold;
    log.info('call held', { localId: session.localId });
    const track = session.parts?.track;
    if (track) track.enabled = false;
    if (session.audio) {
      session.audio.muted = true;
      session.audio.pause();
    }
    void music?.ready.then((plays) => {
      // A resume, or another hold, came first: this music is not wanted any more.
      if (session.hold !== hold || session.ended) return;
      if (!plays) {
        log.warn('no hold music: the held call sends silence', { localId: session.localId });
        return;
      }
      hold.musicPlays = true;
      this.changeSender(session).then(
        () => log.info('the held customer hears the hold music', { localId: session.localId }),
        (e: unknown) => log.error('the hold music could not replace the microphone: the held call sends silence', { localId: session.localId, problem: errorText(e) }),
      );
    });
  }

  /** Resume: the microphone (the one chosen now, muted or not as before) is back on the sender at once. */
  private resume(session: CallMedia): void {
    const music = session.hold.kind === 'held' ? session.hold.music : undefined;
    session.hold = { kind: 'none' };
    log.info('call resumed', { localId: session.localId });
    const track = session.parts?.track;
    if (track) track.enabled = session.micOpen;
    if (session.audio) {
      session.audio.muted = false;
      session.audio.play().catch((e: unknown) => log.debug('remote audio did not start again', { localId: session.localId, problem: errorText(e) }));
    }
    // The music stops once the microphone is on the sender: a stopped track there would send nothing
    // meanwhile. Should the microphone not go back, the music plays on rather than leave the call silent.
    this.changeSender(session).then(
      () => music?.stop(),
      (e: unknown) => {
        log.error('the microphone could not be put back on the resumed call: the music goes on', { localId: session.localId, problem: errorText(e) });
        // Still held as far as the sender goes: the next change of the call tries again, and close() stops the music.
        if (session.hold.kind === 'none' && music) session.hold = { kind: 'held', music, musicPlays: true };
      },
    );
  }

  private holdMusic(): HoldMusicSource {
    this.holdMusicSource ??= new HoldMusic();
    return this.holdMusicSource;
  }

  /**
   * Puts on the call's sender what it should carry now: while held, the hold music once it plays
   * (until then, or without music, the closed microphone: silence), else the microphone. Changes run
   * in order, each deciding at its turn, so a hold, a resume and a new microphone in quick
   * succession end with the latest wish. Rejects when replaceTrack does; the next change still runs.
   */
  private changeSender(session: CallMedia): Promise<void> {
    const change = session.senderChanges.then(async () => {
      const parts = session.parts;
      if (!parts || session.ended) return;
      const hold = session.hold;
      const wanted = hold.kind === 'held' && hold.musicPlays && hold.music ? hold.music.track : parts.track;
      if (parts.sender.track !== wanted) await parts.sender.replaceTrack(wanted);
    });
    session.senderChanges = change.catch(() => undefined);
    return change;
  }

  /**
   * The chosen microphone, or the default when it is gone: a call is never refused for want of a
   * device the agent once chose.
   */
  private async openMicrophone(session: CallMedia): Promise<MediaStream> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.routingKnown, new Promise((resolve) => (timer = setTimeout(resolve, ROUTING_WAIT_MS)))]);
    clearTimeout(timer);
    const wanted = this.routing.microphone;
    if (wanted !== '') {
      try {
        const mic = await this.getUserMedia(microphoneConstraints(wanted));
        session.micDevice = wanted;
        return mic;
      } catch (e) {
        if (!isMissingDevice(e)) throw e;
        log.info('the chosen microphone is not here: using the default', { localId: session.localId });
      }
    }
    session.micDevice = '';
    return this.getUserMedia(MIC_CONSTRAINTS);
  }

  private routeLive(session: CallMedia, routing: AudioRouting): Promise<void> {
    if (session.audio) this.applySink(session, session.audio, routing.speaker);
    session.switching = session.switching.then(() => this.switchMicrophone(session, routing));
    return session.switching;
  }

  /**
   * A track the browser ended (its device went away, the system default included, or the capture
   * failed) sends nothing more, and with the default chosen before and after, no routing change
   * would ever notice: the track's own `ended` brings the capture back.
   */
  private watchMicrophone(session: CallMedia, track: MediaStreamTrack): void {
    session.unwatchMicrophone();
    const onEnded = (): void => {
      if (session.ended || session.parts?.track !== track) return;
      log.info('the microphone track ended: capturing again', { localId: session.localId });
      void this.routeLive(session, this.routing);
    };
    track.addEventListener('ended', onEnded);
    session.unwatchMicrophone = () => track.removeEventListener('ended', onEnded);
  }

  private async switchMicrophone(session: CallMedia, routing: AudioRouting): Promise<void> {
    const parts = session.parts;
    // An ended track is captured again even on the same device (e.g. a devicechange after it went).
    const lost = parts?.track.readyState === 'ended';
    if (!parts || (session.micDevice === routing.microphone && !lost)) return;
    let mic: MediaStream;
    try {
      mic = await this.getUserMedia(microphoneConstraints(routing.microphone));
    } catch (e) {
      if (routing.microphone !== '' && isMissingDevice(e)) return this.switchMicrophone(session, { ...routing, microphone: '' });
      // A live old track keeps sending what it can: a call never goes silent for a switch that failed.
      this.onNotice(
        session.localId,
        lost ? t('media.micLost', { problem: microphoneErrorText(e) }) : t('media.micNotSwitched', { problem: microphoneErrorText(e) }),
      );
      return;
    }
    const track = mic.getAudioTracks()[0];
    if (!track || session.ended || session.parts !== parts) {
      mic.getTracks().forEach((t) => t.stop());
      return;
    }
    track.enabled = session.micOpen;
    const old = { mic: parts.mic, track: parts.track };
    // Every phase holds this same parts object: mute, levels, resume and close() now reach the new
    // track. A held call only keeps it: the sender goes on with the music until the resume.
    parts.mic = mic;
    parts.track = track;
    try {
      await this.changeSender(session);
    } catch (e) {
      if (parts.track === track) {
        parts.mic = old.mic;
        parts.track = old.track;
      }
      mic.getTracks().forEach((t) => t.stop());
      this.onNotice(session.localId, t('media.micSwitchFailed', { problem: errorText(e) }));
      return;
    }
    session.micDevice = routing.microphone;
    this.watchMicrophone(session, track);
    old.mic.getTracks().forEach((t) => t.stop());
    old.track.stop();
  }

  private applySink(session: CallMedia, audio: HTMLAudioElement, sinkId: string): void {
    if (typeof audio.setSinkId !== 'function' || audio.sinkId === sinkId) return;
    audio.setSinkId(sinkId).catch((e: unknown) => {
      // The speaker vanished between the choice and now: the default carries on.
      log.warn('the speaker could not be chosen', { localId: session.localId, problem: errorText(e) });
      if (sinkId !== '') audio.setSinkId('').catch(() => undefined);
    });
  }

  async levels(localId: string): Promise<CallLevels> {
    const session = this.sessions.get(localId);
    const pc = session?.parts?.pc;
    if (!session || !pc) return { mic: 0, customer: 0 };
    const { mediaSource, inbound } = await readAudioStats(pc);
    // Held, the sender's source is the music: nothing of the microphone goes out.
    const mic = session.micOpen ? clamp01(numberField(mediaSource, 'audioLevel') ?? 0) : 0;
    let customer = numberField(inbound, 'audioLevel');
    const energy = numberField(inbound, 'totalAudioEnergy');
    const duration = numberField(inbound, 'totalSamplesDuration');
    if (customer === undefined && energy !== undefined && duration !== undefined) {
      // RMS over the last interval from the running energy sum (webrtc-stats: audioLevel² × seconds).
      const last = session.lastEnergy;
      customer = last && duration > last.duration ? Math.sqrt(Math.max(0, energy - last.energy) / (duration - last.duration)) : 0;
    }
    if (energy !== undefined && duration !== undefined) session.lastEnergy = { energy, duration };
    return { mic, customer: clamp01(customer ?? 0) };
  }

  /** Statistics of one call; without a localId, of the newest call that has media. */
  async stats(localId?: string): Promise<CallStats> {
    const session = localId !== undefined ? this.sessions.get(localId) : [...this.sessions.values()].pop();
    const pc = session?.parts?.pc;
    if (!pc) return { inboundEnergy: 0, inboundLevel: 0, outboundPackets: 0, inboundPackets: 0 };
    const { inbound, outbound } = await readAudioStats(pc);
    return {
      inboundEnergy: numberField(inbound, 'totalAudioEnergy') ?? 0,
      inboundLevel: numberField(inbound, 'audioLevel') ?? 0,
      outboundPackets: numberField(outbound, 'packetsSent') ?? 0,
      inboundPackets: numberField(inbound, 'packetsReceived') ?? 0,
    };
  }

  /**
   * The path a call's media takes: the selected candidate pair's local and remote candidate types
   * ('host', 'srflx', 'prflx', 'relay') and, for a relay, how this side reaches its TURN server.
   */
  async candidatePath(localId?: string): Promise<CandidatePath | undefined> {
    const session = localId !== undefined ? this.sessions.get(localId) : [...this.sessions.values()].pop();
    const pc = session?.parts?.pc;
    if (!pc) return undefined;
    const report = await pc.getStats();
    const records = new Map<string, StatsRecord>();
    report.forEach((value: unknown) => {
      if (typeof value === 'object' && value !== null && typeof (value as StatsRecord).id === 'string') records.set((value as StatsRecord).id as string, value as StatsRecord);
    });
    const transport = [...records.values()].find((r) => r.type === 'transport' && typeof r.selectedCandidatePairId === 'string');
    const pair = transport ? records.get(transport.selectedCandidatePairId as string) : undefined;
    const local = typeof pair?.localCandidateId === 'string' ? records.get(pair.localCandidateId) : undefined;
    const remote = typeof pair?.remoteCandidateId === 'string' ? records.get(pair.remoteCandidateId) : undefined;
    if (!local || !remote) return undefined;
    return {
      local: String(local.candidateType),
      remote: String(remote.candidateType),
      ...(typeof local.relayProtocol === 'string' ? { relayProtocol: local.relayProtocol } : {}),
    };
  }

  /**
   * A call's quality as the engine judges it now: the last second's sample and MOS, the warnings in
   * force, "Reconnecting…", and the summary so far (without a localId, the newest call's).
   */
  qualityOf(localId?: string): { reconnecting: boolean; sample?: QualitySample; mos?: number; warnings: QualityWarningKind[]; summary: QualitySummary } | undefined {
    const session = localId !== undefined ? this.sessions.get(localId) : [...this.sessions.values()].pop();
    if (!session) return undefined;
    const last = session.lastQuality;
    return {
      reconnecting: session.reconnectingSince !== undefined && session.mediaSeen,
      ...(last ? { sample: last.sample, ...(last.mos !== undefined ? { mos: last.mos } : {}) } : {}),
      warnings: last?.warnings ?? [],
      summary: session.quality.summary(),
    };
  }

  /** Every call's media as it stands (phase, peer connection states, microphone), for diagnostics. */
  describe(): MediaSessionReport[] {
    return [...this.sessions.values()].map((session) => {
      const parts = session.parts;
      const pc = parts?.pc;
      const track = parts?.track;
      return {
        localId: session.localId,
        phase: session.phase.kind,
        ...(pc && {
          connection: pc.connectionState,
          ice: pc.iceConnectionState,
          gathering: pc.iceGatheringState,
          signaling: pc.signalingState,
        }),
        ...(track && { micLive: track.readyState === 'live', micEnabled: track.enabled }),
        playing: session.audio ? !session.audio.paused && !session.audio.muted : false,
        ...(session.gathering ? { gatheringEnded: session.gathering } : {}),
        muted: session.muted,
        held: session.held,
        ...(parts ? { sending: sendingOf(session, parts) } : {}),
      };
    });
  }

  /** Timings of one call; without a localId, of the newest call that has any. */
  timingsOf(localId?: string): CallTimings {
    const key = localId ?? [...this.timings.keys()].pop();
    return { ...(key !== undefined ? this.timings.get(key) : undefined) };
  }

  /** Keeps a call-path timing for the test hook (window.__softphoneMedia.timings). */
  noteTiming(localId: string, patch: CallTimings): void {
    this.timings.set(localId, { ...this.timings.get(localId), ...patch });
    // Only recent calls matter to anyone reading these.
    if (this.timings.size > 50) this.timings.delete(this.timings.keys().next().value!);
  }

  /**
   * The microphone, then the peer connection with its track; undefined when the call ended
   * meanwhile. The microphone comes first: with media permission granted, Chromium puts plain host
   * addresses in the candidates instead of registering mDNS names (which would multicast on the LAN).
   */
  private async peerWithMicrophone(session: CallMedia): Promise<MediaParts | undefined> {
    // Asked while the microphone opens: it is normally at hand already (IceConfigSource fetches ahead).
    const asked = this.iceConfig().catch((e: unknown) => err('internal', t('media.networkSettingsUnread', { problem: errorText(e) })));
    let mic: MediaStream;
    try {
      mic = await this.openMicrophone(session);
    } catch (e) {
      throw new MediaSetupError(microphoneErrorText(e));
    }
    const ice = await asked;
    if (session.ended || !ice.ok) {
      mic.getTracks().forEach((t) => t.stop());
      if (!ice.ok && !session.ended) throw new MediaSetupError(ice.error.message);
      return undefined;
    }
    const track = mic.getAudioTracks()[0];
    if (!track) {
      mic.getTracks().forEach((t) => t.stop());
      throw new MediaSetupError(t('media.micNoTrack'));
    }
    const { iceServers, iceTransportPolicy } = ice.value;
    const pc = this.createPeerConnection({ ...PEER_CONFIG, iceServers, iceTransportPolicy });
    pc.addEventListener('track', (ev) => {
      if (!session.ended) this.playRemote(session, ev.streams[0] ?? new MediaStream([ev.track]));
    });
    pc.addEventListener('connectionstatechange', () => this.onConnectionState(session, pc));
    track.enabled = session.micOpen;
    const sender = pc.addTrack(track, mic);
    const parts: MediaParts = { pc, mic, track, sender, hostOnly: iceServers.length === 0 && iceTransportPolicy === 'all', relayOnly: iceTransportPolicy === 'relay' };
    this.watchMicrophone(session, track);
    // From here a close() releases them, whatever the preparation is waiting for.
    if (session.phase.kind === 'preparing') session.phase = { ...session.phase, parts };
    // The choice changed while the microphone was opening: the call follows it now.
    if (session.micDevice !== this.routing.microphone) void this.routeLive(session, this.routing);
    // Held before its media was ready (a snapshot): the music, if it plays already, takes the sender now.
    if (session.held) this.changeSender(session).catch((e: unknown) => log.error('the hold music could not take the sender', { localId: session.localId, problem: errorText(e) }));
    return parts;
  }

  private async setUpIncoming(session: CallMedia, offerSdp: string): Promise<void> {
    const offer = describeOffer(offerSdp);
    const offerUdpOnly = offer.ok && offer.value.candidateTransports.length > 0 && offer.value.candidateTransports.every((t) => t === 'udp');
    const parts = await this.peerWithMicrophone(session);
    if (!parts) return;
    const { pc } = parts;
    const held = holdBackCandidates(offerSdp);
    try {
      await pc.setRemoteDescription({ type: 'offer', sdp: held.sdp });
    } catch (e) {
      throw new MediaSetupError(t('media.offerUnusable', { problem: errorText(e) }));
    }
    if (session.ended) return;
    const gathering = watchIceGathering(pc, { capMs: this.gatherCapMs, settleOnUdp: offerUdpOnly && parts.hostOnly, firstCandidateGraceMs: graceFor(parts) });
    try {
      await pc.setLocalDescription(await pc.createAnswer());
    } catch (e) {
      gathering.cancel();
      throw new MediaSetupError(t('media.answerNotMade', { problem: errorText(e) }));
    }
    session.gathering = await gathering.done;
    const sdp = normaliseSdp(pc.localDescription?.sdp ?? '');
    requireRelayCandidate(parts, sdp);
    const checked = checkAnswerSdp(sdp);
    if (!checked.ok) throw new MediaSetupError(t('media.answerUnsendable', { problem: checked.error.message }));
    if (!session.ended) session.phase = { kind: 'ready', parts, sdp, held: held.candidates };
  }

  private playRemote(session: CallMedia, stream: MediaStream): void {
    const audio = session.audio ?? this.createAudioElement();
    session.audio = audio;
    audio.autoplay = true;
    // A held customer is not heard; resume() lets it play again.
    audio.muted = session.held;
    audio.dataset.call = session.localId;
    if (audio.srcObject !== stream) audio.srcObject = stream;
    this.applySink(session, audio, this.routing.speaker);
    if (!audio.isConnected) this.audioParent().append(audio);
    if (session.held) return;
    // During ringing there is no user gesture yet and autoplay may refuse; answerFor() plays it again.
    audio.play().catch((e: unknown) => log.debug('remote audio did not start yet', { localId: session.localId, problem: errorText(e) }));
  }

  private onConnectionState(session: CallMedia, pc: RTCPeerConnection): void {
    const phase = session.phase;
    // Before connect() no check can have gone out: whatever the state says, it is not this call's yet.
    if (phase.kind !== 'connecting' && phase.kind !== 'connected') return;
    const state = pc.connectionState;
    log.info('media connection', { localId: session.localId, state, ice: pc.iceConnectionState });
    switch (state) {
      case 'connected':
        if (phase.kind === 'connecting') {
          session.phase = { kind: 'connected', parts: phase.parts };
          this.emit({ localId: session.localId, state: 'connected' });
          this.startMonitor(session);
        }
        // Whether media really flows again is for the next statistics read to say.
        return;
      case 'disconnected':
        // No ICE restart exists on this leg (protocol.md): the path comes back by itself or not at all.
        if (phase.kind === 'connected') this.mediaAway(session);
        return;
      case 'failed': {
        let reason: string;
        if (phase.kind === 'connected') reason = t('media.networkLost');
        else if (pc.iceConnectionState === 'failed') reason = t('media.iceFailed');
        else reason = t('media.dtlsFailed');
        this.reportFailed(session, reason);
        return;
      }
      default:
        return;
    }
  }

  /** Once a second while connected: does media flow? (and, from the same read, how well). */
  private startMonitor(session: CallMedia): void {
    if (session.monitor !== undefined) return;
    session.monitor = setInterval(() => void this.checkMedia(session), MONITOR_INTERVAL_MS);
  }

  private async checkMedia(session: CallMedia): Promise<void> {
    const pc = session.parts?.pc;
    // A read that outlasts the interval is not overlapped: two reads would diff the same counters.
    if (!pc || session.phase.kind !== 'connected' || session.reading) return;
    let report: RTCStatsReport;
    session.reading = true;
    try {
      report = await pc.getStats();
    } catch (e) {
      log.debug('reading call statistics failed', { localId: session.localId, problem: errorText(e) });
      return;
    } finally {
      session.reading = false;
    }
    if (session.phase.kind !== 'connected') return;
    const pathUp = pc.connectionState === 'connected' && pc.iceConnectionState !== 'disconnected';
    // Held, the microphone is not sent: its silence is no warning.
    const reading = readQualitySample(report, session.qualityCounters, { at: Date.now(), micMuted: !session.micOpen, connected: pathUp });
    session.qualityCounters = reading.counters;
    if (reading.pair) session.path = reading.pair;
    this.keepSample(session, reading.sample);
    const step = session.quality.push(reading.sample);
    session.lastQuality = { sample: reading.sample, ...(step.mos !== undefined ? { mos: step.mos } : {}), warnings: step.active.map((w) => w.kind) };

    // Media flows while inbound packets arrive: one second without any is enough to say so (a
    // silent customer's phone still sends comfort noise or DTX packets several times a second).
    const flowing = reading.sample.packetsReceived > 0;
    if (flowing && pathUp) {
      session.mediaSeen = true;
      this.mediaBack(session);
    } else {
      this.mediaAway(session);
    }
    const reconnecting = session.reconnectingSince !== undefined && session.mediaSeen;
    this.emitCondition({
      localId: session.localId,
      reconnecting,
      ...(reconnecting ? { since: session.reconnectingSince } : {}),
      ...(step.mos !== undefined ? { mos: step.mos } : {}),
      // "Reconnecting…" says the media stopped; the same fact as a warning would say it twice.
      warnings: step.active.filter((w) => w.kind !== 'no-inbound-media').map((w) => ({ kind: w.kind, ...(w.value !== undefined ? { value: w.value } : {}), text: w.text })),
    });
  }

  /** Keeps evenly spread seconds, at most QUALITY_SAMPLES_KEPT: every other one is dropped when full. */
  private keepSample(session: CallMedia, sample: QualitySample): void {
    if (session.secondsSampled++ % session.sampleStride !== 0) return;
    session.qualitySamples.push(sample);
    if (session.qualitySamples.length >= QUALITY_SAMPLES_KEPT) {
      session.qualitySamples = session.qualitySamples.filter((_, i) => i % 2 === 0);
      session.sampleStride *= 2;
    }
  }

  private emitQuality(session: CallMedia, pc: RTCPeerConnection | undefined): void {
    const summarise = (sdp: string | undefined): OfferSummary | undefined => {
      const described = sdp ? describeOffer(sdp) : undefined;
      return described?.ok ? described.value : undefined;
    };
    const local = summarise(pc?.localDescription?.sdp);
    const remote = summarise(pc?.remoteDescription?.sdp);
    const record: CallQualityRecord = {
      localId: session.localId,
      summary: session.quality.summary(),
      samples: session.qualitySamples,
      ...(session.path ? { path: session.path } : {}),
      ...(local || remote ? { sdp: { ...(local ? { local } : {}), ...(remote ? { remote } : {}) } } : {}),
    };
    for (const listener of this.qualityListeners) {
      try {
        listener(record);
      } catch (e) {
        log.error('a call quality listener failed', { localId: session.localId, error: e });
      }
    }
  }

  /** Media stopped: "Reconnecting…" now, the call given up if it is not back within the grace. */
  private mediaAway(session: CallMedia): void {
    if (session.reconnectingSince !== undefined || session.ended) return;
    const since = performance.now();
    session.reconnectingSince = since;
    // Before any media has flowed there is nothing to reconnect: the grace runs, silently (a
    // customer whose first packet comes late is not a network failure on screen).
    if (session.mediaSeen) {
      log.warn('media stopped: waiting for it to come back', { localId: session.localId });
      this.emitCondition({ localId: session.localId, reconnecting: true, since });
    } else {
      log.info('no media from the customer yet: waiting for it', { localId: session.localId });
    }
    session.disconnectTimer = setTimeout(() => {
      session.disconnectTimer = undefined;
      if (!session.ended && session.reconnectingSince !== undefined) this.reportFailed(session, t('media.networkLost'));
    }, this.disconnectGraceMs);
  }

  private mediaBack(session: CallMedia): void {
    if (session.reconnectingSince === undefined) return;
    log.info('media is back', { localId: session.localId, awayMs: Math.round(performance.now() - session.reconnectingSince) });
    session.reconnectingSince = undefined;
    if (session.disconnectTimer !== undefined) clearTimeout(session.disconnectTimer);
    session.disconnectTimer = undefined;
    this.emitCondition({ localId: session.localId, reconnecting: false });
  }

  private emitCondition(condition: MediaCondition): void {
    for (const listener of this.conditionListeners) {
      try {
        listener(condition);
      } catch (e) {
        log.error('a media condition listener failed', { localId: condition.localId, error: e });
      }
    }
  }

  private reportFailed(session: CallMedia, reason: string): void {
    if (session.phase.kind === 'failed' && session.phase.reported) return;
    session.phase = { kind: 'failed', parts: session.parts, reason, reported: true };
    log.warn('media failed', { localId: session.localId, problem: reason });
    this.onNotice(session.localId, reason);
    this.emit({ localId: session.localId, state: 'failed', reason: reason.slice(0, 500) });
  }

  private emit(fact: MediaFact): void {
    for (const listener of this.factListeners) {
      try {
        listener(fact);
      } catch (e) {
        log.error('a media fact listener failed', { localId: fact.localId, error: e });
      }
    }
  }
}

/**
 * "Relay only" gathers nothing but relay candidates: a description without one means no TURN server
 * answered, and the customer could never be reached. Said now, rather than after a silent call.
 */
/** With "Relay only" no host candidate can come: an unanswering TURN server is reported at the cap. */
const graceFor = (parts: MediaParts): number => (parts.relayOnly ? 0 : FIRST_CANDIDATE_GRACE_MS);

function requireRelayCandidate(parts: MediaParts, sdp: string): void {
  if (!parts.relayOnly || /^a=candidate:.* typ relay\b/m.test(sdp)) return;
  throw new MediaSetupError(t('media.noRelay'));
}

/** What the sender carries, by the track it really has. */
function sendingOf(session: CallMedia, parts: MediaParts): SendingKind {
  const track = parts.sender.track;
  if (!track) return 'nothing';
  if (session.hold.kind === 'held' && track === session.hold.music?.track) return 'music';
  return track === parts.track ? 'microphone' : 'nothing';
}

type StatsRecord = Record<string, unknown>;

async function readAudioStats(pc: RTCPeerConnection): Promise<{ mediaSource?: StatsRecord; inbound?: StatsRecord; outbound?: StatsRecord }> {
  const report = await pc.getStats();
  let mediaSource: StatsRecord | undefined;
  let inbound: StatsRecord | undefined;
  let outbound: StatsRecord | undefined;
  report.forEach((value: unknown) => {
    if (typeof value !== 'object' || value === null) return;
    const r = value as StatsRecord;
    if (r.kind !== 'audio') return;
    if (r.type === 'media-source') mediaSource = r;
    else if (r.type === 'inbound-rtp') inbound = r;
    else if (r.type === 'outbound-rtp') outbound = r;
  });
  return { mediaSource, inbound, outbound };
}

const numberField = (r: StatsRecord | undefined, key: string): number | undefined => {
  const v = r?.[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};
const clamp01 = (v: number): number => Math.min(1, Math.max(0, v));
