// Updates of the installed app with electron-updater, from a generic feed the agent (or their IT)
// sets in Settings: the feed URL (updates.json; empty = off) and the channel (stable reads
// latest*.yml, beta reads beta*.yml). Checks run at start and every few hours; a found update
// downloads in the background and electron-updater checks its sha512 against the feed's before it
// counts as downloaded. It never restarts the app by itself: the status becomes `ready`, the window
// offers "Restart to update", and restart() refuses while a call is live (ringing included). An
// update downloaded under the current settings also installs when the agent quits.
// Errors are logged and shown in the status; none is thrown to the caller.
import { AppImageUpdater, MacUpdater, type AppUpdater, type Logger as UpdaterLogger, type ProgressInfo, type UpdateDownloadedEvent, type UpdateInfo } from 'electron-updater';
import type { Unsubscribe } from '../../shared/api';
import type { CallPhase } from '../../shared/call-state';
import type { RuleTerm } from '../../shared/i18n/rules';
import { english, term, text, type RuleText } from '../../shared/i18n/text';
import { createLogger, type Logger } from '../../shared/log';
import { errorText, errText, ok, type Result } from '../../shared/result';
import { updateSettingsSchema, type UpdateSettings, type UpdateStatus } from '../../shared/updates';
import { parseWith } from '../../shared/validation';
import type { UpdateControl, UpdateHost } from '../core/update-control';
import { UpdateSettingsStore } from '../core/update-settings-store';

export const UPDATE_CHECK_EVERY_MS = 4 * 60 * 60 * 1000;
/** The first check waits for the window and the calls to come up. */
export const FIRST_UPDATE_CHECK_MS = 15_000;
/** After "Restart to update" the app quits within moments; still running after this, the restart did not happen. */
export const RESTART_GIVE_UP_MS = 30_000;

/** Why a copy run from source or from an unpacked folder does not update itself. */
export const UPDATE_INACTIVE: RuleText = text('updates.inactive');
export const UPDATE_INACTIVE_REASON = english(UPDATE_INACTIVE);

export interface UpdateServiceOptions {
  dataDir: string;
  /** electron-updater's updater for this platform and package (`autoUpdater` in the app). */
  updater: AppUpdater;
  host: UpdateHost;
  /**
   * Runs just before the updater quits the app to install: the window, which otherwise hides to
   * the tray, must let itself close. Returns what undoes it when the install does not start.
   */
  beforeRestart?: () => () => void;
  /** Starts `execPath` once this process has exited (Electron's app.relaunch): the AppImage's restart. */
  relaunch?: (execPath: string) => void;
  /**
   * Asks the agent, outside the window (a native dialog of the main process), whether updates may
   * come from `feedUrl` from now on. Whoever sets the feed chooses the code that runs at the next
   * restart, so the window alone must not be able to: without this, a new feed is never taken.
   */
  confirmFeedChange?: (feedUrl: string) => Promise<boolean>;
  /** How long after "Restart to update" the app may take to quit before the window hides to the tray again. */
  restartGiveUpMs?: number;
  checkEveryMs?: number;
  firstCheckDelayMs?: number;
  now?: () => number;
  logger?: Logger;
}

/** A call's phase in the words of the refusal ("a call is ringing"), terms of the rule catalogue. */
const PHASE_TERMS: Record<CallPhase, RuleTerm> = {
  ringing: 'callRinging',
  answering: 'callBeingAnswered',
  dialing: 'callBeingPlaced',
  calling: 'callBeingPlaced',
  remote_ringing: 'callRingingAtCustomer',
  connecting: 'callConnecting',
  active: 'callInProgress',
  ended: 'callEnded',
};

/** The update's failure as a rule of the catalogue (its words for the status); electron-updater's own messages carry stacks. */
export function describeUpdateError(e: unknown, version?: string): RuleText {
  const code = typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
  const message = errorText(e);
  const firstLine = message.split('\n')[0]!.slice(0, 300);
  const status = typeof e === 'object' && e !== null && 'statusCode' in e ? Number((e as { statusCode: unknown }).statusCode) : undefined;
  switch (code) {
    case 'ERR_CHECKSUM_MISMATCH':
      return version ? text('updates.checksumVersion', { version }) : text('updates.checksum');
    case 'ERR_UPDATER_CHANNEL_FILE_NOT_FOUND': {
      const file = /Cannot find channel "([^"]+)"/.exec(message)?.[1];
      return file !== undefined ? text('updates.noChannelFile', { file }) : text('updates.noFileForChannel');
    }
    case 'ERR_UPDATER_INVALID_UPDATE_INFO':
    case 'ERR_UPDATER_INVALID_VERSION':
      return text('updates.invalidInfo', { detail: firstLine });
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'ECONNRESET':
    case 'ETIMEDOUT':
    case 'EAI_AGAIN':
      return text('updates.unreachable', { code });
    default:
      if (status !== undefined && Number.isFinite(status)) return text('updates.httpStatus', { status });
      return text('updates.failed', { detail: firstLine });
  }
}

const settingsKey = (s: UpdateSettings): string => `${s.channel} ${s.feedUrl}`;

/** Starts the updater with the saved settings; the first check follows after `firstCheckDelayMs`. */
export async function startUpdateService(options: UpdateServiceOptions): Promise<UpdateService> {
  const store = new UpdateSettingsStore({ dataDir: options.dataDir, ...(options.logger ? { logger: options.logger } : {}) });
  const service = new UpdateService(options, store, await store.load());
  service.start();
  return service;
}

export class UpdateService implements UpdateControl {
  private readonly updater: AppUpdater;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly checkEveryMs: number;
  private readonly firstCheckDelayMs: number;
  private readonly listeners = new Set<(status: UpdateStatus) => void>();
  private readonly detach: Array<() => void> = [];
  private current: UpdateStatus;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The settings an update was downloaded under: only such an update installs on quit. */
  private downloadedUnder: string | undefined;
  /** The settings the last check ran under: its download belongs to them. */
  private checkedUnder: string | undefined;
  /** Cancels the download under way (a settings change makes it pointless). */
  private cancelDownload: (() => void) | undefined;
  /** A check and the download it started: electron-updater runs one at a time. */
  private operation: Promise<void> | undefined;
  /** The settings changed while an operation ran: check again once it has ended. */
  private recheck = false;
  private readonly active: boolean;
  private closed = false;
  private failures = 0;
  /** Where the new AppImage went when its file name carries the version (electron-updater renames it). */
  private renamedAppImage: string | undefined;
  /**
   * macOS: Electron's own autoUpdater (Squirrel.Mac), which installs. electron-updater says
   * `update-downloaded` once its proxy serves the zip, before Squirrel has fetched it; until
   * Squirrel's own `update-downloaded`, quitAndInstall would wait for it with the window closing.
   */
  private readonly squirrel: NodeJS.EventEmitter | undefined;
  /** macOS: the update electron-updater handed to Squirrel, and the settings it came under. */
  private handedToSquirrel: { version: string; under: string } | undefined;
  /** After "Restart to update": what lets the window hide to the tray again if the app does not quit. */
  private restarting: { undo: (() => void) | undefined; timer: ReturnType<typeof setTimeout> } | undefined;

  constructor(
    private readonly options: UpdateServiceOptions,
    private readonly store: UpdateSettingsStore,
    private chosen: UpdateSettings,
  ) {
    this.updater = options.updater;
    this.log = options.logger ?? createLogger('updates');
    this.now = options.now ?? Date.now;
    this.checkEveryMs = options.checkEveryMs ?? UPDATE_CHECK_EVERY_MS;
    this.firstCheckDelayMs = options.firstCheckDelayMs ?? FIRST_UPDATE_CHECK_MS;
    this.updater.logger = this.updaterLogger();
    // Downloads go on in the background; installing waits for "Restart to update" or a quit.
    this.updater.autoDownload = true;
    this.squirrel = this.updater instanceof MacUpdater ? (this.updater as unknown as { nativeUpdater: NodeJS.EventEmitter }).nativeUpdater : undefined;
    // Squirrel.Mac fetches the update only when this is on (MacUpdater), and installs what it has on
    // quit whatever it says; elsewhere only an update of the current settings installs on quit.
    this.updater.autoInstallOnAppQuit = this.squirrel !== undefined;
    this.active = this.updater.isUpdaterActive();
    this.current = !this.active ? { kind: 'unsupported', reason: UPDATE_INACTIVE_REASON } : chosen.feedUrl === '' ? { kind: 'off' } : { kind: 'idle' };
    this.listen();
    this.applySettings();
  }

  start(): void {
    if (!this.active) {
      this.log.info('updates: this copy does not update itself', { reason: UPDATE_INACTIVE_REASON });
      return;
    }
    this.schedule(this.firstCheckDelayMs);
  }

  status(): UpdateStatus {
    return { ...this.current };
  }

  settings(): Result<UpdateSettings> {
    return ok({ ...this.chosen });
  }

  onStatus(listener: (status: UpdateStatus) => void): Unsubscribe {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async setSettings(input: unknown): Promise<Result<UpdateSettings>> {
    const parsed = parseWith(updateSettingsSchema, input);
    if (!parsed.ok) return parsed;
    const feedUrl = parsed.value.feedUrl;
    if (feedUrl !== '' && feedUrl !== this.chosen.feedUrl && !(await this.confirmFeed(feedUrl))) {
      this.log.warn('a new update feed was not confirmed: the settings are unchanged', { feed: feedForLog(feedUrl) });
      return errText('invalid_state', text('updates.feedNotConfirmed', { url: feedUrl }));
    }
    const saved = await this.store.save(parsed.value);
    if (!saved.ok) return saved;
    const changed = settingsKey(saved.value) !== settingsKey(this.chosen);
    this.chosen = saved.value;
    if (changed) {
      this.log.info('update settings changed', { channel: saved.value.channel, feed: feedForLog(saved.value.feedUrl) });
      // The check under way learns of it when its download's token exists (startOperation).
      this.cancelDownload?.();
      // An update from the old feed or channel is not what the agent asks for now.
      this.updater.autoInstallOnAppQuit = this.squirrel !== undefined || this.downloadedUnder === settingsKey(saved.value);
      if (this.active) this.setStatus(saved.value.feedUrl === '' ? { kind: 'off' } : { kind: 'idle' });
      this.applySettings();
    }
    if (this.active && saved.value.feedUrl !== '') void this.check();
    return saved;
  }

  /** The agent's own yes to a new feed, asked outside the window; no way to ask is a no. */
  private async confirmFeed(feedUrl: string): Promise<boolean> {
    const confirm = this.options.confirmFeedChange;
    if (!confirm) return false;
    try {
      return (await confirm(feedUrl)) === true;
    } catch (e) {
      this.log.warn('the new update feed could not be confirmed', { error: e });
      return false;
    }
  }

  /** The operation under way checks settings the agent has since changed: what it finds is not shown. */
  private stale(): boolean {
    return this.operation !== undefined && this.checkedUnder !== settingsKey(this.chosen);
  }

  async check(): Promise<Result<UpdateStatus>> {
    if (!this.active) return errText('not_available', UPDATE_INACTIVE);
    if (this.chosen.feedUrl === '') return errText('not_configured', text('updates.off'));
    // A downloaded update waits for its restart: asking again changes nothing.
    if (this.current.kind === 'ready') return ok(this.status());
    if (this.operation) {
      // One under way for other settings is followed by a check of these.
      if (this.checkedUnder !== settingsKey(this.chosen)) this.recheck = true;
      return ok(this.status());
    }
    await this.startOperation();
    return ok(this.status());
  }

  /** Runs a check and the download it starts; resolves once the check has answered. */
  private startOperation(): Promise<void> {
    this.checkedUnder = settingsKey(this.chosen);
    let answered: () => void = () => undefined;
    const checked = new Promise<void>((resolve) => {
      answered = resolve;
    });
    this.operation = (async () => {
      try {
        const result = await this.updater.checkForUpdates();
        if (result === null) {
          this.setStatus({ kind: 'unsupported', reason: UPDATE_INACTIVE_REASON });
          return;
        }
        if (!result.downloadPromise) return;
        const token = result.cancellationToken;
        this.cancelDownload = token ? () => token.cancel() : undefined;
        // The settings changed while the check ran: its download is for a feed or channel no longer chosen.
        if (this.checkedUnder !== settingsKey(this.chosen)) {
          this.log.info('the update settings changed during the check: its download is cancelled');
          token?.cancel();
        }
        answered();
        // A failed download is reported by the updater's `error` event (status and log).
        await result.downloadPromise.catch(() => undefined);
      } catch {
        // Reported by the `error` event already.
      } finally {
        this.cancelDownload = undefined;
        answered();
      }
    })().finally(() => {
      this.operation = undefined;
      if (this.recheck && !this.closed) {
        this.recheck = false;
        void this.check();
      }
    });
    return checked;
  }

  restart(): Result<null> {
    const current = this.current;
    if (current.kind !== 'ready') {
      return errText(
        'invalid_state',
        current.kind === 'downloading' ? text('updates.stillDownloading', { version: current.version, percent: current.percent }) : text('updates.notReady'),
      );
    }
    if (this.restarting) return ok(null);
    const phase = this.options.host.liveCall();
    if (phase !== undefined) return errText('invalid_state', text('updates.restartDuringCall', { call: term(PHASE_TERMS[phase]) }));
    this.log.info('restarting to install the update', { version: current.version });
    const undo = this.options.beforeRestart?.();
    const failuresBefore = this.failures;
    // An AppImage is replaced in place, and this process starts the new one as it exits: started by
    // the updater at once, it would find this version still holding the single-instance lock while
    // it ends its service, and leave. Elsewhere the installer (Windows), dpkg's relaunch (deb) or
    // Squirrel (macOS) starts the new version once this one is gone.
    const appImage = this.updater instanceof AppImageUpdater ? process.env.APPIMAGE : undefined;
    try {
      this.updater.quitAndInstall(true, appImage === undefined);
    } catch (e) {
      this.fail(e, current.version);
    }
    if (this.failures !== failuresBefore) {
      undo?.();
      return errText('internal', this.current.kind === 'error' && this.current.text ? this.current.text : text('updates.notInstalled'));
    }
    if (appImage !== undefined) this.options.relaunch?.(this.renamedAppImage ?? appImage);
    // The quit is on its way; if it never comes (the installer refused, Squirrel failed), the
    // window must hide to the tray again rather than close and end the softphone.
    const timer = setTimeout(() => {
      this.log.warn('the app did not quit to install the update', { version: current.version });
      this.restartFailed();
    }, this.options.restartGiveUpMs ?? RESTART_GIVE_UP_MS);
    timer.unref?.();
    this.restarting = { undo, timer };
    return ok(null);
  }

  /** The restart did not happen: the window hides to the tray again, and "Restart to update" may be tried again. */
  private restartFailed(): void {
    const restarting = this.restarting;
    if (!restarting) return;
    this.restarting = undefined;
    clearTimeout(restarting.timer);
    restarting.undo?.();
  }

  close(): void {
    this.closed = true;
    // Closing is the quit itself: the window's state no longer matters.
    if (this.restarting) clearTimeout(this.restarting.timer);
    this.restarting = undefined;
    clearTimeout(this.timer);
    for (const off of this.detach.splice(0)) off();
    this.listeners.clear();
  }

  private applySettings(): void {
    const { feedUrl, channel } = this.chosen;
    if (!this.active || feedUrl === '') return;
    this.updater.setFeedURL({ provider: 'generic', url: feedUrl });
    // electron-updater's generic provider reads `<channel>-linux.yml`, `<channel>-mac.yml`, `<channel>.yml`.
    this.updater.channel = channel === 'beta' ? 'beta' : 'latest';
    this.updater.allowPrerelease = channel === 'beta';
    // Setting a channel allows downgrades; an agent who leaves the beta keeps the beta build until
    // the stable channel passes it, rather than install an older version.
    this.updater.allowDowngrade = false;
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    if (this.closed) return;
    this.timer = setTimeout(() => {
      void this.check().finally(() => this.schedule(this.checkEveryMs));
    }, delayMs);
    this.timer.unref?.();
  }

  private listen(): void {
    const on = <A extends unknown[]>(event: string, handler: (...args: A) => void) => {
      const listener = (...args: unknown[]) => {
        if (!this.closed) handler(...(args as A));
      };
      this.updater.on(event as 'error', listener as never);
      this.detach.push(() => this.updater.off(event as 'error', listener as never));
    };
    on('checking-for-update', () => this.setStatus({ kind: 'checking' }));
    on('update-not-available', () => {
      if (!this.stale()) this.setStatus({ kind: 'idle', checkedAt: this.now() });
    });
    on('update-available', (info: UpdateInfo) => {
      if (this.stale()) {
        this.log.info('an update from the previous update settings is not offered', { version: info.version });
        return;
      }
      this.log.info('an update was found', { version: info.version, channel: this.chosen.channel });
      this.setStatus({ kind: 'available', version: info.version });
    });
    on('download-progress', (progress: ProgressInfo) => {
      if (this.stale()) return;
      const version = this.current.kind === 'available' || this.current.kind === 'downloading' ? this.current.version : '';
      if (version === '') return;
      this.setStatus({ kind: 'downloading', version, percent: Math.min(100, Math.max(0, Math.floor(progress.percent))) });
    });
    on('update-downloaded', (event: UpdateDownloadedEvent) => {
      if (this.checkedUnder !== settingsKey(this.chosen)) {
        // Finished just as the settings changed: the new feed or channel decides what installs.
        this.log.info('an update from the previous update settings was downloaded and is left aside', { version: event.version });
        return;
      }
      if (this.squirrel) {
        // Ready once Squirrel.Mac has it (its own update-downloaded, below).
        this.log.info('an update was downloaded and its sha512 checked: handed to Squirrel.Mac', { version: event.version });
        this.handedToSquirrel = { version: event.version, under: this.checkedUnder };
        this.setStatus({ kind: 'downloading', version: event.version, percent: 100 });
        return;
      }
      this.log.info('an update was downloaded and its sha512 checked: it installs on "Restart to update" or on quit', { version: event.version });
      this.downloadedUnder = this.checkedUnder;
      this.updater.autoInstallOnAppQuit = true;
      this.setStatus({ kind: 'ready', version: event.version });
    });
    if (this.squirrel) {
      const squirrel = this.squirrel;
      const fetched = () => {
        const handed = this.handedToSquirrel;
        if (this.closed || !handed) return;
        if (handed.under !== settingsKey(this.chosen)) {
          this.log.info('Squirrel.Mac has an update from the previous update settings; it is not offered', { version: handed.version });
          return;
        }
        this.log.info('Squirrel.Mac has the update: it installs on "Restart to update" or on quit', { version: handed.version });
        this.downloadedUnder = handed.under;
        this.setStatus({ kind: 'ready', version: handed.version });
      };
      squirrel.on('update-downloaded', fetched);
      this.detach.push(() => squirrel.off('update-downloaded', fetched));
    }
    on('appimage-filename-updated', (path: string) => {
      this.renamedAppImage = path;
    });
    on('update-cancelled', () => this.setStatus(this.chosen.feedUrl === '' ? { kind: 'off' } : { kind: 'idle' }));
    on('error', (e: Error) => {
      // An error after "Restart to update" (Squirrel.Mac's, the installer's) means no restart.
      this.restartFailed();
      if (this.stale()) {
        this.log.info('a check of the previous update settings failed', { message: english(describeUpdateError(e)) });
        return;
      }
      const version = this.current.kind === 'available' || this.current.kind === 'downloading' ? this.current.version : undefined;
      this.fail(e, version);
    });
  }

  private fail(e: unknown, version?: string): void {
    this.failures += 1;
    const said = describeUpdateError(e, version);
    const message = english(said);
    this.log.warn('update failed', { message, code: typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined });
    this.setStatus({ kind: 'error', message, text: said, at: this.now() });
  }

  private setStatus(status: UpdateStatus): void {
    this.current = status;
    for (const listener of [...this.listeners]) {
      try {
        listener(this.status());
      } catch (e) {
        this.log.error('an update status listener failed', { error: e });
      }
    }
  }

  /** electron-updater's log lines, under the logger "updates" (they hold URLs and versions, no secrets). */
  private updaterLogger(): UpdaterLogger {
    const line = (message: unknown): string => (message instanceof Error ? message.message : String(message)).split('\n')[0]!.slice(0, 500);
    return {
      info: (message?: unknown) => this.log.info(`updater: ${line(message)}`),
      warn: (message?: unknown) => this.log.warn(`updater: ${line(message)}`),
      error: (message?: unknown) => this.log.warn(`updater: ${line(message)}`),
      debug: (message: string) => this.log.debug(`updater: ${line(message)}`),
    };
  }
}

/** A feed address in a log line: its origin and path (the settings refuse credentials and queries anyway). */
function feedForLog(feedUrl: string): string {
  if (feedUrl === '' || !URL.canParse(feedUrl)) return feedUrl === '' ? '(off)' : '(not a URL)';
  const url = new URL(feedUrl);
  return `${url.origin}${url.pathname}`;
}
