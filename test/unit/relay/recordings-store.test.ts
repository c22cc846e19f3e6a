// The recordings on disk (relay/recordings-store.ts): a file name for any call id that stays in the
// folder, atomic writes that leave no temporary behind, a node's upload streamed with its limit and
// its Ogg check, the meta's agents merged whoever writes first, and the retention sweep.
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DAY_MS, recordingFileName, RecordingsStore } from '../../../relay/recordings-store';
import type { Logger } from '../../../shared/log';

const dirs: string[] = [];
const stores: RecordingsStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

interface Logged {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
}

function recordingLogger(into: Logged[]): Logger {
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void into.push({ level, message, ...(fields !== undefined ? { fields } : {}) });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

async function openStore(options: { retentionDays?: number; now?: () => number; logged?: Logged[]; dir?: string } = {}): Promise<RecordingsStore> {
  const dir = options.dir ?? join(await mkdtemp(join(tmpdir(), 'recordings-')), 'recordings');
  if (options.dir === undefined) dirs.push(join(dir, '..'));
  const store = new RecordingsStore({ dir, logger: recordingLogger(options.logged ?? []), ...(options.retentionDays !== undefined ? { retentionDays: options.retentionDays } : {}), ...(options.now ? { now: options.now } : {}) });
  stores.push(store);
  await store.open();
  return store;
}

/** The bytes of an Ogg stream as far as the store cares: its capture pattern, then anything. */
const oggBytes = (length: number, fill = 7): Uint8Array => {
  const bytes = new Uint8Array(length).fill(fill);
  bytes.set([0x4f, 0x67, 0x67, 0x53]);
  return bytes;
};

async function* chunks(...parts: Uint8Array[]): AsyncIterable<Uint8Array> {
  for (const part of parts) yield part;
}

describe('recordingFileName', () => {
  it('is the SHA-256 of the call id in hex: any id, however long or strange, is one name in the folder', () => {
    const ids = ['wacid.HBgLMTU1NTAwMDExMTEVAgARGBI5QTQ2RDRFQkU1QzBCRDE0NjgA', '../../etc/passwd', 'a/b', 'nul\0byte', 'x'.repeat(512), 'CON', 'Wacid.A', 'wacid.a'];
    const names = ids.map(recordingFileName);
    for (const name of names) expect(name).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(names).size).toBe(ids.length);
    expect(recordingFileName('wacid.A')).not.toBe(recordingFileName('wacid.a'));
  });
});

describe('RecordingsStore', () => {
  it('makes its folder for its owner alone, and keeps a handed-over recording with its meta, atomically', async () => {
    const store = await openStore({ now: () => 1_700_000_000_000 });
    expect((await stat(store.dir)).mode & 0o777).toBe(0o700);
    const callId = '../escape/wacid.1';
    expect(await store.meta(callId)).toBeUndefined();
    expect(await store.openAudio(callId)).toBeUndefined();

    await store.noteAgents(callId, ['alice'], 1_699_999_000_000);
    expect(await store.meta(callId)).toEqual({ callId, agents: ['alice'], startedAt: 1_699_999_000_000 });
    // Not stored yet: no audio.
    expect(await store.openAudio(callId)).toBeUndefined();

    const file = oggBytes(10_000);
    expect(await store.store(callId, file, 61_000)).toEqual({ ok: true, value: null });
    expect(await store.meta(callId)).toEqual({ callId, agents: ['alice'], startedAt: 1_699_999_000_000, storedAt: 1_700_000_000_000, durationMs: 61_000, bytes: 10_000 });
    const name = recordingFileName(callId);
    expect((await readdir(store.dir)).sort()).toEqual([`${name}.json`, `${name}.ogg`]);
    expect(new Uint8Array(await readFile(join(store.dir, `${name}.ogg`)))).toEqual(file);
    expect((await stat(join(store.dir, `${name}.ogg`))).mode & 0o777).toBe(0o600);

    const audio = await store.openAudio(callId);
    expect(audio).toMatchObject({ size: 10_000, etag: expect.stringMatching(/^"[0-9a-f]+-[0-9a-f]+"$/) });
    await audio?.handle.close();

    // A node's retry replaces the file; the agents stay.
    await store.store(callId, oggBytes(20, 9), 1_000);
    expect(await store.meta(callId)).toMatchObject({ agents: ['alice'], bytes: 20, durationMs: 1_000 });
    expect((await readdir(store.dir)).length).toBe(2);
  });

  it('merges the agents whoever writes first, keeping the earliest start; a file handed over first gets them too', async () => {
    const store = await openStore({ now: () => 5_000_000 });
    await Promise.all([store.noteAgents('c1', ['alice'], 2_000), store.noteAgents('c1', ['alice', 'bob'], 3_000), store.noteAgents('c1', ['carol'], 1_000)]);
    expect(await store.meta('c1')).toEqual({ callId: 'c1', agents: ['alice', 'bob', 'carol'], startedAt: 1_000 });

    // The upload came first (a node ends before the relay hears of it): its start is the file's length before it was stored.
    await store.store('c2', oggBytes(8), 4_000);
    expect(await store.meta('c2')).toEqual({ callId: 'c2', agents: [], startedAt: 4_996_000, storedAt: 5_000_000, durationMs: 4_000, bytes: 8 });
    await store.noteAgents('c2', ['dave'], 4_990_000);
    expect(await store.meta('c2')).toMatchObject({ agents: ['dave'], startedAt: 4_990_000, storedAt: 5_000_000, bytes: 8 });
  });

  it('streams an upload to the disk, refusing one over its limit, one that is no Ogg stream, and one cut short, leaving nothing behind', async () => {
    const store = await openStore();
    const parts = [oggBytes(5_000).subarray(0, 2), oggBytes(5_000).subarray(2), new Uint8Array(3_000).fill(1)];
    expect(await store.receive('up-1', chunks(...parts), 2_500, 8_000)).toEqual({ kind: 'stored', bytes: 8_000 });
    expect(await store.meta('up-1')).toMatchObject({ bytes: 8_000, durationMs: 2_500, agents: [] });
    const kept = new Uint8Array(await readFile(join(store.dir, `${recordingFileName('up-1')}.ogg`)));
    expect(kept.length).toBe(8_000);
    expect([...kept.subarray(0, 4)]).toEqual([0x4f, 0x67, 0x67, 0x53]);

    expect(await store.receive('up-2', chunks(oggBytes(5_000), oggBytes(3_001)), 1, 8_000)).toEqual({ kind: 'too_large' });
    expect(await store.receive('up-3', chunks(Uint8Array.from([0x52, 0x49, 0x46, 0x46, 1, 2])), 1)).toEqual({ kind: 'not_ogg' });
    expect(await store.receive('up-4', chunks(Uint8Array.from([0x4f, 0x67])), 1)).toEqual({ kind: 'not_ogg' });
    expect(await store.receive('up-5', chunks(), 1)).toEqual({ kind: 'not_ogg' });
    const cut: AsyncIterable<Uint8Array> = {
      async *[Symbol.asyncIterator]() {
        yield oggBytes(100);
        throw Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
      },
    };
    expect(await store.receive('up-6', cut, 1)).toEqual({ kind: 'aborted' });
    for (const callId of ['up-2', 'up-3', 'up-4', 'up-5', 'up-6']) expect(await store.meta(callId)).toBeUndefined();
    expect((await readdir(store.dir)).sort()).toEqual([`${recordingFileName('up-1')}.json`, `${recordingFileName('up-1')}.ogg`].sort());
  });

  it('takes a meta file that is none for no recording, and says so', async () => {
    const logged: Logged[] = [];
    const store = await openStore({ logged });
    await writeFile(join(store.dir, `${recordingFileName('bad')}.json`), '{"callId":"bad","agents":"alice"}');
    expect(await store.meta('bad')).toBeUndefined();
    expect(logged).toContainEqual({ level: 'warn', message: 'a recording meta file is not one: it is left alone', fields: { path: join(store.dir, `${recordingFileName('bad')}.json`) } });
    // A meta that names another call (a file copied by hand) is not this call's.
    await writeFile(join(store.dir, `${recordingFileName('mine')}.json`), JSON.stringify({ callId: 'theirs', agents: ['eve'], startedAt: 1 }));
    expect(await store.meta('mine')).toBeUndefined();
  });

  it('sweeps what is past its retention at open and on demand: by when it was stored, else when it started, else the file’s time; and what a dead relay left half-written', async () => {
    let now = 100 * DAY_MS;
    const logged: Logged[] = [];
    const store = await openStore({ retentionDays: 30, now: () => now, logged });
    const day = (n: number) => n * DAY_MS;
    now = day(60);
    await store.store('old', oggBytes(10), 1);
    await store.noteAgents('old', ['alice'], day(59));
    now = day(80);
    await store.store('recent', oggBytes(10), 1);
    // Recorded, never handed over (its node died): judged by its start.
    await store.noteAgents('lost-old', ['bob'], day(65));
    await store.noteAgents('lost-recent', ['bob'], day(85));
    // A file whose meta never came (a relay that died between the two writes): judged by its time on disk.
    const orphan = join(store.dir, `${recordingFileName('orphan')}.ogg`);
    await writeFile(orphan, oggBytes(4));
    await utimes(orphan, new Date(day(61)), new Date(day(61)));
    const halfWritten = join(store.dir, '.tmp-0011223344556677');
    await writeFile(halfWritten, 'x');
    const fresh = join(store.dir, '.tmp-8899aabbccddeeff');
    await writeFile(fresh, 'y');
    await utimes(halfWritten, new Date(day(98)), new Date(day(98)));
    await utimes(fresh, new Date(day(99.5)), new Date(day(99.5)));

    now = day(100);
    expect(await store.sweep()).toBe(3);
    expect(await store.meta('old')).toBeUndefined();
    expect(await store.meta('lost-old')).toBeUndefined();
    expect(await store.meta('recent')).toMatchObject({ storedAt: day(80) });
    expect(await store.meta('lost-recent')).toMatchObject({ startedAt: day(85) });
    const left = await readdir(store.dir);
    expect(left).not.toContain(`${recordingFileName('old')}.ogg`);
    expect(left).not.toContain(`${recordingFileName('orphan')}.ogg`);
    expect(left).not.toContain('.tmp-0011223344556677');
    expect(left).toContain('.tmp-8899aabbccddeeff');
    expect(logged).toContainEqual({ level: 'info', message: 'recordings past their retention were deleted', fields: { deleted: 3, retentionDays: 30 } });
  });

  it('without a retention keeps every recording, still clearing what a dead relay left; a store opened again sweeps at once', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'recordings-'));
    dirs.push(parent);
    const dir = join(parent, 'recordings');
    let now = 1_000 * DAY_MS;
    const forever = await openStore({ dir, now: () => now });
    await forever.store('kept', oggBytes(10), 1);
    const halfWritten = join(dir, '.tmp-00');
    await writeFile(halfWritten, 'x');
    now += 10_000 * DAY_MS;
    await utimes(halfWritten, new Date(now - 2 * DAY_MS), new Date(now - 2 * DAY_MS));
    expect(await forever.sweep()).toBe(0);
    expect(await forever.meta('kept')).toBeDefined();
    expect(await readdir(dir)).not.toContain('.tmp-00');
    await forever.close();

    await openStore({ dir, retentionDays: 1, now: () => now });
    expect(await readdir(dir)).toEqual([]);
  });
});
