// The main-process service behind SoftphoneApi (shared/api.ts): both hosts (Electron IPC, the browser
// host's WebSocket) wrap this one backend. It composes the domains in service/ — calls, messaging,
// settings and mode, the desk and presence, a call's media, oversight (the team's recordings, a
// supervisor's join of a call), diagnostics, sandbox control, updates — each answering
// its own commands, and the mode they run in (service/mode.ts: an account from the command line, a
// saved account, or the embedded sandbox; ARCHITECTURE.md "Embedded default"). The messaging
// (MessagingService: the 24-hour windows and the message timeline), the voicemails kept with
// recent calls (VoicemailKeeper), the service's recordings and transcripts (CaptureKeeper) and the
// marks of the team's own recordings (TeamRecordings) outlive mode switches.
import { join } from 'node:path';
import type { CommandName, CommandResults, PushMessage, SoftphoneBackend } from '../../shared/api';
import { createLogger, type Logger } from '../../shared/log';
import type { Preferences } from '../../shared/preferences';
import { text, type RuleText } from '../../shared/i18n/text';
import { errText, type Result } from '../../shared/result';
import type { AccountConfig } from '../../shared/settings';
import { CallDiagnosticsStore, ConnectionHistory } from './diagnostics';
import type { FileLogging } from './log-files';
import { ConversationWindows } from './conversation-windows';
import type { EmbeddedEnvironment } from './embedded-environment';
import { HistoryStore } from './history-store';
import { MessageTimeline } from './message-timeline';
import { MessagingService, type LinkChecker } from './messaging-service';
import { NetworkSettingsStore, type NetworkFlags } from './network-settings';
import { PreferencesStore, type PreferencesGuard } from './preferences-store';
import type { SecretStore } from './secret-store';
import { ServiceCaptureStore } from './service-capture-store';
import { SettingsStore } from './settings-store';
import type { UpdateControlFactory } from './update-control';
import { callCommands, callsOfGoneWindow, requestDial } from './service/call-commands';
import { deskCommands, PresenceDesk, TeamDesk } from './service/desk-commands';
import { WrapUps } from './wrap-ups';
import { diagnosticsCommands } from './service/diagnostics-commands';
import { composeHandlers, type CommandHandlers, type CommandParamsOut } from './service/handlers';
import { messageCommands } from './service/message-commands';
import { ModeMachine } from './service/mode';
import type { Source } from './service/runtime';
import { sandboxCommands } from './service/sandbox-commands';
import { settingsCommands, SettingsView } from './service/settings-commands';
import { Updates } from './service/update-commands';
import { mediaCommands } from './service/media-commands';
import { MediaFiles, VOICEMAIL_DIR } from './media-files';
import { VoicemailKeeper } from './voicemail-keeper';
import { CaptureKeeper } from './capture-keeper';
import { oversightCommands } from './service/oversight-commands';
import { TeamRecordings } from './team-recordings';

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
  windowGone(calls: readonly string[] | 'all', reason: RuleText): Promise<void>;
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
  private readonly settings: SettingsStore;
  private readonly prefs: PreferencesStore;
  private readonly capture: ServiceCaptureStore;
  private readonly mode: ModeMachine;
  private readonly view: SettingsView;
  private readonly presence: PresenceDesk;
  private readonly team: TeamDesk;
  private readonly wrapUps: WrapUps;
  private readonly updates: Updates;
  private readonly voicemails: VoicemailKeeper;
  private readonly captures: CaptureKeeper;
  private readonly teamRecordings: TeamRecordings;
  private readonly listeners = new Set<(push: PushMessage) => void>();
  private readonly handlers: CommandHandlers;
  private closed = false;

  constructor(
    private readonly options: SoftphoneServiceOptions,
    private readonly history: HistoryStore,
    private readonly messaging: MessagingService,
    private readonly diagnostics: CallDiagnosticsStore,
  ) {
    const log = (this.log = options.logger ?? createLogger('softphone'));
    const now = options.now ?? Date.now;
    const push = (message: PushMessage): void => this.push(message);
    const connections = new ConnectionHistory();
    this.settings = new SettingsStore({ dataDir: options.dataDir, secrets: options.secrets, logger: log });
    this.prefs = new PreferencesStore({ dataDir: options.dataDir, logger: log, guard: options.preferencesGuard });
    const network = new NetworkSettingsStore({ dataDir: options.dataDir, secrets: options.secrets, logger: log, ...(options.network ? { flags: options.network } : {}) });
    const capture = (this.capture = new ServiceCaptureStore({ dataDir: options.dataDir, logger: log }));
    this.mode = new ModeMachine({
      embedded: options.embedded,
      dataDir: options.dataDir,
      history,
      nameFor: (number) => messaging.nameOf(number) ?? history.entries().find((e) => e.number === number && e.name !== undefined)?.name,
      capture: () => capture.current(),
      now,
      log,
      hooks: {
        callChanged: (call) => {
          push({ name: 'callChanged', payload: call });
          this.presence.callChanged(call);
          if (call.peer.number !== undefined && call.peer.name !== undefined) messaging.rememberName(call.peer.number, call.peer.name);
        },
        relayEvent: (envelope) => {
          messaging.applyRelayEvent(envelope);
          this.voicemails.relayEvent(envelope);
          this.captures.relayEvent(envelope);
          this.teamRecordings.relayEvent(envelope);
        },
        connectionChanged: (state) => {
          connections.note(state);
          push({ name: 'connectionChanged', payload: state });
        },
        presenceMayHaveChanged: () => this.presence.sync(),
        teamChanged: (info) => this.team.told(info),
        teamRecordTold: (record) => this.team.recordTold(record),
        monitorChanged: (change) => push({ name: 'monitorChanged', payload: change }),
        relayConnected: () => this.wrapUps.resume(),
        turnChanged: () => void this.view.current().then((settings) => push({ name: 'settingsChanged', payload: settings })),
        customerLegQuality: (quality) => push({ name: 'customerLegQuality', payload: quality }),
        runtimeChanged: (runtime) => {
          messaging.setRuntime(runtime?.forMessaging());
          // A gateway to fetch from: the voicemails, recordings and transcripts not kept yet are tried now (at start, and after a switch).
          if (runtime !== undefined) {
            this.voicemails.resume();
            this.captures.resume();
          }
        },
      },
    });
    this.view = new SettingsView(this.settings, network, capture, this.mode);
    this.team = new TeamDesk(push);
    this.presence = new PresenceDesk({ dataDir: options.dataDir, mode: this.mode, prefs: this.prefs, team: this.team, history, push, log, now });
    this.wrapUps = new WrapUps({
      history,
      relay: () => this.mode.current()?.relay,
      settings: () => this.team.settings(),
      now,
      log,
      onSaved: (entry) => this.presence.wrapUpSaved(entry.localId, (entry.wrapUp?.disposition ?? null) !== null),
    });
    this.updates = new Updates(this.mode, log);
    this.voicemails = new VoicemailKeeper({
      history,
      files: new MediaFiles(join(options.dataDir, VOICEMAIL_DIR), log),
      gateway: () => this.mode.current()?.gateway,
      now,
      log,
    });
    this.captures = new CaptureKeeper({ history, dataDir: options.dataDir, gateway: () => this.mode.current()?.gateway, now, log });
    this.teamRecordings = new TeamRecordings({ history, relay: () => this.mode.current()?.relay, log });
    this.prefs.onChanged((preferences) => {
      push({ name: 'preferencesChanged', payload: preferences });
      // "Ring me during a call" changes what the relay is told while on a call.
      this.presence.sync();
    });
    history.onChanged((entries) => push({ name: 'historyChanged', payload: entries }));
    messaging.onConversationChanged((conversation) => push({ name: 'conversationChanged', payload: conversation }));
    this.handlers = composeHandlers({
      calls: callCommands(this.mode),
      messaging: messageCommands(messaging, this.mode),
      settings: settingsCommands({ settings: this.settings, network, capture, prefs: this.prefs, view: this.view, mode: this.mode, flagsAccount: options.account, push }),
      desk: deskCommands({ mode: this.mode, presence: this.presence, team: this.team, wrapUps: this.wrapUps, settings: this.view, history, prefs: this.prefs, messaging, updates: this.updates }),
      diagnostics: diagnosticsCommands({ mode: this.mode, history, diagnostics, connections, settings: this.view, logFiles: options.logFiles, appVersion: options.appVersion, log, now }),
      sandbox: sandboxCommands(this.mode),
      media: mediaCommands(this.voicemails, this.captures),
      oversight: oversightCommands(this.mode, this.teamRecordings),
      updates: this.updates.commands(),
    });
  }

  async start(): Promise<void> {
    await this.prefs.load();
    await this.capture.load();
    await this.presence.load();
    const saved = this.options.account ? undefined : await this.settings.load();
    const source: Source = this.options.account ? { kind: 'flags', account: this.options.account } : saved ? { kind: 'saved', account: saved } : { kind: 'sandbox' };
    await this.mode.switchTo(source);
    await this.updates.start(this.options.updates, (message) => this.push(message));
  }

  async handle<N extends CommandName>(name: N, params: CommandParamsOut<N>): Promise<Result<CommandResults[N]>> {
    if (this.closed) return errText('not_available', text('service.shuttingDown'));
    const handler = this.handlers[name] as unknown as (p: CommandParamsOut<N>) => Promise<Result<CommandResults[N]>>;
    try {
      return await handler(params);
    } catch (e) {
      this.log.error('command failed unexpectedly', { command: name, error: e });
      return errText('internal', text('service.commandFailed', { name }));
    }
  }

  preferences(): Preferences {
    return this.prefs.get();
  }

  requestDial(link: string, options: DialRequestOptions = {}): Result<{ number: string; dial: boolean }> {
    return requestDial(this.mode, (message) => this.push(message), { link, dialAtOnce: options.dialAtOnce, preferences: this.prefs.get() });
  }

  windowGone(calls: readonly string[] | 'all', reason: RuleText): Promise<void> {
    callsOfGoneWindow(this.mode, this.log, calls, reason);
    // The one window carried a joined call's audio too (a supervisor's): its leg went with it.
    if (calls === 'all') this.mode.current()?.monitoring.windowGone();
    return Promise.resolve();
  }

  subscribe(listener: (push: PushMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.updates.close();
    this.wrapUps.stop();
    await this.voicemails.stop();
    await this.captures.stop();
    this.teamRecordings.stop();
    this.presence.stop();
    await this.mode.close();
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
}
