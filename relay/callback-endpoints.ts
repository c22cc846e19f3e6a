// `GET /team/callbacks` and `POST /team/callbacks/{id}/take` (relay/REFERENCE.md "Callback requests"):
// the team's callback list for any of its agents, and "Call back", which takes a request for the
// asking agent unless a colleague has it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CALLBACKS_PATH, type CallbackRequest } from '../shared/callbacks';
import type { Agent } from './agent-directory';
import type { TakeCallbackOutcome } from './backend/types';
import { methodNotAllowed, sendError, sendJson } from './http-io';

const TAKE_PATH = /^\/team\/callbacks\/([^/]+)\/take$/;

export interface CallbackEndpointContext {
  /** The request's agent, or undefined once answered 401/429. */
  authenticate(req: IncomingMessage, res: ServerResponse): Agent | undefined;
  /** The request's body, bounded as every agent request's (64 KiB); undefined once answered 413 or when the client went away. */
  body(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined>;
  /** The id in a path, or undefined once answered 400. */
  idFromPath(res: ServerResponse, raw: string, field: string): string | undefined;
  callbacks(): Promise<CallbackRequest[]>;
  takeCallback(id: string, agent: Agent): Promise<TakeCallbackOutcome>;
}

/** Whether the path is one of these endpoints' (then it is answered). */
export function isCallbacksPath(path: string): boolean {
  return path === CALLBACKS_PATH || TAKE_PATH.test(path);
}

export async function handleCallbacksRequest(ctx: CallbackEndpointContext, path: string, method: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const take = TAKE_PATH.exec(path);
  if (take === null) {
    if (method !== 'GET') return methodNotAllowed(res, 'GET');
    if (ctx.authenticate(req, res) === undefined) return;
    return sendJson(res, 200, { callbacks: await ctx.callbacks() });
  }
  if (method !== 'POST') return methodNotAllowed(res, 'POST');
  const agent = ctx.authenticate(req, res);
  if (agent === undefined) return;
  // No body is expected; one that is sent is still bounded.
  if ((await ctx.body(req, res)) === undefined) return;
  const id = ctx.idFromPath(res, take[1]!, 'id');
  if (id === undefined) return;
  const outcome = await ctx.takeCallback(id, agent);
  switch (outcome.kind) {
    case 'taken':
      return sendJson(res, 200, { callback: outcome.request });
    case 'taken_by_other': {
      const { agentId, name } = outcome.request.takenBy;
      // The window says it in its own words from `name` ("Taken by NAME"); the message is the English one.
      return sendError(res, 409, 'taken', `Taken by ${name}`, { agentId, name });
    }
    case 'not_found':
      return sendError(res, 404, 'not_found', `no callback request ${id}`);
  }
}
