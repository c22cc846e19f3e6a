// A bridge node's other calls and its contract: outgoing calls (the node offers to the customer, the
// window offers to the node), bad descriptions refused with their rule and nothing else touched,
// repeated and unknown commands, a leg that dies, the node closing.
import { RTCPeerConnection, RTCRtpCodecParameters } from 'werift';
import { describe, expect, test } from 'vitest';
import type { BridgeNode } from '../../../bridge/bridge-node';
import { CUSTOMER, HOLD_MUSIC } from '../../../shared/bridge';
import { shapeServiceSdp } from '../../../sandbox/customer-peer';
import { AgentWindow } from './agent-window';
import { agentByNodeOffer, closedAfterEach, eventually, expectServiceFacing, expectWindowFacing, HOST, incomingCall, ServiceCustomer, sleep, startNode, TONE_A, TONE_B } from './bridge-harness';

const track = closedAfterEach();
function node(options: Parameters<typeof startNode>[0] = {}) {
  const started = startNode(options);
  track(started.node);
  return started;
}

/** An outgoing call's legs as the relay's dial flow makes them: the window's offer answered, the customer leg's offer for initiate. */
async function dial(bridge: BridgeNode, ref: string, legId: string, toneHz: number): Promise<{ offer: string; window: AgentWindow }> {
  const offer = await bridge.prepareOutgoing(ref);
  if (!offer.ok) throw new Error(offer.error.message);
  expectServiceFacing(offer.value.offer, 'offer');
  const window = track(new AgentWindow(toneHz));
  const answer = await bridge.answerAgentLeg(ref, legId, await window.offer());
  if (!answer.ok) throw new Error(answer.error.message);
  expectWindowFacing(answer.value.answer, 'passive');
  await window.applyAnswer(answer.value.answer);
  return { offer: offer.value.offer, window };
}

describe('an outgoing call through the bridge', () => {
  test('the node offers to the customer and answers the window; once placed and answered, each hears the other', async () => {
    const { node: bridge, events } = node();
    const { offer, window } = await dial(bridge, 'dial-1', 'leg-a', TONE_A);
    expect(await bridge.prepareOutgoing('dial-1')).toEqual({ ok: true, value: { offer } });
    expect(await bridge.bindOutgoing('dial-1', 'wacid.out-1')).toEqual({ ok: true, value: null });
    expect(await bridge.bindOutgoing('dial-1', 'wacid.out-1')).toEqual({ ok: true, value: null });
    expect(await bridge.bindOutgoing('dial-1', 'wacid.other')).toMatchObject({ ok: false, error: { code: 'invalid_state' } });

    // The customer's phone answers (the sandbox's customers as the DTLS server).
    const customer = track(new ServiceCustomer());
    const answer = await customer.peer.answerOffer(offer);
    if (!answer.ok) throw new Error(answer.error.message);
    expect(await bridge.applyCustomerAnswer('wacid.out-1', answer.value)).toEqual({ ok: true, value: null });
    expect(await bridge.applyCustomerAnswer('wacid.out-1', answer.value)).toEqual({ ok: true, value: null });

    await eventually('the customer to hear the agent', () => customer.hears(TONE_A) > 0.3);
    await eventually('the agent to hear the customer', () => window.hears(TONE_A).rms > 0.02);
    await eventually('the customer leg to connect', () => events.some((e) => e.kind === 'customer_connected'));
    expect(events.find((e) => e.kind === 'customer_connected')).toEqual({ kind: 'customer_connected', callId: 'wacid.out-1' });
    const report = await bridge.report('wacid.out-1');
    expect(report).toMatchObject({ ok: true, value: { callId: 'wacid.out-1', customer: { state: 'connected' }, agents: { 'leg-a': { state: 'connected' } } } });
    // The relay's reference still names the call.
    expect(await bridge.report('dial-1')).toEqual(report);
  });

  test('a window that negotiated other payload types gets its own numbers; the customer keeps 111 and 126, DTMF included', async () => {
    const { node: bridge } = node();
    const offer = await bridge.prepareOutgoing('dial-pt');
    if (!offer.ok) throw new Error(offer.error.message);
    const window = track(new AgentWindow(TONE_A, { opus: 109, event: 101 }));
    const answer = await bridge.answerAgentLeg('dial-pt', 'leg-a', await window.offer());
    if (!answer.ok) throw new Error(answer.error.message);
    expect(answer.value.answer).toMatch(/a=rtpmap:109 opus\/48000\/2/);
    expect(answer.value.answer).toMatch(/a=rtpmap:101 telephone-event\/8000/);
    await window.applyAnswer(answer.value.answer);
    const customer = track(new ServiceCustomer());
    const customerAnswer = await customer.peer.answerOffer(offer.value.offer);
    if (!customerAnswer.ok) throw new Error(customerAnswer.error.message);
    await bridge.applyCustomerAnswer('dial-pt', customerAnswer.value);
    await eventually('the customer to hear the agent', () => customer.hears(TONE_A) > 0.3);
    await eventually('the window to hear the customer on its Opus number', () => window.hears(TONE_A).rms > 0.02);
    window.sendDigit(9);
    await eventually('the digit', () => customer.peer.media().digitsHeard === '9');
    expect(new Set(customer.packets.map((p) => p.payloadType))).toEqual(new Set([111, 126]));
    expect(new Set(window.payloadTypes)).toEqual(new Set([109]));
  });

  test('the service\u2019s own answer (ice-lite, a=setup:active, a=ice-options:trickle) is applied and media flows', async () => {
    const { node: bridge } = node();
    const offer = await bridge.prepareOutgoing('dial-2');
    if (!offer.ok) throw new Error(offer.error.message);
    const service = new RTCPeerConnection({
      iceLite: true,
      iceUseIpv4: false,
      iceUseIpv6: false,
      iceAdditionalHostAddresses: [HOST],
      iceInterfaceAddresses: { udp4: HOST },
      iceServers: [],
      bundlePolicy: 'max-bundle',
      codecs: {
        audio: [
          new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 111 }),
          new RTCRtpCodecParameters({ mimeType: 'audio/telephone-event', clockRate: 8000, payloadType: 126 }),
        ],
        video: [],
      },
    });
    track(service);
    let received = 0;
    service.addTransceiver('audio', { direction: 'sendrecv' });
    service.onTrack.subscribe((t) => t.onReceiveRtp.subscribe(() => received++));
    await service.setRemoteDescription({ type: 'offer', sdp: offer.value.offer });
    await service.setLocalDescription(await service.createAnswer());
    const answer = shapeServiceSdp(service.localDescription!.sdp).replace('a=ice-lite\r\n', 'a=ice-lite\r\na=ice-options:trickle\r\n');
    expect(answer).toMatch(/a=setup:active/);
    expect(await bridge.bindOutgoing('dial-2', 'wacid.out-2')).toEqual({ ok: true, value: null });
    expect(await bridge.applyCustomerAnswer('wacid.out-2', answer)).toEqual({ ok: true, value: null });
    // No agent yet: the customer hears the hold music, so packets come.
    await eventually('the service to receive media', () => received > 20);
    expect(await bridge.report('wacid.out-2')).toMatchObject({ ok: true, value: { customer: { state: 'connected' }, routes: { [CUSTOMER]: [HOLD_MUSIC] } } });
  });
});

describe('bad descriptions', () => {
  const spoil = async (edit: (sdp: string) => string) => {
    const customer = track(new ServiceCustomer());
    const offer = await customer.peer.makeOffer();
    if (!offer.ok) throw new Error(offer.error.message);
    return edit(offer.value);
  };

  test('a service offer that breaks a rule is refused naming the field and the rule, and leaves no call', async () => {
    const { node: bridge } = node();
    const cases: [string, (sdp: string) => string, RegExp][] = [
      ['no fingerprint', (sdp) => sdp.replace(/a=fingerprint:.*\r\n/g, ''), /fingerprint/],
      ['no Opus', (sdp) => sdp.replace('opus/48000/2', 'PCMU/8000'), /Opus/],
      ['video', (sdp) => sdp.replace('m=audio', 'm=video'), /must be audio/],
      ['not an SDP', () => 'hello', /v=0/],
      ['passive offer', (sdp) => sdp.replace('a=setup:actpass', 'a=setup:passive'), /passive/],
    ];
    for (const [name, edit, rule] of cases) {
      const refused = await bridge.prepareIncoming(`wacid.bad-${name.replace(/\W/g, '')}`, await spoil(edit));
      expect(refused, name).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'sdp', message: expect.stringMatching(rule) } });
    }
    expect(await bridge.prepareIncoming('wacid.bad-empty', '')).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'sdp' } });
    expect(bridge.load().calls).toBe(0);
  });

  test('a window\u2019s bad answer is refused; the call\u2019s other legs go on, and the leg takes a good answer after', async () => {
    const { node: bridge } = node();
    const customer = track(await incomingCall(bridge, 'wacid.bad-leg'));
    track(await agentByNodeOffer(bridge, 'wacid.bad-leg', 'leg-a', TONE_A));
    await bridge.connectCustomer('wacid.bad-leg');
    await eventually('the customer to hear A', () => customer.hears(TONE_A) > 0.3);

    const offer = await bridge.offerAgentLeg('wacid.bad-leg', 'leg-b');
    if (!offer.ok) throw new Error(offer.error.message);
    const windowB = track(new AgentWindow(TONE_B));
    const answer = await windowB.answer(offer.value.offer);
    expect(await bridge.applyAgentAnswer('wacid.bad-leg', 'leg-b', answer.replace(/a=candidate:.*\r\n/g, ''))).toMatchObject({
      ok: false,
      error: { code: 'invalid_input', field: 'sdp', message: expect.stringMatching(/candidate/) },
    });
    expect(await bridge.applyAgentAnswer('wacid.bad-leg', 'leg-b', answer.replace('a=setup:active', 'a=setup:passive'))).toMatchObject({
      ok: false,
      error: { code: 'invalid_input', field: 'sdp', message: expect.stringMatching(/a=setup:active/) },
    });
    // A still connected, the customer still hears it.
    await sleep(300);
    expect(customer.hears(TONE_A)).toBeGreaterThan(0.3);
    expect(await bridge.report('wacid.bad-leg')).toMatchObject({ ok: true, value: { customer: { state: 'connected' }, agents: { 'leg-a': { state: 'connected' }, 'leg-b': { state: 'new' } } } });

    expect(await bridge.applyAgentAnswer('wacid.bad-leg', 'leg-b', answer)).toEqual({ ok: true, value: null });
    await bridge.setRoutes('wacid.bad-leg', { [CUSTOMER]: ['leg-b'], 'leg-b': [CUSTOMER] });
    await eventually('the customer to hear B', () => customer.hears(TONE_B) > 0.3);
  });

  test('a customer answer that takes no DTLS role is refused', async () => {
    const { node: bridge } = node();
    const offer = await bridge.prepareOutgoing('dial-bad');
    if (!offer.ok) throw new Error(offer.error.message);
    const customer = track(new ServiceCustomer());
    const answer = await customer.peer.answerOffer(offer.value.offer);
    if (!answer.ok) throw new Error(answer.error.message);
    expect(await bridge.applyCustomerAnswer('dial-bad', answer.value.replace('a=setup:passive', 'a=setup:actpass'))).toMatchObject({
      ok: false,
      error: { code: 'invalid_input', field: 'sdp', message: expect.stringMatching(/DTLS role/) },
    });
    expect(await bridge.applyCustomerAnswer('dial-bad', answer.value)).toEqual({ ok: true, value: null });
  });
});

describe('the node\u2019s contract', () => {
  test('repeated commands give the same result; unknown calls, bad ids and routes are refused; ended calls stay ended', async () => {
    const { node: bridge } = node();
    const customer = track(new ServiceCustomer());
    const offer = await customer.peer.makeOffer();
    if (!offer.ok) throw new Error(offer.error.message);
    const first = await bridge.prepareIncoming('wacid.same', offer.value);
    expect(first.ok).toBe(true);
    expect(await bridge.prepareIncoming('wacid.same', offer.value)).toEqual(first);
    const other = track(new ServiceCustomer());
    const otherOffer = await other.peer.makeOffer();
    if (!otherOffer.ok) throw new Error(otherOffer.error.message);
    expect(await bridge.prepareIncoming('wacid.same', otherOffer.value)).toMatchObject({ ok: false, error: { code: 'invalid_state' } });

    const legOffer = await bridge.offerAgentLeg('wacid.same', 'leg-a');
    expect(await bridge.offerAgentLeg('wacid.same', 'leg-a')).toEqual(legOffer);
    expect(await bridge.offerAgentLeg('wacid.same', 'customer')).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'legId' } });
    expect(await bridge.offerAgentLeg('wacid.same', 'no spaces')).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'legId' } });
    expect(await bridge.applyAgentAnswer('wacid.same', 'leg-z', 'v=0\r\n')).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await bridge.setRoutes('wacid.same', { [CUSTOMER]: ['no spaces'] })).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'routes.customer' } });
    expect(await bridge.setRoutes('wacid.same', { [CUSTOMER]: [HOLD_MUSIC, 'leg-a'] })).toEqual({ ok: true, value: null });
    expect(await bridge.closeAgentLeg('wacid.same', 'leg-a')).toEqual({ ok: true, value: null });
    expect(await bridge.closeAgentLeg('wacid.same', 'leg-a')).toEqual({ ok: true, value: null });

    for (const unknown of [bridge.connectCustomer('wacid.none'), bridge.report('wacid.none'), bridge.offerAgentLeg('wacid.none', 'leg-a'), bridge.setRoutes('wacid.none', {})]) {
      expect(await unknown).toMatchObject({ ok: false, error: { code: 'not_found' } });
    }
    expect(await bridge.endCall('wacid.none')).toEqual({ ok: true, value: null });
    expect(await bridge.bindOutgoing('dial-none', 'wacid.x')).toMatchObject({ ok: false, error: { code: 'not_found' } });

    expect(bridge.load().calls).toBe(1);
    expect(await bridge.endCall('wacid.same')).toEqual({ ok: true, value: null });
    expect(await bridge.endCall('wacid.same')).toEqual({ ok: true, value: null });
    expect(bridge.load()).toMatchObject({ calls: 0, cpuPercent: expect.any(Number) });
    // A late connect for an ended call does not start it again.
    expect(await bridge.prepareIncoming('wacid.same', offer.value)).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    expect(await bridge.connectCustomer('wacid.same')).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    expect(await bridge.closeAgentLeg('wacid.same', 'leg-a')).toEqual({ ok: true, value: null });
  });

  test('a window that goes away fails its leg; the call goes on, the customer on the hold music', async () => {
    const { node: bridge, events } = node({ mediaTimeoutMs: 1_000 });
    const customer = track(await incomingCall(bridge, 'wacid.gone'));
    const agent = await agentByNodeOffer(bridge, 'wacid.gone', 'leg-a', TONE_A);
    await bridge.connectCustomer('wacid.gone');
    await eventually('the customer to hear the agent', () => customer.hears(TONE_A) > 0.3);
    const goingAt = Date.now();
    await agent.close();
    const goneAt = Date.now();
    await eventually('the leg to fail', () => events.some((e) => e.kind === 'leg_failed'));
    // When its last packet came: when the agent went, which the relay's rejoin window counts from
    // (a packet already on the loopback as the close ends still arrives).
    expect(events.filter((e) => e.kind === 'leg_failed')).toEqual([{ kind: 'leg_failed', callId: 'wacid.gone', legId: 'leg-a', lastPacketAt: expect.any(Number) as number }]);
    const failed = events.find((e) => e.kind === 'leg_failed');
    if (failed?.kind !== 'leg_failed') throw new Error('no leg_failed');
    expect(failed.lastPacketAt).toBeLessThanOrEqual(goneAt + 100);
    expect(failed.lastPacketAt).toBeGreaterThan(goingAt - 1_000);
    // Unrouted by the relay, the call's default: no agent connected, the music.
    await eventually('the customer to hear the music', () => customer.peer.media().heardNow === 'music');
    expect(await bridge.report('wacid.gone')).toMatchObject({ ok: true, value: { customer: { state: 'connected' }, agents: { 'leg-a': { state: 'failed' } } } });
  });

  test('a window that goes quiet under the relay\u2019s routes: the customer hears the music within a few seconds, long before the leg fails', async () => {
    const { node: bridge, events } = node();
    const customer = track(await incomingCall(bridge, 'wacid.quiet'));
    const agent = await agentByNodeOffer(bridge, 'wacid.quiet', 'leg-a', TONE_A);
    expect(await bridge.setRoutes('wacid.quiet', { [CUSTOMER]: ['leg-a'], 'leg-a': [CUSTOMER] })).toEqual({ ok: true, value: null });
    await bridge.connectCustomer('wacid.quiet');
    await eventually('the customer to hear the agent', () => customer.hears(TONE_A) > 0.3);
    const goneAt = Date.now();
    await agent.close();
    await eventually('the customer to hear the music', () => customer.peer.media().heardNow === 'music', 5_000);
    expect(Date.now() - goneAt).toBeLessThan(5_000);
    // The leg has not failed yet (that takes the media timeout): the music bridges the gap meanwhile.
    expect(events.some((e) => e.kind === 'leg_failed')).toBe(false);
    expect(customer.peer.media().rtp).toMatchObject({ ssrcs: 1, sequenceGaps: 0, timestampJumps: 0 });
  });

  test('close() ends every call and closes every peer connection', async () => {
    const { node: bridge } = node();
    const customer = track(await incomingCall(bridge, 'wacid.close'));
    track(await agentByNodeOffer(bridge, 'wacid.close', 'leg-a', TONE_A));
    await bridge.connectCustomer('wacid.close');
    await eventually('media', () => customer.packets.length > 5);
    await bridge.close();
    expect(bridge.load().calls).toBe(0);
    // What was on its way when it closed arrives; then nothing more.
    await sleep(150);
    const count = customer.packets.length;
    await sleep(300);
    expect(customer.packets.length).toBe(count);
    expect(await bridge.prepareIncoming('wacid.after', 'v=0\r\n')).toMatchObject({ ok: false });
    expect(await bridge.prepareOutgoing('dial-after')).toMatchObject({ ok: false, error: { code: 'not_available' } });
    expect(await bridge.report('wacid.close')).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
  });
});
