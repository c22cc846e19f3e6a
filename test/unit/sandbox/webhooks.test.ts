// Gateway-style webhooks (protocol.md "Events"): envelope, signature over the raw bytes, the
// ice-lite offer's shape, every call outcome, and retries while the relay is down.
import sdpTransform from 'sdp-transform';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { normalisePhoneNumber } from '../../../shared/phone';
import type { SandboxCallReport, SandboxCustomer } from '../../../shared/sandbox';
import type { SandboxServer } from '../../../sandbox/server';
import { chromiumAnswer } from '../../fixtures/sdp';
import { BusinessPeer } from './business-peer';
import {
  APP_SECRET,
  callItem,
  control,
  eventsFor,
  eventually,
  gatewayPost,
  signatureValid,
  startTestSandbox,
  startWebhookReceiver,
  valueOf,
  type WebhookReceiver,
} from './harness';

let relay: WebhookReceiver;
let sandbox: SandboxServer;
let businessOffer: string;
let offerer: BusinessPeer;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  relay = await startWebhookReceiver();
  // Short service timeouts so that "nobody answered" can be seen without waiting a minute.
  sandbox = await startTestSandbox(relay, { timeouts: { ringTimeoutMs: 1000 } });
  offerer = new BusinessPeer();
  businessOffer = await offerer.offer();
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});
afterAll(async () => {
  await offerer?.close();
  await sandbox?.close();
  await relay?.close();
});

const customer = (behaviour: SandboxCustomer['behaviour']) => sandbox.customers.find((c) => c.behaviour === behaviour)!;
const incoming = async (number: string) => (await control<{ callId: string }>(sandbox, '/control/incoming', { number })).body.callId;
const connectOf = (callId: string) => eventually('the connect webhook', () => callItem(relay, callId, 'connect'));
const terminateOf = (callId: string) => eventually('the terminate webhook', () => callItem(relay, callId, 'terminate'));
const initiate = async (to: string) => {
  const answer = await gatewayPost(sandbox, 'initiate', { messaging_product: 'chatapp', to, action: 'connect', session: { sdp_type: 'offer', sdp: businessOffer } });
  expect(answer.status).toBe(200);
  return (answer.body as { calls: { id: string }[] }).calls[0]!.id;
};

describe('the simulated customers', () => {
  test('at least six, with valid numbers, names, and every behaviour; two answer', async () => {
    const { status, body } = await control<SandboxCustomer[]>(sandbox, '/control/customers');
    expect(status).toBe(200);
    expect(body.length).toBeGreaterThanOrEqual(6);
    for (const c of body) {
      expect(normalisePhoneNumber(`+${c.number}`)).toEqual({ ok: true, value: c.number });
      expect(c.name.length).toBeGreaterThan(0);
    }
    expect(new Set(body.map((c) => c.behaviour))).toEqual(new Set(['answers', 'rejects', 'no_answer', 'no_permission', 'busy']));
    expect(body.filter((c) => c.behaviour === 'answers' && c.network === undefined)).toHaveLength(2);
    expect(body).toEqual(sandbox.customers);
  });
});

describe('an incoming call', () => {
  test('arrives as a signed connect webhook in the Cloud API envelope', async () => {
    const who = customer('answers');
    const before = Math.floor(Date.now() / 1000);
    const callId = await incoming(who.number);
    expect(callId).toMatch(/^wacid\./);
    const { call, value, hook } = await connectOf(callId);

    expect(hook.contentType).toMatch(/^application\/json/);
    expect(signatureValid(hook)).toBe(true);
    expect(signatureValid(hook, `${APP_SECRET}x`)).toBe(false);
    expect(hook.body.object).toBe('chatapp_business_account');
    expect(hook.body.entry).toHaveLength(1);
    expect(hook.body.entry[0]!.id).toMatch(/^[0-9]+$/);
    expect(hook.body.entry[0]!.changes[0]!.field).toBe('calls');
    expect(value.messaging_product).toBe('chatapp');
    expect(value.metadata.display_phone_number).toMatch(/^[0-9]+$/);
    expect(value.metadata.phone_number_id).toMatch(/^[0-9]+$/);
    expect(value.contacts).toEqual([{ profile: { name: who.name }, wa_id: who.number }]);
    expect(call).toMatchObject({ id: callId, from: who.number, to: value.metadata.display_phone_number, event: 'connect', direction: 'USER_INITIATED' });
    expect(call.timestamp).toMatch(/^[0-9]+$/);
    expect(Number(call.timestamp)).toBeGreaterThanOrEqual(before);
    expect(call.session?.sdp_type).toBe('offer');

    const report = (await control<SandboxCallReport>(sandbox, `/control/calls/${callId}`)).body;
    expect(report).toMatchObject({ callId, number: who.number, direction: 'USER_INITIATED', state: 'ringing', requests: [], framesHeard: 0, framesSent: 0 });
    expect(report.firstPacketAt).toBeUndefined();
    await control(sandbox, '/control/hangup', { callId });
  });

  test('carries an offer shaped like the real service: ice-lite, one audio m-line, Opus 111, telephone-event 126, actpass', async () => {
    const callId = await incoming(customer('answers').number);
    const sdp = (await connectOf(callId)).call.session!.sdp;
    expect(sdp).toMatch(/^v=0\r\n/);
    expect(sdp).not.toMatch(/[^\r]\n/);
    const parsed = sdpTransform.parse(sdp);
    expect(parsed.icelite).toBe('ice-lite');
    expect(parsed.groups).toEqual([{ type: 'BUNDLE', mids: parsed.media[0]!.mid }]);
    expect(parsed.media).toHaveLength(1);
    const audio = parsed.media[0]!;
    expect(audio.type).toBe('audio');
    expect(audio.protocol).toBe('UDP/TLS/RTP/SAVPF');
    expect(audio.rtp).toEqual(
      expect.arrayContaining([
        { payload: 111, codec: 'opus', rate: 48000, encoding: 2 },
        { payload: 126, codec: 'telephone-event', rate: 8000 },
      ]),
    );
    expect(audio.rtp).toHaveLength(2);
    expect(audio.fmtp.find((f) => f.payload === 111)?.config).toMatch(/useinbandfec=1/);
    expect(audio.ptime).toBe(20);
    expect(audio.setup).toBe('actpass');
    expect(audio.fingerprint?.type).toBe('sha-256');
    expect(audio.iceUfrag).toBeTruthy();
    expect(audio.icePwd).toBeTruthy();
    expect(audio.iceOptions ?? parsed.iceOptions).toBeUndefined();
    expect(audio.candidates?.length).toBeGreaterThan(0);
    for (const c of audio.candidates ?? []) expect(c).toMatchObject({ transport: 'udp', type: 'host', ip: '127.0.0.1' });
    expect(audio.direction).toBe('sendrecv');
    await control(sandbox, '/control/hangup', { callId });
  });

  test('from an unknown number rings too, from a "Customer"', async () => {
    const callId = await incoming('+44 20 7946 0999');
    const { value, call } = await connectOf(callId);
    expect(value.contacts).toEqual([{ profile: { name: 'Customer' }, wa_id: '442079460999' }]);
    expect(call.from).toBe('442079460999');
    await control(sandbox, '/control/hangup', { callId });
  });

  test('the control API refuses a bad number, naming the field', async () => {
    const bad = await control<{ error: { code: string; field: string; message: string } }>(sandbox, '/control/incoming', { number: '12' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_phone_number', field: 'number' });
    const missing = await control<{ error: { field: string; message: string } }>(sandbox, '/control/incoming', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/^number: /);
  });

  test('rejected by the business: a terminate webhook, COMPLETED, without start_time', async () => {
    const callId = await incoming(customer('answers').number);
    await connectOf(callId);
    await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: callId, action: 'reject' });
    const { call, hook, value } = await terminateOf(callId);
    expect(signatureValid(hook)).toBe(true);
    expect(call).toMatchObject({ id: callId, event: 'terminate', direction: 'USER_INITIATED', status: 'COMPLETED' });
    expect(call.timestamp).toMatch(/^[0-9]+$/);
    expect(call.start_time).toBeUndefined();
    expect(call.duration).toBeUndefined();
    expect(value.contacts?.[0]?.wa_id).toBe(customer('answers').number);
    expect(eventsFor(relay, callId)).toEqual(['connect:USER_INITIATED', 'terminate:COMPLETED']);
    expect((await control<SandboxCallReport>(sandbox, `/control/calls/${callId}`)).body.state).toBe('ended');
  });

  test('not answered in time: the service ends it as missed, and a late accept is refused', async () => {
    const callId = await incoming(customer('answers').number);
    const { call } = await terminateOf(callId);
    expect(call.status).toBe('COMPLETED');
    expect(call.start_time).toBeUndefined();
    const late = await gatewayPost(sandbox, 'accept', { messaging_product: 'chatapp', call_id: callId, action: 'accept', session: { sdp_type: 'answer', sdp: chromiumAnswer } });
    expect(late.status).toBe(400);
  });

  test('the customer gives up while it rings: a terminate webhook; a second hang-up is refused', async () => {
    const callId = await incoming(customer('answers').number);
    const first = await control<object>(sandbox, '/control/hangup', { callId });
    expect(first).toEqual({ status: 200, body: {} });
    expect((await terminateOf(callId)).call.start_time).toBeUndefined();
    expect((await control(sandbox, '/control/hangup', { callId })).status).toBe(409);
    expect((await control(sandbox, '/control/hangup', { callId: 'wacid.nope' })).status).toBe(404);
    expect((await control(sandbox, '/control/calls/wacid.nope')).status).toBe(404);
  });
});

describe('an outgoing call', () => {
  test('to a customer who rejects: RINGING, REJECTED, then a terminate without start_time', async () => {
    const who = customer('rejects');
    const callId = await initiate(who.number);
    await terminateOf(callId);
    expect(eventsFor(relay, callId)).toEqual(['status:RINGING', 'status:REJECTED', 'terminate:COMPLETED']);
    const statuses = relay.received.flatMap((h) => valueOf(h).statuses ?? []).filter((s) => s.id === callId);
    for (const s of statuses) {
      expect(s).toMatchObject({ type: 'call', recipient_id: who.number });
      expect(s.timestamp).toMatch(/^[0-9]+$/);
    }
    const { call, value } = await terminateOf(callId);
    expect(call).toMatchObject({ direction: 'BUSINESS_INITIATED', to: who.number, from: value.metadata.display_phone_number });
    expect(call.start_time).toBeUndefined();
    expect(value.contacts).toBeUndefined();
    for (const h of relay.received) expect(signatureValid(h)).toBe(true);
    const report = (await control<SandboxCallReport>(sandbox, `/control/calls/${callId}`)).body;
    expect(report).toMatchObject({ direction: 'BUSINESS_INITIATED', state: 'ended', requests: [{ action: 'initiate' }] });
  });

  test('to a customer who does not answer: RINGING, then only the service\u2019s timeout ends it', async () => {
    const callId = await initiate(customer('no_answer').number);
    const { call } = await terminateOf(callId);
    expect(call.status).toBe('COMPLETED');
    expect(call.start_time).toBeUndefined();
    expect(eventsFor(relay, callId)).toEqual(['status:RINGING', 'terminate:COMPLETED']);
  });

  test('the business gives up while it rings: terminate succeeds and the webhook follows', async () => {
    const longRing = await startTestSandbox(relay, { timeouts: { ringTimeoutMs: 60_000 } });
    closers.push(() => longRing.close());
    const answer = await gatewayPost(longRing, 'initiate', { messaging_product: 'chatapp', to: customer('no_answer').number, action: 'connect', session: { sdp_type: 'offer', sdp: businessOffer } });
    const callId = (answer.body as { calls: { id: string }[] }).calls[0]!.id;
    await eventually('RINGING', () => eventsFor(relay, callId).includes('status:RINGING'));
    const ended = await gatewayPost(longRing, 'terminate', { messaging_product: 'chatapp', call_id: callId, action: 'terminate' });
    expect(ended.status).toBe(200);
    expect((await terminateOf(callId)).call.start_time).toBeUndefined();
    expect(eventsFor(relay, callId)).toEqual(['status:RINGING', 'terminate:COMPLETED']);
  });
});

describe('delivery', () => {
  test('without an app secret, webhooks carry no signature', async () => {
    const unsigned = await startTestSandbox(relay, { appSecret: undefined });
    closers.push(() => unsigned.close());
    const callId = (await control<{ callId: string }>(unsigned, '/control/incoming', { number: '12025550101' })).body.callId;
    expect((await connectOf(callId)).hook.signature).toBeUndefined();
  });

  test('a relay answering 503 gets the webhook again until it takes it', async () => {
    const flaky = await startWebhookReceiver();
    closers.push(() => flaky.close());
    const box = await startTestSandbox(flaky);
    closers.push(() => box.close());
    flaky.failNext(2);
    const callId = (await control<{ callId: string }>(box, '/control/incoming', { number: '12025550101' })).body.callId;
    const { hook } = await eventually('the retried webhook', () => callItem(flaky, callId, 'connect'));
    expect(flaky.refused).toBe(2);
    expect(signatureValid(hook)).toBe(true);
  });

  test('a relay that is down when the call starts gets the webhook once it is up', async () => {
    const probe = await startWebhookReceiver();
    const port = probe.port;
    await probe.close();
    const box = await startTestSandbox({ url: `http://127.0.0.1:${port}` });
    closers.push(() => box.close());
    const callId = (await control<{ callId: string }>(box, '/control/incoming', { number: '12025550101' })).body.callId;
    await new Promise((r) => setTimeout(r, 300));
    const late = await startWebhookReceiver(port);
    closers.push(() => late.close());
    const { hook } = await eventually('the webhook after the relay came up', () => callItem(late, callId, 'connect'));
    expect(signatureValid(hook)).toBe(true);
  });
});
