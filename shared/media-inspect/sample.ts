// Byte access over a MediaSample: the head, the tail when the head does not hold the whole file, and
// any part from between them that a reader asked for.
import { text } from '../i18n/text';
import { finding, type MediaFinding } from './reading';

/** Bytes of a file: its first bytes, its last bytes, and parts from between, as far as they were read. */
export interface MediaSample {
  /** Bytes [0, head.length). */
  head: Uint8Array;
  /** Bytes [size - tail.length, size); absent when head.length === size. */
  tail?: Uint8Array;
  /** Bytes [start, start + bytes.length) from between the head and the tail (a ZIP entry in the middle of the file). */
  parts?: readonly { start: number; bytes: Uint8Array }[];
  /** The whole file's size. */
  size: number;
}

/** Bytes [start, end) of a file. */
export interface ByteRange {
  start: number;
  end: number;
}

export const isWhole = (sample: MediaSample): boolean => sample.head.length >= sample.size;

/** Where the tail starts in the file; undefined without a tail. */
export const tailStart = (sample: MediaSample): number | undefined => (sample.tail === undefined ? undefined : sample.size - sample.tail.length);

/** Bytes [start, start + length) when the sample holds all of them (in the head, the tail or one part), else undefined. */
export function bytesAt(sample: MediaSample, start: number, length: number): Uint8Array | undefined {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(length) || start < 0 || length < 0 || start + length > sample.size) return undefined;
  if (start + length <= sample.head.length) return sample.head.subarray(start, start + length);
  const from = tailStart(sample);
  if (sample.tail !== undefined && from !== undefined && start >= from) return sample.tail.subarray(start - from, start - from + length);
  const part = sample.parts?.find((p) => p.start <= start && start + length <= p.start + p.bytes.length);
  return part?.bytes.subarray(start - part.start, start - part.start + length);
}

/** The last `length` bytes of the file (fewer when it is shorter), when the sample holds them. */
export const lastBytes = (sample: MediaSample, length: number): Uint8Array | undefined => {
  const n = Math.min(length, sample.size);
  return bytesAt(sample, sample.size - n, n);
};

/**
 * What the sample lacks of bytes [start, end): the range trimmed of what the head, the tail and the
 * parts already hold at either end; undefined when nothing is missing. A reader's wish for bytes is
 * put through it, so that no byte is asked for twice.
 */
export function missingRange(sample: MediaSample, start: number, end: number): ByteRange | undefined {
  if (!Number.isFinite(start) || !Number.isFinite(end)) return undefined;
  let from = Math.max(0, Math.floor(start));
  let to = Math.min(sample.size, Math.ceil(end));
  const held: ByteRange[] = [{ start: 0, end: sample.head.length }, ...(sample.parts ?? []).map((p) => ({ start: p.start, end: p.start + p.bytes.length }))];
  const tailFrom = tailStart(sample);
  if (tailFrom !== undefined) held.push({ start: tailFrom, end: sample.size });
  for (let trimmed = true; trimmed && from < to; ) {
    trimmed = false;
    for (const h of held) {
      if (h.start <= from && from < h.end) [from, trimmed] = [h.end, true];
      if (h.start < to && to <= h.end) [to, trimmed] = [h.start, true];
    }
  }
  return from < to ? { start: from, end: to } : undefined;
}

/** The parts, one after another, in one array (the one part itself when there is one). */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/**
 * The sample with bytes [start, start + bytes.length) added: they extend the head when they reach it,
 * the tail when they reach it, become the tail when they end the file, and a part otherwise. Parts
 * that come to touch the head or the tail join them, and a head that reaches the tail makes the
 * sample whole.
 */
export function withBytes(sample: MediaSample, start: number, bytes: Uint8Array): MediaSample {
  const { size } = sample;
  let head = sample.head;
  let tail = sample.tail;
  let parts = [...(sample.parts ?? []), { start, bytes }].filter((p) => p.bytes.length > 0);
  for (let grew = true; grew; ) {
    grew = false;
    const rest: typeof parts = [];
    for (const part of parts) {
      const end = part.start + part.bytes.length;
      // Without a tail, a part that ends the file becomes it.
      const tailFrom = tail === undefined ? size : size - tail.length;
      if (part.start <= head.length) {
        if (end > head.length) [head, grew] = [concatBytes(head, part.bytes.subarray(head.length - part.start)), true];
      } else if (end >= tailFrom) {
        if (part.start < tailFrom) [tail, grew] = [concatBytes(part.bytes.subarray(0, tailFrom - part.start), tail ?? new Uint8Array(0)), true];
      } else {
        rest.push(part);
      }
    }
    parts = rest;
  }
  const tailFrom = tail === undefined ? undefined : size - tail.length;
  if (tail !== undefined && tailFrom !== undefined && head.length >= tailFrom) {
    if (head.length < size) head = concatBytes(head, tail.subarray(head.length - tailFrom));
    tail = undefined;
  }
  if (head.length >= size) return { head, size };
  return { head, ...(tail === undefined ? {} : { tail }), ...(parts.length === 0 ? {} : { parts }), size };
}

/** Whether the sample's parts fit its size; a refusal naming the mismatch otherwise. */
export function sampleProblem(sample: MediaSample): MediaFinding | undefined {
  const { head, tail, size } = sample;
  if (!Number.isSafeInteger(size) || size < 0) return finding('file.unreadable', text('media.sizeNotByteCount', { size: String(size) }));
  if (head.length > size) return finding('file.unreadable', text('media.moreThanHeld', { read: head.length, size }));
  if (tail !== undefined && tail.length > size) return finding('file.unreadable', text('media.moreThanHeld', { read: tail.length, size }));
  const outside = sample.parts?.find((p) => !Number.isSafeInteger(p.start) || p.start < 0 || p.start + p.bytes.length > size);
  if (outside !== undefined) {
    return finding('file.unreadable', text('media.outsideFile', { start: String(outside.start), end: String(outside.start + outside.bytes.length), size }));
  }
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
