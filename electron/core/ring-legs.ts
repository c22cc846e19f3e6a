// A bridged call's legs while it rings (BRIDGE_AGENT_PATHS.ringAnswer): the window's answer, made as
// the call rang, goes to the relay before the click, so that the leg to the team's bridge is up when
// the agent clicks Answer and click → two-way audio waits for the customer's leg alone. The bridge
// routes such a leg to nobody until the accept.
//
// A leg has one answer. The first window's takes the ring's own leg; another window (a second one,
// or the same one reloaded while the call rings) is given a leg of its own to answer instead. The
// click's answer names its leg: the one a window connected with it, else the ring's own leg while
// no window took it.
import type { RingAnswerReply } from '../../shared/api';
import { BRIDGE_AGENT_PATHS, legReplySchema, ringAnswerReplySchema } from '../../shared/bridge';
import { text } from '../../shared/i18n/text';
import type { Logger } from '../../shared/log';
import { err, errText, ok, type Result } from '../../shared/result';
import type { BridgeRelay } from './bridged-calls';

/** Leg id → the answer a window gave it ahead of the click (`connected` once the relay applied it), undefined until one did. */
export type RingAnswers = Map<string, { sdp: string; connected: boolean } | undefined>;

/** What of this agent's leg of a call the ring answers need. */
export interface RingingLeg {
  legId: string;
  /** An incoming call's, or a transfer's: the bridge's offer to the window. */
  legOffer?: string;
  /** A colleague's transfer or consult that rang this agent with this leg: its answer goes to the relay at Answer, never ahead. */
  transferId?: string;
  /** An incoming call's legs connected while it rang. */
  ringAnswers?: RingAnswers;
}

/** A window's answer `sdp` to `legId` (absent: the ring's own leg) of a call that rings here, before the click. */
export async function answerRingLeg(relay: BridgeRelay, log: Logger, callId: string, leg: RingingLeg | undefined, sdp: string, legId?: string): Promise<Result<RingAnswerReply>> {
  if (leg === undefined || leg.transferId !== undefined || leg.legOffer === undefined) return err('invalid_state', `call ${callId} has no ringing leg on the bridge here`);
  const target = legId ?? leg.legId;
  const answers = (leg.ringAnswers ??= new Map<string, { sdp: string; connected: boolean } | undefined>([[leg.legId, undefined]]));
  if (!answers.has(target)) return err('invalid_state', `legId: ${target} is no leg of call ${callId} offered here`);
  const taken = answers.get(target);
  if (taken?.sdp === sdp && taken.connected) return ok({ connected: true });
  if (taken !== undefined && taken.sdp !== sdp) {
    const own = await relay.bridgeRequest('bridge leg', BRIDGE_AGENT_PATHS.leg(callId), {}, legReplySchema);
    if (!own.ok) return own;
    answers.set(own.value.legId, undefined);
    return ok({ connected: false, legId: own.value.legId, offer: own.value.offer });
  }
  // The leg is this answer's from now on, connected or not: the click hands the same answer over.
  const entry = { sdp, connected: false };
  answers.set(target, entry);
  const answered = await relay.bridgeRequest('bridge ring answer', BRIDGE_AGENT_PATHS.ringAnswer(callId), { legId: target, sdp }, ringAnswerReplySchema);
  if (answered.ok) {
    entry.connected = true;
    return ok({ connected: true });
  }
  // Not connected ahead: asked again, it is tried again; else the relay applies it at the click.
  log.info('a ringing leg could not connect ahead of the click', { callId, legId: target, reason: answered.error.message });
  return answered;
}

/**
 * The leg an Answer's `sdp` answers: the one a window connected ahead with it, else the ring's own
 * leg, unless another window's answer took that one (the click must come from that window).
 */
export function legAnswered(leg: RingingLeg, sdp: string): Result<string> {
  const answers = leg.ringAnswers;
  if (answers === undefined) return ok(leg.legId);
  for (const [legId, answer] of answers) if (answer?.sdp === sdp) return ok(legId);
  return answers.get(leg.legId) === undefined ? ok(leg.legId) : errText('invalid_state', text('calls.answerInRingingWindow'));
}
