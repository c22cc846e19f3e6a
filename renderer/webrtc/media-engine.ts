// The media engine: the only owner of RTCPeerConnection, MediaStream and the remote <audio>
// elements (style.md 6; the store only ever sees plain data). One CallMedia per call, keyed by the
// call's localId. The main process owns the call's state; this reports media milestones to it.
//
// protocol.md rules that shape this file:
// - Nothing may reach the customer before this agent has the call. While ringing, the offer is
//   applied without its candidates, and the answer is made, applied and gathered: with no remote
//   candidate there is nobody to check, so nothing is sent to the customer. The customer's
//   candidates, without which no ICE check (and so no DTLS) can start, are added only once the
//   claim is won and the accept is through. An agent who loses the claim has sent the customer
//   nothing.
// - Once answered, audio must start at once: the complete answer is ready before the click, so the
//   Answer click costs the claim and then the accept, nothing more.
// - Non-trickle: complete local descriptions only, line ends normalised to CRLF and nothing else.
// - No renegotiation and no ICE restart on this leg: a lost path ends the call, and we say why.
// - Mute keeps the track and sends silence (track.enabled = false).
import type { SoftphoneApi } from '../../shared/api';
import type { CallState } from '../../shared/call-state';
import { createLogger } from '../../shared/log';
import { err, ok, type Result, errorText } from '../../shared/result';
import { checkAnswerSdp, checkOfferSdp, describeOffer, holdBackCandidates, normaliseSdp, type HeldCandidate } from '../../shared/sdp';
import { errorMessage } from '../error-texts';
import { watchIceGathering } from './ice-gathering';

const log = createLogger('media');

export const MIC_CONSTRAINTS: MediaStreamConstraints = {
  audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true },
  video: false,
};

/**
 * No STUN/TURN: the service's side is ice-lite with public candidates in its offer, we are the
 * controlling full agent, and it learns our address from our checks (peer-reflexive). The pool
 * pre-gathers host candidates during ringing without sending anything to anyone.
 */
export const PEER_CONFIG: RTCConfiguration = { iceServers: [], iceCandidatePoolSize: 1, bundlePolicy: 'max-bundle' };

export const GATHER_CAP_MS = 1_500;
/** How long 'disconnected' may last before the call is given up (no ICE restart exists here). */
export const DISCONNECT_GRACE_MS = 5_000;

export type EngineApi = Pick<SoftphoneApi, 'answerCall' | 'acceptCall' | 'sendOffer' | 'reportMedia' | 'hangUp'>;

export interface MediaEngineOptions {
  api: EngineApi;
  /** A problem the agent should read on this call's panel. */
  onNotice?: (localId: string, text: string) => void;
  getUserMedia?: (constraints: MediaStreamConstraints) => Promise<MediaStream>;
  createPeerConnection?: (config: RTCConfiguration) => RTCPeerConnection;
  /** Where remote <audio> elements go; document.body by default. */
  audioParent?: () => HTMLElement;
  gatherCapMs?: number;
  disconnectGraceMs?: number;
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

export interface CallTimings {
  answerToAcceptMs?: number;
  offerToSendMs?: number;
}

/** A failure whose text is meant for the agent (and for reportMedia's reason). */
class MediaSetupError extends Error {}

/** Human text for a getUserMedia failure. */
export function microphoneErrorText(e: unknown): string {
  const name = e instanceof Error || (typeof e === 'object' && e !== null && 'name' in e) ? String((e as { name: unknown }).name) : '';
  switch (name) {
    case 'NotAllowedError':
    case 'SecurityError':
      return 'Microphone access was denied. Allow the microphone for this app, then try again.';
    case 'NotFoundError':
    case 'OverconstrainedError':
      return 'No microphone was found. Connect one, then try again.';
    case 'NotReadableError':
    case 'AbortError':
      return 'The microphone cannot be opened: another application may be using it.';
    default:
      return `The microphone is not available (${errorText(e)}).`;
  }
}


class CallMedia {
  pc: RTCPeerConnection | null = null;
  mic: MediaStream | null = null;
  track: MediaStreamTrack | null = null;
  audio: HTMLAudioElement | null = null;
  ready: Promise<void> = Promise.resolve();
  setupFailed = false;
  /** The answer's gathering during ringing: settled once its candidates are in the local description. */
  gathered: Promise<unknown> = Promise.resolve();
  /** The customer's candidates, kept out of the applied offer until this agent has won the call. */
  heldCandidates: HeldCandidate[] = [];
  offerUdpOnly = false;
  answerApplied = false;
  answering = false;
  reported: 'none' | 'connected' | 'failed' = 'none';
  everConnected = false;
  disconnectTimer: ReturnType<typeof setTimeout> | undefined;
  closed = false;
  muted = false;
  /** Set once the store has shown this call: only then may a snapshot without it close it. */
  seen = false;
  lastEnergy: { energy: number; duration: number } | null = null;

  constructor(
    readonly localId: string,
    readonly direction: 'incoming' | 'outgoing',
  ) {}
}

export class MediaEngine {
  private readonly sessions = new Map<string, CallMedia>();
  private readonly timings = new Map<string, CallTimings>();
  private readonly api: EngineApi;
  private readonly onNotice: (localId: string, text: string) => void;
  private readonly getUserMedia: (constraints: MediaStreamConstraints) => Promise<MediaStream>;
  private readonly createPeerConnection: (config: RTCConfiguration) => RTCPeerConnection;
  private readonly audioParent: () => HTMLElement;
  private readonly gatherCapMs: number;
  private readonly disconnectGraceMs: number;

  constructor(options: MediaEngineOptions) {
    this.api = options.api;
    this.onNotice = options.onNotice ?? (() => undefined);
    this.getUserMedia = options.getUserMedia ?? ((c) => navigator.mediaDevices.getUserMedia(c));
    this.createPeerConnection = options.createPeerConnection ?? ((c) => new RTCPeerConnection(c));
    this.audioParent = options.audioParent ?? (() => document.body);
    this.gatherCapMs = options.gatherCapMs ?? GATHER_CAP_MS;
    this.disconnectGraceMs = options.disconnectGraceMs ?? DISCONNECT_GRACE_MS;
  }

  has(localId: string): boolean {
    return this.sessions.has(localId);
  }

  /** Follows the main process's view of a call. Safe to call with every push, in any order. */
  onCall(call: CallState): void {
    const session = this.sessions.get(call.localId);
    if (session) session.seen = true;
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
    const session = new CallMedia(localId, 'incoming');
    this.sessions.set(localId, session);
    const offer = describeOffer(offerSdp);
    session.offerUdpOnly = offer.ok && offer.value.candidateTransports.length > 0 && offer.value.candidateTransports.every((t) => t === 'udp');
    session.ready = this.setUpIncoming(session, offerSdp);
    session.ready.catch((e: unknown) => {
      session.setupFailed = true;
      if (!session.closed) log.warn('could not prepare an incoming call', { localId, problem: errorText(e) });
    });
  }

  /**
   * The microphone, then the peer connection with its track; undefined when the call ended
   * meanwhile. The microphone comes first: with media permission granted, Chromium puts plain host
   * addresses in the candidates instead of registering mDNS names (which would multicast on the LAN).
   */
  private async peerWithMicrophone(session: CallMedia): Promise<RTCPeerConnection | undefined> {
    let mic: MediaStream;
    try {
      mic = await this.getUserMedia(MIC_CONSTRAINTS);
    } catch (e) {
      throw new MediaSetupError(microphoneErrorText(e));
    }
    if (session.closed) {
      mic.getTracks().forEach((t) => t.stop());
      return undefined;
    }
    const pc = this.newPeer(session);
    this.attachMic(session, pc, mic);
    return pc;
  }

  private async setUpIncoming(session: CallMedia, offerSdp: string): Promise<void> {
    const pc = await this.peerWithMicrophone(session);
    if (!pc) return;
    const held = holdBackCandidates(offerSdp);
    session.heldCandidates = held.candidates;
    try {
      await pc.setRemoteDescription({ type: 'offer', sdp: held.sdp });
    } catch (e) {
      throw new MediaSetupError(`The customer's offer could not be used (${errorText(e)}).`);
    }
    if (session.closed) return;
    const gathering = watchIceGathering(pc, { capMs: this.gatherCapMs, settleOnUdp: session.offerUdpOnly });
    session.gathered = gathering.done;
    try {
      await pc.setLocalDescription(await pc.createAnswer());
    } catch (e) {
      gathering.cancel();
      throw new MediaSetupError(`No answer could be made to the customer's offer (${errorText(e)}).`);
    }
  }

  /**
   * The Answer click. answerCall (the claim) and acceptCall (the answer, made while ringing) go out
   * at once; the main process sends the accept once the claim is won. When the accept is through,
   * the customer's candidates are added and ICE starts.
   */
  async answer(call: Extract<CallState, { direction: 'incoming' }>): Promise<void> {
    const { localId } = call;
    let session = this.sessions.get(localId);
    if (session?.answering) return; // a second click
    const started = performance.now();
    const claimed = this.api.answerCall({ localId });
    if (!session || session.setupFailed) {
      // Prepare failed (e.g. the microphone was refused) or never ran: one more try, now that the
      // agent is here to see a permission prompt.
      if (session) this.close(localId);
      this.prepareIncoming(localId, call.offerSdp);
      session = this.sessions.get(localId)!;
    }
    session.answering = true;
    // The click is the user gesture that autoplay rules wait for.
    session.audio?.play().catch(() => undefined);
    try {
      await session.ready;
      const pc = session.pc;
      if (session.closed || !pc) return;
      await session.gathered;
      const sdp = normaliseSdp(pc.localDescription?.sdp ?? '');
      const checked = checkAnswerSdp(sdp);
      if (!checked.ok) throw new MediaSetupError(`Our answer cannot be sent: ${checked.error.message}`);
      if (session.closed) return;
      // Sent now, while the claim may still be out: the main process sends it on once the call is
      // this agent's, and refuses it (answered_elsewhere) when a colleague's claim won.
      const accepting = this.api.acceptCall({ localId, sdp });
      this.recordTiming(localId, { answerToAcceptMs: Math.round(performance.now() - started) });
      const claim = await claimed;
      if (!claim.ok) {
        // A colleague has the call: the customer's candidates were never added, so nothing was
        // sent to the customer, and the call's outcome ("Answered by another agent") says it all.
        if (claim.error.code !== 'answered_elsewhere') this.onNotice(localId, errorMessage(claim.error));
        this.close(localId);
        return;
      }
      const accepted = await accepting;
      if (!accepted.ok && accepted.error.code === 'answered_elsewhere') {
        this.close(localId);
        return;
      }
      // The call is ours and the service has our answer: now, and not before, the customer's
      // address is known to ICE. Checks that arrived before the service knew our answer would go
      // unanswered or start DTLS against a peer not ready for it, and the retransmission back-off
      // would clip the start of the call (protocol.md).
      if (accepted.ok && !session.closed) this.releaseCandidates(session, pc);
      // On failure the main process ends the call (local.accept_failed) and pushes it.
      if (!accepted.ok) this.onNotice(localId, errorMessage(accepted.error));
    } catch (e) {
      const reason = e instanceof MediaSetupError ? e.message : `The call could not be answered (${errorText(e)}).`;
      log.warn('answer failed', { localId, problem: reason });
      this.onNotice(localId, reason);
      const claim = await claimed;
      if (claim.ok) this.reportFailed(session, reason);
    }
  }

  /**
   * Adds the held-back candidates, then says no more will come (the offer's a=end-of-candidates).
   * The peer connection queues them in order; a refused one is logged, and ICE goes on with the rest.
   */
  private releaseCandidates(session: CallMedia, pc: RTCPeerConnection): void {
    const candidates = session.heldCandidates;
    session.heldCandidates = [];
    for (const c of candidates) {
      pc.addIceCandidate(c).catch((e: unknown) => {
        log.warn('a candidate in the customer\'s offer was refused', { localId: session.localId, candidate: c.candidate, problem: errorText(e) });
      });
    }
    const last = candidates[candidates.length - 1];
    if (last) pc.addIceCandidate({ candidate: '', sdpMid: last.sdpMid, sdpMLineIndex: last.sdpMLineIndex }).catch(() => undefined);
  }

  /**
   * A dialing call: microphone, one audio track, a complete offer, then sendOffer (main POSTs
   * initiate). On any failure before the offer is out, the call is hung up.
   */
  async startOutgoing(localId: string): Promise<Result<{ callId: string }>> {
    if (this.sessions.has(localId)) return err('invalid_state', 'This call already has media');
    const started = performance.now();
    const session = new CallMedia(localId, 'outgoing');
    this.sessions.set(localId, session);
    session.ready = (async () => {
      const pc = await this.peerWithMicrophone(session);
      if (!pc) return;
      // The service's media relays are reached over UDP (protocol.md; TCP only through TURN), and an
      // ice-lite peer never dials our TCP host candidates: with host candidates only, settle on UDP
      // rather than wait ~120 ms for Chromium's TCP phase. With STUN/TURN servers, wait for them.
      const hostOnly = (PEER_CONFIG.iceServers ?? []).length === 0;
      const gathering = watchIceGathering(pc, { capMs: this.gatherCapMs, settleOnUdp: hostOnly });
      await pc.setLocalDescription(await pc.createOffer());
      await gathering.done;
    })();
    try {
      await session.ready;
    } catch (e) {
      session.setupFailed = true;
      const reason = e instanceof MediaSetupError ? e.message : `The call could not be set up (${errorText(e)}).`;
      this.close(localId);
      await this.api.hangUp({ localId });
      return err('media_failed', reason);
    }
    const pc = session.pc;
    if (session.closed || !pc) return err('invalid_state', 'The call ended before it was placed');
    const sdp = normaliseSdp(pc.localDescription?.sdp ?? '');
    const checked = checkOfferSdp(sdp);
    if (!checked.ok) {
      this.close(localId);
      await this.api.hangUp({ localId });
      return err('media_failed', `Our offer cannot be sent: ${checked.error.message}`);
    }
    this.recordTiming(localId, { offerToSendMs: Math.round(performance.now() - started) });
    const sent = await this.api.sendOffer({ localId, sdp });
    // On failure the main process ends the call (local.initiate_failed); the pushed end closes media.
    return sent.ok ? ok(sent.value) : sent;
  }

  /** The customer's answer to our offer (outgoing call reached 'connecting'). Applied once. */
  private async applyAnswer(localId: string, answerSdp: string): Promise<void> {
    const session = this.sessions.get(localId);
    if (!session || session.answerApplied) return;
    session.answerApplied = true;
    try {
      await session.ready;
      if (session.closed || !session.pc) return;
      await session.pc.setRemoteDescription({ type: 'answer', sdp: answerSdp });
    } catch (e) {
      if (session.closed) return;
      const reason = `The customer's answer could not be used (${errorText(e)}).`;
      this.onNotice(localId, reason);
      this.reportFailed(session, reason);
    }
  }

  setMuted(localId: string, muted: boolean): void {
    const session = this.sessions.get(localId);
    if (!session) return;
    session.muted = muted;
    // Never remove the track: the service ends a call that stops sending (protocol.md, 138022).
    if (session.track) session.track.enabled = !muted;
  }

  /** RFC 4733 tones through the audio sender (telephone-event/8000, protocol.md). */
  sendDtmf(localId: string, tones: string): boolean {
    const sender = this.sessions.get(localId)?.pc?.getSenders().find((s) => s.track?.kind === 'audio');
    const dtmf = sender?.dtmf;
    if (!dtmf || !dtmf.canInsertDTMF) return false;
    dtmf.insertDTMF(tones, 100, 70);
    return true;
  }

  /** Closes the call's media: peer connection, microphone, remote audio. Idempotent. */
  close(localId: string): void {
    const session = this.sessions.get(localId);
    if (!session) return;
    this.sessions.delete(localId);
    session.closed = true;
    if (session.disconnectTimer !== undefined) clearTimeout(session.disconnectTimer);
    try {
      session.pc?.close();
    } catch (e) {
      log.warn('closing a peer connection failed', { localId, problem: errorText(e) });
    }
    session.mic?.getTracks().forEach((t) => t.stop());
    if (session.audio) {
      session.audio.pause();
      session.audio.srcObject = null;
      session.audio.remove();
    }
  }

  closeAll(): void {
    for (const localId of [...this.sessions.keys()]) this.close(localId);
  }

  async levels(localId: string): Promise<CallLevels> {
    const session = this.sessions.get(localId);
    if (!session?.pc || session.closed) return { mic: 0, customer: 0 };
    const { mediaSource, inbound } = await readAudioStats(session.pc);
    const mic = session.muted ? 0 : clamp01(numberField(mediaSource, 'audioLevel') ?? 0);
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
    if (!session?.pc || session.closed) return { inboundEnergy: 0, inboundLevel: 0, outboundPackets: 0, inboundPackets: 0 };
    const { inbound, outbound } = await readAudioStats(session.pc);
    return {
      inboundEnergy: numberField(inbound, 'totalAudioEnergy') ?? 0,
      inboundLevel: numberField(inbound, 'audioLevel') ?? 0,
      outboundPackets: numberField(outbound, 'packetsSent') ?? 0,
      inboundPackets: numberField(inbound, 'packetsReceived') ?? 0,
    };
  }

  /** Timings of one call; without a localId, of the newest call that has any. */
  timingsOf(localId?: string): CallTimings {
    const key = localId ?? [...this.timings.keys()].pop();
    return { ...(key !== undefined ? this.timings.get(key) : undefined) };
  }

  private recordTiming(localId: string, patch: CallTimings): void {
    this.timings.set(localId, { ...this.timings.get(localId), ...patch });
    // Only recent calls matter to anyone reading these.
    if (this.timings.size > 50) this.timings.delete(this.timings.keys().next().value!);
  }

  private newPeer(session: CallMedia): RTCPeerConnection {
    const pc = this.createPeerConnection(PEER_CONFIG);
    session.pc = pc;
    pc.addEventListener('track', (ev) => {
      if (session.closed) return;
      this.playRemote(session, ev.streams[0] ?? new MediaStream([ev.track]));
    });
    pc.addEventListener('connectionstatechange', () => this.onConnectionState(session, pc));
    return pc;
  }

  private attachMic(session: CallMedia, pc: RTCPeerConnection, mic: MediaStream): void {
    const track = mic.getAudioTracks()[0];
    if (!track) {
      mic.getTracks().forEach((t) => t.stop());
      throw new MediaSetupError('The microphone gave no audio track.');
    }
    session.mic = mic;
    session.track = track;
    track.enabled = !session.muted;
    pc.addTrack(track, mic);
  }

  private playRemote(session: CallMedia, stream: MediaStream): void {
    const audio = session.audio ?? document.createElement('audio');
    session.audio = audio;
    audio.autoplay = true;
    audio.muted = false;
    audio.dataset.call = session.localId;
    if (audio.srcObject !== stream) audio.srcObject = stream;
    if (!audio.isConnected) this.audioParent().append(audio);
    // During ringing there is no user gesture yet and autoplay may refuse; answer() plays it again.
    audio.play().catch((e: unknown) => log.debug('remote audio did not start yet', { localId: session.localId, problem: errorText(e) }));
  }

  private onConnectionState(session: CallMedia, pc: RTCPeerConnection): void {
    if (session.closed) return;
    const state = pc.connectionState;
    if (state !== 'disconnected' && session.disconnectTimer !== undefined) {
      clearTimeout(session.disconnectTimer);
      session.disconnectTimer = undefined;
    }
    switch (state) {
      case 'connected':
        session.everConnected = true;
        if (session.reported === 'none') {
          session.reported = 'connected';
          void this.api.reportMedia({ localId: session.localId, state: 'connected' });
        }
        return;
      case 'disconnected':
        if (session.disconnectTimer === undefined) {
          session.disconnectTimer = setTimeout(() => {
            session.disconnectTimer = undefined;
            if (!session.closed && pc.connectionState === 'disconnected') {
              this.reportFailed(
                session,
                `The network path to the customer was lost for more than ${Math.round(this.disconnectGraceMs / 1000)} s. This call cannot reconnect (the service has no ICE restart), so it was ended.`,
              );
            }
          }, this.disconnectGraceMs);
        }
        return;
      case 'failed': {
        let reason: string;
        if (session.everConnected) reason = 'The network path to the customer failed during the call. This call cannot reconnect (the service has no ICE restart), so it was ended.';
        else if (pc.iceConnectionState === 'failed') reason = 'No network path to the customer (ICE failed). A firewall may block outbound UDP to the calling service.';
        else reason = 'The encrypted media handshake with the customer failed (DTLS).';
        this.reportFailed(session, reason);
        return;
      }
      default:
        return;
    }
  }

  private reportFailed(session: CallMedia, reason: string): void {
    if (session.reported === 'failed') return;
    session.reported = 'failed';
    log.warn('media failed', { localId: session.localId, problem: reason });
    this.onNotice(session.localId, reason);
    void this.api.reportMedia({ localId: session.localId, state: 'failed', reason: reason.slice(0, 500) });
  }
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
