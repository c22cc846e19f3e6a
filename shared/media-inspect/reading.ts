// What a format reader makes of the bytes, and the words for it in messages.
import { MEDIA_TABLE, MEDIA_TYPES, type MediaType } from '../messages';

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

/** Bytes of a format the gateway does not take. */
export const other = (what: string, description = what.replace(/^(a|an) /, '')): Reading => readAs(undefined, what, description);

export const unreadable = (what: string, why: string): Reading => ({ kind: 'unreadable', what, why });

/** Each gateway MIME type as a noun for messages ("the file is …, not a PDF"). */
const FORMAT_WHAT: Readonly<Record<string, string>> = {
  'image/jpeg': 'a JPEG image',
  'image/png': 'a PNG image',
  'video/3gpp': 'a 3GP video',
  'video/mp4': 'an MP4 video',
  'audio/aac': 'AAC audio (ADTS)',
  'audio/amr': 'AMR audio',
  'audio/mpeg': 'MP3 audio',
  'audio/mp4': 'MP4 audio (M4A)',
  'audio/ogg': 'Ogg audio',
  'text/plain': 'plain text',
  'application/vnd.ms-excel': 'an Excel workbook (.xls)',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'an Excel workbook (.xlsx)',
  'application/msword': 'a Word document (.doc)',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'a Word document (.docx)',
  'application/vnd.ms-powerpoint': 'a PowerPoint presentation (.ppt)',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'a PowerPoint presentation (.pptx)',
  'application/pdf': 'a PDF',
};

export const formatWhat = (mimeType: string): string => FORMAT_WHAT[mimeType] ?? `a file of type ${mimeType}`;

/** The formats a message of each type may carry (gateway-spec.md 2.3), as the refusal of any other format says it. */
export const FORMAT_RULE: Readonly<Record<MediaType, string>> = {
  image: 'images must be JPEG or PNG',
  video: 'videos must be MP4 or 3GP (H.264 with AAC audio)',
  audio: 'audio must be AAC (ADTS), AMR, MP3, M4A or Ogg Opus',
  document: 'documents must be plain text, PDF, Word, Excel or PowerPoint files',
};

const TABLE_ROWS = MEDIA_TYPES.flatMap((type) => MEDIA_TABLE[type].formats);

/** The gateway MIME type that goes with an extension (".jpg" → "image/jpeg"), if any. */
export const mimeTypeOfExtension = (extension: string): string | undefined => TABLE_ROWS.find((f) => f.extensions.includes(extension))?.mimeType;

/** The extensions that go with a gateway MIME type. */
export const extensionsOf = (mimeType: string): readonly string[] => TABLE_ROWS.find((f) => f.mimeType === mimeType)?.extensions ?? [];

/** "48 kHz", "44.1 kHz". */
export const kHz = (hz: number): string => `${Number((hz / 1000).toFixed(1))} kHz`;

/** "mono", "stereo", "6 channels". */
export const channelsText = (n: number): string => (n === 1 ? 'mono' : n === 2 ? 'stereo' : `${n} channels`);
