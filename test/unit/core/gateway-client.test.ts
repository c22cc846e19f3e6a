import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayClient, normaliseSdpLineEnds, type CaptureMembers, type GatewayClientOptions } from '../../../electron/core/gateway-client';
import { GATEWAY_ERROR_TEXT } from '../../../shared/gateway';
import { text } from '../../../shared/i18n/text';
import { configureLogging, type LogLevel } from '../../../shared/log';
import { ANSWER_SDP, DIAL_OFFER_SDP } from '../../fixtures/sdp';
import { closedPortUrl, closingServer, resettingServer, selfSignedServer, UNRESOLVABLE_HOST, type FailingServer } from '../shared/network-failures';
import { graphError, initiated, json, startFakeGateway, success, type FakeGateway, type GatewayHandler } from './fake-gateway';

const API_KEY = 'sk_live_gateway_key_5f3a9c';
/** The answer with LF line ends, as some stacks write it; the gateway takes CRLF only. */
const SDP_LF = ANSWER_SDP.replaceAll('\r\n', '\n');

configureLogging({ sink: () => undefined });

let gateway: FakeGateway | undefined;
let client: GatewayClient | undefined;

async function setup(handler: GatewayHandler, options: Partial<GatewayClientOptions> = {}): Promise<{ gateway: FakeGateway; client: GatewayClient }> {
  gateway = await startFakeGateway(handler);
  client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: API_KEY, product: 'chatapp', terminateBackoffMs: 5, ...options });
  return { gateway, client };
}

afterEach(async () => {
  await client?.close();
  await gateway?.close();
  client = undefined;
  gateway = undefined;
});

describe('GatewayClient success bodies', () => {
  it('accepts with the exact body, path and headers, and normalises the SDP to CRLF', async () => {
    const { gateway, client } = await setup(() => success());
    const result = await client.accept('wacid.in-1', SDP_LF);
    expect(result).toEqual({ ok: true, value: null });
    expect(gateway.requests).toHaveLength(1);
    const req = gateway.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/restapi/v1/chatapp/calls/accept');
    expect(req.headers['api-key']).toBe(API_KEY);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.body).toEqual({ messaging_product: 'chatapp', call_id: 'wacid.in-1', action: 'accept', session: { sdp_type: 'answer', sdp: ANSWER_SDP } });
  });

  it('rejects and terminates with the exact bodies', async () => {
    const { gateway, client } = await setup(() => success());
    expect((await client.reject('wacid.r')).ok).toBe(true);
    expect((await client.terminate('wacid.t')).ok).toBe(true);
    expect(gateway.requests.map((r) => [r.path, r.body])).toEqual([
      ['/restapi/v1/chatapp/calls/reject', { messaging_product: 'chatapp', call_id: 'wacid.r', action: 'reject' }],
      ['/restapi/v1/chatapp/calls/terminate', { messaging_product: 'chatapp', call_id: 'wacid.t', action: 'terminate' }],
    ]);
    for (const req of gateway.requests) {
      expect(req.headers['api-key']).toBe(API_KEY);
      expect(req.headers['content-type']).toBe('application/json');
    }
  });

  it('initiates on the "initiate" path with action "connect" and returns the new call id', async () => {
    const { gateway, client } = await setup(() => initiated('wacid.out-77'));
    const result = await client.initiate('447700900123', DIAL_OFFER_SDP);
    expect(result).toEqual({ ok: true, value: { callId: 'wacid.out-77' } });
    const req = gateway.requests[0]!;
    expect(req.path).toBe('/restapi/v1/chatapp/calls/initiate');
    expect(req.body).toEqual({ messaging_product: 'chatapp', to: '447700900123', action: 'connect', session: { sdp_type: 'offer', sdp: DIAL_OFFER_SDP } });
  });

  it('uses the account\u2019s product word in the path and the body', async () => {
    const { gateway, client } = await setup(() => success('acme'), { product: 'acme' });
    expect((await client.terminate('wacid.p')).ok).toBe(true);
    expect(gateway.requests[0]!.path).toBe('/restapi/v1/acme/calls/terminate');
    expect(gateway.requests[0]!.body).toMatchObject({ messaging_product: 'acme' });
  });
});

describe('GatewayClient and the service\u2019s own recording and transcription', () => {
  const asked = { status: 'ENABLED' as const, purpose: 'Quality and training', announcement_language: 'en_GB' };

  it('puts what the settings ask for on accept and initiate, read at each, and never on reject or terminate', async () => {
    let members: CaptureMembers = { recording: asked, transcription: { ...asked } };
    const { gateway, client } = await setup((req) => (req.path.endsWith('/initiate') ? initiated('wacid.out-c') : success()), { capture: () => members });
    expect((await client.accept('wacid.in-c', ANSWER_SDP, 'in:wacid.in-c')).ok).toBe(true);
    expect((await client.initiate('447700900123', DIAL_OFFER_SDP)).ok).toBe(true);
    expect((await client.reject('wacid.r')).ok).toBe(true);
    expect((await client.terminate('wacid.t')).ok).toBe(true);
    members = { recording: asked };
    expect((await client.accept('wacid.in-d', ANSWER_SDP)).ok).toBe(true);
    members = {};
    expect((await client.initiate('447700900124', DIAL_OFFER_SDP)).ok).toBe(true);
    expect(gateway.requests.map((r) => r.body)).toEqual([
      {
        messaging_product: 'chatapp',
        call_id: 'wacid.in-c',
        action: 'accept',
        session: { sdp_type: 'answer', sdp: ANSWER_SDP },
        biz_opaque_callback_data: 'in:wacid.in-c',
        recording: asked,
        transcription: asked,
      },
      { messaging_product: 'chatapp', to: '447700900123', action: 'connect', session: { sdp_type: 'offer', sdp: DIAL_OFFER_SDP }, recording: asked, transcription: asked },
      { messaging_product: 'chatapp', call_id: 'wacid.r', action: 'reject' },
      { messaging_product: 'chatapp', call_id: 'wacid.t', action: 'terminate' },
      { messaging_product: 'chatapp', call_id: 'wacid.in-d', action: 'accept', session: { sdp_type: 'answer', sdp: ANSWER_SDP }, recording: asked },
      { messaging_product: 'chatapp', to: '447700900124', action: 'connect', session: { sdp_type: 'offer', sdp: DIAL_OFFER_SDP } },
    ]);
  });

  it('refuses a request without a purpose before sending it, naming the member', async () => {
    const { gateway, client } = await setup(() => success(), { capture: () => ({ transcription: { ...asked, purpose: '' } }) });
    expect(await client.accept('wacid.in-e', ANSWER_SDP)).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'transcription.purpose' } });
    expect(gateway.requests).toEqual([]);
  });
});

describe('SDP line ends', () => {
  it('turns LF, CR and CRLF into CRLF and changes nothing else', () => {
    expect(normaliseSdpLineEnds('v=0\na=x \r\nb=y\rc=z')).toBe('v=0\r\na=x \r\nb=y\r\nc=z');
    expect(normaliseSdpLineEnds(ANSWER_SDP)).toBe(ANSWER_SDP);
    expect(normaliseSdpLineEnds('v=0')).toBe('v=0');
  });
});

describe('GatewayClient Graph errors', () => {
  it.each([
    [138006, 'no_call_permission'],
    [138003, 'customer_busy'],
    [131047, 'window_closed'],
  ] as const)('maps %i to %s with the clear message, the code and the status', async (code, expected) => {
    const { client } = await setup(() => graphError(400, code, 'gateway words'));
    const result = await client.initiate('447700900123', DIAL_OFFER_SDP);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: expected, gatewayCode: code, httpStatus: 400, message: GATEWAY_ERROR_TEXT[code] });
  });

  it('keeps error_data of code 100 in detail', async () => {
    const { client } = await setup(() =>
      graphError(400, 100, 'Invalid parameter', { error_data: { messaging_product: 'chatapp', details: 'SDP answer has no a=fingerprint line' } }),
    );
    const result = await client.accept('wacid.x', ANSWER_SDP);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'gateway_error', gatewayCode: 100, httpStatus: 400, message: GATEWAY_ERROR_TEXT[100] });
    expect(result.error.detail).toContain('SDP answer has no a=fingerprint line');
  });

  it('uses the gateway\u2019s own message for a code without a text of ours', async () => {
    const { client } = await setup(() => graphError(500, 987654, 'Something odd happened'));
    const result = await client.reject('wacid.x');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'gateway_error', gatewayCode: 987654, httpStatus: 500, message: 'Something odd happened' });
  });
});

describe('GatewayClient opaque answers', () => {
  it('keeps an HTML error page in detail with its status', async () => {
    const page = '<html><body><h1>502 Bad Gateway</h1></body></html>';
    const { client } = await setup(() => ({ status: 502, body: page, contentType: 'text/html' }));
    const result = await client.reject('wacid.x');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('gateway_unreachable');
    expect(result.error.httpStatus).toBe(502);
    expect(result.error.detail).toContain('502 Bad Gateway');
    expect(result.error.detail).toContain('HTTP 502');
  });

  it('treats an empty body as opaque', async () => {
    const { client } = await setup(() => ({ status: 500, body: '' }));
    const result = await client.accept('wacid.x', ANSWER_SDP);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'gateway_unreachable', httpStatus: 500 });
    expect(result.error.detail).toContain('(empty body)');
  });

  it('treats invalid JSON and unexpected JSON on a 200 as opaque', async () => {
    const { client } = await setup((req) => (req.path.endsWith('/reject') ? { status: 200, body: '{"messaging_product":' } : json(200, { ok: 'yes' })));
    const broken = await client.reject('wacid.x');
    expect(broken.ok).toBe(false);
    if (!broken.ok) expect(broken.error).toMatchObject({ code: 'gateway_unreachable', httpStatus: 200, detail: 'HTTP 200: {"messaging_product":' });
    const unexpected = await client.initiate('447700900123', DIAL_OFFER_SDP);
    expect(unexpected.ok).toBe(false);
    if (!unexpected.ok) expect(unexpected.error.detail).toContain('"ok":"yes"');
  });

  it('truncates a long body to about 2 KB', async () => {
    const { client } = await setup(() => ({ status: 503, body: 'x'.repeat(100_000), contentType: 'text/plain' }));
    const result = await client.accept('wacid.x', ANSWER_SDP);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.detail!.length).toBeLessThan(2200);
    expect(result.error.detail).toContain('truncated');
  });
});

describe('GatewayClient network failures', () => {
  it('times out against a server that never answers', async () => {
    const { gateway, client } = await setup(() => 'hang', { timeoutMs: 150 });
    const result = await client.accept('wacid.x', ANSWER_SDP);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe('timeout');
    expect(gateway.requests).toHaveLength(1);
  });

  it('reports a refused connection as gateway_unreachable', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    client = new GatewayClient({ baseUrl: `http://127.0.0.1:${port}/restapi/v1`, apiKey: API_KEY, product: 'chatapp', terminateRetries: 0 });
    const result = await client.terminate('wacid.x');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('gateway_unreachable');
    expect(result.error.message).toContain('ECONNREFUSED');
    expect(result.error.httpStatus).toBeUndefined();
  });
});

describe('GatewayClient network failures, in its words', () => {
  const failing: FailingServer[] = [];
  afterEach(async () => {
    for (const server of failing.splice(0)) await server.close();
  });
  const unreachable = async (origin: string): Promise<unknown> => {
    client = new GatewayClient({ baseUrl: `${origin}/restapi/v1`, apiKey: API_KEY, product: 'chatapp', terminateRetries: 0 });
    const result = await client.reject('wacid.x');
    await client.close();
    client = undefined;
    return result.ok ? result : result.error;
  };
  const started = async (start: () => Promise<FailingServer>) => {
    const server = await start();
    failing.push(server);
    return server;
  };

  it('names each failure by its code, and a socket closed under it by what undici says', async () => {
    // The gateway's words for a failure are its code, a value of the catalogue's sentence around it.
    const reached = (reason: string | ReturnType<typeof text>) => text('gateway.unreachable', { reason });
    expect(await unreachable(await closedPortUrl())).toEqual({ code: 'gateway_unreachable', message: 'The gateway could not be reached (ECONNREFUSED)', text: reached('ECONNREFUSED') });
    expect(['The gateway could not be reached (ENOTFOUND)', 'The gateway could not be reached (EAI_AGAIN)']).toContain(
      ((await unreachable(`http://${UNRESOLVABLE_HOST}`)) as { message: string }).message,
    );
    expect(await unreachable((await started(closingServer)).url)).toEqual({
      code: 'gateway_unreachable',
      message: 'The gateway could not be reached (connection closed: other side closed)',
      text: reached(text('gateway.connectionClosed', { detail: 'other side closed' })),
    });
    expect(await unreachable((await started(resettingServer)).url)).toEqual({ code: 'gateway_unreachable', message: 'The gateway could not be reached (ECONNRESET)', text: reached('ECONNRESET') });
    expect(await unreachable(`https://localhost:${(await started(selfSignedServer)).port}`)).toEqual({
      code: 'gateway_unreachable',
      message: 'The gateway could not be reached (DEPTH_ZERO_SELF_SIGNED_CERT)',
      text: reached('DEPTH_ZERO_SELF_SIGNED_CERT'),
    });
  });
});

describe('GatewayClient retries', () => {
  it('retries terminate after 503s and succeeds', async () => {
    let n = 0;
    const { gateway, client } = await setup(() => (++n <= 2 ? { status: 503, body: 'busy', contentType: 'text/plain' } : success()));
    const result = await client.terminate('wacid.t');
    expect(result.ok).toBe(true);
    expect(gateway.actions()).toEqual(['terminate', 'terminate', 'terminate']);
  });

  it('gives up on terminate after the bounded number of retries', async () => {
    const { gateway, client } = await setup(() => graphError(503, 2, 'Service temporarily unavailable'), { terminateRetries: 2 });
    const result = await client.terminate('wacid.t');
    expect(result.ok).toBe(false);
    expect(gateway.requests).toHaveLength(3);
  });

  it('retries terminate after a network failure, but not after a timeout', async () => {
    const closing = await closingServer();
    try {
      const retrying = new GatewayClient({ baseUrl: `${closing.url}/restapi/v1`, apiKey: API_KEY, product: 'chatapp', terminateRetries: 2, terminateBackoffMs: 5 });
      expect((await retrying.terminate('wacid.t')).ok).toBe(false);
      await retrying.close();
      expect(closing.connections()).toBe(3);
    } finally {
      await closing.close();
    }
    const { gateway } = await setup(() => 'hang', { timeoutMs: 150, terminateRetries: 2 });
    const result = await client!.terminate('wacid.t');
    expect(result.ok || result.error.code).toBe('timeout');
    expect(gateway.requests).toHaveLength(1);
  });

  it('does not retry terminate on a 4xx refusal', async () => {
    const { gateway, client } = await setup(() => graphError(400, 100, 'Invalid call id'));
    expect((await client.terminate('wacid.t')).ok).toBe(false);
    expect(gateway.requests).toHaveLength(1);
  });

  it('never retries accept or initiate, even on a 503', async () => {
    const { gateway, client } = await setup(() => ({ status: 503, body: 'busy', contentType: 'text/plain' }));
    expect((await client.accept('wacid.a', ANSWER_SDP)).ok).toBe(false);
    expect((await client.initiate('447700900123', DIAL_OFFER_SDP)).ok).toBe(false);
    expect(gateway.actions()).toEqual(['accept', 'initiate']);
  });
});

describe('GatewayClient request validation', () => {
  it('refuses an invalid body before sending, naming the field', async () => {
    const { gateway, client } = await setup(() => success());
    const noId = await client.accept('', ANSWER_SDP);
    expect(noId.ok).toBe(false);
    if (!noId.ok) expect(noId.error).toMatchObject({ code: 'invalid_input', field: 'call_id' });
    const plus = await client.initiate('+447700900123', DIAL_OFFER_SDP);
    expect(plus.ok).toBe(false);
    if (!plus.ok) expect(plus.error).toMatchObject({ code: 'invalid_input', field: 'to' });
    const noSdp = await client.initiate('447700900123', '');
    expect(noSdp.ok).toBe(false);
    if (!noSdp.ok) expect(noSdp.error).toMatchObject({ code: 'invalid_input', field: 'session.sdp' });
    expect(gateway.requests).toHaveLength(0);
  });
});

describe('GatewayClient and the API key', () => {
  it('never puts the key into a log line or an error', async () => {
    const lines: string[] = [];
    configureLogging({ level: 'debug', sink: (line: string, _level: LogLevel) => lines.push(line) });
    try {
      // A misbehaving server that echoes the request headers back in its error bodies.
      const { client } = await setup((req) => {
        const echo = JSON.stringify(req.headers);
        if (req.path.endsWith('/accept')) return { status: 500, body: `<pre>${echo}</pre>`, contentType: 'text/html' };
        if (req.path.endsWith('/reject')) return graphError(401, 190, `Invalid key ${String(req.headers['api-key'])}`, { error_data: req.headers });
        if (req.path.endsWith('/initiate')) return 'hang';
        return { status: 503, body: echo };
      }, { timeoutMs: 150, terminateRetries: 1 });
      const results = [
        await client.accept('wacid.k', ANSWER_SDP),
        await client.reject('wacid.k'),
        await client.terminate('wacid.k'),
        await client.initiate('447700900123', DIAL_OFFER_SDP),
      ];
      for (const result of results) {
        expect(result.ok).toBe(false);
        expect(JSON.stringify(result)).not.toContain(API_KEY);
      }
      expect(lines.length).toBeGreaterThan(4);
      for (const line of lines) expect(line).not.toContain(API_KEY);
    } finally {
      configureLogging({ level: 'info', sink: () => undefined });
    }
  });
});
