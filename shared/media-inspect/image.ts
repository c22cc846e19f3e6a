// Images (gateway-spec.md 2.3): JPEG or PNG, 8-bit, RGB or RGBA.
//
// The bit depth and colour model are read here by hand, from the PNG's IHDR chunk and the JPEG's
// SOFn frame header: file-type names the format only, and no library that runs without Node or DOM
// (this folder has neither) reports the depth or the colour model of an image.
//
// Both sit near the start: the PNG's IHDR in its first 33 bytes, the JPEG's SOF after its APP
// segments (Exif, ICC profiles, XMP: up to 64 KB each, sometimes many), so an image is read by a
// head (headBytesFor) and, for a JPEG whose segments run past it, further on (imageBytesWanted). The
// end of the file is checked only when the head holds it all: a large image cut short is not seen.
import { term, text, type RuleText, type TextValue } from '../i18n/text';
import { count, isWhole, latin1, missingRange, u16, u32, type ByteRange, type MediaSample } from './sample';
import { finding, formatWhat, readAs, unreadable, type MediaFinding, type Reading } from './reading';

const PNG = formatWhat('image/png');
const JPEG = formatWhat('image/jpeg');

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** PNG colour types (PNG spec 11.2.2). */
const PNG_COLOUR: Readonly<Record<number, TextValue>> = { 0: term('grayscale'), 2: 'RGB', 3: term('palette'), 4: term('grayscaleAlpha'), 6: 'RGBA' };

export function readPng(sample: MediaSample, animated: boolean): Reading {
  const b = sample.head;
  if (b.length < 33 || !PNG_SIGNATURE.every((x, i) => b[i] === x) || u32(b, 8) !== 13 || latin1(b.subarray(12, 16)) !== 'IHDR') {
    return unreadable(PNG, text('media.noIhdr'));
  }
  const depth = b[24] ?? 0;
  const colourType = b[25] ?? 0;
  const colour = PNG_COLOUR[colourType];
  if (colour === undefined) return unreadable(PNG, text('media.pngColourType', { digits: colourType }));
  if (isWhole(sample)) {
    const end = pngEnd(b);
    if (end !== undefined) return unreadable(PNG, end);
  }
  const description = text(animated ? 'mediaFile.animatedPng' : 'mediaFile.png', { depth, colour });
  const refusals: MediaFinding[] = [];
  if (colourType !== 2 && colourType !== 6) refusals.push(finding('image.color', text('media.imageDepthColour', { description })));
  else if (depth !== 8) refusals.push(finding('image.bit-depth', text('media.imageDepthColour', { description })));
  return readAs('image/png', PNG, description, { refusals });
}

/** Why a whole PNG's chunks do not reach IEND (cut short), or undefined when they do. */
function pngEnd(b: Uint8Array): RuleText | undefined {
  let at = 8;
  while (at + 12 <= b.length) {
    const length = u32(b, at);
    const type = latin1(b.subarray(at + 4, at + 8));
    if (type === 'IEND') return undefined;
    at += 12 + length;
  }
  return text('media.noIend');
}

/** The JPEG frame headers SOF0–SOF15; C4 (DHT), C8 (JPG) and CC (DAC) share the range but are not frames. */
const isFrameHeader = (marker: number): boolean => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

/** Where a JPEG's frame header is in `b`, or where the walk to it stopped: at broken markers, at the image data, or at the end of the bytes (`next`: where the next marker starts). */
type JpegWalk = { kind: 'frame'; at: number } | { kind: 'broken'; at: number } | { kind: 'no-frame' } | { kind: 'cut'; next: number };

function walkJpeg(b: Uint8Array): JpegWalk {
  let at = 2;
  while (at + 4 <= b.length) {
    if (b[at] !== 0xff) return { kind: 'broken', at };
    const marker = b[at + 1] ?? 0;
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    if (marker === 0x01 || marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2; // markers without a length
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return { kind: 'no-frame' }; // scan data or the end came before any frame header
    if (isFrameHeader(marker)) return at + 10 > b.length ? { kind: 'cut', next: at } : { kind: 'frame', at };
    at += 2 + u16(b, at + 2);
  }
  return { kind: 'cut', next: at };
}

export function readJpeg(sample: MediaSample): Reading {
  const b = sample.head;
  const walk = walkJpeg(b);
  switch (walk.kind) {
    case 'broken':
      return unreadable(JPEG, text('media.jpegMarkers', { offset: walk.at }));
    case 'no-frame':
      return unreadable(JPEG, text('media.noSof'));
    case 'cut':
      return unreadable(JPEG, isWhole(sample) ? text('media.noSof') : text('media.jpegHeadCut', { bytes: count(b.length) }));
    case 'frame':
      // Entropy-coded data never holds FF D9 (an FF there is followed by 00 or a restart marker): the first one after the frame header ends the image.
      if (isWhole(sample) && !hasEndOfImage(b, walk.at)) return unreadable(JPEG, text('media.noEoi'));
      return jpegFrame(b[walk.at + 4] ?? 0, b[walk.at + 9] ?? 0);
  }
}

/** A marker segment's most bytes: its marker and a 16-bit length. */
const JPEG_SEGMENT_MAX = 2 + 0xffff;

/**
 * The bytes a JPEG still needs when its head ends in its segments before the frame header: the next
 * segment and the one after it at least, and twice the head at least, so that a long run of large
 * segments takes few requests. Undefined for a PNG (its header is in the first bytes) or a JPEG whose
 * frame header is in the head.
 */
export function imageBytesWanted(sample: MediaSample): ByteRange | undefined {
  const b = sample.head;
  if (isWhole(sample) || b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  const walk = walkJpeg(b);
  if (walk.kind !== 'cut') return undefined;
  return missingRange(sample, b.length, Math.max(walk.next + 2 * JPEG_SEGMENT_MAX, 2 * b.length));
}

function hasEndOfImage(b: Uint8Array, from: number): boolean {
  for (let i = b.indexOf(0xff, from); i >= 0 && i + 1 < b.length; i = b.indexOf(0xff, i + 1)) if (b[i + 1] === 0xd9) return true;
  return false;
}

function jpegFrame(precision: number, components: number): Reading {
  // Three components are YCbCr (JFIF) or RGB (Adobe): both are colour pictures shown as RGB.
  const colour: TextValue = components === 3 ? 'RGB' : components === 1 ? term('grayscale') : components === 4 ? 'CMYK' : text('mediaFile.components', { count: components });
  const description = text('mediaFile.jpeg', { depth: precision, colour });
  const refusals: MediaFinding[] = [];
  if (components !== 3) refusals.push(finding('image.color', text('media.imageDepthColour', { description })));
  else if (precision !== 8) refusals.push(finding('image.bit-depth', text('media.imageDepthColour', { description })));
  return readAs('image/jpeg', JPEG, description, { refusals });
}
