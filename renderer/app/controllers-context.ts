// React's way to the domains: one hook per domain, so that a component names what it acts on.
import { createContext, useContext } from 'react';
import type { CallActions } from './call-actions';
import type { Controllers } from './controllers';
import type { DeskActions } from './desk-actions';
import type { DeviceActions } from './device-actions';
import type { DiagnosticsActions } from './diagnostics-actions';
import type { MessagingActions } from './messaging-actions';
import type { MonitorActions } from './monitor-actions';
import type { RecordingActions } from './recording-actions';
import type { SandboxActions } from './sandbox-actions';
import type { SettingsActions } from './settings-actions';
import type { UpdateActions } from './update-actions';
import type { WallboardActions } from './wallboard-actions';

export const ControllersContext = createContext<Controllers | null>(null);

function useControllers(): Controllers {
  const controllers = useContext(ControllersContext);
  if (!controllers) throw new Error('a domain hook was used outside ControllersContext');
  return controllers;
}

export const useCallActions = (): CallActions => useControllers().calls;
export const useMessaging = (): MessagingActions => useControllers().messaging;
export const useSettingsActions = (): SettingsActions => useControllers().settings;
export const useDeskActions = (): DeskActions => useControllers().desk;
export const useSandboxActions = (): SandboxActions => useControllers().sandbox;
export const useDeviceActions = (): DeviceActions => useControllers().devices;
export const useDiagnostics = (): DiagnosticsActions => useControllers().diagnostics;
export const useUpdateActions = (): UpdateActions => useControllers().updates;
export const useWallboard = (): WallboardActions => useControllers().wallboard;
export const useRecordings = (): RecordingActions => useControllers().recordings;
export const useMonitor = (): MonitorActions => useControllers().monitor;
