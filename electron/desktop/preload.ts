// The preload: exposes SoftphoneApi as window.softphone (style.md 2). One function per command and
// one onX(cb) → unsubscribe per push, each bound to its own channel; the page never gets
// ipcRenderer, a generic send, or the IPC event object.
import { contextBridge, ipcRenderer, type IpcRenderer, type IpcRendererEvent } from 'electron';
import { COMMAND_NAMES, PUSH_NAMES, pushListenerName, type PushName, type PushPayloads, type SoftphoneApi } from '../../shared/api';
import { err, errorText } from '../../shared/result';
import { commandChannel, pushChannel } from './ipc-channels';

export type BridgeIpc = Pick<IpcRenderer, 'invoke' | 'on' | 'removeListener'>;

export function createSoftphoneBridge(ipc: BridgeIpc): SoftphoneApi {
  const api: Record<string, unknown> = {};
  for (const name of COMMAND_NAMES) {
    const channel = commandChannel(name);
    // invoke rejects only when main has no handler (e.g. it failed to start): still a value here.
    api[name] = (params: unknown) =>
      ipc.invoke(channel, params).catch((e: unknown) => err('internal', `The app could not run ${name}: ${errorText(e)}`));
  }
  for (const name of PUSH_NAMES) {
    api[pushListenerName(name)] = (callback: (payload: PushPayloads[PushName]) => void) => {
      const channel = pushChannel(name);
      const listener = (_event: IpcRendererEvent, payload: PushPayloads[PushName]) => callback(payload);
      ipc.on(channel, listener);
      return () => {
        ipc.removeListener(channel, listener);
      };
    };
  }
  // Built from the name lists so that a new command or push appears without touching this file;
  // test/unit/desktop/preload.test.ts checks that the keys are exactly SoftphoneApi's.
  return api as SoftphoneApi;
}

contextBridge.exposeInMainWorld('softphone', createSoftphoneBridge(ipcRenderer));
