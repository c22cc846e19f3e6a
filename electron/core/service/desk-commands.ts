// The agent's desk: the presence the agent chooses and what the relay is told (presence.ts), the
// after-call work after each call (after-call-work.ts), the wrap-ups (wrap-ups.ts), the team's role
// and settings as the relay tells them, the team's callback requests, and the snapshot a window
// starts from.
import type { AgentPresence, AppSnapshot, PresenceChoice, TeamInfo } from '../../../shared/api';
import type { EndedCall } from '../../../shared/calls/types';
import { list, text } from '../../../shared/i18n/text';
import type { Logger } from '../../../shared/log';
import { errText, ok, type Result } from '../../../shared/result';
import { DEFAULT_TEAM_SETTINGS, type TeamSettings } from '../../../shared/team-settings';
import { invalidInput } from '../../../shared/validation';
import { AfterCallWorkClock } from '../after-call-work';
import type { HistoryStore } from '../history-store';
import type { MessagingService } from '../messaging-service';
import type { PreferencesStore } from '../preferences-store';
import { agentPresence, loadPresenceChoice, presenceReport, savePresenceChoice, type SavedPresence } from '../presence';
import type { WrapUps } from '../wrap-ups';
import type { CommandHandlers, Push } from './handlers';
import type { ModeMachine } from './mode';
import type { SettingsView } from './settings-commands';
import type { Updates } from './update-commands';

/**
 * The team as this agent knows it: the defaults until the relay has said (GET /team/settings, its
 * `team` event), and whether its bridge records calls as GET /me says (`record`), once it has.
 */
export class TeamDesk {
  private info: TeamInfo = { role: 'agent', settings: { ...DEFAULT_TEAM_SETTINGS, breakReasons: [...DEFAULT_TEAM_SETTINGS.breakReasons], dispositions: [...DEFAULT_TEAM_SETTINGS.dispositions] } };
  /** GET /me's word on the team's recording, once it has answered: it decides over the settings' own. */
  private recordSaid: { record: TeamInfo['record'] } | undefined;
  private readonly listeners = new Set<(info: TeamInfo) => void>();

  constructor(private readonly push: Push) {}

  current(): TeamInfo {
    return this.info;
  }

  settings(): TeamSettings {
    return this.info.settings;
  }

  /** What the relay said of the role and settings; the windows hear of a change. */
  told(info: TeamInfo): void {
    this.change(info);
  }

  /** What GET /me said of the team's recording (absent: its bridge never records). */
  recordTold(record: TeamInfo['record']): void {
    this.recordSaid = { record };
    this.change(this.info);
  }

  private change(told: TeamInfo): void {
    const { record: _settings, ...rest } = told;
    const record = this.recordSaid !== undefined ? this.recordSaid.record : told.record;
    const info: TeamInfo = record !== undefined ? { ...rest, record } : rest;
    if (JSON.stringify(info) === JSON.stringify(this.info)) return;
    this.info = info;
    this.push({ name: 'teamChanged', payload: info });
    for (const listener of this.listeners) listener(info);
  }

  onChanged(listener: (info: TeamInfo) => void): void {
    this.listeners.add(listener);
  }
}

export interface PresenceDeskOptions {
  dataDir: string;
  mode: ModeMachine;
  prefs: PreferencesStore;
  team: TeamDesk;
  history: HistoryStore;
  push: Push;
  log: Logger;
  now: () => number;
}

/** Ended calls already seen, so that a repeated word of an ended call starts no second after-call work. */
const ENDED_SEEN = 200;

/** The agent's presence choice, and the one writer of what the relay and the windows are told. */
export class PresenceDesk {
  private saved: SavedPresence = { choice: 'available' };
  /** The presence last pushed to the windows. */
  private shown: string | undefined;
  private readonly afterCallWork: AfterCallWorkClock;
  private readonly ended = new Set<string>();

  constructor(private readonly o: PresenceDeskOptions) {
    this.afterCallWork = new AfterCallWorkClock({ now: o.now, onChange: () => this.sync() });
  }

  async load(): Promise<void> {
    this.saved = await loadPresenceChoice(this.o.dataDir, this.o.log);
  }

  current(): AgentPresence {
    return agentPresence(this.saved, this.o.mode.current()?.coordinator, this.o.prefs.get().ringDuringCall, this.afterCallWork.current());
  }

  /** Reports the presence when it changed, to the relay and to the windows. */
  sync(): void {
    const coordinator = this.o.mode.current()?.coordinator;
    if (coordinator !== undefined && coordinator.busyCallCount() > 0) this.afterCallWork.callTaken();
    const presence = this.current();
    this.o.mode.current()?.presence.update(presenceReport(presence));
    const shown = JSON.stringify(presence);
    if (shown === this.shown) return;
    this.shown = shown;
    this.o.push({ name: 'presenceChanged', payload: presence });
  }

  /** A call changed: one that ended after the agent talked on it may begin after-call work. */
  callChanged(call: { phase: string; localId: string }): void {
    if (call.phase !== 'ended' || this.ended.has(call.localId)) return;
    this.ended.add(call.localId);
    if (this.ended.size > ENDED_SEEN) this.ended.delete(this.ended.values().next().value!);
    const ended = call as EndedCall;
    const othersBusy = (this.o.mode.current()?.coordinator.busyCallCount() ?? 0) > 0;
    const entry = this.o.history.entries().find((e) => e.localId === ended.localId);
    this.afterCallWork.callEnded(ended, othersBusy, this.o.team.settings(), (entry?.wrapUp?.disposition ?? null) !== null);
  }

  /** A wrap-up was saved: after-call work that waited for its disposition may end. */
  wrapUpSaved(localId: string, hasDisposition: boolean): void {
    this.afterCallWork.wrapUpSaved(localId, hasDisposition);
  }

  /** "Ready". */
  ready(): Result<AgentPresence> {
    const done = this.afterCallWork.ready();
    if (!done.ok) return done;
    this.sync();
    return ok(this.current());
  }

  async choose(choice: PresenceChoice, reason?: string): Promise<Result<AgentPresence>> {
    const settings = this.o.team.settings();
    let next: SavedPresence;
    if (choice === 'break') {
      if (reason === undefined) return invalidInput([{ field: 'reason', text: text('common.required') }]);
      // The reason in force may stay even if the team has dropped it since.
      const kept = this.saved.choice === 'break' && this.saved.reason === reason;
      if (!kept && !settings.breakReasons.includes(reason)) return invalidInput([{ field: 'reason', text: text('team.breakReason', { values: list(settings.breakReasons) }) }]);
      next = { choice, reason };
    } else {
      if (reason !== undefined) return invalidInput([{ field: 'reason', text: text('team.onlyBreakReason') }]);
      next = { choice };
    }
    if (JSON.stringify(next) !== JSON.stringify(this.saved)) {
      this.saved = next;
      this.o.log.info('presence chosen', { choice, ...(next.choice === 'break' ? { reason: next.reason } : {}) });
      // Kept for the next start; a failed write changes nothing about this run.
      await savePresenceChoice(this.o.dataDir, next).catch((e: unknown) => this.o.log.error('the presence choice could not be saved', { error: e }));
    }
    this.sync();
    return ok(this.current());
  }

  stop(): void {
    this.afterCallWork.stop();
  }
}

export interface DeskCommandsOptions {
  mode: ModeMachine;
  presence: PresenceDesk;
  team: TeamDesk;
  wrapUps: WrapUps;
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
        team: o.team.current(),
      };
      if (sandbox) {
        const [customers, templates] = sandbox;
        snapshot.sandboxCustomers = customers.ok ? customers.value : [];
        snapshot.sandboxTemplates = templates.ok ? templates.value : [];
      }
      return ok(snapshot);
    },
    setPresence: ({ status, reason }) => o.presence.choose(status, reason),
    endAfterCallWork: () => Promise.resolve(o.presence.ready()),
    getWallboard: async () => {
      const runtime = o.mode.current();
      if (runtime === undefined) return errText('not_available', text('team.noRelay'));
      return runtime.relay.wallboard();
    },
    saveWrapUp: ({ localId, disposition, notes }) => Promise.resolve(o.wrapUps.save(localId, disposition, notes)),
    takeCallback: async ({ id }) => {
      const runtime = await o.mode.settled();
      if (runtime === undefined) return errText('not_available', text('team.noRelay'));
      return runtime.relay.takeCallback(id);
    },
  } satisfies Partial<CommandHandlers>;
}
