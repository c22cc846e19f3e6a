// Supervisors on the team's bridge (relay/REFERENCE.md "Supervisors"): the team's live calls as a
// supervisor sees them, and joining one of them. A supervisor joins a bridged call with a leg of its
// own, in one of three modes, and switches among them without dropping:
// - "Listen": the supervisor hears the customer and the agents; nobody hears the supervisor.
// - "Whisper": the agents hear the supervisor, the customer does not (and the recording does not).
// - "Barge": everyone hears everyone.
// The agents in the call are told "NAME is whispering" and "NAME joined the call"; whether they are
// told of a listen is the team's setting (the relay's `--tell-agents-when-monitored`). Agents who are
// not supervisors get 403 from every endpoint here.
import { z } from 'zod';
import { list } from './i18n/text';
import { legIdSchema } from './bridge';
import { requiredString, ruleMessage } from './validation';

export const MONITOR_MODES = ['listen', 'whisper', 'barge'] as const;
export type MonitorMode = (typeof MONITOR_MODES)[number];
export const monitorModeSchema = z.enum(MONITOR_MODES, ruleMessage('common.oneOf', { values: list(MONITOR_MODES) }));

/** How often an open Team view asks a supervisor's live calls again. */
export const LIVE_CALLS_REFRESH_MS = 1_000;

/** The relay's supervisor endpoints (agent bearer token of a supervisor; 403 `forbidden` for any other agent). */
export const SUPERVISOR_PATHS = {
  /** GET → `LiveCalls`: every live call of the team, now. */
  liveCalls: '/team/calls',
  /**
   * POST `{ mode }` → `{ legId, offer, mode }`: join the call (a leg of the supervisor's own, offered
   * by the node; the window answers it with `monitorAnswer`). 404 no live call; 409 `invalid_state`
   * when the call does not go through the bridge (a direct call), is not answered yet, or the
   * supervisor is an agent of the call; asked again while joined, the same leg's offer again.
   * PUT `{ mode }` → `{ mode }`: switch modes, without dropping (404 when not joined).
   * DELETE → `{ ok: true }`: "Leave" (the leg closes; the call goes on). Leaving twice is no error.
   */
  monitor: (callId: string) => `/team/calls/${encodeURIComponent(callId)}/monitor`,
  /** POST `{ legId, sdp }` (the window's answer) → `{ ok: true }`; 400 `field: 'sdp'` for an answer the node refused. */
  monitorAnswer: (callId: string) => `/team/calls/${encodeURIComponent(callId)}/monitor/answer`,
} as const;

export const monitorBodySchema = z.object({ mode: monitorModeSchema }, { error: ruleMessage('common.requiredObject') });
export const monitorJoinReplySchema = z.object({ legId: legIdSchema, offer: requiredString(), mode: monitorModeSchema });
export const monitorModeReplySchema = z.object({ mode: monitorModeSchema });

export const LIVE_CALL_STATES = ['ringing', 'talking', 'on_hold', 'transferring'] as const;
export type LiveCallState = (typeof LIVE_CALL_STATES)[number];

const party = z.object({ id: z.string(), name: z.string() });

/** One live call of the team as a supervisor sees it. */
export const liveCallSchema = z.object({
  callId: z.string().min(1),
  direction: z.enum(['incoming', 'outgoing']),
  /** The customer as the service names them: digits with country code and/or a profile name. */
  customer: z.object({ number: z.string().optional(), name: z.string().optional() }),
  /** The agents in the call (empty while it rings for the team). */
  agents: z.array(party).max(16),
  state: z.enum(LIVE_CALL_STATES),
  /** Unix ms: when it started ringing (or was placed). */
  startedAt: z.number(),
  /** Unix ms: when it was answered, absent while it rings. */
  answeredAt: z.number().optional(),
  /** Whether its media goes through the team's bridge: only such a call can be joined. */
  bridged: z.boolean(),
  /** The customer leg's quality as the bridge measures it (bridged calls): an estimated MOS 1–4.5. */
  quality: z.object({ mos: z.number().min(1).max(5), lossPercent: z.number().min(0).max(100).optional(), jitterMs: z.number().min(0).optional() }).optional(),
  /** The team's bridge records the call now (shared/bridge-recording.ts); absent when it does not. */
  recording: z.boolean().optional(),
  /** The supervisors in the call now and how. */
  monitors: z.array(party.extend({ mode: monitorModeSchema })).max(16),
});
export type LiveCall = z.infer<typeof liveCallSchema>;

export const liveCallsSchema = z.object({ at: z.number(), calls: z.array(liveCallSchema).max(10_000) });
export type LiveCalls = z.infer<typeof liveCallsSchema>;
