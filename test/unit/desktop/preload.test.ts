import { beforeAll, beforeEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { COMMAND_NAMES, PUSH_NAMES, pushListenerName, type ConnectionState, type SoftphoneApi } from '../../../shared/api';
import type { createSoftphoneBridge } from '../../../electron/desktop/preload';
import { contextBridge, FakeEvent, ipcRenderer } from './fake-electron';

vi.mock('electron', () => import('./fake-electron'));

describe('preload', () => {
  let api: SoftphoneApi;

  beforeAll(async () => {
    await import('../../../electron/desktop/preload');
    api = contextBridge.exposed.get('softphone') as SoftphoneApi;
  });
  beforeEach(() => ipcRenderer.invoke.mockClear());

  it('exposes one object, window.softphone, through the context bridge', () => {
    expect(contextBridge.exposeInMainWorld).toHaveBeenCalledTimes(1);
    expect([...contextBridge.exposed.keys()]).toEqual(['softphone']);
  });

  it('has exactly one function per command and one onX per push, and nothing generic', () => {
    const expected = [...COMMAND_NAMES, ...PUSH_NAMES.map(pushListenerName)].sort();
    expect(Object.keys(api).sort()).toEqual(expected);
    for (const value of Object.values(api)) expect(typeof value).toBe('function');
    for (const generic of ['send', 'invoke', 'on', 'ipcRenderer']) expect(api).not.toHaveProperty(generic);
    // Checked by the type checker (npm run typecheck): the bridge's type is exactly the contract.
    expectTypeOf<ReturnType<typeof createSoftphoneBridge>>().toEqualTypeOf<SoftphoneApi>();
  });

  it('sends each command on its own channel with its params and returns main\'s result', async () => {
    for (const name of COMMAND_NAMES) {
      const params = { marker: name };
      const result = await (api[name] as (p: unknown) => Promise<unknown>)(params);
      expect(result).toEqual({ ok: true, value: { channel: `softphone:${name}`, params } });
    }
    expect(ipcRenderer.invoke.mock.calls.map(([channel]) => channel)).toEqual(COMMAND_NAMES.map((name) => `softphone:${name}`));
  });

  it('turns a failed invoke (no handler in main) into an error value', async () => {
    ipcRenderer.invoke.mockRejectedValueOnce(new Error("No handler registered for 'softphone:getSnapshot'"));
    const result = await api.getSnapshot({});
    expect(result).toMatchObject({ ok: false, error: { code: 'internal' } });
  });

  it('delivers each push to its onX listener with the payload only, until unsubscribed', () => {
    const received: ConnectionState[] = [];
    const unsubscribe = api.onConnectionChanged((payload) => received.push(payload));
    expect(ipcRenderer.listenerCount('softphone:push:connectionChanged')).toBe(1);

    const payload: ConnectionState = { status: 'connected', since: 5 };
    ipcRenderer.emit('softphone:push:connectionChanged', new FakeEvent({ sender: 'main' }), payload);
    ipcRenderer.emit('softphone:push:callChanged', new FakeEvent(), { other: true });
    expect(received).toEqual([payload]);

    unsubscribe();
    expect(ipcRenderer.listenerCount('softphone:push:connectionChanged')).toBe(0);
    ipcRenderer.emit('softphone:push:connectionChanged', new FakeEvent(), payload);
    expect(received).toEqual([payload]);
  });

  it('listens on softphone:push:<name> for every push', () => {
    for (const name of PUSH_NAMES) {
      const listen = api[pushListenerName(name)] as (cb: (p: unknown) => void) => () => void;
      const seen: unknown[] = [];
      const unsubscribe = listen((p) => seen.push(p));
      ipcRenderer.emit(`softphone:push:${name}`, new FakeEvent(), name);
      unsubscribe();
      expect(seen).toEqual([name]);
    }
  });
});
