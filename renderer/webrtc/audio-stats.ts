// What a call's getStats() says of its audio, for the level meters and the test probe: the levels
// both ways, the packet counters, and the path the media takes. Records are read loosely: a field a
// browser does not give counts as nothing, never as a guess.

export interface CallLevels {
  /** Our microphone, 0..1 (media-source audioLevel). */
  mic: number;
  /** What we hear from the customer, 0..1 (inbound-rtp audioLevel, or from totalAudioEnergy). */
  customer: number;
}

export interface CallStats {
  inboundEnergy: number;
  inboundLevel: number;
  outboundPackets: number;
  inboundPackets: number;
}

export interface CandidatePath {
  local: string;
  remote: string;
  /** A relay candidate's way to its TURN server: 'udp', 'tcp' or 'tls'. */
  relayProtocol?: string;
}

export const NO_STATS: CallStats = { inboundEnergy: 0, inboundLevel: 0, outboundPackets: 0, inboundPackets: 0 };

type StatsRecord = Record<string, unknown>;

async function readAudioStats(pc: RTCPeerConnection): Promise<{ mediaSource?: StatsRecord; inbound?: StatsRecord; outbound?: StatsRecord }> {
  const report = await pc.getStats();
  let mediaSource: StatsRecord | undefined;
  let inbound: StatsRecord | undefined;
  let outbound: StatsRecord | undefined;
  report.forEach((value: unknown) => {
    if (typeof value !== 'object' || value === null) return;
    const r = value as StatsRecord;
    if (r.kind !== 'audio') return;
    if (r.type === 'media-source') mediaSource = r;
    else if (r.type === 'inbound-rtp') inbound = r;
    else if (r.type === 'outbound-rtp') outbound = r;
  });
  return { mediaSource, inbound, outbound };
}

const numberField = (r: StatsRecord | undefined, key: string): number | undefined => {
  const v = r?.[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};
const clamp01 = (v: number): number => Math.min(1, Math.max(0, v));

/** One call's level meters: the customer's level over the last interval needs the previous read. */
export class LevelMeter {
  private last: { energy: number; duration: number } | null = null;

  /** `micOpen` false (muted or held: the sender's source is the music or silence): nothing of the microphone goes out. */
  async read(pc: RTCPeerConnection, micOpen: boolean): Promise<CallLevels> {
    const { mediaSource, inbound } = await readAudioStats(pc);
    const mic = micOpen ? clamp01(numberField(mediaSource, 'audioLevel') ?? 0) : 0;
    let customer = numberField(inbound, 'audioLevel');
    const energy = numberField(inbound, 'totalAudioEnergy');
    const duration = numberField(inbound, 'totalSamplesDuration');
    if (customer === undefined && energy !== undefined && duration !== undefined) {
      // RMS over the last interval from the running energy sum (webrtc-stats: audioLevel² × seconds).
      const last = this.last;
      customer = last && duration > last.duration ? Math.sqrt(Math.max(0, energy - last.energy) / (duration - last.duration)) : 0;
    }
    if (energy !== undefined && duration !== undefined) this.last = { energy, duration };
    return { mic, customer: clamp01(customer ?? 0) };
  }
}

export async function callStats(pc: RTCPeerConnection): Promise<CallStats> {
  const { inbound, outbound } = await readAudioStats(pc);
  return {
    inboundEnergy: numberField(inbound, 'totalAudioEnergy') ?? 0,
    inboundLevel: numberField(inbound, 'audioLevel') ?? 0,
    outboundPackets: numberField(outbound, 'packetsSent') ?? 0,
    inboundPackets: numberField(inbound, 'packetsReceived') ?? 0,
  };
}

/**
 * The path a call's media takes: the selected candidate pair's local and remote candidate types
 * ('host', 'srflx', 'prflx', 'relay') and, for a relay, how this side reaches its TURN server.
 */
export async function candidatePathOf(pc: RTCPeerConnection): Promise<CandidatePath | undefined> {
  const report = await pc.getStats();
  const records = new Map<string, StatsRecord>();
  report.forEach((value: unknown) => {
    if (typeof value === 'object' && value !== null && typeof (value as StatsRecord).id === 'string') records.set((value as StatsRecord).id as string, value as StatsRecord);
  });
  const transport = [...records.values()].find((r) => r.type === 'transport' && typeof r.selectedCandidatePairId === 'string');
  const pair = transport ? records.get(transport.selectedCandidatePairId as string) : undefined;
  const local = typeof pair?.localCandidateId === 'string' ? records.get(pair.localCandidateId) : undefined;
  const remote = typeof pair?.remoteCandidateId === 'string' ? records.get(pair.remoteCandidateId) : undefined;
  if (!local || !remote) return undefined;
  return {
    local: String(local.candidateType),
    remote: String(remote.candidateType),
    ...(typeof local.relayProtocol === 'string' ? { relayProtocol: local.relayProtocol } : {}),
  };
}
