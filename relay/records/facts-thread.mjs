// The entry of the records' writer thread (facts-worker.ts): the thread runs facts-thread.ts, the
// relay's own TypeScript, which a worker thread loads only with a loader. The relay runs under tsx,
// whose loader a thread inherits; a thread started elsewhere (vitest) has none, so tsx's is
// registered here — once more under tsx, which only chains a second loader for the same files.
// Messages that come meanwhile wait on the port until facts-thread.ts listens.
import { register } from 'tsx/esm/api';

register();
await import('./facts-thread.ts');
