// The composition root of the renderer's domains: each gets only the parts it uses, and the two that
// act on another domain (host sync, sandbox) are handed that domain's function rather than importing it.
import type { SoftphoneApi, Unsubscribe } from '../../shared/api';
import type { StoreApi } from 'zustand/vanilla';
import type { HostLink } from '../bridge/host-link';
import type { AppState } from '../store/store';
import { CallActions, type MediaControls, type RingtonePlayer } from './call-actions';
import { HostSync } from './host-sync';
import { MessagingActions } from './messaging-actions';
import { SandboxActions } from './sandbox-actions';
import { SettingsActions } from './settings-actions';

export interface ControllersDeps {
  api: SoftphoneApi;
  link: HostLink;
  store: StoreApi<AppState>;
  engine: MediaControls;
  ringtone?: RingtonePlayer | undefined;
}

/** What the components may call, one entry per domain. */
export interface Controllers {
  calls: CallActions;
  messaging: MessagingActions;
  settings: SettingsActions;
  sandbox: SandboxActions;
}

export interface Softphone {
  controllers: Controllers;
  /** Subscribes to the host, rings and polls levels; the returned function undoes it all and releases the media. */
  start(): Unsubscribe;
}

export function createControllers(deps: ControllersDeps): Softphone {
  const { api, link, store, engine, ringtone } = deps;
  const calls = new CallActions({ api, store, engine, ringtone });
  const messaging = new MessagingActions({ api, store });
  const selectContact = (contact: string): void => messaging.selectContact(contact);
  const settings = new SettingsActions({ api, store });
  const sandbox = new SandboxActions({ api, store, selectContact });
  const sync = new HostSync({ api, link, store, calls, selectContact });
  return {
    controllers: { calls, messaging, settings, sandbox },
    start() {
      const stopSync = sync.start();
      const stopCalls = calls.start();
      return () => {
        stopSync();
        stopCalls();
      };
    },
  };
}
