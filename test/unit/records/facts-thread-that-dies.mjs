// The records' writer thread as the relay runs it (relay/records/facts-thread.mjs), which ends
// itself a moment after it is given a write of the instance 'dies-mid-write': the write under way
// is cut off as by a crash. Its listener comes after the thread's own, so that both hear every
// message from the first.
import { parentPort } from 'node:worker_threads';

await import('../../../relay/records/facts-thread.mjs');

parentPort?.on('message', (request) => {
  if (request.op === 'write' && request.instanceId === 'dies-mid-write') setTimeout(() => process.exit(1), 100);
});
