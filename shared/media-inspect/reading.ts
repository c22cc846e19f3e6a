// What a format reader makes of the bytes, and the words for it in messages. Every word a finding
// shows comes from the rule catalogue (shared/i18n/rules.ts: groups media, mediaFile, mediaFetch),
// so that the window can say it in the agent's language; what a file is ("a PNG image") and what it
// holds ("8-bit RGB PNG") are entries of their own, which the window translates where a message takes
// them as a value.
import { rule, term, type RuleId } from '../i18n/rules';
import { formatBytes, MEDIA_TABLE, MEDIA_TYPES, type MediaType } from '../messages';

/** rule: a short stable id ('image.bit-depth'); message: what the file is, the rule, and for a warning the fix. */
export interface MediaFinding {
  rule: string;
  message: string;
}

export type Reading =
  | {
      kind: 'read';
      /** The gateway MIME type the bytes are (a MEDIA_TABLE row), or undefined for any other format. */
      mimeType: string | undefined;
      /** What the bytes are, to go after "the file is": "a PNG image", "MP3 audio", "an ELF executable". */
      what: string;
      /** What the bytes are in detail: "8-bit RGBA PNG", "MP4: H.264 High with B-frames, AAC". */
      description: string;
      /** The gateway's rules for this format that the bytes break (gateway-spec.md 2.3); the first one is the refusal. */
      refusals: MediaFinding[];
      /** What the gateway accepts but some phones do not play well. */
      warnings: MediaFinding[];
    }
  | {
      /** The bytes start like a format but break its structure (cut short, corrupt). */
      kind: 'unreadable';
      what: string;
      why: string;
    };

export const readAs = (
  mimeType: string | undefined,
  what: string,
  description: string,
  findings: { refusals?: MediaFinding[]; warnings?: MediaFinding[] } = {},
): Reading => ({ kind: 'read', mimeType, what, description, refusals: findings.refusals ?? [], warnings: findings.warnings ?? [] });

/**
 * Bytes of a format the gateway does not take. Such a file is refused by what it is (`what`), so its
 * description is never shown: it is `what` again.
 */
export const other = (what: string): Reading => readAs(undefined, what, what);

export const unreadable = (what: string, why: string): Reading => ({ kind: 'unreadable', what, why });

/** Each gateway MIME type as a noun for messages ("the file is …, not a PDF"). */
const FORMAT_WHAT: Readonly<Record<string, string>> = {
  'image/jpeg': rule('mediaFile.imageA', { format: 'JPEG' }),
  'image/png': rule('mediaFile.imageA', { format: 'PNG' }),
  'video/3gpp': rule('mediaFile.videoA', { format: '3GP' }),
  'video/mp4': rule('mediaFile.videoAn', { format: 'MP4' }),
  'audio/aac': rule('mediaFile.audioIn', { format: 'AAC', container: 'ADTS' }),
  'audio/amr': rule('mediaFile.audio', { format: 'AMR' }),
  'audio/mpeg': rule('mediaFile.audio', { format: 'MP3' }),
  'audio/mp4': rule('mediaFile.audioIn', { format: 'MP4', container: 'M4A' }),
  'audio/ogg': rule('mediaFile.audio', { format: 'Ogg' }),
  'text/plain': rule('mediaFile.plainText'),
  'application/vnd.ms-excel': rule('mediaFile.excelWorkbook', { extension: '.xls' }),
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': rule('mediaFile.excelWorkbook', { extension: '.xlsx' }),
  'application/msword': rule('mediaFile.wordDocument', { extension: '.doc' }),
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': rule('mediaFile.wordDocument', { extension: '.docx' }),
  'application/vnd.ms-powerpoint': rule('mediaFile.powerPointPresentation', { extension: '.ppt' }),
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': rule('mediaFile.powerPointPresentation', { extension: '.pptx' }),
  'application/pdf': rule('mediaFile.pdf'),
};

export const formatWhat = (mimeType: string): string => FORMAT_WHAT[mimeType] ?? rule('mediaFile.fileOfType', { mimeType });

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
export const channelsText = (n: number): string => (n === 1 ? term('mono') : n === 2 ? term('stereo') : rule('mediaFile.channels', { count: n }));

/** "812 KB", "2.4 MB", and below a KB "300 bytes" from the catalogue (formatBytes's own "bytes" is no rule). */
export const bytesText = (bytes: number): string => (bytes >= 1024 ? formatBytes(bytes) : rule('mediaFetch.bytes', { count: bytes }));

/** ".jpeg, .jpg or .png": names (extensions, MIME types) as one value, the last joined by the catalogue's "or". */
export const orList = (items: readonly string[]): string =>
  items.length <= 1 ? (items[0] ?? '') : rule('lists.or', { items: items.slice(0, -1).join(', '), last: items[items.length - 1]! });
