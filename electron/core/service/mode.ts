// The mode the service runs in (ARCHITECTURE.md "Embedded default"): an account from the command
// line, a saved account, or the embedded sandbox. Switches run one after another, and commands wait
// for the one under way. Each step holds the state or the runtime it began with; a step that finds
// the state replaced (the service closed meanwhile) stops what it started instead of running it,
// and a runtime that is no longer current drops its late callbacks.
import { reconnectingFor, type ConnectionState } from '../../../shared/api';
import { text } from '../../../shared/i18n/text';
import type { Logger } from '../../../shared/log';
import type { AccountConfig } from '../../../shared/settings';
import type { EmbeddedEnvironment } from '../embedded-environment';
import { SandboxControlClient } from '../sandbox-control-client';
import { Runtime, type RuntimeHooks, type RuntimeOptions, type Source } from './runtime';

export type ModeState =
  /** Nothing runs: before the first switch, or the sandbox could not start. */
  | { kind: 'idle' }
  /** The runtime for `source` is being built and takes over the calls a previous run left live. */
  | { kind: 'starting'; source: Source; runtime?: Runtime }
  /** The runtime serves commands. */
  | { kind: 'running'; runtime: Runtime }
  /** The runtime ends its calls and closes its connections: an account switch is under way. */
  | { kind: 'stopping'; runtime: Runtime }
  | { kind: 'closed' };

export interface ModeHooks extends RuntimeHooks {
  /** The runtime that serves commands now (undefined while none does). */
  runtimeChanged(runtime: Runtime | undefined): void;
}

export interface ModeOptions extends Pick<RuntimeOptions, 'dataDir' | 'history' | 'nameFor' | 'capture' | 'now' | 'log'> {
  /** Starts the embedded relay and sandbox; called only when there is no account. */
  embedded: (() => Promise<EmbeddedEnvironment>) | undefined;
  hooks: ModeHooks;
}

export class ModeMachine {
  private state: ModeState = { kind: 'idle' };
  /** Switches run one after another; this settles when the last one asked for is done. */
  private queue: Promise<void> = Promise.resolve();
  private connectionState: ConnectionState;
  /** Started once and kept: leaving sandbox mode and coming back reuses it. */
  private embeddedEnv: EmbeddedEnvironment | undefined;
  private readonly log: Logger;
  private readonly hooks: RuntimeHooks;

  constructor(private readonly options: ModeOptions) {
    this.log = options.log;
    this.connectionState = { status: 'connecting', since: options.now() };
    this.hooks = { ...options.hooks, connectionChanged: (state) => this.setConnection(state) };
  }

  /** The runtime that serves commands now, if any. */
  current(): Runtime | undefined {
    return this.state.kind === 'running' ? this.state.runtime : undefined;
  }

  /** The runtime that serves commands once the switches asked for so far are done. */
  async settled(): Promise<Runtime | undefined> {
    await this.queue;
    return this.current();
  }

  /** The relay connection of the mode that runs, as last reported. */
  connection(): ConnectionState {
    return this.connectionState;
  }

  switchTo(source: Source): Promise<void> {
    const step = this.queue.then(() => this.step(source));
    this.queue = step.catch((e: unknown) => this.log.error('switching the account failed', { error: e }));
    return this.queue;
  }

  /** Stops what runs (its live calls end on the gateway) and the embedded sandbox; nothing starts after. */
  async close(): Promise<void> {
    const left = this.state;
    this.state = { kind: 'closed' };
    // A step under way finds its state replaced and stops what it started; those waiting do nothing.
    await this.queue;
    if (left.kind === 'running') await this.stopRuntime(left.runtime);
    await this.embeddedEnv?.close().catch((e: unknown) => this.log.error('the embedded sandbox did not close cleanly', { error: e }));
    this.embeddedEnv = undefined;
  }

  private async step(source: Source): Promise<void> {
    const state = this.state;
    if (state.kind === 'closed') return;
    if (state.kind === 'running') {
      if (source.kind !== 'sandbox' && state.runtime.serves(source)) {
        // Same gateway and relay: keep the calls going, only the non-connection settings changed.
        state.runtime.retarget(source);
        this.options.hooks.runtimeChanged(state.runtime);
        return;
      }
      // An account switch ends live calls first: they belong to the gateway being left.
      this.state = { kind: 'stopping', runtime: state.runtime };
      await this.stopRuntime(state.runtime);
      if (this.isClosed()) return;
      this.state = { kind: 'idle' };
    }
    await this.start(source);
  }

  private async start(source: Source): Promise<void> {
    const starting: ModeState = { kind: 'starting', source };
    this.state = starting;
    const target = await this.accountFor(source);
    if (this.state !== starting) return;
    if (!target) {
      this.state = { kind: 'idle' };
      this.setConnection(reconnectingFor(this.options.now(), text('service.sandboxNotStarted')));
      return;
    }
    const { dataDir, history, nameFor, capture, now, log } = this.options;
    const runtime = new Runtime({
      source: source.kind,
      account: target.account,
      ...(target.sandboxControlUrl !== undefined ? { sandbox: new SandboxControlClient(target.sandboxControlUrl, log) } : {}),
      dataDir,
      history,
      nameFor,
      ...(capture !== undefined ? { capture } : {}),
      now,
      log,
      hooks: this.hooks,
      isCurrent: (r) => this.holds(r),
    });
    this.state = { kind: 'starting', source, runtime };
    try {
      await runtime.prepare();
    } catch (e) {
      if (this.holds(runtime)) this.state = { kind: 'idle' };
      await runtime.stop();
      throw e;
    }
    if (!this.holds(runtime)) {
      await runtime.stop();
      return;
    }
    this.state = { kind: 'running', runtime };
    this.options.hooks.runtimeChanged(runtime);
    const { account } = runtime;
    this.log.info('calls ready', { mode: source.kind === 'sandbox' ? 'sandbox' : 'account', source: source.kind, gatewayUrl: account.gatewayUrl, relayUrl: account.relayUrl });
    this.setConnection({ status: 'connecting', since: now() });
    // Presence first, so that a relay which has the stream also knows whether to ring this agent.
    this.hooks.presenceMayHaveChanged();
    runtime.connect();
  }

  /** Whether `runtime` is the one this mode starts or runs: a stopped one's callbacks are late. */
  private holds(runtime: Runtime): boolean {
    const state = this.state;
    return (state.kind === 'starting' || state.kind === 'running') && state.runtime === runtime;
  }

  private isClosed(): boolean {
    return this.state.kind === 'closed';
  }

  private async stopRuntime(runtime: Runtime): Promise<void> {
    this.options.hooks.runtimeChanged(undefined);
    await runtime.stop();
  }

  private setConnection(state: ConnectionState): void {
    this.connectionState = state;
    this.options.hooks.connectionChanged(state);
  }

  /** The account to run `source` with; the sandbox's comes with its control API. */
  private async accountFor(source: Source): Promise<{ account: AccountConfig; sandboxControlUrl?: string } | undefined> {
    if (source.kind !== 'sandbox') return { account: source.account };
    const env = await this.embeddedEnvironment();
    return env ? { account: env.account, sandboxControlUrl: env.sandboxControlUrl } : undefined;
  }

  private async embeddedEnvironment(): Promise<EmbeddedEnvironment | undefined> {
    if (this.embeddedEnv) return this.embeddedEnv;
    if (!this.options.embedded) {
      this.log.warn('no account and no embedded sandbox: calls are unavailable until an account is set up');
      return undefined;
    }
    try {
      this.embeddedEnv = await this.options.embedded();
      return this.embeddedEnv;
    } catch (e) {
      this.log.error('the embedded sandbox could not start', { error: e });
      return undefined;
    }
  }
}
