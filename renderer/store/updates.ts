// Where updates of the installed app stand (the snapshot's `updateStatus`, then the updateStatus
// push), the Settings → "Updates" form, and the "Restart to update" offer. Kept apart from the app
// store, like shortcut-status.ts: app/host-sync.ts writes the status, app/update-actions.ts the
// form, the components read it. Tests call resetUpdateStatusStore().
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import { DEFAULT_UPDATE_SETTINGS, type UpdateSettings, type UpdateStatus } from '../../shared/updates';

export interface UpdateForm {
  /** What the fields show: the saved settings until the agent types. */
  draft: UpdateSettings;
  /** The agent typed since the last load or save: a late load does not overwrite it. */
  edited: boolean;
  busy: boolean;
  saved: boolean;
  error: { field: 'feedUrl' | 'channel' | undefined; text: string } | null;
}

export interface UpdateStatusState {
  /** undefined until the first snapshot says; `unsupported` in the browser host. */
  status: UpdateStatus | undefined;
  form: UpdateForm;
  restartError: string | null;
  setStatus(status: UpdateStatus): void;
  loadSettings(settings: UpdateSettings, force?: boolean): void;
  editDraft(patch: Partial<UpdateSettings>): void;
  setForm(patch: Partial<UpdateForm>): void;
  setRestartError(text: string | null): void;
}

const initialForm = (): UpdateForm => ({ draft: { ...DEFAULT_UPDATE_SETTINGS }, edited: false, busy: false, saved: false, error: null });

export const updateStatusStore = createStore<UpdateStatusState>()((set) => ({
  status: undefined,
  form: initialForm(),
  restartError: null,
  setStatus: (status) => set({ status }),
  loadSettings: (settings, force = false) =>
    set((s) => (s.form.edited && !force ? s : { form: { ...s.form, draft: { ...settings }, edited: false } })),
  editDraft: (patch) => set((s) => ({ form: { ...s.form, draft: { ...s.form.draft, ...patch }, edited: true, saved: false, error: null } })),
  setForm: (patch) => set((s) => ({ form: { ...s.form, ...patch } })),
  setRestartError: (restartError) => set({ restartError }),
}));

export function resetUpdateStatusStore(): void {
  updateStatusStore.setState({ status: undefined, form: initialForm(), restartError: null });
}

export function useUpdateStatusStore<T>(selector: (state: UpdateStatusState) => T): T {
  return useStore(updateStatusStore, selector);
}

/**
 * "Restart to update" is offered once an update is ready and no call is live; the main process
 * refuses it during a call anyway (restartToUpdate → invalid_state), this only keeps the button honest.
 */
export const offersRestart = (status: UpdateStatus | undefined, callLive: boolean): boolean => status?.kind === 'ready' && !callLive;
