// A media file judged on its bytes against every rule of gateway-spec.md 2.3: the real format from
// the bytes must be one of the message type's and agree with the declared extension and MIME type
// (a renamed executable is not a PDF); images 8-bit RGB or RGBA; videos H.264 with one AAC audio
// stream or none; an Ogg Opus and mono; documents what their type says. A broken rule is a refusal
// that names what the file is and the rule; what the gateway takes but phones play badly (High
// profile with B-frames, a moov box after the media data) is a warning that names the fix.
//
// Pure: no Node, no DOM. The bytes come from the caller (media-fetch.ts reads them by link, the
// sandbox from what it serves): a head first (headBytesFor), then whatever further range the format's
// reader needs, one at a time (moreBytesWanted), so that a large file is read only where it must be.
import { fileTypeFromBuffer, type FileTypeResult } from 'file-type/core';
import { english, text, type RuleText, type TextValue } from '../i18n/text';
import { mediaMimeTypes, MB, type MediaType } from '../messages';
import { errorText, errText, ok, type Result } from '../result';
import { AUDIO_HEAD_BYTES, id3BytesWanted, id3v2End, readAdts, readAmr, readMp3, readOgg } from './audio';
import { contentTypesEntry, DOCUMENT_HEAD_BYTES, documentBytesWanted, isOoxml, readCfb, readOoxml, readPdf, readText, readZip, startsWithByteOrderMark } from './document';
import { imageBytesWanted, readJpeg, readPng } from './image';
import { mp4BytesWanted, readMp4 } from './mp4';
import { extensionsOf, finding, FORMAT_RULE, formatWhat, mimeTypeOfExtension, orList, other, type MediaFinding, type Reading } from './reading';
import { isWhole, sampleProblem, type ByteRange, type MediaSample } from './sample';

export type { ByteRange, MediaSample } from './sample';
export { concatBytes, missingRange, withBytes } from './sample';
export { bytesText, orList } from './reading';

export interface MediaInspection {
  /** What the bytes are, in English words: "8-bit RGBA PNG", "MP4: H.264 High with B-frames, AAC". */
  description: string;
  /** The same as the catalogue's texts and names, for the window to say in the agent's language. */
  descriptionText: TextValue;
  /** The real type from the bytes (one of MEDIA_TABLE's). */
  mimeType: string;
  /** The service accepts the file; the agent confirms with "Send anyway". */
  warnings: MediaFinding[];
}

/**
 * The head of a video: its moov box when it comes first (faststart), else enough to find where the
 * moov box starts (moreBytesWanted). Tracks' sample tables of a 16 MB video take well under 1 MB.
 */
export const VIDEO_HEAD_BYTES = MB;

/** The head an image is read by: its PNG header, or its JPEG segments up to the frame header (more when they run longer). */
export const IMAGE_HEAD_BYTES = 256 * 1024;

const HEAD_BYTES: Readonly<Record<MediaType, number>> = {
  image: IMAGE_HEAD_BYTES,
  video: VIDEO_HEAD_BYTES,
  audio: AUDIO_HEAD_BYTES,
  document: DOCUMENT_HEAD_BYTES,
};

/** The head to read first for a file of this type: the whole file when it is smaller. */
export function headBytesFor(type: MediaType, size: number | undefined): number {
  const most = HEAD_BYTES[type];
  return size !== undefined && Number.isSafeInteger(size) && size >= 0 ? Math.min(size, most) : most;
}

/**
 * After reading `sample`, the further bytes [start, end) the inspection needs, or undefined when the
 * sample is enough; asked again after each range is added (withBytes), until it says no more. By
 * format, from the bytes the sample holds: an MP4's moov box (up to its end; from where the head
 * ends, or after the mdat when it comes last), an MP3's or ADTS's frames after long ID3v2 tags, a
 * JPEG's segments up to its frame header, a PDF's last bytes, an OOXML package's ZIP directory and
 * [Content_Types].xml entry, a compound file whole, plain text's first megabyte.
 */
export function moreBytesWanted(type: MediaType, sample: MediaSample): ByteRange | undefined {
  if (sampleProblem(sample) !== undefined || isWhole(sample)) return undefined;
  switch (type) {
    case 'video':
      return mp4BytesWanted(sample);
    case 'audio':
      return mp4BytesWanted(sample) ?? id3BytesWanted(sample);
    case 'image':
      return imageBytesWanted(sample);
    case 'document':
      return documentBytesWanted(sample);
  }
}

const refuse = (found: MediaFinding): Result<never> => errText('invalid_input', found.text, { detail: found.rule });

/**
 * Judges the bytes against gateway-spec 2.3 for a message of `type`. A refusal is err('invalid_input', message, { detail: rule })
 * where message names what the file is and the rule. `declared` is what the link or server said (an extension like ".png", a
 * Content-Type without parameters); each must agree with the bytes. Never throws.
 */
export async function inspectMedia(type: MediaType, sample: MediaSample, declared: { extension?: string; mimeType?: string }): Promise<Result<MediaInspection>> {
  try {
    return await inspect(type, sample, declared);
  } catch (e) {
    return refuse(finding('file.unreadable', text('media.cannotBeRead', { reason: errorText(e) })));
  }
}

async function inspect(type: MediaType, sample: MediaSample, declared: { extension?: string; mimeType?: string }): Promise<Result<MediaInspection>> {
  const problem = sampleProblem(sample);
  if (problem) return refuse(problem);
  if (sample.size === 0) return refuse(finding('file.empty', text('media.empty')));

  const reading = await read(sample);
  if (reading.kind === 'unreadable') return refuse(finding('file.unreadable', text('media.unreadable', { what: reading.what, why: reading.why })));

  const extension = normalisedExtension(declared.extension);
  const declaredMimeType = normalisedMimeType(declared.mimeType);
  const { mimeType, what } = reading;

  if (mimeType === undefined || !mediaMimeTypes(type).includes(mimeType)) {
    // Name the format the declaration promised when there is one ("not a PDF"), else the type's rule.
    const promised = (extension && mimeTypeOfExtension(extension)) ?? declaredMimeType;
    const said =
      promised !== undefined && promised !== mimeType && mediaMimeTypes(type).includes(promised)
        ? text('media.notFormat', { what, expected: formatWhat(promised) })
        : text(FORMAT_RULE[type], { what });
    return refuse(finding(`${type}.format`, said));
  }
  if (extension !== undefined && !extensionsOf(mimeType).includes(extension)) {
    const named = mimeTypeOfExtension(extension);
    const expected = orList(extensionsOf(mimeType));
    const said =
      named === undefined
        ? text('media.extensionUnknown', { what, extension, expected })
        : text('media.extensionOther', { what, named: formatWhat(named), extension, expected });
    return refuse(finding('file.extension', said));
  }
  if (declaredMimeType !== undefined && declaredMimeType !== mimeType) {
    return refuse(finding('file.mime-type', text('media.mimeType', { what, declared: declaredMimeType, mimeType })));
  }
  const refusal = reading.refusals[0];
  if (refusal) return refuse(refusal);
  return ok({ description: english(reading.description), descriptionText: reading.description, mimeType, warnings: reading.warnings });
}

const normalisedExtension = (extension: string | undefined): string | undefined => {
  const trimmed = extension?.trim().toLowerCase() ?? '';
  if (trimmed === '' || trimmed === '.') return undefined;
  return trimmed.startsWith('.') ? trimmed : `.${trimmed}`;
};

const normalisedMimeType = (mimeType: string | undefined): string | undefined => {
  const bare = mimeType?.split(';')[0]?.trim().toLowerCase() ?? '';
  return bare === '' ? undefined : bare;
};

/** file-type's words for the MP4 family (ISO base media files told apart by their ftyp brand). */
const MP4_FAMILY = new Set(['mp4', 'm4a', 'm4v', 'm4b', 'm4p', 'f4v', 'f4a', 'f4b', 'f4p', '3gp', '3g2']);

/** What the bytes are, by file-type's sniffing and then the format's own reader. */
async function read(sample: MediaSample): Promise<Reading> {
  // A byte order mark first: file-type takes UTF-16's FF FE for an MPEG audio frame header.
  if (startsWithByteOrderMark(sample.head)) {
    const text = readText(sample);
    if (text.kind === 'read' && text.mimeType !== undefined) return text;
  }
  // file-type throwing on odd bytes ends in inspectMedia's refusal "the file cannot be read".
  const kind: FileTypeResult | undefined = (await audioAfterId3v2(sample.head)) ?? (await zipFromEntry(sample, await fileTypeFromBuffer(sample.head)));
  if (kind === undefined) return readText(sample);
  const { ext, mime } = kind;
  if (MP4_FAMILY.has(ext)) return readMp4(sample, ext);
  if (isOoxml(ext)) return readOoxml(sample, ext);
  switch (ext) {
    case 'png':
      return readPng(sample, false);
    case 'apng':
      return readPng(sample, true);
    case 'jpg':
      return readJpeg(sample);
    case 'aac':
      return readAdts(sample);
    case 'mp3':
      return readMp3(sample);
    case 'amr':
      return readAmr(sample);
    case 'ogg':
    case 'opus':
    case 'oga':
    case 'spx':
      return readOgg(sample);
    case 'pdf':
      return readPdf(sample);
    case 'cfb':
      return readCfb(sample);
    case 'zip':
      return readZip(sample);
    default:
      // Text formats file-type names (XML, calendars, contacts, subtitles) are plain text as a document.
      if (mime.startsWith('text/') || mime === 'application/xml') return readText(sample, ext.toUpperCase());
      return other(OTHER_WHAT[ext] ?? text('mediaFile.fileOfTypeExtension', { mimeType: mime, extension: ext }));
  }
}

/**
 * The audio format after ID3v2 tags, told by the bytes that follow them: file-type skips one tag but
 * not a tag's footer, nor a second tag. Undefined when there is no tag, or no MP3 or ADTS after it.
 */
async function audioAfterId3v2(head: Uint8Array): Promise<FileTypeResult | undefined> {
  const end = id3v2End(head);
  if (end === undefined || end === 0 || end >= head.length) return undefined;
  const kind = await fileTypeFromBuffer(head.subarray(end));
  return kind?.ext === 'aac' || kind?.ext === 'mp3' ? kind : undefined;
}

/**
 * A ZIP that file-type took for a plain one, its [Content_Types].xml out of its reach (past the head,
 * or behind entries whose sizes follow their data), is told by that entry, found by the central
 * directory, when the sample holds it (zipBytesWanted asks for it); file-type's answer otherwise.
 */
async function zipFromEntry(sample: MediaSample, kind: FileTypeResult | undefined): Promise<FileTypeResult | undefined> {
  if (kind?.ext !== 'zip') return kind;
  const entry = contentTypesEntry(sample);
  const fromEntry = entry === undefined ? undefined : await fileTypeFromBuffer(entry);
  return fromEntry === undefined || fromEntry.ext === 'zip' ? kind : fromEntry;
}

const image = (format: string, an = false): RuleText => text(an ? 'mediaFile.imageAn' : 'mediaFile.imageA', { format });
const video = (format: string, an = false): RuleText => text(an ? 'mediaFile.videoAn' : 'mediaFile.videoA', { format });
const audio = (format: string): RuleText => text('mediaFile.audio', { format });
const file = (format: string): RuleText => text('mediaFile.fileA', { format });
const archive = (format: string): RuleText => text('mediaFile.archive', { format });
const executable = (format: string, an = false): RuleText => text(an ? 'mediaFile.executableAn' : 'mediaFile.executableA', { format });

/** Formats the gateway does not take, as the refusals name them. */
const OTHER_WHAT: Readonly<Record<string, RuleText>> = {
  elf: executable('ELF', true),
  exe: executable('Windows'),
  macho: executable('Mach-O'),
  gz: archive('gzip'),
  '7z': archive('7-Zip'),
  rar: archive('RAR'),
  tar: archive('tar'),
  gif: image('GIF'),
  webp: image('WebP'),
  bmp: image('BMP'),
  tif: image('TIFF'),
  heic: image('HEIC'),
  avif: image('AVIF', true),
  ico: text('mediaFile.icon'),
  psd: image('Photoshop'),
  mov: text('mediaFile.quickTime'),
  webm: video('WebM'),
  mkv: video('Matroska'),
  avi: video('AVI', true),
  flv: video('Flash'),
  mpg: video('MPEG-1/2', true),
  mts: text('mediaFile.transportStream'),
  ogv: video('Ogg', true),
  ogm: video('Ogg', true),
  wav: file('WAV'),
  flac: audio('FLAC'),
  aif: audio('AIFF'),
  mp2: audio('MPEG Layer 2'),
  mp1: audio('MPEG Layer 1'),
  wma: audio('Windows Media'),
  asf: file('Windows Media'),
  ac3: audio('AC-3'),
  mid: file('MIDI'),
  rtf: text('mediaFile.rtf'),
  odt: text('mediaFile.openDocumentText'),
  ods: text('mediaFile.openDocumentSpreadsheet'),
  odp: text('mediaFile.openDocumentPresentation'),
  epub: text('mediaFile.epub'),
  docm: text('mediaFile.wordMacro', { extension: '.docm' }),
  xlsm: text('mediaFile.excelMacro', { extension: '.xlsm' }),
  pptm: text('mediaFile.powerPointMacro', { extension: '.pptm' }),
  dotx: text('mediaFile.wordTemplate', { extension: '.dotx' }),
  xltx: text('mediaFile.excelTemplate', { extension: '.xltx' }),
  potx: text('mediaFile.powerPointTemplate', { extension: '.potx' }),
  ps: file('PostScript'),
  sqlite: text('mediaFile.sqlite'),
  wasm: text('mediaFile.wasm'),
  swf: file('Flash'),
};
