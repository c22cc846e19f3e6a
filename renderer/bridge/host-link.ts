// The renderer's link to the host that implements SoftphoneApi. In Electron that is IPC to the
// main process, which lives as long as the window does; in the browser host it is a WebSocket that
// can drop and come back, and the UI shows which.
import type { SoftphoneApi, Unsubscribe } from '../../shared/api';

export type HostLinkState =
  | { status: 'connecting' }
  | { status: 'open' }
  | { status: 'reconnecting'; attempt: number; retryAt: number; lastError: string }
  /** No way to reach a host at all (no preload and no address to connect to). */
  | { status: 'unavailable'; message: string };

export interface HostLink {
  state(): HostLinkState;
  /** Called on every change of state. */
  subscribe(listener: (state: HostLinkState) => void): Unsubscribe;
  close(): void;
}

export interface SoftphoneHost {
  api: SoftphoneApi;
  link: HostLink;
  /** "electron" when a preload provided window.softphone, "browser" when this page made its own. */
  kind: 'electron' | 'browser';
}

/** The preload's IPC has no connection to lose. */
export function permanentLink(): HostLink {
  const state: HostLinkState = { status: 'open' };
  return { state: () => state, subscribe: () => () => undefined, close: () => undefined };
}

/** Without a localId, both read the newest call that has media. */
export interface MediaTestHook {
  stats(localId?: string): Promise<{ inboundEnergy: number; inboundLevel: number; outboundPackets: number; inboundPackets: number }>;
  /** Milliseconds from the Answer click to acceptCall being sent, and from Call to sendOffer. */
  timings(localId?: string): { answerToAcceptMs?: number; offerToSendMs?: number };
}

declare global {
  interface Window {
    /** Provided by the Electron preload, or created by the browser bridge. */
    softphone?: SoftphoneApi;
    /** For end-to-end tests: the media engine's statistics of a call. */
    __softphoneMedia?: MediaTestHook;
  }
}
