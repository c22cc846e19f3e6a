// The WAV reader and the resampler (shared/wav.ts): every broken header is named, the samples come
// back as written, and a tone resampled to 48 kHz keeps its pitch and its loudness with nothing
// folded back; the bundled notices are what the relay reads at start.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RECORD_NOTICE_LANGUAGES } from '../../../shared/bridge-recording';
import { downmixToMono, pcmWavFile, readPcmWav, readWavHeader, resamplePcm, toMonoAt } from '../../../shared/wav';
import { toneAmplitude } from '../../../sandbox/tone-probe';
import { bundledNoticePath } from '../../../relay/record-notice';

function tone(hz: number, rate: number, seconds: number, amplitude = 0.5): Int16Array {
  return Int16Array.from({ length: Math.round(rate * seconds) }, (_, i) => Math.round(amplitude * 32767 * Math.sin((2 * Math.PI * hz * i) / rate)));
}

/** A WAV file with its header's fields as given: each test breaks one. */
function wav(fields: { riff?: string; wave?: string; fmtId?: string; fmtSize?: number; format?: number; channels?: number; rate?: number; blockAlign?: number; bits?: number; dataSize?: number; data?: Uint8Array; dataFirst?: boolean; extra?: Uint8Array }): Uint8Array {
  const data = fields.data ?? new Uint8Array(8);
  const channels = fields.channels ?? 1;
  const bits = fields.bits ?? 16;
  const fmtSize = fields.fmtSize ?? 16;
  const fmt = new Uint8Array(8 + fmtSize);
  const fv = new DataView(fmt.buffer);
  const ascii = (bytes: Uint8Array, at: number, text: string) => [...text].forEach((c, i) => (bytes[at + i] = c.charCodeAt(0)));
  ascii(fmt, 0, fields.fmtId ?? 'fmt ');
  fv.setUint32(4, fmtSize, true);
  if (fmtSize >= 16) {
    fv.setUint16(8, fields.format ?? 1, true);
    fv.setUint16(10, channels, true);
    fv.setUint32(12, fields.rate ?? 16_000, true);
    fv.setUint32(16, (fields.rate ?? 16_000) * channels * (bits / 8), true);
    fv.setUint16(20, fields.blockAlign ?? channels * (bits / 8), true);
    fv.setUint16(22, bits, true);
  }
  const dataChunk = new Uint8Array(8 + data.length);
  ascii(dataChunk, 0, 'data');
  new DataView(dataChunk.buffer).setUint32(4, fields.dataSize ?? data.length, true);
  dataChunk.set(data, 8);
  const extra = fields.extra ?? new Uint8Array(0);
  const chunks = fields.dataFirst ? [dataChunk, fmt] : [fmt, extra, dataChunk];
  const body = chunks.reduce((n, c) => n + c.length, 0);
  const out = new Uint8Array(12 + body);
  ascii(out, 0, fields.riff ?? 'RIFF');
  new DataView(out.buffer).setUint32(4, 4 + body, true);
  ascii(out, 8, fields.wave ?? 'WAVE');
  let at = 12;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

const problemOf = (bytes: Uint8Array) => {
  const read = readPcmWav(bytes);
  return read.ok ? undefined : read.error.message;
};

describe('readPcmWav', () => {
  it('reads the samples a WAV file holds, mono and stereo, skipping chunks it does not need', () => {
    const samples = Int16Array.from([0, 1, -1, 32767, -32768, 1234]);
    expect(readPcmWav(pcmWavFile(samples, 8_000))).toEqual({ ok: true, value: { sampleRate: 8_000, channels: 1, frames: 6, samples } });
    expect(readPcmWav(pcmWavFile(samples, 44_100, 2))).toEqual({ ok: true, value: { sampleRate: 44_100, channels: 2, frames: 3, samples } });
    // A LIST chunk of odd length (padded) between fmt and data.
    const list = Uint8Array.from([0x4c, 0x49, 0x53, 0x54, 3, 0, 0, 0, 1, 2, 3, 0]);
    const data = new Uint8Array(samples.buffer.slice(0));
    expect(readPcmWav(wav({ extra: list, data }))).toMatchObject({ ok: true, value: { frames: 6, samples } });
    // A streaming writer's size "to the end": what the file holds is read.
    expect(readPcmWav(wav({ data, dataSize: 0xffffffff }))).toMatchObject({ ok: true, value: { frames: 6 } });
    // A last byte that makes no whole sample is left out.
    expect(readPcmWav(wav({ data: Uint8Array.from([1, 0, 2]) }))).toMatchObject({ ok: true, value: { frames: 1, samples: Int16Array.from([1]) } });
  });

  it('names what is wrong with a header', () => {
    expect(problemOf(new Uint8Array(5))).toBe('not a WAV file: it is 5 bytes long, shorter than a RIFF header');
    expect(problemOf(wav({ riff: 'RIFX' }))).toBe('not a WAV file: it starts with "RIFX", not "RIFF"');
    expect(problemOf(Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0, 0, 0, 0, 0]))).toBe('not a WAV file: it starts with an unreadable one, not "RIFF"');
    expect(problemOf(wav({ wave: 'AVI ' }))).toBe('not a WAV file: a RIFF file of type "AVI ", not "WAVE"');
    expect(problemOf(wav({ fmtSize: 12 }))).toBe('the fmt chunk is 12 bytes: it needs at least 16');
    expect(problemOf(wav({ bits: 8 }))).toBe('must be 16-bit PCM: this file is 8-bit PCM');
    expect(problemOf(wav({ bits: 24 }))).toBe('must be 16-bit PCM: this file is 24-bit PCM');
    expect(problemOf(wav({ format: 3, bits: 32 }))).toBe('must be 16-bit PCM: this file is 32-bit floating point');
    expect(problemOf(wav({ format: 0x55 }))).toBe('must be 16-bit PCM: this file is a compressed format (code 85)');
    expect(problemOf(wav({ format: 0xfffe }))).toBe('the fmt chunk says WAVE_FORMAT_EXTENSIBLE but has no room for its sub-format');
    expect(problemOf(wav({ channels: 0, blockAlign: 2 }))).toBe('the fmt chunk says 0 channels');
    expect(problemOf(wav({ rate: 0 }))).toBe('the fmt chunk says a sample rate of 0 Hz');
    expect(problemOf(wav({ channels: 2, blockAlign: 2 }))).toBe("the fmt chunk's block align is 2: 16-bit PCM of 2 channels needs 4");
    expect(problemOf(wav({ dataFirst: true }))).toBe('the data chunk comes before any fmt chunk');
    expect(problemOf(wav({ fmtId: 'fmtX' }))).toBe('the data chunk comes before any fmt chunk');
    expect(problemOf(wav({}).subarray(0, 12))).toBe('no fmt chunk: the file does not say its format');
    expect(problemOf(wav({ dataSize: 1000 }))).toBe('the data chunk is cut short: its header says 1000 bytes, the file holds 8');
    const noData = wav({}).subarray(0, 12 + 24);
    new DataView(noData.buffer, noData.byteOffset).setUint32(4, 28, true);
    expect(problemOf(noData)).toBe('no data chunk: the file holds no samples');
    expect(problemOf(wav({}).subarray(0, 20))).toBe('the file ends inside its fmt chunk');
  });

  it('reads WAVE_FORMAT_EXTENSIBLE with the PCM sub-format, and refuses another sub-format', () => {
    const extensible = (subFormat: number) => {
      const bytes = wav({ format: 0xfffe, fmtSize: 40, data: Uint8Array.from([5, 0, 6, 0]) });
      const view = new DataView(bytes.buffer);
      // cbSize 22, valid bits 16, channel mask 4, then the sub-format GUID.
      view.setUint16(12 + 8 + 16, 22, true);
      view.setUint16(12 + 8 + 18, 16, true);
      view.setUint32(12 + 8 + 20, 4, true);
      view.setUint16(12 + 8 + 24, subFormat, true);
      bytes.set([0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71], 12 + 8 + 26);
      return bytes;
    };
    expect(readPcmWav(extensible(1))).toMatchObject({ ok: true, value: { channels: 1, frames: 2, samples: Int16Array.from([5, 6]) } });
    expect(problemOf(extensible(3))).toBe('must be 16-bit PCM: this file is 16-bit floating point');
  });

  it('reads a header from the first bytes of a file, the data length as the header says it', () => {
    const file = pcmWavFile(tone(440, 16_000, 2), 16_000);
    expect(readWavHeader(file.subarray(0, 100), { whole: false })).toEqual({ ok: true, value: { sampleRate: 16_000, channels: 1, dataOffset: 44, dataBytes: 64_000, frames: 32_000 } });
    expect(readWavHeader(file.subarray(0, 100))).toMatchObject({ ok: false, error: { message: 'the data chunk is cut short: its header says 64000 bytes, the file holds 56' } });
  });
});

describe('resamplePcm and downmixToMono', () => {
  it('keeps a tone’s pitch and loudness from each telephone and studio rate to 48 kHz, the same length', () => {
    for (const rate of [8_000, 11_025, 16_000, 22_050, 44_100, 47_999]) {
      const out = resamplePcm(tone(1_000, rate, 1), rate, 48_000);
      expect(out.length).toBe(48_000);
      // The middle, away from the ends' half-filled filter.
      const middle = out.subarray(12_000, 36_000);
      expect(toneAmplitude(middle, 48_000, 1_000)).toBeCloseTo(0.5, 1);
      expect(Math.abs(toneAmplitude(middle, 48_000, 1_000) - 0.5)).toBeLessThan(0.01);
      // Nothing at the images an interpolator without a filter leaves (rate ± 1 kHz).
      if (rate < 24_000) expect(toneAmplitude(middle, 48_000, rate - 1_000)).toBeLessThan(0.002);
    }
  });

  it('lets nothing above the new Nyquist frequency fold back when it goes down', () => {
    const mixed = tone(1_000, 48_000, 1, 0.3).map((s, i) => s + Math.round(0.3 * 32767 * Math.sin((2 * Math.PI * 6_000 * i) / 48_000)));
    const out = resamplePcm(Int16Array.from(mixed), 48_000, 8_000);
    expect(out.length).toBe(8_000);
    const middle = out.subarray(2_000, 6_000);
    expect(toneAmplitude(middle, 8_000, 1_000)).toBeGreaterThan(0.28);
    // 6 kHz would fold to 2 kHz.
    expect(toneAmplitude(middle, 8_000, 2_000)).toBeLessThan(0.002);
  });

  it('copies what is at the rate already, and clips rather than wraps', () => {
    const samples = Int16Array.from([1, 2, 3]);
    const same = resamplePcm(samples, 48_000, 48_000);
    expect(same).toEqual(samples);
    expect(same).not.toBe(samples);
    const square = Int16Array.from({ length: 800 }, (_, i) => (Math.floor(i / 4) % 2 === 0 ? 32767 : -32768));
    const out = resamplePcm(square, 8_000, 48_000);
    expect(Math.max(...out)).toBe(32767);
    expect(Math.min(...out)).toBe(-32768);
    expect(() => resamplePcm(samples, 0, 48_000)).toThrow(RangeError);
  });

  it('mixes stereo to mono as the average of its channels', () => {
    const stereo = { sampleRate: 16_000, channels: 2, frames: 3, samples: Int16Array.from([100, 300, -32768, -32768, 32767, -32768]) };
    expect(downmixToMono(stereo)).toEqual(Int16Array.from([200, -32768, 0]));
    expect(toMonoAt({ ...stereo, sampleRate: 48_000 }, 48_000)).toEqual(Int16Array.from([200, -32768, 0]));
  });
});

describe('the bundled notices', () => {
  it('are 16 kHz mono 16-bit speech of one to three seconds, one per language', () => {
    for (const language of RECORD_NOTICE_LANGUAGES) {
      const read = readPcmWav(new Uint8Array(readFileSync(bundledNoticePath(language))));
      if (!read.ok) throw new Error(`${language}: ${read.error.message}`);
      expect(read.value).toMatchObject({ sampleRate: 16_000, channels: 1 });
      const seconds = read.value.frames / read.value.sampleRate;
      expect(seconds, language).toBeGreaterThan(1);
      expect(seconds, language).toBeLessThan(3);
      const peak = read.value.samples.reduce((max, s) => Math.max(max, Math.abs(s)), 0);
      expect(peak, language).toBeGreaterThan(8_000);
    }
  });
});
