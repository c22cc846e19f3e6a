// The customer's leg: the node faces the service exactly as the app's window does in direct mode
// (protocol.md "Media"), so that the service cannot tell a bridge from a window.
//
// Incoming: the service's offer is ice-lite with its candidates inline; the node answers with full
// ICE (controlling against ice-lite), `a=setup:active`, one audio m-line, complete. The service's
// candidates are held back (shared/sdp.ts `holdBackCandidates`) until `connect`, after the gateway
// took the accept: until then the node has nobody to check, and nothing reaches the customer. werift
// starts ICE when the answer is set locally and gives up at once with no remote candidate, so the
// answer is made (gathered first: gathering.ts) and set only at `connect`, after the candidates.
//
// Outgoing: a complete `actpass` offer for initiate; the customer's answer (ice-lite, a DTLS role,
// perhaps `a=ice-options:trickle`) arrives later with the connect event and starts ICE.
import type { RTCSessionDescription } from 'werift';
import type { Logger } from '../../shared/log';
import { err, errorText, ok, type Result } from '../../shared/result';
import { checkAnswerSdp, checkOfferSdp, holdBackCandidates, normaliseSdp, type HeldCandidate } from '../../shared/sdp';
import { LegPeer, type LegContext, type LegPeerEvents } from './leg-peer';
import { checkRemoteOffer, checkServiceAnswer, ownSdpBroken, unusableSdp } from './sdp-rules';

type CustomerPhase =
  /** Incoming: our answer is made, the service's candidates wait for the accept. */
  | { kind: 'answered'; answer: RTCSessionDescription; held: HeldCandidate[] }
  /** Outgoing: our offer is out, the customer's answer has not come. */
  | { kind: 'offered' }
  /** ICE may run: the candidates went in (incoming), or the customer's answer was applied (outgoing). */
  | { kind: 'started'; remoteAnswer?: string };

export class CustomerLeg {
  private phase: CustomerPhase;
  private starting: Promise<Result<null>> | undefined;

  private constructor(
    readonly peer: LegPeer,
    /** Our description for the gateway: the answer to the service's offer, or the offer for initiate. */
    readonly description: string,
    phase: CustomerPhase,
    private readonly logger: Logger,
  ) {
    this.phase = phase;
  }

  /** An incoming call: the answer to the service's offer, its candidates held back. */
  static async answerOffer(offer: string, context: LegContext, events: LegPeerEvents): Promise<Result<CustomerLeg>> {
    const checked = checkRemoteOffer(offer);
    if (!checked.ok) return checked;
    const withheld = holdBackCandidates(normaliseSdp(offer));
    const peer = new LegPeer(context, false, events);
    const made = await CustomerLeg.makeAnswer(peer, withheld.sdp);
    if (!made.ok) {
      await peer.close();
      return made;
    }
    return ok(new CustomerLeg(peer, normaliseSdp(made.value.sdp), { kind: 'answered', answer: made.value, held: withheld.candidates }, context.logger));
  }

  /** An outgoing call: a complete offer for initiate. */
  static async makeOffer(context: LegContext, events: LegPeerEvents): Promise<Result<CustomerLeg>> {
    const peer = new LegPeer(context, false, events);
    try {
      await peer.gather();
      await peer.pc.setLocalDescription(await peer.pc.createOffer());
    } catch (e) {
      await peer.close();
      return err('media_failed', `customer offer: ${errorText(e)}`);
    }
    const sdp = normaliseSdp(peer.pc.localDescription?.sdp ?? '');
    const own = checkOfferSdp(sdp);
    if (!own.ok) {
      await peer.close();
      return ownSdpBroken('customer offer', own.error.message);
    }
    return ok(new CustomerLeg(peer, sdp, { kind: 'offered' }, context.logger));
  }

  /** Incoming: the gateway took the accept; the service's candidates go in and ICE starts. Repeating it changes nothing. */
  connect(): Promise<Result<null>> {
    const phase = this.phase;
    if (phase.kind === 'offered') return Promise.resolve(err('invalid_state', 'an outgoing call connects with the customer\u2019s answer, not with an accept'));
    this.starting ??= this.start(phase);
    return this.starting;
  }

  /** Outgoing: the customer's answer (the connect event). The same answer again changes nothing. */
  async applyAnswer(answer: string): Promise<Result<null>> {
    const phase = this.phase;
    if (phase.kind === 'answered') return err('invalid_state', 'an incoming call has no customer answer to apply');
    const sdp = normaliseSdp(answer);
    if (phase.kind === 'started') {
      return phase.remoteAnswer === sdp ? ok(null) : err('invalid_state', 'the customer\u2019s answer was applied already; a call has one answer');
    }
    const checked = checkServiceAnswer(sdp);
    if (!checked.ok) return checked;
    this.phase = { kind: 'started', remoteAnswer: sdp };
    try {
      await this.peer.pc.setRemoteDescription({ type: 'answer', sdp });
    } catch (e) {
      this.phase = { kind: 'offered' };
      return unusableSdp('answer', e);
    }
    return ok(null);
  }

  close(): Promise<void> {
    return this.peer.close();
  }

  private static async makeAnswer(peer: LegPeer, offerWithoutCandidates: string): Promise<Result<RTCSessionDescription>> {
    try {
      await peer.pc.setRemoteDescription({ type: 'offer', sdp: offerWithoutCandidates });
    } catch (e) {
      return unusableSdp('offer', e);
    }
    let answer: RTCSessionDescription;
    try {
      await peer.gather();
      answer = await peer.pc.createAnswer();
    } catch (e) {
      return err('media_failed', `customer answer: ${errorText(e)}`);
    }
    const own = checkAnswerSdp(normaliseSdp(answer.sdp));
    return own.ok ? ok(answer) : ownSdpBroken('customer answer', own.error.message);
  }

  private async start(phase: Extract<CustomerPhase, { kind: 'answered' | 'started' }>): Promise<Result<null>> {
    if (phase.kind === 'started') return ok(null);
    this.phase = { kind: 'started' };
    const { pc } = this.peer;
    for (const candidate of phase.held) {
      // A refused one is logged, and ICE goes on with the rest (as the window does).
      await pc.addIceCandidate(candidate).catch((e: unknown) => this.logger.warn("a candidate in the service's offer was refused", { candidate: candidate.candidate, problem: errorText(e) }));
    }
    try {
      await pc.setLocalDescription(phase.answer);
    } catch (e) {
      return err('media_failed', `customer answer could not be set: ${errorText(e)}`);
    }
    return ok(null);
  }
}
