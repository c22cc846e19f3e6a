// PostgreSQL's batch writes, in a worker thread of their own (facts-thread.ts): writing a batch is
// mostly JavaScript — the driver parsing every fact of the batch's calls read back, each call's row
// derived again, the JSON of the rows built — which would otherwise take a share of the relay's one
// event loop, and with it of every webhook and event stream. The thread has its own small pool on
// the same server; the relay's own pool keeps the queries (wallboard, reports, migrations, prune).
//
// The thread starts at the first write, and again at the next write after it dies: meanwhile a
// write fails as with a server that is down, never as refused data, so the writer's facts wait and
// are written again (a batch written twice changes nothing).
import { Worker } from 'node:worker_threads';
import type { FactBatch } from './records-store';
import { ThreadCalls, type ThreadEnd, type ThreadError, type ThreadReply } from './thread-calls';

/** What the thread is started with (`workerData`): the pool's server and its statements' limit. */
export interface FactsThreadData {
  url: string;
  answerTimeoutMs: number;
}

type FactsCall = { op: 'write'; batch: FactBatch; instanceId: string } | { op: 'close' };
export type FactsRequest = { id: number } & FactsCall;
export type FactsReply = ThreadReply;

export interface FactsWorkerOptions extends FactsThreadData {
  /** The thread's module: facts-thread.mjs, or one that runs it among other things (a test's). */
  entry?: URL;
  /**
   * A write the thread has not answered within this is given up, and the thread with it (a thread
   * whose event loop hangs): as when it dies. Default: the statements' own limit and 10 s more.
   */
  threadAnswerMs?: number;
}

/**
 * An error the write met in the thread, as it was there: its message, name (RangeError,
 * NoAnswerError…), SQLSTATE `code`, `syscall`, and a refusal's `constraint`, `table`, `column`.
 */
export class FactsWriteError extends Error {
  readonly code: string | undefined;
  readonly syscall: string | undefined;
  readonly constraint: string | undefined;
  readonly table: string | undefined;
  readonly column: string | undefined;

  constructor(error: ThreadError) {
    super(error.message);
    this.name = error.name;
    this.code = error.code;
    this.syscall = error.syscall;
    this.constraint = error.constraint;
    this.table = error.table;
    this.column = error.column;
  }
}

/** The thread is gone (`cause`: its error, or its exit code): the writes it had are lost, and the next write starts another. */
export class FactsThreadStoppedError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'FactsThreadStoppedError';
  }
}

function stoppedError(end: ThreadEnd): FactsThreadStoppedError {
  switch (end.kind) {
    case 'error':
      return new FactsThreadStoppedError(`the records' writer thread stopped: ${end.error.message}`, { cause: end.error });
    case 'exit':
      return new FactsThreadStoppedError(`the records' writer thread stopped (exit ${end.code})`);
    case 'unreadable':
      return new FactsThreadStoppedError(`the records' writer thread sent a reply that cannot be read: ${end.error.message}`, { cause: end.error });
    case 'unanswered':
      return new FactsThreadStoppedError(`the records' writer thread did not answer within ${end.ms} ms`);
  }
}

/** How much longer than its statements' limit the thread gets to answer a write before it is given up. */
const THREAD_ANSWER_MARGIN_MS = 10_000;
/** How long close() lets the thread end its pool (as long as the relay's pool gets) before the thread is ended with what it still holds. */
const CLOSE_GRACE_MS = 2_000;

type FactsThread = ThreadCalls<FactsCall>;

type Life = { kind: 'idle' } | { kind: 'running'; thread: FactsThread } | { kind: 'closed' };

export class FactsWorker {
  private life: Life = { kind: 'idle' };

  constructor(private readonly options: FactsWorkerOptions) {}

  /** Writes the batch in one transaction in the thread, started first if none runs. */
  write(batch: FactBatch, instanceId: string): Promise<void> {
    const life = this.life;
    if (life.kind === 'closed') return Promise.reject(new Error('the records database is closed'));
    let thread = life.kind === 'running' ? life.thread : undefined;
    if (thread === undefined || thread.stopped !== undefined) {
      // Held only while it has a write: an idle thread never keeps the process alive.
      thread = new ThreadCalls<FactsCall>(this.spawn(), {
        stopped: stoppedError,
        failed: (error) => new FactsWriteError(error),
        answerMs: this.options.threadAnswerMs ?? this.options.answerTimeoutMs + THREAD_ANSWER_MARGIN_MS,
        heldWhileBusyOnly: true,
      });
      this.life = { kind: 'running', thread };
    }
    return thread.call({ op: 'write', batch, instanceId }).then(() => undefined);
  }

  /** Within a few seconds: the thread ends its pool, or is ended with it. Once; later writes fail. */
  async close(): Promise<void> {
    const life = this.life;
    this.life = { kind: 'closed' };
    if (life.kind !== 'running') return;
    const { thread } = life;
    if (thread.stopped === undefined) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([thread.call({ op: 'close' }).catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)))]);
      clearTimeout(timer);
    }
    await thread.terminate();
  }

  private spawn(): Worker {
    const { entry, url, answerTimeoutMs } = this.options;
    const workerData: FactsThreadData = { url, answerTimeoutMs };
    return new Worker(entry ?? new URL('./facts-thread.mjs', import.meta.url), { workerData });
  }
}
