// The normalised events the relay delivers to agents (relay/REFERENCE.md documents the wire format).
// Webhooks (protocol.md) are normalised into these by shared/webhook.ts; times are unix milliseconds.
import { z } from 'zod';
import { colleagueSchema, TRANSFER_KINDS, TRANSFER_MISSES, TRANSFER_STATES } from './transfer';

const callError = z.object({ code: z.number(), message: z.string(), details: z.string().optional() });
export type CallErrorInfo = z.infer<typeof callError>;

const peer = {
  /** Digits with country code; absent when the payload carries only a business-scoped user id. */
  from: z.string().optional(),
  fromUserId: z.string().optional(),
  name: z.string().optional(),
};

export const relayEventSchema = z.discriminatedUnion('type', [
  /** A customer calls the business (calls[].event "connect", direction USER_INITIATED, SDP offer). */
  z.object({
    type: z.literal('call.incoming'),
    callId: z.string().min(1),
    ...peer,
    to: z.string().optional(),
    sdp: z.string().min(1),
    timestamp: z.number(),
    ctaPayload: z.string().optional(),
    deeplinkPayload: z.string().optional(),
    /**
     * The call's media ends on the team's bridge (bridge/REFERENCE.md): the app answers a leg of its
     * own that it asks the relay for, never `sdp`, which is the bridge's to answer.
     */
    bridged: z.literal(true).optional(),
  }),
  /** The customer answered a business-initiated call (connect with the SDP answer). */
  z.object({
    type: z.literal('call.answered'),
    callId: z.string().min(1),
    sdp: z.string().min(1),
    timestamp: z.number(),
  }),
  /** Progress of a business-initiated call. ACCEPTED may come after media flows: never gate media on it. */
  z.object({
    type: z.literal('call.status'),
    callId: z.string().min(1),
    status: z.enum(['RINGING', 'ACCEPTED', 'REJECTED']),
    timestamp: z.number(),
    /** The customer called: digits with country code, and/or the business-scoped user id when the number is withheld. */
    recipientId: z.string().optional(),
    recipientUserId: z.string().optional(),
    /** The `biz_opaque_callback_data` the call was placed with, echoed by the service. */
    opaque: z.string().max(512).optional(),
  }),
  z.object({
    type: z.literal('call.terminated'),
    callId: z.string().min(1),
    status: z.enum(['COMPLETED', 'FAILED']),
    timestamp: z.number(),
    startTime: z.number().optional(),
    endTime: z.number().optional(),
    durationSec: z.number().optional(),
    errors: z.array(callError).optional(),
    /** The `biz_opaque_callback_data` the call was accepted or placed with, echoed by the service. */
    opaque: z.string().max(512).optional(),
  }),
  /**
   * The team's bridge can no longer carry the call (relay/REFERENCE.md "Bridge nodes"): the node that
   * held its media is gone (missed its heartbeats, left, or cannot be reached), or the customer's leg
   * on it failed. The call is over: the app ends it as failed and tells the gateway.
   *
   * `agent_not_back`: this agent's leg went (a reload, a crash, a network change) and the agent did not
   * rejoin within the relay's window (`awaySec`, in seconds). With `goesOn` the call goes on with
   * colleagues and only this agent's part is over (no terminate); without it the customer was alone
   * and the call is ended.
   */
  z.object({
    type: z.literal('call.bridge_failed'),
    callId: z.string().min(1),
    reason: z.enum(['node_gone', 'customer_leg_failed', 'agent_not_back']),
    goesOn: z.literal(true).optional(),
    awaySec: z.number().nonnegative().optional(),
    timestamp: z.number(),
  }),
  /**
   * A colleague transfers a bridged call to this agent, or asks it to consult (shared/transfer.ts):
   * the card "Transfer from NAME" / "Consult from NAME" rings with the customer's name and number
   * (`from`, `fromUserId`, `name`, as in `call.incoming`). `legId` and `sdp` are this agent's own leg
   * on the bridge, which the window answers as it answers a call's offer; the answer goes to the
   * relay (TRANSFER_PATHS.answer), never to the gateway.
   */
  z.object({
    type: z.literal('call.transfer_ring'),
    callId: z.string().min(1),
    transferId: z.string().min(1),
    kind: z.enum(TRANSFER_KINDS),
    by: colleagueSchema,
    ...peer,
    legId: z.string().min(1),
    sdp: z.string().min(1),
    timestamp: z.number(),
  }),
  /**
   * What a transfer came to, told to one agent in the words that concern it (shared/transfer.ts
   * TRANSFER_STATES); `agentId` is that agent, `colleague` the other agent it is about.
   */
  z.object({
    type: z.literal('call.transfer_update'),
    callId: z.string().min(1),
    transferId: z.string().min(1),
    kind: z.enum(TRANSFER_KINDS),
    agentId: z.string().min(1),
    state: z.enum(TRANSFER_STATES),
    colleague: colleagueSchema.optional(),
    reason: z.enum(TRANSFER_MISSES).optional(),
    timestamp: z.number(),
  }),
  /**
   * The service's own recording or transcript of a call is ready (protocol.md
   * `call_recording_available`, `call_transcription_available`; shared/service-capture.ts). Comes
   * after the terminate; never rings. `url` lives 5 minutes, `mediaId` 7 days.
   */
  z.object({
    type: z.literal('call.capture_available'),
    callId: z.string().min(1),
    kind: z.enum(['recording', 'transcript']),
    mediaId: z.string().min(1),
    url: z.string().min(1),
    mimeType: z.string().optional(),
    sha256: z.string().optional(),
    timestamp: z.number(),
  }),
  /**
   * The team's bridge records the call now (`recording: true`) or no longer (shared/bridge-recording.ts):
   * sent to every agent in the call when it changes, and to an agent who joins a call that records.
   * `by`: the agent who started or stopped it on demand (absent when the team records always).
   */
  z.object({
    type: z.literal('call.recording'),
    callId: z.string().min(1),
    recording: z.boolean(),
    by: z.string().optional(),
    timestamp: z.number(),
  }),
  /**
   * A supervisor joined a bridged call, changed how, or left it (shared/supervision.ts). Sent to the
   * agents in the call for `whisper`, `barge` and `left` (after one of those), and for `listen` only
   * when the team tells agents of it; always to the supervisor itself, which learns this way that the
   * call ended under it (`left` with `reason: 'call_ended'`).
   */
  z.object({
    type: z.literal('call.monitor'),
    callId: z.string().min(1),
    supervisorId: z.string(),
    name: z.string(),
    mode: z.enum(['listen', 'whisper', 'barge', 'left']),
    reason: z.enum(['left', 'call_ended']).optional(),
    timestamp: z.number(),
  }),
  /** Another agent claimed the call (relay first-claim-wins). */
  z.object({
    type: z.literal('call.claimed'),
    callId: z.string().min(1),
    agentId: z.string(),
    timestamp: z.number(),
  }),
  z.object({
    type: z.literal('message.inbound'),
    messageId: z.string().min(1),
    ...peer,
    timestamp: z.number(),
    messageType: z.string(),
    text: z.string().optional(),
    /** The id of a media message's file (audio, image, video, document, sticker); a voicemail's recording. */
    mediaId: z.string().optional(),
    /** The item's `context.id`: the message (or, for an automatic permission reply, the call) it answers. */
    contextId: z.string().optional(),
    /**
     * A `call_permission_reply`. `source` is its `response_source`, lower-cased: `automatic` when the
     * service sent it by itself (a callback request when it accepts and names a call in `contextId`,
     * a revocation when it rejects).
     */
    permissionReply: z
      .object({ response: z.enum(['accept', 'reject']), isPermanent: z.boolean().optional(), expiresAt: z.number().optional(), source: z.string().optional() })
      .optional(),
  }),
  z.object({
    type: z.literal('message.status'),
    messageId: z.string().min(1),
    status: z.enum(['sent', 'delivered', 'read', 'failed']),
    timestamp: z.number(),
    recipientId: z.string().optional(),
    errors: z.array(callError).optional(),
  }),
]);
export type RelayEvent = z.infer<typeof relayEventSchema>;
export type RelayEventType = RelayEvent['type'];
/** Why the bridge let a call go (`call.bridge_failed`). */
export type BridgeFailure = Extract<RelayEvent, { type: 'call.bridge_failed' }>['reason'];
export type TransferRingEvent = Extract<RelayEvent, { type: 'call.transfer_ring' }>;
export type TransferUpdateEvent = Extract<RelayEvent, { type: 'call.transfer_update' }>;

/** One event on an agent's stream. `id` is the resume cursor (SSE `id:` / `Last-Event-ID`). */
export const relayEnvelopeSchema = z.object({
  id: z.string().min(1),
  /** When the relay received the webhook (unix ms): latency is measured from here. */
  receivedAt: z.number(),
  event: relayEventSchema,
});
export type RelayEnvelope = z.infer<typeof relayEnvelopeSchema>;

/** Paths of the relay's agent-facing HTTP API. */
export const RELAY_PATHS = {
  webhook: '/webhook',
  /** Server-sent events; `Authorization: Bearer <agent token>`; resume with `Last-Event-ID`. */
  events: '/events',
  health: '/healthz',
} as const;
