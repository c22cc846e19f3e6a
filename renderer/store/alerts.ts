// What the agent must be told so that no ring goes unheard: whether sound is held back by the
// browser, and whether the page may notify. Kept apart from the app store: ring-alerts.ts is its only
// writer, components/RingAlerts.tsx its reader. Tests call resetAlertsStore().
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';

/**
 * 'locked': the browser has not let this page play sound yet (no ring is under way);
 * 'silent_ring': a call rings and the ringtone cannot be heard.
 */
export type SoundAlert = 'ok' | 'locked' | 'silent_ring';

/** 'native': the Electron host notifies from the main process; 'unsupported': no Notification API here. */
export type NotificationAccess = 'native' | 'unsupported' | NotificationPermission;

export interface AlertsState {
  sound: SoundAlert;
  notifications: NotificationAccess;
  setSound(sound: SoundAlert): void;
  setNotifications(access: NotificationAccess): void;
}

const initialState = (): Pick<AlertsState, 'sound' | 'notifications'> => ({ sound: 'ok', notifications: 'unsupported' });

export const alertsStore = createStore<AlertsState>()((set) => ({
  ...initialState(),
  setSound: (sound) => set((s) => (s.sound === sound ? s : { sound })),
  setNotifications: (notifications) => set((s) => (s.notifications === notifications ? s : { notifications })),
}));

export function resetAlertsStore(): void {
  alertsStore.setState(initialState());
}

export function useAlertsStore<T>(selector: (state: AlertsState) => T): T {
  return useStore(alertsStore, selector);
}
