// What a phone's RTP stack would notice in the stream it receives (ARCHITECTURE.md: toward the
// customer a call has one SSRC for its whole life, whoever speaks). A new SSRC, a sequence number
// that does not follow the last one, or an audio timestamp that jumps away from the time that passed
// makes real phones drop audio; the sandbox counts each so that tests read them from the packets.
import type { SandboxRtpReport } from '../shared/sandbox';

/** Audio timestamps may stray this far from the arrival clock between two packets (jitter, a busy event loop). */
const TIMESTAMP_SLACK_MS = 150;

export interface ObservedRtp {
  ssrc: number;
  sequenceNumber: number;
  timestamp: number;
  payloadType: number;
}

export class RtpContinuity {
  private readonly ssrcs = new Set<number>();
  private packets = 0;
  private sequenceGaps = 0;
  private timestampJumps = 0;
  private lastSequence: number | undefined;
  /** The last audio packet's timestamp and arrival: telephone-event packets keep their event's timestamp and are not audio. */
  private lastAudio: { timestamp: number; at: number } | undefined;

  /** `audioPayloadType` packets are judged on their timestamps; every packet on its sequence number. */
  constructor(
    private readonly audioPayloadType: number,
    private readonly clockRate: number,
  ) {}

  observe(packet: ObservedRtp, at: number): void {
    this.packets++;
    this.ssrcs.add(packet.ssrc);
    if (this.lastSequence !== undefined && packet.sequenceNumber !== ((this.lastSequence + 1) & 0xffff)) this.sequenceGaps++;
    this.lastSequence = packet.sequenceNumber;
    if (packet.payloadType !== this.audioPayloadType) return;
    if (this.lastAudio !== undefined) {
      // Unsigned 32-bit difference, read as signed: a step backwards is negative.
      const steps = ((packet.timestamp - this.lastAudio.timestamp) << 0) / (this.clockRate / 1000);
      const elapsed = at - this.lastAudio.at;
      if (steps < 0 || Math.abs(steps - elapsed) > TIMESTAMP_SLACK_MS) this.timestampJumps++;
    }
    this.lastAudio = { timestamp: packet.timestamp, at };
  }

  report(): SandboxRtpReport {
    return { ssrcs: this.ssrcs.size, packets: this.packets, sequenceGaps: this.sequenceGaps, timestampJumps: this.timestampJumps };
  }
}
