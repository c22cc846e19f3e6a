// The agent's presence (relay/REFERENCE.md PUT /presence). The agent chooses "available" or "do not
// disturb" and the choice is kept in `<dataDir>/presence.json`; what the relay is told is "on_call"
// while a call keeps the agent busy, and the choice otherwise. The relay forgets a presence that is
// not refreshed within 60 s, so it is reported on every change, every 20 s, and whenever the event
// stream (re)connects (a restarted relay has forgotten it).
import { join } from 'node:path';
import { z } from 'zod';
import type { AgentPresence, PresenceChoice, PresenceStatus } from '../../shared/api';
import { createLogger, type Logger } from '../../shared/log';
import { readJsonFile, setAsideCorruptFile, writeJsonFileAtomic } from './json-file';
import type { PresenceSink } from './relay-client';

export const PRESENCE_REFRESH_MS = 20_000;
const PRESENCE_FILE = 'presence.json';

const presenceFileSchema = z.object({ version: z.literal(1), choice: z.enum(['available', 'dnd']) });

/** The agent's saved choice; "available" when none was saved or the file is unreadable. */
export async function loadPresenceChoice(dataDir: string, logger?: Logger): Promise<PresenceChoice> {
  const path = join(dataDir, PRESENCE_FILE);
  const read = await readJsonFile(path).catch(() => ({ kind: 'missing' }) as const);
  if (read.kind === 'missing') return 'available';
  const parsed = read.kind === 'json' ? presenceFileSchema.safeParse(read.value) : undefined;
  if (parsed?.success) return parsed.data.choice;
  const keptAs = await setAsideCorruptFile(path).catch(() => undefined);
  (logger ?? createLogger('presence')).warn('presence file unreadable; kept aside, starting available', { keptAs });
  return 'available';
}

export async function savePresenceChoice(dataDir: string, choice: PresenceChoice): Promise<void> {
  await writeJsonFileAtomic(join(dataDir, PRESENCE_FILE), { version: 1, choice });
}

/** What the presence rule needs to know of the agent's calls (the call coordinator answers it). */
export interface BusyCalls {
  busyCallCount(): number;
  canTakeAnother(): boolean;
}

/** The relay is told "on_call" while a call keeps the agent busy, otherwise the agent's choice. */
export function agentPresence(choice: PresenceChoice, calls: BusyCalls | undefined, ringDuringCall: boolean): AgentPresence {
  const busy = calls?.busyCallCount() ?? 0;
  // On one connected call with "Ring me during a call" on, a new call may still ring here (not in
  // Do not disturb): one still being placed or answered cannot go on hold for it yet.
  const waiting = busy === 1 && calls?.canTakeAnother() === true && choice === 'available' && ringDuringCall;
  const status: PresenceStatus = busy === 0 ? choice : waiting ? 'call_waiting' : 'on_call';
  return { choice, status };
}

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
  private status: PresenceStatus | undefined;
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
  update(status: PresenceStatus): void {
    if (this.stopped) return;
    if (this.timer === undefined) this.timer = setInterval(() => this.report(), this.refreshMs);
    if (status === this.status) return;
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
