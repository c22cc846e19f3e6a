// What the real service demands of the business's session descriptions (protocol.md "Media"). The
// service refuses a broken SDP with error 100 and the reason in error_data, so the sandbox does too:
// what passes here must pass there.
import sdpTransform from 'sdp-transform';

type Role = 'answer' | 'offer';

/** Problems with the business's SDP, empty when it is acceptable. */
export function sessionProblems(sdp: string, role: Role): string[] {
  if (!/^v=0\r?\n/.test(sdp)) return ['must start with "v=0"'];
  let session: sdpTransform.SessionDescription;
  try {
    session = sdpTransform.parse(sdp);
  } catch (e) {
    return [`does not parse: ${(e as Error).message}`];
  }
  const problems: string[] = [];
  const media = session.media ?? [];
  if (media.length !== 1) problems.push(`must have exactly one m-line (found ${media.length})`);
  const audio = media[0];
  if (!audio) return problems;
  if (audio.type !== 'audio') problems.push(`the m-line must be audio (found ${audio.type})`);
  if (audio.port === 0) problems.push('the audio m-line is rejected (port 0)');
  if (!/UDP\/TLS\/RTP\/SAVPF/.test(audio.protocol)) problems.push(`the audio m-line must use UDP/TLS/RTP/SAVPF (found ${audio.protocol})`);
  if (!audio.rtp.some((r) => r.codec.toLowerCase() === 'opus' && r.rate === 48000)) problems.push('must offer Opus (opus/48000/2)');

  const fingerprint = audio.fingerprint ?? session.fingerprint;
  if (!fingerprint) problems.push('must carry a DTLS fingerprint (a=fingerprint)');
  else if (fingerprint.type.toLowerCase() !== 'sha-256') problems.push(`the fingerprint must be sha-256 (found ${fingerprint.type})`);

  const setup = audio.setup ?? session.setup;
  const wanted = role === 'answer' ? 'active' : 'actpass';
  if (setup !== wanted) {
    problems.push(
      role === 'answer'
        ? `must be a DTLS client: a=setup:active (found ${setup ? `a=setup:${setup}` : 'none'}); the service is the DTLS server`
        : `must offer a=setup:actpass (found ${setup ? `a=setup:${setup}` : 'none'})`,
    );
  }
  // The service's side is ICE-lite, so the business must run full ICE (protocol.md).
  if (session.icelite || (audio as { icelite?: string }).icelite) problems.push('must not be ice-lite: the service is ice-lite, the business runs full ICE');
  if (!(audio.iceUfrag ?? session.iceUfrag) || !(audio.icePwd ?? session.icePwd)) problems.push('must carry ICE credentials (a=ice-ufrag and a=ice-pwd)');
  return problems;
}
