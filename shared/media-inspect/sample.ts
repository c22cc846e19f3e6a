// Byte access over a MediaSample: the head, and the tail when the head does not hold the whole file.
import type { MediaFinding } from './reading';

/** Bytes of a file: its first bytes, and its last bytes when the head does not hold it all. */
export interface MediaSample {
  /** Bytes [0, head.length). */
  head: Uint8Array;
  /** Bytes [size - tail.length, size); absent when head.length === size. */
  tail?: Uint8Array;
  /** The whole file's size. */
  size: number;
}

export const isWhole = (sample: MediaSample): boolean => sample.head.length >= sample.size;

/** Where the tail starts in the file; undefined without a tail. */
export const tailStart = (sample: MediaSample): number | undefined => (sample.tail === undefined ? undefined : sample.size - sample.tail.length);

/** Bytes [start, start + length) when the sample holds all of them (in the head or in the tail), else undefined. */
export function bytesAt(sample: MediaSample, start: number, length: number): Uint8Array | undefined {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(length) || start < 0 || length < 0 || start + length > sample.size) return undefined;
  if (start + length <= sample.head.length) return sample.head.subarray(start, start + length);
  const from = tailStart(sample);
  if (sample.tail !== undefined && from !== undefined && start >= from) return sample.tail.subarray(start - from, start - from + length);
  return undefined;
}

/** Whether the sample's parts fit its size; a refusal naming the mismatch otherwise. */
export function sampleProblem(sample: MediaSample): MediaFinding | undefined {
  const { head, tail, size } = sample;
  if (!Number.isSafeInteger(size) || size < 0) return { rule: 'file.unreadable', message: `the file's size (${String(size)}) is not a byte count` };
  if (head.length > size) return { rule: 'file.unreadable', message: `more bytes were read (${head.length}) than the file holds (${size})` };
  if (tail !== undefined && tail.length > size) return { rule: 'file.unreadable', message: `more bytes were read (${tail.length}) than the file holds (${size})` };
  return undefined;
}

export const u16 = (b: Uint8Array, at: number): number => ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
export const u32 = (b: Uint8Array, at: number): number => (((b[at] ?? 0) << 24) | ((b[at + 1] ?? 0) << 16) | ((b[at + 2] ?? 0) << 8) | (b[at + 3] ?? 0)) >>> 0;
export const u16le = (b: Uint8Array, at: number): number => (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8);
export const u32le = (b: Uint8Array, at: number): number => ((b[at] ?? 0) | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16) | ((b[at + 3] ?? 0) << 24)) >>> 0;

/** Bytes as Latin-1 text: for magic numbers and four-character codes. */
export const latin1 = (b: Uint8Array): string => String.fromCharCode(...b);

/** Whether the bytes start with this ASCII text. */
export const startsWith = (b: Uint8Array, text: string, at = 0): boolean =>
  b.length >= at + text.length && [...text].every((c, i) => b[at + i] === c.charCodeAt(0));

/** 1,234,567 — byte offsets in messages. */
export const count = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
