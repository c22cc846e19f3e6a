// A call as every process sees it, the events that happen to it and the effects they ask for. What
// only the main process keeps beside a call (its claim, the request under way, what the gateway is
// still owed) is in record.ts.
import type { BridgeFailure, CallErrorInfo } from '../events';
import { english, text, type RuleText } from '../i18n/text';
import type { RuleTerm } from '../i18n/rules';
import type { AppError, Result } from '../result';
import type { MonitorMode } from '../supervision';
import type { Colleague, TransferKind, TransferMiss, TransferUpdateState } from '../transfer';

export const RING_TIMEOUT_MS = 60_000;
export const DIAL_TIMEOUT_MS = 60_000;
export const STALE_CONNECT_MS = 60_000;
/** How long an event for an unknown call id waits for an initiate response that may carry it. */
export const PENDING_TTL_MS = 60_000;
/** How long ended calls and tombstones are kept. */
export const TOMBSTONE_TTL_MS = 60 * 60_000;
/**
 * How long a member of a bridged call has to come back once its leg went (a reload, a crash, a
 * network change): the relay keeps the customer on hold music that long, then ends the call, or
 * leaves it to the colleagues still in it (relay/REFERENCE.md "Rejoining").
 */
export const REJOIN_WINDOW_MS = 60_000;

export type Direction = 'incoming' | 'outgoing';

export type EndReason =
  | { kind: 'completed'; by: 'agent' | 'customer' }
  | { kind: 'declined' } // the agent declined an incoming call
  | { kind: 'missed' } // an incoming call nobody answered (timeout, or the customer gave up)
  | { kind: 'cancelled' } // the agent hung up an outgoing call before it was answered
  | { kind: 'no_answer' } // an outgoing call the customer did not answer
  | { kind: 'rejected' } // the customer rejected an outgoing call
  /**
   * A gateway code (e.g. "138006") or a local one; `message` in English, `text` the same as its code
   * and values when the catalogue made it (a media failure's reason, "The call failed"): the window
   * and the history say it in the agent's language of the moment it is shown.
   */
  | { kind: 'failed'; code: string; message: string; text?: RuleText }
  | { kind: 'answered_elsewhere' }
  /** This agent handed the customer on to a colleague (a transfer, or a consult completed): no terminate went. */
  | { kind: 'transferred'; to: string }
  /** A consult this agent was asked into ended without the customer coming to it (cancelled). */
  | { kind: 'consult_ended' }
  /**
   * The number's calls belong to another partner, its "Call primary" (gateway 138038, Conversation
   * Routing): this app may neither answer nor place them. Not a failure of the call.
   */
  | { kind: 'other_partner' };
export type EndKind = EndReason['kind'];

export interface Peer {
  /** Digits with country code (gateway form); absent when only a business-scoped user id is known. */
  number?: string;
  userId?: string;
  name?: string;
}

/** How this agent's claim on the relay came out: pending until the relay answers; unknown when it could not be asked. */
export type ClaimState = 'pending' | 'won' | 'lost' | 'unknown';
/** What the gateway hears when this agent ends a call: reject for one never accepted, terminate otherwise. */
export type GatewayEnd = 'reject' | 'terminate';

/**
 * A transfer or consult this call is in, as this agent sees it (shared/transfer.ts):
 * - role `from`: this agent started it. `ringing`: the colleague (absent for "Anyone available")
 *   rings while the customer hears hold music; `consulting`: the two agents talk; `joined`: a
 *   three-way call; `not_answered`: nobody took it and this agent is back with the customer;
 *   `done`: it was cancelled, or the colleague left: this agent is alone with the customer again.
 * - role `to`: a colleague rang this agent with it (the card "Transfer from NAME" / "Consult from
 *   NAME"). `ringing`, `consulting`, `joined` as above; `done`: this agent has the customer now.
 *
 * `not_answered` and `done` are over (calls/transfers.ts TRANSFER_OVER): the transfer stays on the call so that a late
 * or repeated word of the relay on it changes nothing; only a new transfer takes its place.
 */
export interface CallTransfer {
  id: string;
  kind: TransferKind;
  role: 'from' | 'to';
  colleague?: Colleague;
  state: 'ringing' | 'consulting' | 'joined' | 'not_answered' | 'done';
  /**
   * Role `from`, ringing: when this app stops waiting for the relay's word on the ring (unix ms) and
   * takes it as not answered, should that word never come (the relay restarted, or lost the call).
   */
  ringsUntil?: number;
}

/**
 * This agent's leg of a bridged call is being replaced ("Rejoining…"): its window went, the app
 * restarted, or its network changed, and the customer hears the hold music meanwhile. The relay
 * offers a new leg (`legId`, `offerSdp`), the first window that answers it takes the call's audio,
 * and once the relay has applied that answer (`answered`) the window connects it; the call is
 * connected again, and `rejoin` gone, when its media is.
 */
export interface CallRejoin {
  /** When this agent's media went (unix ms): REJOIN_WINDOW_MS counts from here, however often it rejoins. */
  since: number;
  /** The bridge's new leg, once the relay offered it. */
  legId?: string;
  offerSdp?: string;
  /** The relay applied a window's answer to `legId`: that window may start ICE. */
  answered?: true;
}

interface CallCommon {
  /** Stable id in this app: `in:<callId>` for incoming calls, `tr:<transferId>` for transfers to this agent, generated for outgoing ones. */
  localId: string;
  callId?: string;
  peer: Peer;
  createdAt: number;
  ctaPayload?: string;
  /** The call's media goes through the team's bridge (bridge/REFERENCE.md): it can be transferred, consulted and joined. */
  bridged?: true;
  transfer?: CallTransfer;
  /** The team's bridge records the call now (event `call.recording`; shared/bridge-recording.ts). */
  recording?: true;
  /** The supervisors in the call the agent is told of (event `call.monitor`; shared/supervision.ts). */
  monitors?: CallMonitor[];
  /**
   * The agent muted its microphone on the call (calls/mute.ts): every window sends silence for it,
   * a window made afresh too. Absent (or false): not muted; an ended call carries none.
   */
  muted?: boolean;
}
/** A supervisor in the agent's call: "NAME is whispering", "NAME joined the call" (barge), or a listen the team tells of. */
export interface CallMonitor {
  supervisorId: string;
  name: string;
  mode: MonitorMode;
}
interface IncomingCommon extends CallCommon {
  direction: 'incoming';
  callId: string;
  offerSdp: string;
}
interface OutgoingCommon extends CallCommon {
  direction: 'outgoing';
}

/** A call as the window, the history and every other process see it. */
export type CallState =
  | (IncomingCommon & { phase: 'ringing'; ringsUntil: number })
  | (IncomingCommon & { phase: 'answering'; answeredAt: number })
  | (OutgoingCommon & { phase: 'dialing' })
  | (OutgoingCommon & { phase: 'calling'; callId: string; dialsUntil: number })
  | (OutgoingCommon & { phase: 'remote_ringing'; callId: string; dialsUntil: number })
  | ((IncomingCommon | (OutgoingCommon & { callId: string; answerSdp: string })) & { phase: 'connecting'; answeredAt: number; rejoin?: CallRejoin })
  | ((IncomingCommon | (OutgoingCommon & { callId: string; answerSdp: string })) & {
      phase: 'active';
      answeredAt: number;
      connectedAt: number;
      /** Its leg is being replaced: hold and transfer stay as they were meanwhile. */
      rejoin?: CallRejoin;
      /** On hold since then (unix ms): the customer hears the hold music, the agent does not hear the customer. */
      heldSince?: number;
      /** Time on hold before the current hold, in ms (a call can be held and resumed many times). */
      heldMs?: number;
    })
  | ((IncomingCommon | OutgoingCommon) & {
      phase: 'ended';
      end: EndReason;
      endedAt: number;
      connectedAt?: number;
      /** Talk time in seconds: the gateway's duration when it sent one, else measured here. */
      durationSec: number;
      /** Time the call spent on hold, in seconds, when it was held at all. */
      heldSec?: number;
    });
export type CallPhase = CallState['phase'];
export type EndedCall = Extract<CallState, { phase: 'ended' }>;

export const LIVE_PHASES: ReadonlySet<CallPhase> = new Set(['ringing', 'answering', 'dialing', 'calling', 'remote_ringing', 'connecting', 'active']);
export const isLive = (c: Pick<CallState, 'phase'>): boolean => c.phase !== 'ended';

/**
 * The one definition of a busy call: the agent is placing, answering or on it. Presence is
 * "on_call" while one exists; a second call cannot be placed or answered; its customer is the
 * contact in view.
 */
export const BUSY_PHASES: ReadonlySet<CallPhase> = new Set(['dialing', 'calling', 'remote_ringing', 'answering', 'connecting', 'active']);
export const isBusy = (c: Pick<CallState, 'phase'>): boolean => BUSY_PHASES.has(c.phase);
/** An active call on hold. */
export const isHeld = (c: CallState | undefined): boolean => c?.phase === 'active' && c.heldSince !== undefined;
/** A call whose leg is being replaced ("Rejoining…"). */
export const isRejoining = (c: CallState | undefined): boolean => (c?.phase === 'connecting' || c?.phase === 'active') && c.rejoin !== undefined;
/** At most this many busy calls at once: one on hold and one in hand. */
export const MAX_BUSY_CALLS = 2;
/** The calls that keep the agent busy. */
export const busyCalls = <C extends CallState>(calls: Iterable<C>): C[] => [...calls].filter(isBusy);
/**
 * Whether a further call can be taken now beside these (the agent's calls): fewer than two busy, and
 * every busy one connected, so that the one in hand can go on hold. Presence and the window ask it;
 * the reducer decides by the same rule (takeIntoHand in handlers.ts).
 */
export function canTakeAnother(calls: Iterable<CallState>): boolean {
  const busy = busyCalls(calls);
  return busy.length < MAX_BUSY_CALLS && busy.every((c) => c.phase === 'active');
}
/** How long an active call has been on hold in all, at `now`, in ms. */
export function heldMsOf(call: CallState, now: number): number {
  if (call.phase === 'ended') return (call.heldSec ?? 0) * 1000;
  if (call.phase !== 'active') return 0;
  return (call.heldMs ?? 0) + (call.heldSince !== undefined ? Math.max(0, now - call.heldSince) : 0);
}
export const hasBusyCall = (calls: Iterable<Pick<CallState, 'phase'>>): boolean => {
  for (const call of calls) if (isBusy(call)) return true;
  return false;
};

export const ANSWERED_ELSEWHERE = text('calls.answeredElsewhere');
export const ANSWERED_ELSEWHERE_MESSAGE = english(ANSWERED_ELSEWHERE);

/**
 * The refusals of a call rejoining, said from the catalogue (`errText('invalid_state', …)`):
 * `rejoining`, to hold, resume or transfer it before it is connected again; `offerClosed`, to a
 * window's answer to a rejoin offer that another window took, a newer one replaced, or that the
 * call no longer has.
 */
export const REJOIN_REFUSALS = {
  rejoining: text('calls.rejoiningNow'),
  offerClosed: text('calls.rejoinOfferClosed'),
} as const;

/** A phase as the catalogue says it inside a sentence ("The call is {{phase}}: …"). */
export const PHASE_TERM: Readonly<Record<CallPhase, RuleTerm>> = {
  ringing: 'phaseRinging',
  answering: 'phaseAnswering',
  dialing: 'phaseDialing',
  calling: 'phaseCalling',
  remote_ringing: 'phaseRemoteRinging',
  connecting: 'phaseConnecting',
  active: 'phaseActive',
  ended: 'phaseEnded',
};

export interface LocalError {
  code: string;
  message: string;
  /** `message` as its code and values, when the catalogue made it. */
  text?: RuleText;
}

/** The failure code kept on an ended call: the gateway's number when there is one (e.g. "138006"). */
export const localErrorFrom = (error: AppError): LocalError => ({
  code: error.gatewayCode !== undefined ? String(error.gatewayCode) : error.code,
  message: error.message,
  ...(error.text !== undefined ? { text: error.text } : {}),
});

export const incomingLocalId = (callId: string): string => `in:${callId}`;
/** A transfer or consult that rings this agent is a call of its own here, whatever this agent saw of the call before. */
export const transferLocalId = (transferId: string): string => `tr:${transferId}`;

/** Everything that can happen to a call. `at` is the local clock (unix ms) when it was applied. */
export type CallEvent =
  // from the relay
  | { type: 'remote.incoming'; at: number; callId: string; peer: Peer; offerSdp: string; timestamp: number; ctaPayload?: string; bridged?: true }
  /** A colleague transfers the call to this agent or asks it to consult: it rings as a call of its own (transferLocalId). */
  | { type: 'remote.transfer_ring'; at: number; callId: string; transferId: string; kind: TransferKind; by: Colleague; peer: Peer; offerSdp: string; timestamp: number }
  /** What a transfer came to, as it concerns this agent (shared/transfer.ts TRANSFER_STATES). */
  | { type: 'remote.transfer'; at: number; callId: string; transferId: string; kind: TransferKind; state: TransferUpdateState; colleague?: Colleague; reason?: TransferMiss }
  | { type: 'remote.answered'; at: number; callId: string; answerSdp: string; timestamp: number }
  /** `opaque`: the record id the call was placed with (biz_opaque_callback_data), when the service echoed it. */
  | { type: 'remote.status'; at: number; callId: string; status: 'RINGING' | 'ACCEPTED' | 'REJECTED'; timestamp: number; opaque?: string }
  | {
      type: 'remote.terminated';
      at: number;
      callId: string;
      status: 'COMPLETED' | 'FAILED';
      timestamp: number;
      durationSec?: number;
      errors?: CallErrorInfo[];
      opaque?: string;
    }
  /** An agent's claim won on the relay; `mine` is unknown while this agent's own id is. */
  | { type: 'remote.claimed'; at: number; callId: string; mine?: boolean }
  /**
   * The team's bridge can no longer carry the call (its node is gone, or the customer's leg on it
   * failed), or this agent was not back within the relay's window (`agent_not_back`, `awaySec`):
   * the call is over here; with `goesOn` it goes on with colleagues, and nothing is owed.
   */
  | { type: 'remote.bridge_failed'; at: number; callId: string; reason: BridgeFailure; goesOn?: true; awaySec?: number }
  /** The team's bridge records the call now, or no longer (calls/oversight.ts). */
  | { type: 'remote.recording'; at: number; callId: string; recording: boolean; timestamp: number }
  /** A supervisor joined the call in `mode`, switched to it, or left it (calls/oversight.ts). */
  | { type: 'remote.monitor'; at: number; callId: string; supervisorId: string; name: string; mode: MonitorMode | 'left'; timestamp: number }
  // the agent's commands; `requestId` names the command that waits for the reply
  /** Call a number: the peer always has the digits the initiate goes to. */
  | { type: 'local.dial'; at: number; localId: string; peer: Peer & { number: string }; offerSdp: string; requestId?: string }
  | { type: 'local.answer'; at: number; localId: string; answerSdp: string; requestId?: string }
  | { type: 'local.decline'; at: number; localId: string; requestId?: string }
  | { type: 'local.hangup'; at: number; localId: string; requestId?: string }
  /** Hold: the customer hears music; Resume: back to the microphone. Only an active call. */
  | { type: 'local.hold'; at: number; localId: string; requestId?: string }
  | { type: 'local.resume'; at: number; localId: string; requestId?: string }
  /** Mute or unmute the agent's microphone on a live call (calls/mute.ts). */
  | { type: 'local.mute'; at: number; localId: string; muted: boolean; requestId?: string }
  // outcomes of effects
  | { type: 'local.initiate_ok'; at: number; localId: string; callId: string; bridged?: true }
  | { type: 'local.initiate_failed'; at: number; localId: string; error: AppError }
  | { type: 'local.claim_result'; at: number; localId: string; outcome: Exclude<ClaimState, 'pending'> }
  /** The relay's decline verdict: `last` when nobody else may still answer; undefined when it could not say. */
  | { type: 'local.decline_result'; at: number; localId: string; last: boolean | undefined }
  | { type: 'local.accept_ok'; at: number; localId: string }
  | { type: 'local.accept_failed'; at: number; localId: string; error: AppError }
  /** The gateway's answer to a reject or terminate: done, refused (the call was over there), or not reached. */
  | { type: 'local.end_result'; at: number; localId: string; outcome: 'done' | 'refused' | 'unreached' }
  /** A deadline the reducer set has come (what it means depends on the phase: ring or dial timeout, or this agent's transfer ringing out). */
  | { type: 'local.deadline'; at: number; localId: string }
  /**
   * The relay no longer knows this agent's transfer `transferId` of the call (it answered a cancel
   * with 404: it restarted, or the transfer ended unheard here): the transfer is over, nothing under way.
   */
  | { type: 'local.transfer_gone'; at: number; localId: string; transferId: string }
  // media facts from the renderer
  | { type: 'local.media_connected'; at: number; localId: string }
  | { type: 'local.media_failed'; at: number; localId: string; error: LocalError }
  /**
   * The window that carried the call's audio is gone (reloaded, closed, crashed; `error` says which):
   * a bridged call rejoins with a new leg; any other ends as a media failure would.
   */
  | { type: 'local.window_gone'; at: number; localId: string; error: LocalError }
  // rejoining a bridged call (calls/rejoin.ts)
  /** The relay offered this agent a new leg of the call (BRIDGE_AGENT_PATHS.rejoin). */
  | { type: 'local.rejoin_offer'; at: number; localId: string; legId: string; offerSdp: string }
  /** The relay would not offer a new leg: `verdict` says what that means for the call (RejoinVerdict). */
  | { type: 'local.rejoin_failed'; at: number; localId: string; error: LocalError; verdict: RejoinVerdict }
  /** A window's answer to the offer of `legId` (the rejoinCall command). */
  | { type: 'local.rejoin_answer'; at: number; localId: string; legId: string; sdp: string; requestId?: string }
  /** The relay's word on that answer (BRIDGE_AGENT_PATHS.rejoinAnswer). */
  | { type: 'local.rejoin_answered'; at: number; localId: string; legId: string; outcome: RejoinAnswerOutcome }
  /**
   * Recovery: a call a previous run left live (the crash-recovery file), still owed its reject or
   * terminate; with `restore`, a bridged call this agent was in, which rejoins as it was instead.
   */
  | { type: 'local.leftover'; at: number; localId: string; callId: string; action: GatewayEnd; restore?: RestorableCall };

/**
 * Why the relay would not offer a new leg:
 * - `not_member` (403): the call went on without this agent (transferred, left, or removed as not
 *   back while colleagues stayed): it ends here, nothing owed;
 * - `ended` (410): the relay ended it because this agent was not back in time: nothing owed;
 * - `gone` (404: the relay does not know it; 503: its node is gone; or the window is over with the
 *   relay never reached): the agent lets it go, and the gateway hears terminate.
 */
export type RejoinVerdict = 'not_member' | 'ended' | 'gone';
export const REJOIN_VERDICTS: readonly RejoinVerdict[] = ['not_member', 'ended', 'gone'];

/**
 * The relay's word on a window's answer to a rejoin offer: applied; the answer itself refused (400
 * on its SDP: a fresh offer is asked for); or refused otherwise (403: not the leg offered last; 409).
 */
export type RejoinAnswerOutcome = { kind: 'answered' } | { kind: 'sdp_refused'; error: AppError } | { kind: 'refused'; error: AppError };

/** A call a run left live that the next one takes up again (owedOnCrash `restore`): a bridged call, connecting or active, as the window saw it. */
export type RestorableCall = Extract<CallState, { phase: 'connecting' | 'active' }>;

export type RemoteCallEvent = Extract<CallEvent, { callId: string; type: `remote.${string}` }>;
export type LocalCallEvent = Exclude<CallEvent, RemoteCallEvent>;

/**
 * What the coordinator must do; it feeds each outcome back as the event named beside it.
 *
 * There is no media instruction among them, on purpose: media is level-triggered. The window's media
 * engine follows the call main pushes (its phase, `heldSince`, `answerSdp`), so the snapshot a window
 * reads after reconnecting leads to the same media as the pushes it missed would have; an instruction
 * sent once would be lost with them.
 */
export type CallEffect =
  /** POST the relay's claim → local.claim_result. */
  | { kind: 'claim'; localId: string; callId: string }
  /** POST the relay's decline → local.decline_result. */
  | { kind: 'decline'; localId: string; callId: string }
  /** POST accept with the answer → local.accept_ok / local.accept_failed. Never retried (protocol.md). */
  | { kind: 'accept'; localId: string; callId: string; sdp: string }
  /** POST initiate with the offer → local.initiate_ok / local.initiate_failed. Never retried: it would ring twice. */
  | { kind: 'initiate'; localId: string; to: string; sdp: string }
  /** POST reject or terminate → local.end_result. After any accept or initiate of the same call. */
  | { kind: 'end'; localId: string; callId: string; action: GatewayEnd }
  /** POST the relay's transfer decline (TRANSFER_PATHS.decline): a colleague's transfer or consult is not taken here. No outcome comes back. */
  | { kind: 'transfer_decline'; localId: string; callId: string; transferId: string }
  /** Set (or, with `at` undefined, cancel) the call's one deadline → local.deadline. */
  | { kind: 'deadline'; localId: string; at: number | undefined }
  /** Answer the command that waits: Answer once the call is this agent's and accepted, Call once initiated. */
  | { kind: 'reply'; requestId: string; result: Result<CallReply> }
  /** POST the relay's rejoin (BRIDGE_AGENT_PATHS.rejoin) → local.rejoin_offer / local.rejoin_failed. Retried while the window lasts. */
  | { kind: 'rejoin'; localId: string; callId: string }
  /** POST the window's answer to the rejoin offer (BRIDGE_AGENT_PATHS.rejoinAnswer) → local.rejoin_answered. */
  | { kind: 'rejoin_answer'; localId: string; callId: string; legId: string; sdp: string };

/** A command's reply: the call it concerns, with the gateway's id. */
export interface CallReply {
  localId: string;
  callId: string;
}
