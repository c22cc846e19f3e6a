// How late a forwarded source's packets reach the node, against the source's own RTP clock. A node
// that falls behind (a processor shared with other work, a burst) finds its packets waiting in the
// sockets' queues, and would forward them all, late: the listener's jitter buffer would then hold
// that delay for the rest of the call. Audio that late is of no use to a conversation, so a packet
// more than MAX_LATENESS_MS behind its source's clock is not forwarded, and the node catches up.
//
// The reference is the earliest any packet has come (arrival minus its timestamp, the lowest seen),
// allowed to rise only as fast as two clocks drift apart — so a queue that builds up never becomes
// the new normal, while a sender whose clock runs slow is never mistaken for a late one.
//
// Only a backlog is dropped, never a path that got slower: a late packet that arrived spaced from the
// one before (it did not wait in a queue here) is passed on, and when packets keep coming late for
// over a second the path's new delay becomes the reference (a mobile customer's route that changed
// mid-call must not be muted while the reference drifts up to it).
// Telephone events are not judged: one event's packets share its first timestamp for seconds.
// Pure: the caller says when each packet arrived.
import { SAMPLES_PER_MS } from './audio-format';
import { timestampStep } from './outbound-stream';

/** Later than this behind its source's clock, a packet is not forwarded. */
export const MAX_LATENESS_MS = 250;
/** How fast the reference may rise, in samples a second: 400 ppm, far beyond any real clock's drift. */
export const DRIFT_SAMPLES_PER_S = 20;
/** Packets read this close after the one before came out of a queue here, not off the network's pace. */
export const BACKLOG_SPACING_MS = 5;
/** Late this long without a break: the path's delay changed, and its new delay is the reference. */
export const REANCHOR_AFTER_MS = 1_000;
/** A step in the source's timestamps this large (10 s) is a new clock, not a late packet. */
const CLOCK_RESET_SAMPLES = 10 * 1000 * SAMPLES_PER_MS;

export class Lateness {
  private ssrc: number | undefined;
  /** Arrival (in samples) minus timestamp of the earliest packet, as int32; and when the reference last moved. */
  private reference = 0;
  private referenceAt = 0;
  /** Packets found too late. */
  late = 0;
  /** When the packet before this one arrived, and since when packets have come late without a break. */
  private lastArrivedMs: number | undefined;
  private lateSince: number | undefined;

  /** Whether a packet that arrived at `arrivedMs` (monotonic) is in time to be forwarded. */
  inTime(ssrc: number, timestamp: number, arrivedMs: number): boolean {
    const spacing = this.lastArrivedMs === undefined ? Infinity : arrivedMs - this.lastArrivedMs;
    this.lastArrivedMs = arrivedMs;
    const offset = (Math.round(arrivedMs * SAMPLES_PER_MS) - timestamp) | 0;
    if (this.ssrc !== ssrc) return this.restart(ssrc, offset, arrivedMs);
    const behind = timestampStep(this.reference, offset);
    if (behind > CLOCK_RESET_SAMPLES || behind < -CLOCK_RESET_SAMPLES) return this.restart(ssrc, offset, arrivedMs);
    if (behind <= 0) {
      // The earliest yet: the new reference.
      this.reference = offset;
      this.referenceAt = arrivedMs;
      return true;
    }
    const drift = Math.floor(((arrivedMs - this.referenceAt) / 1000) * DRIFT_SAMPLES_PER_S);
    if (drift > 0) {
      const rise = Math.min(drift, behind);
      this.reference = (this.reference + rise) | 0;
      this.referenceAt = arrivedMs;
    }
    if (timestampStep(this.reference, offset) <= MAX_LATENESS_MS * SAMPLES_PER_MS) {
      this.lateSince = undefined;
      return true;
    }
    this.lateSince ??= arrivedMs;
    if (arrivedMs - this.lateSince > REANCHOR_AFTER_MS) return this.restart(ssrc, offset, arrivedMs);
    if (spacing >= BACKLOG_SPACING_MS) return true;
    this.late++;
    return false;
  }

  private restart(ssrc: number, offset: number, arrivedMs: number): boolean {
    this.lateSince = undefined;
    this.ssrc = ssrc;
    this.reference = offset;
    this.referenceAt = arrivedMs;
    return true;
  }
}
