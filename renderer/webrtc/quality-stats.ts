// One getStats report → one second of call quality (shared/call-quality.ts). The report's counters
// run from the start of the stream, so a sample is the difference from the previous report's: the
// caller keeps the `QualityCounters` this returns and hands them back a second later.
//
// Records are read loosely, as audio-stats.ts reads them: a field a browser does not give is
// absent from the sample, never a guess. What is read (webrtc-stats):
// - inbound-rtp (audio): jitter, packetsLost, packetsReceived, bytesReceived, concealedSamples,
//   totalSamplesReceived, totalAudioEnergy/totalSamplesDuration (else audioLevel);
// - remote-inbound-rtp (the customer's RTCP receiver reports): roundTripTime, jitter, fractionLost
//   (else packetsLost against our outbound-rtp packetsSent);
// - the selected candidate pair: currentRoundTripTime when RTCP has no round trip, and its local and
//   remote candidate types;
// - media-source (audio): the microphone's totalAudioEnergy/totalSamplesDuration (else audioLevel).
import type { QualitySample } from '../../shared/call-quality';

type StatsRecord = Record<string, unknown>;

/** RTCStatsReport, or a Map of plain records shaped like one. */
export interface StatsReportLike {
  forEach(callback: (value: unknown, key: string) => void): void;
}

export type CandidateType = 'host' | 'srflx' | 'prflx' | 'relay';
const CANDIDATE_TYPES: readonly string[] = ['host', 'srflx', 'prflx', 'relay'] satisfies readonly CandidateType[];

export interface SelectedCandidatePair {
  localType: CandidateType;
  remoteType: CandidateType;
  /** The local candidate's transport to the peer: 'udp' or 'tcp'. */
  localProtocol?: string;
  /** For a relay candidate, how it reaches the TURN server: 'udp', 'tcp' or 'tls'. */
  relayProtocol?: string;
  /** Seconds, from the pair's latest STUN check. */
  currentRoundTripTime?: number;
}

/** The running counters of one report, kept until the next. */
export interface QualityCounters {
  inbound?: {
    ssrc?: number;
    packetsReceived?: number;
    packetsLost?: number;
    bytesReceived?: number;
    concealedSamples?: number;
    totalSamplesReceived?: number;
    totalAudioEnergy?: number;
    totalSamplesDuration?: number;
  };
  mic?: { totalAudioEnergy?: number; totalSamplesDuration?: number };
  /** The latest receiver report's loss, for browsers that give no fractionLost. */
  remote?: { report: number; packetsLost: number; packetsSent: number; lossFraction?: number };
}

export interface QualityContext {
  /** When the report was taken, unix ms. */
  at: number;
  micMuted: boolean;
  /** The peer connection is `connected`. */
  connected: boolean;
}

export interface QualityReading {
  sample: QualitySample;
  counters: QualityCounters;
  pair?: SelectedCandidatePair;
}

const numberField = (r: StatsRecord | undefined, key: string): number | undefined => {
  const v = r?.[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};
const stringField = (r: StatsRecord | undefined, key: string): string | undefined => {
  const v = r?.[key];
  return typeof v === 'string' ? v : undefined;
};
const clamp01 = (v: number): number => Math.min(1, Math.max(0, v));
const isAudio = (r: StatsRecord): boolean => r.kind === 'audio' || r.mediaType === 'audio';

interface Sorted {
  byId: Map<string, StatsRecord>;
  inbound?: StatsRecord;
  remoteInbound?: StatsRecord;
  outbound?: StatsRecord;
  mediaSource?: StatsRecord;
  transports: StatsRecord[];
  pairs: StatsRecord[];
}

function sortReport(report: StatsReportLike): Sorted {
  const sorted: Sorted = { byId: new Map(), transports: [], pairs: [] };
  report.forEach((value, key) => {
    if (typeof value !== 'object' || value === null) return;
    const r = value as StatsRecord;
    sorted.byId.set(stringField(r, 'id') ?? key, r);
    switch (r.type) {
      case 'inbound-rtp':
        if (isAudio(r)) sorted.inbound ??= r;
        break;
      case 'remote-inbound-rtp':
        if (isAudio(r)) sorted.remoteInbound ??= r;
        break;
      case 'outbound-rtp':
        if (isAudio(r)) sorted.outbound ??= r;
        break;
      case 'media-source':
        if (isAudio(r)) sorted.mediaSource ??= r;
        break;
      case 'transport':
        sorted.transports.push(r);
        break;
      case 'candidate-pair':
        sorted.pairs.push(r);
        break;
    }
  });
  return sorted;
}

/**
 * The pair ICE uses: the transport's selectedCandidatePairId (the standard, Chromium), else a pair
 * marked `selected` (Firefox), else the nominated, succeeded pair that carried the most bytes.
 */
function selectedPairRecord(sorted: Sorted): StatsRecord | undefined {
  for (const transport of sorted.transports) {
    const id = stringField(transport, 'selectedCandidatePairId');
    const pair = id === undefined ? undefined : sorted.byId.get(id);
    if (pair) return pair;
  }
  const marked = sorted.pairs.find((p) => p.selected === true);
  if (marked) return marked;
  const bytes = (p: StatsRecord) => (numberField(p, 'bytesReceived') ?? 0) + (numberField(p, 'bytesSent') ?? 0);
  return sorted.pairs
    .filter((p) => p.nominated === true && p.state === 'succeeded')
    .reduce<StatsRecord | undefined>((best, p) => (best === undefined || bytes(p) > bytes(best) ? p : best), undefined);
}

function describePair(sorted: Sorted, pair: StatsRecord | undefined): SelectedCandidatePair | undefined {
  if (!pair) return undefined;
  const localId = stringField(pair, 'localCandidateId');
  const remoteId = stringField(pair, 'remoteCandidateId');
  const local = localId === undefined ? undefined : sorted.byId.get(localId);
  const remote = remoteId === undefined ? undefined : sorted.byId.get(remoteId);
  const localType = stringField(local, 'candidateType');
  const remoteType = stringField(remote, 'candidateType');
  if (localType === undefined || remoteType === undefined || !CANDIDATE_TYPES.includes(localType) || !CANDIDATE_TYPES.includes(remoteType)) {
    return undefined;
  }
  const localProtocol = stringField(local, 'protocol');
  const relayProtocol = stringField(local, 'relayProtocol');
  const rtt = numberField(pair, 'currentRoundTripTime');
  return {
    localType: localType as CandidateType,
    remoteType: remoteType as CandidateType,
    ...(localProtocol !== undefined && { localProtocol }),
    ...(relayProtocol !== undefined && { relayProtocol }),
    ...(rtt !== undefined && rtt >= 0 && { currentRoundTripTime: rtt }),
  };
}

/** The candidate pair ICE selected, with its candidates' types; undefined before one is selected. */
export function selectedCandidatePair(report: StatsReportLike): SelectedCandidatePair | undefined {
  const sorted = sortReport(report);
  return describePair(sorted, selectedPairRecord(sorted));
}

/**
 * A counter's growth since the previous report. Absent before: the counter ran from the stream's
 * start, so all of it. Smaller than before: counters only grow, so this is a restarted stream
 * (treated as such by the caller) or packetsLost shrinking as late packets arrive: no growth.
 */
function growth(current: number | undefined, previous: number | undefined): number | undefined {
  if (current === undefined) return undefined;
  return previous === undefined ? Math.max(0, current) : Math.max(0, current - previous);
}

/** RMS level over the interval from the running energy (webrtc-stats: Σ audioLevel² × seconds), else the instant level. */
function intervalLevel(
  record: StatsRecord | undefined,
  previous: { totalAudioEnergy?: number; totalSamplesDuration?: number } | undefined,
): number | undefined {
  const energy = growth(numberField(record, 'totalAudioEnergy'), previous?.totalAudioEnergy);
  const duration = growth(numberField(record, 'totalSamplesDuration'), previous?.totalSamplesDuration);
  if (energy !== undefined && duration !== undefined && duration > 0) return clamp01(Math.sqrt(energy / duration));
  const level = numberField(record, 'audioLevel');
  return level === undefined ? undefined : clamp01(level);
}

function inboundCounters(r: StatsRecord | undefined): QualityCounters['inbound'] {
  if (!r) return undefined;
  const keys = ['ssrc', 'packetsReceived', 'packetsLost', 'bytesReceived', 'concealedSamples', 'totalSamplesReceived', 'totalAudioEnergy', 'totalSamplesDuration'] as const;
  const counters: NonNullable<QualityCounters['inbound']> = {};
  for (const key of keys) {
    const v = numberField(r, key);
    if (v !== undefined) counters[key] = v;
  }
  return counters;
}

/**
 * The customer's loss of our packets. fractionLost is the receiver report's own figure for the
 * interval it covers. Without it: the report's packetsLost growth against the packets we sent over
 * the same reports, kept until the next report, as fractionLost is.
 */
function outboundLoss(sorted: Sorted, previous: QualityCounters['remote']): { loss?: number; counters?: QualityCounters['remote'] } {
  const remote = sorted.remoteInbound;
  const fractionLost = numberField(remote, 'fractionLost');
  if (fractionLost !== undefined) return { loss: clamp01(fractionLost) };
  const lost = numberField(remote, 'packetsLost');
  const sent = numberField(sorted.outbound, 'packetsSent');
  const report = numberField(remote, 'reportsReceived') ?? numberField(remote, 'timestamp');
  if (lost === undefined || sent === undefined || report === undefined) return {};
  if (previous && previous.report === report && sent >= previous.packetsSent) {
    return { ...(previous.lossFraction !== undefined && { loss: previous.lossFraction }), counters: previous };
  }
  const restarted = previous !== undefined && sent < previous.packetsSent;
  const base = previous && !restarted ? previous : { packetsLost: 0, packetsSent: 0 };
  const sentSince = sent - base.packetsSent;
  const lossFraction = sentSince > 0 ? clamp01(Math.max(0, lost - base.packetsLost) / sentSince) : previous?.lossFraction;
  return {
    ...(lossFraction !== undefined && { loss: lossFraction }),
    counters: { report, packetsLost: lost, packetsSent: sent, ...(lossFraction !== undefined && { lossFraction }) },
  };
}

/** One report and the previous report's counters → one second of quality and the counters to keep. */
export function readQualitySample(report: StatsReportLike, previous: QualityCounters | undefined, context: QualityContext): QualityReading {
  const sorted = sortReport(report);
  const pair = describePair(sorted, selectedPairRecord(sorted));
  const inbound = sorted.inbound;
  const current = inboundCounters(inbound);

  // A new SSRC or a packet count that went down is a new stream: its counters start from zero.
  const before = previous?.inbound;
  const restarted =
    before !== undefined &&
    current !== undefined &&
    ((before.ssrc !== undefined && current.ssrc !== undefined && before.ssrc !== current.ssrc) ||
      (before.packetsReceived !== undefined && current.packetsReceived !== undefined && current.packetsReceived < before.packetsReceived));
  const base = restarted ? undefined : before;

  const received = growth(current?.packetsReceived, base?.packetsReceived);
  const lost = growth(current?.packetsLost, base?.packetsLost);
  const expected = (received ?? 0) + (lost ?? 0);
  const concealed = growth(current?.concealedSamples, base?.concealedSamples);
  const played = growth(current?.totalSamplesReceived, base?.totalSamplesReceived);

  const remote = sorted.remoteInbound;
  const remoteRtt = numberField(remote, 'roundTripTime');
  // A zero round trip from RTCP means the report had no timing to measure it by.
  const rttSeconds = remoteRtt !== undefined && remoteRtt > 0 ? remoteRtt : pair?.currentRoundTripTime;
  const jitter = numberField(inbound, 'jitter');
  const remoteJitter = numberField(remote, 'jitter');
  const outbound = outboundLoss(sorted, previous?.remote);
  const customerLevel = intervalLevel(inbound, base);
  const micLevel = intervalLevel(sorted.mediaSource, previous?.mic);

  const sample: QualitySample = {
    at: context.at,
    ...(rttSeconds !== undefined && rttSeconds >= 0 && { rttMs: rttSeconds * 1000 }),
    ...(jitter !== undefined && jitter >= 0 && { jitterMs: jitter * 1000 }),
    ...(remoteJitter !== undefined && remoteJitter >= 0 && { remoteJitterMs: remoteJitter * 1000 }),
    ...(received !== undefined && lost !== undefined && expected > 0 && { inboundLoss: clamp01(lost / expected) }),
    ...(outbound.loss !== undefined && { outboundLoss: outbound.loss }),
    ...(concealed !== undefined && played !== undefined && played > 0 && { concealment: clamp01(concealed / played) }),
    ...(customerLevel !== undefined && { customerLevel }),
    ...(micLevel !== undefined && { micLevel }),
    micMuted: context.micMuted,
    packetsReceived: Math.round(received ?? 0),
    bytesReceived: Math.round(growth(current?.bytesReceived, base?.bytesReceived) ?? 0),
    connected: context.connected,
  };

  const mic = sorted.mediaSource;
  const micEnergy = numberField(mic, 'totalAudioEnergy');
  const micDuration = numberField(mic, 'totalSamplesDuration');
  // A report that lacks a record keeps the last counters: the next one then measures from them,
  // not from the stream's start.
  const inboundKept = current ?? previous?.inbound;
  const micKept =
    mic !== undefined
      ? { ...(micEnergy !== undefined && { totalAudioEnergy: micEnergy }), ...(micDuration !== undefined && { totalSamplesDuration: micDuration }) }
      : previous?.mic;
  const remoteKept = outbound.counters ?? previous?.remote;
  const counters: QualityCounters = {
    ...(inboundKept !== undefined && { inbound: inboundKept }),
    ...(micKept !== undefined && { mic: micKept }),
    ...(remoteKept !== undefined && { remote: remoteKept }),
  };
  return { sample, counters, ...(pair !== undefined && { pair }) };
}
