// The agent's presence (relay/REFERENCE.md PUT /presence). The agent chooses "available", a break
// with one of the team's reasons, or "do not disturb", and the choice is kept in
// `<dataDir>/presence.json`; what the relay is told is "on_call" while a call keeps the agent busy,
// "after_call_work" after one (after-call-work.ts), and the choice otherwise. The relay forgets a
// presence that is not refreshed within 60 s, so it is reported on every change, every 20 s, and
// whenever the event stream (re)connects (a restarted relay has forgotten it).
import { join } from 'node:path';
import { z } from 'zod';
import type { AfterCallWork, AgentPresence, PresenceChoice, PresenceStatus } from '../../shared/api';
import { createLogger, type Logger } from '../../shared/log';
import { TEAM_SETTINGS_LIMITS } from '../../shared/team-settings';
import { readJsonFile, setAsideCorruptFile, writeJsonFileAtomic } from './json-file';
import type { PresenceReport, PresenceSink } from './relay-client';

export const PRESENCE_REFRESH_MS = 20_000;
const PRESENCE_FILE = 'presence.json';

/** The agent's choice: a break names its reason. */
export type SavedPresence = { choice: 'available' | 'dnd' } | { choice: 'break'; reason: string };

const presenceFileSchema = z.union([
  z.object({ version: z.literal(1), choice: z.enum(['available', 'dnd']) }),
  z.object({ version: z.literal(1), choice: z.literal('break'), reason: z.string().min(1).max(TEAM_SETTINGS_LIMITS.labelCharacters) }),
]);

const AVAILABLE: SavedPresence = { choice: 'available' };

/** The agent's saved choice; "available" when none was saved or the file is unreadable. */
export async function loadPresenceChoice(dataDir: string, logger?: Logger): Promise<SavedPresence> {
  const path = join(dataDir, PRESENCE_FILE);
  const read = await readJsonFile(path).catch(() => ({ kind: 'missing' }) as const);
  if (read.kind === 'missing') return AVAILABLE;
  const parsed = read.kind === 'json' ? presenceFileSchema.safeParse(read.value) : undefined;
  if (parsed?.success) return parsed.data.choice === 'break' ? { choice: 'break', reason: parsed.data.reason } : { choice: parsed.data.choice };
  const keptAs = await setAsideCorruptFile(path).catch(() => undefined);
  (logger ?? createLogger('presence')).warn('presence file unreadable; kept aside, starting available', { keptAs });
  return AVAILABLE;
}

export async function savePresenceChoice(dataDir: string, saved: SavedPresence): Promise<void> {
  await writeJsonFileAtomic(join(dataDir, PRESENCE_FILE), { version: 1, ...saved });
}

/** What the presence rule needs to know of the agent's calls (the call coordinator answers it). */
export interface BusyCalls {
  busyCallCount(): number;
  canTakeAnother(): boolean;
}

/**
 * The relay is told "on_call" while a call keeps the agent busy, "after_call_work" while after-call
 * work follows one, otherwise the agent's choice.
 */
export function agentPresence(saved: SavedPresence, calls: BusyCalls | undefined, ringDuringCall: boolean, afterCallWork?: AfterCallWork): AgentPresence {
  const busy = calls?.busyCallCount() ?? 0;
  const choice: PresenceChoice = saved.choice;
  // On one connected call with "Ring me during a call" on, a new call may still ring here (not in
  // Do not disturb, nor on a break): one still being placed or answered cannot go on hold for it yet.
  const waiting = busy === 1 && calls?.canTakeAnother() === true && choice === 'available' && ringDuringCall;
  const status: PresenceStatus = busy > 0 ? (waiting ? 'call_waiting' : 'on_call') : afterCallWork !== undefined ? 'after_call_work' : choice;
  return {
    choice,
    status,
    ...(saved.choice === 'break' ? { breakReason: saved.reason } : {}),
    ...(busy === 0 && afterCallWork !== undefined ? { afterCallWork } : {}),
  };
}

/** What the relay is told for a presence: a break's reason, the call after-call work follows. */
export function presenceReport(presence: AgentPresence): PresenceReport {
  if (presence.status === 'break' && presence.breakReason !== undefined) return { status: 'break', reason: presence.breakReason };
  if (presence.status === 'after_call_work' && presence.afterCallWork?.callId !== undefined) return { status: 'after_call_work', callId: presence.afterCallWork.callId };
  return { status: presence.status };
}

const sameReport = (a: PresenceReport | undefined, b: PresenceReport): boolean => a !== undefined && a.status === b.status && a.reason === b.reason && a.callId === b.callId;

export interface PresenceReporterOptions {
  relay: PresenceSink;
  refreshMs?: number;
  logger?: Logger;
}

/**
 * Keeps the relay told of one status. Reports go out one at a time; a change while one is under way
 * is sent right after it, and only the latest status is ever sent.
 */
export class PresenceReporter {
  private readonly relay: PresenceSink;
  private readonly refreshMs: number;
  private readonly log: Logger;
  private status: PresenceReport | undefined;
  private sending: Promise<void> | undefined;
  private again = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  /** Whether the last report failed: the next success is worth a line in the log. */
  private failing = false;

  constructor(options: PresenceReporterOptions) {
    this.relay = options.relay;
    this.refreshMs = options.refreshMs ?? PRESENCE_REFRESH_MS;
    this.log = options.logger ?? createLogger('presence');
  }

  /** Sets the status to report; reports at once when it changed, and starts the refresh timer. */
  update(status: PresenceReport): void {
    if (this.stopped) return;
    if (this.timer === undefined) this.timer = setInterval(() => this.report(), this.refreshMs);
    if (sameReport(this.status, status)) return;
    this.status = status;
    this.report();
  }

  /** Reports the current status again now (e.g. the event stream reconnected). */
  report(): void {
    if (this.stopped || this.status === undefined) return;
    if (this.sending) {
      this.again = true;
      return;
    }
    this.sending = this.loop().finally(() => {
      this.sending = undefined;
    });
  }

  /** Resolves when no report is under way. */
  async whenIdle(): Promise<void> {
    while (this.sending) await this.sending;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.whenIdle();
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      const status = this.status;
      if (status === undefined || this.stopped) return;
      const result = await this.relay.setPresence(status).catch((e: unknown) => ({ ok: false as const, error: { code: 'internal', message: String(e) } }));
      if (result.ok) {
        if (this.failing) this.log.info('presence reported again', { status });
        else this.log.debug('presence reported', { status });
        this.failing = false;
      } else {
        // Logged once per outage: the refresh keeps trying every 20 s.
        if (!this.failing) this.log.warn('presence could not be reported', { status, code: result.error.code, reason: result.error.message });
        this.failing = true;
      }
    } while (this.again && !this.stopped);
  }
}
