// Real session descriptions. The offer is shaped like the customer's offer in protocol.md (ice-lite,
// full, inline host candidate, actpass, BUNDLE, one audio m-line: Opus 111 and telephone-event 126);
// the answer and the outgoing offer are what Chromium 156 produced for it, as produced.
const crlf = (lines: string[]): string => `${lines.join('\r\n')}\r\n`;

export const customerOffer = crlf([
  'v=0',
  'o=- 1730000000000 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'a=ice-lite',
  'a=group:BUNDLE audio',
  'a=msid-semantic: WMS *',
  'm=audio 3480 UDP/TLS/RTP/SAVPF 111 126',
  'c=IN IP4 203.0.113.10',
  'a=rtcp:9 IN IP4 0.0.0.0',
  'a=candidate:1 1 udp 2113937151 203.0.113.10 3480 typ host generation 0',
  'a=ice-ufrag:Lx7q',
  'a=ice-pwd:3nX0uTzQhQm6dFJ5kGq9bVvR',
  'a=fingerprint:sha-256 8B:87:09:8A:5D:C2:F3:33:EF:C5:B1:F6:84:3A:3D:D6:A3:E2:9C:17:4C:E7:46:3B:1B:CE:84:98:DD:8E:AF:7B',
  'a=setup:actpass',
  'a=mid:audio',
  'a=sendrecv',
  'a=rtcp-mux',
  'a=rtpmap:111 opus/48000/2',
  'a=fmtp:111 minptime=10;useinbandfec=1',
  'a=rtpmap:126 telephone-event/8000',
  'a=ptime:20',
  'a=ssrc:2240254567 cname:customer',
]);

export const chromiumAnswer = crlf([
  'v=0',
  'o=- 2461651676997509801 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'a=group:BUNDLE audio',
  'a=msid-semantic: WMS b15d528a-d867-4ab5-b5ca-8b1a8c73b0de',
  'm=audio 37436 UDP/TLS/RTP/SAVPF 111 126',
  'c=IN IP4 192.0.2.2',
  'a=rtcp:9 IN IP4 0.0.0.0',
  'a=candidate:3302522596 1 udp 2122194687 192.0.2.2 37436 typ host generation 0 network-id 1',
  'a=candidate:264158980 1 udp 2122265343 fd00::2 51480 typ host generation 0 network-id 2',
  'a=candidate:980593264 1 tcp 1518214911 192.0.2.2 9 typ host tcptype active generation 0 network-id 1',
  'a=ice-ufrag:s1/4',
  'a=ice-pwd:djxjxP8Gl8ui0EwUyNZuOBwv',
  'a=ice-options:trickle',
  'a=fingerprint:sha-256 BE:2A:53:35:A6:B2:27:8E:47:69:7A:B3:3A:87:72:6A:D4:22:34:3C:92:FE:0E:06:0F:2C:A6:90:0B:1A:72:CC',
  'a=setup:active',
  'a=mid:audio',
  'a=sendrecv',
  'a=msid:b15d528a-d867-4ab5-b5ca-8b1a8c73b0de 023201ae-ea5c-407d-a13d-7c092dea88e5',
  'a=rtcp-mux',
  'a=rtpmap:111 opus/48000/2',
  'a=fmtp:111 minptime=10;useinbandfec=1',
  'a=rtpmap:126 telephone-event/8000',
  'a=ssrc:2643474568 cname:B5yYVo95a0zJSPsX',
]);

export const chromiumOffer = crlf([
  'v=0',
  'o=- 5588154633396113191 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'a=group:BUNDLE 0',
  'a=extmap-allow-mixed',
  'a=msid-semantic: WMS b15d528a-d867-4ab5-b5ca-8b1a8c73b0de',
  'm=audio 51899 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126',
  'c=IN IP4 192.0.2.2',
  'a=rtcp:9 IN IP4 0.0.0.0',
  'a=candidate:329987137 1 udp 2122194687 192.0.2.2 51899 typ host generation 0 network-id 1',
  'a=candidate:1835325145 1 tcp 1518214911 192.0.2.2 9 typ host tcptype active generation 0 network-id 1',
  'a=ice-ufrag:l87I',
  'a=ice-pwd:cE951OXk0Y17Wn3sJBMVJQfg',
  'a=ice-options:trickle',
  'a=fingerprint:sha-256 36:67:0F:87:51:E3:1F:5C:5B:EE:25:A5:58:6D:68:C1:7C:F3:55:F0:39:80:3B:EC:E1:E1:2F:7C:A5:31:1D:A7',
  'a=setup:actpass',
  'a=mid:0',
  'a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level',
  'a=sendrecv',
  'a=msid:b15d528a-d867-4ab5-b5ca-8b1a8c73b0de 023201ae-ea5c-407d-a13d-7c092dea88e5',
  'a=rtcp-mux',
  'a=rtcp-rsize',
  'a=rtpmap:111 opus/48000/2',
  'a=rtcp-fb:111 transport-cc',
  'a=fmtp:111 minptime=10;useinbandfec=1',
  'a=rtpmap:63 red/48000/2',
  'a=fmtp:63 111/111',
  'a=rtpmap:9 G722/8000',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:13 CN/8000',
  'a=rtpmap:110 telephone-event/48000',
  'a=rtpmap:126 telephone-event/8000',
  'a=ssrc:3520239646 cname:aWnLTkn8riL76qwh',
]);

/** Replaces the one line that starts with `prefix` (or removes it when `next` is null). */
export function withLine(sdp: string, prefix: string, next: string | null): string {
  const lines = sdp.split('\r\n');
  const at = lines.findIndex((l) => l.startsWith(prefix));
  if (at < 0) throw new Error(`no line starts with ${prefix}`);
  if (next === null) lines.splice(at, 1);
  else lines[at] = next;
  return lines.join('\r\n');
}

/** Removes every line that starts with `prefix`. */
export const withoutLines = (sdp: string, prefix: string): string =>
  sdp
    .split('\r\n')
    .filter((l) => !l.startsWith(prefix))
    .join('\r\n');
