// Writes facts off the relay's hot path: the relay's hooks only push onto a queue in memory; one
// writer per instance takes them out in batches (records-store.ts). While the database cannot be
// reached — not yet up, restarting, its data directory held by another relay — the facts wait and
// the writer tries again with a growing pause; the outage is logged once as it starts and once as
// it ends. The queue is bounded: past the bound the oldest facts give way, and the log says so.
import type { Logger } from '../../shared/log';
import type { AgentStateFact } from './agent-states';
import type { CallFact } from './call-facts';
import type { Database } from './database';
import { writeBatch, type FactBatch } from './records-store';

export type QueuedFact = { kind: 'call'; fact: CallFact } | { kind: 'state'; fact: AgentStateFact };

export interface WriterTuning {
  /** Facts per transaction. Default 500. */
  batchSize?: number;
  /** How long a fact may wait for others to share its batch. Default 200 ms. */
  flushIntervalMs?: number;
  /** Facts kept while the database is away; past it the oldest are dropped (and logged). Default 200 000. */
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
}

export interface WriterStats {
  queued: number;
  written: number;
  /** Dropped past the bound, or refused by the database as malformed. */
  dropped: number;
  connected: boolean;
}

type Link = { kind: 'connecting' } | { kind: 'up'; db: Database } | { kind: 'closed' };

/** How long close() lets a write under way finish. */
const CLOSE_GRACE_MS = 1_000;

async function withDeadline(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/**
 * A failure that another attempt would meet again, and that only this data meets: a SQLSTATE of
 * class 22 (data exception: a character the encoding refuses, a number out of range) or 23 (a
 * constraint), or JavaScript's own RangeError or TypeError in turning facts into rows (a time no
 * Date holds), here or in the embedded database's worker — never one of the system's, which names
 * its call (`syscall`). Anything else — a connection, a lock, a permission, the schema — is the
 * database's state, and the facts wait for it to change.
 */
function refusesTheData(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, name, syscall } = error as { code?: unknown; name?: unknown; syscall?: unknown };
  if (typeof code === 'string' && /^(22|23)[0-9A-Z]{3}$/.test(code)) return true;
  return syscall === undefined && (error instanceof RangeError || error instanceof TypeError || name === 'RangeError' || name === 'TypeError');
}

export class RecordsWriter {
  private readonly queue: QueuedFact[] = [];
  private link: Link = { kind: 'connecting' };
  private pumping: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pause: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  private retryMs: number;
  /** Since when the database has been failing, while it is. */
  private downSince: number | undefined;
  private overBound = false;
  private droppedWhileOver = 0;
  private written = 0;
  private dropped = 0;
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
    this.kick();
  }

  push(facts: readonly QueuedFact[]): void {
    if (this.link.kind === 'closed' || facts.length === 0) return;
    this.queue.push(...facts);
    if (this.queue.length > this.maxQueued) this.shed();
    if (this.queue.length >= this.batchSize) this.kick();
    else this.timer ??= setTimeout(() => this.kick(), this.flushIntervalMs);
  }

  stats(): WriterStats {
    return { queued: this.queue.length, written: this.written, dropped: this.dropped, connected: this.link.kind === 'up' && this.downSince === undefined };
  }

  /** Resolves true once every fact pushed so far is written (at once when none waits), false if `timeoutMs` passes first. */
  flush(timeoutMs: number): Promise<boolean> {
    if (this.queue.length === 0) return Promise.resolve(true);
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
   * Writes what it can within `timeoutMs`, says what it could not, and closes the database, within
   * a few seconds whatever it does: a connection still being made is let go (it closes itself when
   * it comes), a write under way gets a moment to finish.
   */
  async close(timeoutMs: number): Promise<void> {
    const flushed = await this.flush(timeoutMs);
    if (!flushed && this.queue.length > 0) {
      this.options.logger.error('call records not written at shutdown: the database did not take them in time', { facts: this.queue.length, timeoutMs });
    }
    const { link } = this;
    this.link = { kind: 'closed' };
    clearTimeout(this.timer);
    this.wake();
    if (link.kind !== 'up') return;
    const pumping = this.pumping;
    if (pumping !== undefined) await withDeadline(pumping, CLOSE_GRACE_MS);
    await link.db.close().catch((error: unknown) => this.options.logger.warn('closing the records database failed', { error }));
  }

  /** Read afresh after each await (close() may have come meanwhile). */
  private get closed(): boolean {
    return this.link.kind === 'closed';
  }

  private kick(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pumping ??= this.pump().finally(() => {
      this.pumping = undefined;
      if (this.queue.length > 0 && !this.closed && this.timer === undefined) this.timer = setTimeout(() => this.kick(), this.flushIntervalMs);
    });
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
      if (this.queue.length === 0) return;
      const batch = this.queue.slice(0, this.batchSize);
      try {
        await this.write(batch);
        this.taken(batch);
        this.recovered();
      } catch (error) {
        if (refusesTheData(error)) {
          this.recovered();
          await this.isolate(batch, error);
        } else {
          await this.failed(error);
        }
      }
    }
  }

  private async write(batch: readonly QueuedFact[]): Promise<void> {
    if (this.link.kind !== 'up') throw new Error('the records database is not connected');
    const facts: FactBatch = {
      calls: batch.flatMap((q) => (q.kind === 'call' ? [q.fact] : [])),
      states: batch.flatMap((q) => (q.kind === 'state' ? [q.fact] : [])),
    };
    await this.link.db.transaction((tx) => writeBatch(tx, facts, this.options.instanceId));
  }

  /** Out of the queue once written (the queue's head may have been shed meanwhile). */
  private taken(batch: readonly QueuedFact[]): void {
    const written = new Set(batch);
    let count = 0;
    while (count < this.queue.length && written.has(this.queue[count]!)) count += 1;
    this.queue.splice(0, count);
    this.written += batch.length;
    this.checkUnderBound();
    this.settleFlushes();
  }

  /** A flush is done once the queue is empty. */
  private settleFlushes(): void {
    if (this.queue.length === 0) for (const done of [...this.waiting]) done();
  }

  /**
   * A batch the database refuses for its data: written a fact at a time, so that one malformed fact
   * costs only itself. That one is dropped and said in the log; a connection lost meanwhile sends
   * the rest back to the queue's retries.
   */
  private async isolate(batch: readonly QueuedFact[], firstError: unknown): Promise<void> {
    for (const item of batch) {
      try {
        await this.write([item]);
        this.taken([item]);
      } catch (error) {
        if (!refusesTheData(error)) return this.failed(error);
        const index = this.queue.indexOf(item);
        if (index >= 0) this.queue.splice(index, 1);
        this.dropped += 1;
        this.settleFlushes();
        const about = item.kind === 'call' ? { callId: item.fact.callId, kind: item.fact.kind } : { agentId: item.fact.agentId, state: item.fact.state };
        this.options.logger.error('the records database refused a fact: it is dropped', { ...about, error, batchError: firstError === error ? undefined : firstError });
      }
    }
  }

  private async failed(error: unknown): Promise<void> {
    const { logger } = this.options;
    // A write that close() gave up on, failing at last: what it held is already accounted for.
    if (this.closed) return;
    if (this.downSince === undefined) {
      this.downSince = Date.now();
      logger.warn('the records database cannot be reached: facts wait in memory and are written once it answers', { error, queued: this.queue.length });
    } else {
      logger.debug('the records database still cannot be reached', { error, retryMs: this.retryMs });
    }
    await this.sleep(this.retryMs);
    this.retryMs = Math.min(this.retryMaxMs, this.retryMs * 2);
  }

  private recovered(): void {
    this.retryMs = this.retryMinMs;
    if (this.downSince === undefined) return;
    this.options.logger.info('the records database answers again: the facts that waited are written', { downMs: Date.now() - this.downSince, queued: this.queue.length });
    this.downSince = undefined;
  }

  private shed(): void {
    const excess = this.queue.length - this.maxQueued;
    this.queue.splice(0, excess);
    this.dropped += excess;
    this.droppedWhileOver += excess;
    if (!this.overBound) {
      this.overBound = true;
      this.options.logger.error('call records queue over its bound: the oldest facts are dropped until the database takes them', { bound: this.maxQueued });
    }
  }

  /** Once the queue is back under its bound, the log says how many facts were lost in all. */
  private checkUnderBound(): void {
    if (!this.overBound || this.queue.length >= this.maxQueued) return;
    this.overBound = false;
    this.options.logger.warn('call records queue back under its bound', { dropped: this.droppedWhileOver });
    this.droppedWhileOver = 0;
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
