// The gateway client's messaging half (gateway-spec.md 4.1, 4.3, 2.6) against a real HTTP server on
// 127.0.0.1: exact requests, the success answer, Graph errors (131047 closes the window), opaque
// answers, timeouts, and no retries.
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayClient, type GatewayClientOptions } from '../../../electron/core/gateway-client';
import { GATEWAY_ERROR_TEXT } from '../../../shared/gateway';
import { configureLogging, type LogLevel } from '../../../shared/log';
import { MESSAGE_ERROR_TEXT, type FreeFormMessage } from '../../../shared/messages';
import type { TemplateMessage } from '../../../shared/templates';
import { DIAL_OFFER_SDP } from '../../fixtures/sdp';
import { graphError, json, startFakeGateway, type FakeGateway, type GatewayHandler } from './fake-gateway';

const API_KEY = 'sk_live_messaging_key_93ab1';
const TO = '12025550101';

configureLogging({ sink: () => undefined });

let gateway: FakeGateway | undefined;
let client: GatewayClient | undefined;

async function setup(handler: GatewayHandler, options: Partial<GatewayClientOptions> = {}): Promise<{ gateway: FakeGateway; client: GatewayClient }> {
  gateway = await startFakeGateway(handler);
  client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: API_KEY, product: 'chatapp', ...options });
  return { gateway, client };
}

afterEach(async () => {
  await client?.close();
  await gateway?.close();
  client = undefined;
  gateway = undefined;
});

const sent = (id = 'wamid.HBgLMTIwMjU1NTAxMDEVAgARGBI', waId = TO, product = 'chatapp') =>
  json(200, { messaging_product: product, contacts: [{ input: TO, wa_id: waId }], messages: [{ id }] });

const text: FreeFormMessage = { messaging_product: 'chatapp', recipient_type: 'individual', to: TO, type: 'text', text: { body: 'Here is your link: https://pay.example.com/42' } };
const voiceCall: FreeFormMessage = {
  messaging_product: 'chatapp',
  recipient_type: 'individual',
  to: TO,
  type: 'interactive',
  interactive: {
    type: 'voice_call',
    body: { text: 'Tap to call us' },
    action: { name: 'voice_call', parameters: { display_text: 'Call us', ttl_minutes: 60, payload: '{"v":1,"agentId":"a1","contact":"12025550101"}' } },
  },
};
const template: TemplateMessage = {
  messaging_product: 'chatapp',
  recipient_type: 'individual',
  to: TO,
  type: 'template',
  template: { name: 'order_update', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }] }] },
};

describe('sending', () => {
  it('POSTs a free-form message to replymessage with the exact body and headers, and returns the ids', async () => {
    const { gateway, client } = await setup(() => sent('wamid.abc', '12025550101'));
    const result = await client.sendMessage(text);
    expect(result).toEqual({ ok: true, value: { messageId: 'wamid.abc', waId: '12025550101' } });
    expect(gateway.requests).toHaveLength(1);
    const req = gateway.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/restapi/v1/chatapp/replymessage');
    expect(req.headers['api-key']).toBe(API_KEY);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.body).toEqual(text);
    expect(JSON.parse(req.raw)).toEqual(text);
  });

  it('POSTs a template to sendtemplate with a JSON body (gateway-spec.md 4.3)', async () => {
    const { gateway, client } = await setup(() => json(200, { messaging_product: 'chatapp', contacts: [{ input: TO, wa_id: TO }], messages: [{ id: 'wamid.t1', message_status: 'accepted' }] }));
    const result = await client.sendTemplate(template);
    expect(result).toEqual({ ok: true, value: { messageId: 'wamid.t1', waId: TO } });
    const req = gateway.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/restapi/v1/chatapp/sendtemplate');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.body).toEqual(template);
  });

  it('uses the account\u2019s product word in the path, and refuses a body with another word', async () => {
    const { gateway, client } = await setup(() => sent('wamid.p', TO, 'acme'), { product: 'acme' });
    expect((await client.sendMessage({ ...text, messaging_product: 'acme' })).ok).toBe(true);
    expect(gateway.requests[0]!.path).toBe('/restapi/v1/acme/replymessage');
    const wrong = await client.sendMessage(text);
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) expect(wrong.error).toMatchObject({ code: 'invalid_input', field: 'messaging_product' });
    expect(gateway.requests).toHaveLength(1);
  });

  it('refuses a broken message before sending, naming the field and the rule', async () => {
    const { gateway, client } = await setup(() => sent());
    const badTtl = structuredClone(voiceCall) as Extract<FreeFormMessage, { type: 'interactive' }>;
    if (badTtl.interactive.type !== 'voice_call') throw new Error('not a voice_call');
    badTtl.interactive.action.parameters.ttl_minutes = 0;
    const ttl = await client.sendMessage(badTtl);
    expect(ttl.ok).toBe(false);
    if (!ttl.ok) {
      expect(ttl.error).toMatchObject({ code: 'invalid_input', field: 'interactive.action.parameters.ttl_minutes' });
      expect(ttl.error.message).toContain('at least 1');
    }
    const noName = await client.sendTemplate({ ...template, template: { ...template.template, name: '' } });
    expect(noName.ok).toBe(false);
    if (!noName.ok) expect(noName.error.field).toBe('template.name');
    const wrongEndpoint = await client.sendMessage(template as unknown as FreeFormMessage);
    expect(wrongEndpoint.ok).toBe(false);
    if (!wrongEndpoint.ok) expect(wrongEndpoint.error.field).toBe('type');
    expect(gateway.requests).toHaveLength(0);
  });
});

describe('Graph errors', () => {
  it('131047 is window_closed: the 24-hour window is closed and a template is needed', async () => {
    const { client } = await setup(() => graphError(400, 131047, '(#131047) Re-engagement message', { error_data: { details: 'more than 24 hours have passed' } }));
    const result = await client.sendMessage(voiceCall);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'window_closed', gatewayCode: 131047, httpStatus: 400, message: MESSAGE_ERROR_TEXT[131047] });
    expect(result.error.message).toContain('24-hour');
    expect(result.error.message).toContain('template');
    expect(result.error.detail).toContain('more than 24 hours');
  });

  it('131009 and 100 get their clear words, with the gateway\u2019s specifics in detail', async () => {
    const { client } = await setup((req) =>
      (req.body as { type?: string }).type === 'interactive'
        ? graphError(400, 131009, '(#131009) Parameter value is not valid')
        : graphError(400, 100, '(#100) Invalid parameter', { error_data: { details: 'text.body: too long' } }),
    );
    const button = await client.sendMessage(voiceCall);
    expect(button.ok).toBe(false);
    if (!button.ok) expect(button.error).toMatchObject({ code: 'gateway_error', gatewayCode: 131009, message: GATEWAY_ERROR_TEXT[131009] });
    const param = await client.sendMessage(text);
    expect(param.ok).toBe(false);
    if (!param.ok) {
      expect(param.error).toMatchObject({ code: 'gateway_error', gatewayCode: 100, message: GATEWAY_ERROR_TEXT[100] });
      expect(param.error.detail).toContain('text.body: too long');
    }
  });

  it('template errors get their own words; an unknown code keeps the gateway\u2019s message', async () => {
    let code = 132001;
    const { client } = await setup(() => graphError(404, code, code === 132001 ? '(#132001) Template name does not exist in the translation' : 'Something new'));
    const missing = await client.sendTemplate(template);
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.error).toMatchObject({ code: 'gateway_error', gatewayCode: 132001, httpStatus: 404, message: MESSAGE_ERROR_TEXT[132001] });
    code = 999_001;
    const unknown = await client.sendTemplate(template);
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) expect(unknown.error.message).toBe('Something new');
  });
});

describe('answers that are not the 2.6 body', () => {
  it('an HTML error page is opaque, kept in detail', async () => {
    const { client } = await setup(() => ({ status: 502, body: '<html><h1>502 Bad Gateway</h1></html>', contentType: 'text/html' }));
    const result = await client.sendMessage(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'gateway_unreachable', httpStatus: 502 });
    expect(result.error.detail).toContain('502 Bad Gateway');
  });

  it('a 200 without message id says the message may have been sent', async () => {
    const { client } = await setup(() => json(200, { messaging_product: 'chatapp', success: true }));
    const result = await client.sendMessage(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'gateway_unreachable', httpStatus: 200 });
    expect(result.error.message).toContain('may have been sent');
    expect(result.error.detail).toContain('"success":true');
  });

  it('an empty or broken body is opaque', async () => {
    const { client } = await setup((req) => (req.path.endsWith('/sendtemplate') ? { status: 500, body: '' } : { status: 200, body: '{"messages":[' }));
    const empty = await client.sendTemplate(template);
    expect(empty.ok).toBe(false);
    if (!empty.ok) expect(empty.error.detail).toContain('(empty body)');
    const broken = await client.sendMessage(text);
    expect(broken.ok).toBe(false);
    if (!broken.ok) expect(broken.error.message).toContain('may have been sent');
  });
});

describe('no retries: a retried send can deliver twice', () => {
  it('a timeout is reported once, saying the message may have been sent', async () => {
    const { gateway, client } = await setup(() => 'hang', { timeoutMs: 150 });
    const result = await client.sendMessage(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('timeout');
    expect(result.error.message).toContain('may have been sent');
    expect(gateway.requests).toHaveLength(1);
  });

  it('a 503 is not retried, for messages or templates', async () => {
    const { gateway, client } = await setup(() => graphError(503, 2, 'Service temporarily unavailable'));
    expect((await client.sendMessage(text)).ok).toBe(false);
    expect((await client.sendTemplate(template)).ok).toBe(false);
    expect(gateway.requests.map((r) => r.path)).toEqual(['/restapi/v1/chatapp/replymessage', '/restapi/v1/chatapp/sendtemplate']);
  });

  it('the call methods are unchanged beside the messaging ones', async () => {
    const { gateway, client } = await setup((req) => (req.path.endsWith('/initiate') ? json(200, { messaging_product: 'chatapp', calls: [{ id: 'wacid.1' }] }) : sent()));
    expect(await client.initiate(TO, DIAL_OFFER_SDP)).toEqual({ ok: true, value: { callId: 'wacid.1' } });
    expect((await client.sendMessage(text)).ok).toBe(true);
    expect(gateway.requests.map((r) => r.path)).toEqual(['/restapi/v1/chatapp/calls/initiate', '/restapi/v1/chatapp/replymessage']);
  });
});

describe('the API key', () => {
  it('never appears in a result or a log line, even when the server echoes it', async () => {
    const lines: string[] = [];
    configureLogging({ level: 'debug', sink: (line: string, _level: LogLevel) => lines.push(line) });
    try {
      const { client } = await setup((req) =>
        req.path.endsWith('/replymessage')
          ? graphError(401, 190, `Invalid key ${String(req.headers['api-key'])}`, { error_data: req.headers })
          : { status: 500, body: `<pre>${JSON.stringify(req.headers)}</pre>`, contentType: 'text/html' },
      );
      const results = [await client.sendMessage(text), await client.sendTemplate(template)];
      for (const result of results) {
        expect(result.ok).toBe(false);
        expect(JSON.stringify(result)).not.toContain(API_KEY);
      }
      expect(lines.length).toBeGreaterThan(1);
      for (const line of lines) expect(line).not.toContain(API_KEY);
    } finally {
      configureLogging({ level: 'info', sink: () => undefined });
    }
  });
});
