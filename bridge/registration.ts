// A node's place in the relay's registry (relay/REFERENCE.md "Bridge nodes"): it registers, then
// reports its load every heartbeat the relay asked for. A relay that lost the node (404) has it
// register again; a relay it cannot reach is tried again with a growing pause, said in the log and
// never a crash; on a clean stop the node leaves. One timer drives it all, one step at a time.
import { MAX_BRIDGE_NODE_CALLS, type BridgeNodeLoad, type BridgeNodeRegistration } from '../shared/bridge-nodes';
import { createLogger, type Logger } from '../shared/log';
import { errorText } from '../shared/result';
import type { RelayAnswer, RelayNodeApi } from './relay-link';

export type RegistrationState =
  | { kind: 'idle' }
  /** Not registered: `failures` attempts in a row failed so far. */
  | { kind: 'registering'; failures: number }
  /** Registered; `missed` heartbeats in a row did not reach the relay. */
  | { kind: 'registered'; heartbeatMs: number; missed: number }
  | { kind: 'stopped' };

export interface NodeRegistrationOptions {
  relay: RelayNodeApi;
  registration: BridgeNodeRegistration;
  /** The node's load now, read at each heartbeat. */
  load: () => BridgeNodeLoad;
  logger?: Logger;
  /** The pause before the next registration attempt: doubling from `firstDelayMs` up to `maxDelayMs`. Default 1 s to 30 s. */
  retry?: { firstDelayMs?: number; maxDelayMs?: number };
  /** How long leaving may take on stop. Default 3 s. */
  leaveTimeoutMs?: number;
}

/** The heartbeat the node keeps whatever the relay says: neither a busy loop nor a node that looks dead. */
const HEARTBEAT_BOUNDS = { min: 50, max: 600_000 } as const;
const DEFAULT_RETRY = { firstDelayMs: 1_000, maxDelayMs: 30_000 };

export class NodeRegistration {
  private current: RegistrationState = { kind: 'idle' };
  private timer: NodeJS.Timeout | undefined;
  /** The request under way, if any: stop() waits for it before leaving. */
  private step: Promise<void> | undefined;
  /** Whether the relay may list this node now (registered and not left), whatever the state says. */
  private listed = false;
  private lastLoad: BridgeNodeLoad = { calls: 0 };
  private stopping: Promise<void> | undefined;
  private readonly log: Logger;
  private readonly retry: { firstDelayMs: number; maxDelayMs: number };

  constructor(private readonly options: NodeRegistrationOptions) {
    this.log = options.logger ?? createLogger('bridge-registration');
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  get state(): RegistrationState {
    return this.current;
  }

  private get nodeId(): string {
    return this.options.registration.nodeId;
  }

  /** Registers now, and keeps the node registered until stop(). */
  start(): void {
    if (this.current.kind !== 'idle') return;
    this.current = { kind: 'registering', failures: 0 };
    this.schedule(0, () => this.register());
  }

  /** No more heartbeats; the node leaves the relay's registry if it was in it. Resolves once done. */
  stop(): Promise<void> {
    this.stopping ??= this.leave();
    return this.stopping;
  }

  private async leave(): Promise<void> {
    this.current = { kind: 'stopped' };
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.step;
    if (!this.listed) return;
    const timeoutMs = this.options.leaveTimeoutMs ?? 3_000;
    let timer: NodeJS.Timeout | undefined;
    const answer = await Promise.race([
      this.options.relay.leave(this.nodeId),
      new Promise<RelayAnswer<null>>((resolve) => (timer = setTimeout(() => resolve({ kind: 'unreachable', reason: `no answer within ${timeoutMs} ms` }), timeoutMs))),
    ]);
    clearTimeout(timer);
    this.listed = false;
    if (answer.kind === 'ok') this.log.info('left the relay', { nodeId: this.nodeId });
    else this.log.warn('could not leave the relay; it forgets the node after three missed heartbeats', { nodeId: this.nodeId, reason: reasonOf(answer) });
  }

  private schedule(delayMs: number, work: () => Promise<void>): void {
    if (this.current.kind === 'stopped') return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const step: Promise<void> = work()
        .catch((error: unknown) => {
          // A step never throws on its own (the link answers with values): whatever did is a fault
          // here, and the node must go on being registered.
          this.log.error('a registration step failed', { nodeId: this.nodeId, error });
          if (this.current.kind === 'stopped') return;
          this.current = { kind: 'registering', failures: 0 };
          this.schedule(this.retry.maxDelayMs, () => this.register());
        })
        .finally(() => {
          if (this.step === step) this.step = undefined;
        });
      this.step = step;
    }, delayMs);
  }

  private async register(): Promise<void> {
    const answer = await this.options.relay.register(this.options.registration);
    if (answer.kind === 'ok') this.listed = true;
    if (this.current.kind === 'stopped') return;
    const failures = this.current.kind === 'registering' ? this.current.failures : 0;
    if (answer.kind === 'ok') {
      const heartbeatMs = boundedHeartbeat(answer.value.heartbeatMs);
      this.current = { kind: 'registered', heartbeatMs, missed: 0 };
      this.log.info('registered with the relay', { nodeId: this.nodeId, heartbeatMs, ...(failures > 0 ? { failedAttempts: failures } : {}) });
      // A registration counts no calls: the node's load goes right after, so that a node the relay
      // lost while it held calls is not handed a crowd of new ones meanwhile.
      this.schedule(0, () => this.heartbeat());
      return;
    }
    const delayMs = this.backOff(failures + 1);
    this.current = { kind: 'registering', failures: failures + 1 };
    const fields = { nodeId: this.nodeId, attempt: failures + 1, retryInMs: delayMs, reason: reasonOf(answer) };
    if (answer.kind === 'refused' && (answer.status === 401 || answer.status === 403)) this.log.error('the relay refused the bridge token; is it the relay\'s --bridge-token?', fields);
    else if (answer.kind === 'refused' && answer.status === 404) this.log.error('the relay takes no bridge nodes (it runs without --bridge-token)', fields);
    else if (answer.kind === 'refused' && answer.status === 400) this.log.error('the relay refused this node\'s registration', fields);
    else this.log.warn('could not register with the relay; trying again', fields);
    this.schedule(delayMs, () => this.register());
  }

  private async heartbeat(): Promise<void> {
    const answer = await this.options.relay.reportLoad(this.nodeId, this.readLoad());
    if (this.current.kind !== 'registered') return;
    const { missed } = this.current;
    if (answer.kind === 'ok') {
      const heartbeatMs = boundedHeartbeat(answer.value.heartbeatMs);
      if (missed > 0) this.log.info('the relay takes the heartbeats again', { nodeId: this.nodeId, missed });
      this.current = { kind: 'registered', heartbeatMs, missed: 0 };
      this.schedule(heartbeatMs, () => this.heartbeat());
      return;
    }
    if (answer.kind === 'refused' && answer.status === 404) {
      // The relay forgot the node (it missed three heartbeats, or the relay's state was lost).
      this.listed = false;
      this.log.warn('the relay no longer knows this node; registering again', { nodeId: this.nodeId, reason: reasonOf(answer) });
      this.current = { kind: 'registering', failures: 0 };
      this.schedule(0, () => this.register());
      return;
    }
    // Heartbeats go on at their pace: the one that reaches the relay in time keeps the node, a later
    // one is told to register again.
    const fields = { nodeId: this.nodeId, missed: missed + 1, reason: reasonOf(answer) };
    if (missed === 0) this.log.warn('a heartbeat did not reach the relay', fields);
    else this.log.debug('a heartbeat did not reach the relay', fields);
    this.current = { kind: 'registered', heartbeatMs: this.current.heartbeatMs, missed: missed + 1 };
    this.schedule(this.current.heartbeatMs, () => this.heartbeat());
  }

  /** The node's load, within the relay's rules; the last one when the node cannot say. */
  private readLoad(): BridgeNodeLoad {
    try {
      const { calls, cpuPercent } = this.options.load();
      const load: BridgeNodeLoad = { calls: Math.min(MAX_BRIDGE_NODE_CALLS, Math.max(0, Math.round(Number.isFinite(calls) ? calls : 0))) };
      if (cpuPercent !== undefined && Number.isFinite(cpuPercent)) load.cpuPercent = Math.min(100, Math.max(0, cpuPercent));
      this.lastLoad = load;
    } catch (error) {
      this.log.error('could not read the node\'s load; reporting the last one', { nodeId: this.nodeId, error: errorText(error) });
    }
    return this.lastLoad;
  }

  /** Doubling from the first delay up to the last, each wait drawn from its upper half so that nodes restarted together spread out. */
  private backOff(attempt: number): number {
    const ceiling = Math.min(this.retry.maxDelayMs, this.retry.firstDelayMs * 2 ** Math.min(attempt - 1, 30));
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }
}

const boundedHeartbeat = (ms: number): number => Math.min(HEARTBEAT_BOUNDS.max, Math.max(HEARTBEAT_BOUNDS.min, ms));

function reasonOf(answer: Exclude<RelayAnswer<unknown>, { kind: 'ok' }>): string {
  return answer.kind === 'unreachable' ? answer.reason : `${answer.status}${answer.code !== undefined ? ` ${answer.code}` : ''}: ${answer.message}`;
}
