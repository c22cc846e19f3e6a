// Audio (gateway-spec.md 2.3): AAC in ADTS, AMR, MP3, M4A (the MP4 family, mp4.ts) or Ogg; an Ogg
// must be Opus and mono.
//
// music-metadata reads the streams. It is given no MIME hint (a wrong one makes it return an empty
// format silently) and has no AMR parser: AMR is told by its magic line (RFC 4867 5).
//
// ADTS, MP3, AMR and Ogg say what they are in their first frames and pages: they are read by a head
// (AUDIO_HEAD_BYTES after any ID3v2 tags, which may hold pictures of megabytes; id3BytesWanted). M4A
// is read as video is, up to the end of its moov box (mp4.ts).
import { parseBuffer, type IAudioMetadata } from 'music-metadata';
import { text, type TextValue } from '../i18n/text';
import { errorText } from '../result';
import { count, isWhole, missingRange, startsWith, type ByteRange, type MediaSample } from './sample';
import { channelsText, described, finding, formatWhat, kHz, other, readAs, unreadable, type MediaFinding, type Reading } from './reading';

type AudioFormat = IAudioMetadata['format'];

async function audioFormat(bytes: Uint8Array): Promise<{ ok: true; format: AudioFormat } | { ok: false; why: TextValue }> {
  try {
    const { format } = await parseBuffer(bytes, undefined, { skipCovers: true, duration: false });
    return { ok: true, format };
  } catch (e) {
    return { ok: false, why: text('media.streamUnreadable', { reason: errorText(e) }) };
  }
}

/** "44.1 kHz, mono" from what the stream says about itself: a description is a list of names and units, its words (mono) the catalogue's. */
const streamText = (format: AudioFormat): TextValue[] => [
  ...(format.sampleRate === undefined ? [] : [kHz(format.sampleRate)]),
  ...(format.numberOfChannels === undefined ? [] : [channelsText(format.numberOfChannels)]),
];

/**
 * Where the audio starts: after any ID3v2 tags (ID3v2.4 3.1: "ID3", version, flags, a 28-bit syncsafe
 * size that leaves out the 10-byte header and the 10-byte footer the flags' bit 4 announces), which
 * encoders put in front of MP3 and ADTS frames (ffmpeg: -write_id3v2 1). 0 without a tag; undefined
 * when a tag's header is broken.
 */
export function id3v2End(b: Uint8Array): number | undefined {
  let at = 0;
  while (startsWith(b, 'ID3', at)) {
    const [major = 0xff, minor = 0xff, flags = 0] = b.subarray(at + 3, at + 6);
    const sizeBytes = b.subarray(at + 6, at + 10);
    if (major === 0xff || minor === 0xff || sizeBytes.length < 4 || sizeBytes.some((x) => x >= 0x80)) return undefined;
    const size = sizeBytes.reduce((n, x) => n * 128 + x, 0);
    at += 10 + size + (flags & 0x10 ? 10 : 0);
  }
  return at;
}

/** The head of an audio file after its tags: many frames of any stream, where the readers find what they need in the first few. */
export const AUDIO_HEAD_BYTES = 256 * 1024;

/** The bytes an audio file still needs when its ID3v2 tags run past the head (or leave little after them): AUDIO_HEAD_BYTES after the tags. */
export function id3BytesWanted(sample: MediaSample): ByteRange | undefined {
  if (isWhole(sample)) return undefined;
  const end = id3v2End(sample.head);
  if (end === undefined || end === 0) return undefined;
  return missingRange(sample, sample.head.length, end + AUDIO_HEAD_BYTES);
}

/** ID3v1's tag: the last 128 bytes, starting with "TAG". */
const isId3v1 = (b: Uint8Array, at: number): boolean => b.length - at === 128 && startsWith(b, 'TAG', at);

/** Where the chain of ADTS frames from `from` breaks (ISO/IEC 13818-7 6.2: a sync word, then each frame's length), or undefined when it does not; the last frame may be cut off, and an ID3v1 tag may end the file. */
function adtsBreak(b: Uint8Array, from: number): number | undefined {
  let at = from;
  while (at < b.length) {
    if (at + 7 > b.length) return undefined;
    if (b[at] !== 0xff || ((b[at + 1] ?? 0) & 0xf6) !== 0xf0) return at > from && isId3v1(b, at) ? undefined : at;
    const length = (((b[at + 3] ?? 0) & 0x03) << 11) | ((b[at + 4] ?? 0) << 3) | ((b[at + 5] ?? 0) >> 5);
    if (length < 7) return at;
    at += length;
  }
  return undefined;
}

const ADTS = formatWhat('audio/aac');
const MP3 = formatWhat('audio/mpeg');
const AMR = formatWhat('audio/amr');
const OGG = formatWhat('audio/ogg');

export async function readAdts(sample: MediaSample): Promise<Reading> {
  const first = id3v2End(sample.head);
  if (first === undefined) return unreadable(ADTS, text('media.id3Broken'));
  if (first >= sample.head.length) return unreadable(ADTS, text('media.id3NoFrame'));
  // music-metadata reads the first frames only; the frames are walked here so that junk after them is seen.
  const broken = adtsBreak(sample.head, first);
  if (broken !== undefined) return unreadable(ADTS, text('media.adtsFrame', { offset: count(broken) }));
  const read = await audioFormat(sample.head);
  if (!read.ok) return unreadable(ADTS, read.why);
  if (read.format.codec === undefined) return unreadable(ADTS, text('media.noAacFrame'));
  return readAs('audio/aac', ADTS, described(['AAC (ADTS)', ...streamText(read.format)]));
}

export async function readMp3(sample: MediaSample): Promise<Reading> {
  const read = await audioFormat(sample.head);
  if (!read.ok) return unreadable(MP3, read.why);
  if (read.format.codec === undefined) return unreadable(MP3, text('media.noMpegFrame'));
  if (!/layer 3/i.test(read.format.codec)) return other(text('mediaFile.audio', { format: read.format.codec }));
  const bitrate = read.format.bitrate === undefined ? [] : [`${Math.round(read.format.bitrate / 1000)} kbit/s`];
  return readAs('audio/mpeg', MP3, described(['MP3', ...streamText(read.format), ...bitrate]));
}

/** Speech bytes after the header byte of AMR-NB frame types 0–8 (RFC 4867 5.3; 3GPP TS 26.101); type 15 is "no data". */
const AMR_NB_FRAME_BYTES = [12, 13, 15, 17, 19, 20, 26, 31, 5];

export function readAmr(sample: MediaSample): Reading {
  // The storage format's magic lines: narrow-band "#!AMR\n", wide-band "#!AMR-WB\n" (audio/amr-wb, not audio/amr).
  if (startsWith(sample.head, '#!AMR\n')) {
    const b = sample.head;
    let frames = 0;
    for (let at = 6; at < b.length; frames++) {
      const header = b[at]!;
      const frameType = (header >> 3) & 0x0f;
      const size = frameType === 15 ? 0 : AMR_NB_FRAME_BYTES[frameType];
      // A frame header has its first bit and its two padding bits clear.
      if ((header & 0x83) !== 0 || size === undefined) return unreadable(AMR, text('media.amrFrame', { offset: at }));
      at += 1 + size;
    }
    if (frames === 0) return unreadable(AMR, text('media.noAudioFrames'));
    // Its length is counted from the frames, when all of them were read.
    const length = isWhole(sample) ? [`${Number((frames * 0.02).toFixed(1))} s`] : [];
    return readAs('audio/amr', AMR, described(['AMR-NB', '8 kHz', channelsText(1), ...length]));
  }
  if (startsWith(sample.head, '#!AMR-WB\n')) return other(text('mediaFile.audio', { format: 'AMR-WB' }));
  return other(text('mediaFile.multichannelAmr'));
}

export async function readOgg(sample: MediaSample): Promise<Reading> {
  const read = await audioFormat(sample.head);
  if (!read.ok) return unreadable(OGG, read.why);
  const { codec, numberOfChannels: channels } = read.format;
  if (codec === undefined) return unreadable(OGG, text('media.noOggHeader'));
  const name = /^vorbis/i.test(codec) ? 'Vorbis' : codec;
  const description = described([`Ogg ${name}`, ...streamText(read.format)]);
  const refusals: MediaFinding[] = [];
  if (name !== 'Opus') refusals.push(finding('audio.ogg-codec', text('media.oggCodec', { codec: name })));
  else if (channels === undefined) return unreadable(OGG, text('media.opusNoChannels'));
  else if (channels !== 1) {
    const kind = channels === 2 ? text('mediaFile.stereoOpus') : text('mediaFile.opusChannels', { count: channels });
    refusals.push(finding('audio.ogg-channels', text('media.oggChannels', { count: channels, kind })));
  }
  return readAs('audio/ogg', OGG, description, { refusals });
}
