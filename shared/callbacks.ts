// Callback requests (protocol.md "Callback requests"): a customer who asked to be called back
// answers with a `call_permission_reply` the service sends by itself — `response: "accept"`,
// `response_source: "automatic"`, and the id of the call it is about in the message's
// `context.id`. The permission lasts 7 days unless it is permanent. The relay keeps the team's list
// (in its backend, so every instance shows the same); the Team view shows it under "Callback
// requested", and "Call back" takes one for its agent (colleagues then see "Taken by NAME") and dials.
//
// Decisions:
// - One request per customer: a newer one replaces the older (its call id and time left).
// - A request leaves the list when the permission runs out, when the service withdraws it (an
//   automatic `reject` from the same customer), or when a call of the team's to that customer is
//   answered. A taken request stays (taken) until then, so its agent can dial again.
// - A permission reply without an expiry that is not permanent lasts the service's 7 days from
//   when it came.
import { z } from 'zod';
import { colleagueSchema } from './transfer';

/** The service's temporary call permission (protocol.md). */
export const CALL_PERMISSION_MS = 7 * 24 * 60 * 60 * 1000;

export const CALLBACKS_PATH = '/team/callbacks';
/** POST: takes the request for the asking agent. */
export const takeCallbackPath = (id: string): string => `${CALLBACKS_PATH}/${encodeURIComponent(id)}/take`;

export const callbackRequestSchema = z.object({
  /** The id of the call the request is about (the reply's `context.id`): the request's id. */
  id: z.string().min(1).max(512),
  /** The customer: digits with country code, and/or the business-scoped user id; the name when the service gave one. */
  number: z.string().optional(),
  userId: z.string().optional(),
  name: z.string().optional(),
  /** When the request came (unix ms). */
  requestedAt: z.number(),
  /** When the permission runs out (unix ms); absent for a permanent one. */
  expiresAt: z.number().optional(),
  permanent: z.boolean(),
  /** The agent who took it with "Call back", and when. */
  takenBy: colleagueSchema.extend({ at: z.number() }).optional(),
});
export type CallbackRequest = z.infer<typeof callbackRequestSchema>;

/** GET /team/callbacks: the team's list, the oldest request first. */
export const callbacksReplySchema = z.object({ callbacks: z.array(callbackRequestSchema).max(10_000) });
export type CallbacksReply = z.infer<typeof callbacksReplySchema>;

/** POST /team/callbacks/{id}/take: 200 with the request, now taken by the asker (again, when it already was). */
export const takeCallbackReplySchema = z.object({ callback: callbackRequestSchema });

/** Time left of a request at `now` (ms; 0 once run out), or undefined for a permanent one. */
export function callbackTimeLeftMs(request: Pick<CallbackRequest, 'expiresAt' | 'permanent'>, now: number): number | undefined {
  if (request.permanent || request.expiresAt === undefined) return undefined;
  return Math.max(0, request.expiresAt - now);
}
