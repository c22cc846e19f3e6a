// SoftphoneApi: the one contract between the renderer and the main process (ARCHITECTURE.md,
// style.md 2). The Electron preload implements it over IPC, the browser host over a WebSocket; the
// renderer cannot tell them apart. Every command takes one object and resolves to a Result; every
// push has an onX(cb) → unsubscribe.
import { z } from 'zod';
import { legIdSchema, type LegReport } from './bridge';
import type { CallState } from './call-state';
import type { Conversation, MediaLinkCheck, SendReceipt } from './conversation';
import { callQualityReportSchema } from './diagnostics';
import type { HistoryEntry } from './history';
import type { LogLevel } from './log';
import { networkSettingsInputSchema, type IceConfig, type RelayTurnStatus } from './ice-servers';
import { freeFormMessageSchema, MEDIA_TYPES, MESSAGE_LIMITS } from './messages';
import { preferencesPatchSchema, type Preferences, type ShortcutAction } from './preferences';
import type { Result } from './result';
import type { SandboxCustomer, SandboxTemplate } from './sandbox';
import { accountSettingsInputSchema, type PublicSettings } from './settings';
import type { TemplateDraft } from './templates';
import { TEAM_SETTINGS_LIMITS, teamSettingsReplySchema, WRAP_UP_NOTES_MAX, type TeamSettings } from './team-settings';
import { TRANSFER_KINDS, type TeamMember } from './transfer';
import type { Wallboard } from './wallboard';
import type { CallbackRequest } from './callbacks';
import type { VoicemailAudio } from './voicemail';
import { serviceCaptureSettingsSchema, type Transcript } from './service-capture';
import type { RecordMode } from './bridge-recording';
import { monitorModeSchema, type LiveCalls, type MonitorMode } from './supervision';
import { updateSettingsSchema, type UpdateSettings, type UpdateStatus } from './updates';
import { english, list, orList, ruleTextSchema, text, textValueSchema, type RuleText, type TextValue } from './i18n/text';
import { ruleMessage } from './validation';

const localId = z.string().min(1, ruleMessage('common.notEmpty')).max(200, ruleMessage('common.tooLong'));
/** The renderer names its outgoing calls, so that their media can be set up before main has seen them. */
const outgoingLocalId = z.string().regex(/^out:[A-Za-z0-9-]{8,100}$/, ruleMessage('commands.outgoingLocalId'));
const sdp = z.string().min(1, ruleMessage('common.notEmpty')).max(64 * 1024, ruleMessage('common.tooLongSize', { size: '64 KiB' }));
/** A customer's number as typed or in gateway digits; the service normalises it. */
const contactNumber = z.string({ error: ruleMessage('common.requiredString') }).min(1, ruleMessage('common.notEmpty')).max(64, ruleMessage('common.tooLong'));

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const satisfies readonly LogLevel[];
const PRESENCE_CHOICES = ['available', 'break', 'dnd'] as const satisfies readonly PresenceChoice[];
/** A break reason or a disposition as the window sends it (shared/team-settings.ts). */
const wrapUpLabel = z
  .string({ error: ruleMessage('common.mustBeString') })
  .min(1, ruleMessage('common.notEmpty'))
  .max(TEAM_SETTINGS_LIMITS.labelCharacters, ruleMessage('common.atMostCharacters', { count: TEAM_SETTINGS_LIMITS.labelCharacters }));

/** A media check's warnings are a sentence or two each, and a message has one file: these bounds leave room and no more. */
export const CONFIRMED_LIMITS = { warnings: 20, characters: 1000 } as const;
/** "Send anyway": each warning text the agent was shown (needs_confirmation's `confirm`), exactly as given. */
const confirmedWarnings = z
  .array(
    z
      .string({ error: ruleMessage('commands.warningsAsTexts') })
      .min(1, ruleMessage('commands.emptyWarning'))
      .max(CONFIRMED_LIMITS.characters, ruleMessage('commands.warningAtMostCharacters', { count: CONFIRMED_LIMITS.characters })),
    { error: ruleMessage('commands.warningList') },
  )
  .max(CONFIRMED_LIMITS.warnings, ruleMessage('commands.atMostWarnings', { count: CONFIRMED_LIMITS.warnings }));

/**
 * A composer's message without its envelope (shared/messages.ts MessageContent): the replymessage
 * body's rules, every one, with the envelope members left out (the service adds them). Derived from
 * the body schema so that the two can never disagree.
 */
const [textBody, imageBody, audioBody, videoBody, documentBody, interactiveBody] = freeFormMessageSchema().options;
const ENVELOPE = { messaging_product: true, recipient_type: true, to: true } as const;
export const messageContentSchema = z.discriminatedUnion(
  'type',
  [textBody.omit(ENVELOPE), imageBody.omit(ENVELOPE), audioBody.omit(ENVELOPE), videoBody.omit(ENVELOPE), documentBody.omit(ENVELOPE), interactiveBody.omit(ENVELOPE)],
  { error: ruleMessage('messages.contentType', { values: list(['text', 'image', 'audio', 'video', 'document', 'interactive']) }) },
);

/**
 * A draft as parseTemplate returned it. The service does not trust its `fields`: it finds the
 * variables again in `template`, so a value can only land where the pasted template had a variable.
 */
const templateDraftSchema = z.strictObject({
  name: z.string().max(512),
  languageCode: z.string().max(32),
  recipient: z.strictObject({ raw: z.string().max(256).optional(), placeholder: z.boolean(), number: z.string().max(32).optional() }),
  fields: z
    .array(
      z.strictObject({
        path: z.string().max(300),
        label: z.string().max(300),
        sample: z.string().max(4096),
        placeholder: z.boolean(),
        kind: z.enum(['text', 'link', 'payload', 'coupon_code', 'fallback_value']),
      }),
    )
    .max(100, ruleMessage('commands.tooManyVariables', { most: 100 })),
  template: z.looseObject({ name: z.string({ error: ruleMessage('templates.nameRequired') }), language: z.looseObject({ code: z.string() }) }),
  pastedProduct: z.string().max(64).optional(),
});

/** Payload schemas for every command: both hosts parse with these before anything else runs. */
export const commandSchemas = {
  getSnapshot: z.strictObject({}),
  /**
   * The Call button, with the complete local offer: main checks and normalises the number, opens the
   * call under the renderer's localId, POSTs initiate, and resolves once the gateway has placed it.
   */
  // `anyway`: the agent accepts a number the numbering-plan metadata does not list as valid ("Call anyway").
  startCall: z.strictObject({ localId: outgoingLocalId, to: z.string().max(64, ruleMessage('common.tooLong')), sdp, anyway: z.boolean({ error: ruleMessage('common.mustBeBoolean') }).optional() }),
  /**
   * The Answer button, with the complete local answer made while the call rang: main claims the call
   * on the relay, then accepts, and resolves once the gateway has the answer (answered_elsewhere
   * when a colleague's claim won: nothing was sent to the gateway).
   */
  answerCall: z.strictObject({ localId, sdp }),
  declineCall: z.strictObject({ localId }),
  hangUp: z.strictObject({ localId }),
  /**
   * Hold: the customer hears the hold music, the agent's microphone is not sent. Resume takes the call
   * back into hand; with a second call in hand, that one is held in the same step ("Swap").
   */
  holdCall: z.strictObject({ localId }),
  resumeCall: z.strictObject({ localId }),
  /**
   * "Mute" / "Unmute": the agent's microphone on a live call sends silence, or sounds again. The
   * call's `muted` follows, pushed to every window (each window's microphone follows it).
   */
  setMuted: z.strictObject({ localId, muted: z.boolean({ error: ruleMessage('common.mustBeBoolean') }) }),
  /**
   * A bridged call rejoining (its `rejoin`: the window that carried its audio went, or its network
   * changed): the window's answer to the relay's offer of a new leg (`rejoin.legId`, `offerSdp`).
   * The first window to answer takes the call's audio and connects its leg once the call says
   * `rejoin.answered`; another's answer, or one to an offer replaced since, is refused invalid_state.
   */
  rejoinCall: z.strictObject({ localId, legId: legIdSchema, sdp }),
  /**
   * A bridged call ringing here: the window's answer, made while it rings, before the click. The
   * call's leg to the team's bridge connects now (`connected: true`: ICE may start) and carries
   * nothing until Answer, which then waits for no leg. `legId` absent: the ring's own offer (the
   * call's `offerSdp`). When another window's answer took that leg, the reply is a leg of this
   * window's own (`connected: false`, `legId`, `offer`): its answer comes back with that `legId`.
   * Refused invalid_state for any other call.
   */
  ringAnswer: z.strictObject({ localId, sdp, legId: legIdSchema.optional() }),
  /**
   * Bridged calls only (shared/transfer.ts): "Transfer" or "Consult" to a colleague (`to`: an agent
   * id, or "available" for "Anyone available"); then "Cancel transfer" / "Cancel consult",
   * "Complete transfer", "Add to call". How each came out reaches the call as relay events.
   */
  transferCall: z.strictObject({ localId, to: z.string().min(1, ruleMessage('common.notEmpty')).max(128, ruleMessage('common.tooLong')), kind: z.enum(TRANSFER_KINDS, ruleMessage('common.oneOf', { values: list(TRANSFER_KINDS) })) }),
  cancelTransfer: z.strictObject({ localId }),
  completeTransfer: z.strictObject({ localId }),
  addToCall: z.strictObject({ localId }),
  /** The team for "Transfer to": every agent with its presence (this agent marked `self`). */
  getTeam: z.strictObject({}),
  reportMedia: z.discriminatedUnion('state', [
    z.strictObject({ localId, state: z.literal('connected') }),
    /**
     * `reason` in English (logs, and what a window of an older version sent); `reasonText` the same
     * as its code and values, which the ended call and its history entry keep, so that each window
     * says it in its language whenever it shows it. One this version cannot read is dropped.
     */
    z.strictObject({ localId, state: z.literal('failed'), reason: z.string().max(500), reasonText: ruleTextSchema.optional().catch(undefined) }),
  ]),
  /** How a call sounded, as its media closes: the summary goes to the call's history entry, the samples to diagnostics. */
  reportQuality: callQualityReportSchema,
  saveSettings: z.strictObject({ settings: accountSettingsInputSchema }),
  /** Forget the account and return to the embedded sandbox. */
  clearSettings: z.strictObject({}),
  /** Settings → Network: STUN and TURN servers, the TURN username and password, "Relay only". Kept apart from the account. */
  saveNetworkSettings: z.strictObject({ network: networkSettingsInputSchema }),
  /**
   * The RTCConfiguration parts a call's peer connection is built with: the agent's servers and the
   * relay's short-lived TURN credentials. The one answer that carries TURN credentials to the window
   * (RTCPeerConnection takes them from nowhere else); the media engine uses them and keeps them out of the store.
   */
  getIceConfig: z.strictObject({}),
  /**
   * Settings → "Export diagnostics": one JSON file for support with the recent logs, the last calls'
   * quality samples and SDP summaries, versions, the OS, the settings without secrets and the relay
   * connection history. `window` adds what only the window knows (its browser and language).
   */
  exportDiagnostics: z.strictObject({
    window: z
      .strictObject({
        userAgent: z.string().max(512, ruleMessage('common.tooLong')),
        language: z.string().max(35, ruleMessage('common.tooLong')),
        hostKind: z.enum(['electron', 'browser']),
      })
      .optional(),
  }),
  /**
   * The window's own log records (already redacted there), for the log files and "Export
   * diagnostics": main redacts them again and writes them under the logger "window".
   */
  writeLogs: z.strictObject({
    records: z
      .array(
        z.strictObject({
          t: z.string().max(40, ruleMessage('common.tooLong')),
          level: z.enum(LOG_LEVELS, ruleMessage('common.mustBe', { values: orList(LOG_LEVELS) })),
          logger: z.string().max(64, ruleMessage('common.tooLong')),
          msg: z.string().max(2000, ruleMessage('common.tooLongAtMost', { count: 2000 })),
          fields: z
            .record(z.string().max(64), z.unknown())
            .refine((f) => JSON.stringify(f).length <= 4096, ruleMessage('commands.jsonAtMost', { count: 4096 }))
            .optional(),
        }),
        { error: ruleMessage('commands.logRecordList') },
      )
      .max(100, ruleMessage('commands.atMostRecords', { count: 100 })),
  }),
  /** "Test my setup", main's part: is the relay reachable, and does it hand out TURN credentials? */
  checkRelay: z.strictObject({}),
  /** Sandbox only: a simulated customer calls the business. */
  simulateIncomingCall: z.strictObject({ number: z.string().min(1).max(64) }),
  /** Sandbox only: the customer on this call hangs up. */
  simulateCustomerHangUp: z.strictObject({ localId }),
  /**
   * The agent's own choice of presence; while on a call the relay is told "on_call" whatever it is,
   * and "after_call_work" after one. A break names one of the team's break reasons (`reason`,
   * TeamSettings.breakReasons; refused invalid_input naming `reason` otherwise); nothing else takes one.
   */
  setPresence: z.strictObject({
    status: z.enum(PRESENCE_CHOICES, ruleMessage('common.oneOf', { values: list(PRESENCE_CHOICES) })),
    reason: wrapUpLabel.optional(),
  }),
  /** The "Team" view: the team's wallboard as the relay has it now (shared/wallboard.ts). */
  getWallboard: z.strictObject({}),
  /** "Ready": after-call work ends now (refused invalid_state while the team's required disposition is not saved). */
  endAfterCallWork: z.strictObject({}),
  /**
   * "Save wrap-up" for an ended call of recent calls (`localId`): kept with its history entry at
   * once, and sent to the relay, which keeps it with the team's record of the call (retried until it
   * takes it). `disposition` one of the team's (null: none); editable for WRAP_UP_EDITABLE_MS after the call.
   */
  saveWrapUp: z.strictObject({
    localId,
    disposition: wrapUpLabel.nullable(),
    notes: z.string({ error: ruleMessage('common.mustBeString') }).max(WRAP_UP_NOTES_MAX, ruleMessage('common.atMostCharacters', { count: WRAP_UP_NOTES_MAX })),
  }),
  /**
   * "Play voicemail": the audio of a voicemail. `callId` names the call; the file kept on this machine
   * when there is one, else fetched from the service by `mediaId` (the entry's, or the team's record's
   * from the Team view). not_found when neither is known.
   */
  getVoicemail: z.strictObject({ callId: z.string().min(1).max(512), mediaId: z.string().min(1).max(512).optional() }),
  /** "Call back": takes the team's callback request `id` for this agent (shared/callbacks.ts); the window then dials. Refused conflict ("Taken by NAME") when a colleague has it. */
  takeCallback: z.strictObject({ id: z.string().min(1).max(512) }),
  /**
   * "Record" / "Stop recording" on a bridged call of a team that records on demand
   * (shared/bridge-recording.ts). The relay tells every window in the call (`call.recording`).
   */
  setRecording: z.strictObject({ localId, recording: z.boolean({ error: ruleMessage('common.mustBeBoolean') }) }),
  /** "Play recording": the team's recording of the call of recent calls `localId`, fetched from the relay (not_found while it has none). */
  getRecording: z.strictObject({ localId }),
  /** Supervisors, the Team view: every live call of the team now (shared/supervision.ts); forbidden for other agents. */
  getLiveCalls: z.strictObject({}),
  /**
   * "Listen", "Whisper", "Barge" on a live call: joins it (the relay's node offers a leg; the window
   * answers it with answerMonitor) or, already joined, switches to `mode` without dropping.
   */
  startMonitor: z.strictObject({ callId: z.string().min(1).max(512), mode: monitorModeSchema }),
  /** The window's answer to startMonitor's offer. */
  answerMonitor: z.strictObject({ callId: z.string().min(1).max(512), legId: legIdSchema, sdp: z.string().min(1).max(64 * 1024) }),
  /** "Leave": the supervisor's leg closes; the call goes on. */
  leaveMonitor: z.strictObject({ callId: z.string().min(1).max(512) }),
  /** Sandbox only: the customer of the last unanswered call from `number` leaves a voicemail. */
  simulateVoicemail: z.strictObject({ number: z.string().min(1).max(64) }),
  /** Sandbox only: the customer `number` asks to be called back (about its last call). */
  simulateCallbackRequest: z.strictObject({ number: z.string().min(1).max(64) }),
  /** Settings → the service's own recording and transcription of calls (shared/service-capture.ts); every window gets settingsChanged. */
  saveServiceCapture: z.strictObject({ serviceCapture: serviceCaptureSettingsSchema }),
  /** "Play recording": the service's recording of the call of recent calls `localId` (the kept file, else fetched by its media id). */
  getServiceRecording: z.strictObject({ localId }),
  /** "Transcript": the service's transcript of the call of recent calls `localId`, its segments in order. */
  getTranscript: z.strictObject({ localId }),
  /** Changes some of the desk preferences (shared/preferences.ts); every window gets preferencesChanged. */
  setPreferences: z.strictObject({ preferences: preferencesPatchSchema }),

  // ---- messages (gateway-spec.md 2–4.1, 4.3) ----
  /**
   * A free-form message; media links are checked first; refused while the 24-hour window is closed.
   * A file the gateway takes but that plays badly somewhere (gateway-spec.md 2.3: B-frames, moov after
   * mdat) answers needs_confirmation with the warnings in `confirm`. "Send anyway" sends the same
   * message with those texts in `confirmed`: it goes out only if every warning the check finds now is
   * among them (a file changed since the agent saw the warnings asks again), and a file that breaks
   * a rule is refused whatever is confirmed.
   */
  sendMessage: z.strictObject({ to: contactNumber, content: messageContentSchema, confirmed: confirmedWarnings.optional() }),
  /**
   * A media link judged on its bytes against gateway-spec.md 2.3's table: GETs with a Range, for the
   * head of the file and, where the format needs it, its tail (shared/media-fetch.ts); nothing is sent.
   */
  checkMediaLink: z.strictObject({
    type: z.enum(MEDIA_TYPES, ruleMessage('common.oneOf', { values: list(MEDIA_TYPES) })),
    link: z.string({ error: ruleMessage('common.requiredString') }).min(1, ruleMessage('common.notEmpty')).max(2048, ruleMessage('common.tooLongAtMost', { count: 2048 })),
  }),
  /** The console's "API Payload" JSON → the template, its recipient and one field per variable. */
  parseTemplate: z.strictObject({ pasted: z.string({ error: ruleMessage('common.requiredString') }).max(128 * 1024, ruleMessage('common.tooLongSize', { size: '128 KB' })) }),
  /** A pasted template with its variables filled, to `to`; templates go out whatever the window. */
  sendTemplate: z.strictObject({
    draft: templateDraftSchema,
    to: contactNumber,
    values: z.record(z.string().max(300), z.string().max(4096, ruleMessage('common.tooLongAtMost', { count: 4096 }))),
  }),
  /** The voice_call button; its payload routes the customer's call back to this agent (relay/REFERENCE.md "voice_call calls"). */
  sendCallButton: z.strictObject({
    to: contactNumber,
    bodyText: z.string().max(MESSAGE_LIMITS.interactiveBody, ruleMessage('common.atMostCharacters', { count: MESSAGE_LIMITS.interactiveBody })).optional(),
    displayText: z.string().max(MESSAGE_LIMITS.voiceCallDisplayText, ruleMessage('common.atMostCharacters', { count: MESSAGE_LIMITS.voiceCallDisplayText })).optional(),
    ttlMinutes: z
      .number({ error: ruleMessage('messages.minutes') })
      .int(ruleMessage('messages.wholeMinutes'))
      .min(MESSAGE_LIMITS.voiceCallTtlMinutesMin, ruleMessage('messages.atLeastMinutes', { count: MESSAGE_LIMITS.voiceCallTtlMinutesMin }))
      .max(MESSAGE_LIMITS.voiceCallTtlMinutesMax, ruleMessage('messages.atMostMinutes', { count: MESSAGE_LIMITS.voiceCallTtlMinutesMax, days: MESSAGE_LIMITS.voiceCallTtlMinutesMax / 1440 }))
      .optional(),
  }),
  /** protocol.md: free-form inside the window; outside it the answer is window_closed (send a template). */
  requestCallPermission: z.strictObject({
    to: contactNumber,
    bodyText: z.string().max(MESSAGE_LIMITS.interactiveBody, ruleMessage('common.atMostCharacters', { count: MESSAGE_LIMITS.interactiveBody })).optional(),
  }),
  /** A contact's timeline and window. */
  getConversation: z.strictObject({ contact: contactNumber }),
  /** Sandbox only: the customer writes to the business (opens the window). */
  simulateInboundMessage: z.strictObject({
    number: z.string().min(1).max(64),
    text: z.string({ error: ruleMessage('common.requiredString') }).min(1, ruleMessage('common.notEmpty')).max(4096, ruleMessage('common.tooLong')),
  }),
  /** Sandbox only: the customer presses the last call button sent to them. */
  simulatePressCallButton: z.strictObject({ number: z.string().min(1).max(64) }),

  // ---- updates of the installed app (shared/updates.ts; the browser host answers not_available) ----
  /** The update feed and channel. */
  getUpdateSettings: z.strictObject({}),
  /** Saves the feed and channel, then checks at once ('' turns updates off). */
  setUpdateSettings: z.strictObject({ settings: updateSettingsSchema }),
  /** "Check for updates": resolves with the status the check led to (a found update then downloads; watch updateStatus). */
  checkForUpdates: z.strictObject({}),
  /** "Restart to update": installs the `ready` update and restarts; refused (invalid_state) while a call is live. */
  restartToUpdate: z.strictObject({}),
} as const;

export type CommandName = keyof typeof commandSchemas;
export const COMMAND_NAMES = Object.keys(commandSchemas) as CommandName[];
export type CommandParams<N extends CommandName> = z.input<(typeof commandSchemas)[N]>;

export type ConnectionState =
  | { status: 'connecting'; since: number }
  | { status: 'connected'; since: number }
  /** `lastError` in English (diagnostics, logs); `lastErrorText` the same as its code and values, for the window. */
  | { status: 'reconnecting'; since: number; lastError: string; lastErrorText?: RuleText };

/** Reconnecting since `since`, for a reason of the catalogue. */
export const reconnectingFor = (since: number, reason: RuleText): ConnectionState => ({ status: 'reconnecting', since, lastError: english(reason), lastErrorText: reason });

/** What the agent chose in the presence control (kept across restarts); a break has its reason beside it. */
export type PresenceChoice = 'available' | 'break' | 'dnd';
/**
 * What the relay is told (relay/REFERENCE.md PUT /presence): "on_call" while a call is placed, answered or
 * under way; "call_waiting" instead while there is exactly one such call and the agent asked to be rung
 * during a call ("Ring me during a call"): a new call may ring it then.
 */
export const PRESENCE_STATUSES = ['available', 'on_call', 'call_waiting', 'dnd', 'break', 'after_call_work'] as const;
export type PresenceStatus = (typeof PRESENCE_STATUSES)[number];
export interface AgentPresence {
  choice: PresenceChoice;
  status: PresenceStatus;
  /** The team's break reason, with the choice "break". */
  breakReason?: string;
  /** After-call work under way: status "after_call_work" while no call keeps the agent busy. */
  afterCallWork?: AfterCallWork;
}

/**
 * After-call work: it starts when an answered call ends and leaves no other call live, and lasts the
 * team's afterCallWorkSeconds (counted down in the window), or until "Ready". With the team's
 * dispositionRequired it lasts, past the countdown too, until the call's wrap-up is saved.
 */
export interface AfterCallWork {
  /** The ended call it follows (its recent-calls entry). */
  localId: string;
  /** The service's id of that call, when it had one. */
  callId?: string;
  startedAt: number;
  /** When the countdown reaches zero (unix ms). */
  endsAt: number;
  /** The team requires a disposition and this call's wrap-up is not saved yet: "Ready" waits for it. */
  waitingForWrapUp: boolean;
}

/** A supervisor is an agent too, who also sees and steps into the team's calls. */
export const AGENT_ROLES = ['agent', 'supervisor'] as const;
export type AgentRole = (typeof AGENT_ROLES)[number];

/** The agent's team as the relay tells it (GET /me, GET /team/settings): its id and role, and the team's settings. */
export interface TeamInfo {
  /** This agent's id in the team (absent from relays that did not say it). */
  agentId?: string;
  role: AgentRole;
  settings: TeamSettings;
  /** The team's bridge records calls (the relay's `--record`; absent when it never does). */
  record?: Exclude<RecordMode, 'never'>;
}
export const teamInfoSchema = z.object({ agentId: z.string().min(1).max(64).optional(), role: z.enum(AGENT_ROLES), settings: teamSettingsReplySchema, record: z.enum(['on-demand', 'always']).optional() }) satisfies z.ZodType<TeamInfo>;

export interface AppSnapshot {
  mode: 'sandbox' | 'account';
  calls: CallState[];
  history: HistoryEntry[];
  connection: ConnectionState;
  settings: PublicSettings;
  /** Present in sandbox mode: the simulated customers to call or be called by. */
  sandboxCustomers?: SandboxCustomer[];
  /** The agent's presence; absent from a service that does not report presence. */
  presence?: AgentPresence;
  /** The desk preferences; absent from a service that keeps none (the defaults apply). */
  preferences?: Preferences;
  /** The most recent conversations (at most SNAPSHOT_CONVERSATIONS), each with its window and timeline. */
  conversations?: Conversation[];
  /** Present in sandbox mode: the sandbox account's templates, with their "API Payload". */
  sandboxTemplates?: SandboxTemplate[];
  /** Where updates of the installed app stand; changes arrive as updateStatus pushes. */
  updateStatus?: UpdateStatus;
  /** The agent's role and the team's settings; the defaults until the relay has told them. */
  team?: TeamInfo;
}

/**
 * checkMediaLink's answer: the check's findings (MediaLinkCheck: `warnings` are notes that need
 * nothing, `confirm` the media rules "Send anyway" accepts) and what the bytes are, in words, for the
 * composer's link hint ("8-bit RGB PNG", "MP4: H.264 Baseline, AAC").
 */
export interface MediaLinkCheckResult extends MediaLinkCheck {
  description?: string;
  /** The same as the catalogue's texts and names, for the window to say in the agent's language. */
  descriptionText?: TextValue;
}

/** The reply of ringAnswer: connected ahead, or a leg of the window's own to answer instead. */
export type RingAnswerReply = { connected: true } | { connected: false; legId: string; offer: string };

export interface CommandResults {
  getSnapshot: AppSnapshot;
  startCall: { localId: string; to: string; callId: string };
  answerCall: null;
  declineCall: null;
  hangUp: null;
  holdCall: null;
  resumeCall: null;
  setMuted: null;
  rejoinCall: null;
  ringAnswer: RingAnswerReply;
  transferCall: { transferId: string };
  cancelTransfer: null;
  completeTransfer: null;
  addToCall: null;
  getTeam: TeamMember[];
  reportMedia: null;
  reportQuality: null;
  saveSettings: PublicSettings;
  clearSettings: PublicSettings;
  saveNetworkSettings: PublicSettings;
  getIceConfig: IceConfig;
  exportDiagnostics: { fileName: string; content: string };
  checkRelay: RelayCheck;
  writeLogs: null;
  simulateIncomingCall: { callId: string };
  simulateCustomerHangUp: null;
  setPresence: AgentPresence;
  getWallboard: Wallboard;
  endAfterCallWork: AgentPresence;
  saveWrapUp: HistoryEntry;
  getVoicemail: VoicemailAudio;
  saveServiceCapture: PublicSettings;
  getServiceRecording: VoicemailAudio;
  getTranscript: Transcript;
  takeCallback: CallbackRequest;
  simulateVoicemail: { callId: string };
  simulateCallbackRequest: { callId: string };
  setRecording: { recording: boolean };
  getRecording: VoicemailAudio;
  getLiveCalls: LiveCalls;
  /** A join: the leg to answer (`offer`); a switch of a joined call: its mode alone. */
  startMonitor: { callId: string; mode: MonitorMode; legId?: string; offer?: string };
  answerMonitor: null;
  leaveMonitor: null;
  setPreferences: Preferences;
  sendMessage: SendReceipt;
  checkMediaLink: MediaLinkCheckResult;
  parseTemplate: TemplateDraft;
  sendTemplate: SendReceipt;
  sendCallButton: SendReceipt;
  requestCallPermission: SendReceipt;
  getConversation: Conversation;
  simulateInboundMessage: { messageId: string };
  simulatePressCallButton: { callId: string };
  getUpdateSettings: UpdateSettings;
  setUpdateSettings: UpdateSettings;
  checkForUpdates: UpdateStatus;
  restartToUpdate: null;
}

/** Pushes from main to the renderer. */
/** The customerLegQuality push: one report of a bridged call's customer leg (shared/bridge.ts LegReport). */
export interface CustomerLegQuality {
  localId: string;
  callId: string;
  report: LegReport;
}

/** The monitorChanged push: the supervisor's own join of a call changed from the relay's side (the call ended under it). */
export interface MonitorChange {
  callId: string;
  mode: MonitorMode | 'left';
  reason?: 'left' | 'call_ended';
  /** The joined call records now, or no longer, as its `call.recording` said; absent until the relay said either. */
  recording?: boolean;
}

export interface PushPayloads {
  /** Supervisors: their join of a live call changed (shared/supervision.ts). */
  monitorChanged: MonitorChange;
  callChanged: CallState;
  connectionChanged: ConnectionState;
  historyChanged: HistoryEntry[];
  /** Settings or mode changed: the renderer refetches the snapshot. */
  settingsChanged: PublicSettings;
  presenceChanged: AgentPresence;
  /** The relay told a new role or team settings (at connect, or the team's file was reloaded). */
  teamChanged: TeamInfo;
  /** A contact's timeline or window changed (a message, a status, the window opening or closing). */
  conversationChanged: Conversation;
  preferencesChanged: Preferences;
  /**
   * A tel: or callto: link (or GET /dial) handed this window a number: it fills the dialer, or dials
   * at once when `dial` is true. Already normalised to gateway digits.
   */
  dialRequested: { number: string; dial: boolean };
  /**
   * Electron: a global shortcut was pressed while another application had the focus, or a
   * notification's Answer or Decline button, which names its call in `localId`: that call only, and
   * nothing when it no longer rings.
   */
  shortcutPressed: { action: ShortcutAction; localId?: string };
  /**
   * Electron: the global shortcuts another application holds, which work only while the window has
   * the focus; sent when that changes and to each page that starts listening ([] when none).
   */
  shortcutsRefused: { refused: Array<{ action: ShortcutAction; accelerator: string }> };
  /** Where updates of the installed app stand (checking, downloading, ready to restart, …). */
  updateStatus: UpdateStatus;
  /**
   * A bridged call's customer leg as the bridge measures it (cumulative counts, jitter, round trip),
   * about once a second while the call is active: the window judges it beside its own leg
   * (shared/bridged-quality.ts). Never sent for a direct call.
   */
  customerLegQuality: CustomerLegQuality;
}
export type PushName = keyof PushPayloads;
export const PUSH_NAMES: readonly PushName[] = ['callChanged', 'connectionChanged', 'historyChanged', 'settingsChanged', 'presenceChanged', 'teamChanged', 'conversationChanged', 'preferencesChanged', 'dialRequested', 'shortcutPressed', 'shortcutsRefused', 'updateStatus', 'customerLegQuality', 'monitorChanged'];
export type PushMessage = { [N in PushName]: { name: N; payload: PushPayloads[N] } }[PushName];

export type Unsubscribe = () => void;
export const pushListenerName = <N extends PushName>(name: N) => `on${name[0]!.toUpperCase()}${name.slice(1)}` as `on${Capitalize<N>}`;

export type SoftphoneCommands = { [N in CommandName]: (params: CommandParams<N>) => Promise<Result<CommandResults[N]>> };
export type SoftphonePushes = { [N in PushName as `on${Capitalize<N>}`]: (cb: (payload: PushPayloads[N]) => void) => Unsubscribe };
export type SoftphoneApi = SoftphoneCommands & SoftphonePushes;

/** What a host wraps: the main-process service behind both transports. */
export interface SoftphoneBackend {
  handle<N extends CommandName>(name: N, params: z.output<(typeof commandSchemas)[N]>): Promise<Result<CommandResults[N]>>;
  subscribe(listener: (push: PushMessage) => void): Unsubscribe;
  /**
   * The window that owned these calls' media is gone (reloaded, closed, crashed): their audio went
   * with it. A bridged call this agent is in rejoins with a new leg, which the next window answers
   * (`rejoinCall`); any other ends now, with `reason` and a terminate, instead of showing
   * "Connected" with no media until the service cuts them. 'all': every call under way (the
   * Electron host has one window).
   */
  windowGone?(calls: readonly string[] | 'all', reason: RuleText): Promise<void>;
}

/** "Test my setup": the relay's part. */
export interface RelayCheck {
  /** GET /me answered with this agent's id. */
  reachable: boolean;
  /** The round trip of that request, when it answered. */
  roundTripMs?: number;
  /** Why not, in English. */
  problem?: string;
  /** `problem` as its code and values, when the catalogue made it. */
  problemText?: RuleText;
  relayTurn: RelayTurnStatus;
}

/** Why a call ended when its window went (shown in recent calls). */
export const WINDOW_GONE_REASON = {
  reloaded: text('callMedia.windowReloaded'),
  crashed: text('callMedia.windowCrashed'),
} as const satisfies Readonly<Record<string, RuleText>>;

/**
 * An AppError (shared/result.ts) as it arrives from a host, for the window's edge to check. The
 * texts are checked too; one that does not hold (a code this window does not know) is dropped and
 * the English `message` stands in for it.
 */
export const appErrorSchema = z.looseObject({
  code: z.string(),
  message: z.string(),
  field: z.string().optional(),
  gatewayCode: z.number().optional(),
  httpStatus: z.number().optional(),
  detail: z.string().optional(),
  text: ruleTextSchema.optional().catch(undefined),
  issues: z.array(z.strictObject({ field: z.string(), text: textValueSchema })).optional().catch(undefined),
  confirm: z.array(z.string()).optional(),
  confirmTexts: z.array(ruleTextSchema).optional().catch(undefined),
});

/** The browser host's WebSocket frames. */
export const wsClientFrameSchema = z.strictObject({
  id: z.number().int().nonnegative(),
  command: z.enum(COMMAND_NAMES as [CommandName, ...CommandName[]]),
  params: z.unknown(),
});
export type WsClientFrame = z.infer<typeof wsClientFrameSchema>;
export type WsServerFrame = { kind: 'result'; id: number; result: Result<unknown> } | { kind: 'push'; push: PushMessage };
