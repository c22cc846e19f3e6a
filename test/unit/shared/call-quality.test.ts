// Call quality: the E-model's MOS at known points, each warning raised and cleared at its threshold's
// edges, the hysteresis that keeps a warning from flapping, the words, and the history's summary.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatLossPercent,
  formatMos,
  formatRtt,
  mos,
  QUALITY_WARNING_KINDS,
  QualityMonitor,
  qualitySampleSchema,
  qualitySummarySchema,
  qualityWarningText,
  sampleMos,
  type QualitySample,
  type QualityStep,
  type QualityWarningKind,
} from '../../../shared/call-quality';
import { parseWith } from '../../../shared/validation';

const T0 = 1_750_000_000_000;

/** A clean second of a call: 40 ms round trip, 5 ms jitter, no loss, both sides audible. */
function second(i: number, over: Partial<QualitySample> = {}): QualitySample {
  return {
    at: T0 + i * 1000,
    rttMs: 40,
    jitterMs: 5,
    remoteJitterMs: 5,
    inboundLoss: 0,
    outboundLoss: 0,
    concealment: 0,
    customerLevel: 0.05,
    micLevel: 0.05,
    micMuted: false,
    packetsReceived: 50,
    bytesReceived: 4000,
    connected: true,
    ...over,
  };
}

/** Feeds seconds one after another (numbered on from `start`), returning every step. */
function feed(monitor: QualityMonitor, overs: ReadonlyArray<Partial<QualitySample>>, start = 0): QualityStep[] {
  return overs.map((over, i) => monitor.push(second(start + i, over)));
}

const kinds = (step: QualityStep | undefined): QualityWarningKind[] => (step ? step.active.map((w) => w.kind) : []);
const times = <T>(n: number, value: T): T[] => Array.from({ length: n }, () => value);
const last = <T>(list: readonly T[]): T | undefined => list[list.length - 1];

describe('mos', () => {
  it.each([
    // [rtt, jitter, loss %, expected]: R = 93.2 − L/40 (or − (L − 120)/10), − 2.5 × loss.
    [0, 0, 0, 4.404], // L 10, R 92.95
    [150, 0, 0, 4.319], // L 160, R 89.2: the two branches meet here
    [40, 5, 0, 4.378], // L 60, R 91.7
    [0, 0, 5, 4.041], // R 80.45
    [400, 30, 0, 3.006], // L 470, R 58.2
    [362, 0, 0, 3.502], // L 372, R 68.0: just above the warning's 3.5
    [363, 0, 0, 3.497], // R 67.9: just below it
  ])('rtt %d ms, jitter %d ms, loss %d %% → %s', (rtt, jitter, loss, expected) => {
    expect(mos(rtt, jitter, loss)).toBeCloseTo(expected, 3);
  });

  it('is 1 once the line is unusable, and never above 4.5', () => {
    expect(mos(0, 0, 40)).toBe(1);
    expect(mos(2000, 0, 0)).toBe(1);
    expect(mos(0, 0, 1000)).toBe(1);
    expect(mos(0, 0, 0)).toBeLessThanOrEqual(4.5);
  });

  it('refuses figures that cannot be', () => {
    expect(mos(-1, 0, 0)).toBeNaN();
    expect(mos(0, Number.NaN, 0)).toBeNaN();
    expect(mos(0, 0, Number.POSITIVE_INFINITY)).toBeNaN();
  });

  it('never rises when the round trip, the jitter or the loss grows', () => {
    const figure = fc.double({ min: 0, max: 2000, noNaN: true });
    const loss = fc.double({ min: 0, max: 100, noNaN: true });
    fc.assert(
      fc.property(figure, figure, loss, figure, (rtt, jitter, lossPercent, more) => {
        const base = mos(rtt, jitter, lossPercent);
        expect(base).toBeGreaterThanOrEqual(1);
        expect(base).toBeLessThanOrEqual(4.5);
        expect(mos(rtt + more, jitter, lossPercent)).toBeLessThanOrEqual(base + 1e-9);
        expect(mos(rtt, jitter + more, lossPercent)).toBeLessThanOrEqual(base + 1e-9);
        expect(mos(rtt, jitter, Math.min(100, lossPercent + more / 20))).toBeLessThanOrEqual(base + 1e-9);
      }),
    );
  });

  it('scores a sample by the worse direction, and only with every figure', () => {
    expect(sampleMos(second(0, { jitterMs: 5, remoteJitterMs: 60 }))).toBeCloseTo(mos(40, 60, 0), 6);
    expect(sampleMos(second(0, { inboundLoss: 0, outboundLoss: 0.05 }))).toBeCloseTo(mos(40, 5, 5), 6);
    expect(sampleMos(second(0, { rttMs: undefined }))).toBeUndefined();
    expect(sampleMos(second(0, { jitterMs: undefined, remoteJitterMs: undefined }))).toBeUndefined();
    expect(sampleMos(second(0, { inboundLoss: undefined, outboundLoss: undefined }))).toBeUndefined();
  });
});

describe('network warnings: 3 of the last 5 seconds raise, 5 clean seconds clear', () => {
  it('high round trip: over 400 ms, not at it', () => {
    const m = new QualityMonitor();
    const steps = feed(m, [{ rttMs: 400 }, { rttMs: 400 }, { rttMs: 400 }, { rttMs: 401 }, { rttMs: 620 }]);
    expect(steps.slice(0, 4).every((s) => !kinds(s).includes('high-rtt'))).toBe(true);
    const raisedAt = feed(m, [{ rttMs: 617 }], 5)[0];
    expect(raisedAt?.raised).toEqual(['high-rtt']);
    // The window's median: 3 of 5 over the threshold means the median is over it too.
    expect(raisedAt?.active.find((w) => w.kind === 'high-rtt')).toEqual({
      kind: 'high-rtt',
      since: T0 + 5000,
      value: 617,
      text: 'Poor connection: high delay (620 ms round trip)',
    });
  });

  it('clears after five clean seconds, not four', () => {
    // Any round trip over 400 ms also scores under 3.5 (the MOS crosses at 363 ms): both go together.
    const m = new QualityMonitor();
    feed(m, times(3, { rttMs: 700 }));
    expect(kinds(last(feed(m, [{ rttMs: 700 }], 3)))).toContain('high-rtt');
    const recovery = feed(m, times(5, {}), 4);
    expect(recovery.slice(0, 4).map((s) => kinds(s).includes('high-rtt'))).toEqual([true, true, true, true]);
    expect(recovery[4]?.cleared).toEqual(['high-rtt', 'low-mos']);
    expect(kinds(recovery[4])).toEqual([]);
  });

  it('does not flap on a line that is bad in 2 of every 5 seconds', () => {
    const m = new QualityMonitor();
    const bad = { jitterMs: 48 };
    // Raised by 3 bad seconds of 5 …
    const onset = feed(m, [bad, {}, bad, {}, bad]);
    expect(last(onset)?.raised).toEqual(['high-jitter']);
    // … then 2 bad of 5 for half a minute: neither enough to raise nor clean enough to clear.
    const pattern = [{}, {}, bad, {}, bad];
    const steps = feed(m, Array.from({ length: 30 }, (_, i) => pattern[i % 5] ?? {}), 5);
    expect(steps.every((s) => kinds(s).includes('high-jitter'))).toBe(true);
    expect(steps.flatMap((s) => [...s.raised, ...s.cleared])).toEqual([]);
    // A line that never reached 3 of 5 never warns at all.
    const calm = new QualityMonitor();
    const calmSteps = feed(calm, Array.from({ length: 30 }, (_, i) => pattern[i % 5] ?? {}));
    expect(calmSteps.every((s) => s.active.length === 0)).toBe(true);
  });

  it('keeps the figure of the last bad window while it holds', () => {
    const m = new QualityMonitor();
    feed(m, times(3, { jitterMs: 48 }));
    const held = feed(m, [{}, {}], 3);
    expect(held[1]?.active).toEqual([{ kind: 'high-jitter', since: T0 + 2000, value: 48, text: 'Poor connection: unsteady audio (jitter 48 ms)' }]);
  });

  it('high jitter: over 30 ms either way, not at it', () => {
    const atEdge = new QualityMonitor();
    expect(kinds(last(feed(atEdge, times(5, { jitterMs: 30, remoteJitterMs: 30 }))))).toEqual([]);
    const remote = new QualityMonitor();
    const steps = feed(remote, times(3, { jitterMs: 2, remoteJitterMs: 31 }));
    expect(last(steps)?.raised).toEqual(['high-jitter']);
    expect(last(steps)?.active[0]?.text).toBe('Poor connection: unsteady audio (jitter 31 ms)');
  });

  it('packet loss: over 1 % in 3 of 5 seconds, either way', () => {
    const atEdge = new QualityMonitor();
    expect(kinds(last(feed(atEdge, times(7, { inboundLoss: 0.01, outboundLoss: 0.01 }))))).toEqual([]);
    const inbound = new QualityMonitor();
    const steps = feed(inbound, [{ inboundLoss: 0.06 }, { inboundLoss: 0.06 }, { outboundLoss: 0.06 }]);
    expect(steps.map((s) => s.raised)).toEqual([[], [], ['high-packet-loss']]);
    expect(last(steps)?.active.find((w) => w.kind === 'high-packet-loss')?.text).toBe('Poor connection: 6 % packet loss');
    const recovery = feed(inbound, times(5, {}), 3);
    expect(recovery.map((s) => s.cleared)).toEqual([[], [], [], [], ['high-packet-loss']]);
  });

  it('packet loss: the figure is the rate over the last seconds, good ones included, not the bad seconds alone', () => {
    // A steady 5 % line sampled at 50 packets a second: a lost packet or none in some seconds, several in others.
    const m = new QualityMonitor();
    const steps = feed(m, [{ inboundLoss: 0.1 }, { inboundLoss: 0 }, { inboundLoss: 0.08 }, { inboundLoss: 0.02 }, { inboundLoss: 0.06 }]);
    expect(last(steps)?.active.find((w) => w.kind === 'high-packet-loss')?.text).toBe('Poor connection: 5.2 % packet loss');
  });

  it('packet loss: an average over 3 % across 7 seconds, cleared at 1 % or less', () => {
    const m = new QualityMonitor();
    // One bad second in seven: never 3 of 5, but 25 / 7 ≈ 3.6 % on average.
    const burst = feed(m, [{ inboundLoss: 0.25 }, ...times(5, {})]);
    expect(burst.every((s) => s.active.length === 0)).toBe(true);
    const seventh = feed(m, [{}], 6)[0];
    expect(seventh?.raised).toEqual(['high-packet-loss']);
    expect(seventh?.active[0]?.text).toBe('Poor connection: 3.6 % packet loss');
    // Average 1.4 %: below the rule's 3 % but above its 1 % clearing point, so it holds.
    const between = feed(m, [{ inboundLoss: 0.1 }, ...times(6, {})], 7);
    expect(between.every((s) => kinds(s).includes('high-packet-loss'))).toBe(true);
    // Once the 10 % second leaves the window, the average is 0: cleared.
    const clean = feed(m, [{}], 14)[0];
    expect(clean?.cleared).toEqual(['high-packet-loss']);
  });

  it('low MOS: under 3.5 in 3 of 5 seconds', () => {
    const atEdge = new QualityMonitor();
    expect(kinds(last(feed(atEdge, times(5, { rttMs: 362, jitterMs: 0, remoteJitterMs: 0 }))))).toEqual([]);
    const low = new QualityMonitor();
    // 400 ms and 30 ms are each at, not over, their own thresholds: only the MOS warns.
    const steps = feed(low, times(3, { rttMs: 400, jitterMs: 30, remoteJitterMs: 30 }));
    expect(last(steps)?.raised).toEqual(['low-mos']);
    expect(last(steps)?.mos).toBeCloseTo(3.006, 3);
    expect(last(steps)?.active).toEqual([{ kind: 'low-mos', since: T0 + 2000, value: expect.closeTo(3.006, 3), text: 'Poor call quality (MOS 3.0)' }]);
  });

  it('lists several warnings most pressing first', () => {
    const m = new QualityMonitor();
    const steps = feed(m, times(3, { rttMs: 900, jitterMs: 80, inboundLoss: 0.2 }));
    expect(last(steps)?.raised).toEqual(['high-packet-loss', 'high-rtt', 'high-jitter', 'low-mos']);
    expect(kinds(last(steps))).toEqual(['high-packet-loss', 'high-rtt', 'high-jitter', 'low-mos']);
  });
});

describe('media stopping', () => {
  it('raises no-inbound-media after 2 seconds without a packet, and clears when packets return', () => {
    const m = new QualityMonitor();
    const steps = feed(m, [{}, { packetsReceived: 0 }, { packetsReceived: 0 }, { packetsReceived: 0 }, {}]);
    expect(steps.map((s) => s.raised)).toEqual([[], [], ['no-inbound-media'], [], []]);
    expect(steps[2]?.active[0]?.text).toBe('Reconnecting… the call’s audio has stopped arriving');
    expect(steps[4]?.cleared).toEqual(['no-inbound-media']);
  });

  it('counts the connection going down as media stopping', () => {
    const m = new QualityMonitor();
    const steps = feed(m, [{}, { connected: false, packetsReceived: 0 }, { connected: false, packetsReceived: 3 }]);
    expect(steps[2]?.raised).toEqual(['no-inbound-media']);
  });

  it('says nothing before media first flowed: that is still connecting', () => {
    const m = new QualityMonitor();
    const steps = feed(m, [
      { connected: false, packetsReceived: 0 },
      { connected: false, packetsReceived: 0 },
      { connected: false, packetsReceived: 0 },
    ]);
    expect(steps.every((s) => s.active.length === 0)).toBe(true);
  });

  it('does not count a gap as packet loss, nor judge the network on stale figures', () => {
    const m = new QualityMonitor();
    feed(m, [{}, {}]);
    // Stale figures during the gap (a last RTCP round trip of 900 ms) are not judged.
    feed(m, times(4, { packetsReceived: 0, rttMs: 900, inboundLoss: undefined }), 2);
    // The first second after the gap counts every packet of the gap as lost: 90 %.
    const after = feed(m, [{ inboundLoss: 0.9 }, ...times(8, {})], 6);
    expect(after[0]?.cleared).toEqual(['no-inbound-media']);
    expect(after.every((s) => s.active.length === 0)).toBe(true);
    expect(m.summary().warningsSeen).toEqual(['no-inbound-media']);
    expect(m.summary().worstLossPercent).toBe(0);
  });
});

describe('silence', () => {
  it('no customer audio: 15 silent seconds while packets arrive; sound clears it at once', () => {
    const m = new QualityMonitor();
    const quiet = feed(m, times(14, { customerLevel: 0 }));
    expect(quiet.every((s) => s.active.length === 0)).toBe(true);
    const fifteenth = feed(m, [{ customerLevel: 0.0001 }], 14)[0];
    expect(fifteenth?.raised).toEqual(['no-customer-audio']);
    expect(fifteenth?.active[0]?.text).toBe('No audio from the customer');
    expect(feed(m, [{ customerLevel: 0.02 }], 15)[0]?.cleared).toEqual(['no-customer-audio']);
  });

  it('no customer audio: a quiet room is not silence, and a second without level neither counts nor resets', () => {
    const room = new QualityMonitor();
    expect(feed(room, times(40, { customerLevel: 0.0005 })).every((s) => s.active.length === 0)).toBe(true);
    const m = new QualityMonitor();
    feed(m, times(10, { customerLevel: 0 }));
    feed(m, [{ customerLevel: undefined }], 10);
    const steps = feed(m, times(5, { customerLevel: 0 }), 11);
    expect(last(steps)?.raised).toEqual(['no-customer-audio']);
  });

  it('no customer audio gives way to no-inbound-media when packets stop', () => {
    const m = new QualityMonitor();
    feed(m, times(15, { customerLevel: 0 }));
    const gap = feed(m, times(2, { packetsReceived: 0, customerLevel: 0 }), 15);
    expect(gap[1]?.raised).toEqual(['no-inbound-media']);
    expect(gap[1]?.cleared).toEqual(['no-customer-audio']);
    expect(kinds(gap[1])).toEqual(['no-inbound-media']);
  });

  it('microphone silent: 10 seconds unmuted at zero; muting or sound clears it', () => {
    const m = new QualityMonitor();
    const quiet = feed(m, times(10, { micLevel: 0 }));
    expect(quiet.slice(0, 9).every((s) => s.active.length === 0)).toBe(true);
    expect(quiet[9]?.raised).toEqual(['mic-silent']);
    expect(quiet[9]?.active[0]?.text).toBe('Your microphone is silent');
    expect(feed(m, [{ micLevel: 0, micMuted: true }], 10)[0]?.cleared).toEqual(['mic-silent']);
    // Muted seconds do not count towards the next run.
    feed(m, times(20, { micLevel: 0, micMuted: true }), 11);
    const again = feed(m, times(10, { micLevel: 0 }), 31);
    expect(again.slice(0, 9).every((s) => s.active.length === 0)).toBe(true);
    expect(again[9]?.raised).toEqual(['mic-silent']);
    expect(feed(m, [{ micLevel: 0.01 }], 41)[0]?.cleared).toEqual(['mic-silent']);
  });
});

describe('words', () => {
  it('rounds figures as people read them', () => {
    expect(formatLossPercent(5.96)).toBe('6 %');
    expect(formatLossPercent(1.44)).toBe('1.4 %');
    expect(formatLossPercent(12.4)).toBe('12 %');
    expect(formatLossPercent(0.04)).toBe('0 %');
    expect(formatRtt(617)).toBe('620 ms');
    expect(formatRtt(87.4)).toBe('87 ms');
    expect(formatMos(3.46)).toBe('3.4');
    expect(formatMos(3.1)).toBe('3.1');
    expect(formatMos(4.0)).toBe('4.0');
  });

  it('has words for every warning, with and without a figure', () => {
    expect(qualityWarningText('high-packet-loss', 6)).toBe('Poor connection: 6 % packet loss');
    expect(qualityWarningText('high-rtt', 620)).toBe('Poor connection: high delay (620 ms round trip)');
    expect(qualityWarningText('high-jitter', 47.6)).toBe('Poor connection: unsteady audio (jitter 48 ms)');
    expect(qualityWarningText('low-mos', 3.14)).toBe('Poor call quality (MOS 3.1)');
    for (const kind of QUALITY_WARNING_KINDS) expect(qualityWarningText(kind).length).toBeGreaterThan(10);
  });
});

describe('a monitor that judges part of a call', () => {
  it('raises only the warnings it judges, and still scores and tallies every second', () => {
    const all = new QualityMonitor();
    const part = new QualityMonitor({ judges: ['high-packet-loss', 'high-rtt', 'high-jitter'] });
    const seconds = [...times(6, { inboundLoss: 0.2, rttMs: 700, micLevel: 0 }), ...times(6, { micLevel: 0 })];
    const steps = feed(part, seconds);
    const unrestricted = feed(all, seconds);
    expect(kinds(steps[5])).toEqual(['high-packet-loss', 'high-rtt']);
    expect(kinds(unrestricted[5])).toEqual(['high-packet-loss', 'high-rtt', 'low-mos']);
    expect(steps.flatMap(kinds)).not.toContain('mic-silent');
    expect(unrestricted.flatMap(kinds)).toContain('mic-silent');
    expect(steps.map((s) => s.mos)).toEqual(unrestricted.map((s) => s.mos));
    expect(part.summary()).toEqual({ ...all.summary(), warningsSeen: ['high-packet-loss', 'high-rtt'] });
  });
});

describe('summary', () => {
  it('keeps the mean and the worst five seconds, the worst loss and the warnings seen', () => {
    const m = new QualityMonitor();
    expect(m.summary()).toEqual({ samples: 0, avgMos: null, worstMos: null, worstLossPercent: null, warningsSeen: [] });
    feed(m, [
      ...times(5, {}),
      ...times(5, { inboundLoss: 0.06 }),
      ...times(5, {}),
      { rttMs: undefined },
      ...times(10, { micLevel: 0 }),
    ]);
    const summary = m.summary();
    const clean = mos(40, 5, 0);
    const lossy = mos(40, 5, 6);
    expect(summary.samples).toBe(26);
    // 24 seconds with a MOS: 19 clean, 5 lossy (the one without a round trip has none).
    expect(summary.avgMos).toBeCloseTo((19 * clean + 5 * lossy) / 24, 2);
    expect(summary.worstMos).toBeCloseTo(lossy, 2);
    expect(summary.worstLossPercent).toBe(6);
    // 6 % loss at a 40 ms round trip still scores about 3.9: no low-MOS warning.
    expect(lossy).toBeCloseTo(3.893, 3);
    expect(summary.warningsSeen).toEqual(['high-packet-loss', 'mic-silent']);
    expect(parseWith(qualitySummarySchema, summary)).toEqual({ ok: true, value: summary });
  });

  it('is refused from outside when a number or the list is out of bounds, naming the field', () => {
    const good = { samples: 10, avgMos: 4.1, worstMos: 3.2, worstLossPercent: 6, warningsSeen: ['high-packet-loss'] };
    expect(parseWith(qualitySummarySchema, good).ok).toBe(true);
    const refusal = (over: Record<string, unknown>) => {
      const parsed = parseWith(qualitySummarySchema, { ...good, ...over });
      return parsed.ok ? undefined : parsed.error;
    };
    expect(refusal({ avgMos: 7 })?.field).toBe('avgMos');
    expect(refusal({ worstMos: 0.5 })?.field).toBe('worstMos');
    expect(refusal({ worstLossPercent: 101 })?.field).toBe('worstLossPercent');
    expect(refusal({ samples: -1 })?.field).toBe('samples');
    expect(refusal({ samples: 1.5 })?.field).toBe('samples');
    expect(refusal({ avgMos: Number.NaN })?.field).toBe('avgMos');
    expect(refusal({ warningsSeen: ['loud-music'] })?.field).toBe('warningsSeen[0]');
    expect(refusal({ warningsSeen: ['high-rtt', 'high-rtt'] })?.message).toContain('must not name a warning twice');
    expect(refusal({ warningsSeen: [...QUALITY_WARNING_KINDS, 'high-rtt'] })?.field).toBe('warningsSeen');
    expect(refusal({ extra: 1 })?.message).toContain('does not take "extra"');
  });

  it('takes a bridged call’s legs, each checked as a summary of its own', () => {
    const leg = { samples: 10, avgMos: 4.1, worstMos: 3.2, worstLossPercent: 6, warningsSeen: ['high-packet-loss'] };
    const bridged = { ...leg, legs: { agent: { ...leg, warningsSeen: [] }, customer: leg } };
    expect(parseWith(qualitySummarySchema, bridged)).toEqual({ ok: true, value: bridged });
    const refused = parseWith(qualitySummarySchema, { ...bridged, legs: { agent: leg, customer: { ...leg, avgMos: 9 } } });
    expect(refused.ok ? undefined : refused.error.field).toBe('legs.customer.avgMos');
    expect(parseWith(qualitySummarySchema, { ...bridged, legs: { agent: leg } }).ok).toBe(false);
    expect(parseWith(qualitySummarySchema, { ...bridged, legs: { ...bridged.legs, agent: { ...leg, legs: bridged.legs } } }).ok).toBe(false);
  });

  it('checks samples read from outside', () => {
    expect(parseWith(qualitySampleSchema, second(0)).ok).toBe(true);
    const parsed = parseWith(qualitySampleSchema, { ...second(0), inboundLoss: 1.5 });
    expect(parsed.ok ? undefined : parsed.error.field).toBe('inboundLoss');
  });
});
