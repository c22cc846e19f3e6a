// Calls as the relay sees them (shared/events.ts events, claims, declines), played into the call
// records step by step: each step happens at its own instant, so that the same steps give the same
// facts whatever order they are played in.
import type { Audience, Presence } from '../../../relay/backend/types';
import { claimedFact, declinedFact, factsOfEvent, type CallFact } from '../../../relay/records/call-facts';
import type { RelayEvent } from '../../../shared/events';
import type { Logger, LogFields } from '../../../shared/log';
import type { RelayRecords } from '../../../relay/records/relay-records';
import type { SqlRunner } from '../../../relay/records/database';

export const CUSTOMER = '447700900123';
export const BUSINESS = '15550001111';
/** 2026-11-02 09:00:00 UTC, a Monday. */
export const T0 = Date.UTC(2026, 10, 2, 9, 0, 0);
const SDP = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n';

/** The service stamps its webhooks in whole seconds. */
const seconds = (ms: number) => Math.floor(ms / 1000) * 1000;

export type Step =
  | { at: number; event: RelayEvent; audience?: Audience; stored?: boolean; reachable?: string[] }
  | { at: number; claim: string; agentId: string }
  | { at: number; decline: string; agentId: string; othersRinging: number; answeredBy?: string };

export const incoming = (callId: string, at: number, reachable: string[], audience: Audience = { kind: 'ringing' }): Step => ({
  at,
  event: { type: 'call.incoming', callId, from: CUSTOMER, name: 'Ada Customer', to: BUSINESS, sdp: SDP, timestamp: seconds(at) },
  audience,
  reachable,
});
export const claim = (callId: string, agentId: string, at: number): Step => ({ at, claim: callId, agentId });
export const decline = (callId: string, agentId: string, at: number, othersRinging: number, answeredBy?: string): Step => ({
  at,
  decline: callId,
  agentId,
  othersRinging,
  ...(answeredBy !== undefined ? { answeredBy } : {}),
});
export const status = (callId: string, value: 'RINGING' | 'ACCEPTED' | 'REJECTED', at: number): Step => ({
  at,
  event: { type: 'call.status', callId, status: value, timestamp: seconds(at), recipientId: CUSTOMER },
});
export const answered = (callId: string, at: number): Step => ({ at, event: { type: 'call.answered', callId, sdp: SDP, timestamp: seconds(at) } });
/**
 * The service's terminate: with the call's start and duration only when it was answered (`answeredAt`).
 * `sentAt`: when the service stamped it, when it is received later (a retry); else `at`.
 */
export const terminated = (
  callId: string,
  at: number,
  options: { status?: 'COMPLETED' | 'FAILED'; answeredAt?: number; errors?: { code: number; message: string }[]; sentAt?: number } = {},
): Step => ({
  at,
  event: {
    type: 'call.terminated',
    callId,
    status: options.status ?? 'COMPLETED',
    timestamp: seconds(options.sentAt ?? at),
    ...(options.answeredAt !== undefined
      ? { startTime: seconds(options.answeredAt), endTime: seconds(at), durationSec: Math.round((seconds(at) - seconds(options.answeredAt)) / 1000) }
      : {}),
    ...(options.errors !== undefined ? { errors: options.errors } : {}),
  },
});
export const voicemail = (callId: string, at: number, mediaId?: string): Step => ({
  at,
  event: { type: 'message.inbound', messageId: callId, from: CUSTOMER, timestamp: seconds(at), messageType: 'audio', ...(mediaId !== undefined ? { mediaId } : {}) },
});

/**
 * The team's presence as the records hear it, agent by agent: `state(agentId, presence, at)` reports
 * it at that instant (the records' clock moved there) with what the agent reported before it.
 */
export function teamStates(records: Pick<RelayRecords, 'presenceReported'>, clock: { now: number }): (agentId: string, presence: Presence, at: number) => void {
  const team = new Map<string, Presence>();
  return (agentId, presence, at) => {
    clock.now = at;
    const before = team.get(agentId);
    records.presenceReported(agentId, { presence }, before === undefined ? undefined : { presence: before });
    team.set(agentId, presence);
  };
}

/** Plays one step into the records; `clock` is what the records read as now for claims and declines. */
export function play(records: RelayRecords, clock: { now: number }, step: Step): void {
  clock.now = step.at;
  if ('claim' in step) return records.claimed(step.claim, step.agentId);
  if ('decline' in step) return records.declined(step.decline, step.agentId, { othersRinging: step.othersRinging, ...(step.answeredBy !== undefined ? { answeredBy: step.answeredBy } : {}) });
  records.eventSeen({
    event: step.event,
    receivedAt: step.at,
    audience: step.audience ?? { kind: 'everyone' },
    stored: step.stored ?? true,
    reachable: () => step.reachable ?? [],
  });
}

/** The facts one instance makes of a step, as `play` would have it make them (for writing them through the store). */
export function factsOfStep(step: Step): CallFact[] {
  if ('claim' in step) return [claimedFact(step.claim, step.agentId, step.at)];
  if ('decline' in step) return [declinedFact(step.decline, step.agentId, step.at, { othersRinging: step.othersRinging, ...(step.answeredBy !== undefined ? { answeredBy: step.answeredBy } : {}) })];
  return factsOfEvent(step.event, { receivedAt: step.at, audience: step.audience ?? { kind: 'everyone' }, stored: step.stored ?? true, reachable: () => step.reachable ?? [] });
}

/** The same steps for another call id (one database, many variants of a scenario). */
export function renamed(steps: readonly Step[], callId: string): Step[] {
  return steps.map((step) => {
    if ('claim' in step) return { ...step, claim: callId };
    if ('decline' in step) return { ...step, decline: callId };
    const event = step.event;
    if ('callId' in event) return { ...step, event: { ...event, callId } };
    if (event.type === 'message.inbound') return { ...step, event: { ...event, messageId: callId } };
    return step;
  });
}

/** Everything a stream yields (Array.fromAsync, before Node 22). */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** A logger that keeps what it is told, for the tests that read the log. */
export interface RecordingLogger extends Logger {
  lines: { level: 'debug' | 'info' | 'warn' | 'error'; msg: string; fields?: LogFields }[];
  said(msg: string | RegExp): number;
}

export function recordingLogger(): RecordingLogger {
  const lines: RecordingLogger['lines'] = [];
  const at = (level: RecordingLogger['lines'][number]['level']) => (msg: string, fields?: LogFields) => {
    lines.push({ level, msg, ...(fields !== undefined ? { fields } : {}) });
  };
  return {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    said: (msg) => lines.filter((line) => (typeof msg === 'string' ? line.msg === msg : msg.test(line.msg))).length,
  };
}

/** alice answers at t + 2 s; the service says 60 s of call from then. */
export const answeredCall = (callId: string, t: number): Step[] => [incoming(callId, t, ['alice']), claim(callId, 'alice', t + 2_000), terminated(callId, t + 62_000, { answeredAt: t + 2_000 })];

/** A runner that remembers every statement it is given (for EXPLAIN), running each once. */
export function recordingRunner(db: SqlRunner): SqlRunner & { statements: { sql: string; params: readonly unknown[] }[] } {
  const statements: { sql: string; params: readonly unknown[] }[] = [];
  return {
    statements,
    query: (sql, params = []) => {
      statements.push({ sql, params });
      return db.query(sql, params);
    },
    script: (sql) => db.script(sql),
  };
}
