// A node's events on their way to the relay (`POST /bridge/nodes/{nodeId}/events`), one at a time
// in the order they happened. An event the relay could not take for a passing reason (unreachable,
// overloaded, failing) is tried again after a growing pause, a few times; one it refuses (a rule, the
// token) is dropped and said in the log. The queue is bounded: a relay gone for long costs the
// oldest events, never the node's memory.
import type { BridgeNodeEventBody } from '../shared/bridge-nodes';
import { createLogger, type Logger } from '../shared/log';
import type { RelayAnswer, RelayNodeApi } from './relay-link';

export interface EventForwarderOptions {
  relay: RelayNodeApi;
  nodeId: string;
  logger?: Logger;
  /** Events waiting at most; one more drops the oldest. Default 1000. */
  maxQueued?: number;
  /** Tries of one event at most, the pause doubling from `firstDelayMs` up to `maxDelayMs`. Default 6 tries, 250 ms to 5 s. */
  retry?: { tries?: number; firstDelayMs?: number; maxDelayMs?: number };
}

const DEFAULT_RETRY = { tries: 6, firstDelayMs: 250, maxDelayMs: 5_000 };

export class RelayEventForwarder {
  private readonly queue: BridgeNodeEventBody[] = [];
  private sending: Promise<void> | undefined;
  private closed = false;
  /** Wakes the pause between two tries when the forwarder closes. */
  private wake: () => void = () => undefined;
  private readonly log: Logger;
  private readonly maxQueued: number;
  private readonly retry: { tries: number; firstDelayMs: number; maxDelayMs: number };

  constructor(private readonly options: EventForwarderOptions) {
    this.log = options.logger ?? createLogger('bridge-events');
    this.maxQueued = Math.max(1, options.maxQueued ?? 1_000);
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  /** Queues an event; never throws, never waits (the node calls it from its media paths). */
  send(event: BridgeNodeEventBody): void {
    if (this.closed) {
      this.log.warn('an event after the node stopped was not sent', { kind: event.kind, callId: event.callId });
      return;
    }
    if (this.queue.length >= this.maxQueued) {
      const dropped = this.queue.shift();
      this.log.warn('too many events waiting for the relay; dropped the oldest', { kind: dropped?.kind, callId: dropped?.callId, waiting: this.queue.length });
    }
    this.queue.push(event);
    this.kick();
  }

  /** Resolves once every queued event was taken or given up, or after `timeoutMs`. */
  async flush(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([this.idle(), deadline]);
    clearTimeout(timer);
  }

  /** Sends nothing more; what is still queued is dropped (and counted in the log). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const left = this.queue.length;
    this.queue.length = 0;
    this.wake();
    if (left > 0) this.log.warn('events not sent to the relay before the node stopped', { count: left });
  }

  /** Starts sending unless it is under way; an event queued as the last send ended starts it again. */
  private kick(): void {
    if (this.sending !== undefined || this.closed || this.queue.length === 0) return;
    this.sending = this.drain().finally(() => {
      this.sending = undefined;
      this.kick();
    });
  }

  private async idle(): Promise<void> {
    while (this.sending !== undefined) await this.sending;
  }

  private async drain(): Promise<void> {
    for (let event = this.queue.shift(); event !== undefined && !this.closed; event = this.queue.shift()) await this.deliver(event);
  }

  private async deliver(event: BridgeNodeEventBody): Promise<void> {
    const { tries, firstDelayMs, maxDelayMs } = this.retry;
    for (let attempt = 1; ; attempt += 1) {
      const answer = await this.options.relay.postEvent(this.options.nodeId, event);
      if (answer.kind === 'ok') return;
      const fields = { kind: event.kind, callId: event.callId, attempt, reason: reasonOf(answer) };
      if (!mayPass(answer)) {
        this.log.error('the relay refused an event; dropped', fields);
        return;
      }
      if (attempt >= tries || this.closed) {
        this.log.warn('could not give an event to the relay; dropped', fields);
        return;
      }
      this.log.debug('an event did not reach the relay; trying again', fields);
      await this.pause(Math.min(maxDelayMs, firstDelayMs * 2 ** (attempt - 1)));
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/** Unreachable, overloaded or failing may pass; a refusal of the event or the token will not. */
function mayPass(answer: Exclude<RelayAnswer<null>, { kind: 'ok' }>): boolean {
  return answer.kind === 'unreachable' || answer.status === 408 || answer.status === 429 || answer.status >= 500;
}

function reasonOf(answer: Exclude<RelayAnswer<null>, { kind: 'ok' }>): string {
  return answer.kind === 'unreachable' ? answer.reason : `${answer.status}${answer.code !== undefined ? ` ${answer.code}` : ''}: ${answer.message}`;
}
