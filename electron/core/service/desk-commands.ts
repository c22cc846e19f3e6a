// The agent's desk: the presence the agent chooses and what the relay is told (presence.ts), and
// the snapshot a window starts from.
import type { AgentPresence, AppSnapshot, PresenceChoice } from '../../../shared/api';
import type { Logger } from '../../../shared/log';
import { ok, type Result } from '../../../shared/result';
import type { HistoryStore } from '../history-store';
import type { MessagingService } from '../messaging-service';
import type { PreferencesStore } from '../preferences-store';
import { agentPresence, loadPresenceChoice, savePresenceChoice } from '../presence';
import type { CommandHandlers, Push } from './handlers';
import type { ModeMachine } from './mode';
import type { SettingsView } from './settings-commands';
import type { Updates } from './update-commands';

export interface PresenceDeskOptions {
  dataDir: string;
  mode: ModeMachine;
  prefs: PreferencesStore;
  push: Push;
  log: Logger;
}

/** The agent's presence choice, and the one writer of what the relay and the windows are told. */
export class PresenceDesk {
  private choice: PresenceChoice = 'available';
  /** The presence last pushed to the windows. */
  private shown: AgentPresence | undefined;

  constructor(private readonly o: PresenceDeskOptions) {}

  async load(): Promise<void> {
    this.choice = await loadPresenceChoice(this.o.dataDir, this.o.log);
  }

  current(): AgentPresence {
    return agentPresence(this.choice, this.o.mode.current()?.coordinator, this.o.prefs.get().ringDuringCall);
  }

  /** Reports the presence when it changed, to the relay and to the windows. */
  sync(): void {
    const presence = this.current();
    this.o.mode.current()?.presence.update(presence.status);
    const shown = this.shown;
    if (shown?.choice === presence.choice && shown.status === presence.status) return;
    this.shown = presence;
    this.o.push({ name: 'presenceChanged', payload: presence });
  }

  async choose(choice: PresenceChoice): Promise<Result<AgentPresence>> {
    if (choice !== this.choice) {
      this.choice = choice;
      this.o.log.info('presence chosen', { choice });
      // Kept for the next start; a failed write changes nothing about this run.
      await savePresenceChoice(this.o.dataDir, choice).catch((e: unknown) => this.o.log.error('the presence choice could not be saved', { error: e }));
    }
    this.sync();
    return ok(this.current());
  }
}

export interface DeskCommandsOptions {
  mode: ModeMachine;
  presence: PresenceDesk;
  settings: SettingsView;
  history: HistoryStore;
  prefs: PreferencesStore;
  messaging: MessagingService;
  updates: Updates;
}

export function deskCommands(o: DeskCommandsOptions) {
  return {
    getSnapshot: async (): Promise<Result<AppSnapshot>> => {
      const runtime = o.mode.current();
      // What must be awaited first; the state itself is read after, in one go, just before the answer
      // leaves. A push sent while this waited then comes before the answer, never after an older
      // state (the window keeps what arrived last: a call held meanwhile stays held there).
      const settings = await o.settings.current();
      const sandbox = runtime?.sandbox ? await Promise.all([runtime.sandbox.customers(), runtime.sandbox.templates()]) : undefined;
      const snapshot: AppSnapshot = {
        mode: runtime?.source === 'sandbox' || !runtime ? 'sandbox' : 'account',
        calls: runtime?.coordinator.calls() ?? [],
        history: o.history.entries(),
        connection: o.mode.connection(),
        settings,
        presence: o.presence.current(),
        preferences: o.prefs.get(),
        conversations: o.messaging.recentConversations(),
        updateStatus: o.updates.status(),
      };
      if (sandbox) {
        const [customers, templates] = sandbox;
        snapshot.sandboxCustomers = customers.ok ? customers.value : [];
        snapshot.sandboxTemplates = templates.ok ? templates.value : [];
      }
      return ok(snapshot);
    },
    setPresence: ({ status }) => o.presence.choose(status),
  } satisfies Partial<CommandHandlers>;
}
