// An MP4's sample tables (ISO/IEC 14496-12 8.6–8.9) and track runs (8.8.8), checked by hand before
// mp4box reads them.
//
// mp4box takes each table's entry count as it stands and builds what it names at once, in one
// synchronous parse that no deadline can interrupt: a stsz box of constant sample size that claims
// 10,000,000 samples makes 10,000,000 sample objects (about 20 s) and 100,000,000 exhaust the heap. So
// every table is measured first: its entries must fit its box, and the samples it claims must fit the
// file and stay below MAX_SAMPLES.
import { text, type RuleText } from '../i18n/text';
import { bytesText } from './reading';
import { bytesAt, count, latin1, u32, type MediaSample } from './sample';

interface Mp4Box {
  type: string;
  /** Where the box starts, its header included. */
  start: number;
  /** Where its payload starts, after the header. */
  payload: number;
  end: number;
}

/**
 * The most samples the tracks of one file may claim, all tracks and fragments together. mp4box builds
 * an object of some 300 bytes for each sample, synchronously: a million take about a second and 300 MB.
 * No real file the gateway takes (16 MB at most) comes near this: at 30 frames a second with 48 kHz
 * AAC (77 samples a second), 500,000 samples are 1.8 hours, which 16 MB holds only at 20 kbit/s for
 * picture and sound together.
 */
export const MAX_SAMPLES = 500_000;

/** Sample group descriptions that may take no bytes each: a handful describe a track. */
const EMPTY_GROUP_ENTRIES_MOST = 256;

/**
 * The boxes inside [from, to) of `bytes` (offsets in `bytes`), or why they do not nest. Fewer than 8
 * bytes left at the end are padding, not a box (QuickTime writers end some containers with 4 zero bytes).
 */
function childBoxes(bytes: Uint8Array, from: number, to: number, parent: string): Mp4Box[] | RuleText {
  const boxes: Mp4Box[] = [];
  for (let at = from; to - at >= 8; ) {
    const type = latin1(bytes.subarray(at + 4, at + 8));
    const size32 = u32(bytes, at);
    let header = 8;
    let size = size32;
    if (size32 === 1) {
      if (to - at < 16) return text('media.boxHeaderInside', { parent, type });
      header = 16;
      size = u32(bytes, at + 8) * 2 ** 32 + u32(bytes, at + 12);
    } else if (size32 === 0) {
      size = to - at;
    }
    if (size < header || at + size > to) return text('media.boxNotFit', { type, size: count(size), parent });
    boxes.push({ type, start: at, payload: at + header, end: at + size });
    at += size;
  }
  return boxes;
}

/** The boxes along `path` from `box` (trak → mdia → minf → stbl), or why they do not nest. */
function boxesAlong(bytes: Uint8Array, box: Mp4Box, path: readonly string[]): Mp4Box[] | RuleText {
  let level: Mp4Box[] = [box];
  for (const type of path) {
    const next: Mp4Box[] = [];
    for (const parent of level) {
      const children = childBoxes(bytes, parent.payload, parent.end, parent.type);
      if (!Array.isArray(children)) return children;
      next.push(...children.filter((c) => c.type === type));
    }
    level = next;
  }
  return level;
}

interface TableCount {
  /** Why the table cannot be what it claims. */
  problem?: RuleText;
  /** The samples it makes mp4box build. */
  samples: number;
}

/**
 * One table's entry count against its box: `fixed` bytes of version, flags and fields before the
 * entries, `entryBits` bits an entry.
 */
function entriesFit(type: string, payload: Uint8Array, fixed: number, entries: number, entryBits: number, samples = 0): TableCount {
  if (payload.length < fixed) return { problem: text('media.tableShort', { type, size: count(payload.length) }), samples };
  const needed = Math.ceil((entries * entryBits) / 8);
  if (needed > payload.length - fixed) {
    const claim = { type, entries: count(entries), size: count(payload.length) };
    const problem = entryBits % 8 === 0 ? text('media.tableEntriesBytes', { ...claim, entryBytes: entryBits / 8 }) : text('media.tableEntriesBits', { ...claim, entryBits });
    return { problem, samples };
  }
  return { samples };
}

const bitCount = (n: number): number => n.toString(2).replace(/0/g, '').length;

/** A table's entry count against its box, and the samples it claims; undefined for boxes that are no table. */
function tableCount(type: string, payload: Uint8Array, fileSize: number): TableCount | undefined {
  const version = payload[0] ?? 0;
  const flags = u32(payload, 0) & 0xffffff;
  switch (type) {
    case 'stts': // (sample_count, sample_delta)
    case 'ctts': // (sample_count, sample_offset)
    case 'stsh': // (shadowed, sync)
    case 'co64':
      return entriesFit(type, payload, 8, u32(payload, 4), 64);
    case 'stsc': // (first_chunk, samples_per_chunk, sample_description_index)
      return entriesFit(type, payload, 8, u32(payload, 4), 96);
    case 'stco':
    case 'stss':
      return entriesFit(type, payload, 8, u32(payload, 4), 32);
    case 'stsz': {
      const sampleSize = u32(payload, 4);
      const samples = u32(payload, 8);
      if (sampleSize === 0) return entriesFit(type, payload, 12, samples, 32, samples);
      // One size for all: the box lists no sizes, so only the file bounds the count. Each sample's bytes
      // are in the file (mp4box reads no external data), so they cannot add up to more than it holds.
      if (samples * sampleSize > fileSize) {
        const claim = { samples: count(samples), fileSize: bytesText(fileSize) };
        return { problem: sampleSize === 1 ? text('media.sampleSizeOne', claim) : text('media.sampleSize', { ...claim, sampleSize: count(sampleSize) }), samples };
      }
      return entriesFit(type, payload, 12, samples, 0, samples);
    }
    case 'stz2': {
      const fieldSize = payload[7] ?? 0;
      const samples = u32(payload, 8);
      return entriesFit(type, payload, 12, samples, fieldSize === 4 || fieldSize === 8 || fieldSize === 16 ? fieldSize : 0, samples);
    }
    case 'sbgp': // (sample_count, group_description_index) after the grouping type and, from version 1, its parameter
      return version === 1 ? entriesFit(type, payload, 16, u32(payload, 12), 64) : entriesFit(type, payload, 12, u32(payload, 8), 64);
    case 'sgpd': {
      const fixed = version === 0 ? 12 : 16;
      const entries = u32(payload, fixed - 4);
      // Version 1 gives the entries' length (or a length field each). Otherwise an entry takes what its
      // grouping type lays out, nothing at all for some ('tsas', 'stsa'): a few such entries, or a byte
      // each at least, as mp4box builds an object for each.
      if (version === 1) return entriesFit(type, payload, fixed, entries, 8 * (u32(payload, 8) || 4));
      return entriesFit(type, payload, fixed, entries <= EMPTY_GROUP_ENTRIES_MOST ? 0 : entries, 8);
    }
    case 'saio': {
      const fixed = flags & 1 ? 16 : 8;
      return entriesFit(type, payload, fixed, u32(payload, fixed - 4), version === 0 ? 32 : 64);
    }
    case 'saiz': {
      const fixed = flags & 1 ? 17 : 9;
      const defaultSize = payload[fixed - 5] ?? 0;
      return entriesFit(type, payload, fixed, u32(payload, fixed - 4), defaultSize === 0 ? 8 : 0);
    }
    case 'trun': {
      // 4.8.8: sample_count, then a data offset (flag 0x1) and the first sample's flags (0x4), then for
      // each sample its duration (0x100), size (0x200), flags (0x400) and composition offset (0x800).
      const samples = u32(payload, 4);
      const fixed = 8 + (flags & 0x1 ? 4 : 0) + (flags & 0x4 ? 4 : 0);
      return entriesFit(type, payload, fixed, samples, 32 * bitCount(flags & 0xf00), samples);
    }
    default:
      return undefined;
  }
}

/** The tables under each box, and the samples they claim in all; the first problem found, if any. */
function tablesProblem(bytes: Uint8Array, containers: readonly Mp4Box[], fileSize: number, samples: { total: number }): RuleText | undefined {
  for (const container of containers) {
    const children = childBoxes(bytes, container.payload, container.end, container.type);
    if (!Array.isArray(children)) return children;
    for (const child of children) {
      const table = tableCount(child.type, bytes.subarray(child.payload, child.end), fileSize);
      if (table === undefined) continue;
      if (table.problem !== undefined) return table.problem;
      samples.total += table.samples;
    }
  }
  return undefined;
}

/**
 * Why the sample tables of the moov box and of the movie fragments the sample holds cannot be read
 * safely, or undefined when each fits its box and the file. `topLevel` are the file's top-level
 * boxes; the moov box must be in the sample (a moof box it does not hold whole is not read by mp4box
 * either, and is skipped here).
 */
export function sampleTableProblem(sample: MediaSample, topLevel: readonly { type: string; start: number; end: number }[]): RuleText | undefined {
  const samples = { total: 0 };
  for (const box of topLevel) {
    if (box.type !== 'moov' && box.type !== 'moof') continue;
    const bytes = bytesAt(sample, box.start, box.end - box.start);
    if (bytes === undefined) continue;
    const header = u32(bytes, 0) === 1 ? 16 : 8;
    const root: Mp4Box = { type: box.type, start: 0, payload: header, end: bytes.length };
    const containers = box.type === 'moov' ? boxesAlong(bytes, root, ['trak', 'mdia', 'minf', 'stbl']) : boxesAlong(bytes, root, ['traf']);
    if (!Array.isArray(containers)) return containers;
    const problem = tablesProblem(bytes, containers, sample.size, samples);
    if (problem !== undefined) return problem;
  }
  if (samples.total > MAX_SAMPLES) {
    return text('media.tooManySamples', { samples: count(samples.total), fileSize: bytesText(sample.size), most: count(MAX_SAMPLES) });
  }
  return undefined;
}
