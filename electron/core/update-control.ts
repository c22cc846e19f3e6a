// What the service needs of an updater (the Electron host's is electron/desktop/update-service.ts).
// A host that brings none — the browser host, which runs the project's own files — answers every
// update command with `not_available` and the status `unsupported`.
import type { Unsubscribe } from '../../shared/api';
import type { CallPhase } from '../../shared/call-state';
import { english, text, type RuleText } from '../../shared/i18n/text';
import { errText, type Result } from '../../shared/result';
import type { UpdateSettings, UpdateStatus } from '../../shared/updates';

export interface UpdateControl {
  status(): UpdateStatus;
  settings(): Result<UpdateSettings>;
  /** Checks the input (a refusal names `feedUrl` or `channel`), saves it and checks the new feed at once. */
  setSettings(input: unknown): Promise<Result<UpdateSettings>>;
  check(): Promise<Result<UpdateStatus>>;
  /** Installs the ready update and restarts; refused while a call is live. */
  restart(): Result<null>;
  onStatus(listener: (status: UpdateStatus) => void): Unsubscribe;
  /** Stops the timers; an update already downloaded still installs when the app quits. */
  close(): void;
}

/** What the updater asks the service: the phase of a call that is live now (ringing included), if any. */
export interface UpdateHost {
  liveCall(): CallPhase | undefined;
}

/** Builds the host's updater once the service runs (the updater asks it about live calls). */
export type UpdateControlFactory = (host: UpdateHost) => Promise<UpdateControl>;

export const UPDATES_UNSUPPORTED = text('service.updatesUnsupported');
export const UPDATES_UNSUPPORTED_REASON = english(UPDATES_UNSUPPORTED);

export function unsupportedUpdates(reason: RuleText = UPDATES_UNSUPPORTED): UpdateControl {
  const status: UpdateStatus = { kind: 'unsupported', reason: english(reason) };
  const refuse = <T>(): Result<T> => errText('not_available', reason);
  return {
    status: () => status,
    settings: () => refuse(),
    setSettings: () => Promise.resolve(refuse()),
    check: () => Promise.resolve(refuse()),
    restart: () => refuse(),
    onStatus: () => () => undefined,
    close: () => undefined,
  };
}
