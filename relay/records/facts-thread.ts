// The records' writer thread (facts-worker.ts): its own PostgreSQL pool, on which each batch is
// written in one transaction (records-store.ts `writeBatch`), off the relay's event loop.
//
// Messages in: { id, op: 'write', batch, instanceId } | { id, op: 'close' }. Out: { id, ok: true }
// or { id, ok: false, error: { message, name, code?, syscall?, constraint?, table?, column? } }.
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { FactsReply, FactsRequest, FactsThreadData } from './facts-worker';
import { PostgresDatabase, WRITER_POOL } from './postgres-database';
import { writeBatch } from './records-store';
import { ERROR_DETAILS } from '../../shared/log';
import type { ThreadError } from './thread-calls';

// The records may wait; the webhooks and event streams may not. On Linux a thread has a priority of
// its own (elsewhere it is the whole process's, left alone): this one gives way to the relay's
// event loop when both want a core. Its batches wait a little longer then, and the writer bounds
// what waits (records-writer.ts).
if (process.platform === 'linux') {
  try {
    setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
  } catch {
    // Not allowed here: the thread runs as the relay does.
  }
}

const { url, answerTimeoutMs } = workerData as FactsThreadData;
const db = PostgresDatabase.open(url, { answerTimeoutMs, pool: WRITER_POOL });

/** What the writer needs of an error to tell refused data from a database that is away. */
function threadErrorOf(error: unknown): ThreadError {
  if (!(error instanceof Error)) return { message: String(error), name: 'Error' };
  // A connection refused at every address of a host name is an AggregateError whose own message is empty.
  const message = error.message !== '' || !(error instanceof AggregateError) ? error.message : error.errors.map((inner: unknown) => (inner instanceof Error ? inner.message : String(inner))).join('; ');
  const threadError: ThreadError = { message, name: error.name };
  for (const key of ERROR_DETAILS) {
    const value = (error as unknown as Record<string, unknown>)[key];
    if (typeof value === 'string') threadError[key] = value;
  }
  return threadError;
}

async function answer(request: FactsRequest): Promise<FactsReply> {
  try {
    if (request.op === 'write') await db.transaction((tx) => writeBatch(tx, request.batch, request.instanceId));
    else await db.close();
    return { id: request.id, ok: true };
  } catch (error) {
    return { id: request.id, ok: false, error: threadErrorOf(error) };
  }
}

parentPort?.on('message', (request: FactsRequest) => {
  void answer(request).then((reply) => parentPort?.postMessage(reply));
});
