// Non-trickle signalling (protocol.md): the SDP we hand over is all the other side will ever learn
// about our addresses, so we wait for gathering, but never for long: an unreachable STUN server can
// stall gathering for 20–40 s, hence the cap.

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
   * as soon as a TCP one shows the UDP phase is over.
   */
  settleOnUdp?: boolean;
  settleMs?: number;
}

/** Call before setLocalDescription, so that no candidate event is missed. */
export function watchIceGathering(pc: RTCPeerConnection, options: GatheringOptions): GatheringWatch {
  const settleMs = options.settleMs ?? 25;
  let finish: (how: 'complete' | 'settled' | 'capped') => void = () => undefined;
  let settleTimer: ReturnType<typeof setTimeout> | undefined;
  let sawUdp = false;

  const done = new Promise<'complete' | 'settled' | 'capped'>((resolve) => {
    let finished = false;
    const cap = setTimeout(() => finish('capped'), options.capMs);
    const onState = () => {
      if (pc.iceGatheringState === 'complete') finish('complete');
    };
    const onCandidate = (ev: RTCPeerConnectionIceEvent) => {
      if (!ev.candidate) {
        finish('complete');
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
