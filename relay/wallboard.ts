// GET /team/wallboard (shared/wallboard.ts): the team's live picture for any of its agents. The
// agents' states and the callback requests are the relay's own (memory or Redis, the same on every
// instance), read at every ask; the waiting calls, the day's figures and the recent voicemails are
// read from the records, at most once every `cacheMs` per instance however many windows ask, and
// one read at a time.
import type { CallbackRequest } from '../shared/callbacks';
import type { TeamSettings } from '../shared/team-settings';
import type { TeamMember } from '../shared/transfer';
import type { TeamVoicemail } from '../shared/voicemail';
import type { Wallboard } from '../shared/wallboard';
import type { SqlRunner } from './records/database';
import { dayBounds } from './records/records-queries';
import { dayFigures, recentVoicemails, waitingCalls, type DayFigures, type Waiting } from './records/wallboard-queries';

export interface WallboardOptions {
  /** The records' database once open; undefined when the relay keeps no records. */
  database: (() => Promise<SqlRunner>) | undefined;
  settings: () => TeamSettings;
  /** The team's callback requests now, the oldest first (the backend's, read at every ask). */
  callbacks: () => Promise<CallbackRequest[]>;
  now?: () => number;
  /** How long one reading of the records serves. Default 2 s. */
  cacheMs?: number;
}

/** A database that does not answer within this is taken as unavailable for this reading. */
const READ_TIMEOUT_MS = 5_000;

type Reading = { records: 'ok'; waiting: Waiting; today: DayFigures; voicemails: TeamVoicemail[]; dayStartedAt: number } | { records: 'unavailable'; dayStartedAt: number };

export class WallboardSource {
  private cached: { at: number; key: string; reading: Reading } | undefined;
  private reading: Promise<Reading> | undefined;
  private readonly now: () => number;

  constructor(private readonly o: WallboardOptions) {
    this.now = o.now ?? Date.now;
  }

  /** The wallboard with these agents (GET /team's, as the asker sees them). */
  async wallboard(agents: TeamMember[]): Promise<Wallboard> {
    const settings = this.o.settings();
    const at = this.now();
    const { from } = dayBounds(new Date(at), settings.timezone);
    const [callbacks, reading] = await Promise.all([this.o.callbacks(), this.o.database === undefined ? undefined : this.read(settings, at)]);
    const base = { at, timezone: settings.timezone, dayStartedAt: from.getTime(), agents, callbacks };
    if (reading === undefined) return { ...base, records: 'none' };
    if (reading.records === 'unavailable') return { ...base, records: 'unavailable' };
    const { waiting, today, voicemails } = reading;
    return {
      ...base,
      records: 'ok',
      waiting: { calls: waiting.calls, ...(waiting.longestSince !== undefined ? { longestSince: waiting.longestSince } : {}) },
      today: {
        answered: today.answered,
        missed: today.missed,
        abandoned: today.abandoned,
        ...(today.averageHandleMs !== undefined ? { averageHandleMs: Math.round(today.averageHandleMs) } : {}),
        serviceLevel: today.serviceLevel,
      },
      voicemails,
    };
  }

  private async read(settings: TeamSettings, at: number): Promise<Reading> {
    // A change of the team's day (midnight, a new time zone or threshold) is a new reading.
    const key = `${settings.timezone} ${settings.serviceLevelSeconds} ${dayBounds(new Date(at), settings.timezone).from.getTime()}`;
    const cached = this.cached;
    if (cached !== undefined && cached.key === key && at - cached.at < (this.o.cacheMs ?? 2_000)) return cached.reading;
    this.reading ??= this.readNow(settings, at).finally(() => {
      this.reading = undefined;
    });
    const reading = await this.reading;
    this.cached = { at, key, reading };
    return reading;
  }

  private async readNow(settings: TeamSettings, at: number): Promise<Reading> {
    const { from, to } = dayBounds(new Date(at), settings.timezone);
    const open = this.o.database!;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the records did not answer in time')), READ_TIMEOUT_MS);
      timer.unref();
    });
    try {
      return await Promise.race([
        (async (): Promise<Reading> => {
          const db = await open();
          const waiting = await waitingCalls(db, at);
          const today = await dayFigures(db, { from, to, serviceLevelSec: settings.serviceLevelSeconds, now: at });
          const voicemails = await recentVoicemails(db, at);
          return { records: 'ok', waiting, today, voicemails, dayStartedAt: from.getTime() };
        })(),
        timeout,
      ]);
    } catch {
      return { records: 'unavailable', dayStartedAt: from.getTime() };
    } finally {
      clearTimeout(timer);
    }
  }
}
