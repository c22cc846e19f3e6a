import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkAnswerSdp, checkOfferSdp, describeOffer, holdBackCandidates, normaliseSdp } from '../../../shared/sdp';
import type { Result } from '../../../shared/result';
import { chromiumAnswer, chromiumOffer, customerOffer, withLine, withoutLines, withoutMedia } from '../../fixtures/sdp';

const videoSection = ['m=video 9 UDP/TLS/RTP/SAVPF 96', 'c=IN IP4 0.0.0.0', 'a=mid:1', 'a=rtpmap:96 VP8/90000', ''].join('\r\n');

function expectRule(result: Result<unknown>, rule: RegExp): void {
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.error.code).toBe('invalid_input');
  expect(result.error.field).toBe('sdp');
  expect(result.error.message).toMatch(/^SDP: /);
  expect(result.error.message).toMatch(rule);
}

describe('normaliseSdp', () => {
  it('turns LF and lone CR line ends into CRLF', () => {
    expect(normaliseSdp('v=0\no=- 1 2 IN IP4 127.0.0.1\ns=-\n')).toBe('v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\n');
    expect(normaliseSdp('v=0\rs=-\r')).toBe('v=0\r\ns=-\r\n');
    expect(normaliseSdp('v=0\r\ns=-\nt=0 0\r')).toBe('v=0\r\ns=-\r\nt=0 0\r\n');
  });

  it('leaves a CRLF description byte for byte as it was', () => {
    expect(normaliseSdp(chromiumAnswer)).toBe(chromiumAnswer);
  });

  it('ends the last line too', () => {
    expect(normaliseSdp('v=0\r\ns=-')).toBe('v=0\r\ns=-\r\n');
  });

  it('changes nothing but line ends', () => {
    expect(normaliseSdp('v=0 \na=x:  y\t\n\nz=1\n')).toBe('v=0 \r\na=x:  y\t\r\n\r\nz=1\r\n');
    expect(normaliseSdp('')).toBe('');
  });

  it('is the CRLF join of the lines, whatever the line ends were, and idempotent', () => {
    const line = fc.string({ maxLength: 40 }).filter((s) => !/[\r\n]/.test(s));
    // A lone CR before an empty LF-ended line reads as one CRLF, so lone CRs are covered above only.
    const ending = fc.constantFrom('\n', '\r\n');
    fc.assert(
      fc.property(fc.array(fc.tuple(line, ending), { minLength: 1, maxLength: 20 }), (pairs) => {
        const input = pairs.map(([l, e]) => l + e).join('');
        const out = normaliseSdp(input);
        expect(out).toBe(pairs.map(([l]) => `${l}\r\n`).join(''));
        expect(normaliseSdp(out)).toBe(out);
      }),
    );
  });
});

describe('checkAnswerSdp', () => {
  it('accepts the answer Chromium makes to the customer offer', () => {
    expect(checkAnswerSdp(chromiumAnswer)).toEqual({ ok: true, value: null });
  });

  it('accepts LF line ends (checking does not depend on them)', () => {
    expect(checkAnswerSdp(chromiumAnswer.replaceAll('\r\n', '\n')).ok).toBe(true);
  });

  it('accepts setup and fingerprint at session level', () => {
    const moved = withLine(withLine(chromiumAnswer, 'a=setup:', null), 't=0 0', 't=0 0\r\na=setup:active');
    expect(checkAnswerSdp(moved).ok).toBe(true);
  });

  it('rejects an empty description and one that is not SDP', () => {
    expectRule(checkAnswerSdp(''), /is empty/);
    expectRule(checkAnswerSdp('hello\r\n'), /must start with "v=0"/);
  });

  it('rejects more than one m-line', () => {
    expectRule(checkAnswerSdp(chromiumAnswer + videoSection), /exactly one m-line \(found 2\)/);
  });

  it('rejects a description with no m-line', () => {
    expectRule(checkAnswerSdp(withoutMedia(chromiumAnswer)), /exactly one m-line \(found 0\)/);
  });

  it('rejects a non-audio m-line', () => {
    const video = chromiumAnswer.replace('m=audio 37436 UDP/TLS/RTP/SAVPF 111 126', 'm=video 37436 UDP/TLS/RTP/SAVPF 96');
    expectRule(checkAnswerSdp(video), /must be audio \(found "video"\)/);
  });

  it('requires the DTLS client role', () => {
    expectRule(checkAnswerSdp(withLine(chromiumAnswer, 'a=setup:', 'a=setup:passive')), /a=setup:active \(found a=setup:passive\)/);
    expectRule(checkAnswerSdp(withLine(chromiumAnswer, 'a=setup:', 'a=setup:actpass')), /a=setup:active/);
    expectRule(checkAnswerSdp(withLine(chromiumAnswer, 'a=setup:', null)), /a=setup:active \(found none\)/);
  });

  it('rejects the customer offer handed back as an answer', () => {
    expectRule(checkAnswerSdp(customerOffer), /a=setup:active \(found a=setup:actpass\)/);
  });

  it('rejects ice-lite', () => {
    expectRule(checkAnswerSdp(withLine(chromiumAnswer, 't=0 0', 't=0 0\r\na=ice-lite')), /full ICE, not a=ice-lite/);
  });

  it('requires a sha-256 fingerprint', () => {
    expectRule(checkAnswerSdp(withLine(chromiumAnswer, 'a=fingerprint:', null)), /DTLS fingerprint/);
    const sha1 = withLine(chromiumAnswer, 'a=fingerprint:', 'a=fingerprint:sha-1 4A:AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C:AB');
    expectRule(checkAnswerSdp(sha1), /sha-256 \(found "sha-1"\)/);
  });

  it('requires ICE credentials', () => {
    expectRule(checkAnswerSdp(withLine(chromiumAnswer, 'a=ice-ufrag:', null)), /a=ice-ufrag/);
    expectRule(checkAnswerSdp(withLine(chromiumAnswer, 'a=ice-pwd:', null)), /a=ice-pwd/);
  });

  it('requires at least one candidate, since nothing trickles afterwards', () => {
    expectRule(checkAnswerSdp(withoutLines(chromiumAnswer, 'a=candidate:')), /at least one ICE candidate/);
  });
});

describe('checkOfferSdp', () => {
  it('accepts a plain Chromium offer with one audio transceiver', () => {
    expect(checkOfferSdp(chromiumOffer)).toEqual({ ok: true, value: null });
  });

  it('accepts an offer whose fingerprint is not sha-256', () => {
    const sha1 = withLine(chromiumOffer, 'a=fingerprint:', 'a=fingerprint:sha-1 4A:AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C:AB');
    expect(checkOfferSdp(sha1).ok).toBe(true);
  });

  it('rejects a second m-line (a data channel or video)', () => {
    const withData = `${chromiumOffer}m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=mid:1\r\n`;
    expectRule(checkOfferSdp(withData), /exactly one m-line \(found 2\)/);
  });

  it('rejects a missing fingerprint, missing candidates and passive setup', () => {
    expectRule(checkOfferSdp(withLine(chromiumOffer, 'a=fingerprint:', null)), /the offer must carry a DTLS fingerprint/);
    expectRule(checkOfferSdp(withoutLines(chromiumOffer, 'a=candidate:')), /the offer must list at least one ICE candidate/);
    expectRule(checkOfferSdp(withLine(chromiumOffer, 'a=setup:', 'a=setup:passive')), /must not be a=setup:passive/);
  });
});

describe('describeOffer', () => {
  it('describes the customer offer', () => {
    const summary = describeOffer(customerOffer);
    expect(summary).toEqual({
      ok: true,
      value: {
        iceLite: true,
        setup: 'actpass',
        codecs: [
          { payload: 111, name: 'opus', rate: 48000, channels: 2 },
          { payload: 126, name: 'telephone-event', rate: 8000 },
        ],
        telephoneEventPayload: 126,
        candidateCount: 1,
        candidateTransports: ['udp'],
        candidateTypes: ['host'],
        fingerprintType: 'sha-256',
        direction: 'sendrecv',
      },
    });
  });

  it('picks telephone-event/8000 among several telephone-event rates', () => {
    const summary = describeOffer(chromiumOffer);
    expect(summary.ok && summary.value.telephoneEventPayload).toBe(126);
    expect(summary.ok && summary.value.iceLite).toBe(false);
    expect(summary.ok && summary.value.candidateTransports).toEqual(['udp', 'tcp']);
  });

  it('names the rule for something that is not a one-audio-line offer', () => {
    expectRule(describeOffer(chromiumOffer + videoSection), /exactly one m-line/);
  });
});

describe('holdBackCandidates', () => {
  it('takes every candidate out of the offer and keeps the rest of it, line for line', () => {
    const held = holdBackCandidates(customerOffer.replace('a=ice-ufrag:', 'a=end-of-candidates\r\na=ice-ufrag:'));
    expect(held.candidates).toEqual([
      { candidate: 'candidate:1 1 udp 2113937151 203.0.113.10 3480 typ host generation 0', sdpMid: 'audio', sdpMLineIndex: 0 },
    ]);
    expect(held.sdp).not.toMatch(/a=candidate|a=end-of-candidates/);
    expect(held.sdp).toBe(withoutLines(customerOffer, 'a=candidate:'));
    // What is left is still the customer's offer in every other respect.
    const summary = describeOffer(held.sdp);
    expect(summary.ok && summary.value.candidateCount).toBe(0);
    expect(summary.ok && summary.value.iceLite).toBe(true);
  });

  it('finds the m-line\'s mid even when it comes after the candidates, and keeps their order', () => {
    const sdp = `${withoutLines(chromiumOffer, 'a=mid:')}a=mid:7\r\n`;
    const held = holdBackCandidates(sdp);
    const inOffer = chromiumOffer.split('\r\n').filter((l) => l.startsWith('a=candidate:')).map((l) => l.slice(2));
    expect(held.candidates.map((c) => c.candidate)).toEqual(inOffer);
    expect(held.candidates.every((c) => c.sdpMid === '7' && c.sdpMLineIndex === 0)).toBe(true);
  });

  it('leaves an offer with no candidates as it was', () => {
    const bare = withoutLines(customerOffer, 'a=candidate:');
    expect(holdBackCandidates(bare)).toEqual({ sdp: bare, candidates: [] });
  });
});
