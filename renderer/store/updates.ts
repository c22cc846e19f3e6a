// Where updates of the installed app stand (the snapshot's `updateStatus`, then the updateStatus
// push), for Settings and the "Restart to update" offer. Kept apart from the app store, like
// shortcut-status.ts: app/host-sync.ts writes it, the components read it. Tests call
// resetUpdateStatusStore().
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { UpdateStatus } from '../../shared/updates';

export interface UpdateStatusState {
  /** undefined until the first snapshot says; `unsupported` in the browser host. */
  status: UpdateStatus | undefined;
  setStatus(status: UpdateStatus): void;
}

export const updateStatusStore = createStore<UpdateStatusState>()((set) => ({
  status: undefined,
  setStatus: (status) => set({ status }),
}));

export function resetUpdateStatusStore(): void {
  updateStatusStore.setState({ status: undefined });
}

export function useUpdateStatusStore<T>(selector: (state: UpdateStatusState) => T): T {
  return useStore(updateStatusStore, selector);
}

/**
 * "Restart to update" is offered once an update is ready and no call is live; the main process
 * refuses it during a call anyway (restartToUpdate → invalid_state), this only keeps the button honest.
 */
export const offersRestart = (status: UpdateStatus | undefined, callLive: boolean): boolean => status?.kind === 'ready' && !callLive;
