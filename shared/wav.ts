// RIFF/WAVE files of 16-bit PCM, read without trusting their headers, and PCM brought to one rate
// and one channel: what a sound given by a user (the team's recording notice, `--record-notice`)
// must be before a bridge can play it (shared/bridge-recording.ts NOTICE_SAMPLE_RATE).
//
// Each broken rule is said in words that name what is wrong with the file ("the fmt chunk is 12
// bytes: it needs at least 16"), so that whoever gave the file can fix it. They are English: the relay's
// command line and logs say them, never a window. The resampler is a windowed sinc
// (Kaiser, 16 zero crossings) read from a table: clean enough for speech at any ratio, and fast
// enough to run once at start on the longest notice.
import { err, ok, type Result } from './result';

/** Interleaved 16-bit samples of a WAV file's data chunk (`frames` per channel). */
export interface PcmAudio {
  sampleRate: number;
  channels: number;
  frames: number;
  samples: Int16Array;
}

/** What the header says, before any sample is read: enough to judge a file's rate, channels and length. */
export interface WavHeader {
  sampleRate: number;
  channels: number;
  /** Where the data chunk's samples start, in bytes from the start of the file. */
  dataOffset: number;
  /** The data chunk's length in bytes as far as the file holds it. */
  dataBytes: number;
  /** Samples per channel the data holds. */
  frames: number;
}

const WAVE_FORMAT_PCM = 0x0001;
const WAVE_FORMAT_IEEE_FLOAT = 0x0003;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;
/** A data chunk size some streaming writers leave when they cannot go back: "to the end of the file". */
const UNKNOWN_SIZES = new Set([0, 0xffffffff]);
/** The GUID tail of KSDATAFORMAT_SUBTYPE_PCM (its first two bytes are the format code). */
const SUBTYPE_TAIL = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71];

const fourCc = (bytes: Uint8Array, at: number): string => String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
const printable = (id: string): string => (/^[\x20-\x7e]{4}$/.test(id) ? `"${id}"` : 'an unreadable one');

function formatName(code: number, bits: number): string {
  if (code === WAVE_FORMAT_PCM) return `${bits}-bit PCM`;
  if (code === WAVE_FORMAT_IEEE_FLOAT) return `${bits}-bit floating point`;
  return `a compressed format (code ${code})`;
}

/**
 * The header of a RIFF/WAVE file of 16-bit PCM: its fmt chunk and where its data chunk is. Reads a
 * prefix too (the first kilobytes of a file): `dataBytes` is then what the header promises, which
 * `readPcmWav` checks against the whole file.
 */
export function readWavHeader(bytes: Uint8Array, options: { whole: boolean } = { whole: true }): Result<WavHeader> {
  if (bytes.length < 12) return err('invalid_input', `not a WAV file: it is ${bytes.length} bytes long, shorter than a RIFF header`);
  if (fourCc(bytes, 0) !== 'RIFF') return err('invalid_input', `not a WAV file: it starts with ${printable(fourCc(bytes, 0))}, not "RIFF"`);
  if (fourCc(bytes, 8) !== 'WAVE') return err('invalid_input', `not a WAV file: a RIFF file of type ${printable(fourCc(bytes, 8))}, not "WAVE"`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let format: { code: number; channels: number; sampleRate: number; blockAlign: number; bits: number } | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = fourCc(bytes, offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16) return err('invalid_input', `the fmt chunk is ${size} bytes: it needs at least 16`);
      if (body + 16 > bytes.length) return err('invalid_input', 'the file ends inside its fmt chunk');
      let code = view.getUint16(body, true);
      const bits = view.getUint16(body + 14, true);
      if (code === WAVE_FORMAT_EXTENSIBLE) {
        if (size < 40 || body + 40 > bytes.length) return err('invalid_input', 'the fmt chunk says WAVE_FORMAT_EXTENSIBLE but has no room for its sub-format');
        const sub = view.getUint16(body + 24, true);
        const tail = bytes.subarray(body + 26, body + 40);
        code = SUBTYPE_TAIL.every((b, i) => tail[i] === b) ? sub : -1;
      }
      format = { code, channels: view.getUint16(body + 2, true), sampleRate: view.getUint32(body + 4, true), blockAlign: view.getUint16(body + 12, true), bits };
      if (format.code !== WAVE_FORMAT_PCM || format.bits !== 16) {
        return err('invalid_input', `must be 16-bit PCM: this file is ${format.code === -1 ? 'of an unknown sub-format' : formatName(format.code, format.bits)}`);
      }
      if (format.channels === 0) return err('invalid_input', 'the fmt chunk says 0 channels');
      if (format.sampleRate === 0) return err('invalid_input', 'the fmt chunk says a sample rate of 0 Hz');
      if (format.blockAlign !== format.channels * 2) {
        return err('invalid_input', `the fmt chunk's block align is ${format.blockAlign}: 16-bit PCM of ${format.channels} channel${format.channels === 1 ? '' : 's'} needs ${format.channels * 2}`);
      }
    } else if (id === 'data') {
      if (format === undefined) return err('invalid_input', 'the data chunk comes before any fmt chunk');
      const held = bytes.length - body;
      let dataBytes = size;
      if (UNKNOWN_SIZES.has(size)) dataBytes = Math.max(0, held);
      else if (options.whole && size > held) return err('invalid_input', `the data chunk is cut short: its header says ${size} bytes, the file holds ${Math.max(0, held)}`);
      const frames = Math.floor(dataBytes / format.blockAlign);
      return ok({ sampleRate: format.sampleRate, channels: format.channels, dataOffset: body, dataBytes: frames * format.blockAlign, frames });
    }
    // Chunks are padded to an even length (RIFF); one that runs past the end ends the search.
    offset = body + size + (size % 2);
  }
  return err('invalid_input', format === undefined ? 'no fmt chunk: the file does not say its format' : 'no data chunk: the file holds no samples');
}

/** The samples of a whole RIFF/WAVE file of 16-bit PCM, any rate, any number of channels. */
export function readPcmWav(bytes: Uint8Array): Result<PcmAudio> {
  const header = readWavHeader(bytes);
  if (!header.ok) return header;
  const { sampleRate, channels, dataOffset, frames } = header.value;
  const view = new DataView(bytes.buffer, bytes.byteOffset + dataOffset, frames * channels * 2);
  const samples = new Int16Array(frames * channels);
  for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(i * 2, true);
  return ok({ sampleRate, channels, frames, samples });
}

/** One channel: the average of all of them (a stereo notice plays the same to a mono listener). */
export function downmixToMono(audio: PcmAudio): Int16Array {
  const { channels, frames, samples } = audio;
  if (channels === 1) return samples.slice();
  const mono = new Int16Array(frames);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += samples[f * channels + c]!;
    mono[f] = Math.round(sum / channels);
  }
  return mono;
}

/** Zero crossings of the sinc on each side: the filter's length, and how steep its edge is. */
const ZERO_CROSSINGS = 16;
/** Table entries per zero crossing; the kernel between two is interpolated. */
const TABLE_RESOLUTION = 512;
/** Kaiser β: about 80 dB of stop band. */
const KAISER_BETA = 8;
/** The pass band ends this far below the lower Nyquist frequency, leaving the filter room for its transition. */
const CUTOFF = 0.94;

/** Modified Bessel function of the first kind, order 0 (its series converges fast for the window's arguments). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const quarter = (x * x) / 4;
  for (let k = 1; k < 50; k++) {
    term *= quarter / (k * k);
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

let kernelTable: Float64Array | undefined;

/** sinc(x)·Kaiser(x / ZERO_CROSSINGS) for x from 0 to ZERO_CROSSINGS, TABLE_RESOLUTION steps per unit, and one past the end. */
function kernel(): Float64Array {
  if (kernelTable !== undefined) return kernelTable;
  const length = ZERO_CROSSINGS * TABLE_RESOLUTION + 2;
  const table = new Float64Array(length);
  const norm = besselI0(KAISER_BETA);
  for (let i = 0; i < length; i++) {
    const x = i / TABLE_RESOLUTION;
    const r = x / ZERO_CROSSINGS;
    const window = r >= 1 ? 0 : besselI0(KAISER_BETA * Math.sqrt(1 - r * r)) / norm;
    table[i] = (x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x)) * window;
  }
  kernelTable = table;
  return table;
}

/**
 * Mono 16-bit PCM from one rate to another (any two rates): band-limited below the lower of the two
 * Nyquist frequencies, so that nothing folds back, and the same loudness. The output lasts as long
 * as the input, to the nearest sample.
 */
export function resamplePcm(samples: Int16Array, fromRate: number, toRate: number): Int16Array {
  if (!(fromRate > 0 && toRate > 0)) throw new RangeError('resamplePcm: rates must be positive');
  if (fromRate === toRate) return samples.slice();
  const table = kernel();
  const length = Math.round((samples.length * toRate) / fromRate);
  const out = new Int16Array(length);
  const step = fromRate / toRate;
  // The filter's cut-off, as a fraction of the input's Nyquist frequency.
  const cut = Math.min(1, toRate / fromRate) * CUTOFF;
  const halfWidth = ZERO_CROSSINGS / cut;
  const last = samples.length - 1;
  for (let n = 0; n < length; n++) {
    const t = n * step;
    const from = Math.max(0, Math.ceil(t - halfWidth));
    const to = Math.min(last, Math.floor(t + halfWidth));
    let acc = 0;
    for (let k = from; k <= to; k++) {
      const position = Math.abs(t - k) * cut * TABLE_RESOLUTION;
      const index = Math.floor(position);
      if (index >= table.length - 1) continue;
      const fraction = position - index;
      acc += samples[k]! * (table[index]! + (table[index + 1]! - table[index]!) * fraction);
    }
    const value = Math.round(acc * cut);
    out[n] = value > 32767 ? 32767 : value < -32768 ? -32768 : value;
  }
  return out;
}

/** Any 16-bit PCM as one channel at `rate` (NOTICE_SAMPLE_RATE for a notice). */
export function toMonoAt(audio: PcmAudio, rate: number): Int16Array {
  return resamplePcm(downmixToMono(audio), audio.sampleRate, rate);
}

/** A WAV file of 16-bit PCM (interleaved when it has several channels): what tests and tools write. */
export function pcmWavFile(samples: Int16Array, sampleRate: number, channels = 1): Uint8Array {
  const dataBytes = samples.length * 2;
  const bytes = new Uint8Array(44 + dataBytes);
  const view = new DataView(bytes.buffer);
  const ascii = (at: number, text: string) => {
    for (let i = 0; i < text.length; i++) bytes[at + i] = text.charCodeAt(i);
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, WAVE_FORMAT_PCM, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channels * 2, true);
  view.setUint16(32, channels * 2, true);
  view.setUint16(34, 16, true);
  ascii(36, 'data');
  view.setUint32(40, dataBytes, true);
  for (let i = 0; i < samples.length; i++) view.setInt16(44 + i * 2, samples[i]!, true);
  return bytes;
}
