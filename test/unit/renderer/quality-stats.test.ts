// getStats reports → quality samples. The reports are Maps of plain records with the ids, types and
// fields Chromium gives (inbound-rtp, remote-inbound-rtp, outbound-rtp, media-source, transport,
// candidate-pair, local-/remote-candidate, codec), and the counters run on from one report to the next.
import { describe, expect, it } from 'vitest';
import { QualityMonitor } from '../../../shared/call-quality';
import { readQualitySample, selectedCandidatePair, type QualityCounters, type QualityReading } from '../../../renderer/webrtc/quality-stats';

const T0 = 1_750_000_000_000;

/** The running totals of one call, as Chromium counts them from the stream's start. */
interface Totals {
  ssrc: number;
  packetsReceived: number;
  packetsLost: number;
  bytesReceived: number;
  concealedSamples: number;
  totalSamplesReceived: number;
  /** Seconds of audio played out; energy = level² × seconds (webrtc-stats). */
  playedSeconds: number;
  customerEnergy: number;
  micSeconds: number;
  micEnergy: number;
  packetsSent: number;
}

const START: Totals = {
  ssrc: 1111,
  packetsReceived: 0,
  packetsLost: 0,
  bytesReceived: 0,
  concealedSamples: 0,
  totalSamplesReceived: 0,
  playedSeconds: 0,
  customerEnergy: 0,
  micSeconds: 0,
  micEnergy: 0,
  packetsSent: 0,
};

/** One more second: `received` packets of 50 sent, the customer at `level`, the agent at `micLevel`. */
function oneSecond(t: Totals, s: { received?: number; lost?: number; concealed?: number; level?: number; micLevel?: number } = {}): Totals {
  const received = s.received ?? 50;
  const level = s.level ?? 0.1;
  const micLevel = s.micLevel ?? 0.08;
  return {
    ...t,
    packetsReceived: t.packetsReceived + received,
    packetsLost: t.packetsLost + (s.lost ?? 0),
    bytesReceived: t.bytesReceived + received * 80,
    concealedSamples: t.concealedSamples + (s.concealed ?? 0),
    totalSamplesReceived: t.totalSamplesReceived + 48_000,
    playedSeconds: t.playedSeconds + 1,
    customerEnergy: t.customerEnergy + level * level,
    micSeconds: t.micSeconds + 1,
    micEnergy: t.micEnergy + micLevel * micLevel,
    packetsSent: t.packetsSent + 50,
  };
}

interface ReportShape {
  remote?: Record<string, unknown> | null;
  pair?: Record<string, unknown>;
  localType?: string;
  remoteType?: string;
  transport?: boolean;
  inbound?: Record<string, unknown>;
}

/** A report as Chromium's RTCPeerConnection.getStats() gives it, keyed by id. */
function chromiumReport(t: Totals, shape: ReportShape = {}): Map<string, Record<string, unknown>> {
  const ts = T0;
  const records: Record<string, unknown>[] = [
    { id: 'COT01_111_minptime=10;useinbandfec=1', type: 'codec', timestamp: ts, mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 111 },
    {
      id: `IT01A${t.ssrc}`,
      type: 'inbound-rtp',
      timestamp: ts,
      kind: 'audio',
      ssrc: t.ssrc,
      mid: '0',
      transportId: 'T01',
      codecId: 'CIT01_111',
      trackIdentifier: 'remote-track',
      jitter: 0.012,
      packetsReceived: t.packetsReceived,
      packetsLost: t.packetsLost,
      bytesReceived: t.bytesReceived,
      headerBytesReceived: t.packetsReceived * 12,
      jitterBufferDelay: 1.2,
      jitterBufferEmittedCount: t.totalSamplesReceived,
      totalSamplesReceived: t.totalSamplesReceived,
      concealedSamples: t.concealedSamples,
      silentConcealedSamples: 0,
      concealmentEvents: 0,
      audioLevel: 0.0001,
      totalAudioEnergy: t.customerEnergy,
      totalSamplesDuration: t.playedSeconds,
      remoteId: 'ROA2222',
      ...shape.inbound,
    },
    { id: 'OT01A2222', type: 'outbound-rtp', timestamp: ts, kind: 'audio', ssrc: 2222, mid: '0', transportId: 'T01', mediaSourceId: 'SA1', packetsSent: t.packetsSent, bytesSent: t.packetsSent * 80, remoteId: 'RIA2222' },
    {
      id: 'SA1',
      type: 'media-source',
      timestamp: ts,
      kind: 'audio',
      trackIdentifier: 'mic-track',
      audioLevel: 0.0002,
      totalAudioEnergy: t.micEnergy,
      totalSamplesDuration: t.micSeconds,
      echoReturnLoss: -100,
    },
    // Video records a browser may add for other transceivers: never read as the call's audio.
    { id: 'IT01V9', type: 'inbound-rtp', kind: 'video', timestamp: ts, packetsReceived: 999_999, packetsLost: 999, jitter: 9 },
    {
      id: 'CP1',
      type: 'candidate-pair',
      timestamp: ts,
      transportId: 'T01',
      localCandidateId: 'I1',
      remoteCandidateId: 'I2',
      state: 'succeeded',
      nominated: true,
      writable: true,
      bytesSent: 100_000,
      bytesReceived: 100_000,
      totalRoundTripTime: 0.4,
      currentRoundTripTime: 0.085,
      ...shape.pair,
    },
    { id: 'CP2', type: 'candidate-pair', timestamp: ts, transportId: 'T01', localCandidateId: 'I3', remoteCandidateId: 'I2', state: 'failed', nominated: false, bytesSent: 0, bytesReceived: 0 },
    {
      id: 'I1',
      type: 'local-candidate',
      timestamp: ts,
      transportId: 'T01',
      isRemote: false,
      address: '127.0.0.1',
      port: 50000,
      protocol: 'udp',
      candidateType: shape.localType ?? 'relay',
      relayProtocol: 'tcp',
      url: 'turn:127.0.0.1:3478?transport=tcp',
    },
    { id: 'I3', type: 'local-candidate', timestamp: ts, transportId: 'T01', isRemote: false, protocol: 'udp', candidateType: 'host' },
    { id: 'I2', type: 'remote-candidate', timestamp: ts, transportId: 'T01', isRemote: true, address: '127.0.0.1', port: 40012, protocol: 'udp', candidateType: shape.remoteType ?? 'host' },
  ];
  if (shape.transport !== false) {
    records.push({ id: 'T01', type: 'transport', timestamp: ts, dtlsState: 'connected', iceState: 'connected', selectedCandidatePairId: 'CP1', bytesSent: 1, bytesReceived: 1 });
  }
  if (shape.remote !== null) {
    records.push({
      id: 'RIA2222',
      type: 'remote-inbound-rtp',
      timestamp: ts,
      kind: 'audio',
      ssrc: 2222,
      transportId: 'T01',
      codecId: 'COT01_111',
      localId: 'OT01A2222',
      jitter: 0.004,
      packetsLost: 3,
      fractionLost: 0.02,
      roundTripTime: 0.12,
      totalRoundTripTime: 0.6,
      roundTripTimeMeasurements: 5,
      ...shape.remote,
    });
  }
  return new Map(records.map((r) => [r.id as string, r]));
}

const context = (i: number) => ({ at: T0 + i * 1000, micMuted: false, connected: true });

describe('readQualitySample', () => {
  it('reads the first report as everything since the stream began', () => {
    const t = oneSecond(START, { received: 47, lost: 3, concealed: 960, level: 0.1, micLevel: 0.08 });
    const reading = readQualitySample(chromiumReport(t), undefined, context(1));
    expect(reading.sample).toEqual({
      at: T0 + 1000,
      rttMs: 120,
      jitterMs: 12,
      remoteJitterMs: 4,
      inboundLoss: 0.06,
      outboundLoss: 0.02,
      concealment: 0.02,
      customerLevel: expect.closeTo(0.1, 9),
      micLevel: expect.closeTo(0.08, 9),
      micMuted: false,
      packetsReceived: 47,
      bytesReceived: 3760,
      connected: true,
    });
    expect(reading.pair).toEqual({ localType: 'relay', remoteType: 'host', localProtocol: 'udp', relayProtocol: 'tcp', currentRoundTripTime: 0.085 });
  });

  it('reads later reports as the growth since the previous one', () => {
    const t1 = oneSecond(START, { lost: 10, level: 0.3 });
    const first = readQualitySample(chromiumReport(t1), undefined, context(1));
    const t2 = oneSecond(t1, { received: 45, lost: 5, concealed: 4800, level: 0.05, micLevel: 0 });
    const second = readQualitySample(chromiumReport(t2), first.counters, context(2));
    expect(second.sample.inboundLoss).toBeCloseTo(0.1, 9);
    expect(second.sample.concealment).toBeCloseTo(0.1, 9);
    expect(second.sample.packetsReceived).toBe(45);
    expect(second.sample.bytesReceived).toBe(3600);
    // The interval's RMS, not the whole call's (which would still carry the loud first second).
    expect(second.sample.customerLevel).toBeCloseTo(0.05, 9);
    expect(second.sample.micLevel).toBe(0);
  });

  it('falls back to the candidate pair for the round trip when RTCP has none', () => {
    const t = oneSecond(START);
    expect(readQualitySample(chromiumReport(t, { remote: null }), undefined, context(1)).sample.rttMs).toBeCloseTo(85, 9);
    // A receiver report without timing info reads 0: not a real round trip.
    expect(readQualitySample(chromiumReport(t, { remote: { roundTripTime: 0 } }), undefined, context(1)).sample.rttMs).toBeCloseTo(85, 9);
    const bare = readQualitySample(chromiumReport(t, { remote: null, pair: { currentRoundTripTime: undefined } }), undefined, context(1));
    expect(bare.sample.rttMs).toBeUndefined();
    expect(bare.sample.outboundLoss).toBeUndefined();
    expect(bare.sample.remoteJitterMs).toBeUndefined();
  });

  it('treats a new stream (a new SSRC, or counts that went down) as starting from zero', () => {
    let t = START;
    for (let i = 0; i < 10; i++) t = oneSecond(t, { lost: 1 });
    const before = readQualitySample(chromiumReport(t), undefined, context(10));
    const fresh = oneSecond({ ...START, ssrc: 3333 }, { received: 40, lost: 10 });
    const after = readQualitySample(chromiumReport(fresh), before.counters, context(11));
    expect(after.sample.packetsReceived).toBe(40);
    expect(after.sample.inboundLoss).toBeCloseTo(0.2, 9);
    const sameSsrcReset = oneSecond(START, { received: 20 });
    const reset = readQualitySample(chromiumReport(sameSsrcReset), before.counters, context(11));
    expect(reset.sample.packetsReceived).toBe(20);
    expect(reset.sample.inboundLoss).toBe(0);
  });

  it('reads packetsLost shrinking (late packets arrived after all) as no loss, never negative', () => {
    const t1 = oneSecond(START, { lost: 6 });
    const first = readQualitySample(chromiumReport(t1), undefined, context(1));
    const t2 = { ...oneSecond(t1), packetsLost: 4 };
    const second = readQualitySample(chromiumReport(t2), first.counters, context(2));
    expect(second.sample.inboundLoss).toBe(0);
    expect(second.sample.packetsReceived).toBe(50);
  });

  it('gives no loss, concealment or level for a second without packets, and says no packets came', () => {
    const t1 = oneSecond(START);
    const first = readQualitySample(chromiumReport(t1), undefined, context(1));
    // A blackout: the totals stand still (Chromium counts the lost ones once packets return).
    const still = readQualitySample(chromiumReport(t1, { inbound: { audioLevel: undefined } }), first.counters, { ...context(2), connected: false });
    expect(still.sample.packetsReceived).toBe(0);
    expect(still.sample.bytesReceived).toBe(0);
    expect(still.sample.inboundLoss).toBeUndefined();
    expect(still.sample.concealment).toBeUndefined();
    expect(still.sample.customerLevel).toBeUndefined();
    expect(still.sample.connected).toBe(false);
  });

  it('uses the instant audio levels when the energy counters are missing', () => {
    const t = oneSecond(START);
    const report = chromiumReport(t, { inbound: { totalAudioEnergy: undefined, totalSamplesDuration: undefined, audioLevel: 0.25 } });
    const source = report.get('SA1');
    if (source) {
      delete source.totalAudioEnergy;
      source.audioLevel = 1.7;
    }
    const { sample } = readQualitySample(report, undefined, context(1));
    expect(sample.customerLevel).toBe(0.25);
    expect(sample.micLevel).toBe(1);
  });

  it('reads an empty or foreign report as a sample with nothing known', () => {
    const empty = readQualitySample(new Map(), undefined, { at: T0, micMuted: true, connected: false });
    expect(empty).toEqual({
      sample: { at: T0, micMuted: true, packetsReceived: 0, bytesReceived: 0, connected: false },
      counters: {},
    });
    const odd = new Map<string, unknown>([
      ['x', null],
      ['y', 'text'],
      ['z', { type: 'inbound-rtp', kind: 'audio', jitter: 'high', packetsReceived: Number.NaN, packetsLost: -2 }],
    ]);
    const { sample } = readQualitySample(odd, undefined, context(0));
    expect(sample.jitterMs).toBeUndefined();
    expect(sample.packetsReceived).toBe(0);
    expect(sample.inboundLoss).toBeUndefined();
  });

  it('keeps the last counters when a report lacks a record, so the next measures from them', () => {
    const t1 = oneSecond(START);
    const first = readQualitySample(chromiumReport(t1), undefined, context(1));
    const gap = readQualitySample(new Map(), first.counters, context(2));
    expect(gap.counters).toEqual(first.counters);
    const t2 = oneSecond(t1, { received: 48 });
    expect(readQualitySample(chromiumReport(t2), gap.counters, context(3)).sample.packetsReceived).toBe(48);
  });

  it("measures the customer's loss from packetsLost when a browser gives no fractionLost", () => {
    let t = oneSecond(START);
    const noFraction = (lost: number, reports: number) => ({ remote: { fractionLost: undefined, packetsLost: lost, reportsReceived: reports } });
    let reading: QualityReading = readQualitySample(chromiumReport(t, noFraction(0, 1)), undefined, context(1));
    expect(reading.sample.outboundLoss).toBe(0);
    // 5 s later a new report: 10 of the 250 packets sent since were lost.
    const readings: QualityReading[] = [];
    for (let i = 2; i <= 6; i++) {
      t = oneSecond(t);
      reading = readQualitySample(chromiumReport(t, noFraction(i === 6 ? 10 : 0, i === 6 ? 2 : 1)), reading.counters, context(i));
      readings.push(reading);
    }
    expect(readings.slice(0, 4).map((r) => r.sample.outboundLoss)).toEqual([0, 0, 0, 0]);
    expect(readings[4]?.sample.outboundLoss).toBeCloseTo(10 / 250, 9);
    // Until the next report, the last figure stands (as fractionLost does).
    t = oneSecond(t);
    const next = readQualitySample(chromiumReport(t, noFraction(10, 2)), reading.counters, context(7));
    expect(next.sample.outboundLoss).toBeCloseTo(0.04, 9);
  });
});

describe('selectedCandidatePair', () => {
  it("names the selected pair's candidate types by the transport's selectedCandidatePairId", () => {
    expect(selectedCandidatePair(chromiumReport(START))).toMatchObject({ localType: 'relay', remoteType: 'host' });
    expect(selectedCandidatePair(chromiumReport(START, { localType: 'srflx', remoteType: 'prflx' }))).toMatchObject({ localType: 'srflx', remoteType: 'prflx' });
  });

  it('without a transport record: the pair marked selected, else the nominated succeeded pair', () => {
    expect(selectedCandidatePair(chromiumReport(START, { transport: false }))).toMatchObject({ localType: 'relay' });
    const firefox = chromiumReport(START, { transport: false, pair: { nominated: false } });
    expect(selectedCandidatePair(firefox)).toBeUndefined();
    const cp2 = firefox.get('CP2');
    if (cp2) cp2.selected = true;
    expect(selectedCandidatePair(firefox)).toMatchObject({ localType: 'host', remoteType: 'host' });
  });

  it('is undefined before a pair is selected, or when a candidate type is unknown', () => {
    expect(selectedCandidatePair(new Map())).toBeUndefined();
    expect(selectedCandidatePair(chromiumReport(START, { localType: 'mystery' }))).toBeUndefined();
  });
});

describe('reports into the monitor', () => {
  it('6 % loss each way for three seconds reads "Poor connection: 6 % packet loss"', () => {
    const monitor = new QualityMonitor();
    let t = START;
    let counters: QualityCounters | undefined;
    const texts: string[][] = [];
    for (let i = 1; i <= 3; i++) {
      t = oneSecond(t, { received: 47, lost: 3 });
      const reading = readQualitySample(chromiumReport(t, { remote: { fractionLost: 0.06 } }), counters, context(i));
      counters = reading.counters;
      texts.push(monitor.push(reading.sample).active.map((w) => w.text));
    }
    expect(texts).toEqual([[], [], ['Poor connection: 6 % packet loss']]);
  });
});
