// Calls to a worker thread that answers each request by its id — the embedded database's PGlite
// (embedded-database.ts) and PostgreSQL's writer thread (facts-worker.ts) — from the thread's
// start to its end. Once the thread is gone (an uncaught error, its exit, a reply that cannot be
// read, or a call it left unanswered past `answerMs`), every call waiting and every later one fails
// with the error `stopped` makes; whoever runs on it starts another.
import type { Worker } from 'node:worker_threads';

/** An error as it crosses the thread's edge: what tells refused data (`code`, `name`) from the database's state (`syscall`, the rest). */
export interface ThreadError {
  message: string;
  name: string;
  code?: string;
  syscall?: string;
  /** A database's refusal: the constraint, table and column it names. */
  constraint?: string;
  table?: string;
  column?: string;
}

export type ThreadReply = { id: number; ok: true; result?: unknown } | { id: number; ok: false; error: ThreadError };

/** Why the thread is gone, for `stopped` to word. */
export type ThreadEnd = { kind: 'error'; error: Error } | { kind: 'exit'; code: number } | { kind: 'unreadable'; error: Error } | { kind: 'unanswered'; ms: number };

export interface ThreadCallsOptions {
  /** The error every call fails with once the thread is gone. */
  stopped: (end: ThreadEnd) => Error;
  /** The error a call fails with when the thread answered with one. */
  failed: (error: ThreadError) => Error;
  /** A call the thread has not answered within this ends the thread. Default: no limit. */
  answerMs?: number;
  /** The thread keeps the process alive only while a call waits on it. Default: always. */
  heldWhileBusyOnly?: boolean;
}

export class ThreadCalls<Request extends object> {
  private readonly pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout | undefined }>();
  private nextId = 1;
  /** Set once the thread is gone; every call fails with it. */
  stopped: Error | undefined;
  readonly startedAt = Date.now();
  /** Told once the thread is gone. */
  onStop: () => void = () => undefined;

  constructor(
    private readonly worker: Worker,
    private readonly options: ThreadCallsOptions,
  ) {
    if (options.heldWhileBusyOnly === true) worker.unref();
    worker.on('message', (reply: ThreadReply) => this.settle(reply));
    // 'error' (an uncaught error, a heap exhausted, a module that did not load) comes before 'exit' and says more.
    worker.on('error', (error) => this.stop({ kind: 'error', error }));
    worker.on('exit', (code) => this.stop({ kind: 'exit', code }));
    // A reply that cannot be read would leave its call waiting for ever.
    worker.on('messageerror', (error) => this.giveUp({ kind: 'unreadable', error }));
  }

  /** Posts at once, before it returns: the thread works on it whatever this event loop does meanwhile. */
  call(request: Request): Promise<unknown> {
    if (this.stopped !== undefined) return Promise.reject(this.stopped);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // Throws (and the promise rejects) on what cannot be cloned, before anything waits for it.
      this.worker.postMessage({ id, ...request });
      if (this.pending.size === 0 && this.options.heldWhileBusyOnly === true) this.worker.ref();
      const { answerMs } = this.options;
      const timer = answerMs === undefined ? undefined : setTimeout(() => this.giveUp({ kind: 'unanswered', ms: answerMs }), answerMs);
      this.pending.set(id, { resolve, reject, timer });
    });
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
  }

  private stop(end: ThreadEnd): void {
    if (this.stopped !== undefined) return;
    const error = (this.stopped = this.options.stopped(end));
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(error);
    }
    this.pending.clear();
    if (this.options.heldWhileBusyOnly === true) this.worker.unref();
    this.onStop();
  }

  /** Fails what waits on the thread and ends it. */
  private giveUp(end: ThreadEnd): void {
    this.stop(end);
    void this.worker.terminate();
  }

  private settle(reply: ThreadReply): void {
    const waiting = this.pending.get(reply.id);
    if (waiting === undefined) return;
    this.pending.delete(reply.id);
    clearTimeout(waiting.timer);
    if (this.pending.size === 0 && this.options.heldWhileBusyOnly === true) this.worker.unref();
    if (reply.ok) waiting.resolve(reply.result);
    else waiting.reject(this.options.failed(reply.error));
  }
}
