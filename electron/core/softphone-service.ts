// The main-process service behind SoftphoneApi (shared/api.ts): both hosts (Electron IPC, the browser
// host's WebSocket) wrap this one backend. It picks the mode — an account from the command line, a
// saved account, or the embedded sandbox (ARCHITECTURE.md "Embedded default") — and wires the
// gateway client, the relay event stream and the call coordinator for it, and the messaging beside the
// calls (MessagingService: the 24-hour windows and the message timeline, which outlive mode switches).
import type { z } from 'zod';
import type {
  AgentPresence,
  AppSnapshot,
  CommandName,
  CommandResults,
  ConnectionState,
  PresenceChoice,
  PresenceStatus,
  PushMessage,
  RelayCheck,
  SoftphoneBackend,
  commandSchemas,
} from '../../shared/api';
import { LIVE_PHASES, type CallPhase } from '../../shared/call-state';
import type { RelayEnvelope } from '../../shared/events';
import { numberFromDialLink } from '../../shared/dial-link';
import { createLogger, type Logger } from '../../shared/log';
import type { Preferences } from '../../shared/preferences';
import { err, errorText, ok, type Result } from '../../shared/result';
import type { IceConfig } from '../../shared/ice-servers';
import type { AccountConfig, PublicSettings } from '../../shared/settings';
import { CallCoordinator } from './call-coordinator';
import { buildDiagnostics, CallDiagnosticsStore, ConnectionHistory, EXPORT_LOG_BYTES } from './diagnostics';
import type { FileLogging } from './log-files';
import { ConversationWindows } from './conversation-windows';
import type { EmbeddedEnvironment } from './embedded-environment';
import { RelayEventStream } from './event-stream';
import { GatewayClient } from './gateway-client';
import { HistoryStore } from './history-store';
import { MessageTimeline } from './message-timeline';
import { MessagingService, type LinkChecker } from './messaging-service';
import { mergeIceConfig, NetworkSettingsStore, RelayTurnCredentials, type NetworkFlags } from './network-settings';
import { PreferencesStore, type PreferencesGuard } from './preferences-store';
import { loadPresenceChoice, PresenceReporter, savePresenceChoice } from './presence';
import { RelayClient } from './relay-client';
import { SandboxControlClient } from './sandbox-control-client';
import type { SecretStore } from './secret-store';
import { publicSettingsFor, SettingsStore } from './settings-store';
import { unsupportedUpdates, type UpdateControl, type UpdateControlFactory } from './update-control';

export type { EmbeddedEnvironment } from './embedded-environment';

export interface SoftphoneServiceOptions {
  dataDir: string;
  secrets: SecretStore;
  /** From command-line flags or the environment: used instead of saved settings, never persisted. */
  account?: AccountConfig;
  /** The app's version, for "Export diagnostics" (Electron: app.getVersion(); the browser host: package.json's). */
  appVersion?: string;
  /** The rotating log files (electron/core/log-files.ts): read by "Export diagnostics", stopped last on close. */
  logFiles?: FileLogging;
  /** `--ice-servers` / `--ice-transport-policy`: used instead of the saved Network settings until a save replaces them. */
  network?: NetworkFlags;
  /** Starts the embedded relay and sandbox; called only when there is no account. */
  embedded?: () => Promise<EmbeddedEnvironment>;
  logger?: Logger;
  now?: () => number;
  /** The media link check before a media message is sent: by default the real GET of the file's head (and tail where it matters), judged on its bytes. */
  checkMediaLink?: LinkChecker;
  /** The host's own check of a preferences change (the Electron host: global shortcuts are free). */
  preferencesGuard?: PreferencesGuard;
  /** The host's updater (the Electron host's); without one every update command answers not_available. */
  updates?: UpdateControlFactory;
}

export interface SoftphoneService extends SoftphoneBackend {
  windowGone(calls: readonly string[] | 'all', reason: string): Promise<void>;
  /** Ends live calls on the gateway (protocol.md: also on app quit), then stops everything. */
  close(): Promise<void>;
  /** The desk preferences as they are now (the hosts act on some of them). */
  preferences(): Preferences;
  /**
   * A tel:/callto: link or a number from outside (a protocol link, GET /dial): checked, then handed
   * to the windows as dialRequested. It is dialled at once only when "Dial links at once" is on, the
   * number is a listed one, no call keeps the agent busy, and the caller allows it (`dialAtOnce`,
   * true by default: GET /dial says false for a navigation no click started). A bad number is
   * refused with the reason and nothing is pushed.
   */
  requestDial(link: string, options?: DialRequestOptions): Result<{ number: string; dial: boolean }>;
}

export interface DialRequestOptions {
  /** False: the number only fills the dialer, whatever the preference says. */
  dialAtOnce?: boolean;
}

type CommandParamsOut<N extends CommandName> = z.output<(typeof commandSchemas)[N]>;
type CommandHandlers = { [N in CommandName]: (params: CommandParamsOut<N>) => Promise<Result<CommandResults[N]>> };

/** Where the active account came from. */
type Source = { kind: 'flags'; account: AccountConfig } | { kind: 'saved'; account: AccountConfig } | { kind: 'sandbox' };

interface Runtime {
  source: Source['kind'];
  account: AccountConfig;
  gateway: GatewayClient;
  coordinator: CallCoordinator;
  stream: RelayEventStream;
  relay: RelayClient;
  presence: PresenceReporter;
  /** The relay's short-lived TURN credentials, renewed before they expire. */
  turn: RelayTurnCredentials;
  sandbox?: SandboxControlClient;
}

/** The parts of an account that the gateway client and the event stream are built from. */
const connectionKey = (a: AccountConfig): string => JSON.stringify([a.gatewayUrl, a.productSegment, a.apiKey, a.relayUrl, a.agentToken]);

export async function createSoftphoneService(options: SoftphoneServiceOptions): Promise<SoftphoneService> {
  const common = { dataDir: options.dataDir, ...(options.logger ? { logger: options.logger } : {}), ...(options.now ? { now: options.now } : {}) };
  const history = await HistoryStore.open(common);
  const messaging = new MessagingService({
    windows: await ConversationWindows.open(common),
    timeline: await MessageTimeline.open(common),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.checkMediaLink ? { checkLink: options.checkMediaLink } : {}),
  });
  const diagnostics = await CallDiagnosticsStore.open(common);
  const service = new CoreSoftphoneService(options, history, messaging, diagnostics);
  await service.start();
  return service;
}

class CoreSoftphoneService implements SoftphoneService {
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly settings: SettingsStore;
  private readonly prefs: PreferencesStore;
  private readonly network: NetworkSettingsStore;
  private readonly connections = new ConnectionHistory();
  private readonly listeners = new Set<(push: PushMessage) => void>();
  private runtime: Runtime | undefined;
  private embeddedEnv: EmbeddedEnvironment | undefined;
  private connection: ConnectionState;
  private presenceChoice: PresenceChoice = 'available';
  /** The presence last pushed to the renderer. */
  private presenceShown: AgentPresence | undefined;
  /** Bumped on every switch so that a stopped stream's late callbacks are ignored. */
  private generation = 0;
  /** Mode switches run one after another; call commands wait for the one under way. */
  private switching: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly handlers: CommandHandlers;
  private updates: UpdateControl = unsupportedUpdates();

  constructor(
    private readonly options: SoftphoneServiceOptions,
    private readonly history: HistoryStore,
    private readonly messaging: MessagingService,
    private readonly diagnostics: CallDiagnosticsStore,
  ) {
    this.log = options.logger ?? createLogger('softphone');
    this.now = options.now ?? Date.now;
    this.connection = { status: 'connecting', since: this.now() };
    this.settings = new SettingsStore({ dataDir: options.dataDir, secrets: options.secrets, logger: this.log });
    this.prefs = new PreferencesStore({ dataDir: options.dataDir, logger: this.log, guard: options.preferencesGuard });
    this.network = new NetworkSettingsStore({ dataDir: options.dataDir, secrets: options.secrets, logger: this.log, ...(options.network ? { flags: options.network } : {}) });
    this.prefs.onChanged((preferences) => {
      this.push({ name: 'preferencesChanged', payload: preferences });
      // "Ring me during a call" changes what the relay is told while on a call.
      this.syncPresence();
    });
    history.onChanged((entries) => this.push({ name: 'historyChanged', payload: entries }));
    messaging.onConversationChanged((conversation) => this.push({ name: 'conversationChanged', payload: conversation }));
    this.handlers = {
      getSnapshot: () => this.snapshot(),
      startCall: ({ localId, to, sdp, anyway }) => this.withCalls((c) => c.startCall(to, sdp, localId, { anyway })),
      answerCall: ({ localId, sdp }) => this.withCalls((c) => c.answerCall(localId, sdp)),
      declineCall: ({ localId }) => this.withCalls((c) => c.declineCall(localId)),
      hangUp: ({ localId }) => this.withCalls((c) => c.hangUp(localId)),
      holdCall: ({ localId }) => this.withCalls((c) => c.holdCall(localId)),
      resumeCall: ({ localId }) => this.withCalls((c) => c.resumeCall(localId)),
      reportMedia: (report) => this.withCalls((c) => c.reportMedia(report)),
      saveSettings: ({ settings }) => this.saveSettings(settings),
      clearSettings: () => this.clearSettings(),
      saveNetworkSettings: ({ network }) => this.saveNetworkSettings(network),
      getIceConfig: () => this.iceConfig(),
      reportQuality: (report) => this.reportQuality(report),
      exportDiagnostics: ({ window }) => this.exportDiagnostics(window),
      checkRelay: () => this.checkRelay(),
      writeLogs: ({ records }) => this.writeWindowLogs(records),
      simulateIncomingCall: ({ number }) => this.withSandbox((s) => s.incoming(number)),
      simulateCustomerHangUp: ({ localId }) => this.simulateCustomerHangUp(localId),
      setPresence: ({ status }) => this.setPresence(status),
      setPreferences: ({ preferences }) => this.prefs.update(preferences),
      sendMessage: ({ to, content, confirmed }) => this.withMessaging(() => this.messaging.sendMessage(to, content, { confirmed })),
      checkMediaLink: ({ type, link }) => this.messaging.checkMediaLink(type, link),
      parseTemplate: ({ pasted }) => Promise.resolve(this.messaging.parseTemplate(pasted)),
      sendTemplate: ({ draft, to, values }) => this.withMessaging(() => this.messaging.sendTemplate(draft, to, values)),
      sendCallButton: (input) => this.withMessaging(() => this.messaging.sendCallButton(input)),
      requestCallPermission: ({ to, bodyText }) => this.withMessaging(() => this.messaging.requestCallPermission(to, bodyText)),
      getConversation: ({ contact }) => Promise.resolve(this.messaging.lookUp(contact)),
      simulateInboundMessage: ({ number, text }) => this.withSandbox((s) => s.inbound(number, text)),
      simulatePressCallButton: ({ number }) => this.withSandbox((s) => s.pressCallButton(number)),
      getUpdateSettings: () => Promise.resolve(this.updates.settings()),
      setUpdateSettings: ({ settings }) => this.updates.setSettings(settings),
      checkForUpdates: () => this.updates.check(),
      restartToUpdate: () => Promise.resolve(this.updates.restart()),
    };
  }

  async start(): Promise<void> {
    await this.prefs.load();
    this.presenceChoice = await loadPresenceChoice(this.options.dataDir, this.log);
    const saved = this.options.account ? undefined : await this.settings.load();
    const source: Source = this.options.account ? { kind: 'flags', account: this.options.account } : saved ? { kind: 'saved', account: saved } : { kind: 'sandbox' };
    await this.switchTo(source);
    await this.startUpdates();
  }

  /** The host's updater, told how to see a live call; one that fails to start leaves updates unsupported, with the reason. */
  private async startUpdates(): Promise<void> {
    if (this.options.updates) {
      try {
        this.updates = await this.options.updates({ liveCall: () => this.liveCallPhase() });
      } catch (e) {
        this.log.error('the updater could not start', { error: e });
        this.updates = unsupportedUpdates(`Updates could not start: ${errorText(e)}`);
      }
    }
    this.updates.onStatus((status) => this.push({ name: 'updateStatus', payload: status }));
  }

  /** A call that restarting would cut: ringing, being placed or answered, or under way. */
  private liveCallPhase(): CallPhase | undefined {
    return this.runtime?.coordinator.calls().find((call) => LIVE_PHASES.has(call.phase))?.phase;
  }

  async handle<N extends CommandName>(name: N, params: CommandParamsOut<N>): Promise<Result<CommandResults[N]>> {
    if (this.closed) return err('not_available', 'The softphone is shutting down');
    const handler = this.handlers[name] as unknown as (p: CommandParamsOut<N>) => Promise<Result<CommandResults[N]>>;
    try {
      return await handler(params);
    } catch (e) {
      this.log.error('command failed unexpectedly', { command: name, error: e });
      return err('internal', `The ${name} command failed unexpectedly`);
    }
  }

  preferences(): Preferences {
    return this.prefs.get();
  }

  requestDial(link: string, options: DialRequestOptions = {}): Result<{ number: string; dial: boolean }> {
    const number = numberFromDialLink(link, this.runtime?.account.defaultCountry);
    if (!number.ok) return number;
    // A number the numbering plan does not list waits in the dialer for the agent's "Call anyway".
    // Every window gets the push: main decides here, once, so that no window dials on top of a
    // call in progress (this keeps the link's page honest: the window's dialer waits for the call to end).
    const busy = this.runtime?.coordinator.hasBusyCall() ?? false;
    const dial = this.prefs.get().dialLinksAtOnce && number.value.verified && !busy && options.dialAtOnce !== false;
    const request = { number: number.value.digits, dial };
    this.push({ name: 'dialRequested', payload: request });
    return ok(request);
  }

  async windowGone(calls: readonly string[] | 'all', reason: string): Promise<void> {
    const runtime = this.runtime;
    if (!runtime) return;
    const owned = calls === 'all' ? undefined : new Set(calls);
    // A ringing call lost nothing: every window prepares its own answer, and the reloaded one will too.
    const gone = runtime.coordinator.calls().filter((c) => c.phase !== 'ended' && c.phase !== 'ringing' && (owned === undefined || owned.has(c.localId)));
    for (const call of gone) {
      this.log.warn('the window that carried a call\'s audio is gone: ending the call', { localId: call.localId, phase: call.phase });
      await runtime.coordinator.reportMedia({ localId: call.localId, state: 'failed', reason });
    }
  }

  subscribe(listener: (push: PushMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.updates.close();
    await this.switching;
    await this.stopRuntime();
    await this.embeddedEnv?.close().catch((e: unknown) => this.log.error('the embedded sandbox did not close cleanly', { error: e }));
    this.embeddedEnv = undefined;
    await this.messaging.close();
    await this.history.flush();
    await this.diagnostics.flush();
    await this.prefs.flush();
    this.listeners.clear();
    await this.options.logFiles?.stop();
  }

  private push(message: PushMessage): void {
    for (const listener of this.listeners) {
      try {
        listener(message);
      } catch (e) {
        this.log.error('a push listener failed', { push: message.name, error: e });
      }
    }
  }

  private setConnection(state: ConnectionState): void {
    this.connection = state;
    this.connections.note(state);
    this.push({ name: 'connectionChanged', payload: state });
  }

  private async withCalls<T>(run: (coordinator: CallCoordinator) => Promise<Result<T>>): Promise<Result<T>> {
    await this.switching;
    const runtime = this.runtime;
    if (!runtime) return err('not_configured', 'No account is set up and the sandbox is not running: open the settings');
    return run(runtime.coordinator);
  }

  /** Messages wait for a mode switch under way, like calls: they must go through the account being switched to. */
  private async withMessaging<T>(run: () => Promise<Result<T>>): Promise<Result<T>> {
    await this.switching;
    return run();
  }

  private async withSandbox<T>(run: (sandbox: SandboxControlClient, runtime: Runtime) => Promise<Result<T>>): Promise<Result<T>> {
    await this.switching;
    const runtime = this.runtime;
    if (!runtime?.sandbox) return err('not_available', 'Simulated customers exist only in sandbox mode');
    return run(runtime.sandbox, runtime);
  }

  private simulateCustomerHangUp(localId: string): Promise<Result<null>> {
    return this.withSandbox((sandbox, runtime) => {
      const callId = runtime.coordinator.call(localId)?.callId;
      if (callId === undefined) return Promise.resolve(err('not_found', `There is no call ${localId} with a gateway call id`));
      return sandbox.hangUp(callId);
    });
  }

  private async snapshot(): Promise<Result<AppSnapshot>> {
    const runtime = this.runtime;
    // What must be awaited first; the state itself is read after, in one go, just before the answer
    // leaves. A push sent while this waited then comes before the answer, never after an older
    // state (the window keeps what arrived last: a call held meanwhile stays held there).
    const settings = await this.publicSettings();
    const sandbox = runtime?.sandbox ? await Promise.all([runtime.sandbox.customers(), runtime.sandbox.templates()]) : undefined;
    const snapshot: AppSnapshot = {
      mode: runtime?.source === 'sandbox' || !runtime ? 'sandbox' : 'account',
      calls: runtime?.coordinator.calls() ?? [],
      history: this.history.entries(),
      connection: this.connection,
      settings,
      presence: this.presence(),
      preferences: this.prefs.get(),
      conversations: this.messaging.recentConversations(),
      updateStatus: this.updates.status(),
    };
    if (sandbox) {
      const [customers, templates] = sandbox;
      snapshot.sandboxCustomers = customers.ok ? customers.value : [];
      snapshot.sandboxTemplates = templates.ok ? templates.value : [];
    }
    return ok(snapshot);
  }

  /** The relay is told "on_call" while a call keeps the agent busy, otherwise the agent's choice. */
  private presence(): AgentPresence {
    const coordinator = this.runtime?.coordinator;
    const busy = coordinator?.busyCallCount() ?? 0;
    // On one connected call with "Ring me during a call" on, a new call may still ring here (not in
    // Do not disturb): one still being placed or answered cannot go on hold for it yet.
    const waiting = busy === 1 && coordinator?.canTakeAnother() === true && this.presenceChoice === 'available' && this.prefs.get().ringDuringCall;
    const status: PresenceStatus = busy === 0 ? this.presenceChoice : waiting ? 'call_waiting' : 'on_call';
    return { choice: this.presenceChoice, status };
  }

  /** Reports the presence when it changed, to the relay and to the renderer. */
  private syncPresence(): void {
    const presence = this.presence();
    this.runtime?.presence.update(presence.status);
    const shown = this.presenceShown;
    if (shown?.choice === presence.choice && shown.status === presence.status) return;
    this.presenceShown = presence;
    this.push({ name: 'presenceChanged', payload: presence });
  }

  private async setPresence(choice: PresenceChoice): Promise<Result<AgentPresence>> {
    if (choice !== this.presenceChoice) {
      this.presenceChoice = choice;
      this.log.info('presence chosen', { choice });
      // Kept for the next start; a failed write changes nothing about this run.
      await savePresenceChoice(this.options.dataDir, choice).catch((e: unknown) => this.log.error('the presence choice could not be saved', { error: e }));
    }
    this.syncPresence();
    return ok(this.presence());
  }

  private async publicSettings(): Promise<PublicSettings> {
    const runtime = this.runtime;
    const network = await this.network.publicSettings(runtime?.turn.state ?? 'unknown');
    if (runtime?.source === 'flags') {
      const { apiKey, agentToken, ...stored } = runtime.account;
      return { ...publicSettingsFor('account', stored, { hasApiKey: apiKey !== '', hasAgentToken: agentToken !== '', kind: this.settings.secretStorage }), network };
    }
    const saved = await this.settings.publicSettings();
    return { ...saved, mode: runtime?.source === 'saved' ? 'account' : 'sandbox', network };
  }

  /** Settings → Network: the next call uses it (a call under way keeps the path it has: no ICE restart here). */
  private async saveNetworkSettings(input: CommandParamsOut<'saveNetworkSettings'>['network']): Promise<Result<PublicSettings>> {
    const saved = await this.network.save(input);
    if (!saved.ok) return saved;
    const settings = await this.publicSettings();
    this.push({ name: 'settingsChanged', payload: settings });
    return ok(settings);
  }

  private async reportQuality(report: CommandParamsOut<'reportQuality'>): Promise<Result<null>> {
    const call = this.runtime?.coordinator.call(report.localId);
    this.history.attachQuality(report.localId, report.summary);
    this.diagnostics.record(report, { ...(call?.callId !== undefined ? { callId: call.callId } : {}), ...(call ? { direction: call.direction } : {}) }, this.now());
    return ok(null);
  }

  private async exportDiagnostics(window: CommandParamsOut<'exportDiagnostics'>['window']): Promise<Result<{ fileName: string; content: string }>> {
    const logs = await this.options.logFiles?.recentLines(EXPORT_LOG_BYTES).catch((e: unknown) => {
      this.log.warn('the log files could not be read for the export', { error: e });
      return undefined;
    });
    const file = buildDiagnostics({
      appVersion: this.options.appVersion ?? 'unknown',
      settings: await this.publicSettings(),
      calls: this.diagnostics.recent(),
      connections: this.connections.list(),
      logs,
      ...(window ? { window } : {}),
      now: this.now(),
    });
    this.log.info('diagnostics exported', { bytes: file.content.length });
    return ok(file);
  }

  private readonly windowLog = createLogger('window');

  /** The window's records join main's log (files included), redacted once more on the way. */
  private async writeWindowLogs(records: CommandParamsOut<'writeLogs'>['records']): Promise<Result<null>> {
    for (const { level, logger, msg, t, fields } of records) this.windowLog[level](msg, { ...fields, source: logger, at: t });
    return ok(null);
  }

  private async checkRelay(): Promise<Result<RelayCheck>> {
    const runtime = this.runtime;
    if (!runtime) return ok({ reachable: false, problem: 'No account is set up and the sandbox is not running', relayTurn: 'unknown' });
    const started = performance.now();
    const me = await runtime.relay.me();
    const roundTripMs = Math.round(performance.now() - started);
    await runtime.turn.current();
    return ok(me.ok ? { reachable: true, roundTripMs, relayTurn: runtime.turn.state } : { reachable: false, problem: me.error.message, relayTurn: runtime.turn.state });
  }

  private async iceConfig(): Promise<Result<IceConfig>> {
    const [own, relay] = await Promise.all([this.network.own(), this.runtime?.turn.current()]);
    return ok(mergeIceConfig(own, relay));
  }

  private async saveSettings(input: CommandParamsOut<'saveSettings'>['settings']): Promise<Result<PublicSettings>> {
    const saved = await this.settings.save(input);
    if (!saved.ok) return saved;
    const account = await this.settings.load();
    if (!account) return err('internal', 'The settings were saved but could not be read back');
    await this.switchTo({ kind: 'saved', account });
    const settings = await this.publicSettings();
    this.push({ name: 'settingsChanged', payload: settings });
    return ok(settings);
  }

  /** Forgets the saved account: back to the command-line account if there is one, else the sandbox. */
  private async clearSettings(): Promise<Result<PublicSettings>> {
    await this.settings.clear();
    await this.switchTo(this.options.account ? { kind: 'flags', account: this.options.account } : { kind: 'sandbox' });
    const settings = await this.publicSettings();
    this.push({ name: 'settingsChanged', payload: settings });
    return ok(settings);
  }

  private switchTo(source: Source): Promise<void> {
    const next = this.switching.then(() => this.activate(source));
    this.switching = next.catch((e: unknown) => this.log.error('switching the account failed', { error: e }));
    return this.switching;
  }

  private async activate(source: Source): Promise<void> {
    if (this.closed) return;
    const current = this.runtime;
    if (current && source.kind !== 'sandbox' && current.source !== 'sandbox' && connectionKey(current.account) === connectionKey(source.account)) {
      // Same gateway and relay: keep the calls going, only the non-connection settings changed.
      current.account = source.account;
      current.source = source.kind;
      current.coordinator.setDefaultCountry(source.account.defaultCountry);
      this.messaging.setRuntime({
        gateway: current.gateway,
        product: source.account.productSegment,
        ...(source.account.defaultCountry ? { defaultCountry: source.account.defaultCountry } : {}),
        agentId: () => this.agentIdOf(current.relay),
      });
      return;
    }
    // An account switch ends live calls first: they belong to the gateway being left.
    await this.stopRuntime();
    let account: AccountConfig;
    let sandbox: SandboxControlClient | undefined;
    if (source.kind === 'sandbox') {
      const env = await this.embeddedEnvironment();
      if (!env) {
        this.setConnection({ status: 'reconnecting', since: this.now(), lastError: 'The embedded sandbox could not start' });
        return;
      }
      account = env.account;
      sandbox = new SandboxControlClient(env.sandboxControlUrl, this.log);
    } else {
      account = source.account;
    }
    const gateway = new GatewayClient({ baseUrl: account.gatewayUrl, apiKey: account.apiKey, product: account.productSegment, logger: this.log });
    const relay = new RelayClient({ url: account.relayUrl, token: account.agentToken, logger: this.log });
    const presence = new PresenceReporter({ relay, logger: this.log });
    const turn = new RelayTurnCredentials(relay, { now: this.now, logger: this.log });
    const generationOfTurn = this.generation + 1;
    // The windows keep their ICE configuration until settings change: credentials that arrive late
    // (the relay was slow or down at start) or stop being offered must reach the next call.
    turn.onChange(() => {
      if (generationOfTurn !== this.generation) return;
      void this.publicSettings().then((settings) => this.push({ name: 'settingsChanged', payload: settings }));
    });
    const coordinator = new CallCoordinator({
      gateway,
      claims: relay,
      gatewayUrl: account.gatewayUrl,
      dataDir: this.options.dataDir,
      history: this.history,
      defaultCountry: account.defaultCountry,
      nameFor: (number) => this.messaging.nameOf(number) ?? this.history.entries().find((e) => e.number === number && e.name !== undefined)?.name,
      now: this.now,
      logger: this.log,
    });
    const generation = ++this.generation;
    coordinator.onCallChanged((call) => {
      this.push({ name: 'callChanged', payload: call });
      if (call.peer.number !== undefined && call.peer.name !== undefined) this.messaging.rememberName(call.peer.number, call.peer.name);
      if (generation === this.generation) this.syncPresence();
    });
    await coordinator.start();
    const stream = new RelayEventStream({
      url: account.relayUrl,
      token: account.agentToken,
      onEvent: (envelope: RelayEnvelope) => {
        if (generation !== this.generation) return;
        coordinator.applyRelayEvent(envelope);
        this.messaging.applyRelayEvent(envelope);
      },
      onState: (state: ConnectionState) => {
        if (generation !== this.generation) return;
        this.setConnection(state);
        if (state.status === 'connected') this.onStreamConnected(relay, presence);
      },
      logger: this.log,
    });
    this.runtime = { source: source.kind, account, gateway, coordinator, stream, relay, presence, turn, ...(sandbox ? { sandbox } : {}) };
    this.messaging.setRuntime({
      gateway,
      product: account.productSegment,
      ...(account.defaultCountry ? { defaultCountry: account.defaultCountry } : {}),
      agentId: () => this.agentIdOf(relay),
    });
    this.log.info('calls ready', { mode: source.kind === 'sandbox' ? 'sandbox' : 'account', source: source.kind, gatewayUrl: account.gatewayUrl, relayUrl: account.relayUrl });
    this.setConnection({ status: 'connecting', since: this.now() });
    // Presence first, so that a relay which has the stream also knows whether to ring this agent.
    this.syncPresence();
    stream.start();
    turn.start();
    void this.learnAgentId(relay);
  }

  /** A (re)connected stream may be a restarted relay that has forgotten this agent's presence. */
  private onStreamConnected(relay: RelayClient, presence: PresenceReporter): void {
    presence.report();
    if (relay.agentId === undefined) void this.learnAgentId(relay);
  }

  /** This agent's relay id (in sandbox mode the embedded relay's): known after GET /me or a claim, else asked now. */
  private async agentIdOf(relay: RelayClient): Promise<Result<string>> {
    if (relay.agentId !== undefined) return ok(relay.agentId);
    const me = await relay.me();
    return me.ok ? ok(me.value.agentId) : me;
  }

  private async learnAgentId(relay: RelayClient): Promise<void> {
    const me = await relay.me();
    if (me.ok) this.log.info('signed in to the relay', { agentId: me.value.agentId });
    else this.log.warn('the relay did not say which agent this is', { code: me.error.code, reason: me.error.message });
  }

  private async stopRuntime(): Promise<void> {
    const runtime = this.runtime;
    if (!runtime) return;
    this.runtime = undefined;
    this.messaging.setRuntime(undefined);
    this.generation++;
    runtime.turn.stop();
    await runtime.coordinator.shutdown();
    await runtime.presence.stop();
    await runtime.stream.stop().catch((e: unknown) => this.log.warn('the event stream did not stop cleanly', { error: e }));
    await runtime.gateway.close();
    await runtime.relay.close();
    await runtime.sandbox?.close();
  }

  /** Started once and kept: leaving sandbox mode and coming back reuses it. */
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
