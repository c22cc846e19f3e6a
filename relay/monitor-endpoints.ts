// The supervisors' endpoints (shared/supervision.ts SUPERVISOR_PATHS, relay/REFERENCE.md
// "Supervisors"): the team's live calls, and joining one to listen, whisper or barge. Every one takes
// the agent token, and an agent who is not a supervisor is refused 403 before anything else is looked
// at — its method, its body, the call it names — so that nothing about the team's calls is told to
// anyone else. supervision.ts and monitors.ts decide the rest.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerBodySchema } from '../shared/bridge';
import { monitorBodySchema, SUPERVISOR_PATHS } from '../shared/supervision';
import { answerOutcome, parsedBody, type BridgeEndpointContext } from './bridge-endpoints';
import { methodNotAllowed, sendError, sendJson } from './http-io';
import type { Supervision } from './supervision';
import { colleagueName } from './team';

const MONITOR_PATH = /^\/team\/calls\/([^/]+)\/monitor$/;
const MONITOR_ANSWER_PATH = /^\/team\/calls\/([^/]+)\/monitor\/answer$/;

export const NOT_A_SUPERVISOR = "only a supervisor sees and joins the team's live calls";

export interface MonitorEndpointContext extends Omit<BridgeEndpointContext, 'bridge'> {
  supervision: Supervision;
}

/** Whether the path is one of these endpoints (then it is answered). */
export function isSupervisorPath(path: string): boolean {
  return path === SUPERVISOR_PATHS.liveCalls || MONITOR_PATH.test(path) || MONITOR_ANSWER_PATH.test(path);
}

export async function handleSupervisorRequest(ctx: MonitorEndpointContext, path: string, method: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const agent = ctx.authenticate(req, res);
  if (agent === undefined) return;
  if (agent.role !== 'supervisor') return sendError(res, 403, 'forbidden', NOT_A_SUPERVISOR);
  const { supervision } = ctx;
  if (path === SUPERVISOR_PATHS.liveCalls) {
    if (method !== 'GET') return methodNotAllowed(res, 'GET');
    return sendJson(res, 200, await supervision.liveCalls());
  }
  const answer = MONITOR_ANSWER_PATH.exec(path);
  if (answer) {
    if (method !== 'POST') return methodNotAllowed(res, 'POST');
    const body = await ctx.jsonBody(req, res);
    if (body === undefined) return;
    const callId = ctx.idFromPath(res, answer[1]!, 'callId');
    const parsed = callId === undefined ? undefined : parsedBody(res, answerBodySchema, body);
    if (callId === undefined || parsed === undefined) return;
    return answerOutcome(res, await supervision.answer(callId, agent.id, parsed.legId, parsed.sdp));
  }
  const monitor = MONITOR_PATH.exec(path)!;
  if (method !== 'POST' && method !== 'PUT' && method !== 'DELETE') return methodNotAllowed(res, 'POST, PUT, DELETE');
  const body = await ctx.jsonBody(req, res);
  if (body === undefined) return;
  const callId = ctx.idFromPath(res, monitor[1]!, 'callId');
  if (callId === undefined) return;
  if (method === 'DELETE') return answerOutcome(res, await supervision.leave(callId, agent.id));
  const parsed = parsedBody(res, monitorBodySchema, body);
  if (parsed === undefined) return;
  if (method === 'PUT') return answerOutcome(res, await supervision.switchMode(callId, agent.id, parsed.mode));
  return answerOutcome(res, await supervision.join(callId, { id: agent.id, name: colleagueName(agent.name) }, parsed.mode));
}
