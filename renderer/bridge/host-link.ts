// The renderer's link to the host that implements SoftphoneApi. In Electron that is IPC to the
// main process, which lives as long as the window does; in the browser host it is a WebSocket that
// can drop and come back, and the UI shows which.
import type { SoftphoneApi, Unsubscribe } from '../../shared/api';
import type { RingtoneState } from '../sound/ringtone';
import type { CallStats, CandidatePath } from '../webrtc/audio-stats';
import type { AudioRoute } from '../webrtc/call-audio';
import type { MediaSessionReport } from '../webrtc/call-media';
import type { CallTimings } from '../webrtc/media-engine';
import type { QualityView } from '../webrtc/media-health';
import type { MonitorReport } from '../webrtc/monitor-media';

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

/**
 * The media probe of end-to-end tests and benchmarks (`window.__softphoneMedia`, built in main.tsx).
 * Every question about one call names it by its localId; there is no "newest call" default.
 */
export interface MediaTestHook {
  /** The localId of the call with this gateway call id, as the window's store has it. */
  localIdOf(callId: string): string | undefined;
  stats(localId: string): Promise<CallStats>;
  /** When each step of a call's set-up happened in the window (moments in unix ms, not durations): the click, the answer or offer ready, ICE started and connected, media connected. */
  timings(localId: string): CallTimings;
  /** The microphone track (deviceId, label) and the remote audio's sinkId of a call. */
  audioRoute(localId: string): AudioRoute | undefined;
  /** Where the ringtone really plays ('' = default) and whether it plays. */
  ringer(): { sinkId: string | undefined; state: RingtoneState };
  /** What a ring plays now: the ringtone, or the call-waiting tone while another call is under way. */
  ringSound(): 'ring' | 'call-waiting';
  /** Where the hold music comes from: the bundled file, or rendered here when it could not be loaded. */
  holdMusic(): 'file' | 'rendered' | undefined;
  /** Every call's media: phase, peer connection states, microphone, hold. */
  sessions(): MediaSessionReport[];
  /** A call's quality now: the last second's sample and MOS, warnings, "Reconnecting…", the summary so far. */
  quality(localId: string): QualityView | undefined;
  /** The selected candidate pair's types (relay, host, …) of a call. */
  candidatePath(localId: string): Promise<CandidatePath | undefined>;
  /** A supervisor's leg of the call it joined: phase, peer connection, microphone (disabled while listening), audio; its microphone's route. */
  monitor(): (MonitorReport & { route?: AudioRoute }) | undefined;
}

declare global {
  interface Window {
    /** Provided by the Electron preload, or created by the browser bridge. */
    softphone?: SoftphoneApi;
    /** For end-to-end tests and benchmarks: the media engine's view of the calls. */
    __softphoneMedia?: MediaTestHook;
  }
}
