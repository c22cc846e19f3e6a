// The agent's endpoints for bridged calls (bridge/REFERENCE.md "The agent's side"): a leg of its
// own and its answer while the call rings (the leg connects ahead of the click), the answer handed
// over for accept, the accept done, a dial, hold, a new leg for a member whose leg went and its
// answer (rejoin), and the customer leg's quality (the one GET). Every one takes the agent token;
// bridged-calls.ts decides whether this agent may do it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { answerBodySchema, bindBodySchema, holdBodySchema, rejoinAnswerBodySchema, ringAnswerBodySchema, sdpBodySchema } from '../shared/bridge';
import { issueEnglish } from '../shared/validation';
import type { Agent } from './agent-directory';
import type { BridgedCalls, BridgeRefusal } from './bridged-calls';
import { methodNotAllowed, sendError, sendJson, type RelayErrorCode } from './http-io';

const CALL_BRIDGE_PATH = /^\/calls\/([^/]+)\/bridge\/(leg|answer|accepted|hold|rejoin)$/;
const REJOIN_ANSWER_PATH = /^\/calls\/([^/]+)\/bridge\/rejoin\/answer$/;
const RING_ANSWER_PATH = /^\/calls\/([^/]+)\/bridge\/leg\/answer$/;
const QUALITY_PATH = /^\/calls\/([^/]+)\/bridge\/quality$/;
const DIAL_PATH = '/bridge/dial';
const PLACED_PATH = /^\/bridge\/dial\/([^/]+)\/placed$/;

export interface BridgeEndpointContext {
  bridge: BridgedCalls;
  /** The request's agent, or undefined once answered 401/429. */
  authenticate(req: IncomingMessage, res: ServerResponse): Agent | undefined;
  /** The request's JSON body (bounded), `{}` when empty or not JSON; undefined once answered 413. */
  jsonBody(req: IncomingMessage, res: ServerResponse): Promise<unknown>;
  /** The id in a path, or undefined once answered 400. */
  idFromPath(res: ServerResponse, raw: string, field: string): string | undefined;
}

/** Whether the path is one of these endpoints (then it is answered). */
export function isBridgePath(path: string): boolean {
  return path === DIAL_PATH || CALL_BRIDGE_PATH.test(path) || PLACED_PATH.test(path) || QUALITY_PATH.test(path) || REJOIN_ANSWER_PATH.test(path) || RING_ANSWER_PATH.test(path);
}

export async function handleBridgeRequest(ctx: BridgeEndpointContext, path: string, method: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const quality = QUALITY_PATH.exec(path);
  if (quality) {
    if (method !== 'GET') return methodNotAllowed(res, 'GET');
    const agent = ctx.authenticate(req, res);
    if (agent === undefined) return;
    const callId = ctx.idFromPath(res, quality[1]!, 'callId');
    if (callId === undefined) return;
    return answerOutcome(res, await ctx.bridge.customerQuality(callId, agent.id));
  }
  if (method !== 'POST') return methodNotAllowed(res, 'POST');
  const agent = ctx.authenticate(req, res);
  if (agent === undefined) return;
  const body = await ctx.jsonBody(req, res);
  if (body === undefined) return;
  const { bridge } = ctx;
  if (path === DIAL_PATH) {
    const parsed = parsedBody(res, sdpBodySchema, body);
    if (parsed === undefined) return;
    return answerOutcome(res, await bridge.dial(agent.id, parsed.sdp));
  }
  const placed = PLACED_PATH.exec(path);
  if (placed) {
    const ref = ctx.idFromPath(res, placed[1]!, 'ref');
    const parsed = ref === undefined ? undefined : parsedBody(res, bindBodySchema, body);
    if (ref === undefined || parsed === undefined) return;
    return answerOutcome(res, await bridge.placed(ref, agent.id, parsed.callId));
  }
  const rejoinAnswer = REJOIN_ANSWER_PATH.exec(path);
  if (rejoinAnswer) {
    const callId = ctx.idFromPath(res, rejoinAnswer[1]!, 'callId');
    const parsed = callId === undefined ? undefined : parsedBody(res, rejoinAnswerBodySchema, body);
    if (callId === undefined || parsed === undefined) return;
    return answerOutcome(res, await bridge.rejoinAnswer(callId, agent.id, parsed.legId, parsed.sdp));
  }
  const ringAnswer = RING_ANSWER_PATH.exec(path);
  if (ringAnswer) {
    const callId = ctx.idFromPath(res, ringAnswer[1]!, 'callId');
    const parsed = callId === undefined ? undefined : parsedBody(res, ringAnswerBodySchema, body);
    if (callId === undefined || parsed === undefined) return;
    return answerOutcome(res, await bridge.ringAnswer(callId, agent.id, parsed.legId, parsed.sdp));
  }
  const match = CALL_BRIDGE_PATH.exec(path)!;
  const callId = ctx.idFromPath(res, match[1]!, 'callId');
  if (callId === undefined) return;
  switch (match[2]) {
    case 'leg':
      return answerOutcome(res, await bridge.legFor(callId, agent.id));
    case 'answer': {
      const parsed = parsedBody(res, answerBodySchema, body);
      if (parsed === undefined) return;
      return answerOutcome(res, await bridge.answer(callId, agent.id, parsed.legId, parsed.sdp));
    }
    case 'accepted':
      return answerOutcome(res, await bridge.accepted(callId, agent.id));
    case 'hold': {
      const parsed = parsedBody(res, holdBodySchema, body);
      if (parsed === undefined) return;
      return answerOutcome(res, await bridge.hold(callId, agent.id, parsed.held));
    }
    case 'rejoin':
      return answerOutcome(res, await bridge.rejoin(callId, agent.id));
  }
}

/** The body as `schema` reads it, or undefined once answered 400 naming the field and its rule. */
export function parsedBody<S extends z.ZodType>(res: ServerResponse, schema: S, body: unknown): z.infer<S> | undefined {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.map(String).join('.') ?? '';
  sendError(res, 400, 'invalid_input', `${field === '' ? 'body' : field}: ${issue === undefined ? 'is invalid' : issueEnglish(issue)}`, { field: field === '' ? 'body' : field });
  return undefined;
}

/** 200 with the value (`{ ok: true }` for none), or the refusal's status, code, message and field. */
export function answerOutcome(res: ServerResponse, outcome: { ok: true; value: unknown } | { ok: false; refusal: BridgeRefusal }): void {
  if (outcome.ok) return sendJson(res, 200, outcome.value ?? { ok: true });
  const { status, code, message } = outcome.refusal;
  const field = 'field' in outcome.refusal ? outcome.refusal.field : undefined;
  sendError(res, status, code satisfies RelayErrorCode, message, field !== undefined ? { field } : {});
}
