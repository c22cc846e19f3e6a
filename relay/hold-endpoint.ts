// `PUT /calls/{callId}/hold` (relay/REFERENCE.md "Holds"): the agent's app says that its direct call
// went on hold or came off it, so that the team's records count hold time for direct calls as they
// do for bridged ones (whose bridge tells the relay itself). The relay's clock times it: an app's
// clock is not the team's.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { text } from '../shared/i18n/text';
import { invalidInput, isRecord, parseWith, ruleMessage } from '../shared/validation';
import type { Agent } from './agent-directory';
import { methodNotAllowed, sendError, sendJson } from './http-io';

const HOLD_PATH = /^\/calls\/([^/]+)\/hold$/;

/** What became of a hold report (RelayService.reportHold). */
export type HoldReport = 'recorded' | 'not_owner' | 'unknown' | 'bridged';

export interface HoldEndpointContext {
  /** The request's agent, or undefined once answered 401/429. */
  authenticate(req: IncomingMessage, res: ServerResponse): Agent | undefined;
  /** The request's body, bounded as every agent request's; undefined once answered 413 or when the client went away. */
  body(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined>;
  /** The id in a path, or undefined once answered 400. */
  idFromPath(res: ServerResponse, raw: string, field: string): string | undefined;
  reportHold(callId: string, agentId: string, held: boolean): Promise<HoldReport>;
  /** Whether the relay keeps call records (the answer's `recorded`). */
  keepsRecords: boolean;
}

export function isHoldPath(path: string): boolean {
  return HOLD_PATH.test(path);
}

const holdBodySchema = z.object({ held: z.boolean({ error: ruleMessage('common.mustBeBoolean') }) });

export async function handleHoldRequest(ctx: HoldEndpointContext, path: string, method: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (method !== 'PUT') return methodNotAllowed(res, 'PUT');
  const agent = ctx.authenticate(req, res);
  if (agent === undefined) return;
  const raw = await ctx.body(req, res);
  if (raw === undefined) return;
  const callId = ctx.idFromPath(res, HOLD_PATH.exec(path)![1]!, 'callId');
  if (callId === undefined) return;
  const body = bodyOf(raw);
  if (!body.ok) return sendError(res, 400, 'invalid_input', body.error.message, { field: body.error.field ?? 'body' });
  const { held } = body.value;
  switch (await ctx.reportHold(callId, agent.id, held)) {
    case 'recorded':
      return sendJson(res, 200, { callId, held, recorded: ctx.keepsRecords });
    case 'not_owner':
      return sendError(res, 403, 'forbidden', `call ${callId} is another agent's`);
    case 'unknown':
      return sendError(res, 404, 'not_found', `no claimed call ${callId}`);
    case 'bridged':
      return sendError(res, 409, 'invalid_state', `call ${callId} is bridged: the bridge tells its holds`);
  }
}

function bodyOf(raw: Buffer) {
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    json = undefined;
  }
  if (!isRecord(json)) return invalidInput<{ held: boolean }>([{ field: 'body', text: text('common.requiredObject') }]);
  return parseWith(holdBodySchema, json);
}
