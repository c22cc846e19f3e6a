// The composition root of the renderer's domains: each gets only the parts it uses, and the two that
// act on another domain (host sync, sandbox) are handed that domain's function rather than importing it.
import type { SoftphoneApi, Unsubscribe } from '../../shared/api';
import type { StoreApi } from 'zustand/vanilla';
import type { HostLink } from '../bridge/host-link';
import type { AppState } from '../store/store';
import { CallActions, type MediaControls, type RingtonePlayer } from './call-actions';
import { DeskActions } from './desk-actions';
import { DeviceActions, type DeviceActionsDeps } from './device-actions';
import { DiagnosticsActions, type DiagnosticsActionsDeps } from './diagnostics-actions';
import { HostSync } from './host-sync';
import { MessagingActions } from './messaging-actions';
import { SandboxActions } from './sandbox-actions';
import { UpdateActions } from './update-actions';
import { RecordingActions } from './recording-actions';
import { WallboardActions } from './wallboard-actions';
import { MonitorActions, type MonitorControls } from './monitor-actions';
import { wallboardStore } from '../store/wallboard';
import { supervisionStore } from '../store/supervision';
import { updateStatusStore } from '../store/updates';
import { SettingsActions } from './settings-actions';
import { installShortcuts, type KeySource } from './shortcuts';

export interface ControllersDeps {
  api: SoftphoneApi;
  link: HostLink;
  store: StoreApi<AppState>;
  engine: MediaControls;
  /** A supervisor's leg of a call it joined (the media engine's `monitor`); none in a host without media. */
  monitorMedia?: MonitorControls | undefined;
  ringtone?: RingtonePlayer | undefined;
  /** The audio devices, their checks, and where calls and the ringer play; none in a host without media devices. */
  audio?: Pick<DeviceActionsDeps, 'devices' | 'engine' | 'ringer' | 'soundCheck'> | undefined;
  /** Where the keyboard shortcuts are heard: the window by default (none where there is no window). */
  keys?: KeySource | undefined;
  /** Which host this window runs in: some preferences mean something only in one of them. */
  hostKind?: 'electron' | 'browser' | undefined;
  /** The speaker calls play on ('' = the system default): voicemails and recordings play there too. */
  speaker?: (() => string) | undefined;
  /** "Test my setup" and "Export diagnostics": the browser parts (the audio devices come from `audio`). */
  diagnostics?: Pick<DiagnosticsActionsDeps, 'iceConfig' | 'measureMicrophone' | 'gather' | 'saveFile' | 'windowInfo'> | undefined;
}

/** What the components may call, one entry per domain. */
export interface Controllers {
  calls: CallActions;
  messaging: MessagingActions;
  settings: SettingsActions;
  /** Presence, after-call work and wrap-ups. */
  desk: DeskActions;
  sandbox: SandboxActions;
  devices: DeviceActions;
  diagnostics: DiagnosticsActions;
  updates: UpdateActions;
  /** The Team view's wallboard, read while the view is open; its callback requests taken and dialled. */
  wallboard: WallboardActions;
  /** "Play voicemail", "Play recording", "Transcript": a call's recordings, from the main process; "Record" and "Stop recording". */
  recordings: RecordingActions;
  /** Supervisors: the team's live calls, read while the Team view is open; "Listen", "Whisper", "Barge", "Leave". */
  monitor: MonitorActions;
  /** Not a domain: the host this window runs in (the settings show what only it can do). */
  hostKind: 'electron' | 'browser';
}

export interface Softphone {
  controllers: Controllers;
  /** Subscribes to the host, rings and polls levels; the returned function undoes it all and releases the media. */
  start(): Unsubscribe;
}

export function createControllers(deps: ControllersDeps): Softphone {
  const { api, link, store, engine, ringtone } = deps;
  const calls = new CallActions({ api, store, engine, ringtone });
  const messaging = new MessagingActions({ api, store });
  const selectContact = (contact: string): void => messaging.selectContact(contact);
  const settings = new SettingsActions({ api, store });
  const desk = new DeskActions({ api, store });
  const sandbox = new SandboxActions({ api, store, selectContact });
  const sync = new HostSync({ api, link, store, calls, selectContact, setUpdateStatus: (status) => updateStatusStore.getState().setStatus(status) });
  const updates = new UpdateActions({ api, store: updateStatusStore });
  // "Call back" dials as the recent calls' does: the contact panel follows the customer.
  const dialCustomer = (number: string): Promise<void> => {
    selectContact(number);
    return calls.dialRequested({ number, dial: true });
  };
  const wallboard = new WallboardActions({ api, store: wallboardStore, dial: dialCustomer });
  const ownName = (): string | undefined => wallboardStore.getState().board?.agents.find((agent) => agent.self === true)?.name;
  const recordings = new RecordingActions({ api, speaker: deps.speaker, ownName });
  const monitor = new MonitorActions({ api, store: supervisionStore, media: deps.monitorMedia });
  const devices = new DeviceActions({ ...deps.audio, store, savePreferences: (patch) => settings.savePreferences(patch) });
  const hostKind = deps.hostKind ?? 'browser';
  const { devices: audioDevices, soundCheck, ringer } = deps.audio ?? {};
  const diagnostics = new DiagnosticsActions({ ...deps.diagnostics, api, hostKind, devices: audioDevices, soundCheck, ringer });
  return {
    controllers: { calls, messaging, settings, desk, sandbox, devices, diagnostics, updates, wallboard, recordings, monitor, hostKind },
    start() {
      const stopSync = sync.start();
      const stopCalls = calls.start();
      const stopDesk = desk.start();
      const stopDevices = devices.start();
      const stopMonitor = monitor.start();
      const stopShortcuts = installShortcuts({ api, store, calls, keys: deps.keys ?? (typeof window === 'undefined' ? undefined : window) });
      return () => {
        stopSync();
        stopCalls();
        stopDesk();
        stopDevices();
        stopMonitor();
        stopShortcuts();
      };
    },
  };
}
