// The settings domain: the settings form (save, use the sandbox), the Network section, the
// service's recording and transcription, and the desk preferences.
import type { SoftphoneApi } from '../../shared/api';
import type { Preferences, PreferencesPatch } from '../../shared/preferences';
import type { Result } from '../../shared/result';
import type { StoreApi } from 'zustand/vanilla';
import { parsePreferences, parseSettings } from '../bridge/payload-schemas';
import { errorMessage } from '../error-texts';
import { i18n } from '../i18n/i18n';
import {
  NETWORK_FIELDS,
  draftFromNetwork,
  networkErrorsFrom,
  validateNetworkDraft,
  type NetworkDraft,
  type NetworkErrors,
  type NetworkField,
} from '../store/network-form';
import { CAPTURE_FIELDS, captureErrorsFrom, draftFromCapture, validateCaptureDraft, type CaptureDraft, type CaptureErrors, type CaptureField } from '../store/service-capture-form';
import { SETTINGS_FIELDS, draftFromSettings, settingsErrorsFrom, validateDraft, type SettingsField } from '../store/settings-form';
import type { AppState } from '../store/store';

// Statuses and errors are worded when they happen: the store keeps them as text.
const t = i18n.getFixedT(null, 'settings');

export interface SettingsActionsDeps {
  api: Pick<SoftphoneApi, 'saveSettings' | 'clearSettings' | 'saveNetworkSettings' | 'saveServiceCapture' | 'setPreferences'>;
  store: StoreApi<AppState>;
}

export class SettingsActions {
  private readonly api: SettingsActionsDeps['api'];
  private readonly store: StoreApi<AppState>;

  constructor(deps: SettingsActionsDeps) {
    this.api = deps.api;
    this.store = deps.store;
  }

  private get state(): AppState {
    return this.store.getState();
  }

  // ---- desk preferences ----

  /**
   * Changes some preferences. The store follows the answer (and the push every window gets); a
   * refusal is kept in preferencesError, naming the field and the rule, and returned to the caller.
   */
  async savePreferences(patch: PreferencesPatch): Promise<Result<Preferences>> {
    const result = await this.api.setPreferences({ preferences: patch });
    if (!result.ok) {
      this.state.setPreferencesError(errorMessage(result.error));
      return result;
    }
    const preferences = parsePreferences(result.value);
    if (!preferences.ok) {
      this.state.setPreferencesError(t('screen.unreadablePreferences'));
      return preferences;
    }
    this.state.setPreferences(preferences.value);
    return preferences;
  }

  // ---- settings ----

  editSettings(field: SettingsField, value: string): void {
    this.state.editSettings(field, value);
  }

  /** Returns the first field with an error, for the form to move focus to. */
  async saveSettings(): Promise<SettingsField | null> {
    const form = this.state.settingsForm;
    if (form.busy) return null;
    const checked = validateDraft(form.draft);
    if (!checked.ok) {
      this.state.setSettingsForm({ errors: checked.errors, formError: null, status: null });
      return firstField(checked.errors);
    }
    this.state.setSettingsForm({ busy: true, errors: {}, formError: null, status: null });
    const result = await this.api.saveSettings({ settings: checked.input });
    if (!result.ok) {
      const placed = settingsErrorsFrom(result.error);
      const formError = placed.form === null ? null : result.error.code === 'invalid_input' ? placed.form : errorMessage(result.error);
      this.state.setSettingsForm({ busy: false, errors: placed.fields, formError });
      return firstField(placed.fields);
    }
    this.adoptSettings(result.value, t('screen.saved'));
    return null;
  }

  async useSandbox(): Promise<void> {
    this.state.setSettingsForm({ busy: true, formError: null, status: null });
    const result = await this.api.clearSettings({});
    if (!result.ok) {
      this.state.setSettingsForm({ busy: false, formError: errorMessage(result.error) });
      return;
    }
    this.adoptSettings(result.value, t('screen.sandboxChosen'));
  }

  // ---- network ----

  editNetwork<F extends NetworkField>(field: F, value: NetworkDraft[F]): void {
    this.state.editNetwork(field, value);
  }

  /**
   * Saves the Network section; it applies from the next call (a call under way keeps its path:
   * there is no ICE restart on this leg). Returns the first field with an error, for focus.
   */
  async saveNetwork(): Promise<NetworkField | null> {
    const form = this.state.networkForm;
    if (form.busy) return null;
    const checked = validateNetworkDraft(form.draft, this.state.settings?.network);
    if (!checked.ok) {
      this.state.setNetworkForm({ errors: checked.errors, formError: null, status: null });
      return firstNetworkField(checked.errors);
    }
    const sent = form.draft;
    this.state.setNetworkForm({ busy: true, errors: {}, formError: null, status: null });
    const result = await this.api.saveNetworkSettings({ network: checked.input });
    if (!result.ok) {
      const placed = networkErrorsFrom(result.error, checked.lines);
      const formError = placed.form === null ? null : result.error.code === 'invalid_input' ? placed.form : errorMessage(result.error);
      this.state.setNetworkForm({ busy: false, errors: placed.fields, formError });
      return firstNetworkField(placed.fields);
    }
    const settings = parseSettings(result.value);
    if (!settings.ok) {
      this.state.setNetworkForm({ busy: false, formError: t('screen.unreadableSettings') });
      return null;
    }
    // Saved: the password leaves the form. What was typed while the save was under way stays a draft.
    const current = this.state.networkForm.draft;
    const draft = current === sent ? draftFromNetwork(settings.value.network) : current;
    this.state.setNetworkForm({ busy: false, dirty: current !== sent, errors: {}, formError: null, status: t('network.saved'), draft });
    this.state.setSettings(settings.value);
    return null;
  }

  // ---- the service's recording and transcription ----

  editCapture<F extends CaptureField>(field: F, value: CaptureDraft[F]): void {
    this.state.editCapture(field, value);
  }

  /** Saves "Recording and transcription"; calls answered or placed from now on ask for it. Returns the first field with an error, for focus. */
  async saveCapture(): Promise<CaptureField | null> {
    const form = this.state.captureForm;
    if (form.busy) return null;
    const checked = validateCaptureDraft(form.draft);
    if (!checked.ok) {
      this.state.setCaptureForm({ errors: checked.errors, formError: null, status: null });
      return firstCaptureField(checked.errors);
    }
    const sent = form.draft;
    this.state.setCaptureForm({ busy: true, errors: {}, formError: null, status: null });
    const result = await this.api.saveServiceCapture({ serviceCapture: checked.input });
    if (!result.ok) {
      const placed = captureErrorsFrom(result.error);
      const formError = placed.form === null ? null : result.error.code === 'invalid_input' ? placed.form : errorMessage(result.error);
      this.state.setCaptureForm({ busy: false, errors: placed.fields, formError });
      return firstCaptureField(placed.fields);
    }
    const settings = parseSettings(result.value);
    if (!settings.ok) {
      this.state.setCaptureForm({ busy: false, formError: t('screen.unreadableSettings') });
      return null;
    }
    // Saved as the main process keeps it (the purpose trimmed). What was changed while the save was under way stays a draft.
    const current = this.state.captureForm.draft;
    const draft = current === sent ? draftFromCapture(settings.value.serviceCapture) : current;
    this.state.setCaptureForm({ busy: false, dirty: current !== sent, errors: {}, formError: null, status: t('serviceCapture.saved'), draft });
    this.state.setSettings(settings.value);
    return null;
  }

  private adoptSettings(value: unknown, status: string): void {
    const settings = parseSettings(value);
    if (!settings.ok) {
      this.state.setSettingsForm({ busy: false, formError: t('screen.unreadableSettings') });
      return;
    }
    // Saved: the secrets leave the form (blank means "keep the stored one").
    this.state.setSettingsForm({ busy: false, dirty: false, errors: {}, formError: null, status, draft: draftFromSettings(settings.value) });
    this.state.setSettings(settings.value);
  }
}

function firstField(errors: Partial<Record<SettingsField, string>>): SettingsField | null {
  return SETTINGS_FIELDS.find((f) => errors[f] !== undefined) ?? null;
}

function firstCaptureField(errors: CaptureErrors): CaptureField | null {
  return CAPTURE_FIELDS.find((f) => errors[f] !== undefined) ?? null;
}

function firstNetworkField(errors: NetworkErrors): NetworkField | null {
  return NETWORK_FIELDS.find((f) => errors[f] !== undefined) ?? null;
}
