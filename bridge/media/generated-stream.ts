// The numbering of a stream the bridge makes itself for one listener — the hold music, silence, the
// mix — so that OutboundStream places it like any other source: one frame every 20 ms tick, its
// sequence number +1 and its timestamp +960 each time. Telephone events heard from a mixed
// participant go into the same numbering: each event takes the timestamp of the frame due when its
// first packet came, and every packet of that event (RFC 4733 2.5: one timestamp per event, the
// end packet repeated) keeps it.
import { randomInt } from 'node:crypto';
import { FRAME_SAMPLES, type PacketKind } from './audio-format';
import { uint16, uint32, type SourcePacket } from './outbound-stream';

/** Events remembered for their timestamp: more than can overlap. */
const EVENTS_KEPT = 8;

export class GeneratedStream {
  /** Fixed for the stream's life: a generated source never restarts on its own. */
  readonly ssrc = randomInt(0, 2 ** 32);
  private sequence = 0;
  private timestamp = 0;
  /** Source event key → the timestamp given to that event here, newest last. */
  private readonly events = new Map<string, number>();

  constructor(readonly source: string) {}

  /** The next 20 ms frame of audio. */
  frame(payload: Uint8Array): SourcePacket {
    const packet = this.packet('audio', payload, this.timestamp, false);
    this.timestamp = uint32(this.timestamp + FRAME_SAMPLES);
    return packet;
  }

  /**
   * A telephone-event packet heard from `from` (its SSRC and its RTP timestamp name the event), on
   * this stream's clock. The marker (the event's first packet) is kept.
   */
  event(from: string, ssrc: number, eventTimestamp: number, marker: boolean, payload: Uint8Array): SourcePacket {
    const key = `${from}/${ssrc}/${eventTimestamp}`;
    let timestamp = this.events.get(key);
    if (timestamp === undefined) {
      timestamp = this.timestamp;
      this.events.set(key, timestamp);
      if (this.events.size > EVENTS_KEPT) this.events.delete(this.events.keys().next().value!);
    }
    return this.packet('event', payload, timestamp, marker);
  }

  private packet(kind: PacketKind, payload: Uint8Array, timestamp: number, marker: boolean): SourcePacket {
    const packet: SourcePacket = { source: this.source, ssrc: this.ssrc, sequenceNumber: this.sequence, timestamp, marker, kind, payload };
    this.sequence = uint16(this.sequence + 1);
    return packet;
  }
}
