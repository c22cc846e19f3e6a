// The embedded records' PGlite, in a worker thread of its own (embedded-database.ts): PGlite runs
// PostgreSQL as WASM, whose work — seconds for the first start's initdb, a report over a month of
// calls — would otherwise hold the relay's event loop, and with it every webhook and event stream.
// Plain JavaScript, so that the thread starts under any runner without a TypeScript loader.
//
// Messages in: { id, op: 'open', dataDir?, dump? } | { id, op: 'query', sql, params } |
// { id, op: 'script', sql } | { id, op: 'close' }. Out: { id, ok: true, result } or
// { id, ok: false, error: { message, code?, name } }. One connection: the caller keeps a
// transaction's statements together.
import { access, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parentPort } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

/** @type {PGlite | undefined} */
let db;

/**
 * The database in `dataDir`; the first start makes it beside its place (`<dataDir>.init`) and moves
 * it in once complete, so that a relay stopped meanwhile leaves no half-made database behind. The
 * data directory is held (its socket) by the caller. Without `dataDir`: in memory, from `dump`
 * (a dumpDataDir tarball) when given.
 * @param {string | undefined} dataDir
 * @param {ArrayBuffer | undefined} dump
 */
async function open(dataDir, dump) {
  if (dataDir === undefined) {
    db = await PGlite.create(dump === undefined ? {} : { loadDataDir: new Blob([dump]) });
    return;
  }
  if (!(await exists(join(dataDir, 'PG_VERSION')))) {
    const staging = `${dataDir}.init`;
    await rm(staging, { recursive: true, force: true });
    const fresh = await PGlite.create(staging);
    await fresh.close();
    await rm(dataDir, { recursive: true, force: true });
    await rename(staging, dataDir);
  }
  db = await PGlite.create(dataDir);
}

/** @param {string} path */
async function exists(path) {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

function opened() {
  if (db === undefined) throw new Error('the embedded records database is not open');
  return db;
}

parentPort?.on('message', async (message) => {
  const { id, op } = message;
  try {
    let result;
    if (op === 'open') await open(message.dataDir, message.dump);
    else if (op === 'query') result = (await opened().query(message.sql, message.params)).rows;
    else if (op === 'script') await opened().exec(message.sql);
    else if (op === 'close') await db?.close();
    else throw new Error(`unknown operation ${String(op)}`);
    parentPort?.postMessage({ id, ok: true, result });
  } catch (error) {
    const { message: text, code, name } = /** @type {{ message?: unknown, code?: unknown, name?: unknown }} */ (error ?? {});
    parentPort?.postMessage({
      id,
      ok: false,
      error: { message: typeof text === 'string' ? text : String(error), name: typeof name === 'string' ? name : 'Error', ...(typeof code === 'string' ? { code } : {}) },
    });
  }
});
