// "Test my setup"'s network part: a throwaway peer connection gathers candidates with the calls' ICE
// servers. A relay candidate proves that a TURN server allocates for us (and says over which
// protocol we reach it), a server-reflexive one that UDP gets out. Nothing is sent to any peer: the
// connection never gets a remote description, and it is closed as soon as the answer is known.
import type { IceServer, IceTransportPolicy } from '../../shared/ice-servers';
import { watchIceGathering } from './ice-gathering';

/** How we reach the TURN server that handed out a relay candidate. */
export type RelayProtocol = 'udp' | 'tcp' | 'tls';

export interface GatheredCandidate {
  type: RTCIceCandidateType;
  /** Relay candidates only. */
  relayProtocol?: RelayProtocol;
}

export interface GatherOptions {
  /** Gathering ends here at the latest: an unreachable server would otherwise hold it for 20–40 s. */
  capMs: number;
  /** Aborting closes the connection at once. */
  signal: AbortSignal;
  /** True once the candidates so far answer the question: gathering stops early. */
  enough?(found: readonly GatheredCandidate[]): boolean;
}

export interface ProbeConfig {
  iceServers: IceServer[];
  iceTransportPolicy: IceTransportPolicy;
}

/** What Chromium's RTCIceCandidate has beyond the DOM typings (both are null where unknown). */
interface CandidateDetails {
  relayProtocol?: string | null;
  url?: string | null;
}

/**
 * A relay candidate's protocol to its TURN server. Chromium fills `relayProtocol` for TCP and TLS
 * allocations but leaves it null for UDP ones; the server URL the candidate came from says it then.
 */
export function relayProtocolOf(candidate: CandidateDetails): RelayProtocol | undefined {
  const stated = candidate.relayProtocol?.toLowerCase();
  if (stated === 'udp' || stated === 'tcp' || stated === 'tls') return stated;
  const url = candidate.url?.toLowerCase();
  if (!url) return undefined;
  if (url.startsWith('turns:')) return 'tls';
  if (!url.startsWith('turn:')) return undefined;
  return /[?&]transport=tcp\b/.test(url) ? 'tcp' : 'udp';
}

/** The candidates one gathering finds; the connection is closed when it resolves or rejects. */
export async function gatherCandidates(config: ProbeConfig, options: GatherOptions): Promise<GatheredCandidate[]> {
  options.signal.throwIfAborted();
  const pc = new RTCPeerConnection({ iceServers: config.iceServers, iceTransportPolicy: config.iceTransportPolicy });
  const found: GatheredCandidate[] = [];
  const watch = watchIceGathering(pc, { capMs: options.capMs });
  const stop = (): void => watch.cancel();
  options.signal.addEventListener('abort', stop);
  pc.addEventListener('icecandidate', (event) => {
    const candidate = event.candidate;
    if (!candidate?.type) return;
    const relayProtocol = candidate.type === 'relay' ? relayProtocolOf(candidate as RTCIceCandidate & CandidateDetails) : undefined;
    found.push(relayProtocol ? { type: candidate.type, relayProtocol } : { type: candidate.type });
    if (options.enough?.(found)) stop();
  });
  try {
    // A data channel is enough to make an offer with one m-line, so no microphone is opened for this.
    pc.createDataChannel('setup-check');
    await pc.setLocalDescription(await pc.createOffer());
    await watch.done;
    options.signal.throwIfAborted();
    return found;
  } finally {
    watch.cancel();
    options.signal.removeEventListener('abort', stop);
    pc.close();
  }
}
