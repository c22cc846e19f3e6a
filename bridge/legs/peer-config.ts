// How every peer connection of a node is made: one audio m-line with Opus 111 and telephone-event
// 126 (protocol.md "Media"), no header extensions, BUNDLE, and the node's network: the address its
// candidates carry, the one local address it binds, its RTP port range and its TURN servers.
import { isIP } from 'node:net';
import { RTCRtpCodecParameters, type RTCPeerConnectionConfig, type RTCIceServer } from 'werift';
import { FRAME_MS, SAMPLE_RATE } from '../media/audio-format';

export const OPUS_PAYLOAD_TYPE = 111;
export const TELEPHONE_EVENT_PAYLOAD_TYPE = 126;

/** Where the node's media is reached and sent from. */
export interface LegNetwork {
  /** The address in the node's candidates: where customers and windows send its media (an IP address). */
  publicAddress?: string;
  /** The one local address the node's sockets bind; all interfaces when absent. */
  bindAddress?: string;
  /** The UDP ports its sockets may take, both ends included. */
  rtpPorts?: { from: number; to: number };
  /** STUN and TURN servers, for a node that must reach the service through TURN. */
  iceServers?: RTCIceServer[];
}

/** The network's settings that cannot work, as one sentence each; empty when it can. */
export function networkProblems(network: LegNetwork): string[] {
  const problems: string[] = [];
  const { publicAddress, bindAddress, rtpPorts } = network;
  if (publicAddress !== undefined && isIP(publicAddress) === 0) problems.push(`publicAddress must be an IP address (found "${publicAddress}")`);
  if (bindAddress !== undefined && isIP(bindAddress) === 0) problems.push(`bindAddress must be an IP address (found "${bindAddress}")`);
  if (publicAddress !== undefined && bindAddress !== undefined && isIP(publicAddress) !== isIP(bindAddress)) {
    problems.push('publicAddress and bindAddress must be of one IP version');
  }
  if (rtpPorts) {
    const { from, to } = rtpPorts;
    // werift takes a range of at least two ports.
    if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1024 || to > 65_535 || from >= to) {
      problems.push(`rtpPorts must be whole numbers with 1024 ≤ from < to ≤ 65535 (found ${from}–${to})`);
    }
  }
  return problems;
}

const codecs = (): RTCRtpCodecParameters[] => [
  new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: SAMPLE_RATE, channels: 2, payloadType: OPUS_PAYLOAD_TYPE, parameters: 'minptime=10;useinbandfec=1' }),
  new RTCRtpCodecParameters({ mimeType: 'audio/telephone-event', clockRate: 8000, payloadType: TELEPHONE_EVENT_PAYLOAD_TYPE }),
];

/** `a=ptime` of every description the node makes. */
export const PTIME_MS = FRAME_MS;

/**
 * A peer connection's configuration. `iceLite`: the node's side of an agent's leg (the window runs
 * full ICE against it, as against the service); the customer's leg runs full ICE against the
 * service's ice-lite.
 */
export function peerConfig(network: LegNetwork, iceLite: boolean): RTCPeerConnectionConfig {
  const { publicAddress, bindAddress, rtpPorts, iceServers } = network;
  const advertised = publicAddress ?? bindAddress;
  const config: RTCPeerConnectionConfig = {
    iceLite,
    iceServers: iceServers ?? [],
    bundlePolicy: 'max-bundle',
    codecs: { audio: codecs(), video: [] },
    headerExtensions: { audio: [], video: [] },
  };
  if (advertised !== undefined) {
    // One host candidate with the advertised address; its socket on the bound address (all
    // interfaces when none): no interface scan, as the sandbox's customers (sandbox/customer-peer.ts).
    config.iceUseIpv4 = false;
    config.iceUseIpv6 = false;
    config.iceAdditionalHostAddresses = [advertised];
    if (bindAddress !== undefined) config.iceInterfaceAddresses = isIP(bindAddress) === 6 ? { udp6: bindAddress } : { udp4: bindAddress };
  } else {
    config.iceUseIpv4 = true;
    config.iceUseIpv6 = false;
  }
  if (rtpPorts) config.icePortRange = [rtpPorts.from, rtpPorts.to];
  return config;
}
