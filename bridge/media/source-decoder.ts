// One mixed participant's audio, decoded as it arrives and taken a 20 ms frame per tick of the
// call's clock. Packets and ticks run on different clocks (the sender's, ours, the network between),
// so a few frames may wait here: a tiny jitter allowance. More than that and the oldest go, so
// that the delay through the mix stays bounded instead of growing with every burst.
import { FRAME_SAMPLES } from './audio-format';
import { decodePacket, newDecoder, type OpusDecoder } from './opus';

/** Frames that may wait for the next ticks: 60 ms at most behind. */
export const MAX_WAITING_FRAMES = 3;

export class SourceDecoder {
  private readonly decoder: OpusDecoder = newDecoder();
  private readonly waiting: Int16Array[] = [];
  /** Frames dropped for arriving faster than they were taken. */
  dropped = 0;

  push(payload: Uint8Array): void {
    const pcm = decodePacket(this.decoder, payload);
    if (!pcm) return;
    for (let at = 0; at + FRAME_SAMPLES <= pcm.length; at += FRAME_SAMPLES) {
      this.waiting.push(pcm.subarray(at, at + FRAME_SAMPLES));
      if (this.waiting.length > MAX_WAITING_FRAMES) {
        this.waiting.shift();
        this.dropped++;
      }
    }
  }

  /** The oldest waiting frame; undefined when none came (the source adds nothing this tick). */
  take(): Int16Array | undefined {
    return this.waiting.shift();
  }

  close(): void {
    this.waiting.length = 0;
    this.decoder.delete();
  }
}
