// A bridged call's quality on both its legs (ARCHITECTURE.md "Bridged"; bridge/README.md). The
// customer's media ends on the team's bridge: the window measures only its own leg to the bridge
// (getStats, shared/call-quality.ts), the bridge measures the customer's leg (`LegReport`, fetched
// by main about once a second and pushed to the window). Each leg is judged on its own, with
// Twilio's rules, so that a warning says whose connection is poor; the call's MOS is the path's as
// a whole, end to end.
//
// What the window's figures are on a bridged call. The bridge forwards the customer's packets as
// they come and keeps their spacing and their gaps (bridge/media/outbound-stream.ts): what the
// window receives crossed both legs. Its inbound loss and jitter are the path's, customer to agent;
// its round trip and the bridge's receiver reports of the window's stream (the customer side's loss
// and jitter of our packets) are its own leg's alone. So:
// - the agent's leg keeps what is its own, and of the inbound figures only what the customer's leg
//   does not explain (agentInboundLoss, attributedAgentSample): the agent is never told their
//   connection is poor because the customer's is;
// - the customer's leg is what the bridge measures of it: loss as a rate over each report's
//   interval from the cumulative counts, jitter, round trip (customerLegSample);
// - the call, end to end (endToEndSample), gives the MOS shown and judged ("Quality 3.2",
//   "Poor call quality (MOS 3.2)").
//
// The end-to-end MOS (the E-model's simplifications as shared/call-quality.ts `mos` takes them from
// ITU-T G.107: effective latency = round trip + 2 × jitter + 10 ms, each percent of loss −2.5 R):
// the two legs are in series, and G.107 charges delay and loss on the whole path (Id on the total
// delay, Ie-eff on the total loss), so their figures are combined rather than each leg scored alone
// and the worse taken: two legs that each lose 1 % and take 150 ms make a call that loses 2 % and
// takes 300 ms, which neither leg's own score says. Every combined figure is at least each leg's,
// so the call's score is never better than either leg's: it is "the worse of the two legs", and
// lower when both are mediocre.
// - round trip: the two legs' round trips added (the bridge forwards on arrival, it buffers nothing);
// - customer → agent: the two legs in series, loss 1 − (1 − a)(1 − c), jitter a + c (the spread of
//   two delays in series is at most their sum), or the window's own measure of that path where it
//   says worse (it is the path's, whatever the split);
// - agent → customer: the customer's phone reports to the bridge only, so the bridge's loss and
//   jitter of the window's packets in series with the customer's network, taken to lose and spread
//   toward the customer as much as it does toward the bridge;
// - the worse direction counts, as for a direct call (sampleFigures).
// A figure the bridge has not given (no receiver report yet, no report for a while) adds nothing:
// the call is then judged on what the window knows, as a direct call is.
import type { LegReport } from './bridge';
import {
  QUALITY_WARNING_KINDS,
  QualityMonitor,
  formatLossPercent,
  formatRtt,
  type ActiveQualityWarning,
  type QualityLeg,
  type QualitySample,
  type QualitySummary,
  type QualityWarningKind,
} from './call-quality';

/** What the customer's leg is judged on: its network, as the bridge receives it. */
export const CUSTOMER_LEG_KINDS = ['high-packet-loss', 'high-rtt', 'high-jitter'] as const satisfies readonly QualityWarningKind[];
export type CustomerLegWarningKind = (typeof CUSTOMER_LEG_KINDS)[number];

export const BRIDGED_QUALITY = {
  /** A report older than this no longer speaks for the customer's leg: its warnings go, its figures count no more. */
  staleMs: 3_000,
  /**
   * The span over which the window's inbound losses are split between the legs. The two sides count
   * at different instants, up to a second apart, so the split is uncertain by a packet or two at
   * each end of the span: over 15 s of 50 packets a second that is about 0.2 %, well under the 1 %
   * a warning needs; over one second it would be several percent.
   */
  attributionSpanMs: 15_000,
  /** The customer's jitter is taken as its mean over this long: one report's figure wanders. */
  jitterSpanMs: 5_000,
  /** The window reads its statistics once a second (renderer/webrtc/media-health.ts); its first read counts from its stream's start, about a second before. */
  secondMs: 1_000,
} as const;

/** A warning in force, and which leg it is about: absent for the agent's own leg and for the call as a whole. */
export interface LegQualityWarning extends ActiveQualityWarning {
  leg?: 'customer';
}

/** What one window second changed. */
export interface BridgedQualityStep {
  /** The call's MOS this second: end to end once the bridge reports, else the window's. */
  mos?: number;
  /** Every warning now in force, most pressing first; at the same kind the agent's own leg first. */
  active: LegQualityWarning[];
}

/** The customer's warning in plain words (English, for logs; the window words it in its language). */
export function customerLegWarningText(kind: CustomerLegWarningKind, value?: number): string {
  const lead = 'The customer’s connection is poor';
  switch (kind) {
    case 'high-packet-loss':
      return value === undefined ? `${lead}: packet loss` : `${lead}: ${formatLossPercent(value)} packet loss`;
    case 'high-rtt':
      return value === undefined ? `${lead}: high delay` : `${lead}: high delay (${formatRtt(value)} round trip)`;
    case 'high-jitter':
      return value === undefined ? `${lead}: unsteady audio` : `${lead}: unsteady audio (jitter ${Math.round(Math.max(0, value))} ms)`;
  }
}

export const isCustomerLegKind = (kind: QualityWarningKind): kind is CustomerLegWarningKind => (CUSTOMER_LEG_KINDS as readonly QualityWarningKind[]).includes(kind);

// ---------------------------------------------------------------------------------------------
// The customer's leg

/** A report of the customer's leg, and when the window had it. */
export interface CustomerLegReading {
  at: number;
  report: LegReport;
}

/** Counters only grow; one that went down (late packets no longer counted lost) grew by nothing. */
const growth = (current: number, previous: number | undefined): number => Math.max(0, current - (previous ?? 0));

/**
 * One report of the customer's leg and the one before → one second of that leg: the loss over the
 * interval from the cumulative counts, the jitter and round trip the bridge measures. The first
 * report counts from the leg's start. No microphone and no audio level: the window judges those.
 */
export function customerLegSample(reading: CustomerLegReading, previous: CustomerLegReading | undefined): QualitySample {
  const { report, at } = reading;
  const received = growth(report.packetsReceived, previous?.report.packetsReceived);
  const lost = growth(report.packetsLost, previous?.report.packetsLost);
  const expected = received + lost;
  return {
    at,
    ...(report.roundTripMs !== undefined && report.roundTripMs >= 0 && { rttMs: report.roundTripMs }),
    ...(report.jitterMs !== undefined && report.jitterMs >= 0 && { jitterMs: report.jitterMs }),
    ...(expected > 0 && { inboundLoss: lost / expected }),
    // No microphone of ours on this leg: nothing to find silent.
    micMuted: true,
    packetsReceived: Math.round(received),
    bytesReceived: 0,
    connected: report.state === 'connected',
  };
}

// ---------------------------------------------------------------------------------------------
// The agent's leg

/** Packets counted from a stream's start: received, and lost (gaps in the sequence numbers). */
export interface PacketCounts {
  at: number;
  received: number;
  lost: number;
}

/** A window second's lost packets, from its loss fraction and the packets that did arrive. */
function lostIn(sample: QualitySample): number {
  const loss = sample.inboundLoss;
  if (loss === undefined || loss <= 0 || loss >= 1) return 0;
  return Math.round((loss * sample.packetsReceived) / (1 - loss));
}

/** Cumulative counts at `at`, on the straight line between the points around it (held flat outside them). */
function countsAt(points: readonly PacketCounts[], at: number): { received: number; lost: number } | undefined {
  const first = points[0];
  if (first === undefined) return undefined;
  if (at <= first.at) return { received: first.received, lost: first.lost };
  for (let i = 1; i < points.length; i++) {
    const before = points[i - 1]!;
    const after = points[i]!;
    if (at > after.at) continue;
    const f = after.at === before.at ? 1 : (at - before.at) / (after.at - before.at);
    return { received: before.received + f * (after.received - before.received), lost: before.lost + f * (after.lost - before.lost) };
  }
  const last = points[points.length - 1]!;
  return { received: last.received, lost: last.lost };
}

/**
 * The window's inbound loss that is its own leg's, per packet the window expected, read up to the
 * bridge's latest report the window has passed: after it, a gap could still be the customer's.
 * - The second before that report: the window's loss then (its counts read on the line between its
 *   own seconds). When the customer's leg lost nothing over the span, that is all the agent's.
 * - Otherwise, over the span between two of the bridge's reports (the latest, and the one about a
 *   span before it; with one report only, from both streams' starts): the window's lost packets
 *   less the customer leg's, per packet the window expected. The customer's gaps reach the window
 *   as gaps (the bridge keeps them), so what is left is what the bridge → window path lost. Never
 *   more than the second's own loss. (While the call is held the window hears the bridge's silence,
 *   not the customer: the customer's losses of those seconds never reach it, and the agent leg's
 *   own are under-counted until they are out of the span. A held call is not being listened to.)
 * Undefined when no report has been passed or the window's counts cannot be read there.
 */
export function agentInboundLoss(windowCounts: readonly PacketCounts[], customer: readonly CustomerLegReading[], now: number): number | undefined {
  const passed = customer.filter((r) => r.at <= now);
  const end = passed.at(-1);
  if (end === undefined) return undefined;
  const windowEnd = countsAt(windowCounts, end.at);
  const secondBefore = countsAt(windowCounts, end.at - BRIDGED_QUALITY.secondMs);
  if (windowEnd === undefined || secondBefore === undefined) return undefined;
  const secondExpected = windowEnd.received + windowEnd.lost - (secondBefore.received + secondBefore.lost);
  if (secondExpected <= 0) return undefined;
  const second = Math.min(1, Math.max(0, windowEnd.lost - secondBefore.lost) / secondExpected);

  const start = passed.find((r) => r.at >= end.at - BRIDGED_QUALITY.attributionSpanMs && r !== end);
  const customerLost = growth(end.report.packetsLost, start?.report.packetsLost);
  if (customerLost === 0) return second;
  const windowStart = start === undefined ? { received: 0, lost: 0 } : countsAt(windowCounts, start.at);
  if (windowStart === undefined) return undefined;
  const expected = windowEnd.received + windowEnd.lost - (windowStart.received + windowStart.lost);
  if (expected <= 0) return undefined;
  return Math.min(second, Math.max(0, windowEnd.lost - windowStart.lost - customerLost) / expected);
}

/**
 * The window's second as its own leg's: the inbound loss and jitter less what the customer's leg
 * explains (`agentLoss` from agentInboundLoss), the rest as measured. Jitter: the window's less the
 * customer's (its mean over a few seconds). Delays in series spread by at least the larger and at
 * most the sum of their spreads (RFC 3550's mean deviation), so the difference is the least the
 * agent's leg adds: it is charged only with what is surely its own.
 */
export function attributedAgentSample(sample: QualitySample, agentLoss: number | undefined, customerJitterMs: number | undefined): QualitySample {
  const attributed: QualitySample = { ...sample };
  if (agentLoss !== undefined && sample.inboundLoss !== undefined) attributed.inboundLoss = agentLoss;
  if (customerJitterMs !== undefined && sample.jitterMs !== undefined) attributed.jitterMs = Math.max(0, sample.jitterMs - customerJitterMs);
  return attributed;
}

// ---------------------------------------------------------------------------------------------
// The call, end to end

/** Loss of two legs in series: a packet gets through only if both let it. */
const inSeries = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? b : b === undefined ? a : 1 - (1 - a) * (1 - b));
const added = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? b : b === undefined ? a : a + b);
const larger = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? b : b === undefined ? a : Math.max(a, b));

/**
 * The call's second, end to end (the rules at the top of this file), from the window's second as
 * measured, its own leg's share (attributedAgentSample) and the customer leg's latest second.
 * Without the customer's figures it is the window's.
 */
export function endToEndSample(window: QualitySample, agent: QualitySample, customer: QualitySample | undefined): QualitySample {
  if (customer === undefined) return window;
  const rttMs = window.rttMs === undefined ? undefined : added(window.rttMs, customer.rttMs);
  const inboundLoss = larger(window.inboundLoss, inSeries(agent.inboundLoss, customer.inboundLoss));
  const jitterMs = larger(window.jitterMs, added(agent.jitterMs, customer.jitterMs));
  const outboundLoss = inSeries(window.outboundLoss, customer.inboundLoss);
  const remoteJitterMs = added(window.remoteJitterMs, customer.jitterMs);
  const { rttMs: _rtt, inboundLoss: _in, jitterMs: _jitter, outboundLoss: _out, remoteJitterMs: _remote, ...rest } = window;
  return {
    ...rest,
    ...(rttMs !== undefined && { rttMs }),
    ...(jitterMs !== undefined && { jitterMs }),
    ...(remoteJitterMs !== undefined && { remoteJitterMs }),
    ...(inboundLoss !== undefined && { inboundLoss }),
    ...(outboundLoss !== undefined && { outboundLoss }),
  };
}

// ---------------------------------------------------------------------------------------------
// The monitor

const mean = (values: readonly number[]): number | undefined => (values.length === 0 ? undefined : values.reduce((s, v) => s + v, 0) / values.length);

/** Most pressing first (QUALITY_WARNING_KINDS); at the same kind, the agent's own leg first. */
function byUrgency(a: LegQualityWarning, b: LegQualityWarning): number {
  const kind = QUALITY_WARNING_KINDS.indexOf(a.kind) - QUALITY_WARNING_KINDS.indexOf(b.kind);
  return kind !== 0 ? kind : (a.leg === 'customer' ? 1 : 0) - (b.leg === 'customer' ? 1 : 0);
}

/**
 * A call's quality, fed the window's second once a second and the bridge's reports of the
 * customer's leg as they come. A call the bridge never reported on is a direct call: its steps and
 * summary are the window's, exactly as QualityMonitor gives them. Once the bridge has reported:
 * - the agent's leg is judged on the window's figures as its own (attributedAgentSample), with every
 *   warning a direct call has except the MOS's, which is the call's;
 * - the customer's leg on the bridge's, for loss, round trip and jitter ("The customer’s connection
 *   is poor: 6 % packet loss"), while its reports are fresh;
 * - the call on the end-to-end figures: its MOS, "Poor call quality (MOS …)", and the summary's
 *   figures, with each leg's own summary beside them (`legs`).
 */
export class BridgedQualityMonitor {
  private readonly agent = new QualityMonitor();
  private readonly customer = new QualityMonitor({ judges: CUSTOMER_LEG_KINDS });
  private readonly call = new QualityMonitor({ judges: ['low-mos'] });
  private readings: CustomerLegReading[] = [];
  private customerSeconds: QualitySample[] = [];
  private windowCounts: PacketCounts[] = [];
  /** The call's warnings in the order first seen, once bridged (before, the agent's summary has them). */
  private seen: QualityWarningKind[] | undefined;

  /** Whether the bridge has reported on this call's customer leg. */
  get bridged(): boolean {
    return this.seen !== undefined;
  }

  /** A report of the customer's leg, stamped with the window's clock as it arrived; an older one than the last is dropped. */
  customerReport(report: LegReport, at: number): void {
    const previous = this.readings.at(-1);
    if (previous !== undefined && at <= previous.at) return;
    const reading = { at, report };
    const sample = customerLegSample(reading, previous);
    this.seen ??= [...this.agent.summary().warningsSeen];
    this.note(this.customer.push(sample).raised);
    this.readings.push(reading);
    this.customerSeconds.push(sample);
    // A span reaches back from a report the window has passed, which may be a few seconds old.
    const keepFrom = at - BRIDGED_QUALITY.attributionSpanMs - 2 * BRIDGED_QUALITY.staleMs;
    while (this.readings.length > 2 && this.readings[0]!.at < keepFrom) this.readings.shift();
    while (this.customerSeconds.length > 1 && this.customerSeconds[0]!.at < at - BRIDGED_QUALITY.jitterSpanMs) this.customerSeconds.shift();
  }

  /** The window's second (shared/call-quality.ts QualitySample). */
  push(sample: QualitySample): BridgedQualityStep {
    this.count(sample);
    const fresh = this.freshCustomer(sample.at);
    const agentSample = fresh
      ? attributedAgentSample(
          sample,
          agentInboundLoss(this.windowCounts, this.readings, sample.at),
          mean(this.customerSeconds.filter((s) => s.at >= sample.at - BRIDGED_QUALITY.jitterSpanMs).flatMap((s) => (s.jitterMs === undefined ? [] : [s.jitterMs]))),
        )
      : sample;
    const agentStep = this.agent.push(agentSample);
    const callStep = this.call.push(endToEndSample(sample, agentSample, fresh ? this.customerSeconds.at(-1) : undefined));
    if (this.seen === undefined) return { ...(agentStep.mos !== undefined && { mos: agentStep.mos }), active: agentStep.active };

    this.note(agentStep.raised.filter((k) => k !== 'low-mos'));
    this.note(callStep.raised);
    const customer: LegQualityWarning[] = fresh
      ? this.customer.activeWarnings().flatMap((w) => (isCustomerLegKind(w.kind) ? [{ ...w, leg: 'customer' as const, text: customerLegWarningText(w.kind, w.value) }] : []))
      : [];
    const active = [...agentStep.active.filter((w) => w.kind !== 'low-mos'), ...customer, ...callStep.active].sort(byUrgency);
    return { ...(callStep.mos !== undefined && { mos: callStep.mos }), active };
  }

  /** The call's summary: a direct call's as QualityMonitor makes it; a bridged call's end to end, with each leg's. */
  summary(): QualitySummary {
    if (this.seen === undefined) return this.agent.summary();
    const legs: Record<QualityLeg, ReturnType<QualityMonitor['summary']>> = { agent: this.agent.summary(), customer: this.customer.summary() };
    return { ...this.call.summary(), warningsSeen: [...this.seen], legs };
  }

  private note(kinds: readonly QualityWarningKind[]): void {
    if (this.seen === undefined) return;
    for (const kind of kinds) if (!this.seen.includes(kind)) this.seen.push(kind);
  }

  private freshCustomer(at: number): boolean {
    const last = this.readings.at(-1);
    return last !== undefined && at - last.at <= BRIDGED_QUALITY.staleMs;
  }

  /** The window's inbound counts from its stream's start, one point a second, as far back as a span needs. */
  private count(sample: QualitySample): void {
    const last = this.windowCounts.at(-1);
    if (last === undefined) this.windowCounts.push({ at: sample.at - BRIDGED_QUALITY.secondMs, received: 0, lost: 0 });
    const base = this.windowCounts.at(-1)!;
    this.windowCounts.push({ at: sample.at, received: base.received + sample.packetsReceived, lost: base.lost + lostIn(sample) });
    // The point before the oldest span's start stays: the counts there are read between it and the next.
    const keepFrom = sample.at - BRIDGED_QUALITY.attributionSpanMs - 2 * BRIDGED_QUALITY.staleMs;
    while (this.windowCounts.length > 2 && this.windowCounts[1]!.at < keepFrom) this.windowCounts.shift();
  }
}
