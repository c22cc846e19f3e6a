import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PREFERENCES_FILE, PreferencesStore } from '../../../electron/core/preferences-store';
import { configureLogging } from '../../../shared/log';
import { DEFAULT_PREFERENCES } from '../../../shared/preferences';
import { err, ok } from '../../../shared/result';

configureLogging({ sink: () => undefined });

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'preferences-'));
  dirs.push(dir);
  return dir;
}

describe('PreferencesStore', () => {
  it('starts from the defaults and keeps what was saved', async () => {
    const dir = await dataDir();
    const store = new PreferencesStore({ dataDir: dir });
    expect(await store.load()).toEqual(DEFAULT_PREFERENCES);
    const seen: unknown[] = [];
    store.onChanged((p) => seen.push(p.globalShortcuts));
    const saved = await store.update({ globalShortcuts: true, shortcuts: { hangUp: 'ctrl+alt+h' } });
    expect(saved.ok && saved.value.shortcuts.hangUp).toBe('Ctrl+Alt+H');
    expect(seen).toEqual([true]);
    const reloaded = new PreferencesStore({ dataDir: dir });
    expect(await reloaded.load()).toMatchObject({ globalShortcuts: true, shortcuts: { hangUp: 'Ctrl+Alt+H', answer: 'Ctrl+Shift+A' } });
  });

  it('keeps the "Language" setting ("auto" until chosen); refuses one the app does not speak, naming the field and the choices', async () => {
    const dir = await dataDir();
    const store = new PreferencesStore({ dataDir: dir });
    expect((await store.load()).language).toBe('auto');
    expect(await store.update({ language: 'ar' })).toMatchObject({ ok: true, value: { language: 'ar' } });
    expect((await new PreferencesStore({ dataDir: dir }).load()).language).toBe('ar');
    const refused = await store.update({ language: 'fr' } as never);
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'language' } });
    expect(!refused.ok && refused.error.message).toContain('must be one of auto, en, es, pt-BR, hi, id, ar');
    // A file written by hand with a language the app does not speak falls back to "auto", keeping the rest.
    await writeFile(join(dir, PREFERENCES_FILE), JSON.stringify({ language: 'klingon', dialLinksAtOnce: true }));
    expect(await new PreferencesStore({ dataDir: dir }).load()).toMatchObject({ language: 'auto', dialLinksAtOnce: true });
  });

  it('refuses a patch that breaks a rule, naming the field, and changes nothing', async () => {
    const dir = await dataDir();
    const store = new PreferencesStore({ dataDir: dir });
    await store.load();
    expect(await store.update({ startAtLogin: 'yes' } as never)).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'startAtLogin' } });
    expect(await store.update({ shortcuts: { answer: 'Q' } })).toMatchObject({ ok: false, error: { field: 'shortcuts.answer' } });
    expect(store.get()).toEqual(DEFAULT_PREFERENCES);
    expect(await readdir(dir)).toEqual([]);
  });

  it('lets the host refuse a change before it is saved', async () => {
    const dir = await dataDir();
    const seen: boolean[] = [];
    const store = new PreferencesStore({
      dataDir: dir,
      guard: (next) => (next.globalShortcuts && next.shortcuts.decline === 'Ctrl+Shift+D' ? err('invalid_input', 'shortcuts.decline (Decline): taken', { field: 'shortcuts.decline' }) : ok(undefined)),
    });
    await store.load();
    store.onChanged((p) => seen.push(p.globalShortcuts));
    expect(await store.update({ globalShortcuts: true })).toMatchObject({ ok: false, error: { field: 'shortcuts.decline' } });
    expect(store.get().globalShortcuts).toBe(false);
    expect(await readdir(dir)).toEqual([]);
    expect(seen).toEqual([]);
    const moved = await store.update({ globalShortcuts: true, shortcuts: { decline: 'Ctrl+Alt+D' } });
    expect(moved.ok && moved.value.globalShortcuts).toBe(true);
    expect(seen).toEqual([true]);
  });

  it('fills parts a file lacks from the defaults', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, PREFERENCES_FILE), JSON.stringify({ quitOnClose: true, shortcuts: { mute: 'Ctrl+Alt+M' } }));
    const store = new PreferencesStore({ dataDir: dir });
    expect(await store.load()).toEqual({ ...DEFAULT_PREFERENCES, quitOnClose: true, shortcuts: { ...DEFAULT_PREFERENCES.shortcuts, mute: 'Ctrl+Alt+M' } });
  });

  it('keeps an unreadable file aside and starts from the defaults', async () => {
    const dir = await dataDir();
    await writeFile(join(dir, PREFERENCES_FILE), '{ not json');
    const store = new PreferencesStore({ dataDir: dir });
    expect(await store.load()).toEqual(DEFAULT_PREFERENCES);
    const files = await readdir(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^preferences\.json\.corrupt-\d+$/);
    expect(await readFile(join(dir, files[0]!), 'utf8')).toBe('{ not json');
  });

  it('applies changes one after another', async () => {
    const store = new PreferencesStore({ dataDir: await dataDir() });
    await store.load();
    const [a, b] = await Promise.all([store.update({ missedSeenAt: 10 }), store.update({ dialLinksAtOnce: true })]);
    expect(a.ok && b.ok).toBe(true);
    expect(store.get()).toMatchObject({ missedSeenAt: 10, dialLinksAtOnce: true });
  });
});
