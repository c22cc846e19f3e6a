// Every rule of gateway-spec.md 4.2 and the Graph error envelope of protocol.md, over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { graphErrorSchema, initiateSuccessSchema } from '../../../shared/gateway';
import type { SandboxServer } from '../../../sandbox/server';
import { chromiumAnswer, chromiumOffer } from '../../fixtures/sdp';
import { BusinessPeer } from './business-peer';
import { control, gatewayPost, startTestSandbox, startWebhookReceiver, type HttpAnswer, type WebhookReceiver } from './harness';

let relay: WebhookReceiver;
let sandbox: SandboxServer;
let businessOffer: string;
const peers: BusinessPeer[] = [];

beforeAll(async () => {
  relay = await startWebhookReceiver();
  sandbox = await startTestSandbox(relay, { timeouts: { ringTimeoutMs: 60_000 } });
  const offerer = new BusinessPeer();
  peers.push(offerer);
  businessOffer = await offerer.offer();
});
afterAll(async () => {
  await Promise.all(peers.map((p) => p.close()));
  await sandbox?.close();
  await relay?.close();
});

const customer = (behaviour: string) => sandbox.customers.find((c) => c.behaviour === behaviour)!;

/** The Graph envelope, with its status and code. */
function graphError(answer: HttpAnswer, status: number, code: number) {
  expect(answer.status).toBe(status);
  const parsed = graphErrorSchema.safeParse(answer.body);
  expect(parsed.success, JSON.stringify(answer.body)).toBe(true);
  const error = parsed.data!.error;
  expect(error.code).toBe(code);
  expect(error.type).toBe('OAuthException');
  expect(error.fbtrace_id).toMatch(/^[A-Za-z0-9_-]+$/);
  return error;
}

/** An incoming call from an answering customer, and a business peer's real answer to it. */
async function ringingCall(): Promise<{ callId: string; answer: string; business: BusinessPeer }> {
  const { body } = await control<{ callId: string }>(sandbox, '/control/incoming', { number: customer('answers').number });
  const offer = await fetchOffer(body.callId);
  const business = new BusinessPeer();
  peers.push(business);
  return { callId: body.callId, answer: await business.answer(offer), business };
}

async function fetchOffer(callId: string): Promise<string> {
  for (;;) {
    for (const hook of relay.received) {
      const call = hook.body.entry[0]?.changes[0]?.value.calls?.find((c) => c.id === callId && c.event === 'connect');
      if (call?.session) return call.session.sdp;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

const acceptBody = (callId: string, sdp: string) => ({ messaging_product: 'chatapp', call_id: callId, action: 'accept', session: { sdp_type: 'answer', sdp } });
const initiateBody = (to: string, sdp = businessOffer) => ({ messaging_product: 'chatapp', to, action: 'connect', session: { sdp_type: 'offer', sdp } });

describe('authentication and content type (gateway-spec.md 5)', () => {
  test('a missing API-KEY is refused with 401 in the Graph envelope', async () => {
    const error = graphError(await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: 'x', action: 'reject' }, { apiKey: null }), 401, 190);
    expect(error.message).toMatch(/API-KEY/);
  });

  test('a wrong API-KEY is refused with 401', async () => {
    const error = graphError(await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: 'x', action: 'reject' }, { apiKey: 'nope' }), 401, 190);
    expect(error.message).toMatch(/API-KEY/);
  });

  test.each([['text/plain'], [null], ['application/x-www-form-urlencoded']])('Content-Type %s is refused, naming the header', async (contentType) => {
    const error = graphError(await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: 'x', action: 'reject' }, { contentType }), 415, 100);
    expect(error.message).toMatch(/Content-Type/);
  });

  test('application/json with a charset is accepted as JSON', async () => {
    const error = graphError(await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: 'wacid.none', action: 'reject' }, { contentType: 'application/json; charset=utf-8' }), 400, 100);
    expect(error.message).toMatch(/unknown call id/);
  });

  test('a body that is not JSON is refused naming the body', async () => {
    const error = graphError(await gatewayPost(sandbox, 'reject', undefined, { rawBody: '{"call_id":' }), 400, 100);
    expect(error.message).toBe('(#100) body: must be valid JSON');
  });
});

describe('paths and methods', () => {
  test.each([['pre_accept'], ['connect'], ['ACCEPT']])('an unknown action %s is 404', async (action) => {
    graphError(await gatewayPost(sandbox, action, {}), 404, 2500);
  });

  test('another product word in the path is 404', async () => {
    graphError(await gatewayPost(sandbox, 'accept', {}, { product: 'otherapp' }), 404, 2500);
  });

  test('paths outside the gateway are 404 and stay out of the request log', async () => {
    const before = (await control<unknown[]>(sandbox, '/control/log')).body.length;
    const res = await fetch(`${sandbox.url}/favicon.ico`);
    expect(res.status).toBe(404);
    expect(graphErrorSchema.safeParse(await res.json()).success).toBe(true);
    expect((await control<unknown[]>(sandbox, '/control/log')).body).toHaveLength(before);
  });

  test('GET on a call endpoint is 405 and allows POST', async () => {
    const answer = await gatewayPost(sandbox, 'accept', undefined, { method: 'GET' });
    graphError(answer, 405, 100);
    expect(answer.headers.get('allow')).toBe('POST');
  });
});

describe('request bodies (gateway-spec.md 4.2): every broken rule names its field', () => {
  const full = { accept: acceptBody('wacid.some', chromiumAnswer), reject: { messaging_product: 'chatapp', call_id: 'wacid.some', action: 'reject' }, terminate: { messaging_product: 'chatapp', call_id: 'wacid.some', action: 'terminate' }, initiate: initiateBody('12025550101', chromiumOffer) };
  const without = (body: Record<string, unknown>, field: string): Record<string, unknown> => {
    if (field.startsWith('session.')) {
      const { [field.slice(8)]: _gone, ...session } = body.session as Record<string, unknown>;
      return { ...body, session };
    }
    const { [field]: _gone, ...rest } = body;
    return rest;
  };
  const cases: [keyof typeof full, string][] = [
    ['accept', 'messaging_product'],
    ['accept', 'call_id'],
    ['accept', 'action'],
    ['accept', 'session'],
    ['accept', 'session.sdp_type'],
    ['accept', 'session.sdp'],
    ['reject', 'messaging_product'],
    ['reject', 'call_id'],
    ['reject', 'action'],
    ['terminate', 'messaging_product'],
    ['terminate', 'call_id'],
    ['terminate', 'action'],
    ['initiate', 'messaging_product'],
    ['initiate', 'to'],
    ['initiate', 'action'],
    ['initiate', 'session'],
    ['initiate', 'session.sdp_type'],
    ['initiate', 'session.sdp'],
  ];
  test.each(cases)('%s without %s', async (action, field) => {
    const error = graphError(await gatewayPost(sandbox, action, without(full[action], field)), 400, 100);
    expect(error.message.startsWith(`(#100) ${field}: `), error.message).toBe(true);
    expect(error.error_data).toEqual({ details: expect.stringContaining(field) });
  });

  const wrong: [string, string, Record<string, unknown>, RegExp][] = [
    ['accept', 'messaging_product', { ...full.accept, messaging_product: 'whatsapp' }, /"chatapp"/],
    ['accept', 'action', { ...full.accept, action: 'reject' }, /"accept"/],
    ['accept', 'session.sdp_type', { ...full.accept, session: { ...full.accept.session, sdp_type: 'offer' } }, /"answer"/],
    ['accept', 'session.sdp', { ...full.accept, session: { sdp_type: 'answer', sdp: '' } }, /empty/],
    ['accept', 'call_id', { ...full.accept, call_id: 42 }, /string/],
    ['reject', 'call_id', { ...full.reject, call_id: '' }, /empty/],
    ['terminate', 'action', { ...full.terminate, action: 'hangup' }, /"terminate"/],
    ['initiate', 'action', { ...full.initiate, action: 'initiate' }, /"connect"/],
    ['initiate', 'session.sdp_type', { ...full.initiate, session: { ...full.initiate.session, sdp_type: 'answer' } }, /"offer"/],
    ['initiate', 'to', { ...full.initiate, to: '+12025550101' }, /digits only/],
    ['initiate', 'to', { ...full.initiate, to: '12345' }, /7 to 15 digits/],
    ['reject', '(root)', { ...full.reject, extra: true }, /extra/],
  ];
  test.each(wrong)('%s with a wrong %s', async (action, field, body, rule) => {
    const error = graphError(await gatewayPost(sandbox, action, body), 400, 100);
    expect(error.message.startsWith(`(#100) ${field}: `), error.message).toBe(true);
    expect(error.message).toMatch(rule);
  });

  test.each([['accept'], ['reject'], ['terminate']])('%s of an unknown call id is refused, saying the id is unknown', async (action) => {
    const body = action === 'accept' ? full.accept : action === 'reject' ? full.reject : full.terminate;
    const error = graphError(await gatewayPost(sandbox, action, { ...body, call_id: 'wacid.doesnotexist' }), 400, 100);
    expect(error.message).toBe('(#100) call_id: unknown call id "wacid.doesnotexist"');
  });
});

describe('success bodies (protocol.md) and actions that do not fit the call', () => {
  test('accept → success; accept again, reject and a second terminate are refused; terminate succeeds once', async () => {
    const { callId, answer } = await ringingCall();
    const early = graphError(await gatewayPost(sandbox, 'terminate', { messaging_product: 'chatapp', call_id: callId, action: 'terminate' }), 400, 100);
    expect(early.message).toMatch(/reject it instead/);

    const accepted = await gatewayPost(sandbox, 'accept', acceptBody(callId, answer));
    expect(accepted).toMatchObject({ status: 200, body: { messaging_product: 'chatapp', success: true } });
    expect(accepted.body).toEqual({ messaging_product: 'chatapp', success: true });

    const again = graphError(await gatewayPost(sandbox, 'accept', acceptBody(callId, answer)), 400, 100);
    expect(again.message).toMatch(/^\(#100\) call_id: cannot accept this call: it is already connected/);
    graphError(await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: callId, action: 'reject' }), 400, 100);

    const terminated = await gatewayPost(sandbox, 'terminate', { messaging_product: 'chatapp', call_id: callId, action: 'terminate' });
    expect(terminated.status).toBe(200);
    expect(terminated.body).toEqual({ messaging_product: 'chatapp', success: true });
    const twice = graphError(await gatewayPost(sandbox, 'terminate', { messaging_product: 'chatapp', call_id: callId, action: 'terminate' }), 400, 100);
    expect(twice.message).toMatch(/already ended/);
    graphError(await gatewayPost(sandbox, 'accept', acceptBody(callId, answer)), 400, 100);
  });

  test('reject → success once; then accept is refused', async () => {
    const { callId, answer } = await ringingCall();
    const rejected = await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: callId, action: 'reject' });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toEqual({ messaging_product: 'chatapp', success: true });
    const error = graphError(await gatewayPost(sandbox, 'accept', acceptBody(callId, answer)), 400, 100);
    expect(error.message).toMatch(/ended/);
    graphError(await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: callId, action: 'reject' }), 400, 100);
  });

  test('initiate → the new call id; the customer is then busy for a second call; terminate ends it', async () => {
    const to = customer('no_answer').number;
    const answer = await gatewayPost(sandbox, 'initiate', initiateBody(to));
    expect(answer.status).toBe(200);
    const parsed = initiateSuccessSchema.parse(answer.body);
    expect(parsed.messaging_product).toBe('chatapp');
    expect(Object.keys(answer.body as object).sort()).toEqual(['calls', 'messaging_product']);
    const callId = parsed.calls[0]!.id;
    expect(callId).toMatch(/^wacid\.[A-Za-z0-9_-]{16,}$/);

    const second = graphError(await gatewayPost(sandbox, 'initiate', initiateBody(to)), 400, 138003);
    expect(second.message).toMatch(/already in progress/);
    // A business-initiated call is never accepted or rejected by the business.
    graphError(await gatewayPost(sandbox, 'accept', acceptBody(callId, chromiumAnswer)), 400, 100);
    graphError(await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: callId, action: 'reject' }), 400, 100);

    const ended = await gatewayPost(sandbox, 'terminate', { messaging_product: 'chatapp', call_id: callId, action: 'terminate' });
    expect(ended.body).toEqual({ messaging_product: 'chatapp', success: true });
  });

  test('initiate to a customer without call permission → 138006', async () => {
    const error = graphError(await gatewayPost(sandbox, 'initiate', initiateBody(customer('no_permission').number)), 400, 138006);
    expect(error.message).toMatch(/no call permission/);
  });

  test('initiate to digits that are no real number → 138001', async () => {
    const error = graphError(await gatewayPost(sandbox, 'initiate', initiateBody('1999555')), 400, 138001);
    expect(error.message).toMatch(/incapable/);
  });

  test('initiate to a busy customer → 138003', async () => {
    const error = graphError(await gatewayPost(sandbox, 'initiate', initiateBody(customer('busy').number)), 400, 138003);
    expect(error.message).toMatch(/already in progress/);
  });
});

describe('session descriptions (protocol.md "Media")', () => {
  const broken: [string, (sdp: string) => string, RegExp][] = [
    ['a passive DTLS role', (s) => s.replace(/a=setup:active/g, 'a=setup:passive'), /setup:active/],
    ['ice-lite', (s) => s.replace(/(a=ice-ufrag)/, 'a=ice-lite\r\n$1'), /ice-lite/],
    ['a sha-1 fingerprint', (s) => s.replace(/a=fingerprint:sha-256 ([0-9A-F:]+)/i, 'a=fingerprint:sha-1 $1'), /sha-256/],
    ['no fingerprint', (s) => s.replace(/a=fingerprint:[^\r\n]*\r?\n/, ''), /fingerprint/],
    ['a second m-line', (s) => `${s.trimEnd()}\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:96 VP8/90000\r\n`, /exactly one m-line/],
    ['no SDP at all', () => 'hello', /v=0/],
  ];
  test.each(broken)('an answer with %s is refused with code 100 and the reason in error_data', async (_what, spoil, reason) => {
    const { callId, answer } = await ringingCall();
    const error = graphError(await gatewayPost(sandbox, 'accept', acceptBody(callId, spoil(answer))), 400, 100);
    expect(error.message).toMatch(/^\(#100\) session\.sdp: not a valid SDP answer/);
    expect((error.error_data as { details: string }).details).toMatch(reason);
    // The call still rings: the business may answer again, properly.
    const fixed = await gatewayPost(sandbox, 'accept', acceptBody(callId, answer));
    expect(fixed.status).toBe(200);
    await gatewayPost(sandbox, 'terminate', { messaging_product: 'chatapp', call_id: callId, action: 'terminate' });
  });

  test('an initiate offer that is ice-lite is refused with code 100', async () => {
    const error = graphError(await gatewayPost(sandbox, 'initiate', initiateBody(customer('answers').number, businessOffer.replace(/(a=ice-ufrag)/, 'a=ice-lite\r\n$1'))), 400, 100);
    expect((error.error_data as { details: string }).details).toMatch(/ice-lite/);
  });
});

describe('the request log', () => {
  test('lists every gateway request in order with its status and call id', async () => {
    const before = (await control<unknown[]>(sandbox, '/control/log')).body.length;
    const { callId } = await ringingCall();
    await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: callId, action: 'reject' }, { apiKey: 'wrong' });
    const t0 = Date.now();
    await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: callId, action: 'reject' });
    await gatewayPost(sandbox, 'pre_accept', {});
    const log = (await control<{ action: string; callId?: string; at: number; status: number }[]>(sandbox, '/control/log')).body.slice(before);
    expect(log.map(({ action, callId: id, status }) => ({ action, callId: id, status }))).toEqual([
      { action: 'reject', callId: undefined, status: 401 },
      { action: 'reject', callId, status: 200 },
      { action: 'pre_accept', callId: undefined, status: 404 },
    ]);
    expect(log[1]!.at).toBeGreaterThanOrEqual(t0);
    const report = (await control<{ requests: { action: string }[] }>(sandbox, `/control/calls/${callId}`)).body;
    expect(report.requests.map((r) => r.action)).toEqual(['reject']);
  });
});

describe('the product word is a setting (protocol.md)', () => {
  test('a sandbox for "otherapp" serves /otherapp/calls and wants messaging_product "otherapp"', async () => {
    const other = await startTestSandbox(relay, { product: 'otherapp' });
    try {
      graphError(await gatewayPost(other, 'reject', { messaging_product: 'chatapp', call_id: 'x', action: 'reject' }), 404, 2500);
      const error = graphError(await gatewayPost(other, 'reject', { messaging_product: 'chatapp', call_id: 'x', action: 'reject' }, { product: 'otherapp' }), 400, 100);
      expect(error.message).toBe('(#100) messaging_product: must be "otherapp"');
      const { body } = await control<{ callId: string }>(other, '/control/incoming', { number: '12025550101' });
      const answer = await gatewayPost(other, 'reject', { messaging_product: 'otherapp', call_id: body.callId, action: 'reject' }, { product: 'otherapp' });
      expect(answer.body).toEqual({ messaging_product: 'otherapp', success: true });
    } finally {
      await other.close();
    }
  });
});
