// Non-trickle signalling (protocol.md): the SDP we hand over is all the other side will ever learn
// about our addresses, so we wait for gathering, but never for long: an unreachable STUN server can
// stall gathering for 20–40 s, hence the cap.

import { MediaSetupError, mediaProblem } from './media-text';

export interface GatheringWatch {
  /** How the wait ended: gathering finished, the UDP candidates settled (see below), or the cap. */
  done: Promise<'complete' | 'settled' | 'capped'>;
  cancel(): void;
}

export interface GatheringOptions {
  capMs: number;
  /**
   * Settle on UDP: the peer offered UDP candidates only, so our TCP candidates can never pair with
   * them. Chromium announces its UDP host candidates at once and its TCP ones one allocation phase
   * (~120 ms) later; waiting for those would only delay the accept, during which the customer's
   * phone keeps ringing. With this set, the wait ends `settleMs` after the last UDP candidate, or
   * as soon as a TCP one shows the UDP phase is over. Chromium hands the UDP host candidates of all
   * its networks over within a few milliseconds of each other (measured here: 0.4–2.3 ms between an
   * IPv4 and an IPv6 one), so 12 ms leaves them a wide margin.
   */
  settleOnUdp?: boolean;
  settleMs?: number;
  /**
   * The cap bounds the wait for slow STUN and TURN servers, not for our own host candidates: if it
   * comes before any candidate at all (a machine under load can take that long to enumerate its
   * interfaces), an SDP without candidates would be refused by the service, so the wait goes on for
   * the first candidate, up to this much longer. Leave it 0 where no host candidate can come
   * ("Relay only": an unanswering TURN server there must be reported, not waited for).
   */
  firstCandidateGraceMs?: number;
}

/** Call before setLocalDescription, so that no candidate event is missed. */
export function watchIceGathering(pc: RTCPeerConnection, options: GatheringOptions): GatheringWatch {
  const settleMs = options.settleMs ?? 12;
  let finish: (how: 'complete' | 'settled' | 'capped') => void = () => undefined;
  let settleTimer: ReturnType<typeof setTimeout> | undefined;
  let sawUdp = false;
  let sawAny = false;
  let capPassed = false;

  const done = new Promise<'complete' | 'settled' | 'capped'>((resolve) => {
    let finished = false;
    const grace = options.firstCandidateGraceMs ?? 0;
    let cap = setTimeout(function onCap() {
      if (sawAny || grace <= 0 || capPassed) {
        finish('capped');
        return;
      }
      capPassed = true;
      cap = setTimeout(onCap, grace);
    }, options.capMs);
    const onState = () => {
      if (pc.iceGatheringState === 'complete') finish('complete');
    };
    const onCandidate = (ev: RTCPeerConnectionIceEvent) => {
      if (!ev.candidate) {
        finish('complete');
        return;
      }
      sawAny = true;
      // Past the cap, the first candidate is all that was waited for.
      if (capPassed) {
        finish('capped');
        return;
      }
      if (!options.settleOnUdp) return;
      const protocol = (ev.candidate.protocol ?? /\b(udp|tcp)\b/i.exec(ev.candidate.candidate)?.[1] ?? '').toLowerCase();
      if (protocol === 'udp') {
        sawUdp = true;
        if (settleTimer !== undefined) clearTimeout(settleTimer);
        settleTimer = setTimeout(() => finish('settled'), settleMs);
      } else if (protocol === 'tcp' && sawUdp) {
        finish('settled');
      }
    };
    finish = (how) => {
      if (finished) return;
      finished = true;
      clearTimeout(cap);
      if (settleTimer !== undefined) clearTimeout(settleTimer);
      pc.removeEventListener('icegatheringstatechange', onState);
      pc.removeEventListener('icecandidate', onCandidate);
      resolve(how);
    };
    pc.addEventListener('icegatheringstatechange', onState);
    pc.addEventListener('icecandidate', onCandidate);
  });
  return { done, cancel: () => finish('capped') };
}

/**
 * "Relay only" gathers nothing but relay candidates: a description without one means no TURN server
 * answered, and the customer could never be reached. Said now, rather than after a silent call.
 */
export function requireRelayCandidate(peer: { relayOnly: boolean }, sdp: string): void {
  if (!peer.relayOnly || /^a=candidate:.* typ relay\b/m.test(sdp)) return;
  throw new MediaSetupError(mediaProblem('noRelay'));
}
