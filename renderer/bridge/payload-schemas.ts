// The renderer's edge for data from the host (both hosts: IPC and WebSocket). shared/ has the
// types but no runtime schemas for call states and snapshots, so these check the fields the UI and
// the media engine rely on and let the rest through; a payload that fails is dropped and logged,
// never rendered half-formed.
import { z } from 'zod';
import { preferencesSchema, SHORTCUT_ACTIONS, type Preferences, type ShortcutAction } from '../../shared/preferences';
import { AGENT_ROLES, PRESENCE_STATUSES, type AgentPresence, type AppSnapshot, type PushName, type PushPayloads, type TeamInfo } from '../../shared/api';
import type { CallState } from '../../shared/call-state';
import type { Conversation } from '../../shared/conversation';
import type { TemplateDraft } from '../../shared/templates';
import type { PublicSettings } from '../../shared/settings';
import type { Result } from '../../shared/result';
import { updateStatusSchema, type UpdateStatus } from '../../shared/updates';
import { legReportSchema } from '../../shared/bridge';
import { parseWith } from '../../shared/validation';
import { historyEntrySchema as storedHistoryEntrySchema, type HistoryEntry } from '../../shared/history';
import { teamSettingsSchema } from '../../shared/team-settings';
import { ruleTextSchema } from '../../shared/i18n/text';
import { colleagueSchema, TEAM_PRESENCES, teamMemberSchema, TRANSFER_KINDS, type TeamMember } from '../../shared/transfer';
import { wallboardSchema } from '../../shared/wallboard';
import { VOICEMAIL_MAX_BYTES, type VoicemailAudio } from '../../shared/voicemail';
import { ANNOUNCEMENT_LANGUAGES, DEFAULT_SERVICE_CAPTURE, transcriptSegmentSchema, type Transcript } from '../../shared/service-capture';
import { MONITOR_MODES } from '../../shared/supervision';

// A text (code and values) beside an English sentence: one this window cannot read is dropped, and the English stands in for it.
const textBeside = ruleTextSchema.optional().catch(undefined);

const peerSchema = z.looseObject({ number: z.string().optional(), userId: z.string().optional(), name: z.string().optional() });

const endSchema = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('completed'), by: z.enum(['agent', 'customer']) }),
  z.looseObject({ kind: z.literal('failed'), code: z.string(), message: z.string(), text: textBeside }),
  z.looseObject({ kind: z.literal('transferred'), to: z.string() }),
  z.looseObject({ kind: z.enum(['declined', 'missed', 'cancelled', 'no_answer', 'rejected', 'answered_elsewhere', 'consult_ended', 'other_partner']) }),
]);

// What the call panel and the incoming card show of a transfer (shared/calls/types.ts CallTransfer).
const transferSchema = z.looseObject({
  id: z.string().min(1),
  kind: z.enum(TRANSFER_KINDS),
  role: z.enum(['from', 'to']),
  colleague: colleagueSchema.optional(),
  state: z.enum(['ringing', 'consulting', 'joined', 'not_answered', 'done']),
});

// A bridged call rejoining (shared/calls/types.ts CallRejoin): the offer the media engine answers.
const rejoinSchema = z.looseObject({
  since: z.number(),
  legId: z.string().min(1).optional(),
  offerSdp: z.string().optional(),
  answered: z.literal(true).optional(),
});

// A supervisor in the agent's call (shared/calls/types.ts CallMonitor): "NAME is whispering", "NAME joined the call".
const callMonitorSchema = z.looseObject({ supervisorId: z.string(), name: z.string(), mode: z.enum(MONITOR_MODES) });

const common = {
  localId: z.string().min(1),
  callId: z.string().optional(),
  peer: peerSchema,
  createdAt: z.number(),
  direction: z.enum(['incoming', 'outgoing']),
  bridged: z.literal(true).optional(),
  transfer: transferSchema.optional(),
  // The team's bridge records the call now: every window in it shows "Recording".
  recording: z.literal(true).optional(),
  monitors: z.array(callMonitorSchema).max(16).optional(),
  // The agent muted the call (from any of its windows): this window's microphone sends silence too.
  muted: z.boolean().optional(),
};

const callStateSchema = z
  .discriminatedUnion('phase', [
    z.looseObject({ ...common, phase: z.literal('ringing'), callId: z.string(), offerSdp: z.string(), ringsUntil: z.number() }),
    z.looseObject({ ...common, phase: z.literal('answering'), answeredAt: z.number() }),
    z.looseObject({ ...common, phase: z.literal('dialing') }),
    z.looseObject({ ...common, phase: z.enum(['calling', 'remote_ringing']), callId: z.string(), dialsUntil: z.number() }),
    z.looseObject({ ...common, phase: z.literal('connecting'), answeredAt: z.number(), answerSdp: z.string().optional(), rejoin: rejoinSchema.optional() }),
    z.looseObject({ ...common, phase: z.literal('active'), answeredAt: z.number(), connectedAt: z.number(), rejoin: rejoinSchema.optional() }),
    z.looseObject({ ...common, phase: z.literal('ended'), end: endSchema, endedAt: z.number(), durationSec: z.number() }),
  ])
  .refine((c) => c.direction === 'outgoing' || typeof c.offerSdp === 'string', { message: 'an incoming call carries offerSdp', path: ['offerSdp'] });

const connectionSchema = z.discriminatedUnion('status', [
  z.looseObject({ status: z.literal('connecting'), since: z.number() }),
  z.looseObject({ status: z.literal('connected'), since: z.number() }),
  z.looseObject({ status: z.literal('reconnecting'), since: z.number(), lastError: z.string(), lastErrorText: textBeside }),
]);


const settingsSchema = z.looseObject({
  mode: z.enum(['sandbox', 'account']),
  gatewayUrl: z.string().optional(),
  productSegment: z.string(),
  relayUrl: z.string().optional(),
  defaultCountry: z.string().optional(),
  hasApiKey: z.boolean(),
  hasAgentToken: z.boolean(),
  secretStorage: z.enum(['os-keychain', 'owner-only-file', 'memory']),
  network: z.looseObject({
    servers: z.array(z.string()),
    turnUsername: z.string().optional(),
    hasTurnPassword: z.boolean(),
    relayOnly: z.boolean(),
    fromCommandLine: z.boolean(),
    relayTurn: z.enum(['available', 'not_offered', 'unreachable', 'unknown']),
  }),
  // Settings → "Recording and transcription". A host from before the section sends none: nothing asked for.
  serviceCapture: z
    .looseObject({
      record: z.boolean(),
      transcribe: z.boolean(),
      purpose: z.string(),
      language: z.enum(ANNOUNCEMENT_LANGUAGES),
    })
    .default(DEFAULT_SERVICE_CAPTURE),
});

const sandboxCustomerSchema = z.looseObject({
  number: z.string(),
  name: z.string(),
  behaviour: z.enum(['answers', 'rejects', 'no_answer', 'no_permission', 'busy']),
});

// After-call work under way (shared/api.ts AfterCallWork): the countdown, "Ready" and the wrap-up it waits for.
const afterCallWorkSchema = z.looseObject({
  localId: z.string().min(1),
  callId: z.string().optional(),
  startedAt: z.number(),
  endsAt: z.number(),
  waitingForWrapUp: z.boolean(),
});

const presenceSchema = z.looseObject({
  choice: z.enum(['available', 'break', 'dnd']),
  status: z.enum(PRESENCE_STATUSES),
  breakReason: z.string().optional(),
  afterCallWork: afterCallWorkSchema.optional(),
});

// The team's settings as the relay's own rules read them (the defaults for a field left out); a field
// a newer host adds is let through, as everywhere at this edge.
const teamInfoSchema = z.looseObject({
  agentId: z.string().min(1).max(64).optional(),
  role: z.enum(AGENT_ROLES),
  settings: teamSettingsSchema.loose(),
  // Whether the team's bridge records calls ("Record" is offered with on-demand); a mode this window does not know offers nothing.
  record: z.enum(['on-demand', 'always']).optional().catch(undefined),
});

// The stored entry's schema checks a wrap-up too (shared/history.ts WrapUp).
const historyEntrySchema = storedHistoryEntrySchema;

const windowSchema = z.union([
  z.looseObject({ open: z.literal(true), closesAt: z.number(), lastInboundAt: z.number() }),
  z.looseObject({ open: z.literal(false), lastInboundAt: z.number().optional(), closedAt: z.number().optional() }),
]);

const timelineMessageSchema = z.looseObject({
  id: z.string().min(1),
  direction: z.enum(['outbound', 'inbound']),
  kind: z.string(),
  interactiveType: z.string().optional(),
  summary: z.string(),
  at: z.number(),
  status: z.enum(['accepted', 'sent', 'delivered', 'read', 'failed']).optional(),
  statusAt: z.number().optional(),
  failure: z.looseObject({ code: z.number().optional(), message: z.string(), text: textBeside }).optional(),
});

const conversationSchema = z.looseObject({
  contact: z.string().min(1),
  name: z.string().optional(),
  window: windowSchema,
  messages: z.array(timelineMessageSchema),
  lastActivityAt: z.number(),
  revision: z.number(),
});

const sandboxTemplateSchema = z.looseObject({ name: z.string(), language: z.string(), category: z.string(), body: z.string(), apiPayload: z.string() });

const templateDraftSchema = z.looseObject({
  name: z.string(),
  languageCode: z.string(),
  recipient: z.looseObject({ raw: z.string().optional(), placeholder: z.boolean(), number: z.string().optional() }),
  fields: z.array(
    z.looseObject({
      path: z.string(),
      label: z.string(),
      sample: z.string(),
      placeholder: z.boolean(),
      kind: z.enum(['text', 'link', 'payload', 'coupon_code', 'fallback_value']),
    }),
  ),
  template: z.looseObject({ name: z.string(), language: z.looseObject({ code: z.string() }) }),
  pastedProduct: z.string().optional(),
});

const snapshotSchema = z.looseObject({
  mode: z.enum(['sandbox', 'account']),
  calls: z.array(callStateSchema),
  history: z.array(historyEntrySchema),
  connection: connectionSchema,
  settings: settingsSchema,
  sandboxCustomers: z.array(sandboxCustomerSchema).optional(),
  presence: presenceSchema.optional(),
  conversations: z.array(conversationSchema).optional(),
  sandboxTemplates: z.array(sandboxTemplateSchema).optional(),
  preferences: preferencesSchema.optional(),
  updateStatus: updateStatusSchema.optional(),
  team: teamInfoSchema.optional(),
});

// The schemas check a superset of what the types promise; the casts below only drop that knowledge.
export const parseSnapshot = (data: unknown): Result<AppSnapshot> => parseWith(snapshotSchema, data) as Result<AppSnapshot>;
export const parseCallState = (data: unknown): Result<CallState> => parseWith(callStateSchema, data) as Result<CallState>;
export const parseSettings = (data: unknown): Result<PublicSettings> => parseWith(settingsSchema, data) as Result<PublicSettings>;
export const parsePresence = (data: unknown): Result<AgentPresence> => parseWith(presenceSchema, data) as Result<AgentPresence>;
export const parseTeamInfo = (data: unknown): Result<TeamInfo> => parseWith(teamInfoSchema, data) as Result<TeamInfo>;
/** One recent-calls entry (saveWrapUp's answer). */
export const parseHistoryEntry = (data: unknown): Result<HistoryEntry> => parseWith(historyEntrySchema, data) as Result<HistoryEntry>;
export const parseConversation = (data: unknown): Result<Conversation> => parseWith(conversationSchema, data) as Result<Conversation>;
export const parsePreferences = (data: unknown): Result<Preferences> => parseWith(preferencesSchema, data) as Result<Preferences>;
export const parseTemplateDraft = (data: unknown): Result<TemplateDraft> => parseWith(templateDraftSchema, data) as Result<TemplateDraft>;
export const parseUpdateStatus = (data: unknown): Result<UpdateStatus> => parseWith(updateStatusSchema, data);
/** The team for "Transfer to" (getTeam's answer). */
export const parseTeam = (data: unknown): Result<TeamMember[]> => parseWith(z.array(teamMemberSchema), data);

/**
 * An agent's state on the wallboard: the team's presences, a break (with its `reason`) and after-call
 * work; a state this window does not know yet is `unknown` rather than the whole board refused.
 */
export const BOARD_STATES = [...TEAM_PRESENCES.filter((p) => p !== 'call_waiting'), 'break', 'after_call_work', 'unknown'] as const;
export type BoardState = (typeof BOARD_STATES)[number];
const KNOWN_STATES: ReadonlySet<string> = new Set([...TEAM_PRESENCES, 'break', 'after_call_work']);
// "Call waiting" is still on a call, as the wallboard tells it.
const boardState = (presence: string): BoardState => (presence === 'call_waiting' ? 'on_call' : KNOWN_STATES.has(presence) ? (presence as BoardState) : 'unknown');

const boardAgentSchema = z.object({
  agentId: z.string().min(1).max(128),
  name: z.string().min(1).max(128),
  presence: z.string().max(64).transform(boardState),
  self: z.boolean().optional(),
  /** A break's reason, when the relay tells it. */
  reason: z.string().max(128).optional().catch(undefined),
  /** Since when (unix ms, the relay's clock) the agent is in that state, when the relay tells it. */
  since: z.number().optional().catch(undefined),
});
export type BoardAgent = z.output<typeof boardAgentSchema>;

// The shared schema with its members read as the window needs them of a newer relay (reasons, since, states).
const teamBoardSchema = wallboardSchema.extend({ agents: z.array(boardAgentSchema).max(10_000) });
export type TeamBoard = z.output<typeof teamBoardSchema>;
/** getWallboard's answer. */
export const parseWallboard = (data: unknown): Result<TeamBoard> => parseWith(teamBoardSchema, data);

// A voicemail's file as base64 (4 characters per 3 bytes, padded), no larger than the main process fetches.
const voicemailAudioSchema = z.object({
  mimeType: z.string().min(1).max(200),
  data: z
    .string()
    .max(Math.ceil(VOICEMAIL_MAX_BYTES / 3) * 4)
    .regex(/^[A-Za-z0-9+/]*={0,2}$/),
});
/** getVoicemail's answer. */
export const parseVoicemailAudio = (data: unknown): Result<VoicemailAudio> => parseWith(voicemailAudioSchema, data);

/**
 * The largest recording of the service's this window takes: Ogg Opus in two channels runs near
 * 24 kbit/s, so this holds calls of some six hours.
 */
export const SERVICE_RECORDING_MAX_BYTES = 64 * 1024 * 1024;
const recordingAudioSchema = voicemailAudioSchema.extend({
  data: z
    .string()
    .max(Math.ceil(SERVICE_RECORDING_MAX_BYTES / 3) * 4)
    .regex(/^[A-Za-z0-9+/]*={0,2}$/),
});
/** getServiceRecording's answer, and getRecording's (the team's own recording of the call). */
export const parseRecordingAudio = (data: unknown): Result<VoicemailAudio> => parseWith(recordingAudioSchema, data);

/** getTranscript's answer: its segments as the service's document has them (shared/service-capture.ts). */
export const parseTranscript = (data: unknown): Result<Transcript> => parseWith(z.object({ segments: z.array(transcriptSegmentSchema).max(100_000) }), data);

const shortcutActionSchema = z.enum(SHORTCUT_ACTIONS as [ShortcutAction, ...ShortcutAction[]]);

const pushSchemas: { [N in PushName]: z.ZodType } = {
  callChanged: callStateSchema,
  connectionChanged: connectionSchema,
  historyChanged: z.array(historyEntrySchema),
  settingsChanged: settingsSchema,
  presenceChanged: presenceSchema,
  teamChanged: teamInfoSchema,
  conversationChanged: conversationSchema,
  preferencesChanged: preferencesSchema,
  dialRequested: z.strictObject({ number: z.string().regex(/^[0-9]{6,15}$/), dial: z.boolean() }),
  shortcutPressed: z.strictObject({ action: shortcutActionSchema, localId: z.string().min(1).max(200).optional() }),
  shortcutsRefused: z.strictObject({ refused: z.array(z.strictObject({ action: shortcutActionSchema, accelerator: z.string().min(1).max(64) })).max(SHORTCUT_ACTIONS.length) }),
  updateStatus: updateStatusSchema,
  monitorChanged: z.strictObject({ callId: z.string().min(1).max(512), mode: z.enum(['listen', 'whisper', 'barge', 'left']), reason: z.enum(['left', 'call_ended']).optional(), recording: z.boolean().optional() }),
  customerLegQuality: z.strictObject({ localId: z.string().min(1).max(200), callId: z.string().min(1).max(512), report: legReportSchema }),
};

export function parsePush<N extends PushName>(name: N, payload: unknown): Result<PushPayloads[N]> {
  return parseWith(pushSchemas[name], payload) as Result<PushPayloads[N]>;
}
