// Gathering a leg's candidates before its description is made, so that every description leaves
// complete (no trickle exists, protocol.md) and the wait is capped: an unreachable STUN or TURN
// server can stall gathering for 20–40 s, and the description goes with what was found by then.
//
// Gathering first, then createOffer/createAnswer, is also what lets the customer's leg hold the
// service's candidates back: werift's full ICE agent fails at once when it starts with no remote
// candidate, so the answer is made (with our candidates) long before it is set locally, which is
// what starts ICE (customer-leg.ts).
import type { RTCPeerConnection } from 'werift';

/** The capped wait (protocol.md); host candidates on a known address take milliseconds. */
export const GATHERING_CAP_MS = 3_000;

/**
 * werift finds a port in a range by trying each from the lowest, then binds it: two peer
 * connections gathering at once may find the same one. The node's gatherings take turns while it
 * has a port range.
 */
export class GatheringTurns {
  private last: Promise<unknown> = Promise.resolve();

  constructor(private readonly inTurn: boolean) {}

  run<T>(work: () => Promise<T>): Promise<T> {
    if (!this.inTurn) return work();
    const turn = this.last.then(work, work);
    this.last = turn.catch(() => undefined);
    return turn;
  }
}

/** Gathers the candidates of every transport of `pc`, for at most `capMs`. */
export async function gatherCapped(pc: RTCPeerConnection, turns: GatheringTurns, capMs = GATHERING_CAP_MS): Promise<void> {
  await turns.run(async () => {
    let timer: NodeJS.Timeout | undefined;
    const capped = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, capMs);
    });
    try {
      await Promise.race([Promise.all(pc.iceTransports.map((transport) => transport.gather())), capped]);
    } finally {
      clearTimeout(timer);
    }
  });
}
