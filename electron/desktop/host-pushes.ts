// Pushes that the Electron host itself sends the window (a global shortcut, a notification's
// Answer button), on the same path as the service's: the IPC forwarder subscribes to the backend
// this returns, so the renderer cannot tell a host push from a service push.
import type { SoftphoneBackend, PushMessage, Unsubscribe } from '../../shared/api';

export interface HostPushes {
  /** The service with the host's pushes mixed into `subscribe`; commands go straight through. */
  backend: SoftphoneBackend;
  push(message: PushMessage): void;
  /**
   * Runs `listener` once the window has asked for its snapshot: it subscribes to pushes before it
   * asks (renderer/app/host-sync.ts), so from then on a push cannot be lost to a page still loading.
   * Asked again after a reload, so it runs once per page.
   */
  onRendererListening(listener: () => void): Unsubscribe;
}

export function withHostPushes(service: SoftphoneBackend): HostPushes {
  const listeners = new Set<(push: PushMessage) => void>();
  const listening = new Set<() => void>();

  const backend: SoftphoneBackend = {
    handle: (name, params) => {
      const result = service.handle(name, params);
      if (name === 'getSnapshot') for (const listener of [...listening]) listener();
      return result;
    },
    subscribe: (listener) => {
      listeners.add(listener);
      const unsubscribe = service.subscribe(listener);
      return () => {
        listeners.delete(listener);
        unsubscribe();
      };
    },
  };

  return {
    backend,
    push: (message) => {
      for (const listener of [...listeners]) listener(message);
    },
    onRendererListening: (listener) => {
      listening.add(listener);
      return () => listening.delete(listener);
    },
  };
}
