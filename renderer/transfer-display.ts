// How a transfer, a consult and a three-way call read on screen (shared/transfer.ts): which step the
// call panel is at and what it offers there, the words for each step, and the team as "Transfer to"
// lists it. Pure, so it is tested without a DOM; every text is worded in the UI's language of the
// moment it is asked for.
import { isRejoining, type CallState, type CallTransfer } from '../shared/call-state';
import type { TeamMember, TeamPresence, TransferKind } from '../shared/transfer';
import { assertNever } from '../shared/result';
import { i18n, intlLocale } from './i18n/i18n';

const t = i18n.getFixedT(null, 'calls');

/**
 * Where a call's transfer is, as the call panel shows it:
 * - `none`: nothing under way (or this agent has the customer again): the call's own controls.
 * - `calling`: this agent's transfer or consult rings a colleague; the customer hears music.
 * - `consulting`: this agent talks with the colleague it consults; the customer hears music.
 * - `consulted`: a colleague's consult, answered here; the customer hears music.
 * - `joined`: a three-way call.
 * - `not_answered`: nobody took this agent's transfer: it is back with the customer.
 * - `received`: a colleague's transfer (or consult, completed) answered here: the customer is this agent's.
 */
export type TransferStep =
  | { step: 'none' }
  | { step: 'calling' | 'consulting' | 'consulted' | 'joined' | 'not_answered' | 'received'; transfer: CallTransfer };

export function transferStep(call: Pick<CallState, 'transfer'>): TransferStep {
  const transfer = call.transfer;
  if (transfer === undefined) return { step: 'none' };
  if (transfer.role === 'from') {
    switch (transfer.state) {
      case 'ringing':
        return { step: 'calling', transfer };
      case 'consulting':
        return { step: 'consulting', transfer };
      case 'joined':
        return { step: 'joined', transfer };
      case 'not_answered':
        return { step: 'not_answered', transfer };
      case 'done':
        return { step: 'none' };
      default:
        return assertNever(transfer.state, 'transfer state');
    }
  }
  switch (transfer.state) {
    // Answered, before the relay's word: a consult is a consult, a transfer this agent's call.
    case 'ringing':
      return { step: transfer.kind === 'consult' ? 'consulted' : 'received', transfer };
    case 'consulting':
      return { step: 'consulted', transfer };
    case 'joined':
      return { step: 'joined', transfer };
    case 'done':
      return { step: 'received', transfer };
    // Only the agent who started a transfer is told it was not answered.
    case 'not_answered':
      return { step: 'none' };
    default:
      return assertNever(transfer.state, 'transfer state');
  }
}

/** A transfer, consult or three-way call is under way: the customer is not this agent's alone (no Hold, no new transfer). */
export const transferUnderWay = (step: TransferStep): boolean => step.step === 'calling' || step.step === 'consulting' || step.step === 'consulted' || step.step === 'joined';

/** "Transfer" and "Consult" are offered: an active call through the team's bridge, with no transfer under way. */
export function offersTransfer(call: CallState): boolean {
  return call.phase === 'active' && call.bridged === true && !transferUnderWay(transferStep(call)) && !isRejoining(call);
}

/** "Hold"/"Resume" are offered: an active call whose customer is not in a transfer, consult or three-way call. */
export function offersHold(call: CallState): boolean {
  return call.phase === 'active' && !transferUnderWay(transferStep(call)) && !isRejoining(call);
}

/** The colleague's name, or "a colleague" where the relay named none. */
const colleagueName = (transfer: CallTransfer): string => transfer.colleague?.name ?? t('transfer.aColleague');

/** The panel's sentence for the step (undefined for `none`): "Transferring to Ben…", "Consulting Ben — the customer is on hold". */
export function transferStepText(step: TransferStep): string | undefined {
  switch (step.step) {
    case 'none':
      return undefined;
    case 'calling': {
      const name = step.transfer.colleague?.name;
      if (step.transfer.kind === 'transfer') return name !== undefined ? t('transfer.transferring', { name }) : t('transfer.transferringAnyone');
      return name !== undefined ? t('transfer.consultCalling', { name }) : t('transfer.consultCallingAnyone');
    }
    case 'consulting':
      return t('transfer.consulting', { name: colleagueName(step.transfer) });
    case 'consulted':
      return t('transfer.consultFrom', { name: colleagueName(step.transfer) });
    case 'joined':
      return t('transfer.threeWay', { name: colleagueName(step.transfer) });
    case 'not_answered':
      return t('transfer.notAnswered');
    case 'received':
      return t('transfer.transferredFrom', { name: colleagueName(step.transfer) });
    default:
      return assertNever(step, 'transfer step');
  }
}

/** A colleague's transfer or consult that rings this agent: "Transfer from Ben" / "Consult from Ben"; undefined for any other call. */
export function transferRingHeading(call: Pick<CallState, 'transfer'>): string | undefined {
  const transfer = call.transfer;
  if (transfer?.role !== 'to') return undefined;
  const name = colleagueName(transfer);
  return transfer.kind === 'consult' ? t('incoming.consultFrom', { name }) : t('incoming.transferFrom', { name });
}

/** The dialog's name: "Transfer to" or "Consult with". */
export const transferDialogTitle = (kind: TransferKind): string => (kind === 'consult' ? t('transfer.consultWith') : t('transfer.transferTo'));

// ---- the team ----

/** A colleague as "Transfer to" lists it. */
export interface TeamChoice {
  agentId: string;
  name: string;
  presence: TeamPresence;
  /** Offline, Do not disturb, a break and after-call work cannot be rung. */
  enabled: boolean;
}

export function presenceText(presence: TeamPresence): string {
  switch (presence) {
    case 'available':
      return t('transfer.presence.available');
    case 'on_call':
      return t('transfer.presence.onCall');
    case 'call_waiting':
      return t('transfer.presence.callWaiting');
    case 'dnd':
      return t('transfer.presence.dnd');
    case 'break':
      return t('transfer.presence.break');
    case 'after_call_work':
      return t('transfer.presence.afterCallWork');
    case 'offline':
      return t('transfer.presence.offline');
    default:
      return assertNever(presence, 'team presence');
  }
}

const RINGABLE: ReadonlySet<TeamPresence> = new Set(['available', 'call_waiting', 'on_call']);

/** Every colleague but this agent, sorted by name as the UI's language sorts (the agent id breaks a tie). */
export function teamChoices(members: readonly TeamMember[], locale: string = intlLocale()): TeamChoice[] {
  const collator = new Intl.Collator(locale, { sensitivity: 'base', numeric: true });
  return members
    .filter((m) => m.self !== true)
    .map((m) => ({ agentId: m.agentId, name: m.name, presence: m.presence, enabled: RINGABLE.has(m.presence) }))
    .sort((a, b) => collator.compare(a.name, b.name) || (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0));
}
