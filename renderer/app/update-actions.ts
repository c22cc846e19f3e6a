// The updates domain: Settings → "Updates" (the feed's address and the channel, saved by the main
// process), "Check for updates", and "Restart to update", which the main process refuses during a
// call. The status itself arrives with the snapshot and the updateStatus push (host-sync.ts).
import type { SoftphoneApi } from '../../shared/api';
import type { AppError } from '../../shared/result';
import type { UpdateChannel, UpdateSettings } from '../../shared/updates';
import type { StoreApi } from 'zustand/vanilla';
import { errorMessage } from '../error-texts';
import { sayError, sayText } from '../i18n/texts';
import type { UpdateStatusState } from '../store/updates';

export interface UpdateActionsDeps {
  api: Pick<SoftphoneApi, 'getUpdateSettings' | 'setUpdateSettings' | 'checkForUpdates' | 'restartToUpdate'>;
  store: StoreApi<UpdateStatusState>;
}

/** The field a path names ("settings.feedUrl" → feedUrl), so the error shows beside it. */
const fieldNamed = (path: string | undefined): 'feedUrl' | 'channel' | undefined => {
  const field = path?.replace(/^settings\./, '');
  return field === 'feedUrl' || field === 'channel' ? field : undefined;
};
const fieldOf = (error: AppError): 'feedUrl' | 'channel' | undefined => fieldNamed(error.field);

/**
 * A refusal in the agent's language. The main process makes update refusals from the rule catalogue
 * (shared/i18n/rules.ts, group `updates`), an invalid_state one too ("does not restart during a
 * call"), and sends their codes and values; a field's refusal shows beside the field, as its rule
 * alone.
 */
export function updateRefusalText(error: AppError): string {
  if (error.code !== 'invalid_input' && error.code !== 'invalid_state') return errorMessage(error);
  const field = fieldOf(error);
  const issue = field === undefined ? undefined : error.issues?.find((i) => fieldNamed(i.field) === field);
  if (issue !== undefined) return sayText(issue.text);
  return error.message === '' ? errorMessage(error) : sayError(error);
}

export class UpdateActions {
  private readonly api: UpdateActionsDeps['api'];
  private readonly store: StoreApi<UpdateStatusState>;

  constructor(deps: UpdateActionsDeps) {
    this.api = deps.api;
    this.store = deps.store;
  }

  /** The saved settings into the form, unless the agent has typed in it. */
  async load(): Promise<void> {
    const result = await this.api.getUpdateSettings({});
    if (result.ok) this.store.getState().loadSettings(result.value);
  }

  edit(patch: Partial<UpdateSettings>): void {
    this.store.getState().editDraft(patch);
  }

  async save(): Promise<boolean> {
    const { draft } = this.store.getState().form;
    this.store.getState().setForm({ busy: true, error: null, saved: false });
    const result = await this.api.setUpdateSettings({ settings: { feedUrl: draft.feedUrl.trim(), channel: draft.channel as UpdateChannel } });
    if (!result.ok) {
      this.store.getState().setForm({ busy: false, error: { field: fieldOf(result.error), text: updateRefusalText(result.error) } });
      return false;
    }
    this.store.getState().loadSettings(result.value, true);
    this.store.getState().setForm({ busy: false, saved: true });
    return true;
  }

  async check(): Promise<void> {
    this.store.getState().setForm({ error: null });
    const result = await this.api.checkForUpdates({});
    if (result.ok) this.store.getState().setStatus(result.value);
    else this.store.getState().setForm({ error: { field: undefined, text: updateRefusalText(result.error) } });
  }

  async restart(): Promise<void> {
    this.store.getState().setRestartError(null);
    const result = await this.api.restartToUpdate({});
    if (!result.ok) this.store.getState().setRestartError(updateRefusalText(result.error));
  }
}
