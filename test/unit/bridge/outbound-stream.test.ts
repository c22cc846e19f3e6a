// The bridge's one outbound stream per listener: one SSRC, sequence numbers and timestamps that run on
// across every change of source, each source's own spacing kept within its stretch.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { FRAME_SAMPLES, SAMPLES_PER_MS } from '../../../bridge/media/audio-format';
import { GeneratedStream } from '../../../bridge/media/generated-stream';
import { MAX_DROPOUT, OutboundStream, sequenceStep, timestampStep, uint16, uint32, type PlacedPacket, type SourcePacket } from '../../../bridge/media/outbound-stream';

/** A real 20 ms Opus TOC (CELT FB 20 ms, one frame) and a 40 ms one (SILK WB 40 ms, one frame). */
const OPUS_20MS = Uint8Array.of(0xf8, 0xff, 0xfe);
const OPUS_40MS = Uint8Array.of(0x50, 0x01);

/** A source numbering its own packets, as a window or the customer's phone does. */
class Source {
  constructor(
    readonly name: string,
    readonly ssrc: number,
    public sequence: number,
    public timestamp: number,
  ) {}

  next(payload = OPUS_20MS): SourcePacket {
    const packet: SourcePacket = { source: this.name, ssrc: this.ssrc, sequenceNumber: this.sequence, timestamp: this.timestamp, marker: false, kind: 'audio', payload };
    this.sequence = uint16(this.sequence + 1);
    this.timestamp = uint32(this.timestamp + FRAME_SAMPLES);
    return packet;
  }
}

function placeAll(stream: OutboundStream, packets: SourcePacket[], at: number, stepMs = 20): PlacedPacket[] {
  return packets.map((p, i) => {
    const placed = stream.place(p, at + i * stepMs);
    if (!placed) throw new Error(`packet ${p.sequenceNumber} of ${p.source} was dropped`);
    return placed;
  });
}

const run = (source: Source, count: number) => Array.from({ length: count }, () => source.next());

describe('OutboundStream', () => {
  test('one source: its packets keep their spacing, under the stream\u2019s own numbers', () => {
    const stream = new OutboundStream(0x1234, 100, 5000);
    const a = new Source('a', 1, 40_000, 123_456);
    const placed = placeAll(stream, run(a, 5), 0);
    expect(placed.map((p) => p.sequenceNumber)).toEqual([100, 101, 102, 103, 104]);
    expect(placed.map((p) => p.timestamp)).toEqual([5000, 5960, 6920, 7880, 8840]);
    // A talkspurt starts the stream; the rest carry the source's own marker.
    expect(placed.map((p) => p.marker)).toEqual([true, false, false, false, false]);
    expect(stream.ssrc).toBe(0x1234);
  });

  test('sequence numbers and timestamps run on across every change of source, by the wall clock', () => {
    const stream = new OutboundStream(7, 65_530, 2 ** 32 - 3000);
    const agentA = new Source('agentA', 11, 9, 777);
    const music = new GeneratedStream('music');
    const agentB = new Source('agentB', 22, 60_000, 4_000_000_000);
    const mix = new GeneratedStream('mix');
    const silence = new GeneratedStream('silence');
    const out: { placed: PlacedPacket; at: number }[] = [];
    let at = 1_000;
    const feed = (packets: SourcePacket[], gapMs: number) => {
      at += gapMs;
      packets.forEach((p, i) => out.push({ placed: stream.place(p, at + i * 20)!, at: at + i * 20 }));
      at += (packets.length - 1) * 20;
    };
    feed(run(agentA, 10), 0);
    feed(Array.from({ length: 10 }, () => music.frame(OPUS_20MS)), 20);
    feed(run(agentB, 10), 3); // B's first packet comes 3 ms after the last music frame
    feed(Array.from({ length: 10 }, () => mix.frame(OPUS_20MS)), 500); // half a second with nothing sent
    feed(Array.from({ length: 10 }, () => silence.frame(OPUS_20MS)), 20);
    feed(run(agentA, 10), 20);

    const sequences = out.map((o) => o.placed.sequenceNumber);
    for (let i = 1; i < sequences.length; i++) expect(sequenceStep(sequences[i - 1]!, sequences[i]!)).toBe(1);
    expect(sequences[0]).toBe(65_530);
    expect(sequences).toContain(0); // wrapped round 65535 → 0
    const steps = out.slice(1).map((o, i) => timestampStep(out[i]!.placed.timestamp, o.placed.timestamp));
    // Every step is at least a frame (never backwards, never overlapping) ...
    expect(Math.min(...steps)).toBe(FRAME_SAMPLES);
    // ... and only the half second with nothing sent is more: exactly that half second.
    expect(steps.filter((s) => s !== FRAME_SAMPLES)).toEqual([(500 + 0) * SAMPLES_PER_MS]);
    expect(out[0]!.placed.timestamp).toBe(2 ** 32 - 3000);
    expect(out.some((o) => o.placed.timestamp < 10_000)).toBe(true); // wrapped round 2^32 → 0
    // The first packet of each stretch is marked.
    expect(out.filter((o) => o.placed.marker).length).toBe(6);
  });

  test('a lost packet of a source stays a gap; a reordered one stays reordered', () => {
    const stream = new OutboundStream(7, 1000, 0);
    const a = new Source('a', 1, 65_534, 0);
    const [p0, p1, p2, p3, p4, p5] = run(a, 6);
    const placed = placeAll(stream, [p0!, p1!, p3!, p2!, p5!], 0);
    expect(placed.map((p) => p.sequenceNumber)).toEqual([1000, 1001, 1003, 1002, 1005]);
    expect(placed.map((p) => p.timestamp)).toEqual([0, 960, 2880, 1920, 4800]);
    expect(p4).toBeDefined();
  });

  test('a duplicate of the source\u2019s newest packet is dropped, the first of a stretch\u2019s included: no number goes out twice', () => {
    const stream = new OutboundStream(7, 1000, 0);
    const a = new Source('a', 1, 65_535, 0);
    const [p0, p1, p2] = run(a, 3);
    expect(stream.place(p0!, 0)?.sequenceNumber).toBe(1000);
    expect(stream.place({ ...p0! }, 1)).toBeUndefined();
    expect(stream.place(p1!, 20)?.sequenceNumber).toBe(1001);
    expect(stream.place({ ...p1! }, 21)).toBeUndefined();
    expect(stream.place(p2!, 40)).toEqual({ sequenceNumber: 1002, timestamp: 1920, marker: false });
  });

  test('a packet older than its stretch\u2019s first is dropped: its numbers belong to the source before', () => {
    const stream = new OutboundStream(7, 0, 0);
    const a = new Source('a', 1, 100, 0);
    const b = new Source('b', 2, 500, 0);
    placeAll(stream, run(a, 3), 0);
    const [b0, b1, b2] = run(b, 3);
    // B's second packet comes first: the stretch starts there, and the first is late for it.
    expect(stream.place(b1!, 100)).toEqual({ sequenceNumber: 3, timestamp: expect.any(Number), marker: true });
    expect(stream.place(b0!, 101)).toBeUndefined();
    expect(stream.place(b2!, 120)?.sequenceNumber).toBe(4);
  });

  test('a source that restarts its numbering (confirmed by the next packet) or its SSRC starts a new stretch, with no jump on the stream', () => {
    const stream = new OutboundStream(7, 0, 0);
    const a = new Source('a', 1, 100, 0);
    placeAll(stream, run(a, 3), 0);
    a.sequence += MAX_DROPOUT + 1;
    a.timestamp += 1_000_000;
    // The first packet far off the sequence is held as a stray ...
    expect(stream.place(a.next(), 60)).toBeUndefined();
    // ... the next in sequence confirms the restart.
    expect(stream.place(a.next(), 80)).toEqual({ sequenceNumber: 3, timestamp: 3 * FRAME_SAMPLES + 960, marker: true });
    const renewed = new Source('a', 99, 7, 5);
    expect(stream.place(renewed.next(), 100)).toEqual({ sequenceNumber: 4, timestamp: 5 * FRAME_SAMPLES, marker: true });
  });

  test('a stray packet far off the sequence is dropped and the stretch goes on undisturbed', () => {
    const stream = new OutboundStream(7, 0, 0);
    const a = new Source('a', 1, 100, 0);
    placeAll(stream, run(a, 3), 0);
    const stray: SourcePacket = { ...a.next(), sequenceNumber: 30_000, timestamp: 12_345 };
    expect(stream.place(stray, 60)).toBeUndefined();
    expect(stream.place(a.next(), 80)).toEqual({ sequenceNumber: 4, timestamp: 4 * FRAME_SAMPLES, marker: false });
  });

  test('a clock that leaps with the numbers in order starts a new stretch on the wall clock', () => {
    const stream = new OutboundStream(7, 0, 0);
    const a = new Source('a', 1, 100, 0);
    placeAll(stream, run(a, 3), 0);
    a.timestamp += 20 * 48_000;
    expect(stream.place(a.next(), 1_000)).toEqual({ sequenceNumber: 3, timestamp: 2 * FRAME_SAMPLES + 960 * 48, marker: true });
  });

  test('one stretch outlives the 16-bit wrap many times over: nothing dropped, no gap', () => {
    const stream = new OutboundStream(7, 0, 0);
    const a = new Source('a', 1, 40_000, 0);
    let previous: PlacedPacket | undefined;
    for (let i = 0; i < 200_000; i++) {
      const placed = stream.place(a.next(), i * 20);
      if (!placed) throw new Error(`packet ${i} dropped`);
      if (previous && (sequenceStep(previous.sequenceNumber, placed.sequenceNumber) !== 1 || timestampStep(previous.timestamp, placed.timestamp) !== FRAME_SAMPLES)) {
        throw new Error(`packet ${i}: ${JSON.stringify(previous)} → ${JSON.stringify(placed)}`);
      }
      previous = placed;
    }
    // A late packet is still placed, 200 000 packets into the stretch.
    const late: SourcePacket = { ...a.next(), sequenceNumber: uint16(a.sequence - 5), timestamp: uint32(a.timestamp - 5 * FRAME_SAMPLES) };
    expect(stream.place(late, 200_000 * 20)).toBeDefined();
  });

  test('a switch moves the timestamp on by at least the last audio\u2019s own length (a 40 ms frame: 1920)', () => {
    const stream = new OutboundStream(7, 0, 0);
    const a = new Source('a', 1, 0, 0);
    stream.place(a.next(OPUS_40MS), 0);
    const b = new Source('b', 2, 0, 0);
    expect(stream.place(b.next(), 5)?.timestamp).toBe(1920);
  });

  test('telephone events share their source\u2019s timestamp base; every packet of one event keeps one timestamp and its bits', () => {
    const stream = new OutboundStream(7, 0, 0);
    const a = new Source('a', 1, 10, 50_000);
    placeAll(stream, run(a, 2), 0);
    const eventTs = a.timestamp;
    const events = [0, 1, 2].map((i): SourcePacket => ({
      source: 'a',
      ssrc: 1,
      sequenceNumber: uint16(a.sequence + i),
      timestamp: eventTs,
      marker: i === 0,
      kind: 'event',
      payload: Uint8Array.of(5, i === 2 ? 0x8a : 0x0a, 0, 160 * (i + 1)),
    }));
    const placed = placeAll(stream, events, 40);
    expect(placed.map((p) => p.sequenceNumber)).toEqual([2, 3, 4]);
    expect(new Set(placed.map((p) => p.timestamp))).toEqual(new Set([2 * FRAME_SAMPLES]));
    expect(placed.map((p) => p.marker)).toEqual([true, false, false]);
  });

  test('timestampAt pairs the stream\u2019s clock with the time (for sender reports)', () => {
    const stream = new OutboundStream(7, 0, 1000);
    expect(stream.timestampAt(0)).toBeUndefined();
    stream.place(new Source('a', 1, 0, 0).next(), 100);
    expect(stream.timestampAt(100)).toBe(1000);
    expect(stream.timestampAt(350)).toBe(1000 + 250 * SAMPLES_PER_MS);
  });

  test('property: over any switches, losses and reorderings, the stream never gaps, jumps or goes back at a switch, and keeps each stretch\u2019s spacing', () => {
    const stretch = fc.record({
      source: fc.constantFrom('agentA', 'agentB', 'customer', 'music', 'mix', 'silence'),
      count: fc.integer({ min: 1, max: 40 }),
      lossPercent: fc.integer({ min: 0, max: 20 }),
      swaps: fc.array(fc.nat(39), { maxLength: 5 }),
      // From the last packet before to the stretch's first: a burst (under a frame) to seconds of nothing.
      gapMs: fc.oneof(fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 3_000 })),
    });
    fc.assert(
      fc.property(fc.array(stretch, { minLength: 1, maxLength: 12 }), fc.integer({ min: 0, max: 0xffff }), fc.nat(2 ** 32 - 1), (stretches, firstSequence, firstTimestamp) => {
        const stream = new OutboundStream(1, firstSequence, firstTimestamp);
        const sources = new Map<string, Source>();
        let at = 0;
        let highest: number | undefined;
        let latest: { timestamp: number; at: number } | undefined;
        let previous: string | undefined;
        for (const s of stretches) {
          // The same source twice in a row is one stretch going on: test changes of source.
          if (s.source === previous) continue;
          previous = s.source;
          const source = sources.get(s.source) ?? new Source(s.source, sources.size + 1, (sources.size * 7919) & 0xffff, sources.size * 1e6);
          sources.set(s.source, source);
          const packets = run(source, s.count);
          const sent = packets.filter((_, i) => i === 0 || (i * 37) % 100 >= s.lossPercent);
          for (const swap of s.swaps) {
            if (swap + 2 < sent.length) [sent[swap + 1], sent[swap + 2]] = [sent[swap + 2]!, sent[swap + 1]!];
          }
          let offsets: { sequence: number; timestamp: number } | undefined;
          for (const [i, packet] of sent.entries()) {
            at += i === 0 ? s.gapMs : 20;
            const placed = stream.place(packet, at);
            if (!placed) continue;
            if (!offsets) {
              // The first packet of a stretch: right after the highest, at least a frame after the latest audio, by the wall clock.
              if (highest !== undefined) expect(placed.sequenceNumber).toBe(uint16(highest + 1));
              if (latest) expect(timestampStep(latest.timestamp, placed.timestamp)).toBe(Math.max(FRAME_SAMPLES, Math.round((at - latest.at) * SAMPLES_PER_MS)));
              expect(placed.marker).toBe(true);
              offsets = { sequence: uint16(placed.sequenceNumber - packet.sequenceNumber), timestamp: uint32(placed.timestamp - packet.timestamp) };
            }
            expect(uint16(placed.sequenceNumber - packet.sequenceNumber)).toBe(offsets.sequence);
            expect(uint32(placed.timestamp - packet.timestamp)).toBe(offsets.timestamp);
            if (highest === undefined || sequenceStep(highest, placed.sequenceNumber) > 0) {
              // Within a stretch the stream moves on only as far as the source did (a loss), never further.
              if (highest !== undefined) expect(sequenceStep(highest, placed.sequenceNumber)).toBeLessThanOrEqual(MAX_DROPOUT);
              highest = placed.sequenceNumber;
            }
            if (!latest || timestampStep(latest.timestamp, placed.timestamp) > 0) latest = { timestamp: placed.timestamp, at };
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('GeneratedStream', () => {
  test('a frame every tick: +1 and +960 each', () => {
    const made = new GeneratedStream('music');
    const frames = [0, 1, 2].map(() => made.frame(OPUS_20MS));
    expect(frames.map((f) => [f.sequenceNumber, f.timestamp, f.kind, f.source, f.ssrc])).toEqual([
      [0, 0, 'audio', 'music', made.ssrc],
      [1, 960, 'audio', 'music', made.ssrc],
      [2, 1920, 'audio', 'music', made.ssrc],
    ]);
  });

  test('a mixed source\u2019s telephone event takes the timestamp of the frame due, the same for all its packets', () => {
    const made = new GeneratedStream('mix');
    made.frame(OPUS_20MS);
    const first = made.event('agentA', 5, 123_456, true, Uint8Array.of(1, 10, 0, 160));
    made.frame(OPUS_20MS);
    const end = made.event('agentA', 5, 123_456, false, Uint8Array.of(1, 0x8a, 1, 64));
    const next = made.event('agentA', 5, 130_000, true, Uint8Array.of(2, 10, 0, 160));
    expect([first.timestamp, end.timestamp, next.timestamp]).toEqual([960, 960, 1920]);
    expect([first.marker, end.marker]).toEqual([true, false]);
    expect([first.sequenceNumber, end.sequenceNumber, next.sequenceNumber]).toEqual([1, 3, 4]);
    expect(first.kind).toBe('event');
  });
});
