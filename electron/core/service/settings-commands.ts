// Settings and mode: the account (saving one switches to it live, clearing it goes back to the
// command line's account or the sandbox), Settings → Network and the ICE configuration built from
// it, the service's own recording and transcription of calls, and the desk preferences.
import type { IceConfig } from '../../../shared/ice-servers';
import { text } from '../../../shared/i18n/text';
import { errText, ok, type Result } from '../../../shared/result';
import type { AccountConfig, PublicSettings } from '../../../shared/settings';
import { mergeIceConfig, type NetworkSettingsStore } from '../network-settings';
import type { PreferencesStore } from '../preferences-store';
import type { ServiceCaptureStore } from '../service-capture-store';
import { publicSettingsFor, type SettingsStore } from '../settings-store';
import type { CommandHandlers, Push } from './handlers';
import type { ModeMachine } from './mode';

/** The settings as the windows see them: the running mode's account without secrets, the Network section, and the service's recording and transcription. */
export class SettingsView {
  constructor(
    private readonly settings: SettingsStore,
    private readonly network: NetworkSettingsStore,
    private readonly capture: ServiceCaptureStore,
    private readonly mode: ModeMachine,
  ) {}

  async current(): Promise<PublicSettings> {
    const runtime = this.mode.current();
    const network = await this.network.publicSettings(runtime?.turn.state ?? 'unknown');
    const serviceCapture = this.capture.current();
    if (runtime?.source === 'flags') {
      const { apiKey, agentToken, ...stored } = runtime.account;
      return { ...publicSettingsFor('account', stored, { hasApiKey: apiKey !== '', hasAgentToken: agentToken !== '', kind: this.settings.secretStorage }), network, serviceCapture };
    }
    const saved = await this.settings.publicSettings();
    return { ...saved, mode: runtime?.source === 'saved' ? 'account' : 'sandbox', network, serviceCapture };
  }
}

export interface SettingsCommandsOptions {
  settings: SettingsStore;
  network: NetworkSettingsStore;
  capture: ServiceCaptureStore;
  prefs: PreferencesStore;
  view: SettingsView;
  mode: ModeMachine;
  /** The command line's account, which a cleared saved account gives way to. */
  flagsAccount: AccountConfig | undefined;
  push: Push;
}

export function settingsCommands(o: SettingsCommandsOptions) {
  const changed = async (): Promise<Result<PublicSettings>> => {
    const settings = await o.view.current();
    o.push({ name: 'settingsChanged', payload: settings });
    return ok(settings);
  };
  return {
    saveSettings: async ({ settings }) => {
      const saved = await o.settings.save(settings);
      if (!saved.ok) return saved;
      const account = await o.settings.load();
      if (!account) return errText('internal', text('service.settingsNotReadBack'));
      await o.mode.switchTo({ kind: 'saved', account });
      return changed();
    },
    /** Forgets the saved account: back to the command-line account if there is one, else the sandbox. */
    clearSettings: async () => {
      await o.settings.clear();
      await o.mode.switchTo(o.flagsAccount ? { kind: 'flags', account: o.flagsAccount } : { kind: 'sandbox' });
      return changed();
    },
    /** Settings → Network: the next call uses it (a call under way keeps the path it has: no ICE restart here). */
    saveNetworkSettings: async ({ network }) => {
      const saved = await o.network.save(network);
      if (!saved.ok) return saved;
      return changed();
    },
    /** The service's recording and transcription: the next accept or initiate carries them (a call under way keeps what it asked for). */
    saveServiceCapture: async ({ serviceCapture }) => {
      const saved = await o.capture.save(serviceCapture);
      if (!saved.ok) return saved;
      return changed();
    },
    getIceConfig: async (): Promise<Result<IceConfig>> => {
      const [own, relay] = await Promise.all([o.network.own(), o.mode.current()?.turn.current()]);
      return ok(mergeIceConfig(own, relay));
    },
    setPreferences: ({ preferences }) => o.prefs.update(preferences),
  } satisfies Partial<CommandHandlers>;
}
