// The session descriptions that reach a node (the service's offer or answer, a window's offer or
// answer) are checked before werift sees them, so that a bad one is refused with the rule it broke
// and the field it came in (`sdp`), as shared/sdp.ts refuses the app's own; and the node's own
// descriptions toward the windows take the service's shape, so that a window answers a node as it
// answers the service.
import sdpTransform from 'sdp-transform';
import type { RTCRtpCodecParameters } from 'werift';
import { err, errorText, ok, type Result } from '../../shared/result';
import { checkAnswerSdp, checkOfferSdp, describeOffer, normaliseSdp } from '../../shared/sdp';
import type { PayloadTypes } from '../media/rtp-output';
import { PTIME_MS } from './peer-config';

const sdpRule = (rule: string): Result<never> => err('invalid_input', `SDP: ${rule}`, { field: 'sdp' });

/** A description that passed the checks but that the peer connection refused. */
export const unusableSdp = (role: 'offer' | 'answer', e: unknown): Result<never> => sdpRule(`the ${role} could not be applied (${errorText(e)})`);

/** One of the node's own descriptions broke a rule: the node's fault, not the caller's. */
export const ownSdpBroken = (what: string, problem: string): Result<never> => err('media_failed', `${what}: ${problem}`);

/** Opus at 48 kHz is the one audio codec every leg carries. */
function requireOpus(sdp: string): Result<null> {
  const described = describeOffer(sdp);
  if (!described.ok) return described;
  if (!described.value.codecs.some((c) => c.name.toLowerCase() === 'opus' && c.rate === 48_000)) return sdpRule('must offer Opus (opus/48000/2)');
  return ok(null);
}

/** An offer from the service or a window: one audio m-line with Opus, a fingerprint, ICE credentials, candidates, not passive. */
export function checkRemoteOffer(sdp: string): Result<null> {
  const checked = checkOfferSdp(sdp);
  return checked.ok ? requireOpus(sdp) : checked;
}

/**
 * A window's answer to the node's offer: as the window checks it before it leaves (full ICE, DTLS
 * client a=setup:active, sha-256, candidates), with Opus.
 */
export function checkWindowAnswer(sdp: string): Result<null> {
  const checked = checkAnswerSdp(sdp);
  return checked.ok ? requireOpus(sdp) : checked;
}

/**
 * The customer's answer to the node's offer (an outgoing call): the service's side is ice-lite,
 * takes a DTLS role (active on the real service, RFC 5763 5: never actpass in an answer), and
 * lists its candidates.
 */
export function checkServiceAnswer(sdp: string): Result<null> {
  const described = describeOffer(sdp);
  if (!described.ok) return described;
  const { setup, fingerprintType, candidateCount } = described.value;
  if (setup !== 'active' && setup !== 'passive') return sdpRule(`an answer must take a DTLS role, a=setup:active or a=setup:passive (found ${setup ? `a=setup:${setup}` : 'none'})`);
  if (!fingerprintType) return sdpRule('the answer must carry a DTLS fingerprint (a=fingerprint)');
  const session = sdpTransform.parse(sdp);
  const media = session.media[0]!;
  if (!(media.iceUfrag ?? session.iceUfrag) || !(media.icePwd ?? session.icePwd)) return sdpRule('the answer must carry a=ice-ufrag and a=ice-pwd');
  if (candidateCount === 0) return sdpRule('the answer must list at least one ICE candidate (no trickle exists)');
  return requireOpus(sdp);
}

/**
 * The node's description toward a window in the service's shape (protocol.md "Media", as
 * sandbox/customer-peer.ts makes it): `a=ice-lite` at session level, `a=ptime:20`, no
 * `a=ice-options:trickle`. Credentials, fingerprint and candidates are untouched, so the peer's own
 * state still matches what is sent.
 */
export function shapeLikeService(sdp: string): string {
  const session = sdpTransform.parse(sdp);
  session.icelite = 'ice-lite';
  for (const media of session.media) {
    delete (media as { icelite?: string }).icelite;
    delete media.iceOptions;
    if (media.type === 'audio') media.ptime = PTIME_MS;
  }
  delete session.iceOptions;
  return normaliseSdp(sdpTransform.write(session));
}

/** The payload types a leg negotiated for Opus and telephone-event/8000; undefined when it has no Opus. */
export function negotiatedPayloadTypes(codecs: readonly RTCRtpCodecParameters[]): PayloadTypes | undefined {
  const audio = codecs.find((c) => c.mimeType.toLowerCase() === 'audio/opus');
  if (!audio) return undefined;
  const event = codecs.find((c) => c.mimeType.toLowerCase() === 'audio/telephone-event' && c.clockRate === 8000);
  return event ? { audio: audio.payloadType, event: event.payloadType } : { audio: audio.payloadType };
}
