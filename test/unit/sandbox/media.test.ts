// Real media between a simulated customer and a second werift peer playing the business: DTLS-SRTP,
// Opus both ways, and the customer's report of what it heard.
import sdpTransform from 'sdp-transform';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { renderHoldMusic } from '../../../shared/hold-music-render';
import type { SandboxCallReport } from '../../../shared/sandbox';
import type { SandboxServer } from '../../../sandbox/server';
import { BusinessPeer, readWavAt48k } from './business-peer';
import { callItem, control, eventsFor, eventually, gatewayPost, signatureValid, startTestSandbox, startWebhookReceiver, type WebhookReceiver } from './harness';

let relay: WebhookReceiver;
let sandbox: SandboxServer;
const peers: BusinessPeer[] = [];

beforeAll(async () => {
  relay = await startWebhookReceiver();
  sandbox = await startTestSandbox(relay);
});
afterEach(async () => {
  await Promise.all(peers.splice(0).map((p) => p.close()));
});
afterAll(async () => {
  await sandbox?.close();
  await relay?.close();
});

const answering = () => sandbox.customers.find((c) => c.behaviour === 'answers')!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const report = async (box: SandboxServer, callId: string) => (await control<SandboxCallReport>(box, `/control/calls/${callId}`)).body;
const business = (options?: { silent?: boolean }) => {
  const peer = new BusinessPeer(options);
  peers.push(peer);
  return peer;
};

/** A customer calls; the business answers with a real peer through /accept. */
async function answeredIncomingCall(box: SandboxServer, peer: BusinessPeer, number = answering().number): Promise<{ callId: string; answeredAt: number }> {
  const callId = (await control<{ callId: string }>(box, '/control/incoming', { number })).body.callId;
  const offer = (await eventually('the connect webhook', () => callItem(relay, callId, 'connect'))).call.session!.sdp;
  // Nothing reaches the customer while it rings (protocol.md); the business's ICE checks start
  // with its local answer, the moment the agent answers.
  expect((await report(box, callId)).firstPacketAt).toBeUndefined();
  const answeredAt = Date.now();
  const answer = await peer.answer(offer);
  const accepted = await gatewayPost(box, 'accept', { messaging_product: 'chatapp', call_id: callId, action: 'accept', session: { sdp_type: 'answer', sdp: answer } });
  expect(accepted.body).toEqual({ messaging_product: 'chatapp', success: true });
  return { callId, answeredAt };
}

describe('incoming call, answered by the business', () => {
  test('audio flows both ways; terminate ends it with start_time, end_time and duration', async () => {
    const peer = business();
    const { callId, answeredAt } = await answeredIncomingCall(sandbox, peer);

    const heard = await eventually('the customer to hear the business', async () => {
      const r = await report(sandbox, callId);
      return r.framesHeard > 10 && r.heardRms > 0.01 ? r : undefined;
    });
    expect(heard.state).toBe('connected');
    expect(heard.firstPacketAt).toBeGreaterThanOrEqual(answeredAt);
    expect(heard.firstHeardAt).toBeGreaterThanOrEqual(heard.firstPacketAt!);
    expect(heard.heardRms).toBeLessThanOrEqual(1);
    expect(heard.framesSent).toBeGreaterThan(0);
    // The business's ICE username fragment, from its answer: the one peer that ever checked.
    const answerUfrag = /a=ice-ufrag:(\S+)/.exec(peer.pc.localDescription?.sdp ?? '')?.[1];
    expect(heard.checkedBy).toEqual([answerUfrag]);
    await eventually('the business to hear the customer', () => peer.framesHeard > 10 && peer.heardRms > 0.01);
    expect(heard.requests.map((r) => r.action)).toEqual(['accept']);

    const ended = await gatewayPost(sandbox, 'terminate', { messaging_product: 'chatapp', call_id: callId, action: 'terminate' });
    expect(ended.body).toEqual({ messaging_product: 'chatapp', success: true });
    const { call, hook } = await eventually('the terminate webhook', () => callItem(relay, callId, 'terminate'));
    expect(signatureValid(hook)).toBe(true);
    expect(call.status).toBe('COMPLETED');
    expect(call.start_time).toMatch(/^[0-9]+$/);
    expect(call.end_time).toMatch(/^[0-9]+$/);
    expect(Number(call.end_time)).toBeGreaterThanOrEqual(Number(call.start_time));
    expect(Number.isInteger(call.duration)).toBe(true);
    const final = await report(sandbox, callId);
    expect(final.state).toBe('ended');
    expect(final.requests.map((r) => r.action)).toEqual(['accept', 'terminate']);
  });

  test('DTMF digits from the business are heard (RFC 4733 on payload type 126)', async () => {
    const peer = business();
    const { callId } = await answeredIncomingCall(sandbox, peer);
    await eventually('media', async () => (await report(sandbox, callId)).framesHeard > 0);
    peer.sendDigit(4);
    peer.sendDigit(2);
    const r = await eventually('the digits', async () => {
      const now = await report(sandbox, callId);
      return now.digitsHeard === '42' ? now : undefined;
    });
    expect(r.digitsHeard).toBe('42');
    await control(sandbox, '/control/hangup', { callId });
  });

  test('the customer hangs up: a terminate webhook with the call\u2019s times', async () => {
    const peer = business();
    const { callId } = await answeredIncomingCall(sandbox, peer);
    await eventually('media', async () => (await report(sandbox, callId)).framesHeard > 0);
    expect((await control(sandbox, '/control/hangup', { callId })).status).toBe(200);
    const { call } = await eventually('the terminate webhook', () => callItem(relay, callId, 'terminate'));
    expect(call).toMatchObject({ status: 'COMPLETED', direction: 'USER_INITIATED' });
    expect(call.start_time).toBeDefined();
    expect(call.duration).toBeGreaterThanOrEqual(0);
    const after = await gatewayPost(sandbox, 'terminate', { messaging_product: 'chatapp', call_id: callId, action: 'terminate' });
    expect(after.status).toBe(400);
  });

  test('a business that never sends audio is cut off with 138021 (protocol.md media timeouts)', async () => {
    const strict = await startTestSandbox(relay, { timeouts: { mediaStartTimeoutMs: 800 } });
    try {
      const { callId } = await answeredIncomingCall(strict, business({ silent: true }));
      const { call } = await eventually('the terminate webhook', () => callItem(relay, callId, 'terminate'));
      expect(call.status).toBe('FAILED');
      expect(call.errors).toEqual([{ code: 138021, message: expect.any(String), error_data: { details: expect.stringMatching(/No audio/) } }]);
      expect(call.start_time).toBeDefined();
      expect((await report(strict, callId)).state).toBe('ended');
    } finally {
      await strict.close();
    }
  });
});

describe('what the customer hears now: a muted business', () => {
  test('recentRms falls to silence while framesHeard keeps rising, rises again on unmute, and is 0 once nothing arrives', async () => {
    const peer = business();
    const { callId } = await answeredIncomingCall(sandbox, peer);
    // The tone is a 440 Hz sine at 8000/32768: about 0.17 RMS.
    const loud = await eventually('the tone', async () => {
      const r = await report(sandbox, callId);
      return r.recentRms > 0.1 ? r : undefined;
    });
    expect(loud.recentRms).toBeLessThanOrEqual(1);

    peer.muted = true;
    const quiet = await eventually(
      'silence within the 500 ms window',
      async () => {
        const r = await report(sandbox, callId);
        return r.recentRms < 0.001 ? r : undefined;
      },
      2_000,
    );
    let last = quiet;
    for (let i = 0; i < 6; i++) {
      await sleep(200);
      const r = await report(sandbox, callId);
      expect(r.recentRms).toBeLessThan(0.001);
      expect(r.framesHeard).toBeGreaterThan(last.framesHeard);
      last = r;
    }
    // 1.2 s of 20 ms frames is 60; the silent ones count as frames heard.
    expect(last.framesHeard - quiet.framesHeard).toBeGreaterThanOrEqual(30);
    // The whole call's energy still remembers the tone: only the recent measure shows the mute.
    expect(last.heardRms).toBeGreaterThan(0.01);
    expect(last.state).toBe('connected');

    peer.muted = false;
    await eventually(
      'the tone again',
      async () => (await report(sandbox, callId)).recentRms > 0.1,
      2_000,
    );

    peer.paused = true;
    const gone = await eventually(
      'an empty window',
      async () => {
        const r = await report(sandbox, callId);
        return r.recentRms === 0 ? r : undefined;
      },
      2_000,
    );
    expect(gone.framesHeard).toBeGreaterThan(last.framesHeard);
    expect(gone.heardRms).toBeGreaterThan(0.01);
    await control(sandbox, '/control/hangup', { callId });
  });

  test('silent RTP is media: a business muted from the start is not cut off; one that stops sending is (138022)', async () => {
    const strict = await startTestSandbox(relay, { timeouts: { mediaStartTimeoutMs: 800, mediaGapTimeoutMs: 800 } });
    try {
      const peer = business();
      peer.muted = true;
      const { callId } = await answeredIncomingCall(strict, peer);
      await eventually('silent frames', async () => (await report(strict, callId)).framesHeard > 0);
      // Several watchdog rounds past both timeouts.
      await sleep(2_000);
      const muted = await report(strict, callId);
      expect(muted.state).toBe('connected');
      expect(callItem(relay, callId, 'terminate')).toBeUndefined();
      expect(muted.framesHeard).toBeGreaterThan(50);
      expect(muted.firstHeardAt).toBeUndefined();
      expect(muted.recentRms).toBeLessThan(0.001);

      peer.paused = true;
      const { call } = await eventually('the terminate webhook', () => callItem(relay, callId, 'terminate'), 5_000);
      expect(call.status).toBe('FAILED');
      expect(call.errors).toEqual([{ code: 138022, message: expect.any(String), error_data: { details: expect.stringMatching(/No audio/) } }]);
      expect((await report(strict, callId)).state).toBe('ended');
    } finally {
      await strict.close();
    }
  });
});

describe('what the customer hears: the hold music or a voice, two customers at once', () => {
  test('A talks to the agent, B calls and is answered, A is held: A hears music, B a voice, each in its own report', async () => {
    const agentVoice = readWavAt48k(new URL('../../../assets/test/agent-voice.wav', import.meta.url).pathname);
    const [first, second] = sandbox.customers.filter((c) => c.behaviour === 'answers' && !c.network);
    const toA = business();
    toA.sound = agentVoice;
    const a = await answeredIncomingCall(sandbox, toA, first!.number);
    await eventually('A to hear the agent', async () => (await report(sandbox, a.callId)).heardNow === 'voice');

    const toB = business();
    toB.sound = agentVoice;
    const b = await answeredIncomingCall(sandbox, toB, second!.number);
    const heldAt = Date.now();
    toA.sound = Int16Array.from(renderHoldMusic(48_000), (s) => Math.round(s * 32767));
    const [heardA, heardB] = await eventually('A to hear music while B hears the agent', async () => {
      const both = await Promise.all([report(sandbox, a.callId), report(sandbox, b.callId)]);
      return both[0].heardNow === 'music' && both[1].heardNow === 'voice' && both[1].heardMs.voice >= 1000 ? both : undefined;
    });
    expect([heardA.state, heardB.state]).toEqual(['connected', 'connected']);
    // Each customer's phone was reached by its own business peer.
    expect(heardA.checkedBy).toHaveLength(1);
    expect(heardB.checkedBy).toHaveLength(1);
    expect(heardA.checkedBy).not.toEqual(heardB.checkedBy);
    // A heard the agent first, then the music from the moment of the hold.
    expect(heardA.heardMs.voice).toBeGreaterThanOrEqual(500);
    expect(heardA.heardMs.music).toBeGreaterThanOrEqual(500);
    const firstMusic = heardA.heardLog.findIndex((entry) => entry.heard === 'music');
    expect(heardA.heardLog.slice(0, firstMusic).map((entry) => entry.heard)).toContain('voice');
    expect(heardA.heardLog[firstMusic]!.at).toBeGreaterThanOrEqual(heldAt);
    // B never heard music.
    expect(heardB.heardMs.music).toBe(0);
    expect(heardB.heardLog.map((entry) => entry.heard)).not.toContain('music');

    // Taken off hold: A hears the agent again; a business that stops sending is silence within a second.
    toA.sound = agentVoice;
    await eventually('A to hear the agent again', async () => (await report(sandbox, a.callId)).heardNow === 'voice');
    toB.paused = true;
    const quiet = await eventually('B to hear nothing', async () => {
      const r = await report(sandbox, b.callId);
      return r.heardNow === 'silence' ? r : undefined;
    });
    expect(quiet.heardMs.voice).toBeGreaterThanOrEqual(1000);
    await control(sandbox, '/control/hangup', { callId: a.callId });
    await control(sandbox, '/control/hangup', { callId: b.callId });
  });
});

describe('outgoing call to a customer who answers', () => {
  test('RINGING, then a connect with an ice-lite passive answer; audio both ways; ACCEPTED after media flows', async () => {
    const peer = business();
    const offer = await peer.offer();
    const who = answering();
    const started = await gatewayPost(sandbox, 'initiate', { messaging_product: 'chatapp', to: who.number, action: 'connect', session: { sdp_type: 'offer', sdp: offer } });
    expect(started.status).toBe(200);
    const callId = (started.body as { calls: { id: string }[] }).calls[0]!.id;

    const { call, value } = await eventually('the connect webhook', () => callItem(relay, callId, 'connect'));
    expect(call).toMatchObject({ direction: 'BUSINESS_INITIATED', to: who.number, from: value.metadata.display_phone_number, session: { sdp_type: 'answer' } });
    expect(value.contacts).toBeUndefined();
    const answer = sdpTransform.parse(call.session!.sdp);
    expect(answer.icelite).toBe('ice-lite');
    expect(answer.media).toHaveLength(1);
    expect(answer.media[0]!.setup).toBe('passive');
    expect(answer.media[0]!.rtp.map((r) => r.payload)).toContain(111);
    expect(eventsFor(relay, callId).slice(0, 2)).toEqual(['status:RINGING', 'connect:BUSINESS_INITIATED']);

    await peer.applyAnswer(call.session!.sdp);
    await eventually('the customer to hear the business', async () => {
      const r = await report(sandbox, callId);
      return r.framesHeard > 10 && r.heardRms > 0.01 ? r : undefined;
    });
    await eventually('the business to hear the customer', () => peer.framesHeard > 10 && peer.heardRms > 0.01);
    await eventually('ACCEPTED', () => eventsFor(relay, callId).includes('status:ACCEPTED'));
    expect(eventsFor(relay, callId)).toEqual(['status:RINGING', 'connect:BUSINESS_INITIATED', 'status:ACCEPTED']);

    await control(sandbox, '/control/hangup', { callId });
    const ended = await eventually('the terminate webhook', () => callItem(relay, callId, 'terminate'));
    expect(ended.call).toMatchObject({ status: 'COMPLETED', direction: 'BUSINESS_INITIATED' });
    expect(ended.call.start_time).toBeDefined();
    expect(ended.call.end_time).toBeDefined();
    expect(ended.call.duration).toBeGreaterThanOrEqual(0);
  });
});

describe('closing', () => {
  test('close() ends a sandbox with calls in progress; its port is free again', async () => {
    const box = await startTestSandbox(relay);
    const peer = business();
    const { callId } = await answeredIncomingCall(box, peer);
    await eventually('media', async () => (await report(box, callId)).framesHeard > 0);
    await control(box, '/control/incoming', { number: answering().number });
    await box.close();
    await expect(fetch(`${box.url}/control/customers`)).rejects.toThrow();
  });
});
