// A forwarded source's packets judged against its own clock: on time (with jitter, with a drifting
// clock) they all pass; a backlog the node fell behind on is not passed on, and the node catches up.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { FRAME_SAMPLES } from '../../../bridge/media/audio-format';
import { Lateness, MAX_LATENESS_MS, REANCHOR_AFTER_MS } from '../../../bridge/media/lateness';

/** Packet i of a source whose clock runs at `rate` × 48 kHz, sent at i × 20 ms, arriving `delay(i)` ms later. */
function judge(count: number, delay: (i: number) => number, { rate = 1, ssrc = 7, firstTimestamp = 4_000_000_000 } = {}) {
  const lateness = new Lateness();
  const verdicts: boolean[] = [];
  for (let i = 0; i < count; i++) {
    const timestamp = (firstTimestamp + Math.round(i * FRAME_SAMPLES * rate)) >>> 0;
    verdicts.push(lateness.inTime(ssrc, timestamp, 1_000 + i * 20 + delay(i)));
  }
  return { verdicts, lateness };
}

describe('Lateness', () => {
  test('packets on time pass, with jitter up to the limit and across the 32-bit wrap', () => {
    const { verdicts } = judge(5_000, (i) => (i * 7919) % (MAX_LATENESS_MS - 10));
    expect(verdicts.every(Boolean)).toBe(true);
  });

  test('a source whose clock runs 300 ppm slow or fast, for an hour, is never late', () => {
    for (const rate of [1 - 300e-6, 1 + 300e-6]) {
      const { verdicts } = judge(180_000, () => 0, { rate });
      expect(verdicts.every(Boolean)).toBe(true);
    }
  });

  test('a backlog (the node stalled a second) is not passed on, and what comes in time after is', () => {
    // Packets 100–149 waited in the queue until the node read them all at once, at packet 150's time.
    const delay = (i: number) => (i >= 100 && i < 150 ? (150 - i) * 20 : 0);
    const { verdicts, lateness } = judge(300, delay);
    // Everything more than 250 ms late that was read in the burst goes (packets 101–137, 260 ms and
    // more); the burst's first packet came spaced from the one before and passes, as does the rest.
    for (let i = 0; i < 300; i++) expect({ i, inTime: verdicts[i] }).toEqual({ i, inTime: i === 100 || delay(i) <= MAX_LATENESS_MS });
    expect(lateness.late).toBe(37);
  });

  test('a path that got slower mid-call (400 ms more, paced as before) is never muted, and its delay becomes the reference', () => {
    const delay = (i: number) => (i >= 100 ? 400 : 0);
    const { verdicts, lateness } = judge(400, delay);
    expect(verdicts.every(Boolean)).toBe(true);
    expect(lateness.late).toBe(0);
    // After the new delay settled as the reference, a backlog on top of it is dropped again.
    const settled = new Lateness();
    for (let i = 0; i < 200; i++) settled.inTime(7, i * 960, 1_000 + i * 20 + (i >= 100 ? 400 : 0));
    // Packets 200–219 waited here and are read at once, at packet 219's time on the path's 400 ms:
    // packet 200 is 380 ms behind, 219 on time. Those over 250 ms behind (200–206) go, but the first,
    // which came spaced from the one before.
    const burst = Array.from({ length: 20 }, (_, k) => settled.inTime(7, (200 + k) * 960, 1_000 + 219 * 20 + 400));
    expect(burst.map((inTime, k) => (inTime ? null : 200 + k)).filter((i) => i !== null)).toEqual([201, 202, 203, 204, 205, 206]);
    expect(REANCHOR_AFTER_MS).toBe(1_000);
  });

  test('a new SSRC or a leap of its clock is a new source, not a late one', () => {
    const lateness = new Lateness();
    expect(lateness.inTime(1, 1_000, 0)).toBe(true);
    expect(lateness.inTime(1, 1_960, 20)).toBe(true);
    expect(lateness.inTime(2, 5, 5_000)).toBe(true);
    expect(lateness.inTime(2, 965, 5_020)).toBe(true);
    expect(lateness.inTime(2, 965 + 20 * 48_000, 5_040)).toBe(true);
    expect(lateness.late).toBe(0);
  });

  test('property: with any jitter under the limit, nothing is judged late', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: MAX_LATENESS_MS - 1 }), { minLength: 1, maxLength: 500 }), fc.nat(2 ** 32 - 1), (delays, firstTimestamp) => {
        const { verdicts } = judge(delays.length, (i) => delays[i]!, { firstTimestamp });
        expect(verdicts.every(Boolean)).toBe(true);
      }),
    );
  });
});
