// The team's call records (relay/records/README.md): the relay tells `CallRecords` each fact it
// handles (RelayRecords), which turns it into call facts and agent state facts and queues them for
// the writer; the database is opened and migrated in the background, the records pruned daily.
import { hostname } from 'node:os';
import type { Logger } from '../../shared/log';
import { samePresence, type Presence, type ReportedPresence } from '../backend/types';
import { OFFLINE, PRESENCE_EXPIRED, type AgentStateFact } from './agent-states';
import { claimedFact, declinedFact, factsOfEvent, holdFact } from './call-facts';
import { openDatabase, type Database, type DatabaseConfig } from './database';
import { migrate } from './migrations';
import { agentsNotOffline, prune } from './records-store';
import { RecordsWriter, type QueuedFact, type WriterStats, type WriterTuning } from './records-writer';
import type { RecordsStatus, RelayRecords, SeenEvent, WrapUp, WrapUpOutcome } from './relay-records';
import { storableText, writeWrapUp } from './wrap-ups';

const DAY_MS = 24 * 60 * 60_000;
/** How long close() lets a prune under way finish before it closes the database under it. */
const PRUNE_CLOSE_MS = 1_000;
/** How long a wrap-up waits for the database; then its agent is told to try again (503), as it is while the database is down. */
const WRAP_UP_ANSWER_MS = 10_000;
/** How long a wrap-up lets facts that wait in the journal (the call's among them, maybe) reach the database first. */
const WRAP_UP_JOURNAL_WAIT_MS = 5_000;
const UNAVAILABLE: WrapUpOutcome = { kind: 'unavailable' };

export interface CallRecordsOptions {
  /** Where the records are; or a function that opens the database (tests). */
  database: DatabaseConfig | (() => Promise<Database>);
  /** The relay's data directory: facts that wait for the database are journaled there (records-journal.ts). Absent: they wait in memory only. */
  dataDir?: string;
  /** Records older than this many days are pruned once a day; absent: kept forever. */
  retentionDays?: number;
  logger: Logger;
  /** Names this instance in the facts it writes. Default: host name and pid. */
  instanceId?: string;
  /** How often lapsed presences are looked for. Default 5 s. */
  presenceSweepMs?: number;
  writer?: WriterTuning;
  now?: () => number;
}

export class CallRecords implements RelayRecords {
  private readonly writer: RecordsWriter;
  private readonly now: () => number;
  private readonly log: Logger;
  /** Agents whose state is not offline, and when this instance last heard from or of them. */
  private readonly watched = new Map<string, number>();
  private presence: { of: (agentId: string) => Presence | undefined; ttlMs: number; sweep: NodeJS.Timeout } | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private pruning: Promise<unknown> | undefined;
  private readonly ready: Promise<Database>;
  /** The database once it is open and migrated. */
  private db: Database | undefined;
  private readonly instanceId: string;
  private closed = false;

  /** Starts at once; the database is opened and migrated in the background while facts queue. */
  constructor(private readonly options: CallRecordsOptions) {
    this.now = options.now ?? Date.now;
    this.log = options.logger;
    const { database } = options;
    const open = typeof database === 'function' ? database : () => openDatabase(database, { logger: this.log });
    let connected: (db: Database) => void = () => undefined;
    this.ready = new Promise<Database>((resolve) => (connected = resolve));
    this.instanceId = options.instanceId ?? `${hostname()}:${process.pid}`;
    this.writer = new RecordsWriter({
      ...options.writer,
      instanceId: this.instanceId,
      logger: this.log,
      ...(options.dataDir !== undefined ? { journalDir: options.dataDir } : {}),
      connect: async () => {
        const db = await open();
        try {
          const report = await migrate(db);
          // Ready means a batch can be written: a database that writes them apart (PostgreSQL's
          // writer thread) starts that now, its connection made, rather than at the first batch.
          await db.writeFacts?.({ calls: [], states: [] }, this.instanceId);
          this.log.info('call records ready', { database: db.kind, where: db.where, migrationsApplied: report.applied });
          if (report.unknown.length > 0) this.log.warn('the records database has migrations this relay does not know: a newer relay ran on it', { versions: report.unknown });
          return db;
        } catch (error) {
          await db.close().catch(() => undefined);
          throw error;
        }
      },
      onConnected: (db) => {
        this.db = db;
        void this.afterConnect(db).finally(() => connected(db));
      },
    });
  }

  eventSeen(seen: SeenEvent): void {
    this.guarded('an event', () => this.push(factsOfEvent(seen.event, seen).map((fact) => ({ kind: 'call', fact }))));
  }

  claimed(callId: string, agentId: string): void {
    this.guarded('a claim', () => this.push([{ kind: 'call', fact: claimedFact(callId, agentId, this.now()) }]));
  }

  declined(callId: string, agentId: string, verdict: { othersRinging: number; answeredBy?: string }): void {
    this.guarded('a decline', () => this.push([{ kind: 'call', fact: declinedFact(callId, agentId, this.now(), verdict) }]));
  }

  held(callId: string, agentId: string, held: boolean): void {
    this.guarded('a hold', () => this.push([{ kind: 'call', fact: holdFact(callId, agentId, this.now(), held) }]));
  }

  presenceReported(agentId: string, reported: ReportedPresence, before: ReportedPresence | undefined): void {
    this.guarded('a presence report', () => {
      const at = this.now();
      this.watched.set(agentId, at);
      if (!samePresence(reported, before)) this.pushState({ agentId, state: reported.presence, reason: reported.reason ?? '', at });
    });
  }

  followPresence(presenceOf: (agentId: string) => Presence | undefined, presenceTtlMs: number): void {
    if (this.presence !== undefined || this.closed) return;
    const sweep = setInterval(() => this.sweepLapsed(), this.options.presenceSweepMs ?? 5_000);
    sweep.unref();
    this.presence = { of: presenceOf, ttlMs: presenceTtlMs, sweep };
  }

  /**
   * Writes the wrap-up straight to the database, with the call's facts that still wait in this
   * instance's queue (a wrap-up right after the hang-up), once what waits in the journal is in:
   * `saved` means it is stored. `unavailable` at once while the writer finds the database down or
   * not yet there, and after WRAP_UP_ANSWER_MS without its answer.
   */
  async saveWrapUp(wrapUp: WrapUp): Promise<WrapUpOutcome> {
    const { db } = this;
    if (this.closed || db === undefined || this.writer.stats().database !== 'up') return UNAVAILABLE;
    // PostgreSQL's text holds no NUL: no call's id has one.
    if (storableText(wrapUp.callId) !== wrapUp.callId) return { kind: 'not_found' };
    try {
      if (this.writer.stats().journaled > 0 && !(await this.writer.flush(WRAP_UP_JOURNAL_WAIT_MS))) return UNAVAILABLE;
      const write = { at: this.now(), waiting: this.writer.waitingCallFacts(wrapUp.callId), instanceId: this.instanceId };
      const saving = db.transaction((tx) => writeWrapUp(tx, wrapUp, write));
      const outcome = await answeredWithin(saving, WRAP_UP_ANSWER_MS);
      if (outcome === undefined) this.log.warn('the records database did not answer a wrap-up in time: its agent tries again', { callId: wrapUp.callId, timeoutMs: WRAP_UP_ANSWER_MS });
      return outcome ?? UNAVAILABLE;
    } catch (error) {
      this.log.warn('the records database did not take a wrap-up: its agent tries again', { callId: wrapUp.callId, error });
      return UNAVAILABLE;
    }
  }

  /** The database once it is open and migrated, and the agents a previous run left in a state are watched (the queries take it). */
  database(): Promise<Database> {
    return this.ready;
  }

  stats(): WriterStats {
    return this.writer.stats();
  }

  status(): RecordsStatus {
    const { database, queued, journaled, written, dropped, lastError } = this.writer.stats();
    return { database, queued, journaled, written, dropped, ...(lastError !== undefined ? { lastError } : {}) };
  }

  /** Resolves true once every fact handed in so far is written; false after `timeoutMs`. */
  flush(timeoutMs = 10_000): Promise<boolean> {
    return this.writer.flush(timeoutMs);
  }

  /**
   * Writes what is queued (within `timeoutMs`), journals what it could not, and closes the database:
   * a few seconds more at most, whatever the database does.
   */
  async close(timeoutMs = 5_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.presence !== undefined) clearInterval(this.presence.sweep);
    clearInterval(this.pruneTimer);
    if (this.pruning !== undefined) await Promise.race([this.pruning.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, PRUNE_CLOSE_MS).unref())]);
    await this.writer.close(timeoutMs);
  }

  /** The relay calls in on its own work (a webhook's, a claim's): whatever goes wrong here stays here. */
  private guarded(what: string, record: () => void): void {
    try {
      record();
    } catch (error) {
      this.log.error(`could not record ${what}`, { error });
    }
  }

  private push(facts: QueuedFact[]): void {
    if (!this.closed) this.writer.push(facts);
  }

  private pushState(fact: AgentStateFact): void {
    this.push([{ kind: 'state', fact }]);
  }

  /**
   * An agent the team's presence no longer has, and that this instance has not heard from for a
   * presence's lifetime, went offline now (within one sweep).
   */
  private sweepLapsed(): void {
    const { presence } = this;
    if (presence === undefined) return;
    const now = this.now();
    for (const [agentId, seenAt] of [...this.watched]) {
      if (presence.of(agentId) !== undefined || now - seenAt < presence.ttlMs) continue;
      this.watched.delete(agentId);
      this.pushState({ agentId, state: OFFLINE, reason: PRESENCE_EXPIRED, at: now });
    }
  }

  private async afterConnect(db: Database): Promise<void> {
    this.schedulePrune(db);
    // Agents a previous run left in a state other than offline: offline too if they do not report.
    try {
      const agents = await agentsNotOffline(db, OFFLINE);
      const now = this.now();
      for (const agentId of agents) if (!this.watched.has(agentId)) this.watched.set(agentId, now);
    } catch (error) {
      this.log.warn("could not read the agents' last states", { error });
    }
  }

  private schedulePrune(db: Database): void {
    const { retentionDays } = this.options;
    if (retentionDays === undefined || this.closed) return;
    const pruneNow = () => {
      const before = new Date(this.now() - retentionDays * DAY_MS);
      this.pruning = prune(db, before).then(
        (report) => this.log.info('call records pruned', { before: before.toISOString(), ...report }),
        (error: unknown) => this.log.warn('pruning the call records failed; trying again tomorrow', { error }),
      );
    };
    pruneNow();
    this.pruneTimer = setInterval(pruneNow, DAY_MS);
    this.pruneTimer.unref();
  }
}

/** What `work` resolves to, or undefined once `ms` pass first (it may still finish: nobody waits for it). */
async function answeredWithin<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  work.catch(() => undefined);
  try {
    return await Promise.race([work, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
