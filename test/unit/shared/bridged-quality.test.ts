// A bridged call's quality on both legs (shared/bridged-quality.ts): the customer leg's seconds from
// the bridge's cumulative counts, the window's figures split between the legs (the bridge passes the
// customer's gaps on as gaps), the end-to-end MOS never better than either leg's, the warnings named
// by leg, the summary with each leg's; and a call the bridge never reports on judged exactly as a
// direct call. The packet-level simulations send 50 packets a second through both legs, each lost on
// the customer's leg (the bridge counts it, and the window sees the gap) or on the agent's (only the
// window sees it), with the bridge's reports arriving at any phase of the window's seconds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LegReport } from '../../../shared/bridge';
import {
  BRIDGED_QUALITY,
  BridgedQualityMonitor,
  agentInboundLoss,
  attributedAgentSample,
  customerLegSample,
  customerLegWarningText,
  endToEndSample,
  type BridgedQualityStep,
  type LegQualityWarning,
} from '../../../shared/bridged-quality';
import { QualityMonitor, qualitySummarySchema, sampleMos, type QualitySample } from '../../../shared/call-quality';
import { parseWith } from '../../../shared/validation';

const T0 = 1_750_000_000_000;

function windowSecond(at: number, over: Partial<QualitySample> = {}): QualitySample {
  return {
    at,
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

const report = (over: Partial<LegReport> = {}): LegReport => ({ state: 'connected', packetsReceived: 0, packetsLost: 0, jitterMs: 4, roundTripMs: 60, ...over });

/** A seeded generator (mulberry32): the simulations are the same on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Simulation {
  seconds: number;
  /** Share of the customer's packets lost on its way to the bridge, by second. */
  customerLoss: (second: number) => number;
  /** Share of the forwarded packets lost between the bridge and the window, by second. */
  agentLoss: (second: number) => number;
  /** When in each window second the bridge's report arrives (ms after the window's read). */
  reportPhaseMs: number;
  seed: number;
  customerJitterMs?: number;
  /** The window's inbound jitter: the customer's and its own leg's spread together. */
  windowJitterMs?: number;
}

/** Runs a bridged call packet by packet; every window second's step, and the monitor. */
function simulate(sim: Simulation): { steps: BridgedQualityStep[]; monitor: BridgedQualityMonitor } {
  const rand = random(sim.seed);
  const monitor = new BridgedQualityMonitor();
  const steps: BridgedQualityStep[] = [];
  const node = { received: 0, lost: 0 };
  let windowSecondCounts = { received: 0, lost: 0 };
  for (let ms = 20; ms <= sim.seconds * 1000; ms += 20) {
    const second = Math.floor((ms - 1) / 1000);
    if (rand() < sim.customerLoss(second)) {
      node.lost += 1;
      windowSecondCounts.lost += 1;
    } else {
      node.received += 1;
      if (rand() < sim.agentLoss(second)) windowSecondCounts.lost += 1;
      else windowSecondCounts.received += 1;
    }
    if (ms % 1000 === 0) {
      const { received, lost } = windowSecondCounts;
      steps.push(monitor.push(windowSecond(T0 + ms, { packetsReceived: received, inboundLoss: lost / (received + lost), jitterMs: sim.windowJitterMs ?? 5 })));
      windowSecondCounts = { received: 0, lost: 0 };
    }
    if ((ms - sim.reportPhaseMs) % 1000 === 0 && ms > sim.reportPhaseMs) {
      monitor.customerReport(report({ packetsReceived: node.received, packetsLost: node.lost, jitterMs: sim.customerJitterMs ?? 4 }), T0 + ms);
    }
  }
  return { steps, monitor };
}

/** The agent's own leg's warnings ("Poor call quality" is the call's, end to end). */
const agentWarnings = (step: BridgedQualityStep): LegQualityWarning[] => step.active.filter((w) => w.leg === undefined && w.kind !== 'low-mos');
const customerWarnings = (step: BridgedQualityStep): LegQualityWarning[] => step.active.filter((w) => w.leg === 'customer');
const PHASES = [20, 400, 980];
const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];

describe('the customer leg from the bridge’s reports', () => {
  it('is one second of that leg: the loss over the interval from the cumulative counts, the jitter and round trip as measured', () => {
    const first = customerLegSample({ at: T0, report: report({ packetsReceived: 94, packetsLost: 6 }) }, undefined);
    expect(first).toEqual({ at: T0, rttMs: 60, jitterMs: 4, inboundLoss: 0.06, micMuted: true, packetsReceived: 94, bytesReceived: 0, connected: true });
    const next = customerLegSample({ at: T0 + 1000, report: report({ packetsReceived: 138, packetsLost: 12 }) }, { at: T0, report: report({ packetsReceived: 94, packetsLost: 6 }) });
    expect(next.inboundLoss).toBeCloseTo(6 / 50, 9);
    expect(next.packetsReceived).toBe(44);
  });

  it('counts a counter that went down as no growth, a leg not connected as no media, and says nothing it was not given', () => {
    const previous = { at: T0, report: report({ packetsReceived: 100, packetsLost: 9 }) };
    const sample = customerLegSample({ at: T0 + 1000, report: { state: 'connecting', packetsReceived: 150, packetsLost: 7 } }, previous);
    expect(sample).toEqual({ at: T0 + 1000, inboundLoss: 0, micMuted: true, packetsReceived: 50, bytesReceived: 0, connected: false });
    expect(customerLegSample({ at: T0, report: { state: 'new', packetsReceived: 0, packetsLost: 0 } }, undefined).inboundLoss).toBeUndefined();
  });

  it('words its warnings as the customer’s', () => {
    expect(customerLegWarningText('high-packet-loss', 6)).toBe('The customer’s connection is poor: 6 % packet loss');
    expect(customerLegWarningText('high-packet-loss', 12.44)).toBe('The customer’s connection is poor: 12 % packet loss');
    expect(customerLegWarningText('high-rtt', 617)).toBe('The customer’s connection is poor: high delay (620 ms round trip)');
    expect(customerLegWarningText('high-jitter', 47.6)).toBe('The customer’s connection is poor: unsteady audio (jitter 48 ms)');
    expect(customerLegWarningText('high-jitter')).toBe('The customer’s connection is poor: unsteady audio');
  });
});

describe('the window’s figures split between the legs', () => {
  it('takes away the customer leg’s losses over the span, per packet the window expected', () => {
    const windowCounts = [
      { at: T0, received: 0, lost: 0 },
      { at: T0 + 9_000, received: 396, lost: 54 },
      { at: T0 + 10_000, received: 440, lost: 60 },
    ];
    const customer = [
      { at: T0, report: report({ packetsReceived: 0, packetsLost: 0 }) },
      { at: T0 + 10_000, report: report({ packetsReceived: 450, packetsLost: 50 }) },
    ];
    expect(agentInboundLoss(windowCounts, customer, T0 + 10_500)).toBeCloseTo(10 / 500, 9);
    // The window's counts are read on the line between its points, at the report's time.
    const midway = [customer[0]!, { at: T0 + 4_500, report: report({ packetsReceived: 202, packetsLost: 23 }) }];
    expect(agentInboundLoss(windowCounts, midway, T0 + 5_000)).toBeCloseTo(4 / 225, 9);
    // Never more than the window lost in the second before the report.
    const clean = [{ at: T0, received: 0, lost: 0 }, { at: T0 + 9_000, received: 400, lost: 50 }, { at: T0 + 10_000, received: 450, lost: 50 }];
    expect(agentInboundLoss(clean, customer, T0 + 10_000)).toBe(0);
  });

  it('leaves the window its loss when the customer’s leg lost nothing, but never reads past the bridge’s latest report', () => {
    const windowCounts = [
      { at: T0, received: 0, lost: 0 },
      { at: T0 + 9_000, received: 450, lost: 0 },
      { at: T0 + 10_000, received: 485, lost: 15 },
      // A gap in the second after the report could still be the customer's: it is not read yet.
      { at: T0 + 11_000, received: 520, lost: 30 },
    ];
    const customer = [
      { at: T0, report: report({ packetsReceived: 0 }) },
      { at: T0 + 10_000, report: report({ packetsReceived: 500 }) },
    ];
    expect(agentInboundLoss(windowCounts, customer, T0 + 11_000)).toBeCloseTo(15 / 50, 9);
    // No report passed yet: nothing to say.
    expect(agentInboundLoss(windowCounts, customer.slice(1), T0 + 9_000)).toBeUndefined();
  });

  it('charges the agent’s leg with its share of the loss, and the jitter beyond the customer’s', () => {
    const second = windowSecond(T0, { inboundLoss: 0.12, jitterMs: 52 });
    expect(attributedAgentSample(second, 0.01, 48)).toMatchObject({ inboundLoss: 0.01, jitterMs: 4 });
    expect(attributedAgentSample(second, 0, 60)).toMatchObject({ inboundLoss: 0, jitterMs: 0 });
    expect(attributedAgentSample(second, undefined, undefined)).toEqual(second);
  });

  it('makes the call’s second end to end: round trips added, both directions the two legs in series', () => {
    const window = windowSecond(T0, { rttMs: 40, inboundLoss: 0.1, outboundLoss: 0.02, jitterMs: 30, remoteJitterMs: 6 });
    const agent = attributedAgentSample(window, 0.01, 20);
    const customer = customerLegSample({ at: T0, report: report({ packetsReceived: 90, packetsLost: 10, jitterMs: 20, roundTripMs: 150 }) }, undefined);
    const call = endToEndSample(window, agent, customer);
    expect(call).toMatchObject({ rttMs: 190, jitterMs: 30, remoteJitterMs: 26 });
    expect(call.inboundLoss).toBeCloseTo(1 - 0.99 * 0.9, 9);
    expect(call.outboundLoss).toBeCloseTo(1 - 0.98 * 0.9, 9);
    // The window's own measure of the path counts where it says worse.
    expect(endToEndSample(windowSecond(T0, { inboundLoss: 0.2 }), agent, customer).inboundLoss).toBe(0.2);
    // A figure the bridge has not given adds nothing; without the customer's leg, the window's second.
    expect(endToEndSample(window, agent, { ...customer, rttMs: undefined } as QualitySample).rttMs).toBe(40);
    expect(endToEndSample(window, agent, undefined)).toBe(window);
  });

  it('scores the call never better than either leg', () => {
    const ms = fc.double({ min: 0, max: 800, noNaN: true });
    const share = fc.double({ min: 0, max: 1, noNaN: true });
    fc.assert(
      fc.property(ms, ms, ms, share, share, share, share, ms, ms, (rtt, jitter, remoteJitter, inLoss, outLoss, agentRate, customerLoss, customerJitter, customerRtt) => {
        const window = windowSecond(T0, { rttMs: rtt, jitterMs: jitter, remoteJitterMs: remoteJitter, inboundLoss: inLoss, outboundLoss: outLoss });
        const customer: QualitySample = { at: T0, rttMs: customerRtt, jitterMs: customerJitter, inboundLoss: customerLoss, micMuted: true, packetsReceived: 50, bytesReceived: 0, connected: true };
        const agent = attributedAgentSample(window, agentRate, customerJitter);
        const call = sampleMos(endToEndSample(window, agent, customer))!;
        expect(call).toBeLessThanOrEqual(sampleMos(agent)! + 1e-9);
        expect(call).toBeLessThanOrEqual(sampleMos(customer)! + 1e-9);
      }),
    );
  });
});

describe('a bridged call judged on both legs', () => {
  it('a poor customer network and a clean agent leg: the customer’s warning alone, in words; the call’s MOS drops; the summary names the leg', () => {
    for (const reportPhaseMs of PHASES) {
      for (const seed of SEEDS) {
        const { steps, monitor } = simulate({ seconds: 60, customerLoss: (s) => (s >= 10 ? 0.12 : 0), agentLoss: () => 0, reportPhaseMs, seed });
        const where = `phase ${reportPhaseMs} ms, seed ${seed}`;
        expect(steps.flatMap(agentWarnings), where).toEqual([]);
        const last = steps.at(-1)!;
        expect(customerWarnings(last).map((w) => w.kind), where).toEqual(['high-packet-loss']);
        expect(customerWarnings(last)[0]!.text, where).toMatch(/^The customer’s connection is poor: \d+(\.\d)? % packet loss$/);
        expect(customerWarnings(last)[0]!.value, where).toBeGreaterThan(6);
        // 40 ms + 60 ms round trip and 12 % loss end to end: about 3.3, against 4.3 before.
        expect(steps[8]!.mos!, where).toBeGreaterThan(4.2);
        expect(last.mos!, where).toBeLessThan(3.9);
        expect(last.active.find((w) => w.kind === 'low-mos')?.text, where).toMatch(/^Poor call quality \(MOS \d\.\d\)$/);
        const summary = monitor.summary();
        expect(summary.legs?.customer.warningsSeen, where).toContain('high-packet-loss');
        expect(summary.legs?.agent.warningsSeen, where).not.toContain('high-packet-loss');
        expect(summary.warningsSeen, where).toContain('high-packet-loss');
        expect(summary.worstLossPercent!, where).toBeGreaterThan(6);
        expect(summary.legs!.agent.worstLossPercent!, where).toBeLessThan(1);
        expect(parseWith(qualitySummarySchema, summary), where).toEqual({ ok: true, value: summary });
      }
    }
  });

  it('a poor agent leg and a clean customer: the window’s own warning, as on a direct call, and none for the customer', () => {
    for (const reportPhaseMs of PHASES) {
      for (const seed of SEEDS.slice(0, 4)) {
        const { steps, monitor } = simulate({ seconds: 40, customerLoss: () => 0, agentLoss: (s) => (s >= 10 ? 0.08 : 0), reportPhaseMs, seed });
        const last = steps.at(-1)!;
        expect(steps.flatMap(customerWarnings)).toEqual([]);
        expect(agentWarnings(last).find((w) => w.kind === 'high-packet-loss')?.text).toMatch(/^Poor connection: \d+(\.\d)? % packet loss$/);
        expect(monitor.summary().legs?.agent.warningsSeen).toContain('high-packet-loss');
        expect(monitor.summary().legs?.customer.warningsSeen).toEqual([]);
      }
    }
  });

  it('both legs poor: each leg warns, the agent’s with about its own share', () => {
    for (const reportPhaseMs of PHASES) {
      const { steps } = simulate({ seconds: 60, customerLoss: () => 0.1, agentLoss: (s) => (s >= 20 ? 0.06 : 0), reportPhaseMs, seed: 11 });
      const last = steps.at(-1)!;
      expect(customerWarnings(last).map((w) => w.kind)).toEqual(['high-packet-loss']);
      const own = agentWarnings(last).find((w) => w.kind === 'high-packet-loss');
      expect(own?.value).toBeGreaterThan(3);
      expect(own?.value).toBeLessThan(9);
      // At the same kind the agent's own leg comes first.
      expect(last.active.filter((w) => w.kind === 'high-packet-loss').map((w) => w.leg ?? 'agent')).toEqual(['agent', 'customer']);
    }
  });

  it('jitter the customer’s network adds is the customer’s; jitter beyond it is the agent leg’s', () => {
    const customerOnly = simulate({ seconds: 20, customerLoss: () => 0, agentLoss: () => 0, reportPhaseMs: 400, seed: 3, customerJitterMs: 55, windowJitterMs: 58 });
    expect(customerOnly.steps.flatMap(agentWarnings)).toEqual([]);
    expect(customerWarnings(customerOnly.steps.at(-1)!)).toEqual([expect.objectContaining({ kind: 'high-jitter', text: 'The customer’s connection is poor: unsteady audio (jitter 55 ms)' })]);
    const both = simulate({ seconds: 20, customerLoss: () => 0, agentLoss: () => 0, reportPhaseMs: 400, seed: 3, customerJitterMs: 55, windowJitterMs: 100 });
    expect(agentWarnings(both.steps.at(-1)!).map((w) => [w.kind, w.value])).toContainEqual(['high-jitter', 45]);
  });

  it('a customer leg the bridge stops reporting on: its warnings go, and the call is judged on the window’s figures', () => {
    const monitor = new BridgedQualityMonitor();
    let node = { packetsReceived: 0, packetsLost: 0 };
    for (let s = 1; s <= 10; s++) {
      monitor.customerReport(report((node = { packetsReceived: node.packetsReceived + 44, packetsLost: node.packetsLost + 6 })), T0 + s * 1000 - 500);
      monitor.push(windowSecond(T0 + s * 1000, { inboundLoss: 6 / 50, packetsReceived: 44 }));
    }
    const stale = T0 + 10_000 + BRIDGED_QUALITY.staleMs + 1000;
    const step = monitor.push(windowSecond(stale));
    expect(step.active.filter((w) => w.leg === 'customer')).toEqual([]);
    expect(step.mos).toBeCloseTo(sampleMos(windowSecond(stale))!, 9);
  });

  it('a call the bridge never reports on is a direct call: the same steps and summary as QualityMonitor gives', () => {
    const figure = fc.record({
      rttMs: fc.option(fc.double({ min: 0, max: 900, noNaN: true }), { nil: undefined }),
      jitterMs: fc.double({ min: 0, max: 90, noNaN: true }),
      inboundLoss: fc.double({ min: 0, max: 0.3, noNaN: true }),
      packetsReceived: fc.integer({ min: 0, max: 60 }),
      customerLevel: fc.double({ min: 0, max: 0.1, noNaN: true }),
    });
    fc.assert(
      fc.property(fc.array(figure, { maxLength: 40 }), (seconds) => {
        const direct = new QualityMonitor();
        const bridged = new BridgedQualityMonitor();
        seconds.forEach((over, i) => {
          const sample = windowSecond(T0 + i * 1000, over);
          const expected = direct.push(sample);
          const step = bridged.push(sample);
          expect(step).toEqual({ ...(expected.mos !== undefined && { mos: expected.mos }), active: expected.active });
        });
        expect(bridged.summary()).toEqual(direct.summary());
        expect(bridged.summary().legs).toBeUndefined();
      }),
      { numRuns: 60 },
    );
  });
});
