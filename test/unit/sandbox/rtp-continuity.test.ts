import { describe, expect, it } from 'vitest';
import { RtpContinuity } from '../../../sandbox/rtp-continuity';

const OPUS = 111;
const DTMF = 126;

/** Packets of one stream, 20 ms apart on both clocks, from `seq` and `ts`. */
function feed(rtp: RtpContinuity, from: { seq: number; ts: number; at: number; ssrc?: number }, count: number, pt = OPUS): { seq: number; ts: number; at: number } {
  let { seq, ts, at } = from;
  for (let i = 0; i < count; i++) {
    rtp.observe({ ssrc: from.ssrc ?? 1, sequenceNumber: seq, timestamp: ts, payloadType: pt }, at);
    seq = (seq + 1) & 0xffff;
    ts = (ts + 960) >>> 0;
    at += 20;
  }
  return { seq, ts, at };
}

describe('RtpContinuity', () => {
  it('a continuous stream: one SSRC, no gap, no jump, also across the sequence and timestamp wrap', () => {
    const rtp = new RtpContinuity(OPUS, 48_000);
    feed(rtp, { seq: 65_530, ts: 0xffff_f000, at: 0 }, 20);
    expect(rtp.report()).toEqual({ ssrcs: 1, packets: 20, sequenceGaps: 0, timestampJumps: 0 });
  });

  it('counts a lost or skipped sequence number, a new SSRC, and a timestamp that jumps or goes back', () => {
    const rtp = new RtpContinuity(OPUS, 48_000);
    let next = feed(rtp, { seq: 100, ts: 1_000, at: 0 }, 5);
    // One sequence number skipped.
    next = feed(rtp, { ...next, seq: next.seq + 1 }, 5);
    expect(rtp.report().sequenceGaps).toBe(1);
    // The timestamp leaps 10 s ahead of the clock.
    next = feed(rtp, { ...next, ts: next.ts + 480_000 }, 5);
    expect(rtp.report().timestampJumps).toBe(1);
    // And back.
    next = feed(rtp, { ...next, ts: next.ts - 96_000 }, 5);
    expect(rtp.report().timestampJumps).toBe(2);
    // Another source with its own SSRC.
    feed(rtp, { ...next, ssrc: 2 }, 5);
    expect(rtp.report()).toMatchObject({ ssrcs: 2, packets: 25, sequenceGaps: 1, timestampJumps: 2 });
  });

  it('a pause in the audio with the timestamp following the clock is no jump; telephone-event packets are judged on their sequence only', () => {
    const rtp = new RtpContinuity(OPUS, 48_000);
    let next = feed(rtp, { seq: 1, ts: 0, at: 0 }, 5);
    // Three DTMF packets sharing one event timestamp.
    for (let i = 0; i < 3; i++) rtp.observe({ ssrc: 1, sequenceNumber: next.seq + i, timestamp: next.ts, payloadType: DTMF }, next.at + i * 20);
    next = { seq: next.seq + 3, ts: next.ts + 3 * 960, at: next.at + 60 };
    // Two seconds later the audio goes on, its timestamp two seconds on.
    feed(rtp, { seq: next.seq, ts: next.ts + 96_000, at: next.at + 2_000 }, 5);
    expect(rtp.report()).toEqual({ ssrcs: 1, packets: 13, sequenceGaps: 0, timestampJumps: 0 });
  });
});
