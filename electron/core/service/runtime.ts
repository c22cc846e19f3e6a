// One mode's running parts, built for one account (the command line's, the saved one, or the
// embedded sandbox's): the gateway client, the relay's client and event stream, the presence
// reporter, the relay's TURN credentials, the call coordinator, and a supervisor's join of a
// colleague's call (monitoring.ts). A runtime that is no longer the mode's current one (a switch or
// close began stopping it) drops its late callbacks: it asks the mode whether it is still current
// by its own identity.
import { DirectHolds } from '../direct-holds';
import type { ConnectionState, CustomerLegQuality, MonitorChange, TeamInfo } from '../../../shared/api';
import type { CallState } from '../../../shared/call-state';
import type { RelayEnvelope } from '../../../shared/events';
import type { Logger } from '../../../shared/log';
import { ok, type Result } from '../../../shared/result';
import { captureMembers, type ServiceCaptureSettings } from '../../../shared/service-capture';
import type { AccountConfig } from '../../../shared/settings';
import { CustomerLegWatch } from '../bridge-quality';
import { BridgedCallControl } from '../bridged-calls';
import { CallCoordinator } from '../call-coordinator';
import { RelayEventStream } from '../event-stream';
import { GatewayClient } from '../gateway-client';
import type { HistoryStore } from '../history-store';
import type { MessagingRuntime } from '../messaging-service';
import { Monitoring } from '../monitoring';
import { RelayTurnCredentials } from '../network-settings';
import { PresenceReporter } from '../presence';
import { RelayClient } from '../relay-client';
import type { SandboxControlClient } from '../sandbox-control-client';
import { TransferCommands } from '../transfer-commands';

/** Where the active account came from. */
export type Source = { kind: 'flags'; account: AccountConfig } | { kind: 'saved'; account: AccountConfig } | { kind: 'sandbox' };
/** An account the agent gave (on the command line or in Settings), not the sandbox's. */
export type AccountSource = Exclude<Source, { kind: 'sandbox' }>;

/** What a runtime tells the service. */
export interface RuntimeHooks {
  /** Every change of a call, also while the runtime stops (its calls end then). */
  callChanged(call: CallState): void;
  /** The rest only while the runtime is current. */
  relayEvent(envelope: RelayEnvelope): void;
  connectionChanged(state: ConnectionState): void;
  /** A call changed: what the relay is told of this agent may have changed too. */
  presenceMayHaveChanged(): void;
  /** The relay's TURN credentials arrived, changed or stopped being offered. */
  turnChanged(): void;
  /** A bridged call's customer leg as the bridge measures it (bridge-quality.ts), for the window. */
  customerLegQuality(quality: CustomerLegQuality): void;
  /** The relay told this agent's role and the team's settings (GET /team/settings, or its `team` event). */
  teamChanged(info: TeamInfo): void;
  /** GET /me told whether the team's bridge records calls (absent: it never does). */
  teamRecordTold(record: TeamInfo['record']): void;
  /** This agent's join of a colleague's call changed (a supervisor's; monitoring.ts). */
  monitorChanged(change: MonitorChange): void;
  /** The event stream (re)connected: the relay is there to take what waited for it. */
  relayConnected(): void;
}

export interface RuntimeOptions {
  source: Source['kind'];
  account: AccountConfig;
  /** The embedded sandbox's control API, in sandbox mode. */
  sandbox?: SandboxControlClient;
  dataDir: string;
  history: HistoryStore;
  nameFor: (number: string) => string | undefined;
  /** Settings → the service's recording and transcription, as they are when a call is accepted or placed. */
  capture?: () => ServiceCaptureSettings;
  now: () => number;
  log: Logger;
  hooks: RuntimeHooks;
  /** Whether this runtime is still the mode's current one (starting or running). */
  isCurrent(runtime: Runtime): boolean;
}

/** The parts of an account that the gateway client and the event stream are built from. */
const connectionKey = (a: AccountConfig): string => JSON.stringify([a.gatewayUrl, a.productSegment, a.apiKey, a.relayUrl, a.agentToken]);

export class Runtime {
  readonly gateway: GatewayClient;
  readonly relay: RelayClient;
  readonly presence: PresenceReporter;
  /** The relay's short-lived TURN credentials, renewed before they expire. */
  readonly turn: RelayTurnCredentials;
  readonly coordinator: CallCoordinator;
  /** Bridged calls' part of call control and of the relay's events (bridged-calls.ts); direct calls pass through. */
  readonly bridge: BridgedCallControl;
  /** The agent's transfer, consult and three-way commands, on the coordinator's calls through the bridge. */
  readonly transfers: TransferCommands;
  /** The customer leg's quality of each bridged call the agent is on, asked once a second for the window. */
  readonly customerLegs: CustomerLegWatch;
  /** A direct call's holds, told to the relay for the team's records. */
  private readonly holds: DirectHolds;
  /** A supervisor's join of a colleague's call: "Listen", "Whisper", "Barge", "Leave". */
  readonly monitoring: Monitoring;
  readonly stream: RelayEventStream;
  readonly sandbox: SandboxControlClient | undefined;
  private sourceKind: Source['kind'];
  private accountConfig: AccountConfig;
  private readonly log: Logger;

  constructor(private readonly options: RuntimeOptions) {
    const { account, log, hooks, now } = options;
    this.sourceKind = options.source;
    this.accountConfig = account;
    this.sandbox = options.sandbox;
    this.log = log;
    const capture = options.capture;
    this.gateway = new GatewayClient({
      baseUrl: account.gatewayUrl,
      apiKey: account.apiKey,
      product: account.productSegment,
      // Bridged calls too: the bridge's SDP goes to the same accept and initiate.
      ...(capture !== undefined ? { capture: () => captureMembers(capture()) } : {}),
      logger: log,
    });
    this.relay = new RelayClient({ url: account.relayUrl, token: account.agentToken, logger: log });
    this.presence = new PresenceReporter({ relay: this.relay, logger: log });
    this.turn = new RelayTurnCredentials(this.relay, { now, logger: log });
    // The windows keep their ICE configuration until settings change: credentials that arrive late
    // (the relay was slow or down at start) or stop being offered must reach the next call.
    this.turn.onChange(() => {
      if (this.isCurrent()) hooks.turnChanged();
    });
    this.bridge = new BridgedCallControl(this.gateway, this.relay, log, { now });
    this.coordinator = new CallCoordinator({
      gateway: this.bridge,
      claims: this.relay,
      transfers: this.bridge,
      rejoins: this.bridge,
      gatewayUrl: account.gatewayUrl,
      dataDir: options.dataDir,
      history: options.history,
      defaultCountry: account.defaultCountry,
      nameFor: options.nameFor,
      now,
      logger: log,
    });
    this.transfers = new TransferCommands(this.coordinator, this.bridge);
    this.customerLegs = new CustomerLegWatch({
      relay: this.relay,
      isBridged: (callId) => this.bridge.isBridgedCall(callId),
      report: (quality) => {
        if (this.isCurrent()) hooks.customerLegQuality(quality);
      },
      logger: log,
    });
    this.holds = new DirectHolds({ relay: this.relay, isBridged: (callId) => this.bridge.isBridgedCall(callId), logger: log });
    this.monitoring = new Monitoring({
      relay: this.relay,
      busy: () => this.coordinator.hasBusyCall(),
      push: (change) => {
        if (this.isCurrent()) hooks.monitorChanged(change);
      },
      log,
    });
    this.coordinator.onCallChanged((call) => {
      this.bridge.callChanged(call);
      this.customerLegs.callChanged(call);
      this.holds.callChanged(call);
      this.monitoring.callsChanged();
      hooks.callChanged(call);
      if (this.isCurrent()) hooks.presenceMayHaveChanged();
    });
    this.stream = new RelayEventStream({
      url: account.relayUrl,
      token: account.agentToken,
      onEvent: (received: RelayEnvelope) => {
        if (!this.isCurrent()) return;
        this.bridge.deliver(received, (envelope) => {
          if (!this.isCurrent()) return;
          this.coordinator.applyRelayEvent(envelope, this.colleagueCall());
          this.monitoring.relayEvent(envelope);
          hooks.relayEvent(envelope);
        });
      },
      onTeam: (info: TeamInfo) => {
        if (this.isCurrent()) hooks.teamChanged(info);
      },
      onState: (state: ConnectionState) => {
        if (!this.isCurrent()) return;
        hooks.connectionChanged(state);
        if (state.status === 'connected') this.onStreamConnected();
      },
      logger: log,
    });
  }

  get source(): Source['kind'] {
    return this.sourceKind;
  }

  get account(): AccountConfig {
    return this.accountConfig;
  }

  /** Whether this runtime's connections serve `source` as they are (same gateway and relay, same secrets). */
  serves(source: AccountSource): boolean {
    return this.sourceKind !== 'sandbox' && connectionKey(this.accountConfig) === connectionKey(source.account);
  }

  /** Takes the non-connection settings of `source` (which it serves): the calls go on. */
  retarget(source: AccountSource): void {
    this.accountConfig = source.account;
    this.sourceKind = source.kind;
    this.coordinator.setDefaultCountry(source.account.defaultCountry);
  }

  /** What the messaging sends through while this runtime serves. */
  forMessaging(): MessagingRuntime {
    const account = this.accountConfig;
    return {
      gateway: this.gateway,
      product: account.productSegment,
      ...(account.defaultCountry ? { defaultCountry: account.defaultCountry } : {}),
      agentId: () => this.agentId(),
    };
  }

  /** Takes over the calls a previous run left live. */
  async prepare(): Promise<void> {
    await this.coordinator.start();
  }

  /** Connects: the event stream, the TURN credentials, and who this agent is on the relay. */
  connect(): void {
    this.stream.start();
    this.turn.start();
    void this.learnAgentId();
  }

  /** Ends live calls on the gateway, then closes every connection. */
  async stop(): Promise<void> {
    this.turn.stop();
    this.customerLegs.stop();
    this.holds.stop();
    // A joined call is left while the calls end: neither waits for the other.
    await Promise.all([this.monitoring.stop(), this.coordinator.shutdown()]);
    await this.presence.stop();
    await this.stream.stop().catch((e: unknown) => this.log.warn('the event stream did not stop cleanly', { error: e }));
    await this.gateway.close();
    await this.relay.close();
    await this.sandbox?.close();
  }

  /** This agent's relay id (in sandbox mode the embedded relay's): known after GET /me or a claim, else asked now. */
  async agentId(): Promise<Result<string>> {
    if (this.relay.agentId !== undefined) return ok(this.relay.agentId);
    const me = await this.relay.me();
    return me.ok ? ok(me.value.agentId) : me;
  }

  private isCurrent(): boolean {
    return this.options.isCurrent(this);
  }

  /**
   * The colleague's call this agent is joined to as a supervisor (monitoring.ts), whose events are the
   * join's; none when this agent is in that call itself now (a transfer of it rang or was answered).
   */
  private colleagueCall(): string | undefined {
    const joined = this.monitoring.joinedCall;
    return joined !== undefined && !this.coordinator.calls().some((call) => call.callId === joined) ? joined : undefined;
  }

  /**
   * A (re)connected stream may be a restarted relay that has forgotten this agent's presence, or
   * one started with other flags (whether its bridge records).
   */
  private onStreamConnected(): void {
    this.presence.report();
    void this.learnAgentId();
    void this.learnTeam();
    this.options.hooks.relayConnected();
  }

  /** The team's settings change only with the relay's file: asked at each (re)connect, told by the `team` event between. */
  private async learnTeam(): Promise<void> {
    const team = await this.relay.teamInfo();
    if (team.ok) {
      if (this.isCurrent()) this.options.hooks.teamChanged(team.value);
    } else this.log.warn('the relay did not say the team’s settings; the defaults stay', { code: team.error.code, reason: team.error.message });
  }

  private async learnAgentId(): Promise<void> {
    const me = await this.relay.me();
    if (me.ok) this.bridge.setBridged(me.value.bridged);
    if (me.ok && this.isCurrent()) this.options.hooks.teamRecordTold(me.value.record);
    if (me.ok) this.log.info('signed in to the relay', { agentId: me.value.agentId, bridged: me.value.bridged, record: me.value.record ?? 'never' });
    else this.log.warn('the relay did not say which agent this is', { code: me.error.code, reason: me.error.message });
  }
}
