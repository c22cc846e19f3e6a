import { z } from 'zod';
import type { Direction, EndedCall, EndKind } from './call-state';
import { qualitySummarySchema, type QualitySummary } from './call-quality';
import { ruleTextSchema, type RuleText } from './i18n/text';
import { WRAP_UP_NOTES_MAX } from './team-settings';
import { historyVoicemailSchema, type HistoryVoicemail } from './voicemail';
import { capturedMediaSchema, type CapturedMedia } from './service-capture';

export interface HistoryEntry {
  localId: string;
  callId?: string;
  direction: Direction;
  number?: string;
  userId?: string;
  name?: string;
  outcome: EndKind;
  /** Gateway or local failure code, for outcome "failed". */
  failureCode?: string;
  failureMessage?: string;
  /** `failureMessage` as its code and values, when the catalogue made it: said in the language of the moment it is shown. */
  failureText?: RuleText;
  /** The colleague who took the customer, for outcome "transferred" (the name the window shows). */
  transferredTo?: string;
  /** When the call began ringing or dialing (unix ms). */
  startedAt: number;
  endedAt: number;
  durationSec: number;
  /** Time the call spent on hold, in seconds, when it was held. */
  heldSec?: number;
  /** How the call sounded (shared/call-quality.ts), for calls whose media connected. */
  quality?: QualitySummary;
  /** The agent's wrap-up ("Disposition", "Notes"), once saved. */
  wrapUp?: WrapUp;
  /** The customer's voicemail for this unanswered call (shared/voicemail.ts). */
  voicemail?: HistoryVoicemail;
  /** The service's own recording of the call, when the app asked for one (shared/service-capture.ts). */
  serviceRecording?: CapturedMedia;
  /** The service's transcript of the call, when the app asked for one. */
  transcript?: CapturedMedia;
  /** The team's bridge recorded this call (shared/bridge-recording.ts): "Play recording" fetches it from the relay. */
  teamRecording?: true;
}

/** A call's wrap-up as the agent saved it, and whether the team's record of the call has it yet. */
export interface WrapUp {
  /** One of the team's dispositions, or null for none. */
  disposition: string | null;
  notes: string;
  /** When the agent saved it (unix ms); the relay keeps the last one. */
  savedAt: number;
  /** The relay has it (it answered 200 to this very save). */
  synced: boolean;
  /** Why the relay has not taken it yet (English; retried until it does, or refuses for good). */
  syncError?: string;
  /** The relay refused it for good (e.g. past 24 hours, not this agent's call): it is kept here only. */
  refused?: boolean;
}

export const HISTORY_LIMIT = 500;

export function historyEntryFor(call: EndedCall): HistoryEntry {
  const entry: HistoryEntry = {
    localId: call.localId,
    direction: call.direction,
    outcome: call.end.kind,
    startedAt: call.createdAt,
    endedAt: call.endedAt,
    durationSec: call.durationSec,
  };
  if (call.callId !== undefined) entry.callId = call.callId;
  if (call.heldSec !== undefined && call.heldSec > 0) entry.heldSec = call.heldSec;
  if (call.peer.number !== undefined) entry.number = call.peer.number;
  if (call.peer.userId !== undefined) entry.userId = call.peer.userId;
  if (call.peer.name !== undefined) entry.name = call.peer.name;
  if (call.end.kind === 'failed') {
    entry.failureCode = call.end.code;
    entry.failureMessage = call.end.message;
    if (call.end.text !== undefined) entry.failureText = call.end.text;
  }
  if (call.end.kind === 'transferred') entry.transferredTo = call.end.to;
  return entry;
}

const END_KINDS = ['completed', 'declined', 'missed', 'cancelled', 'no_answer', 'rejected', 'failed', 'answered_elsewhere', 'transferred', 'consult_ended', 'other_partner'] as const satisfies readonly EndKind[];

/** A history entry read from outside (the history file, a push from the main process). */
export const wrapUpSchema = z.object({
  disposition: z.string().min(1).nullable(),
  notes: z.string().max(WRAP_UP_NOTES_MAX),
  savedAt: z.number(),
  synced: z.boolean(),
  syncError: z.string().optional(),
  refused: z.boolean().optional(),
}) satisfies z.ZodType<WrapUp>;

export const historyEntrySchema = z.object({
  localId: z.string().min(1),
  callId: z.string().optional(),
  direction: z.enum(['incoming', 'outgoing']),
  number: z.string().optional(),
  userId: z.string().optional(),
  name: z.string().optional(),
  outcome: z.enum(END_KINDS),
  failureCode: z.string().optional(),
  failureMessage: z.string().optional(),
  // A text this version cannot read (a code a newer one wrote) is dropped: `failureMessage` stands in for it.
  failureText: ruleTextSchema.optional().catch(undefined),
  transferredTo: z.string().optional(),
  startedAt: z.number(),
  endedAt: z.number(),
  durationSec: z.number().nonnegative(),
  heldSec: z.number().nonnegative().optional(),
  quality: qualitySummarySchema.optional(),
  // A wrap-up this version cannot read is dropped rather than the whole entry.
  wrapUp: wrapUpSchema.optional().catch(undefined),
  voicemail: historyVoicemailSchema.optional().catch(undefined),
  serviceRecording: capturedMediaSchema.optional().catch(undefined),
  transcript: capturedMediaSchema.optional().catch(undefined),
  teamRecording: z.literal(true).optional().catch(undefined),
}) satisfies z.ZodType<HistoryEntry>;
