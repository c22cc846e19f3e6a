// What the relay, the bridge nodes and the agents' apps say to each other about bridged calls
// (bridge/REFERENCE.md). A bridged call's media ends on a bridge node: the customer's leg faces the
// service exactly as a window's would, and each agent in the call has a leg of their own from the
// window to the node. The relay decides who is in a call and who hears whom; the node only carries
// the media. The relay checks these bodies where they enter; the node checks the relay's.
import { z } from 'zod';
import { requiredString, ruleMessage } from './validation';
import type { Result } from './result';

/** A participant of a bridged call: the customer, or one agent's leg. */
export const CUSTOMER = 'customer' as const;
export type ParticipantId = typeof CUSTOMER | string;

export const LEG_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
export const legIdSchema = requiredString().regex(LEG_ID_PATTERN, ruleMessage('bridge.legId'));
const sdpSchema = requiredString().min(1, ruleMessage('common.notEmpty')).max(64 * 1024, ruleMessage('common.tooLongAtMost', { count: 64 * 1024 }));

/**
 * Who hears whom, as the relay wants it now: for each listener, the participants it hears. A
 * listener that hears nobody hears silence, or the hold music when `music` is listed. One source is
 * forwarded as it comes; two or more are mixed. The customer's stream keeps one SSRC and continuous
 * sequence numbers and timestamps across every change (ARCHITECTURE.md).
 */
export const HOLD_MUSIC = 'music' as const;
export const routesSchema = z.record(z.string(), z.array(z.string()).max(16));
export type Routes = Record<ParticipantId, ParticipantId[]>;

/** What a node says of one leg (the customer's or an agent's). */
export interface LegReport {
  state: 'new' | 'connecting' | 'connected' | 'failed' | 'closed';
  /** Packets received and lost, round trip and jitter as the node measures them on this leg. */
  packetsReceived: number;
  packetsLost: number;
  jitterMs?: number;
  roundTripMs?: number;
  /** Unix ms of the last packet received on this leg. */
  lastPacketAt?: number;
}

export interface BridgedCallReport {
  callId: string;
  customer: LegReport;
  agents: Record<string, LegReport>;
  routes: Routes;
}

/**
 * One node's control of its calls. The relay holds one per node: the node object itself when the
 * bridge runs in the relay's process (`--bridge`), an HTTP client of the node's control API
 * otherwise. Every method is idempotent where repeating it makes sense (same ids, same answer).
 */
export interface BridgeControl {
  /**
   * An incoming call: the service's offer; the node answers it as the app would (full ICE,
   * `a=setup:active`, complete), holding the service's candidates back until `connectCustomer`:
   * nothing may reach the customer before the call is accepted (protocol.md).
   */
  prepareIncoming(callId: string, offer: string): Promise<Result<{ answer: string }>>;
  /** After the gateway took the accept: the customer's candidates go in, media starts. */
  connectCustomer(callId: string): Promise<Result<null>>;
  /** An outgoing call before it is placed: the customer leg's offer for initiate, under a reference of the relay's. */
  prepareOutgoing(ref: string): Promise<Result<{ offer: string }>>;
  /** The gateway placed it: from now on the call is known by the service's id. */
  bindOutgoing(ref: string, callId: string): Promise<Result<null>>;
  /** The customer's answer to an outgoing call (the connect event). */
  applyCustomerAnswer(callId: string, answer: string): Promise<Result<null>>;
  /** The node offers an agent's leg (the window answers it, as it answers a service's offer). */
  offerAgentLeg(callId: string, legId: string): Promise<Result<{ offer: string }>>;
  /** The window's answer to `offerAgentLeg`. */
  applyAgentAnswer(callId: string, legId: string, answer: string): Promise<Result<null>>;
  /** The window offers an agent's leg (an outgoing call's); the node answers. */
  answerAgentLeg(callId: string, legId: string, offer: string): Promise<Result<{ answer: string }>>;
  /** Who hears whom from now on (replaces the last routes whole). */
  setRoutes(callId: string, routes: Routes): Promise<Result<null>>;
  /** One agent's leg is closed; the call goes on. */
  closeAgentLeg(callId: string, legId: string): Promise<Result<null>>;
  /** Every leg of the call is closed. Ending an unknown call is no error. */
  endCall(callId: string): Promise<Result<null>>;
  /**
   * The customer is let go without ending the call (relay/REFERENCE.md "Rejoining"): the agents'
   * legs close and the customer's leg sends nothing more (no RTP, no RTCP) while its ICE and DTLS
   * stay up, so that the service ends the call itself for lack of media. For a relay that holds no
   * gateway key and cannot terminate a call nobody is left in; the relay keeps the call until the
   * service ends it.
   */
  releaseCustomer(callId: string): Promise<Result<null>>;
  report(callId: string): Promise<Result<BridgedCallReport>>;
  /**
   * Start (or resume) recording the call (shared/bridge-recording.ts): the customer hears `notice`
   * first (16-bit PCM, mono, 48 kHz), and the recording holds it. Starting a call that records
   * already plays no notice again. Refused before the customer's leg is connected.
   */
  startRecording(callId: string, notice?: Int16Array): Promise<Result<null>>;
  /** Pause the call's recording; the file is finished and handed to the node's RecordingSink when the call ends. */
  stopRecording(callId: string): Promise<Result<null>>;
}

/** The node's control API (relay → node), all with `Authorization: Bearer <bridge token>`. */
export const BRIDGE_CONTROL_PATHS = {
  incoming: (callId: string) => `/calls/${encodeURIComponent(callId)}/incoming`,
  connect: (callId: string) => `/calls/${encodeURIComponent(callId)}/connect`,
  outgoing: (ref: string) => `/outgoing/${encodeURIComponent(ref)}`,
  bind: (ref: string) => `/outgoing/${encodeURIComponent(ref)}/bind`,
  customerAnswer: (callId: string) => `/calls/${encodeURIComponent(callId)}/customer-answer`,
  legOffer: (callId: string, legId: string) => `/calls/${encodeURIComponent(callId)}/legs/${encodeURIComponent(legId)}/offer`,
  legAnswer: (callId: string, legId: string) => `/calls/${encodeURIComponent(callId)}/legs/${encodeURIComponent(legId)}/answer`,
  legFromOffer: (callId: string, legId: string) => `/calls/${encodeURIComponent(callId)}/legs/${encodeURIComponent(legId)}/from-offer`,
  leg: (callId: string, legId: string) => `/calls/${encodeURIComponent(callId)}/legs/${encodeURIComponent(legId)}`,
  routes: (callId: string) => `/calls/${encodeURIComponent(callId)}/routes`,
  call: (callId: string) => `/calls/${encodeURIComponent(callId)}`,
  /** POST: `BridgeControl.releaseCustomer`. */
  release: (callId: string) => `/calls/${encodeURIComponent(callId)}/release`,
} as const;

export const sdpBodySchema = z.object({ sdp: sdpSchema }, { error: ruleMessage('common.requiredObject') });
export const bindBodySchema = z.object({ callId: requiredString().min(1, ruleMessage('common.notEmpty')).max(256, ruleMessage('common.tooLongAtMost', { count: 256 })) }, { error: ruleMessage('common.requiredObject') });
export const routesBodySchema = z.object({ routes: routesSchema }, { error: ruleMessage('common.requiredObject') });

/**
 * The relay's endpoints for an agent's app in a bridged team (agent bearer token). The relay checks
 * that the agent may be in the call: rung for it, the claim's winner, or (later) transferred or
 * invited to it.
 */
export const BRIDGE_AGENT_PATHS = {
  /** POST → `{ legId, offer }`: this agent's leg of an incoming call that rings for it. */
  leg: (callId: string) => `/calls/${encodeURIComponent(callId)}/bridge/leg`,
  /**
   * POST `{ legId, sdp }` (the window's answer to that leg's offer) → `{ ok: true }`, while the call
   * still rings: the leg connects to the node ahead of the click, so that Answer finds it up. It
   * carries nothing either way until the call is this agent's (the node routes it nowhere). 403
   * unless the leg is this agent's and the call rings for it; 409 once the call is answered; 400
   * `field: 'sdp'` for an answer the node refused.
   */
  ringAnswer: (callId: string) => `/calls/${encodeURIComponent(callId)}/bridge/leg/answer`,
  /** POST `{ legId, sdp }` (the window's answer) → `{ sdp }`: the customer leg's answer, for accept. Only for the claim's winner. */
  answer: (callId: string) => `/calls/${encodeURIComponent(callId)}/bridge/answer`,
  /** POST: the gateway took the accept; media to the customer starts. */
  accepted: (callId: string) => `/calls/${encodeURIComponent(callId)}/bridge/accepted`,
  /** POST `{ sdp }` (the window's offer) → `{ ref, legId, offer, answer }`: the customer leg's offer for initiate, the leg's answer for the window. */
  dial: '/bridge/dial',
  /** POST `{ callId }`: the gateway placed the dialled call. */
  placed: (ref: string) => `/bridge/dial/${encodeURIComponent(ref)}/placed`,
  /** POST `{ held }`: the customer hears the hold music (true) or the agent again (false). */
  hold: (callId: string) => `/calls/${encodeURIComponent(callId)}/bridge/hold`,
  /** GET → the customer leg's `LegReport` as the node measures it now. Only for the agent on the call. */
  quality: (callId: string) => `/calls/${encodeURIComponent(callId)}/bridge/quality`,
  /**
   * POST → `{ legId, offer }` (`rejoinReplySchema`): a new leg for this agent, a member of the call
   * whose own leg went (a reload, a crash, a network change). The customer hears the hold music
   * until it connects; the agent has REJOIN_WINDOW_MS from the moment its leg went. 404 no such
   * call; 410 `call_ended` the call was ended because the agent was not back in time; 403 not a
   * member (transferred, left, or removed as not back while colleagues stayed); 503 its node is gone.
   */
  rejoin: (callId: string) => `/calls/${encodeURIComponent(callId)}/bridge/rejoin`,
  /**
   * POST `{ legId, sdp }` (`rejoinAnswerBodySchema`, the window's answer to the rejoin offer) →
   * `{ ok: true }`: the new leg takes the old one's place. 403 unless `legId` is the leg last
   * offered; 400 `field: 'sdp'` for an answer the node refused (the offer stays answerable).
   */
  rejoinAnswer: (callId: string) => `/calls/${encodeURIComponent(callId)}/bridge/rejoin/answer`,
} as const;

export const legReplySchema = z.object({ legId: legIdSchema, offer: sdpSchema });
export const answerBodySchema = z.object({ legId: legIdSchema, sdp: sdpSchema }, { error: ruleMessage('common.requiredObject') });
export const sdpReplySchema = z.object({ sdp: sdpSchema });
export const dialReplySchema = z.object({ ref: legIdSchema, legId: legIdSchema, offer: sdpSchema, answer: sdpSchema });
export const holdBodySchema = z.object({ held: z.boolean({ error: ruleMessage('common.mustBeBoolean') }) }, { error: ruleMessage('common.requiredObject') });
/** The reply of `BRIDGE_AGENT_PATHS.rejoin`: the new leg and the node's offer for it. */
export const rejoinReplySchema = z.object({ legId: legIdSchema, offer: sdpSchema });
/** The body of `BRIDGE_AGENT_PATHS.rejoinAnswer`: the leg answered and the window's answer. */
export const rejoinAnswerBodySchema = answerBodySchema;
/** The body of `BRIDGE_AGENT_PATHS.ringAnswer`: the ringing leg and the window's answer. */
export const ringAnswerBodySchema = answerBodySchema;
/** The reply of `BRIDGE_AGENT_PATHS.ringAnswer`. */
export const ringAnswerReplySchema = z.object({ ok: z.literal(true) });
/** The reply of `BRIDGE_AGENT_PATHS.rejoinAnswer`. */
export const rejoinAnswerReplySchema = z.object({ ok: z.literal(true) });

const counter = z.number().finite().nonnegative();
/** The reply of `BRIDGE_AGENT_PATHS.quality`: one leg as the node measures it. */
export const legReportSchema = z.object({
  state: z.enum(['new', 'connecting', 'connected', 'failed', 'closed']),
  packetsReceived: counter,
  packetsLost: counter,
  jitterMs: counter.optional(),
  roundTripMs: counter.optional(),
  lastPacketAt: counter.optional(),
}) satisfies z.ZodType<LegReport>;
