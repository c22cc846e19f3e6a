// Settings → "Updates" and "Restart to update", window side: the form keeps what was typed and
// places a refusal beside its field, the status arrives with the snapshot and the push, the words
// follow the language, and the restart is offered only with no live call.
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ok, err } from '../../../shared/result';
import type { UpdateSettings, UpdateStatus } from '../../../shared/updates';
import { UpdateActions } from '../../../renderer/app/update-actions';
import { HostSync } from '../../../renderer/app/host-sync';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { offersRestart, resetUpdateStatusStore, updateStatusStore } from '../../../renderer/store/updates';
import { appStore, resetStore } from '../../../renderer/store/store';
import { updateStatusText } from '../../../renderer/components/UpdateSettings';
import { fakeApi } from './fake-api';
import { permanentLink } from '../../../renderer/bridge/host-link';
import { snapshot } from './fixtures';

beforeEach(() => {
  resetUpdateStatusStore();
  resetStore();
});
afterEach(async () => {
  await setUiLanguage('en', undefined);
});

const saved: UpdateSettings = { feedUrl: 'https://updates.example.com/softphone', channel: 'stable' };

describe('UpdateActions', () => {
  test('loads the saved settings, but never over what the agent has typed', async () => {
    const fake = fakeApi({ getUpdateSettings: () => ok(saved) });
    const actions = new UpdateActions({ api: fake.api, store: updateStatusStore });
    await actions.load();
    expect(updateStatusStore.getState().form.draft).toEqual(saved);
    actions.edit({ feedUrl: 'https://other.example.com/' });
    await actions.load();
    expect(updateStatusStore.getState().form.draft.feedUrl).toBe('https://other.example.com/');
  });

  test('a refused save is placed beside its field and keeps the text; a save that goes through says so', async () => {
    let answer: 'refuse' | 'accept' = 'refuse';
    const fake = fakeApi({
      setUpdateSettings: ({ settings }) =>
        answer === 'refuse' ? err('invalid_input', 'settings.feedUrl: must be an https:// address', { field: 'settings.feedUrl' }) : ok(settings as UpdateSettings),
    });
    const actions = new UpdateActions({ api: fake.api, store: updateStatusStore });
    actions.edit({ feedUrl: ' http://updates.example.com/ ', channel: 'beta' });
    expect(await actions.save()).toBe(false);
    const refused = updateStatusStore.getState().form;
    expect(refused.error?.field).toBe('feedUrl');
    expect(refused.error?.text).toContain('https://');
    expect(refused.draft.feedUrl).toBe(' http://updates.example.com/ ');
    expect(fake.calls.at(-1)?.params).toEqual({ settings: { feedUrl: 'http://updates.example.com/', channel: 'beta' } });

    answer = 'accept';
    actions.edit({ feedUrl: 'https://updates.example.com/' });
    expect(await actions.save()).toBe(true);
    expect(updateStatusStore.getState().form).toMatchObject({ saved: true, error: null, edited: false, draft: { feedUrl: 'https://updates.example.com/', channel: 'beta' } });
  });

  test('"Check for updates" shows the answer; a restart refused during a call says why', async () => {
    const fake = fakeApi({
      checkForUpdates: () => ok({ kind: 'checking' }),
      restartToUpdate: () => err('invalid_state', 'The softphone does not restart during a call (a call is ringing).'),
    });
    const actions = new UpdateActions({ api: fake.api, store: updateStatusStore });
    await actions.check();
    expect(updateStatusStore.getState().status).toEqual({ kind: 'checking' });
    await actions.restart();
    expect(updateStatusStore.getState().restartError).toContain('a call is ringing');
  });
});

describe('the status', () => {
  test('arrives with the snapshot and each push; a malformed push is dropped', async () => {
    const fake = fakeApi({ getSnapshot: () => ok({ ...snapshot(), updateStatus: { kind: 'ready', version: '1.2.0' } }) });
    const seen: UpdateStatus[] = [];
    const sync = new HostSync({
      api: fake.api,
      link: permanentLink(),
      store: appStore,
      calls: { callChanged: () => undefined, callsReloaded: () => undefined, dialRequested: async () => undefined, customerLegQuality: () => undefined },
      selectContact: () => undefined,
      setUpdateStatus: (s) => seen.push(s),
    });
    const stop = sync.start();
    await expect.poll(() => seen.length).toBe(1);
    expect(seen[0]).toEqual({ kind: 'ready', version: '1.2.0' });
    fake.push('updateStatus', { kind: 'downloading', version: '1.3.0', percent: 40 });
    fake.push('updateStatus', { kind: 'downloading', version: '1.3.0', percent: 400 });
    expect(seen).toEqual([{ kind: 'ready', version: '1.2.0' }, { kind: 'downloading', version: '1.3.0', percent: 40 }]);
    stop();
  });

  test('"Restart to update" only when an update is ready and no call is live', () => {
    expect(offersRestart({ kind: 'ready', version: '1.2.0' }, false)).toBe(true);
    expect(offersRestart({ kind: 'ready', version: '1.2.0' }, true)).toBe(false);
    expect(offersRestart({ kind: 'downloading', version: '1.2.0', percent: 10 }, false)).toBe(false);
    expect(offersRestart(undefined, false)).toBe(false);
  });

  test('is said in the agent’s language, with Intl percentages', async () => {
    expect(updateStatusText({ kind: 'downloading', version: '1.3.0', percent: 40 })).toBe('Downloading version 1.3.0: 40%.');
    await setUiLanguage('es', undefined);
    expect(updateStatusText({ kind: 'ready', version: '1.3.0' })).toBe('La versión 1.3.0 está lista: se instala al reiniciar el softphone, nunca durante una llamada.');
    expect(updateStatusText({ kind: 'downloading', version: '1.3.0', percent: 40 })).toBe('Descargando la versión 1.3.0: 40\u00a0%.');
    await setUiLanguage('ar', undefined);
    expect(updateStatusText({ kind: 'off' })).toBe('التحديثات متوقفة.');
  });
});
