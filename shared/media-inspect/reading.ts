// What a format reader makes of the bytes, and the words for it in messages. Every finding is a text
// of the rule catalogue (shared/i18n/rules.ts: groups media, mediaFile, mediaFetch), its code and
// values, so that the window can say it in the agent's language; what a file is ("a PNG image") and
// what it holds ("8-bit RGB PNG") are texts of their own, which a finding takes as values. Names
// (formats, codecs, MIME types, extensions), numbers and units are data.
import type { RuleId } from '../i18n/rules';
import { english, list, orList, term, text, type RuleText, type TextValue } from '../i18n/text';
import { formatBytes, MEDIA_TABLE, MEDIA_TYPES, type MediaType } from '../messages';

export { orList };

/** rule: a short stable id ('image.bit-depth'); text: what the file is, the rule, and for a warning the fix; message: its English. */
export interface MediaFinding {
  rule: string;
  message: string;
  text: RuleText;
}

export const finding = (rule: string, said: RuleText): MediaFinding => ({ rule, message: english(said), text: said });

export type Reading =
  | {
      kind: 'read';
      /** The gateway MIME type the bytes are (a MEDIA_TABLE row), or undefined for any other format. */
      mimeType: string | undefined;
      /** What the bytes are, to go after "the file is": "a PNG image", "MP3 audio", "an ELF executable". */
      what: TextValue;
      /** What the bytes are in detail: "8-bit RGBA PNG", "MP4: H.264 High with B-frames, AAC". */
      description: TextValue;
      /** The gateway's rules for this format that the bytes break (gateway-spec.md 2.3); the first one is the refusal. */
      refusals: MediaFinding[];
      /** What the gateway accepts but some phones do not play well. */
      warnings: MediaFinding[];
    }
  | {
      /** The bytes start like a format but break its structure (cut short, corrupt). */
      kind: 'unreadable';
      what: TextValue;
      why: TextValue;
    };

export const readAs = (
  mimeType: string | undefined,
  what: TextValue,
  description: TextValue,
  findings: { refusals?: MediaFinding[]; warnings?: MediaFinding[] } = {},
): Reading => ({ kind: 'read', mimeType, what, description, refusals: findings.refusals ?? [], warnings: findings.warnings ?? [] });

/**
 * Bytes of a format the gateway does not take. Such a file is refused by what it is (`what`), so its
 * description is never shown: it is `what` again.
 */
export const other = (what: TextValue): Reading => readAs(undefined, what, what);

export const unreadable = (what: TextValue, why: TextValue): Reading => ({ kind: 'unreadable', what, why });

/** Each gateway MIME type as a noun for messages ("the file is …, not a PDF"). */
const FORMAT_WHAT: Readonly<Record<string, RuleText>> = {
  'image/jpeg': text('mediaFile.imageA', { format: 'JPEG' }),
  'image/png': text('mediaFile.imageA', { format: 'PNG' }),
  'video/3gpp': text('mediaFile.videoA', { format: '3GP' }),
  'video/mp4': text('mediaFile.videoAn', { format: 'MP4' }),
  'audio/aac': text('mediaFile.audioIn', { format: 'AAC', container: 'ADTS' }),
  'audio/amr': text('mediaFile.audio', { format: 'AMR' }),
  'audio/mpeg': text('mediaFile.audio', { format: 'MP3' }),
  'audio/mp4': text('mediaFile.audioIn', { format: 'MP4', container: 'M4A' }),
  'audio/ogg': text('mediaFile.audio', { format: 'Ogg' }),
  'text/plain': text('mediaFile.plainText'),
  'application/vnd.ms-excel': text('mediaFile.excelWorkbook', { extension: '.xls' }),
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': text('mediaFile.excelWorkbook', { extension: '.xlsx' }),
  'application/msword': text('mediaFile.wordDocument', { extension: '.doc' }),
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': text('mediaFile.wordDocument', { extension: '.docx' }),
  'application/vnd.ms-powerpoint': text('mediaFile.powerPointPresentation', { extension: '.ppt' }),
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': text('mediaFile.powerPointPresentation', { extension: '.pptx' }),
  'application/pdf': text('mediaFile.pdf'),
};

export const formatWhat = (mimeType: string): RuleText => FORMAT_WHAT[mimeType] ?? text('mediaFile.fileOfType', { mimeType });

/** The refusal of a format a message of each type may not carry (gateway-spec.md 2.3), naming the formats it may: "the file is {{what}}: images must be JPEG or PNG". */
export const FORMAT_RULE = {
  image: 'media.imageFormat',
  video: 'media.videoFormat',
  audio: 'media.audioFormat',
  document: 'media.documentFormat',
} as const satisfies Readonly<Record<MediaType, RuleId>>;

const TABLE_ROWS = MEDIA_TYPES.flatMap((type) => MEDIA_TABLE[type].formats);

/** The gateway MIME type that goes with an extension (".jpg" → "image/jpeg"), if any. */
export const mimeTypeOfExtension = (extension: string): string | undefined => TABLE_ROWS.find((f) => f.extensions.includes(extension))?.mimeType;

/** The extensions that go with a gateway MIME type. */
export const extensionsOf = (mimeType: string): readonly string[] => TABLE_ROWS.find((f) => f.mimeType === mimeType)?.extensions ?? [];

/** "48 kHz", "44.1 kHz". */
export const kHz = (hz: number): string => `${Number((hz / 1000).toFixed(1))} kHz`;

/** "mono", "stereo", "6 channels". */
export const channelsText = (n: number): TextValue => (n === 1 ? term('mono') : n === 2 ? term('stereo') : text('mediaFile.channels', { count: n }));

/** "812 KB", "2.4 MB", and below a KB "300 bytes" from the catalogue (formatBytes's own "bytes" is no rule). */
export const bytesText = (bytes: number): TextValue => (bytes >= 1024 ? formatBytes(bytes) : text('mediaFetch.bytes', { count: bytes }));

/** "MP3, 44.1 kHz, mono": a description as names and the catalogue's words, one after another. */
export const described = (items: readonly TextValue[]): TextValue => (items.length === 1 ? items[0]! : list(items));
