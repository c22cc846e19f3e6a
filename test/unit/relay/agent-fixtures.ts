// Agents of a test team, and the agent API calls the app makes (relay/REFERENCE.md "Endpoints").
import type { RelayEvent } from '../../../shared/events';
import { hashAgentToken, type AgentConfig } from '../../../relay/agent-directory';
import type { TestSseStream } from './sse-test-client';

export interface TestTeam {
  agents: AgentConfig[];
  tokens: Record<string, string>;
}

/** Agents with the given ids, each with a token of its own (`token-<id>-…`). */
export function team(...ids: string[]): TestTeam {
  const tokens: Record<string, string> = {};
  const agents = ids.map((id) => {
    const token = `token-${id}-0123456789`;
    tokens[id] = token;
    return { id, name: `${id[0]!.toUpperCase()}${id.slice(1)} Agent`, tokenSha256: hashAgentToken(token) };
  });
  return { agents, tokens };
}

export interface ApiAnswer {
  status: number;
  body: unknown;
}

async function call(url: string, init: RequestInit): Promise<ApiAnswer> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: kept as text.
  }
  return { status: res.status, body };
}

/** An agent's POST of `body` as JSON (none when undefined) to one of the relay's endpoints; the reply's JSON. */
export async function postAsAgent(relayUrl: string, token: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const answer = await call(`${relayUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: answer.status, body: answer.body as Record<string, unknown> };
}

export function claimCall(relayUrl: string, token: string, callId: string): Promise<ApiAnswer> {
  return call(`${relayUrl}/calls/${encodeURIComponent(callId)}/claim`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
}

export function declineCall(relayUrl: string, token: string, callId: string): Promise<ApiAnswer> {
  return call(`${relayUrl}/calls/${encodeURIComponent(callId)}/decline`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
}

export function putPresence(relayUrl: string, token: string, body: unknown): Promise<ApiAnswer> {
  return call(`${relayUrl}/presence`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function getMe(relayUrl: string, token: string | undefined): Promise<ApiAnswer> {
  return call(`${relayUrl}/me`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
}

/** A short, readable name of an event: `call.incoming:wacid.1`, `message.status:wamid.2:read`. */
export const eventKey = (e: RelayEvent): string => `${e.type}:${'callId' in e ? e.callId : e.messageId}${'status' in e ? `:${e.status}` : ''}`;
export const eventKeys = (s: TestSseStream): string[] => s.envelopes.map((env) => eventKey(env.event));
export const hasMessage = (id: string) => (s: TestSseStream) => s.envelopes.some((env) => env.event.type === 'message.inbound' && env.event.messageId === id);
export const hasEvent = (key: string) => (s: TestSseStream) => s.envelopes.some((env) => eventKey(env.event) === key);
