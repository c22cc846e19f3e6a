// What the service's events do to the team's callback list (shared/callbacks.ts, relay/REFERENCE.md
// "Callback requests"), as pure functions over the event and what the relay knows of outgoing calls.
// The list itself lives in the backend (backend/callback-rules.ts); relay-service.ts applies these.
import { CALL_PERMISSION_MS, callbackRequestSchema, type CallbackRequest } from '../shared/callbacks';
import type { RelayEvent } from '../shared/events';
import type { CallbackCustomer } from './backend/callback-rules';

export type CallbackChange =
  /** A customer asked to be called back: their request goes on the list. */
  | { kind: 'add'; request: CallbackRequest }
  /**
   * The customer's requests leave the list: the service withdrew the permission (`withdrawn`, a
   * `reject`), or a call of the team's to them was answered (`answered`).
   */
  | { kind: 'drop'; customer: CallbackCustomer; why: 'withdrawn' | 'answered' };

/**
 * What an event does to the list, if anything. A callback request is a permission reply the service
 * sent by itself (`source` `automatic`) that accepts and names the call it is about (`contextId`,
 * protocol.md "Callback requests"); its permission lasts until its expiry, or the service's 7 days
 * from when it came when it names none and is not permanent. A `reject` of the customer, whoever
 * sent it, withdraws the permission. An outgoing call is answered when the service says the customer
 * accepted it (`call.status` ACCEPTED) or sends their answer (`call.answered`): its customer is the
 * status's recipient, else what `outgoingCustomerOf` knows of the call from its earlier statuses.
 */
export function callbackChangeOf(event: RelayEvent, outgoingCustomerOf: (callId: string) => CallbackCustomer | undefined): CallbackChange | undefined {
  switch (event.type) {
    case 'message.inbound': {
      const reply = event.permissionReply;
      const customer = customerOf(event.from, event.fromUserId);
      if (reply === undefined || customer === undefined) return undefined;
      if (reply.response === 'reject') return { kind: 'drop', customer, why: 'withdrawn' };
      if (reply.source !== 'automatic' || event.contextId === undefined) return undefined;
      const permanent = reply.isPermanent === true;
      const parsed = callbackRequestSchema.safeParse({
        id: event.contextId,
        ...customer,
        ...(event.name !== undefined ? { name: event.name } : {}),
        requestedAt: event.timestamp,
        ...(permanent ? {} : { expiresAt: reply.expiresAt ?? event.timestamp + CALL_PERMISSION_MS }),
        permanent,
      });
      return parsed.success ? { kind: 'add', request: parsed.data } : undefined;
    }
    case 'call.status':
    case 'call.answered': {
      if (event.type === 'call.status' && event.status !== 'ACCEPTED') return undefined;
      const known = outgoingCustomerOf(event.callId);
      const said = event.type === 'call.status' ? customerOf(event.recipientId, event.recipientUserId) : undefined;
      const customer = customerOf(said?.number ?? known?.number, said?.userId ?? known?.userId);
      return customer === undefined ? undefined : { kind: 'drop', customer, why: 'answered' };
    }
    default:
      return undefined;
  }
}

/** The customer an outgoing call's status names (its recipient), if it names one. */
export function recipientOf(event: RelayEvent): CallbackCustomer | undefined {
  return event.type === 'call.status' ? customerOf(event.recipientId, event.recipientUserId) : undefined;
}

/** A customer by the ids an event gives (a status's number may keep its "+"); undefined when it gives none. */
function customerOf(number: string | undefined, userId: string | undefined): CallbackCustomer | undefined {
  const digits = number?.replace(/^\+/, '');
  const customer: CallbackCustomer = { ...(digits !== undefined && digits !== '' ? { number: digits } : {}), ...(userId !== undefined && userId !== '' ? { userId } : {}) };
  return customer.number !== undefined || customer.userId !== undefined ? customer : undefined;
}

/** More customers than the backend's list holds: the hints no longer tell anything. */
const MAX_HINTS = 20_000;

/**
 * The customers this instance knows to have a request on the team's list: the list as it was read
 * at start, and every request any instance stored since (each reaches every instance's
 * subscription). An answered outgoing call to anyone else asks nothing of the backend: most
 * answered calls are not call-backs, and a busy Redis paid a script call for each of them. A
 * request stored on another instance within the moment its event takes to arrive here is missed by
 * an answer in that moment; it then stays listed (taken) until it runs out or the next answered
 * call. Until the list is read, or if it cannot be, or past MAX_HINTS, every answer asks.
 */
export class CallbackHints {
  private readonly keys = new Set<string>();
  private known = false;

  /** The list as the backend has it now (after the subscription started, so nothing falls between). */
  loaded(requests: readonly CallbackCustomer[]): void {
    for (const request of requests) this.note(request);
    this.known = this.keys.size <= MAX_HINTS;
  }

  note(customer: CallbackCustomer): void {
    for (const key of keysOf(customer)) this.keys.add(key);
    if (this.keys.size > MAX_HINTS) this.known = false;
  }

  forget(customer: CallbackCustomer): void {
    for (const key of keysOf(customer)) this.keys.delete(key);
  }

  /** Whether the customer may have a request on the list. */
  mayHave(customer: CallbackCustomer): boolean {
    return !this.known || keysOf(customer).some((key) => this.keys.has(key));
  }
}

function keysOf(customer: CallbackCustomer): string[] {
  return [...(customer.number !== undefined ? [`n:${customer.number}`] : []), ...(customer.userId !== undefined ? [`u:${customer.userId}`] : [])];
}
