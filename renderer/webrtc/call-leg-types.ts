// What a call leg (call-leg.ts) is made of and tells: its phases, what it is built from, its events.
import type { IceConfig } from '../../shared/ice-servers';
import type { MediaText } from './media-text';

export type GatheringEnd = 'complete' | 'settled' | 'capped';

export type LegPhase =
  | { kind: 'preparing'; done: Promise<void> }
  | { kind: 'ready'; sdp: string }
  | { kind: 'answering' }
  | { kind: 'connecting' }
  | { kind: 'connected' }
  /** `reported`: the failure went out as a media fact; a preparation that failed is tried again at Answer. */
  | { kind: 'failed'; reason: MediaText; reported: boolean }
  | { kind: 'closed' };

/** The call's microphone: its track goes on the leg's one sender. */
export interface LegMicrophone {
  track: MediaStreamTrack;
  stream: MediaStream;
}

/** What a leg is built from once the microphone is open. */
export interface LegSetup extends LegMicrophone {
  ice: IceConfig;
}

/**
 * What an incoming call's leg is built from, each as it comes: the ICE configuration (normally at
 * hand at once) and the microphone (the slowest step). Undefined: the call closed meanwhile.
 */
export interface LegParts {
  ice: Promise<IceConfig | undefined>;
  microphone: Promise<LegMicrophone | undefined>;
}

export interface LegEvents {
  /** The customer's audio (fired while ringing already: nothing flows before ICE runs). */
  remoteStream(stream: MediaStream): void;
  /** The call's one audio sender, once the peer connection exists. */
  senderReady(sender: RTCRtpSender): void;
  connected(): void;
  /** A moment of the set-up passed (diagnostics: where a slow answer spent its time). */
  moment(moment: 'iceStartedAt' | 'iceConnectedAt' | 'mediaConnectedAt'): void;
  /** The path of a connected call went away (ICE disconnected); it comes back by itself or not at all. */
  pathLost(): void;
  failed(reason: MediaText): void;
}

export interface LegOptions {
  createPeerConnection: (config: RTCConfiguration) => RTCPeerConnection;
  gatherCapMs: number;
}
