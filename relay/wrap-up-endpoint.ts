// `PUT /calls/{callId}/wrap-up` (relay/REFERENCE.md "Wrap-up"): an agent's disposition and notes
// for a call it talked on, checked against the team's settings as they are at this request, and
// stored in the call records (records/wrap-ups.ts) before it is answered 200.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { list, text } from '../shared/i18n/text';
import type { Logger } from '../shared/log';
import { WRAP_UP_EDITABLE_MS, WRAP_UP_NOTES_MAX, type TeamSettings } from '../shared/team-settings';
import { invalidInput, isRecord, parseWith, requiredString, ruleMessage } from '../shared/validation';
import type { Agent } from './agent-directory';
import { methodNotAllowed, sendError, sendJson } from './http-io';
import type { WrapUp, WrapUpOutcome, WrapUpRecords } from './records/relay-records';

const WRAP_UP_PATH = /^\/calls\/([^/]+)\/wrap-up$/;

export interface WrapUpEndpointContext {
  /** The request's agent, or undefined once answered 401/429. */
  authenticate(req: IncomingMessage, res: ServerResponse): Agent | undefined;
  /** The request's body, bounded as every agent request's (64 KiB); undefined once answered 413 or when the client went away. */
  body(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined>;
  /** The id in a path, or undefined once answered 400. */
  idFromPath(res: ServerResponse, raw: string, field: string): string | undefined;
  /** The call records; absent, the relay keeps none and every wrap-up is answered 503. */
  records: WrapUpRecords | undefined;
  /** The team's settings in force: their dispositions and whether one is required. */
  settings: () => TeamSettings;
  log: Logger;
}

/** Whether the path is this endpoint's (then it is answered). */
export function isWrapUpPath(path: string): boolean {
  return WRAP_UP_PATH.test(path);
}

/**
 * The body's rules under the team's settings: `disposition` one of the team's, or null unless the
 * team requires one; `notes` a string of WRAP_UP_NOTES_MAX characters at most. Other members are
 * let pass, as the relay's other bodies do.
 */
export function wrapUpBodySchema(settings: Pick<TeamSettings, 'dispositions' | 'dispositionRequired'>) {
  const oneOfTheTeams = ruleMessage('team.disposition', { values: list(settings.dispositions) });
  const missing = settings.dispositionRequired ? ruleMessage('team.dispositionRequired') : ruleMessage('common.required');
  return z.object({
    disposition: z.unknown().transform((value, ctx): string | null => {
      if (value === undefined || (value === null && settings.dispositionRequired)) {
        ctx.addIssue({ code: 'custom', message: value === undefined ? missing : ruleMessage('team.dispositionRequired') });
        return z.NEVER;
      }
      if (value === null) return null;
      if (typeof value === 'string' && settings.dispositions.includes(value)) return value;
      ctx.addIssue({ code: 'custom', message: oneOfTheTeams });
      return z.NEVER;
    }),
    notes: requiredString().max(WRAP_UP_NOTES_MAX, ruleMessage('common.atMostCharacters', { count: WRAP_UP_NOTES_MAX })),
  });
}

export async function handleWrapUpRequest(ctx: WrapUpEndpointContext, path: string, method: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (method !== 'PUT') return methodNotAllowed(res, 'PUT');
  const agent = ctx.authenticate(req, res);
  if (agent === undefined) return;
  const raw = await ctx.body(req, res);
  if (raw === undefined) return;
  const callId = ctx.idFromPath(res, WRAP_UP_PATH.exec(path)![1]!, 'callId');
  if (callId === undefined) return;
  const body = bodyOf(raw, ctx.settings());
  if (!body.ok) return sendError(res, 400, 'invalid_input', body.error.message, { field: body.error.field ?? 'body' });
  const { records } = ctx;
  if (records === undefined) return sendError(res, 503, 'unavailable', 'this relay keeps no call records: a wrap-up cannot be saved');
  const outcome = await records.saveWrapUp({ callId, agentId: agent.id, ...body.value });
  answer(res, callId, outcome);
  if (outcome.kind === 'saved') ctx.log.debug('wrap-up saved', { callId, agentId: agent.id });
}

/** The body as the team's settings read it; a body that is no JSON object is refused as `body`. */
function bodyOf(raw: Buffer, settings: TeamSettings) {
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    json = undefined;
  }
  if (!isRecord(json)) return invalidInput<Pick<WrapUp, 'disposition' | 'notes'>>([{ field: 'body', text: text('common.requiredObject') }]);
  return parseWith(wrapUpBodySchema(settings), json);
}

function answer(res: ServerResponse, callId: string, outcome: WrapUpOutcome): void {
  switch (outcome.kind) {
    case 'saved': {
      const { agentId, disposition, notes, savedAt } = outcome.wrapUp;
      return sendJson(res, 200, { callId, agentId, disposition, notes, savedAt });
    }
    case 'not_found':
      return sendError(res, 404, 'not_found', `no call ${callId} in the team's records`);
    case 'forbidden':
      return sendError(res, 403, 'forbidden', 'only an agent who talked with the customer wraps the call up');
    case 'too_late':
      return sendError(res, 409, 'too_late', `a wrap-up can be changed for ${WRAP_UP_EDITABLE_MS / 3_600_000} hours after the call`);
    case 'unavailable':
      return sendError(res, 503, 'unavailable', 'the call records cannot take the wrap-up now; retry');
  }
}
