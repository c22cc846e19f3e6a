// Events, clocks and backends for the relay backend tests.
import type { RelayEvent } from '../../../shared/events';
import type { LogFields, Logger, LogLevel } from '../../../shared/log';
import type { AppendInput, Audience, RelayBackend, StoredEvent } from '../../../relay/backend/types';
import { ANSWER_SDP, OFFER_SDP } from '../../fixtures/sdp';

export { FakeClock } from '../../support/fake-clock';

export const incoming = (callId: string, timestamp: number): RelayEvent => ({ type: 'call.incoming', callId, from: '15551234567', sdp: OFFER_SDP, timestamp });
export const answered = (callId: string, timestamp: number): RelayEvent => ({ type: 'call.answered', callId, sdp: ANSWER_SDP, timestamp });
export const callStatus = (callId: string, status: 'RINGING' | 'ACCEPTED' | 'REJECTED', timestamp: number): RelayEvent => ({
  type: 'call.status',
  callId,
  status,
  timestamp,
});
export const terminated = (callId: string, timestamp: number, status: 'COMPLETED' | 'FAILED' = 'COMPLETED'): RelayEvent => ({
  type: 'call.terminated',
  callId,
  status,
  timestamp,
});
export const claimed = (callId: string, agentId: string, timestamp: number): RelayEvent => ({ type: 'call.claimed', callId, agentId, timestamp });
export const inbound = (messageId: string, timestamp: number): RelayEvent => ({
  type: 'message.inbound',
  messageId,
  from: '15551234567',
  timestamp,
  messageType: 'text',
  text: 'hello',
});
export const messageStatus = (messageId: string, status: 'sent' | 'delivered' | 'read' | 'failed', timestamp: number): RelayEvent => ({
  type: 'message.status',
  messageId,
  status,
  timestamp,
});

export const everyone: Audience = { kind: 'everyone' };

export function input(event: RelayEvent, receivedAt: number, audience: Audience = everyone): AppendInput {
  return { event, receivedAt, audience };
}

/** Appends and insists that the event was stored. */
export async function store(backend: RelayBackend, event: RelayEvent, receivedAt: number, audience: Audience = everyone): Promise<StoredEvent> {
  const outcome = await backend.append(input(event, receivedAt, audience));
  if (!outcome.stored) throw new Error(`expected ${event.type} to be stored, got ${outcome.reason}`);
  return outcome.event;
}

/** Waits for a condition that another connection makes true; fails with `what` after `timeoutMs`. */
export async function eventually(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A listener that records what it gets. */
export function recorder(backend: RelayBackend): { events: StoredEvent[]; stop: () => void } {
  const events: StoredEvent[] = [];
  const stop = backend.subscribe((e) => events.push(e));
  return { events, stop };
}

/** Keeps the test output quiet and lets tests check what was logged. */
export class RecordingLogger implements Logger {
  readonly lines: Array<{ level: LogLevel; msg: string; fields?: LogFields }> = [];
  readonly debug = (msg: string, fields?: LogFields) => this.lines.push({ level: 'debug', msg, fields });
  readonly info = (msg: string, fields?: LogFields) => this.lines.push({ level: 'info', msg, fields });
  readonly warn = (msg: string, fields?: LogFields) => this.lines.push({ level: 'warn', msg, fields });
  readonly error = (msg: string, fields?: LogFields) => this.lines.push({ level: 'error', msg, fields });
  messages(level: LogLevel): string[] {
    return this.lines.filter((l) => l.level === level).map((l) => l.msg);
  }
}

export interface BackendHarness {
  name: 'memory' | 'redis';
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** A backend on a fresh namespace; `shareWith` opens another instance on the same namespace. */
  open(options: {
    now: () => number;
    logger: Logger;
    retentionMs?: number;
    dedupWindowMs?: number;
    shareWith?: RelayBackend;
  }): Promise<RelayBackend>;
  /** Closes every backend opened since the last call. */
  closeAll(): Promise<void>;
}
