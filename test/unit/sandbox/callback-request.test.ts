// POST /control/callback-request (sandbox/REFERENCE.md "Control API"; protocol.md "Callback
// requests"): a customer asks to be called back about a call, and the service's automatic
// call-permission reply arrives, `accept` for 7 days or for good, the call's id in `context.id`. The
// webhooks arrive at a real HTTP server in place of the relay.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CALL_PERMISSION_MS } from '../../../shared/callbacks';
import { SANDBOX_UNREACHABLE_NUMBERS, type SandboxMessageReport } from '../../../shared/sandbox';
import { normaliseWebhook } from '../../../shared/webhook';
import type { SandboxServer } from '../../../sandbox/server';
import { control, eventually, gatewayPost, signatureValid, startTestSandbox, startWebhookReceiver, type WebhookReceiver } from './harness';

let relay: WebhookReceiver;
let sandbox: SandboxServer;

beforeAll(async () => {
  relay = await startWebhookReceiver();
  sandbox = await startTestSandbox(relay);
});
afterAll(async () => {
  await sandbox?.close();
  await relay?.close();
});

const KATHERINE = { number: '12025550103', name: 'Katherine Johnson' };

interface ControlError {
  error: { code: string; message: string; field?: string };
}

const ask = (body: unknown) => control<{ callId: string; messageId: string } & Partial<ControlError>>(sandbox, '/control/callback-request', body);

async function rejectedCall(number: string): Promise<string> {
  const { body } = await control<{ callId: string }>(sandbox, '/control/incoming', { number });
  expect((await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: body.callId, action: 'reject' })).status).toBe(200);
  return body.callId;
}

const messageHook = (id: string) =>
  eventually(`the messages webhook of ${id}`, () =>
    relay.received.find((hook) => hook.body.entry[0]!.changes[0]!.field === 'messages' && JSON.stringify(hook.body).includes(`"id":"${id}"`)),
  );

describe('a callback request', () => {
  test('is the service’s automatic permission reply: accept for 7 days, the call in context.id', async () => {
    const callId = await rejectedCall(KATHERINE.number);
    const before = Date.now();
    const { status, body } = await ask({ number: KATHERINE.number });
    const after = Date.now();
    expect(status).toBe(200);
    expect(body).toEqual({ callId, messageId: expect.stringMatching(/^wamid\./) as unknown });

    const hook = await messageHook(body.messageId);
    expect(signatureValid(hook)).toBe(true);
    const change = hook.body.entry[0]!.changes[0]!;
    expect(change.field).toBe('messages');
    const value = change.value as unknown as { messages: { timestamp: string; interactive: { call_permission_reply: { expiration_timestamp: number } } }[] };
    const item = value.messages[0]!;
    expect(value).toEqual({
      messaging_product: 'chatapp',
      metadata: { display_phone_number: '16505550100', phone_number_id: '106000000000001' },
      contacts: [{ profile: { name: KATHERINE.name }, wa_id: KATHERINE.number }],
      messages: [
        {
          from: KATHERINE.number,
          id: body.messageId,
          timestamp: expect.stringMatching(/^\d+$/) as unknown,
          type: 'interactive',
          context: { id: callId },
          interactive: {
            type: 'call_permission_reply',
            call_permission_reply: { response: 'accept', is_permanent: false, expiration_timestamp: expect.any(Number) as unknown, response_source: 'automatic' },
          },
        },
      ],
    });
    const sent = Number(item.timestamp);
    expect(sent).toBeGreaterThanOrEqual(Math.floor(before / 1000));
    expect(sent).toBeLessThanOrEqual(Math.floor(after / 1000));
    const expires = item.interactive.call_permission_reply.expiration_timestamp;
    expect(expires).toBeGreaterThanOrEqual(Math.floor((before + CALL_PERMISSION_MS) / 1000));
    expect(expires).toBeLessThanOrEqual(Math.floor((after + CALL_PERMISSION_MS) / 1000));

    expect(normaliseWebhook(hook.body)).toEqual([
      expect.objectContaining({
        type: 'message.inbound',
        messageId: body.messageId,
        from: KATHERINE.number,
        messageType: 'interactive',
        contextId: body.callId,
        permissionReply: { response: 'accept', isPermanent: false, expiresAt: expires * 1000, source: 'automatic' },
      }),
    ]);
  });

  test('permanent: is_permanent true and no expiry', async () => {
    const callId = await rejectedCall('12025550171');
    const { status, body } = await ask({ number: '+1 202-555-0171', permanent: true });
    expect(status).toBe(200);
    expect(body.callId).toBe(callId);
    const hook = await messageHook(body.messageId);
    const item = (hook.body.entry[0]!.changes[0]!.value as unknown as { messages: Record<string, unknown>[] }).messages[0]!;
    expect(item.context).toEqual({ id: callId });
    expect(item.interactive).toEqual({ type: 'call_permission_reply', call_permission_reply: { response: 'accept', is_permanent: true, response_source: 'automatic' } });
  });

  test('about a call of the customer’s that the request names, not the last one', async () => {
    const first = await rejectedCall('12025550172');
    const last = await rejectedCall('12025550172');
    expect((await ask({ number: '12025550172' })).body.callId).toBe(last);
    const named = await ask({ number: '12025550172', callId: first });
    expect(named.status).toBe(200);
    expect(named.body.callId).toBe(first);
    const hook = await messageHook(named.body.messageId);
    expect((hook.body.entry[0]!.changes[0]!.value as unknown as { messages: { context: unknown }[] }).messages[0]!.context).toEqual({ id: first });
  });

  test('is listed among the messages the sandbox saw', async () => {
    await rejectedCall('12025550173');
    const { body } = await ask({ number: '12025550173' });
    const reports = (await control<SandboxMessageReport[]>(sandbox, '/control/messages')).body;
    expect(reports.find((m) => m.messageId === body.messageId)).toMatchObject({
      direction: 'inbound',
      number: '12025550173',
      type: 'interactive',
      interactiveType: 'call_permission_reply',
      status: 'delivered',
    });
  });
});

describe('refusals', () => {
  test('a customer without a call is 409, naming the number', async () => {
    const answer = await ask({ number: '12025550174' });
    expect(answer.status).toBe(409);
    expect(answer.body.error).toMatchObject({ code: 'invalid_state', field: 'number' });
  });

  test('an unknown call is 404; another customer’s call is 409; both naming callId', async () => {
    const others = await rejectedCall('12025550175');
    await rejectedCall('12025550176');
    const unknown = await ask({ number: '12025550176', callId: 'wacid.nosuchcall' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'not_found', field: 'callId' });
    const notTheirs = await ask({ number: '12025550176', callId: others });
    expect(notTheirs.status).toBe(409);
    expect(notTheirs.body.error).toMatchObject({ code: 'invalid_state', field: 'callId' });
  });

  test('a number without a chat-app account cannot ask: 404', async () => {
    const number = SANDBOX_UNREACHABLE_NUMBERS[0]!;
    await rejectedCall(number);
    const answer = await ask({ number });
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatchObject({ code: 'not_found', field: 'number' });
  });

  const refused: [string, unknown, string, string, RegExp][] = [
    ['no number', {}, 'invalid_input', 'number', /required/],
    ['a number that is none', { number: '12' }, 'invalid_phone_number', 'number', /./],
    ['an empty callId', { number: KATHERINE.number, callId: '' }, 'invalid_input', 'callId', /empty/],
    ['permanent that is no boolean', { number: KATHERINE.number, permanent: 'yes' }, 'invalid_input', 'permanent', /true or false/],
    ['a member it does not take', { number: KATHERINE.number, permanant: true }, 'invalid_input', '(root)', /permanant/],
  ];
  test.each(refused)('%s is 400 naming the field', async (_what, body, code, field, rule) => {
    const answer = await ask(body);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code, field });
    expect(answer.body.error!.message).toMatch(rule);
  });
});
