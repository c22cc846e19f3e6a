// Voicemail (protocol.md "Voicemail"): when a call is rejected or rings out the customer may leave a
// message; it arrives as an ordinary inbound audio message whose id is the call's id. The app that
// rang for the call marks its recent-calls entry and fetches the audio at once by its media id —
// media id → short-lived url → file, as the service serves media (sandbox/REFERENCE.md "Media") — and
// keeps the file, so "Play voicemail" works after the service has let it go. The team's records
// keep the media id with the call, and the Team view lists the team's voicemails of the last days.
import { z } from 'zod';

/** How long the service keeps a media id; the Team view lists voicemails this recent. */
export const VOICEMAIL_KEPT_MS = 7 * 24 * 60 * 60 * 1000;
/** The largest voicemail file the app fetches: the service's own limit for audio it sends (16 MB). */
export const VOICEMAIL_MAX_BYTES = 16 * 1024 * 1024;

/** A recent-calls entry's voicemail, as the app keeps it. */
export const historyVoicemailSchema = z.object({
  mediaId: z.string().min(1),
  /** When the customer left it (the message's timestamp, unix ms). */
  at: z.number(),
  /** The file is kept on this machine: "Play voicemail" plays it without the service. */
  saved: z.boolean(),
  /** Why the last fetch failed (English): retried, and tried again at "Play voicemail". */
  fetchError: z.string().optional(),
});
export type HistoryVoicemail = z.infer<typeof historyVoicemailSchema>;

export const TEAM_VOICEMAILS_LIMIT = 100;

/** One voicemail of the team's records (GET /team/wallboard's `voicemails`). */
export const teamVoicemailSchema = z.object({
  callId: z.string().min(1),
  mediaId: z.string().min(1),
  /** When the customer left it (unix ms). */
  at: z.number(),
  /** When the call began ringing (unix ms). */
  ringingAt: z.number().optional(),
  number: z.string().optional(),
  userId: z.string().optional(),
  name: z.string().optional(),
});
export type TeamVoicemail = z.infer<typeof teamVoicemailSchema>;

/** A voicemail's audio for the window to play (the `getVoicemail` command). */
export interface VoicemailAudio {
  mimeType: string;
  /** The file's bytes, base64. */
  data: string;
}
