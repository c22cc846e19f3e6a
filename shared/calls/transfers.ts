// Transfers, consults and three-way calls as a call sees them (shared/transfer.ts): while one is
// under way the relay routes the customer (the hold music, a colleague, all three), so the call is
// not this agent's alone to hold or hand on; and what each of the agent's transfer commands may act
// on (nothing while the call rejoins: the agent is not back in it). Pure: the reducer refuses a hold with it, the coordinator checks a command with it before it
// asks the relay.
import { term, text, type RuleText } from '../i18n/text';
import { errText, ok, type Result } from '../result';
import { isRejoining, PHASE_TERM, REJOIN_REFUSALS, type CallPhase, type CallState, type CallTransfer } from './types';

/** The states in which the relay, not this agent's hold, decides what the customer hears. */
export const TRANSFER_UNDER_WAY: ReadonlySet<CallTransfer['state']> = new Set(['ringing', 'consulting', 'joined']);
export const transferUnderWay = (call: Pick<CallState, 'transfer'>): boolean => call.transfer !== undefined && TRANSFER_UNDER_WAY.has(call.transfer.state);
/** The states in which a transfer is over: nothing the relay says of it any more changes the call, and a new one may start. */
export const TRANSFER_OVER: ReadonlySet<CallTransfer['state']> = new Set(['not_answered', 'done']);

/** What the agent can do with the transfer under way: "Cancel", "Complete transfer", "Add to call". */
export type TransferAction = 'cancel' | 'complete' | 'join';

/** The states of this agent's own transfer each action applies to (shared/transfer.ts TRANSFER_PATHS). */
const ACTS_ON: Readonly<Record<TransferAction, ReadonlySet<CallTransfer['state']>>> = {
  cancel: new Set(['ringing', 'consulting']),
  complete: new Set(['consulting']),
  join: new Set(['consulting']),
};

/**
 * The refusals of the transfer commands, each a clear invalid_state said from the catalogue
 * (`errText('invalid_state', TRANSFER_REFUSALS.none)`), so that the window says it in the agent's language.
 */
export const TRANSFER_REFUSALS = {
  notBridged: text('calls.transfersNotBridged'),
  callNotBridged: text('calls.callNotBridged'),
  onlyActive: (phase: CallPhase): RuleText => text('calls.onlyActiveTransferred', { phase: term(PHASE_TERM[phase]) }),
  notYours: text('calls.transferNotYours'),
  colleagues: text('calls.transferColleagues'),
  underWay: text('calls.transferUnderWay'),
  none: text('calls.noTransfer'),
  cancel: text('calls.transferNotCancellable'),
  complete: text('calls.consultNotAnsweredComplete'),
  join: text('calls.consultNotAnsweredJoin'),
  hold: text('calls.noHoldDuringTransfer'),
} as const;

const refuse = (said: RuleText): Result<never> => errText('invalid_state', said);

/**
 * The call id a new transfer or consult of this call goes to: the call must be bridged, active and
 * this agent's (no transfer under way, none a colleague started that has not become this agent's).
 */
export function transferableCall(call: CallState): Result<{ callId: string }> {
  if (call.bridged !== true) return refuse(TRANSFER_REFUSALS.callNotBridged);
  if (call.phase !== 'active') return refuse(TRANSFER_REFUSALS.onlyActive(call.phase));
  // Its leg is being replaced: the agent cannot talk to a colleague, nor hand the customer on, before it is back.
  if (isRejoining(call)) return refuse(REJOIN_REFUSALS.rejoining);
  const current = call.transfer;
  if (current?.role === 'to' && current.state !== 'done') return refuse(TRANSFER_REFUSALS.notYours);
  if (current?.role === 'from' && TRANSFER_UNDER_WAY.has(current.state)) return refuse(TRANSFER_REFUSALS.underWay);
  return ok({ callId: call.callId });
}

/** The call id and transfer id an action on this agent's transfer under way goes to. */
export function transferToActOn(call: CallState, action: TransferAction): Result<{ callId: string; transferId: string }> {
  const current = call.transfer;
  if (call.phase === 'ended' || call.callId === undefined || current === undefined || !TRANSFER_UNDER_WAY.has(current.state)) return refuse(TRANSFER_REFUSALS.none);
  if (current.role === 'to') return refuse(TRANSFER_REFUSALS.colleagues);
  if (isRejoining(call)) return refuse(REJOIN_REFUSALS.rejoining);
  if (!ACTS_ON[action].has(current.state)) return refuse(TRANSFER_REFUSALS[action]);
  return ok({ callId: call.callId, transferId: current.id });
}
