// The agent's endpoints for transfers, consults and three-way calls (shared/transfer.ts
// TRANSFER_PATHS, relay/REFERENCE.md "Transfers"), and the team they pick a colleague from. Every one
// takes the agent token; transfers.ts decides whether this agent may do it. The team is answered by
// any relay; the rest by a relay that bridges calls (404 otherwise: a direct call is not handed on).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerBodySchema } from '../shared/bridge';
import { TRANSFER_PATHS, transferRequestSchema, type TeamReply } from '../shared/transfer';
import { answerOutcome, parsedBody, type BridgeEndpointContext } from './bridge-endpoints';
import type { BridgedCalls } from './bridged-calls';
import { methodNotAllowed, sendError, sendJson } from './http-io';

const START_PATH = /^\/calls\/([^/]+)\/bridge\/transfer$/;
const STEP_PATH = /^\/calls\/([^/]+)\/bridge\/transfer\/([^/]+)\/(cancel|complete|join|answer|decline)$/;
const LEAVE_PATH = /^\/calls\/([^/]+)\/bridge\/leave$/;

export interface TransferEndpointContext extends Omit<BridgeEndpointContext, 'bridge'> {
  /** Absent: calls are not bridged, and the transfer endpoints answer 404. */
  bridge: BridgedCalls | undefined;
  /** GET /team's answer for this agent. */
  team(selfId: string): TeamReply;
}

/** Whether the path is one of these endpoints (then it is answered). */
export function isTransferPath(path: string): boolean {
  return path === TRANSFER_PATHS.team || START_PATH.test(path) || STEP_PATH.test(path) || LEAVE_PATH.test(path);
}

export async function handleTransferRequest(ctx: TransferEndpointContext, path: string, method: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (path === TRANSFER_PATHS.team) {
    if (method !== 'GET') return methodNotAllowed(res, 'GET');
    const agent = ctx.authenticate(req, res);
    if (agent !== undefined) sendJson(res, 200, ctx.team(agent.id));
    return;
  }
  if (method !== 'POST') return methodNotAllowed(res, 'POST');
  const agent = ctx.authenticate(req, res);
  if (agent === undefined) return;
  const body = await ctx.jsonBody(req, res);
  if (body === undefined) return;
  const { bridge } = ctx;
  if (bridge === undefined) return sendError(res, 404, 'not_found', 'calls are not bridged');

  const start = START_PATH.exec(path);
  if (start) {
    const callId = ctx.idFromPath(res, start[1]!, 'callId');
    const request = callId === undefined ? undefined : parsedBody(res, transferRequestSchema, body);
    if (callId === undefined || request === undefined) return;
    return answerOutcome(res, await bridge.transfer(callId, agent.id, request));
  }
  const leave = LEAVE_PATH.exec(path);
  if (leave) {
    const callId = ctx.idFromPath(res, leave[1]!, 'callId');
    if (callId === undefined) return;
    return answerOutcome(res, await bridge.leave(callId, agent.id));
  }
  const step = STEP_PATH.exec(path)!;
  const callId = ctx.idFromPath(res, step[1]!, 'callId');
  const transferId = callId === undefined ? undefined : ctx.idFromPath(res, step[2]!, 'transferId');
  if (callId === undefined || transferId === undefined) return;
  switch (step[3]) {
    case 'answer': {
      const answer = parsedBody(res, answerBodySchema, body);
      if (answer === undefined) return;
      return answerOutcome(res, await bridge.answerTransfer(callId, transferId, agent.id, answer.legId, answer.sdp));
    }
    case 'decline':
      return answerOutcome(res, await bridge.declineTransfer(callId, transferId, agent.id));
    case 'cancel':
      return answerOutcome(res, await bridge.cancelTransfer(callId, transferId, agent.id));
    case 'complete':
      return answerOutcome(res, await bridge.completeTransfer(callId, transferId, agent.id));
    case 'join':
      return answerOutcome(res, await bridge.joinTransfer(callId, transferId, agent.id));
  }
}
