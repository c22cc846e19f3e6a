// Writes facts off the relay's hot path: the relay's hooks only push onto a queue in memory; one
// writer per instance takes them out in batches (records-store.ts). While the database cannot be
// reached — not yet up, restarting, its data directory held by another relay — the facts wait and
// the writer tries again with a growing pause; the outage is logged once as it starts and once as
// it ends.
//
// With a data directory, what waits goes to its journal (records-journal.ts) while the database is
// unreachable or the queue is past its bound, and at a shutdown the database did not let finish; the
// journal is replayed once the database answers, at this start or the next. Without one — or when
// the journal cannot be written either — past the bound whole calls give way, oldest first, never a
// part of one (a call without its ring would pass for an outgoing one), and the log says how many.
import type { Logger } from '../../shared/log';
import type { AgentStateFact } from './agent-states';
import type { CallFact } from './call-facts';
import type { Database } from './database';
import { JournalInUseError, RecordsJournal, type JournalRead } from './records-journal';
import { writeBatch, type FactBatch } from './records-store';

export type QueuedFact = { kind: 'call'; fact: CallFact } | { kind: 'state'; fact: AgentStateFact };

export interface WriterTuning {
  /** Facts per transaction. Default 500. */
  batchSize?: number;
  /** How long a fact may wait for others to share its batch. Default 200 ms. */
  flushIntervalMs?: number;
  /** Facts kept in memory; past it they go to the journal, or without one whole calls are dropped (and logged). Default 200 000. */
  maxQueued?: number;
  /** The first pause after a failure, doubled at each failure up to `retryMaxMs`. Defaults 250 ms and 30 s. */
  retryMinMs?: number;
  retryMaxMs?: number;
}

export interface RecordsWriterOptions extends WriterTuning {
  /** Opens the database and brings its schema up to date; called again after a failure to connect. */
  connect: () => Promise<Database>;
  instanceId: string;
  logger: Logger;
  /** Once connected: the work that needs the database first (the agents to watch, the prune). */
  onConnected?: (db: Database) => void;
  /** The relay's data directory, where the journal is kept; absent: facts wait in memory only. */
  journalDir?: string;
}

/** What the records say of themselves (the relay's /healthz `records`). */
export interface WriterStats {
  /** `connecting` until the database first answers; `down` from a failure until it answers again. */
  database: 'connecting' | 'up' | 'down' | 'closed';
  /** Same as `database === 'up'`. */
  connected: boolean;
  /** Facts waiting in memory. */
  queued: number;
  /** Facts waiting in the journal. */
  journaled: number;
  /** Facts written since the start, from memory or the journal. */
  written: number;
  /** Facts lost since the start: past the bound with no journal to take them, or refused by the database as malformed. */
  dropped: number;
  /** The last thing that went wrong with the database or the journal. */
  lastError?: { message: string; at: string };
}

type Link = { kind: 'connecting' } | { kind: 'up'; db: Database } | { kind: 'closed' };
type JournalLink = { kind: 'none' } | { kind: 'opening'; opened: Promise<void> } | { kind: 'open'; journal: RecordsJournal } | { kind: 'unusable' };
type Written = { ok: true } | { ok: false; error: unknown };

/** How long close() lets a write under way finish, then the journal take what is left. */
const CLOSE_GRACE_MS = 1_000;
const JOURNAL_CLOSE_MS = 2_000;
/** Calls whose facts were dropped, remembered so that their later facts go too. */
const DROPPED_CALLS_KEPT = 100_000;

async function withDeadline(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([work.then(
    () => true,
    () => true,
  ), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
  clearTimeout(timer);
  return done;
}

/**
 * A failure that another attempt would meet again, and that only this data meets: a SQLSTATE of
 * class 22 (data exception: a character the encoding refuses, a number out of range) or 23 (a
 * constraint), or JavaScript's own RangeError or TypeError in turning facts into rows (a time no
 * Date holds), here or in a database's worker thread, or a batch that cannot be handed to that
 * thread (DataCloneError) — never one of the system's, which names its call (`syscall`). Anything
 * else — a connection, a lock, a permission, the schema — is the database's state, and the facts
 * wait for it to change.
 */
function refusesTheData(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, name, syscall } = error as { code?: unknown; name?: unknown; syscall?: unknown };
  if (typeof code === 'string' && /^(22|23)[0-9A-Z]{3}$/.test(code)) return true;
  if (syscall !== undefined) return false;
  return error instanceof RangeError || error instanceof TypeError || name === 'RangeError' || name === 'TypeError' || name === 'DataCloneError';
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export class RecordsWriter {
  private queue: QueuedFact[] = [];
  /** The batch being written: at the queue's head, never spilled nor dropped while it is. */
  private readonly inFlight = new Set<QueuedFact>();
  private link: Link = { kind: 'connecting' };
  private journal: JournalLink = { kind: 'none' };
  /** An append failed: said once, and the queue's bound drops calls, until one succeeds. */
  private journalFailing = false;
  /** A replay could not read the journal: it is left for the next start. */
  private journalUnreadable = false;
  private pumping: Promise<void> | undefined;
  private spilling: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private spillTimer: NodeJS.Timeout | undefined;
  private pause: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  private retryMs: number;
  /** Since when the database has been failing, while it is. */
  private downSince: number | undefined;
  /** Past the bound: the oldest facts go to the journal, or (none) whole calls are dropped. */
  private overBound: 'no' | 'journal' | 'dropping' = 'no';
  private droppedWhileOver = 0;
  private readonly callsDroppedWhileOver = new Set<string>();
  private readonly droppedCalls = new Set<string>();
  /** What the journal's replay has written so far, said once it is done. */
  private replay: { facts: number; calls: Set<string>; states: number; skipped: number[] } | undefined;
  /** Memory and journal take turns while both hold facts. */
  private journalTurn = false;
  private written = 0;
  private dropped = 0;
  private lastError: { message: string; at: string } | undefined;
  private readonly waiting = new Set<() => void>();
  private readonly batchSize: number;
  private readonly flushIntervalMs: number;
  private readonly maxQueued: number;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;

  constructor(private readonly options: RecordsWriterOptions) {
    this.batchSize = options.batchSize ?? 500;
    this.flushIntervalMs = options.flushIntervalMs ?? 200;
    this.maxQueued = options.maxQueued ?? 200_000;
    this.retryMinMs = options.retryMinMs ?? 250;
    this.retryMaxMs = options.retryMaxMs ?? 30_000;
    this.retryMs = this.retryMinMs;
    if (options.journalDir !== undefined) this.journal = { kind: 'opening', opened: this.openJournal(options.journalDir) };
    this.kick();
  }

  push(facts: readonly QueuedFact[]): void {
    if (this.link.kind === 'closed' || facts.length === 0) return;
    for (const item of facts) {
      if (item.kind === 'call' && this.droppedCalls.has(item.fact.callId)) this.dropLate(item.fact);
      else this.queue.push(item);
    }
    if (this.queue.length > this.maxQueued) this.overflow();
    else if (this.downSince !== undefined) this.spillSoon(this.flushIntervalMs);
    if (this.queue.length >= this.batchSize) this.kick();
    else this.timer ??= setTimeout(() => this.kick(), this.flushIntervalMs);
  }

  stats(): WriterStats {
    const database = this.link.kind === 'closed' ? 'closed' : this.downSince !== undefined ? 'down' : this.link.kind === 'up' ? 'up' : 'connecting';
    return {
      database,
      connected: database === 'up',
      queued: this.queue.length,
      journaled: this.journal.kind === 'open' ? this.journal.journal.waiting : 0,
      written: this.written,
      dropped: this.dropped,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  /** The facts of a call that wait in memory (the batch being written included), oldest first. */
  waitingCallFacts(callId: string): CallFact[] {
    return this.queue.flatMap((item) => (item.kind === 'call' && item.fact.callId === callId ? [item.fact] : []));
  }

  /** Resolves true once every fact pushed so far is written, journal included (at once when none waits), false if `timeoutMs` passes first. */
  flush(timeoutMs: number): Promise<boolean> {
    if (this.idle()) return Promise.resolve(true);
    void this.journalReady().then(() => this.kick());
    this.kick();
    this.wake();
    return new Promise<boolean>((resolve) => {
      const done = () => {
        clearTimeout(deadline);
        this.waiting.delete(done);
        resolve(true);
      };
      const deadline = setTimeout(() => {
        this.waiting.delete(done);
        resolve(false);
      }, timeoutMs);
      this.waiting.add(done);
    });
  }

  /**
   * Writes what it can within `timeoutMs`; what it could not goes to the journal, and the log says
   * how many facts and where. Then closes the database, within a few seconds whatever it does: a
   * connection still being made is let go (it closes itself when it comes), a write under way gets
   * a moment to finish.
   */
  async close(timeoutMs: number): Promise<void> {
    if (this.link.kind === 'closed') return;
    const flushed = await this.flush(timeoutMs);
    const { link } = this;
    this.link = { kind: 'closed' };
    clearTimeout(this.timer);
    clearTimeout(this.spillTimer);
    this.wake();
    if (this.pumping !== undefined) await withDeadline(this.pumping, CLOSE_GRACE_MS);
    if (this.spilling !== undefined) await withDeadline(this.spilling, JOURNAL_CLOSE_MS);
    if (!flushed) await this.keepAtShutdown(timeoutMs);
    await this.closeJournal();
    if (link.kind !== 'up') return;
    await link.db.close().catch((error: unknown) => this.options.logger.warn('closing the records database failed', { error }));
  }

  /** Read afresh after each await (close() may have come meanwhile). */
  private get closed(): boolean {
    return this.link.kind === 'closed';
  }

  private idle(): boolean {
    if (this.queue.length > 0 || this.spilling !== undefined || this.journal.kind === 'opening') return false;
    return this.journal.kind !== 'open' || !this.journal.journal.pending;
  }

  private kick(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.closed) return;
    this.pumping ??= this.pump().finally(() => {
      this.pumping = undefined;
      if (this.hasWork() && !this.closed && this.timer === undefined) this.timer = setTimeout(() => this.kick(), this.flushIntervalMs);
    });
  }

  private hasWork(): boolean {
    return this.queue.length > 0 || this.replayable() !== undefined;
  }

  /** The journal, when it holds facts to replay and can be read. */
  private replayable(): RecordsJournal | undefined {
    if (this.journal.kind !== 'open' || this.journalUnreadable || !this.journal.journal.pending) return undefined;
    return this.journal.journal;
  }

  private async pump(): Promise<void> {
    while (this.link.kind !== 'closed') {
      if (this.link.kind === 'connecting') {
        try {
          const db = await this.options.connect();
          if (this.closed) {
            await db.close();
            return;
          }
          this.link = { kind: 'up', db };
          this.recovered();
          this.options.onConnected?.(db);
        } catch (error) {
          await this.failed(error);
          continue;
        }
      }
      const journal = this.replayable();
      if (journal !== undefined && (this.queue.length === 0 || this.journalTurn)) {
        this.journalTurn = false;
        await this.replayBatch(journal);
      } else if (this.queue.length > 0) {
        this.journalTurn = true;
        await this.writeQueued();
        // What came meanwhile waits up to flushIntervalMs for more to share its batch (one transaction
        // of many facts costs the database far less than many of a few), unless a whole batch is
        // there already, someone waits for it, or the journal has facts to replay at full pace.
        if (this.queue.length < this.batchSize && this.waiting.size === 0 && this.downSince === undefined && this.replayable() === undefined) return;
      } else {
        return;
      }
    }
  }

  private async writeQueued(): Promise<void> {
    const batch = this.queue.slice(0, this.batchSize);
    for (const item of batch) this.inFlight.add(item);
    let outcome: Written;
    try {
      outcome = await this.writeOut(batch, (done) => this.taken(done));
    } finally {
      this.inFlight.clear();
    }
    if (!outcome.ok) await this.failed(outcome.error);
  }

  private async replayBatch(journal: RecordsJournal): Promise<void> {
    let read: JournalRead;
    try {
      read = await journal.read(this.batchSize);
    } catch (error) {
      this.journalUnreadable = true;
      this.noteError(error);
      this.options.logger.error('the call records journal cannot be read: its facts wait there for the next start', { journal: journal.path, error });
      this.settleFlushes();
      return;
    }
    const replay = (this.replay ??= { facts: 0, calls: new Set(), states: 0, skipped: [] });
    if (read.facts.length > 0) {
      const outcome = await this.writeOut(read.facts, () => undefined);
      if (!outcome.ok) return this.failed(outcome.error);
    }
    journal.advance(read);
    replay.facts += read.facts.length;
    replay.skipped.push(...read.skipped);
    for (const item of read.facts) {
      if (item.kind === 'call') replay.calls.add(item.fact.callId);
      else replay.states += 1;
    }
    const { logger } = this.options;
    const removed = journal.pending
      ? false
      : await journal.finish().catch((error: unknown) => {
          logger.warn('the call records journal could not be removed: its facts are written, and are written again at the next start', { journal: journal.path, error });
          return false;
        });
    if (!removed) return;
    this.replay = undefined;
    if (replay.skipped.length > 0) {
      logger.warn('lines of the call records journal that hold no whole fact were skipped: a relay stopped while writing them', { journal: journal.path, lines: replay.skipped });
    }
    logger.info('call records replayed from the journal', { journal: journal.path, facts: replay.facts, calls: replay.calls.size, states: replay.states, skippedLines: replay.skipped.length });
    if (this.overBound === 'journal') this.overBound = 'no';
    this.settleFlushes();
  }

  /**
   * Writes `batch`; a batch the database refuses for its data is written a fact at a time, so that
   * one malformed fact costs only itself: that one is dropped and said. `done` is told of each fact
   * written or dropped. Fails, the facts not told waiting, when the database does.
   */
  private async writeOut(batch: readonly QueuedFact[], done: (facts: readonly QueuedFact[]) => void): Promise<Written> {
    try {
      await this.write(batch);
      this.written += batch.length;
      done(batch);
      this.recovered();
      return { ok: true };
    } catch (firstError) {
      if (!refusesTheData(firstError)) return { ok: false, error: firstError };
      this.recovered();
      for (const item of batch) {
        try {
          await this.write([item]);
          this.written += 1;
        } catch (error) {
          if (!refusesTheData(error)) return { ok: false, error };
          this.dropped += 1;
          this.noteError(error);
          const about = item.kind === 'call' ? { callId: item.fact.callId, kind: item.fact.kind } : { agentId: item.fact.agentId, state: item.fact.state };
          this.options.logger.error('the records database refused a fact: it is dropped', { ...about, error, batchError: firstError === error ? undefined : firstError });
        }
        done([item]);
      }
      return { ok: true };
    }
  }

  private async write(batch: readonly QueuedFact[]): Promise<void> {
    if (this.link.kind !== 'up') throw new Error('the records database is not connected');
    const facts: FactBatch = {
      calls: batch.flatMap((q) => (q.kind === 'call' ? [q.fact] : [])),
      states: batch.flatMap((q) => (q.kind === 'state' ? [q.fact] : [])),
    };
    const { db } = this.link;
    const { instanceId } = this.options;
    await (db.writeFacts !== undefined ? db.writeFacts(facts, instanceId) : db.transaction((tx) => writeBatch(tx, facts, instanceId)));
  }

  /** Out of the queue once written or dropped: the batch in flight stays at the queue's head (spills and drops pass it by). */
  private taken(batch: readonly QueuedFact[]): void {
    const gone = new Set(batch);
    let head = 0;
    while (head < this.queue.length && gone.has(this.queue[head]!)) head += 1;
    this.queue.splice(0, head);
    if (head < gone.size) this.queue = this.queue.filter((item) => !gone.has(item));
    this.checkUnderBound();
    this.settleFlushes();
  }

  /** A flush is done once nothing waits, in memory or in the journal. */
  private settleFlushes(): void {
    if (this.idle()) for (const done of [...this.waiting]) done();
  }

  private async failed(error: unknown): Promise<void> {
    const { logger } = this.options;
    this.noteError(error);
    // A write that close() gave up on, failing at last: what it held is already accounted for.
    if (this.closed) return;
    if (this.downSince === undefined) {
      this.downSince = Date.now();
      const journal = this.journal.kind === 'open' ? { journal: this.journal.journal.path } : {};
      logger.warn('the records database cannot be reached: facts wait in memory and are written once it answers', { error, queued: this.queue.length, ...journal });
    } else {
      logger.debug('the records database still cannot be reached', { error, retryMs: this.retryMs });
    }
    // What waits goes to disk now, so that a relay that dies meanwhile loses none of it.
    if (this.queue.length > 0) await this.spill();
    await this.sleep(this.retryMs);
    this.retryMs = Math.min(this.retryMaxMs, this.retryMs * 2);
  }

  private recovered(): void {
    this.retryMs = this.retryMinMs;
    if (this.downSince === undefined) return;
    this.options.logger.info('the records database answers again: the facts that waited are written', { downMs: Date.now() - this.downSince, queued: this.queue.length });
    this.downSince = undefined;
  }

  private noteError(error: unknown): void {
    this.lastError = { message: messageOf(error), at: new Date().toISOString() };
  }

  private async openJournal(dir: string): Promise<void> {
    const { logger } = this.options;
    try {
      const journal = await RecordsJournal.open(dir);
      if (this.closed) {
        await journal.close();
        this.journal = { kind: 'unusable' };
        return;
      }
      this.journal = { kind: 'open', journal };
      if (journal.waiting > 0) logger.info('the call records journal holds facts from an earlier run: they are written once the database answers', { journal: journal.path, facts: journal.waiting });
      // Facts that came meanwhile: to disk at once if the database is away or they are too many.
      if (this.downSince !== undefined || this.queue.length > this.maxQueued) this.spillSoon(0);
      this.kick();
    } catch (error) {
      this.journal = { kind: 'unusable' };
      this.noteError(error);
      if (error instanceof JournalInUseError) logger.warn('the call records journal is kept by another relay: facts that wait are kept in memory only', { journal: error.path, pid: error.pid });
      else logger.error('the call records journal cannot be opened: facts that wait are kept in memory only', { dataDir: dir, error });
      if (this.queue.length > this.maxQueued) this.shed();
    }
    this.settleFlushes();
  }

  /** The open journal, once it has opened; undefined without one. */
  private async journalReady(): Promise<RecordsJournal | undefined> {
    if (this.journal.kind === 'opening') await this.journal.opened;
    return this.journal.kind === 'open' ? this.journal.journal : undefined;
  }

  /** Whether facts past the bound can go to the journal (one opening counts: it takes them once open). */
  private canSpill(): boolean {
    return (this.journal.kind === 'open' || this.journal.kind === 'opening') && !this.journalFailing;
  }

  /** Past the bound: to the journal, or whole calls dropped. */
  private overflow(): void {
    if (!this.canSpill()) return this.shed();
    if (this.overBound !== 'journal') {
      this.overBound = 'journal';
      const journal = this.journal.kind === 'open' ? this.journal.journal.path : this.options.journalDir;
      this.options.logger.warn('call records queue over its bound: the oldest facts go to the journal until the database takes them', { bound: this.maxQueued, journal });
    }
    this.spillSoon(0);
  }

  private spillSoon(delayMs: number): void {
    if (!this.canSpill() || this.closed) return;
    if (this.spillTimer !== undefined && delayMs > 0) return;
    clearTimeout(this.spillTimer);
    this.spillTimer = setTimeout(() => {
      this.spillTimer = undefined;
      void this.spill();
    }, delayMs);
  }

  /** Moves what the queue holds (but the batch in flight) to the journal; one spill at a time. */
  private spill(): Promise<void> {
    this.spilling ??= this.spillNow().finally(() => {
      this.spilling = undefined;
      if (this.downSince !== undefined && this.queue.length > this.inFlight.size) this.spillSoon(this.flushIntervalMs);
      this.settleFlushes();
    });
    return this.spilling;
  }

  private async spillNow(): Promise<void> {
    const journal = await this.journalReady();
    if (this.closed) return;
    if (journal === undefined) {
      if (this.queue.length > this.maxQueued) this.shed();
      return;
    }
    const facts = this.queue.filter((item) => !this.inFlight.has(item));
    if (facts.length === 0) return;
    try {
      await journal.append(facts);
    } catch (error) {
      this.noteError(error);
      if (!this.journalFailing) {
        this.journalFailing = true;
        this.options.logger.error('the call records journal cannot be written: facts that wait are kept in memory only', { journal: journal.path, error });
      }
      if (this.queue.length > this.maxQueued) this.shed();
      return;
    }
    if (this.journalFailing) {
      this.journalFailing = false;
      this.options.logger.info('the call records journal is written again', { journal: journal.path });
    }
    const kept = new Set(facts);
    this.queue = this.queue.filter((item) => !kept.has(item));
    this.checkUnderBound();
    // A database that is up takes them back from the journal.
    if (this.link.kind === 'up' && this.downSince === undefined) this.kick();
  }

  /**
   * Past the bound with nowhere to put them: whole calls go, oldest first (by their first fact
   * waiting), down to a little under the bound so that this runs once per many facts, not once per
   * fact; a call with a fact in flight is passed over. An agent's state facts go one by one, oldest
   * first. Calls dropped are remembered, so that their later facts go too.
   */
  private shed(): void {
    const target = this.maxQueued - Math.floor(this.maxQueued / 20);
    let excess = this.queue.length - target;
    if (excess <= 0) return;
    const factsOf = new Map<string, number>();
    const flying = new Set<string>();
    for (const item of this.queue) {
      if (item.kind !== 'call') continue;
      factsOf.set(item.fact.callId, (factsOf.get(item.fact.callId) ?? 0) + 1);
      if (this.inFlight.has(item)) flying.add(item.fact.callId);
    }
    const calls = new Set<string>();
    const states = new Set<QueuedFact>();
    for (const item of this.queue) {
      if (excess <= 0) break;
      if (this.inFlight.has(item)) continue;
      if (item.kind === 'state') {
        states.add(item);
        excess -= 1;
      } else if (!calls.has(item.fact.callId) && !flying.has(item.fact.callId)) {
        calls.add(item.fact.callId);
        excess -= factsOf.get(item.fact.callId)!;
      }
    }
    const before = this.queue.length;
    this.queue = this.queue.filter((item) => !(item.kind === 'state' ? states.has(item) : calls.has(item.fact.callId)));
    const count = before - this.queue.length;
    this.dropped += count;
    this.droppedWhileOver += count;
    for (const callId of calls) {
      this.callsDroppedWhileOver.add(callId);
      this.remember(callId);
    }
    if (this.overBound !== 'dropping') {
      this.overBound = 'dropping';
      this.options.logger.error('call records queue over its bound: the oldest facts are dropped until the database takes them', { bound: this.maxQueued });
    }
  }

  /** A later fact of a call whose facts were dropped: dropped too, rather than make half a call. */
  private dropLate(fact: CallFact): void {
    this.dropped += 1;
    if (this.overBound === 'dropping') {
      this.droppedWhileOver += 1;
      return;
    }
    this.options.logger.warn('a fact of a call whose earlier facts were dropped is dropped too: the call is not half recorded', { callId: fact.callId, kind: fact.kind });
  }

  private remember(callId: string): void {
    this.droppedCalls.delete(callId);
    this.droppedCalls.add(callId);
    if (this.droppedCalls.size <= DROPPED_CALLS_KEPT) return;
    const oldest = this.droppedCalls.values().next();
    if (oldest.done !== true) this.droppedCalls.delete(oldest.value);
  }

  /** Once the queue is back under its bound, the log says how many facts (and calls) were dropped in all. */
  private checkUnderBound(): void {
    if (this.overBound !== 'dropping' || this.queue.length >= this.maxQueued) return;
    this.overBound = 'no';
    this.options.logger.warn('call records queue back under its bound', { dropped: this.droppedWhileOver, calls: this.callsDroppedWhileOver.size });
    this.droppedWhileOver = 0;
    this.callsDroppedWhileOver.clear();
  }

  /** At a shutdown that could not write everything: what memory holds goes to the journal, and the log says how many facts wait and where. */
  private async keepAtShutdown(timeoutMs: number): Promise<void> {
    const journal = this.journal.kind === 'open' && !this.journalFailing ? this.journal.journal : undefined;
    const inMemory = this.queue.length;
    const inJournal = journal?.waiting ?? 0;
    if (inMemory + inJournal === 0) return;
    let lost = inMemory;
    let journalError: unknown;
    if (journal !== undefined && inMemory > 0) {
      const appending = journal.append(this.queue).then(
        () => {
          lost = 0;
          this.queue = [];
        },
        (error: unknown) => (journalError = error),
      );
      if (!(await withDeadline(appending, JOURNAL_CLOSE_MS))) journalError = new Error(`the journal did not take them within ${JOURNAL_CLOSE_MS} ms`);
    }
    const where = journal !== undefined && lost === 0 ? { journal: journal.path } : { lost, ...(journal !== undefined ? { journal: journal.path, journalError } : {}) };
    this.options.logger.error('call records not written at shutdown: the database did not take them in time', { facts: inMemory + inJournal, timeoutMs, ...where });
    if (lost > 0) this.dropped += lost;
  }

  private async closeJournal(): Promise<void> {
    // One still opening is closed by openJournal() once it sees the writer closed.
    if (this.journal.kind === 'opening') await withDeadline(this.journal.opened, JOURNAL_CLOSE_MS);
    if (this.journal.kind === 'open') await withDeadline(this.journal.journal.close(), JOURNAL_CLOSE_MS);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.pause = undefined;
        resolve();
      }, ms);
      timer.unref();
      this.pause = { timer, resolve };
    });
  }

  /** Ends a pause early (a flush or close wants an attempt now). */
  private wake(): void {
    const { pause } = this;
    if (pause === undefined) return;
    clearTimeout(pause.timer);
    this.pause = undefined;
    pause.resolve();
  }
}
