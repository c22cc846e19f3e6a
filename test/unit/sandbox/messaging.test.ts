// The sandbox's messaging half (gateway-spec.md 3.1, 4.1, 4.3; protocol.md "Events"): the same
// rules as the app, the 24-hour window, delivery-status webhooks, customers who write, and the
// voice_call button that a customer presses to call back.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MessageSimulator } from '../../../sandbox/message-simulator';
import type { SandboxServer } from '../../../sandbox/server';
import { WebhookSender } from '../../../sandbox/webhook-sender';
import { createLogger } from '../../../shared/log';
import { buildVoiceCallButtonMessage, type FreeFormMessage } from '../../../shared/messages';
import { SANDBOX_UNREACHABLE_NUMBERS, type SandboxMessageReport, type SandboxTemplate } from '../../../shared/sandbox';
import { fillTemplate, parseTemplatePayload } from '../../../shared/templates';
import { normaliseWebhook } from '../../../shared/webhook';
import { API_KEY, control, eventually, signatureValid, startTestSandbox, startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from './harness';

let relay: WebhookReceiver;
let sandbox: SandboxServer;

beforeAll(async () => {
  relay = await startWebhookReceiver();
  sandbox = await startTestSandbox(relay, { messaging: { statusDelaysMs: { sent: 10, delivered: 30, read: 60 } } });
});
afterAll(async () => {
  await sandbox?.close();
  await relay?.close();
});

const ADA = '12025550101';
const GRACE = '442079460101';
const ALAN = '12025550102';
const KATHERINE = '12025550103';
const UNREACHABLE = SANDBOX_UNREACHABLE_NUMBERS[0]!;

interface Answer {
  status: number;
  headers: Headers;
  body: { error?: { message: string; code: number; type: string; error_data?: { details: string } }; messages?: { id: string }[]; contacts?: { input: string; wa_id: string }[]; messaging_product?: string };
}

async function post(
  endpoint: string,
  body: unknown,
  options: { on?: SandboxServer; apiKey?: string | null; contentType?: string; method?: string; raw?: string; product?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { 'Content-Type': options.contentType ?? 'application/json' };
  if (options.apiKey !== null) headers['API-KEY'] = options.apiKey ?? API_KEY;
  const method = options.method ?? 'POST';
  const res = await fetch(`${(options.on ?? sandbox).gatewayUrl}/${options.product ?? 'chatapp'}/${endpoint}`, {
    method,
    headers,
    body: method === 'GET' ? null : (options.raw ?? JSON.stringify(body)),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
}

const envelope = (to: string) => ({ messaging_product: 'chatapp', recipient_type: 'individual', to });
const textTo = (to: string, body = 'Here is your payment link') => ({ ...envelope(to), type: 'text', text: { body } });
const templateTo = (to: string, name = 'order_update', values = ['Ada', 'A-1042', 'Friday']) => ({
  ...envelope(to),
  type: 'template',
  template: { name, language: { code: 'en_US' }, components: [{ type: 'body', parameters: values.map((text) => ({ type: 'text', text })) }] },
});
const callButtonTo = (to: string, payload = `{"v":1,"agentId":"agent-7","contact":"${to}"}`): FreeFormMessage => {
  const built = buildVoiceCallButtonMessage({ product: 'chatapp', to, agentId: 'agent-7' });
  if (!built.ok) throw new Error(built.error.message);
  const message = built.value;
  if (message.type !== 'interactive' || message.interactive.type !== 'voice_call') throw new Error('not a voice_call');
  message.interactive.action.parameters.payload = payload;
  return message;
};

async function writeAs(number: string, text = 'Hello, I have a question'): Promise<string> {
  const { status, body } = await control<{ messageId: string }>(sandbox, '/control/inbound', { number, text });
  expect(status).toBe(200);
  return body.messageId;
}

interface StatusItem {
  id: string;
  status: string;
  timestamp: string;
  recipient_id: string;
  errors?: { code: number; title: string; message: string; error_data: { details: string } }[];
}
const changesOf = (hook: ReceivedWebhook) => hook.body.entry.flatMap((e) => e.changes);
const statusesOf = (messageId: string): { status: string; item: StatusItem; hook: ReceivedWebhook }[] =>
  relay.received.flatMap((hook) =>
    changesOf(hook).flatMap((c) => ((c.value as { statuses?: StatusItem[] }).statuses ?? []).filter((s) => s.id === messageId).map((item) => ({ status: item.status, item, hook }))),
  );

describe('the same rules as the app', () => {
  test('unknown paths and another product word are 404', async () => {
    expect((await post('sendmessage', textTo(ADA))).status).toBe(404);
    const other = await post('replymessage', textTo(ADA), { product: 'acme' });
    expect(other.status).toBe(404);
    expect(other.body.error?.code).toBe(2500);
  });

  test('GET on sendtemplate is 405, naming POST', async () => {
    const answer = await post('sendtemplate', undefined, { method: 'GET' });
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('POST');
    expect(answer.body.error?.code).toBe(100);
    expect(answer.body.error?.message).toContain('use POST');
    expect(answer.body.error?.message).toContain('JSON body');
    expect((await post('replymessage', undefined, { method: 'GET' })).status).toBe(405);
  });

  test('the API key, the Content-Type and JSON are required', async () => {
    const noKey = await post('replymessage', textTo(ADA), { apiKey: null });
    expect(noKey.status).toBe(401);
    expect(noKey.body.error).toMatchObject({ code: 190, message: 'API-KEY header: is required' });
    expect((await post('sendtemplate', templateTo(ADA), { apiKey: 'wrong' })).status).toBe(401);
    const form = await post('replymessage', textTo(ADA), { contentType: 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    const broken = await post('replymessage', undefined, { raw: '{"type":' });
    expect(broken.status).toBe(400);
    expect(broken.body.error?.message).toBe('(#100) body: must be valid JSON');
  });

  test('a broken rule is a Graph error 100 naming the field and the rule, all problems in error_data', async () => {
    const message = callButtonTo(ADA) as Extract<FreeFormMessage, { type: 'interactive' }>;
    if (message.interactive.type !== 'voice_call') throw new Error('not a voice_call');
    message.interactive.action.parameters.ttl_minutes = 50_000;
    message.interactive.action.parameters.display_text = 'A display text over twenty';
    const answer = await post('replymessage', message);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe(100);
    expect(answer.body.error?.message).toBe('(#100) interactive.action.parameters.display_text: must be at most 20 characters');
    expect(answer.body.error?.error_data?.details).toContain('interactive.action.parameters.ttl_minutes: must be at most 43200 minutes');

    const both = await post('replymessage', { ...envelope(ADA), type: 'image', image: { id: '1', link: 'https://cdn.example.com/a.png' } });
    expect(both.body.error?.message).toBe('(#100) image.link: must not be given together with id: exactly one of id and link');
    const template = await post('sendtemplate', { ...templateTo(ADA), template: { language: { code: 'en_US' } } });
    expect(template.status).toBe(400);
    expect(template.body.error?.message).toContain('template.name');
    const wrongEndpoint = await post('sendtemplate', textTo(ADA));
    expect(wrongEndpoint.body.error?.message).toContain('(#100) type: must be "template"');
  });
});

describe('the 24-hour window (gateway-spec.md 3.1)', () => {
  test('free-form and call buttons outside the window are refused with 131047; templates go out', async () => {
    const text = await post('replymessage', textTo(GRACE));
    expect(text.status).toBe(400);
    expect(text.body.error).toMatchObject({ code: 131047, message: '(#131047) Re-engagement message' });
    expect(text.body.error?.error_data?.details).toContain('24 hours');
    expect((await post('replymessage', callButtonTo(GRACE))).body.error?.code).toBe(131047);

    const template = await post('sendtemplate', templateTo(GRACE));
    expect(template.status).toBe(200);
    expect(template.body).toMatchObject({ messaging_product: 'chatapp', contacts: [{ input: GRACE, wa_id: GRACE }] });
    expect(template.body.messages?.[0]?.id).toMatch(/^wamid\./);
  });

  test('a message from the customer opens the window: a signed messages webhook, then free-form goes out', async () => {
    const messageId = await writeAs(KATHERINE, 'Can you call me?');
    expect(messageId).toMatch(/^wamid\./);
    const hook = await eventually('the inbound webhook', () =>
      relay.received.find((h) => changesOf(h).some((c) => ((c.value as { messages?: { id: string }[] }).messages ?? []).some((m) => m.id === messageId))),
    );
    expect(signatureValid(hook)).toBe(true);
    const change = changesOf(hook)[0]!;
    expect(change.field).toBe('messages');
    const value = change.value as unknown as { messages: unknown[]; contacts: unknown[] };
    expect(value.contacts).toEqual([{ profile: { name: 'Katherine Johnson' }, wa_id: KATHERINE }]);
    expect(value.messages).toEqual([{ from: KATHERINE, id: messageId, timestamp: expect.stringMatching(/^\d+$/), type: 'text', text: { body: 'Can you call me?' } }]);
    expect(normaliseWebhook(hook.body)).toEqual([
      expect.objectContaining({ type: 'message.inbound', messageId, from: KATHERINE, name: 'Katherine Johnson', messageType: 'text', text: 'Can you call me?' }),
    ]);

    const answer = await post('replymessage', textTo(KATHERINE));
    expect(answer.status).toBe(200);
    expect(answer.body.messages?.[0]?.id).toMatch(/^wamid\./);
  });

  test('the window closes when its time is up', async () => {
    const short = await startTestSandbox(relay, { messaging: { windowMs: 1, statusDelaysMs: { sent: 5, delivered: 10, read: 15 } } });
    try {
      const written = await control<{ messageId: string }>(short, '/control/inbound', { number: ADA, text: 'hi' });
      expect(written.status).toBe(200);
      await new Promise((r) => setTimeout(r, 20));
      expect((await post('replymessage', textTo(ADA), { on: short })).body.error?.code).toBe(131047);
    } finally {
      await short.close();
    }
  });

  test('inbound control requests are checked', async () => {
    expect((await control(sandbox, '/control/inbound', { number: ADA })).status).toBe(400);
    expect((await control(sandbox, '/control/inbound', { number: '12', text: 'x' })).status).toBe(400);
    const nobody = await control<{ error: { code: string; message: string } }>(sandbox, '/control/inbound', { number: UNREACHABLE, text: 'x' });
    expect(nobody.status).toBe(404);
    expect(nobody.body.error.message).toContain('no account');
    expect((await control(sandbox, '/control/inbound', { number: '+44 20 7946 0101', text: 'typed with spaces' })).status).toBe(200);
  });
});

describe('delivery statuses (protocol.md)', () => {
  test('sent, then delivered, then read: signed messages webhooks that normalise to message.status', async () => {
    await writeAs(ADA);
    const answer = await post('replymessage', textTo(ADA, 'Your invoice is attached'));
    const messageId = answer.body.messages![0]!.id;
    const statuses = await eventually('three statuses', () => (statusesOf(messageId).length >= 3 ? statusesOf(messageId) : undefined));
    expect(statuses.map((s) => s.status)).toEqual(['sent', 'delivered', 'read']);
    for (const { item, hook } of statuses) {
      expect(signatureValid(hook)).toBe(true);
      expect(changesOf(hook)[0]!.field).toBe('messages');
      expect(item).toEqual({ id: messageId, status: item.status, timestamp: expect.stringMatching(/^\d+$/), recipient_id: ADA });
      expect(normaliseWebhook(hook.body)).toEqual([expect.objectContaining({ type: 'message.status', messageId, status: item.status, recipientId: ADA })]);
    }
    const report = (await control<SandboxMessageReport[]>(sandbox, '/control/messages')).body.find((m) => m.messageId === messageId)!;
    expect(report).toMatchObject({ direction: 'outbound', endpoint: 'replymessage', number: ADA, type: 'text', text: 'Your invoice is attached', status: 'read' });
    expect(report.statuses.map((s) => s.status)).toEqual(['sent', 'delivered', 'read']);
    expect(report.body).toEqual(textTo(ADA, 'Your invoice is attached'));
  });

  test('a number without an account: accepted, then failed with 131026', async () => {
    const answer = await post('sendtemplate', templateTo(UNREACHABLE));
    expect(answer.status).toBe(200);
    const messageId = answer.body.messages![0]!.id;
    const [failed] = await eventually('the failed status', () => (statusesOf(messageId).length > 0 ? statusesOf(messageId) : undefined));
    expect(failed!.item).toMatchObject({ status: 'failed', recipient_id: UNREACHABLE, errors: [{ code: 131026, title: 'Message undeliverable' }] });
    expect(normaliseWebhook(failed!.hook.body)).toEqual([
      expect.objectContaining({ type: 'message.status', messageId, status: 'failed', errors: [expect.objectContaining({ code: 131026 })] }),
    ]);
    // Nothing else follows a failure.
    const report = await eventually('the report', async () => (await control<SandboxMessageReport[]>(sandbox, '/control/messages')).body.find((m) => m.messageId === messageId));
    expect(report).toMatchObject({ status: 'failed', error: { code: 131026 } });
    expect(statusesOf(messageId).map((s) => s.status)).toEqual(['failed']);
  });

  test('refused messages are listed with their error, and requests are logged with the message id', async () => {
    await post('replymessage', textTo(ALAN, 'refused one'));
    await writeAs(KATHERINE, 'Can you call me?');
    const reports = (await control<SandboxMessageReport[]>(sandbox, '/control/messages')).body;
    const refused = reports.find((m) => m.text === 'refused one')!;
    expect(refused).toMatchObject({ status: 'refused', number: ALAN, error: { code: 131047 } });
    expect(refused.messageId).toBeUndefined();
    expect(reports.some((m) => m.direction === 'inbound' && m.number === KATHERINE && m.text === 'Can you call me?')).toBe(true);
    const log = (await control<{ action: string; messageId?: string; status: number }[]>(sandbox, '/control/log')).body;
    expect(log.some((e) => e.action === 'replymessage' && e.status === 400)).toBe(true);
    expect(log.some((e) => e.action === 'sendtemplate' && e.status === 200 && e.messageId?.startsWith('wamid.'))).toBe(true);
  });
});

describe('templates the account has', () => {
  test('an unknown name or language is 132001; the wrong number of variables 132000', async () => {
    const unknown = await post('sendtemplate', templateTo(ADA, 'no_such_template'));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error?.code).toBe(132001);
    const language = await post('sendtemplate', { ...templateTo(ADA), template: { ...templateTo(ADA).template, language: { code: 'fr' } } });
    expect(language.body.error?.error_data?.details).toContain('it exists in en_US');
    const count = await post('sendtemplate', templateTo(ADA, 'order_update', ['Ada']));
    expect(count.status).toBe(400);
    expect(count.body.error?.code).toBe(132000);
    expect(count.body.error?.error_data?.details).toContain('body');
  });

  test('every API Payload of the template list, pasted and filled, goes out', async () => {
    const templates = (await control<SandboxTemplate[]>(sandbox, '/control/templates')).body;
    expect(templates.length).toBeGreaterThanOrEqual(3);
    for (const template of templates) {
      const draft = parseTemplatePayload(template.apiPayload);
      if (!draft.ok) throw new Error(draft.error.message);
      expect(draft.value.recipient.placeholder).toBe(true);
      const values = Object.fromEntries(draft.value.fields.map((f) => [f.path, f.kind === 'link' ? 'https://cdn.example.com/header.png' : `value for ${f.label}`]));
      const message = fillTemplate(draft.value, { to: GRACE, values });
      if (!message.ok) throw new Error(message.error.message);
      const answer = await post('sendtemplate', message.value);
      expect([template.name, answer.status]).toEqual([template.name, 200]);
    }
  });
});

describe('the voice_call button', () => {
  test('pressed by the customer, it starts an incoming call whose webhook carries the button\u2019s payload', async () => {
    await writeAs(GRACE);
    const payload = `{"v":1,"agentId":"agent-7","contact":"${GRACE}"}`;
    const sent = await post('replymessage', callButtonTo(GRACE, payload));
    expect(sent.status).toBe(200);
    const pressed = await control<{ callId: string; payload: string }>(sandbox, '/control/press-call-button', { number: GRACE });
    expect(pressed.status).toBe(200);
    expect(pressed.body.payload).toBe(payload);
    const { callId } = pressed.body;
    const hook = await eventually('the connect webhook', () =>
      relay.received.find((h) => changesOf(h).some((c) => (c.value.calls ?? []).some((call) => call.id === callId))),
    );
    const call = changesOf(hook)[0]!.value.calls![0]! as unknown as { cta_payload?: string; event: string; direction: string; from: string };
    expect(call).toMatchObject({ event: 'connect', direction: 'USER_INITIATED', from: GRACE, cta_payload: payload });
    expect(normaliseWebhook(hook.body)).toEqual([expect.objectContaining({ type: 'call.incoming', callId, from: GRACE, ctaPayload: payload })]);
    expect((await control(sandbox, '/control/hangup', { callId })).status).toBe(200);
  });

  test('there must be a button to press', async () => {
    const none = await control<{ error: { code: string; message: string } }>(sandbox, '/control/press-call-button', { number: ALAN });
    expect(none.status).toBe(404);
    expect(none.body.error.message).toContain('no voice_call button');
    expect((await control(sandbox, '/control/press-call-button', {})).status).toBe(400);
  });

  test('a button past its ttl cannot be pressed', async () => {
    const receiver = await startWebhookReceiver();
    const webhooks = new WebhookSender({
      relayUrl: receiver.url,
      product: 'chatapp',
      business: { wabaId: '1', phoneNumberId: '2', displayPhoneNumber: '16505550100' },
      logger: createLogger('test'),
      retryWindowMs: 1000,
    });
    const messages = new MessageSimulator({
      customers: [],
      product: 'chatapp',
      webhooks,
      logger: createLogger('test'),
      timings: { statusDelaysMs: { sent: 1, delivered: 2, read: 3 }, windowMs: 24 * 60 * 60 * 1000 },
      unreachableNumbers: [],
    });
    try {
      expect(messages.inbound(ADA, 'hi').ok).toBe(true);
      const at = Date.now();
      const message = callButtonTo(ADA);
      if (message.type !== 'interactive' || message.interactive.type !== 'voice_call') throw new Error('not a voice_call');
      message.interactive.action.parameters.ttl_minutes = 5;
      expect(messages.reply(message, at).ok).toBe(true);
      expect(messages.callButton(ADA, at + 5 * 60_000 - 1).ok).toBe(true);
      const expired = messages.callButton(ADA, at + 5 * 60_000);
      expect(expired.ok).toBe(false);
      if (!expired.ok) expect(expired.error).toMatchObject({ code: 'invalid_state', field: 'number' });
    } finally {
      messages.close();
      await webhooks.close();
      await receiver.close();
    }
  });
});
