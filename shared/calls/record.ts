// A call as the main process holds it: what the window sees, and, in `open`, what is still open
// about it with the relay or the gateway. Each phase carries only what can be open in it; nothing of
// it leaves the main process (publicCall).
import { assertNever } from '../result';
import { REJOIN_WINDOW_MS, type CallRejoin, type CallState, type EndedCall, type GatewayEnd } from './types';

/**
 * Answer clicked. First claim wins on the relay (relay/README.md), so the prepared answer waits for
 * this agent's claim; once the claim is won (or the relay could not say) the accept is out with it.
 * `replyTo` is the Answer command waiting for the outcome.
 */
export type AnsweringOpen = ({ waiting: 'claim'; answerSdp: string } | { waiting: 'accept' }) & { replyTo?: string };

/** The initiate is out: the gateway names the call in its response. `replyTo` is the Call command waiting for it. */
export interface DialingOpen {
  waiting: 'initiate';
  replyTo?: string;
}

/**
 * What an ended call still waits for before the gateway has heard all it must:
 * - `verdict`: declined or missed here; the relay says whether anyone else may still answer (if not, reject);
 * - `initiate`: hung up while its initiate was on its way; terminated once the response names the call;
 * - `claim`: ended while its claim was out, so no accept went: a reject is owed, sent once the claim
 *   shows the call is not a colleague's;
 * - `confirmation`: its reject or terminate went out; owed until the gateway answers it or ends the
 *   call itself (not reached: until a run after a crash sends it again).
 */
export type EndedOpen =
  | { waiting: 'verdict' }
  | { waiting: 'initiate' }
  | { waiting: 'claim'; owed: 'reject' }
  | { waiting: 'confirmation'; owed: GatewayEnd };

/**
 * A bridged call rejoining (`rejoin`, calls/rejoin.ts): the relay is asked for a new leg
 * (`rejoin_offer`), or a window's answer to the leg offered is with the relay (`rejoin_answer`;
 * `replyTo` is the rejoinCall command waiting for it).
 */
export type RejoinOpen = { waiting: 'rejoin_offer' } | { waiting: 'rejoin_answer'; legId: string; replyTo?: string };

type Phase<P extends CallState['phase']> = Extract<CallState, { phase: P }>;

/** A call as the main process holds it; `open` exists only in the phases that can have something open. */
export type CallRecord =
  | (Phase<'ringing' | 'calling' | 'remote_ringing'> & { open?: never })
  | (Phase<'connecting' | 'active'> & { open?: RejoinOpen })
  | (Phase<'answering'> & { open: AnsweringOpen })
  | (Phase<'dialing'> & { open: DialingOpen })
  | (EndedCall & { open?: EndedOpen });
export type LiveRecord = Exclude<CallRecord, { phase: 'ended' }>;
export type EndedRecord = Extract<CallRecord, { phase: 'ended' }>;

/**
 * A call a previous run left live (the crash-recovery file). Only its id and what the gateway is
 * owed survived; it never shows and never enters history. It is checked with the relay first — in a
 * team it may be a colleague's by now: a call that rang asks for a decline verdict (reject only if
 * nobody else may answer), one that was this agent's is claimed again (terminate only if it still
 * is). Settled (`open` absent) once the gateway has had its one try or needs none.
 */
export interface Leftover {
  /** `left:<callId>`: the outcomes of its claim, verdict and end come back under it. */
  localId: string;
  callId: string;
  /** When this run took it over: its tombstone's time once it is settled. */
  since: number;
  open?: { waiting: 'verdict'; owed: 'reject' } | { waiting: 'claim'; owed: 'terminate' } | { waiting: 'confirmation'; owed: GatewayEnd };
}

/** The call as the window and history see it: without what is open, which is the main process's alone. */
export function publicCall(call: CallRecord): CallState {
  if (call.open === undefined) return call;
  const { open: _open, ...shown } = call;
  return shown;
}

/** The reject or terminate the gateway is still owed for this call, once it has ended here. */
export const owedEnd = (call: CallRecord | Leftover): GatewayEnd | undefined => (call.open !== undefined && 'owed' in call.open ? call.open.owed : undefined);

/**
 * A rejoining call gives up this much after the relay's own window: the relay's word on it (the call
 * ended, or gone on with colleagues) comes first, and this is only for a relay that is gone.
 */
export const REJOIN_GRACE_MS = 5_000;
/** When a call rejoining since `rejoin.since` gives up here. */
export const rejoinDeadline = (rejoin: CallRejoin): number => rejoin.since + REJOIN_WINDOW_MS + REJOIN_GRACE_MS;

/** The moment a call in this phase gives up waiting, if it waits for anything: the earliest, where it waits for two. */
export function deadlineOf(call: CallState | undefined): number | undefined {
  if (call === undefined) return undefined;
  switch (call.phase) {
    case 'ringing':
      return call.ringsUntil;
    case 'calling':
    case 'remote_ringing':
      return call.dialsUntil;
    case 'active': {
      // This agent's transfer rings a colleague: the relay says how it ends, unless its word is lost.
      const ring = call.transfer?.role === 'from' && call.transfer.state === 'ringing' ? call.transfer.ringsUntil : undefined;
      const rejoin = call.rejoin !== undefined ? rejoinDeadline(call.rejoin) : undefined;
      return ring === undefined || rejoin === undefined ? (ring ?? rejoin) : Math.min(ring, rejoin);
    }
    case 'connecting':
      return call.rejoin !== undefined ? rejoinDeadline(call.rejoin) : undefined;
    case 'dialing': // the initiate under way has its own timeout in the gateway client
    case 'answering':
    case 'ended':
      return undefined;
    default:
      return assertNever(call, 'call');
  }
}
