// A live call's quality, as Twilio's Voice SDK judges it: one sample a second from getStats, a MOS
// estimate by the E-model, and warnings raised on sustained trouble and cleared on sustained recovery.
// Pure: the renderer turns a stats report into a `QualitySample` (renderer/webrtc/quality-stats.ts)
// and feeds a `QualityMonitor`; the summary goes to the call history through `qualitySummarySchema`.
//
// Twilio's rules, as its SDK (twilio-voice.js, StatsMonitor) and the Voice Insights event reference
// state them: samples every second; high-rtt RTT > 400 ms, high-jitter jitter > 30 ms, low-mos MOS
// < 3.5 (the SDK's own default is 3; the published reference, which the issue anchors to, says 3.5),
// each in 3 of the last 5 samples; high-packet-loss > 1 % in 3 of the last 5 samples, or an average
// above 3 % over the last 7 (that rule clears at an average of 1 % or less); a warning clears only
// when none of the window's samples crosses its threshold; constant-audio-input-level looks at 10
// samples of the microphone's level.
import { z } from 'zod';
import { ruleMessage, strictObjectNamed } from './validation';

// ---------------------------------------------------------------------------------------------
// Samples

/** One second of a call. Fractions are 0..1 of this interval; a figure the stats did not give is absent. */
export interface QualitySample {
  /** When the sample was taken, unix ms. */
  at: number;
  /** Round-trip time (RTCP, else the ICE candidate pair's STUN round trip). */
  rttMs?: number;
  /** Inbound jitter: what the agent hears. */
  jitterMs?: number;
  /** Jitter the customer's side reports in RTCP (remote-inbound-rtp): what the customer hears. */
  remoteJitterMs?: number;
  /** Inbound packets lost / expected in this interval; absent when none were expected. */
  inboundLoss?: number;
  /** The customer's loss of our packets, from its latest RTCP receiver report. */
  outboundLoss?: number;
  /** Concealed samples / samples played out in this interval (the jitter buffer made up audio). */
  concealment?: number;
  /** The customer's audio level, 0..1 (linear, 1 = full scale). */
  customerLevel?: number;
  /** The agent's microphone level, 0..1. */
  micLevel?: number;
  micMuted: boolean;
  /** Inbound RTP packets and bytes received in this interval. */
  packetsReceived: number;
  bytesReceived: number;
  /** ICE and DTLS are up (the peer connection is `connected`). */
  connected: boolean;
}

const fraction = () => z.number().min(0).max(1);
const milliseconds = () => z.number().min(0).max(600_000);

/** A sample read from outside (diagnostics keep a call's recent samples). */
export const qualitySampleSchema = strictObjectNamed(
  {
    at: z.number().finite().nonnegative(),
    rttMs: milliseconds().optional(),
    jitterMs: milliseconds().optional(),
    remoteJitterMs: milliseconds().optional(),
    inboundLoss: fraction().optional(),
    outboundLoss: fraction().optional(),
    concealment: fraction().optional(),
    customerLevel: fraction().optional(),
    micLevel: fraction().optional(),
    micMuted: z.boolean(),
    packetsReceived: z.number().int().min(0).max(1_000_000),
    bytesReceived: z.number().int().min(0).max(1_000_000_000),
    connected: z.boolean(),
  },
  'a quality sample',
) satisfies z.ZodType<QualitySample>;

// ---------------------------------------------------------------------------------------------
// MOS

/**
 * The E-model's MOS (ITU-T G.107, simplified as Twilio computes it): effective latency = RTT + 2 ×
 * jitter + 10 ms (jitter counts twice: the jitter buffer delays by about that much; 10 ms for the
 * codec); R = 93.2 − latency / 40 below 160 ms, 93.2 − (latency − 120) / 10 from there (delay past
 * 160 ms hurts a conversation far more); each percent of loss costs 2.5; MOS = 1 + 0.035 R +
 * 7·10⁻⁶ R (R − 60)(100 − R). 93.2 is G.107's R with every other impairment at its default;
 * Twilio's current SDK starts from 94.768, which reads about 0.03 higher on a clean line.
 * Between 1 (unusable) and 4.5; a negative or non-finite input gives NaN.
 */
export function mos(rttMs: number, jitterMs: number, lossPercent: number): number {
  if (![rttMs, jitterMs, lossPercent].every((v) => Number.isFinite(v) && v >= 0)) return Number.NaN;
  const latency = rttMs + 2 * jitterMs + 10;
  let r = latency < 160 ? 93.2 - latency / 40 : 93.2 - (latency - 120) / 10;
  r -= 2.5 * Math.min(100, lossPercent);
  r = Math.min(100, Math.max(0, r));
  const score = 1 + 0.035 * r + 0.000007 * r * (r - 60) * (100 - r);
  // Below R ≈ 6.5 the polynomial dips under 1; MOS has no meaning there but "unusable".
  return Math.min(4.5, Math.max(1, score));
}

/** The direction that is worse: a call that sounds bad to the customer is a bad call too. */
const worse = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b);

/** A sample's jitter (ms) and loss (%) as the call's quality goes: the worse of the two directions. */
export function sampleFigures(sample: QualitySample): { rttMs?: number; jitterMs?: number; lossPercent?: number } {
  const jitterMs = worse(sample.jitterMs, sample.remoteJitterMs);
  const loss = worse(sample.inboundLoss, sample.outboundLoss);
  return {
    ...(sample.rttMs !== undefined && { rttMs: sample.rttMs }),
    ...(jitterMs !== undefined && { jitterMs }),
    ...(loss !== undefined && { lossPercent: loss * 100 }),
  };
}

/** A sample's MOS, when its round trip, jitter and loss are all known. */
export function sampleMos(sample: QualitySample): number | undefined {
  const { rttMs, jitterMs, lossPercent } = sampleFigures(sample);
  if (rttMs === undefined || jitterMs === undefined || lossPercent === undefined) return undefined;
  const score = mos(rttMs, jitterMs, lossPercent);
  return Number.isNaN(score) ? undefined : score;
}

// ---------------------------------------------------------------------------------------------
// Warnings

export type QualityWarningKind =
  | 'no-inbound-media'
  | 'mic-silent'
  | 'no-customer-audio'
  | 'high-packet-loss'
  | 'high-rtt'
  | 'high-jitter'
  | 'low-mos';

/** Most pressing first: the order active warnings are listed in. */
export const QUALITY_WARNING_KINDS: readonly QualityWarningKind[] = [
  'no-inbound-media',
  'mic-silent',
  'no-customer-audio',
  'high-packet-loss',
  'high-rtt',
  'high-jitter',
  'low-mos',
];

export const QUALITY_THRESHOLDS = {
  rttMs: 400,
  jitterMs: 30,
  lossPercent: 1,
  lossAveragePercent: 3,
  lossAverageClearPercent: 1,
  mos: 3.5,
  /** Samples a metric is judged over, and how many of them must cross to raise. */
  window: 5,
  raiseCount: 3,
  lossAverageWindow: 7,
  /**
   * Below this level (about −66 dBov) audio is silence: not a quiet room, whose noise stays well
   * above it, but a dead line or a dead microphone. Levels are linear, 1 = full scale.
   */
  silentLevel: 0.0005,
  /**
   * Silent seconds before "No audio from the customer". Long: a customer who listens to a long
   * explanation still sends room noise, but a noise-suppressed phone can come close to silence.
   */
  customerSilentSamples: 15,
  /** Silent seconds of an unmuted microphone (Twilio's constant-audio-input-level looks at 10). */
  micSilentSamples: 10,
  /** Seconds without a packet before the media counts as stopped ("Reconnecting…"). */
  noMediaSamples: 2,
} as const;

export interface ActiveQualityWarning {
  kind: QualityWarningKind;
  /** When it was raised (the sample's `at`). */
  since: number;
  /** The figure the warning is about (ms, %, MOS), while it crossed the threshold last. */
  value?: number;
  /** The warning in plain words, with its figure. */
  text: string;
}

/** Loss in words: one decimal under 10 % ("1.4 %", "6 %"), whole percents above. */
export function formatLossPercent(percent: number): string {
  const p = Math.max(0, percent);
  if (p >= 10) return `${Math.round(p)} %`;
  const tenth = Math.round(p * 10) / 10;
  return `${Number.isInteger(tenth) ? tenth.toFixed(0) : tenth.toFixed(1)} %`;
}

/** Round trips to the nearest 10 ms from 100 ms ("620 ms"); a precise figure would only flicker. */
export function formatRtt(ms: number): string {
  const v = Math.max(0, ms);
  return `${v >= 100 ? Math.round(v / 10) * 10 : Math.round(v)} ms`;
}

/** MOS to one decimal, rounded down, so that a score under 3.5 never reads "3.5". */
export function formatMos(score: number): string {
  return (Math.floor(score * 10 + 1e-9) / 10).toFixed(1);
}

/** The words for a warning; `value` is its figure (ms for round trip and jitter, % for loss, MOS). */
export function qualityWarningText(kind: QualityWarningKind, value?: number): string {
  switch (kind) {
    case 'no-inbound-media':
      return 'Reconnecting… the call’s audio has stopped arriving';
    case 'mic-silent':
      return 'Your microphone is silent';
    case 'no-customer-audio':
      return 'No audio from the customer';
    case 'high-packet-loss':
      return value === undefined ? 'Poor connection: packet loss' : `Poor connection: ${formatLossPercent(value)} packet loss`;
    case 'high-rtt':
      return value === undefined ? 'Poor connection: high delay' : `Poor connection: high delay (${formatRtt(value)} round trip)`;
    case 'high-jitter':
      return value === undefined ? 'Poor connection: unsteady audio' : `Poor connection: unsteady audio (jitter ${Math.round(Math.max(0, value))} ms)`;
    case 'low-mos':
      return value === undefined ? 'Poor call quality' : `Poor call quality (MOS ${formatMos(value)})`;
    default:
      return assertNever(kind);
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected quality warning: ${String(value)}`);
}

// ---------------------------------------------------------------------------------------------
// Summary

/** What the call history keeps of one stretch of a call's media: the whole call, or one of its legs. */
export interface QualityLegSummary {
  /** Seconds sampled. */
  samples: number;
  /** Mean of the samples' MOS; null when no sample had one. */
  avgMos: number | null;
  /** The worst five seconds' mean MOS. */
  worstMos: number | null;
  /** The worst five seconds' mean loss (the worse direction), percent. */
  worstLossPercent: number | null;
  /** Every warning raised during the call, in the order first seen. */
  warningsSeen: QualityWarningKind[];
}

/** The legs of a bridged call (shared/bridged-quality.ts): the agent's as the window measures it, the customer's as the bridge does. */
export type QualityLeg = 'agent' | 'customer';

/** What the call history keeps of a call's quality. */
export interface QualitySummary extends QualityLegSummary {
  /**
   * A bridged call's legs, each judged on its own; the figures above are then the call's end to
   * end. A direct call has none: its one path is the whole call.
   */
  legs?: Record<QualityLeg, QualityLegSummary>;
}

const legSummaryShape = {
  samples: z.number().int().min(0).max(10_000_000),
  avgMos: z.number().min(1).max(5).nullable(),
  worstMos: z.number().min(1).max(5).nullable(),
  worstLossPercent: z.number().min(0).max(100).nullable(),
  warningsSeen: z
    .array(z.enum(QUALITY_WARNING_KINDS as [QualityWarningKind, ...QualityWarningKind[]]))
    .max(QUALITY_WARNING_KINDS.length)
    .refine((kinds) => new Set(kinds).size === kinds.length, ruleMessage('commands.warningTwice')),
};

export const qualityLegSummarySchema = strictObjectNamed(legSummaryShape, 'a leg’s quality summary') satisfies z.ZodType<QualityLegSummary>;

export const qualitySummarySchema = strictObjectNamed(
  {
    ...legSummaryShape,
    legs: z.strictObject({ agent: qualityLegSummarySchema, customer: qualityLegSummarySchema }).optional(),
  },
  'a quality summary',
) satisfies z.ZodType<QualitySummary>;

/** The running figures a summary is made from. */
export interface QualityTally {
  samples: number;
  mosCount: number;
  mosSum: number;
  worstMos: number | null;
  worstLossPercent: number | null;
  warningsSeen: QualityWarningKind[];
}

export const emptyQualityTally = (): QualityTally => ({
  samples: 0,
  mosCount: 0,
  mosSum: 0,
  worstMos: null,
  worstLossPercent: null,
  warningsSeen: [],
});

/**
 * One more second: its MOS, the means of the last five seconds (at 50 packets a second one lost
 * packet is already 2 %, so a single second's worst says little; five seconds are what the warnings
 * judge too), and the warnings it raised.
 */
export function tallySecond(
  tally: QualityTally,
  second: { mos?: number; recentMos?: number; recentLossPercent?: number; raised?: readonly QualityWarningKind[] },
): QualityTally {
  const next: QualityTally = { ...tally, samples: tally.samples + 1 };
  if (second.mos !== undefined) {
    next.mosCount += 1;
    next.mosSum += second.mos;
  }
  if (second.recentMos !== undefined) next.worstMos = tally.worstMos === null ? second.recentMos : Math.min(tally.worstMos, second.recentMos);
  if (second.recentLossPercent !== undefined) {
    next.worstLossPercent = tally.worstLossPercent === null ? second.recentLossPercent : Math.max(tally.worstLossPercent, second.recentLossPercent);
  }
  const fresh = (second.raised ?? []).filter((k) => !tally.warningsSeen.includes(k));
  if (fresh.length > 0) next.warningsSeen = [...tally.warningsSeen, ...fresh];
  return next;
}

const round = (v: number, digits: number): number => Math.round(v * 10 ** digits) / 10 ** digits;

export function summaryOf(tally: QualityTally): QualityLegSummary {
  return {
    samples: tally.samples,
    avgMos: tally.mosCount > 0 ? round(tally.mosSum / tally.mosCount, 2) : null,
    worstMos: tally.worstMos === null ? null : round(tally.worstMos, 2),
    worstLossPercent: tally.worstLossPercent === null ? null : round(Math.min(100, tally.worstLossPercent), 1),
    warningsSeen: [...tally.warningsSeen],
  };
}

// ---------------------------------------------------------------------------------------------
// The monitor

/** What one sample changed. */
export interface QualityStep {
  /** This sample's MOS, when it had one. */
  mos?: number;
  /** Every warning now active, most pressing first. */
  active: ActiveQualityWarning[];
  raised: QualityWarningKind[];
  cleared: QualityWarningKind[];
}

/** A second as the network warnings judge it: figures from a second that carried no media are unknown. */
interface JudgedSecond {
  rttMs?: number;
  jitterMs?: number;
  lossPercent?: number;
  mos?: number;
}

type Verdict = 'raise' | 'clear' | 'hold';

/** A rule's verdict on the window, and on a raise the figure the warning states. */
interface Judgement {
  verdict: Verdict;
  figure?: number;
}

/**
 * Twilio's "n of the last 5": raise when at least 3 of the window cross; clear only when the window
 * is full of known figures and none crosses. Between the two (1 or 2 bad seconds) the warning keeps
 * its state: that band is the hysteresis, so a line that hovers at the threshold neither flaps nor
 * clears while it is still bad every other second, and a cleared warning means five clean seconds.
 * The figure is the median of the seconds that crossed: how bad the line is when it is bad, and
 * always past the threshold.
 */
function countRule(values: ReadonlyArray<number | undefined>, crosses: (v: number) => boolean): Judgement {
  const { window, raiseCount } = QUALITY_THRESHOLDS;
  const recent = values.slice(-window);
  const known = knownOf(recent);
  const crossing = known.filter(crosses);
  if (crossing.length >= raiseCount) {
    const figure = median(crossing);
    return figure === undefined ? { verdict: 'raise' } : { verdict: 'raise', figure };
  }
  if (recent.length === window && known.length === window) return { verdict: crossing.length === 0 ? 'clear' : 'hold' };
  return { verdict: 'hold' };
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

function mean(values: readonly number[]): number | undefined {
  return values.length === 0 ? undefined : values.reduce((s, v) => s + v, 0) / values.length;
}

const knownOf = (values: ReadonlyArray<number | undefined>): number[] => values.filter((v): v is number => v !== undefined);

/**
 * Fed one sample a second, says which warnings are active and which this sample raised or cleared.
 * The network warnings (round trip, jitter, loss, MOS) follow Twilio's windows above. The media and
 * audio warnings need a run of seconds to be raised (that run is their hysteresis) and clear on the
 * first second that contradicts them: sound or packets arriving again are not a borderline figure.
 */
export class QualityMonitor {
  /** The warnings this monitor may raise: every kind, unless it judges only part of a call (a bridged call's customer leg). */
  private readonly judges: ReadonlySet<QualityWarningKind>;
  private readonly seconds: JudgedSecond[] = [];
  private readonly active = new Map<QualityWarningKind, ActiveQualityWarning>();
  private lossBurst = false;
  private lossAverage = false;
  private mediaSeen = false;
  private noMediaRun = 0;
  private customerSilentRun = 0;
  private micSilentRun = 0;
  private lastHadMedia = true;
  private tally = emptyQualityTally();

  constructor(options: { judges?: readonly QualityWarningKind[] } = {}) {
    this.judges = new Set(options.judges ?? QUALITY_WARNING_KINDS);
  }

  push(sample: QualitySample): QualityStep {
    const before = new Set(this.active.keys());
    const at = sample.at;

    // Media: once the connection has come up and packets have flowed, seconds without a packet
    // (or with the connection down) mean the media stopped: "Reconnecting…" at once, elsewhere.
    const hasMedia = sample.connected && sample.packetsReceived > 0;
    if (hasMedia) this.mediaSeen = true;
    this.noMediaRun = this.mediaSeen && !hasMedia ? this.noMediaRun + 1 : 0;
    if (this.noMediaRun >= QUALITY_THRESHOLDS.noMediaSamples) this.raise('no-inbound-media', at);
    else if (hasMedia) this.clear('no-inbound-media');

    // A second without media has only stale figures, and the first one after a gap counts every
    // packet of the gap as lost: the gap is no-inbound-media's, not a loss rate.
    const figures = sampleFigures(sample);
    const judged: JudgedSecond = {};
    if (hasMedia) {
      if (figures.rttMs !== undefined) judged.rttMs = figures.rttMs;
      if (figures.jitterMs !== undefined) judged.jitterMs = figures.jitterMs;
      const loss = this.lastHadMedia ? figures.lossPercent : sample.outboundLoss === undefined ? undefined : sample.outboundLoss * 100;
      if (loss !== undefined) judged.lossPercent = loss;
      if (judged.rttMs !== undefined && judged.jitterMs !== undefined && judged.lossPercent !== undefined) {
        const score = mos(judged.rttMs, judged.jitterMs, judged.lossPercent);
        if (!Number.isNaN(score)) judged.mos = score;
      }
    }
    this.lastHadMedia = hasMedia;
    this.seconds.push(judged);
    if (this.seconds.length > QUALITY_THRESHOLDS.lossAverageWindow) this.seconds.shift();
    this.judgeNetwork(at);

    this.judgeCustomerAudio(sample, hasMedia, at);
    this.judgeMicrophone(sample, at);

    const raised = QUALITY_WARNING_KINDS.filter((k) => this.active.has(k) && !before.has(k));
    const cleared = QUALITY_WARNING_KINDS.filter((k) => !this.active.has(k) && before.has(k));
    const recent = this.seconds.slice(-QUALITY_THRESHOLDS.window);
    const recentMos = mean(knownOf(recent.map((s) => s.mos)));
    const recentLossPercent = mean(knownOf(recent.map((s) => s.lossPercent)));
    this.tally = tallySecond(this.tally, {
      ...(judged.mos !== undefined && { mos: judged.mos }),
      ...(recentMos !== undefined && { recentMos }),
      ...(recentLossPercent !== undefined && { recentLossPercent }),
      raised,
    });
    return { ...(judged.mos !== undefined && { mos: judged.mos }), active: this.activeWarnings(), raised, cleared };
  }

  activeWarnings(): ActiveQualityWarning[] {
    return QUALITY_WARNING_KINDS.flatMap((k) => {
      const w = this.active.get(k);
      return w ? [{ ...w }] : [];
    });
  }

  summary(): QualityLegSummary {
    return summaryOf(this.tally);
  }

  private judgeNetwork(at: number): void {
    const t = QUALITY_THRESHOLDS;
    const series = (pick: (s: JudgedSecond) => number | undefined) => this.seconds.map(pick);
    this.apply('high-rtt', countRule(series((s) => s.rttMs), (v) => v > t.rttMs), at);
    this.apply('high-jitter', countRule(series((s) => s.jitterMs), (v) => v > t.jitterMs), at);
    this.apply('low-mos', countRule(series((s) => s.mos), (v) => v < t.mos), at);

    // Loss has two rules (Twilio raises the same warning for either): a burst, 3 of 5 seconds above
    // 1 %; and a steady average above 3 % over 7 seconds, which clears at 1 % or less. The warning
    // stands while either rule holds it.
    const losses = series((s) => s.lossPercent);
    const burst = countRule(losses, (v) => v > t.lossPercent);
    if (burst.verdict !== 'hold') this.lossBurst = burst.verdict === 'raise';
    const averageWindow = losses.slice(-t.lossAverageWindow);
    const knownLosses = knownOf(averageWindow);
    const average = knownLosses.length === t.lossAverageWindow ? mean(knownLosses) : undefined;
    const averageRaises = average !== undefined && average > t.lossAveragePercent;
    if (averageRaises) this.lossAverage = true;
    else if (average !== undefined && average <= t.lossAverageClearPercent) this.lossAverage = false;

    if (!this.lossBurst && !this.lossAverage) this.clear('high-packet-loss');
    else if (burst.verdict === 'raise' || averageRaises) {
      // The figure the agent reads is the loss rate of the last seconds, bad and good alike: at 50
      // packets a second one packet is 2 %, so the median of the bad seconds alone would read about
      // twice the real rate on a steadily lossy line.
      const recentLosses = knownOf(losses.slice(-t.window));
      const rate = average ?? mean(recentLosses);
      const figures = [rate, burst.verdict === 'raise' ? burst.figure : undefined, averageRaises ? average : undefined];
      this.raise('high-packet-loss', at, rate !== undefined && rate > t.lossPercent ? rate : Math.max(...knownOf(figures)));
    }
  }

  private judgeCustomerAudio(sample: QualitySample, hasMedia: boolean, at: number): void {
    // Only seconds that carried media say anything about the customer's sound; a gap is
    // no-inbound-media's, and replaces this warning.
    if (this.active.has('no-inbound-media')) {
      this.customerSilentRun = 0;
      this.clear('no-customer-audio');
      return;
    }
    if (!hasMedia || sample.customerLevel === undefined) return;
    if (sample.customerLevel < QUALITY_THRESHOLDS.silentLevel) {
      this.customerSilentRun += 1;
      if (this.customerSilentRun >= QUALITY_THRESHOLDS.customerSilentSamples) this.raise('no-customer-audio', at);
    } else {
      this.customerSilentRun = 0;
      this.clear('no-customer-audio');
    }
  }

  private judgeMicrophone(sample: QualitySample, at: number): void {
    if (sample.micMuted) {
      this.micSilentRun = 0;
      this.clear('mic-silent');
      return;
    }
    if (sample.micLevel === undefined) return;
    if (sample.micLevel < QUALITY_THRESHOLDS.silentLevel) {
      this.micSilentRun += 1;
      if (this.micSilentRun >= QUALITY_THRESHOLDS.micSilentSamples) this.raise('mic-silent', at);
    } else {
      this.micSilentRun = 0;
      this.clear('mic-silent');
    }
  }

  private apply(kind: QualityWarningKind, judgement: Judgement, at: number): void {
    if (judgement.verdict === 'raise') this.raise(kind, at, judgement.figure);
    else if (judgement.verdict === 'clear') this.clear(kind);
  }

  /** Raises, or refreshes the figure of a warning whose condition still holds. */
  private raise(kind: QualityWarningKind, at: number, value?: number): void {
    if (!this.judges.has(kind)) return;
    const since = this.active.get(kind)?.since ?? at;
    this.active.set(kind, { kind, since, ...(value !== undefined && { value }), text: qualityWarningText(kind, value) });
  }

  private clear(kind: QualityWarningKind): void {
    this.active.delete(kind);
  }
}
