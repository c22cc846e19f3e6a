// A bridged call's legs connected while it rings (electron/core/ring-legs.ts, through
// BridgedCallControl): the window's answer goes to the relay before the click, a second window gets
// a leg of its own, and the click's answer names the leg it answers. Real parts: the app's
// RelayClient and GatewayClient against a relay peer speaking the agent's contract (bridge-relay.ts)
// and the fake gateway, both real HTTP servers on 127.0.0.1.
import { afterEach, describe, expect, it } from 'vitest';
import { BridgedCallControl } from '../../../electron/core/bridged-calls';
import { GatewayClient } from '../../../electron/core/gateway-client';
import { RelayClient } from '../../../electron/core/relay-client';
import type { RelayEnvelope, RelayEvent } from '../../../shared/events';
import { english, text } from '../../../shared/i18n/text';
import { configureLogging, createLogger } from '../../../shared/log';
import { ANSWER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { BRIDGE_ANSWER_SDP, LEG_OFFER_SDP, REJOIN_OFFER_SDP, startBridgeRelay, type BridgeRelay } from './bridge-relay';
import { happyGateway, startFakeGateway, type FakeGateway } from './fake-gateway';

configureLogging({ sink: () => undefined });

const CALL = 'wacid.ring-1';
const LEG = `leg-${CALL}`;
/** Another window's answer to the same offer (its own ICE credentials and fingerprint). */
const OTHER_ANSWER_SDP = ANSWER_SDP.replace('o=- 3 4', 'o=- 7 8');
const OWN_LEG_ANSWER_SDP = ANSWER_SDP.replace('o=- 3 4', 'o=- 9 10');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function ringingHere(): Promise<{ relay: BridgeRelay; gateway: FakeGateway; bridge: BridgedCallControl }> {
  const relay = await startBridgeRelay();
  const gateway = await startFakeGateway(happyGateway);
  const client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: 'test-api-key-123', product: 'chatapp', terminateBackoffMs: 5, timeoutMs: 2_000 });
  const relayClient = new RelayClient({ url: relay.url, token: relay.token });
  const bridge = new BridgedCallControl(client, relayClient, createLogger('ring-legs'));
  cleanups.push(async () => {
    await relayClient.close();
    await client.close();
    await gateway.close();
    await relay.close();
  });
  const ring: RelayEvent = { type: 'call.incoming', callId: CALL, from: '442079460958', name: 'Ada Lovelace', sdp: OFFER_SDP, timestamp: Date.now(), bridged: true };
  const passed = await new Promise<RelayEnvelope>((resolve) => bridge.deliver({ id: 'e-1', receivedAt: Date.now(), event: ring }, resolve));
  // The window rings with the bridge's offer of this agent's leg.
  expect(passed.event).toMatchObject({ sdp: LEG_OFFER_SDP });
  relay.requests.splice(0);
  return { relay, gateway, bridge };
}

describe('BridgedCallControl: a ringing leg connected ahead of the click', () => {
  it('the window’s answer goes to the relay with the ring’s leg once; Answer then hands the same answer over and accepts', async () => {
    const { relay, gateway, bridge } = await ringingHere();
    expect(await bridge.ringAnswer(CALL, ANSWER_SDP)).toEqual({ ok: true, value: { connected: true } });
    expect(await bridge.ringAnswer(CALL, ANSWER_SDP)).toEqual({ ok: true, value: { connected: true } });
    expect(relay.requests).toEqual([{ method: 'POST', path: `/calls/${CALL}/bridge/leg/answer`, body: { legId: LEG, sdp: ANSWER_SDP } }]);
    expect(await bridge.accept(CALL, ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(relay.seen()).toEqual([`POST /calls/${CALL}/bridge/leg/answer`, `POST /calls/${CALL}/bridge/answer`, `POST /calls/${CALL}/bridge/accepted`]);
    expect(relay.requests[1]!.body).toEqual({ legId: LEG, sdp: ANSWER_SDP });
    expect(gateway.requests.map((r) => [r.path.split('/').pop(), (r.body as { session?: { sdp: string } }).session?.sdp])).toEqual([['accept', BRIDGE_ANSWER_SDP]]);
  });

  it('a second window is given a leg of its own; its Answer goes with that leg', async () => {
    const { relay, bridge } = await ringingHere();
    expect(await bridge.ringAnswer(CALL, ANSWER_SDP)).toEqual({ ok: true, value: { connected: true } });
    relay.onRequest = (req) => (req.path === `/calls/${CALL}/bridge/leg` ? { status: 200, body: { legId: 'leg-own-2', offer: REJOIN_OFFER_SDP } } : undefined);
    expect(await bridge.ringAnswer(CALL, OTHER_ANSWER_SDP)).toEqual({ ok: true, value: { connected: false, legId: 'leg-own-2', offer: REJOIN_OFFER_SDP } });
    expect(await bridge.ringAnswer(CALL, OWN_LEG_ANSWER_SDP, 'leg-own-2')).toEqual({ ok: true, value: { connected: true } });
    expect(await bridge.accept(CALL, OWN_LEG_ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(relay.requests.map((r) => [r.path, r.body])).toEqual([
      [`/calls/${CALL}/bridge/leg/answer`, { legId: LEG, sdp: ANSWER_SDP }],
      [`/calls/${CALL}/bridge/leg`, {}],
      [`/calls/${CALL}/bridge/leg/answer`, { legId: 'leg-own-2', sdp: OWN_LEG_ANSWER_SDP }],
      [`/calls/${CALL}/bridge/answer`, { legId: 'leg-own-2', sdp: OWN_LEG_ANSWER_SDP }],
      [`/calls/${CALL}/bridge/accepted`, {}],
    ]);
  });

  it('an Answer whose answer fits no leg here while another window took the ring’s: refused before the claim (answerFits), saying where to answer; nothing reaches the relay or the gateway', async () => {
    const { relay, gateway, bridge } = await ringingHere();
    expect(bridge.answerFits(CALL, OTHER_ANSWER_SDP)).toEqual({ ok: true, value: null });
    await bridge.ringAnswer(CALL, ANSWER_SDP);
    relay.requests.splice(0);
    expect(bridge.answerFits(CALL, ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(bridge.answerFits(CALL, OTHER_ANSWER_SDP)).toMatchObject({ ok: false, error: { code: 'invalid_state', message: english(text('calls.answerInRingingWindow')) } });
    expect(bridge.answerFits('wacid.direct', OTHER_ANSWER_SDP)).toEqual({ ok: true, value: null });
    const refused = await bridge.accept(CALL, OTHER_ANSWER_SDP);
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_state', message: english(text('calls.answerInRingingWindow')) } });
    expect(relay.requests).toEqual([]);
    expect(gateway.requests).toEqual([]);
  });

  it('a leg the relay could not connect ahead is still the click’s: asked again, it is tried again; Answer hands its answer over', async () => {
    const { relay, bridge } = await ringingHere();
    relay.onRequest = (req) => (req.path.endsWith('/bridge/leg/answer') ? { status: 503, body: { error: { code: 'not_available', message: 'no node' } } } : undefined);
    expect(await bridge.ringAnswer(CALL, ANSWER_SDP)).toMatchObject({ ok: false, error: { httpStatus: 503 } });
    relay.onRequest = () => undefined;
    expect(await bridge.ringAnswer(CALL, ANSWER_SDP)).toEqual({ ok: true, value: { connected: true } });
    expect(relay.seen(/leg\/answer/)).toHaveLength(2);
    expect(await bridge.accept(CALL, ANSWER_SDP)).toEqual({ ok: true, value: null });
    expect(relay.requests.at(-2)).toEqual({ method: 'POST', path: `/calls/${CALL}/bridge/answer`, body: { legId: LEG, sdp: ANSWER_SDP } });
  });

  it('refuses a leg it never offered, a call that does not ring bridged here, and sends nothing for them', async () => {
    const { relay, bridge } = await ringingHere();
    expect(await bridge.ringAnswer(CALL, ANSWER_SDP, 'leg-unknown')).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    expect(await bridge.ringAnswer('wacid.other', ANSWER_SDP)).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    expect(relay.requests).toEqual([]);
  });
});
