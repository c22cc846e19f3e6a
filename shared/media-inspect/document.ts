// Documents (gateway-spec.md 2.3): the content must be what the type says: a PDF, an OLE compound
// file holding the Word, Excel or PowerPoint stream (.doc, .xls, .ppt), an OOXML package (.docx,
// .xlsx, .pptx; file-type tells them apart by their content types), or plain text.
//
// What each reads, so that a document is fetched by the ranges it needs (documentBytesWanted): a PDF
// its head and its last 1024 bytes; an OOXML package the end of its ZIP (the end of central directory
// record, the central directory) and its [Content_Types].xml entry wherever that sits; plain text a
// head of TEXT_HEAD_BYTES; a compound file all of it (its allocation table and directory sectors may
// lie anywhere, and the reader walks them in the bytes it holds).
import { term, text, type RuleText, type TextValue } from '../i18n/text';
import { bytesAt, count, isWhole, lastBytes, latin1, missingRange, startsWith, u16le, u32le, type ByteRange, type MediaSample } from './sample';
import { finding, formatWhat, other, readAs, unreadable, type Reading } from './reading';

/** The head a document is read by first: what every reader's first question needs, and a small file whole. */
export const DOCUMENT_HEAD_BYTES = 64 * 1024;

/** Where a PDF reader looks for the trailer's "%%EOF": the last 1024 bytes. */
const PDF_END_BYTES = 1024;

export function readPdf(sample: MediaSample): Reading {
  const version = /^%PDF-(\d\.\d)/.exec(latin1(sample.head.subarray(0, 8)))?.[1];
  // Readers look for the trailer's "%%EOF" in the last 1024 bytes; a file without it was cut short.
  const end = lastBytes(sample, PDF_END_BYTES);
  if (end !== undefined && !latin1(end).includes('%%EOF')) {
    return unreadable(formatWhat('application/pdf'), text('media.pdfNoEof'));
  }
  return readAs('application/pdf', formatWhat('application/pdf'), version === undefined ? 'PDF' : `PDF ${version}`);
}

const CFB_SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

/**
 * The bytes a document still needs after its head, by what the head starts with: a PDF's last bytes,
 * a compound file's rest, a ZIP's end and [Content_Types].xml entry (zipBytesWanted), text's head of
 * TEXT_HEAD_BYTES. Undefined when the sample holds what the reader needs, or the head is of another format.
 */
export function documentBytesWanted(sample: MediaSample): ByteRange | undefined {
  if (isWhole(sample)) return undefined;
  const b = sample.head;
  const { size } = sample;
  if (startsWith(b, '%PDF-')) return missingRange(sample, size - Math.min(size, PDF_END_BYTES), size);
  // The whole file: its sectors may lie anywhere (see cfbDirectory). 25 MB at most, the document limit.
  if (CFB_SIGNATURE.every((x, i) => b[i] === x)) return missingRange(sample, 0, size);
  if (startsWith(b, 'PK\x03\x04')) return zipBytesWanted(sample);
  if (startsWithByteOrderMark(b) || !b.some(isControl)) return missingRange(sample, 0, TEXT_HEAD_BYTES);
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// OLE compound files ([MS-CFB]). file-type says "cfb" for all of them; which program wrote one is
// told by the streams in its root storage ([MS-DOC] "WordDocument", [MS-XLS] "Workbook" (or "Book"
// before Excel 97), [MS-PPT] "PowerPoint Document").
//
// The directory is read here, not with SheetJS's cfb package (pure JavaScript, which lists them too),
// for what that package does with a crafted file: it cuts a sector chain that loops or that another
// stream shares off silently, where a refusal must name it (looping-fat.doc reads as a Word document
// with an empty stream, its 4 GB size taken as a negative one), and it rebuilds chains from every
// sector, which takes quadratic time and memory on a chain that runs backwards (a 0.5 MB file: 10 s;
// 1 MB: a 4 GB heap exhausted). This reader walks each sector once. Both need the whole file.

const NO_STREAM = 0xffffffff;
const END_OF_CHAIN = 0xfffffffe;
const FREE_SECTOR = 0xffffffff;
/** Far more than any Office file holds (an entry is 128 bytes: this is 2 MB of directory); a bound on what a crafted directory makes the reader do. */
const MAX_DIRECTORY_ENTRIES = 16_384;

interface CfbEntry {
  name: string;
  type: number;
  left: number;
  right: number;
  child: number;
  start: number;
  size: number;
}

/**
 * What the directory of a whole compound file says: the names of the streams in its root storage and,
 * when a stream cannot be read, why ("its WordDocument stream lies past the end of the file"): `cut`
 * when the file is cut short, `broken` when its sector chains are (a chain that loops, two that meet).
 */
type CfbDirectory = { ok: true; rootStreams: string[]; cut?: TextValue; broken?: RuleText } | { ok: false; why: RuleText };

/** A stream's name as messages show it: some start with a control character ("\u0005SummaryInformation"). */
const shownName = (name: string): string => [...name].filter((c) => c >= ' ').join('');

function cfbDirectory(b: Uint8Array): CfbDirectory {
  if (b.length < 512) return { ok: false, why: text('media.cfbHeaderCut') };
  const shift = u16le(b, 0x1e);
  if (u16le(b, 0x1c) !== 0xfffe || (shift !== 9 && shift !== 12)) return { ok: false, why: text('media.cfbNotHeader') };
  const sectorSize = 2 ** shift;
  const sectorCount = Math.ceil(b.length / sectorSize) - 1;
  const offsetOf = (sector: number) => (sector + 1) * sectorSize;
  const perSector = sectorSize / 4;

  // The FAT's own sectors: 109 in the header, the rest in the DIFAT chain (each of its sectors ends
  // with the next one's number).
  const fatSectors: number[] = [];
  for (let i = 0; i < 109; i++) fatSectors.push(u32le(b, 0x4c + 4 * i));
  const difatSectors = new Set<number>();
  for (let difat = u32le(b, 0x44), n = u32le(b, 0x48); n > 0 && difat < sectorCount; n--) {
    if (difatSectors.has(difat)) return { ok: false, why: text('media.fatLoops') };
    difatSectors.add(difat);
    for (let i = 0; i < perSector - 1; i++) fatSectors.push(u32le(b, offsetOf(difat) + 4 * i));
    difat = u32le(b, offsetOf(difat) + 4 * (perSector - 1));
  }
  const next = (sector: number): number | undefined => {
    const fatSector = fatSectors[Math.floor(sector / perSector)];
    if (fatSector === undefined || fatSector === FREE_SECTOR || fatSector >= sectorCount) return undefined;
    return u32le(b, offsetOf(fatSector) + 4 * (sector % perSector));
  };

  // A sector belongs to one chain at most ([MS-CFB] 2.3). Each walk claims the sectors it passes, so a
  // walk that comes back to a sector it claimed loops, one that reaches another's sector is broken, and
  // all the walks together take no more steps than the file has sectors, whatever a crafted FAT says.
  const owners = new Map<number, { walk: number; what: TextValue }>();
  let walks = 0;
  type Walk = { ok: true; sectors: number[] } | { ok: false; problem: 'past-end' | 'uncovered' | 'loops' | 'shared' | 'long'; sector: number; other?: TextValue };
  /** The chain from `start`: `length` sectors of it, or up to its end-of-chain mark (at most `most` sectors) when length is undefined. */
  const walk = (start: number, what: TextValue, length: number | undefined, most = sectorCount): Walk => {
    const sectors: number[] = [];
    const self = ++walks;
    for (let sector = start; length === undefined ? sector !== END_OF_CHAIN : sectors.length < length; ) {
      if (sector >= sectorCount) return { ok: false, problem: 'past-end', sector };
      const owner = owners.get(sector);
      if (owner !== undefined) return { ok: false, problem: owner.walk === self ? 'loops' : 'shared', sector, other: owner.what };
      if (sectors.length >= most) return { ok: false, problem: 'long', sector };
      owners.set(sector, { walk: self, what });
      sectors.push(sector);
      if (sectors.length === length) break;
      const following = next(sector);
      if (following === undefined) return { ok: false, problem: 'uncovered', sector };
      sector = following;
    }
    return { ok: true, sectors };
  };
  // `what` and `other` name a chain: "directory", "mini stream", "WordDocument stream" (catalogue words, for the window to translate).
  const chainProblem = (what: TextValue, w: Extract<Walk, { ok: false }>): RuleText =>
    w.problem === 'loops' ? text('media.chainLoops', { what }) : text('media.chainShared', { what, sector: w.sector, other: w.other ?? term('otherData') });

  const entriesPerSector = sectorSize / 128;
  const directoryName = term('cfbDirectory');
  const directory = walk(u32le(b, 0x30), directoryName, undefined, Math.ceil(MAX_DIRECTORY_ENTRIES / entriesPerSector));
  if (!directory.ok) {
    switch (directory.problem) {
      case 'past-end':
        return { ok: false, why: text('media.directoryPastEnd', { sector: directory.sector }) };
      case 'uncovered':
        return { ok: false, why: text('media.directoryUncovered') };
      case 'long':
        return { ok: false, why: text('media.directoryTooLarge', { most: count(MAX_DIRECTORY_ENTRIES) }) };
      default:
        return { ok: false, why: chainProblem(directoryName, directory) };
    }
  }
  const entries: CfbEntry[] = [];
  for (const sector of directory.sectors) {
    for (let at = offsetOf(sector); at < offsetOf(sector) + sectorSize; at += 128) {
      const nameBytes = Math.min(u16le(b, at + 0x40), 64);
      const chars: number[] = [];
      for (let i = 0; i + 2 < nameBytes; i += 2) chars.push(u16le(b, at + i));
      entries.push({
        name: String.fromCharCode(...chars),
        type: b[at + 0x42] ?? 0,
        left: u32le(b, at + 0x44),
        right: u32le(b, at + 0x48),
        child: u32le(b, at + 0x4c),
        start: u32le(b, at + 0x74),
        size: u32le(b, at + 0x78),
      });
    }
  }
  const root = entries[0];
  if (root?.type !== 5) return { ok: false, why: text('media.noRootEntry') };

  // Each storage's children form a red-black tree through their left and right siblings; storages
  // (type 1) hold trees of their own. Entries outside the trees are not part of the file.
  const rootStreams: string[] = [];
  const streams: number[] = [];
  const seen = new Set<number>();
  const pending = [{ id: root.child, inRoot: true }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const { id, inRoot } = item;
    if (id === NO_STREAM) continue;
    const entry = entries[id];
    if (entry === undefined || seen.has(id) || id === 0) return { ok: false, why: text('media.treeBroken') };
    seen.add(id);
    if (entry.type === 2) {
      streams.push(id);
      if (inRoot) rootStreams.push(entry.name);
    }
    if (entry.type === 1) pending.push({ id: entry.child, inRoot: false });
    pending.push({ id: entry.left, inRoot }, { id: entry.right, inRoot });
  }

  /** Why the chain of `size` bytes from `start` cannot be read, or undefined when it lies whole within the file (its last sector need not be padded out). */
  const streamProblem = (start: number, size: number, what: TextValue): { cut?: TextValue; broken?: RuleText } | undefined => {
    const length = Math.ceil(size / sectorSize);
    const chain = walk(start, what, length);
    if (!chain.ok) return chain.problem === 'past-end' || chain.problem === 'uncovered' ? { cut: what } : { broken: chainProblem(what, chain) };
    const last = chain.sectors[length - 1];
    if (last !== undefined && offsetOf(last) + (size - (length - 1) * sectorSize) > b.length) return { cut: what };
    return undefined;
  };
  // Streams below the cutoff live in the mini stream, the root entry's chain: walked once for all of them.
  const cutoff = u32le(b, 0x38);
  let miniStream: { cut?: TextValue; broken?: RuleText } | undefined | 'unread' = 'unread';
  // In the directory's order, so that a broken file is told by the same stream whatever its tree.
  for (const entry of streams.sort((x, y) => x - y).map((id) => entries[id]!)) {
    const name = text('mediaFile.stream', { name: shownName(entry.name) });
    let problem: { cut?: TextValue; broken?: RuleText } | undefined;
    if (entry.size < cutoff) {
      if (miniStream === 'unread') miniStream = streamProblem(root.start, root.size, term('miniStream'));
      problem = miniStream?.cut === undefined ? miniStream : { cut: name };
    } else {
      problem = streamProblem(entry.start, entry.size, name);
    }
    if (problem !== undefined) return { ok: true, rootStreams, ...problem };
  }
  return { ok: true, rootStreams };
}

const OFFICE_STREAMS: readonly { streams: readonly string[]; mimeType: string; description: RuleText }[] = [
  { streams: ['WordDocument'], mimeType: 'application/msword', description: text('mediaFile.word97', { extension: '.doc' }) },
  { streams: ['Workbook', 'Book'], mimeType: 'application/vnd.ms-excel', description: text('mediaFile.excel97', { extension: '.xls' }) },
  { streams: ['PowerPoint Document'], mimeType: 'application/vnd.ms-powerpoint', description: text('mediaFile.powerPoint97', { extension: '.ppt' }) },
];

const OLE_FILE = text('mediaFile.oleFile');

export function readCfb(sample: MediaSample): Reading {
  if (!isWhole(sample)) return unreadable(OLE_FILE, text('media.cfbPartlyRead'));
  const directory = cfbDirectory(sample.head);
  if (!directory.ok) return unreadable(OLE_FILE, directory.why);
  const office = OFFICE_STREAMS.find((o) => directory.rootStreams.some((name) => o.streams.includes(name)));
  const what = office === undefined ? OLE_FILE : formatWhat(office.mimeType);
  if (directory.broken !== undefined) return unreadable(what, directory.broken);
  if (directory.cut !== undefined) return unreadable(what, text('media.streamPastEnd', { what: directory.cut }));
  if (office !== undefined) return readAs(office.mimeType, what, office.description);
  return other(text('mediaFile.oleWithoutOffice'));
}

// ---------------------------------------------------------------------------------------------
// OOXML packages (ZIP)

const OOXML: Readonly<Record<string, { mimeType: string; description: RuleText }>> = {
  docx: { mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', description: text('mediaFile.wordDescription', { extension: '.docx' }) },
  xlsx: { mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', description: text('mediaFile.excelDescription', { extension: '.xlsx' }) },
  pptx: { mimeType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation', description: text('mediaFile.powerPointDescription', { extension: '.pptx' }) },
};

export const isOoxml = (ext: string): boolean => ext in OOXML;

/** A ZIP's end of central directory record: 22 bytes and a comment of up to 65,535 bytes (APPNOTE.TXT 4.3.16). */
const ZIP_END_BYTES = 22 + 0xffff;
const ZIP_END_SIGNATURE = 0x06054b50;
const ZIP_CENTRAL_SIGNATURE = 0x02014b50;
const ZIP_LOCAL_SIGNATURE = 0x04034b50;
/** file-type reads a [Content_Types].xml of up to 1 MB; a larger one is not asked for. */
const CONTENT_TYPES_MOST_BYTES = 1024 * 1024;
const CONTENT_TYPES = '[Content_Types].xml';

/** Where the end of central directory record starts in `b`, the last bytes of a ZIP; -1 without one. */
function zipEndRecord(b: Uint8Array): number {
  for (let at = b.length - 22; at >= Math.max(0, b.length - ZIP_END_BYTES); at--) {
    if (u32le(b, at) === ZIP_END_SIGNATURE && at + 22 + u16le(b, at + 20) === b.length) return at;
  }
  return -1;
}

/** A ZIP ends with its end of central directory record. */
const endsWithZipDirectory = (b: Uint8Array): boolean => zipEndRecord(b) >= 0;

/** The central directory's place, from the end record; 'unread' when the sample lacks the file's end, undefined when it has no usable record (none, or ZIP64's). */
function zipDirectory(sample: MediaSample): { start: number; size: number; entries: number } | 'unread' | undefined {
  const last = lastBytes(sample, ZIP_END_BYTES);
  if (last === undefined) return 'unread';
  const at = zipEndRecord(last);
  if (at < 0) return undefined;
  const directory = { start: u32le(last, at + 16), size: u32le(last, at + 12), entries: u16le(last, at + 10) };
  return directory.start + directory.size <= sample.size - last.length + at ? directory : undefined;
}

interface CentralEntry {
  localAt: number;
  nameLength: number;
  extraLength: number;
  crc: number;
  compressedSize: number;
  uncompressedSize: number;
}

/** The central directory's entry for `name`; 'unread' when the sample lacks the directory, undefined when there is none. */
function zipEntry(sample: MediaSample, name: string): CentralEntry | 'unread' | undefined {
  const directory = zipDirectory(sample);
  if (directory === undefined || directory === 'unread') return directory;
  const b = bytesAt(sample, directory.start, directory.size);
  if (b === undefined) return 'unread';
  for (let k = 0, at = 0; k < directory.entries && at + 46 <= b.length && u32le(b, at) === ZIP_CENTRAL_SIGNATURE; k++) {
    const nameLength = u16le(b, at + 28);
    const extraLength = u16le(b, at + 30);
    if (latin1(b.subarray(at + 46, at + 46 + nameLength)) === name) {
      return { localAt: u32le(b, at + 42), nameLength, extraLength, crc: u32le(b, at + 16), compressedSize: u32le(b, at + 20), uncompressedSize: u32le(b, at + 24) };
    }
    at += 46 + nameLength + extraLength + u16le(b, at + 32);
  }
  return undefined;
}

/**
 * The bytes an OOXML package still needs when the head does not hold all of it (file-type tells
 * .docx, .xlsx and .pptx apart by [Content_Types].xml, which writers put first or last): the end of
 * the file, to find the central directory; the central directory, to find the entry; the entry's
 * local header and data. Undefined once they are held, or when the ZIP has no usable directory.
 */
export function zipBytesWanted(sample: MediaSample): ByteRange | undefined {
  if (isWhole(sample)) return undefined;
  const { size } = sample;
  const end = missingRange(sample, size - Math.min(size, ZIP_END_BYTES), size);
  if (end !== undefined) return end;
  const directory = zipDirectory(sample);
  if (directory === undefined || directory === 'unread') return undefined;
  const central = missingRange(sample, directory.start, directory.start + directory.size);
  if (central !== undefined) return central;
  const entry = zipEntry(sample, CONTENT_TYPES);
  if (entry === undefined || entry === 'unread' || entry.compressedSize > CONTENT_TYPES_MOST_BYTES) return undefined;
  // The local header's extra field may differ from the central one: it counts once the header is read.
  const local = bytesAt(sample, entry.localAt, 30);
  const namesAndExtra = local !== undefined && u32le(local, 0) === ZIP_LOCAL_SIGNATURE ? u16le(local, 26) + u16le(local, 28) : entry.nameLength + entry.extraLength;
  return missingRange(sample, entry.localAt, entry.localAt + 30 + namesAndExtra + entry.compressedSize);
}

/**
 * The package's [Content_Types].xml entry as a ZIP of that one entry, for file-type to read when the
 * head does not hold it (file-type reads a ZIP's entries in order from its start). Its sizes and CRC
 * come from the central directory: a writer that streams (flag bit 3) leaves them zero in the local
 * header and puts them after the data, where file-type would have to search for them.
 */
export function contentTypesEntry(sample: MediaSample): Uint8Array | undefined {
  const entry = zipEntry(sample, CONTENT_TYPES);
  if (entry === undefined || entry === 'unread') return undefined;
  const local = bytesAt(sample, entry.localAt, 30);
  if (local === undefined || u32le(local, 0) !== ZIP_LOCAL_SIGNATURE) return undefined;
  const bytes = bytesAt(sample, entry.localAt, 30 + u16le(local, 26) + u16le(local, 28) + entry.compressedSize)?.slice();
  if (bytes === undefined) return undefined;
  const view = new DataView(bytes.buffer);
  view.setUint16(6, u16le(bytes, 6) & ~0x08, true);
  view.setUint32(14, entry.crc, true);
  view.setUint32(18, entry.compressedSize, true);
  view.setUint32(22, entry.uncompressedSize, true);
  return bytes;
}

/** A ZIP that is no OOXML package: what it is, or cut short when its directory is missing. */
export function readZip(sample: MediaSample): Reading {
  const end = lastBytes(sample, ZIP_END_BYTES);
  const zip = text('mediaFile.archive', { format: 'ZIP' });
  if (end !== undefined && !endsWithZipDirectory(end)) return unreadable(zip, text('media.zipNoDirectory'));
  return other(zip);
}

export function readOoxml(sample: MediaSample, ext: string): Reading {
  const kind = OOXML[ext];
  if (kind === undefined) return other(text('mediaFile.fileAn', { format: ext.toUpperCase() }));
  const what = formatWhat(kind.mimeType);
  const end = lastBytes(sample, ZIP_END_BYTES);
  if (end !== undefined && !endsWithZipDirectory(end)) return unreadable(what, text('media.zipNoDirectory'));
  return readAs(kind.mimeType, what, kind.description);
}

// ---------------------------------------------------------------------------------------------
// Plain text: what file-type does not recognise, when it holds text and no binary data.
//
// A .txt goes out as text/plain without a charset. The gateway takes any text, but phones read a text
// without a byte order mark as UTF-8: 8-bit text (Latin-1, Windows-1252) shows its accented letters as
// garbage, so it is a warning with the fix; UTF-16 carries its byte order mark and reads right. NUL and
// other control bytes are binary data, not text; an HTML page is a web page (often an error page served
// instead of the file), not a text document: both are refused.

/** The head plain text is judged by: a megabyte of text shows its encoding (a multi-byte sequence cut at its end is allowed). */
const TEXT_HEAD_BYTES = 1024 * 1024;

/** Control characters that text does not hold: all below 0x20 except tab, line feed, vertical tab, form feed and carriage return; and DEL. */
const isControl = (c: number): boolean => (c < 0x20 && (c < 0x09 || c > 0x0d)) || c === 0x7f;

/** Where valid UTF-8 stops (bytes.length when it does not); `cut` allows a sequence cut off at the end. */
function utf8ValidUpTo(b: Uint8Array, cut: boolean): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    const extra = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    if (extra < 0) return i;
    if (i + extra >= b.length && extra > 0) return cut ? b.length : i;
    for (let k = 1; k <= extra; k++) if (((b[i + k] ?? 0) & 0xc0) !== 0x80) return i;
    // Overlong forms, surrogates and code points past U+10FFFF (RFC 3629 4).
    const second = b[i + 1] ?? 0;
    if ((c === 0xe0 && second < 0xa0) || (c === 0xed && second > 0x9f) || (c === 0xf0 && second < 0x90) || (c === 0xf4 && second > 0x8f)) return i;
    i += extra + 1;
  }
  return b.length;
}

function utf16Text(b: Uint8Array, littleEndian: boolean, cut: boolean): boolean {
  if (b.length % 2 !== 0 && !cut) return false;
  let highSurrogate = false;
  for (let i = 0; i + 1 < b.length; i += 2) {
    const unit = littleEndian ? (b[i] ?? 0) | ((b[i + 1] ?? 0) << 8) : ((b[i] ?? 0) << 8) | (b[i + 1] ?? 0);
    const isHigh = unit >= 0xd800 && unit <= 0xdbff;
    const isLow = unit >= 0xdc00 && unit <= 0xdfff;
    if (isLow !== highSurrogate) return false;
    highSurrogate = isHigh;
    if (isControl(unit)) return false;
  }
  return !highSurrogate || cut;
}

/** UTF-8's, UTF-16LE's or UTF-16BE's byte order mark. */
export const startsWithByteOrderMark = (b: Uint8Array): boolean =>
  (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) || (b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff);

const PLAIN_TEXT = formatWhat('text/plain');

/** "plain text (UTF-8)", "XML text (UTF-16)". */
const textDescription = (known: string | undefined, encoding: string): RuleText =>
  known === undefined ? text('mediaFile.plainTextIn', { encoding }) : text('mediaFile.textIn', { format: known, encoding });

export function readText(sample: MediaSample, known?: string): Reading {
  const b = sample.head;
  const cut = !isWhole(sample);
  if ((b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff)) {
    if (!utf16Text(b.subarray(2), b[0] === 0xff, cut)) return binary();
    return readAs('text/plain', PLAIN_TEXT, textDescription(known, 'UTF-16'));
  }
  const start = b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
  const body = b.subarray(start);
  if (body.some(isControl)) return binary();
  const opening = latin1(body.subarray(0, 64)).trimStart().toLowerCase();
  if (opening.startsWith('<!doctype html') || opening.startsWith('<html')) return other(text('mediaFile.htmlPage'));
  const valid = utf8ValidUpTo(body, cut);
  if (valid < body.length) {
    const at = start + valid;
    const said = text('media.textEncoding', { offset: count(at), byte: `0x${(b[at] ?? 0).toString(16).toUpperCase().padStart(2, '0')}` });
    return readAs('text/plain', PLAIN_TEXT, text('mediaFile.eightBitText'), { warnings: [finding('document.text-encoding', said)] });
  }
  return readAs('text/plain', PLAIN_TEXT, textDescription(known, 'UTF-8'));
}

const binary = (): Reading => other(text('mediaFile.binary'));
