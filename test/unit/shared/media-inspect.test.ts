// shared/media-inspect: every media rule of gateway-spec.md 2.3 judged on real files (the corpus made
// with Debian's tools), reading by a head and the ranges each format needs (an MP4's moov box, a
// PDF's end, a ZIP's directory, a JPEG's segments), the declared extension and MIME type against the
// bytes, and bytes that are cut short, broken, crafted (sample tables that claim millions of samples)
// or no format at all.
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { headBytesFor, IMAGE_HEAD_BYTES, inspectMedia, missingRange, moreBytesWanted, VIDEO_HEAD_BYTES, withBytes, type ByteRange, type MediaInspection, type MediaSample } from '../../../shared/media-inspect';
import { MAX_SAMPLES } from '../../../shared/media-inspect/mp4-tables';
import { MB, MEDIA_TABLE, MEDIA_TYPES, type MediaType } from '../../../shared/messages';
import type { Result } from '../../../shared/result';
import { compoundFile } from '../../fixtures/cfb-writer';
import { jpegWithComments, mp3WithTag, mp4WithBigMoov, pdfWithStream, utf8Text } from '../../fixtures/big-media';
import { mediaCorpus, withAudioObjectType, withBoxField, type CorpusFile, type MediaCorpus } from '../../fixtures/media-corpus';
import { ooxmlPackage } from '../../fixtures/zip-writer';

let corpus: MediaCorpus;
const contents = new Map<string, Uint8Array>();

beforeAll(async () => {
  corpus = await mediaCorpus();
  for (const f of corpus.files) contents.set(f.name, new Uint8Array(await readFile(f.path)));
}, 120_000);

afterEach(() => {
  vi.restoreAllMocks();
});

function bytesOf(name: string): Uint8Array {
  const found = contents.get(name);
  if (found === undefined) throw new Error(`no corpus file ${name}`);
  return found;
}
const whole = (bytes: Uint8Array): MediaSample => ({ head: bytes, size: bytes.length });
const declaredBy = (f: CorpusFile) => ({ extension: extname(f.name), mimeType: f.mimeType });
const inspectFile = (f: CorpusFile, declared: { extension?: string; mimeType?: string } = declaredBy(f)) => inspectMedia(f.type, whole(bytesOf(f.name)), declared);

/** The verdict and rule a result gives, in the corpus's words. */
function verdictOf(result: Result<MediaInspection>): { verdict: CorpusFile['verdict']; rule?: string } {
  if (!result.ok) return { verdict: 'refuse', rule: result.error.detail };
  const [first] = result.value.warnings;
  return first === undefined ? { verdict: 'pass' } : { verdict: 'warn', rule: first.rule };
}

const refusal = (result: Result<MediaInspection>): { rule?: string; message: string } => {
  if (result.ok) throw new Error(`expected a refusal, got "${result.value.description}"`);
  expect(result.error.code).toBe('invalid_input');
  return { rule: result.error.detail, message: result.error.message };
};
const accepted = (result: Result<MediaInspection>): MediaInspection => {
  if (!result.ok) throw new Error(`expected the file to be accepted, got "${result.error.message}"`);
  return result.value;
};

/** A top-level box of an MP4: where it starts and its size, found by walking from the start. */
function topLevelBox(bytes: Uint8Array, type: string): { start: number; size: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at + 8 <= bytes.length; at += view.getUint32(at)) {
    if (String.fromCharCode(...bytes.subarray(at + 4, at + 8)) === type) return { start: at, size: view.getUint32(at) };
    if (view.getUint32(at) < 8) break;
  }
  throw new Error(`no top-level ${type} box`);
}

describe('the corpus: every file gets the verdict and rule of gateway-spec.md 2.3', () => {
  it('declared by its name and MIME type', async () => {
    for (const f of corpus.files) {
      const result = await inspectFile(f);
      const what = `${f.name}: ${result.ok ? result.value.description : result.error.message}`;
      expect(verdictOf(result), what).toEqual({ verdict: f.verdict, ...(f.rule === undefined ? {} : { rule: f.rule }) });
      if (result.ok) {
        expect(result.value.mimeType, what).toBe(f.mimeType);
        expect(result.value.warnings.map((w) => w.rule), what).toEqual(f.verdict === 'warn' ? [f.rule] : []);
      } else {
        expect(result.error.message, what).not.toBe('');
      }
    }
  });

  it('declared by nothing: the same, except that a renamed file of a good format passes as what it is', async () => {
    for (const f of corpus.files) {
      const result = await inspectFile(f, {});
      if (f.rule === 'file.extension') {
        const inspection = accepted(result);
        expect(inspection.mimeType, f.name).not.toBe(f.mimeType);
        continue;
      }
      expect(verdictOf(result), f.name).toEqual({ verdict: f.verdict, ...(f.rule === undefined ? {} : { rule: f.rule }) });
    }
  });

  it('has, for every rule, a real file that breaks it and a file of the same type that passes', () => {
    const rules = [
      'image.format', 'image.bit-depth', 'image.color',
      'video.format', 'video.codec', 'video.audio-codec', 'video.audio-streams', 'video.b-frames', 'video.moov-after-mdat',
      'audio.format', 'audio.ogg-codec', 'audio.ogg-channels',
      'document.format', 'document.text-encoding', 'file.extension', 'file.unreadable',
    ];
    for (const rule of rules) {
      const breaking = corpus.files.filter((f) => f.rule === rule);
      expect(breaking.length, rule).toBeGreaterThan(0);
      for (const f of breaking) expect(corpus.files.some((p) => p.type === f.type && p.verdict === 'pass'), rule).toBe(true);
    }
    for (const type of MEDIA_TYPES) {
      // Every format of the table has a file that passes.
      const passing = new Set(corpus.files.filter((f) => f.type === type && f.verdict === 'pass').map((f) => f.mimeType));
      expect([...passing].sort(), type).toEqual(MEDIA_TABLE[type].formats.map((f) => f.mimeType).sort());
    }
    expect(() => corpus.file('no-such-file.png')).toThrow(/no file named/);
  });

  it('a refusal names what the file is and the rule', async () => {
    const messages: Record<string, string> = {
      'rgb16.png': '16-bit RGB PNG: images must be 8-bit RGB or RGBA',
      'gray.png': '8-bit grayscale PNG: images must be 8-bit RGB or RGBA',
      'palette.png': '8-bit palette PNG: images must be 8-bit RGB or RGBA',
      'cmyk.jpg': '8-bit CMYK JPEG: images must be 8-bit RGB or RGBA',
      'gray.jpg': '8-bit grayscale JPEG: images must be 8-bit RGB or RGBA',
      'gif-as.png': 'the file is a GIF image, not a PNG image',
      'vp9.mp4': 'VP9 video in MP4: videos must be H.264 with AAC audio',
      'mp3-audio.mp4': 'MP3 audio in MP4: videos must be H.264 with AAC audio',
      'mp3-object-type.mp4': 'MP3 audio in MP4: videos must be H.264 with AAC audio',
      'als-object-type.mp4': 'MPEG-4 audio of object type 36 in MP4: videos must be H.264 with AAC audio',
      'two-audio.mp4': 'MP4 with 2 audio streams: videos may have one audio stream or none',
      'audio-only.mp4': 'the file is MP4 audio without video (M4A), not an MP4 video',
      'opus-stereo.ogg': 'Ogg with 2 channels (stereo Opus): Ogg audio must be Opus and mono',
      'vorbis.ogg': 'Vorbis audio in Ogg: Ogg audio must be Opus and mono',
      'mp3-as.aac': 'the file is MP3 audio, not AAC audio (ADTS): its extension (.aac) must match its content (.mp3)',
      'wav-as.mp3': 'the file is a WAV file, not MP3 audio',
      'elf-as.pdf': 'the file is an ELF executable, not a PDF',
      'doc-as.xls': 'the file is a Word document (.doc), not an Excel workbook (.xls): its extension (.xls) must match its content (.doc)',
      'binary.txt': 'the file is binary data of no known type, not plain text',
      'nul.txt': 'the file is binary data of no known type, not plain text',
      'page.txt': 'the file is an HTML page, not plain text',
      'looping-fat.doc': "the file looks like a Word document (.doc) but cannot be read: its WordDocument stream's sector chain loops",
      'other-cfb.doc': 'the file is an OLE compound file without a Word, Excel or PowerPoint stream, not a Word document (.doc)',
      'zip-as.docx': 'the file is a ZIP archive, not a Word document (.docx)',
    };
    for (const [name, message] of Object.entries(messages)) expect(refusal(await inspectFile(corpus.file(name))).message, name).toBe(message);
    expect(refusal(await inspectFile(corpus.file('huge-stsz.mp4'))).message).toMatch(
      /^the file looks like an MP4 file but cannot be read: its sample table claims 10,000,000 samples of 1,000 bytes in a \d+ KB file$/,
    );
    expect(refusal(await inspectFile(corpus.file('overlong-stco.mp4'))).message).toMatch(
      /^the file looks like an MP4 file but cannot be read: its stco table claims 1,000,000 entries of 4 bytes, more than its [\d,]+-byte box holds$/,
    );
    for (const name of ['truncated.png', 'truncated.mp4', 'truncated.pdf']) {
      expect(refusal(await inspectFile(corpus.file(name))).message, name).toMatch(/^the file looks like .+ but cannot be read: .*cut short/);
    }
  });

  it('a warning names the fix', async () => {
    for (const name of ['high-bframes.mp4', 'fragmented-bframes.mp4']) {
      const [bFrames] = accepted(await inspectFile(corpus.file(name))).warnings;
      expect(bFrames?.message, name).toMatch(/^H\.264 High profile with B-frames does not play on Android: .*Main or Baseline profile without B-frames.*-bf 0/);
    }
    const [moov] = accepted(await inspectFile(corpus.file('moov-at-end.mp4'))).warnings;
    expect(moov?.message).toMatch(/moov box after the media data.*-movflags \+faststart/);
  });

  it('describes what the bytes are', async () => {
    const descriptions: Record<string, string> = {
      'rgb.png': '8-bit RGB PNG',
      'rgba.png': '8-bit RGBA PNG',
      'rgb.jpg': '8-bit RGB JPEG',
      'progressive.jpg': '8-bit RGB JPEG',
      'baseline.mp4': 'MP4: H.264 Baseline, AAC',
      'h264-aac.3gp': '3GP: H.264 Baseline, AAC',
      'main-nobframes.mp4': 'MP4: H.264 Main, AAC',
      // B-frames are seen in Main too; only High with B-frames is a warning (gateway-spec.md 2.3).
      'main-bframes.mp4': 'MP4: H.264 Main with B-frames, AAC',
      'high-nobframes.mp4': 'MP4: H.264 High, AAC',
      'high-bframes.mp4': 'MP4: H.264 High with B-frames, AAC',
      'video-only.mp4': 'MP4: H.264 Baseline, no audio',
      // Fragmented: the composition offsets come from the moof boxes' track runs.
      'fragmented-bframes.mp4': 'MP4: H.264 High with B-frames, AAC',
      'fragmented-nobframes.mp4': 'MP4: H.264 High, AAC',
      'audio.aac': 'AAC (ADTS), 44.1 kHz, mono',
      'id3.aac': 'AAC (ADTS), 44.1 kHz, mono',
      'audio.mp3': 'MP3, 44.1 kHz, mono, 64 kbit/s',
      'audio.m4a': 'M4A: AAC, 44.1 kHz',
      'isom-audio.m4a': 'M4A: AAC, 44.1 kHz',
      'opus-mono.ogg': 'Ogg Opus, 48 kHz, mono',
      'doc.pdf': 'PDF 1.4',
      'doc.doc': 'Word 97–2003 document (.doc)',
      'sheet.xls': 'Excel 97–2003 workbook (.xls)',
      'slides.ppt': 'PowerPoint 97–2003 presentation (.ppt)',
      'sheet.xlsx': 'Excel workbook (.xlsx)',
      'plain.txt': 'plain text (UTF-8)',
      'ascii.txt': 'plain text (UTF-8)',
      'bom.txt': 'plain text (UTF-8)',
    };
    for (const [name, description] of Object.entries(descriptions)) expect(accepted(await inspectFile(corpus.file(name))).description, name).toBe(description);
    expect(accepted(await inspectFile(corpus.file('audio.amr'))).description).toMatch(/^AMR-NB, 8 kHz, mono, 1(\.0)? s$/);
  });
});

describe('reading a video by its head, and its tail when the moov box comes last', () => {
  it("asks for a head by type: what each format's first question needs, the whole file when it is smaller", () => {
    expect(headBytesFor('image', undefined)).toBe(IMAGE_HEAD_BYTES);
    expect(headBytesFor('image', 1234)).toBe(1234);
    expect(headBytesFor('audio', 20 * MB)).toBe(256 * 1024);
    expect(headBytesFor('document', 30 * MB)).toBe(64 * 1024);
    expect(headBytesFor('video', 16 * MB)).toBe(VIDEO_HEAD_BYTES);
    expect(headBytesFor('video', undefined)).toBe(VIDEO_HEAD_BYTES);
    expect(headBytesFor('video', 5000)).toBe(5000);
    for (const type of MEDIA_TYPES) expect(headBytesFor(type, undefined), type).toBeLessThan(MEDIA_TABLE[type].maxBytes);
  });

  it('finds the moov box after the mdat from a head, and judges head + tail as the whole file', async () => {
    const bytes = bytesOf('moov-at-end.mp4');
    const moov = topLevelBox(bytes, 'moov');
    const mdat = topLevelBox(bytes, 'mdat');
    expect(mdat.start).toBeLessThan(moov.start);
    const wholeVerdict = accepted(await inspectMedia('video', whole(bytes), {}));

    for (const headLength of [mdat.start + 8, 4096, moov.start - 1]) {
      const head = bytes.subarray(0, headLength);
      expect(moreBytesWanted('video', { head, size: bytes.length }), `head ${headLength}`).toEqual({ start: moov.start, end: bytes.length });
      const sample = { head, tail: bytes.subarray(moov.start), size: bytes.length };
      expect(moreBytesWanted('video', sample)).toBeUndefined();
      expect(accepted(await inspectMedia('video', sample, { extension: '.mp4', mimeType: 'video/mp4' }))).toEqual(wholeVerdict);
    }
    expect(wholeVerdict.warnings.map((w) => w.rule)).toEqual(['video.moov-after-mdat']);
  });

  it('asks from the mdat when the head ends inside the mdat header, and from the moov when the head ends inside it', async () => {
    const bytes = bytesOf('moov-at-end.mp4');
    const mdat = topLevelBox(bytes, 'mdat');
    const cut = bytes.subarray(0, mdat.start + 4);
    // The bytes of the mdat header the head holds are not asked for again.
    expect(moreBytesWanted('video', { head: cut, size: bytes.length })).toEqual({ start: cut.length, end: bytes.length });
    expect(verdictOf(await inspectMedia('video', { head: cut, tail: bytes.subarray(mdat.start), size: bytes.length }, {}))).toEqual({ verdict: 'warn', rule: 'video.moov-after-mdat' });

    const faststart = bytesOf('baseline.mp4');
    const moov = topLevelBox(faststart, 'moov');
    expect(moov.start).toBeLessThan(topLevelBox(faststart, 'mdat').start);
    const inside = faststart.subarray(0, moov.start + 100);
    // Up to the end of the moov box, not of the file: the mdat after it is not needed.
    expect(moreBytesWanted('video', { head: inside, size: faststart.length })).toEqual({ start: inside.length, end: moov.start + moov.size });
    // The tail overlaps the head: the bytes in both are read once.
    const overlapping = { head: inside, tail: faststart.subarray(moov.start), size: faststart.length };
    expect(accepted(await inspectMedia('video', overlapping, {})).description).toBe('MP4: H.264 Baseline, AAC');
  });

  it('needs nothing more when the head holds the moov box, nor for whole files, other formats or other types', async () => {
    const faststart = bytesOf('baseline.mp4');
    const moov = topLevelBox(faststart, 'moov');
    const head = faststart.subarray(0, moov.start + moov.size);
    expect(moreBytesWanted('video', { head, size: faststart.length })).toBeUndefined();
    expect(verdictOf(await inspectMedia('video', { head, size: faststart.length }, { extension: '.mp4' }))).toEqual({ verdict: 'pass' });

    const atEnd = bytesOf('moov-at-end.mp4');
    expect(moreBytesWanted('video', whole(atEnd))).toBeUndefined();
    expect(moreBytesWanted('image', { head: atEnd.subarray(0, 4096), size: atEnd.length })).toBeUndefined();
    expect(moreBytesWanted('document', { head: atEnd.subarray(0, 4096), size: atEnd.length })).toBeUndefined();
    const m4a = bytesOf('audio.m4a');
    expect(moreBytesWanted('audio', { head: m4a.subarray(0, 1000), size: m4a.length })).toEqual({ start: topLevelBox(m4a, 'moov').start, end: m4a.length });
    const png = bytesOf('rgb.png');
    expect(moreBytesWanted('video', { head: png.subarray(0, 40), size: png.length })).toBeUndefined();
  });

  it('refuses a head without its moov box, naming it, and asks again when the tail does not reach it', async () => {
    const bytes = bytesOf('moov-at-end.mp4');
    const moov = topLevelBox(bytes, 'moov');
    const headOnly = { head: bytes.subarray(0, 4096), size: bytes.length };
    expect(refusal(await inspectMedia('video', headOnly, {}))).toEqual({ rule: 'file.unreadable', message: 'the file looks like an MP4 file but cannot be read: the bytes read do not hold its moov box' });
    const shortTail = { ...headOnly, tail: bytes.subarray(moov.start + 10) };
    expect(moreBytesWanted('video', shortTail)).toEqual({ start: moov.start, end: moov.start + 10 });
    expect(refusal(await inspectMedia('video', shortTail, {})).rule).toBe('file.unreadable');
  });
});

describe('reading only what the format needs, as a check by ranges does', () => {
  /** The sample a check reads of `bytes` where the server allows ranges: the head, then each range moreBytesWanted names in turn. */
  function readByRanges(type: MediaType, bytes: Uint8Array): { sample: MediaSample; ranges: ByteRange[]; read: number } {
    let sample: MediaSample = { head: bytes.subarray(0, headBytesFor(type, bytes.length)), size: bytes.length };
    const ranges: ByteRange[] = [{ start: 0, end: sample.head.length }];
    for (let wanted = moreBytesWanted(type, sample); wanted !== undefined; wanted = moreBytesWanted(type, sample)) {
      if (ranges.length > 12) throw new Error(`${type}: more than 12 ranges asked for`);
      ranges.push(wanted);
      sample = withBytes(sample, wanted.start, bytes.subarray(wanted.start, wanted.end));
    }
    return { sample, ranges, read: ranges.reduce((n, r) => n + r.end - r.start, 0) };
  }
  /** Bytes that do not compress: a picture's worth of noise. */
  const noise = (length: number): Uint8Array => {
    const bytes = new Uint8Array(length);
    for (let i = 0, x = 0x1234567; i < length; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      bytes[i] = x >>> 24;
    }
    return bytes;
  };
  const docx = { extension: '.docx', mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' };

  it('adds the bytes read where they belong: to the head, the tail, a part between; asks only for what it lacks', () => {
    const bytes = Uint8Array.from({ length: 100 }, (_, i) => i);
    let sample: MediaSample = withBytes({ head: bytes.subarray(0, 10), size: 100 }, 90, bytes.subarray(90));
    expect(sample).toEqual({ head: bytes.subarray(0, 10), tail: bytes.subarray(90), size: 100 });
    sample = withBytes(sample, 40, bytes.subarray(40, 50));
    expect(sample.parts).toEqual([{ start: 40, bytes: bytes.subarray(40, 50) }]);
    expect(missingRange(sample, 0, 100)).toEqual({ start: 10, end: 90 });
    expect(missingRange(sample, 40, 95)).toEqual({ start: 50, end: 90 });
    expect(missingRange(sample, 92, 200)).toBeUndefined();
    // The head reaches the part, which joins it; then the tail, and the sample is the whole file.
    sample = withBytes(sample, 5, bytes.subarray(5, 40));
    expect(sample).toEqual({ head: bytes.subarray(0, 50), tail: bytes.subarray(90), size: 100 });
    expect(withBytes(sample, 50, bytes.subarray(50, 95))).toEqual({ head: bytes, size: 100 });
  });

  it('a PDF: its head and its last 1024 bytes, where "%%EOF" must be', async () => {
    const pdf = pdfWithStream(bytesOf('doc.pdf'), 3 * MB);
    const { sample, ranges } = readByRanges('document', pdf);
    expect(ranges).toEqual([{ start: 0, end: 64 * 1024 }, { start: pdf.length - 1024, end: pdf.length }]);
    expect(accepted(await inspectMedia('document', sample, { extension: '.pdf' })).description).toBe('PDF 1.4');
    expect(accepted(await inspectMedia('document', whole(pdf), { extension: '.pdf' })).description).toBe('PDF 1.4');
    const cut = pdf.subarray(0, pdf.length - 200);
    expect(refusal(await inspectMedia('document', readByRanges('document', cut).sample, {})).message).toBe(
      'the file looks like a PDF but cannot be read: it does not end with the %%EOF marker (the file is cut short)',
    );
  });

  it('an OOXML package: the end of its ZIP, its directory, and [Content_Types].xml wherever it sits', async () => {
    const media = [{ name: 'word/media/image1.bin', data: noise(400_000) }, { name: 'word/media/image2.bin', data: noise(400_000) }];
    for (const zip of [{}, { deflate: true, dataDescriptors: true }]) {
      for (const [contentTypes, requests] of [['first', 2], ['last', 2], [{ afterMedia: 1 }, 3]] as const) {
        const what = `${JSON.stringify(zip)} [Content_Types].xml ${JSON.stringify(contentTypes)}`;
        const bytes = ooxmlPackage('docx', { ...zip, media, contentTypes });
        const { sample, ranges, read } = readByRanges('document', bytes);
        expect(ranges, what).toHaveLength(requests);
        expect(read, what).toBeLessThan(200 * 1024);
        expect(accepted(await inspectMedia('document', sample, docx)).description, what).toBe('Word document (.docx)');
        expect(accepted(await inspectMedia('document', whole(bytes), docx)).description, what).toBe('Word document (.docx)');
      }
    }
    // A directory longer than the tail is asked for in a range of its own; then the entry before it.
    const many = Array.from({ length: 2000 }, (_, i) => ({ name: `word/media/picture-number-${i}.bin`, data: noise(300) }));
    const crowded = ooxmlPackage('docx', { media: [...many, ...media], contentTypes: 'last' });
    const read = readByRanges('document', crowded);
    expect(read.ranges).toHaveLength(4);
    expect(read.read).toBeLessThan(400 * 1024);
    expect(accepted(await inspectMedia('document', read.sample, docx)).description).toBe('Word document (.docx)');
    // A ZIP without content types is a ZIP; a package cut short misses its directory.
    const zip = ooxmlPackage('docx', { media }).slice();
    zip.set(Buffer.from('[Content_Typez].xml'), 30);
    zip.set(Buffer.from('[Content_Typez].xml'), Buffer.from(zip).lastIndexOf('[Content_Types].xml'));
    expect(refusal(await inspectMedia('document', readByRanges('document', zip).sample, docx)).message).toBe('the file is a ZIP archive, not a Word document (.docx)');
    const cut = ooxmlPackage('docx', { media }).subarray(0, -8);
    expect(refusal(await inspectMedia('document', readByRanges('document', cut).sample, docx)).message).toBe(
      'the file looks like a Word document (.docx) but cannot be read: its ZIP directory is missing (the file is cut short)',
    );
  });

  it('plain text: its first megabyte; what lies past it is not read', async () => {
    const text = utf8Text(3 * MB);
    const { sample, ranges } = readByRanges('document', text);
    expect(ranges).toEqual([{ start: 0, end: 64 * 1024 }, { start: 64 * 1024, end: MB }]);
    expect(accepted(await inspectMedia('document', sample, { extension: '.txt' })).description).toBe('plain text (UTF-8)');
    const latin1 = (at: number) => {
      const bytes = text.slice();
      bytes[at] = 0xe9;
      return readByRanges('document', bytes).sample;
    };
    expect(accepted(await inspectMedia('document', latin1(MB / 2), { extension: '.txt' })).warnings.map((w) => w.rule)).toEqual(['document.text-encoding']);
    expect(accepted(await inspectMedia('document', latin1(2 * MB), { extension: '.txt' })).warnings).toEqual([]);
  });

  it('a compound file: all of it, its sectors may lie anywhere', async () => {
    const doc = compoundFile([{ name: 'WordDocument', stream: noise(200_000) }]);
    const { sample, ranges } = readByRanges('document', doc);
    expect(ranges).toEqual([{ start: 0, end: 64 * 1024 }, { start: 64 * 1024, end: doc.length }]);
    expect(accepted(await inspectMedia('document', sample, { extension: '.doc' })).description).toBe('Word 97–2003 document (.doc)');
    expect(refusal(await inspectMedia('document', { head: doc.subarray(0, 64 * 1024), size: doc.length }, {})).message).toBe(
      'the file looks like an OLE compound file but cannot be read: only part of it was read',
    );
  });

  it('a JPEG: up to its frame header, however many segments come first; the rest is not read', async () => {
    const jpeg = jpegWithComments(bytesOf('rgb.jpg'), 6, 40);
    expect(jpeg.length).toBeGreaterThan(2.5 * MB);
    const { sample, ranges, read } = readByRanges('image', jpeg);
    expect(ranges.length).toBeGreaterThan(1);
    expect(read).toBeLessThan(MB);
    expect(accepted(await inspectMedia('image', sample, { extension: '.jpg' })).description).toBe('8-bit RGB JPEG');
    expect(accepted(await inspectMedia('image', whole(jpeg), { extension: '.jpg' })).description).toBe('8-bit RGB JPEG');
    expect(refusal(await inspectMedia('image', { head: jpeg.subarray(0, IMAGE_HEAD_BYTES), size: jpeg.length }, {})).message).toBe(
      'the file looks like a JPEG image but cannot be read: the 262,144 bytes read end before its frame header (SOF)',
    );
    const png = bytesOf('rgb.png');
    expect(moreBytesWanted('image', { head: png.subarray(0, 40), size: png.length })).toBeUndefined();
  });

  it('a faststart MP4 whose moov box is longer than the head: up to the end of the moov box, not of the file', async () => {
    const mp4 = mp4WithBigMoov(bytesOf('baseline.mp4'), 1.5 * MB);
    const moov = topLevelBox(mp4, 'moov');
    expect(moov.start + moov.size).toBeGreaterThan(VIDEO_HEAD_BYTES);
    const { sample, ranges } = readByRanges('video', mp4);
    expect(ranges).toEqual([{ start: 0, end: VIDEO_HEAD_BYTES }, { start: VIDEO_HEAD_BYTES, end: moov.start + moov.size }]);
    expect(moov.start + moov.size).toBeLessThan(mp4.length);
    expect(accepted(await inspectMedia('video', sample, { extension: '.mp4' })).description).toBe('MP4: H.264 Baseline, AAC');
    expect(accepted(await inspectMedia('video', whole(mp4), { extension: '.mp4' })).description).toBe('MP4: H.264 Baseline, AAC');
  });

  it('audio: ADTS, MP3 and AMR by their head, the same verdict as the whole file; an MP3 behind a long tag past it', async () => {
    const repeated = (prefix: Uint8Array, body: Uint8Array, times: number) => new Uint8Array(Buffer.concat([prefix, ...Array.from({ length: times }, () => body)]));
    const mp3 = bytesOf('audio.mp3');
    const tagEnd = 10 + mp3.subarray(6, 10).reduce((n, x) => n * 128 + x, 0);
    const cases: [string, Uint8Array, string][] = [
      ['.aac', repeated(new Uint8Array(0), bytesOf('audio.aac'), 100), 'AAC (ADTS), 44.1 kHz, mono'],
      ['.mp3', repeated(mp3.subarray(0, tagEnd), mp3.subarray(tagEnd), 100), 'MP3, 44.1 kHz, mono, 64 kbit/s'],
      ['.amr', repeated(bytesOf('audio.amr').subarray(0, 6), bytesOf('audio.amr').subarray(6), 600), 'AMR-NB, 8 kHz, mono'],
      ['.mp3', mp3WithTag(repeated(mp3.subarray(0, tagEnd), mp3.subarray(tagEnd), 100), 600 * 1024), 'MP3, 44.1 kHz, mono, 64 kbit/s'],
    ];
    for (const [extension, bytes, description] of cases) {
      expect(bytes.length, extension).toBeGreaterThan(headBytesFor('audio', bytes.length));
      const { sample, read } = readByRanges('audio', bytes);
      expect(read, extension).toBeLessThan(bytes.length);
      expect(accepted(await inspectMedia('audio', sample, { extension })).description, extension).toBe(description);
    }
  });
});

describe('B-frames in a fragmented MP4 (an empty moov, the samples in moof boxes)', () => {
  it('reads them from the first fragment the head holds, and says they are unknown when it holds none', async () => {
    const bytes = bytesOf('fragmented-bframes.mp4');
    const moov = topLevelBox(bytes, 'moov');
    const moof = topLevelBox(bytes, 'moof');
    expect(moov.start).toBeLessThan(moof.start);
    // The head ends inside the first fragment's media data: its moof box says enough.
    const throughMoof = { head: bytes.subarray(0, moof.start + moof.size + 100), size: bytes.length };
    expect(moreBytesWanted('video', throughMoof)).toBeUndefined();
    expect(accepted(await inspectMedia('video', throughMoof, {})).description).toBe('MP4: H.264 High with B-frames, AAC');

    for (const headLength of [moov.start + moov.size, moof.start + moof.size - 1]) {
      const sample = { head: bytes.subarray(0, headLength), size: bytes.length };
      expect(moreBytesWanted('video', sample), `head ${headLength}`).toBeUndefined();
      const inspection = accepted(await inspectMedia('video', sample, { extension: '.mp4' }));
      expect(inspection.description, `head ${headLength}`).toBe('MP4: H.264 High (B-frames unknown), AAC');
      expect(inspection.warnings.map((w) => w.rule), `head ${headLength}`).toEqual(['video.b-frames-unknown']);
      expect(inspection.warnings[0]?.message).toMatch(/^H\.264 High profile in a fragmented MP4 whose fragments were not read, so whether it has B-frames is unknown: .*Main or Baseline profile without B-frames.*-bf 0/);
    }
    const plain = bytesOf('fragmented-nobframes.mp4');
    const plainHead = { head: plain.subarray(0, topLevelBox(plain, 'moof').start), size: plain.length };
    expect(verdictOf(await inspectMedia('video', plainHead, {}))).toEqual({ verdict: 'warn', rule: 'video.b-frames-unknown' });
  });
});

describe('the declared extension and MIME type must agree with the bytes', () => {
  const passing = () => corpus.files.filter((f) => f.verdict === 'pass');

  it('refuses another extension of the same type, and an extension of no format', async () => {
    for (const f of passing()) {
      const own = extname(f.name);
      const wrong = MEDIA_TABLE[f.type].formats.find((format) => format.mimeType !== f.mimeType)!.extensions[0]!;
      for (const extension of [wrong, '.bin']) {
        const { rule, message } = refusal(await inspectFile(f, { extension, mimeType: f.mimeType }));
        expect(rule, `${f.name} as ${extension}`).toBe('file.extension');
        expect(message, `${f.name} as ${extension}`).toContain(own);
      }
    }
  });

  it('refuses another MIME type, naming both', async () => {
    for (const f of passing()) {
      const wrong = MEDIA_TABLE[f.type].formats.find((format) => format.mimeType !== f.mimeType)!.mimeType;
      for (const mimeType of [wrong, 'application/octet-stream']) {
        const { rule, message } = refusal(await inspectFile(f, { extension: extname(f.name), mimeType }));
        expect(rule, `${f.name} as ${mimeType}`).toBe('file.mime-type');
        expect(message.startsWith('the file is '), message).toBe(true);
        expect(message.endsWith(` declared as ${mimeType}: its MIME type must match its content (${f.mimeType})`), message).toBe(true);
      }
    }
  });

  it('takes extensions and MIME types as servers and links spell them', async () => {
    const f = corpus.file('rgb.jpg');
    for (const declared of [{ extension: '.JPG' }, { extension: 'jpeg' }, { extension: ' .jpg ' }, { mimeType: 'IMAGE/JPEG' }, { mimeType: 'image/jpeg; charset=binary' }, { extension: '', mimeType: '' }]) {
      expect(verdictOf(await inspectFile(f, declared)), JSON.stringify(declared)).toEqual({ verdict: 'pass' });
    }
  });

  it('refuses a file of another type for each message type, naming the format the declaration promised', async () => {
    const examples: Record<MediaType, string> = { image: 'rgb.png', video: 'baseline.mp4', audio: 'audio.mp3', document: 'doc.pdf' };
    for (const type of MEDIA_TYPES) {
      for (const [otherType, name] of Object.entries(examples)) {
        if (otherType === type) continue;
        const { rule, message } = refusal(await inspectMedia(type, whole(bytesOf(name)), {}));
        expect(rule, `${name} as ${type}`).toBe(`${type}.format`);
        expect(message, `${name} as ${type}`).toMatch(/^the file is .+: (images|videos|audio|documents) must be /);
      }
    }
    expect(refusal(await inspectMedia('document', whole(bytesOf('rgb.png')), { extension: '.pdf' })).message).toBe('the file is a PNG image, not a PDF');
    expect(refusal(await inspectMedia('document', whole(bytesOf('rgb.png')), { mimeType: 'application/msword' })).message).toBe('the file is a PNG image, not a Word document (.doc)');
    expect(refusal(await inspectMedia('document', whole(bytesOf('elf-as.pdf')), {})).message).toBe(
      'the file is an ELF executable: documents must be plain text, PDF, Word, Excel or PowerPoint files',
    );
  });
});

describe('bytes cut short, broken or of no format', () => {
  const junk = (length: number, seed: number): Uint8Array => {
    const bytes = new Uint8Array(length);
    let x = seed;
    for (let i = 0; i < length; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      bytes[i] = x >>> 24;
    }
    return bytes;
  };
  const join = (...parts: (string | Uint8Array)[]): Uint8Array =>
    new Uint8Array(parts.flatMap((p) => (typeof p === 'string' ? [...p].map((c) => c.charCodeAt(0)) : [...p])));

  it('never throws, whatever the cut of whatever file', async () => {
    for (const f of corpus.files) {
      const bytes = bytesOf(f.name);
      for (const length of [0, 1, 2, 4, 7, 8, 12, 16, 24, 33, 64, 100, 512, Math.floor(bytes.length / 2), bytes.length - 1]) {
        if (length > bytes.length) continue;
        const result = await inspectMedia(f.type, whole(bytes.subarray(0, length)), declaredBy(f));
        expect(typeof result.ok, `${f.name} cut to ${length}`).toBe('boolean');
        if (!result.ok) expect(result.error.code, `${f.name} cut to ${length}`).toBe('invalid_input');
      }
    }
  });

  it("never hangs nor throws, whatever the counts in an MP4's sample tables and track runs say", async () => {
    // Every 32-bit field after a table's version and flags (its counts, a constant sample size, a
    // trun's data offset), set to extremes and to random values: each check ends with a verdict,
    // and the test's timeout catches one that builds what a huge count claims.
    const tables = ['stts', 'ctts', 'stsc', 'stsz', 'stco', 'stss', 'sbgp', 'sgpd', 'trun'];
    const extremes = [0, 1, 2, 499_999, 500_001, 10 ** 6, 10 ** 7, 10 ** 8, 0x7fffffff, 0xffffffff];
    let seed = 0x9e3779b9;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed;
    };
    let checked = 0;
    for (const name of ['baseline.mp4', 'high-bframes.mp4', 'moov-at-end.mp4', 'fragmented-bframes.mp4', 'audio.m4a', 'h264-aac.3gp']) {
      const bytes = bytesOf(name);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (const table of tables) {
        for (let at = Buffer.from(bytes).indexOf(table); at >= 4; at = Buffer.from(bytes).indexOf(table, at + 1)) {
          const size = view.getUint32(at - 4);
          if (size < 16 || at - 4 + size > bytes.length) continue; // the four letters inside other data
          for (let field = at + 8; field + 4 <= Math.min(at - 4 + size, at + 20); field += 4) {
            for (const value of [...extremes, random(), random(), random() % 100_000]) {
              const patched = bytes.slice();
              new DataView(patched.buffer).setUint32(field, value);
              const result = await inspectMedia('video', whole(patched), {});
              const what = `${name}: ${table} field at +${field - at} = ${value}`;
              expect(typeof result.ok, what).toBe('boolean');
              if (!result.ok) expect(result.error.code, what).toBe('invalid_input');
              checked++;
            }
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(500);
  }, 60_000);

  it('refuses sample tables that claim more than their box or the file holds, before mp4box builds them', async () => {
    const baseline = bytesOf('baseline.mp4');
    const why = async (bytes: Uint8Array) => {
      const { rule, message } = refusal(await inspectMedia('video', whole(bytes), { extension: '.mp4' }));
      expect(rule, message).toBe('file.unreadable');
      return message.replace(/^the file looks like an MP4 file but cannot be read: /, '');
    };
    // 10^8 samples of one size: built, they would exhaust the heap.
    expect(await why(withBoxField(withBoxField(baseline, 'stsz', 8, 1), 'stsz', 12, 10 ** 8))).toMatch(/^its sample table claims 100,000,000 samples of 1 byte in a \d+ KB file$/);
    expect(await why(withBoxField(baseline, 'stsz', 12, 10 ** 6))).toMatch(/^its stsz table claims 1,000,000 entries of 4 bytes, more than its [\d,]+-byte box holds$/);
    expect(await why(withBoxField(baseline, 'stts', 8, 0xffffffff))).toMatch(/^its stts table claims 4,294,967,295 entries of 8 bytes/);
    expect(await why(withBoxField(baseline, 'stsc', 8, 1000))).toMatch(/^its stsc table claims 1,000 entries of 12 bytes/);
    // Samples that fit the file but are more than any file of up to 16 MB holds: a file grown to hold a
    // constant-size table of MAX_SAMPLES + 1 samples of one byte.
    const grown = new Uint8Array(Buffer.concat([baseline, Buffer.alloc(MAX_SAMPLES + 8)]));
    new DataView(grown.buffer).setUint32(baseline.length, MAX_SAMPLES + 8);
    grown.set(Buffer.from('free'), baseline.length + 4);
    expect(await why(withBoxField(withBoxField(grown, 'stsz', 8, 1), 'stsz', 12, MAX_SAMPLES + 1))).toMatch(
      /^its sample tables claim 500,[\d,]+ samples in a [\d.]+ KB file, more than the 500,000 any video or audio file of up to 16 MB holds$/,
    );
    // A fragment's track run: its per-sample fields must fit, and without any its count is bounded all the same.
    const fragmented = bytesOf('fragmented-bframes.mp4');
    expect(await why(withBoxField(fragmented, 'trun', 8, 10 ** 8))).toMatch(/^its trun table claims 100,000,000 entries of \d+ bytes, more than its [\d,]+-byte box holds$/);
    expect(await why(withBoxField(withBoxField(fragmented, 'trun', 4, 0x000001), 'trun', 8, 10 ** 8))).toMatch(/^its sample tables claim 100,[\d,]+ samples/);
    // A table whose box does not fit in its parent's.
    const stbl = Buffer.from(baseline).indexOf('stsz');
    expect(await why(withBoxField(baseline, 'stsz', -4, 0x7fffffff))).toMatch(/^its "stsz" box \([\d,]+ bytes\) does not fit in its stbl box$/);
    expect(stbl).toBeGreaterThan(0);
  });

  it('refuses a file cut short when its format says where it ends', async () => {
    const ending = corpus.files.filter((f) => f.verdict !== 'refuse' && /\.(png|jpg|mp4|3gp|m4a|pdf|doc|xls|ppt|docx|xlsx|pptx)$/.test(f.name));
    expect(ending.length).toBeGreaterThan(15);
    for (const f of ending) {
      const bytes = bytesOf(f.name);
      // A PDF may end in a line end after its %%EOF; the other formats end exactly where their structure does.
      const lengths = [Math.floor(bytes.length / 2), bytes.length - 8, ...(f.name.endsWith('.pdf') ? [] : [bytes.length - 1])];
      for (const length of lengths) {
        const { rule, message } = refusal(await inspectMedia(f.type, whole(bytes.subarray(0, length)), declaredBy(f)));
        expect(rule, `${f.name} cut to ${length}: ${message}`).toBe('file.unreadable');
        expect(message, `${f.name} cut to ${length}`).toMatch(/^the file looks like .+ but cannot be read: /);
      }
    }
  });

  it('refuses random bytes for every type as data of no known type', async () => {
    for (const type of MEDIA_TYPES) {
      const { rule, message } = refusal(await inspectMedia(type, whole(junk(2000, 7)), {}));
      expect(rule, type).toBe(`${type}.format`);
      expect(message, type).toMatch(/^the file is binary data of no known type: /);
    }
  });

  it('refuses a format\'s magic number followed by junk', async () => {
    const cases: [MediaType, Uint8Array][] = [
      ['image', join('\x89PNG\r\n\x1a\n', junk(200, 1))],
      ['image', join('\xff\xd8\xff\xe0', junk(200, 2))],
      ['video', join('\0\0\0\x18ftypisom\0\0\0\0isomavc1', junk(300, 3))],
      ['video', join('\0\0\0\x18ftypisom\0\0\0\0isomavc1\0\0\x10\0moov', junk(300, 4))],
      ['audio', join('OggS\0\x02', junk(300, 5))],
      ['audio', join('#!AMR\n', junk(300, 6))],
      ['document', join('%PDF-1.7\n', junk(300, 8))],
      ['document', join('\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1', junk(600, 9))],
      ['document', join('PK\x03\x04', junk(300, 10))],
    ];
    for (const [type, bytes] of cases) {
      const result = await inspectMedia(type, whole(bytes), {});
      expect(result.ok, `${type}: ${result.ok ? result.value.description : result.error.message}`).toBe(false);
    }
  });

  it('refuses an empty file, and a sample that does not fit its size', async () => {
    expect(refusal(await inspectMedia('document', whole(new Uint8Array(0)), { extension: '.txt' }))).toEqual({ rule: 'file.empty', message: 'the file is empty (0 bytes)' });
    expect(refusal(await inspectMedia('image', { head: bytesOf('rgb.png'), size: 10 }, {})).rule).toBe('file.unreadable');
    expect(refusal(await inspectMedia('image', { head: bytesOf('rgb.png'), size: -1 }, {})).rule).toBe('file.unreadable');
    expect(moreBytesWanted('video', { head: bytesOf('baseline.mp4'), size: 10 })).toBeUndefined();
  });

  it('keeps mp4box from printing about broken boxes: what it says goes into the refusal', async () => {
    const printed = vi.spyOn(console, 'error');
    const warned = vi.spyOn(console, 'warn');
    const bytes = bytesOf('baseline.mp4').slice();
    const mdia = Buffer.from(bytes).indexOf('mdia');
    bytes.set([1, 2], mdia);
    const { rule, message } = refusal(await inspectMedia('video', whole(bytes), {}));
    expect(rule).toBe('file.unreadable');
    expect(message).toMatch(/^the file looks like an MP4 file but cannot be read: its moov box is broken \(mp4box: .+\)$/);
    expect(printed).not.toHaveBeenCalled();
    expect(warned).not.toHaveBeenCalled();
    expect(console.error).toBe(printed); // put back as it was
  });

  it('refuses an H.264 track without its decoder configuration', async () => {
    const bytes = bytesOf('baseline.mp4').slice();
    bytes.set([0x78, 0x78, 0x78, 0x78], Buffer.from(bytes).indexOf('avcC'));
    expect(refusal(await inspectMedia('video', whole(bytes), {})).message).toBe('the file looks like an MP4 file but cannot be read: its H.264 track has no decoder configuration (avcC box)');
  });

  it('reads compound files by their root streams, and refuses a sector chain that loops or runs into another', async () => {
    const book = compoundFile([{ name: 'Book', stream: 'Excel 5' }]);
    expect(accepted(await inspectMedia('document', whole(book), { extension: '.xls' })).mimeType).toBe('application/vnd.ms-excel');
    const why = async (bytes: Uint8Array) => {
      const { rule, message } = refusal(await inspectMedia('document', whole(bytes), { extension: '.doc' }));
      expect(rule, message).toBe('file.unreadable');
      return message;
    };

    const looping = compoundFile([{ name: 'WordDocument', stream: 'Hello' }]);
    // The FAT entry of the directory's sector (1) points back at itself.
    new DataView(looping.buffer).setUint32(512 + 4 * 1, 1, true);
    expect(await why(looping)).toBe("the file looks like an OLE compound file but cannot be read: its directory's sector chain loops");

    // The stream's last sector points back at its first, and its entry claims 4 GB: the walk stops where the chain comes back.
    const loopingStream = compoundFile([{ name: 'WordDocument', loopingStream: 'Hello', declaredSize: 0xffff_fe00 }]);
    expect(await why(loopingStream)).toBe("the file looks like a Word document (.doc) but cannot be read: its WordDocument stream's sector chain loops");

    // Sector 0 holds the FAT, sector 1 the directory, sectors 2–9 the WordDocument stream.
    const shared = compoundFile([{ name: 'WordDocument', stream: 'Hello' }, { name: 'Copy', sectorsOf: 'WordDocument' }]);
    expect(await why(shared)).toBe('the file looks like a Word document (.doc) but cannot be read: its Copy stream shares sector 2 with its WordDocument stream');

    // The header names one more FAT sector list (DIFAT) in sector 2, whose link to the next one points back at itself.
    const difat = compoundFile([{ name: 'WordDocument', stream: 'Hello' }]);
    const header = new DataView(difat.buffer);
    header.setUint32(0x44, 2, true);
    header.setUint32(0x48, 1000, true);
    header.setUint32(512 * 3 + 508, 2, true);
    expect(await why(difat)).toBe("the file looks like an OLE compound file but cannot be read: its allocation table's sector chain loops");

    const crowded = compoundFile(Array.from({ length: 16_400 }, (_, i) => ({ name: `S${i}`, children: [] })));
    expect(await why(crowded)).toBe('the file looks like an OLE compound file but cannot be read: its directory holds more than 16,384 entries');
    const roomy = compoundFile([{ name: 'WordDocument', stream: 'Hello' }, ...Array.from({ length: 16_000 }, (_, i) => ({ name: `S${i}`, children: [] }))]);
    expect(accepted(await inspectMedia('document', whole(roomy), { extension: '.doc' })).mimeType).toBe('application/msword');

    const cut = bytesOf('doc.doc').subarray(0, 3 * 512);
    expect(refusal(await inspectMedia('document', whole(cut), {})).message).toMatch(/its WordDocument stream lies past the end of the file/);
  });

  it('reads ADTS audio after ID3v2 tags (one after another, with a footer) and before an ID3v1 tag', async () => {
    const adts = bytesOf('audio.aac');
    const syncsafe = (n: number) => new Uint8Array([(n >> 21) & 0x7f, (n >> 14) & 0x7f, (n >> 7) & 0x7f, n & 0x7f]);
    const title = join('TIT2', syncsafe(6), '\0\0\x03Hello');
    // ID3v2.4 3.1: flag bit 4 announces a footer ("3DI"), which the tag's size leaves out.
    const tag = (flags: number) => join('ID3\x04\0', new Uint8Array([flags]), syncsafe(title.length), title, ...(flags & 0x10 ? [join('3DI\x04\0', new Uint8Array([flags]), syncsafe(title.length))] : []));
    const id3v1 = join('TAG', new Uint8Array(125));
    for (const bytes of [join(tag(0), adts), join(tag(0x10), adts), join(tag(0), tag(0x10), adts), join(adts, id3v1), join(tag(0x10), adts, id3v1)]) {
      expect(accepted(await inspectMedia('audio', whole(bytes), { extension: '.aac', mimeType: 'audio/aac' })).description).toBe('AAC (ADTS), 44.1 kHz, mono');
    }
    // Junk after the frames is still seen, after a tag as without one.
    expect(refusal(await inspectMedia('audio', whole(join(tag(0x10), adts, 'junk after the frames')), { extension: '.aac' })).message).toMatch(/^the file looks like AAC audio \(ADTS\) but cannot be read: its frame at byte [\d,]+ has no ADTS header$/);
  });

  it('takes AAC object types in MP4 video only: an mp4a.40.x of any other type is refused, naming it', async () => {
    const baseline = bytesOf('baseline.mp4');
    for (const type of [1, 2, 3, 4, 5, 6, 17, 19, 20, 22, 23, 29]) {
      const inspection = accepted(await inspectMedia('video', whole(withAudioObjectType(baseline, type)), { extension: '.mp4' }));
      expect(inspection.description, `object type ${type}`).toBe('MP4: H.264 Baseline, AAC');
    }
    const names: [number, string][] = [[7, 'MPEG-4 audio of object type 7'], [24, 'MPEG-4 audio of object type 24'], [32, 'MPEG Layer 1 audio'], [33, 'MPEG Layer 2 audio'], [34, 'MP3 audio'], [42, 'MPEG-4 audio of object type 42']];
    for (const [type, words] of names) {
      expect(refusal(await inspectMedia('video', whole(withAudioObjectType(baseline, type)), { extension: '.mp4' })), `object type ${type}`).toEqual({
        rule: 'video.audio-codec',
        message: `${words} in MP4: videos must be H.264 with AAC audio`,
      });
    }
  });

  it('takes plain text as UTF-8 (or ASCII) without NUL bytes, and refuses an HTML page as a text document', async () => {
    const text = async (bytes: Uint8Array) => inspectMedia('document', whole(bytes), { extension: '.txt' });
    for (const page of ['<!doctype html><title>x</title>', '\ufeff \r\n\t<HTML lang="en"><body>x</body></HTML>', '<html>']) {
      expect(refusal(await text(join(Buffer.from(page, 'utf8')))), page).toEqual({ rule: 'document.format', message: 'the file is an HTML page, not plain text' });
    }
    // Text that mentions HTML is text.
    expect(accepted(await text(join('Send the <html> file by Friday.\n'))).description).toBe('plain text (UTF-8)');
    // UTF-16 carries its byte order mark, little or big endian: phones read it right.
    expect(accepted(await text(join('\xfe\xff', Buffer.from('Hello', 'utf16le').swap16()))).description).toBe('plain text (UTF-16)');
    // 8-bit text goes out (the gateway takes any text) after a warning with the fix; a UTF-8 byte order mark does not make Latin-1 UTF-8.
    const latin1 = await text(join('\xef\xbb\xbfcaf\xe9\n'));
    expect(accepted(latin1).warnings).toEqual([
      {
        rule: 'document.text-encoding',
        message: 'text that is not UTF-8 (byte 6 is 0xE9): phones read plain text as UTF-8 and may show its accented letters wrongly; save it as UTF-8',
        text: { code: 'media.textEncoding', values: { offset: '6', byte: '0xE9' } },
      },
    ]);
    expect(refusal(await text(join('Hello\0')))).toEqual({ rule: 'document.format', message: 'the file is binary data of no known type, not plain text' });
  });

  it('tells AMR-WB from AMR, and an HTML page from an image', async () => {
    const wideBand = join('#!AMR-WB\n', new Uint8Array(50).fill(0x7c));
    expect(refusal(await inspectMedia('audio', whole(wideBand), { extension: '.amr' }))).toEqual({ rule: 'audio.format', message: 'the file is AMR-WB audio, not AMR audio' });
    const page = join('<!DOCTYPE html>\n<html><body>Not found</body></html>\n');
    expect(refusal(await inspectMedia('image', whole(page), { extension: '.png' })).message).toBe('the file is an HTML page, not a PNG image');
    expect(accepted(await inspectMedia('document', whole(join('<?xml version="1.0"?>\n<a>b</a>\n')), { extension: '.txt' })).description).toBe('XML text (UTF-8)');
  });
});
