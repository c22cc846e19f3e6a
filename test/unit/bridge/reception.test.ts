// What a leg receives, as its report and its RTCP report blocks tell it (bridge/media/reception.ts,
// RFC 3550 6.4.1 and A.3, A.8): loss, the fraction lost since the last report, the extended highest
// sequence number across the wrap, interarrival jitter, and the last sender report heard.
import { describe, expect, test } from 'vitest';
import { Reception } from '../../../bridge/media/reception';
import { compactNtp, ntpFromUnixMs } from '../../../bridge/media/rtcp-clock';

const SSRC = 0xabcd_0001;

/** Feeds packets `sequences` of a 20 ms stream, each arriving at its own time plus `late(i)` ms. */
function feed(reception: Reception, sequences: number[], late: (i: number) => number = () => 0, ssrc = SSRC): void {
  for (const [i, sequence] of sequences.entries()) reception.add(ssrc, sequence & 0xffff, (sequence * 960) >>> 0, true, 1_000 + sequence * 20 + late(i));
}
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

describe('Reception', () => {
  test('a whole stream: nothing lost, the highest number, no jitter', () => {
    const reception = new Reception();
    expect(reception.anyPacket).toBe(false);
    expect(reception.jitterMs).toBeUndefined();
    feed(reception, range(500, 50));
    expect(reception.anyPacket).toBe(true);
    expect(reception.packetsLost).toBe(0);
    expect(reception.jitterMs).toBe(0);
    expect(reception.blocks(5_000)).toEqual([{ ssrc: SSRC, fractionLost: 0, packetsLost: 0, highestSequence: 549, jitter: 0, lsr: 0, dlsr: 0 }]);
  });

  test('gaps are lost; the fraction counts those of the last interval alone, in 1/256', () => {
    const reception = new Reception();
    feed(reception, range(0, 10).filter((s) => s !== 3 && s !== 7));
    expect(reception.packetsLost).toBe(2);
    expect(reception.blocks(0)[0]).toMatchObject({ packetsLost: 2, fractionLost: Math.floor((2 * 256) / 10), highestSequence: 9 });
    feed(reception, range(10, 10));
    expect(reception.blocks(0)[0]).toMatchObject({ packetsLost: 2, fractionLost: 0, highestSequence: 19 });
  });

  test('late and repeated packets: the highest stays, a late one fills its gap, repeats never make loss negative', () => {
    const reception = new Reception();
    feed(reception, [0, 1, 3, 4, 2, 4, 4, 4]);
    expect(reception.packetsLost).toBe(0);
    expect(reception.blocks(0)[0]).toMatchObject({ highestSequence: 4, packetsLost: 0 });
  });

  test('the extended highest sequence number runs on across the 16-bit wrap', () => {
    const reception = new Reception();
    feed(reception, range(65_530, 12));
    expect(reception.packetsLost).toBe(0);
    expect(reception.blocks(0)[0]?.highestSequence).toBe(65_541);
  });

  test('interarrival jitter: steady arrivals none, arrivals 5 ms off every other packet about 5 ms (A.8)', () => {
    const steady = new Reception();
    feed(steady, range(0, 400), () => 37);
    expect(steady.jitterMs).toBe(0);
    const uneven = new Reception();
    feed(uneven, range(0, 400), (i) => (i % 2) * 5);
    expect(uneven.jitterMs).toBeGreaterThan(4.5);
    expect(uneven.jitterMs).toBeLessThanOrEqual(5);
    // Telephone events hold one timestamp over seconds: they count as received, never as jitter.
    const events = new Reception();
    for (let i = 0; i < 50; i++) events.add(SSRC, i, 123_456, false, 1_000 + i * 50);
    expect(events.jitterMs).toBe(0);
    expect(events.packetsLost).toBe(0);
  });

  test('the last sender report heard: its middle 32 bits, and the delay since, in 1/65536 s', () => {
    const reception = new Reception();
    feed(reception, range(0, 5));
    const ntp = ntpFromUnixMs(1_760_000_000_123);
    reception.senderReport(SSRC, ntp, 2_000);
    reception.senderReport(0x9999, ntp, 2_000); // a source never heard: no block
    expect(reception.blocks(2_500)).toEqual([expect.objectContaining({ ssrc: SSRC, lsr: compactNtp(ntp), dlsr: 32_768 })]);
  });

  test('a block for each source heard since the last blocks, and the sum of their loss', () => {
    const reception = new Reception();
    feed(reception, [0, 1, 2, 5]);
    feed(reception, [10, 11, 14], () => 0, 0x2222);
    expect(reception.packetsLost).toBe(4);
    expect(reception.blocks(0).map((b) => b.ssrc)).toEqual([SSRC, 0x2222]);
    feed(reception, [15], () => 0, 0x2222);
    expect(reception.blocks(0).map((b) => b.ssrc)).toEqual([0x2222]);
    expect(reception.blocks(0)).toEqual([]);
  });
});

/**
 * Feeds `count` packets of a 20 ms stream numbered from `from` (mod 2^16) with timestamps from
 * `timestamp`, the first arriving at `at` ms; `skip` leaves some out (by index).
 */
function run(reception: Reception, from: number, count: number, timestamp: number, at: number, skip: (i: number) => boolean = () => false): void {
  for (let i = 0; i < count; i++) if (!skip(i)) reception.add(SSRC, (from + i) & 0xffff, (timestamp + i * 960) >>> 0, true, at + i * 20);
}

describe('Reception: a source that starts its numbering again on the same SSRC (RFC 3550 A.1)', () => {
  test('numbers that start again far behind: the highest, the loss and the fraction follow the new numbering', () => {
    const reception = new Reception();
    run(reception, 30_000, 50, 7_000, 1_000);
    expect(reception.blocks(0)[0]).toMatchObject({ highestSequence: 30_049, packetsLost: 0 });
    // A window's new sender on the same SSRC: numbers from 100, its own clock, two packets lost of 50.
    run(reception, 100, 50, 3_000_000_000, 2_100, (i) => i === 10 || i === 20);
    expect(reception.packetsLost).toBe(2);
    expect(reception.blocks(0)[0]).toMatchObject({ highestSequence: 149, packetsLost: 2, fractionLost: Math.floor((2 * 256) / 49) });
    run(reception, 150, 50, 3_000_048_000, 3_100, (i) => i === 0);
    expect(reception.packetsLost).toBe(3);
    expect(reception.blocks(0)[0]).toMatchObject({ highestSequence: 199, packetsLost: 3, fractionLost: Math.floor(256 / 50) });
  });

  test('numbers that jump far ahead: a restart, not thousands lost', () => {
    const reception = new Reception();
    run(reception, 0, 50, 0, 1_000);
    run(reception, 40_000, 50, 123_456_789, 2_100);
    expect(reception.packetsLost).toBe(0);
    expect(reception.blocks(0)[0]).toMatchObject({ highestSequence: 40_049, packetsLost: 0, fractionLost: 0 });
  });

  test('a jump not followed in sequence is a stray: counted nowhere, the numbering goes on', () => {
    const reception = new Reception();
    run(reception, 0, 10, 0, 1_000);
    reception.add(SSRC, 5_000, 4_800_000, true, 1_200);
    reception.add(SSRC, 60_000, 9_999, true, 1_200);
    run(reception, 10, 10, 9_600, 1_200);
    expect(reception.packetsLost).toBe(0);
    expect(reception.blocks(0)[0]).toMatchObject({ highestSequence: 19, packetsLost: 0 });
    // A stray alone since the last blocks: nothing heard, no block.
    reception.add(SSRC, 30_000, 1, true, 1_500);
    expect(reception.blocks(0)).toEqual([]);
  });

  test('a gap short of MAX_DROPOUT is loss, not a restart', () => {
    const reception = new Reception();
    run(reception, 65_000, 10, 0, 1_000);
    run(reception, 65_000 + 10 + 2_000, 10, (10 + 2_000) * 960, 1_000 + (10 + 2_000) * 20);
    expect(reception.packetsLost).toBe(2_000);
    expect(reception.blocks(0)[0]?.highestSequence).toBe(65_000 + 2_019);
  });

  test('what earlier numberings lost stays in the leg\u2019s count; the report blocks carry the current one\u2019s', () => {
    const reception = new Reception();
    run(reception, 1_000, 20, 0, 1_000, (i) => i === 5 || i === 6);
    expect(reception.packetsLost).toBe(2);
    reception.blocks(0);
    run(reception, 50_000, 20, 77_777, 1_500, (i) => i === 9);
    expect(reception.packetsLost).toBe(3);
    expect(reception.blocks(0)[0]).toMatchObject({ packetsLost: 1, highestSequence: 50_019 });
  });

  test('the jitter goes on across a restart on another clock, and across a leap of the timestamps alone', () => {
    const restarted = new Reception();
    run(restarted, 20_000, 100, 0, 1_000);
    run(restarted, 300, 100, 2_000_000_000, 3_100);
    expect(restarted.jitterMs).toBe(0);
    const uneven = new Reception();
    for (let i = 0; i < 400; i++) uneven.add(SSRC, i, i * 960, true, 1_000 + i * 20 + (i % 2) * 5);
    const before = uneven.jitterMs!;
    expect(before).toBeGreaterThan(4.5);
    // The same numbering, the timestamps an hour on: the clock moved, not the network.
    for (let i = 400; i < 410; i++) uneven.add(SSRC, i, (3_600_000 * 48 + i * 960) >>> 0, true, 1_000 + i * 20 + (i % 2) * 5);
    expect(uneven.jitterMs).toBeGreaterThan(4.5);
    expect(uneven.jitterMs).toBeLessThanOrEqual(5);
  });
});
