// A call leg: one RTCPeerConnection with the call's one audio sender, and where it stands:
// preparing → ready (the complete local description) → answering (handed over, incoming only) →
// connecting (ICE may run) → connected, or failed; closed at the end.
//
// protocol.md rules that shape it:
// - Nothing may reach the customer before this agent has the call. While ringing, the offer is
//   applied without its candidates, and the answer is made, applied and gathered: with no remote
//   candidate there is nobody to check, so nothing is sent. The customer's candidates wait in
//   `pendingCandidates` until the call is this agent's and the accept is through (`connect`, when the
//   call is pushed in `connecting`). An agent who loses the claim has sent the customer nothing.
//   A bridged call's leg goes to the team's bridge, which routes it to nobody until the accept: its
//   candidates may go to ICE while it rings (`warm`), so that Answer finds the leg up.
// - Non-trickle: complete local descriptions only (gathering capped), line ends normalised to CRLF
//   and nothing else.
// - No renegotiation and no ICE restart on this leg: one offer/answer exchange, and a lost path ends
//   the call.
import type { IceConfig } from '../../shared/ice-servers';
import { createLogger } from '../../shared/log';
import { errorText } from '../../shared/result';
import { checkAnswerSdp, checkOfferSdp, describeOffer, holdBackCandidates, normaliseSdp, type HeldCandidate as PendingCandidate } from '../../shared/sdp';
import { requireRelayCandidate, watchIceGathering } from './ice-gathering';
import type { LegEvents, LegMicrophone, LegOptions, LegParts, LegPhase, LegSetup, GatheringEnd } from './call-leg-types';
import { MediaSetupError, mediaProblem, mediaText, setupProblem, type MediaText } from './media-text';

const log = createLogger('media');

/**
 * With no STUN/TURN server: the service's side is ice-lite with public candidates in its offer, we
 * are the controlling full agent, and it learns our address from our checks (peer-reflexive). A
 * firewall that blocks outbound UDP needs a TURN server over TCP or TLS, which Settings → Network
 * and the relay's short-lived credentials add (IceConfig). Only an outgoing call's peer connection
 * has the pool: it starts gathering before the offer is made, sending nothing to anyone. An incoming
 * call's has none: it gathers with its answer, once the microphone is open (see build).
 */
export const PEER_CONFIG: RTCConfiguration = { iceServers: [], iceCandidatePoolSize: 1, bundlePolicy: 'max-bundle' };

export const GATHER_CAP_MS = 1_500;
/** If the cap finds no candidate at all, how much longer to wait for the first (see ice-gathering.ts). */
export const FIRST_CANDIDATE_GRACE_MS = 8_500;

interface Peer {
  pc: RTCPeerConnection;
  sender: RTCRtpSender;
  /** Built with no STUN or TURN server: host candidates are all it gathers. */
  hostOnly: boolean;
  /** "Relay only": every path goes through a TURN server. */
  relayOnly: boolean;
}

export class CallLeg {
  private current: LegPhase = { kind: 'preparing', done: Promise.resolve() };
  private peer: Peer | undefined;
  /** The peer connection as soon as it exists (before its sender has the microphone's track). */
  private created: RTCPeerConnection | undefined;
  /** The customer's candidates, kept out of ICE until the call is this agent's. */
  private pendingCandidates: PendingCandidate[] = [];
  private answerApplied = false;
  /** The answer this leg made, kept after it is handed over. */
  private made: string | undefined;
  /** ICE ran while the call rang (warm); the call hears of the connection from connect() on. */
  private warmed = false;
  /** How the wait for our candidates ended. */
  gathering: GatheringEnd | undefined;

  constructor(
    readonly localId: string,
    private readonly options: LegOptions,
    private readonly events: LegEvents,
  ) {}

  get phase(): LegPhase {
    return this.current;
  }

  get pc(): RTCPeerConnection | undefined {
    return this.peer?.pc ?? this.created;
  }

  get closed(): boolean {
    return this.current.kind === 'closed';
  }

  /**
   * Ringing: the answer to the customer's offer; nothing is sent to anyone. The offer (without its
   * candidates) is applied while the microphone opens; the answer is made once its track is on the
   * sender, and gathered then.
   */
  prepareAnswer(offerSdp: string, parts: LegParts): void {
    this.prepare(async () => {
      const ice = await parts.ice;
      if (!ice || this.closed) return;
      // No candidate pool: gathering starts with the answer, once the microphone is open (see build).
      const pc = this.createPeerConnection(ice, 0);
      const withheld = holdBackCandidates(offerSdp);
      try {
        await pc.setRemoteDescription({ type: 'offer', sdp: withheld.sdp });
      } catch (e) {
        throw new MediaSetupError(mediaProblem('offerUnusable', { problem: errorText(e) }));
      }
      const mic = await parts.microphone;
      if (!mic || this.closed) return;
      // The offer's audio transceiver takes the track: one sender, as for an outgoing call.
      const peer = this.attach(pc, ice, mic);
      await this.answer(peer, offerSdp, withheld);
    }, 'notPrepared');
  }

  /** Dialing: a complete offer with one audio track. Rejects with the reason when it cannot be made. */
  async prepareOffer(open: () => Promise<LegSetup | undefined>): Promise<void> {
    this.prepare(async () => {
      const peer = await this.build(open);
      if (peer) await this.offer(peer);
    }, 'notSetUp');
    await this.settled();
    if (this.current.kind === 'failed') throw new MediaSetupError(this.current.reason);
  }

  /** Resolves once the preparation is over, whichever way it went. */
  async settled(): Promise<void> {
    if (this.current.kind === 'preparing') await this.current.done;
  }

  get description(): string | undefined {
    return this.made;
  }

  /** ICE runs on this leg ahead of the click (warm), and it has not failed. */
  get warmedUp(): boolean {
    return this.warmed && this.current.kind !== 'failed' && this.current.kind !== 'closed';
  }

  /**
   * A bridged call that rings: the team's bridge took this leg's answer `sdp`, so ICE and DTLS run
   * now, ahead of the click. The bridge routes the leg to nobody until the accept (connect's rule).
   */
  warm(sdp: string): void {
    const peer = this.peer;
    const phase = this.current.kind;
    if (!peer || this.warmed || this.made !== sdp || (phase !== 'ready' && phase !== 'answering')) return;
    this.warmed = true;
    this.addPending(peer);
  }

  /** Answer: the complete answer made while ringing, handed over once (ready → answering). */
  handOver(): string | undefined {
    if (this.current.kind !== 'ready') return undefined;
    const { sdp } = this.current;
    this.current = { kind: 'answering' };
    return sdp;
  }

  /**
   * The call is this agent's and the service has our answer: now, and not before, the customer's
   * address is known to ICE. Checks that arrived before the service knew our answer would go
   * unanswered or start DTLS against a peer not ready for it, and the retransmission back-off would
   * clip the start of the call (protocol.md).
   */
  connect(): void {
    const peer = this.peer;
    if (this.current.kind !== 'answering' || !peer) return;
    this.current = { kind: 'connecting' };
    this.events.moment('iceStartedAt');
    if (!this.warmed) this.addPending(peer);
    else if (peer.pc.iceConnectionState === 'connected' || peer.pc.iceConnectionState === 'completed') this.events.moment('iceConnectedAt');
    this.onConnectionState();
  }

  /** The remote side's candidates, withheld until now, to ICE. */
  private addPending(peer: Peer): void {
    const candidates = this.pendingCandidates.splice(0);
    // The peer connection queues them in order; a refused one is logged, and ICE goes on with the rest.
    for (const c of candidates) {
      peer.pc.addIceCandidate(c).catch((e: unknown) => {
        log.warn("a candidate in the customer's offer was refused", { localId: this.localId, candidate: c.candidate, problem: errorText(e) });
      });
    }
    // Then no more will come (the offer's a=end-of-candidates).
    const last = candidates[candidates.length - 1];
    if (last) peer.pc.addIceCandidate({ candidate: '', sdpMid: last.sdpMid, sdpMLineIndex: last.sdpMLineIndex }).catch(() => undefined);
  }

  /** The customer's answer to our offer (an outgoing call pushed in `connecting`). Applied once. */
  async applyAnswer(answerSdp: string): Promise<void> {
    if (this.answerApplied) return;
    this.answerApplied = true;
    await this.settled();
    const peer = this.peer;
    if (this.current.kind !== 'ready' || !peer) return;
    this.current = { kind: 'connecting' };
    try {
      // ICE starts as the answer goes in: its checks may connect before the promise settles.
      this.events.moment('iceStartedAt');
      await peer.pc.setRemoteDescription({ type: 'answer', sdp: answerSdp });
    } catch (e) {
      if (!this.closed) this.events.failed(mediaProblem('answerUnusable', { problem: errorText(e) }));
    }
  }

  /** Marks the leg failed; false when a failure was reported already (it is reported once). */
  fail(reason: MediaText, reported: boolean): boolean {
    const phase = this.current;
    if (phase.kind === 'closed' || (phase.kind === 'failed' && phase.reported)) return false;
    this.current = { kind: 'failed', reason, reported };
    return true;
  }

  /** RFC 4733 tones through the audio sender (telephone-event/8000, protocol.md). */
  sendDtmf(tones: string): boolean {
    const dtmf = this.peer?.sender.dtmf;
    if (!dtmf || !dtmf.canInsertDTMF) return false;
    // insertDTMF replaces the tones still waiting (WebRTC 1.0 RTCDTMFSender): keys pressed while
    // a tone plays would be lost, so they join the queue instead.
    dtmf.insertDTMF(dtmf.toneBuffer + tones, 100, 70);
    return true;
  }

  close(): void {
    this.current = { kind: 'closed' };
    this.pendingCandidates = [];
    this.closePeerConnection();
  }

  private closePeerConnection(): void {
    try {
      this.created?.close();
    } catch (e) {
      log.warn('closing a peer connection failed', { localId: this.localId, problem: errorText(e) });
    }
  }

  private prepare(work: () => Promise<void>, fallback: 'notPrepared' | 'notSetUp'): void {
    const done = work().catch((e: unknown) => {
      if (this.closed) return;
      const reason = setupProblem(e, fallback, errorText(e));
      log.warn('could not prepare a call', { localId: this.localId, problem: mediaText(reason) });
      this.current = { kind: 'failed', reason, reported: false };
      // Of no use any more: a retry (Answer) prepares a new leg, and a call being placed ends here.
      this.closePeerConnection();
    });
    this.current = { kind: 'preparing', done };
  }

  /**
   * An outgoing call's peer connection with the microphone's track on its one sender; undefined
   * when the call was closed meanwhile. The microphone comes first (`open`): with media permission
   * granted, Chromium puts plain host addresses in the candidates instead of registering mDNS names.
   * An incoming call's leg (prepareAnswer) applies the offer before the microphone is open, but
   * gathers only with its answer, made once the microphone is: its candidates are plain host
   * addresses too.
   */
  private async build(open: () => Promise<LegSetup | undefined>): Promise<Peer | undefined> {
    const setup = await open();
    if (!setup || this.closed) return undefined;
    return this.attach(this.createPeerConnection(setup.ice), setup.ice, setup);
  }

  /** A peer connection with this leg's listeners; a close() from now on closes it too. */
  private createPeerConnection(ice: IceConfig, iceCandidatePoolSize = PEER_CONFIG.iceCandidatePoolSize): RTCPeerConnection {
    const { iceServers, iceTransportPolicy } = ice;
    const pc = this.options.createPeerConnection({ ...PEER_CONFIG, iceCandidatePoolSize, iceServers, iceTransportPolicy });
    this.created = pc;
    pc.addEventListener('track', (ev) => {
      if (!this.closed) this.events.remoteStream(ev.streams[0] ?? new MediaStream([ev.track]));
    });
    pc.addEventListener('connectionstatechange', () => this.onConnectionState());
    pc.addEventListener('iceconnectionstatechange', () => {
      // A leg connected ahead (warm) tells of it at connect().
      const ours = this.current.kind === 'connecting' || this.current.kind === 'connected';
      if (pc.iceConnectionState === 'connected' && ours) this.events.moment('iceConnectedAt');
    });
    return pc;
  }

  /** The microphone's track on the peer connection's one audio sender. */
  private attach(pc: RTCPeerConnection, ice: IceConfig, mic: LegMicrophone): Peer {
    const { iceServers, iceTransportPolicy } = ice;
    const sender = pc.addTrack(mic.track, mic.stream);
    const peer: Peer = { pc, sender, hostOnly: iceServers.length === 0 && iceTransportPolicy === 'all', relayOnly: iceTransportPolicy === 'relay' };
    this.peer = peer;
    this.events.senderReady(sender);
    return peer;
  }

  /** The answer to the offer already applied (`withheld`: its candidates, kept for connect()). */
  private async answer(peer: Peer, offerSdp: string, withheld: { candidates: PendingCandidate[] }): Promise<void> {
    const { pc } = peer;
    const offer = describeOffer(offerSdp);
    const offerUdpOnly = offer.ok && offer.value.candidateTransports.length > 0 && offer.value.candidateTransports.every((t) => t === 'udp');
    if (this.closed) return;
    const gathering = watchIceGathering(pc, { capMs: this.options.gatherCapMs, settleOnUdp: offerUdpOnly && peer.hostOnly, firstCandidateGraceMs: graceFor(peer) });
    try {
      await pc.setLocalDescription(await pc.createAnswer());
    } catch (e) {
      gathering.cancel();
      throw new MediaSetupError(mediaProblem('answerNotMade', { problem: errorText(e) }));
    }
    this.gathering = await gathering.done;
    const sdp = normaliseSdp(pc.localDescription?.sdp ?? '');
    requireRelayCandidate(peer, sdp);
    const checked = checkAnswerSdp(sdp);
    if (!checked.ok) throw new MediaSetupError(mediaProblem('answerUnsendable', { problem: checked.error.message }));
    if (this.closed) return;
    this.pendingCandidates = withheld.candidates;
    this.made = sdp;
    this.current = { kind: 'ready', sdp };
  }

  private async offer(peer: Peer): Promise<void> {
    const { pc } = peer;
    // The service's media relays are reached over UDP (protocol.md; TCP only through TURN), and an
    // ice-lite peer never dials our TCP host candidates: with host candidates only, settle on UDP
    // rather than wait ~120 ms for Chromium's TCP phase. With STUN/TURN servers, wait for them
    // (their answers come later than host candidates), never longer than the cap.
    const gathering = watchIceGathering(pc, { capMs: this.options.gatherCapMs, settleOnUdp: peer.hostOnly, firstCandidateGraceMs: graceFor(peer) });
    await pc.setLocalDescription(await pc.createOffer());
    this.gathering = await gathering.done;
    const sdp = normaliseSdp(pc.localDescription?.sdp ?? '');
    requireRelayCandidate(peer, sdp);
    const checked = checkOfferSdp(sdp);
    if (!checked.ok) throw new MediaSetupError(mediaProblem('offerUnsendable', { problem: checked.error.message }));
    if (!this.closed) this.current = { kind: 'ready', sdp };
  }

  private onConnectionState(): void {
    const phase = this.current;
    const pc = this.peer?.pc;
    // Before connect() no check can have gone out but a warm leg's: it is not this call's yet. One
    // that fails while the call rings is answered afresh (failed, unreported: see CallMedia).
    if (!pc || (phase.kind !== 'connecting' && phase.kind !== 'connected')) {
      if (pc && this.warmed && phase.kind === 'ready' && pc.connectionState === 'failed') {
        this.current = { kind: 'failed', reason: mediaProblem(pc.iceConnectionState === 'failed' ? 'iceFailed' : 'dtlsFailed'), reported: false };
        this.closePeerConnection();
      }
      return;
    }
    const state = pc.connectionState;
    log.info('media connection', { localId: this.localId, state, ice: pc.iceConnectionState });
    switch (state) {
      case 'connected':
        if (phase.kind === 'connecting') {
          this.current = { kind: 'connected' };
          this.events.moment('mediaConnectedAt');
          this.events.connected();
        }
        // Whether media really flows again is for the next statistics read to say.
        return;
      case 'disconnected':
        // No ICE restart exists on this leg (protocol.md): the path comes back by itself or not at all.
        if (phase.kind === 'connected') this.events.pathLost();
        return;
      case 'failed':
        if (phase.kind === 'connected') this.events.failed(mediaProblem('networkLost'));
        else this.events.failed(mediaProblem(pc.iceConnectionState === 'failed' ? 'iceFailed' : 'dtlsFailed'));
        return;
      default:
        return;
    }
  }
}

/** With "Relay only" no host candidate can come: an unanswering TURN server is reported at the cap. */
const graceFor = (peer: Peer): number => (peer.relayOnly ? 0 : FIRST_CANDIDATE_GRACE_MS);
