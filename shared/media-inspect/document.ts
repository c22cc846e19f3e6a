// Documents (gateway-spec.md 2.3): the content must be what the type says: a PDF, an OLE compound
// file holding the Word, Excel or PowerPoint stream (.doc, .xls, .ppt), an OOXML package (.docx,
// .xlsx, .pptx; file-type tells them apart by their content types), or plain text.
import { count, isWhole, latin1, u16le, u32le, type MediaSample } from './sample';
import { other, readAs, unreadable, type Reading } from './reading';

export function readPdf(sample: MediaSample): Reading {
  const version = /^%PDF-(\d\.\d)/.exec(latin1(sample.head.subarray(0, 8)))?.[1];
  // Readers look for the trailer's "%%EOF" in the last 1024 bytes; a file without it was cut short.
  if (isWhole(sample) && !latin1(sample.head.subarray(Math.max(0, sample.size - 1024))).includes('%%EOF')) {
    return unreadable('a PDF', 'it does not end with the %%EOF marker (the file is cut short)');
  }
  return readAs('application/pdf', 'a PDF', version === undefined ? 'PDF' : `PDF ${version}`);
}

// ---------------------------------------------------------------------------------------------
// OLE compound files ([MS-CFB]). file-type says "cfb" for all of them; which program wrote one is
// told by the streams in its root storage ([MS-DOC] "WordDocument", [MS-XLS] "Workbook" (or "Book"
// before Excel 97), [MS-PPT] "PowerPoint Document"). No library that runs without Node lists them,
// so the directory is read here.

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
type CfbDirectory = { ok: true; rootStreams: string[]; cut?: string; broken?: string } | { ok: false; why: string };

/** A stream's name as messages show it: some start with a control character ("\u0005SummaryInformation"). */
const shownName = (name: string): string => [...name].filter((c) => c >= ' ').join('');

function cfbDirectory(b: Uint8Array): CfbDirectory {
  if (b.length < 512) return { ok: false, why: 'it ends inside its 512-byte header' };
  const shift = u16le(b, 0x1e);
  if (u16le(b, 0x1c) !== 0xfffe || (shift !== 9 && shift !== 12)) return { ok: false, why: 'its header is not a compound file header' };
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
    if (difatSectors.has(difat)) return { ok: false, why: "its allocation table's sector chain loops" };
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
  const owners = new Map<number, { walk: number; what: string }>();
  let walks = 0;
  type Walk = { ok: true; sectors: number[] } | { ok: false; problem: 'past-end' | 'uncovered' | 'loops' | 'shared' | 'long'; sector: number; other?: string };
  /** The chain from `start`: `length` sectors of it, or up to its end-of-chain mark (at most `most` sectors) when length is undefined. */
  const walk = (start: number, what: string, length: number | undefined, most = sectorCount): Walk => {
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
  const chainProblem = (what: string, w: Extract<Walk, { ok: false }>): string =>
    w.problem === 'loops' ? `its ${what}'s sector chain loops` : `its ${what} shares sector ${w.sector} with its ${w.other ?? 'other data'}`;

  const entriesPerSector = sectorSize / 128;
  const directory = walk(u32le(b, 0x30), 'directory', undefined, Math.ceil(MAX_DIRECTORY_ENTRIES / entriesPerSector));
  if (!directory.ok) {
    switch (directory.problem) {
      case 'past-end':
        return { ok: false, why: `its directory points past the end of the file (sector ${directory.sector})` };
      case 'uncovered':
        return { ok: false, why: 'its allocation table does not cover its directory' };
      case 'long':
        return { ok: false, why: `its directory holds more than ${count(MAX_DIRECTORY_ENTRIES)} entries` };
      default:
        return { ok: false, why: chainProblem('directory', directory) };
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
  if (root?.type !== 5) return { ok: false, why: 'its directory has no root entry' };

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
    if (entry === undefined || seen.has(id) || id === 0) return { ok: false, why: 'its directory tree is broken' };
    seen.add(id);
    if (entry.type === 2) {
      streams.push(id);
      if (inRoot) rootStreams.push(entry.name);
    }
    if (entry.type === 1) pending.push({ id: entry.child, inRoot: false });
    pending.push({ id: entry.left, inRoot }, { id: entry.right, inRoot });
  }

  /** Why the chain of `size` bytes from `start` cannot be read, or undefined when it lies whole within the file (its last sector need not be padded out). */
  const streamProblem = (start: number, size: number, what: string): { cut?: string; broken?: string } | undefined => {
    const length = Math.ceil(size / sectorSize);
    const chain = walk(start, what, length);
    if (!chain.ok) return chain.problem === 'past-end' || chain.problem === 'uncovered' ? { cut: what } : { broken: chainProblem(what, chain) };
    const last = chain.sectors[length - 1];
    if (last !== undefined && offsetOf(last) + (size - (length - 1) * sectorSize) > b.length) return { cut: what };
    return undefined;
  };
  // Streams below the cutoff live in the mini stream, the root entry's chain: walked once for all of them.
  const cutoff = u32le(b, 0x38);
  let miniStream: { cut?: string; broken?: string } | undefined | 'unread' = 'unread';
  // In the directory's order, so that a broken file is told by the same stream whatever its tree.
  for (const entry of streams.sort((x, y) => x - y).map((id) => entries[id]!)) {
    const name = `${shownName(entry.name)} stream`;
    let problem: { cut?: string; broken?: string } | undefined;
    if (entry.size < cutoff) {
      if (miniStream === 'unread') miniStream = streamProblem(root.start, root.size, 'mini stream');
      problem = miniStream?.cut === undefined ? miniStream : { cut: name };
    } else {
      problem = streamProblem(entry.start, entry.size, name);
    }
    if (problem !== undefined) return { ok: true, rootStreams, ...problem };
  }
  return { ok: true, rootStreams };
}

const OFFICE_STREAMS: readonly { streams: readonly string[]; mimeType: string; what: string; description: string }[] = [
  { streams: ['WordDocument'], mimeType: 'application/msword', what: 'a Word document (.doc)', description: 'Word 97–2003 document (.doc)' },
  { streams: ['Workbook', 'Book'], mimeType: 'application/vnd.ms-excel', what: 'an Excel workbook (.xls)', description: 'Excel 97–2003 workbook (.xls)' },
  { streams: ['PowerPoint Document'], mimeType: 'application/vnd.ms-powerpoint', what: 'a PowerPoint presentation (.ppt)', description: 'PowerPoint 97–2003 presentation (.ppt)' },
];

export function readCfb(sample: MediaSample): Reading {
  if (!isWhole(sample)) return unreadable('an OLE compound file', 'only part of it was read');
  const directory = cfbDirectory(sample.head);
  if (!directory.ok) return unreadable('an OLE compound file', directory.why);
  const office = OFFICE_STREAMS.find((o) => directory.rootStreams.some((name) => o.streams.includes(name)));
  const what = office?.what ?? 'an OLE compound file';
  if (directory.broken !== undefined) return unreadable(what, directory.broken);
  if (directory.cut !== undefined) return unreadable(what, `its ${directory.cut} lies past the end of the file (the file is cut short)`);
  if (office !== undefined) return readAs(office.mimeType, office.what, office.description);
  const names = directory.rootStreams.map((name) => `"${shownName(name)}"`).join(', ');
  return other('an OLE compound file without a Word, Excel or PowerPoint stream', `OLE compound file (streams: ${names || 'none'})`);
}

// ---------------------------------------------------------------------------------------------
// OOXML packages (ZIP)

const OOXML: Readonly<Record<string, { mimeType: string; what: string }>> = {
  docx: { mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', what: 'a Word document (.docx)' },
  xlsx: { mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', what: 'an Excel workbook (.xlsx)' },
  pptx: { mimeType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation', what: 'a PowerPoint presentation (.pptx)' },
};

export const isOoxml = (ext: string): boolean => ext in OOXML;

/** A ZIP ends with its end-of-central-directory record: 22 bytes and a comment of up to 65,535 bytes (APPNOTE.TXT 4.3.16). */
function endsWithZipDirectory(b: Uint8Array): boolean {
  for (let at = b.length - 22; at >= Math.max(0, b.length - 65_557); at--) {
    if (b[at] === 0x50 && b[at + 1] === 0x4b && b[at + 2] === 0x05 && b[at + 3] === 0x06 && at + 22 + u16le(b, at + 20) === b.length) return true;
  }
  return false;
}

export function readOoxml(sample: MediaSample, ext: string): Reading {
  const kind = OOXML[ext];
  if (kind === undefined) return other(`an ${ext.toUpperCase()} file`);
  if (isWhole(sample) && !endsWithZipDirectory(sample.head)) return unreadable(kind.what, 'its ZIP directory is missing (the file is cut short)');
  return readAs(kind.mimeType, kind.what, kind.what.replace(/^(a|an) /, '').replace(/^./, (c) => c.toUpperCase()));
}

// ---------------------------------------------------------------------------------------------
// Plain text: what file-type does not recognise, when it holds text and no binary data.
//
// A .txt goes out as text/plain without a charset. The gateway takes any text, but phones read a text
// without a byte order mark as UTF-8: 8-bit text (Latin-1, Windows-1252) shows its accented letters as
// garbage, so it is a warning with the fix; UTF-16 carries its byte order mark and reads right. NUL and
// other control bytes are binary data, not text; an HTML page is a web page (often an error page served
// instead of the file), not a text document: both are refused.

const TEXT_FIX = 'phones read plain text as UTF-8 and may show its accented letters wrongly; save it as UTF-8';

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

export function readText(sample: MediaSample, known?: string): Reading {
  const b = sample.head;
  const cut = !isWhole(sample);
  if ((b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff)) {
    if (!utf16Text(b.subarray(2), b[0] === 0xff, cut)) return binary();
    return readAs('text/plain', 'plain text', `${known ?? 'plain'} text (UTF-16)`);
  }
  const start = b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
  const body = b.subarray(start);
  if (body.some(isControl)) return binary();
  const opening = latin1(body.subarray(0, 64)).trimStart().toLowerCase();
  if (opening.startsWith('<!doctype html') || opening.startsWith('<html')) return other('an HTML page', 'HTML page');
  const valid = utf8ValidUpTo(body, cut);
  if (valid < body.length) {
    const at = start + valid;
    const message = `text that is not UTF-8 (byte ${count(at)} is 0x${(b[at] ?? 0).toString(16).toUpperCase().padStart(2, '0')}): ${TEXT_FIX}`;
    return readAs('text/plain', 'plain text', 'text in an 8-bit encoding, not UTF-8', { warnings: [{ rule: 'document.text-encoding', message }] });
  }
  return readAs('text/plain', 'plain text', `${known ?? 'plain'} text (UTF-8)`);
}

const binary = (): Reading => other('binary data of no known type', 'binary data');
