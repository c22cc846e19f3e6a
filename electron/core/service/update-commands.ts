// Updates of the installed app: the host's updater (the Electron host's), or none (the browser
// host), when every update command answers not_available.
import { LIVE_PHASES, type CallPhase } from '../../../shared/call-state';
import type { Logger } from '../../../shared/log';
import { text } from '../../../shared/i18n/text';
import { errorText } from '../../../shared/result';
import type { UpdateStatus } from '../../../shared/updates';
import { unsupportedUpdates, type UpdateControl, type UpdateControlFactory } from '../update-control';
import type { CommandHandlers, Push } from './handlers';
import type { ModeMachine } from './mode';

export class Updates {
  private control: UpdateControl = unsupportedUpdates();

  constructor(
    private readonly mode: ModeMachine,
    private readonly log: Logger,
  ) {}

  /** The host's updater, told how to see a live call; one that fails to start leaves updates unsupported, with the reason. */
  async start(factory: UpdateControlFactory | undefined, push: Push): Promise<void> {
    if (factory) {
      try {
        this.control = await factory({ liveCall: () => this.liveCallPhase() });
      } catch (e) {
        this.log.error('the updater could not start', { error: e });
        this.control = unsupportedUpdates(text('service.updatesNotStarted', { reason: errorText(e) }));
      }
    }
    this.control.onStatus((status) => push({ name: 'updateStatus', payload: status }));
  }

  status(): UpdateStatus {
    return this.control.status();
  }

  close(): void {
    this.control.close();
  }

  commands() {
    return {
      getUpdateSettings: () => Promise.resolve(this.control.settings()),
      setUpdateSettings: ({ settings }) => this.control.setSettings(settings),
      checkForUpdates: () => this.control.check(),
      restartToUpdate: () => Promise.resolve(this.control.restart()),
    } satisfies Partial<CommandHandlers>;
  }

  /** A call that restarting would cut: ringing, being placed or answered, or under way. */
  private liveCallPhase(): CallPhase | undefined {
    return this.mode.current()?.coordinator.calls().find((call) => LIVE_PHASES.has(call.phase))?.phase;
  }
}
