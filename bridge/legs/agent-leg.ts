// An agent's leg, between the node and the agent's window. The window keeps its own code for the
// service: so the node stands where the service stood, ice-lite with complete descriptions.
//
// - The node offers (an incoming call, or an agent joining): an offer shaped like the service's
//   (ice-lite, `a=setup:actpass`, Opus 111 and telephone-event 126, `a=ptime:20`, candidates
//   inline), which the window answers as it answers the service (full ICE, `a=setup:active`).
// - The window offers (an outgoing call): the node answers as the service's customers do for a
//   business-initiated call (ice-lite, the DTLS server, `a=setup:passive`).
import { errorText, err, ok, type Result } from '../../shared/result';
import { checkOfferSdp, normaliseSdp } from '../../shared/sdp';
import { LegPeer, type LegContext, type LegPeerEvents } from './leg-peer';
import { checkRemoteOffer, checkWindowAnswer, ownSdpBroken, shapeLikeService, unusableSdp } from './sdp-rules';

type AgentPhase =
  /** Our offer is out; the window's answer has not come. */
  | { kind: 'offered' }
  /** Descriptions exchanged: ICE may run. `remote`: the window's description, for repeats. */
  | { kind: 'negotiated'; remote: string };

export class AgentLeg {
  private phase: AgentPhase;

  private constructor(
    readonly legId: string,
    /** Who made the offer: the node (the window answers) or the window (the node answered). */
    readonly offerer: 'node' | 'window',
    readonly peer: LegPeer,
    /** Our description for the window: the offer, or the answer to its offer. */
    readonly description: string,
    phase: AgentPhase,
  ) {
    this.phase = phase;
  }

  /** The node's offer for the window. */
  static async makeOffer(legId: string, context: LegContext, events: LegPeerEvents): Promise<Result<AgentLeg>> {
    const peer = new LegPeer(context, true, events);
    try {
      await peer.gather();
      await peer.pc.setLocalDescription(await peer.pc.createOffer());
    } catch (e) {
      await peer.close();
      return err('media_failed', `agent leg offer: ${errorText(e)}`);
    }
    const sdp = shapeLikeService(peer.pc.localDescription?.sdp ?? '');
    const own = checkOfferSdp(sdp);
    if (!own.ok) {
      await peer.close();
      return ownSdpBroken('agent leg offer', own.error.message);
    }
    return ok(new AgentLeg(legId, 'node', peer, sdp, { kind: 'offered' }));
  }

  /** The node's answer to the window's offer. */
  static async answerOffer(legId: string, offer: string, context: LegContext, events: LegPeerEvents): Promise<Result<AgentLeg>> {
    const remote = normaliseSdp(offer);
    const checked = checkRemoteOffer(remote);
    if (!checked.ok) return checked;
    const peer = new LegPeer(context, true, events);
    try {
      await peer.pc.setRemoteDescription({ type: 'offer', sdp: remote });
    } catch (e) {
      await peer.close();
      return unusableSdp('offer', e);
    }
    try {
      // The service's customers answer a business's offer as the DTLS server; so does the node.
      peer.transceiver.dtlsTransport.role = 'server';
      await peer.gather();
      await peer.pc.setLocalDescription(await peer.pc.createAnswer());
    } catch (e) {
      await peer.close();
      return err('media_failed', `agent leg answer: ${errorText(e)}`);
    }
    const sdp = shapeLikeService(peer.pc.localDescription?.sdp ?? '');
    return ok(new AgentLeg(legId, 'window', peer, sdp, { kind: 'negotiated', remote }));
  }

  /** The window's answer to our offer. The same answer again changes nothing. */
  async applyAnswer(answer: string): Promise<Result<null>> {
    if (this.offerer === 'window') return err('invalid_state', `leg ${this.legId} was offered by the window; the node answered it`);
    const sdp = normaliseSdp(answer);
    if (this.phase.kind === 'negotiated') {
      return this.phase.remote === sdp ? ok(null) : err('invalid_state', `leg ${this.legId} has its answer already; a leg has one`);
    }
    const checked = checkWindowAnswer(sdp);
    if (!checked.ok) return checked;
    this.phase = { kind: 'negotiated', remote: sdp };
    try {
      await this.peer.pc.setRemoteDescription({ type: 'answer', sdp });
    } catch (e) {
      this.phase = { kind: 'offered' };
      return unusableSdp('answer', e);
    }
    return ok(null);
  }

  /** Whether `offer` is the window's offer this leg answered (a repeated answerAgentLeg). */
  answers(offer: string): boolean {
    return this.offerer === 'window' && this.phase.kind === 'negotiated' && this.phase.remote === normaliseSdp(offer);
  }

  close(): Promise<void> {
    return this.peer.close();
  }
}
