// The hold music as the bridge plays it: the product's own music (shared/hold-music-render.ts, the
// same the window plays in direct mode), rendered at 48 kHz and encoded once per process into 20 ms
// Opus frames that every call on hold shares; its PCM is kept for a mix that includes the music.
import { HOLD_MUSIC_LOOP_S, renderHoldMusic } from '../../shared/hold-music-render';
import { FRAME_SAMPLES, SAMPLE_RATE } from './audio-format';
import { encodeFrame, newEncoder } from './opus';

export interface HoldMusic {
  /** One loop, a frame every 20 ms; frame i follows frame i − 1 and the last leads into the first. */
  frames: readonly Buffer[];
  /** The same loop as 16-bit mono PCM, FRAME_SAMPLES per frame. */
  pcm: Int16Array;
}

let cached: HoldMusic | undefined;

/**
 * The loop, made on first use (about half a second of work: call it where a call is not waiting,
 * as BridgeNode's constructor does).
 */
export function holdMusic(): HoldMusic {
  if (cached) return cached;
  const rendered = renderHoldMusic(SAMPLE_RATE);
  const pcm = Int16Array.from(rendered, (s) => Math.round(Math.max(-1, Math.min(1, s)) * 32_767));
  const count = Math.floor(pcm.length / FRAME_SAMPLES);
  const frameAt = (i: number) => pcm.subarray(i * FRAME_SAMPLES, (i + 1) * FRAME_SAMPLES);
  const encoder = newEncoder('music');
  try {
    // The loop's end runs through the encoder first, so that the first frame carries on from the
    // last without the click of an encoder starting cold at every seam.
    for (let i = count - 5; i < count; i++) encodeFrame(encoder, frameAt(i));
    const frames = Array.from({ length: count }, (_, i) => encodeFrame(encoder, frameAt(i)));
    cached = { frames, pcm: pcm.subarray(0, count * FRAME_SAMPLES) };
  } finally {
    encoder.delete();
  }
  return cached;
}

/** Frames in the loop: 400 for the 8 s loop. */
export const HOLD_MUSIC_FRAMES = (HOLD_MUSIC_LOOP_S * SAMPLE_RATE) / FRAME_SAMPLES;
