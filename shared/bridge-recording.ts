// The team's own recordings of bridged calls (relay/REFERENCE.md "Recordings"). The bridge node of a
// call records it when the relay says so: one Ogg Opus file per call with two channels, like the
// service's own recordings — channel 0 the business (what the customer hears: the agents, a barging
// supervisor, the consent notice, the hold music; never a whisper), channel 1 the customer. A call
// handed on or joined by colleagues stays one recording; a recording stopped and started again
// (on demand) leaves out what was said between.
//
// The relay's `--record never|on-demand|always` decides: `never` (the default) records nothing;
// `always` records every bridged call from the moment the customer is connected; `on-demand` lets an
// agent in the call start and stop it ("Record", "Stop recording"). Each time recording starts the
// customer hears the team's consent notice first (bundled per language, or the team's own file).
// The relay keeps the files under `--recordings-dir` and serves them to the agents who were in the
// call and to supervisors.
import { z } from 'zod';
import type { Result } from './result';
import { ruleMessage } from './validation';
import { ANNOUNCEMENT_LANGUAGES, type AnnouncementLanguage } from './service-capture';

export const RECORD_MODES = ['never', 'on-demand', 'always'] as const;
export type RecordMode = (typeof RECORD_MODES)[number];

/** The bundled consent notices, one per language in the service's form (assets/record-notice/LANG.wav). */
export const RECORD_NOTICE_LANGUAGES: readonly AnnouncementLanguage[] = ANNOUNCEMENT_LANGUAGES;
export const DEFAULT_RECORD_NOTICE_LANGUAGE: AnnouncementLanguage = 'en_US';
/** The longest notice the relay accepts (`--record-notice FILE`): a notice is a sentence, not a message. */
export const RECORD_NOTICE_MAX_SECONDS = 30;

/**
 * The notice as the relay hands it to a node: 16-bit little-endian PCM, mono, 48 kHz, base64. The
 * relay reads the WAV file once at start (any rate from 8 to 48 kHz, mono or stereo) and resamples.
 */
export const NOTICE_SAMPLE_RATE = 48_000;

/** The relay's agent endpoints for recordings (agent bearer token). */
export const RECORDING_AGENT_PATHS = {
  /**
   * POST `{ recording: boolean }` → `{ recording: boolean }`: "Record" / "Stop recording" on a bridged
   * call of a team recording on demand. Only an agent in the call (a member now); 403 otherwise; 404
   * no such bridged call; 409 `invalid_state` when the team records always or never (the message says
   * which), or before the customer is connected. Repeating the current state is no error.
   */
  toggle: (callId: string) => `/calls/${encodeURIComponent(callId)}/bridge/recording`,
  /**
   * GET → 200 `audio/ogg` (the whole file, `Accept-Ranges: bytes`, a `Range: bytes=A-B` request gets
   * 206 with `Content-Range`; an unsatisfiable range 416), for the agents who were in the call and for
   * supervisors; 403 for everyone else; 404 when the team has no recording of that call (never
   * recorded, still recording, or deleted after `--recordings-retention-days`).
   */
  file: (callId: string) => `/recordings/${encodeURIComponent(callId)}`,
} as const;

export const recordingToggleBodySchema = z.object(
  { recording: z.boolean({ error: ruleMessage('common.mustBeBoolean') }) },
  { error: ruleMessage('common.requiredObject') },
);
export const recordingToggleReplySchema = z.object({ recording: z.boolean() });

/**
 * What the relay keeps beside each recording (`CALLID.json` next to `CALLID.ogg`). Written when the
 * recording first starts and again as agents join; the file's figures are added when the node hands
 * the file over after the call.
 */
export const recordingMetaSchema = z.object({
  callId: z.string().min(1),
  /** Every agent who was a member of the call while it had a recording (who may hear it besides supervisors). */
  agents: z.array(z.string()),
  /** Unix ms: when recording first started. */
  startedAt: z.number(),
  /** Unix ms: when the file was stored (absent until the node hands it over). */
  storedAt: z.number().optional(),
  /** Length of the audio written (pauses left out), in ms. */
  durationMs: z.number().nonnegative().optional(),
  bytes: z.number().int().nonnegative().optional(),
});
export type RecordingMeta = z.infer<typeof recordingMetaSchema>;

/** The node's control paths for recording (relay → node, bridge token), beside BRIDGE_CONTROL_PATHS. */
export const RECORDING_CONTROL_PATHS = {
  /** POST `{ notice?: base64 PCM }`: start (or resume) recording the call, playing the notice to the customer first. */
  start: (callId: string) => `/calls/${encodeURIComponent(callId)}/recording/start`,
  /** POST: pause recording (nothing is written until the next start). */
  stop: (callId: string) => `/calls/${encodeURIComponent(callId)}/recording/stop`,
} as const;

export const recordingStartBodySchema = z.object({ notice: z.string().max(8 * 1024 * 1024).optional() }, { error: ruleMessage('common.requiredObject') });

/**
 * Where a remote node hands a finished recording to the relay (node → relay, bridge token): PUT
 * with the Ogg file as the body (`Content-Type: audio/ogg`), header `X-Recording-Duration-Ms`.
 * The relay stores it and its meta; a repeat of the same call replaces it (the node retries until 2xx).
 */
export const BRIDGE_RECORDING_UPLOAD_PATH = (callId: string): string => `/bridge/recordings/${encodeURIComponent(callId)}`;

/**
 * Where a node's finished recordings go: the relay's store itself for the node in the relay's
 * process, an upload to the relay (BRIDGE_RECORDING_UPLOAD_PATH, retried) for a remote node.
 */
export interface RecordingSink {
  store(callId: string, file: Uint8Array, durationMs: number): Promise<Result<null>>;
}
