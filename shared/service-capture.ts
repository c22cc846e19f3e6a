// The service's own recording and transcription of calls (protocol.md "What the service added in
// 2026"): opted into per call with `recording` and/or `transcription` objects on accept (incoming)
// and connect (outgoing) — never on anything else — each `{status: "ENABLED", purpose,
// announcement_language}`, `purpose` required, at most 250 characters. The service plays one legal
// notice to both sides before it captures. After the call a `calls` item brings
// `call_recording_available` (an Ogg Opus file: channel 0 the business, 1 the customer) or
// `call_transcription_available` (a JSON document of segments), each with a url that lives 5
// minutes and a media id that lives 7 days. The app fetches both at once and keeps them with the
// call's entry in recent calls ("Play recording", "Transcript").
//
// Settings → "Ask the service to record calls", "Ask the service to transcribe calls", with one
// "Purpose" and one notice language for both.
import { z } from 'zod';
import { list } from './i18n/text';
import { ruleMessage } from './validation';

export const SERVICE_CAPTURE_PURPOSE_MAX = 250;
/** The notice's languages the settings offer, in the service's form. */
export const ANNOUNCEMENT_LANGUAGES = ['en_US', 'en_GB', 'es_ES', 'es_MX', 'pt_BR', 'hi', 'id', 'ar'] as const;
export type AnnouncementLanguage = (typeof ANNOUNCEMENT_LANGUAGES)[number];

const purposeSchema = z
  .string({ error: ruleMessage('common.mustBeString') })
  .trim()
  .max(SERVICE_CAPTURE_PURPOSE_MAX, ruleMessage('common.atMostCharacters', { count: SERVICE_CAPTURE_PURPOSE_MAX }));
const languageSchema = z.enum(ANNOUNCEMENT_LANGUAGES, ruleMessage('common.oneOf', { values: list(ANNOUNCEMENT_LANGUAGES) }));

/** Settings → the service's recording and transcription (the `saveServiceCapture` command; kept by main). */
export const serviceCaptureSettingsSchema = z
  .strictObject({
    record: z.boolean(),
    transcribe: z.boolean(),
    purpose: purposeSchema,
    language: languageSchema,
  })
  .superRefine((v, ctx) => {
    if ((v.record || v.transcribe) && v.purpose === '') ctx.addIssue({ code: 'custom', path: ['purpose'], message: ruleMessage('common.required') });
  });
export type ServiceCaptureSettings = z.infer<typeof serviceCaptureSettingsSchema>;

export const DEFAULT_SERVICE_CAPTURE: ServiceCaptureSettings = { record: false, transcribe: false, purpose: '', language: 'en_US' };

/** The object accept and connect carry (protocol.md), for recording and for transcription alike. */
export interface ServiceCaptureRequest {
  status: 'ENABLED';
  purpose: string;
  announcement_language: string;
}

/** What accept and connect add for these settings: nothing when neither is asked for. */
export function captureMembers(settings: ServiceCaptureSettings): { recording?: ServiceCaptureRequest; transcription?: ServiceCaptureRequest } {
  const request: ServiceCaptureRequest = { status: 'ENABLED', purpose: settings.purpose, announcement_language: settings.language };
  return { ...(settings.record ? { recording: request } : {}), ...(settings.transcribe ? { transcription: { ...request } } : {}) };
}

/** A recording or transcript the service made of a call, as the app keeps it with the call's entry. */
export const capturedMediaSchema = z.object({
  mediaId: z.string().min(1),
  /** When the service said it was ready (unix ms). */
  at: z.number(),
  /** The file is kept on this machine. */
  saved: z.boolean(),
  /** Why the last fetch failed (English): retried, and tried again when the agent asks for it. */
  fetchError: z.string().optional(),
});
export type CapturedMedia = z.infer<typeof capturedMediaSchema>;

/** One segment of the service's transcript (protocol.md): channel 0 is the business, 1 the customer. */
export const transcriptSegmentSchema = z.object({
  speaker: z.string(),
  channel: z.union([z.literal(0), z.literal(1)]),
  /** Seconds from the start of the call's capture. */
  start: z.number().min(0),
  end: z.number().min(0),
  text: z.string(),
  confidence: z.number().min(0).max(1).optional(),
});
export type TranscriptSegment = z.infer<typeof transcriptSegmentSchema>;

/** The service's transcript document; unknown members and words[] are left aside. */
export const transcriptDocumentSchema = z.object({ transcript: z.object({ segments: z.array(transcriptSegmentSchema).max(100_000) }) });

/** The `getTranscript` command's answer. */
export interface Transcript {
  segments: TranscriptSegment[];
}
