// Session descriptions on the business calling leg (protocol.md, "Media"). The customer's offer is
// ice-lite, non-trickle, one audio m-line; our answer must be full ICE, DTLS client, sha-256, with
// its candidates inline, because no trickle and no renegotiation exist on this leg. These checks run
// before an SDP leaves the app, so a bad description fails here with the rule it broke instead of
// as an opaque gateway error 100 or a silent call.
import { parse, type MediaDescription, type SessionDescription } from 'sdp-transform';
import { err, ok, type Result, errorText } from './result';

/** CRLF line ends and nothing else (protocol.md: "use the SDP as produced"). */
export function normaliseSdp(sdp: string): string {
  if (sdp === '') return '';
  const lines = sdp.split(/\r\n|\r|\n/);
  // A trailing line end leaves an empty last element; RFC 4566 ends every line, the last one too.
  if (lines[lines.length - 1] === '') lines.pop();
  return `${lines.join('\r\n')}\r\n`;
}

const sdpError = (rule: string): Result<never> => err('invalid_input', `SDP: ${rule}`, { field: 'sdp' });

interface ParsedSdp {
  session: SessionDescription;
  media: MediaDescription;
}

/** Parses and insists on the one shape this leg allows: exactly one m-line, and it is audio. */
function parseSingleAudio(sdp: string): Result<ParsedSdp> {
  if (typeof sdp !== 'string' || sdp.trim() === '') return sdpError('is empty');
  if ((sdp.split(/\r\n|\r|\n/, 1)[0] ?? '').trim() !== 'v=0') return sdpError('must start with "v=0"');
  let session: SessionDescription;
  try {
    session = parse(sdp);
  } catch (e) {
    return sdpError(`cannot be parsed (${errorText(e)})`);
  }
  const count = session.media?.length ?? 0;
  if (count !== 1) return sdpError(`must have exactly one m-line (found ${count})`);
  const media = session.media[0]!;
  if (media.type !== 'audio') return sdpError(`the m-line must be audio (found "${media.type}")`);
  return ok({ session, media });
}

// Attributes that may sit at session or media level; the media level wins (RFC 8866 5).
const fingerprintOf = ({ session, media }: ParsedSdp) => media.fingerprint ?? session.fingerprint;
const setupOf = ({ session, media }: ParsedSdp) => media.setup ?? session.setup;
const iceUfragOf = ({ session, media }: ParsedSdp) => media.iceUfrag ?? session.iceUfrag;
const icePwdOf = ({ session, media }: ParsedSdp) => media.icePwd ?? session.icePwd;

function checkCommon(parsed: ParsedSdp, role: 'offer' | 'answer', requireSha256: boolean): Result<null> {
  const fingerprint = fingerprintOf(parsed);
  if (!fingerprint) return sdpError(`the ${role} must carry a DTLS fingerprint (a=fingerprint)`);
  if (requireSha256 && fingerprint.type.toLowerCase() !== 'sha-256') {
    return sdpError(`the fingerprint must be sha-256 (found "${fingerprint.type}")`);
  }
  if (!iceUfragOf(parsed)) return sdpError(`the ${role} must carry a=ice-ufrag`);
  if (!icePwdOf(parsed)) return sdpError(`the ${role} must carry a=ice-pwd`);
  // Non-trickle: the description is all the other side ever learns about our addresses.
  if ((parsed.media.candidates?.length ?? 0) === 0) {
    return sdpError(`the ${role} must list at least one ICE candidate (no trickle exists: gather before sending)`);
  }
  return ok(null);
}

/**
 * The local answer to a customer's offer (protocol.md): one audio m-line, DTLS client
 * (a=setup:active), a sha-256 fingerprint, full ICE (never a=ice-lite), ICE credentials, and at
 * least one candidate.
 */
export function checkAnswerSdp(sdp: string): Result<null> {
  const parsed = parseSingleAudio(sdp);
  if (!parsed.ok) return parsed;
  const setup = setupOf(parsed.value);
  if (setup !== 'active') return sdpError(`the answer must be the DTLS client, a=setup:active (found ${setup ? `a=setup:${setup}` : 'none'})`);
  // The customer's side is ice-lite; two lite agents can never connect.
  if (parsed.value.session.icelite) return sdpError('the answer must use full ICE, not a=ice-lite');
  return checkCommon(parsed.value, 'answer', true);
}

/** A local offer for a business-initiated call: one audio m-line, a fingerprint, ICE credentials, candidates. */
export function checkOfferSdp(sdp: string): Result<null> {
  const parsed = parseSingleAudio(sdp);
  if (!parsed.ok) return parsed;
  // RFC 5763 5 has a DTLS-SRTP offerer say actpass; passive would leave the answerer no valid role.
  if (setupOf(parsed.value) === 'passive') return sdpError('an offer must not be a=setup:passive (use actpass)');
  return checkCommon(parsed.value, 'offer', false);
}

export interface OfferSummary {
  iceLite: boolean;
  setup?: string;
  /** Codecs of the one audio m-line in payload order, e.g. "opus/48000/2", "telephone-event/8000". */
  codecs: { payload: number; name: string; rate?: number; channels?: number }[];
  /** Payload type of telephone-event/8000 (RFC 4733 DTMF), when offered. */
  telephoneEventPayload?: number;
  candidateCount: number;
  /** Transports of the candidates, lower-case ("udp", "tcp"). */
  candidateTransports: string[];
  /** Types of the candidates ("host", "srflx", "relay"). */
  candidateTypes: string[];
  fingerprintType?: string;
  direction?: string;
}

/** What an offer says about itself, for diagnostics and for choosing how long to gather. */
export function describeOffer(sdp: string): Result<OfferSummary> {
  const parsed = parseSingleAudio(sdp);
  if (!parsed.ok) return parsed;
  const { session, media } = parsed.value;
  const codecs = (media.rtp ?? []).map((r) => ({
    payload: r.payload,
    name: r.codec,
    ...(r.rate !== undefined ? { rate: r.rate } : {}),
    ...(r.encoding !== undefined ? { channels: Number(r.encoding) } : {}),
  }));
  const dtmf = codecs.find((c) => c.name.toLowerCase() === 'telephone-event' && c.rate === 8000);
  const candidates = media.candidates ?? [];
  const summary: OfferSummary = {
    iceLite: session.icelite !== undefined,
    codecs,
    candidateCount: candidates.length,
    candidateTransports: [...new Set(candidates.map((c) => c.transport.toLowerCase()))],
    candidateTypes: [...new Set(candidates.map((c) => c.type.toLowerCase()))],
  };
  const setup = setupOf(parsed.value);
  if (setup !== undefined) summary.setup = setup;
  if (dtmf) summary.telephoneEventPayload = dtmf.payload;
  const fingerprint = fingerprintOf(parsed.value);
  if (fingerprint) summary.fingerprintType = fingerprint.type.toLowerCase();
  const direction = media.direction ?? session.direction;
  if (direction !== undefined) summary.direction = direction;
  return ok(summary);
}

/** One remote candidate held back from a description, in the shape addIceCandidate takes. */
export interface HeldCandidate {
  candidate: string;
  sdpMid: string | null;
  sdpMLineIndex: number;
}

/**
 * The customer's offer without its candidates, and the candidates apart. Applied this way, the
 * offer lets the agent's side gather and make its answer while nothing is sent to the customer:
 * ICE checks (and DTLS after them) start only when the candidates are added. In a team this is what
 * keeps an agent who loses the claim from ever touching the customer's media.
 */
export function holdBackCandidates(sdp: string): { sdp: string; candidates: HeldCandidate[] } {
  const lines = sdp.split(/\r\n|\r|\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  const kept: string[] = [];
  const found: { line: string; mLineIndex: number }[] = [];
  const mids: (string | null)[] = [];
  let mLineIndex = -1;
  for (const line of lines) {
    if (line.startsWith('m=')) {
      mLineIndex += 1;
      mids.push(null);
    } else if (mLineIndex >= 0 && line.startsWith('a=mid:')) {
      mids[mLineIndex] = line.slice('a=mid:'.length).trim();
    }
    if (mLineIndex >= 0 && line.startsWith('a=candidate:')) {
      found.push({ line: line.slice('a='.length), mLineIndex });
      continue;
    }
    // Nothing more will come on this leg, but "no more candidates" is not true of the held-back offer.
    if (line === 'a=end-of-candidates') continue;
    kept.push(line);
  }
  return {
    sdp: kept.length === 0 ? '' : `${kept.join('\r\n')}\r\n`,
    candidates: found.map(({ line, mLineIndex: index }) => ({ candidate: line, sdpMid: mids[index] ?? null, sdpMLineIndex: index })),
  };
}
