import type { WebContents } from 'electron';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { COMMAND_NAMES, type PushMessage, type SoftphoneBackend } from '../../../shared/api';
import { ok, type Result } from '../../../shared/result';
import { registerSoftphoneIpc } from '../../../electron/desktop/ipc';
import { DIAL_OFFER_SDP } from '../../fixtures/sdp';
import { FakeWebContents, ipcMain, resetFakeElectron } from './fake-electron';
import { recordingLogger } from './recording-logger';

vi.mock('electron', () => import('./fake-electron'));

const APP_URL = 'app://softphone/index.html';

class FakeBackend implements SoftphoneBackend {
  readonly calls: Array<{ name: string; params: unknown }> = [];
  readonly listeners = new Set<(push: PushMessage) => void>();
  failWith: Error | undefined;

  async handle(name: string, params: unknown): Promise<Result<never>> {
    this.calls.push({ name, params });
    if (this.failWith) throw this.failWith;
    return ok({ handled: name } as never);
  }
  subscribe(listener: (push: PushMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  push(message: PushMessage): void {
    for (const listener of this.listeners) listener(message);
  }
}

const connectionPush: PushMessage = { name: 'connectionChanged', payload: { status: 'connected', since: 1 } };

describe('registerSoftphoneIpc', () => {
  let backend: FakeBackend;
  let ours: FakeWebContents | undefined;
  let dispose: () => void;
  let logger: ReturnType<typeof recordingLogger>;

  const invoke = (channel: string, params: unknown, from: { sender?: FakeWebContents; url?: string | null } = {}) => {
    const handler = ipcMain.handlers.get(channel);
    if (!handler) throw new Error(`no handler for ${channel}`);
    const url = from.url === undefined ? APP_URL : from.url;
    return handler({ sender: from.sender ?? ours, senderFrame: url === null ? null : { url } }, params) as Promise<Result<unknown>>;
  };

  beforeEach(() => {
    resetFakeElectron();
    backend = new FakeBackend();
    ours = new FakeWebContents();
    logger = recordingLogger();
    dispose = registerSoftphoneIpc({ backend, appUrl: APP_URL, getWebContents: () => ours as unknown as WebContents | undefined, logger });
  });
  afterEach(() => dispose());

  it('registers exactly one handler per command, on softphone:<command>', () => {
    expect([...ipcMain.handlers.keys()].sort()).toEqual(COMMAND_NAMES.map((name) => `softphone:${name}`).sort());
  });

  it('passes a valid payload from our window to the backend and returns its result', async () => {
    const result = await invoke('softphone:hangUp', { localId: 'out-1' });
    expect(result).toEqual({ ok: true, value: { handled: 'hangUp' } });
    expect(backend.calls).toEqual([{ name: 'hangUp', params: { localId: 'out-1' } }]);
  });

  it('hands the backend the parsed value (schema defaults applied)', async () => {
    const settings = { gatewayUrl: 'https://gateway.example.com/restapi/v1', relayUrl: 'https://relay.example.com' };
    await invoke('softphone:saveSettings', { settings });
    expect(backend.calls[0]?.params).toEqual({ settings: { ...settings, productSegment: 'chatapp' } });
  });

  it('refuses a call from another web contents before any business code runs', async () => {
    const result = await invoke('softphone:hangUp', { localId: 'out-1' }, { sender: new FakeWebContents() });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.code).toBe('unauthorized');
    expect(backend.calls).toEqual([]);
    expect(logger.records.map((r) => r.msg)).toEqual(['IPC call refused']);
  });

  it('refuses a call from our window when the frame shows another page', async () => {
    for (const url of ['https://evil.example/index.html', 'file:///tmp/evil.html', null]) {
      const result = await invoke('softphone:getSnapshot', {}, { url });
      expect(!result.ok && result.error.code, String(url)).toBe('unauthorized');
    }
    expect(backend.calls).toEqual([]);
  });

  it('accepts our page with a fragment or query (the renderer may keep its view there)', async () => {
    const result = await invoke('softphone:getSnapshot', {}, { url: `${APP_URL}#/settings` });
    expect(result.ok).toBe(true);
  });

  it('refuses every call while there is no window', async () => {
    const sender = ours;
    ours = undefined;
    const result = await invoke('softphone:getSnapshot', {}, { sender });
    expect(!result.ok && result.error.code).toBe('unauthorized');
    expect(backend.calls).toEqual([]);
  });

  it('rejects an invalid payload with invalid_input naming the field, without calling the backend', async () => {
    const wrongType = await invoke('softphone:startCall', { localId: 'out:0123456789', to: 42, sdp: DIAL_OFFER_SDP });
    expect(wrongType).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'to' } });

    const missing = await invoke('softphone:answerCall', { localId: 'in:wacid.1' });
    expect(missing).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'sdp' } });
    expect(!missing.ok && missing.error.message).toContain('sdp');

    const notAnObject = await invoke('softphone:hangUp', undefined);
    expect(notAnObject).toMatchObject({ ok: false, error: { code: 'invalid_input' } });

    const extraField = await invoke('softphone:hangUp', { localId: 'out-1', channel: 'x' });
    expect(extraField).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    expect(!extraField.ok && extraField.error.message).toContain('channel');

    expect(backend.calls).toEqual([]);
  });

  it('turns an exception in the backend into an internal error value', async () => {
    backend.failWith = new Error('boom');
    const result = await invoke('softphone:getSnapshot', {});
    expect(result).toMatchObject({ ok: false, error: { code: 'internal' } });
  });

  it('forwards pushes to our window only, on softphone:push:<name>', () => {
    backend.push(connectionPush);
    expect(ours?.sent).toEqual([['softphone:push:connectionChanged', connectionPush.payload]]);
  });

  it('drops pushes while the window is gone or destroyed', () => {
    const window = ours!;
    window.destroyed = true;
    backend.push(connectionPush);
    ours = undefined;
    backend.push(connectionPush);
    expect(window.sent).toEqual([]);
  });

  it('dispose removes every handler and the push subscription', () => {
    dispose();
    expect(ipcMain.handlers.size).toBe(0);
    expect(backend.listeners.size).toBe(0);
    dispose = () => undefined;
  });
});
