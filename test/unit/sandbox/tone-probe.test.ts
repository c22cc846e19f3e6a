import { describe, expect, it } from 'vitest';
import { FRAME_SAMPLES, SAMPLE_RATE } from '../../../sandbox/customer-voice';
import { PROBE_TONES_HZ, ToneProbe } from '../../../sandbox/tone-probe';

function frameOf(tones: { hz: number; amplitude: number }[], start: number): Int16Array {
  const frame = new Int16Array(FRAME_SAMPLES);
  for (let i = 0; i < FRAME_SAMPLES; i++) {
    const t = (start + i) / SAMPLE_RATE;
    frame[i] = Math.round(32767 * tones.reduce((sum, { hz, amplitude }) => sum + amplitude * Math.sin(2 * Math.PI * hz * t), 0));
  }
  return frame;
}

describe('the tone probe', () => {
  it('reads each probe tone’s amplitude and nothing of the others', () => {
    const probe = new ToneProbe(SAMPLE_RATE);
    for (let n = 0; n < 25; n++) probe.push(frameOf([{ hz: 720, amplitude: 0.3 }, { hz: 1245, amplitude: 0.1 }], n * FRAME_SAMPLES), 1_000 + n * 20);
    const heard = probe.report(1_500);
    expect(Object.keys(heard)).toEqual(PROBE_TONES_HZ.map(String));
    expect(heard['720']).toBeCloseTo(0.3, 1);
    expect(heard['1245']).toBeCloseTo(0.1, 1);
    expect(heard['960']).toBeLessThan(0.01);
    expect(heard['1440']).toBeLessThan(0.01);
  });

  it('forgets what is older than half a second', () => {
    const probe = new ToneProbe(SAMPLE_RATE);
    for (let n = 0; n < 10; n++) probe.push(frameOf([{ hz: 960, amplitude: 0.5 }], n * FRAME_SAMPLES), 1_000 + n * 20);
    // Two whole blocks of 100 ms went in.
    expect(probe.report(1_200)['960']).toBeGreaterThan(0.4);
    expect(probe.report(2_000)['960']).toBe(0);
  });

  it('hears nothing of the hold music’s notes', () => {
    const probe = new ToneProbe(SAMPLE_RATE);
    // C5 and E5, two of the music's notes, at full loudness.
    for (let n = 0; n < 25; n++) probe.push(frameOf([{ hz: 523.25, amplitude: 0.4 }, { hz: 659.25, amplitude: 0.4 }], n * FRAME_SAMPLES), 1_000 + n * 20);
    for (const amplitude of Object.values(probe.report(1_500))) expect(amplitude).toBeLessThan(0.05);
  });
});
