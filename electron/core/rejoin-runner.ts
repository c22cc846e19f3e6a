// The two effects of a bridged call rejoining (shared/calls/rejoin.ts), run for the call coordinator:
// `rejoin` asks the relay for a new leg (BridgedCallControl.rejoin, asked again while the relay
// cannot answer) and feeds back its offer or its refusal as a verdict; `rejoin_answer` hands the
// window's answer to the relay and feeds back its word. What the relay's answers mean for the call
// is said here, once; what becomes of the call is the reducer's.
import {
  canRejoin,
  localErrorFrom,
  type CallEffect,
  type CallEvent,
  type CallRecord,
  type RejoinAnswerOutcome,
  type RejoinVerdict,
} from '../../shared/call-state';
import type { Logger } from '../../shared/log';
import { err, errorText, errText, type AppError } from '../../shared/result';
import { english, text } from '../../shared/i18n/text';
import type { CallRejoins } from './bridged-calls';

/** A 503 is the relay saying the call's bridge node is gone: said as when the relay tells it unasked (call.bridge_failed node_gone). */
const NODE_GONE = text('calls.bridgeNodeGone');

export type RejoinEffect = Extract<CallEffect, { kind: 'rejoin' | 'rejoin_answer' }>;

/** What the runner needs of the coordinator: its clock, its calls, and the way back into the reducer. */
export interface RejoinHost {
  now(): number;
  call(localId: string): CallRecord | undefined;
  dispatch(ev: CallEvent): void;
  log: Logger;
}

/**
 * What the relay's refusal of a rejoin means for the call (BRIDGE_AGENT_PATHS.rejoin): 403, the
 * call went on without this agent; 410, the relay ended it for this agent being away too long;
 * anything else — 404 (a relay that restarted, or a call over), 503 (its node gone), or no answer
 * while the window lasted — the call is gone here, and the gateway hears terminate.
 */
export function rejoinVerdictOf(error: AppError): RejoinVerdict {
  if (error.httpStatus === 403) return 'not_member';
  if (error.httpStatus === 410) return 'ended';
  return 'gone';
}

/**
 * The relay's word on a window's answer (BRIDGE_AGENT_PATHS.rejoinAnswer). A 400 is the answer's
 * SDP refused; an answer the relay could not be asked about (unreachable, a timeout, a 5xx) is
 * taken the same way: a fresh offer is asked for, which also replaces a leg the relay may have
 * taken unheard. Anything else (403: not the leg offered last; 409) is a refusal.
 */
export function rejoinAnswerOutcomeOf(error: AppError | undefined): RejoinAnswerOutcome {
  if (error === undefined) return { kind: 'answered' };
  const unanswered = error.code === 'timeout' || (error.code === 'gateway_unreachable' && (error.httpStatus === undefined || error.httpStatus >= 500));
  return error.httpStatus === 400 || unanswered ? { kind: 'sdp_refused', error } : { kind: 'refused', error };
}

export class RejoinRunner {
  /** Per call (local id), the rejoin being asked for: aborted once the call no longer waits for it. */
  private readonly asking = new Map<string, AbortController>();

  constructor(
    private readonly rejoins: CallRejoins | undefined,
    private readonly host: RejoinHost,
  ) {}

  /** Runs one effect; resolves once its outcome is fed back (or dropped, for a call that moved on). */
  run(effect: RejoinEffect): Promise<void> {
    return effect.kind === 'rejoin' ? this.rejoin(effect.localId) : this.answer(effect);
  }

  /** A call changed: a rejoin it no longer waits for (it ended, was offered a leg, was asked again) stops being asked. */
  follow(call: CallRecord): void {
    const under = this.asking.get(call.localId);
    if (under !== undefined && call.open?.waiting !== 'rejoin_offer') under.abort();
  }

  /** Stops asking for every rejoin (shutdown). */
  stop(): void {
    for (const under of this.asking.values()) under.abort();
    this.asking.clear();
  }

  private async rejoin(localId: string): Promise<void> {
    const call = this.host.call(localId);
    if (!canRejoin(call) || call.open?.waiting !== 'rejoin_offer') return;
    this.asking.get(localId)?.abort();
    const under = new AbortController();
    this.asking.set(localId, under);
    // Never answered within the dispatch that asked: the step that asked is announced first.
    const asked = await (this.rejoins?.rejoin(call, under.signal) ?? Promise.resolve(errText('not_available', text('calls.failed')))).catch((e: unknown) =>
      err<{ legId: string; offer: string }>('internal', errorText(e)),
    );
    if (this.asking.get(localId) === under) this.asking.delete(localId);
    if (under.signal.aborted) return;
    const at = this.host.now();
    if (asked.ok) {
      this.host.dispatch({ type: 'local.rejoin_offer', at, localId, legId: asked.value.legId, offerSdp: asked.value.offer });
      return;
    }
    const verdict = rejoinVerdictOf(asked.error);
    this.host.log.warn('the relay gave no new leg to a rejoining call', { localId, callId: call.callId, verdict, httpStatus: asked.error.httpStatus, reason: asked.error.message });
    const error = asked.error.httpStatus === 503 ? { code: 'media_failed', message: english(NODE_GONE), text: NODE_GONE } : localErrorFrom(asked.error);
    this.host.dispatch({ type: 'local.rejoin_failed', at, localId, error, verdict });
  }

  private async answer(effect: Extract<RejoinEffect, { kind: 'rejoin_answer' }>): Promise<void> {
    const { localId, callId, legId, sdp } = effect;
    const answered = await (this.rejoins?.rejoinAnswer(callId, legId, sdp) ?? Promise.resolve(errText('not_available', text('calls.failed')))).catch((e: unknown) =>
      err<null>('internal', errorText(e)),
    );
    const outcome = rejoinAnswerOutcomeOf(answered.ok ? undefined : answered.error);
    if (outcome.kind !== 'answered') this.host.log.warn('the relay did not take a window’s answer to a rejoin', { localId, callId, legId, outcome: outcome.kind, reason: outcome.error.message });
    this.host.dispatch({ type: 'local.rejoin_answered', at: this.host.now(), localId, legId, outcome });
  }
}
