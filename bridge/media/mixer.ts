// One 20 ms frame of a mix: the frames of the sources a listener hears, summed and held within
// 16 bits. Pure; which sources a listener hears is listening.ts's to say.
import { FRAME_SAMPLES } from './audio-format';

const MAX_SAMPLE = 32_767;
const MIN_SAMPLE = -32_768;

/**
 * Sums `inputs` (a missing one — a source with no frame this tick — adds nothing) into `out`,
 * saturating at the 16-bit limits rather than wrapping round (a wrapped peak is a loud click).
 * Returns how many samples had to be held at a limit.
 */
export function mixFrames(inputs: readonly (Int16Array | undefined)[], out: Int16Array = new Int16Array(FRAME_SAMPLES)): { frame: Int16Array; clipped: number } {
  const present = inputs.filter((f): f is Int16Array => f !== undefined);
  let clipped = 0;
  for (let i = 0; i < out.length; i++) {
    let sum = 0;
    for (const frame of present) sum += frame[i] ?? 0;
    if (sum > MAX_SAMPLE) {
      sum = MAX_SAMPLE;
      clipped++;
    } else if (sum < MIN_SAMPLE) {
      sum = MIN_SAMPLE;
      clipped++;
    }
    out[i] = sum;
  }
  return { frame: out, clipped };
}
