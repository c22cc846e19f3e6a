import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HistoryStore } from '../../../electron/core/history-store';
import { HISTORY_LIMIT, type HistoryEntry } from '../../../shared/history';
import { configureLogging } from '../../../shared/log';

configureLogging({ sink: () => undefined });

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'softphone-history-'));
  dirs.push(dir);
  return dir;
}

const entry = (n: number, extra: Partial<HistoryEntry> = {}): HistoryEntry => ({
  localId: `in:wacid.${n}`,
  callId: `wacid.${n}`,
  direction: 'incoming',
  number: '447400123456',
  name: 'Ada',
  outcome: 'completed',
  startedAt: 1_000_000 + n * 1000,
  endedAt: 1_000_500 + n * 1000,
  durationSec: n,
  ...extra,
});

describe('HistoryStore', () => {
  it('keeps entries across instances, newest first', async () => {
    const dir = await dataDir();
    const first = await HistoryStore.open({ dataDir: dir });
    first.record(entry(1));
    first.record(entry(3, { direction: 'outgoing', outcome: 'failed', failureCode: '138006', failureMessage: 'No permission' }));
    first.record(entry(2));
    await first.flush();

    const second = await HistoryStore.open({ dataDir: dir });
    expect(second.entries().map((e) => e.localId)).toEqual(['in:wacid.3', 'in:wacid.2', 'in:wacid.1']);
    expect(second.entries()[0]).toEqual(entry(3, { direction: 'outgoing', outcome: 'failed', failureCode: '138006', failureMessage: 'No permission' }));
  });

  it('replaces the entry of the same call instead of adding one', async () => {
    const store = await HistoryStore.open({ dataDir: await dataDir() });
    store.record(entry(1, { durationSec: 10 }));
    store.record(entry(1, { durationSec: 12 }));
    expect(store.entries()).toHaveLength(1);
    expect(store.entries()[0]!.durationSec).toBe(12);
  });

  it('keeps an entry’s voicemail through a correction that does not carry it, and across instances', async () => {
    const dir = await dataDir();
    const store = await HistoryStore.open({ dataDir: dir });
    store.record(entry(1, { outcome: 'missed', durationSec: 0 }));
    store.record(entry(1, { outcome: 'missed', durationSec: 0, voicemail: { mediaId: 'media-1', at: 1_002_000, saved: false, fetchError: 'HTTP 500' } }));
    store.record(entry(1, { outcome: 'missed', durationSec: 0, endedAt: 1_001_600 }));
    expect(store.entries()[0]).toMatchObject({ endedAt: 1_001_600, voicemail: { mediaId: 'media-1', saved: false, fetchError: 'HTTP 500' } });
    store.record({ ...store.entries()[0]!, voicemail: { mediaId: 'media-1', at: 1_002_000, saved: true } });
    await store.flush();
    expect((await HistoryStore.open({ dataDir: dir })).entries()[0]!.voicemail).toEqual({ mediaId: 'media-1', at: 1_002_000, saved: true });
  });

  it('keeps at most HISTORY_LIMIT entries, dropping the oldest', async () => {
    const dir = await dataDir();
    const store = await HistoryStore.open({ dataDir: dir });
    for (let n = 1; n <= HISTORY_LIMIT + 5; n++) store.record(entry(n));
    await store.flush();
    const reopened = await HistoryStore.open({ dataDir: dir });
    expect(reopened.entries()).toHaveLength(HISTORY_LIMIT);
    expect(reopened.entries()[0]!.localId).toBe(`in:wacid.${HISTORY_LIMIT + 5}`);
    expect(reopened.entries().at(-1)!.localId).toBe('in:wacid.6');
  });

  it('tells listeners about every change', async () => {
    const store = await HistoryStore.open({ dataDir: await dataDir() });
    const seen: number[] = [];
    const off = store.onChanged((entries) => seen.push(entries.length));
    store.record(entry(1));
    store.record(entry(2));
    off();
    store.record(entry(3));
    expect(seen).toEqual([1, 2]);
  });

  it('starts empty on an unreadable file and keeps it aside', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, 'history.json'), '{"version":1,"entries":[{"localId"');
    const store = await HistoryStore.open({ dataDir: dir, now: () => 1234 });
    expect(store.entries()).toEqual([]);
    expect(await readFile(join(dir, 'history.json.corrupt-1234'), 'utf8')).toBe('{"version":1,"entries":[{"localId"');
    store.record(entry(1));
    await store.flush();
    expect((await HistoryStore.open({ dataDir: dir })).entries()).toHaveLength(1);
  });

  it('treats a file of the wrong shape as unreadable', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, 'history.json'), JSON.stringify([entry(1)]));
    const store = await HistoryStore.open({ dataDir: dir, now: () => 99 });
    expect(store.entries()).toEqual([]);
    expect(await readdir(dir)).toContain('history.json.corrupt-99');
  });

  it('keeps the readable entries of a partly broken file and a copy of the original', async () => {
    const dir = await dataDir();
    const original = JSON.stringify({ version: 1, entries: [entry(1), { localId: 'broken' }, entry(2)] });
    await writeFile(join(dir, 'history.json'), original);
    const store = await HistoryStore.open({ dataDir: dir, now: () => 7 });
    expect(store.entries().map((e) => e.localId)).toEqual(['in:wacid.2', 'in:wacid.1']);
    expect(await readFile(join(dir, 'history.json.corrupt-7'), 'utf8')).toBe(original);
  });

  it('writes atomically: no temporary files are left behind', async () => {
    const dir = await dataDir();
    const store = await HistoryStore.open({ dataDir: dir });
    for (let n = 0; n < 20; n++) store.record(entry(n));
    await store.flush();
    expect(await readdir(dir)).toEqual(['history.json']);
    expect(JSON.parse(await readFile(join(dir, 'history.json'), 'utf8'))).toMatchObject({ version: 1, entries: expect.any(Array) });
  });
});
