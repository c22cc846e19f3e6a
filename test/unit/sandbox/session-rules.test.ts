// The rules the service applies to the business's session descriptions (protocol.md "Media").
import { describe, expect, test } from 'vitest';
import { sessionProblems } from '../../../sandbox/session-rules';
import { CustomerPeer, shapeServiceSdp } from '../../../sandbox/customer-peer';
import { loadCustomerVoice } from '../../../sandbox/customer-voice';
import { createLogger } from '../../../shared/log';
import { chromiumAnswer, chromiumOffer, debianChromiumAnswer, debianChromiumOffer, withoutMedia } from '../../fixtures/sdp';

describe('sessionProblems', () => {
  test('what Chromium produces passes: its answer as an answer, its offer as an offer', () => {
    expect(sessionProblems(chromiumAnswer, 'answer')).toEqual([]);
    expect(sessionProblems(chromiumOffer, 'offer')).toEqual([]);
    expect(sessionProblems(chromiumAnswer.replace(/\r\n/g, '\n'), 'answer')).toEqual([]);
    expect(sessionProblems(debianChromiumAnswer, 'answer')).toEqual([]);
    expect(sessionProblems(debianChromiumOffer, 'offer')).toEqual([]);
  });

  test('an offer is not an answer and an answer is not an offer (DTLS role)', () => {
    expect(sessionProblems(chromiumOffer, 'answer')).toEqual([expect.stringMatching(/a=setup:active \(found a=setup:actpass\)/)]);
    expect(sessionProblems(chromiumAnswer, 'offer')).toEqual([expect.stringMatching(/a=setup:actpass \(found a=setup:active\)/)]);
  });

  test.each([
    ['not an SDP', 'hello', /v=0/],
    ['no media', withoutMedia(chromiumAnswer), /exactly one m-line \(found 0\)/],
    ['video instead of audio', chromiumAnswer.replace('m=audio', 'm=video'), /must be audio/],
    ['a rejected m-line', chromiumAnswer.replace(/m=audio [0-9]+/, 'm=audio 0'), /port 0/],
    ['plain RTP', chromiumAnswer.replace('UDP/TLS/RTP/SAVPF', 'RTP/AVP'), /SAVPF/],
    ['no Opus', chromiumAnswer.replace('a=rtpmap:111 opus/48000/2', 'a=rtpmap:111 PCMU/8000'), /Opus/],
    ['no ICE password', chromiumAnswer.replace(/a=ice-pwd:[^\r]*\r\n/, ''), /ice-pwd/],
    ['no setup', chromiumAnswer.replace('a=setup:active\r\n', ''), /found none/],
  ])('%s is refused', (_what, sdp, reason) => {
    const problems = sessionProblems(sdp, 'answer');
    expect(problems.some((p) => reason.test(p)), problems.join(' | ')).toBe(true);
  });

  test('session-level setup and fingerprint count like media-level ones', () => {
    const moved = chromiumAnswer.replace('a=setup:active\r\n', '')
      .replace(/(a=fingerprint:[^\r]*)\r\n/, '')
      .replace('t=0 0\r\n', `t=0 0\r\na=setup:active\r\n${/a=fingerprint:[^\r]*/.exec(chromiumAnswer)![0]}\r\n`);
    expect(sessionProblems(moved, 'answer')).toEqual([]);
  });
});

describe('the customer\u2019s own descriptions', () => {
  test('the sandbox\u2019s offer is the service\u2019s shape, which a business must never send back', async () => {
    const peer = new CustomerPeer({ host: '127.0.0.1', voice: loadCustomerVoice().voice, logger: createLogger('test') });
    try {
      const offer = await peer.makeOffer();
      expect(offer.ok).toBe(true);
      const sdp = offer.ok ? offer.value : '';
      expect(sessionProblems(sdp, 'offer')).toEqual([expect.stringMatching(/ice-lite/)]);
      expect(shapeServiceSdp(sdp)).toBe(sdp);
    } finally {
      await peer.close();
    }
  });
});
