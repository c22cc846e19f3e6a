// The agent's transfer commands (shared/api.ts transferCall, cancelTransfer, completeTransfer,
// addToCall, getTeam): each checks the call it names as the coordinator holds it (shared/calls/
// transfers.ts) and asks the relay. How a transfer goes reaches the call as the relay's events
// (`call.transfer_update`), through the coordinator like any other — except a cancel of a transfer
// the relay no longer knows: no word of it will ever come, so the call hears it is over from here.
import { TRANSFER_REFUSALS, transferableCall, transferToActOn, type CallState, type TransferAction } from '../../shared/call-state';
import { text } from '../../shared/i18n/text';
import { errText, ok, type Result } from '../../shared/result';
import type { TeamMember, TransferKind } from '../../shared/transfer';
import type { CallTransfers } from './bridged-calls';

/** Where the calls are: the coordinator. */
export interface CallLookup {
  call(localId: string): CallState | undefined;
  /** The relay no longer knows this agent's transfer `transferId` of the call: it is over (local.transfer_gone). */
  transferGone(localId: string, transferId: string): void;
}

export class TransferCommands {
  /** `transfers` absent: calls are not bridged here, and every command says so. */
  constructor(
    private readonly calls: CallLookup,
    private readonly transfers: CallTransfers | undefined,
  ) {}

  /**
   * "Transfer" / "Consult" a bridged, active call of this agent's to a colleague (or everyone
   * available): the relay rings them and names the transfer.
   */
  async transferCall(localId: string, to: string, kind: TransferKind): Promise<Result<{ transferId: string }>> {
    const on = this.checked(localId, transferableCall);
    return on.ok ? on.value.transfers.transfer(on.value.callId, to, kind) : on;
  }

  /** "Cancel transfer" / "Cancel consult": back with the customer. */
  cancelTransfer(localId: string): Promise<Result<null>> {
    return this.act(localId, 'cancel');
  }

  /** "Complete transfer": the customer stays with the colleague consulted; this agent's call ends. */
  completeTransfer(localId: string): Promise<Result<null>> {
    return this.act(localId, 'complete');
  }

  /** "Add to call": the consult becomes a three-way call. */
  addToCall(localId: string): Promise<Result<null>> {
    return this.act(localId, 'join');
  }

  /** The team for "Transfer to", every agent as the relay lists it (this agent marked `self`). */
  async team(): Promise<Result<TeamMember[]>> {
    return this.transfers !== undefined ? this.transfers.team() : errText('invalid_state', TRANSFER_REFUSALS.notBridged);
  }

  private async act(localId: string, action: TransferAction): Promise<Result<null>> {
    const on = this.checked(localId, (call) => transferToActOn(call, action));
    if (!on.ok) return on;
    const { transfers, callId, transferId } = on.value;
    if (action === 'cancel') return this.cancel(localId, transfers, callId, transferId);
    return action === 'complete' ? transfers.completeTransfer(callId, transferId) : transfers.addToCall(callId, transferId);
  }

  /**
   * A cancel the relay answers 404 is of a transfer it no longer knows (it restarted, or lost the
   * call): nothing rings any more and nothing will say so, so the transfer is over here too, as
   * the agent asked.
   */
  private async cancel(localId: string, transfers: CallTransfers, callId: string, transferId: string): Promise<Result<null>> {
    const cancelled = await transfers.cancelTransfer(callId, transferId);
    if (cancelled.ok || cancelled.error.httpStatus !== 404) return cancelled;
    this.calls.transferGone(localId, transferId);
    return ok(null);
  }

  /** What a command acts on, as `check` finds it in the call, with the team's transfers; else why not. */
  private checked<T>(localId: string, check: (call: CallState) => Result<T>): Result<T & { transfers: CallTransfers }> {
    if (this.transfers === undefined) return errText('invalid_state', TRANSFER_REFUSALS.notBridged);
    const call = this.calls.call(localId);
    if (call === undefined) return errText('not_found', text('calls.noSuchCall', { localId }));
    const found = check(call);
    return found.ok ? ok({ ...found.value, transfers: this.transfers }) : found;
  }
}
