// The MP4 family (MP4, 3GP, M4A): videos must be H.264 with one AAC audio stream or none; High
// profile with B-frames and a moov box after the media data are warnings (gateway-spec.md 2.3).
//
// mp4box reads the tracks. The top-level boxes are walked here by hand as well: mp4box reports
// neither where a box it has not reached begins (moreBytesWanted needs that from a head alone) nor
// a box cut short at the end of the file; and the walk keeps bytes whose box structure is broken
// from reaching mp4box, which logs to the console about them. The sample tables inside the moov
// box are measured by hand too (mp4-tables.ts): mp4box builds what their counts claim, unchecked.
import { createFile, MP4BoxBuffer, type Movie, type Track } from 'mp4box';
import { list, text, type RuleText, type TextValue } from '../i18n/text';
import { errorText } from '../result';
import { sampleTableProblem } from './mp4-tables';
import { bytesAt, count, isWhole, latin1, missingRange, tailStart, u32, type ByteRange, type MediaSample } from './sample';
import { described, finding, formatWhat, kHz, other, readAs, unreadable, type MediaFinding, type Reading } from './reading';

interface TopBox {
  type: string;
  start: number;
  end: number;
}

interface TopLevel {
  boxes: TopBox[];
  /** Why the structure cannot be read (broken, or cut short at the end of the file). */
  problem?: RuleText;
  /** Where the walk reached bytes the sample does not hold. */
  missingAt?: number;
}

const isBoxType = (type: Uint8Array): boolean => type.every((c) => c >= 0x20 && c <= 0x7e);

/** The top-level boxes (ISO/IEC 14496-12 4.2), as far as the sample's bytes reach. */
function topLevelBoxes(sample: MediaSample): TopLevel {
  const boxes: TopBox[] = [];
  let at = 0;
  while (at < sample.size) {
    if (at + 8 > sample.size) return { boxes, problem: text('media.boxHeaderCut', { offset: count(at) }) };
    const header = bytesAt(sample, at, 8);
    if (header === undefined) return { boxes, missingAt: at };
    const typeBytes = header.subarray(4, 8);
    if (!isBoxType(typeBytes)) return { boxes, problem: text('media.boxBroken', { offset: count(at) }) };
    const size32 = u32(header, 0);
    let headerSize = 8;
    let end: number;
    if (size32 === 1) {
      const large = bytesAt(sample, at, 16);
      if (large === undefined) return at + 16 > sample.size ? { boxes, problem: text('media.boxHeaderCut', { offset: count(at) }) } : { boxes, missingAt: at };
      headerSize = 16;
      end = at + u32(large, 8) * 2 ** 32 + u32(large, 12);
    } else {
      end = size32 === 0 ? sample.size : at + size32;
    }
    const type = latin1(typeBytes);
    if (end - at < headerSize) return { boxes, problem: text('media.boxTooSmall', { offset: count(at), type, size: count(end - at) }) };
    if (end > sample.size) return { boxes, problem: text('media.boxCut', { type, needed: count(end), size: count(sample.size) }) };
    boxes.push({ type, start: at, end });
    at = end;
  }
  return { boxes };
}

/** Whether the bytes start with an ISO base media file's "ftyp" box. */
const startsLikeMp4 = (head: Uint8Array): boolean => latin1(head.subarray(4, 8)) === 'ftyp';

/**
 * The bytes an MP4 still needs when the sample does not hold its moov box: the rest of the moov box
 * when its header was read (a faststart file whose moov is longer than the head: up to the moov's
 * end, not the file's), else from the first top-level box header the sample lacks to the end of the
 * file (after a long mdat, the moov box and whatever follows it). Undefined when the moov box is in
 * the sample, or the file has none (the inspection then says so), or the bytes are no MP4.
 */
export function mp4BytesWanted(sample: MediaSample): ByteRange | undefined {
  if (isWhole(sample) || !startsLikeMp4(sample.head)) return undefined;
  const walk = topLevelBoxes(sample);
  const moov = walk.boxes.find((b) => b.type === 'moov');
  if (moov !== undefined) return missingRange(sample, moov.start, moov.end);
  return walk.missingAt === undefined ? undefined : missingRange(sample, walk.missingAt, sample.size);
}

/** What the bytes of the MP4 family are; `brand` is file-type's word for the ftyp brand. */
export function readMp4(sample: MediaSample, brand: string): Reading {
  const container = brand === '3gp' ? '3GP' : brand === '3g2' ? '3G2' : 'MP4';
  const file = text(container === 'MP4' ? 'mediaFile.fileAn' : 'mediaFile.fileA', { format: container });
  const walk = topLevelBoxes(sample);
  if (walk.problem !== undefined) return unreadable(file, walk.problem);
  const moovIndex = walk.boxes.findIndex((b) => b.type === 'moov');
  if (moovIndex < 0) return unreadable(file, walk.missingAt === undefined ? text('media.noMoov') : text('media.moovUnread'));
  const moov = walk.boxes[moovIndex]!;
  if (bytesAt(sample, moov.start, moov.end - moov.start) === undefined) return unreadable(file, text('media.moovPartlyRead'));
  const mdatIndex = walk.boxes.findIndex((b) => b.type === 'mdat');
  const moovAfterMdat = mdatIndex >= 0 && mdatIndex < moovIndex;
  const tables = sampleTableProblem(sample, walk.boxes);
  if (tables !== undefined) return unreadable(file, tables);

  const parsed = parseMovie(sample);
  if (!parsed.ok) return unreadable(file, parsed.why);
  const { movie, bFrames, bFramesUnknown } = parsed;
  const videos = movie.videoTracks;
  const audios = movie.audioTracks;

  if (videos.length === 0) {
    if (audios.length === 0) return other(text('mediaFile.noTracks', { file }));
    // An MP4 holding audio alone is M4A, whatever its brand says (file-type knows M4A only by the "M4A " brand).
    if (container === 'MP4') return readAs('audio/mp4', text('mediaFile.m4a'), text('mediaFile.tracks', { container: 'M4A', tracks: joinedBy('plus', audios.map(audioTrackText)) }));
    return other(text('mediaFile.audio', { format: container }));
  }
  const unconfigured = videos.find((t) => isH264(t.codec) && h264Profile(t.codec) === undefined);
  if (unconfigured) return unreadable(file, text('media.noAvcC'));
  if (container === '3G2') return other(text('mediaFile.videoA', { format: '3GPP2 (3G2)' }));

  const refusals: MediaFinding[] = [];
  const warnings: MediaFinding[] = [];
  // "MP4: H.264 High with B-frames, AAC": names joined by ", " and " + ", the words among them from the catalogue.
  const videoTexts = videos.map((t) => videoTrackText(t, bFrames.has(t.id) ? 'yes' : bFramesUnknown.has(t.id) ? 'unknown' : 'no'));
  const audioText =
    audios.length === 0
      ? text('mediaFile.noAudio')
      : audios.length === 1
        ? audioCodecName(audios[0]!.codec)
        : text('mediaFile.audioStreams', { count: audios.length, codecs: list(audios.map((t) => audioCodecName(t.codec))) });
  const description = text('mediaFile.tracks', { container, tracks: list([joinedBy('plus', videoTexts), audioText]) });

  const foreignVideo = videos.find((t) => !isH264(t.codec));
  if (foreignVideo) refusals.push(finding('video.codec', text('media.videoCodec', { codec: videoCodecName(foreignVideo.codec), container })));
  const foreignAudio = audios.find((t) => !isAac(t.codec));
  if (foreignAudio) refusals.push(finding('video.audio-codec', text('media.videoAudioCodec', { audio: audioInWords(foreignAudio.codec), container })));
  if (audios.length > 1) refusals.push(finding('video.audio-streams', text('media.audioStreams', { container, count: audios.length })));

  // gateway-spec.md 2.3: Android does not play H.264 High profile with B-frames.
  const high = videos.filter((t) => isH264(t.codec) && isHighProfile(t.codec));
  if (high.some((t) => bFrames.has(t.id))) {
    warnings.push(finding('video.b-frames', text('media.bFrames')));
  } else if (high.some((t) => bFramesUnknown.has(t.id))) {
    warnings.push(finding('video.b-frames-unknown', text('media.bFramesUnknown', { container })));
  }
  if (moovAfterMdat) warnings.push(finding('video.moov-after-mdat', text('media.moovAfterMdat', { container })));
  const mimeType = container === '3GP' ? 'video/3gpp' : 'video/mp4';
  return readAs(mimeType, formatWhat(mimeType), description, { refusals, warnings });
}

type ParsedMovie = { ok: true; movie: Movie; bFrames: Set<number>; bFramesUnknown: Set<number> } | { ok: false; why: RuleText };

/** An exact-size copy: mp4box reads the whole ArrayBuffer, and a Uint8Array may be a view into a larger (pooled) one. */
function boxBuffer(bytes: Uint8Array, fileStart: number): MP4BoxBuffer {
  const buffer = new MP4BoxBuffer(bytes.byteLength);
  new Uint8Array(buffer).set(bytes);
  buffer.fileStart = fileStart;
  return buffer;
}

/** The sample's bytes as mp4box takes them, in file order, each byte once: the head, any parts, then the tail. */
function chunks(sample: MediaSample): MP4BoxBuffer[] {
  const pieces = [...(sample.parts ?? [])];
  const from = tailStart(sample);
  if (sample.tail !== undefined && from !== undefined && !isWhole(sample)) pieces.push({ start: from, bytes: sample.tail });
  const buffers = [boxBuffer(sample.head, 0)];
  let reached = sample.head.length;
  for (const piece of pieces.sort((x, y) => x.start - y.start)) {
    const skip = Math.max(0, reached - piece.start);
    if (skip >= piece.bytes.length) continue;
    buffers.push(boxBuffer(piece.bytes.subarray(skip), piece.start + skip));
    reached = piece.start + piece.bytes.length;
  }
  return buffers;
}

/** mp4box's movie, the ids of the tracks whose samples are reordered (B-frames), and of those whose samples were not read. Never throws. */
function parseMovie(sample: MediaSample): ParsedMovie {
  const file = createFile();
  let movie: Movie | undefined;
  let failure: string | undefined;
  file.onReady = (info) => {
    movie = info;
  };
  file.onError = (module, message) => {
    failure ??= `${module}: ${message}`;
  };
  const logged = quietly(() => {
    const parts = chunks(sample);
    parts.forEach((part, i) => file.appendBuffer(part, i === parts.length - 1));
    file.flush();
  });
  // What mp4box said, without the time stamp its log lines start with.
  const said = [logged.thrown, failure, ...logged.lines.map((line) => line.replace(/^\[[\d:.]+\]\s*/, ''))].find((text) => text !== undefined);
  if (logged.thrown !== undefined || failure !== undefined || movie === undefined) {
    return { ok: false, why: said === undefined ? text('media.moovBroken') : text('media.moovBrokenSaid', { said }) };
  }
  const bFrames = new Set<number>();
  const bFramesUnknown = new Set<number>();
  for (const track of movie.videoTracks) {
    // mp4box lists a track's samples from its sample table (stbl, ctts) and from the fragments it has
    // read (moof, trun). B-frames reorder the samples: their composition offsets (cts - dts) differ.
    const samples = file.getTrackById(track.id)?.samples ?? [];
    if (new Set(samples.map((s) => s.cts - s.dts)).size > 1) bFrames.add(track.id);
    // A fragmented file whose moov lists no samples keeps them all in fragments; when the bytes read
    // hold none of them, nothing tells whether they are reordered.
    else if (movie.isFragmented && samples.length === 0) bFramesUnknown.add(track.id);
  }
  return { ok: true, movie, bFrames, bFramesUnknown };
}

/**
 * Runs a synchronous mp4box parse with console.error collected instead of printed: mp4box logs some
 * problems (an invalid box type deep inside the moov) to the console rather than to onError. They
 * become part of the verdict, not noise in the app's or the sandbox's output.
 */
function quietly(run: () => void): { lines: string[]; thrown?: string } {
  const lines: string[] = [];
  const print = console.error;
  console.error = (...args: unknown[]) => {
    lines.push(args.map(String).join(' '));
  };
  try {
    run();
    return { lines };
  } catch (e) {
    return { lines, thrown: errorText(e) };
  } finally {
    console.error = print;
  }
}

const isH264 = (codec: string): boolean => /^avc[13]\b/i.test(codec);
/** The profile_idc of an "avc1.PPCCLL" codec string (RFC 6381 3.3). */
const h264Profile = (codec: string): number | undefined => {
  const hex = /^avc[13]\.([0-9a-f]{2})/i.exec(codec)?.[1];
  return hex === undefined ? undefined : parseInt(hex, 16);
};
/** High, High 10, High 4:2:2 and High 4:4:4 (profile_idc 100, 110, 122, 244). */
const isHighProfile = (codec: string): boolean => (h264Profile(codec) ?? 0) >= 100;
const H264_PROFILES: Readonly<Record<number, string>> = { 66: 'Baseline', 77: 'Main', 88: 'Extended', 100: 'High', 110: 'High 10', 122: 'High 4:2:2', 244: 'High 4:4:4', 44: 'CAVLC 4:4:4' };

/**
 * The audio object types of the AAC family (ISO/IEC 14496-3 1.5.1.1): Main, LC, SSR, LTP, SBR (HE-AAC),
 * Scalable, and their error-resilient forms ER AAC LC, LTP, Scalable, BSAC, LD; PS (HE-AAC v2).
 */
const AAC_OBJECT_TYPES = new Set([1, 2, 3, 4, 5, 6, 17, 19, 20, 22, 23, 29]);
/** Object types of MPEG-4 audio that are other formats, by the names people know them by. */
const OBJECT_TYPE_NAMES: Readonly<Record<number, string>> = { 32: 'MPEG Layer 1', 33: 'MPEG Layer 2', 34: 'MP3' };

/** The audio object type of an "mp4a.40.N" codec string (RFC 6381 3.3: object type indication 0x40, MPEG-4 audio), null for "mp4a.40" without one, undefined for other codecs. */
const objectType = (codec: string): number | null | undefined => {
  const match = /^mp4a\.40(?:\.(\d+))?$/i.exec(codec);
  if (match === null) return undefined;
  return match[1] === undefined ? null : Number(match[1]);
};

/** AAC in MP4: MPEG-4 audio of an AAC object type, or MPEG-2 AAC (object type indications 0x66–0x68). */
const isAac = (codec: string): boolean => {
  const type = objectType(codec);
  return type === undefined ? /^mp4a\.(66|67|68)$/i.test(codec) : type !== null && AAC_OBJECT_TYPES.has(type);
};

function videoCodecName(codec: string): string {
  const fourcc = codec.split('.')[0] ?? codec;
  const names: Readonly<Record<string, string>> = {
    avc1: 'H.264', avc3: 'H.264', hvc1: 'H.265', hev1: 'H.265', vp08: 'VP8', vp09: 'VP9', av01: 'AV1', mp4v: 'MPEG-4 Part 2', s263: 'H.263',
  };
  return names[fourcc] ?? `"${codec}"`;
}

function audioCodecName(codec: string): TextValue {
  if (isAac(codec)) return 'AAC';
  if (/^mp4a\.(69|6b)$/i.test(codec)) return 'MP3';
  const type = objectType(codec);
  if (type === null) return text('mediaFile.mpeg4AudioNoType');
  if (type !== undefined) return OBJECT_TYPE_NAMES[type] ?? text('mediaFile.mpeg4AudioType', { digits: type });
  const names: Readonly<Record<string, string>> = {
    opus: 'Opus', Opus: 'Opus', 'ac-3': 'AC-3', 'ec-3': 'E-AC-3', samr: 'AMR', sawb: 'AMR-WB', alac: 'ALAC', fLaC: 'FLAC', 'mp4a.a5': 'AC-3', 'mp4a.a6': 'E-AC-3',
  };
  return names[codec] ?? `"${codec}"`;
}

/** "MP3 audio", "MPEG-4 audio of object type 36": an audio track's codec as the subject of a refusal. */
function audioInWords(codec: string): TextValue {
  const name = audioCodecName(codec);
  // The catalogue's MPEG-4 audio names say "audio" themselves; a codec's name does not.
  return typeof name === 'string' ? text('mediaFile.audio', { format: name }) : name;
}

/** Several values joined (" + " between tracks), one alone as it is. */
const joinedBy = (join: 'plus', items: readonly TextValue[]): TextValue => (items.length === 1 ? items[0]! : list(items, join));

function videoTrackText(track: Track, bFrames: 'yes' | 'no' | 'unknown'): TextValue {
  if (!isH264(track.codec)) return videoCodecName(track.codec);
  const profile = h264Profile(track.codec);
  const video: TextValue = profile === undefined ? 'H.264' : H264_PROFILES[profile] === undefined ? text('mediaFile.h264Profile', { digits: profile }) : `H.264 ${H264_PROFILES[profile]}`;
  return bFrames === 'yes' ? text('mediaFile.withBFrames', { video }) : bFrames === 'unknown' ? text('mediaFile.bFramesUnknown', { video }) : video;
}

// The channel count is left out: MP4 writers put the sample entry's template value (2) there, and the
// real count lives in the codec's own configuration.
function audioTrackText(track: Track): TextValue {
  const details = track.audio === undefined ? [] : [kHz(track.audio.sample_rate)];
  return described([audioCodecName(track.codec), ...details]);
}
