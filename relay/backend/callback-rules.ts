// The rules of the team's callback list that both backends apply alike (shared/callbacks.ts,
// relay/REFERENCE.md "Callback requests"): who is the same customer, when a request has run out, in
// which order the list is read, and how many requests it keeps.
import type { CallbackRequest } from '../../shared/callbacks';

/** The most requests the list keeps: what `GET /team/callbacks` may answer (`callbacksReplySchema`). */
export const CALLBACKS_MAX = 10_000;

/** A customer as a request or an answered call names them: the number and/or the business-scoped user id. */
export interface CallbackCustomer {
  number?: string;
  userId?: string;
}

/**
 * A request's customer by each of their ids, as keys: `n:<number>`, `u:<userId>`. Two requests are
 * of the same customer when they share one of them: the number, else the user id a customer who
 * hides their number is known by.
 */
export function customerKeysOf(customer: CallbackCustomer): string[] {
  const number = customer.number === undefined ? '' : numberOf(customer.number);
  return [...(number !== '' ? [`n:${number}`] : []), ...(customer.userId !== undefined && customer.userId !== '' ? [`u:${customer.userId}`] : [])];
}

export function sameCustomer(a: CallbackCustomer, b: CallbackCustomer): boolean {
  const keys = new Set(customerKeysOf(a));
  return customerKeysOf(b).some((key) => keys.has(key));
}

/** Digits with country code, as the relay's events carry a customer's number (a call status may keep the "+"). */
function numberOf(number: string): string {
  return number.replace(/^\+/, '');
}

/** A request is live until its permission runs out; a permanent one always is. */
export function isLiveCallback(request: Pick<CallbackRequest, 'permanent' | 'expiresAt'>, now: number): boolean {
  return request.permanent || request.expiresAt === undefined || request.expiresAt > now;
}

/** The list's order: the oldest request first, then by id, so that every instance lists alike. */
export function byRequestedAt(a: CallbackRequest, b: CallbackRequest): number {
  return a.requestedAt - b.requestedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Which request leaves when the list is full: the one whose permission runs out first (a permanent
 * one last), then by id (as a Redis sorted set orders equal scores).
 */
export function runsOutFirst(a: CallbackRequest, b: CallbackRequest): number {
  // Two permanent requests: Infinity - Infinity is NaN, and the ids decide.
  return expiryOf(a) - expiryOf(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

const expiryOf = (request: CallbackRequest): number => (request.permanent || request.expiresAt === undefined ? Number.POSITIVE_INFINITY : request.expiresAt);
