// A connected call's media health: whether the customer's media reaches us (awaiting the first
// packet, flowing, or away), the one place that decides "Reconnecting…", the grace after which a call
// whose media does not come back fails, and its quality: a getStats() read once a second
// (quality-stats.ts → shared/call-quality.ts QualityMonitor), on a bridged call beside the bridge's
// reports of the customer's leg (shared/bridged-quality.ts), the seconds kept, and the record it
// leaves when the media closes.
import type { LegReport } from '../../shared/bridge';
import { BridgedQualityMonitor, type BridgedQualityStep } from '../../shared/bridged-quality';
import type { QualitySample, QualitySummary, QualityWarningKind } from '../../shared/call-quality';
import { QUALITY_SAMPLES_KEPT, type CallQualityReport } from '../../shared/diagnostics';
import { createLogger } from '../../shared/log';
import { errorText } from '../../shared/result';
import { describeOffer, type OfferSummary } from '../../shared/sdp';
import { readQualitySample, type QualityCounters, type SelectedCandidatePair } from './quality-stats';

const log = createLogger('media');

/**
 * How long media may stay away (ICE disconnected, or no RTP from the customer) before the call is
 * given up: under the service's own cut-offs (20 s without media at the start, 30 s mid-call,
 * protocol.md 138021/138022), so that the agent hears it from us first, with the reason. There is no
 * ICE restart on this leg: the path comes back by itself or not at all.
 */
export const DISCONNECT_GRACE_MS = 15_000;
/**
 * The same grace on a bridged call: its customer hears the bridge's music as soon as our media stops,
 * and a call given up here rejoins on a new leg (shared/calls/rejoin.ts) rather than ends, so the
 * sooner it is given up the sooner the agent is back ("Reconnecting…" becomes "Rejoining…").
 */
export const BRIDGED_DISCONNECT_GRACE_MS = 5_000;
/** How often a connected call's statistics are read: media checks and call quality. */
export const MONITOR_INTERVAL_MS = 1_000;
/** A call given up because its media did not come back: the English words (rules:callMedia.networkLost). */
export const NETWORK_LOST_REASON = 'The network connection was lost';

/** How a connected call's media is doing, once a second and whenever it changes. */
export interface MediaCondition {
  localId: string;
  /** Media stopped (ICE disconnected, or nothing from the customer): "Reconnecting…" until it returns or the call is given up. */
  reconnecting: boolean;
  /** When media stopped (ms on the page's clock), while reconnecting. */
  since?: number;
  /** The last second's MOS estimate (E-model), when it had the figures. */
  mos?: number;
  /**
   * The quality warnings in force, most pressing first: the kind, its figure (ms, %, MOS) and the
   * English words for logs ("Poor connection: 6 % packet loss"); the window words them itself. On a
   * bridged call `leg` 'customer' marks the customer leg's ("The customer’s connection is poor: …").
   */
  warnings?: { kind: QualityWarningKind; value?: number; text: string; leg?: 'customer' }[];
}

/** What a call's media leaves behind when it closes (reportQuality): for the call history and diagnostics. */
export type CallQualityRecord = CallQualityReport;

/** A call's quality as judged now (the quality bench's and the tests' view). */
export interface QualityView {
  reconnecting: boolean;
  sample?: QualitySample;
  /** The call's MOS: on a bridged call end to end. */
  mos?: number;
  /** The warnings about the window's own leg and the call. */
  warnings: QualityWarningKind[];
  /** A bridged call's customer-leg warnings (absent on a direct call). */
  customerWarnings?: QualityWarningKind[];
  summary: QualitySummary;
}

/**
 * Whether the customer's media reaches us. `awaiting` with `since`: a read found none yet, and the
 * grace runs silently (a customer whose first packet comes late is not a network failure on screen).
 * `away`: media stopped after it had flowed.
 */
export type MediaFlow = { kind: 'awaiting'; since?: number } | { kind: 'flowing' } | { kind: 'away'; since: number };

export interface MediaHealthDeps {
  localId: string;
  /** The call's peer connection, once it has one. */
  pc: () => RTCPeerConnection | undefined;
  /** The microphone may sound on the sender: its silence is a warning only then. */
  micOpen: () => boolean;
  graceMs: number;
  condition: (condition: MediaCondition) => void;
  /** The grace ran out: the call fails with "The network connection was lost". */
  lost: () => void;
}

export class MediaHealth {
  private flow: MediaFlow = { kind: 'awaiting' };
  private graceTimer: ReturnType<typeof setTimeout> | undefined;
  private monitor: ReturnType<typeof setInterval> | undefined;
  /** A statistics read is under way: a read that outlasts the interval is not overlapped. */
  private reading = false;
  private readonly quality = new QualitySeconds();
  private graceMs: number;

  constructor(private readonly deps: MediaHealthDeps) {
    this.graceMs = deps.graceMs;
  }

  /** The grace from the next time media stops (a call learns it is bridged at its first push). */
  useGrace(ms: number): void {
    this.graceMs = ms;
  }

  get reconnecting(): boolean {
    return this.flow.kind === 'away';
  }

  /** The call connected: its statistics are read once a second from now on. */
  start(): void {
    this.monitor ??= setInterval(() => void this.check(), MONITOR_INTERVAL_MS);
  }

  /** ICE lost the path of the connected call. */
  pathLost(): void {
    this.away();
  }

  /** The call failed: nothing more is read or decided (close() still says its last word). */
  stop(): void {
    if (this.monitor !== undefined) clearInterval(this.monitor);
    if (this.graceTimer !== undefined) clearTimeout(this.graceTimer);
    this.monitor = undefined;
    this.graceTimer = undefined;
  }

  /** A report of the customer's leg from the bridge (a bridged call's), stamped as it arrives. */
  customerLeg(report: LegReport): void {
    this.quality.customerReport(report, Date.now());
  }

  /** The media closed: "Reconnecting…" ends, and the record of a call that was read at all is returned. */
  close(): CallQualityRecord | undefined {
    this.stop();
    if (this.flow.kind !== 'flowing' && this.flow.since !== undefined) this.deps.condition({ localId: this.deps.localId, reconnecting: false });
    return this.quality.record(this.deps.localId, this.deps.pc());
  }

  view(): QualityView {
    return { reconnecting: this.reconnecting, ...this.quality.view() };
  }

  private async check(): Promise<void> {
    const { localId } = this.deps;
    const pc = this.deps.pc();
    if (!pc || this.reading || this.monitor === undefined) return;
    let report: RTCStatsReport;
    this.reading = true;
    try {
      report = await pc.getStats();
    } catch (e) {
      log.debug('reading call statistics failed', { localId, problem: errorText(e) });
      return;
    } finally {
      this.reading = false;
    }
    if (this.monitor === undefined) return;
    const pathUp = pc.connectionState === 'connected' && pc.iceConnectionState !== 'disconnected';
    // Held, the microphone is not sent: its silence is no warning.
    const reading = readQualitySample(report, this.quality.counters, { at: Date.now(), micMuted: !this.deps.micOpen(), connected: pathUp });
    const step = this.quality.push(reading.sample, reading.counters, reading.pair);

    // Media flows while inbound packets arrive: one second without any is enough to say so (a
    // silent customer's phone still sends comfort noise or DTX packets several times a second).
    if (reading.sample.packetsReceived > 0 && pathUp) this.back();
    else this.away();
    const flow = this.flow;
    this.deps.condition({
      localId,
      reconnecting: flow.kind === 'away',
      ...(flow.kind === 'away' ? { since: flow.since } : {}),
      ...(step.mos !== undefined ? { mos: step.mos } : {}),
      // "Reconnecting…" says the media stopped; the same fact as a warning would say it twice.
      warnings: step.active
        .filter((w) => w.kind !== 'no-inbound-media')
        .map((w) => ({ kind: w.kind, ...(w.value !== undefined ? { value: w.value } : {}), text: w.text, ...(w.leg !== undefined ? { leg: w.leg } : {}) })),
    });
  }

  /** Media stopped (or has not come yet): "Reconnecting…" if it had flowed, and the grace runs. */
  private away(): void {
    const flow = this.flow;
    if (flow.kind === 'away' || (flow.kind === 'awaiting' && flow.since !== undefined)) return;
    const since = performance.now();
    const { localId } = this.deps;
    if (flow.kind === 'flowing') {
      this.flow = { kind: 'away', since };
      log.warn('media stopped: waiting for it to come back', { localId });
      this.deps.condition({ localId, reconnecting: true, since });
    } else {
      this.flow = { kind: 'awaiting', since };
      log.info('no media from the customer yet: waiting for it', { localId });
    }
    this.graceTimer = setTimeout(() => {
      this.graceTimer = undefined;
      if (this.flow.kind !== 'flowing') this.deps.lost();
    }, this.graceMs);
  }

  private back(): void {
    const flow = this.flow;
    this.flow = { kind: 'flowing' };
    if (flow.kind === 'flowing' || flow.since === undefined) return;
    log.info('media is back', { localId: this.deps.localId, awayMs: Math.round(performance.now() - flow.since) });
    if (this.graceTimer !== undefined) clearTimeout(this.graceTimer);
    this.graceTimer = undefined;
    this.deps.condition({ localId: this.deps.localId, reconnecting: false });
  }
}

/** A call's seconds of quality: the monitor's verdicts, and evenly spread samples for the record. */
class QualitySeconds {
  private readonly monitor = new BridgedQualityMonitor();
  counters: QualityCounters | undefined;
  private samples: QualitySample[] = [];
  /** Every how many seconds a sample is kept (doubles as the call grows). */
  private stride = 1;
  private seconds = 0;
  private path: SelectedCandidatePair | undefined;
  /** The last second's reading, for diagnostics and the quality bench. */
  private last: { sample: QualitySample; mos?: number; warnings: QualityWarningKind[]; customerWarnings: QualityWarningKind[] } | undefined;

  push(sample: QualitySample, counters: QualityCounters, pair: SelectedCandidatePair | undefined): BridgedQualityStep {
    this.counters = counters;
    if (pair) this.path = pair;
    this.keep(sample);
    const step = this.monitor.push(sample);
    this.last = {
      sample,
      ...(step.mos !== undefined ? { mos: step.mos } : {}),
      warnings: step.active.filter((w) => w.leg === undefined).map((w) => w.kind),
      customerWarnings: step.active.filter((w) => w.leg === 'customer').map((w) => w.kind),
    };
    return step;
  }

  customerReport(report: LegReport, at: number): void {
    this.monitor.customerReport(report, at);
  }

  view(): Omit<QualityView, 'reconnecting'> {
    const last = this.last;
    return {
      ...(last ? { sample: last.sample, ...(last.mos !== undefined ? { mos: last.mos } : {}) } : {}),
      warnings: last?.warnings ?? [],
      ...(this.monitor.bridged ? { customerWarnings: last?.customerWarnings ?? [] } : {}),
      summary: this.monitor.summary(),
    };
  }

  /** The record of a call read at least once (with address-free summaries of both descriptions). */
  record(localId: string, pc: RTCPeerConnection | undefined): CallQualityRecord | undefined {
    if (this.seconds === 0) return undefined;
    const local = summarise(pc?.localDescription?.sdp);
    const remote = summarise(pc?.remoteDescription?.sdp);
    return {
      localId,
      summary: this.monitor.summary(),
      samples: this.samples,
      ...(this.path ? { path: this.path } : {}),
      ...(local || remote ? { sdp: { ...(local ? { local } : {}), ...(remote ? { remote } : {}) } } : {}),
    };
  }

  /** Keeps evenly spread seconds, at most QUALITY_SAMPLES_KEPT: every other one is dropped when full. */
  private keep(sample: QualitySample): void {
    if (this.seconds++ % this.stride !== 0) return;
    this.samples.push(sample);
    if (this.samples.length >= QUALITY_SAMPLES_KEPT) {
      this.samples = this.samples.filter((_, i) => i % 2 === 0);
      this.stride *= 2;
    }
  }
}

function summarise(sdp: string | undefined): OfferSummary | undefined {
  const described = sdp ? describeOffer(sdp) : undefined;
  return described?.ok ? described.value : undefined;
}
